//! Outcomes left unset: a warning where a path through a procedure never
//! sets an outcome of listed values (it would read `none`).

use super::*;

impl Compiler {
    /// Warn of something that compiles but is likely a mistake: kept apart
    /// from the errors (whose absence lets the ruleset compile), in the
    /// ruleset's `warnings`.
    /// An outcome of listed values (an enum, or `a | b`) that some path
    /// through its procedure never sets would read `none`, which is not
    /// among them: a warning at the `if` (or
    /// `for`) on whose other side it is not set, or at the outcome when no
    /// statement sets it. A warning, not an error: the compiler cannot see
    /// that two `if`s cover every case, or that a path is never taken. A procedure with
    /// hooks is left out (a hook may set the outcome).
    pub(super) fn warn_unset_outcomes(&mut self, items: &[syntax::Item]) {
        for it in items {
            let ItemKind::Procedure(p) = &it.kind else {
                continue;
            };
            let Some(id) = self.rs.procedure(&p.name.text) else {
                continue;
            };
            let pd = &self.rs.procedures[id as usize];
            let h = &pd.hooks;
            if !h.before.is_empty() || !h.after.is_empty() || h.replace.is_some() {
                continue;
            }
            // An int left unset is 0 and a bool false (a roll never made
            // counted nothing); a unit or side may be `none`.
            let listed: Vec<bool> = pd
                .outcomes
                .iter()
                .map(|o| matches!(o.ty, Ty::Enum(_) | Ty::Symbols(_)))
                .collect();
            for (o, _) in p.outcomes.iter().zip(listed).filter(|(_, l)| *l) {
                let Unset(gap) = unset(&p.body, &o.name.text) else {
                    continue;
                };
                let d = Diag::new(
                    "muster::unset_outcome",
                    format!(
                        "procedure `{}` may leave its outcome `{}` unset, and it would read `none`",
                        p.name.text, o.name.text
                    ),
                );
                let d = match gap {
                    Some((at, why)) => d.at(at, why).note(o.name.span, "the outcome"),
                    None => d.at(o.name.span, "no statement sets it"),
                };
                self.warn(d.help(format!(
                    "set `outcome {} = ...` on every path (an `else` beside an `if` that sets it), or set it first and change it after",
                    o.name.text
                )));
            }
        }
    }
}

/// Whether a block sets an outcome on every path ([`Unset`] otherwise).
enum Setting {
    Always,
    /// Not on every path: the first place a path passes it by (None: no
    /// statement sets it at all).
    Unset(Option<(Span, &'static str)>),
}
use Setting::Unset;

/// Does `body` set outcome `name` on every path through it? A `call` is
/// taken to set it (the callee's outcomes are its own to check); a loop
/// may run no times.
fn unset(body: &[Stmt], name: &str) -> Setting {
    let mut gap = None;
    for st in body {
        match sets(st, name) {
            Setting::Always => return Setting::Always,
            Unset(g) => gap = gap.or(g),
        }
    }
    Unset(gap)
}

/// [`unset`] of one statement.
fn sets(st: &Stmt, name: &str) -> Setting {
    let may = |b: &[Stmt]| b.iter().any(|s| may_set(s, name));
    match st {
        Stmt::Outcome(n, _) if n.text == name => Setting::Always,
        Stmt::Call(..) => Setting::Always,
        Stmt::If(c, then, other) => match (&c.kind, unset(then, name), unset(other, name)) {
            (ExprKind::Bool(true), t, _) => t,
            (ExprKind::Bool(false), _, o) => o,
            (_, Setting::Always, Setting::Always) => Setting::Always,
            (_, Setting::Always, Unset(g)) => {
                Unset(g.or(Some((c.span, "not set when this is false"))))
            }
            (_, Unset(g), Setting::Always) => {
                Unset(g.or(Some((c.span, "not set when this is true"))))
            }
            (_, Unset(a), Unset(b)) => Unset(a.or(b)),
        },
        Stmt::For(_, _, c, b) if may(b) => {
            Unset(Some((c.span, "not set when the loop runs no times")))
        }
        Stmt::ForFile(f) if may(&f.body) => Unset(Some((f.span, "not set when no file is fought"))),
        _ => Unset(None),
    }
}

/// Does `st` set outcome `name` on some path?
fn may_set(st: &Stmt, name: &str) -> bool {
    match st {
        Stmt::Outcome(n, _) => n.text == name,
        Stmt::Call(..) => true,
        Stmt::If(_, a, b) => a.iter().chain(b).any(|s| may_set(s, name)),
        Stmt::For(_, _, _, b) => b.iter().any(|s| may_set(s, name)),
        Stmt::ForFile(f) => f.body.iter().any(|s| may_set(s, name)),
        _ => false,
    }
}
