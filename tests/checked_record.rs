//! The record that a ruleset compiled clean (interpreter/front/cache.rs,
//! `CheckedRecord`; issue 33): `muster odds` leaves out the checks that
//! only find mistakes when the very texts and numbers it compiles compiled
//! clean before. A record is found only for the same input; any edit to a
//! text read, a number option, or the build is no record. A corrupt record
//! or a file not the program's is no record (the second left as it is); a
//! folder that cannot be written is no error. On the command line: the
//! same odds with the record as without any cache, and a mistake only the
//! left-out checks find (a loop of defines) still reported, word for word.

use crate::common::scratch;
use crate::load_cache::{files, odds_of};
use muster::front::cache::{compile_input, CheckedRecord, Lookup};
use muster::front::source::Sources;
use std::path::Path;

fn sources(texts: &[(&str, &str)]) -> Sources {
    let mut s = Sources::default();
    for (name, text) in texts {
        s.add(*name, *text);
    }
    s
}

#[test]
fn the_input_hash_moves_with_any_text_name_order_or_number() {
    let base = compile_input(&sources(&[("r.muster", "ruleset R\n"), ("s", "x")]), &[]);
    let same = compile_input(&sources(&[("r.muster", "ruleset R\n"), ("s", "x")]), &[]);
    assert_eq!(base, same);
    let others = [
        compile_input(&sources(&[("r.muster", "ruleset Q\n"), ("s", "x")]), &[]),
        compile_input(&sources(&[("q.muster", "ruleset R\n"), ("s", "x")]), &[]),
        compile_input(&sources(&[("s", "x"), ("r.muster", "ruleset R\n")]), &[]),
        compile_input(&sources(&[("r.muster", "ruleset R\n")]), &[]),
        // A boundary moved between a name and its text.
        compile_input(&sources(&[("r.muster", "ruleset R\n"), ("sx", "")]), &[]),
        compile_input(
            &sources(&[("r.muster", "ruleset R\n"), ("s", "x")]),
            &[("n".into(), 1)],
        ),
    ];
    for (i, o) in others.iter().enumerate() {
        assert_ne!(*o, base, "variant {i}");
    }
    let n1 = compile_input(&sources(&[("s", "x")]), &[("n".into(), 1)]);
    let n2 = compile_input(&sources(&[("s", "x")]), &[("n".into(), 2)]);
    assert_ne!(n1, n2);
}

#[test]
fn a_record_is_found_for_its_input_only() {
    let d = scratch("checked-lookup");
    let r = CheckedRecord::in_dir(d.join("checked"));
    assert_eq!(r.lookup("r.muster", 7), Lookup::Miss);
    r.note("r.muster", 7).unwrap();
    assert_eq!(r.lookup("r.muster", 7), Lookup::Hit);
    // Another input (an edited text) is stale; another ruleset has none.
    assert_eq!(r.lookup("r.muster", 8), Lookup::Stale);
    assert_eq!(r.lookup("q.muster", 7), Lookup::Miss);
    // Rewritten for the new input, the old one is stale.
    r.note("r.muster", 8).unwrap();
    assert_eq!(r.lookup("r.muster", 8), Lookup::Hit);
    assert_eq!(r.lookup("r.muster", 7), Lookup::Stale);
    assert_eq!(
        files(r.dir()).len(),
        1,
        "one record, no temporary file left"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_corrupt_or_foreign_record_is_no_record() {
    let d = scratch("checked-corrupt");
    let r = CheckedRecord::in_dir(d.join("checked"));
    r.note("r.muster", 7).unwrap();
    let (name, bytes) = files(r.dir()).remove(0);
    let path = r.dir().join(&name);
    // Cut short, and lengthened: ours, but not a record.
    for bad in [&bytes[..bytes.len() - 1], &[&bytes[..], b"x"].concat()[..]] {
        std::fs::write(&path, bad).unwrap();
        assert_eq!(r.lookup("r.muster", 7), Lookup::Corrupt);
        r.note("r.muster", 7).unwrap();
        assert_eq!(r.lookup("r.muster", 7), Lookup::Hit, "rewritten");
    }
    // Another version's record is stale and replaced.
    let mut old = bytes.clone();
    old[16] = b'0'; // "muster-checked-v0"
    std::fs::write(&path, &old).unwrap();
    assert_eq!(r.lookup("r.muster", 7), Lookup::Stale);
    // A file that is not ours: not read as a record, never replaced.
    std::fs::write(&path, "someone else's notes").unwrap();
    assert_eq!(r.lookup("r.muster", 7), Lookup::Foreign);
    r.note("r.muster", 7).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"someone else's notes".to_vec()
    );
    assert_eq!(files(r.dir()).len(), 1, "no temporary file left");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_folder_that_cannot_be_written_is_no_error() {
    let d = scratch("checked-unwritable");
    std::fs::write(d.join("checked"), "a file").unwrap();
    let r = CheckedRecord::in_dir(d.join("checked"));
    assert!(r.note("r.muster", 7).is_err());
    assert!(matches!(
        r.lookup("r.muster", 7),
        Lookup::Miss | Lookup::Corrupt
    ));
    assert_eq!(
        std::fs::read(d.join("checked")).unwrap(),
        b"a file".to_vec()
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `muster odds RULES --situation SITUATION` in `dir` with the cache at
/// `xdg`, its lookups traced: (success, stdout, stderr without the trace,
/// the trace).
fn odds(dir: &Path, xdg: &Path, rules: &Path, extra: &[&str]) -> (bool, String, String, String) {
    let out = odds_of(rules, dir, xdg, &[], extra);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let (trace, rest): (Vec<&str>, Vec<&str>) = err
        .lines()
        .partition(|l| l.starts_with("parse cache: ") || l.starts_with("checked record ("));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        rest.join("\n"),
        trace.join("\n"),
    )
}

#[test]
fn the_command_line_gives_the_same_odds_and_the_same_mistakes() {
    let d = scratch("checked-cli");
    let xdg = d.join("xdg");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("rules/tillys_very_bad_day.muster")).unwrap();
    let rules = d.join("tvbd.muster");
    std::fs::write(&rules, &text).unwrap();
    let plain = odds(&d, &d.join("unused"), &rules, &["--no-cache"]);
    assert!(plain.0, "{}", plain.2);
    assert!(plain.1.contains("184/729"), "{}", plain.1);
    let first = odds(&d, &xdg, &rules, &[]);
    assert!(first.3.contains("checked record (Miss)"), "{}", first.3);
    let second = odds(&d, &xdg, &rules, &[]);
    assert!(second.3.contains("checked record (Hit)"), "{}", second.3);
    let json = odds(&d, &xdg, &rules, &["--json"]);
    assert!(json.3.contains("checked record (Hit)"), "{}", json.3);
    let json_plain = odds(&d, &d.join("unused"), &rules, &["--json", "--no-cache"]);
    for got in [&first, &second] {
        assert_eq!((got.0, &got.1, &got.2), (plain.0, &plain.1, &plain.2));
    }
    assert_eq!((json.0, &json.1), (json_plain.0, &json_plain.1));
    // A loop of defines, which only the left-out checks find: the edit is
    // another input, so the ruleset is checked whole and refused as
    // without any cache, and no record of it is written.
    let looped = format!(
        "{text}\ndefine loop_a(x: int): int = loop_b(x) + 1\ndefine loop_b(x: int): int = loop_a(x)\n"
    );
    std::fs::write(&rules, &looped).unwrap();
    let records = files(&xdg.join("muster/checked"));
    assert_eq!(records.len(), 1);
    let want = odds(&d, &d.join("unused"), &rules, &["--no-cache"]);
    assert!(
        !want.0 && want.2.contains("muster::recursion"),
        "{}",
        want.2
    );
    for _ in 0..2 {
        let got = odds(&d, &xdg, &rules, &[]);
        assert!(got.3.contains("checked record (Stale)"), "{}", got.3);
        assert_eq!((got.0, &got.1, &got.2), (want.0, &want.1, &want.2));
    }
    assert_eq!(files(&xdg.join("muster/checked")), records, "not rewritten");
    // Mended: the old record holds again.
    std::fs::write(&rules, &text).unwrap();
    let again = odds(&d, &xdg, &rules, &[]);
    assert!(again.3.contains("checked record (Hit)"), "{}", again.3);
    assert_eq!((again.0, &again.1, &again.2), (plain.0, &plain.1, &plain.2));
    // A number option is part of the input.
    let opt = odds(&d, &xdg, &rules, &["--option", "nonesuch=3"]);
    assert!(!opt.3.contains("checked record (Hit)"), "{}", opt.3);
    let _ = std::fs::remove_dir_all(&d);
}
