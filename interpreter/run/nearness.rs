//! Conditions that hold only for two units near each other.
//!
//! A battle asks questions of pairs of units: is this enemy in contact,
//! in range, within a charge's reach? Two places skip the pairs plainly
//! too far apart without asking: a quantifier's sieve
//! ([`crate::run::closures`]) and a pick's scan of pairs
//! (`battle::game::pick`). Both find the leaves of a condition that say
//! so here, by one set of rules ([`leaf`]); each then decides what limits
//! it can read in advance.

use crate::compile::ir::{Bin, Builtin, Ex, Ruleset};

/// How near a [`Near`] leaf needs its two units.
#[derive(Clone, Copy, Debug)]
pub enum Reach<'e> {
    /// `in_contact(a, b)`: within [`crate::run::battlefield::CONTACT`].
    Contact,
    /// `distance(a, b) <= limit` or `< limit`.
    Within(&'e Ex),
    /// `reachable(a, b, limit, wheel)`: no point of a charging base moves
    /// further than the charge's cost, so a target further than `limit`
    /// is out of reach. The caller must know `wheel` cannot fail to be
    /// worked out ([`surely_a_number`]): it is worked out before the
    /// distance is looked at.
    Charge { limit: &'e Ex, wheel: &'e Ex },
}

/// A leaf of a condition that is false (without failing to evaluate) for
/// two units further apart than its [`Reach`], or when either is off the
/// table.
#[derive(Clone, Copy, Debug)]
pub struct Near<'e> {
    /// The two units' expressions, in the order the leaf names them.
    pub a: &'e Ex,
    pub b: &'e Ex,
    pub reach: Reach<'e>,
}

/// Is `e` itself such a leaf? (Defines and battle facts that are one are
/// opened by the callers, each by its own rules of inlining.)
pub fn leaf(e: &Ex) -> Option<Near<'_>> {
    match e {
        Ex::Builtin(Builtin::InContact, args) => match &args[..] {
            [a, b] => Some(Near {
                a,
                b,
                reach: Reach::Contact,
            }),
            _ => None,
        },
        Ex::Bin(Bin::Le | Bin::Lt, d, limit) => match &**d {
            Ex::Builtin(Builtin::Distance, args) => match &args[..] {
                [a, b] => Some(Near {
                    a,
                    b,
                    reach: Reach::Within(limit),
                }),
                _ => None,
            },
            _ => None,
        },
        Ex::Builtin(Builtin::Reachable, args) => match &args[..] {
            [a, b, limit, wheel] => Some(Near {
                a,
                b,
                reach: Reach::Charge { limit, wheel },
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Is `e` surely a number, never failing to be worked out (the units in
/// the locals of `units`)? A number, or `if C then A else B` of such with
/// a C that cannot fail ([`crate::run::eval::cannot_fail`]) and rolls no
/// dice.
pub fn surely_a_number(rs: &Ruleset, e: &Ex, units: u64) -> bool {
    match e {
        Ex::Const(v) => v.as_frac().is_some(),
        Ex::If(c, a, b) => {
            !crate::run::eval::rolls_dice(rs, c)
                && crate::run::eval::cannot_fail(rs, c, units)
                && surely_a_number(rs, a, units)
                && surely_a_number(rs, b, units)
        }
        _ => false,
    }
}
