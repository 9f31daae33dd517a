//! Never Mind the Matchlocks played as the book says (issue 29): rules a
//! battle got wrong, each built on the table of
//! `tests/scenarios/matchlocks_fidelity.toml` and played through the
//! ruleset's own decisions and procedures, and the readings the book
//! leaves open, each under both readings.

#![allow(clippy::result_large_err)]

use crate::common;

use common::table::{last_outcomes, place, unit, Scene, Table, Tally};
use muster::base::value::Value;
use muster::battle::game::Game;

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
        muster::battle::game::Event::Procedure {
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

// ------------------------------------------------------------------ falling back

/// §XIII Checking the Result, Fail 1: Daunted troops falling back through
/// a friend of equal or lower original points, or of another arm, give it
/// a Disarray. Red's Battalia (24 points), Daunted, falls back 6" through
/// the Division (12) behind it: the Division is Disarrayed
/// (`retired_through` says whom it went through). A Division falling back
/// through a Battalia (24, the same arm) leaves it as it was; through a
/// squadron (another arm) Disarrays it; and Daunted skirmishers on foot
/// disarray nobody (§X Moving through Friendly Troops).
#[test]
fn falling_back_through_friends_disarrays_them() {
    let red = Value::Side(0);
    for (mover, x, friend, disarrayed) in [
        ("red_battalia", 20.0, "red_division", true),
        ("red_division", 30.0, "red_battalia", false),
        ("red_division", 30.0, "red_horse", true),
        ("red_skirmishers", 10.0, "red_division", false),
    ] {
        let mut t = table();
        // Everything else of red's out of the way back.
        t.place("red_brigadier", 2.0, 22.0);
        t.place("red_pikes", 50.0, 22.0);
        t.place(mover, x, 12.0);
        t.place(friend, x, 8.0);
        t.set(mover, "daunted", Value::Bool(true));
        t.set(mover, "must_fall_back", Value::Bool(true));
        t.decide("fall_backs", &[red]);
        let (_, y, _) = t.at(mover);
        let back = if mover == "red_skirmishers" { 8.0 } else { 6.0 };
        assert!((y - (12.0 - back)).abs() < 1e-9, "{mover}: {y}");
        assert!(
            t.holds(&format!("retired_through({mover}, {friend})")),
            "{mover} went through {friend}"
        );
        assert_eq!(
            t.int(&format!("{friend}.disarray")),
            disarrayed as i64,
            "{mover} through {friend}"
        );
        assert!(t.holds(&format!("not {mover}.must_fall_back")));
    }
}

/// §XIII Checking the Result, Fail 1: "if the Fall Back takes troops into
/// contact with another enemy Unit, treat this as a new combat, which
/// takes place immediately". Red's Daunted Battalia falls back toward
/// Blue's squadron 3.25" behind it: it stops in contact with it (`meeting
/// e:`), and the squadron attacks its rear at once: the Battalia rolls no
/// Doctrine and fights with half a rank (4 dice); the squadron, which did
/// not move, cannot Charge (a 5-6 is a Trot). A gun behind it is not met:
/// the Battalia stops short of it, by quarters, and nothing is fought.
#[test]
fn falling_back_into_an_enemy_is_a_new_combat() {
    let mut fought = 0;
    for seed in 1..=12 {
        let mut t = Table::open(RULES, Some(SCENARIO), seed);
        t.place("red_battalia", 20.0, 12.0);
        t.place_facing("blue_horse", 20.0, 7.0, 0.0);
        t.set("red_battalia", "daunted", Value::Bool(true));
        t.set("red_battalia", "must_fall_back", Value::Bool(true));
        // 3.25" to the squadron, less the contact of 0.01.
        assert!(t.holds("room_behind(red_battalia) == 207 / 64"));
        t.decide("fall_backs", &[Value::Side(0)]);
        let (_, y, _) = t.at("red_battalia");
        assert!((y - 8.75).abs() < 1e-9, "{y}");
        let melee = t.game.log.iter().find_map(|e| match e {
            muster::battle::game::Event::Procedure {
                name,
                args,
                outcomes,
                ..
            } if name == "fell_back" => Some((args.clone(), outcomes.clone())),
            _ => None,
        });
        let (args, outcomes) = melee.expect("a fall back");
        // The fall back names the enemy it met, and tells the new combat.
        assert_eq!(args, ["red_battalia", "blue_horse"]);
        assert!(
            t.game
                .narrative()
                .contains("red_battalia falls back 3.2 into blue_horse"),
            "{}",
            t.game.narrative()
        );
        let get = |n: &str| {
            outcomes
                .iter()
                .find(|(o, _)| o == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(get("defender_tactics"), "no_tactic");
        assert_ne!(get("attacker_tactics"), "charge");
        fought += 1;
    }
    assert_eq!(fought, 12);
    // Half a rank of each part, caught in the rear: 4 pikes... as the
    // melee counts it, with the facts the table gives.
    let mut t = table();
    t.place("red_battalia", 20.0, 8.75);
    t.place_facing("blue_horse", 20.0, 7.0, 0.0);
    assert!(t.holds("attacked_in_rear(red_battalia) and attacked_in_flank_or_rear(red_battalia)"));
    assert_eq!(
        t.int("fighting_dice(red_battalia, blue_horse, false, 1)"),
        4
    );

    // A gun is never met: the fall back stops short of it.
    let mut t = table();
    t.place("red_battalia", 20.0, 12.0);
    t.place_facing("blue_field_gun", 20.0, 7.9, 0.0);
    t.set("red_battalia", "daunted", Value::Bool(true));
    t.set("red_battalia", "must_fall_back", Value::Bool(true));
    t.decide("fall_backs", &[Value::Side(0)]);
    // 2.35" to the gun: 2.25 back, by quarters.
    let (_, y, _) = t.at("red_battalia");
    assert!((y - 9.75).abs() < 1e-9, "{y}");
    assert!(!t.holds("in_contact(red_battalia, blue_field_gun)"));
    let told = t.game.narrative();
    assert!(
        told.lines().any(|l| l.trim()
            == "fell_back(red_battalia, none): attacker_tactics no_tactic, \
                    defender_tactics no_tactic, winner unfought, result untested"),
        "{told}"
    );
}

// ------------------------------------------------------------------ evade details

/// §XII Evade Moves: "if there is cover within one Move, Skirmishers on
/// foot will take shelter there instead". Blue's skirmishers, evading a
/// Battalia that touches their front, have the spinney 4" to one side:
/// they go there (8" sideways, into the wood) and do not evade straight
/// back. Far from cover they go one Move straight back, turned about.
#[test]
fn foot_skirmishers_evade_into_cover() {
    for (x, cover) in [(58.0, true), (10.0, false)] {
        let mut t = table();
        t.place("blue_battalia", 20.0, 22.0);
        t.place("blue_skirmishers", x, 14.0);
        t.place("red_battalia", x, 12.5);
        assert!(t.holds("in_contact(red_battalia, blue_skirmishers)"));
        t.set("blue_skirmishers", "evades", Value::Bool(true));
        t.decide("shelters", &[]);
        t.decide("melee_moves", &[]);
        let (ex, ey, _) = t.at("blue_skirmishers");
        assert_eq!(t.holds("in_cover(blue_skirmishers)"), cover, "({ex}, {ey})");
        if cover {
            assert!(t.holds("in_terrain(blue_skirmishers, woods)"));
            assert!(t.holds("distance(blue_skirmishers, red_battalia) > 0"));
        } else {
            assert!(
                (ex - x).abs() < 1e-9 && (ey - 22.0).abs() < 1e-9,
                "({ex}, {ey})"
            );
        }
        assert!(t.holds("not blue_skirmishers.evades"));
    }
}

/// §XII Evade Moves: the attacker whose enemy evades may carry on, up to
/// its maximum move, into another enemy the evaders went through; and
/// friendly cavalry the evaders went through, caught by enemy cavalry,
/// rolls for its tactics. Red's squadron charges Blue's skirmishers from
/// 10.25" (two Moves: they may evade); they go 8" back through Blue's
/// squadron. Red's squadron, 13.75" of its 24" left, carries on into that
/// squadron: a new first round in which it keeps the tactics it rolled and
/// Blue's squadron rolls the Horse table. Where the skirmishers stand and
/// shoot instead, the melee is theirs and nothing carries on.
#[test]
fn an_attacker_carries_on_past_evaders() {
    let (mut evaded, mut stood) = (0, 0);
    for seed in 1..=24 {
        let mut t = Table::open(RULES, Some(SCENARIO), seed);
        t.place("blue_division", 40.0, 23.0);
        t.place("red_division", 12.0, 2.0);
        t.place("blue_skirmishers", 30.0, 14.0);
        t.place("blue_horse", 30.0, 19.0);
        t.place("red_horse", 30.0, 2.0);
        t.set("red_horse", "active", Value::Bool(true));
        t.set("red_horse", "actions", Value::Int(2));
        let (h, s) = (t.u("red_horse"), t.u("blue_skirmishers"));
        t.perform("declare_attack", &[h, s]);
        assert_eq!(t.int("red_horse.attack_reach"), 24);
        t.decide("attack_moves", &[]);
        t.decide("shelters", &[]);
        t.decide("melee_moves", &[]);
        let tactics = t.outcome("attack_contact", "attacker_tactics");
        if t.outcome("attack_contact", "defender_tactics") != "evade" {
            stood += 1;
            assert!(t.holds("evaded_from(red_horse) == none"));
            continue;
        }
        evaded += 1;
        assert!(t.holds("retired_through(blue_skirmishers, blue_horse)"));
        assert!(t.holds("evaded_from(red_horse) == blue_skirmishers"));
        assert_eq!(t.int("4 * carry_on_reach(red_horse)"), 55);
        for side in [0, 1] {
            t.decide("carry_on", &[Value::Side(side)]);
        }
        assert!(t.holds("carried_on(red_horse, blue_horse) and red_horse.carries_on"));
        t.decide("carry_on_moves", &[Value::Side(0)]);
        let out = t.outcomes("attack_contact");
        let get = |n: &str| {
            out.iter()
                .find(|(o, _)| o == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert!(
            t.game
                .narrative()
                .contains("red_horse charges blue_horse: (30.0, 12.2) facing 0 -> (30.0, 17.0)"),
            "{}",
            t.game.narrative()
        );
        assert_eq!(get("attacker_tactics"), tactics, "seed {seed}");
        assert!(
            ["fire", "trot", "charge"].contains(&get("defender_tactics").as_str()),
            "seed {seed}: {out:?}"
        );
    }
    assert!(evaded >= 12 && stood >= 1, "{evaded} evaded, {stood} stood");
}

/// The carried-on attack in `muster odds`, the fact stated: the attacker
/// keeps its tactics (a Charge, here); a Battalia caught at the halt rolls
/// no Doctrine, while a squadron (one the evaders went through) rolls the
/// Horse table: a Charge 1/3, a Trot 1/2, Fire 1/6.
#[test]
fn a_carried_on_attack_in_the_odds() {
    let mut b = common::ruleset(RULES);
    let text = |defender: &str| {
        format!(
            "procedure = \"melee\"\nfacts = [\"carried_on(attacker, defender)\"]\n\
             [units.attacker]\ntype = \"Harquebusiers\"\nside = \"first_army\"\n\
             [units.attacker.state]\ntactics = \"charge\"\n\
             [units.defender]\ntype = \"{defender}\"\nside = \"second_army\"\n"
        )
    };
    let o = common::exact(&mut b, &text("Battalia"));
    let sym = |n: &str| common::sym(&b, n);
    assert_eq!(common::p(&o, "attacker_tactics", sym("charge")), 1.0);
    assert_eq!(common::p(&o, "defender_tactics", sym("no_tactic")), 1.0);
    let o = common::exact(&mut b, &text("Cuirassiers"));
    let sym = |n: &str| common::sym(&b, n);
    assert_eq!(common::p(&o, "attacker_tactics", sym("charge")), 1.0);
    // Cuirassiers reroll a 6: 1 Fire 1/6 + 1/36, 2-4 Trot 1/2 + 3/36,
    // 5-6 Charge 1/6 + 2/36 (a Charge on the flat, 7" or more away).
    for (t, p) in [
        ("fire", 7.0 / 36.0),
        ("trot", 21.0 / 36.0),
        ("charge", 8.0 / 36.0),
    ] {
        let got = common::p(&o, "defender_tactics", sym(t));
        assert!((got - p).abs() < 1e-12, "{t}: {got}");
    }
}

// ------------------------------------------------------------------ the engine

/// `meeting e:` is for a unit retiring alone: with `together` the
/// compiler says so, at the clause.
#[test]
fn a_group_retire_meets_no_enemy() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(RULES),
    )
    .unwrap()
    .replace(
        "  through f: friends(f, u)\n  meeting e: may_fall_into(e, u)",
        "  through f: friends(f, u)\n  together g: grouped(u, g)\n  meeting e: may_fall_into(e, u)",
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let Err((d, s)) = muster::build_text("house.muster", &text, Some(&dir)) else {
        panic!("a retire together with meeting compiles");
    };
    let shown = muster::front::diagnostic::render_plain(&d, &s);
    assert!(
        shown.contains("a retire `together` has no `meeting` clause"),
        "{shown}"
    );
    assert!(shown.contains("house.muster"), "{shown}");
}

// ------------------------------------------------------------------ battles against the exact odds

/// Games per scene: a few thousand in release, fewer in a debug build.
fn games() -> u64 {
    if cfg!(debug_assertions) {
        300
    } else {
        4000
    }
}

/// One scene played on many seeds: `setup` places and sets what the scene
/// needs on a fresh game, `play` plays the battle's step; the outcomes of
/// the last run of procedure `logged` are tallied and compared with the
/// exact odds of `situation` (the same facts stated), outcome by outcome.
fn against_the_odds(
    scene: &mut Scene,
    what: &str,
    setup: &dyn Fn(&Scene, &mut Game),
    play: &dyn Fn(&mut Game) -> Result<(), muster::front::diagnostic::Diag>,
    logged: &str,
    situation: &str,
    names: &[&str],
) {
    let mut tally = Tally::new();
    for seed in 0..games() {
        let mut g = scene.start(seed, true);
        setup(scene, &mut g);
        if let Err(d) = play(&mut g) {
            panic!(
                "{what}: {}",
                muster::front::diagnostic::render_plain(&[d], &scene.build.sources)
            );
        }
        tally.add(&last_outcomes(&g, logged));
    }
    let exact = scene.exact(situation);
    let shown = |v: Value| scene.show(v);
    let compared = tally.assert_matches(what, &exact, shown, names);
    assert!(compared >= names.len() * 2, "{what}: {compared} compared");
}

/// A situation for `muster odds`: `procedure` on `units`, each (name,
/// type, side, its state's TOML lines), the `facts` stated.
fn situation(procedure: &str, facts: &[&str], units: &[(&str, &str, &str, &str)]) -> String {
    let facts: Vec<String> = facts.iter().map(|f| format!("{f:?}")).collect();
    let mut text = format!(
        "procedure = {procedure:?}\nfacts = [{}]\n",
        facts.join(", ")
    );
    for (name, ty, side, state) in units {
        text += &format!("[units.{name}]\ntype = {ty:?}\nside = {side:?}\n");
        if !state.is_empty() {
            text += &format!("[units.{name}.state]\n{state}\n");
        }
    }
    text
}

/// `attacker` and `defender` in a continuing melee: its first round
/// fought, `attacker` the one that began it.
fn in_continuing_melee(s: &Scene, g: &mut Game, attacker: &str, defender: &str) {
    for u in [attacker, defender] {
        s.set(g, u, "melee_round", Value::Int(1));
    }
    s.note(
        g,
        "melee_attacker",
        &[attacker, defender],
        Value::Bool(true),
    );
}

/// Unit `u` acts on the card in play, with its two actions.
fn activate(s: &Scene, g: &mut Game, u: &str) {
    s.set(g, u, "active", Value::Bool(true));
    s.set(g, u, "actions", Value::Int(2));
}

/// The outcomes a melee's log line and `melee` share.
const MELEE: [&str; 9] = [
    "winner",
    "attacker_kills",
    "defender_kills",
    "attacker_tactics",
    "defender_tactics",
    "result",
    "total",
    "attacker_leader_lost",
    "defender_leader_lost",
];

/// §XI Shooting played on the table against `muster odds`: each scene
/// plays the battle's shooting decision (its target chosen, its range,
/// cover and leader measured on the table) and compares the Shoot
/// action's dice, hits, kills, misfires and leader lost with the exact
/// odds of `shoot_action` with the same facts stated.
/// - A stationary seasoned Battalia (both ranks, its first volley: 1s
///   rerolled) at a Battalia 7" off (short range) with a Brigadier
///   attached: more than 3 kills put him at risk (§V Risk to Leaders).
/// - A Light Gun at a Battalia 12.5" off (long range: 6s), its four sixes
///   a misfire (the hook).
/// - Skirmishers at skirmishers in a wood 5" off: halved dice, the target
///   saving on 4+ in cover.
#[test]
fn shooting_on_the_table_matches_the_exact_odds() {
    let mut scene = Scene::open(RULES, Some(SCENARIO), &[]);
    let red = |g: &mut Game| g.decide_named("shooting", &[Value::Side(0)]);
    let blue = |g: &mut Game| g.decide_named("shooting", &[Value::Side(1)]);
    let names = [
        "shoot_actions",
        "dice",
        "hits",
        "kills",
        "misfired",
        "leader_lost",
    ];
    against_the_odds(
        &mut scene,
        "a Battalia's volley at a Battalia with a leader",
        &|s, g| {
            place(g, "blue_battalia", 20.0, 13.5, None);
            place(g, "blue_brigadier", 20.0, 14.75, None);
            activate(s, g, "red_battalia");
        },
        &red,
        "shoot_action",
        &situation(
            "shoot_action",
            &["short_range(s, t)", "leader_attached(t)"],
            &[
                ("s", "Battalia", "first_army", "actions = 2"),
                ("t", "Battalia", "second_army", ""),
            ],
        ),
        &names,
    );
    against_the_odds(
        &mut scene,
        "a Light Gun at long range",
        &|s, g| {
            place(g, "red_gun", 56.0, 8.0, None);
            place(g, "red_battalia", 44.0, 5.0, None);
            activate(s, g, "blue_gun");
        },
        &blue,
        "shoot_action",
        &situation(
            "shoot_action",
            &["not short_range(s, t)"],
            &[
                ("s", "Light Gun", "second_army", "actions = 2"),
                ("t", "Battalia", "first_army", ""),
            ],
        ),
        &names,
    );
    against_the_odds(
        &mut scene,
        "skirmishers at skirmishers in a wood",
        &|s, g| {
            place(g, "red_reserve", 30.0, 12.0, None);
            place(g, "red_skirmishers", 66.0, 5.5, None);
            place(g, "blue_skirmishers", 66.0, 12.0, None);
            activate(s, g, "red_skirmishers");
        },
        &red,
        "shoot_action",
        &situation(
            "shoot_action",
            &["short_range(s, t)", "in_cover(t)"],
            &[
                ("s", "Musketeer Detachment", "first_army", "actions = 2"),
                ("t", "Musketeer Detachment", "second_army", ""),
            ],
        ),
        &names,
    );
}

/// §XII Melee and §Tactical Doctrine played on the table against `muster
/// odds`: each scene makes the battle's attack (declared, charged home,
/// its first round fought by `attack_contact`), or its fall back into an
/// enemy, or a continuing melee's round, with every fact measured on the
/// table, and compares the round (winner, kills, both sides' tactics, the
/// loser's test, leaders lost) with the exact odds of `melee` with the
/// same facts stated.
/// - A squadron in line with a Brigadier attached (class 2: two hits, a
///   free Doctrine reroll, his risk) charges a squadron 8" off.
/// - A Battalia attacks a Battalia, Foot against Foot.
/// - A squadron charges a Battalia's flank from 12" (two Moves: the
///   Battalia turns to face or forms Hedgehog).
/// - A Daunted Battalia falls back into a squadron behind it (§XIII): the
///   squadron attacks its rear at once, from no distance.
/// - Two Battalia in their second round (hits on 5+, the winner of the
///   first rerolling 1s) at the turn's first Bonus card.
#[test]
fn melees_on_the_table_match_the_exact_odds() {
    let mut scene = Scene::open(RULES, Some(SCENARIO), &[]);
    let attack = |c: &'static str, t: &'static str| {
        move |g: &mut Game| {
            let args = [unit(g, c), unit(g, t)];
            g.perform_named("declare_attack", &args)?;
            g.decide_named("attack_moves", &[])
        }
    };
    against_the_odds(
        &mut scene,
        "a squadron with its Brigadier charges a squadron",
        &|s, g| {
            place(g, "red_colonel", 52.0, 3.5, None);
            place(g, "blue_horse", 52.0, 15.0, None);
            activate(s, g, "red_horse");
        },
        &attack("red_horse", "blue_horse"),
        "attack_contact",
        &situation(
            "melee",
            &[
                "in_line(attacker)",
                "in_line(defender)",
                "leader_attached(attacker)",
                "leader_class(attacker) == 2",
            ],
            &[
                ("attacker", "Harquebusiers", "first_army", ""),
                ("defender", "Harquebusiers", "second_army", ""),
            ],
        ),
        &MELEE,
    );
    against_the_odds(
        &mut scene,
        "a Battalia attacks a Battalia",
        &|s, g| {
            place(g, "blue_battalia", 20.0, 12.5, None);
            activate(s, g, "red_battalia");
        },
        &attack("red_battalia", "blue_battalia"),
        "attack_contact",
        &situation(
            "melee",
            &[],
            &[
                ("attacker", "Battalia", "first_army", ""),
                ("defender", "Battalia", "second_army", ""),
            ],
        ),
        &MELEE,
    );
    against_the_odds(
        &mut scene,
        "a squadron charges a Battalia's flank",
        &|s, g| {
            place(g, "blue_battalia", 40.0, 12.0, Some(0.0));
            place(g, "red_horse", 24.0, 12.0, Some(90.0));
            activate(s, g, "red_horse");
        },
        &attack("red_horse", "blue_battalia"),
        "attack_contact",
        &situation(
            "melee",
            &["in_line(attacker)", "attacked_in_flank_or_rear(defender)"],
            &[
                ("attacker", "Harquebusiers", "first_army", ""),
                ("defender", "Battalia", "second_army", ""),
            ],
        ),
        &MELEE,
    );
    against_the_odds(
        &mut scene,
        "a Daunted Battalia falls back into a squadron",
        &|s, g| {
            place(g, "red_battalia", 20.0, 12.0, None);
            place(g, "blue_horse", 20.0, 7.0, Some(0.0));
            s.set(g, "red_battalia", "daunted", Value::Bool(true));
            s.set(g, "red_battalia", "must_fall_back", Value::Bool(true));
        },
        &|g: &mut Game| g.decide_named("fall_backs", &[Value::Side(0)]),
        "fell_back",
        &situation(
            "melee",
            &[
                "in_line(attacker)",
                "attacked_in_flank_or_rear(defender)",
                "attacked_in_rear(defender)",
                "single_move_attack(attacker)",
                "too_close_to_charge(attacker)",
                "too_close_to_charge(defender)",
            ],
            &[
                ("attacker", "Harquebusiers", "second_army", ""),
                ("defender", "Battalia", "first_army", "daunted = true"),
            ],
        ),
        &MELEE,
    );
    against_the_odds(
        &mut scene,
        "two Battalia in their second round",
        &|s, g| {
            place(g, "blue_battalia", 20.0, 6.5, None);
            in_continuing_melee(s, g, "red_battalia", "blue_battalia");
            for (u, won, kills) in [("red_battalia", true, 3), ("blue_battalia", false, 5)] {
                s.set(g, u, "won_round", Value::Bool(won));
                s.set(g, u, "kills", Value::Int(kills));
            }
        },
        &|g: &mut Game| g.decide_named("continuing_melees", &[]),
        "next_round",
        &situation(
            "melee",
            &[],
            &[
                (
                    "attacker",
                    "Battalia",
                    "first_army",
                    "melee_round = 1\nwon_round = true\nkills = 3",
                ),
                (
                    "defender",
                    "Battalia",
                    "second_army",
                    "melee_round = 1\nkills = 5",
                ),
            ],
        ),
        &MELEE,
    );
}

/// §XIII The Morale Crisis Test at the end of the turn (§VII Ending the
/// Turn 2), on `matchlocks_morale.toml`, against `muster odds`: the
/// rerolls' circumstances measured on the table.
/// - A raw Battalia at half strength (12 kills) with an Expert Brigadier
///   attached: the raw 6s and the expert's 1s cancel.
/// - A Division at half strength whose brigade is all Daunted (Last Men
///   Standing): it rerolls 6s.
#[test]
fn morale_tests_on_the_table_match_the_exact_odds() {
    let mut scene = Scene::open(RULES, Some("tests/scenarios/matchlocks_morale.toml"), &[]);
    let names = ["result", "total"];
    against_the_odds(
        &mut scene,
        "a raw Battalia with an Expert Brigadier",
        &|s, g| {
            place(g, "red_brigadier", 20.0, 3.75, None);
            s.set(g, "red_brigadier", "command_class", Value::Int(3));
            s.set(g, "red_raw", "kills", Value::Int(12));
        },
        &|g: &mut Game| {
            let u = unit(g, "red_raw");
            g.perform_named("end_of_turn_test", &[u]).map(|_| ())
        },
        "end_of_turn_test",
        r#"procedure = "end_of_turn_test"
facts = ["expert_leader_attached(u)"]
[units.u]
type = "Battalia"
quality = "raw"
side = "first_army"
[units.u.state]
kills = 12
"#,
        &names,
    );
    against_the_odds(
        &mut scene,
        "the last men standing",
        &|s, g| {
            s.set(g, "red_division", "kills", Value::Int(6));
            s.set(g, "red_raw", "daunted", Value::Bool(true));
            s.set(g, "red_pikes", "daunted", Value::Bool(true));
        },
        &|g: &mut Game| {
            let u = unit(g, "red_division");
            g.perform_named("end_of_turn_test", &[u]).map(|_| ())
        },
        "end_of_turn_test",
        &situation(
            "end_of_turn_test",
            &["brigade_gone(u)"],
            &[("u", "Musketeer Division", "first_army", "kills = 6")],
        ),
        &names,
    );
}

// ------------------------------------------------------------------ cards and classes

/// A Battalia's test result (0 passed, 1 Daunted, 2 Broken) on dice `a`
/// and `b` (2d6 + 1) after `kills`, doubles read on these dice.
fn battalia_band(a: i64, b: i64, kills: i64) -> usize {
    let total = a + b + 1;
    if a == 6 && b == 6 {
        0
    } else if (a == 1 && b == 1) || total < 5 {
        2
    } else if total > kills {
        0
    } else {
        1
    }
}

/// §VII The Bonus Deck › Reroll and Jeopardy, held cards played on a
/// Morale Crisis Test (the port's reading): a veteran Battalia, Disarrayed
/// (its circumstances cancel: no reroll of its own), 6 kills. Holding
/// Reroll, its side rerolls both dice of a throw that would break it;
/// with the enemy holding Jeopardy, a throw that passes has its higher die
/// rolled again. Exact odds against a closed form that throws the dice and
/// plays the card; the card is spent only when played.
#[test]
fn reroll_and_jeopardy_cards_on_a_morale_test() {
    let mut b = common::ruleset(RULES);
    let die = 1.0 / 6.0;
    for card in ["reroll", "jeopardy"] {
        let (side, holder) = if card == "reroll" {
            ("first_army", "holds_reroll")
        } else {
            ("second_army", "holds_jeopardy")
        };
        let text = format!(
            "procedure = \"morale_test\"\n[units.u]\ntype = \"Battalia\"\nquality = \"veteran\"\n\
             side = \"first_army\"\n[units.u.state]\nkills = 6\ndisarray = 1\n\
             [units.foe]\ntype = \"Battalia\"\nside = \"second_army\"\n\
             [sides.{side}]\n{holder} = true\n"
        );
        let o = common::exact(&mut b, &text);
        let mut want = [0.0; 3];
        let mut played = 0.0;
        for a0 in 1..=6 {
            for b0 in 1..=6 {
                let first = battalia_band(a0, b0, 6);
                let p0 = die * die;
                if card == "reroll" && first == 2 {
                    played += p0;
                    for a1 in 1..=6 {
                        for b1 in 1..=6 {
                            want[battalia_band(a1, b1, 6)] += p0 * die * die;
                        }
                    }
                } else if card == "jeopardy" && first == 0 {
                    played += p0;
                    for f in 1..=6 {
                        let r = if a0 >= b0 {
                            battalia_band(f, b0, 6)
                        } else {
                            battalia_band(a0, f, 6)
                        };
                        want[r] += p0 * die;
                    }
                } else {
                    want[first] += p0;
                }
            }
        }
        for (i, r) in ["passed", "daunted", "broken"].into_iter().enumerate() {
            let got = common::p(&o, "result", common::sym(&b, r));
            assert!(
                (got - want[i]).abs() < 1e-12,
                "{card}: {r} {got} against {}",
                want[i]
            );
        }
        let outcome = format!("{card}_card");
        let got = common::p(&o, &outcome, Value::Bool(true));
        assert!(
            (got - played).abs() < 1e-12,
            "{card} played {got} against {played}"
        );
    }
}

/// §V Command Class, the optional roll: 1 Amateur (1/6), 2-4 Able (1/2),
/// 5-6 Expert (1/3); off, every Brigadier is Able and nothing is rolled.
#[test]
fn the_command_class_roll() {
    let mut b = common::ruleset(RULES);
    let text = |on: bool| {
        format!(
            "procedure = \"roll_command_class\"\n[units.u]\ntype = \"Brigadier\"\nside = \"first_army\"\n\
             [options]\ncommand_class_roll = {on}\n"
        )
    };
    let o = common::exact(&mut b, &text(true));
    for (class, p) in [(1, 1.0 / 6.0), (2, 0.5), (3, 1.0 / 3.0)] {
        let got = common::p(&o, "class_rolled", Value::Int(class));
        assert!((got - p).abs() < 1e-12, "class {class}: {got}");
    }
    let o = common::exact(&mut b, &text(false));
    assert_eq!(common::p(&o, "class_rolled", Value::Int(0)), 1.0);
}

/// §Cards › The Special Events Deck, each card played on the table:
/// Skittish Mount (an enemy Brigadier's card gives him no token), Well-
/// drilled (all Disarray off one unit), Scattered Showers (no shooting
/// this turn or the next), The Fog of War (9" at most, hits on 6 only),
/// Powder Explosion (an enemy foot unit tests, its mounted neighbours
/// within a Move take a Disarray), Loot the Baggage! (a leaderless enemy
/// squadron within two Moves of our base line leaves, no token lost) and
/// Extra Ammunition Supply (two more volleys for a unit that has fired).
#[test]
fn the_special_events_do_what_their_cards_say() {
    let red = Value::Side(0);
    let mut t = table();
    t.decide("skittish_mount", &[red]);
    let startled: Vec<&str> = ["blue_brigadier", "blue_colonel"]
        .into_iter()
        .filter(|l| t.holds(&format!("{l}.skittish")))
        .collect();
    assert_eq!(startled.len(), 1, "one enemy leader is startled");
    let l = t.u(startled[0]);
    t.perform("leader_card", &[l]);
    assert_eq!(t.int(&format!("{}.orders_left", startled[0])), 0);

    let mut t = table();
    t.set("red_division", "disarray", Value::Int(2));
    t.set("red_battalia", "disarray", Value::Int(1));
    t.decide("well_drilled", &[red]);
    assert!(t.holds("red_division.disarray == 0 and red_battalia.disarray == 1"));

    let mut t = table();
    t.place("blue_battalia", 20.0, 13.5);
    t.set("red_battalia", "actions", Value::Int(2));
    assert!(t.holds("may_shoot_at(red_battalia, blue_battalia)"));
    t.perform("scattered_showers", &[red]);
    assert!(!t.holds("may_shoot_at(red_battalia, blue_battalia)"));
    t.perform("weather", &[red]);
    t.perform("weather", &[Value::Side(1)]);
    assert!(
        !t.holds("may_shoot_at(red_battalia, blue_battalia)"),
        "next turn too"
    );
    t.perform("weather", &[red]);
    t.perform("weather", &[Value::Side(1)]);
    assert!(t.holds("may_shoot_at(red_battalia, blue_battalia)"));

    let mut t = table();
    t.place("blue_battalia", 20.0, 13.5);
    assert_eq!(t.int("max_range(red_battalia)"), 15);
    assert_eq!(t.int("hit_score(red_battalia, blue_battalia)"), 5);
    t.perform("fog_of_war", &[red]);
    assert_eq!(t.int("max_range(red_battalia)"), 9);
    assert_eq!(t.int("hit_score(red_battalia, blue_battalia)"), 6);

    let mut t = table();
    t.set("blue_battalia", "kills", Value::Int(20));
    t.place("blue_horse", 29.0, 14.0);
    assert!(t.holds("distance(blue_horse, blue_battalia) <= 10"));
    t.decide("powder_explosion", &[red]);
    assert!(t.holds("blue_battalia.exploded"));
    assert!(t.game.log.iter().any(
        |e| matches!(e, muster::battle::game::Event::Procedure { name, args, .. }
            if name == "blow_up" && args[0] == "blue_battalia")
    ));
    assert!(t.holds("blue_horse.disarray == 1 and blue_cuirassiers.disarray == 0"));

    let mut t = table();
    let tokens = t.int("second_army.tokens");
    t.decide("loot_the_baggage", &[red]);
    let looted: Vec<&str> = ["blue_horse", "blue_cuirassiers"]
        .into_iter()
        .filter(|u| t.holds(&format!("{u}.looted and {u}.off_table")))
        .collect();
    assert_eq!(looted.len(), 1);
    assert_eq!(t.int("second_army.tokens"), tokens);

    let mut t = table();
    t.set("red_division", "volleys", Value::Int(3));
    t.set("red_division", "ammunition", Value::Int(4));
    t.decide("extra_ammunition", &[red]);
    assert_eq!(t.int("red_division.ammunition"), 6);
    assert!(t.holds("red_division.resupplied and red_battalia.ammunition == 6"));
}

/// §IX Support on the table: Red's reserve squadron stands touching the
/// rear of Red's horse, in the second round of its melee with Blue's horse
/// (both in line: 8 figures a rank). The battle derives `fed_in` from the
/// contact, and the continuing melee's round matches `muster odds` of the
/// supported round (the reserve's 12 dice at 4+ rerolling 1s beside the
/// engaged squadron's 12 at 5+; its kills shared): Red wins 0.896. With
/// the battle's `fed_in` made false Red wins 0.392 of 4000 games, the odds
/// of two squadrons alone, and the comparison fails.
#[test]
fn a_squadron_behind_a_cavalry_melee_supports_it_on_the_table() {
    let mut scene = Scene::open(RULES, Some(SCENARIO), &[]);
    against_the_odds(
        &mut scene,
        "a squadron fed in behind a cavalry melee",
        &|s, g| {
            place(g, "red_horse", 52.0, 10.0, None);
            place(g, "blue_horse", 52.0, 12.0, None);
            place(g, "red_reserve", 52.0, 8.0, None);
            in_continuing_melee(s, g, "red_horse", "blue_horse");
        },
        &|g: &mut Game| g.decide_named("continuing_melees", &[]),
        "next_round",
        &situation(
            "melee",
            &[
                "in_line(attacker)",
                "in_line(defender)",
                "in_line(reserve)",
                "fed_in(reserve, attacker)",
            ],
            &[
                ("attacker", "Harquebusiers", "first_army", "melee_round = 1"),
                (
                    "defender",
                    "Harquebusiers",
                    "second_army",
                    "melee_round = 1",
                ),
                ("reserve", "Harquebusiers", "first_army", ""),
            ],
        ),
        &MELEE,
    );
}

/// §XII Flank and Rear Attacks into a Continuing Melee and §XIII 1(c),
/// played on the table against `muster odds`: two Battalia in a
/// continuing melee (a round fought, Red 3 kills, Blue 5), and a Red
/// squadron 7.75" behind Blue attacks its rear. Blue tests at once (2d6+1
/// against its 5 kills, rerolling 6s for the attack in its rear); passed,
/// the melee's second round is fought there and then as one big melee:
/// the Battalia 16 dice each at 5+, the squadron its own first round
/// (12 dice at 4+, no reroll against a Battalia's front only, so 1s
/// rerolled as an attacker), Blue's kills shared between the Red Battalia
/// and the squadron; failed, no round is fought (`unfought`). The
/// battle's attack (`attack_contact`, its outcomes read from the
/// newcomer's side, which is the pair's attacker here) is compared with
/// the exact odds of `join_melee` with the same facts stated (the Red
/// side's kills, shared, are checked against the closed form in
/// tests/matchlocks_melee.rs).
#[test]
fn a_rear_attack_into_a_continuing_melee_matches_the_exact_odds() {
    let mut scene = Scene::open(RULES, Some(SCENARIO), &[]);
    against_the_odds(
        &mut scene,
        "a squadron into the flank of a continuing melee",
        &|s, g| {
            place(g, "blue_battalia", 20.0, 6.5, None);
            place(g, "red_horse", 20.0, 16.0, Some(180.0));
            in_continuing_melee(s, g, "red_battalia", "blue_battalia");
            for (u, kills) in [("red_battalia", 3), ("blue_battalia", 5)] {
                s.set(g, u, "kills", Value::Int(kills));
            }
            activate(s, g, "red_horse");
        },
        &|g: &mut Game| {
            let args = [unit(g, "red_horse"), unit(g, "blue_battalia")];
            g.perform_named("declare_attack", &args)?;
            g.decide_named("attack_moves", &[])
        },
        "attack_contact",
        &situation(
            "join_melee",
            &["in_line(newcomer)"],
            &[
                ("newcomer", "Harquebusiers", "first_army", ""),
                (
                    "attacker",
                    "Battalia",
                    "first_army",
                    "melee_round = 1\nkills = 3",
                ),
                (
                    "defender",
                    "Battalia",
                    "second_army",
                    "melee_round = 1\nkills = 5",
                ),
            ],
        ),
        &["round", "winner", "defender_kills", "result", "total"],
    );
}

/// §XIII Checking the Result, Fail 1, with §XII Flank and Rear Attacks
/// into a Continuing Melee: a Daunted Red Battalia falls back 3" into the
/// rear of a Blue squadron fighting a Red squadron (a round fought). The
/// book makes the contact a new combat: the Battalia joins the cavalry
/// melee as a newcomer (its front rank only, Daunted), Blue's squadron
/// tests at once (1d6+2, 6s rerolled) and, passing, fights its second
/// round against both. The battle's `fell_back` is compared with the exact
/// odds of `join_melee` with the same facts stated.
#[test]
fn a_fall_back_into_a_continuing_melee_joins_it() {
    let mut scene = Scene::open(RULES, Some(SCENARIO), &[]);
    against_the_odds(
        &mut scene,
        "a Daunted Battalia falls back into a cavalry melee",
        &|s, g| {
            place(g, "red_battalia", 20.0, 12.0, None);
            place(g, "blue_horse", 20.0, 7.0, Some(180.0));
            place(g, "red_horse", 20.0, 5.0, Some(0.0));
            in_continuing_melee(s, g, "red_horse", "blue_horse");
            s.set(g, "red_battalia", "daunted", Value::Bool(true));
            s.set(g, "red_battalia", "must_fall_back", Value::Bool(true));
        },
        &|g: &mut Game| g.decide_named("fall_backs", &[Value::Side(0)]),
        "fell_back",
        &situation(
            "join_melee",
            &["in_line(attacker)", "in_line(defender)"],
            &[
                ("newcomer", "Battalia", "first_army", "daunted = true"),
                ("attacker", "Harquebusiers", "first_army", "melee_round = 1"),
                (
                    "defender",
                    "Harquebusiers",
                    "second_army",
                    "melee_round = 1",
                ),
            ],
        ),
        &["round", "winner", "defender_kills", "result", "total"],
    );
}

// ------------------------------------------------------------------ linear obstacles

/// The table of a hedge (x 0-30) and a low wall (x 30-60) drawn as lines
/// 14" from Red's edge.
const OBSTACLES: &str = "tests/scenarios/matchlocks_obstacles.toml";

/// The situation of a crossing by a unit of type `ty` (no facts: the die
/// alone decides).
fn crossing_in(ty: &str) -> String {
    situation("crossing", &[], &[("u", ty, "first_army", "actions = 1")])
}

/// §X Movement Penalties 3 played on the table against `muster odds`: a
/// Musketeer Division 2" short of the hedge with both its actions,
/// ordered to Move toward a Battalia beyond it, crosses it and rolls:
/// 6 across clear (1/6), 2-5 a Disarray (2/3), 1 held at the hedge, two
/// Disarrays (1/6). The battle's `crossing` is compared with the exact
/// odds of the procedure; every game's Division ends beyond the hedge
/// with the Disarray the roll gave and, on a 1 (or in the main battle at
/// all), no action left.
#[test]
fn crossing_a_hedge_on_the_table_matches_the_exact_odds() {
    let mut scene = Scene::open(RULES, Some(OBSTACLES), &[]);
    let setup = |s: &Scene, g: &mut Game| {
        place(g, "red_division", 20.0, 11.0, Some(0.0));
        place(g, "blue_battalia", 20.0, 27.0, None);
        activate(s, g, "red_division");
    };
    let red = |g: &mut Game| g.decide_named("moves", &[Value::Side(0)]);
    against_the_odds(
        &mut scene,
        "a Division crossing a hedge",
        &setup,
        &red,
        "moved",
        &crossing_in("Musketeer Division"),
        &["crossing_roll", "crossing_disarray"],
    );
    let exact = scene.exact(&crossing_in("Musketeer Division"));
    let disarray = exact.get("crossing_disarray").unwrap();
    for (d, p) in [(0, (1, 6)), (1, (2, 3)), (2, (1, 6))] {
        assert_eq!(
            disarray.p(Value::Int(d)).fraction(),
            Some(p),
            "{d} Disarray"
        );
    }
    // The same game, looked at once: across, disarrayed as rolled.
    for seed in 0..40 {
        let mut g = scene.start(seed, true);
        setup(&scene, &mut g);
        red(&mut g).unwrap();
        let o = last_outcomes(&g, "moved");
        let disarray: i64 = o
            .iter()
            .find(|(k, _)| k == "crossing_disarray")
            .unwrap()
            .1
            .parse()
            .unwrap();
        let y = g.world.field.as_ref().unwrap().bases[common::table::index(&g, "red_division")]
            .centre
            .y;
        assert!(
            y > 14.0,
            "seed {seed}: the Division ends beyond the hedge ({y})"
        );
        assert_eq!(
            scene.state(&g, "red_division", "disarray"),
            Value::Int(disarray)
        );
        assert_eq!(scene.state(&g, "red_division", "actions"), Value::Int(0));
    }
}

/// §X Movement Penalties 3: moving up to an obstacle is one action and
/// crossing it another, so a unit with one action left does not cross
/// (it may still move up to the hedge), and foot skirmishers take no
/// Disarray on a 2-5 (the exact odds: no Disarray 5/6, two 1/6).
#[test]
fn a_crossing_needs_both_actions_and_skirmishers_are_exempt() {
    let mut scene = Scene::open(RULES, Some(OBSTACLES), &[]);
    for seed in 0..20 {
        let mut g = scene.start(seed, true);
        place(&mut g, "red_division", 20.0, 11.0, Some(0.0));
        place(&mut g, "blue_battalia", 20.0, 27.0, None);
        activate(&scene, &mut g, "red_division");
        scene.set(&mut g, "red_division", "actions", Value::Int(1));
        let before = g.log.len();
        g.decide_named("moves", &[Value::Side(0)]).unwrap();
        let y = g.world.field.as_ref().unwrap().bases[common::table::index(&g, "red_division")]
            .centre
            .y;
        assert!(y < 14.0, "seed {seed}: one action does not cross ({y})");
        let rolled = g.log[before..].iter().any(|e| {
            matches!(e, muster::battle::game::Event::Procedure { rolls, .. } if !rolls.is_empty())
        });
        assert!(!rolled, "seed {seed}: no crossing roll");
    }
    against_the_odds(
        &mut scene,
        "skirmishers crossing a hedge",
        &|s, g| {
            place(g, "red_skirmishers", 10.0, 12.0, Some(0.0));
            place(g, "blue_battalia", 10.0, 27.0, None);
            activate(s, g, "red_skirmishers");
        },
        &|g: &mut Game| g.decide_named("moves", &[Value::Side(0)]),
        "moved",
        &crossing_in("Musketeer Detachment"),
        &["crossing_roll", "crossing_disarray"],
    );
    let exact = scene.exact(&crossing_in("Musketeer Detachment"));
    let disarray = exact.get("crossing_disarray").unwrap();
    assert_eq!(disarray.p(Value::Int(0)).fraction(), Some((5, 6)));
    assert_eq!(disarray.p(Value::Int(2)).fraction(), Some((1, 6)));
}

/// §XI Spotting (c) and Saving Throw Adjustments: a hedge or low wall
/// across the line of sight hides a unit beyond 12" (seen at 12" or
/// nearer, and with nothing between at any range); musketeers touching
/// a wall are in cover, touching a hedge only skirmishers are, and horse
/// never.
#[test]
fn hedges_and_walls_are_light_cover() {
    let mut t = Table::open(RULES, Some(OBSTACLES), 1);
    t.place_facing("red_division", 20.0, 6.0, 0.0);
    t.place_facing("blue_battalia", 20.0, 20.5, 180.0);
    assert!(t.holds("sight_crosses(red_division, blue_battalia, hedge)"));
    let d = t.eval("distance(red_division, blue_battalia)");
    assert!(
        !t.holds("spotted(red_division, blue_battalia)"),
        "{d:?} apart"
    );
    assert!(!t.holds("shootable(red_division, blue_battalia)"));
    t.place_facing("red_division", 20.0, 9.0, 0.0);
    assert!(t.holds("distance(red_division, blue_battalia) <= 12"));
    assert!(t.holds("spotted(red_division, blue_battalia)"));
    // The same distance past the hedge's end: seen.
    t.place_facing("red_division", 20.0, 6.0, 0.0);
    t.place_facing("red_skirmishers", 2.0, 30.0, 180.0);
    t.place_facing("blue_battalia", 40.0, 30.0, 180.0);
    t.place_facing("red_battalia", 40.0, 15.5, 0.0);
    assert!(t.holds("sight_crosses(red_battalia, blue_battalia, wall) == false"));
    // Cover: the line under the base.
    t.place_facing("red_battalia", 40.0, 14.0, 0.0);
    assert!(t.holds("in_cover(red_battalia)"));
    t.place_facing("red_division", 20.0, 14.0, 0.0);
    assert!(!t.holds("in_cover(red_division)"));
    t.place_facing("red_skirmishers", 10.0, 14.0, 0.0);
    assert!(t.holds("in_cover(red_skirmishers)"));
    t.place_facing("red_division", 20.0, 11.0, 0.0);
    assert!(!t.holds("in_cover(red_division)"));
}
