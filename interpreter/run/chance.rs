//! Taking the odds of `chance(...)` and `expect(...)` as a rule runs
//! ([`crate::compile::chance`] compiles them).
//!
//! The odds are the exact engine's ([`crate::run::odds`]), taken in the
//! world as it stands (a battle's table, the units' state) with the facts
//! after `given` noted first: a policy weighs a charge by the rules' own
//! melee, so a house rule that changes the melee changes the player too.
//!
//! The value is exact when its denominator is at most a million (1/3,
//! 184/729), else rounded to the nearest millionth (a fraction of many dice
//! can have a denominator no number here holds). Only the work the outcomes
//! read is done ([`crate::run::odds::Program::keep_outcomes`]). A battle
//! remembers each answer until something the procedure or `of` reads
//! changes.

use crate::base::value::Value;
use crate::compile::ir::{Ex, Id, OddsEx};
use crate::run::dice::Prob;
use crate::run::eval::{fault, Ctx, Eval, EvalError, R};
use crate::run::odds::{self, ExactError};
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
    world: crate::run::world::World,
    o: &OddsEx,
    args: &[Value],
    of: &mut dyn FnMut(&[Value]) -> R<Value>,
) -> R<Value> {
    let rs = ev.rs;
    let name = &rs.procedures[o.procedure as usize].name;
    let wanted = outcomes_read(o);
    let mut prog = odds::specialise_wanting(rs, world, o.procedure, args, Some(&wanted), Some(ev))
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
