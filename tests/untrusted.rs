//! Untrusted files (issue 28): rulesets are shared between players, so a
//! ruleset reads only its own folder tree and stdlib/, only files of the
//! kind it expects, and no input past the size cap; and loading and
//! checking a ruleset stays about linear in its size (merging, "did you
//! mean", table overlaps and the diagnostics they make).

#![cfg(unix)]

use crate::common;

use muster::front::diagnostic::{render_plain, Diag};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The help line every refusal of a path carries.
const CONFINED: &str = "shared rulesets may read only their own folder tree and stdlib/";

/// A fresh, empty folder for one test.
fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("muster-untrusted-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `muster check FILE` in `dir`: whether it passed, and its standard error.
fn check(dir: &Path, file: &str) -> (bool, String) {
    let out = common::muster_in(dir, &["check", file]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A ruleset that must not build: its diagnostics.
fn rejected(name: &str, text: &str, dir: Option<&Path>) -> Vec<Diag> {
    match muster::build_text(name, text, dir) {
        Ok(_) => panic!("`{name}` built, but it should have been refused"),
        Err((d, _)) => d,
    }
}

/// The lines of /etc/passwd, none of which may ever be printed.
fn passwd_lines() -> Vec<String> {
    std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn assert_prints_nothing_of_passwd(err: &str) {
    for line in passwd_lines() {
        assert!(!err.contains(&line), "printed `{line}`:\n{err}");
    }
    assert!(!err.contains("root:"), "{err}");
}

// ============================================================ confinement

/// `muster check` of `file` (written with `text`) fails with one
/// diagnostic of `code` saying `` `path` says``, its help saying why, and
/// nothing of /etc/passwd.
fn refused_by_check(dir: &Path, file: &str, text: &str, code: &str, path: &str, says: &str) {
    std::fs::write(dir.join(file), text).unwrap();
    let (ok, err) = check(dir, file);
    assert!(!ok, "{err}");
    assert!(err.contains(code), "{err}");
    assert!(err.contains(&format!("`{path}` {says}")), "{err}");
    assert!(err.contains(&format!("\"{path}\"")), "the span: {err}");
    // (The help line wraps.)
    assert!(
        err.contains("shared rulesets may read only their own"),
        "{err}"
    );
    assert!(err.contains("error: 1 problem found"), "{err}");
    assert_prints_nothing_of_passwd(&err);
}

/// Two ways out of the tree to /etc/passwd.
const TO_PASSWD: [(&str, &str); 2] = [
    (
        "../../../../../../../../../etc/passwd",
        "leads out of the ruleset's folder",
    ),
    ("/etc/passwd", "is an absolute path"),
];

#[test]
fn extends_of_etc_passwd_is_refused_and_prints_nothing_of_it() {
    let dir = folder("extends-passwd");
    for (path, says) in TO_PASSWD {
        let text = format!("ruleset house \"House\"\nextends \"{path}\"\n");
        refused_by_check(&dir, "house.muster", &text, "muster::extends", path, says);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_hook_script_of_etc_passwd_is_refused_and_prints_nothing_of_it() {
    let dir = folder("script-passwd");
    for (path, says) in TO_PASSWD {
        let text = format!(
            "ruleset house \"House\"\nimport core\nprocedure p() outcomes {{ x: int }} {{ outcome x = 1 }}\nhook h after p script \"{path}\"\n"
        );
        refused_by_check(&dir, "house.muster", &text, "muster::hook", path, says);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A link inside the tree to a file or a folder outside it is refused
/// (nothing of the file is printed); a link within the tree is followed.
#[test]
fn a_symbolic_link_cannot_lead_out_of_the_tree() {
    use std::os::unix::fs::symlink;
    let base = folder("symlink");
    let (tree, outside) = (base.join("tree"), base.join("outside"));
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.muster"), "SECRET-1 SECRET-2\n").unwrap();
    std::fs::write(outside.join("secret.rhai"), "SECRET-3 SECRET-4\n").unwrap();
    symlink(outside.join("secret.muster"), tree.join("link.muster")).unwrap();
    symlink(&outside, tree.join("sub")).unwrap();
    symlink("../outside/secret.rhai", tree.join("hook.rhai")).unwrap();
    let cases = [
        ("extends \"link.muster\"\n", "`link.muster`"),
        ("extends \"sub/secret.muster\"\n", "`sub/secret.muster`"),
        (
            "procedure p() outcomes { x: int } { outcome x = 1 }\nhook h after p script \"hook.rhai\"\n",
            "`hook.rhai`",
        ),
    ];
    for (i, (body, named)) in cases.into_iter().enumerate() {
        let file = format!("house{i}.muster");
        std::fs::write(tree.join(&file), format!("import core\n{body}")).unwrap();
        let (ok, err) = check(&tree, &file);
        assert!(!ok, "{err}");
        let d = rejected(&file, &format!("import core\n{body}"), Some(&tree));
        assert_eq!(
            d[0].message,
            format!("{named} leads out of the ruleset's folder through a symbolic link")
        );
        assert!(err.contains(named), "{err}");
        assert!(
            err.contains("shared rulesets may read only their own"),
            "{err}"
        );
        assert!(!err.contains("SECRET"), "{err}");
    }
    // A link that stays inside the tree is an ordinary file.
    std::fs::write(
        tree.join("base.muster"),
        "ruleset base \"Base\"\nimport core\nstat move\n",
    )
    .unwrap();
    symlink("base.muster", tree.join("alias.muster")).unwrap();
    std::fs::write(
        tree.join("house.muster"),
        "ruleset house \"House\"\nextends \"alias.muster\"\n",
    )
    .unwrap();
    let (ok, err) = check(&tree, "house.muster");
    assert!(ok, "{err}");
    std::fs::remove_dir_all(&base).ok();
}

/// `extends`, `script` and `default_scenario` read only regular files with
/// their own extension: a text file, a folder and a pipe are refused before
/// anything is opened (opening the pipe would wait forever).
#[test]
fn only_files_of_the_expected_kind_are_read() {
    let dir = folder("kinds");
    std::fs::write(dir.join("notes.txt"), "SECRET-5\n").unwrap();
    std::fs::create_dir_all(dir.join("folder.muster")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.muster"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let cases = [
        ("extends \"notes.txt\"\n", "`notes.txt` is not a .muster file", "`extends` reads only rulesets (.muster files)"),
        (
            "procedure p() outcomes { x: int } { outcome x = 1 }\nhook h after p script \"notes.txt\"\n",
            "`notes.txt` is not a .rhai file",
            "a hook's `script` reads only rhai scripts (.rhai files)",
        ),
        ("extends \"folder.muster\"\n", "`folder.muster` is a folder, not a file", "name a file"),
        (
            "extends \"pipe.muster\"\n",
            "`pipe.muster` is not a regular file (a device, a pipe or a socket)",
            "from regular files",
        ),
    ];
    for (body, message, help) in cases {
        let d = rejected("house.muster", &format!("import core\n{body}"), Some(&dir));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].message, message);
        assert!(
            d[0].help.as_deref().unwrap().contains(help),
            "{:?}",
            d[0].help
        );
        assert!(d[0].span.is_some(), "at the line that names the file");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `default_scenario` resolves inside the tree too, and reads only a
/// regular .toml file.
#[test]
fn a_default_scenario_outside_the_tree_or_of_another_kind_is_refused() {
    let dir = folder("scenario");
    std::fs::write(dir.join("notes.txt"), "SECRET-6\n").unwrap();
    let rules =
        std::fs::read_to_string(Path::new(ROOT).join("rules/tillys_very_bad_day.muster")).unwrap();
    for (path, message) in [
        ("/dev/zero", "`/dev/zero` is an absolute path"),
        (
            "../../../etc/passwd.toml",
            "`../../../etc/passwd.toml` leads out of the ruleset's folder",
        ),
        ("notes.txt", "`notes.txt` is not a .toml file"),
    ] {
        let text = rules.replace(
            "default_scenario \"scenarios/tvbd_default.toml\"",
            &format!("default_scenario \"{path}\""),
        );
        let mut b = muster::build_text("tvbd.muster", &text, Some(&dir))
            .unwrap_or_else(|(d, s)| panic!("{}", render_plain(&d, &s)));
        let Err(d) = b.scenario(None) else {
            panic!("`{path}` was read")
        };
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, "muster::scenario");
        assert_eq!(d[0].message, message);
        let shown = render_plain(&d, &b.sources);
        assert!(
            shown.contains(&format!("default_scenario \"{path}\"")),
            "{shown}"
        );
        assert!(!shown.contains("SECRET"), "{shown}");
        if path != "notes.txt" {
            assert!(shown.contains(CONFINED), "{shown}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ============================================================ size cap

/// `/dev/zero` never ends: named by a ruleset it is refused before it is
/// opened, and named on the command line it is read only up to the cap.
#[test]
fn dev_zero_stops_at_once() {
    use std::os::unix::fs::symlink;
    let dir = folder("zero");
    symlink("/dev/zero", dir.join("zero.muster")).unwrap();
    let d = rejected("house.muster", "extends \"/dev/zero\"\n", Some(&dir));
    assert_eq!(d[0].message, "`/dev/zero` is an absolute path");
    let d = rejected("house.muster", "extends \"zero.muster\"\n", Some(&dir));
    assert_eq!(
        d[0].message,
        "`zero.muster` leads out of the ruleset's folder through a symbolic link"
    );
    // A regular file over the cap (sparse: it takes no room on disk).
    let big = std::fs::File::create(dir.join("big.muster")).unwrap();
    big.set_len(muster::front::source::MAX_FILE_BYTES as u64 + 1)
        .unwrap();
    let d = rejected("house.muster", "extends \"big.muster\"\n", Some(&dir));
    assert_eq!(
        d[0].message,
        "`big.muster` is larger than 16 MiB, the most read from one file"
    );
    // A scenario, a situation and a roster named on the command line.
    let mut b = common::ruleset("rules/tillys_very_bad_day.muster");
    let Err(d) = b.scenario(Some(Path::new("/dev/zero"))) else {
        panic!("/dev/zero was read as a scenario")
    };
    assert_eq!(
        d[0].message,
        "`/dev/zero` is larger than 16 MiB, the most read from one file"
    );
    let rules = format!("{ROOT}/rules/tillys_very_bad_day.muster");
    for args in [
        vec!["odds", &rules, "--situation", "/dev/zero"],
        vec!["query", &rules, "--situation", "/dev/zero", "1"],
        vec!["army", &rules, "--roster", "/dev/zero"],
        vec!["battle", &rules, "--scenario", "/dev/zero"],
    ] {
        let out = common::muster_in(&dir, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            err.contains("`/dev/zero` is larger than 16 MiB, the most read from one file"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// What the user names on the command line may be any readable file, a
/// pipe too (under the cap).
#[test]
fn a_situation_may_come_from_standard_input() {
    use std::io::Write;
    let situation = std::fs::read(format!(
        "{ROOT}/rules/situations/tvbd_horse_charges_pike.toml"
    ))
    .unwrap();
    let mut child = common::muster_command()
        .args([
            "odds",
            "rules/tillys_very_bad_day.muster",
            "--situation",
            "/dev/stdin",
        ])
        .current_dir(ROOT)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&situation).unwrap();
    let out = common::succeeded(child.wait_with_output().unwrap());
    let file = common::succeeded(common::muster_in(
        Path::new(ROOT),
        &[
            "odds",
            "rules/tillys_very_bad_day.muster",
            "--situation",
            "rules/situations/tvbd_horse_charges_pike.toml",
        ],
    ));
    assert_eq!(out, file);
}

// ============================================================ scaling

/// A size for a scaling test: large in release builds (where the old code
/// took seconds to minutes), smaller in debug ones.
fn size(debug: usize, release: usize) -> usize {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

/// A house rule that overrides, removes, adds rows to and patches steps
/// into a base of many items merges to the same result as small ones do,
/// in about linear time (it was quadratic: 40,000 items took 96 s).
#[test]
fn a_huge_house_rule_merges() {
    let n = size(4_000, 40_000);
    let dir = folder("merge");
    let mut base = String::from(
        "ruleset base \"Base\"\nimport core\ntable t(u: unit) -> int { otherwise => 0 }\nsequence { turn { step \"s0\" { } } until true }\n",
    );
    for i in 0..n {
        base += &format!("define item{i}(u: unit): int = 0\n");
    }
    std::fs::write(dir.join("base.muster"), base).unwrap();
    let mut house = String::from("ruleset house \"House\"\nextends \"base.muster\"\n");
    for i in 0..n {
        house += &match i % 4 {
            1 => format!("remove define item{i}\n"),
            _ => format!("override define item{i}(u: unit): int = {i}\n"),
        };
    }
    // Rows added to one table: a table has at most 1,024 rows
    // (muster::front::nesting::MAX_EXPANDED_DEPTH).
    let added = n / 40;
    for i in 1..=added {
        house += &format!("table t += {{ when false => {i} }}\n");
    }
    for i in 1..=n / 4 {
        // Each step after the one before it, but every tenth before it.
        let (how, anchor) = if i % 10 == 0 {
            ("before", i - 1)
        } else {
            ("after", i - 1)
        };
        house += &format!("step \"s{i}\" {how} \"s{anchor}\" {{ }}\n");
    }
    let b = muster::build_text("house.muster", &house, Some(&dir))
        .unwrap_or_else(|(d, s)| panic!("{}", render_plain(&d[..1], &s)));
    let rs = &b.ruleset;
    let defines: Vec<&str> = rs
        .defines
        .iter()
        .map(|d| d.name.as_str())
        .filter(|d| d.starts_with("item"))
        .collect();
    let expected: Vec<String> = (0..n)
        .filter(|i| i % 4 != 1)
        .map(|i| format!("item{i}"))
        .collect();
    let differ = defines.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!((defines.len(), differ), (expected.len(), None));
    // The added rows come first, the newest first.
    let mut sources = muster::front::source::Sources::default();
    let loaded =
        muster::front::load::load_text("house.muster", &house, Some(&dir), &mut sources).unwrap();
    let table = loaded
        .items
        .iter()
        .find_map(|i| match &i.kind {
            muster::front::syntax::ItemKind::Table(t) if t.name.text == "t" => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(table.rows.len(), added + 1);
    let value = |r: usize| {
        &sources.get(table.rows[r].value.span.file).text
            [table.rows[r].value.span.start as usize..table.rows[r].value.span.end as usize]
    };
    assert_eq!(value(0), added.to_string());
    assert_eq!(value(added - 1), "1");
    assert_eq!(value(added), "0");
    // The steps in order: s(10k) goes before s(10k-1).
    let graph = rs.graph.as_ref().unwrap();
    let steps: Vec<&str> = graph.nodes[..graph.turn_end]
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(steps.len(), n / 4 + 1);
    // s10 goes before s9 and s11 after s10, so each s(10k-1) is left
    // behind: s0..s8, s10..s18, s20..., then ..., s19, s9.
    assert_eq!(
        &steps[..12],
        ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s10", "s11", "s12"]
    );
    assert_eq!(&steps[steps.len() - 3..], ["s29", "s19", "s9"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// "Did you mean" compares names of at most 128 characters: a misspelt
/// name of 40,000 (which took 12 s against another of 40,000) gets none,
/// and ordinary names their suggestion as before.
#[test]
fn did_you_mean_is_bounded_on_long_names() {
    let n = size(10_000, 40_000);
    let long = "a".repeat(n);
    let text = format!(
        "import core\ndefine {long}(u: unit): int = 0\ndefine x(u: unit): int = {}b(u)\n",
        &long[1..]
    );
    let d = rejected("long.muster", &text, None);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "muster::unknown_name");
    assert_eq!(
        d[0].help.as_deref(),
        Some("declare it first, or check the spelling of this fact, define, table or quantity")
    );
    // Names up to 128 characters: one typo is still found.
    for len in [11, 128] {
        let name = format!("attack_{}", "d".repeat(len - 7));
        let typo = format!("atack_{}", "d".repeat(len - 7));
        let text = format!(
            "import core\ndefine {name}(u: unit): int = 0\ndefine x(u: unit): int = {typo}(u)\n"
        );
        let d = rejected("typo.muster", &text, None);
        assert_eq!(d[0].help, Some(format!("did you mean `{name}`?")), "{len}");
    }
}

/// Rows that overlap by the hundred thousand: the check paints each row's
/// keys once (it matched every row against every key: minutes), each table
/// reports its first 10 overlaps and a count of the rest, and a file its
/// first 100 diagnostics and a count of the rest.
#[test]
fn many_overlapping_rows_are_checked_and_reported_within_bounds() {
    // A table has at most 1,024 rows (muster::front::nesting::MAX_EXPANDED_DEPTH):
    // many tables of a thousand.
    let (tables, rows) = (size(12, 120), 1_000);
    let mut text = String::from("import core\n");
    for t in 0..tables {
        text += &format!("table t{t}(x: int in 1..{rows}) -> int {{\n  _ => 0\n");
        for i in 1..=rows {
            text += &format!("  {i} => 1\n");
        }
        text += "}\n";
    }
    let d = rejected("overlaps.muster", &text, None);
    assert_eq!(d.len(), 101);
    assert_eq!(d[0].message, "rows of table `t0` overlap at 1");
    assert_eq!(d[9].message, "rows of table `t0` overlap at 10");
    assert_eq!(
        d[10].message,
        format!("and {} more pairs of rows of table `t0` overlap", rows - 10)
    );
    assert_eq!(d[11].message, "rows of table `t1` overlap at 1");
    assert!(d[..100].iter().all(|d| d.code == "muster::table_overlap"));
    // Tables of 11 diagnostics each, of which 100 are shown.
    assert_eq!(d[100].code, "muster::too_many");
    assert_eq!(
        d[100].message,
        format!(
            "and {} more problems in `overlaps.muster`",
            tables * 11 - 100
        )
    );
    // The command line's closing count is of them all.
    assert_eq!(muster::problems(&d), tables * 11);
}
