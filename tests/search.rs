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
/// purposefully, as their shipped policies do: the same summary on 1
/// thread and on 2, the same seeded narrative twice; and not the thorough
/// search's games.
#[test]
fn purposeful_games_are_the_same_on_any_thread_count() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/thistle_lily_and_rose.muster",
    ] {
        let mut b = common::ruleset(file);
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        let shipped = prep.play(3, true).unwrap().narrative();
        prep.search = vec![Some(Search::Purposeful); prep.policy.len()];
        let run = |threads: usize| common::simulate_on(&prep, threads, 12, 42);
        let one = run(1);
        assert_eq!(one, run(2), "{file}");
        assert_eq!(one.games, 12);
        let purposeful = prep.play(3, true).unwrap().narrative();
        assert_eq!(purposeful, prep.play(3, true).unwrap().narrative());
        assert_eq!(
            purposeful, shipped,
            "{file}: the shipped player is purposeful"
        );
        prep.search = vec![Some(Search::Thorough); prep.policy.len()];
        let thorough = prep.play(3, true).unwrap().narrative();
        assert_ne!(purposeful, thorough, "{file}: the searches play alike");
    }
}

/// The shipped policies of TVBD (v1, and v2 which extends it) and Thistle:
/// `default` and `cautious` search purposefully; `thorough` is `default`'s
/// scores with the thorough search. Both armies playing `thorough` play
/// the game the `default` players play when told to search thoroughly,
/// and told to search purposefully, the shipped game.
#[test]
fn the_thorough_policy_is_the_default_searching_thoroughly() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/tillys_very_bad_day_v2.muster",
        "rules/thistle_lily_and_rose.muster",
    ] {
        let mut b = common::ruleset(file);
        let find = |name: &str| {
            let p = b.ruleset.policies.iter().position(|p| p.name == name);
            p.unwrap_or_else(|| panic!("{file}: no policy {name}"))
        };
        let (default, cautious, thorough) = (find("default"), find("cautious"), find("thorough"));
        let searches: Vec<_> = [default, cautious, thorough]
            .map(|p| b.ruleset.policies[p].search)
            .into();
        assert_eq!(
            searches,
            [Search::Purposeful, Search::Purposeful, Search::Thorough],
            "{file}"
        );
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        let mut game = |policy: usize, told: Option<Search>| {
            prep.policy = vec![Some(policy); prep.policy.len()];
            prep.search = vec![told; prep.policy.len()];
            prep.play(5, true).unwrap().narrative()
        };
        let shipped = game(default, None);
        let thorough_told = game(default, Some(Search::Thorough));
        assert_ne!(shipped, thorough_told, "{file}: the searches play alike");
        assert_eq!(game(thorough, None), thorough_told, "{file}");
        assert_eq!(game(thorough, Some(Search::Purposeful)), shipped, "{file}");
    }
}

/// The shipped choice is not the weaker player (issue 33): in TVBD's
/// default scenario, v1's and v2's, 100 games with the first army's player
/// purposeful and the second's thorough (the same scores: the `default`
/// and `thorough` policies), then 100 with the searches swapped, seeded
/// 2026: the purposeful player wins more of the 200 than the thorough one
/// (v2: 107 to 80). The 2,000-game figures (docs/LANGUAGE.md, Policies)
/// give it an excess win share of +0.39 (v1) and +0.31 (v2); Thistle's,
/// -0.02 within its interval, cannot be told from nothing in 200 games and
/// is not asserted here.
#[test]
fn the_purposeful_player_beats_the_thorough_one_in_tvbd() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/tillys_very_bad_day_v2.muster",
    ] {
        let mut b = common::ruleset(file);
        let find = |name: &str| b.ruleset.policies.iter().position(|p| p.name == name);
        let (default, thorough) = (find("default"), find("thorough"));
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        let (mut purposeful_won, mut thorough_won) = (0, 0);
        for swapped in [false, true] {
            prep.policy = if swapped {
                vec![thorough, default]
            } else {
                vec![default, thorough]
            };
            let s = common::simulate_on(&prep, 2, 100, 2026);
            let (p, t) = if swapped { (1, 0) } else { (0, 1) };
            purposeful_won += s.wins[p].count;
            thorough_won += s.wins[t].count;
        }
        assert!(
            purposeful_won > thorough_won,
            "{file}: purposeful {purposeful_won}, thorough {thorough_won} of 200"
        );
    }
}

/// In TVBD's default scenario the purposeful search makes about a third
/// of the thorough one's candidate moves per unit-turn (8.2 against 26.3
/// over the battle bench's 32 games), lays a path for under a third as
/// many and scores fewer than a third as many; every unit-turn still
/// weighs a move.
#[test]
fn a_purposeful_search_weighs_fewer_moves() {
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    prep.openings = None;
    prep.search = vec![Some(Search::Thorough); prep.policy.len()];
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
