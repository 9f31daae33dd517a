//! A `chance`/`expect` answer a battle remembers is kept under its key:
//! the odds expression and the values of its arguments and given facts
//! (issue 33). A condition (`of`) that reads a local of the caller's
//! besides the outcomes has answers the key does not tell apart, so such
//! an answer must not be remembered; one that reads only a local the key
//! holds (an argument that is a bare local) still is.

use crate::common;
use muster::base::value::Value;
use muster::compile::ir::{Ex, Id, Ruleset};
use muster::run::eval::{Ctx, Eval, NoDice};
use muster::run::world::World;

/// TVBD with two defines weighing the rules' own melee: `at_least` reads
/// its own `k` in the condition (not in the key), `hits_unless_cannons`
/// reads the argument `d` (in the key).
const DRAFT: &str = r#"
extends "tillys_very_bad_day.muster"
define at_least(a: unit, d: unit, k: int): int = 27 * chance(melee(a, d) given charging(a), attacker_hits >= k)
define hits_unless_cannons(a: unit, d: unit): int = 27 * chance(melee(a, d) given charging(a), attacker_hits >= 1 and not (d is Cannons))
procedure weigh(attacker: unit, defender: unit) outcomes { hits: int } {
  outcome hits = at_least(attacker, defender, 1)
}
"#;

// Horse charging the front of pike+shot, `charging` left to `given`
// (tests/chance.rs): 3 dice for the horse against 4, each hitting on 5-6.
use crate::chance::HORSE_V_PIKE as SITUATION;

fn unit(w: &World, name: &str) -> Value {
    Value::Unit(w.units.iter().position(|u| u.name == name).unwrap() as u16)
}

/// `name(attacker, defender, extra...)` asked of `ev` in world `w`.
fn ask(rs: &Ruleset, ev: &Eval, w: &World, name: &str, extra: &[Value]) -> Value {
    let d = rs.defines.iter().position(|f| f.name == name).unwrap() as Id;
    let mut args = vec![
        Ex::Const(unit(w, "attacker")),
        Ex::Const(unit(w, "defender")),
    ];
    args.extend(extra.iter().map(|v| Ex::Const(*v)));
    ev.eval(Ctx::new(w), &Ex::Define(d, args), &mut [], &mut NoDice)
        .unwrap()
}

/// The same question of an evaluator that remembers nothing yet.
fn fresh(rs: &Ruleset, w: &World, name: &str, extra: &[Value]) -> Value {
    let ev = Eval::remembering(rs, w.units.len(), w.side_names.len());
    ask(rs, &ev, w, name, extra)
}

/// Closed form: the horse's hits are binomial(3, 1/3); P(at least 1) =
/// 1 - (2/3)^3 = 19/27, P(at least 2) = 3 (1/3)^2 (2/3) + (1/3)^3 = 7/27,
/// P(3) = 1/27. One battle evaluator asked with k = 1, 2, 3, 1 in turn
/// (the world unchanged, so the key's answer would be taken again) gives
/// each its own answer.
#[test]
fn a_condition_reading_a_caller_local_is_not_answered_from_the_key() {
    let mut b = common::draft(DRAFT);
    let w = common::situation(&mut b, SITUATION).world;
    let rs = &b.ruleset;
    let h = common::binomial(3, 1.0 / 3.0);
    let at_least = |k: usize| (h[k..].iter().sum::<f64>() * 27.0).round() as i64;
    assert_eq!((at_least(1), at_least(2), at_least(3)), (19, 7, 1));
    let ev = Eval::remembering(rs, w.units.len(), w.side_names.len());
    for k in [1, 2, 3, 1] {
        let got = ask(rs, &ev, &w, "at_least", &[Value::Int(k)]);
        assert_eq!(got, Value::Int(at_least(k as usize)), "k = {k}");
        assert_eq!(got, fresh(rs, &w, "at_least", &[Value::Int(k)]));
    }
}

/// A condition reading only a local the key holds (the argument `d`) is
/// answered the same remembered or not: the horse hits at least once
/// with 19/27 against pike+shot, asked twice of one evaluator and once
/// afresh.
#[test]
fn a_condition_reading_an_argument_is_answered_the_same_remembered() {
    let mut b = common::draft(DRAFT);
    let w = common::situation(&mut b, SITUATION).world;
    let rs = &b.ruleset;
    let ev = Eval::remembering(rs, w.units.len(), w.side_names.len());
    let name = "hits_unless_cannons";
    assert_eq!(ask(rs, &ev, &w, name, &[]), Value::Int(19));
    assert_eq!(ask(rs, &ev, &w, name, &[]), Value::Int(19));
    assert_eq!(fresh(rs, &w, name, &[]), Value::Int(19));
}
