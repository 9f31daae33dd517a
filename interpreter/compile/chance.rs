//! Compiling `chance` and `expect`: a procedure's exact odds read by an
//! expression.
//!
//! `chance(melee(c, t) given charging(c), winner == attacker)` is how
//! likely the condition is among the ways the procedure can end, and
//! `expect(melee(c, t), attacker_hits - defender_hits)` the mean of a value
//! over them: the outcomes are read by name, beside the caller's own
//! locals, and the facts after `given` are noted first. Here the call is
//! checked (a procedure, its arguments, facts it may be given) and becomes
//! an [`Ex::Odds`](crate::compile::ir::Ex) over an [`OddsEx`]; the odds are
//! taken when it runs ([`crate::run::chance`]).

use crate::base::value::Value;
use crate::compile::compiler::{Compiler, Def, Scope};
use crate::compile::ir::{Ex, Id, OddsEx, Ty, Weighing};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, BinOp, ExprKind, OddsOf, Span};

/// Compile `chance(...)` / `expect(...)`.
pub(crate) fn compile(
    c: &mut Compiler,
    o: &OddsOf,
    sc: &mut Scope,
    span: Span,
) -> Option<(Ex, Ty)> {
    let word = if o.expect { "expect" } else { "chance" };
    let Some(Def::Procedure(p)) = c.lookup(&o.procedure.text) else {
        c.err(
            Diag::new(
                "muster::odds_of",
                format!(
                    "`{word}` weighs a procedure, and `{}` is not one",
                    o.procedure.text
                ),
            )
            .at(o.procedure.span, "not a procedure")
            .help(format!(
                "write `{word}(PROCEDURE(ARGS), ...)` with a procedure of the ruleset, e.g. `chance(melee(a, b), winner == attacker)`"
            )),
        );
        return None;
    };
    let params: Vec<Ty> = c.rs.procedures[p as usize]
        .params
        .iter()
        .map(|x| x.1.clone())
        .collect();
    let args = c.args(&o.procedure, &o.args, &params, sc, span)?;
    let mut given = Vec::new();
    if let Some(g) = &o.given {
        let mut parts = Vec::new();
        conjuncts(g, &mut parts);
        for part in parts {
            given.push(given_fact(c, part, sc)?);
        }
    }
    let outcomes = c.rs.procedures[p as usize].outcomes.clone();
    let m = sc.mark();
    let mut first = None;
    for out in &outcomes {
        let s = sc.bind(&out.name, out.ty.clone());
        first.get_or_insert(s);
    }
    let of = c.expr(&o.of, sc, None);
    sc.reset(m);
    let (of, ty) = of?;
    if o.expect {
        c.expect(&ty, &Ty::Int, o.of.span, "the value `expect` averages");
    } else {
        c.expect(&ty, &Ty::Bool, o.of.span, "the condition `chance` weighs");
    }
    let row = c.rs.weighings.len() as u16;
    c.rs.weighings.push(Weighing {
        procedure: p,
        of: of.clone(),
    });
    Some((
        Ex::Odds(Box::new(OddsEx {
            expect: o.expect,
            procedure: p,
            args,
            given,
            first: first.unwrap_or(0),
            outcomes: outcomes.len() as u16,
            row,
            of,
            span,
        })),
        Ty::Int,
    ))
}

/// The `and`-ed parts of `given`.
fn conjuncts<'e>(e: &'e syntax::Expr, out: &mut Vec<&'e syntax::Expr>) {
    match &e.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(e),
    }
}

/// One fact given: `f(args)`, `not f(args)`, `f(args) is V`, `f(args) == V`.
fn given_fact(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope) -> Option<(Id, Vec<Ex>, Ex)> {
    let (call, value): (&syntax::Expr, Option<&syntax::Expr>) = match &e.kind {
        ExprKind::Call(..) => (e, None),
        ExprKind::Not(x) if matches!(x.kind, ExprKind::Call(..)) => (x, None),
        ExprKind::Binary(BinOp::Eq, x, v) if matches!(x.kind, ExprKind::Call(..)) => (x, Some(v)),
        ExprKind::Is(x, names, false)
            if names.len() == 1 && matches!(x.kind, ExprKind::Call(..)) =>
        {
            (x, None)
        }
        _ => return not_a_fact(c, e.span),
    };
    let ExprKind::Call(name, args) = &call.kind else {
        return not_a_fact(c, e.span);
    };
    let Some(Def::Fact(f)) = c.lookup(&name.text) else {
        return not_a_fact(c, e.span);
    };
    let fd = &c.rs.facts[f as usize];
    if fd.battle.is_some() || fd.hook.is_some() {
        let how = if fd.hook.is_some() {
            "a hook derives it"
        } else {
            "a battle derives it from the table (`in battle:`)"
        };
        c.err(
            Diag::new(
                "muster::odds_of",
                format!("`{}` cannot be given: {how}", name.text),
            )
            .at(name.span, "derived, not noted")
            .help("only facts that procedures note (or situations state) can be given; the derived ones already hold as the table says"),
        );
        return None;
    }
    let (params, fty) = (fd.params.clone(), fd.ty.clone());
    let args = c.args(name, args, &params, sc, call.span)?;
    let value = match (&e.kind, value) {
        (ExprKind::Not(_), _) => Ex::Const(Value::Bool(false)),
        (ExprKind::Is(_, names, _), _) => {
            let want = fty.clone();
            let n = syntax::Expr {
                kind: ExprKind::Name(names[0].clone()),
                span: names[0].span,
            };
            let (v, t) = c.expr(&n, sc, Some(&want))?;
            c.expect(&t, &fty, names[0].span, "the value given");
            v
        }
        (_, Some(v)) => {
            let (x, t) = c.expr(v, sc, Some(&fty))?;
            c.expect(&t, &fty, v.span, "the value given");
            x
        }
        _ => {
            if fty != Ty::Bool {
                c.err(
                    Diag::new(
                        "muster::odds_of",
                        format!("`{}` is not a yes-or-no fact", name.text),
                    )
                    .at(call.span, "no value given")
                    .help(format!("give its value: `{}(...) == VALUE`", name.text)),
                );
                return None;
            }
            Ex::Const(Value::Bool(true))
        }
    };
    Some((f, args, value))
}

fn not_a_fact<T>(c: &mut Compiler, span: Span) -> Option<T> {
    c.err(
        Diag::new("muster::odds_of", "`given` takes facts")
            .at(span, "not a fact")
            .help("write facts joined by `and`: `given charging(c) and not fortified(t)`, `given position(t, c) is to_flank`, `given overlaps(c) == 2`"),
    );
    None
}
