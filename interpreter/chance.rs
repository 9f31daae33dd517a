//! `chance` and `expect`: a procedure's exact odds read by an expression.
//!
//! `chance(melee(c, t) given charging(c), winner == attacker)` is how
//! likely the condition is among the ways the procedure can end, and
//! `expect(melee(c, t), attacker_hits - defender_hits)` the mean of a value
//! over them: the outcomes are read by name, beside the caller's own
//! locals. The odds are the exact engine's ([`crate::odds`]), taken in the
//! world as it stands (a battle's table, the units' state) with the facts
//! after `given` noted first: a policy weighs a charge by the rules' own
//! melee, so a house rule that changes the melee changes the player too.
//!
//! The value is exact when its denominator is at most a million (1/3,
//! 184/729), else rounded to the nearest millionth (a fraction of many dice
//! can have a denominator no number here holds). Only the work the outcomes
//! read is done ([`crate::odds::Program::keep_outcomes`]). A battle
//! remembers each answer until something the procedure or `of` reads
//! changes.

use crate::compile::{Compiler, Def, Scope};
use crate::diagnostic::Diag;
use crate::dice::Prob;
use crate::eval::{fault, Ctx, Eval, EvalError, R};
use crate::ir::{Ex, Id, OddsEx, Ty, Weighing};
use crate::odds::{self, ExactError};
use crate::syntax::{self, BinOp, ExprKind, OddsOf, Span};
use crate::value::Value;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::cell::Cell;

/// The answers are rounded to this fraction.
const SCALE: i64 = 1_000_000;

/// How deep `chance` may nest in the procedures it weighs (a procedure
/// whose odds read its own odds would never end).
const MAX_NESTED: u32 = 2;

thread_local! {
    static NESTED: Cell<u32> = const { Cell::new(0) };
}

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

/// The values `of` takes over the ways the procedure ends, averaged
/// (`expect`) or as the chance it holds (`chance`), in the world `c` with
/// the given facts noted; `of` reads the outcomes in place.
pub(crate) fn weigh(
    ev: &Eval,
    c: Ctx,
    o: &OddsEx,
    args: &[Value],
    given: &[(Id, Vec<Value>, Value)],
    of: &mut dyn FnMut(&[Value]) -> R<Value>,
) -> R<Value> {
    // While a procedure is being specialised (its state may still change),
    // the odds are taken when it runs.
    if c.dirty.is_some() {
        return Err(EvalError::NotStatic);
    }
    let depth = NESTED.with(|n| n.get());
    if depth >= MAX_NESTED {
        return Err(fault(
            format!(
                "`chance` or `expect` of `{}` nests more than {MAX_NESTED} deep",
                ev.rs.procedures[o.procedure as usize].name
            ),
            "a procedure's odds must not read its own odds: weigh it in a policy or define that the procedure does not call",
        ));
    }
    let mut world = c.world.clone();
    world.state = c.state.to_vec();
    world.side_state = c.side_state.to_vec();
    for (f, key, v) in given {
        world.facts[*f as usize].insert(key.clone(), *v);
    }
    NESTED.with(|n| n.set(depth + 1));
    let r = weigh_in(ev, world, o, args, of);
    NESTED.with(|n| n.set(depth));
    r
}

fn weigh_in(
    ev: &Eval,
    world: crate::world::World,
    o: &OddsEx,
    args: &[Value],
    of: &mut dyn FnMut(&[Value]) -> R<Value>,
) -> R<Value> {
    let rs = ev.rs;
    let name = &rs.procedures[o.procedure as usize].name;
    let wanted = outcomes_read(o);
    let mut prog = odds::specialise_wanting(rs, world, o.procedure, args, Some(&wanted))
        .map_err(|d| EvalError::Fault(Box::new(d)))?;
    prog.keep_outcomes(rs, &wanted);
    let mut hits = Prob::ZERO;
    let (mut up, mut down) = (Prob::ZERO, Prob::ZERO);
    let mut failed = None;
    let walked = odds::exact_leaves(rs, &prog, &mut |out, p| {
        let v = match of(out) {
            Ok(v) => v,
            Err(e) => {
                failed = Some(e);
                return false;
            }
        };
        if !o.expect {
            if v.as_bool() {
                hits = hits.plus(p);
            }
            return true;
        }
        let (n, d) = match v.as_frac() {
            Some(x) => x,
            None => {
                failed = Some(fault(
                    format!("`expect` of `{name}` averages `none`"),
                    "guard the value with `!= none`, or average a value every ending has",
                ));
                return false;
            }
        };
        let part = p.times(Prob::ratio(n.unsigned_abs() as u128, d as u128));
        if n >= 0 {
            up = up.plus(part);
        } else {
            down = down.plus(part);
        }
        true
    });
    if let Some(e) = failed {
        return Err(e);
    }
    walked.map_err(|e| match e {
        ExactError::Fault(d) => EvalError::Fault(Box::new(d)),
        ExactError::TooMany(limit) => fault(
            format!("the odds of `{name}` here cannot be taken exactly: {limit}"),
            "weigh a smaller question (fewer dice), or score the option without `chance`/`expect`",
        ),
    })?;
    let r = if o.expect {
        big(&up) - big(&down)
    } else {
        big(&hits)
    };
    Ok(millionths(&r))
}

/// Which of the procedure's outcomes `of` reads.
fn outcomes_read(o: &OddsEx) -> Vec<bool> {
    fn walk(e: &Ex, o: &OddsEx, wanted: &mut [bool]) {
        if let Ex::Local(s) = e {
            if let Some(i) = s.checked_sub(o.first) {
                if let Some(w) = wanted.get_mut(i as usize) {
                    *w = true;
                }
            }
        }
        e.any_child(&mut |c| {
            walk(c, o, wanted);
            false
        });
    }
    let mut wanted = vec![false; o.outcomes as usize];
    walk(&o.of, o, &mut wanted);
    wanted
}

fn big(p: &Prob) -> BigRational {
    p.big().unwrap_or_else(BigRational::zero)
}

/// `r` exactly when its denominator is at most a million, else to the
/// nearest millionth.
fn millionths(r: &BigRational) -> Value {
    if let (Some(n), Some(d)) = (r.numer().to_i64(), r.denom().to_i64()) {
        if d <= SCALE && n.abs() <= i32::MAX as i64 {
            return Value::frac(n, d);
        }
    }
    let k = (r * BigRational::from_integer(SCALE.into()))
        .round()
        .to_integer()
        .to_i64()
        .unwrap_or(i64::MAX / SCALE);
    Value::frac(k, SCALE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_the_nearest_millionth() {
        // Small denominators stay exact.
        let r = BigRational::new(184.into(), 729.into());
        assert_eq!(millionths(&r), Value::frac(184, 729));
        let r = BigRational::new((-1).into(), 3.into());
        assert_eq!(millionths(&r), Value::frac(-1, 3));
        // 1/6^8 = 1/1679616: 0.000000595... rounds up to a millionth.
        let r = BigRational::new(1.into(), 1_679_616.into());
        assert_eq!(millionths(&r), Value::frac(1, SCALE));
        // 184/729 + 1/6^8 = 0.252401143...
        let r =
            BigRational::new(184.into(), 729.into()) + BigRational::new(1.into(), 1_679_616.into());
        assert_eq!(millionths(&r), Value::frac(252_401, SCALE));
        assert_eq!(
            millionths(&BigRational::from_integer(2.into())),
            Value::Int(2)
        );
    }
}
