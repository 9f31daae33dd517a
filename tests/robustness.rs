//! Broken and extreme rulesets, scenarios and situations: whatever an
//! author writes, Muster answers with a diagnostic or a game, never a
//! panic, a hang or a blown memory.
//!
//! The shipped rulesets are mutated (cut short, a word swapped for another
//! of the file, a line deleted, a digit replaced by an extreme number);
//! each mutant is compiled and, when it compiles, plays one logged game of
//! its default scenario. The shipped scenarios and situations are mutated
//! with extreme numbers and huge counts, and read, played or asked for
//! their odds. Mutants that once broke the engine are kept as tests of
//! their own; those that once ran for minutes or asked for more memory
//! than a machine has run the binary in a child process with its memory
//! and time limited, so that a relapse fails the test instead of the run.

#![allow(clippy::result_large_err)]

use crate::common;

use muster::base::rng::Rng;
use muster::battle::game::Prepared;
use muster::front::diagnostic::Diag;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/");

fn shipped(file: &str) -> String {
    std::fs::read_to_string(format!("{RULES}{file}")).unwrap()
}

/// What became of a ruleset's text: it did not compile, or its default
/// scenario could not be set up, or its game ended (Ok) or stopped on a
/// diagnostic (Err, the message).
#[derive(Debug, PartialEq)]
enum Fate {
    NotBuilt,
    NotSetUp,
    Played(Result<(String, u32), String>),
}

/// What `f` returns, or, if it panics, the panic's message.
fn unless_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Compile `text` (as if it were in rules/, so that its default scenario
/// is found) and play seed 1 of its default scenario, logged; a panic is
/// returned as Err with its message.
fn fate(text: &str) -> Result<Fate, String> {
    unless_panic(|| {
        let Ok(mut b) = muster::build_text("mutant.muster", text, Some(Path::new(RULES))) else {
            return Fate::NotBuilt;
        };
        let Ok(sc) = b.scenario(None) else {
            return Fate::NotSetUp;
        };
        let Ok(prep) = Prepared::new(&b.ruleset, &sc) else {
            return Fate::NotSetUp;
        };
        played(&prep)
    })
}

/// Seed 1 of a prepared battle, logged: its narrative and turns, or the
/// message of the diagnostic that stopped it.
fn played(prep: &Prepared) -> Fate {
    Fate::Played(match prep.play(1, true) {
        Ok(g) => Ok((g.narrative(), g.turn)),
        Err(d) => Err(d.message.clone()),
    })
}

/// `text` with `from` (which must occur once) replaced by `to`.
fn with(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from}");
    text.replace(from, to)
}

/// The fate of shipped ruleset `file` with `from` replaced by `to`.
fn fate_of_mutant(file: &str, from: &str, to: &str) -> Result<Fate, String> {
    fate(&with(&shipped(file), from, to))
}

/// The diagnostic that stopped the game of `file` with `from` replaced by
/// `to` (a panic if it did not stop on one).
fn stopped_with(file: &str, from: &str, to: &str) -> String {
    match fate_of_mutant(file, from, to) {
        Ok(Fate::Played(Err(m))) => m,
        other => panic!("{other:?}"),
    }
}

/// Thistle's charge reach allows a wheel of 45 degrees. Written as 10^12,
/// the wheel is taken as 180 (a wheel of more than half a turn one way is
/// one of less the other): the same game as with 180 written, where the
/// engine used to ask for 4e11 candidate wheels and ran out of memory.
#[test]
fn a_huge_charge_wheel_is_half_a_turn() {
    let thistle = "thistle_lily_and_rose.muster";
    let wheel = "group_reachable(c, t, group_move(c), 45)";
    let huge = fate_of_mutant(
        thistle,
        wheel,
        "group_reachable(c, t, group_move(c), 999999999995)",
    );
    let half = fate_of_mutant(thistle, wheel, "group_reachable(c, t, group_move(c), 180)");
    let Ok(Fate::Played(Ok((log, turns)))) = &huge else {
        panic!("{huge:?}")
    };
    assert!(*turns > 0 && log.contains("charges"), "{turns}");
    assert_eq!(huge, half);
}

/// A unit that may move a million paces: its moves that end off the table
/// are turned away before their paths are laid, and its advance as far as
/// it may go starts from the table's diagonal, not from a million (which
/// took minutes a move, and gigabytes of path). The game plays to its end.
#[test]
fn a_huge_move_allowance_plays() {
    match fate_of_mutant(
        "thistle_lily_and_rose.muster",
        "\"Light artillery\" : artillery        = 6,",
        "\"Light artillery\" : artillery        = 1000000,",
    ) {
        Ok(Fate::Played(Ok((_, turns)))) => assert!(turns > 0),
        other => panic!("{other:?}"),
    }
}

/// Arithmetic whose result does not fit a number of the language (a
/// fraction's terms are 32-bit) is an overflow with a diagnostic. It used
/// to become `none` silently, and then a deployment order of `none` among
/// numbers made the sort panic ("does not implement a total order").
#[test]
fn overflowing_arithmetic_is_a_diagnostic() {
    let m = stopped_with(
        "never_mind_the_matchlocks.muster",
        "x.out_scouted => 100 + 2 * (command_number(u) + 1)",
        "x.out_scouted => 1999999999990 + 2 * (command_number(u) + 1)",
    );
    assert!(m.starts_with("arithmetic overflow: 19999999999"), "{m}");
}

/// A horse of a million resolve shoots a million dice: a diagnostic (a
/// pool has at most 10,000 dice), where the roll used to record every die
/// until memory ran out. The first horse to shoot in the default battle
/// (seed 1) is a superior one (§Optional Rule: Unit Quality, +1 resolve):
/// a million and one.
#[test]
fn a_pool_of_a_million_dice_is_a_diagnostic() {
    let m = stopped_with(
        "tillys_very_bad_day.muster",
        "Horse         : cavalry   = 6, 2,         6,    5,    3",
        "Horse         : cavalry   = 6, 2,         6,    5,    1000000",
    );
    assert_eq!(
        m,
        "a pool of 1000001 dice: more than the 10000 one roll may have (turn 1)"
    );
}

/// Matchlocks' leader risk after a million kills rolls 999,997 dice: exact
/// and sampled odds both stop with a diagnostic. The sampled run used to
/// unroll the pool into machine code, a die at a time, and ran out of
/// memory compiling it.
#[test]
fn odds_of_a_million_dice_are_a_diagnostic() {
    let mut b = common::ruleset("rules/never_mind_the_matchlocks.muster");
    let text = with(
        &shipped("situations/matchlocks_leader_risk.toml"),
        "[args]\nkills = 5",
        "[args]\nkills = 1000000",
    );
    let s = common::situation(&mut b, &text);
    let exact = b.exact(&s).map(|_| ()).unwrap_err();
    assert_eq!(
        exact.message,
        "a pool of 999997 dice: more than the 10000 one roll may have"
    );
    let sampled = b.sampled(&s, 1_000, 1).map(|_| ()).unwrap_err();
    assert!(
        sampled
            .message
            .contains("more than the 10000 one roll may have"),
        "{}",
        sampled.message
    );
}

/// A folder of its own for test `name`, empty.
/// A fresh, empty folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("robustness-{name}"))
}

/// The `muster` binary run with `args` in folder `dir`, in a child process
/// limited to 4 GB of memory and 20 seconds: a defect that would exhaust
/// the memory or run for minutes fails its test in seconds (the process
/// is stopped and fails), instead of stopping the whole test run.
fn muster_limited(dir: &Path, args: &[&str]) -> std::process::Output {
    common::with_test_cache(&mut std::process::Command::new("sh"))
        .arg("-c")
        .arg("ulimit -v 4000000 && exec timeout 20 \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_muster"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The narratives of the battle of seed `seed` of shipped ruleset `file`
/// on its shipped scenario `scenario`, with `from` replaced by each of
/// `to` in turn, each played by [`muster_limited`] with `extra` arguments.
fn battles_of_mutants(
    file: &str,
    from: &str,
    to: &[&str],
    scenario: &str,
    seed: u64,
    extra: &[&str],
) -> Vec<String> {
    let dir = scratch(file.trim_end_matches(".muster"));
    let text = shipped(file);
    let scenario = format!("{RULES}scenarios/{scenario}");
    let games = to
        .iter()
        .enumerate()
        .map(|(i, to)| {
            let name = format!("mutant_{i}.muster");
            std::fs::write(dir.join(&name), with(&text, from, to)).unwrap();
            let seed = seed.to_string();
            let args = [
                "battle",
                name.as_str(),
                "--scenario",
                scenario.as_str(),
                "--seed",
                seed.as_str(),
            ];
            common::succeeded(muster_limited(&dir, &[&args[..], extra].concat()))
        })
        .collect::<Vec<_>>();
    let _ = std::fs::remove_dir_all(&dir);
    games
}

/// Matchlocks' units that fall back, disengage or evade after a melee
/// round retire one Move. Written as 2^31 - 1 or a million paces, the
/// retire goes as far as the table allows: the same game as with 1,000
/// written (more than the table's diagonal, 86.5 inches). It used to lay
/// a path of a base every half pace from the whole distance down, a
/// quarter less each time: 137 GB asked for at once, or minutes of paths.
#[test]
fn a_huge_retire_goes_as_far_as_the_table_allows() {
    let games = battles_of_mutants(
        "never_mind_the_matchlocks.muster",
        "  distance good_move(u)\n  turn_about",
        &[
            "  distance 2147483647\n  turn_about",
            "  distance 1000000\n  turn_about",
            "  distance 1000\n  turn_about",
        ],
        "matchlocks_default.toml",
        1,
        // The game written here is the thorough search's (the policy's
        // before Matchlocks searched with the stand-off stops).
        &["--search", "thorough"],
    );
    // Usher's dragoons evade to the table's edge (a base 1 deep, and 15.5
    // back from 17.5).
    assert!(
        games[0].contains(
            "Usher's dragoons falls back 15.5, turning about: (3.5, 17.5) facing 0 -> (3.5, 2.0) \
             facing 180"
        ),
        "{}",
        games[0]
    );
    assert_eq!(games[0], games[1]);
    assert_eq!(games[0], games[2]);
}

/// Thistle's groups beaten in melee fall back half a move together. Written
/// as 2^31 - 1, a group falls back as far as the table allows (the same
/// game as with 1,000): Edmund Howard's bills and their general behind
/// them go back to the English edge, 13.8 from where they fought. The group's retire laid paths of billions of
/// bases, as one unit's did.
#[test]
fn a_huge_group_retire_goes_as_far_as_the_table_allows() {
    let games = battles_of_mutants(
        "thistle_lily_and_rose.muster",
        "  distance group_move(u) / 2\n",
        &["  distance 2147483647\n", "  distance 1000\n"],
        "thistle_default.toml",
        1,
        &[],
    );
    assert!(
        games[0].contains(
            "English Edmund Howard's wing Bills falls back 13.8 with Sir Edmund Howard: \
             (50.0, 16.0) facing 0 -> (50.0, 2.2) facing 0"
        ),
        "{}",
        games[0]
    );
    assert_eq!(games[0], games[1]);
}

/// The first diagnostic of a scenario read for shipped ruleset `file`.
fn scenario_refused(file: &str, text: &str) -> Diag {
    let mut b = common::ruleset(&format!("rules/{file}"));
    match muster::battle::scenario::read(&b.ruleset, "test.toml", text, &mut b.sources) {
        Ok(_) => panic!("the scenario was read"),
        Err(d) => d.into_iter().next().unwrap(),
    }
}

/// A TVBD scenario whose second army has `red` (units of the table `units
/// = [...]`).
fn tvbd_scenario(table: (u32, u32), red: &str) -> String {
    format!(
        "[table]\nwidth = {}\ndepth = {}\n\
         [[army]]\nname = \"Blue\"\n[[army.command]]\nname = \"Blue\"\n\
         units = [{{ type = \"Horse\", count = 1000 }}]\n\
         [[army]]\nname = \"Red\"\n[[army.command]]\nname = \"Red\"\nunits = [{red}]\n",
        table.0, table.1
    )
}

/// A scenario has at most 1,000 units: the entry that makes the 1,001st
/// is reported, with the limit. Ten thousand units used to be read and
/// then abort the program asking for an 800 MB table of distances; a
/// thousand take seconds a turn.
#[test]
fn a_scenario_of_more_than_1000_units_is_refused() {
    let tvbd = "tillys_very_bad_day.muster";
    let d = scenario_refused(tvbd, &tvbd_scenario((45, 30), "{ type = \"Shot\" }"));
    assert_eq!(d.code, "muster::scenario");
    assert_eq!(d.message, "the scenario has more than 1000 units");
    assert_eq!(d.label, "unit 1001 of the scenario");
    assert_eq!(
        d.help.as_deref(),
        Some(
            "a scenario has at most 1000 units, both armies together (a battle's work grows with \
             the square of its units): give fewer units, or smaller `count`s"
        )
    );
    // Counted before they are made: ten entries of a thousand.
    let many = ["{ type = \"Shot\", count = 1000 }"; 10].join(", ");
    let d = scenario_refused(tvbd, &tvbd_scenario((45, 30), &many));
    assert_eq!(d.message, "the scenario has more than 1000 units");
    // A thousand are read.
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let text = tvbd_scenario((45, 30), "").replace("count = 1000", "count = 999");
    let text = text.replace("units = []", "units = [{ type = \"Shot\" }]");
    let sc =
        muster::battle::scenario::read(&b.ruleset, "test.toml", &text, &mut b.sources).unwrap();
    assert_eq!(sc.units().count(), 1000);
}

/// Two stacks of 500 bases, one an army: each base is reported once,
/// with how many it overlaps (998 problems), where every pair used to be
/// (249,500 diagnostics; a stack of a thousand made 499,500, some 300 MB).
#[test]
fn a_stack_of_bases_is_one_problem_a_unit() {
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    // Five hundred a side, each army on one spot.
    let army = |name: &str, y: u32| {
        let units: Vec<String> = (0..500)
            .map(|i| format!("{{ type = \"Horse\", at = [10, {y}], name = \"{name}{i}\" }}"))
            .collect();
        format!(
            "[[army]]\nname = \"{name}\"\n[[army.command]]\nname = \"{name}\"\nunits = [{}]\n",
            units.join(", ")
        )
    };
    let text = format!(
        "[table]\nwidth = 45\ndepth = 30\n{}{}",
        army("H", 5),
        army("R", 25)
    );
    let sc =
        muster::battle::scenario::read(&b.ruleset, "stack.toml", &text, &mut b.sources).unwrap();
    let d = match Prepared::new(&b.ruleset, &sc) {
        Ok(_) => panic!("the stack was set up"),
        Err(d) => d,
    };
    assert_eq!(d.len(), 998);
    assert_eq!(d[0].message, "the bases of \"H0\" and \"H1\" overlap");
    assert_eq!(
        d[997].message,
        "the bases of \"R0\" and \"R499\" overlap (\"R499\" overlaps 498 more)"
    );
}

/// A table is at most 1,000 by 1,000 (in the ruleset's measure). A table
/// a million wide used to be accepted, and its deployment weighed every
/// spot of it, for hours.
#[test]
fn a_table_of_more_than_1000_is_refused() {
    let d = scenario_refused(
        "tillys_very_bad_day.muster",
        &tvbd_scenario((1_000_000, 30), "{ type = \"Shot\" }").replace("count = 1000", "count = 2"),
    );
    assert_eq!(d.code, "muster::scenario");
    assert_eq!(
        d.message,
        "the table's width is 1000000, more than the 1000 a table may be"
    );
    assert_eq!(d.label, "too big a table");
    assert!(
        d.help
            .as_deref()
            .unwrap()
            .starts_with("a table is at most 1000 by 1000 in TUM"),
        "{:?}",
        d.help
    );
}

/// A scenario has at most 1,000 terrain features, and a band's path at
/// most 1,000 points: every move is checked against the terrain it passes.
/// Fifty thousand woods, or a river of ninety thousand points, used to be
/// read, and a TVBD game on the river took ten seconds.
#[test]
fn terrain_of_more_than_1000_features_or_points_is_refused() {
    let tvbd = "tillys_very_bad_day.muster";
    let base = shipped("scenarios/tvbd_default.toml");
    let armies = base.find("[[army]]").unwrap();
    let with_terrain = |t: &str| format!("{}{t}{}", &base[..armies], &base[armies..]);
    let woods: String = (0..1001)
        .map(|k| {
            format!(
                "[[terrain]]\nkind = \"woods\"\nrect = {{ centre = [{}, 15], width = 0.5, depth = 0.5 }}\n",
                1 + k % 40
            )
        })
        .collect();
    let d = scenario_refused(tvbd, &with_terrain(&woods));
    assert_eq!(d.code, "muster::scenario");
    assert_eq!(
        d.message,
        "the scenario has 1004 terrain features, more than the 1000 it may have"
    );
    assert_eq!(d.label, "feature 1001 of the scenario");
    let points: Vec<String> = (0..1001)
        .map(|k| format!("[{}, 15]", k as f64 * 0.04))
        .collect();
    let river = format!(
        "[[terrain]]\nkind = \"river\"\nband = {{ path = [{}], width = 0.2 }}\n",
        points.join(", ")
    );
    let d = scenario_refused(tvbd, &with_terrain(&river));
    assert_eq!(
        d.message,
        "a band's path has 1001 points, more than the 1000 it may have"
    );
    assert_eq!(d.label, "too long a path");
}

/// TVBD's book deployment on a table of 1,000 by 1,000 would weigh 18
/// million spots (each of 36 units, every spot of its army's half): more
/// than one deployment may, a diagnostic at the step. It used to take
/// 22 seconds; a thousand units on such a table, hours.
#[test]
fn a_deployment_of_too_many_spots_is_a_diagnostic() {
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let text = shipped("scenarios/tvbd_book_deployment.toml")
        .replace("width = 45\ndepth = 30", "width = 1000\ndepth = 1000");
    let sc = muster::battle::scenario::read(&b.ruleset, "big.toml", &text, &mut b.sources).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let d = prep.play(1, false).map(|_| ()).unwrap_err();
    assert_eq!(d.code, "muster::battle");
    assert_eq!(
        d.message,
        "placing 36 units on a table of 1000 by 1000 weighs 18000000 spots, more than the \
         2000000 one deployment may (game set-up)"
    );
    assert_eq!(d.label, "while playing this step");
}

/// A situation has at most 1,000 units, as a scenario does. A hundred
/// thousand used to be read (their numbers wrapping at 65,536) and their
/// exact odds asked for gigabytes.
#[test]
fn a_situation_of_more_than_1000_units_is_refused() {
    let mut b = common::ruleset("rules/never_mind_the_matchlocks.muster");
    let mut text = shipped("situations/matchlocks_battalia_melee.toml");
    for i in 0..1000 {
        text.push_str(&format!("\n[units.extra_{i}]\ntype = \"Battalia\"\n"));
    }
    let d = b.situation("many.toml", &text).map(|_| ()).unwrap_err();
    assert_eq!(d[0].code, "muster::situation");
    assert_eq!(
        d[0].message,
        "the situation has 1002 units, more than the 1000 it may have"
    );
    assert_eq!(d[0].label, "unit 1001 of the situation");
}

/// TVBD with a hook that logs two thousand lines of 4,096 characters
/// before each attacker's move: 8 MB a turn (the game of seed 1 ends after
/// 8 turns). The log stops the game at 32 MB, in turn 5, with a diagnostic
/// at the step. It used to grow without bound (a bigger
/// loop made 1.2 GB of narrative and took 2.45 GB).
#[test]
fn a_log_of_more_than_32_mb_stops_the_game() {
    let hook = r#"
hook chatter before step "Step 1.1 Attacker Move" {
  let s = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  s += s; s += s; s += s; s += s; s += s; s += s;
  for i in 0..2000 { log(s); }
}
"#;
    let text = format!("{}{hook}", shipped("tillys_very_bad_day.muster"));
    let m = match fate(&text) {
        Ok(Fate::Played(Err(m))) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        m,
        "the game's log takes more than 32 MB (turn 5, step \"Step 1.1 Attacker Move\")"
    );
}

/// A tiny ruleset of twenty foot (ten a side, placed) that drill: its
/// `sequence` and whatever else `rest` declares.
const DRILL: &str = r#"
ruleset drill "twenty foot that drill"
import core
import battle
sides red, blue
class troops
stat resolve
units (resolve) { Foot : troops = 3 }
define base_width(u: unit): int = 2
define base_depth(u: unit): int = 1
state drilled: int = 0
procedure drill(u: unit) { u.drilled += 1 }
"#;

/// [`DRILL`] with `rest`, on its scenario of `turns` turns.
fn drill(rest: &str, turns: u32) -> (muster::Build, muster::battle::scenario::Scenario) {
    let army = |name: &str, y: u32| {
        let units: Vec<String> = (0..10)
            .map(|i| format!("{{ type = \"Foot\", at = [{}, {y}] }}", 2 + 4 * i))
            .collect();
        format!(
            "[[army]]\nname = \"{name}\"\n[[army.command]]\nname = \"{name}\"\nunits = [{}]\n",
            units.join(", ")
        )
    };
    let scenario = format!(
        "turn_limit = {turns}\n[table]\nwidth = 45\ndepth = 30\n{}{}",
        army("Red", 2),
        army("Blue", 28)
    );
    let mut b = muster::build_text("drill.muster", &format!("{DRILL}{rest}"), None)
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let sc = muster::battle::scenario::read(&b.ruleset, "drill.toml", &scenario, &mut b.sources)
        .unwrap();
    (b, sc)
}

/// Ten thousand turns in which each of twenty units drills once a turn
/// log 22 events a turn: the log stops the game when it would hold more
/// than 200,000. It used to hold every one.
#[test]
fn a_log_of_more_than_200000_events_stops_the_game() {
    let (b, sc) = drill(
        r#"
sequence {
  turn {
    step "Drill" { do drill(u) for each u in units }
  } until any s in sides: s.defeated
}
"#,
        10_000,
    );
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let d = prep.play(1, true).map(|_| ()).unwrap_err();
    assert_eq!(d.code, "muster::battle");
    assert_eq!(
        d.message,
        "the game's log holds more than 200000 events (turn 9091, step \"Drill\")"
    );
    assert!(d
        .help
        .as_deref()
        .unwrap()
        .starts_with("a rule or a hook that logs in a loop?"));
    // Without a log the same game plays its ten thousand turns.
    assert_eq!(prep.play(1, false).unwrap().turn, 10_000);
}

/// A deck whose six cards go in a thousand times for each of twenty units
/// would make a pile of 120,000 cards: the shuffle stops the game with a
/// diagnostic (a pile holds at most 100,000). It used to build the pile,
/// and a thousand units' piles took gigabytes.
#[test]
fn a_pile_of_more_than_100000_cards_is_a_diagnostic() {
    let cards: String = (0..6)
        .map(|k| format!("  card c{k} copies 1000 for each u in units {{ do drill(u) }}\n"))
        .collect();
    let rest = format!(
        "deck orders {{\n{cards}}}\nsequence {{\n  turn {{\n    step \"Orders\" {{ shuffle orders  draw orders }}\n  }} until any s in sides: s.defeated\n}}\n"
    );
    let (b, sc) = drill(&rest, 3);
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let d = prep.play(1, false).map(|_| ()).unwrap_err();
    assert_eq!(d.code, "muster::battle");
    assert_eq!(
        d.message,
        "shuffling deck `orders` makes a pile of more than 100000 cards (turn 1, step \"Orders\")"
    );
    // Five of them make a pile of 100,000: played.
    let (b, sc) = drill(
        &rest.replace(
            "  card c5 copies 1000 for each u in units { do drill(u) }\n",
            "",
        ),
        3,
    );
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    assert_eq!(prep.play(1, false).unwrap().turn, 3);
}

/// `simulate --json` prints the same bytes on one thread and on two, and
/// `battle` the same game for the same seed, run after run.
#[test]
fn threads_and_runs_change_no_game() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sim = |threads: &str| {
        common::succeeded(common::muster_in(
            root,
            &[
                "simulate",
                "rules/never_mind_the_matchlocks.muster",
                "--runs",
                "16",
                "--seed",
                "9",
                "--threads",
                threads,
                "--json",
            ],
        ))
    };
    let one = sim("1");
    assert_eq!(one, sim("2"));
    let summary: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(summary["games"], 16);
    let decided = summary["wins"][0]["count"].as_u64().unwrap()
        + summary["wins"][1]["count"].as_u64().unwrap()
        + summary["draws"]["count"].as_u64().unwrap()
        + summary["turn_limit"]["count"].as_u64().unwrap();
    assert_eq!(decided, 16);
    let battle = || {
        common::succeeded(common::muster_in(
            root,
            &[
                "battle",
                "rules/never_mind_the_matchlocks.muster",
                "--seed",
                "4",
                "--log",
                "json",
            ],
        ))
    };
    assert_eq!(battle(), battle());
}

/// A pick in `0..n` from the project's value-stable generator.
fn below(rng: &mut Rng, n: usize) -> usize {
    rng.below(n as u64) as usize
}

/// `i`'s mutant of `text`: cut short, a word swapped for another word of
/// the file, a line deleted, or a digit replaced by an extreme number.
fn mutant(text: &str, i: usize, rng: &mut Rng) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut t = text.to_string();
    match i % 4 {
        0 => {
            let mut p = below(rng, t.len());
            while !t.is_char_boundary(p) {
                p -= 1;
            }
            t.truncate(p);
        }
        1 => {
            let words: Vec<(usize, &str)> = text
                .match_indices(|c: char| !word(c))
                .scan(0, |start, (p, sep)| {
                    let w = (*start, &text[*start..p]);
                    *start = p + sep.len();
                    Some(w)
                })
                .filter(|(_, w)| !w.is_empty())
                .collect();
            let (at, old) = words[below(rng, words.len())];
            let (_, new) = words[below(rng, words.len())];
            t.replace_range(at..at + old.len(), new);
        }
        2 => {
            let lines: Vec<&str> = text.lines().collect();
            let k = below(rng, lines.len());
            t = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n");
        }
        _ => {
            let digits: Vec<usize> = text
                .match_indices(|c: char| c.is_ascii_digit())
                .map(|(p, _)| p)
                .collect();
            let p = digits[below(rng, digits.len())];
            let extreme = [
                "0",
                "-1",
                "99999999999",
                "1000000",
                "0.5",
                "none",
                "2147483647",
                "9223372036854775807",
            ];
            let extreme = extreme[below(rng, extreme.len())];
            t.replace_range(p..p + 1, extreme);
        }
    }
    t
}

/// Mutants of each shipped ruleset (300 each; 30 in a debug build) are
/// compiled and played: none panics. Some compile and play, some do not
/// compile (each then has its diagnostics, which tests/diagnostics.rs
/// checks for form).
#[test]
fn mutated_rulesets_never_panic() {
    let n = if cfg!(debug_assertions) { 30 } else { 300 };
    for (k, file) in [
        "tillys_very_bad_day.muster",
        "thistle_lily_and_rose.muster",
        "never_mind_the_matchlocks.muster",
    ]
    .into_iter()
    .enumerate()
    {
        let text = shipped(file);
        let mut rng = Rng::new(k as u64 + 1);
        let mut tally = Tally::default();
        for i in 0..n {
            let t = mutant(&text, i, &mut rng);
            tally.count(fate(&t), &format!("{file}, mutant {i}"), &t);
        }
        // The mutations are mostly small: many mutants still compile and play.
        let Tally { built, played } = tally;
        assert!(
            built > n / 4 && played > n / 5,
            "{file}: {built} built, {played} played of {n}"
        );
    }
}

/// How many mutants were built (or read) and set up or refused there, and
/// how many of those played.
#[derive(Default)]
struct Tally {
    built: usize,
    played: usize,
}

impl Tally {
    /// Count the fate of mutant `what` (its text `text`); a panic fails the
    /// test, the mutant kept in the temporary folder.
    fn count(&mut self, fate: Result<Fate, String>, what: &str, text: &str) {
        match fate {
            Ok(Fate::NotBuilt) => {}
            Ok(Fate::NotSetUp) => self.built += 1,
            Ok(Fate::Played(_)) => {
                self.built += 1;
                self.played += 1;
            }
            Err(panic) => {
                let name: String = what
                    .chars()
                    .map(|c| if c.is_alphanumeric() { c } else { '_' })
                    .collect();
                let keep = std::env::temp_dir().join(format!("muster_{name}"));
                std::fs::write(&keep, text).unwrap();
                panic!("{what}: panicked: {panic} (kept in {keep:?})");
            }
        }
    }
}

/// Where the numbers of a TOML file's data are (not those of its comments
/// or its strings).
fn toml_numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let b = line.as_bytes();
        let (mut i, mut quoted) = (0, false);
        while i < b.len() {
            let c = b[i];
            let after_word =
                i > 0 && (b[i - 1].is_ascii_alphanumeric() || b"_.".contains(&b[i - 1]));
            if c == b'"' {
                quoted = !quoted;
            } else if c == b'#' && !quoted {
                break;
            } else if !quoted && !after_word && (c.is_ascii_digit() || c == b'-') {
                let start = i;
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                if b[start..i].iter().any(u8::is_ascii_digit) {
                    out.push(line_start + start..line_start + i);
                }
                continue;
            }
            i += 1;
        }
        line_start += line.len();
    }
    out
}

/// The extreme numbers a number of a mutated TOML file becomes.
const TOML_EXTREMES: [&str; 9] = [
    "0",
    "-1",
    "0.5",
    "1000000",
    "2147483647",
    "-2147483648",
    "9223372036854775807",
    "99999999999",
    "1e300",
];

/// `i`'s mutant of a scenario or situation `text`: a number of its data
/// replaced by an extreme one (half the mutants; a file without numbers
/// gets `rolls = [N]`); an inline table of it (a unit of a scenario, its
/// name left out) or a `[units.NAME]` table (of a situation) copied a
/// thousand times over; or `count = 1000` given to a unit.
fn toml_mutant(text: &str, i: usize, rng: &mut Rng) -> String {
    let mut t = text.to_string();
    match i % 4 {
        0 | 1 => {
            let extreme = TOML_EXTREMES[below(rng, TOML_EXTREMES.len())];
            let numbers = toml_numbers(text);
            if numbers.is_empty() {
                t.insert_str(0, &format!("rolls = [{extreme}]\n"));
            } else {
                t.replace_range(numbers[below(rng, numbers.len())].clone(), extreme);
            }
        }
        2 => {
            let tables: Vec<usize> = text.match_indices("[units.").map(|(p, _)| p).collect();
            if tables.is_empty() {
                let entries: Vec<(usize, &str)> = text.match_indices("{ type =").collect();
                let (at, _) = entries[below(rng, entries.len())];
                let end = at + text[at..].find('}').unwrap() + 1;
                let entry = &text[at..end];
                let unnamed = match entry.find(", name =") {
                    Some(n) => {
                        let close = n + 9 + entry[n + 9..].find('"').unwrap() + 1;
                        format!("{}{}", &entry[..n], &entry[close..])
                    }
                    None => entry.to_string(),
                };
                t.insert_str(at, &format!("{unnamed}, ").repeat(1000));
            } else {
                let at = tables[below(rng, tables.len())];
                let end = text[at + 1..]
                    .find("\n[")
                    .map_or(text.len(), |e| at + 1 + e);
                let table = &text[at..end];
                let name_end = table.find(']').unwrap();
                let copies: String = (0..1000)
                    .map(|k| format!("\n{}_{k}{}\n", &table[..name_end], &table[name_end..]))
                    .collect();
                t.push_str(&copies);
            }
        }
        _ => {
            let entries: Vec<(usize, &str)> = text.match_indices("{ type =").collect();
            if !entries.is_empty() {
                let (at, _) = entries[below(rng, entries.len())];
                t.insert_str(at + 1, " count = 1000,");
            }
        }
    }
    t
}

/// The ruleset a shipped scenario or situation file is for, by its name.
fn ruleset_of(file: &str) -> &'static str {
    match file.split('_').next() {
        Some("tvbd") => "rules/tillys_very_bad_day.muster",
        Some("tvbd2") => "rules/tillys_very_bad_day_v2.muster",
        Some("thistle") => "rules/thistle_lily_and_rose.muster",
        Some("matchlocks") => "rules/never_mind_the_matchlocks.muster",
        Some("claims") => "rules/claims_and_colours.muster",
        _ => panic!("{file}: whose?"),
    }
}

/// The shipped files of folder `rules/FOLDER`, by name, in order.
fn shipped_in(folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{RULES}{folder}"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    names
}

/// Each shipped file of `rules/FOLDER`, with `n` of its [`toml_mutant`]s
/// (drawn afresh for each file, from `seed` and the file's place) each met
/// by `meet` with the file's ruleset: the tally of their fates, by file. A
/// panic fails the test.
fn tally_toml_mutants(
    folder: &str,
    n: usize,
    seed: u64,
    mut meet: impl FnMut(&mut muster::Build, &str) -> Fate,
) -> Vec<(String, Tally)> {
    shipped_in(folder)
        .into_iter()
        .enumerate()
        .map(|(k, file)| {
            let mut b = common::ruleset(ruleset_of(&file));
            let text = shipped(&format!("{folder}/{file}"));
            let mut rng = Rng::new(seed + k as u64);
            let mut tally = Tally::default();
            for i in 0..n {
                let t = toml_mutant(&text, i, &mut rng);
                let fate = unless_panic(|| meet(&mut b, &t));
                tally.count(fate, &format!("{file}, mutant {i}"), &t);
            }
            (file, tally)
        })
        .collect()
}

/// Mutants of each shipped scenario (30 each; 3 in a debug build): extreme
/// numbers (tables a million wide, turn limits of 2^31 - 1, units at 1e300),
/// units copied a thousand times, counts of a thousand. Each is read and,
/// when it reads, set up and played: none panics, and each ends, with a
/// game or a diagnostic. (Before the limits on units, tables, deployment
/// and paths, such mutants ran for minutes or asked for gigabytes.)
#[test]
fn mutated_scenarios_never_panic() {
    let n = if cfg!(debug_assertions) { 3 } else { 30 };
    let tallies = tally_toml_mutants("scenarios", n, 11, |b, t| {
        let Ok(sc) = muster::battle::scenario::read(&b.ruleset, "mutant.toml", t, &mut b.sources)
        else {
            return Fate::NotBuilt;
        };
        match Prepared::new(&b.ruleset, &sc) {
            Ok(prep) => played(&prep),
            Err(_) => Fate::NotSetUp,
        }
    });
    // Many mutants are refused (a diagnostic), many are read; some play:
    // of each file's 30 in a release build, and of all files' in a debug
    // build, where 3 a file may all be refused (thistle_default.toml's 3
    // were: 2 read, none played).
    let mut all_played = 0;
    for (file, Tally { built, played }) in tallies {
        assert!(built > n / 4, "{file}: {built} read of {n}");
        assert!(
            cfg!(debug_assertions) || played > 0,
            "{file}: {built} read, {played} played of {n}"
        );
        all_played += played;
    }
    assert!(all_played > 0, "no mutant of any scenario played");
}

/// Mutants of each shipped situation (16 each; 2 in a debug build), made as
/// the scenarios' are: each is read and, when it reads, its exact odds and
/// 200 samples are asked for (counted as set up). None panics. (A hundred
/// thousand units used to be read, and their exact odds asked for
/// gigabytes.)
#[test]
fn mutated_situations_never_panic() {
    let n = if cfg!(debug_assertions) { 2 } else { 16 };
    let tallies = tally_toml_mutants("situations", n, 21, |b, t| {
        let Ok(s) = b.situation("mutant.toml", t) else {
            return Fate::NotBuilt;
        };
        let _ = b.exact(&s);
        let _ = b.sampled(&s, 200, 1);
        Fate::NotSetUp
    });
    // More than a quarter read: of each file's 16 in a release build, and of
    // all files' in a debug build, where a file's 2 may both be refused
    // (claims_volley_long_range_cover.toml's were).
    let files = tallies.len();
    let mut all_built = 0;
    for (file, tally) in tallies {
        assert!(
            cfg!(debug_assertions) || tally.built > n / 4,
            "{file}: {} read of {n}",
            tally.built
        );
        all_built += tally.built;
    }
    assert!(
        4 * all_built > files * n,
        "{all_built} read of {}",
        files * n
    );
}
