//! `muster compare`: one scenario played under two rulesets, game `i` on
//! the same seed under both, and what moved. The book (TVBD v1) against
//! the house rule `tvbd_steady_pike`, and the book against itself.

use crate::common;

use muster::battle::game::{GameSummary, Prepared, Result_};
use muster::battle::scenario::Scenario;
use muster::cli::compare::{compare, Comparison, Kind};
use muster::cli::simulate::Summary;
use muster::Build;
use std::path::Path;

const GAMES: u64 = 40;
const SEED: u64 = 1;

/// A ruleset of the repository with TVBD's default scenario read for it.
fn with_scenario(rel: &str) -> (Build, Scenario) {
    let mut b = common::ruleset(rel);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/scenarios/tvbd_default.toml");
    let sc = b.scenario(Some(&file)).unwrap();
    (b, sc)
}

fn play(p: &Prepared) -> Vec<GameSummary> {
    muster::cli::simulate::play(p, GAMES, SEED, &|| {}).unwrap()
}

/// The book (A) against ruleset `rel` (B): the comparison, and each
/// side's games with its summary from `simulate::run`.
fn book_against(rel: &str) -> (Comparison, [(Vec<GameSummary>, Summary); 2]) {
    let (ba, sa) = with_scenario("rules/tillys_very_bad_day.muster");
    let (bb, sb) = with_scenario(rel);
    let pa = Prepared::new(&ba.ruleset, &sa).unwrap();
    let pb = Prepared::new(&bb.ruleset, &sb).unwrap();
    let (ga, gb) = (play(&pa), play(&pb));
    let cmp = compare(&pa, &ga, &pb, &gb, SEED).unwrap();
    let run = |p: &Prepared| muster::cli::simulate::run(p, GAMES, SEED, &|| {}).unwrap();
    let (ra, rb) = (run(&pa), run(&pb));
    (cmp, [(ga, ra), (gb, rb)])
}

/// The difference of a paired yes/no measure by its closed form: with
/// `up` games where only B says yes and `down` where only A does, the mean
/// difference is (up - down) / n and the differences' sample variance is
/// (up + down - n * mean^2) / (n - 1).
fn binary_interval(a: &[bool], b: &[bool]) -> (f64, f64, f64) {
    let n = a.len() as f64;
    let up = a.iter().zip(b).filter(|(x, y)| !**x && **y).count() as f64;
    let down = a.iter().zip(b).filter(|(x, y)| **x && !**y).count() as f64;
    let mean = (up - down) / n;
    let var = (up + down - n * mean * mean) / (n - 1.0);
    let half = muster::cli::compare::t95(a.len() as u64 - 1) * (var / n).sqrt();
    (mean, mean - half, mean + half)
}

/// Each side's summary is what `simulate` gives for the same seed and
/// games; each result's difference and interval match the closed form for
/// paired yes/no outcomes, counted here from the games themselves; game
/// length's difference is the difference of the two means.
#[test]
fn the_house_rule_against_the_book() {
    let (cmp, [(ga, ra), (gb, rb)]) = book_against("rules/tvbd_steady_pike.muster");
    assert_eq!(cmp.games, GAMES);
    assert_eq!(
        cmp.rulesets,
        [
            "Tilly's Very Bad Day (v1)".to_string(),
            "Tilly's Very Bad Day (v1) with steady pike".to_string()
        ]
    );
    // Summaries: as simulate's own.
    assert_eq!(cmp.a, ra);
    assert_eq!(cmp.b, rb);
    let shift = |name: &str| {
        cmp.shifts
            .iter()
            .find(|s| s.measure == name)
            .unwrap_or_else(|| panic!("no measure {name}: {cmp:#?}"))
    };
    type Yes = fn(&GameSummary) -> bool;
    let results: [(&str, Yes); 4] = [
        ("Blue army (cavalry heavy) wins", |g| {
            g.result == Result_::Won(0)
        }),
        ("Red army (infantry heavy) wins", |g| {
            g.result == Result_::Won(1)
        }),
        ("draws", |g| g.result == Result_::Draw),
        ("undecided at the turn limit", |g| {
            g.result == Result_::TurnLimit
        }),
    ];
    for (name, yes) in &results {
        let a: Vec<bool> = ga.iter().map(yes).collect();
        let b: Vec<bool> = gb.iter().map(yes).collect();
        let s = shift(name);
        assert_eq!(s.kind, Kind::Share);
        let count = |v: &[bool]| v.iter().filter(|x| **x).count() as f64 / GAMES as f64;
        assert_eq!((s.a, s.b), (count(&a), count(&b)), "{name}");
        let (m, lo, hi) = binary_interval(&a, &b);
        let near = |x: f64, y: f64| (x - y).abs() < 1e-12 || (x.is_nan() && y.is_nan());
        assert!(
            near(s.diff, m) && near(s.low, lo) && near(s.high, hi),
            "{name}: {s:?} against {m} {lo} {hi}"
        );
        assert_eq!(s.moved, lo > 0.0 || hi < 0.0, "{name}");
    }
    // The win rates are simulate's.
    assert_eq!(
        shift("Blue army (cavalry heavy) wins").a,
        cmp.a.wins[0].rate
    );
    assert_eq!(
        shift("Red army (infantry heavy) wins").b,
        cmp.b.wins[1].rate
    );
    let length = shift("game length");
    assert_eq!(length.kind, Kind::Turns);
    assert!((length.a - cmp.a.mean_turns).abs() < 1e-12);
    assert!((length.b - cmp.b.mean_turns).abs() < 1e-12);
    assert!((length.diff - (cmp.b.mean_turns - cmp.a.mean_turns)).abs() < 1e-12);
    assert!(length.low <= length.diff && length.diff <= length.high);
    // Losses by type: each army's six types, the means simulate reports.
    for (army, name) in cmp.a.armies.iter().enumerate() {
        for (la, lb) in cmp.a.losses[army].iter().zip(&cmp.b.losses[army]) {
            assert_eq!(la.unit_type, lb.unit_type);
            let s = shift(&format!("{name} loses {}", la.unit_type));
            assert_eq!(s.kind, Kind::Units);
            assert!((s.a - la.mean_lost).abs() < 1e-12, "{s:?} {la:?}");
            assert!((s.b - lb.mean_lost).abs() < 1e-12, "{s:?} {lb:?}");
        }
    }
    assert_eq!(cmp.shifts.len(), 4 + 1 + 12);
    insta::assert_snapshot!("tvbd_against_steady_pike", cmp.to_string());
}

/// The book against itself: the same games, so every difference is 0 with
/// no spread and nothing moved.
#[test]
fn the_book_against_itself_moves_nothing() {
    let (cmp, [(ga, _), (gb, _)]) = book_against("rules/tillys_very_bad_day.muster");
    assert_eq!(ga.len(), gb.len());
    for (x, y) in ga.iter().zip(&gb) {
        assert_eq!((&x.result, x.turns, &x.lost), (&y.result, y.turns, &y.lost));
    }
    assert_eq!(cmp.a, cmp.b);
    assert_eq!(cmp.shifts.len(), 17);
    for s in &cmp.shifts {
        assert_eq!(
            (s.diff, s.low, s.high, s.moved),
            (0.0, 0.0, 0.0, false),
            "{s:?}"
        );
        assert_eq!(s.a, s.b);
    }
    assert!(cmp.to_string().contains("0 of 17 measures moved"));
}

/// Runs of different lengths are not compared.
#[test]
fn runs_of_different_lengths_are_refused() {
    let (b, sc) = with_scenario("rules/tillys_very_bad_day.muster");
    let p = Prepared::new(&b.ruleset, &sc).unwrap();
    let g = muster::cli::simulate::play(&p, 3, SEED, &|| {}).unwrap();
    let err = compare(&p, &g, &p, &g[..2], SEED).unwrap_err();
    assert!(
        err.message.contains("3 games under A but 2 under B"),
        "{}",
        err.message
    );
    assert_eq!(compare(&p, &g, &p, &g, SEED).unwrap().games, 3);
}

/// The command line: a ruleset B that cannot play A's scenario is told so
/// (a diagnostic on the scenario file, naming ruleset B) with a non-zero
/// exit and nothing on standard output; `--json` gives the comparison as
/// data.
#[test]
fn the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = common::muster_in(
        dir,
        &[
            "compare",
            "rules/tillys_very_bad_day.muster",
            "rules/thistle_lily_and_rose.muster",
            "--runs",
            "10",
        ],
    );
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    // Two different games: one diagnostic saying so (tests/cli.rs).
    assert!(err.contains("two different games"), "{err}");
    assert!(err.contains("error: 1 problem found"), "{err}");
    let out = common::muster_in(
        dir,
        &[
            "compare",
            "rules/tillys_very_bad_day.muster",
            "rules/tillys_very_bad_day.muster",
            "--runs",
            "10",
            "--option-b",
            "variable_army_morale=on",
            "--json",
        ],
    );
    let j: serde_json::Value = serde_json::from_str(&common::succeeded(out)).unwrap();
    assert_eq!(j["comparison"]["games"], 10);
    assert_eq!(j["comparison"]["shifts"].as_array().unwrap().len(), 17);
    assert!(j["scenario"]
        .as_str()
        .unwrap()
        .ends_with("tvbd_default.toml"));
    let out = common::muster_in(
        dir,
        &[
            "compare",
            "rules/tillys_very_bad_day.muster",
            "rules/tillys_very_bad_day.muster",
            "--option-b",
            "no_such_rule=on",
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no option `no_such_rule`"));
}
