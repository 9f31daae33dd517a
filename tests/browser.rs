//! The battle page (`muster battle --html FILE`, issue 35) in a real
//! browser: headless Chromium loads the page, runs its script, and the DOM
//! it leaves is checked against the game's own JSON log (the frames, the
//! turn shown, the moves drawn, the units and their key). Needs Chromium
//! (`apt-get install chromium`, or `MUSTER_CHROMIUM=/path/to/chrome`), so
//! the plain `cargo test` lists it as ignored; run it with `cargo test
//! --release --test all -- --ignored browser::` (.ci/run installs Chromium
//! and does).

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("browser-{name}"))
}

/// `muster ARGS`' standard output, having asserted that it succeeded.
fn muster(args: &[&str]) -> String {
    common::succeeded(common::muster_in(root(), args))
}

/// The browser: `MUSTER_CHROMIUM`, else the first of Chromium's usual
/// names on the path. Missing, the test fails and says how to install it.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("MUSTER_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!("no Chromium found: install it (`apt-get install chromium`) or set MUSTER_CHROMIUM");
}

/// The DOM the page leaves once its script has run, opened at `fragment`.
fn dom(page: &Path, fragment: &str) -> String {
    let profile = scratch("profile");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--allow-file-access-from-files",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
            &format!("file://{}{fragment}", page.display()),
        ])
        .output()
        .expect("run Chromium");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Each opening tag of `dom` that starts with `start`.
fn tags<'a>(dom: &'a str, start: &str) -> Vec<&'a str> {
    dom.match_indices(start)
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .collect()
}

/// The value of attribute `name` in an opening tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

/// The moves each turn of a game's JSON log drew (a unit and those that
/// moved with it), turn 0 being the deployment.
fn moves_by_turn(log: &serde_json::Value) -> HashMap<u64, usize> {
    let mut by = HashMap::new();
    let mut turn = 0;
    for e in log["events"].as_array().unwrap() {
        match e["event"].as_str().unwrap() {
            "turn" => turn = e["turn"].as_u64().unwrap(),
            "move" => {
                let with = e.get("with").and_then(|w| w.as_array()).map_or(0, Vec::len);
                *by.entry(turn).or_insert(0) += 1 + with;
            }
            _ => {}
        }
    }
    by
}

/// A TVBD battle's page, opened at turn 3 and at the start: one frame per
/// turn and the deployment, only the asked one shown, each with every unit
/// and the turn's moves as arrows; the key names every unit as the
/// narrative does, each label once in its army.
#[test]
#[ignore = "needs Chromium: cargo test --release --test all -- --ignored browser::"]
fn the_battle_page_in_a_browser() {
    let d = scratch("tvbd");
    let rules = root().join("rules/tillys_very_bad_day.muster");
    let rules = rules.to_str().unwrap();
    let page = d.join("battle.html");
    muster(&[
        "battle",
        rules,
        "--seed",
        "7",
        "--html",
        page.to_str().unwrap(),
    ]);
    let log: serde_json::Value =
        serde_json::from_str(&muster(&["battle", rules, "--seed", "7", "--log", "json"])).unwrap();
    let turns = log["summary"]["turns"].as_u64().unwrap();
    let units: Vec<String> = log["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(units.len(), 36);
    let moves = moves_by_turn(&log);

    let dom3 = dom(&page, "#turn=3");
    let body = tags(&dom3, "<body")[0];
    assert_eq!(
        attr(body, "data-turn"),
        Some("3"),
        "the script ran and showed turn 3"
    );
    let frames = tags(&dom3, "<section class=\"frame\"");
    assert_eq!(frames.len() as u64, turns + 1);
    let shown: Vec<&str> = frames
        .iter()
        .filter(|f| attr(f, "hidden").is_none())
        .map(|f| attr(f, "data-turn").unwrap())
        .collect();
    assert_eq!(shown, ["3"]);
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(attr(f, "data-turn"), Some(k.to_string().as_str()));
        let want = moves.get(&(k as u64)).copied().unwrap_or(0);
        assert_eq!(
            attr(f, "data-moves"),
            Some(want.to_string().as_str()),
            "turn {k}"
        );
    }
    // The frame shown: every unit once, the turn's arrows, its narrative.
    let at = dom3
        .find("<section class=\"frame\" data-turn=\"3\"")
        .unwrap();
    let frame = &dom3[at..at + dom3[at..].find("</section>").unwrap()];
    let marks: Vec<&str> = tags(frame, "<g class=\"unit-mark\"")
        .iter()
        .map(|t| attr(t, "data-unit").unwrap())
        .collect();
    let mut sorted: Vec<String> = marks.iter().map(|m| m.to_string()).collect();
    sorted.sort();
    let mut want = units.clone();
    want.sort();
    assert_eq!(sorted, want);
    let arrows = tags(frame, "<g class=\"move\"").len() + tags(frame, "<g class=\"charge\"").len();
    assert!(
        arrows > 0 && arrows <= moves[&3],
        "{arrows} of {}",
        moves[&3]
    );
    assert!(frame.contains("=== Turn 3 ==="));
    assert!(!frame.contains("=== Turn 4 ==="));
    // The key: every unit as the narrative names it, labels unique per army.
    let rows = tags(&dom3, "<tr class=\"unit-row\"");
    assert_eq!(rows.len(), units.len());
    let key_at = dom3.find("<table id=\"key\"").unwrap();
    let key = &dom3[key_at..];
    let mut labels = HashSet::new();
    for row in key.split("<tr class=\"unit-row\"").skip(1) {
        let cells: Vec<&str> = row
            .split("<td>")
            .skip(1)
            .map(|c| &c[..c.find("</td>").unwrap()])
            .collect();
        assert!(units.iter().any(|u| u == cells[1]), "{cells:?}");
        assert!(
            labels.insert((cells[2].to_string(), cells[0].to_string())),
            "{cells:?}"
        );
    }

    // Opened plain: the deployment, the slider at its start.
    let dom0 = dom(&page, "");
    assert_eq!(attr(tags(&dom0, "<body")[0], "data-turn"), Some("0"));
    let shown: Vec<&str> = tags(&dom0, "<section class=\"frame\"")
        .iter()
        .filter(|f| attr(f, "hidden").is_none())
        .map(|f| attr(f, "data-turn").unwrap())
        .collect();
    assert_eq!(shown, ["0"]);
    let caption = format!("Deployment (1 of {})", turns + 1);
    assert!(
        dom0.contains(&caption),
        "the caption the script wrote: {caption}"
    );
}
