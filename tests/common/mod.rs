//! What the ruleset test files share: building a ruleset, reading a
//! situation, its exact and sampled odds, and the binomial closed form the
//! odds are checked against. (Each test file uses only some of it.)

#![allow(dead_code)]

pub mod scene;

use muster::base::value::Value;
use muster::run::odds::Odds;
use muster::Build;
use std::path::Path;

/// The crate's folder, as the paths of its files begin.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/");

/// Diagnostics rendered as the tests pin them: every path relative to the
/// crate's folder *before* miette wraps the lines (a source's name, a path
/// in a help line), so that where the repository is checked out changes
/// neither a path nor where a long line wraps.
pub fn render_here(
    diags: &[muster::front::diagnostic::Diag],
    sources: &muster::front::source::Sources,
) -> String {
    let mut here = muster::front::source::Sources::default();
    for i in 0..sources.len() {
        let s = sources.get(muster::front::syntax::FileId(i as u32));
        here.add_in(s.name.replace(ROOT, ""), s.text.clone(), s.folder.clone());
    }
    let diags: Vec<_> = diags
        .iter()
        .cloned()
        .map(|mut d| {
            d.help = d.help.map(|h| h.replace(ROOT, ""));
            d
        })
        .collect();
    muster::front::diagnostic::render_plain(&diags, &here).replace(ROOT, "")
}

/// A ruleset of the repository, by its path under the crate's folder.
pub fn ruleset(rel: &str) -> Build {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    match muster::build(&path) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    }
}

pub fn situation(b: &mut Build, text: &str) -> muster::odds::situation::Situation {
    match b.situation("test.toml", text) {
        Ok(s) => s,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&d, &b.sources)
        ),
    }
}

pub fn exact(b: &mut Build, text: &str) -> Odds {
    let s = situation(b, text);
    match b.exact(&s) {
        Ok(o) => o,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&[d], &b.sources)
        ),
    }
}

pub fn sampled(b: &mut Build, text: &str, n: u64, seed: u64) -> Odds {
    let s = situation(b, text);
    match b.sampled(&s, n, seed) {
        Ok(o) => o,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&[d], &b.sources)
        ),
    }
}

/// An outcome symbol's value.
pub fn sym(b: &Build, name: &str) -> Value {
    Value::Sym(b.ruleset.symbols.iter().position(|s| s == name).unwrap() as u32)
}

/// P(outcome = v).
pub fn p(o: &Odds, outcome: &str, v: Value) -> f64 {
    o.get(outcome)
        .unwrap_or_else(|| panic!("no outcome {outcome}"))
        .p(v)
        .to_f64()
}

/// Binomial(n, q): the number of successes of n dice each succeeding with
/// probability q (a closed form, independent of the engine).
pub fn binomial(n: usize, q: f64) -> Vec<f64> {
    let mut d = vec![1.0];
    for _ in 0..n {
        let mut next = vec![0.0; d.len() + 1];
        for (k, pk) in d.iter().enumerate() {
            next[k] += pk * (1.0 - q);
            next[k + 1] += pk * q;
        }
        d = next;
    }
    d
}

/// A fresh, empty folder of the test's own under the system's temporary
/// folder, `muster-{name}-{process id}` (whatever an earlier run of the same
/// test left there is removed first: it is the test's, never a user's).
pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("muster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The `muster` binary as a command, its parse cache in the build's own
/// scratch folder (never the user's `~/.cache`), whatever the caller's
/// environment says.
pub fn muster_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_muster"));
    with_test_cache(&mut c);
    c
}

/// A command that runs `muster`, given the build's scratch folder as its
/// parse cache (see [`muster_command`]).
pub fn with_test_cache(c: &mut std::process::Command) -> &mut std::process::Command {
    c.env_remove("MUSTER_NO_CACHE").env(
        "XDG_CACHE_HOME",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
    )
}

/// The `muster` binary run with `args`, in folder `dir` (relative paths
/// in `args` are read from there).
pub fn muster_in(dir: &Path, args: &[&str]) -> std::process::Output {
    muster_command()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A draft of a shipped ruleset (written as if in `rules/`), that must compile.
pub fn draft(text: &str) -> Build {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    match muster::build_text("draft.muster", text, Some(&rules)) {
        Ok(b) => b,
        Err((d, s)) => panic!(
            "the draft should compile:\n{}",
            muster::front::diagnostic::render_plain(&d, &s)
        ),
    }
}

/// A draft (as [`draft`]) that must be rejected: its diagnostics' codes
/// and their text.
pub fn draft_refused(text: &str) -> (Vec<&'static str>, String) {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    match muster::build_text("draft.muster", text, Some(&rules)) {
        Ok(_) => panic!("the draft compiled, but it has a mistake the compiler should catch"),
        Err((d, s)) => (
            d.iter().map(|d| d.code).collect(),
            muster::front::diagnostic::render_plain(&d, &s),
        ),
    }
}

/// The binary's standard output, having asserted that it succeeded (else
/// its standard error is the failure's message).
pub fn succeeded(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
pub mod table;

/// `muster simulate`'s run of `games` games from `seed` on a pool of
/// `threads` threads of its own (the summary must not depend on it).
pub fn simulate_on(
    prep: &muster::battle::game::Prepared,
    threads: usize,
    games: u64,
    seed: u64,
) -> muster::cli::simulate::Summary {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| muster::cli::simulate::run(prep, games, seed, &|| {}).unwrap())
}
