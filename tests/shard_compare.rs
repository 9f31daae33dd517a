//! `compare` beyond one machine (issue 33): `compare A B --shard I/N` plays
//! a slice of the paired games and `muster merge` adds the slices up to
//! exactly what the unsplit `compare` prints, text and JSON, byte for byte;
//! shards that are not one whole comparison (mixed with `simulate`'s, of
//! other rulesets, options, seeds or runs, a slice missing or twice) are
//! refused with a diagnostic naming the file and a help line.

use crate::common;

use muster::cli::simulate::shard;
use muster::front::source::Sources;
use std::path::Path;

const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);
const STEADY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/tvbd_steady_pike.muster");

/// `muster compare TVBD STEADY --runs RUNS --seed 3 EXTRA...`'s standard output.
fn compare(dir: &Path, runs: u64, extra: &[&str]) -> String {
    let runs = runs.to_string();
    let mut args = vec!["compare", TVBD, STEADY, "--runs", &runs, "--seed", "3"];
    args.extend(extra);
    common::succeeded(common::muster_in(dir, &args))
}

/// The N compare shard files of a run, written into `dir` as `c1.json`...:
/// (name, text).
fn shards(dir: &Path, runs: u64, n: u64, extra: &[&str]) -> Vec<(String, String)> {
    (1..=n)
        .map(|i| {
            let name = format!("c{i}.json");
            let slice = format!("{i}/{n}");
            let mut args = vec!["--shard", slice.as_str()];
            args.extend(extra);
            let out = compare(dir, runs, &args);
            std::fs::write(dir.join(&name), &out).unwrap();
            (name, out)
        })
        .collect()
}

/// `muster merge FILES... EXTRA...` in `dir`.
fn merge_cmd(dir: &Path, files: &[(String, String)], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|(f, _)| f.as_str()));
    args.extend(extra);
    common::muster_in(dir, &args)
}

#[test]
fn merged_compare_shards_are_the_whole_comparison_byte_for_byte() {
    let d = common::scratch("shard-compare-whole");
    let whole_text = compare(&d, 30, &[]);
    let whole_json = compare(&d, 30, &["--json"]);
    let mut files = shards(&d, 30, 4, &[]);
    // Each shard plays its slice of the games under both rulesets.
    let v: serde_json::Value = serde_json::from_str(&files[1].1).unwrap();
    assert_eq!(v["format"], "muster compare shard");
    assert_eq!(
        (v["first_game"].as_u64(), v["end_game"].as_u64()),
        (Some(7), Some(15))
    );
    assert_eq!(v["paired"]["games"], 8);
    assert_eq!(v["paired"]["a"]["games"], 8);
    assert_eq!(v["paired"]["sums"].as_array().unwrap().len(), 17);
    // Given in any order.
    files.swap(0, 3);
    files.swap(1, 2);
    let text = common::succeeded(merge_cmd(&d, &files, &[]));
    assert_eq!(text, whole_text);
    let json = common::succeeded(merge_cmd(&d, &files, &["--json"]));
    assert_eq!(json, whole_json);
    // The comparison is real: 30 games, the rules' difference above it.
    assert!(text.contains("30 games under each, seed 3"), "{text}");
    assert!(text.contains("of 17 measures moved"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["kind"], "compare");
    assert_eq!(v["comparison"]["games"], 30);
    assert!(!v["diff"]["changes"].as_array().unwrap().is_empty());
}

#[test]
fn options_of_each_side_travel_with_the_shards() {
    // An option under B only: the merged comparison is the unsplit one.
    let d = common::scratch("shard-compare-option");
    let opt = ["--option-b", "variable_army_morale=on"];
    let whole = compare(&d, 15, &[&["--json"][..], &opt].concat());
    let files = shards(&d, 15, 2, &opt);
    assert_eq!(common::succeeded(merge_cmd(&d, &files, &["--json"])), whole);
}

/// The messages of `merge`'s diagnostics and their rendering, or the
/// merged games.
fn merged(files: &[(String, String)]) -> Result<u64, (Vec<String>, String)> {
    let mut sources = Sources::default();
    shard::merge(files, &mut sources)
        .map(|m| m.games())
        .map_err(|d| {
            let rendered = muster::front::diagnostic::render_plain(&d, &sources);
            (d.into_iter().map(|d| d.message).collect(), rendered)
        })
}

/// The first message of a refused merge, after checking that its
/// rendering names `file` and has a help line.
fn refused(files: &[(String, String)], file: &str) -> Vec<String> {
    let (messages, rendered) = merged(files).expect_err("the merge should be refused");
    assert!(rendered.contains(file), "{rendered}");
    assert!(rendered.contains("help:"), "{rendered}");
    messages
}

#[test]
fn simulate_and_compare_shards_do_not_mix() {
    let d = common::scratch("shard-compare-mix");
    let c = shards(&d, 12, 2, &[]);
    let out = common::succeeded(common::muster_in(
        &d,
        &[
            "simulate", TVBD, "--runs", "6", "--seed", "3", "--shard", "2/2",
        ],
    ));
    let mixed = vec![c[0].clone(), ("sim2.json".to_string(), out)];
    assert_eq!(
        refused(&mixed, "sim2.json"),
        ["this is a shard of `muster simulate`, but the first shard given is of `muster compare`"]
    );
    // On the command line: exit 1, the file named, nothing printed.
    std::fs::write(d.join("sim2.json"), &mixed[1].1).unwrap();
    let out = merge_cmd(&d, &mixed, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sim2.json") && err.contains("separately"),
        "{err}"
    );
}

#[test]
fn shards_of_another_comparison_are_refused() {
    let d = common::scratch("shard-compare-other");
    let base = shards(&d, 12, 2, &[]);
    assert_eq!(merged(&base), Ok(12));
    let other = |extra: &[&str], runs: u64| {
        let slice = ["--shard", "2/2"];
        let name = "other.json".to_string();
        (name, compare(&d, runs, &[&slice[..], extra].concat()))
    };
    // An option under B changes what B is built from: the fingerprint.
    let opt = other(&["--option-b", "variable_army_morale=on"], 12);
    assert_eq!(
        refused(&[base[0].clone(), opt], "other.json"),
        ["this shard is of another run: its ruleset, scenario or options (fingerprint) differs"]
    );
    // Another seed; another number of games.
    let seed = common::succeeded(common::muster_in(
        &d,
        &[
            "compare", TVBD, STEADY, "--runs", "12", "--seed", "4", "--shard", "2/2",
        ],
    ));
    assert_eq!(
        refused(
            &[base[0].clone(), ("other.json".into(), seed)],
            "other.json"
        ),
        ["this shard is of another run: its seed differs"]
    );
    let runs = other(&[], 14);
    assert_eq!(
        refused(&[base[0].clone(), runs], "other.json"),
        ["this shard is of another run: its number of games (--runs) differs"]
    );
    // Rulesets swapped: B's texts first, and other files named.
    let swapped = common::succeeded(common::muster_in(
        &d,
        &[
            "compare", STEADY, TVBD, "--runs", "12", "--seed", "3", "--shard", "2/2",
        ],
    ));
    assert_eq!(
        refused(&[base[0].clone(), ("swapped.json".into(), swapped)], "swapped.json"),
        [
            "this shard is of another run: its ruleset, scenario or options (fingerprint) differs",
            "this shard is of another run: its rulesets or scenario as named (files, titles, difference of the rules) differs"
        ]
    );
}

#[test]
fn a_comparison_with_a_slice_missing_or_twice_is_refused() {
    let d = common::scratch("shard-compare-slices");
    let f = shards(&d, 15, 3, &[]);
    assert_eq!(merged(&f), Ok(15));
    assert_eq!(
        refused(&[f[0].clone(), f[2].clone()], "c1.json"),
        ["the run is not whole: shard 2/3 is missing"]
    );
    assert_eq!(
        refused(
            &[f[0].clone(), f[1].clone(), f[2].clone(), f[1].clone()],
            "c2.json"
        ),
        ["shard 2/3 is given twice"]
    );
    // A sum changed by hand: one measure's sums no longer fit the frames.
    let mut forged = f.clone();
    let mut v: serde_json::Value = serde_json::from_str(&forged[2].1).unwrap();
    v["paired"]["sums"].as_array_mut().unwrap().pop();
    forged[2].1 = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(
        refused(&forged, "c3.json"),
        ["this shard file is inconsistent: its counts do not add up to its games"]
    );
    // A's game length summed wrongly: the sums no longer fit the tally.
    let mut forged = f.clone();
    let mut v: serde_json::Value = serde_json::from_str(&forged[0].1).unwrap();
    let turns = v["paired"]["sums"][4]["a"].as_i64().unwrap();
    v["paired"]["sums"][4]["a"] = (turns + 1).into();
    forged[0].1 = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(
        refused(&forged, "c1.json"),
        ["this shard file is inconsistent: its counts do not add up to its games"]
    );
}

/// A count of slices read from a file is not a size to allocate: a shard
/// claiming to be the first of 10^18 is merely a run with slices missing.
#[test]
fn a_huge_slice_count_is_only_missing_slices() {
    let d = common::scratch("shard-compare-huge");
    // Slice 1 of 15 of a 10-game run plays no game, as does 1 of 10^18.
    let out = compare(&d, 10, &["--shard", "1/15"]);
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["paired"]["games"], 0);
    v["shard"]["count"] = 1_000_000_000_000_000_000u64.into();
    let text = serde_json::to_string_pretty(&v).unwrap();
    assert_eq!(
        refused(&[("huge.json".to_string(), text)], "huge.json"),
        [
            "the run is not whole: shards 2/1000000000000000000, 3/1000000000000000000, \
          4/1000000000000000000, 5/1000000000000000000, 6/1000000000000000000, \
          7/1000000000000000000 and 999999999999999993 more are missing"
        ]
    );
}
