//! Never Mind the Matchlocks played as the book says (issue 29): rules a
//! battle got wrong, each built on the table of
//! `tests/scenarios/matchlocks_fidelity.toml` and played through the
//! ruleset's own decisions and procedures, and the readings the book
//! leaves open, each under both readings.

#![allow(clippy::result_large_err)]

mod common;

use common::table::Table;
use muster::value::Value;

const RULES: &str = "rules/never_mind_the_matchlocks.muster";
const SCENARIO: &str = "tests/scenarios/matchlocks_fidelity.toml";

fn table() -> Table {
    Table::open(RULES, Some(SCENARIO), 1)
}

// ------------------------------------------------------------------ guns

/// §XI Shoot! 1 (c), the note: a Field Gun needs at least two crewmen to
/// fire. With two of its three left it rolls 4 dice (two a crewman) at
/// the Battalia 13.25" ahead; with one it has no dice and may not shoot,
/// and attacked, its last gunner does not stand and shoot: he flees and
/// the gun is taken (§XII Fight or Flight).
#[test]
fn a_field_gun_with_one_crewman_does_not_fire() {
    let mut t = table();
    t.place("blue_field_gun", 20.0, 15.0);
    t.set("blue_field_gun", "kills", Value::Int(1));
    assert_eq!(t.int("shooting_dice(blue_field_gun, red_battalia, 1)"), 4);
    assert!(t.holds("may_shoot_at(blue_field_gun, red_battalia)"));
    t.set("blue_field_gun", "kills", Value::Int(2));
    assert_eq!(t.int("figures_left(blue_field_gun)"), 1);
    assert_eq!(t.int("shooting_dice(blue_field_gun, red_battalia, 1)"), 0);
    assert!(!t.holds("may_shoot_at(blue_field_gun, red_battalia)"));
    // A Light Gun fires with one crewman: two dice.
    t.set("blue_gun", "kills", Value::Int(1));
    assert_eq!(t.int("shooting_dice(blue_gun, red_battalia, 1)"), 2);

    let (horse, gun) = (t.u("red_horse"), t.u("blue_field_gun"));
    t.perform("doctrine", &[horse, gun]);
    assert!(t.holds("blue_field_gun.tactics is evade and blue_field_gun.captured"));
    let mut t = table();
    t.set("blue_field_gun", "kills", Value::Int(1));
    let (horse, gun) = (t.u("red_horse"), t.u("blue_field_gun"));
    t.perform("doctrine", &[horse, gun]);
    assert!(t.holds("blue_field_gun.tactics is stand_and_shoot and not blue_field_gun.captured"));
}

/// §XI Targets (c) and Shoot! 1 (d): a gun's own target is the nearest
/// formed enemy, never skirmishers; but shot at this turn it must return
/// fire, at skirmishers too, its dice halved. The Light Gun (2 crew, 4
/// dice) has red's skirmishers 4.25" ahead and the Battalia 10.25": it
/// may shoot only the Battalia. Once the skirmishers have fired at it
/// (6 figures halved: 3 dice) it may shoot only them, with 2 dice, and
/// the battle's shooting decision does.
#[test]
fn guns_return_fire_at_skirmishers_with_halved_dice() {
    let mut t = table();
    t.place("blue_gun", 20.0, 16.0);
    t.place("red_skirmishers", 20.0, 11.0);
    t.place("red_battalia", 20.0, 5.0);
    assert!(t.holds("distance(blue_gun, red_skirmishers) < distance(blue_gun, red_battalia)"));
    assert!(t.holds("shootable(blue_gun, red_skirmishers)"));
    assert!(!t.holds("may_shoot_at(blue_gun, red_skirmishers)"));
    // The skirmishers are in the line of fire to the Battalia: moved
    // aside, the Battalia is the gun's target.
    t.place("red_skirmishers", 24.0, 11.0);
    assert!(t.holds("not units_between(blue_gun, red_battalia)"));
    assert!(t.holds("may_shoot_at(blue_gun, red_battalia)"));
    assert!(!t.holds("may_shoot_at(blue_gun, red_skirmishers)"));
    assert_eq!(t.int("shooting_dice(red_skirmishers, blue_gun, 1)"), 3);
    let (s, g) = (t.u("red_skirmishers"), t.u("blue_gun"));
    t.perform("volley", &[s, g, Value::Int(1)]);
    t.set("blue_gun", "kills", Value::Int(0));
    assert!(t.holds("returns_fire(blue_gun)"));
    assert!(t.holds("may_shoot_at(blue_gun, red_skirmishers)"));
    assert!(!t.holds("may_shoot_at(blue_gun, red_battalia)"));
    assert_eq!(t.int("shooting_dice(blue_gun, red_skirmishers, 1)"), 2);
    // The gun's card: it shoots back at the skirmishers, 2 dice.
    let blue = t.side(1);
    t.perform("initiative", &[blue]);
    t.decide("shooting", &[blue]);
    let shot = t.game.log.iter().find_map(|e| match e {
        muster::battle::Event::Procedure {
            name,
            args,
            outcomes,
            ..
        } if name == "shoot_action" && args[0] == "blue_gun" => {
            Some((args.clone(), outcomes.clone()))
        }
        _ => None,
    });
    let (args, outcomes) = shot.expect("the gun shoots");
    assert_eq!(args, ["blue_gun", "red_skirmishers"]);
    assert!(
        outcomes.contains(&("dice".to_string(), "2".to_string())),
        "{outcomes:?}"
    );
}

// ------------------------------------------------------------------ evades

/// §XII Fight or Flight: cavalry may evade enemy infantry. A Battalia
/// 5.25" from a squadron declares an attack on it; the squadron's player
/// chooses to evade (the default policy evades pikes), so there is no
/// melee: it takes a Disarray, and goes one Move (10") straight away,
/// turned about (§XII Evade Moves). A Musketeer Division attacking it is
/// met: the squadron stands and the melee is fought.
#[test]
fn cavalry_may_evade_infantry() {
    let mut t = table();
    // Blue's foot out of the squadron's way back.
    t.place("blue_battalia", 10.0, 19.0);
    t.place("blue_brigadier", 14.0, 23.0);
    t.place("blue_horse", 20.0, 10.0);
    let (bat, horse) = (t.u("red_battalia"), t.u("blue_horse"));
    t.set("red_battalia", "active", Value::Bool(true));
    t.set("red_battalia", "actions", Value::Int(2));
    assert!(t.holds("may_attack(red_battalia, blue_horse)"));
    t.perform("declare_attack", &[bat, horse]);
    let blue = t.side(1);
    t.decide("horse_evades", &[blue]);
    assert!(t.holds("evades_foot(blue_horse)"));
    t.decide("attack_moves", &[]);
    assert_eq!(t.outcome("attack_contact", "defender_tactics"), "evade");
    assert!(t.holds("blue_horse.evades and blue_horse.disarray == 1 and blue_horse.kills == 0"));
    assert!(t.holds("red_battalia.kills == 0"));
    t.decide("melee_moves", &[]);
    let (x, y, facing) = t.at("blue_horse");
    assert!(
        (x - 20.0).abs() < 1e-9 && facing.rem_euclid(360.0) < 1e-9,
        "{x} {y} {facing}"
    );
    // Met where it stood (its centre at y = 10), then 10" back.
    assert!((y - 20.0).abs() < 1e-9, "{y}");

    let mut t = table();
    t.place("blue_horse", 30.0, 12.0);
    let (div, horse) = (t.u("red_division"), t.u("blue_horse"));
    t.set("red_division", "active", Value::Bool(true));
    t.set("red_division", "actions", Value::Int(2));
    t.perform("declare_attack", &[div, horse]);
    t.decide("horse_evades", &[t.side(1)]);
    assert!(!t.holds("evades_foot(blue_horse)"));
    t.decide("attack_moves", &[]);
    assert_ne!(t.outcome("attack_contact", "defender_tactics"), "evade");
    assert!(t
        .outcomes("attack_contact")
        .iter()
        .any(|(n, _)| n == "winner"));
}

/// The same in `muster odds`: a squadron that evades a Battalia's attack
/// (the fact stated) fights nothing, loses nothing and takes one
/// Disarray, whatever the dice; attacked by horse it cannot evade (it
/// always meets cavalry).
#[test]
fn an_evading_squadron_in_the_odds() {
    let mut b = common::ruleset(RULES);
    let text = |attacker: &str| {
        format!(
            "procedure = \"melee\"\nfacts = [\"evades_foot(defender)\"]\n\
             [units.attacker]\ntype = \"{attacker}\"\nside = \"first_army\"\n\
             [units.defender]\ntype = \"Harquebusiers\"\nside = \"second_army\"\n"
        )
    };
    let o = common::exact(&mut b, &text("Battalia"));
    assert_eq!(common::p(&o, "fought", Value::Bool(false)), 1.0);
    assert_eq!(common::p(&o, "evaded", Value::Bool(true)), 1.0);
    assert_eq!(common::p(&o, "defender_disarray", Value::Int(1)), 1.0);
    let o = common::exact(&mut b, &text("Cuirassiers"));
    assert_eq!(common::p(&o, "evaded", Value::Bool(true)), 0.0);
}

// ------------------------------------------------------------------ sight

/// §XII Melee: troops cannot attack an enemy that they (or the leader
/// ordering them) could not see when they started their move; §XI
/// Spotting: a unit in a wood is seen at 6". A Division in the spinney
/// 7.75" from a Battalia: within its reach (12"), but unseen, so no
/// attack. 5.5" away it is seen and may be attacked; and from 7.75" the
/// Battalia may attack it once a Brigadier 4.4" from the Division
/// (seeing it) has ordered the Battalia.
#[test]
fn no_attack_on_an_enemy_unseen_at_the_start() {
    let mut t = table();
    t.place("blue_division", 66.0, 12.0);
    t.place("red_battalia", 66.0, 2.75);
    t.place("red_reserve", 56.0, 5.0);
    t.set("red_battalia", "actions", Value::Int(2));
    assert!(t.holds("in_terrain(blue_division, woods)"));
    assert!(t.holds("distance(red_battalia, blue_division) == 31 / 4"));
    assert!(t.holds("reachable(red_battalia, blue_division, 12, 45)"));
    assert!(!t.holds("may_attack(red_battalia, blue_division)"));
    assert!(!t.holds("spotted(red_battalia, blue_division)"));
    t.place("red_colonel", 60.0, 9.0);
    t.place("red_brigadier", 58.0, 3.0);
    assert!(t.holds("spotted(red_colonel, blue_division)"));
    // Ordered by a leader who cannot see it either: still no attack.
    let (l, u) = (t.u("red_brigadier"), t.u("red_battalia"));
    t.perform("leader_card", &[l]);
    t.perform("order", &[l, u]);
    assert!(!t.holds("spotted(red_brigadier, blue_division)"));
    assert!(!t.holds("may_attack(red_battalia, blue_division)"));
    // Ordered by one who sees it (the rules read the ordering leader).
    t.perform("order", &[t.u("red_colonel"), u]);
    assert!(t.holds("ordered_by(red_battalia) == red_colonel"));
    assert!(t.holds("may_attack(red_battalia, blue_division)"));

    let mut t = table();
    t.place("blue_division", 66.0, 12.0);
    t.place("red_battalia", 66.0, 5.0);
    t.place("red_reserve", 56.0, 5.0);
    t.set("red_battalia", "actions", Value::Int(2));
    assert!(t.holds("distance(red_battalia, blue_division) == 11 / 2"));
    assert!(t.holds("spotted(red_battalia, blue_division)"));
    assert!(t.holds("may_attack(red_battalia, blue_division)"));
}

// ------------------------------------------------------------------ orders

/// §VIII Leaders and Order Tokens 2: a leader attached to a unit in a
/// continuing melee cannot give orders. The Brigadier touching his
/// Battalia's rear has his two tokens and orders the Division 8" off;
/// once the Battalia is in contact with an enemy, his card gives him none
/// and the Division is not ordered.
#[test]
fn a_leader_in_a_continuing_melee_gives_no_orders() {
    for fighting in [false, true] {
        let mut t = table();
        t.place("red_brigadier", 20.0, 3.75);
        assert!(t.holds("attached_to(red_brigadier, red_battalia)"));
        t.place("red_division", 29.0, 5.0);
        if fighting {
            t.place("blue_battalia", 20.0, 6.5);
            assert!(t.holds("in_contact(red_battalia, blue_battalia) and in_melee(red_battalia)"));
        }
        let l = t.u("red_brigadier");
        t.perform("leader_card", &[l]);
        assert_eq!(
            t.int("red_brigadier.orders_left"),
            if fighting { 0 } else { 2 }
        );
        let red = t.side(0);
        t.decide("give_orders", &[red, l]);
        assert_eq!(
            t.holds("red_division.ordered"),
            !fighting,
            "fighting {fighting}"
        );
    }
}

// ------------------------------------------------------------------ morale

/// §XIII Auto Passes and Auto Fails: "a straight dice score of double 6 is
/// always a pass" (double 1 a fail). The port reads the dice kept after
/// the rerolls; the option `doubles_on_first_throw` reads the first throw.
/// Both against a closed form that throws each die, rerolls it when the
/// circumstances ask, and reads the result each way: a raw Battalia with
/// 12 kills (it rerolls 6s; only 13 passes, so the pass is 1/1296 or
/// 1/36) and a veteran one with 3 kills (it rerolls 1s; a double 1
/// breaks it 1/1296 or 1/36 of the time, among the other broken rolls).
#[test]
fn a_straight_double_under_both_readings() {
    let mut b = common::ruleset(RULES);
    for (quality, kills, face) in [("raw", 12, 6), ("veteran", 3, 1)] {
        for first in [false, true] {
            let text = format!(
                "procedure = \"morale_test\"\n[units.u]\ntype = \"Battalia\"\nquality = \"{quality}\"\n\
                 side = \"first_army\"\n[units.u.state]\nkills = {kills}\n\
                 [options]\ndoubles_on_first_throw = {first}\n"
            );
            let o = common::exact(&mut b, &text);
            let want = straight_doubles(face, kills, first);
            for (i, r) in ["passed", "daunted", "broken"].into_iter().enumerate() {
                let got = common::p(&o, "result", common::sym(&b, r));
                assert!(
                    (got - want[i]).abs() < 1e-12,
                    "{quality}, first throw {first}: {r} {got} against {}",
                    want[i]
                );
            }
        }
    }
    // The two readings differ as the closed form says.
    assert!((straight_doubles(6, 12, false)[0] - 1.0 / 1296.0).abs() < 1e-15);
    assert!((straight_doubles(6, 12, true)[0] - 1.0 / 36.0).abs() < 1e-15);
}

/// A Battalia's test (2d6 + 1 against `kills`), each die rerolled once on
/// `face`: (passed, daunted, broken), reading the doubles on the dice kept
/// or, `first`, on the first throw.
fn straight_doubles(face: i64, kills: i64, first: bool) -> [f64; 3] {
    let mut out = [0.0; 3];
    // Each die: its first face, and the face it keeps (1/6 each way).
    let die = |f0: i64| -> Vec<(i64, f64)> {
        if f0 == face {
            (1..=6).map(|f| (f, 1.0 / 36.0)).collect()
        } else {
            vec![(f0, 1.0 / 6.0)]
        }
    };
    for a0 in 1..=6 {
        for b0 in 1..=6 {
            for (a, pa) in die(a0) {
                for (b, pb) in die(b0) {
                    let (x, y) = if first { (a0, b0) } else { (a, b) };
                    // The total is 2d6 + 1; 4 or less breaks.
                    let total = a + b + 1;
                    let r = if x == 6 && y == 6 {
                        0
                    } else if (x == 1 && y == 1) || total < 5 {
                        2
                    } else if total > kills {
                        0
                    } else {
                        1
                    };
                    out[r] += pa * pb;
                }
            }
        }
    }
    out
}
