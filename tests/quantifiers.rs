//! `sum`, `min` and `max` over units, and the `for` statement: their values
//! in a situation, the exact odds of a sum of pools (against the binomial
//! closed form and against sampling), and their diagnostics.

#![allow(clippy::result_large_err)]

use muster::base::value::Value;
use muster::Build;

/// Units in groups: each unit of a group rolls its own dice at its own
/// score, and the group's hits are the sum (as in Thistle's group melee).
const RULES: &str = r#"
ruleset groups "quantifier tests"
import core
sides near, far
class foot, mounted
stat dice, score, move
units (dice, score, move) {
  Pikes : foot    = 2, 4, 6
  Horse : mounted = 1, 5, 18
}
state hits: int = 0
fact grouped(unit, unit): bool = false
define in_group(g: unit, u: unit): bool = u == g or grouped(g, u)

procedure group_fight(a: unit) outcomes { hits: int, slowest: int, fastest: int, none_left: bool, shot: int } {
  outcome hits = sum u: in_group(a, u) of u.dice d6 scoring u.score+
  outcome slowest = min u: in_group(a, u) of u.move
  outcome fastest = max u in units: true of u.move
  outcome none_left = (min u: u.hits > 100 of u.move) == none
  // Each enemy takes one die at 5+, in scenario order.
  for u: u.side != a.side {
    let h = 1 d6 scoring 5+
    u.hits += h
    outcome shot = outcome_total(u) + h
  }
}
define outcome_total(u: unit): int = sum x: x.side == u.side and x != u of x.hits
"#;

const SITUATION: &str = r#"
procedure = "group_fight"
facts = ["grouped(a, p2)", "grouped(a, h)"]
[units.a]
type = "Pikes"
side = "near"
[units.p2]
type = "Pikes"
side = "near"
[units.h]
type = "Horse"
side = "near"
[units.e1]
type = "Horse"
side = "far"
[units.e2]
type = "Horse"
side = "far"
"#;

fn build(text: &str) -> Result<Build, String> {
    muster::build_text("q.muster", text, None).map_err(|(d, s)| crate::common::render_here(&d, &s))
}

fn rejected(text: &str) -> String {
    match build(text) {
        Ok(_) => panic!("the ruleset should have been rejected"),
        Err(e) => e,
    }
}

fn binomial(n: u32, k: u32) -> u128 {
    (0..k).fold(1u128, |acc, i| acc * (n - i) as u128 / (i + 1) as u128)
}

#[test]
fn a_sum_of_pools_convolves_exactly() {
    let mut b = build(RULES).unwrap();
    let s = b.situation("s.toml", SITUATION).unwrap();
    let o = b.exact(&s).unwrap();
    let hits = o.get("hits").unwrap();
    // Two pikes, 2 dice each at 4+ (1/2), and a horse, 1 die at 5+ (1/3):
    // P(k) = sum over j of C(4, k-j) / 16 * P(horse = j).
    for k in 0..=5u32 {
        let mut num = 0u128; // over 16 * 3 = 48
        for (j, pj) in [(0u32, 2u128), (1, 1)] {
            if k >= j && k - j <= 4 {
                num += binomial(4, k - j) * pj;
            }
        }
        let p = hits.p(Value::Int(k as i64));
        let want = num as f64 / 48.0;
        assert!(
            (p.to_f64() - want).abs() < 1e-12,
            "{k}: {} vs {want}",
            p.to_f64()
        );
    }
    assert_eq!(hits.p(Value::Int(5)).fraction(), Some((1, 48)));
    // The slowest of the group is a pike (6); the fastest on the table a horse.
    assert_eq!(
        o.get("slowest").unwrap().p(Value::Int(6)).fraction(),
        Some((1, 1))
    );
    assert_eq!(
        o.get("fastest").unwrap().p(Value::Int(18)).fraction(),
        Some((1, 1))
    );
    // No unit qualifies: min is none.
    assert_eq!(
        o.get("none_left").unwrap().p(Value::Bool(true)).fraction(),
        Some((1, 1))
    );
}

#[test]
fn sampling_agrees_with_the_exact_sum() {
    let mut b = build(RULES).unwrap();
    let s = b.situation("s.toml", SITUATION).unwrap();
    let n = 480_000u64;
    let o = b.sampled(&s, n, 11).unwrap();
    // P(0 hits) = 2/48: 20,000 expected, sd ~140.
    let zero = o.get("hits").unwrap().p(Value::Int(0)).to_f64() * n as f64;
    assert!((zero - 20_000.0).abs() < 4.5 * 140.0, "{zero}");
    // P(5) = 1/48: 10,000 expected, sd ~99.
    let five = o.get("hits").unwrap().p(Value::Int(5)).to_f64() * n as f64;
    assert!((five - 10_000.0).abs() < 4.5 * 99.0, "{five}");
}

#[test]
fn a_for_runs_once_per_qualifying_unit_in_scenario_order() {
    let mut b = build(RULES).unwrap();
    let s = b.situation("s.toml", SITUATION).unwrap();
    let o = b.exact(&s).unwrap();
    // The last round (e2) reports e1's hits (already rolled) plus its own:
    // 0, 1 or 2 hits with 4/9, 4/9, 1/9.
    let shot = o.get("shot").unwrap();
    assert_eq!(shot.p(Value::Int(0)).fraction(), Some((4, 9)));
    assert_eq!(shot.p(Value::Int(1)).fraction(), Some((4, 9)));
    assert_eq!(shot.p(Value::Int(2)).fraction(), Some((1, 9)));
    // Scripted: e1 rolls 5 (a hit), e2 rolls 2.
    let s = b
        .situation(
            "s.toml",
            &SITUATION.replace(
                "procedure = \"group_fight\"",
                "procedure = \"group_fight\"\nrolls = [1, 1, 1, 1, 1, 5, 2]",
            ),
        )
        .unwrap();
    let o = b.scripted(&s).unwrap();
    assert_eq!(
        o.get("shot").unwrap().p(Value::Int(1)).fraction(),
        Some((1, 1))
    );
    assert_eq!(
        o.get("hits").unwrap().p(Value::Int(0)).fraction(),
        Some((1, 1))
    );
}

#[test]
fn a_sum_needs_a_value_and_any_takes_none() {
    let e = rejected(&RULES.replace(
        "outcome slowest = min u: in_group(a, u) of u.move",
        "outcome slowest = min u: in_group(a, u)",
    ));
    assert!(e.contains("`min` needs a value to add up"), "{e}");
    assert!(e.contains("help: write `min u: CONDITION of VALUE`"), "{e}");
    let e = rejected(&RULES.replace(
        "outcome none_left = (min u: u.hits > 100 of u.move) == none",
        "outcome none_left = any u: u.hits > 100 of u.move",
    ));
    assert!(e.contains("`any` takes no `of VALUE`"), "{e}");
    let e = rejected(&RULES.replace("of u.dice d6 scoring u.score+", "of u.side"));
    assert!(e.contains("the value a quantifier adds up"), "{e}");
    let e = rejected(&RULES.replace("for u: u.side != a.side {", "for a: true {"));
    assert!(e.contains("`a` is already bound here"), "{e}");
    let e = rejected(&RULES.replace("for u: u.side != a.side {", "for u: u.hits {"));
    assert!(e.contains("the condition of `for`"), "{e}");
}
