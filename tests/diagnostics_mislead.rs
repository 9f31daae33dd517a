//! Diagnostics that misled authors (issue 34): each test writes the small
//! ruleset or situation that showed it and asserts what is reported now,
//! through the library (code, message, the text the span covers) and,
//! where the command line is part of it, through `muster`.

use crate::common;
use muster::front::diagnostic::{render_plain, Diag, Severity};
use muster::Build;

/// A small ruleset each test adds to: two unit types, a number fact and a
/// bool fact (and core's `position`), and a melee.
const BASE: &str = "import core
sides attacker, defender
class cavalry, infantry
stat resolve
units (resolve) {
  Horse : cavalry = 3
  Shot  : infantry = 3
}
fact charging(unit): bool = false
fact overlaps(unit): int = 0
procedure melee(attacker: unit, defender: unit) outcomes { hits: int } {
  let bonus = if charging(attacker) then 1 else 0
  outcome hits = (overlaps(attacker) + 2 + bonus) d6 scoring 5+
}
";

/// BASE with `more` after it.
fn with(more: &str) -> String {
    format!("{BASE}{more}")
}

/// The text a diagnostic's span covers.
fn spanned<'a>(b: &'a muster::front::source::Sources, d: &Diag) -> &'a str {
    let s = d.span.expect("the diagnostic has a place");
    &b.get(s.file).text[s.start as usize..s.end as usize]
}

/// Compile text that must be rejected: its diagnostics and the sources.
fn rejected(text: &str) -> (Vec<Diag>, muster::front::source::Sources) {
    match muster::build_text("t.muster", text, None) {
        Ok(_) => panic!("compiled, but it has a mistake:\n{text}"),
        Err((d, s)) => (d, s),
    }
}

fn build_ok(text: &str) -> Build {
    match muster::build_text("t.muster", text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("should compile:\n{}", render_plain(&d, &s)),
    }
}

/// A scratch folder holding `files`, and `muster ARGS` run in it.
fn run_in(name: &str, files: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let dir = common::scratch(name);
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    common::muster_in(&dir, args)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// ============================================================ 1. pools

#[test]
fn negative_constant_pool_is_an_error_at_check_time() {
    let (d, s) = rejected(&with(
        "procedure p(u: unit) outcomes { n: int } {\n  outcome n = (0 - 2) d6 scoring 4+\n}\n",
    ));
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    assert_eq!(d[0].code, "muster::negative_pool");
    assert_eq!(d[0].message, "a pool of -2 dice");
    assert_eq!(spanned(&s, &d[0]), "0 - 2");
}

#[test]
fn empty_constant_pool_is_a_warning_and_check_succeeds() {
    let text =
        with("procedure p(u: unit) outcomes { n: int } {\n  outcome n = 0 d6 scoring 4+\n}\n");
    let b = build_ok(&text);
    assert_eq!(b.ruleset.warnings.len(), 1);
    let w = &b.ruleset.warnings[0];
    assert_eq!(
        (w.code, w.severity),
        ("muster::empty_pool", Severity::Warning)
    );
    assert_eq!(spanned(&b.sources, w), "0");
    // `check`: exit 0, the warning printed as one, the ruleset ok.
    let out = run_in(
        "mislead-empty-pool",
        &[("r.muster", &text)],
        &["check", "r.muster"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("⚠ a pool of 0 dice rolls nothing"), "{err}");
    assert!(!err.contains("problem"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("r.muster: ok"));
    // `check --message-format json`: ok, with the warning as a warning.
    let out = run_in(
        "mislead-empty-pool-json",
        &[("r.muster", &text)],
        &["check", "r.muster", "--message-format", "json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["rulesets"][0];
    assert_eq!(r["ok"], true);
    assert_eq!(r["diagnostics"][0]["severity"], "warning");
    assert_eq!(r["diagnostics"][0]["code"], "muster::empty_pool");
    assert_eq!(r["diagnostics"][0]["place"]["line"], 16);
    // The language server's analysis publishes it (as a warning).
    let a = muster::cli::lsp::analysis::analyse(std::path::Path::new("/tmp/r.muster"), &text);
    assert!(a.ruleset.is_some());
    assert_eq!(a.diags.len(), 1);
    assert_eq!(a.diags[0].severity, Severity::Warning);
}

#[test]
fn an_error_beside_a_warning_still_fails_and_counts_one_problem() {
    let text = with(
        "procedure p(u: unit) outcomes { n: int } {\n  outcome n = 0 d6 scoring 4+ + (1 - 3) d6\n}\n",
    );
    let out = run_in(
        "mislead-pool-both",
        &[("r.muster", &text)],
        &["check", "r.muster"],
    );
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("muster::negative_pool"), "{err}");
    assert!(err.contains("muster::empty_pool"), "{err}");
    assert!(err.contains("error: 1 problem found"), "{err}");
}

#[test]
fn negative_pool_at_run_time_points_at_the_pool() {
    let text = with(
        "procedure p(u: unit) outcomes { n: int } {\n  outcome n = (overlaps(u) - 2) d6 scoring 4+\n}\n",
    );
    let mut b = build_ok(&text);
    let s = b
        .situation("s.toml", "procedure = \"p\"\n[units.u]\ntype = \"Horse\"\n")
        .unwrap();
    let exact = b.exact(&s).expect_err("a pool of -2 dice was rolled");
    let sampled = b
        .sampled(&s, 50, 1)
        .expect_err("a pool of -2 dice was sampled");
    for d in [exact, sampled] {
        assert_eq!(
            d.message,
            "a pool of -2 dice: a roll has from 0 to 10000 dice"
        );
        assert_eq!(spanned(&b.sources, &d), "(overlaps(u) - 2) d6 scoring 4+");
    }
}

// ============================================================ 2, 3. situations

/// A situation of the melee with these facts.
fn melee_with(facts: &str) -> String {
    format!(
        "procedure = \"melee\"\nfacts = [{facts}]\n[units.attacker]\ntype = \"Horse\"\nside = \"attacker\"\n[units.defender]\ntype = \"Shot\"\nside = \"defender\"\n"
    )
}

/// A situation that must be rejected: its diagnostics, and the built
/// ruleset whose sources they point into.
fn bad_situation(text: &str) -> (Vec<Diag>, Build) {
    let mut b = build_ok(BASE);
    match b.situation("s.toml", text) {
        Ok(_) => panic!("accepted, but it has a mistake:\n{text}"),
        Err(d) => (d, b),
    }
}

#[test]
fn a_number_fact_stated_as_true_gets_the_form_that_works() {
    let (d, b) = bad_situation(&melee_with("\"overlaps(attacker)\""));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "fact `overlaps` is an int, not true/false");
    let help = d[0].help.as_deref().unwrap();
    assert!(help.contains("\"overlaps(...) is NUMBER\""), "{help}");
    assert_eq!(spanned(&b.sources, &d[0]), "overlaps(attacker)");
}

#[test]
fn a_number_fact_is_given_with_is_or_equals() {
    let mut b = build_ok(BASE);
    // Two overlaps: 4 dice hitting on 5+, so no hits is (2/3)^4 = 16/81.
    for facts in ["\"overlaps(attacker) is 2\"", "\"overlaps(attacker) == 2\""] {
        let s = b.situation("s.toml", &melee_with(facts)).unwrap();
        let o = b.exact(&s).unwrap();
        let p0 = o.get("hits").unwrap().p(muster::base::value::Value::Int(0));
        assert_eq!(p0.to_string(), "16/81", "{facts}");
    }
    // A number that is not one is still the parser's to report.
    let (d, _) = bad_situation(&melee_with("\"overlaps(attacker) is many\""));
    assert_eq!(d[0].message, "`many` is not a value of fact `overlaps`");
}

#[test]
fn contradictory_bool_facts_are_rejected_with_both_spans() {
    let (d, b) = bad_situation(&melee_with(
        "\"charging(attacker)\", \"not charging(attacker)\"",
    ));
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "fact `charging` is stated twice, as true and as false"
    );
    assert_eq!(spanned(&b.sources, &d[0]), "not charging(attacker)");
    assert_eq!(d[0].notes.len(), 1);
    let first = d[0].notes[0].0;
    assert_eq!(
        &b.sources.get(first.file).text[first.start as usize..first.end as usize],
        "charging(attacker)"
    );
}

#[test]
fn a_number_fact_given_two_values_is_rejected() {
    let (d, b) = bad_situation(&melee_with(
        "\"overlaps(attacker) is 1\", \"overlaps(defender) is 3\", \"overlaps(attacker) == 2\"",
    ));
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "fact `overlaps` is stated twice, as 1 and as 2"
    );
    assert_eq!(spanned(&b.sources, &d[0]), "overlaps(attacker) == 2");
    // The same value twice says nothing new and is no contradiction.
    let mut b = build_ok(BASE);
    let twice = melee_with("\"charging(attacker)\", \"charging(attacker)\"");
    assert!(b.situation("s.toml", &twice).is_ok());
}

// ============================================================ 4. the situation read back

/// BASE with a documented bool fact: "the unit" in its doc is the unit
/// it is stated of.
const DOCUMENTED: &str =
    "// §Step 3.2: the unit is in the enemy's rear.\nfact behind(u: unit): bool = false\n";

/// `muster odds` of BASE's melee in a situation stating `facts`: the text
/// and the JSON.
fn odds_read_back(name: &str, facts: &str) -> (String, serde_json::Value) {
    let files = [
        ("r.muster", with(DOCUMENTED)),
        ("s.toml", melee_with(facts)),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let args = ["odds", "r.muster", "--situation", "s.toml"];
    let text = common::succeeded(run_in(name, &files, &args));
    let json = common::succeeded(run_in(name, &files, &[&args[..], &["--json"]].concat()));
    (text, serde_json::from_str(&json).unwrap())
}

#[test]
fn odds_reads_the_situation_back_so_a_reversed_relation_shows() {
    let (meant, meant_json) = odds_read_back(
        "mislead-read-meant",
        "\"position(defender, attacker) is to_flank\", \"charging(attacker)\", \"not behind(attacker)\", \"overlaps(defender) is 1\"",
    );
    let block: Vec<&str> = meant
        .split("\n\n")
        .find(|b| b.starts_with("the situation, as read"))
        .expect("odds reads the situation back")
        .lines()
        .collect();
    assert_eq!(
        block,
        [
            "the situation, as read",
            "  position(defender, attacker) is to_flank  where attacker lies as seen from defender: to_flank",
            "  charging(attacker)                        charging (unit = attacker)",
            "  not behind(attacker)                      not: attacker is in the enemy's rear",
            "  overlaps(defender) is 1                   overlaps (unit = defender): 1",
        ]
    );
    // Before the odds.
    assert!(meant.find("the situation, as read") < meant.find("\nhits"));
    assert_eq!(
        meant_json["situation"][0],
        serde_json::json!({
            "fact": "position(defender, attacker) is to_flank",
            "reads": "where attacker lies as seen from defender: to_flank"
        })
    );
    assert_eq!(meant_json["situation"].as_array().unwrap().len(), 4);
    // The relation the wrong way round reads the wrong way round.
    let (reversed, reversed_json) = odds_read_back(
        "mislead-read-reversed",
        "\"position(attacker, defender) is to_flank\"",
    );
    assert!(
        reversed.contains("  position(attacker, defender) is to_flank  where defender lies as seen from attacker: to_flank\n"),
        "{reversed}"
    );
    assert_eq!(
        reversed_json["situation"][0]["reads"],
        "where defender lies as seen from attacker: to_flank"
    );
}

#[test]
fn a_situation_stating_no_facts_reads_back_nothing() {
    let (text, json) = odds_read_back("mislead-read-none", "");
    assert!(!text.contains("as read"), "{text}");
    assert!(json.get("situation").is_none());
}

// ============================================================ 6. follow-on errors

#[test]
fn a_name_of_another_kind_is_said_to_be_that_not_did_you_mean_itself() {
    let (d, s) = rejected(&with(
        "enum result = recoils | holds\nprocedure nothing() { }\nsequence {\n  turn {\n    step \"A\" { do recoils(attacker) }\n  } until true\n}\n",
    ));
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    assert_eq!(d[0].code, "muster::wrong_kind");
    assert_eq!(
        d[0].message,
        "`recoils` is an enum value, not a procedure or decision"
    );
    assert!(!d[0].help.as_deref().unwrap().contains("did you mean"));
    assert_eq!(spanned(&s, &d[0]), "recoils");
    assert_eq!(d[0].notes[0].1, "declared here as an enum value");
}

/// Already one diagnostic before issue 34's work (the compiler remembers
/// a `let` whose value failed); kept as the issue's test of it.
#[test]
fn a_bad_let_gives_one_diagnostic_not_an_unknown_name_after_it() {
    let (d, s) = rejected(&with(
        "procedure p(u: unit) outcomes { n: int } {\n  let a = 1 + true\n  outcome n = a + 1\n}\n",
    ));
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    assert_eq!(d[0].code, "muster::type");
}

// ============================================================ 8. files

#[test]
fn an_empty_ruleset_is_a_warning_not_a_silent_ok() {
    for text in ["", "import core\n"] {
        let b = build_ok(text);
        let w: Vec<&str> = b.ruleset.warnings.iter().map(|d| d.code).collect();
        assert_eq!(w, ["muster::empty_ruleset"], "{text:?}");
    }
    let out = run_in("mislead-empty", &[("e.muster", "")], &["check", "e.muster"]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("⚠ the ruleset declares nothing to run"),
        "{}",
        stderr(&out)
    );
    // A ruleset with something to run has no such warning.
    assert!(build_ok(BASE).ruleset.warnings.is_empty());
}

#[test]
fn a_file_that_is_not_utf8_gets_a_hint_to_check_the_path() {
    let dir = common::scratch("mislead-binary");
    std::fs::write(dir.join("b.muster"), b"import core\n\xff\xfe\x00garbage").unwrap();
    let out = common::muster_in(&dir, &["check", "b.muster"]);
    assert!(!out.status.success());
    let err = stderr(&out).replace('\n', " ").replace("  ", " ");
    assert!(err.contains("is not UTF-8 text (byte 12 is not)"), "{err}");
    assert!(err.contains("check the path"), "{err}");
}

// ============================================================ 5. hooks

#[test]
fn a_hook_calling_a_function_the_api_lacks_fails_at_check_at_the_call() {
    let (d, s) = rejected(&with(
        "hook h after melee {\n  let n = 1;\n  let r = roll_dice(\"d6\");\n}\n",
    ));
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    assert_eq!(d[0].code, "muster::hook");
    assert_eq!(d[0].message, "hook `h`: there is no function `roll_dice`");
    assert!(
        spanned(&s, &d[0]).starts_with("roll_dice"),
        "{:?}",
        spanned(&s, &d[0])
    );
    let help = d[0].help.as_deref().unwrap();
    assert!(help.starts_with("did you mean `roll`?"), "{help}");
    assert!(help.contains("set_state"), "{help}");
    // rhai's own functions, the script's functions and rhai's keywords are
    // known: this one checks.
    build_ok(&with(
        "hook ok after melee {\n  fn twice(x) { x * 2 }\n  let a = [1, 2];\n  a.push(twice(abs(-3)));\n  if a.len() > 2 { log(to_string(max(1, 2))); }\n  print(type_of(a));\n}\n",
    ));
}

#[test]
fn an_unbalanced_brace_in_a_hook_is_reported_at_the_brace() {
    let text = with("hook h after melee {\n  let n = 1;\n  }\n  n += 1;\n}\n");
    let (d, s) = rejected(&text);
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    let at = d[0].span.unwrap();
    let line = text[..at.start as usize].matches('\n').count() + 1;
    // Line 17 of the text is the `}` that closes the hook too early.
    assert_eq!(line, 17, "{}", render_plain(&d, &s));
    assert_eq!(spanned(&s, &d[0]), "}");
    assert_eq!(
        d[0].message,
        "a `}` too many in the script of hook `h` ends the hook early"
    );
    let rest = d[0].notes[0].0;
    assert_eq!(&text[rest.start as usize..rest.end as usize], "n");
    // The same in an `if` of the script, with braces in a string and a
    // comment, and an `outcomes { }` before it.
    let text = with("hook g after melee outcomes { k: int } {\n  let s = \"}\"; // {\n  if true { let n = 1; }}\n  let m = 2;\n}\n");
    let (d, s) = rejected(&text);
    assert_eq!(
        d[0].message,
        "a `}` too many in the script of hook `g` ends the hook early",
        "{}",
        render_plain(&d, &s)
    );
    assert_eq!(
        &text[d[0].span.unwrap().start as usize..],
        "}\n  let m = 2;\n}\n"
    );
    // Text after a whole hook that is not an item is not blamed on it.
    let (d, _) = rejected(&with(
        "hook f after melee {\n  let n = 1;\n}\nnonsense here\n",
    ));
    assert_eq!(d[0].message, "the ruleset does not parse here");
}

// ============================================================ 8. goto, default_scenario

#[test]
fn a_goto_cycle_is_reported_at_the_goto() {
    let (d, s) = rejected(&with(
        "procedure nothing() { }\nsequence {\n  turn {\n    step \"A\" { do nothing() }\n    step \"B\" { do nothing() goto \"A\" }\n  } until true\n}\n",
    ));
    assert_eq!(d.len(), 1, "{}", render_plain(&d, &s));
    assert_eq!(d[0].code, "muster::endless_turns");
    assert_eq!(
        d[0].message,
        "the steps go round for ever: play never reaches the end of the turn"
    );
    assert_eq!(spanned(&s, &d[0]), "goto \"A\"");
    assert_eq!(d[0].notes[0].1, "never reached");
    let until = d[0].notes[0].0;
    assert_eq!(
        &s.get(until.file).text[until.start as usize..until.end as usize],
        "true"
    );
}

#[test]
fn a_missing_default_scenario_is_found_by_check_at_its_declaration() {
    let text = with("default_scenario \"scenarios/gone.toml\"\n");
    let out = run_in(
        "mislead-scenario",
        &[("r.muster", &text)],
        &["check", "r.muster"],
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("muster::scenario"), "{err}");
    assert!(err.contains("gone.toml` does not exist"), "{err}");
    assert!(err.contains("declared here"), "{err}");
    assert!(
        err.contains("default_scenario \"scenarios/gone.toml\""),
        "{err}"
    );
    // The same through --message-format json, with its line.
    let out = run_in(
        "mislead-scenario-json",
        &[("r.muster", &text)],
        &["check", "r.muster", "--message-format", "json"],
    );
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["rulesets"][0]["diagnostics"][0]["code"],
        "muster::scenario"
    );
    assert_eq!(v["rulesets"][0]["diagnostics"][0]["place"]["line"], 15);
}

// ============================================================ 7. unset outcomes

/// A procedure that sets `n` only when its die shows 4 or more.
const SOMETIMES: &str = "procedure p(u: unit) outcomes { n: holds | breaks } {\n  let hit = 1 d6 scoring 4+\n  if hit > 0 {\n    outcome n = holds\n  }\n}\n";

#[test]
fn an_outcome_a_path_never_sets_is_a_warning_at_the_if() {
    let b = build_ok(&with(SOMETIMES));
    let w: Vec<&Diag> = b
        .ruleset
        .warnings
        .iter()
        .filter(|d| d.code == "muster::unset_outcome")
        .collect();
    assert_eq!(w.len(), 1);
    assert_eq!(
        w[0].message,
        "procedure `p` may leave its outcome `n` unset, and it would read `none`"
    );
    assert_eq!(spanned(&b.sources, w[0]), "hit > 0");
    assert_eq!(w[0].label, "not set when this is false");
    // An `else` that sets it, or a statement that sets it first: no warning.
    for fixed in [
        "procedure p(u: unit) outcomes { n: holds | breaks } {\n  if 1 d6 scoring 4+ > 0 {\n    outcome n = holds\n  } else {\n    outcome n = breaks\n  }\n}\n",
        "procedure p(u: unit) outcomes { n: holds | breaks } {\n  outcome n = breaks\n  if 1 d6 scoring 4+ > 0 {\n    outcome n = holds\n  }\n}\n",
    ] {
        let b = build_ok(&with(fixed));
        assert!(b.ruleset.warnings.is_empty(), "{fixed}");
    }
    // An outcome no statement sets: at the outcome. An int or bool left
    // unset is 0 or false (a roll never made counted nothing): no warning.
    let b = build_ok(&with(
        "procedure q(u: unit) outcomes { n: int, m: bool, r: holds | breaks } {\n  if true { outcome n = 1 }\n}\n",
    ));
    assert_eq!(b.ruleset.warnings.len(), 1);
    assert_eq!(spanned(&b.sources, &b.ruleset.warnings[0]), "r");
}

/// Where the check cannot see the gap (a hook's script names the outcome,
/// so it counts as setting it, but its path does not), `muster odds` says
/// so at run time: the outcome read `none` in half of the ways it went.
#[test]
fn an_outcome_left_unset_at_run_time_is_warned_by_odds() {
    let text = with(
        "procedure p(u: unit) outcomes { n: holds | breaks } {\n  if d6 >= 4 { outcome n = holds }\n}\nhook mend after p {\n  if outcome(\"n\") == () && false { set_outcome(\"n\", \"breaks\"); }\n}\n",
    );
    assert_eq!(unset_warnings(&build_ok(&text)), []);
    let o = run_in(
        "unset-at-run-time",
        &[
            ("t.muster", &text),
            ("s.toml", "procedure = \"p\"\n[units.u]\ntype = \"Horse\"\n"),
        ],
        &["odds", "t.muster", "--situation", "s.toml"],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // The message as one line (miette wraps it behind a bar).
    let err: Vec<&str> = err.split_whitespace().filter(|w| *w != "│").collect();
    let err = err.join(" ");
    assert!(
        err.contains(
            "procedure `p` left its outcome `n` unset in 1/2 of the ways it went: it read `none`"
        ),
        "{err}"
    );
    assert!(err.contains("muster check"), "{err}");
    // Set on every path: no warning.
    let fixed = text.replace(
        "outcome n = holds }",
        "outcome n = holds } else { outcome n = breaks }",
    );
    let o = run_in(
        "unset-at-run-time-fixed",
        &[
            ("t.muster", &fixed),
            ("s.toml", "procedure = \"p\"\n[units.u]\ntype = \"Horse\"\n"),
        ],
        &["odds", "t.muster", "--situation", "s.toml"],
    );
    assert!(o.status.success());
    assert!(!stderr(&o).contains("unset"), "{}", stderr(&o));
}

/// The `muster::unset_outcome` warnings of a ruleset: (the text each
/// points at, its label).
fn unset_warnings(b: &Build) -> Vec<(String, String)> {
    b.ruleset
        .warnings
        .iter()
        .filter(|d| d.code == "muster::unset_outcome")
        .map(|d| (spanned(&b.sources, d).to_string(), d.label.clone()))
        .collect()
}

/// A `call` is seen through: it sets the caller's outcome when the callee
/// has one of that name and sets it on every path; a callee without it
/// sets nothing (this was taken to set it, so `p` read `none` silently).
/// A callee that may leave its own listed outcome unset is warned of
/// itself, once, not again at each caller.
#[test]
fn a_call_sets_an_outcome_only_when_the_callee_does() {
    const OUT: &str = "outcomes { n: holds | breaks }";
    let always = format!("procedure sub(u: unit) {OUT} {{\n  outcome n = holds\n}}\n");
    let other = "procedure sub(u: unit) outcomes { m: holds | breaks } {\n  outcome m = holds\n}\n";
    let sometimes =
        format!("procedure sub(u: unit) {OUT} {{\n  if d6 >= 4 {{ outcome n = holds }}\n}}\n");
    let caller = format!("procedure p(u: unit) {OUT} {{\n  call sub(u)\n}}\n");
    // The callee sets it on every path: nothing to warn of.
    let b = build_ok(&with(&format!("{always}{caller}")));
    assert_eq!(unset_warnings(&b), []);
    // The callee has no `n`: the call sets nothing, and `p` never sets it.
    let b = build_ok(&with(&format!("{other}{caller}")));
    assert_eq!(
        unset_warnings(&b),
        [("n".to_string(), "no statement sets it".to_string())]
    );
    assert!(b.ruleset.warnings[0].message.contains("procedure `p`"));
    // Only on one side of an `if`: the warning is at the `if`.
    let b = build_ok(&with(&format!(
        "{other}procedure p(u: unit) {OUT} {{\n  if charging(u) {{ call sub(u) }} else {{ outcome n = breaks }}\n}}\n"
    )));
    assert_eq!(
        unset_warnings(&b),
        [(
            "charging(u)".to_string(),
            "not set when this is true".to_string()
        )]
    );
    // The callee leaves it unset on a path: one warning, the callee's.
    let b = build_ok(&with(&format!("{sometimes}{caller}")));
    let w = unset_warnings(&b);
    assert_eq!(
        w,
        [(
            "d6 >= 4".to_string(),
            "not set when this is false".to_string()
        )]
    );
    assert!(b.ruleset.warnings[0].message.contains("procedure `sub`"));
    // A callee whose `n` is not of listed values (so not warned of) is
    // followed: it sets `n` on every path, so the call does.
    let b = build_ok(&with(&format!(
        "procedure sub(u: unit) outcomes {{ n: int }} {{\n  outcome n = 1\n}}\n{caller}"
    )));
    assert_eq!(unset_warnings(&b), []);
}

/// Hooks: a hook whose script calls `set_outcome` with the outcome's
/// name is taken to set it; a `before` or `after` hook that does not name
/// it leaves the body's paths to decide (a procedure with hooks was left
/// out before); a `replace` hook that never names it leaves it unset; an
/// outcome a hook declares and no hook sets is warned of at its
/// declaration.
#[test]
fn hooks_set_an_outcome_only_when_their_script_names_it() {
    let body = "procedure p(u: unit) outcomes { n: holds | breaks } {\n  if d6 >= 4 { outcome n = holds }\n}\n";
    // A hook that logs only: the body's gap is still reported.
    let b = build_ok(&with(&format!(
        "{body}hook talk before p {{\n  log(\"p runs\");\n}}\n"
    )));
    assert_eq!(
        unset_warnings(&b),
        [(
            "d6 >= 4".to_string(),
            "not set when this is false".to_string()
        )]
    );
    // A hook that sets it (by its name, or by a name it computes): none.
    for script in [
        "set_outcome(\"n\", \"breaks\");",
        "let o = \"n\";\n  set_outcome(o, \"breaks\");",
    ] {
        let b = build_ok(&with(&format!(
            "{body}hook mend after p {{\n  if outcome(\"n\") == () {{ {script} }}\n}}\n"
        )));
        assert_eq!(unset_warnings(&b), [], "{script}");
    }
    // A hook setting another outcome does not count.
    let b = build_ok(&with(
        "procedure p(u: unit) outcomes { n: holds | breaks, k: int } {\n  if d6 >= 4 { outcome n = holds }\n}\nhook tally after p {\n  set_outcome(\"k\", 1);\n}\n"
    ));
    assert_eq!(unset_warnings(&b).len(), 1);
    // A replacing hook that never sets it: at the outcome, naming the hook.
    let b = build_ok(&with(
        "procedure p(u: unit) outcomes { n: holds | breaks } { }\nhook instead replace p {\n  log(\"nothing\");\n}\n",
    ));
    assert_eq!(
        unset_warnings(&b),
        [(
            "n".to_string(),
            "hook `instead` replaces the body and never sets it".to_string()
        )]
    );
    // An outcome a hook declares, which no hook sets: at its declaration.
    let b = build_ok(&with(
        "procedure p(u: unit) outcomes { k: int } {\n  outcome k = 1\n}\nhook h after p outcomes { mood: calm | angry } {\n  log(\"after\");\n}\n",
    ));
    assert_eq!(
        unset_warnings(&b),
        [("mood".to_string(), "no statement sets it".to_string())]
    );
}

// ============================================================ parse errors in words

#[test]
fn parse_errors_name_what_an_author_writes_not_grammar_rules() {
    let (d, _) = rejected("define f(): int = 1 +\n");
    assert_eq!(d[0].label, "expected an expression");
    // Where an item may start: its keywords, not `hook item`, `scenario kw`.
    let (d, _) = rejected("import core\n42\n");
    let label = &d[0].label;
    for want in [
        "`hook`",
        "`default_scenario`",
        "`side_state` or `state`",
        "end of file",
    ] {
        assert!(label.contains(want), "{label}");
    }
    for leak in [" kw", " item,", "unary", "header"] {
        assert!(!label.contains(leak), "{label}");
    }
}

/// A `\"` in a string (an escape in many languages) ends the string, and
/// the parse failed after it with a list of what may follow: now the
/// diagnostic points at the `\"` and says how to quote inside a string.
#[test]
fn an_escaped_quote_is_blamed_not_the_text_after_it() {
    let (d, s) = rejected(&with(
        "procedure p(u: unit) outcomes { n: int } {\n  require u.resolve > 0 else \"the unit is \\\"broken\\\"\"\n  outcome n = 1\n}\n",
    ));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "muster::syntax");
    assert_eq!(d[0].message, "a string has no escapes: `\\\"` ends it");
    assert_eq!(spanned(&s, &d[0]), "\\\"");
    assert_eq!(d[0].label, "the string ends at this `\"`");
    let at = d[0].span.unwrap().start as usize;
    assert!(
        s.get(d[0].span.unwrap().file).text[..at].ends_with("the unit is "),
        "the first `\\\"`"
    );
    assert!(d[0].help.as_deref().unwrap_or("").contains("single quotes"));
    // In a header's title too; and a `\` before a closing quote that ends
    // the string where it should is no mistake of this kind.
    let (d, _) = rejected("ruleset q \"A \\\"quoted\\\" title\"\nstat resolve\n");
    assert_eq!(d[0].message, "a string has no escapes: `\\\"` ends it");
    let (d, _) = rejected("ruleset q \"a path C:\\\"\nstat resolve\n42\n");
    assert_eq!(d[0].message, "the ruleset does not parse here");
}
