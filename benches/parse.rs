//! Parse benchmark (issue 33, item 5): how long the grammar and the tree
//! builder take to read each shipped ruleset, per byte.
//!
//! For each file of rules/ and stdlib/ it prints the best of `REPS` parses
//! (`muster::front::parse::parse_file`, text to syntax tree) in microseconds and
//! nanoseconds a byte, then the total, and the ratio against the parser
//! before issue 33 measured on the same machine kind (`BEFORE_NS_PER_BYTE`,
//! Tilly's Very Bad Day; wall time moves with the machine, so the
//! instruction count below is the figure to trust).
//!
//! Instructions a byte, the machine-independent figure (the parser of
//! before issue 33 took 1,825 a byte on Tilly's Very Bad Day; 739 after
//! the first pass, 609 after the second: an expression's levels silent,
//! comments as whitespace, items and statements by first letter; about 519
//! after the third: one-character words as ranges, a value one pair and
//! its name read once, no failing skip before `neg` and `not`; measured as
//! `muster --no-cache check` of each ruleset with the same toggle, 0.874x
//! the instructions of before on TVBD, 0.872x on the other three):
//!
//! ```text
//! MUSTER_BENCH_ONLY=tillys_very_bad_day. MUSTER_BENCH_REPS=1 \
//!   valgrind --tool=callgrind --toggle-collect='muster::front::parse::parse_file' \
//!   --callgrind-out-file=/tmp/cg.parse target/release/deps/parse-HASH --bench
//! ```
//!
//! (`cargo bench --bench parse --no-run` prints the binary's path); the
//! collected total over the file's size (printed) is instructions a byte.
//! The dot in the name matters: without it the v2 draft
//! (tillys_very_bad_day_v2.muster) is parsed too, and the total covers
//! both files.
//!
//! Environment: `MUSTER_BENCH_ONLY=NAME` parses only the files whose name
//! contains NAME; `MUSTER_BENCH_REPS=N` parses each N times (default 20).

use muster::front::parse::parse_file;
use muster::front::syntax::FileId;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Nanoseconds a byte the parser took on Tilly's Very Bad Day before
/// issue 33 (best of 20, release build, this project's 2-core machine).
const BEFORE_NS_PER_BYTE: f64 = 206.0;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let only = std::env::var("MUSTER_BENCH_ONLY").unwrap_or_default();
    let reps: usize = std::env::var("MUSTER_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut files = Vec::new();
    for dir in ["rules", "stdlib"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "muster")
                && p.to_string_lossy().contains(only.as_str())
            {
                files.push(p);
            }
        }
    }
    files.sort();
    println!(
        "{:<40} {:>9} {:>10} {:>8}",
        "file", "bytes", "best us", "ns/byte"
    );
    let (mut bytes, mut time) = (0usize, Duration::ZERO);
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let mut best = Duration::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            let parsed = black_box(parse_file(black_box(&text), FileId(0)));
            best = best.min(t.elapsed());
            assert!(parsed.is_ok(), "{} does not parse", p.display());
        }
        let name = p.file_name().unwrap().to_string_lossy();
        let per_byte = best.as_nanos() as f64 / text.len() as f64;
        println!(
            "{name:<40} {:>9} {:>10.0} {per_byte:>8.1}",
            text.len(),
            best.as_secs_f64() * 1e6
        );
        if name.starts_with("tillys_very_bad_day.") && BEFORE_NS_PER_BYTE > 0.0 {
            println!(
                "  before issue 33: {BEFORE_NS_PER_BYTE:.1} ns/byte, {:.1}x faster now",
                BEFORE_NS_PER_BYTE / per_byte
            );
        }
        bytes += text.len();
        time += best;
    }
    println!(
        "{:<40} {bytes:>9} {:>10.0} {:>8.1}",
        "total",
        time.as_secs_f64() * 1e6,
        time.as_nanos() as f64 / bytes.max(1) as f64
    );
}
