//! Broken and extreme rulesets: whatever an author writes, Muster answers
//! with a diagnostic or a game, never a panic, a hang or a blown memory.
//!
//! The shipped rulesets are mutated (cut short, a word swapped for another
//! of the file, a line deleted, a digit replaced by an extreme number);
//! each mutant is compiled and, when it compiles, plays one logged game of
//! its default scenario. Five mutants that once broke the engine are kept
//! as tests of their own.

#![allow(clippy::result_large_err)]

mod common;

use muster::battle::Prepared;
use muster::rng::Rng;
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

/// Compile `text` (as if it were in rules/, so that its default scenario
/// is found) and play seed 1 of its default scenario, logged; a panic is
/// returned as Err with its message.
fn fate(text: &str) -> Result<Fate, String> {
    catch_unwind(AssertUnwindSafe(|| {
        let Ok(mut b) = muster::build_text("mutant.muster", text, Some(Path::new(RULES))) else {
            return Fate::NotBuilt;
        };
        let Ok(sc) = b.scenario(None) else {
            return Fate::NotSetUp;
        };
        let Ok(prep) = Prepared::new(&b.ruleset, &sc) else {
            return Fate::NotSetUp;
        };
        Fate::Played(match prep.play(1, true) {
            Ok(g) => Ok((g.narrative(), g.turn)),
            Err(d) => Err(d.message.clone()),
        })
    }))
    .map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
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
/// until memory ran out.
#[test]
fn a_pool_of_a_million_dice_is_a_diagnostic() {
    let m = stopped_with(
        "tillys_very_bad_day.muster",
        "Horse         : cavalry   = 6, 2,         6,    5,    3",
        "Horse         : cavalry   = 6, 2,         6,    5,    1000000",
    );
    assert_eq!(
        m,
        "a pool of 1000000 dice: more than the 10000 one roll may have (turn 1)"
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
            let extreme = ["0", "-1", "99999999999", "1000000", "0.5", "none"][below(rng, 6)];
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
        let (mut built, mut played) = (0, 0);
        for i in 0..n {
            let t = mutant(&text, i, &mut rng);
            match fate(&t) {
                Ok(Fate::NotBuilt) => {}
                Ok(Fate::NotSetUp) => built += 1,
                Ok(Fate::Played(_)) => {
                    built += 1;
                    played += 1;
                }
                Err(panic) => {
                    let keep = std::env::temp_dir().join(format!("muster_mutant_{k}_{i}.muster"));
                    std::fs::write(&keep, &t).unwrap();
                    panic!("{file}, mutant {i}: panicked: {panic} (kept in {keep:?})");
                }
            }
        }
        // The mutations are mostly small: many mutants still compile and play.
        assert!(
            built > n / 4 && played > n / 5,
            "{file}: {built} built, {played} played of {n}"
        );
    }
}
