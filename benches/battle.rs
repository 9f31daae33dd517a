//! Battle benchmark: whole games of each ported ruleset on its default
//! scenario (Tilly's Very Bad Day: 18 units a side on the big table; The
//! Thistle, the Lily and the Rose: Flodden, 19 units a side in groups;
//! Never Mind the Matchlocks: the Edgehill-like armies, deployed by the
//! book's procedure and played with the card-driven turn), played to the
//! end with the default policy and no log, as `muster simulate` plays them.
//!
//! Measured in one run, per ruleset:
//! 1. TREE: games per second on one core with every expression walked as a
//!    tree (`Prepared::walking_the_tree`) and no book of openings: the
//!    interpreter as it was before its rules were compiled to closures,
//!    the baseline of this run;
//! 2. ONE CORE: games per second on one core with the compiled rules, and
//!    the ratio to (1), as `simulate` plays them: each run starts with an
//!    empty book of openings (`battle::openings`), which its games fill and
//!    take from (the decisions they make alike before the dice tell them
//!    apart);
//! 3. NO BOOK: the same on one core with every game deciding everything
//!    itself (`Prepared::openings = None`): what one game costs alone;
//! 4. ALL CORES: games per second on the default rayon pool, and the
//!    speed-up over one core;
//! 5. the summaries of all four runs are checked to be identical (the
//!    same games, whatever the code, the book and the thread count);
//! 6. RULES FREE: games per second on one core replaying each game from a
//!    tape of the answers its decisions got from the rules
//!    ([`Prepared::play_taped`], [`Prepared::replay`]): the engine alone
//!    (candidate moves, geometry, the game loop) and the procedures, with
//!    every question a decision asks answered for nothing. No evaluator of
//!    the rules, compiled or written by hand in Rust, plays faster on this
//!    engine; it stands in for a native baseline, which for a whole game
//!    would be a second engine per ruleset. Each replay is checked to end
//!    exactly as its game did (summary, states, bases).
//!
//! 7. PURPOSEFUL, THOROUGH: games per second on one core with every army's
//!    player searching for moves with `search = purposeful` (moves toward
//!    what the policy values), then with the `thorough` fan, the same
//!    scores, each against the shipped policies' own search (TVBD and
//!    Thistle ship purposeful, the others thorough); and, for each search,
//!    the candidate moves per unit-turn it
//!    generated, laid a path for, found legal and scored (games decided
//!    alone, no book);
//! 8. with `MUSTER_BENCH_STRENGTH=N`: N games with the first army's player
//!    purposeful and the second's thorough, then N with the searches
//!    swapped (both on every core): each search's wins over the 2N games,
//!    with 95% intervals.
//!
//! The target the issue sets for TVBD is 2,000 games per second per core.
//! Run with `cargo bench --bench battle`; `MUSTER_BENCH_GAMES` sets the
//! games per run (default 64; the Matchlocks runs play a quarter as many,
//! its games being the longest), `MUSTER_BENCH_ONLY=tvbd|thistle|matchlocks|claims`
//! one ruleset.

#![allow(clippy::result_large_err)]

use muster::battle::game::{MoveStats, Prepared};
use muster::compile::ir::Search;
use std::path::Path;
use std::time::Instant;

/// The allocator `muster` itself uses (interpreter/main.rs), so that the
/// games measured here cost what `muster simulate`'s do.
#[global_allocator]
static GLOBAL: muster::base::alloc::Allocator = muster::base::alloc::Allocator;

fn main() {
    let only = std::env::var("MUSTER_BENCH_ONLY").ok();
    let games: u64 = std::env::var("MUSTER_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    for (key, file, label, n, target) in [
        (
            "tvbd",
            "rules/tillys_very_bad_day.muster",
            "TVBD",
            games,
            true,
        ),
        (
            "thistle",
            "rules/thistle_lily_and_rose.muster",
            "Thistle (Flodden)",
            games,
            false,
        ),
        (
            "matchlocks",
            "rules/never_mind_the_matchlocks.muster",
            "Matchlocks",
            (games / 4).max(1),
            false,
        ),
        (
            "claims",
            "rules/claims_and_colours.muster",
            "Claims and Colours",
            games,
            false,
        ),
    ] {
        if only.as_deref().is_none_or(|o| o == key) {
            bench(file, label, n, target);
        }
    }
}

fn bench(file: &str, label: &str, games: u64, target: bool) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut b = match muster::build(&path) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    };
    let sc = b.scenario(None).expect("the default scenario reads");
    let compiled = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    let mut alone = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    alone.openings = None;
    let mut walked = Prepared::new(&b.ruleset, &sc)
        .expect("the default scenario sets up")
        .walking_the_tree();
    // The baseline decides every game alone, as the interpreter did before.
    walked.openings = None;
    let run = |prep: &Prepared, threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        // Each run starts with an empty book, as `simulate` does.
        if let Some(book) = &prep.openings {
            book.clear();
        }
        let start = Instant::now();
        let s = pool
            .install(|| muster::cli::simulate::run(prep, games, 1, &|| {}))
            .expect("the games play");
        (start.elapsed().as_secs_f64(), s, pool.current_num_threads())
    };
    let (tt, st, _) = run(&walked, 1);
    let (t1, s1, _) = run(&compiled, 1);
    let taken = compiled.openings.as_ref().map_or(0, |b| b.taken());
    let (ta, sa, _) = run(&alone, 1);
    let (tn, sn, n) = run(&compiled, 0);
    assert_eq!(st, s1, "compiling the rules must not change a game");
    assert_eq!(s1, sa, "the book of openings must not change a game");
    assert_eq!(s1, sn, "the summary must not depend on the thread count");
    let tf = rules_free(&compiled, games);
    let tree = games as f64 / tt;
    let one = games as f64 / t1;
    let all = games as f64 / tn;
    let solo = games as f64 / ta;
    println!(
        "battle: {games} games of the {label} default scenario, mean {:.2} turns",
        s1.mean_turns
    );
    println!(
        "  tree, one core : {tree:10.1} games/s  ({:.2} ms a game)",
        1000.0 / tree
    );
    println!(
        "  one core       : {one:10.1} games/s  ({:.2} ms a game, {:.2}x the tree)",
        1000.0 / one,
        one / tree
    );
    println!(
        "  no book        : {solo:10.1} games/s  ({:.2} ms a game; the book gave {:.2}x, {:.1} decisions a game taken from it)",
        1000.0 / solo,
        one / solo,
        taken as f64 / games as f64
    );
    println!(
        "  {n} cores        : {all:10.1} games/s  ({:.2}x one core)",
        all / one
    );
    let free = games as f64 / tf;
    println!(
        "  rules free     : {free:10.1} games/s  ({:.2} ms a game, {:.2}x no book: the decisions' questions to the rules are {:.0}% of a game)",
        1000.0 / free,
        free / solo,
        100.0 * (1.0 - solo / free)
    );
    // Each search forced on every army, against the shipped policies' own
    // (TVBD and Thistle ship `purposeful`, the others `thorough`).
    let mut purposeful = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    purposeful.search = vec![Some(Search::Purposeful); purposeful.policy.len()];
    let mut thorough = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    thorough.search = vec![Some(Search::Thorough); thorough.policy.len()];
    for (name, prep) in [("purposeful", &purposeful), ("thorough", &thorough)] {
        let (t, s, _) = run(prep, 1);
        let rate = games as f64 / t;
        println!(
            "  {name:<11}    : {rate:10.1} games/s  ({:.2} ms a game, {:.2}x one core as shipped; mean {:.2} turns)",
            1000.0 / rate,
            rate / one,
            s.mean_turns
        );
    }
    let mut thorough_alone = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    thorough_alone.openings = None;
    thorough_alone.search = vec![Some(Search::Thorough); thorough_alone.policy.len()];
    let mut purposeful_alone = purposeful;
    purposeful_alone.openings = None;
    for (name, prep) in [
        ("thorough", &thorough_alone),
        ("purposeful", &purposeful_alone),
    ] {
        let m = move_stats(prep, games.min(32));
        let per = |x: u64| x as f64 / m.unit_turns.max(1) as f64;
        println!(
            "  {name:<11}    : per unit-turn {:.1} candidates generated, {:.1} paths laid, {:.1} legal, {:.1} scored ({} unit-turns, {:.0}% looked at again thoroughly)",
            per(m.generated),
            per(m.laid),
            per(m.legal),
            per(m.scored),
            m.unit_turns,
            100.0 * per(m.second_looks)
        );
    }
    if let Some(n) = std::env::var("MUSTER_BENCH_STRENGTH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        strength(&b.ruleset, &sc, n);
    }
    if !target {
        return;
    }
    println!(
        "  target 2,000 games/s per core: {}",
        if one >= 2000.0 {
            "met".to_string()
        } else {
            format!(
                "not met ({:.0}x short; {:.1}x short with the rules free)",
                2000.0 / one,
                2000.0 / free
            )
        }
    );
}

/// Seconds to replay, on this thread, the games `simulate` plays with seed
/// 1, each from its tape (taped first, untimed); each replay must end as
/// its game did.
fn rules_free(prep: &Prepared, games: u64) -> f64 {
    let mut secs = 0.0;
    for i in 0..games {
        let seed = muster::cli::simulate::game_seed(1, i);
        let (taped, tape) = prep.play_taped(seed, false).expect("the game plays");
        let start = Instant::now();
        let replayed = prep.replay(seed, tape, false).expect("the game replays");
        secs += start.elapsed().as_secs_f64();
        let end = |g: &muster::battle::game::Game| {
            let f = g.world.field.as_ref().expect("a battle has a table");
            format!("{:?} {:?} {:?}", g.summary(), g.world.state, f.bases)
        };
        assert_eq!(
            end(&taped),
            end(&replayed),
            "a replay must be the same game"
        );
    }
    secs
}

/// The candidate moves the games `simulate` plays with seed 1 weighed,
/// the first `games` of them, each decided alone.
fn move_stats(prep: &Prepared, games: u64) -> MoveStats {
    let mut all = MoveStats::default();
    for i in 0..games {
        let seed = muster::cli::simulate::game_seed(1, i);
        all += prep.play(seed, false).expect("the game plays").move_stats;
    }
    all
}

/// `n` games purposeful (first army) against thorough (second), then `n`
/// with the searches swapped, on every core: each search's wins over the
/// `2n` games with 95% intervals (Wilson), and the draws.
fn strength(rs: &muster::compile::ir::Ruleset, sc: &muster::battle::scenario::Scenario, n: u64) {
    use muster::cli::simulate::Rate;
    let mut won = [0u64; 2];
    let mut drawn = 0;
    for (first, second) in [
        (Search::Purposeful, Search::Thorough),
        (Search::Thorough, Search::Purposeful),
    ] {
        let mut p = Prepared::new(rs, sc).expect("the default scenario sets up");
        p.search = vec![Some(first), Some(second)];
        let s = muster::cli::simulate::run(&p, n, 1, &|| {}).expect("the games play");
        let purposeful = usize::from(first != Search::Purposeful);
        won[0] += s.wins[purposeful].count;
        won[1] += s.wins[1 - purposeful].count;
        drawn += s.games - s.wins[0].count - s.wins[1].count;
        println!(
            "  strength {:?} ({}) vs {:?} ({}): {} and {} wins of {n}, {} neither",
            first,
            s.armies[0],
            second,
            s.armies[1],
            s.wins[0].count,
            s.wins[1].count,
            n - s.wins[0].count - s.wins[1].count
        );
    }
    for (name, w) in [("purposeful", won[0]), ("thorough", won[1])] {
        let r = Rate::of(w, 2 * n);
        println!(
            "  strength {name:<10}: won {w} of {} ({:.1}%, 95% {:.1}-{:.1}%)",
            2 * n,
            100.0 * r.rate,
            100.0 * r.low,
            100.0 * r.high
        );
    }
    println!("  strength neither won: {drawn} of {}", 2 * n);
}
