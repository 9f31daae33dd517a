//! `chance` and `expect` (issue 33, item 4): a policy weighs its options by
//! the rules' own exact odds, so a house rule that changes a procedure
//! changes the player too.

use crate::common;
use muster::base::value::Value;
use muster::battle::game::Prepared;
use muster::front::diagnostic::render_plain;
use muster::Build;
use std::path::Path;

/// The crate's `rules/` folder (a draft of TVBD lives there).
fn rules() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

use common::draft;

/// The rendered diagnostics of a draft that must be refused.
fn refused(text: &str) -> String {
    common::draft_refused(text).1
}

/// TVBD's horse charging the front of pike+shot, the facts of
/// rules/situations/tvbd_horse_charges_pike.toml but for `charging`, which
/// `given` supplies.
pub(crate) const HORSE_V_PIKE: &str = r#"
procedure = "weigh"
facts = [
  "position(defender, attacker) is to_front",
  "position(attacker, defender) is to_front",
]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#;

/// A probe: the odds `chance` and `expect` give, as outcomes.
const PROBE: &str = r#"
extends "tillys_very_bad_day.muster"
procedure weigh(attacker: unit, defender: unit) outcomes { win: int, margin: int, win_uncharged: int } {
  outcome win = 729 * chance(melee(attacker, defender) given charging(attacker), winner == attacker)
  outcome margin = 3 * expect(melee(attacker, defender) given charging(attacker), attacker_hits - defender_hits)
  outcome win_uncharged = 729 * chance(melee(attacker, defender), winner == attacker and not defender_routed)
}
"#;

/// The chance the horse wins is the melee's own exact odds (the
/// situation file's 184/729) and a closed form: 3 dice at 5-6 against 4
/// at 5-6, more hits wins (each die hits with 1/3).
#[test]
fn chance_and_expect_are_the_exact_odds_of_the_procedure() {
    let mut b = draft(PROBE);
    let odds = common::exact(&mut b, HORSE_V_PIKE);
    let only = |name: &str| {
        let o = odds.get(name).unwrap();
        assert_eq!(o.values.len(), 1, "{name} is one number: {:?}", o.values);
        o.values[0].0
    };
    // The closed form.
    let a = common::binomial(3, 1.0 / 3.0);
    let d = common::binomial(4, 1.0 / 3.0);
    let mut win = 0.0;
    for (i, pa) in a.iter().enumerate() {
        for (j, pd) in d.iter().enumerate() {
            if i > j {
                win += pa * pd;
            }
        }
    }
    assert!((win - 184.0 / 729.0).abs() < 1e-12, "{win}");
    assert_eq!(only("win"), Value::Int(184));
    // The engine's own answer for the melee, from the situation file.
    let mut tvbd = common::ruleset("rules/tillys_very_bad_day.muster");
    let text =
        std::fs::read_to_string(rules().join("situations/tvbd_horse_charges_pike.toml")).unwrap();
    let melee = common::exact(&mut tvbd, &text);
    assert_eq!(
        melee
            .get("winner")
            .unwrap()
            .p(common::sym(&tvbd, "attacker"))
            .fraction(),
        Some((184, 729))
    );
    // 3 dice and 4 at 1/3: 1 - 4/3 hits on average.
    assert_eq!(only("margin"), Value::Int(-1));
    // Not charging: the horse hits the pike's front on 5-6 all the same,
    // and the pike (resolve 4) cannot be routed by 3 hits.
    assert_eq!(only("win_uncharged"), Value::Int(184));
}

/// The horse's 4-6 when charging counts only with `given charging(...)`:
/// against shot (which does not stop it) the chance of winning differs.
#[test]
fn given_facts_are_noted_before_the_odds_are_taken() {
    let mut b = draft(
        r#"
extends "tillys_very_bad_day.muster"
procedure weigh(attacker: unit, defender: unit) outcomes { charging: int, standing: int } {
  outcome charging = 6 * expect(melee(attacker, defender) given charging(attacker), attacker_hits)
  outcome standing = 6 * expect(melee(attacker, defender), attacker_hits)
}
"#,
    );
    let odds = common::exact(
        &mut b,
        r#"
procedure = "weigh"
facts = ["position(defender, attacker) is to_front", "position(attacker, defender) is to_front"]
[units.attacker]
type = "Horse"
[units.defender]
type = "Shot"
"#,
    );
    // 3 dice: on 4-6, 3 * 3/6 = 1.5 hits (9 sixths); on 5-6, 1 hit (6).
    assert_eq!(odds.get("charging").unwrap().values[0].0, Value::Int(9));
    assert_eq!(odds.get("standing").unwrap().values[0].0, Value::Int(6));
}

/// The default TVBD policy charges by `expect` of the rules' melee: a house
/// rule under which horse never hit in melee (a 7 on a d6) makes the same
/// seeded battles declare far fewer horse charges (only at guns, or at foot
/// that throw no dice back), with no change to the policy. Counted are the
/// charges a horse declares (not those declared at one: the purposeful
/// player's foot charge horse too, 3 of the book's 25 declarations naming
/// horse in these games).
#[test]
fn a_house_rule_that_weakens_the_horse_changes_its_charges() {
    let horse_charges = |b: &mut Build| {
        let sc = b.scenario(None).unwrap();
        let prep = Prepared::new(&b.ruleset, &sc).unwrap();
        (1..=6)
            .map(|seed| {
                let log = prep.play(seed, true).unwrap().narrative();
                log.lines()
                    .filter_map(|l| l.trim_start().strip_prefix("declare_charge("))
                    .filter(|args| args.split(", ").next().is_some_and(|c| c.contains("Horse")))
                    .count()
            })
            .sum::<usize>()
    };
    let mut book = common::ruleset("rules/tillys_very_bad_day.muster");
    let mut house = draft(
        r#"
extends "tillys_very_bad_day.muster"
// House rule: horse never hit in melee.
override table melee_to_hit(me: unit, foe: unit) -> int {
  when me is Horse => 7
  otherwise        => me.melee_hit
}
"#,
    );
    let (b, h) = (horse_charges(&mut book), horse_charges(&mut house));
    assert!(b >= 10, "the book's horse charge in these games: {b}");
    assert!(
        h * 2 < b,
        "horse charges: {b} by the book, {h} under the house rule"
    );
}

/// Light horse charged in the front by horse, in contact, able to shoot
/// point blank (the scene of battle_figures' evade figure).
const HORSE_CHARGES_LIGHT_HORSE: &str = r#"
procedure = "weigh_evade"
facts = [
  "declared_charge(attacker, defender)",
  "charging(attacker)",
  "engaged(attacker, defender)",
  "engaged(defender, attacker)",
  "position(defender, attacker) is to_front",
  "position(attacker, defender) is to_front",
]
[units.attacker]
type = "Horse"
[units.defender]
type = "Light horse"
"#;

/// The evade score of the light horse, as an outcome.
const EVADE_PROBE: &str = r#"
procedure weigh_evade(attacker: unit, defender: unit) outcomes { score: int } {
  outcome score = evade_prospect(defender, attacker)
}
"#;

/// The default TVBD policy evades (with the optional rule) by `expect` of
/// the rules' melee and point blank fire, not by a copy of the dice they
/// roll. By the book, light horse charged by horse evade: in sixths, 3
/// dice at 4+ (9) less 2 at 6 (2), less 2 point blank dice at 6 (2), is 5,
/// the figure test's number; the policy evades above 1. Under a house rule
/// where point blank fire hits on 4+, the same policy stands and shoots:
/// 9 less 2 less 2 x 3 is 1. (The old score, which multiplied the shooting
/// dice by the shooter's own score to hit, stayed at 5.)
#[test]
fn a_house_rule_that_strengthens_the_evaders_changes_their_evades() {
    let score = |b: &mut Build| {
        let odds = common::exact(b, HORSE_CHARGES_LIGHT_HORSE);
        let s = odds.get("score").unwrap();
        assert_eq!(s.values.len(), 1, "one number: {:?}", s.values);
        s.values[0].0
    };
    let book = format!("extends \"tillys_very_bad_day.muster\"\n{EVADE_PROBE}");
    assert_eq!(score(&mut draft(&book)), Value::Int(5));
    let house = format!(
        r#"extends "tillys_very_bad_day.muster"
// House rule: point blank fire hits on 4+.
override procedure point_blank_shot(shooter: unit, charger: unit) outcomes {{ dice: int, hits: int, routed: bool, commander_lost: bool }} {{
  require may_shoot_point_blank(shooter, charger) else "this unit may not shoot point blank at this charger"
  outcome dice = shooting_dice(shooter, charger)
  let hits = shooting_dice(shooter, charger) d6 scoring 4+
  shooter.shot_this_turn = true
  outcome hits = hits
  call take_hits(charger, hits)
}}
{EVADE_PROBE}"#
    );
    assert_eq!(score(&mut draft(&house)), Value::Int(1));
}

/// `chance` takes a procedure; `given` takes facts that are noted, not
/// derived from the table; each mistake is one diagnostic with a help.
#[test]
fn mistakes_in_chance_are_diagnosed() {
    let out = refused(
        r#"
extends "tillys_very_bad_day.muster"
define d(a: unit, b: unit): int = 6 * chance(melee_dice(a, b), a == b)
"#,
    );
    assert!(
        out.contains("`chance` weighs a procedure, and `melee_dice` is not one"),
        "{out}"
    );
    let out = refused(
        r#"
extends "tillys_very_bad_day.muster"
define d(a: unit, b: unit): int = 6 * chance(melee(a, b) given in_difficult(a), winner == attacker)
"#,
    );
    assert!(out.contains("`in_difficult` cannot be given"), "{out}");
    assert!(out.contains("help:"), "{out}");
    let out = refused(
        r#"
extends "tillys_very_bad_day.muster"
define d(a: unit, b: unit): int = 6 * chance(melee(a, b) given a.resolve > 2, winner == attacker)
"#,
    );
    assert!(out.contains("`given` takes facts"), "{out}");
    let out = refused(
        r#"
extends "tillys_very_bad_day.muster"
define d(a: unit, b: unit): int = 6 * chance(melee(a, b), attacker_hits)
"#,
    );
    assert!(out.contains("the condition `chance` weighs"), "{out}");
}

/// A procedure whose odds read its own odds is stopped with a diagnostic,
/// not a stack overflow.
#[test]
fn a_procedure_weighing_itself_is_stopped() {
    let mut b = draft(
        r#"
extends "tillys_very_bad_day.muster"
procedure weigh(attacker: unit, defender: unit) outcomes { p: int } {
  outcome p = 6 * chance(weigh(attacker, defender), p == 1)
}
"#,
    );
    let s = common::situation(&mut b, HORSE_V_PIKE);
    let d = b
        .exact(&s)
        .expect_err("a procedure weighing itself never ends");
    let out = render_plain(&[d], &b.sources);
    assert!(out.contains("nests more than 2 deep"), "{out}");
}
