//! The parse cache (interpreter/front/cache.rs, issue 33 item 5): a tree
//! read back is the tree the grammar gives; an edited file, a corrupt entry
//! and a file of someone else's at an entry's name are each parsed again
//! (the first two rewritten, the last left alone), never an error; a text
//! that does not parse gives its diagnostic and leaves nothing; and the
//! command line writes only in the cache folder it is given, gives the same
//! odds with and without the cache, and writes nothing with `--no-cache`
//! or `MUSTER_NO_CACHE`.

use crate::common::{scratch, succeeded};
use muster::front::cache::{Lookup, ParseCache};
use muster::front::parse::parse_file;
use muster::front::syntax::{File, FileId};
use std::path::Path;

const A: &str = "ruleset A\nstat move\nunits (move) { Horse : = 6 }\n";
const B: &str = "ruleset B\nstat move\nunits (move) { Horse : = 4 }\n";

/// A tree as text, to compare two trees whole (spans included).
fn shown(f: &Result<File, muster::front::diagnostic::Diag>) -> String {
    match f {
        Ok(f) => format!("{f:?}"),
        Err(d) => format!("refused: {}", d.message),
    }
}

/// Every file of a folder, by name, with its bytes (tests/checked_record.rs
/// too).
pub(crate) fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap_or_default(),
                )
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_shipped_file_reads_back_as_the_tree_the_grammar_gives() {
    let cache = ParseCache::in_dir(scratch("cache-shipped"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["rules", "stdlib"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "muster") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.display().to_string();
            let want = shown(&parse_file(&text, FileId(3)));
            let (first, how) = cache.parse(&name, &text, FileId(3));
            assert_eq!(how, Lookup::Miss, "{name}");
            assert_eq!(shown(&first), want, "{name}");
            let (again, how) = cache.parse(&name, &text, FileId(3));
            assert_eq!(how, Lookup::Hit, "{name}");
            assert_eq!(shown(&again), want, "{name}: the tree read back");
            // Another FileId is another entry (spans name their file).
            let (other, how) = cache.parse(&name, &text, FileId(4));
            assert_eq!(how, Lookup::Miss, "{name}");
            assert_eq!(shown(&other), shown(&parse_file(&text, FileId(4))));
            n += 1;
        }
    }
    assert!(n >= 8, "only {n} files");
    let _ = std::fs::remove_dir_all(cache.dir());
}

#[test]
fn an_edited_file_is_parsed_again_and_its_entry_rewritten() {
    let cache = ParseCache::in_dir(scratch("cache-stale"));
    assert_eq!(cache.parse("x.muster", A, FileId(0)).1, Lookup::Miss);
    let (tree, how) = cache.parse("x.muster", B, FileId(0));
    assert_eq!(how, Lookup::Stale);
    assert_eq!(shown(&tree), shown(&parse_file(B, FileId(0))));
    assert!(shown(&tree).contains("\"B\""), "{}", shown(&tree));
    assert_eq!(cache.parse("x.muster", B, FileId(0)).1, Lookup::Hit);
    // One entry for the name, not one per text.
    assert_eq!(files(cache.dir()).len(), 1);
    let _ = std::fs::remove_dir_all(cache.dir());
}

#[test]
fn a_corrupt_entry_is_parsed_again_and_rewritten() {
    let cache = ParseCache::in_dir(scratch("cache-corrupt"));
    let _ = cache.parse("x.muster", A, FileId(0));
    let entry = cache.entry("x.muster", FileId(0));
    let good = std::fs::read(&entry).unwrap();
    // Ours (the magic line, the build's and the text's hashes), but the
    // tree cut short;
    // then only the magic line; then the tree's bytes garbled.
    let mut garbled = good.clone();
    for b in &mut garbled[56..] {
        *b ^= 0x5a;
    }
    for bad in [
        good[..good.len() - 7].to_vec(),
        good[..16].to_vec(),
        garbled,
    ] {
        std::fs::write(&entry, &bad).unwrap();
        let (tree, how) = cache.parse("x.muster", A, FileId(0));
        assert_eq!(how, Lookup::Corrupt);
        assert_eq!(shown(&tree), shown(&parse_file(A, FileId(0))));
        assert_eq!(std::fs::read(&entry).unwrap(), good, "rewritten");
        assert_eq!(cache.parse("x.muster", A, FileId(0)).1, Lookup::Hit);
    }
    // An entry another build wrote (its build hash differs), or one of an
    // older format, is ours but stale: rewritten in place, so a file keeps
    // one entry however often the program is rebuilt.
    let mut other_build = good.clone();
    other_build[16] ^= 1;
    let mut old_format = b"muster-parse-v1\n".to_vec();
    old_format.extend_from_slice(&good[32..]);
    for stale in [other_build, old_format] {
        std::fs::write(&entry, &stale).unwrap();
        let (tree, how) = cache.parse("x.muster", A, FileId(0));
        assert_eq!(how, Lookup::Stale);
        assert_eq!(shown(&tree), shown(&parse_file(A, FileId(0))));
        assert_eq!(std::fs::read(&entry).unwrap(), good, "rewritten");
    }
    assert_eq!(files(cache.dir()).len(), 1);
    let _ = std::fs::remove_dir_all(cache.dir());
}

#[test]
fn a_file_not_ours_at_an_entrys_name_is_left_alone() {
    let cache = ParseCache::in_dir(scratch("cache-foreign"));
    let entry = cache.entry("x.muster", FileId(0));
    std::fs::write(&entry, "someone's notes\n").unwrap();
    for _ in 0..2 {
        let (tree, how) = cache.parse("x.muster", A, FileId(0));
        assert_eq!(how, Lookup::Foreign);
        assert_eq!(shown(&tree), shown(&parse_file(A, FileId(0))));
        assert_eq!(
            std::fs::read_to_string(&entry).unwrap(),
            "someone's notes\n"
        );
    }
    // Nothing else left behind (no temporary file).
    assert_eq!(files(cache.dir()).len(), 1);
    let _ = std::fs::remove_dir_all(cache.dir());
}

#[test]
fn a_text_that_does_not_parse_gives_its_diagnostic_and_leaves_nothing() {
    let cache = ParseCache::in_dir(scratch("cache-refused").join("parse"));
    let bad = "ruleset A\nunits (move { }\n";
    let (got, how) = cache.parse("x.muster", bad, FileId(0));
    assert_eq!(how, Lookup::Refused);
    let want = parse_file(bad, FileId(0)).unwrap_err();
    let got = got.unwrap_err();
    assert_eq!(got.message, want.message);
    assert_eq!((got.span, &got.label), (want.span, &want.label));
    assert!(!cache.dir().exists(), "no folder made for a refused text");
}

#[test]
fn a_cache_that_cannot_be_written_is_no_error() {
    let d = scratch("cache-unwritable");
    // The cache's folder is a file: nothing can be created under it.
    std::fs::write(d.join("parse"), "a file").unwrap();
    let cache = ParseCache::in_dir(d.join("parse"));
    for _ in 0..2 {
        let (tree, how) = cache.parse("x.muster", A, FileId(0));
        assert!(matches!(how, Lookup::Miss | Lookup::Corrupt), "{how:?}");
        assert_eq!(shown(&tree), shown(&parse_file(A, FileId(0))));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `muster odds` on the TVBD situation in `dir`, with `XDG_CACHE_HOME`
/// at `xdg` and the extra environment and arguments given.
fn odds(dir: &Path, xdg: &Path, env: &[(&str, &str)], extra: &[&str]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    odds_of(
        &root.join("rules/tillys_very_bad_day.muster"),
        dir,
        xdg,
        env,
        extra,
    )
}

/// [`odds`] under the ruleset at `rules` (tests/checked_record.rs too).
pub(crate) fn odds_of(
    rules: &Path,
    dir: &Path,
    xdg: &Path,
    env: &[(&str, &str)],
    extra: &[&str],
) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_muster"));
    c.arg("odds")
        .arg(rules)
        .arg("--situation")
        .arg(root.join("rules/situations/tvbd_horse_charges_pike.toml"))
        .args(extra)
        .current_dir(dir)
        .env_remove("MUSTER_NO_CACHE")
        .env("XDG_CACHE_HOME", xdg)
        .env("MUSTER_CACHE_TRACE", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn the_command_line_caches_in_the_users_cache_folder_only() {
    let d = scratch("cache-cli");
    let xdg = d.join("xdg");
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let before = files(&rules);
    let first = odds(&d, &xdg, &[], &[]);
    let trace = String::from_utf8_lossy(&first.stderr).into_owned();
    // The ruleset and the two libraries it imports: parsed and written.
    assert_eq!(trace.matches(": Miss").count(), 3, "{trace}");
    let second = odds(&d, &xdg, &[], &[]);
    let trace = String::from_utf8_lossy(&second.stderr).into_owned();
    assert_eq!(trace.matches(": Hit").count(), 3, "{trace}");
    assert_eq!(files(&xdg.join("muster/parse")).len(), 3);
    let plain = odds(&d, &d.join("unused"), &[], &["--no-cache"]);
    let unset = odds(&d, &d.join("unused"), &[("MUSTER_NO_CACHE", "1")], &[]);
    for out in [&plain, &unset] {
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (succeeded(first), succeeded(second));
    assert_eq!(a, b);
    assert_eq!(a, succeeded(plain));
    assert_eq!(a, succeeded(unset));
    assert!(a.contains("1.0000"), "{a}");
    assert!(
        !d.join("unused").exists(),
        "no cache written when it is off"
    );
    assert_eq!(files(&rules), before, "nothing written next to the ruleset");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_edited_ruleset_is_read_afresh_by_the_command_line() {
    let d = scratch("cache-cli-edit");
    let xdg = d.join("xdg");
    let path = d.join("r.muster");
    let check = |text: &str| {
        std::fs::write(&path, text).unwrap();
        let out = muster_in_env(&d, &xdg, &["check", "r.muster"]);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let one = "ruleset One\nstat move\nunits (move) { Horse : = 6 }\n";
    let two = "ruleset Two\nstat move\nunits (move) { Horse : = 6\n Foot : = 4 }\n";
    let (ok, out, err) = check(one);
    assert!(ok && out.contains("(1 unit type,"), "{out}{err}");
    let (ok, out, err) = check(two);
    assert!(ok && out.contains("(2 unit types,"), "{out}{err}");
    assert!(err.contains("r.muster: Stale"), "{err}");
    // Broken, then mended: the diagnostic each time, then the old entry's
    // text read again.
    for _ in 0..2 {
        let (ok, _, err) = check("ruleset One\nunits (move { }\n");
        assert!(!ok && err.contains("muster::syntax"), "{err}");
    }
    let (ok, out, err) = check(one);
    assert!(ok && out.contains("(1 unit type,"), "{out}{err}");
    assert!(err.contains("r.muster: Stale"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `common::muster_in` with the cache at `xdg` and its lookups traced.
fn muster_in_env(dir: &Path, xdg: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_muster"))
        .args(args)
        .current_dir(dir)
        .env_remove("MUSTER_NO_CACHE")
        .env("XDG_CACHE_HOME", xdg)
        .env("MUSTER_CACHE_TRACE", "1")
        .output()
        .unwrap()
}
