//! Build script: the commit the program is built from, for `--version`.
//!
//! `MUSTER_COMMIT` is the short hash of `HEAD` when building in a git
//! checkout (a worktree too), else "unknown" (a source archive, no git).
//! The script runs again only when `HEAD` moves: the files naming it are
//! watched (only those that exist, so a missing one does not rebuild on
//! every build).

use std::path::Path;
use std::process::Command;

/// What `git ARGS` prints, trimmed; None when git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MUSTER_COMMIT={commit}");
    // The command-line program is linked at a fixed address on Linux (not
    // position-independent): a PIE of this size carries ~20,000 relative
    // relocations that the loader applies on every start, touching ~200
    // pages (a third of a one-shot `muster odds` call's page faults; issue
    // 33). The library and the tests are linked as before.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    // HEAD itself (a branch switch), the branch's ref (a commit), and the
    // packed refs (a ref packed by gc).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for w in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &w]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
