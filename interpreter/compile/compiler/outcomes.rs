//! Outcomes left unset: a warning where a path through a procedure never
//! sets an outcome of listed values (it would read `none`).

use super::*;
use crate::compile::scripts::may_set_outcome;

impl Compiler {
    /// Warn of something that compiles but is likely a mistake: kept apart
    /// from the errors (whose absence lets the ruleset compile), in the
    /// ruleset's `warnings`.
    /// An outcome of listed values (an enum, or `a | b`; declared by the
    /// procedure or by a hook on it) that some path through its procedure
    /// never sets would read `none`, which is not among them: a warning at
    /// the `if` (or `for`, or `call`) on whose other side it is not set, or
    /// at the outcome when no statement sets it. A warning, not an error:
    /// the compiler cannot see that two `if`s cover every case, or that a
    /// path is never taken.
    ///
    /// Calls are seen through: `call q(...)` sets the outcome when `q`
    /// has an outcome of that name and sets it on every path (the callee's
    /// outcomes feed the caller's of the same name); a callee without it
    /// sets nothing. Hooks: a hook on the procedure whose script calls
    /// `set_outcome` with the outcome's name (or a name it computes) is
    /// taken to set it (a script's paths are not followed); a hook that
    /// replaces the body and never names it leaves it unset.
    pub(super) fn warn_unset_outcomes(&mut self, items: &[syntax::Item]) {
        let paths = Paths::new(&self.rs, items);
        let mut found = Vec::new();
        for it in items {
            let ItemKind::Procedure(p) = &it.kind else {
                continue;
            };
            let Some(id) = self.rs.procedure(&p.name.text) else {
                continue;
            };
            // The outcomes declared by the procedure, then by its hooks.
            let declared = p.outcomes.iter().chain(paths.hook_outcomes(&p.name.text));
            for o in declared {
                let name = &o.name.text;
                if !paths.listed(id, name) || paths.hook_sets(id, name) {
                    continue;
                }
                let gap = match paths.replaced_by(id) {
                    Some(h) => Some((
                        o.name.span,
                        format!("hook `{h}` replaces the body and never sets it"),
                    )),
                    None => match paths.unset(&p.body, name) {
                        Unset(g) => g.or(Some((o.name.span, "no statement sets it".to_string()))),
                        Setting::Always => None,
                    },
                };
                let Some((at, why)) = gap else { continue };
                let mut d = Diag::new(
                    "muster::unset_outcome",
                    format!(
                        "procedure `{}` may leave its outcome `{name}` unset, and it would read `none`",
                        p.name.text
                    ),
                )
                .at(at, why);
                if at != o.name.span {
                    d = d.note(o.name.span, "the outcome");
                }
                found.push(d.help(format!(
                    "set `outcome {name} = ...` on every path (an `else` beside an `if` that sets it), or set it first and change it after"
                )));
            }
        }
        for d in found {
            self.warn(d);
        }
    }
}

/// Whether a block sets an outcome on every path ([`Unset`] otherwise).
enum Setting {
    Always,
    /// Not on every path: the first place a path passes it by (None: no
    /// statement sets it at all).
    Unset(Option<(Span, String)>),
}
use Setting::Unset;

/// What the check needs of the whole ruleset: the procedures' bodies (to
/// see through a `call`) and the hooks' outcomes.
struct Paths<'a> {
    rs: &'a Ruleset,
    bodies: HashMap<&'a str, &'a [Stmt]>,
    hooks: Vec<&'a syntax::Hook>,
    /// The (procedure, outcome) pairs being followed: a call back into one
    /// of them (recursion) is taken to set it.
    following: std::cell::RefCell<Vec<(Id, String)>>,
}

impl<'a> Paths<'a> {
    fn new(rs: &'a Ruleset, items: &'a [syntax::Item]) -> Self {
        let mut bodies = HashMap::default();
        let mut hooks = Vec::new();
        for it in items {
            match &it.kind {
                ItemKind::Procedure(p) => {
                    bodies.insert(p.name.text.as_str(), p.body.as_slice());
                }
                ItemKind::Hook(h) => hooks.push(h),
                _ => {}
            }
        }
        Paths {
            rs,
            bodies,
            hooks,
            following: Default::default(),
        }
    }

    /// The outcomes hooks on procedure `proc` declare.
    fn hook_outcomes(&self, proc: &'a str) -> impl Iterator<Item = &'a syntax::OutcomeDecl> + 'a {
        self.hooks
            .clone()
            .into_iter()
            .filter(move |h| match &h.point {
                syntax::HookPoint::Procedure { proc: p, .. } | syntax::HookPoint::Replace(p) => {
                    p.text == proc
                }
                _ => false,
            })
            .flat_map(|h| h.outcomes.iter())
    }

    /// Is `name` an outcome of procedure `id` of listed values? (An int
    /// left unset is 0 and a bool false: a roll never made counted
    /// nothing; a unit or side may be `none`.)
    fn listed(&self, id: Id, name: &str) -> bool {
        self.rs.procedures[id as usize]
            .outcomes
            .iter()
            .any(|o| o.name == name && matches!(o.ty, Ty::Enum(_) | Ty::Symbols(_)))
    }

    /// Does a hook on procedure `id` call `set_outcome` with `name`?
    fn hook_sets(&self, id: Id, name: &str) -> bool {
        let h = &self.rs.procedures[id as usize].hooks;
        h.before
            .iter()
            .chain(&h.after)
            .chain(&h.replace)
            .any(|&k| may_set_outcome(&self.rs.hooks[k as usize], name))
    }

    /// The hook that replaces procedure `id`'s body, if one does.
    fn replaced_by(&self, id: Id) -> Option<&str> {
        let h = self.rs.procedures[id as usize].hooks.replace?;
        Some(&self.rs.hooks[h as usize].name)
    }

    /// Does running procedure `id` (its hooks, or its body) set outcome
    /// `name` on every path?
    fn always(&self, id: Id, name: &str) -> bool {
        if self.hook_sets(id, name) {
            return true;
        }
        if self.replaced_by(id).is_some() {
            return false;
        }
        let key = (id, name.to_string());
        if self.following.borrow().contains(&key) {
            return true;
        }
        let pd = &self.rs.procedures[id as usize];
        let Some(body) = self.bodies.get(pd.name.as_str()) else {
            return true;
        };
        self.following.borrow_mut().push(key);
        let set = matches!(self.unset(body, name), Setting::Always);
        self.following.borrow_mut().pop();
        set
    }

    /// What `call q(...)` does to the caller's outcome `name`: nothing when
    /// `q` has no outcome of that name; else it sets it when `q` does on
    /// every path. A `q` whose outcome of that name is of listed values is
    /// warned of itself when it may leave it unset, so the call counts as
    /// setting it (one mistake, one warning).
    fn call(&self, callee: &str, span: Span, name: &str) -> Setting {
        let Some(id) = self.rs.procedure(callee) else {
            return Unset(None);
        };
        let has = self.rs.procedures[id as usize]
            .outcomes
            .iter()
            .any(|o| o.name == name);
        if !has {
            return Unset(None);
        }
        if self.listed(id, name) || self.always(id, name) {
            return Setting::Always;
        }
        Unset(Some((
            span,
            format!("`{callee}` does not set it on every path"),
        )))
    }

    /// Does `body` set outcome `name` on every path through it? A loop may
    /// run no times.
    fn unset(&self, body: &[Stmt], name: &str) -> Setting {
        let mut gap = None;
        for st in body {
            match self.sets(st, name) {
                Setting::Always => return Setting::Always,
                Unset(g) => gap = gap.or(g),
            }
        }
        Unset(gap)
    }

    /// [`Paths::unset`] of one statement.
    fn sets(&self, st: &Stmt, name: &str) -> Setting {
        let may = |b: &[Stmt]| b.iter().any(|s| self.may_set(s, name));
        let gap = |at: Span, why: &str| Unset(Some((at, why.to_string())));
        match st {
            Stmt::Outcome(n, _) if n.text == name => Setting::Always,
            Stmt::Call(n, _, span) => self.call(&n.text, *span, name),
            Stmt::If(c, then, other) => {
                match (&c.kind, self.unset(then, name), self.unset(other, name)) {
                    (ExprKind::Bool(true), t, _) => t,
                    (ExprKind::Bool(false), _, o) => o,
                    (_, Setting::Always, Setting::Always) => Setting::Always,
                    (_, Setting::Always, Unset(g)) => {
                        Unset(g.or(Some((c.span, "not set when this is false".into()))))
                    }
                    (_, Unset(g), Setting::Always) => {
                        Unset(g.or(Some((c.span, "not set when this is true".into()))))
                    }
                    (_, Unset(a), Unset(b)) => Unset(a.or(b)),
                }
            }
            Stmt::For(_, _, c, b) if may(b) => gap(c.span, "not set when the loop runs no times"),
            Stmt::ForFile(f) if may(&f.body) => gap(f.span, "not set when no file is fought"),
            _ => Unset(None),
        }
    }

    /// Does `st` set outcome `name` on some path?
    fn may_set(&self, st: &Stmt, name: &str) -> bool {
        match st {
            Stmt::Outcome(n, _) => n.text == name,
            Stmt::Call(n, ..) => self.rs.procedure(&n.text).is_some_and(|id| {
                self.rs.procedures[id as usize]
                    .outcomes
                    .iter()
                    .any(|o| o.name == name)
            }),
            Stmt::If(_, a, b) => a.iter().chain(b).any(|s| self.may_set(s, name)),
            Stmt::For(_, _, _, b) => b.iter().any(|s| self.may_set(s, name)),
            Stmt::ForFile(f) => f.body.iter().any(|s| self.may_set(s, name)),
            _ => false,
        }
    }
}
