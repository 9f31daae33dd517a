//! A long fuzzing run (the bounded one is tests/fuzz.rs):
//!
//! ```sh
//! cargo run --release --example soak -- --cases 100000 [--seed FIRST] [--save]
//! ```
//!
//! Runs cases FIRST.. through check, odds, query and battle, under a 8 GiB
//! memory limit and a watchdog (`--limit SECONDS` a case, default 60), and
//! prints what failed, each with the seed that reproduces it. With
//! `--save`, each case is written to target/fuzz/ before it runs, so that
//! one that brings the process down (a stack overflow, an abort) is on
//! disk. Exit status 1 if any case failed.

#[path = "../tests/fuzz/case.rs"]
mod case;
#[path = "../tests/fuzz/gen.rs"]
mod gen;

use std::time::{Duration, Instant};

fn main() {
    let mut cases = 10_000u64;
    let mut first = 0u64;
    let mut save = false;
    let mut limit = 60u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} takes a number"))
        };
        match a.as_str() {
            "--cases" => cases = value("--cases"),
            "--seed" => first = value("--seed"),
            "--limit" => limit = value("--limit"),
            "--save" => save = true,
            other => {
                eprintln!("soak: unknown argument {other} (--cases N, --seed FIRST, --limit SECONDS, --save)");
                std::process::exit(2);
            }
        }
    }
    // A memory limit: a case that asks for more fails an allocation (the
    // process aborts with the seed on screen) instead of taking the machine.
    #[cfg(unix)]
    // SAFETY: setrlimit with a valid struct, before any other thread runs.
    unsafe {
        let r = libc::rlimit {
            rlim_cur: 8 << 30,
            rlim_max: 8 << 30,
        };
        libc::setrlimit(libc::RLIMIT_AS, &r);
    }
    case::watchdog(Duration::from_secs(limit));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz");
    std::fs::create_dir_all(&dir).unwrap();
    let start = Instant::now();
    let (mut built, mut played, mut odds, mut diags) = (0u64, 0u64, 0u64, 0u64);
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let c = case::case(seed);
        if save {
            std::fs::write(dir.join("case.muster"), &c.ruleset).unwrap();
            std::fs::write(
                dir.join("case-situation.toml"),
                c.situation.as_deref().unwrap_or(""),
            )
            .unwrap();
            std::fs::write(
                dir.join("case-scenario.toml"),
                c.scenario.as_deref().unwrap_or(""),
            )
            .unwrap();
            std::fs::write(dir.join("case-query.txt"), &c.query).unwrap();
        }
        eprint!("\rcase {seed}");
        case::running(Some(seed));
        match case::run(&c, &dir) {
            Ok(r) => {
                built += u64::from(r.built);
                played += u64::from(r.played);
                odds += u64::from(r.odds);
                diags += r.diagnostics as u64;
            }
            Err(m) => {
                eprintln!("\ncase {seed} ({:?}) panicked: {m}", c.kind);
                failures.push(seed);
            }
        }
        case::running(None);
    }
    eprintln!();
    println!(
        "{cases} cases (seeds {first}..{}) in {:.0} s: {built} built, {played} played a battle, {odds} gave odds, {diags} diagnostics rendered, {} failed",
        first + cases,
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    if !failures.is_empty() {
        println!("failed: {failures:?}");
        std::process::exit(1);
    }
}
