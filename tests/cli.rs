//! The command line itself (issue 35, "The command line"): `--version`
//! names the commit, the exit codes are the documented ones, `--quiet`
//! leaves out notes and speeds, `--color` decides colour whatever the
//! terminal, and the completion scripts and manual page are generated from
//! the same definition of the commands.

use crate::common;

use std::path::Path;

const TVBD: &str = "rules/tillys_very_bad_day.muster";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> std::process::Output {
    common::muster_in(root(), args)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = common::succeeded(run(&["--version"]));
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        out,
        format!("muster {} (commit {head})\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn exit_codes_are_0_1_and_2_as_documented() {
    let code = |args: &[&str]| run(args).status.code();
    assert_eq!(code(&["check", TVBD]), Some(0));
    // A rules or input error: the file is missing.
    assert_eq!(code(&["check", "rules/no_such_ruleset.muster"]), Some(1));
    // A bad option value in a ruleset's run.
    assert_eq!(
        code(&["simulate", TVBD, "--runs", "2", "--option", "no_such=on"]),
        Some(1)
    );
    // Usage: an unknown flag, a missing argument, a bad value of a flag.
    assert_eq!(code(&["check", "--bogus", TVBD]), Some(2));
    assert_eq!(code(&["odds", TVBD]), Some(2));
    assert_eq!(code(&["simulate", TVBD, "--runs", "0"]), Some(2));
    assert_eq!(code(&["--color", "sometimes", "check", TVBD]), Some(2));
    // The help says so.
    let help = common::succeeded(run(&["--help"]));
    assert!(help.contains("Exit status: 0 when"), "{help}");
    assert!(help.contains("2 for a usage error"), "{help}");
}

#[test]
fn quiet_leaves_out_notes_and_speeds_but_not_errors() {
    let sim = ["simulate", TVBD, "--runs", "3"];
    let loud = run(&sim);
    assert!(stderr(&loud).contains("games/s on"), "{}", stderr(&loud));
    let quiet = run(&[&sim[..], &["--quiet"]].concat());
    assert_eq!(stderr(&quiet), "");
    // The same games either way.
    assert_eq!(loud.stdout, quiet.stdout);

    let odds = [
        "odds",
        TVBD,
        "--situation",
        "rules/situations/tvbd_horse_charges_pike.toml",
        "--seed",
        "9",
    ];
    assert!(stderr(&run(&odds)).contains("note: --seed 9 is unused"));
    let q = run(&[&["-q"][..], &odds[..]].concat());
    assert!(q.status.success());
    assert_eq!(stderr(&q), "");

    // An error is still shown, and still fails.
    let e = run(&["-q", "check", "rules/no_such_ruleset.muster"]);
    assert_eq!(e.status.code(), Some(1));
    assert!(stderr(&e).contains("cannot read"), "{}", stderr(&e));
}

#[test]
fn color_is_what_the_flag_says_whatever_the_terminal() {
    let missing = "rules/no_such_ruleset.muster";
    let esc = |args: &[&str]| stderr(&run(args)).contains('\u{1b}');
    // Standard error is a pipe here: auto means no colour.
    assert!(!esc(&["check", missing]));
    assert!(esc(&["check", missing, "--color", "always"]));
    assert!(esc(&["--color=always", "check", missing]));
    assert!(!esc(&["check", missing, "--color", "never"]));
    // The last one given wins, as clap takes it.
    assert!(!esc(&["--color=always", "check", missing, "--color=never"]));
    // clap's own usage errors follow it too.
    assert!(esc(&["--color", "always", "check", "--bogus"]));
    assert!(!esc(&["--color", "never", "check", "--bogus"]));
    // With colour or without, the same words.
    let plain = stderr(&run(&["check", missing, "--color", "never"]));
    assert!(plain.contains("cannot read `rules/no_such_ruleset.muster`"));
    assert!(plain.contains("help: check the path"));
}

/// Every subcommand, as `--help` lists them.
fn subcommands() -> Vec<String> {
    let help = common::succeeded(run(&["--help"]));
    let list = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap();
    let names: Vec<String> = list
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|n| n.chars().all(|c| c.is_ascii_lowercase()))
        .map(String::from)
        .collect();
    assert!(names.len() >= 12, "{names:?}");
    names
}

#[test]
fn completion_scripts_load_and_know_every_command() {
    let commands = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = common::succeeded(run(&["completions", shell]));
        for c in &commands {
            assert!(script.contains(c.as_str()), "{shell} lacks {c}");
        }
        let runs = if shell == "fish" { "-l runs" } else { "--runs" };
        assert!(script.contains(runs), "{shell} lacks --runs");
    }
    // bash sources the script and registers the completion.
    let dir = common::scratch("cli-completions");
    let file = dir.join("muster.bash");
    std::fs::write(&file, common::succeeded(run(&["completions", "bash"]))).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p muster", file.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("_muster"));
    // A shell it does not know is a usage error.
    assert_eq!(run(&["completions", "cmd.exe"]).status.code(), Some(2));
}

#[test]
fn the_manual_page_names_every_command_and_the_exit_codes() {
    let page = common::succeeded(run(&["man"]));
    let head = format!(
        ".TH muster 1  \"muster {} (commit ",
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&head), "{}", &page[..200.min(page.len())]);
    assert!(page.contains(".SH NAME"));
    assert!(page.contains(".SH SUBCOMMANDS"));
    for c in subcommands() {
        assert!(page.contains(&format!("muster\\-{c}")), "man lacks {c}");
    }
    assert!(page.contains("Exit status: 0 when"));
}

/// `compare` of two different games says so once (it printed 22 KB: a
/// diagnostic for every unit of the scenario the other game lacks); a
/// scenario another ruleset cannot play shows its first three problems.
#[test]
fn compare_of_two_different_games_is_one_diagnostic() {
    // Fewer than 10 games: a usage error, said in the help.
    let few = run(&["compare", TVBD, TVBD, "--runs", "3"]);
    assert_eq!(few.status.code(), Some(2));
    assert!(stderr(&few).contains("compare needs at least 10 paired games"));
    let help = common::succeeded(run(&["compare", "--help"]));
    assert!(help.contains("at least 10"), "{help}");

    for other in [
        "rules/thistle_lily_and_rose.muster",
        "rules/never_mind_the_matchlocks.muster",
    ] {
        let out = run(&["compare", TVBD, other, "--runs", "10"]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        // The words, whatever the wrapping.
        let flat = err
            .replace('│', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains("look like two different games"), "{err}");
        assert!(err.contains("error: 1 problem found"), "{err}");
        assert!(err.len() < 1200, "{} bytes: {err}", err.len());
        assert!(out.stdout.is_empty());
    }
    // A draft of the same game still compares.
    let ok = run(&[
        "compare",
        TVBD,
        "rules/tvbd_steady_pike.muster",
        "--runs",
        "10",
        "-q",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    // A scenario the rulesets cannot play: its first 3 problems.
    let dir = common::scratch("cli-compare-cap");
    let bad = dir.join("bad.toml");
    let sc = std::fs::read_to_string(root().join("rules/scenarios/tvbd_default.toml")).unwrap();
    std::fs::write(&bad, sc.replace("\"Horse\"", "\"Hussar\"")).unwrap();
    let out = run(&[
        "compare",
        TVBD,
        TVBD,
        "--scenario",
        bad.to_str().unwrap(),
        "--runs",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("(the first 3 shown)"), "{err}");
    assert_eq!(
        err.matches("unknown unit type `Hussar`").count(),
        3,
        "{err}"
    );
}
