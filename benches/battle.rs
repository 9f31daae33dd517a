//! Battle benchmark: whole games of Tilly's Very Bad Day on its default
//! scenario (18 units a side on the big table), and of The Thistle, the
//! Lily and the Rose on its default (Flodden, 19 units a side in groups),
//! played to the end with the default policy and no log, as `muster
//! simulate` plays them.
//!
//! Measured in one run:
//! 1. ONE CORE: games per second on a one-thread pool;
//! 2. ALL CORES: games per second on the default rayon pool, and the
//!    speed-up over one core;
//! 3. the summaries of the two runs are checked to be identical (same seed
//!    and games, any thread count).
//!
//! There is no hand-written native baseline for a whole game (it would be a
//! second TVBD engine); the target the issue sets is 2,000 games per second
//! per core. Run with `cargo bench --bench battle`; `MUSTER_BENCH_GAMES`
//! sets the games per run (default 64).

#![allow(clippy::result_large_err)]

use muster::battle::Prepared;
use std::path::Path;
use std::time::Instant;

fn main() {
    bench("rules/tillys_very_bad_day.muster", "TVBD", true);
    bench(
        "rules/thistle_lily_and_rose.muster",
        "Thistle (Flodden)",
        false,
    );
}

fn bench(file: &str, label: &str, target: bool) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut b = match muster::build(&path) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::diagnostic::render_plain(&d, &s)),
    };
    let sc = b.scenario(None).expect("the default scenario reads");
    let prep = Prepared::new(&b.ruleset, &sc).expect("the default scenario sets up");
    let games: u64 = std::env::var("MUSTER_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let start = Instant::now();
        let s = pool
            .install(|| muster::simulate::run(&prep, games, 1, &|| {}))
            .expect("the games play");
        (start.elapsed().as_secs_f64(), s, pool.current_num_threads())
    };
    let (t1, s1, _) = run(1);
    let (tn, sn, n) = run(0);
    assert_eq!(s1, sn, "the summary must not depend on the thread count");
    let one = games as f64 / t1;
    let all = games as f64 / tn;
    println!(
        "battle: {games} games of the {label} default scenario, mean {:.2} turns",
        s1.mean_turns
    );
    println!(
        "  one core : {one:10.1} games/s  ({:.2} ms a game)",
        1000.0 / one
    );
    println!(
        "  {n} cores  : {all:10.1} games/s  ({:.2}x one core)",
        all / one
    );
    if !target {
        return;
    }
    println!(
        "  target 2,000 games/s per core: {}",
        if one >= 2000.0 {
            "met".to_string()
        } else {
            format!("not met ({:.0}x short)", 2000.0 / one)
        }
    );
}
