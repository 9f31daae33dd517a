//! Decisions and policies, compiled. A decision's body says what a player
//! chooses among (`pick`, `move`, `charge`, `retire`), which options are
//! legal, and what taking one does; a policy scores the legal options. The
//! battle engine ([`crate::battle::game`]) runs them; nothing here is specific to
//! one ruleset.

use crate::compile::compiler::{Compiler, Def};
use crate::compile::ir::{ChoiceDef, ChoiceKind, Ex, Id, PolicyDef, Search, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, Clause, Name, Span};

/// Which clauses each kind of choice takes, and which it must have.
fn clause_allowed(kind: ChoiceKind, word: &str) -> bool {
    use ChoiceKind::*;
    match word {
        "must" => matches!(kind, Pick | Retire | Face),
        "by" => matches!(kind, Pick | Charge | Place | Face),
        "reach" | "wheel" | "frontal" => kind == Charge,
        "allowance" | "buffer" | "manoeuvre" | "finish" | "control" => kind == Move,
        "check" => matches!(kind, Pick | Move | Retire | Face),
        "through" => matches!(kind, Move | Retire),
        "together" => matches!(kind, Move | Retire | Charge),
        "distance" | "turn_about" | "turn_first" | "away_from" | "meeting" => kind == Retire,
        "then" => true,
        "pay" => kind == Pick,
        _ => false,
    }
}

fn required(kind: ChoiceKind) -> &'static [&'static str] {
    match kind {
        ChoiceKind::Pick => &["then"],
        ChoiceKind::Move => &["allowance", "manoeuvre"],
        ChoiceKind::Charge => &["reach"],
        ChoiceKind::Retire => &["distance"],
        ChoiceKind::Place | ChoiceKind::Face => &[],
    }
}

pub(crate) fn kind_word(kind: ChoiceKind) -> &'static str {
    match kind {
        ChoiceKind::Pick => "pick",
        ChoiceKind::Move => "move",
        ChoiceKind::Charge => "charge",
        ChoiceKind::Retire => "retire",
        ChoiceKind::Place => "place",
        ChoiceKind::Face => "face",
    }
}

/// The types of a choice's option names.
fn var_types(kind: ChoiceKind, n: usize) -> Vec<Ty> {
    let _ = kind;
    vec![Ty::Unit; n]
}

fn procedure(c: &mut Compiler, n: &Name) -> Option<Id> {
    match c.lookup_def(&n.text) {
        Some(Def::Procedure(p)) => Some(p),
        _ => {
            c.unknown(n, "procedure", None);
            None
        }
    }
}

fn call_args(
    c: &mut Compiler,
    p: Id,
    n: &Name,
    args: &[syntax::Expr],
    sc: &mut crate::compile::compiler::Scope,
    span: Span,
) -> Option<Vec<Ex>> {
    let params: Vec<Ty> = c.rs.procedures[p as usize]
        .params
        .iter()
        .map(|x| x.1.clone())
        .collect();
    c.args(n, args, &params, sc, span)
}

fn typed(
    c: &mut Compiler,
    e: &syntax::Expr,
    sc: &mut crate::compile::compiler::Scope,
    want: Ty,
    what: &str,
) -> Option<Ex> {
    let (ex, ty) = c.expr(e, sc, Some(&want))?;
    c.expect(&ty, &want, e.span, what).then_some(ex)
}

/// Compile a decision's body into [`ChoiceDef`].
pub(crate) fn compile_choice(c: &mut Compiler, d: &syntax::Decision) {
    let Some(ch) = &d.choice else { return };
    let Some(Def::Decision(id)) = c.lookup_def(&d.name.text) else {
        return;
    };
    record_names(c, d);
    let params = c.rs.decisions[id as usize].params.clone();
    let mut sc = Compiler::scope_for(&params, false);
    let want_vars = if ch.kind == ChoiceKind::Pick {
        None
    } else if matches!(ch.kind, ChoiceKind::Charge | ChoiceKind::Face) {
        Some(2)
    } else {
        Some(1)
    };
    if let Some(n) = want_vars {
        if ch.vars.len() != n {
            c.err(
                Diag::new(
                    "muster::decision",
                    format!(
                        "`{}` names {n} unit{}",
                        kind_word(ch.kind),
                        if n == 1 { "" } else { "s" }
                    ),
                )
                .at(ch.span, "wrong number of names")
                .help(
                    "write `move u where ...`, `retire u where ...`, `charge c onto t where ...` or `face u toward t where ...`",
                ),
            );
            return;
        }
    }
    let vars: Vec<u16> = ch
        .vars
        .iter()
        .zip(var_types(ch.kind, ch.vars.len()))
        .map(|(v, t)| sc.bind(&v.text, t))
        .collect();
    let Some(legal) = typed(c, &ch.legal, &mut sc, Ty::Bool, "which options are legal") else {
        return;
    };
    let mut def = ChoiceDef {
        kind: ch.kind,
        vars,
        legal,
        must: None,
        order: None,
        reach: None,
        wheel: None,
        allowance: None,
        buffer: None,
        distance: None,
        turn_about: None,
        turn_first: None,
        away_from: None,
        frontal: None,
        manoeuvre: None,
        finish: None,
        control: None,
        through: None,
        together: None,
        meeting: None,
        check: None,
        then: None,
        pay: None,
        slots: 0,
        span: ch.span,
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut finish_span = None;
    let mut meeting_span = None;
    let mut pre_turn_span = None;
    for cl in &ch.clauses {
        let (word, span) = match cl {
            Clause::Expr(k, _) | Clause::Bound(k, _, _) => (k.text.as_str(), k.span),
            Clause::Check(_, _, _, s) => ("check", *s),
            Clause::Then(_, _, s) => ("then", *s),
            Clause::Pay(p) => ("pay", p.span),
        };
        if !clause_allowed(ch.kind, word) {
            c.err(
                Diag::new("muster::decision", format!("a `{}` decision has no `{word}` clause", kind_word(ch.kind)))
                    .at(span, "not a clause of this kind of decision")
                    .help(match ch.kind {
                        ChoiceKind::Pick => "`pick` takes `must`, `by`, `check`, `pay` and `then`",
                        ChoiceKind::Move => "`move` takes `allowance`, `manoeuvre m:`, `finish n:`, `buffer`, `control e:`, `through f:`, `together g:`, `check` and `then`",
                        ChoiceKind::Charge => "`charge` takes `by`, `reach`, `wheel`, `frontal`, `together g:` and `then`",
                        ChoiceKind::Retire => "`retire` takes `must`, `distance`, `turn_about`, `turn_first`, `away_from`, `through f:`, `together g:`, `meeting e:`, `check` and `then`",
                        ChoiceKind::Place => "`place` takes `by` and `then`",
                        ChoiceKind::Face => "`face` takes `must`, `by`, `check` and `then`",
                    }),
            );
            continue;
        }
        if seen.contains(&word) {
            c.err(
                Diag::new(
                    "muster::decision",
                    format!("the `{word}` clause is given twice"),
                )
                .at(span, "again here")
                .help("give each clause once"),
            );
            continue;
        }
        seen.push(word);
        if word == "finish" {
            finish_span = Some(span);
        }
        if word == "meeting" {
            meeting_span = Some(span);
        }
        if word == "turn_first" || word == "away_from" {
            pre_turn_span = Some(span);
        }
        match cl {
            Clause::Expr(k, e) => {
                let want = if matches!(
                    k.text.as_str(),
                    "must" | "turn_about" | "turn_first" | "frontal"
                ) {
                    Ty::Bool
                } else if k.text == "away_from" {
                    Ty::Unit
                } else {
                    Ty::Int
                };
                let Some(ex) = typed(c, e, &mut sc, want, &format!("the `{}` clause", k.text))
                else {
                    continue;
                };
                let slot = match k.text.as_str() {
                    "must" => &mut def.must,
                    "by" => &mut def.order,
                    "reach" => &mut def.reach,
                    "wheel" => &mut def.wheel,
                    "allowance" => &mut def.allowance,
                    "buffer" => &mut def.buffer,
                    "turn_about" => &mut def.turn_about,
                    "turn_first" => &mut def.turn_first,
                    "away_from" => &mut def.away_from,
                    "frontal" => &mut def.frontal,
                    _ => &mut def.distance,
                };
                *slot = Some(ex);
            }
            Clause::Bound(k, v, e) => {
                let ty = if k.text == "manoeuvre" || k.text == "finish" {
                    match c.lookup_def("manoeuvre") {
                        Some(Def::Enum(en)) => Ty::Enum(en),
                        _ => {
                            c.err(
                                Diag::new(
                                    "muster::unknown_name",
                                    format!("`{}` needs the enum `manoeuvre`", k.text),
                                )
                                .at(k.span, "no `enum manoeuvre` is declared")
                                .help("add `import battle` near the top of the ruleset"),
                            );
                            continue;
                        }
                    }
                } else {
                    Ty::Unit
                };
                let slot = sc.bind(&v.text, ty);
                let Some(ex) = typed(c, e, &mut sc, Ty::Bool, &format!("the `{}` clause", k.text))
                else {
                    continue;
                };
                let target = match k.text.as_str() {
                    "manoeuvre" => &mut def.manoeuvre,
                    "finish" => &mut def.finish,
                    "control" => &mut def.control,
                    "together" => &mut def.together,
                    "meeting" => &mut def.meeting,
                    _ => &mut def.through,
                };
                *target = Some((slot, ex));
            }
            Clause::Check(n, args, unless, span) => {
                let Some(p) = procedure(c, n) else { continue };
                if !c.rs.procedures[p as usize]
                    .outcomes
                    .iter()
                    .any(|o| o.name == "passed" && o.ty == Ty::Bool)
                {
                    c.err(
                        Diag::new(
                            "muster::decision",
                            format!("procedure `{}` has no `passed: bool` outcome", n.text),
                        )
                        .at(n.span, "a check needs to say whether it passed")
                        .help("give the procedure an outcome `passed: bool`"),
                    );
                    continue;
                }
                let Some(args) = call_args(c, p, n, args, &mut sc, *span) else {
                    continue;
                };
                let unless = match unless {
                    Some(e) => match typed(c, e, &mut sc, Ty::Bool, "the `unless` condition") {
                        Some(x) => Some(x),
                        None => continue,
                    },
                    None => None,
                };
                def.check = Some((p, args, unless));
            }
            Clause::Pay(p) => {
                def.pay = crate::compile::hands::pay_clause(
                    c,
                    &p.deck,
                    &p.cost,
                    &p.from,
                    p.to.as_ref(),
                    &mut sc,
                );
            }
            Clause::Then(n, args, span) => {
                let Some(p) = procedure(c, n) else { continue };
                let Some(args) = call_args(c, p, n, args, &mut sc, *span) else {
                    continue;
                };
                def.then = Some((p, args));
            }
        }
    }
    for r in required(ch.kind) {
        if !seen.contains(r) {
            c.err(
                Diag::new(
                    "muster::decision",
                    format!("a `{}` decision needs a `{r}` clause", kind_word(ch.kind)),
                )
                .at(ch.span, format!("no `{r}` clause"))
                .help(match *r {
                    "then" => "say what taking an option does: `then PROCEDURE(args)`",
                    "allowance" => "say how far a unit may move: `allowance move_allowance(u)`",
                    "manoeuvre" => {
                        "say which manoeuvres a unit may use: `manoeuvre m: may_manoeuvre(u, m)`"
                    }
                    "reach" => "say how far a charge may go: `reach 3`",
                    _ => "say how far the unit goes back: `distance 3`",
                }),
            );
        }
    }
    if let (Some(span), Some(_), Some(_)) = (meeting_span, &def.meeting, &def.together) {
        c.err(
            Diag::new(
                "muster::decision",
                "a retire `together` has no `meeting` clause",
            )
            .at(span, "only a unit retiring alone meets an enemy")
            .help("drop `meeting` or `together`: a group's retire stops short of any enemy in its way"),
        );
    }
    if let (Some(span), Some(_)) = (pre_turn_span, &def.together) {
        c.err(
            Diag::new(
                "muster::decision",
                "a retire `together` has no `turn_first` or `away_from` clause",
            )
            .at(span, "only a unit retiring alone turns before it goes back")
            .help("drop the clause or `together`: a group goes straight back as it faces"),
        );
    }
    if let (Some(span), Some(_)) = (finish_span, &def.together) {
        c.err(
            Diag::new(
                "muster::decision",
                "a move `together` has no `finish` clause",
            )
            .at(span, "a group ends its move as it made it")
            .help("a second change of direction is for units that move alone: drop `finish` or `together`"),
        );
    }
    def.slots = sc.max;
    c.rs.decisions[id as usize].choice = Some(def);
}

/// Compile a policy: each line scores the options of one decision, in the
/// decision's frame (its parameters, then the option's names).
pub(crate) fn compile_policy(c: &mut Compiler, p: &syntax::Policy, span: Span) {
    if c.rs.policies.iter().any(|x| x.name == p.name.text) {
        c.err(
            Diag::new(
                "muster::duplicate",
                format!("policy `{}` is defined twice", p.name.text),
            )
            .at(p.name.span, "defined again here")
            .help("give each policy its own name; a house rule writes `override policy`"),
        );
        return;
    }
    let mut prefer = vec![None; c.rs.decisions.len()];
    for (n, e) in &p.lines {
        let Some(Def::Decision(d)) = c.lookup_def(&n.text) else {
            c.unknown(
                n,
                "decision",
                Some("a policy line names a decision of the ruleset".into()),
            );
            continue;
        };
        let dec = c.rs.decisions[d as usize].clone();
        let Some(ch) = &dec.choice else {
            c.err(
                Diag::new(
                    "muster::policy",
                    format!("decision `{}` has no body to choose among", n.text),
                )
                .at(n.span, "nothing to score")
                .help("give the decision a body: `{ pick ... where ... then ... }`"),
            );
            continue;
        };
        let mut sc = Compiler::scope_for(&dec.params, false);
        let names = names_of(c, d);
        for (name, slot) in names.iter().zip(&ch.vars) {
            let s = sc.bind(name, Ty::Unit);
            debug_assert_eq!(s, *slot);
        }
        if prefer[d as usize].is_some() {
            c.err(
                Diag::new(
                    "muster::duplicate",
                    format!("the policy scores `{}` twice", n.text),
                )
                .at(n.span, "again here")
                .help("give each decision one line"),
            );
            continue;
        }
        if let Some(ex) = typed(c, e, &mut sc, Ty::Int, "a preference") {
            prefer[d as usize] = Some((ex, sc.max));
        }
    }
    let mut search = None;
    for (o, v) in &p.options {
        if o.text != "search" {
            c.err(
                Diag::new(
                    "muster::policy",
                    format!("a policy has no option `{}`", o.text),
                )
                .at(o.span, "not an option")
                .help(format!(
                    "a policy's one option is `search` ({})",
                    Search::names("`")
                )),
            );
            continue;
        }
        if search.is_some() {
            c.err(
                Diag::new("muster::duplicate", "the policy says `search` twice")
                    .at(o.span, "again here")
                    .help("say how the player searches once"),
            );
            continue;
        }
        match Search::ALL.iter().find(|(_, n)| *n == v.text) {
            Some((s, _)) => search = Some(*s),
            None => c.err(
                Diag::new(
                    "muster::policy",
                    format!("`{}` is not a search", v.text),
                )
                .at(v.span, "not a search")
                .help("write `search = thorough` (a fixed fan of manoeuvres), `search = purposeful` (moves toward what the policy values) or `search = stand_off` (those and stops short of them)"),
            ),
        }
    }
    c.rs.policies.push(PolicyDef {
        name: p.name.text.clone(),
        doc: p.doc.clone(),
        prefer,
        search: search.unwrap_or_default(),
        span,
    });
}

/// The option names of a decision, as its body wrote them.
fn names_of(c: &Compiler, d: Id) -> Vec<String> {
    c.choice_names.get(&d).cloned().unwrap_or_default()
}

/// Remember a decision's option names for its policies.
pub(crate) fn record_names(c: &mut Compiler, d: &syntax::Decision) {
    if let (Some(ch), Some(Def::Decision(id))) = (&d.choice, c.lookup_def(&d.name.text)) {
        c.choice_names
            .insert(id, ch.vars.iter().map(|v| v.text.clone()).collect());
    }
}
