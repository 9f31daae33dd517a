//! Hooks benchmark: what a rhai hook attached to a procedure costs in a
//! sampled odds query.
//!
//! One toy ruleset, a Gun of 4 dice shooting (`hits` and `sixes`, both the
//! count of sixes), measured in one run, on one thread, with the same seeds:
//! - (a)  NO HOOK: `odds::tally_compiled` on the tier the program gets (the
//!   typed tier, as machine code unless `MUSTER_NO_JIT=1`);
//! - (a') NO HOOK, GENERAL TIER: the same program forced into the general
//!   bytecode (`bytecode::compile` + `odds::tally_code`), the tier every
//!   program with a hook runs in;
//! - (b)  TRIVIAL HOOK: `hook misfire after shoot`, which reads `sixes` and
//!   sets the `misfired` outcome only on four sixes (1/1296 of the runs);
//! - (c)  ROLLING HOOK: as (b), but each call also rolls `roll("d6")` through
//!   the engine's generator, and misfires on four sixes and a 4+ (1/2592).
//!
//! So (a' - a) is the cost of leaving the fast tier, (b - a') the cost of
//! one hook call itself, and (c - b) the cost of one `roll` from a script.
//! Every variant's code is compiled before timing; each repetition runs the
//! four in turn and the best time of each is kept.
//!
//! Checks: (a), (a') and (b) give identical `hits` tallies for the same seed
//! (the hook in (b) rolls no dice); (c)'s differ (its roll draws from the
//! same stream); `misfired` comes up about 1/1296 of the time in (b) and
//! 1/2592 in (c).
//!
//! Run with `cargo bench --bench hooks`. `MUSTER_BENCH_SAMPLES` sets the
//! samples per repetition (default 200,000).

use muster::base::rng::Rng;
use muster::base::value::Value;
use muster::run::odds::{self, Compiled, Program, Tally};
use std::hint::black_box;
use std::time::{Duration, Instant};

const DEFAULT_SAMPLES: u64 = 200_000;
const REPS: usize = 7;
const SEED: u64 = 0x400C_5EED;
/// Below this many samples the frequency checks are too noisy to mean much.
const MIN_N_FOR_CHECK: u64 = 50_000;
/// How many standard deviations a count may stray from its expectation.
const SIGMAS: f64 = 5.0;

const RULESET_HEAD: &str = r#"ruleset toy "hooks bench"
import core
stat dice
class artillery
units (dice) {
  Gun : artillery = 4
}
procedure shoot(gun: unit) outcomes { hits: int, sixes: int } {
  let sixes = gun.dice d6 scoring 6+
  outcome sixes = sixes
  outcome hits = sixes
}
"#;

const TRIVIAL_HOOK: &str = r#"
hook misfire after shoot outcomes { misfired: bool } {
  if sixes >= 4 { set_outcome("misfired", true); }
}
"#;

const ROLLING_HOOK: &str = r#"
hook misfire after shoot outcomes { misfired: bool } {
  let r = roll("d6");
  if sixes >= 4 && r >= 4 { set_outcome("misfired", true); }
}
"#;

const SITUATION: &str = "procedure = \"shoot\"\n[units.gun]\ntype = \"Gun\"\n";

/// A ruleset's shooting, specialised to the situation and compiled.
struct Variant {
    ruleset: muster::compile::ir::Ruleset,
    prog: Program,
    code: Compiled,
}

fn variant(name: &str, hook: &str) -> Variant {
    let text = format!("{RULESET_HEAD}{hook}");
    let mut b = match muster::build_text(name, &text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    };
    let s = b
        .situation("s.toml", SITUATION)
        .unwrap_or_else(|d| panic!("situation does not read: {d:?}"));
    let prog = b
        .program(&s)
        .unwrap_or_else(|d| panic!("cannot specialise: {d:?}"));
    let code = odds::compile_for_sampling(&b.ruleset, &prog);
    Variant {
        ruleset: b.ruleset,
        prog,
        code,
    }
}

fn tier(c: &Compiled) -> &'static str {
    match c {
        Compiled::Typed(t) if t.is_native() => "typed, machine code",
        Compiled::Typed(_) => "typed bytecode, interpreted",
        Compiled::General(_) => "general bytecode, interpreted",
    }
}

/// One outcome's counts, sorted by value.
fn counts(prog: &Program, t: &Tally, outcome: &str) -> Vec<(Value, u64)> {
    let i = prog
        .outcomes
        .iter()
        .position(|o| o.name == outcome)
        .unwrap_or_else(|| panic!("no outcome `{outcome}`"));
    let mut c = t[i].clone();
    c.sort_by_key(|(v, _)| *v);
    c
}

/// How often `outcome` came out `v`.
fn count_of(prog: &Program, t: &Tally, outcome: &str, v: Value) -> u64 {
    counts(prog, t, outcome)
        .iter()
        .find(|(x, _)| *x == v)
        .map_or(0, |x| x.1)
}

fn main() {
    let n: u64 = match std::env::var("MUSTER_BENCH_SAMPLES") {
        Ok(s) => s.trim().replace('_', "").parse().unwrap_or_else(|_| {
            panic!("MUSTER_BENCH_SAMPLES must be a positive integer, got {s:?}")
        }),
        Err(_) => DEFAULT_SAMPLES,
    };
    assert!(n > 0, "MUSTER_BENCH_SAMPLES must be positive");

    let plain = variant("plain.muster", "");
    let trivial = variant("trivial.muster", TRIVIAL_HOOK);
    let rolling = variant("rolling.muster", ROLLING_HOOK);
    // (a') the no-hook program, forced into the general tier.
    let general = muster::run::bytecode::compile(&plain.ruleset, &plain.prog);
    for (what, v) in [("trivial hook", &trivial), ("rolling hook", &rolling)] {
        assert!(
            matches!(v.code, Compiled::General(_)),
            "with a {what} the program should run in the general tier, not {}",
            tier(&v.code)
        );
    }

    // The four loops; `k` picks one, `seed` its generator.
    let run = |k: usize, samples: u64, seed: u64| -> Tally {
        let mut rng = Rng::new(seed);
        let r = match k {
            0 => odds::tally_compiled(&plain.ruleset, &plain.prog, &plain.code, samples, &mut rng),
            1 => odds::tally_code(&plain.ruleset, &plain.prog, &general, samples, &mut rng),
            2 => odds::tally_compiled(
                &trivial.ruleset,
                &trivial.prog,
                &trivial.code,
                samples,
                &mut rng,
            ),
            _ => odds::tally_compiled(
                &rolling.ruleset,
                &rolling.prog,
                &rolling.code,
                samples,
                &mut rng,
            ),
        };
        r.unwrap_or_else(|d| panic!("tally failed: {d:?}"))
    };
    const NAMES: [&str; 4] = [
        "(a)  no hook",
        "(a') no hook, general tier",
        "(b)  trivial hook",
        "(c)  hook + roll(\"d6\")",
    ];

    // Warm-up: each loop once at a tenth of the size.
    for k in 0..4 {
        black_box(run(k, (n / 10).max(1), SEED));
    }
    // Best of REPS, the four loops in turn within each repetition; the last
    // repetition's tallies (seed SEED + REPS - 1) are kept for the checks.
    let mut best = [Duration::MAX; 4];
    let mut tallies: [Tally; 4] = Default::default();
    for rep in 0..REPS {
        for k in 0..4 {
            let t = Instant::now();
            let r = black_box(run(k, black_box(n), SEED + rep as u64));
            best[k] = best[k].min(t.elapsed());
            tallies[k] = r;
        }
    }

    // ------------------------------------------------------------ report
    let ns = best.map(|d| d.as_nanos() as f64 / n as f64);
    let [a, a_gen, b, c] = ns;
    println!("hooks: a Gun of 4 dice shoots (sixes on 6+); n = {n}, best of {REPS}, one thread");
    println!("  tier without a hook: {}", tier(&plain.code));
    println!("  tier with a hook   : {}", tier(&trivial.code));
    println!("{:-<64}", "");
    for (name, x) in NAMES.iter().zip(ns) {
        println!("{name:<36} {x:>10.2} ns/sample");
    }
    println!("{:-<64}", "");
    println!("{:<36} {:>10.2} ns", "one hook call (b - a')", b - a_gen);
    println!("{:<36} {:>10.2} ns", "one roll in a hook (c - b)", c - b);
    println!(
        "{:<36} {:>10.2} ns",
        "leaving the fast tier (a' - a)",
        a_gen - a
    );
    println!(
        "{:<36} {:>10.2} ns",
        "whole cost of the hook (b - a)",
        b - a
    );
    println!("{:-<64}", "");
    for (name, r) in [
        ("b / a", b / a),
        ("b / a'", b / a_gen),
        ("a' / a", a_gen / a),
        ("c / a", c / a),
        ("c / b", c / b),
    ] {
        println!("{name:<36} {r:>10.2}x");
    }
    println!("{:-<64}", "");

    // ------------------------------------------------------------ checks
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
    let mut all_ok = true;
    let hits = |k: usize| {
        let p = [&plain.prog, &plain.prog, &trivial.prog, &rolling.prog][k];
        counts(p, &tallies[k], "hits")
    };
    let same_ab = hits(0) == hits(2);
    let same_aa = hits(0) == hits(1);
    all_ok &= same_ab && same_aa;
    println!(
        "hits tallies, same seed: (a) == (b) {}, (a) == (a') {}",
        mark(same_ab),
        mark(same_aa)
    );
    let check = n >= MIN_N_FOR_CHECK;
    let differs = hits(0) != hits(3);
    if check {
        all_ok &= differs;
    }
    println!(
        "hits tallies, same seed: (c) differs from (a) (its roll draws) {}",
        if check {
            mark(differs)
        } else {
            "(n too small to check)"
        }
    );
    for (k, v, den) in [(2, &trivial, 1296.0), (3, &rolling, 2592.0)] {
        let p = 1.0 / den;
        let k_obs = count_of(&v.prog, &tallies[k], "misfired", Value::Bool(true));
        let expect = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let ok = (k_obs as f64 - expect).abs() <= SIGMAS * sd;
        let verdict = if check {
            all_ok &= ok;
            mark(ok)
        } else {
            "(n too small to check)"
        };
        println!(
            "misfired in {}: {k_obs} of {n} = {:.6} (1/{den} = {p:.6}, expect {expect:.0} +- {SIGMAS}*{sd:.1}) {verdict}",
            &NAMES[k][..3],
            k_obs as f64 / n as f64,
        );
    }
    if !all_ok {
        eprintln!("hooks bench: a check failed");
        std::process::exit(1);
    }
}
