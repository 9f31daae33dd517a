//! The Thistle, the Lily and the Rose: the book's worked example (a pike
//! group's five hits), exact odds of a group melee and of the
//! defeated-in-melee test under each modifier (checked against closed forms
//! worked out here and against sampling), With Me!, shooting, and battles.

#![allow(clippy::result_large_err)]

use crate::common;

use common::{exact, p, sampled, sym};
use muster::base::value::Value;
use muster::run::dice::Prob;
use muster::Build;
use std::path::Path;

fn thistle() -> Build {
    common::ruleset("rules/thistle_lily_and_rose.muster")
}

fn frac(pr: Prob) -> (u128, u128) {
    pr.fraction().expect("exact odds stay exact fractions")
}

/// The distribution of the number of successes of n dice each succeeding
/// with probability num/den.
fn binomial(n: usize, num: f64, den: f64) -> Vec<f64> {
    common::binomial(n, num / den)
}

const GENSDARMES_V_PIKES: &str =
    include_str!("../rules/situations/thistle_gensdarmes_charge_two_pikes.toml");

// ------------------------------------------------------------------ group melee

/// §Melee: gensdarmes charging two pike units. The gensdarmes: 1 die,
/// doubled charging, -1 against pikes' front: 2 dice at 5+. The pikes: 2
/// dice each, +1 charged frontally, -1 fighting gensdarmes: 4 dice at 4+.
#[test]
fn gensdarmes_charging_two_pike_units() {
    let mut b = thistle();
    let o = exact(&mut b, GENSDARMES_V_PIKES);
    let a = binomial(2, 1.0, 3.0);
    let d = binomial(4, 1.0, 2.0);
    for (k, pk) in a.iter().enumerate() {
        assert!((p(&o, "attacker_hits", Value::Int(k as i64)) - pk).abs() < 1e-12);
    }
    for (k, pk) in d.iter().enumerate() {
        assert!((p(&o, "defender_hits", Value::Int(k as i64)) - pk).abs() < 1e-12);
    }
    // Who wins, from the two distributions.
    let (mut att, mut draw) = (0.0, 0.0);
    for (i, pa) in a.iter().enumerate() {
        for (j, pd) in d.iter().enumerate() {
            if i > j {
                att += pa * pd;
            } else if i == j {
                draw += pa * pd;
            }
        }
    }
    let winner = o.get("winner").unwrap();
    assert_eq!(frac(winner.p(sym(&b, "attacker"))), (1, 16));
    assert_eq!(frac(winner.p(sym(&b, "draw"))), (13, 72));
    assert_eq!(frac(winner.p(sym(&b, "defender"))), (109, 144));
    assert!((winner.p(sym(&b, "attacker")).to_f64() - att).abs() < 1e-12);
    assert!((winner.p(sym(&b, "draw")).to_f64() - draw).abs() < 1e-12);
    // The loser tests (§Defeated in Melee). The beaten gensdarmes (one unit,
    // at least one hit: -2) fight on only on a 6, fall back on 3-5, retreat
    // on 1-2. Beaten pikes: 1 hit on two units is no -2 (4-6 fight on,
    // 1-3 fall back); 2 hits is -2.
    let mut fights_on = 0.0;
    let mut retreats = 0.0;
    for (i, pa) in a.iter().enumerate() {
        for (j, pd) in d.iter().enumerate() {
            let pr = pa * pd;
            if j > i {
                fights_on += pr / 6.0;
                retreats += pr / 3.0;
            } else if i > j {
                let heavy = i >= 2;
                fights_on += pr * if heavy { 1.0 / 6.0 } else { 0.5 };
                retreats += pr * if heavy { 1.0 / 3.0 } else { 0.0 };
            }
        }
    }
    assert!((p(&o, "morale", sym(&b, "fights_on")) - fights_on).abs() < 1e-12);
    assert!((p(&o, "morale", sym(&b, "retreats")) - retreats).abs() < 1e-12);
    assert_eq!(
        frac(o.get("morale").unwrap().p(sym(&b, "fights_on"))),
        (7, 48)
    );
    assert_eq!(
        frac(o.get("morale").unwrap().p(sym(&b, "untested"))),
        (13, 72)
    );
}

#[test]
fn sampling_agrees_with_the_group_melee() {
    let mut b = thistle();
    let exact = exact(&mut b, GENSDARMES_V_PIKES);
    let n = 400_000u64;
    let s = sampled(&mut b, GENSDARMES_V_PIKES, n, 3);
    for (outcome, v) in [
        ("winner", sym(&b, "attacker")),
        ("winner", sym(&b, "draw")),
        ("morale", sym(&b, "retreats")),
        ("morale", sym(&b, "falls_back")),
        ("defender_hits", Value::Int(3)),
    ] {
        let pe = p(&exact, outcome, v);
        let ps = p(&s, outcome, v);
        let se = (pe * (1.0 - pe) / n as f64).sqrt();
        assert!(
            (pe - ps).abs() < 4.5 * se,
            "{outcome}: exact {pe}, sampled {ps}"
        );
    }
}

/// §Hits: flank or rear contact. A unit touching the enemy only in its flank
/// rolls no dice (§Q&A: it hits back on its own turn, once turned).
#[test]
fn pikes_caught_in_the_flank_do_not_hit_back() {
    let mut b = thistle();
    let text = GENSDARMES_V_PIKES.replace(
        "\"charging(gensdarmes)\",",
        "\"charging(gensdarmes)\", \"position(pike_1, gensdarmes) is to_flank\", \"position(pike_2, gensdarmes) is to_flank\",",
    );
    let o = exact(&mut b, &text);
    assert_eq!(
        frac(o.get("defender_hits").unwrap().p(Value::Int(0))),
        (1, 1)
    );
    // The gensdarmes no longer meet the pikes' front: 2 dice at 4+.
    assert_eq!(
        frac(o.get("attacker_hits").unwrap().p(Value::Int(2))),
        (1, 4)
    );
    // In the pikes' own melee they have turned to face: 2 dice each, -1
    // against gensdarmes, no +1 (not charged frontally): 4 dice at 5+.
    let own = text
        .replace("attacker = \"gensdarmes\"", "attacker = \"pike_1\"")
        .replace("defender = \"pike_1\"", "defender = \"gensdarmes\"");
    let o = exact(&mut b, &own);
    let want = binomial(4, 1.0, 3.0);
    for (k, pk) in want.iter().enumerate() {
        assert!(
            (p(&o, "attacker_hits", Value::Int(k as i64)) - pk).abs() < 1e-12,
            "{k}"
        );
    }
}

/// §Melee Dice and §Hits for other pairs: swordsmen against bills (swordsmen
/// 2 dice at 4+, bills 2 dice at 4+: no modifier either way) and pikes
/// fighting swordsmen (-1), levy (-1), elite (+1), uphill enemy (-1).
#[test]
fn melee_scores_follow_each_modifier() {
    let mut b = thistle();
    let base = |a_ty: &str, a_q: &str, d_ty: &str, d_q: &str, facts: &str| {
        format!(
            "procedure = \"group_melee\"\nfacts = [\"engaged(a, d)\", \"engaged(d, a)\", {facts}]\n\
             [units.a]\ntype = \"{a_ty}\"\nquality = \"{a_q}\"\nside = \"near\"\n\
             [units.d]\ntype = \"{d_ty}\"\nquality = \"{d_q}\"\nside = \"far\"\n\
             [args]\nattacker = \"a\"\ndefender = \"d\"\n"
        )
    };
    // (attacker, its quality, defender, its quality, facts, attacker dice, attacker needs).
    let cases = [
        ("Swordsmen", "trained", "Bills", "trained", "", 2, 4),
        ("Pikes", "trained", "Swordsmen", "trained", "", 2, 5),
        ("Pikes", "elite", "Swordsmen", "trained", "", 2, 4),
        ("Pikes", "levy", "Swordsmen", "trained", "", 2, 6),
        (
            "Pikes",
            "trained",
            "Pikes",
            "trained",
            "\"charging(a)\"",
            2,
            3,
        ),
        (
            "Cavalry",
            "trained",
            "Shot",
            "trained",
            "\"charging(a)\"",
            2,
            4,
        ),
        (
            "Cavalry",
            "trained",
            "Shot",
            "trained",
            "\"uphill_of(d, a)\"",
            1,
            5,
        ),
        (
            "Gensdarmes",
            "elite",
            "Bills",
            "trained",
            "\"charging(a)\", \"demoralized(a)\"",
            2,
            4,
        ),
        ("Swordsmen", "trained", "Cavalry", "trained", "", 2, 5),
        ("Shot", "trained", "Gensdarmes", "trained", "", 1, 5),
        (
            "Shot",
            "levy",
            "Gensdarmes",
            "trained",
            "\"in_cover(d)\"",
            1,
            6,
        ),
        (
            "Light cavalry",
            "trained",
            "Pikes",
            "trained",
            "\"charging(a)\"",
            1,
            5,
        ),
    ];
    for (a_ty, a_q, d_ty, d_q, facts, dice, needs) in cases {
        let o = exact(&mut b, &base(a_ty, a_q, d_ty, d_q, facts));
        let want = binomial(dice, (7 - needs) as f64, 6.0);
        for (k, pk) in want.iter().enumerate() {
            let got = p(&o, "attacker_hits", Value::Int(k as i64));
            assert!(
                (got - pk).abs() < 1e-12,
                "{a_ty} ({a_q}) v {d_ty} [{facts}]: P({k}) = {got}, want {pk} ({dice} dice at {needs}+)"
            );
        }
        assert_eq!(
            p(&o, "attacker_hits", Value::Int(dice as i64 + 1)),
            0.0,
            "{a_ty} v {d_ty}: more than {dice} dice"
        );
    }
}

// ------------------------------------------------------------------ defeated in melee

/// §Defeated in Melee under each modifier: d6 + m, 4+ fights on, 1-3 falls
/// back, 0 or less retreats. The closed form counts the faces.
#[test]
fn the_defeated_in_melee_test_under_each_modifier() {
    let mut b = thistle();
    // (qualities of the group's units, hits suffered, demoralized, modifier).
    let cases: [(&[&str], i64, bool, i64); 10] = [
        (&["trained", "trained"], 1, false, 0),
        (&["elite", "elite"], 1, false, 1),
        (&["elite", "trained"], 1, false, 0), // not a majority
        (&["levy", "levy", "trained"], 1, false, -1),
        (&["irregular", "levy"], 1, false, -1),
        (&["trained", "trained"], 2, false, -2), // hits >= units
        (&["trained"], 3, false, -2),
        (&["trained", "trained"], 1, true, -2),
        (&["elite", "elite"], 2, true, -3),
        (&["levy", "levy"], 5, true, -5),
    ];
    for (qualities, hits, demoralized, m) in cases {
        let mut text = format!(
            "procedure = \"defeated_in_melee\"\nfacts = [{}{}]\n[args]\ng = \"u0\"\nhits = {hits}\n",
            (1..qualities.len())
                .map(|i| format!("\"same_group(u0, u{i})\", "))
                .collect::<String>(),
            if demoralized { "\"demoralized(u0)\"" } else { "" },
        );
        for (i, q) in qualities.iter().enumerate() {
            text.push_str(&format!(
                "[units.u{i}]\ntype = \"Pikes\"\nquality = \"{q}\"\nside = \"near\"\n"
            ));
        }
        text.push_str("[units.enemy]\ntype = \"Bills\"\nside = \"far\"\n");
        let o = exact(&mut b, &text);
        let faces = |lo: i64, hi: i64| (1..=6).filter(|r| (lo..=hi).contains(&(r + m))).count();
        let (on, back, away) = (faces(4, 99), faces(1, 3), faces(-99, 0));
        let morale = o.get("morale").unwrap();
        let check = |name: &str, n: usize| {
            let got = morale.p(sym(&b, name));
            let want = if n == 0 { (0, 1) } else { reduce(n as u128, 6) };
            if n == 0 {
                assert!(
                    got.is_zero(),
                    "{qualities:?} hits {hits} dem {demoralized}: {name}"
                );
            } else {
                assert_eq!(
                    frac(got),
                    want,
                    "{qualities:?} hits {hits} dem {demoralized}: {name}"
                );
            }
        };
        check("fights_on", on);
        check("falls_back", back);
        check("retreats", away);
        // And the same against 60,000 sampled tests (a second method: the
        // sampler rolls through the compiled program, not the enumeration).
        let n = 60_000u64;
        let sampled = sampled(&mut b, &text, n, 17 + m.unsigned_abs());
        for (name, k) in [("fights_on", on), ("falls_back", back), ("retreats", away)] {
            let pe = k as f64 / 6.0;
            let ps = p(&sampled, "morale", sym(&b, name));
            let se = (pe * (1.0 - pe) / n as f64).sqrt().max(1e-9);
            assert!(
                (ps - pe).abs() <= 4.5 * se,
                "{qualities:?} hits {hits} dem {demoralized}: {name} sampled {ps}, exact {pe}"
            );
        }
    }
}

fn reduce(n: u128, d: u128) -> (u128, u128) {
    let g = (1..=n.min(d))
        .rev()
        .find(|g| n.is_multiple_of(*g) && d.is_multiple_of(*g))
        .unwrap_or(1);
    (n / g, d / g)
}

#[test]
fn sampling_agrees_with_the_morale_test() {
    let mut b = thistle();
    let text = "procedure = \"defeated_in_melee\"\nfacts = [\"same_group(u0, u1)\"]\n\
                [args]\ng = \"u0\"\nhits = 2\n\
                [units.u0]\ntype = \"Pikes\"\nquality = \"elite\"\nside = \"near\"\n\
                [units.u1]\ntype = \"Pikes\"\nquality = \"elite\"\nside = \"near\"\n\
                [units.enemy]\ntype = \"Bills\"\nside = \"far\"\n";
    // Elite +1, two hits on two units -2: m = -1. Retreat on a 1 (1/6),
    // fall back on 2-4 (1/2), fight on on 5-6 (1/3).
    let e = exact(&mut b, text);
    assert_eq!(
        frac(e.get("morale").unwrap().p(sym(&b, "retreats"))),
        (1, 6)
    );
    assert_eq!(
        frac(e.get("morale").unwrap().p(sym(&b, "fights_on"))),
        (1, 3)
    );
    let n = 300_000u64;
    let s = sampled(&mut b, text, n, 9);
    for (name, pe) in [
        ("retreats", 1.0 / 6.0),
        ("falls_back", 0.5),
        ("fights_on", 1.0 / 3.0),
    ] {
        let ps = p(&s, "morale", sym(&b, name));
        let se = (pe * (1.0 - pe) / n as f64).sqrt();
        assert!((ps - pe).abs() < 4.5 * se, "{name}: {ps} v {pe}");
    }
}

// ------------------------------------------------------------------ With Me!

/// §With Me!: a general with the pike group leads from the front: 4-6 one
/// more hit on the enemy, 1 he is wounded and leaves. Here he stands in the
/// group behind the pikes (not touching the enemy, so he rolls no dice).
#[test]
fn with_me_adds_a_hit_or_wounds_the_general() {
    let mut b = thistle();
    let text = GENSDARMES_V_PIKES
        .replace(
            "\"same_group(pike_1, pike_2)\",",
            "\"same_group(pike_1, pike_2)\", \"same_group(pike_1, general)\", \"leading(general)\",",
        )
        .replace(
            "[units.pike_2]",
            "[units.general]\ntype = \"General\"\nside = \"far\"\n\n[units.pike_2]",
        );
    let o = exact(&mut b, &text);
    assert_eq!(
        frac(o.get("general_wounded").unwrap().p(Value::Bool(true))),
        (1, 6)
    );
    // The pikes' 4 dice at 4+, plus one hit half the time.
    let d = binomial(4, 1.0, 2.0);
    for k in 0..=5usize {
        let want =
            0.5 * d.get(k).copied().unwrap_or(0.0) + 0.5 * if k > 0 { d[k - 1] } else { 0.0 };
        let got = p(&o, "defender_hits", Value::Int(k as i64));
        assert!((got - want).abs() < 1e-12, "P({k}) = {got}, want {want}");
    }
    // Without the lead, no extra hit and no wound.
    let o = exact(&mut b, &text.replace("\"leading(general)\",", ""));
    assert_eq!(frac(o.get("defender_hits").unwrap().p(Value::Int(5))).0, 0);
    assert_eq!(
        frac(o.get("general_wounded").unwrap().p(Value::Bool(false))),
        (1, 1)
    );
}

// ------------------------------------------------------------------ shooting

fn shot_at(shooter: &str, target: &str, facts: &str) -> String {
    format!(
        "procedure = \"shoot\"\nfacts = [{facts}]\n[args]\ns = \"shooter\"\nt = \"target\"\n\
         [units.shooter]\ntype = \"{shooter}\"\nside = \"near\"\n\
         [units.target]\ntype = \"{target}\"\nside = \"far\"\n"
    )
}

/// §Shooting: one die a unit, 5 or 6 hits; §Difficult targets -1; §Rapid
/// Fire: bows that have not moved roll 2 dice at -1 each; §Demoralized -1.
#[test]
fn shooting_dice_and_scores() {
    let mut b = thistle();
    // (shooter, target, facts, state of the shooter, dice, needs).
    let cases = [
        ("Shot", "Pikes", "", "", 1, 5),
        ("Shot", "Pikes", "\"in_cover(target)\"", "", 1, 6),
        ("Shot", "Pikes", "\"demoralized(shooter)\"", "", 1, 6),
        ("Bows", "Pikes", "", "", 2, 6),
        ("Bows", "Pikes", "", "moved = true", 1, 5),
        ("Bows", "Gensdarmes", "", "moved = true", 1, 6),
        ("Bows", "Gensdarmes", "", "", 2, 7),
        ("Light cavalry", "Shot", "", "", 1, 5),
    ];
    for (s, t, facts, state, dice, needs) in cases {
        let mut text = shot_at(s, t, facts);
        if !state.is_empty() {
            text.push_str(&format!("[units.shooter.state]\n{state}\n"));
        }
        let o = exact(&mut b, &text);
        let want = binomial(dice, (7 - needs.min(7)) as f64, 6.0);
        for (k, pk) in want.iter().enumerate() {
            let got = p(&o, "hits", Value::Int(k as i64));
            assert!(
                (got - pk).abs() < 1e-12,
                "{s} at {t} [{facts}] {state}: P({k}) = {got}, want {pk}"
            );
        }
    }
}

/// §Dense targets: a gun rolls one die against every unit of either side in
/// its line of fire and within range, the target included.
#[test]
fn artillery_rolls_against_every_unit_in_the_line_of_fire() {
    let mut b = thistle();
    let text = "procedure = \"shoot\"\n\
                facts = [\"in_line_of_fire(gun, target, behind)\", \"in_line_of_fire(gun, target, friend)\", \"not in_range(gun, friend)\"]\n\
                [args]\ns = \"gun\"\nt = \"target\"\n\
                [units.gun]\ntype = \"Heavy artillery\"\nside = \"near\"\n\
                [units.target]\ntype = \"Pikes\"\nside = \"far\"\n\
                [units.behind]\ntype = \"Bills\"\nside = \"far\"\n\
                [units.friend]\ntype = \"Shot\"\nside = \"near\"\n\
                [units.aside]\ntype = \"Shot\"\nside = \"far\"\n";
    let o = exact(&mut b, text);
    // The target and the bills behind it; the friend is out of range, the
    // other shot not in line.
    assert_eq!(frac(o.get("struck").unwrap().p(Value::Int(2))), (1, 1));
    // The last die (the bills'): 5+.
    assert_eq!(frac(o.get("hits").unwrap().p(Value::Int(1))), (1, 3));
}

// ------------------------------------------------------------------ on the table

use muster::battle::game::{Game, Prepared};
use muster::compile::ir::Ruleset;
use muster::run::battlefield::Base;

const SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenarios/");

/// A scenario's table, ready to play a step at a time.
struct Table {
    build: Build,
    game: Game<'static>,
}

impl Table {
    fn open(file: &str) -> Table {
        let mut build = thistle();
        let path = format!("{SCENARIOS}{file}");
        let sc = match build.scenario(Some(Path::new(&path))) {
            Ok(s) => s,
            Err(d) => panic!(
                "{}",
                muster::front::diagnostic::render_plain(&d, &build.sources)
            ),
        };
        let rs: &'static Ruleset = Box::leak(Box::new(build.ruleset.clone()));
        let prep = match Prepared::new(rs, &sc) {
            Ok(p) => p,
            Err(d) => panic!(
                "{}",
                muster::front::diagnostic::render_plain(&d, &build.sources)
            ),
        };
        let game = prep.start(1, true);
        Table { build, game }
    }

    fn unit(&self, name: &str) -> Value {
        let u = self.game.world.units.iter().position(|u| u.name == name);
        Value::Unit(u.unwrap_or_else(|| panic!("no unit `{name}`")) as u16)
    }

    fn eval(&mut self, expr: &str) -> Value {
        match self.build.query_world(&self.game.world, expr) {
            Ok(v) => v.0,
            Err(d) => panic!(
                "{expr}: {}",
                muster::front::diagnostic::render_plain(&d, &self.build.sources)
            ),
        }
    }

    fn int(&mut self, expr: &str) -> i64 {
        match self.eval(expr) {
            Value::Int(i) => i,
            v => panic!("{expr} is {v:?}"),
        }
    }

    /// A unit's hits, read from the world.
    fn hits(&self, name: &str) -> i64 {
        let Value::Unit(u) = self.unit(name) else {
            unreachable!()
        };
        let rs = &self.build.ruleset;
        let st = rs.state("hits").expect("a hits state") as usize;
        match self.game.world.state[u as usize * rs.states.len() + st] {
            Value::Int(h) => h,
            v => panic!("{v:?}"),
        }
    }

    fn set_state(&mut self, name: &str, state: &str, v: Value) {
        let Value::Unit(u) = self.unit(name) else {
            unreachable!()
        };
        let rs = &self.build.ruleset;
        let st = rs
            .state(state)
            .unwrap_or_else(|| panic!("no state `{state}`")) as usize;
        self.game.world.state[u as usize * rs.states.len() + st] = v;
    }

    fn perform(&mut self, proc: &str, args: &[Value]) {
        if let Err(d) = self.game.perform_named(proc, args) {
            panic!(
                "{}",
                muster::front::diagnostic::render_plain(&[d], &self.build.sources)
            );
        }
    }

    fn decide(&mut self, decision: &str, args: &[Value]) {
        if let Err(d) = self.game.decide_named(decision, args) {
            panic!(
                "{}",
                muster::front::diagnostic::render_plain(&[d], &self.build.sources)
            );
        }
    }
}

/// The book's example (§opening): a group of pike stands takes 5 hits; 4
/// go onto one pike unit, which is removed, and the last where the owner
/// chooses.
#[test]
fn a_pike_group_taking_five_hits() {
    let mut t = Table::open("thistle_pike_group.toml");
    // The three pike units are one group (the general stands apart).
    assert_eq!(t.int("group_size(first u: u is Pikes)"), 3);
    let p2 = t.unit("Pikes 2");
    t.perform("group_takes_hits", &[p2, Value::Int(5)]);
    assert_eq!(
        t.int("sum u: u is Pikes of u.pending"),
        15,
        "5 hits waiting on each of the 3"
    );
    t.decide("allocate_hits", &[Value::Side(0)]);
    let hits: Vec<i64> = (1..=3).map(|i| t.hits(&format!("Pikes {i}"))).collect();
    let mut sorted = hits.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![0, 1, 4],
        "hits on the three pike units: {hits:?}"
    );
    assert_eq!(t.int("count u: u is Pikes and u.removed"), 1);
    assert_eq!(
        t.int("count u: u is Pikes and u.removed and u.hits == 4"),
        1
    );
    assert_eq!(t.int("sum u: true of u.pending"), 0, "every hit placed");
}

/// §opening: the first unit is of the group's type (two bills and a pike:
/// bills), though the default policy would rather hit the pike; the excess
/// goes where the policy likes (the pike).
#[test]
fn a_group_s_hits_go_first_onto_its_main_type() {
    let mut t = Table::open("thistle_mixed_group.toml");
    assert_eq!(t.int("group_size(first u: u is Pikes)"), 3);
    let pike = t.unit("Pikes");
    t.perform("group_takes_hits", &[pike, Value::Int(5)]);
    t.decide("allocate_hits", &[Value::Side(0)]);
    let hits = [t.hits("Pikes"), t.hits("Bills 1"), t.hits("Bills 2")];
    assert_eq!(
        t.int("count u: u is Bills and u.removed and u.hits == 4"),
        1,
        "{hits:?}"
    );
    assert_eq!(t.int("count u: u is Pikes and u.hits == 1"), 1, "{hits:?}");
    assert_eq!(t.int("sum u: u.side == near of u.hits"), 5);
}

/// The default scenario (Flodden) with seed 3, as a wargamer reads it:
/// initiative, group moves, charges and counter-charges, shooting, each
/// group melee with its modifiers and With Me!, hits placed, morale results.
/// Review a change to it as a reader of the rules would.
#[test]
fn seeded_battle_log_of_flodden() {
    let mut b = thistle();
    let sc = b.scenario(None).expect("the default scenario reads");
    let prep = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    let game = prep.play(3, true).expect("the battle plays");
    let text = game.narrative();
    for needed in [
        "=== Turn 1 ===",
        "initiative() rolls",
        " with ",
        "group_melee(",
        "place_hits(",
        "=== End after",
    ] {
        assert!(text.contains(needed), "the log has no `{needed}`");
    }
    insta::assert_snapshot!("thistle_flodden_seed_3", text);
}

/// The same seed and runs give the same summary on 1 thread and on 2, and
/// neither remembering define values nor compiled rules change a game.
#[test]
fn thistle_simulate_is_the_same_on_any_thread_count() {
    let mut b = thistle();
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let run = |prep: &Prepared, threads: usize| common::simulate_on(prep, threads, 6, 42);
    let one = run(&prep, 1);
    let two = run(&prep, 2);
    assert_eq!(one, two);
    assert_eq!(one.games, 6);
    prep.remember = false;
    let without = prep.play(5, true).unwrap().narrative();
    prep.remember = true;
    let with = prep.play(5, true).unwrap().narrative();
    assert_eq!(with, without);
    // Nor does compiling the rules to closures (groups, `sum` over units).
    let walked = prep.walking_the_tree().play(5, true).unwrap().narrative();
    assert_eq!(with, walked);
}

/// §Movement: a group moves at its slowest unit's rate (pikes 6" with
/// bills) and as one body; a lone unit of the same command does not come
/// along; the general stays with his group.
#[test]
fn groups_move_as_one_at_the_slowest_rate() {
    let mut t = Table::open("thistle_mixed_group.toml");
    assert_eq!(t.int("group_move(first u: u is Pikes)"), 6);
    assert_eq!(
        t.int("group_size(first u: u is General)"),
        1,
        "the general stands apart"
    );
    t.decide("move", &[Value::Side(0)]);
    let after: Vec<f64> = ["Pikes", "Bills 1", "Bills 2"]
        .iter()
        .map(|n| {
            let Value::Unit(u) = t.unit(n) else {
                unreachable!()
            };
            t.game.world.field.as_ref().unwrap().bases[u as usize]
                .centre
                .y
        })
        .collect();
    assert_eq!(
        after,
        vec![16.0, 16.0, 16.0],
        "each of the group advanced 6 together"
    );
    assert_eq!(
        t.int("group_size(first u: u is Pikes)"),
        3,
        "still one group"
    );
}

/// §Detached groups: a group that is not within 12" of its general at the
/// start of the turn rolls 3+ to move (elite +1, levy -1), even when the
/// general comes closer first.
#[test]
fn a_detached_group_rolls_to_move() {
    let mut t = Table::open("thistle_mixed_group.toml");
    // The general at (10, 6) is more than 12" from the group at x 30..35.
    for name in [
        "English vanguard General",
        "Pikes",
        "Bills 1",
        "Bills 2",
        "Scots pikes",
    ] {
        let u = t.unit(name);
        t.perform("check_command", &[u]);
    }
    assert_eq!(
        t.eval("in_command(first u: u is Pikes)"),
        Value::Bool(false)
    );
    assert_eq!(
        t.eval("in_command(first u: u is General)"),
        Value::Bool(true)
    );
    t.decide("move", &[Value::Side(0)]);
    let text = t.game.narrative();
    // The general moves first (he is first in the scenario), but the group
    // was detached when the turn began.
    assert!(text.contains("English vanguard General advances"), "{text}");
    assert!(text.contains("command_roll(Pikes) rolls ["), "{text}");
}

/// The odds table of single-unit melees: each type charging the front of
/// each type in the open, trained against trained (exact; `winner` as
/// attacker / draw / defender, then the mean hits each side inflicts).
/// Review a change as a reader of the rules would: pikes hold horse (the
/// horse lose a point against their front, the pikes gain one being
/// charged), bills and swordsmen cancel the pikes' bonus, everyone fighting
/// gensdarmes loses a point, and only gensdarmes and cavalry double their
/// dice charging.
#[test]
fn single_unit_melee_odds_table() {
    let mut b = thistle();
    let types = [
        "Gensdarmes",
        "Cavalry",
        "Light cavalry",
        "Pikes",
        "Bills",
        "Swordsmen",
        "Shot",
        "Bows",
    ];
    let mut out = String::from(
        "   attacker (charging) -> defender        att    draw   def   | hits att  def\n",
    );
    for a in types {
        for d in types {
            let text = format!(
                "procedure = \"group_melee\"\nfacts = [\"engaged(a, d)\", \"engaged(d, a)\", \"charging(a)\"]\n\
                 [units.a]\ntype = \"{a}\"\nside = \"near\"\n[units.d]\ntype = \"{d}\"\nside = \"far\"\n\
                 [args]\nattacker = \"a\"\ndefender = \"d\"\n"
            );
            let o = exact(&mut b, &text);
            let w = o.get("winner").unwrap();
            let mean = |name: &str| {
                (0..=8)
                    .map(|k| k as f64 * p(&o, name, Value::Int(k)))
                    .sum::<f64>()
            };
            out.push_str(&format!(
                "{a:>22} -> {d:<13} {:.4} {:.4} {:.4} | {:.3} {:.3}\n",
                w.p(sym(&b, "attacker")).to_f64(),
                w.p(sym(&b, "draw")).to_f64(),
                w.p(sym(&b, "defender")).to_f64(),
                mean("attacker_hits"),
                mean("defender_hits"),
            ));
        }
    }
    insta::assert_snapshot!("thistle_melee_odds", out);
}

/// §Charges: a group charges as one body. The enemy stands 3" before the
/// group's right-hand unit: the group can reach it (its outline goes
/// straight on until a member touches), its first unit alone cannot.
#[test]
fn a_group_reaches_what_its_first_unit_alone_does_not() {
    let mut t = Table::open("thistle_group_charge.toml");
    assert_eq!(t.eval("reachable(first u: u is Pikes and u.side == near, first u: u.side == far and u is Pikes, 6, 0)"), Value::Bool(false));
    assert_eq!(t.eval("group_reachable(first u: u is Pikes and u.side == near, first u: u.side == far and u is Pikes, 6, 0)"), Value::Bool(true));
    assert_eq!(t.eval("group_reachable(first u: u is Pikes and u.side == near, first u: u.side == far and u is Pikes, 2, 0)"), Value::Bool(false));
    // The charge itself: declared in the first part, the group moves 3 and
    // the right-hand bills touch the enemy.
    let (p, s) = (t.unit("Pikes"), t.unit("Scots pikes"));
    t.perform("declare_charge", &[p, s, Value::Int(1)]);
    t.decide("charge_moves", &[Value::Int(1)]);
    assert_eq!(t.eval("engaged(first u: u.side == near and u is Bills and u.hits == 0 and u != (first x: x is Bills), first u: u.side == far and u is Pikes)"), Value::Bool(true));
    assert_eq!(t.eval("charging(first u: u is Bills)"), Value::Bool(true));
}

/// §Defeated in Melee and §Rally: a group that retreats goes a full move
/// back in disorder and ends with its back to the enemy (`turn_about`);
/// when it rallies it may face the enemy again (`face_enemy`).
#[test]
fn a_retreat_ends_with_backs_to_the_enemy() {
    let mut t = Table::open("thistle_mixed_group.toml");
    let pike = t.unit("Pikes");
    t.perform("retreat_in_disorder", &[pike]);
    t.decide("retreat_moves", &[Value::Side(0)]);
    let bases: Vec<Base> = ["Pikes", "Bills 1", "Bills 2"]
        .iter()
        .map(|n| {
            let Value::Unit(u) = t.unit(n) else {
                unreachable!()
            };
            t.game.world.field.as_ref().unwrap().bases[u as usize]
        })
        .collect();
    // 6" back (the pikes' rate) from y = 10, turned about in place: the
    // line keeps its ground, mirrored (the bills now on the pikes' left).
    for b in &bases {
        assert!((b.centre.y - 4.0).abs() < 1e-9, "{b:?}");
        assert!((b.facing - 180.0).abs() < 1e-9, "{b:?}");
    }
    let xs: Vec<f64> = bases
        .iter()
        .map(|b| (b.centre.x * 10.0).round() / 10.0)
        .collect();
    assert_eq!(xs, vec![34.8, 32.4, 30.0]);
    assert_eq!(t.int("count u: u.disorder"), 3);
    assert_eq!(
        t.int("group_size(first u: u is Pikes)"),
        3,
        "still one group"
    );
    // Rallied, it may face the enemy again: the policy turns it about.
    for n in ["Pikes", "Bills 1", "Bills 2"] {
        t.set_state(n, "rallied", Value::Bool(true));
    }
    t.decide("face_enemy", &[Value::Side(0)]);
    let Value::Unit(p) = t.unit("Pikes") else {
        unreachable!()
    };
    let b = t.game.world.field.as_ref().unwrap().bases[p as usize];
    assert!(
        b.facing.abs() < 1e-9 || (b.facing - 360.0).abs() < 1e-9,
        "{b:?}"
    );
}

// ------------------------------------------------------------------ a charge's target, a pursuit

use common::scene::{play, runs, Scene};

/// tests/scenarios/thistle_reactions.toml.
fn reactions() -> Scene {
    Scene::open(
        "rules/thistle_lily_and_rose.muster",
        "thistle_reactions.toml",
        &[],
        0.0,
    )
}

/// A game of `scene` on `seed`, the English moving first.
fn english_first(scene: &Scene, seed: u64) -> Game<'static> {
    let mut g = scene.start(seed, true);
    scene.set_side_state(&mut g, 0, "moves_first", Value::Bool(true));
    g
}

fn base_of(scene: &Scene, g: &Game, name: &str) -> Base {
    g.world.field.as_ref().unwrap().bases[scene.unit(g, name)]
}

fn touching(scene: &Scene, g: &Game, a: &str, b: &str) -> bool {
    base_of(scene, g, a).distance(&base_of(scene, g, b)) < 0.02
}

/// §Charges: a charge's target may counter-charge up to half way if
/// mounted, or shoot (mounted troops and shot), or, a lone unit of light
/// cavalry or shot, evade a full move backs to the enemy; these are
/// alternatives. The English part's charges on thistle_reactions.toml:
/// cavalry counter-charge gensdarmes 10.4" away and meet them half way;
/// shot charged by pikes shoot at them, and the pikes go in; shot charged by
/// cavalry evade 12" back and turn about, and do not shoot as well (before
/// the fix the evade came after the reaction fire, and such a unit did
/// both).
#[test]
fn a_charge_s_target_counter_charges_shoots_or_evades() {
    let scene = reactions();
    let mut g = english_first(&scene, 1);
    let (gens, cav) = (
        base_of(&scene, &g, "gensdarmes"),
        base_of(&scene, &g, "cavalry"),
    );
    let skirmishers = base_of(&scene, &g, "skirmishers");
    play(&mut g, "First player charges");
    let declared: Vec<Vec<String>> = runs(&g, "declare_charge")
        .into_iter()
        .map(|r| r.args)
        .collect();
    for d in [
        ["gensdarmes", "cavalry", "1"],
        ["pikes", "shot", "1"],
        ["horse", "skirmishers", "1"],
        ["cavalry", "gensdarmes", "1"],
    ] {
        assert!(
            declared.contains(&d.map(String::from).to_vec()),
            "{d:?}: {}",
            g.narrative()
        );
    }
    // The counter-charge meets the charge half way.
    assert!(
        touching(&scene, &g, "gensdarmes", "cavalry"),
        "{}",
        g.narrative()
    );
    let moved = |before: &Base, name: &str| before.centre.dist(base_of(&scene, &g, name).centre);
    assert!(
        (moved(&gens, "gensdarmes") - 5.2).abs() < 0.05,
        "{}",
        g.narrative()
    );
    assert!(
        (moved(&cav, "cavalry") - 5.2).abs() < 0.05,
        "{}",
        g.narrative()
    );
    // The shot charged by pikes shoot, and the pikes reach them.
    let shots: Vec<Vec<String>> = runs(&g, "shoot").into_iter().map(|r| r.args).collect();
    assert_eq!(shots, [["shot", "pikes"]], "{}", g.narrative());
    assert!(touching(&scene, &g, "pikes", "shot"));
    // The shot charged by cavalry evade a full move (12") and turn about.
    let now = base_of(&scene, &g, "skirmishers");
    assert!(
        (now.centre.y - (skirmishers.centre.y + 12.0)).abs() < 1e-6,
        "{now:?}"
    );
    assert!(
        now.facing.abs() < 1e-6 || (now.facing - 360.0).abs() < 1e-6,
        "{now:?}"
    );
    assert!(!touching(&scene, &g, "horse", "skirmishers"));
}

/// §Defeated in Melee and §Resolving Melee: a group beaten in melee falls
/// back half a move facing the enemy (on 1-3 after its modifiers), or
/// retreats a full move in disorder, backs to the enemy (0 or less); the
/// winner may pursue a retreating group half a move. On
/// thistle_reactions.toml the bills touching the English gensdarmes have
/// Scottish pikes of another command 3.8" behind them, which they may not
/// pass: a retreat stops there (3.75", in steps of 0.25) and the pursuit
/// (half of 12") catches them; a fall back goes the 3" (half of 6).
#[test]
fn a_beaten_group_falls_back_or_retreats_and_is_pursued() {
    let scene = reactions();
    for result in ["retreats", "falls_back"] {
        let mut g = (0..500)
            .map(|seed| {
                let mut g = english_first(&scene, seed);
                play(&mut g, "First melee");
                g
            })
            .find(|g| {
                runs(g, "group_melee").iter().any(|r| {
                    r.args == ["pursuer", "bills"]
                        && r.outcome("winner") == "attacker"
                        && r.outcome("morale") == result
                })
            })
            .unwrap_or_else(|| panic!("no seed of 500 gives {result}"));
        let (bills, pursuer) = (base_of(&scene, &g, "bills"), base_of(&scene, &g, "pursuer"));
        play(&mut g, "First melee results");
        let now = base_of(&scene, &g, "bills");
        let back = now.centre.y - bills.centre.y;
        if result == "retreats" {
            assert!((back - 3.75).abs() < 1e-6, "{back}\n{}", g.narrative());
            assert!(now.facing.abs() < 1e-6, "backs to the enemy: {now:?}");
            let pursuits: Vec<Vec<String>> =
                runs(&g, "pursue").into_iter().map(|r| r.args).collect();
            assert_eq!(pursuits, [["pursuer", "bills", "1"]], "{}", g.narrative());
            assert!(
                touching(&scene, &g, "pursuer", "bills"),
                "{}",
                g.narrative()
            );
            let chased = base_of(&scene, &g, "pursuer").centre.y - pursuer.centre.y;
            assert!((chased - 3.75).abs() < 1e-6, "{chased}");
        } else {
            assert!((back - 3.0).abs() < 1e-6, "{back}\n{}", g.narrative());
            assert!(
                (now.facing - 180.0).abs() < 1e-6,
                "facing the enemy: {now:?}"
            );
            assert!(runs(&g, "pursue").is_empty(), "{}", g.narrative());
        }
    }
}

/// §Woods, Towns etc., §Movement (no passing through but with shot; rates;
/// limbering) and §Shooting and Movement (units in contact neither shoot nor
/// are shot at), on thistle_going.toml:
/// - touching a wood, a lone pike unit moves 3" (half), lone shot not at
///   all, shot on the road its full 12"; a group of bills in a wood not at
///   all;
/// - pikes with friendly bills ahead stop short of them; pikes with
///   friendly shot ahead pass through, 6" straight on;
/// - a light gun moves 6" manhandled, 12" limbered; a heavy gun only
///   pivots unlimbered, 6" limbered; limbering takes the move;
/// - shot in contact with pikes may not shoot them, and other shot with
///   the pikes in range, arc and sight may not either.
#[test]
fn going_passing_guns_and_contact_on_the_table() {
    let mut t = Table::open("thistle_going.toml");
    for (expr, want) in [
        ("move_allowance(wood_pikes, straight)", 3),
        ("move_allowance(wood_shot, straight)", 0),
        ("move_allowance(road_shot, straight)", 12),
        ("move_allowance(bills_1, straight)", 0),
        ("group_size(bills_1)", 2),
        ("move_allowance(light_gun, straight)", 6),
        ("move_allowance(heavy_gun, pivot)", 0),
    ] {
        assert_eq!(t.int(expr), want, "{expr}");
    }
    assert_eq!(
        t.eval("may_manoeuvre(heavy_gun, straight) or may_manoeuvre(heavy_gun, wheel)"),
        Value::Bool(false)
    );
    // Units in contact neither shoot nor are shot at.
    for expr in [
        "in_range(onlooker, engaged_pikes) and in_arc_of_fire(onlooker, engaged_pikes) and line_of_sight(onlooker, engaged_pikes)",
        "engaged(engaged_shot, engaged_pikes)",
    ] {
        assert_eq!(t.eval(expr), Value::Bool(true), "{expr}");
    }
    for expr in [
        "may_shoot_at(onlooker, engaged_pikes)",
        "may_shoot_at(engaged_shot, engaged_pikes)",
    ] {
        assert_eq!(t.eval(expr), Value::Bool(false), "{expr}");
    }
    // The English move (the policy closes with the enemy).
    let y = |t: &Table, name: &str| {
        let Value::Unit(u) = t.unit(name) else {
            unreachable!()
        };
        t.game.world.field.as_ref().unwrap().bases[u as usize]
            .centre
            .y
    };
    let before: Vec<f64> = ["wood_pikes", "wood_shot", "road_shot", "bills_1"]
        .iter()
        .map(|n| y(&t, n))
        .collect();
    t.decide("move", &[Value::Side(0)]);
    let text = t.game.narrative();
    assert!((y(&t, "passing_pikes") - 16.0).abs() < 1e-6, "{text}");
    assert!(y(&t, "blocked_pikes") < y(&t, "bills_ahead"), "{text}");
    for (n, b) in ["wood_pikes", "wood_shot", "road_shot", "bills_1"]
        .iter()
        .zip(before)
    {
        let most = match *n {
            "wood_pikes" => 3.0,
            "road_shot" => 12.0,
            _ => 0.0,
        };
        assert!(
            (y(&t, n) - b).abs() <= most + 1e-6,
            "{n} moved {}\n{text}",
            y(&t, n) - b
        );
    }
    // Limbering takes the gun's move; limbered, it goes 12 (light) or 6 (heavy).
    let (light, heavy) = (t.unit("light_gun"), t.unit("heavy_gun"));
    t.perform("limber", &[light]);
    t.perform("limber", &[heavy]);
    assert_eq!(
        t.eval("may_move(light_gun) or may_move(heavy_gun)"),
        Value::Bool(false)
    );
    assert_eq!(t.int("unit_move_rate(light_gun)"), 12);
    assert_eq!(t.int("unit_move_rate(heavy_gun)"), 6);
    assert_eq!(
        t.eval("may_manoeuvre(heavy_gun, straight)"),
        Value::Bool(true)
    );
}

/// §Initiative: the higher die moves first; a tie repeats last turn's
/// order (on the first turn, with no order yet, the dice are rolled
/// again). Scripted dice.
#[test]
fn initiative_ties_repeat_last_turn_s_order() {
    let mut b = thistle();
    // (near moved first last turn, far did, the dice, near first now)
    let cases = [
        (false, false, "[5, 2]", true),
        (true, false, "[2, 5]", false),
        (true, false, "[3, 3]", true),
        (false, true, "[3, 3]", false),
        (false, false, "[3, 3, 2, 6]", false),
    ];
    for (near, far, rolls, want) in cases {
        let text = format!(
            "procedure = \"initiative\"\nrolls = {rolls}\n\
             [sides.near]\nmoves_first = {near}\n[sides.far]\nmoves_first = {far}\n"
        );
        let s = common::situation(&mut b, &text);
        let o = b.scripted(&s).expect("the dice are scripted");
        assert_eq!(
            p(&o, "near_first", Value::Bool(want)),
            1.0,
            "{near} {far} {rolls}"
        );
    }
}

/// The end of a game (the book names none; the port's reading): an army is
/// beaten when more than half its units are destroyed, or when every unit
/// it has left is demoralized.
#[test]
fn an_army_is_beaten_by_half_its_units_or_demoralization() {
    let mut b = thistle();
    let army = |removed: usize, facts: &str| {
        let mut text =
            format!("procedure = \"army_morale\"\nfacts = [{facts}]\n[args]\ns = \"near\"\n");
        for i in 0..4 {
            text.push_str(&format!(
                "[units.u{i}]\ntype = \"Pikes\"\nside = \"near\"\n"
            ));
            if i < removed {
                text.push_str(&format!(
                    "[units.u{i}.state]\nremoved = true\noff_table = true\n"
                ));
            }
        }
        text
    };
    for (removed, facts, beaten) in [
        (2, "", false),
        (3, "", true),
        (2, "\"demoralized(u2)\"", false),
        (2, "\"demoralized(u2)\", \"demoralized(u3)\"", true),
    ] {
        let o = exact(&mut b, &army(removed, facts));
        assert_eq!(
            p(&o, "defeated", Value::Bool(beaten)),
            1.0,
            "{removed} removed, {facts}"
        );
    }
}

/// §Initiative: the high score chooses to go first or second. The winner
/// (near here) is offered the choice through the decision
/// `initiative_choice`; the shipped policies go first, and taking the
/// option (`go_second`) makes the loser the first player.
#[test]
fn the_initiative_winner_chooses_to_go_first_or_second() {
    let scene = reactions();
    let mut g = scene.start(1, true);
    let (near, far) = (0, 1);
    for (side, won) in [(near, true), (far, false)] {
        scene.set_side_state(&mut g, side, "won_initiative", Value::Bool(won));
        scene.set_side_state(&mut g, side, "moves_first", Value::Bool(won));
    }
    // The default policy scores going second below 0: near stays first.
    for s in [near, far] {
        g.decide_named("initiative_choice", &[Value::Side(s as u16)])
            .expect("the decision runs");
    }
    assert_eq!(scene.side_state(&g, near, "moves_first"), Value::Bool(true));
    assert!(runs(&g, "go_second").is_empty(), "{}", g.narrative());
    // Going second: the option the winner's first unit takes.
    let first = scene.unit(&g, "gensdarmes");
    g.perform_named("go_second", &[Value::Unit(first as u16)])
        .expect("go_second runs");
    assert_eq!(
        scene.side_state(&g, near, "moves_first"),
        Value::Bool(false)
    );
    assert_eq!(scene.side_state(&g, far, "moves_first"), Value::Bool(true));
}

/// tests/scenarios/thistle_gaps.toml.
fn gaps() -> Scene {
    Scene::open(
        "rules/thistle_lily_and_rose.muster",
        "thistle_gaps.toml",
        &[],
        0.0,
    )
}

/// §Charges: a charger at least partly within the enemy's front must
/// charge the enemy's front (`frontal`). On thistle_gaps.toml the lancers,
/// turned 45 degrees left, have a corner in the front zone of the Scottish
/// pikes; their cheapest path (0.8" straight on) meets the pikes' front
/// corner with the lancers reaching past the line of its front edge, on its
/// flank, and no wheel of 45 degrees or less brings them onto its front
/// without going through it: the charge is not made. Before the fix they
/// went in on that corner.
#[test]
fn a_charger_partly_in_front_must_charge_the_front() {
    let scene = gaps();
    let mut g = english_first(&scene, 1);
    let before = base_of(&scene, &g, "lancers");
    let (l, t) = (scene.unit(&g, "lancers"), scene.unit(&g, "target"));
    g.perform_named(
        "declare_charge",
        &[Value::Unit(l as u16), Value::Unit(t as u16), Value::Int(1)],
    )
    .expect("declared");
    g.decide_named("charge_moves", &[Value::Int(1)])
        .expect("charges move");
    assert!(runs(&g, "charge_made").is_empty(), "{}", g.narrative());
    assert!(
        g.narrative().contains("lancers stays: cannot reach target"),
        "{}",
        g.narrative()
    );
    assert_eq!(base_of(&scene, &g, "lancers"), before);
    assert!(!touching(&scene, &g, "lancers", "target"));
}

/// §Charges: the reach check agrees with the front-before-flank rule. On
/// thistle_gaps.toml the lancers are partly within the Scottish pikes'
/// front and could strike only their flank within 45 degrees of wheel:
/// `group_reachable` (any contact) says they reach, the front-only
/// `group_reachable_front` says not, so `can_reach` and `may_charge` are
/// false and the declaration offers no such charge. Before the fix
/// `can_reach` was true and the charge was declared, then not made.
#[test]
fn a_charger_partly_in_front_is_not_offered_a_flank_charge() {
    let mut t = Table::open("thistle_gaps.toml");
    assert_eq!(
        t.eval("partly_in_front(lancers, target)"),
        Value::Bool(true)
    );
    assert_eq!(
        t.eval("group_reachable(lancers, target, 12, 45)"),
        Value::Bool(true)
    );
    assert_eq!(
        t.eval("group_reachable_front(lancers, target, 12, 45)"),
        Value::Bool(false)
    );
    assert_eq!(t.eval("can_reach(lancers, target)"), Value::Bool(false));
    assert_eq!(t.eval("may_charge(lancers, target)"), Value::Bool(false));
    // thistle_group_charge.toml: a group squarely before the enemy reaches
    // its front as it reaches it at all (the measure refuses only paths
    // that end on a flank).
    let first = |u: &str| format!("first u: u.side == {u} and u is Pikes");
    let mut g = Table::open("thistle_group_charge.toml");
    for (reach, ok) in [(6, true), (2, false)] {
        let ask = format!(
            "group_reachable_front({}, {}, {reach}, 0)",
            first("near"),
            first("far")
        );
        assert_eq!(g.eval(&ask), Value::Bool(ok), "{ask}");
    }
    t.decide("declare_charges", &[Value::Side(0)]);
    assert_eq!(t.eval("declared(lancers, target)"), Value::Int(0));
}

/// §Defeated in Melee: a retreat flees the enemy directly, backs to it,
/// and §Movement: a group retires at half speed including a wheel. On
/// thistle_gaps.toml two shot in a group have Scottish pikes on their right
/// flank: made to retreat, the group first pivots in place to face them
/// (`face_enemy`, 86 degrees: the pikes' centre is a little ahead of the
/// line), then goes a full move (12") straight back, away from them, and
/// turns about. Before the fix it could only turn about, and fled straight
/// back from its old front, across the pikes' front. A group is offered
/// the back wheel (half its move) among its moves.
#[test]
fn a_retreat_flees_an_enemy_on_the_flank_directly() {
    let scene = gaps();
    let mut g = english_first(&scene, 1);
    let flankers = base_of(&scene, &g, "flankers").centre;
    let start = base_of(&scene, &g, "shot_a").centre;
    // The group's outline is centred between its two units.
    let middle = base_of(&scene, &g, "shot_b").centre;
    let (mx, my) = ((start.x + middle.x) / 2.0, (start.y + middle.y) / 2.0);
    for n in ["shot_a", "shot_b"] {
        scene.set_state(&mut g, n, "must_retreat", Value::Bool(true));
    }
    g.decide_named("face_enemy", &[Value::Side(0)])
        .expect("faces");
    let faced = base_of(&scene, &g, "shot_a");
    let bearing = (flankers.x - mx).atan2(flankers.y - my).to_degrees();
    assert!((faced.facing - bearing).abs() < 1e-6, "{faced:?} {bearing}");
    assert!((faced.facing - 86.0).abs() < 1.0, "{faced:?}");
    g.decide_named("retreat_moves", &[Value::Side(0)])
        .expect("retreats");
    let a = base_of(&scene, &g, "shot_a");
    let b = base_of(&scene, &g, "shot_b");
    // 12" straight away from the flankers, backs to them; still one group.
    let away = |x: f64, y: f64| ((x - flankers.x).powi(2) + (y - flankers.y).powi(2)).sqrt();
    let (ax, ay) = (
        (a.centre.x + b.centre.x) / 2.0,
        (a.centre.y + b.centre.y) / 2.0,
    );
    assert!(
        (away(ax, ay) - away(mx, my) - 12.0).abs() < 1e-6,
        "{a:?}\n{}",
        g.narrative()
    );
    assert!((a.facing - (faced.facing + 180.0)).abs() < 1e-6, "{a:?}");
    assert!((b.facing - a.facing).abs() < 1e-9);
    assert!(
        g.narrative()
            .contains("shot_a falls back 12.0, turning about with shot_b"),
        "{}",
        g.narrative()
    );
    // The wheeling retire: offered to a group of shot at half its move.
    let offered = g
        .offered_moves("move", &[Value::Side(0)], scene.unit(&g, "shot_c") as u16)
        .expect("moves offered");
    let back_wheels: Vec<&String> = offered
        .iter()
        .map(|(how, _)| how)
        .filter(|how| how.contains("and moves back"))
        .collect();
    assert_eq!(back_wheels.len(), 8, "{offered:?}");
    assert!(
        back_wheels.iter().all(|h| h.starts_with("wheels")),
        "{back_wheels:?}"
    );
}

/// §Movement: units join or leave a group, or are rearranged within it,
/// and then the group as a whole does not move. A unit doing so moves on
/// its own (`regroup`, a decision for the policy, which the shipped
/// policies never take): its check (`regroup_check`, run where it stands
/// once its move is chosen) stops the group it was in, and `regrouped` the
/// group it ends in.
#[test]
fn a_unit_leaving_its_group_stops_the_group() {
    let scene = gaps();
    let mut g = english_first(&scene, 1);
    let d = scene.unit(&g, "shot_d");
    // The shipped policy leaves groups as they are.
    g.decide_named("regroup", &[Value::Side(0)])
        .expect("regroup");
    assert!(runs(&g, "regroup_check").is_empty(), "{}", g.narrative());
    assert!(!scene.bool(&g, "shot_c", "moved"));
    // shot_d steps 3" to the right, out of the group, and the group stays.
    g.perform_named("regroup_check", &[Value::Unit(d as u16)])
        .expect("checked");
    let mut moved = base_of(&scene, &g, "shot_d");
    moved.centre.x += 3.0;
    g.world.field.as_mut().unwrap().bases[d] = moved;
    g.perform_named("regrouped", &[Value::Unit(d as u16)])
        .expect("regrouped");
    assert!(scene.bool(&g, "shot_c", "moved"), "the group it left stays");
    assert!(scene.bool(&g, "shot_d", "moved"), "the unit moved");
    assert!(
        !scene.bool(&g, "shot_a", "moved"),
        "other groups move as they please"
    );
}

/// §Charges: a charger partly within its target's front must charge that
/// front, also when a friend already touching the front leaves it only a
/// way round to a flank. On thistle_front_blocked.toml the lancers stand
/// 4.6" before the Scottish pikes, partly in their front, with English
/// shot (screen) touching the pikes' front between them: no path reaches
/// the front (none passes through the screen), so `can_reach` is false and
/// no charge is declared (the port's reading: the charge is not made,
/// rather than made onto the flank). With the screen gone the front is
/// open and the same lancers may charge it.
#[test]
fn a_charger_whose_target_s_front_a_friend_holds_does_not_charge_its_flank() {
    let mut t = Table::open("thistle_front_blocked.toml");
    assert_eq!(t.eval("in_contact(screen, target)"), Value::Bool(true));
    assert_eq!(
        t.eval("partly_in_front(lancers, target)"),
        Value::Bool(true)
    );
    assert_eq!(
        t.eval("group_reachable_front(lancers, target, group_move(lancers), 45)"),
        Value::Bool(false)
    );
    assert_eq!(t.eval("can_reach(lancers, target)"), Value::Bool(false));
    assert_eq!(t.eval("may_charge(lancers, target)"), Value::Bool(false));
    t.decide("declare_charges", &[Value::Side(0)]);
    assert_eq!(t.eval("declared(lancers, target)"), Value::Int(0));
    common::table::place(&mut t.game, "screen", 10.0, 10.0, None);
    assert_eq!(
        t.eval("group_reachable_front(lancers, target, group_move(lancers), 45)"),
        Value::Bool(true)
    );
    assert_eq!(t.eval("can_reach(lancers, target)"), Value::Bool(true));
    assert_eq!(t.eval("may_charge(lancers, target)"), Value::Bool(true));
}
