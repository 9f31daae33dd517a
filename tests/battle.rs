//! Whole battles of Tilly's Very Bad Day on its default scenario: a seeded
//! narrative pinned as a snapshot, determinism across thread counts, the
//! engine's remembered values and compiled rules changing nothing, and bad scenarios reported
//! with the file and the entry.

#![allow(clippy::result_large_err)]

use crate::common;

use muster::battle::game::{Event, Prepared, Result_};
use muster::front::diagnostic::render_plain;
use muster::Build;
use std::path::Path;

const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/");

fn tvbd() -> Build {
    match muster::build(Path::new(TVBD)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render_plain(&d, &s)),
    }
}

/// The default scenario's battle with seed 7, as a wargamer reads it. The
/// snapshot pins every move, roll and rout: review a change to it as a reader
/// of the rules would.
#[test]
fn seeded_battle_log() {
    let mut b = tvbd();
    let sc = b.scenario(None).expect("the default scenario reads");
    let prep = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    let game = prep.play(7, true).expect("the battle plays");
    let text = game.narrative();
    // The log is a real game: turns, moves, shots, melees and an ending.
    assert!(text.contains("=== Turn 1 ==="));
    assert!(text.contains("shoot("));
    assert!(text.contains("=== End after"));
    let s = game.summary();
    assert!(s.turns >= 1);
    insta::assert_snapshot!("tvbd_default_seed_7", text);
}

/// The JSON log is the same events as data.
#[test]
fn json_log_is_the_same_events() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let game = prep.play(7, true).unwrap();
    let json = serde_json::to_value(&game.log).unwrap();
    let events = json.as_array().unwrap();
    assert_eq!(events.len(), game.log.len());
    let turns = game
        .log
        .iter()
        .filter(|e| matches!(e, Event::Turn { .. }))
        .count();
    assert_eq!(
        events.iter().filter(|e| e["event"] == "turn").count(),
        turns
    );
}

/// The same seed and runs give the same summary on 1 thread and on 2.
#[test]
fn simulate_is_the_same_on_any_thread_count() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let run = |threads: usize| common::simulate_on(&prep, threads, 12, 42);
    let one = run(1);
    let two = run(2);
    assert_eq!(one, two);
    assert_eq!(one.games, 12);
    let decided: u64 =
        one.wins.iter().map(|w| w.count).sum::<u64>() + one.draws.count + one.turn_limit.count;
    assert_eq!(decided, 12);
    // And a different seed plays different games.
    let other = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| muster::cli::simulate::run(&prep, 12, 43, &|| {}))
        .unwrap();
    assert_ne!(one.length, other.length);
}

/// Remembering define values between changes of the world is only a speed-up:
/// the same seed plays the same battle with it off.
#[test]
fn remembered_values_change_nothing() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let mut prep = Prepared::new(&b.ruleset, &sc).unwrap();
    for seed in [1, 2] {
        prep.remember = true;
        let with = prep.play(seed, true).unwrap().narrative();
        prep.remember = false;
        let without = prep.play(seed, true).unwrap().narrative();
        assert_eq!(with, without, "seed {seed}");
    }
}

/// Compiling the rules to closures is only a speed-up: the same seed plays
/// the same battle with the expression trees walked instead, event for
/// event (every move weighed, every pick scanned, every policy score).
#[test]
fn compiled_rules_change_nothing() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let compiled = Prepared::new(&b.ruleset, &sc).unwrap();
    let walked = Prepared::new(&b.ruleset, &sc).unwrap().walking_the_tree();
    for seed in [1, 2, 3] {
        let with = compiled.play(seed, true).unwrap().narrative();
        let without = walked.play(seed, true).unwrap().narrative();
        assert!(with.lines().count() > 100, "seed {seed} is a whole game");
        assert_eq!(with, without, "seed {seed}");
    }
}

/// Games that take their opening from the run's book end exactly as games
/// that decide everything themselves: the same summary, every unit and
/// side state, every base to the bit, every noted fact. In each ruleset
/// some decisions are taken from the book (Matchlocks' whole deployment,
/// Thistle's first moves); a game with a log takes none.
#[test]
fn openings_from_the_book_change_nothing() {
    for (rules, games, least) in [
        ("rules/tillys_very_bad_day.muster", 8, 6),
        ("rules/thistle_lily_and_rose.muster", 8, 10),
        ("rules/never_mind_the_matchlocks.muster", 5, 3),
    ] {
        let mut b = match muster::build(&Path::new(ROOT).join(rules)) {
            Ok(b) => b,
            Err((d, s)) => panic!("{}", render_plain(&d, &s)),
        };
        let sc = b.scenario(None).unwrap();
        let shared = Prepared::new(&b.ruleset, &sc).unwrap();
        let mut alone = Prepared::new(&b.ruleset, &sc).unwrap();
        alone.openings = None;
        let end = |g: &muster::battle::game::Game| {
            let f = g.world.field.as_ref().unwrap();
            let facts: Vec<Vec<_>> = g
                .world
                .facts
                .iter()
                .map(|m| {
                    let mut v: Vec<_> = m.iter().collect();
                    v.sort();
                    v
                })
                .collect();
            let bases: Vec<[u64; 8]> = f.bases.iter().map(|b| b.bits()).collect();
            format!(
                "{:?} {:?} {:?} {bases:?} {:?} {facts:?}",
                g.summary(),
                g.world.state,
                g.world.side_state,
                f.on_table,
            )
        };
        for i in 0..games {
            let seed = muster::cli::simulate::game_seed(3, i);
            let with = shared.play(seed, false).unwrap();
            let without = alone.play(seed, false).unwrap();
            assert_eq!(end(&with), end(&without), "{rules} game {i}");
        }
        let book = shared.openings.as_ref().unwrap();
        assert!(book.taken() >= least, "{rules}: taken {}", book.taken());
        let before = book.taken();
        let logged = shared
            .play(muster::cli::simulate::game_seed(3, 0), true)
            .unwrap();
        assert_eq!(
            book.taken(),
            before,
            "{rules}: a logged game decides afresh"
        );
        assert!(logged.narrative().lines().count() > 100);
    }
}

/// A game replayed from the tape of the answers its decisions got from the
/// rules is the same game, event for event (the battle benchmark times
/// such replays as the engine's speed with the rules free); a tape that
/// runs out is a diagnostic, not a panic.
#[test]
fn a_replayed_game_is_the_same_game() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    for seed in [1, 2] {
        let played = prep.play(seed, true).unwrap().narrative();
        let (taped, tape) = prep.play_taped(seed, true).unwrap();
        assert_eq!(
            played,
            taped.narrative(),
            "seed {seed}: taping changes nothing"
        );
        assert!(tape.len() > 10_000, "seed {seed}: {} answers", tape.len());
        let replayed = prep.replay(seed, tape, true).unwrap().narrative();
        assert_eq!(played, replayed, "seed {seed}");
    }
    let err = match prep.replay(1, Default::default(), false) {
        Ok(_) => panic!("an empty tape cannot play a game"),
        Err(d) => d,
    };
    assert!(
        err.message.contains("more than its tape holds"),
        "{}",
        err.message
    );
}

/// A game ends by army morale (TVBD §Step 4.4): the loser has lost at least a
/// third of its units.
#[test]
fn a_game_ends_by_army_morale() {
    let mut b = tvbd();
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let game = prep.play(7, false).unwrap();
    let s = game.summary();
    let lost: Vec<u32> = s.lost.iter().map(|l| l.iter().sum()).collect();
    match s.result {
        Result_::Won(a) => {
            let loser = 1 - a;
            // 18 units a side: 6 lost breaks an army.
            assert!(lost[loser] >= 6, "{lost:?}");
        }
        Result_::Draw => assert!(lost[0] >= 6 && lost[1] >= 6, "{lost:?}"),
        Result_::TurnLimit => panic!("the default scenario ended at its turn limit"),
    }
}

/// A turn limit the scenario sets ends the game, reported as such.
#[test]
fn the_turn_limit_ends_a_game() {
    let mut b = tvbd();
    let text = default_scenario_text().replace("turn_limit = 20", "turn_limit = 1");
    let sc =
        muster::battle::scenario::read(&b.ruleset, "short.toml", &text, &mut b.sources).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let game = prep.play(7, true).unwrap();
    let s = game.summary();
    assert_eq!(s.turns, 1);
    assert_eq!(s.result, Result_::TurnLimit);
    assert!(game.narrative().contains("the turn limit is reached"));
}

/// The text of TVBD's default scenario, for tests that edit it.
fn default_scenario_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/scenarios/tvbd_default.toml");
    std::fs::read_to_string(path).unwrap()
}

/// The default scenario with its superior Pike+Shot moved to `at`.
fn superior_pike_at(t: String, at: &str) -> String {
    t.replacen(
        r#"{ type = "Pike+Shot", quality = "superior", at = [22.5, 10] }"#,
        &format!(r#"{{ type = "Pike+Shot", quality = "superior", at = {at} }}"#),
        1,
    )
}

fn setup_problem(name: &str, edit: impl Fn(String) -> String) -> String {
    let mut b = tvbd();
    let text = edit(default_scenario_text());
    let diags = match muster::battle::scenario::read(&b.ruleset, name, &text, &mut b.sources) {
        Err(d) => d,
        Ok(sc) => match Prepared::new(&b.ruleset, &sc) {
            Err(d) => d,
            Ok(_) => panic!("the scenario was accepted"),
        },
    };
    for d in &diags {
        assert!(d.span.is_some(), "{d:?}");
        assert!(d.help.is_some(), "{d:?}");
    }
    common::render_here(&diags, &b.sources)
}

/// §Deployment: pike+shot deploy in the centre zone; one moved out to a wing
/// is reported at its entry in the file.
#[test]
fn pike_and_shot_outside_the_centre_zone() {
    let out = setup_problem("bad_deployment.toml", |t| superior_pike_at(t, "[40, 10]"));
    assert!(
        out.contains("deployed where the rules do not allow"),
        "{out}"
    );
    insta::assert_snapshot!("pike_and_shot_outside_the_centre_zone", out);
}

/// A unit over the table's edge.
#[test]
fn unit_off_the_table() {
    let out = setup_problem("off_table.toml", |t| superior_pike_at(t, "[22.5, 0.3]"));
    assert!(
        out.contains("off the table") || out.contains("not wholly on the table"),
        "{out}"
    );
}

/// A policy the ruleset does not have.
#[test]
fn unknown_policy() {
    let out = setup_problem("policy.toml", |t| {
        t.replacen("[[army]]\n", "[[army]]\npolicy = \"cautios\"\n", 1)
    });
    assert!(out.contains("unknown policy `cautios`"), "{out}");
    assert!(out.contains("did you mean \"cautious\"?"), "{out}");
}

/// §Deployment by the book's procedure: a scenario that places no unit is
/// deployed by the ruleset's `deploy` decision, command by command,
/// alternating sides, the defender first, cannons last; every unit ends on
/// the table, on no other unit, where `legal_deployment` allows (pike+shot in
/// the centre zone), and the same seed deploys the same way.
#[test]
fn deployment_by_the_books_procedure() {
    let mut b = tvbd();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/scenarios/tvbd_book_deployment.toml");
    let sc = b.scenario(Some(&path)).unwrap();
    assert!(sc.units().all(|(_, _, u)| u.at.is_none()));
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let mut game = prep.start(3, true);
    game.perform_named("initiative", &[]).unwrap();
    game.decide_named("deploy", &[]).unwrap();
    let placed: Vec<(String, [f64; 3])> = game
        .log
        .iter()
        .filter_map(|e| match e {
            Event::Placed { unit, at } => Some((unit.clone(), *at)),
            _ => None,
        })
        .collect();
    assert_eq!(placed.len(), 36);
    // The order: the defender's first command, then the attacker's, ...;
    // the cannons last, the attacker's first.
    let side_of = |name: &str| {
        let u = game
            .world
            .units
            .iter()
            .position(|u| u.name == name)
            .unwrap();
        game.world.units[u].side
    };
    let ty_of = |name: &str| {
        let u = game
            .world
            .units
            .iter()
            .position(|u| u.name == name)
            .unwrap();
        b.ruleset.unit_types[game.world.units[u].ty as usize]
            .name
            .clone()
    };
    assert_eq!(side_of(&placed[0].0), 1, "the defender deploys first");
    let first_cannon = placed
        .iter()
        .position(|(n, _)| ty_of(n) == "Cannons")
        .unwrap();
    assert!(placed[first_cannon..]
        .iter()
        .all(|(n, _)| ty_of(n) == "Cannons"));
    assert_eq!(
        side_of(&placed[first_cannon].0),
        0,
        "the attacker's cannons first"
    );
    let f = game.world.field.as_ref().unwrap();
    for u in 0..f.bases.len() {
        assert!(f.on_table[u]);
        for o in 0..u {
            assert!(!f.bases[u].overlaps(&f.bases[o]), "{u} on {o}");
        }
    }
    // Each army within its deployment zone: from its base edge to 4 TUM
    // short of the centre line (the big table is 30 TUM deep).
    for (u, base) in f.bases.iter().enumerate() {
        let from_edge = if prep.army_of[u] == 0 {
            base.centre.y
        } else {
            30.0 - base.centre.y
        };
        assert!(
            from_edge + base.depth / 2.0 <= 11.0 + 1e-9,
            "{}",
            game.world.units[u].name
        );
    }
    // Pike+shot in the centre zone of the big table (24 TUM wide).
    for (n, at) in &placed {
        if ty_of(n) == "Pike+Shot" {
            assert!((at[0] - 22.5).abs() + 1.0 <= 12.0, "{n} at {at:?}");
        }
    }
    // The same seed deploys the same way.
    let mut again = prep.start(3, true);
    again.perform_named("initiative", &[]).unwrap();
    again.decide_named("deploy", &[]).unwrap();
    assert_eq!(
        format!("{:?}", game.world.field.as_ref().unwrap().bases),
        format!("{:?}", again.world.field.as_ref().unwrap().bases)
    );
}

/// A battle stopped by a broken rule says where and when, as a diagnostic:
/// here a house rule whose bookkeeping after every move breaks a requirement.
#[test]
fn a_broken_rule_stops_the_battle_with_a_diagnostic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let text = r#"
extends "tillys_very_bad_day.muster"
override procedure moved(u: unit, m: manoeuvre) {
  require m is pivot else "only cannons may move in this broken draft"
}
"#;
    let mut b = match muster::build_text("broken_draft.muster", text, Some(&dir)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render_plain(&d, &s)),
    };
    let sc = b
        .scenario(None)
        .expect("the extended ruleset's default scenario");
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let Err(d) = prep.play(7, true) else {
        panic!("the battle should have stopped");
    };
    assert_eq!(d.code, "muster::requirement");
    assert!(d.message.contains("(turn 1)"), "{}", d.message);
    let out = common::render_here(&[d], &b.sources);
    assert!(
        out.contains("only cannons may move in this broken draft"),
        "{out}"
    );
    assert!(out.contains("broken_draft.muster"), "{out}");
}

/// `--runs 0` (simulate, compare) and `--samples 0` (odds) are refused by
/// the command line, exit 2, rather than summarised as zero games (whose
/// win rates and intervals would mean nothing).
#[test]
fn no_games_and_no_samples_are_refused() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let tvbd = "rules/tillys_very_bad_day.muster";
    for args in [
        vec!["simulate", tvbd, "--runs", "0"],
        vec!["compare", tvbd, tvbd, "--runs", "0"],
        vec![
            "odds",
            tvbd,
            "--situation",
            "rules/situations/tvbd_horse_charges_pike.toml",
            "--samples",
            "0",
        ],
    ] {
        let out = common::muster_in(Path::new(dir), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("invalid value '0'"), "{args:?}: {err}");
    }
}

/// `muster battle` on a game the rules stop shows the game as far as it
/// got (its narrative, or its JSON events with what stopped it) before the
/// diagnostic, and fails; `simulate` plays every game, then names the first
/// stopped one by its place in the run, whatever the thread count, and how
/// many stopped.
#[test]
fn a_stopped_battle_shows_how_it_got_there() {
    let dir = common::scratch("stopped-battle");
    let rules = Path::new(ROOT).join("rules");
    std::fs::copy(
        rules.join("tillys_very_bad_day.muster"),
        dir.join("tillys_very_bad_day.muster"),
    )
    .unwrap();
    for sub in ["scenarios", "rosters"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for f in std::fs::read_dir(rules.join(sub)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dir.join(sub).join(f.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(
        dir.join("broken.muster"),
        r#"extends "tillys_very_bad_day.muster"
override procedure moved(u: unit, m: manoeuvre) {
  require m is pivot else "only cannons may move in this broken draft"
}
"#,
    )
    .unwrap();
    let run = |args: &[&str]| common::muster_in(&dir, args);
    let text = run(&["battle", "broken.muster", "--seed", "7"]);
    assert_eq!(text.status.code(), Some(1));
    let out = String::from_utf8(text.stdout).unwrap();
    // Turn 1's first move is shown (the commander rides before any unit
    // moves and breaks the draft's requirement), then where it stopped.
    assert!(out.contains("=== Turn 1 ==="), "{out}");
    assert!(out.contains("Blue right wing Commander rides 8.0"), "{out}");
    assert!(
        out.trim_end().ends_with(
            "The game stopped here: a rule was broken during the battle: only cannons may \
             move in this broken draft (turn 1) (the error follows)."
        ),
        "{out}"
    );
    let err = String::from_utf8(text.stderr).unwrap();
    assert!(err.contains("this requirement does not hold"), "{err}");

    let json = run(&["battle", "broken.muster", "--seed", "7", "--log", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["stopped"]["code"], "muster::requirement");
    assert!(v["events"].as_array().unwrap().len() >= 2, "{v}");
    assert!(v.get("summary").is_none());

    let mut seen = Vec::new();
    for threads in ["1", "2"] {
        let sim = run(&[
            "simulate",
            "broken.muster",
            "--runs",
            "6",
            "--seed",
            "3",
            "--threads",
            threads,
        ]);
        assert_eq!(sim.status.code(), Some(1));
        let err = String::from_utf8(sim.stderr)
            .unwrap()
            .replace(['\n', '│'], " ");
        let err = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(err.contains("in game 0 of the run"), "{err}");
        assert!(
            err.contains("[6 of the 6 games stopped; this is the first]"),
            "{err}"
        );
        seen.push(err);
    }
    assert_eq!(seen[0], seen[1]);
    let _ = std::fs::remove_dir_all(&dir);
}
