//! Never Mind the Matchlocks (work in progress): the book's worked examples
//! that a single resolution holds (a Battalia's volley, skirmishers halving,
//! melee dice, the morale examples, points), and exact odds of a volley and
//! of the Morale Crisis Test under each reroll case, against closed forms
//! worked out here and against sampling.

#![allow(clippy::result_large_err)]

use crate::common;

use common::{binomial, exact, p, sampled, situation, sym};
use muster::base::value::Value;
use muster::run::odds::Odds;
use muster::Build;

fn matchlocks() -> Build {
    common::ruleset("rules/never_mind_the_matchlocks.muster")
}

fn query(b: &mut Build, text: &str, e: &str) -> Value {
    let s = situation(b, text);
    match b.query(&s, e) {
        Ok((v, _)) => v,
        Err(d) => panic!(
            "{e}: {}",
            muster::front::diagnostic::render_plain(&d, &b.sources)
        ),
    }
}

/// A Battalia shooting at another; `state` lines go under the shooter.
fn volley(actions: i64, facts: &str, shooter_state: &str, target: &str) -> String {
    format!(
        "procedure = \"volley\"\nfacts = [{facts}]\n[args]\ns = \"shooter\"\nt = \"target\"\nactions = {actions}\n\
         [units.shooter]\ntype = \"Battalia\"\nside = \"first_army\"\n\
         [units.shooter.state]\n{shooter_state}\n\
         [units.target]\ntype = \"{target}\"\nside = \"second_army\"\n"
    )
}

fn assert_dist(o: &Odds, outcome: &str, want: &[f64], what: &str) {
    for (k, pk) in want.iter().enumerate() {
        let got = p(o, outcome, Value::Int(k as i64));
        assert!(
            (got - pk).abs() < 1e-12,
            "{what}: P({outcome} = {k}) = {got}, want {pk}"
        );
    }
}

// ------------------------------------------------------------------ shooting

/// §XI Shooting Examples: a full Battalia's 16 musketeers in two ranks roll
/// 8 dice a volley, 16 for two Shoot actions; 5+ within 9", 6 beyond.
/// Against a Battalia (saving on 5+) each die kills with 1/3 x 2/3 = 2/9,
/// so the kills are Binomial(8, 2/9) exactly.
#[test]
fn a_full_battalia_volley() {
    let mut b = matchlocks();
    // A later volley (no seasoned first-volley reroll).
    let o = exact(&mut b, &volley(1, "", "volleys = 1", "Battalia"));
    assert_eq!(
        o.get("dice").unwrap().p(Value::Int(8)).fraction(),
        Some((1, 1))
    );
    assert_dist(&o, "hits", &binomial(8, 1.0 / 3.0), "hits");
    assert_dist(&o, "kills", &binomial(8, 2.0 / 9.0), "kills");
    // Two Shoot actions, long range: 16 dice hitting on 6.
    let o = exact(
        &mut b,
        &volley(
            2,
            "\"not short_range(shooter, target)\"",
            "volleys = 1",
            "Battalia",
        ),
    );
    assert_eq!(
        o.get("dice").unwrap().p(Value::Int(16)).fraction(),
        Some((1, 1))
    );
    assert_dist(&o, "hits", &binomial(16, 1.0 / 6.0), "long hits");
    assert_dist(&o, "kills", &binomial(16, 1.0 / 9.0), "long kills");
    // The seasoned musketeers' first volley rerolls 1s: 7/18 a hit.
    let o = exact(&mut b, &volley(1, "", "volleys = 0", "Battalia"));
    assert_dist(&o, "hits", &binomial(8, 7.0 / 18.0), "first volley");
    assert_dist(&o, "kills", &binomial(8, 7.0 / 27.0), "first volley kills");
    // With cover the musketeers save on 4+: 1/3 x 1/2 = 1/6 a die.
    let o = exact(
        &mut b,
        &volley(1, "\"in_cover(target)\"", "volleys = 1", "Battalia"),
    );
    assert_dist(&o, "kills", &binomial(8, 1.0 / 6.0), "cover kills");
    // Horse save on 4+ in the open: 1/6 a die.
    let o = exact(&mut b, &volley(1, "", "volleys = 1", "Harquebusiers"));
    assert_dist(&o, "kills", &binomial(8, 1.0 / 6.0), "horse kills");
}

#[test]
fn sampling_agrees_with_the_volley() {
    let mut b = matchlocks();
    let n = 300_000u64;
    for (facts, q) in [("", 2.0 / 9.0), ("\"in_cover(target)\"", 1.0 / 6.0)] {
        let text = volley(1, facts, "volleys = 1", "Battalia");
        let s = sampled(&mut b, &text, n, 5);
        for (k, pk) in binomial(8, q).iter().enumerate().take(5) {
            let ps = p(&s, "kills", Value::Int(k as i64));
            let se = (pk * (1.0 - pk) / n as f64).sqrt();
            assert!(
                (ps - pk).abs() < 4.5 * se,
                "[{facts}] P({k}) sampled {ps}, exact {pk}"
            );
        }
    }
}

/// §VII The Bonus Deck: Reroll and Jeopardy on a volley's hand of hit
/// dice (`cards_on_volley`). A full Battalia rolls 8 dice hitting on 5+
/// (1/3 each). Holding Reroll, its side rerolls the whole hand when fewer
/// than half (0-3) hit: P(hits = k) = P(first = k, k >= 4) + P(first <= 3)
/// x P(second = k). An enemy holding Jeopardy makes it reroll one hitting
/// die when half or more hit: that die stays a hit with 1/3. Each card is
/// played (and given up) exactly when its condition holds.
#[test]
fn reroll_and_jeopardy_on_a_volley() {
    let mut b = matchlocks();
    let base = volley(1, "", "volleys = 1", "Battalia");
    let bin = binomial(8, 1.0 / 3.0);
    let low: f64 = bin[..4].iter().sum();
    let o = exact(
        &mut b,
        &format!("{base}[sides.first_army]\nholds_reroll = true\n"),
    );
    let want: Vec<f64> = (0..=8)
        .map(|k| (if k >= 4 { bin[k] } else { 0.0 }) + low * bin[k])
        .collect();
    assert_dist(&o, "hits", &want, "Reroll");
    assert!((p(&o, "reroll_card", Value::Bool(true)) - low).abs() < 1e-12);
    let o = exact(
        &mut b,
        &format!("{base}[sides.second_army]\nholds_jeopardy = true\n"),
    );
    let want: Vec<f64> = (0..=8)
        .map(|k| {
            let kept = if k < 4 { bin[k] } else { 0.0 };
            let missed = if (3..8).contains(&k) {
                bin[k + 1] * 2.0 / 3.0
            } else {
                0.0
            };
            let hit_again = if k >= 4 { bin[k] / 3.0 } else { 0.0 };
            kept + missed + hit_again
        })
        .collect();
    assert_dist(&o, "hits", &want, "Jeopardy");
    assert!((p(&o, "jeopardy_card", Value::Bool(true)) - (1.0 - low)).abs() < 1e-12);
    // Neither card: the plain volley.
    let o = exact(&mut b, &base);
    assert_dist(&o, "hits", &bin, "no card");
}

/// §XI Shooting Examples: five skirmishers shooting at skirmishers halve
/// 5 dice to 2.5, rounded up to 3.
#[test]
fn five_skirmishers_halve_to_three_dice() {
    let mut b = matchlocks();
    let text = "procedure = \"volley\"\n[args]\ns = \"shooter\"\nt = \"target\"\nactions = 1\n\
                [units.shooter]\ntype = \"Musketeer Detachment\"\nside = \"first_army\"\n\
                [units.shooter.state]\nkills = 1\n\
                [units.target]\ntype = \"Musketeer Detachment\"\nside = \"second_army\"\n";
    let o = exact(&mut b, text);
    assert_eq!(
        o.get("dice").unwrap().p(Value::Int(3)).fraction(),
        Some((1, 1))
    );
    assert_dist(&o, "kills", &binomial(3, 2.0 / 9.0), "skirmisher kills");
    // Against a Battalia they roll all five.
    let o = exact(
        &mut b,
        &text.replace(
            "[units.target]\ntype = \"Musketeer Detachment\"",
            "[units.target]\ntype = \"Battalia\"",
        ),
    );
    assert_eq!(
        o.get("dice").unwrap().p(Value::Int(5)).fraction(),
        Some((1, 1))
    );
}

/// §XI Saving Throws: artillery hits are kills with no save, one more
/// against a Pike Square.
#[test]
fn artillery_hits_kill_and_bounce_through_a_square() {
    let mut b = matchlocks();
    let gun = |target: &str| {
        format!(
            "procedure = \"volley\"\n[args]\ns = \"gun\"\nt = \"target\"\nactions = 1\n\
             [units.gun]\ntype = \"Field Gun\"\nside = \"first_army\"\n\
             [units.target]\ntype = \"{target}\"\nside = \"second_army\"\n"
        )
    };
    let o = exact(&mut b, &gun("Battalia"));
    // 3 crew: 6 dice at 6.
    assert_eq!(
        o.get("dice").unwrap().p(Value::Int(6)).fraction(),
        Some((1, 1))
    );
    assert_dist(&o, "kills", &binomial(6, 1.0 / 6.0), "gun kills");
    let o = exact(&mut b, &gun("Pike Square"));
    let hits = binomial(6, 1.0 / 6.0);
    assert!((p(&o, "kills", Value::Int(0)) - hits[0]).abs() < 1e-12);
    assert_eq!(p(&o, "kills", Value::Int(1)), 0.0, "one hit is two kills");
    for (k, hk) in hits.iter().enumerate().skip(1) {
        assert!(
            (p(&o, "kills", Value::Int(k as i64 + 1)) - hk).abs() < 1e-12,
            "{k}"
        );
    }
}

// ------------------------------------------------------------------ melee

/// §XII The First Round: a full Battalia rolls 16 dice (8 pikes x 1, 16
/// musketeers x 1/2); a Squadron 12 (8 x 1.5); after 7 kills a Battalia
/// 8 + 9/2 = 12.5, rounded up to 13. (More pools, with Disarray, flanks
/// and Hedgehogs, in tests/matchlocks_melee.rs.)
#[test]
fn melee_dice_of_the_first_round() {
    let mut b = matchlocks();
    // `u` attacks a Battalia `f` in the first round.
    let unit = |ty: &str, kills: i64| {
        format!(
            "[units.u]\ntype = \"{ty}\"\nside = \"first_army\"\n[units.u.state]\nkills = {kills}\n\
             [units.f]\ntype = \"Battalia\"\nside = \"second_army\"\n"
        )
    };
    assert_eq!(
        query(&mut b, &unit("Battalia", 0), "fighting_dice(u, f, true, 1)"),
        Value::Int(16)
    );
    assert_eq!(
        query(
            &mut b,
            &unit("Harquebusiers", 0),
            "fighting_dice(u, f, true, 1)"
        ),
        Value::Int(12)
    );
    assert_eq!(
        query(&mut b, &unit("Battalia", 7), "fighting_dice(u, f, true, 1)"),
        Value::Int(13)
    );
    assert_eq!(
        query(
            &mut b,
            &unit("Musketeer Division", 0),
            "fighting_dice(u, f, true, 1)"
        ),
        Value::Int(6)
    );
    assert_eq!(
        query(
            &mut b,
            &unit("Pike Square", 0),
            "fighting_dice(u, f, true, 1)"
        ),
        Value::Int(24)
    );
    assert_eq!(
        query(
            &mut b,
            &unit("Cuirassiers", 3),
            "fighting_dice(u, f, true, 1)"
        ),
        Value::Int(8)
    );
    // Mounted dragoons 1 a figure, on foot 1/2; skirmishers 1/2.
    assert_eq!(
        query(&mut b, &unit("Dragoons", 0), "fighting_dice(u, f, true, 1)"),
        Value::Int(8)
    );
    let on_foot = format!("facts = [\"dismounted(u)\"]\n{}", unit("Dragoons", 0));
    assert_eq!(
        query(&mut b, &on_foot, "fighting_dice(u, f, true, 1)"),
        Value::Int(4)
    );
    assert_eq!(
        query(
            &mut b,
            &unit("Musketeer Detachment", 0),
            "fighting_dice(u, f, true, 1)"
        ),
        Value::Int(3)
    );
}

// ------------------------------------------------------------------ points

/// §IV Points Values: a veteran Battalia costs 30, a raw Squadron of
/// Harquebusiers 12; the Mustering the Forces example: a core of 2
/// Battalia and 2 Squadrons (80), dealt 2 skirmisher Detachments, 2
/// Squadrons, a Battalia and a Field Gun (157), one more card: a Light Gun
/// (163) or a Battalia (181).
#[test]
fn points() {
    let mut b = matchlocks();
    let one = |ty: &str, q: &str| {
        format!("[units.u]\ntype = \"{ty}\"\nquality = \"{q}\"\nside = \"first_army\"\n")
    };
    assert_eq!(
        query(&mut b, &one("Battalia", "veteran"), "unit_points(u)"),
        Value::Int(30)
    );
    assert_eq!(
        query(&mut b, &one("Harquebusiers", "raw"), "unit_points(u)"),
        Value::Int(12)
    );
    assert_eq!(
        query(
            &mut b,
            &one("Musketeer Detachment", "veteran"),
            "unit_points(u)"
        ),
        Value::Int(8)
    );
    assert_eq!(
        query(&mut b, &one("Cuirassiers", "seasoned"), "unit_points(u)"),
        Value::Int(20)
    );
    let army = |tys: &[&str]| {
        tys.iter()
            .enumerate()
            .map(|(i, t)| format!("[units.u{i}]\ntype = \"{t}\"\nside = \"first_army\"\n"))
            .collect::<String>()
    };
    let core = ["Battalia", "Battalia", "Harquebusiers", "Harquebusiers"];
    assert_eq!(
        query(&mut b, &army(&core), "army_points(first_army)"),
        Value::Int(80)
    );
    let mut dealt = core.to_vec();
    dealt.extend([
        "Musketeer Detachment",
        "Musketeer Detachment",
        "Harquebusiers",
        "Harquebusiers",
        "Battalia",
        "Field Gun",
    ]);
    assert_eq!(
        query(&mut b, &army(&dealt), "army_points(first_army)"),
        Value::Int(157)
    );
    let mut battalia = dealt.clone();
    dealt.push("Light Gun");
    assert_eq!(
        query(&mut b, &army(&dealt), "army_points(first_army)"),
        Value::Int(163)
    );
    // ... or another Battalia of Foot (181).
    battalia.push("Battalia");
    assert_eq!(
        query(&mut b, &army(&battalia), "army_points(first_army)"),
        Value::Int(181)
    );
}

// ------------------------------------------------------------------ morale

fn morale(ty: &str, quality: &str, kills: i64, facts: &str, state: &str) -> String {
    format!(
        "procedure = \"morale_test\"\nfacts = [{facts}]\n[args]\nu = \"u\"\n\
         [units.u]\ntype = \"{ty}\"\nquality = \"{quality}\"\nside = \"first_army\"\n\
         [units.u.state]\nkills = {kills}\n{state}\n"
    )
}

/// One die's faces with a reroll of face `r` (0: none): each of 1..6.
fn die(r: i64) -> Vec<f64> {
    (1..=6)
        .map(|f| match r {
            0 => 1.0 / 6.0,
            _ if f == r => 1.0 / 36.0,
            _ => 7.0 / 36.0,
        })
        .collect()
}

/// The closed form of a test: pass / daunted / broken for `n` dice (1 or
/// 2) plus `bonus`, after `kills`, with faces `r` rerolled.
fn morale_closed_form(n: usize, bonus: i64, kills: i64, r: i64) -> [f64; 3] {
    let d = die(r);
    let mut out = [0.0; 3];
    let seconds: Vec<(i64, f64)> = if n == 2 {
        (1..=6).map(|f| (f, d[f as usize - 1])).collect()
    } else {
        vec![(0, 1.0)]
    };
    for a in 1..=6i64 {
        for &(b2, pb) in &seconds {
            let pr = d[a as usize - 1] * pb;
            let t = a + b2 + bonus;
            let k = if n == 2 && a == 6 && b2 == 6 {
                0
            } else if (n == 2 && a == 1 && b2 == 1) || t <= 4 {
                2
            } else if t > kills {
                0
            } else {
                1
            };
            out[k] += pr;
        }
    }
    out
}

/// §XIII the book's examples: a Squadron that has lost 4 (1d6+2) passes on
/// 3 or more and is otherwise Broken (never Daunted); a Battalia that has
/// lost 7 (2d6+1) passes on 7 or more, is Daunted on 4, 5 or 6 (the book
/// names 5 and 6; see the ruleset's reading) and Broken on 2 or 3.
#[test]
fn the_book_s_morale_examples() {
    let mut b = matchlocks();
    let o = exact(&mut b, &morale("Harquebusiers", "seasoned", 4, "", ""));
    let r = o.get("result").unwrap();
    assert_eq!(r.p(sym(&b, "passed")).fraction(), Some((2, 3)));
    assert_eq!(r.p(sym(&b, "broken")).fraction(), Some((1, 3)));
    assert!(r.p(sym(&b, "daunted")).is_zero());
    let o = exact(&mut b, &morale("Battalia", "seasoned", 7, "", ""));
    let r = o.get("result").unwrap();
    assert_eq!(r.p(sym(&b, "passed")).fraction(), Some((7, 12)));
    assert_eq!(r.p(sym(&b, "daunted")).fraction(), Some((1, 3)));
    assert_eq!(r.p(sym(&b, "broken")).fraction(), Some((1, 12)));
}

/// §XIII Rerolls under each combination: positives only (reroll 1s),
/// negatives only (reroll 6s), and both cancelling (no reroll), for 2d6+1,
/// 2d6, 1d6+2 and 1d6 units, against the closed form and against sampling.
#[test]
fn the_morale_test_under_each_reroll_case() {
    let mut b = matchlocks();
    let n = 120_000u64;
    // (type, quality, kills, facts, state, dice, bonus, rerolled face)
    let cases = [
        ("Battalia", "veteran", 6, "", "", 2, 1, 1),
        ("Battalia", "raw", 6, "", "", 2, 1, 6),
        ("Battalia", "veteran", 6, "", "disarray = 1", 2, 1, 0),
        ("Battalia", "seasoned", 0, "", "", 2, 1, 1),
        (
            "Musketeer Division",
            "raw",
            8,
            "\"attacked_in_flank_or_rear(u)\"",
            "",
            2,
            0,
            6,
        ),
        (
            "Musketeer Division",
            "seasoned",
            3,
            "\"won_melee(u)\"",
            "daunted = true",
            2,
            0,
            0,
        ),
        (
            "Harquebusiers",
            "veteran",
            5,
            "\"won_melee(u)\"",
            "",
            1,
            2,
            1,
        ),
        (
            "Cuirassiers",
            "raw",
            6,
            "\"expert_leader_attached(u)\"",
            "",
            1,
            2,
            0,
        ),
        (
            "Musketeer Detachment",
            "seasoned",
            2,
            "\"brigade_gone(u)\"",
            "",
            1,
            0,
            6,
        ),
    ];
    for (ty, q, kills, facts, state, dice, bonus, r) in cases {
        let text = morale(ty, q, kills, facts, state);
        let want = morale_closed_form(dice, bonus, kills, r);
        let o = exact(&mut b, &text);
        let s = sampled(&mut b, &text, n, 23);
        for (i, name) in ["passed", "daunted", "broken"].iter().enumerate() {
            let pe = p(&o, "result", sym(&b, name));
            assert!(
                (pe - want[i]).abs() < 1e-12,
                "{ty} {q} {kills} [{facts}] {state}: {name} {pe} v {}",
                want[i]
            );
            let ps = p(&s, "result", sym(&b, name));
            let se = (want[i] * (1.0 - want[i]) / n as f64).sqrt().max(1e-9);
            assert!(
                (ps - want[i]).abs() < 4.5 * se,
                "{ty} {q}: {name} sampled {ps} v {}",
                want[i]
            );
        }
    }
}

/// The Morale Crisis Test's odds table (exact): each test's dice, kills
/// 0 to 9, seasoned and damaged (no reroll), veteran (reroll 1s), raw
/// (reroll 6s); pass / daunted / broken. Review a change as a reader of
/// §XIII would: broken never depends on kills, daunted grows with them.
#[test]
fn morale_odds_table() {
    let mut b = matchlocks();
    let mut out = String::from("unit                  quality  kills   passed  daunted   broken\n");
    for ty in [
        "Battalia",
        "Musketeer Division",
        "Harquebusiers",
        "Dragoons",
        "Musketeer Detachment",
    ] {
        for q in ["seasoned", "veteran", "raw"] {
            for kills in [1, 4, 5, 6, 7, 9] {
                let o = exact(&mut b, &morale(ty, q, kills, "", ""));
                out.push_str(&format!(
                    "{ty:<21} {q:<8} {kills:>5}   {:.4}   {:.4}   {:.4}\n",
                    p(&o, "result", sym(&b, "passed")),
                    p(&o, "result", sym(&b, "daunted")),
                    p(&o, "result", sym(&b, "broken")),
                ));
            }
        }
    }
    insta::assert_snapshot!("matchlocks_morale_odds", out);
}

// The doctrine dice and whole melee rounds: tests/matchlocks_melee.rs.

// ------------------------------------------------------------------ outcomes

/// Issue 34 (an outcome left unset reads `none`, none of its values): every
/// path through both books' procedures sets its listed outcomes, so both
/// check with no `muster::unset_outcome` but Matchlocks' joined attacks'
/// tactics (listed below). The paths the books leave
/// without one read the values the ports state: Harquebusiers in line
/// meeting Cuirassiers fight no melee when both Doctrine dice give Fire
/// and they only exchange pistol shots (the situation's 7/1296): `winner`
/// reads `unfought` then, and `result` reads `untested` whenever nobody
/// tests (the draws, the pistol shots, and a loser wiped out by the round),
/// so the four results add up to 1 with no `none` left.
#[test]
fn every_path_sets_the_books_outcomes() {
    for book in [
        "rules/never_mind_the_matchlocks.muster",
        "rules/thistle_lily_and_rose.muster",
    ] {
        let b = common::ruleset(book);
        let unset: Vec<&str> = b
            .ruleset
            .warnings
            .iter()
            .filter(|d| d.code == "muster::unset_outcome")
            .map(|d| d.message.as_str())
            .collect();
        // The check sees through `call`: a newcomer's attack (`call
        // joined_attack`) sets the tactics outcomes too (its ally's and the
        // attacked unit's), so no path of either book leaves one `none`.
        let known: &[&str] = &[];
        assert_eq!(unset, known, "{book}");
    }
    let mut b = matchlocks();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("rules/situations/matchlocks_horse_meet_horse.toml"),
    )
    .unwrap();
    let o = exact(&mut b, &text);
    let winner = o.get("winner").unwrap();
    assert_eq!(winner.p(sym(&b, "unfought")).fraction(), Some((7, 1296)));
    assert_eq!(winner.p(Value::None).fraction(), Some((0, 1)));
    let result = o.get("result").unwrap();
    assert_eq!(result.p(Value::None).fraction(), Some((0, 1)));
    let draw = p(&o, "winner", sym(&b, "draw"));
    let unfought = p(&o, "winner", sym(&b, "unfought"));
    let untested = p(&o, "result", sym(&b, "untested"));
    // Untested: every draw and pistol exchange, and a few wipe-outs.
    assert!(
        untested >= draw + unfought - 1e-12,
        "{untested} {draw} {unfought}"
    );
    let tested: f64 = ["passed", "daunted", "broken"]
        .iter()
        .map(|r| p(&o, "result", sym(&b, r)))
        .sum();
    assert!(
        (tested + untested - 1.0).abs() < 1e-12,
        "{tested} {untested}"
    );
}
