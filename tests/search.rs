//! How a player looks for its moves: `search = thorough` (a fixed fan of
//! manoeuvres), `search = purposeful` (moves toward what the policy can
//! value) or `search = stand_off` (those and stops short of them), chosen
//! in a policy or for an army; each the same game on any thread count;
//! the purposeful one weighing fewer moves; the stand-off one finding the
//! stops; the option's mistakes reported.

#![allow(clippy::result_large_err)]

use crate::common;
use muster::battle::game::{MoveStats, Prepared, Result_};
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

/// The default scenario of `file` with `search = "..."` added to the
/// armies named in `searches` (in order; None: no key), read against the
/// ruleset.
fn scenario_searching(
    b: &mut muster::Build,
    searches: [Option<&str>; 2],
) -> muster::battle::scenario::Scenario {
    let path = b.default_scenario().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut parts = text.split("[[army]]\n");
    let mut out = parts.next().unwrap().to_string();
    for (part, search) in parts.zip(searches) {
        out.push_str("[[army]]\n");
        if let Some(s) = search {
            out.push_str(&format!("search = \"{s}\"\n"));
        }
        out.push_str(part);
    }
    assert_eq!(text.matches("[[army]]\n").count(), 2);
    muster::battle::scenario::read(&b.ruleset, "searching.toml", &out, &mut b.sources)
        .unwrap_or_else(|_| panic!("the scenario with `search` reads"))
}

/// The shipped policies of TVBD (v1, and v2 which extends it) and Thistle
/// search purposefully. An army whose scenario says `search = "thorough"`
/// plays the game its policy plays when the engine forces the thorough
/// search on it (one army, then both); `search = "purposeful"`, the
/// shipped game.
#[test]
fn the_scenario_chooses_each_armys_search() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/tillys_very_bad_day_v2.muster",
        "rules/thistle_lily_and_rose.muster",
    ] {
        let mut b = common::ruleset(file);
        for name in ["default", "cautious"] {
            let p = b.ruleset.policies.iter().position(|p| p.name == name);
            let p = p.unwrap_or_else(|| panic!("{file}: no policy {name}"));
            assert_eq!(b.ruleset.policies[p].search, Search::Purposeful, "{file}");
        }
        assert!(
            b.ruleset.policies.iter().all(|p| p.name != "thorough"),
            "{file}: the scenario key replaced the `thorough` policy"
        );
        let game = |b: &mut muster::Build, keys: [Option<&str>; 2], told: [Option<Search>; 2]| {
            let sc = scenario_searching(b, keys);
            let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
            if told.iter().any(Option::is_some) {
                prep.search = told.to_vec();
            }
            prep.play(5, true).unwrap().narrative()
        };
        let (t, p) = (Some(Search::Thorough), Some(Search::Purposeful));
        let shipped = game(&mut b, [None, None], [None, None]);
        let both = game(&mut b, [Some("thorough"); 2], [None, None]);
        assert_ne!(shipped, both, "{file}: the searches play alike");
        assert_eq!(both, game(&mut b, [None, None], [t, t]), "{file}");
        let first = game(&mut b, [Some("thorough"), None], [None, None]);
        assert_ne!(first, shipped, "{file}");
        assert_ne!(first, both, "{file}");
        assert_eq!(first, game(&mut b, [None, None], [t, None]), "{file}");
        let told = game(&mut b, [Some("purposeful"); 2], [None, None]);
        assert_eq!(told, shipped, "{file}");
        assert_eq!(told, game(&mut b, [None, None], [p, p]), "{file}");
    }
}

/// The cycle issue 33 found (TVBD's default scenario, seed
/// 290719282887171649): Blue's left wing Horse 1, weakened, advanced 3 in
/// the move step and rallied back 3 from the enemy in Step 3.5 every turn
/// from turn 8, the same two moves eight times over, while its side counted
/// it as moving. A purposeful player no longer moves a unit back to where
/// its last move put it once the game has moved it off (the spot is
/// shunned): in this game no unit makes the same move (the same start and
/// end) more than twice, and Blue wins in turn 11; the same holds in the
/// first 40 games of the run seeded 1.
#[test]
fn a_unit_does_not_go_back_where_it_was_moved_off() {
    use muster::battle::game::Event;
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let most_repeated = |g: &muster::battle::game::Game| {
        let mut seen = std::collections::HashMap::new();
        for e in &g.log {
            if let Event::Move { unit, from, to, .. } = e {
                if from != to {
                    let key = format!("{unit} {from:?} {to:?}");
                    *seen.entry(key).or_insert(0) += 1;
                }
            }
        }
        seen.into_iter().max_by_key(|(_, n)| *n).unwrap_or_default()
    };
    let g = prep.play(290719282887171649, true).unwrap();
    let (mv, n) = most_repeated(&g);
    assert!(n <= 2, "{mv} made {n} times:\n{}", g.narrative());
    assert!(g.move_stats.shunned > 0, "{:?}", g.move_stats);
    let s = g.summary();
    assert_eq!((s.result, s.turns), (Result_::Won(0), 11));
    for i in 0..40 {
        let g = prep
            .play(muster::cli::simulate::game_seed(1, i), true)
            .unwrap();
        let (mv, n) = most_repeated(&g);
        assert!(n <= 2, "game {i}: {mv} made {n} times");
    }
}

/// `--search thorough|purposeful` on `battle`, `simulate` and `compare`
/// plays what the scenario with both armies keyed so plays (TVBD's
/// default, written with `search = "..."` in each `[[army]]`), and
/// `thorough` is not the shipped (purposeful) game; a search that is not
/// one is refused naming both.
#[test]
fn the_search_option_is_both_armies_keyed() {
    let dir = common::scratch("search-option");
    let text = std::fs::read_to_string("rules/scenarios/tvbd_default.toml").unwrap();
    let run = |args: &[&str]| {
        let o = common::muster_command()
            .args(args)
            .arg("-q")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    const V1: &str = "rules/tillys_very_bad_day.muster";
    const V2: &str = "rules/tillys_very_bad_day_v2.muster";
    let mut shipped = Vec::new();
    for search in ["thorough", "purposeful"] {
        let keyed = dir.join(format!("{search}.toml"));
        let with = text.replace("[[army]]\n", &format!("[[army]]\nsearch = \"{search}\"\n"));
        assert_eq!(with.matches("search =").count(), 2);
        std::fs::write(&keyed, with).unwrap();
        let keyed = keyed.to_str().unwrap();
        let commands: [&[&str]; 3] = [
            &["battle", V1, "--seed", "7"],
            &["simulate", V1, "--runs", "30", "--seed", "3", "--json"],
            &["compare", V1, V2, "--runs", "12", "--seed", "3", "--json"],
        ];
        for c in commands {
            let told = run(&[c, &["--search", search]].concat());
            let by_key = run(&[c, &["--scenario", keyed]].concat());
            // `compare` names its scenario file; nothing else differs.
            let by_key = by_key.replace(keyed, "rules/scenarios/tvbd_default.toml");
            assert_eq!(told, by_key, "{c:?} --search {search}");
            if search == "purposeful" {
                shipped.push((c, told == run(c)));
            } else {
                assert_ne!(told, run(c), "{c:?}: thorough plays the shipped game");
            }
        }
    }
    assert!(shipped.iter().all(|(_, same)| *same), "{shipped:?}");
    let o = common::muster_command()
        .args(["simulate", V1, "--runs", "10", "--search", "quick"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("'quick'") && err.contains("thorough, purposeful"),
        "{err}"
    );
}

/// The shipped choice is not the weaker player (issue 33): in TVBD's
/// default scenario, v1's and v2's, 100 games with the first army's player
/// purposeful and the second's thorough (the same `default` scores, the
/// searches told per army), then 100 with the searches swapped, seeded
/// 2026: the purposeful player wins more of the 200 than the thorough one
/// (v1: 135 to 55; v2: 121 to 69; 127 to 56 and 119 to 71 before a
/// unit shunned the spot it was moved off). The 2,000-game figures are in docs/LANGUAGE.md, Policies.
#[test]
fn the_purposeful_player_beats_the_thorough_one_in_tvbd() {
    for file in [
        "rules/tillys_very_bad_day.muster",
        "rules/tillys_very_bad_day_v2.muster",
    ] {
        let mut b = common::ruleset(file);
        let sc = b.scenario(None).unwrap();
        let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
        let (t, p) = (Some(Search::Thorough), Some(Search::Purposeful));
        let (mut purposeful_won, mut thorough_won) = (0, 0);
        for swapped in [false, true] {
            prep.search = if swapped { vec![t, p] } else { vec![p, t] };
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

/// In TVBD's default scenario the purposeful search makes about half
/// the thorough one's candidate moves per unit-turn (13.2 against 26.4
/// over 8 games; 8.2 before a side that moves nobody looked again, in about
/// one unit-turn in six), lays a path for under half as many and scores
/// fewer than half as many; every unit-turn still weighs a move.
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
        per(t.generated, t) > 20.0 && per(p.generated, p) < 15.0,
        "{t:?} {p:?}"
    );
    assert!(per(p.laid, p) * 2.0 < per(t.laid, t), "{t:?} {p:?}");
    assert!(per(p.scored, p) * 2.0 < per(t.scored, t), "{t:?} {p:?}");
    assert!(p.legal == p.scored && p.legal > 0, "{p:?}");
    assert_eq!(t.second_looks, 0, "{t:?}");
    assert!(
        p.second_looks > 0 && p.second_looks * 4 < p.unit_turns,
        "{p:?}"
    );
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

/// What `offered_moves` offers a unit is what its player weighs: in TVBD's
/// default scenario at the start (Blue to move), a purposeful unit with a
/// move worth more than standing is offered the purposeful moves alone,
/// fewer than the thorough fan's; one with none is offered the thorough
/// fan's moves as well (its second look, if its side moves nobody), every
/// one of them. Both kinds are on the table.
#[test]
fn offered_moves_include_the_second_look() {
    use muster::base::value::Value;
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let offered = |prep: &Prepared| {
        let mut g = prep.start(1, false);
        (0..g.world.units.len() as u16)
            .map(|u| g.offered_moves("move", &[Value::Side(0)], u).unwrap())
            .collect::<Vec<_>>()
    };
    let shipped = offered(&prep);
    prep.search = vec![Some(Search::Thorough); prep.policy.len()];
    let fan = offered(&prep);
    let (mut with_fan, mut without) = (0, 0);
    for (p, t) in shipped.iter().zip(&fan) {
        if t.is_empty() {
            continue;
        }
        if t.iter().all(|m| p.contains(m)) {
            with_fan += 1;
        } else {
            assert!(p.len() < t.len(), "{p:?}\n{t:?}");
            without += 1;
        }
    }
    assert!(with_fan > 0 && without > 0, "{with_fan} {without}");
}

/// `search = stand_off` (issue 33) offers stops short of a purpose that the
/// purposeful search lacks. TVBD's zone-of-control scene
/// (tests/scenarios/tvbd_zone_of_control.toml, the Spanish moved 10 TUM
/// nearer as the figure says: their fronts at y = 11.5), the French to
/// move under a policy that wants each unit 4 TUM from the nearest enemy
/// (its score: less the distance from 4). Inside the Spanish zone a
/// pike+shot may only stand, close or go directly away (§Zones of
/// Control); straight back is at most 3 TUM (§Movement).
/// - 2 TUM off (`held_pike_shot`, front at y = 9.5): the purposeful player
///   falls back the whole 3 (to y 6, 5 TUM off, 1 from the gap it wants,
///   better than standing 2 from it); the stand-off player falls back half,
///   1.5 (to y 7.5, 3.5 TUM off, 0.5 from it); the thorough fan finds an
///   about face and 1.5 ahead, the same spot facing away (first in its
///   order of the moves scored alike).
/// - 3 TUM off (`edge_pike_shot`, y 8): falling back 3 leaves it 6 off,
///   worse than standing, and the purposeful player stands; the stand-off
///   player, as the thorough one, about faces and goes 1.5 (4.5 off).
/// - 5 TUM off (`free_pike_shot`, y 6): every player advances half its
///   allowance, 1.5 (3.5 off).
#[test]
fn a_stand_off_search_finds_the_stop_short_of_the_enemy() {
    use crate::common::table::{index, place, Scene};
    use muster::base::value::Value;
    let draft = common::draft(
        r#"
extends "tillys_very_bad_day.muster"
override policy default "stand 4 off" {
  move => if gap_to_enemy(u) > 4 then 4 - gap_to_enemy(u) else gap_to_enemy(u) - 4
}
"#,
    );
    let zoc = "tests/scenarios/tvbd_zone_of_control.toml";
    let mut scene = Scene::of_build(draft, Some(zoc), &[]);
    let french = ["held_pike_shot", "edge_pike_shot", "free_pike_shot"];
    let spanish = [
        "western_pike_shot",
        "central_pike_shot",
        "eastern_pike_shot",
        "spanish_general",
    ];
    let mut after = |search: Search| {
        scene.prep.search = vec![Some(search); scene.prep.policy.len()];
        let mut g = scene.start(1, true);
        for name in spanish {
            let b = g.world.field.as_ref().unwrap().bases[index(&g, name)];
            place(&mut g, name, b.centre.x, b.centre.y - 10.0, None);
        }
        g.decide_named("move", &[Value::Side(0)]).unwrap();
        let f = g.world.field.as_ref().unwrap();
        french.map(|name| {
            let b = f.bases[index(&g, name)];
            let r = |x: f64| (x * 100.0).round() / 100.0;
            (r(b.centre.x), r(b.centre.y), r(b.facing))
        })
    };
    let purposeful = after(Search::Purposeful);
    let stand_off = after(Search::StandOff);
    let thorough = after(Search::Thorough);
    assert_eq!(
        purposeful,
        [(16.5, 6.0, 0.0), (22.5, 8.0, 0.0), (28.5, 7.5, 0.0)],
        "purposeful"
    );
    assert_eq!(
        stand_off,
        [(16.5, 7.5, 0.0), (22.5, 6.5, 180.0), (28.5, 7.5, 0.0)],
        "stand_off"
    );
    assert_eq!(
        thorough,
        [(16.5, 7.5, 180.0), (22.5, 6.5, 180.0), (28.5, 7.5, 0.0)],
        "thorough"
    );
}

/// What each search weighs in Matchlocks' default scenario, whose policy
/// ships `stand_off` (6 games each decided alone, per unit-turn,
/// generated / laid / scored): thorough 24.5 / 16.3 / 12.3, purposeful
/// 19.6 / 13.7 / 10.4, stand-off 26.4 / 17.7 / 13.1. Matchlocks' sides
/// often move nobody, so a unit that stood looks again through the
/// thorough fan (purposeful: 422 of 965 unit-turns; stand-off: 238 of
/// 789): the stand-off player weighs about as many moves as the fan,
/// 1.06 to 1.09 times its figures, and more than the purposeful one.
#[test]
fn a_stand_off_search_weighs_about_the_fans_moves_in_matchlocks() {
    let mut b = common::ruleset("rules/never_mind_the_matchlocks.muster");
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    prep.openings = None;
    let mut stats = Vec::new();
    for s in [Search::Thorough, Search::Purposeful, Search::StandOff] {
        prep.search = vec![Some(s); prep.policy.len()];
        stats.push(weighed(&prep, 6));
    }
    let [t, p, so] = [&stats[0], &stats[1], &stats[2]];
    let per = |m: &MoveStats| {
        let n = m.unit_turns as f64;
        [
            m.generated as f64 / n,
            m.laid as f64 / n,
            m.scored as f64 / n,
        ]
    };
    let (pt, pp, ps) = (per(t), per(p), per(so));
    for k in 0..3 {
        let ratio = ps[k] / pt[k];
        assert!((1.0..1.2).contains(&ratio), "{k}: {ratio} {t:?} {so:?}");
        assert!(pp[k] < ps[k], "{k}: {p:?} {so:?}");
    }
    assert!(t.unit_turns > 500 && so.unit_turns > 500, "{t:?} {so:?}");
    assert_eq!(t.second_looks, 0, "{t:?}");
    assert!(
        so.second_looks > 0 && so.second_looks * 2 < so.unit_turns,
        "{so:?}"
    );
}
