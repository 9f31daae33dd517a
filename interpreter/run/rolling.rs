//! Rolling a compiled roll (see [`crate::compile::rolls`]): a pool's dice
//! once its counts are known, each die rolled through a
//! [`DiceSource`](crate::run::dice::DiceSource), and each face read by its
//! `effects` block into the roll's packed tallies.

use crate::base::value::Value;
use crate::compile::ir::*;
use crate::front::diagnostic::Diag;
use crate::front::syntax::Span;
use crate::run::eval::{fault, Ctx, Eval, EvalError, NoDice, R};
use std::borrow::Cow;

/// The dice of a roll once its counts and pools are known: (die, how
/// many), in the order the pool names them.
pub type RollDice = Vec<(Id, i64)>;

impl Eval<'_> {
    /// Add `n` times the pool `v` (a value of type `dice`) to a roll's dice.
    /// `none` is a table of dice asked for a key it has no row for (a
    /// ladder moved past its last rung): a diagnostic at the roll `at`.
    pub(crate) fn add_pool(&self, v: Value, n: i64, at: Span, out: &mut RollDice) -> R<()> {
        match v {
            Value::Pool(p) => {
                for (d, k) in &self.rs.pools[p as usize].parts {
                    out.push((*d, k.saturating_mul(n)));
                }
                Ok(())
            }
            Value::None => Err(no_dice(at)),
            other => Err(fault(
                format!("a pool of dice was expected, not {other}"),
                "this is a bug in the compiler's type checks",
            )),
        }
    }

    /// A roll, the tree evaluator's way: its counts, pools and arguments
    /// evaluated, then [`Eval::roll_dice`].
    #[inline(never)]
    pub(crate) fn roll_ex(
        &self,
        c: Ctx,
        r: &Roll,
        frame: &mut [Value],
        dice: &mut dyn crate::run::dice::DiceSource,
    ) -> R<Value> {
        if c.dirty.is_some() {
            return Err(EvalError::NotStatic);
        }
        let mut parts = RollDice::with_capacity(r.parts.len());
        for p in &r.parts {
            let n = self.eval(c, &p.count, frame, dice)?;
            let n = self.num(n, "the number of dice")?;
            match &p.dice {
                PartDice::Die(d) => parts.push((*d, n)),
                PartDice::Pool(e) => {
                    let v = self.eval(c, e, frame, dice)?;
                    self.add_pool(v, n, r.span, &mut parts)?;
                }
            }
        }
        let mut args = Vec::with_capacity(r.args.len());
        for a in &r.args {
            args.push(self.eval(c, a, frame, dice)?);
        }
        self.roll_dice(c, r.effects, &parts, &args, dice)
    }

    /// How `effects` block `fx` (given `args`) reads the faces of each die
    /// of a roll, in the roll's order.
    pub fn readings(
        &self,
        c: Ctx,
        fx: Id,
        parts: &[(Id, i64)],
        args: &[Value],
    ) -> R<Vec<Cow<'_, [i64]>>> {
        let def = &self.rs.effects[fx as usize];
        if let Some(fixed) = &def.fixed {
            return Ok(parts
                .iter()
                .map(|(d, _)| Cow::Borrowed(fixed[*d as usize].as_slice()))
                .collect());
        }
        let mut frame = vec![Value::None; (def.slots as usize).max(args.len())];
        frame[..args.len()].copy_from_slice(args);
        parts
            .iter()
            .map(|(d, _)| {
                def.read_die(&self.rs.dice[*d as usize], |w| {
                    Ok(self.eval(c, w, &mut frame, &mut NoDice)?.as_bool())
                })
                .map(Cow::Owned)
            })
            .collect()
    }

    /// A roll may hold at most [`crate::compile::ir::MAX_POOL`] dice, and its
    /// faces may count at most [`MAX_TALLY`] of any one tally (a tally has
    /// [`TALLY_BITS`] of the roll's number).
    pub fn check_roll(&self, fx: Id, parts: &[(Id, i64)], readings: &[Cow<[i64]>]) -> R<()> {
        let n: i64 = parts
            .iter()
            .map(|p| p.1.max(0))
            .fold(0, i64::saturating_add);
        if let Some(m) = crate::run::dice::pool_too_big(n) {
            return Err(fault(m, "check the number of dice the rule computes"));
        }
        let def = &self.rs.effects[fx as usize];
        let read: Vec<&[i64]> = readings.iter().map(|r| r.as_ref()).collect();
        let most = def.most_per_face(&read);
        if n.saturating_mul(most) > MAX_TALLY {
            return Err(fault(
                format!(
                    "a roll of {n} dice read by `{}` could count more than {MAX_TALLY} of one tally (a face counts up to {most})",
                    def.name
                ),
                "roll fewer dice at once, or split the roll",
            ));
        }
        Ok(())
    }

    /// Roll the dice of a roll and read their faces by `effects` block `fx`.
    pub(crate) fn roll_dice(
        &self,
        c: Ctx,
        fx: Id,
        parts: &[(Id, i64)],
        args: &[Value],
        dice: &mut dyn crate::run::dice::DiceSource,
    ) -> R<Value> {
        let readings = self.readings(c, fx, parts, args)?;
        self.check_roll(fx, parts, &readings)?;
        let rolled: Vec<(&DieDef, &[i64], i64)> = parts
            .iter()
            .zip(&readings)
            .map(|((d, n), r)| (&self.rs.dice[*d as usize], r.as_ref(), *n))
            .collect();
        crate::run::dice::roll_parts(&rolled, dice)
            .map(Value::Int)
            .map_err(|m| {
                fault(
                    m,
                    "give one scripted roll for every die the procedure rolls",
                )
            })
    }

    /// Tally `k` of a roll read by `effects` block `fx`.
    pub(crate) fn tally_of(&self, v: Value, fx: Id, k: u8) -> R<Value> {
        let packed = self.num(v, "a roll")?;
        Ok(Value::Int(
            self.rs.effects[fx as usize].tally(packed, k as usize),
        ))
    }
}

/// A roll once the situation has fixed what it could: parts of no dice go,
/// and a roll of no dice at all counts nothing (0).
pub(crate) fn simplify_roll(mut r: Roll) -> Ex {
    r.parts
        .retain(|p| !matches!(p.count, Ex::Const(Value::Int(n)) if n <= 0));
    if r.parts.is_empty() {
        return Ex::Const(Value::Int(0));
    }
    Ex::Roll(Box::new(r))
}

/// A roll whose pool came out `none`: a keyed table of dice has rows for
/// its domain only, and a key past them (a shooting ladder moved below its
/// lowest rung or above its highest) has no dice.
#[cold]
pub(crate) fn no_dice(at: Span) -> EvalError {
    EvalError::Fault(Box::new(
        Diag::new(
            "muster::runtime",
            "this roll has no dice: a table of dice had no row for its key",
        )
        .at(at, "no dice to roll here")
        .help(
            "a table of dice has rows for its keys only, and a key past them (a ladder moved past its last rung) finds none; \
             end the ladder with open rows (`..0 => none` for no dice, `5.. => red`), or keep the key in range with `min` and `max`",
        ),
    ))
}
