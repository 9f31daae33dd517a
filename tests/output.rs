//! What the command line writes (issue 28): pictures go into the folder
//! named without touching anything else there, a failed write is a message
//! and a non-zero exit (never a panic), a long line is shown cut, not a
//! crash of the renderer, and a thread count is kept to what the machine
//! can use.

use crate::common;

use std::path::Path;
use std::process::Stdio;

const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(&format!("out-{name}"))
}

/// The names in a folder, sorted.
fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// The pictures of TVBD's seed-7 battle: one a turn and the deployment.
fn pictures() -> Vec<String> {
    let out = common::succeeded(common::muster_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["battle", TVBD, "--seed", "7", "--log", "json"],
    ));
    let log: serde_json::Value = serde_json::from_str(&out).unwrap();
    let turns = log["summary"]["turns"].as_u64().unwrap();
    (0..=turns).map(|t| format!("turn-{t:02}.svg")).collect()
}

#[test]
fn pictures_go_beside_what_the_folder_holds() {
    let d = scratch("beside");
    std::fs::write(d.join("notes.txt"), "my notes").unwrap();
    std::fs::create_dir_all(d.join("drafts")).unwrap();
    std::fs::write(d.join("drafts/a.muster"), "draft").unwrap();
    // `--svg .`: the folder the command runs in.
    let out = common::muster_in(&d, &["battle", TVBD, "--seed", "7", "--svg", "."]);
    common::succeeded(out);
    let mut want = pictures();
    want.extend(["drafts".to_string(), "notes.txt".to_string()]);
    want.sort();
    assert_eq!(names(&d), want);
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "my notes"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("drafts/a.muster")).unwrap(),
        "draft"
    );
    let first = std::fs::read_to_string(d.join("turn-00.svg")).unwrap();
    assert!(first.starts_with("<svg"), "{}", &first[..40]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn pictures_of_an_earlier_longer_battle_are_left_and_named() {
    let d = scratch("earlier");
    std::fs::write(d.join("turn-99.svg"), "<svg/>").unwrap();
    let out = common::muster_in(&d, &["battle", TVBD, "--seed", "7", "--svg", "pics"]);
    assert!(out.status.success());
    let out = common::muster_in(&d, &["battle", TVBD, "--seed", "7", "--svg", "."]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: . also holds turn-99.svg from an earlier run, left as it was"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("turn-99.svg")).unwrap(),
        "<svg/>"
    );
    // The folder made for them holds only them.
    assert_eq!(names(&d.join("pics")), pictures());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn pictures_onto_a_file_are_refused_and_leave_nothing() {
    let d = scratch("file");
    std::fs::write(d.join("pictures"), "mine").unwrap();
    let out = common::muster_in(&d, &["battle", TVBD, "--seed", "7", "--svg", "pictures"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("muster::output"), "{err}");
    assert!(err.contains("pictures is not a folder"), "{err}");
    assert!(out.stdout.is_empty(), "no log after a failure");
    assert_eq!(names(&d), ["pictures"]);
    assert_eq!(std::fs::read_to_string(d.join("pictures")).unwrap(), "mine");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_full_disk_is_a_message_not_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = common::muster_command()
        .args(["battle", TVBD, "--seed", "7"])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim(),
        "error: cannot write the output: No space left on device (os error 28)"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    let mut child = common::muster_command()
        .args(["battle", TVBD, "--seed", "7"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.is_empty(), "quiet, but said: {err}");
}

#[test]
fn threads_are_kept_to_what_the_cores_can_use() {
    let out = common::muster_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "simulate",
            TVBD,
            "--runs",
            "4",
            "--threads",
            "100000",
            "--json",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        err.contains(&format!(
            "note: --threads 100000 is more than {} (4 a core on the {cores} cores here); using {}",
            4 * cores,
            4 * cores
        )),
        "{err}"
    );
    let summary: serde_json::Value = serde_json::from_str(&common::succeeded(out)).unwrap();
    assert_eq!(summary["games"], 4);
}

#[test]
fn a_mistake_at_the_end_of_a_million_character_line_is_shown_cut() {
    let d = scratch("long");
    let title = "a".repeat(1_000_000);
    let text = format!("ruleset long \"{title}\" oops\nimport core\n");
    std::fs::write(d.join("long.muster"), &text).unwrap();
    let out = common::muster_in(&d, &["check", "long.muster"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("muster::syntax"), "{err}");
    // The place, in the file's own line and column.
    let col = "ruleset long \"".len() + title.len() + "\" ".len() + 1;
    assert!(err.contains(&format!("[long.muster:1:{col}]")), "{err}");
    // The line is cut to a window around it, not printed whole.
    // (40 bytes kept before the place: the closing quote, a space, 38 a's.)
    assert!(
        err.contains(&format!(" 1 │ …{}\" oops\n", "a".repeat(38))),
        "{err}"
    );
    assert!(err.len() < 2_000, "{} bytes of error", err.len());
    std::fs::remove_dir_all(&d).unwrap();
}

/// A game that ends mid-turn (every Matchlocks game: the army morale test
/// ends it) is drawn as it ended: one picture for the deployment and one
/// for each turn, the last one included.
#[test]
fn a_game_ending_mid_turn_is_drawn_as_it_ended() {
    let d = scratch("midturn");
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/rules/never_mind_the_matchlocks.muster"
    );
    let out = common::succeeded(common::muster_in(
        &d,
        &["battle", rules, "--seed", "5", "--svg", "."],
    ));
    let end = out
        .lines()
        .find(|l| l.starts_with("=== End after"))
        .unwrap();
    assert_eq!(
        end,
        "=== End after 7 turns: The Earl of Essex's army wins ==="
    );
    let want: Vec<String> = (0..=7).map(|t| format!("turn-{t:02}.svg")).collect();
    assert_eq!(names(&d), want);
    // The last picture is not the one before it: units moved, or left.
    let last = std::fs::read_to_string(d.join("turn-07.svg")).unwrap();
    let before = std::fs::read_to_string(d.join("turn-06.svg")).unwrap();
    assert!(last.contains("end of turn 7"));
    assert_ne!(
        last.replace("end of turn 7", ""),
        before.replace("end of turn 6", "")
    );
}

/// `--html FILE` writes one page; it replaces a page it wrote before, and
/// refuses a file of the user's (left as it was) and a folder in the way.
#[test]
fn the_battle_page_never_replaces_a_users_file() {
    let d = scratch("html");
    let page = |name: &str| common::muster_in(&d, &["battle", TVBD, "--seed", "7", "--html", name]);
    common::succeeded(page("reports/battle.html"));
    let first = std::fs::read_to_string(d.join("reports/battle.html")).unwrap();
    assert!(first.starts_with("<!doctype html>"));
    assert!(first.contains("<meta name=\"generator\" content=\"muster battle --html\">"));
    // No script or style from elsewhere: the page stands alone.
    assert!(!first.contains("src=\"http") && !first.contains("href=\"http"));
    common::succeeded(page("reports/battle.html"));
    assert_eq!(
        std::fs::read_to_string(d.join("reports/battle.html")).unwrap(),
        first
    );
    std::fs::write(d.join("mine.html"), "<!doctype html><p>my notes</p>").unwrap();
    let out = page("mine.html");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already exists and is not a file this program wrote"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("mine.html")).unwrap(),
        "<!doctype html><p>my notes</p>"
    );
    std::fs::create_dir_all(d.join("folder.html")).unwrap();
    let out = page("folder.html");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is in the way"));
    assert_eq!(names(&d), ["folder.html", "mine.html", "reports"]);
}

/// On every shipped ruleset's default battle, what a base says tells it
/// from every other unit of its army (the key's label column), and the
/// page has a frame for the deployment and each turn.
#[test]
fn every_unit_has_a_label_of_its_own() {
    let d = scratch("labels");
    for rules in [
        "tillys_very_bad_day",
        "never_mind_the_matchlocks",
        "thistle_lily_and_rose",
    ] {
        let file = format!("{}/rules/{rules}.muster", env!("CARGO_MANIFEST_DIR"));
        let name = format!("{rules}.html");
        common::succeeded(common::muster_in(
            &d,
            &["battle", &file, "--seed", "3", "--html", &name],
        ));
        let html = std::fs::read_to_string(d.join(&name)).unwrap();
        let mut seen = std::collections::HashSet::new();
        let rows: Vec<&str> = html.split("<tr class=\"unit-row\"").skip(1).collect();
        assert!(rows.len() >= 30, "{rules}: {}", rows.len());
        for row in rows {
            let cells: Vec<&str> = row
                .split("<td>")
                .skip(1)
                .map(|c| &c[..c.find("</td>").unwrap()])
                .collect();
            assert!(!cells[0].is_empty());
            assert!(
                seen.insert((cells[2], cells[0])),
                "{rules}: {cells:?} twice"
            );
        }
        let json = common::succeeded(common::muster_in(
            &d,
            &["battle", &file, "--seed", "3", "--log", "json"],
        ));
        let turns = serde_json::from_str::<serde_json::Value>(&json).unwrap()["summary"]["turns"]
            .as_u64()
            .unwrap();
        assert_eq!(
            html.matches("<section class=\"frame\"").count() as u64,
            turns + 1,
            "{rules}"
        );
    }
}
