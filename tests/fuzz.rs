//! The fuzzing harness, bounded for CI (issue 28): cases generated from the
//! grammar and the shipped files (tests/fuzz/gen.rs) run through check,
//! odds, query and battle (tests/fuzz/case.rs); none may panic, hang or
//! crash. The long run is `cargo run --release --example soak` (README).

mod case;
pub(crate) mod gen;

use std::time::Duration;

/// Cases a test run tries: fewer in a debug build, where each is slower.
const CASES: u64 = if cfg!(debug_assertions) { 60 } else { 400 };

#[test]
fn generated_cases_never_panic_hang_or_crash() {
    case::watchdog(Duration::from_secs(if cfg!(debug_assertions) {
        300
    } else {
        60
    }));
    let scratch = std::env::temp_dir().join(format!("muster-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let (mut built, mut played, mut odds, mut diags) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for seed in 0..CASES {
        let c = case::case(seed);
        case::running(Some(seed));
        match case::run(&c, &scratch) {
            Ok(r) => {
                built += usize::from(r.built);
                played += usize::from(r.played);
                odds += usize::from(r.odds);
                diags += r.diagnostics;
            }
            Err(m) => failures.push(format!("case {seed} ({:?}): {m}", c.kind)),
        }
        case::running(None);
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The cases reach every stage, so that a pass means something.
    let n = CASES as usize;
    assert!(built * 3 > n, "only {built} of {n} built");
    assert!(played * 10 > n, "only {played} of {n} played a battle");
    assert!(odds * 20 > n, "only {odds} of {n} gave odds");
    assert!(diags > n / 2, "only {diags} diagnostics rendered");
}

#[test]
fn a_seed_gives_the_same_case() {
    for seed in [0, 7, 123] {
        let (a, b) = (case::case(seed), case::case(seed));
        assert_eq!(a.ruleset, b.ruleset);
        assert_eq!(a.situation, b.situation);
        assert_eq!(a.scenario, b.scenario);
        assert_eq!(a.query, b.query);
    }
    assert_ne!(case::case(1).ruleset, case::case(2).ruleset);
}
