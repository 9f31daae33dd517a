//! How a player looks for its moves: `search = thorough` (a fixed fan of
//! manoeuvres) or `search = purposeful` (moves toward what the policy can
//! value), chosen in a policy or for an army; each the same game on any
//! thread count; the purposeful one weighing fewer moves; the option's
//! mistakes reported.

#![allow(clippy::result_large_err)]

use crate::common;
use muster::battle::game::{MoveStats, Prepared};
use muster::compile::ir::Search;

/// The candidate moves weighed in the first `n` games of a run seeded 1,
/// each decided alone.
fn weighed(prep: &Prepared, n: u64) -> MoveStats {
    let mut all = MoveStats::default();
    for i in 0..n {
        let seed = muster::cli::simulate::game_seed(1, i);
        all += prep.play(seed, false).unwrap().move_stats;
    }
    all
}

/// Both armies of TVBD's and Thistle's default scenarios searching
/// purposefully: the same summary on 1 thread and on 2, the same seeded
/// narrative twice; and not the thorough search's games.
#[test]
fn purposeful_games_are_the_same_on_any_thread_count() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/thistle_lily_and_rose.muster",
    ] {
        let mut b = common::ruleset(file);
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        let thorough = prep.play(3, true).unwrap().narrative();
        prep.search = vec![Some(Search::Purposeful); prep.policy.len()];
        let run = |threads: usize| common::simulate_on(&prep, threads, 12, 42);
        let one = run(1);
        assert_eq!(one, run(2), "{file}");
        assert_eq!(one.games, 12);
        let purposeful = prep.play(3, true).unwrap().narrative();
        assert_eq!(purposeful, prep.play(3, true).unwrap().narrative());
        assert_ne!(purposeful, thorough, "{file}: the searches play alike");
    }
}

/// In TVBD's default scenario the purposeful search makes about a quarter
/// of the thorough one's candidate moves per unit-turn (7.1 against 26.3
/// over 64 games), lays a path for about a quarter as many and scores
/// fewer than a third as many; every unit-turn still weighs a move.
#[test]
fn a_purposeful_search_weighs_fewer_moves() {
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    prep.openings = None;
    let thorough = weighed(&prep, 8);
    prep.search = vec![Some(Search::Purposeful); prep.policy.len()];
    let purposeful = weighed(&prep, 8);
    let per = |x: u64, m: &MoveStats| x as f64 / m.unit_turns as f64;
    let (t, p) = (&thorough, &purposeful);
    assert!(t.unit_turns > 500 && p.unit_turns > 500, "{t:?} {p:?}");
    assert!(
        per(t.generated, t) > 20.0 && per(p.generated, p) < 9.0,
        "{t:?} {p:?}"
    );
    assert!(per(p.laid, p) * 3.0 < per(t.laid, t), "{t:?} {p:?}");
    assert!(per(p.scored, p) * 3.0 < per(t.scored, t), "{t:?} {p:?}");
    assert!(p.legal == p.scored && p.legal > 0, "{p:?}");
}

/// `search = purposeful` in a policy plays as the army told to search
/// purposefully does; `search = thorough` as no option at all.
#[test]
fn the_policy_chooses_the_search() {
    let policy = |option: &str| {
        common::draft(&format!(
            r#"
extends "tillys_very_bad_day.muster"
override policy default "close in" {{
  {option}
  move => 0 - gap_to_enemy(u) + (if faces_nearest_enemy(u) then 2 else 0)
  shooting => 10 * s.resolve - t.resolve
}}
"#
        ))
    };
    let narrative = |option: &str, told: Option<Search>| {
        let mut b = policy(option);
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        if told.is_some() {
            prep.search = vec![told; prep.policy.len()];
        }
        prep.play(5, true).unwrap().narrative()
    };
    let purposeful = narrative("search = purposeful", None);
    assert_eq!(purposeful, narrative("", Some(Search::Purposeful)));
    let thorough = narrative("search = thorough", None);
    assert_eq!(thorough, narrative("", None));
    assert_ne!(purposeful, thorough);
}

/// A policy's option that is not `search`, a search that is not one, and
/// `search` said twice are reported with where and what to write.
#[test]
fn a_wrong_option_is_reported() {
    let refused = |body: &str| {
        common::draft_refused(&format!(
            "extends \"tillys_very_bad_day.muster\"\npolicy other {{\n  {body}\n}}\n"
        ))
    };
    let (codes, text) = refused("search = quick");
    assert_eq!(codes, ["muster::policy"], "{text}");
    assert!(text.contains("`quick` is not a search"), "{text}");
    assert!(text.contains("search = purposeful"), "{text}");
    let (codes, text) = refused("colour = red");
    assert_eq!(codes, ["muster::policy"], "{text}");
    assert!(text.contains("no option `colour`"), "{text}");
    let (codes, text) = refused("search = thorough\n  search = purposeful");
    assert_eq!(codes, ["muster::duplicate"], "{text}");
}
