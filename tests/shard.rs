//! Runs beyond one machine (issue 33): `simulate --shard I/N` plays a slice
//! of a run and `muster merge` adds the slices up to exactly the summary of
//! the unsplit run, byte for byte; shard files that are not one whole run
//! are refused with a diagnostic naming the file.

use crate::common;

use muster::cli::simulate::shard;
use muster::front::source::Sources;
use std::path::Path;

const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("shard-{name}"))
}

/// `muster simulate TVBD --runs RUNS --seed 5 EXTRA...`'s standard output.
fn simulate(dir: &Path, runs: u64, extra: &[&str]) -> String {
    let runs = runs.to_string();
    let mut args = vec!["simulate", TVBD, "--runs", &runs, "--seed", "5"];
    args.extend(extra);
    common::succeeded(common::muster_in(dir, &args))
}

/// Write the N shard files of a run into `dir`: `s1.json`...
fn shards(dir: &Path, runs: u64, n: u64) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let name = format!("s{i}.json");
            let out = simulate(dir, runs, &["--shard", &format!("{i}/{n}")]);
            std::fs::write(dir.join(&name), out).unwrap();
            name
        })
        .collect()
}

#[test]
fn merged_shards_are_the_whole_run_byte_for_byte() {
    let d = scratch("whole");
    let whole_json = simulate(&d, 40, &["--json"]);
    let whole_text = simulate(&d, 40, &[]);
    let mut files = shards(&d, 40, 3);
    // Given in any order.
    files.reverse();
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let text = common::succeeded(common::muster_in(&d, &args));
    args.push("--json");
    let json = common::succeeded(common::muster_in(&d, &args));
    assert_eq!(json, whole_json);
    assert_eq!(text, whole_text);
    // The run is real: 40 games, all accounted for.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["games"], 40);
    let decided: u64 = ["wins"]
        .iter()
        .flat_map(|k| v[k].as_array().unwrap().iter())
        .map(|r| r["count"].as_u64().unwrap())
        .sum::<u64>()
        + v["draws"]["count"].as_u64().unwrap()
        + v["turn_limit"]["count"].as_u64().unwrap();
    assert_eq!(decided, 40);
}

#[test]
fn more_shards_than_games_still_add_up() {
    // 5 games in 7 slices: two slices play no game.
    let d = scratch("thin");
    let whole = simulate(&d, 5, &["--json"]);
    let files = shards(&d, 5, 7);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap();
            v["tally"]["games"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(sizes, [0, 1, 1, 0, 1, 1, 1]);
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(common::succeeded(common::muster_in(&d, &args)), whole);
}

/// The shard files of a run of 12 games in 3 slices, as text.
fn three() -> Vec<(String, String)> {
    let d = scratch("three");
    shards(&d, 12, 3)
        .into_iter()
        .map(|f| {
            let t = std::fs::read_to_string(d.join(&f)).unwrap();
            (f, t)
        })
        .collect()
}

/// The messages of `merge`'s diagnostics, or its summary's game count.
fn merged(files: &[(String, String)]) -> Result<u64, Vec<String>> {
    let mut sources = Sources::default();
    shard::merge(files, &mut sources)
        .map(|m| m.games())
        .map_err(|d| d.into_iter().map(|d| d.message).collect())
}

#[test]
fn a_run_with_a_slice_missing_or_twice_is_refused() {
    let f = three();
    assert_eq!(merged(&f), Ok(12));
    assert_eq!(
        merged(&f[..2]),
        Err(vec![
            "the run is not whole: shard 3/3 is missing".to_string()
        ])
    );
    let twice = vec![f[0].clone(), f[1].clone(), f[0].clone(), f[2].clone()];
    assert_eq!(
        merged(&twice),
        Err(vec!["shard 1/3 is given twice".to_string()])
    );
    assert_eq!(
        merged(&[]),
        Err(vec!["no shard files to merge".to_string()])
    );
}

#[test]
fn shards_of_another_run_are_refused() {
    let f = three();
    // Another seed; another ruleset (a changed text changes the fingerprint).
    let mut other = f.clone();
    other[1].1 = other[1].1.replace("\"seed\": 5", "\"seed\": 6");
    assert_eq!(
        merged(&other),
        Err(vec![
            "this shard is of another run: its seed differs".to_string()
        ])
    );
    let mut other = f.clone();
    let fp = |t: &str| {
        let v: serde_json::Value = serde_json::from_str(t).unwrap();
        v["fingerprint"].as_str().unwrap().to_string()
    };
    let old = fp(&other[2].1);
    other[2].1 = other[2].1.replace(&old, "0123456789abcdef");
    assert_eq!(
        merged(&other),
        Err(vec![
            "this shard is of another run: its ruleset, scenario or options (fingerprint) differs"
                .to_string()
        ])
    );
}

#[test]
fn a_damaged_shard_file_is_refused_at_the_place() {
    let f = three();
    // Cut short: a JSON error at its line and column.
    let mut cut = f.clone();
    cut[0].1.truncate(40);
    let mut sources = Sources::default();
    let d = shard::merge(&cut, &mut sources).unwrap_err();
    assert_eq!(d.len(), 1);
    assert!(
        d[0].message
            .starts_with("this is not a shard file: EOF while parsing"),
        "{}",
        d[0].message
    );
    let rendered = muster::front::diagnostic::render_plain(&d, &sources);
    assert!(rendered.contains("s1.json"), "{rendered}");
    // A count changed by hand no longer adds up to the shard's games.
    let mut forged = f.clone();
    let v: serde_json::Value = serde_json::from_str(&forged[1].1).unwrap();
    let draws = v["tally"]["draws"].as_u64().unwrap();
    forged[1].1 = forged[1].1.replace(
        &format!("\"draws\": {draws}"),
        &format!("\"draws\": {}", draws + 1),
    );
    assert_eq!(
        merged(&forged),
        Err(vec![
            "this shard file is inconsistent: its counts do not add up to its games".to_string()
        ])
    );
}

#[test]
fn a_bad_shard_argument_is_a_usage_error() {
    let d = scratch("usage");
    for bad in ["0/3", "4/3", "3", "x/y"] {
        let out = common::muster_in(&d, &["simulate", TVBD, "--runs", "3", "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("a shard is I/N"), "{err}");
    }
    // merge of a missing file: a diagnostic and exit 1.
    let out = common::muster_in(&d, &["merge", "nowhere.json"]);
    assert_eq!(out.status.code(), Some(1));
}

/// TVBD's default battle cut to four turns: most games reach the limit.
const FOUR_TURNS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/scenarios/tvbd_four_turns.toml"
);

/// `muster battle TVBD --scenario FOUR_TURNS --seed SEED --log json`'s result.
fn replayed(dir: &Path, seed: u64) -> String {
    let seed = seed.to_string();
    let out = common::succeeded(common::muster_in(
        dir,
        &[
            "battle",
            TVBD,
            "--scenario",
            FOUR_TURNS,
            "--seed",
            &seed,
            "--log",
            "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["summary"]["result"].as_str().unwrap().to_string()
}

#[test]
fn games_at_the_turn_limit_are_named_so_they_can_be_replayed() {
    let d = scratch("undecided");
    let run = |extra: &[&str]| {
        let mut args = vec!["--scenario", FOUR_TURNS];
        args.extend(extra);
        simulate(&d, 16, &args)
    };
    let v: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    // 15 of the 16 games of seed 5 are undecided after four turns; the
    // first ten are named, each with the seed `battle` replays it from.
    assert_eq!(v["turn_limit"]["count"], 15);
    let named = v["turn_limit_games"].as_array().unwrap();
    let games: Vec<u64> = named.iter().map(|g| g["game"].as_u64().unwrap()).collect();
    assert_eq!(games, [0, 1, 2, 3, 4, 5, 6, 8, 9, 10]);
    for g in [&named[0], &named[3], &named[9]] {
        assert_eq!(
            replayed(&d, g["seed"].as_u64().unwrap()),
            "turn_limit",
            "{g}"
        );
    }
    // Game 7, the one not named before game 10, was decided.
    let seventh = muster::cli::simulate::game_seed(5, 7);
    assert_eq!(replayed(&d, seventh), "won");
    let text = run(&[]);
    assert!(
        text.contains("replay them (the first 10) with `muster battle --seed S`")
            && text.contains(&format!("game 3: --seed {}", named[3]["seed"])),
        "{text}"
    );
    // Shards name the same games: merged, they give the whole run's
    // summary byte for byte (the list is the first ten by index, whatever
    // slice each game fell in).
    let mut files = Vec::new();
    for i in 1..=3 {
        let name = format!("u{i}.json");
        let out = run(&["--shard", &format!("{i}/3")]);
        std::fs::write(d.join(&name), out).unwrap();
        files.push(name);
    }
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(common::succeeded(common::muster_in(&d, &args)), text);
    args.push("--json");
    assert_eq!(
        common::succeeded(common::muster_in(&d, &args)),
        run(&["--json"])
    );
}
