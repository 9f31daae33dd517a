//! Hooks: rules written as rhai scripts. Their odds (exact, by enumerating a
//! hook's dice, against a closed form and against sampling), their checks at
//! compile time, their sandbox, and battles with hooks that roll dice.

#![allow(clippy::result_large_err)]

use crate::common;

use muster::base::value::Value;
use muster::battle::game::Prepared;
use muster::front::diagnostic::render_plain;
use muster::Build;
use std::path::Path;

/// A gun in the manner of Never Mind the Matchlocks' artillery (its
/// misfire: four or more sixes in one shoot action). The gun's dice and crew
/// are this test's own numbers.
const GUN: &str = r#"
ruleset gun "hook tests"
import core
stat dice, crew
class artillery
units (dice, crew) {
  Gun : artillery = 4, 6
}
state crew_left: int = self.crew

procedure shoot(gun: unit) outcomes { hits: int } {
  let sixes = gun.dice d6 scoring 6+
  outcome hits = gun.dice d6 scoring 5+
}
"#;

const MISFIRE: &str = r#"
hook misfire "four or more sixes in one shoot action" after shoot outcomes { misfired: bool, crew_lost: int } {
  if sixes >= 4 {
    set_outcome("misfired", true);
    let lost = roll("d6");
    set_outcome("crew_lost", lost);
    add_state(gun, "crew_left", -lost);
    log(`${name(gun)} misfires and loses ${lost} crew`);
  }
}
"#;

const SITUATION: &str = "procedure = \"shoot\"\n[units.gun]\ntype = \"Gun\"\n";

fn build(text: &str) -> Result<Build, String> {
    muster::build_text("gun.muster", text, None).map_err(|(d, s)| common::render_here(&d, &s))
}

fn built(text: &str) -> Build {
    build(text).unwrap_or_else(|e| panic!("{e}"))
}

fn rejected(text: &str) -> String {
    match build(text) {
        Ok(_) => panic!("the ruleset should have been rejected"),
        Err(e) => e,
    }
}

fn frac(o: &muster::run::odds::Odds, outcome: &str, v: Value) -> Option<(u128, u128)> {
    o.get(outcome).unwrap().p(v).fraction()
}

#[test]
fn a_hook_s_outcomes_and_dice_are_exact() {
    let mut b = built(&format!("{GUN}{MISFIRE}"));
    let s = b.situation("s.toml", SITUATION).unwrap();
    let o = b.exact(&s).unwrap();
    // Four sixes on four dice: (1/6)^4 = 1/1296.
    assert_eq!(frac(&o, "misfired", Value::Bool(true)), Some((1, 1296)));
    assert_eq!(frac(&o, "misfired", Value::Bool(false)), Some((1295, 1296)));
    // Then the hook's own d6: each loss 1..6 has 1/1296 * 1/6 = 1/7776.
    for k in 1..=6 {
        assert_eq!(frac(&o, "crew_lost", Value::Int(k)), Some((1, 7776)), "{k}");
    }
    assert_eq!(frac(&o, "crew_lost", Value::Int(0)), Some((1295, 1296)));
    // The procedure's own outcome is untouched by the hook: 4 dice hitting
    // on 5+, P(4 hits) = (1/3)^4.
    assert_eq!(frac(&o, "hits", Value::Int(4)), Some((1, 81)));
}

#[test]
fn sampling_agrees_with_the_exact_odds_of_a_hook() {
    let mut b = built(&format!("{GUN}{MISFIRE}"));
    let s = b.situation("s.toml", SITUATION).unwrap();
    let n = 1_296_000u64;
    let o = b.sampled(&s, n, 5).unwrap();
    let p = o.get("misfired").unwrap().p(Value::Bool(true)).to_f64();
    // Expected 1/1296: 1000 of 1,296,000; a standard error is about 31.6.
    let count = p * n as f64;
    assert!((count - 1000.0).abs() < 4.5 * 31.6, "{count}");
    // Crew lost 6 happens 1/7776 of the time: 166.7 expected, sd ~12.9.
    let six = o.get("crew_lost").unwrap().p(Value::Int(6)).to_f64() * n as f64;
    assert!((six - 166.7).abs() < 4.5 * 12.9, "{six}");
}

#[test]
fn a_hook_rolls_scripted_dice_after_the_procedure_s() {
    let mut b = built(&format!("{GUN}{MISFIRE}"));
    // Four sixes for `sixes`, then four for `hits`, then the hook's d6.
    let s = b
        .situation(
            "s.toml",
            "procedure = \"shoot\"\nrolls = [6, 6, 6, 6, 5, 5, 1, 2, 3]\n[units.gun]\ntype = \"Gun\"\n",
        )
        .unwrap();
    let o = b.scripted(&s).unwrap();
    assert_eq!(frac(&o, "misfired", Value::Bool(true)), Some((1, 1)));
    assert_eq!(frac(&o, "crew_lost", Value::Int(3)), Some((1, 1)));
    assert_eq!(frac(&o, "hits", Value::Int(2)), Some((1, 1)));
}

#[test]
fn a_hook_s_outcome_appears_in_odds_json() {
    let dir = std::env::temp_dir().join(format!("muster-hooks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("gun.muster"), format!("{GUN}{MISFIRE}")).unwrap();
    std::fs::write(dir.join("s.toml"), SITUATION).unwrap();
    let out = common::muster_in(
        &dir,
        &["odds", "gun.muster", "--situation", "s.toml", "--json"],
    );
    let j: serde_json::Value = serde_json::from_str(&common::succeeded(out)).unwrap();
    let misfired = &j["outcomes"]["misfired"];
    assert!(misfired.is_object(), "{j}");
    let p = misfired["true"].as_f64().unwrap();
    assert!((p - 1.0 / 1296.0).abs() < 1e-12, "{j}");
    assert_eq!(j["method"], "exact", "{j}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_hook_that_loops_forever_stops_at_its_limit() {
    let text = format!("{GUN}hook spin after shoot {{\n  let n = 0;\n  loop {{ n += 1; }}\n}}\n");
    let (b, s, d) = exact_stops(&text);
    assert_eq!(d.code, "muster::hook");
    assert!(
        d.message.contains(
            "hook `spin` of ruleset `gun` failed: it ran past its limit of 100000 operations"
        ),
        "{}",
        d.message
    );
    let out = render_plain(&[d], &b.sources);
    // The diagnostic points at the script's line with the loop.
    assert!(out.contains("loop { n += 1; }"), "{out}");
    assert!(out.contains("help:"), "{out}");
    // Sampling stops the same way.
    assert_eq!(b.sampled(&s, 100, 1).unwrap_err().code, "muster::hook");
}

#[test]
fn a_hook_that_reads_an_unknown_fact_is_rejected_when_compiled() {
    let text = format!(
        "{GUN}fact in_cover(u: unit): bool = false\nhook peek after shoot {{\n  if fact(\"in_covr\", gun) {{ log(\"x\"); }}\n}}\n"
    );
    let e = rejected(&text);
    assert!(e.contains("hook `peek`: there is no fact `in_covr`"), "{e}");
    assert!(e.contains("did you mean `in_cover`?"), "{e}");
    // It points at the script's line.
    assert!(e.contains("if fact(\"in_covr\", gun)"), "{e}");
}

#[test]
fn the_compiler_checks_what_a_hook_names() {
    let cases = [
        ("hook h after shot { }", "names no procedure `shot`"),
        ("hook h before step \"Nope\" { }", "names no step \"Nope\""),
        ("hook h fact nothing { 1 }", "names no fact `nothing`"),
        (
            "hook h after shoot { state(gun, \"crew\"); }",
            "there is no state `crew`",
        ),
        (
            "hook h after shoot { stat(gun, \"dize\"); }",
            "did you mean `dice`?",
        ),
        (
            "hook h after shoot { roll(\"d7\"); }",
            "there is no die `d7`",
        ),
        (
            "hook h after shoot { set_outcome(\"hit\", 1); }",
            "there is no outcome `hit`",
        ),
        (
            "hook h after shoot { perform(\"shot\", [gun]); }",
            "there is no procedure `shot`",
        ),
        (
            "hook h after shoot { let x = nobody; }",
            "Undefined variable: nobody",
        ),
        ("hook h after shoot { eval(\"1\") }", "does not compile"),
        (
            "hook h after shoot { rule(\"nothing\", 1) }",
            "there is no define, table or quantity `nothing`",
        ),
    ];
    for (hook, want) in cases {
        let e = match build(&format!("{GUN}{hook}\n")) {
            Ok(_) => panic!("{hook} should have been rejected"),
            Err(e) => e,
        };
        assert!(e.contains(want), "{hook}: {e}");
    }
}

#[test]
fn fact_hooks_derive_values_and_change_nothing() {
    let base = format!(
        "{GUN}fact crewed(g: unit): bool\nprocedure check(gun: unit) outcomes {{ crewed: bool }} {{\n  outcome crewed = crewed(gun)\n}}\n"
    );
    let text =
        format!("{base}hook crewed_by_script fact crewed {{ state(g, \"crew_left\") >= 3 }}\n");
    let mut b = built(&text);
    let s = b
        .situation(
            "s.toml",
            "procedure = \"check\"\n[units.gun]\ntype = \"Gun\"\n",
        )
        .unwrap();
    let o = b.exact(&s).unwrap();
    assert_eq!(frac(&o, "crewed", Value::Bool(true)), Some((1, 1)));
    // A situation cannot state a derived fact.
    let Err(d) = b.situation(
        "s2.toml",
        "procedure = \"check\"\nfacts = [\"crewed(gun)\"]\n[units.gun]\ntype = \"Gun\"\n",
    ) else {
        panic!("a situation stating a derived fact should be refused");
    };
    assert!(
        d[0].message.contains("derived by hook `crewed_by_script`"),
        "{:?}",
        d
    );
    // Nor can a procedure note it.
    let e = rejected(&format!(
        "{base}hook h fact crewed {{ true }}\nprocedure mark(gun: unit) {{\n  note crewed(gun)\n}}\n"
    ));
    assert!(
        e.contains("is derived by hook `h`, so it cannot be noted"),
        "{e}"
    );
    // A fact has one value in a situation: no dice, no changes.
    let e = rejected(&format!(
        "{base}hook h fact crewed {{ roll(\"d6\") > 3 }}\n"
    ));
    assert!(e.contains("derives a fact but rolls dice"), "{e}");
    let e = rejected(&format!(
        "{base}hook h fact crewed {{ set_state(g, \"crew_left\", 0); true }}\n"
    ));
    assert!(e.contains("a fact hook cannot change the game"), "{e}");
}

#[test]
fn a_replacing_hook_is_the_procedure() {
    // Matchlocks' cannonball through a pike square (one extra kill) is the
    // kind of rule a replacing hook writes; here a test's own version: two
    // dice, a hit on 5+, a bounce on a double six adds one hit.
    let text = format!(
        "{GUN}hook bounce replace shoot {{\n  let r = roll(2, \"d6\");\n  let hits = count_at_least(r, 5);\n  if count_of(r, 6) == 2 {{ hits += 1; }}\n  set_outcome(\"hits\", hits);\n}}\n"
    );
    let mut b = built(&text);
    let s = b.situation("s.toml", SITUATION).unwrap();
    let o = b.exact(&s).unwrap();
    // P(2 hits) = P(both 5+) - P(double six) = 4/36 - 1/36 = 3/36;
    // P(3 hits) = 1/36; P(0) = 16/36; P(1) = 16/36.
    assert_eq!(frac(&o, "hits", Value::Int(0)), Some((4, 9)));
    assert_eq!(frac(&o, "hits", Value::Int(1)), Some((4, 9)));
    assert_eq!(frac(&o, "hits", Value::Int(2)), Some((1, 12)));
    assert_eq!(frac(&o, "hits", Value::Int(3)), Some((1, 36)));
}

#[test]
fn a_script_error_names_the_hook_and_its_line() {
    let text = format!(
        "{GUN}hook grumpy after shoot {{\n  let a = 1;\n  if sixes >= 0 {{ throw \"the gunners refuse\"; }}\n}}\n"
    );
    let (b, _, d) = exact_stops(&text);
    let out = render_plain(&[d], &b.sources);
    assert!(
        out.contains("hook `grumpy` of ruleset `gun` failed: the gunners refuse"),
        "{out}"
    );
    assert!(out.contains("gun.muster:"), "{out}");
    assert!(out.contains("throw \"the gunners refuse\""), "{out}");
}

#[test]
fn scripts_have_no_clock_and_no_files() {
    for script in [
        "timestamp()",
        "import \"x\" as y;",
        "open_file(\"/etc/passwd\")",
    ] {
        let text = format!("{GUN}hook h after shoot {{ {script} }}\n");
        let outcome = build(&text).and_then(|mut b| {
            let s = b.situation("s.toml", SITUATION).unwrap();
            b.exact(&s).map(|_| ()).map_err(|d| d.message)
        });
        assert!(outcome.is_err(), "{script} should not work");
    }
}

// ------------------------------------------------------------ battles

/// A house rule of this test's own on Tilly's Very Bad Day: before each
/// turn's command morale, every cannon rolls a d6 and on a 1 its crew lose
/// their nerve (1 hit, through the ruleset's own `take_hits`).
const NERVES: &str = r#"
extends "tillys_very_bad_day.muster"
hook nerves "guns lose their nerve on a 1" before step "Step 4.1 Command Morale" {
  for u in units() {
    if is_a(u, "Cannons") && !state(u, "routed") && roll("d6") == 1 {
      let r = perform("take_hits", [u, 1]);
      log(`${name(u)} lose their nerve` + if r.routed { " and rout" } else { "" });
    }
  }
}
"#;

fn house(text: &str) -> Build {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    match muster::build_text("house.muster", text, Some(&dir)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render_plain(&d, &s)),
    }
}

#[test]
fn a_hook_that_rolls_dice_gives_the_same_battle_for_a_seed() {
    let mut b = house(NERVES);
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let one = prep.play(7, true).unwrap();
    let two = prep.play(7, true).unwrap();
    assert_eq!(one.narrative(), two.narrative());
    let text = one.narrative();
    assert!(text.contains("   hook nerves rolls ["), "{text}");
    // Some gun lost its nerve in this game (the narrative shows the line).
    assert!(text.contains("lose their nerve"), "{text}");
    // Whole runs: the same summary on 1 and 2 threads.
    let run = |threads| common::simulate_on(&prep, threads, 12, 3);
    assert_eq!(run(1), run(2));
}

#[test]
fn a_battle_stopped_by_a_failing_hook_says_so() {
    let text = r#"
extends "tillys_very_bad_day.muster"
hook stuck "a draft that never ends its loop" after step "Step 1.1 Attacker Move" {
  while true { }
}
"#;
    let mut b = house(text);
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let Err(d) = prep.play(7, true) else {
        panic!("the battle should have stopped");
    };
    assert_eq!(d.code, "muster::hook");
    assert!(
        d.message
            .contains("(turn 1, step \"Step 1.1 Attacker Move\")"),
        "{}",
        d.message
    );
    let out = common::render_here(&[d], &b.sources);
    assert!(out.contains("house.muster"), "{out}");
    assert!(out.contains("while true { }"), "{out}");
    // The CLI prints only the diagnostic and exits non-zero. The house rule
    // lies beside a copy of the book and its default scenario (a ruleset
    // reads only its own folder tree).
    let dir = std::env::temp_dir().join(format!("muster-stuck-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    for f in ["tillys_very_bad_day.muster", "scenarios/tvbd_default.toml"] {
        std::fs::copy(rules.join(f), dir.join(f)).unwrap();
    }
    let file = dir.join("stuck.muster");
    std::fs::write(&file, text).unwrap();
    let svg = dir.join("svg");
    let out = common::muster_in(
        &dir,
        &[
            "battle",
            file.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    // The game as far as it got (the move step of turn 1), then where it
    // stopped; the diagnostic on standard error.
    let told = String::from_utf8_lossy(&out.stdout);
    assert!(told.contains("=== Turn 1 ==="), "{told}");
    assert!(
        told.trim_end().ends_with(
            "The game stopped here: hook `stuck` of ruleset `tillys_very_bad_day` failed: it ran \
             past its limit of 100000 operations (turn 1, step \"Step 1.1 Attacker Move\") (the \
             error follows)."
        ),
        "{told}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("muster::hook") && err.contains("while true { }"),
        "{err}"
    );
    assert!(!svg.exists(), "no pictures from a stopped battle");
    std::fs::remove_dir_all(&dir).ok();
}

/// `fall_back` (a hook's "move back"): straight back by up to the distance,
/// a quarter at a time, stopping short of other units and the table edge.
#[test]
fn falling_back_stops_short_of_units_and_the_edge() {
    use muster::run::battlefield::{Base, Pt};
    use muster::run::field::Field;
    use std::sync::Arc;
    let start = Base::new(Pt { x: 10.0, y: 10.0 }, 0.0, 2.0, 1.0);
    // Where 1.6 straight back would put it: a friend's base just beyond.
    let behind = start.advanced(-2.6);
    let mut f = Field::new(
        20.0,
        20.0,
        Arc::new(Vec::new()),
        vec![start, behind],
        vec![0.0, 0.0],
        vec![0, 0],
        [0, 1, 2],
    );
    // Blocked after 1.5 (its rear edge would cross into the other base at 1.75).
    assert_eq!(f.fall_back(0, 3.0), 1.5);
    assert_eq!(f.bases[0], start.advanced(-1.5));
    // With the other unit gone, the whole distance.
    f.on_table[1] = false;
    assert_eq!(f.fall_back(0, 2.0), 2.0);
    // Never off the table: from near the edge it goes only as far as fits.
    let near = start.advanced(-9.0);
    let mut g = Field::new(
        20.0,
        20.0,
        Arc::new(Vec::new()),
        vec![near],
        vec![0.0],
        vec![0],
        [0, 1, 2],
    );
    let went = g.fall_back(0, 5.0);
    assert!(went < 5.0 && g.holds(&g.bases[0]), "{went}");
    assert!(!g.holds(&near.advanced(-(went + 0.25))), "{went}");
}

// ------------------------------------------------------------ limits of hooks as a whole

/// A folder of its own for one test's files, emptied first.
/// A fresh, empty folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch(name)
}

/// The binary run in a scratch folder holding `files`: its exit status,
/// and its standard error with the folder's path taken out.
fn run_with(name: &str, files: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let dir = scratch(name);
    for (f, text) in files {
        let f = dir.join(f);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }
    let out = common::muster_in(&dir, args);
    std::fs::remove_dir_all(&dir).ok();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Asserts the binary stopped with a diagnostic (not a signal or a panic)
/// whose text holds each of `want` (with the lines miette wrapped joined).
fn stopped_with(what: &str, run: (bool, String, String), want: &[&str]) {
    let (ok, _, err) = run;
    assert!(!ok, "{what}: should have failed");
    let err = err
        .lines()
        .map(|l| l.trim_start().trim_start_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(err.contains("error: 1 problem found"), "{what}: {err}");
    for w in want {
        assert!(err.contains(w), "{what}: no `{w}` in\n{err}");
    }
}

/// The ruleset `text` in the plain situation, and the diagnostic its exact
/// odds stop with.
fn exact_stops(
    text: &str,
) -> (
    Build,
    muster::odds::situation::Situation,
    muster::front::diagnostic::Diag,
) {
    let mut b = built(text);
    let s = b.situation("s.toml", SITUATION).unwrap();
    let d = b.exact(&s).expect_err("exact odds should have stopped");
    (b, s, d)
}

/// A replacing hook that performs its own procedure runs itself until the
/// chain of nested hook calls is 16 deep; then it stops with a diagnostic
/// at its `perform`, in every way odds run it (today: a stack overflow).
const SELF_PERFORMING: &str = r#"
hook again replace shoot {
  let r = perform("shoot", [gun]);
  set_outcome("hits", r.hits);
}
"#;

const CYCLE_MESSAGE: &str = "hook `again` of ruleset `gun` failed: it runs itself again and again, more than 16 deep: `again` (replaces `shoot`) → `again`";

#[test]
fn a_hook_that_performs_its_own_procedure_stops_at_its_perform() {
    let text = format!("{GUN}{SELF_PERFORMING}");
    let scripted =
        "procedure = \"shoot\"\nrolls = [1, 2, 3, 4, 5, 6, 1, 2]\n[units.gun]\ntype = \"Gun\"\n";
    let files = [
        ("gun.muster", text.as_str()),
        ("s.toml", SITUATION),
        ("rolls.toml", scripted),
    ];
    for (how, args) in [
        (
            "exact",
            &["odds", "gun.muster", "--situation", "s.toml"][..],
        ),
        (
            "sampled",
            &[
                "odds",
                "gun.muster",
                "--situation",
                "s.toml",
                "--samples",
                "100",
            ],
        ),
        (
            "scripted",
            &["odds", "gun.muster", "--situation", "rolls.toml"],
        ),
    ] {
        stopped_with(
            how,
            run_with("self-perform", &files, args),
            &[
                "muster::hook",
                CYCLE_MESSAGE,
                // The label is at the script's perform.
                "let r = perform(\"shoot\", [gun]);",
                "in hook `again`, 16 hooks deep",
                "help: a hook that performs its own procedure or reads its own fact",
            ],
        );
    }
}

/// A fact hook that reads its own fact: in odds and in `query`.
#[test]
fn a_fact_hook_that_reads_its_own_fact_stops_at_its_read() {
    let text = format!(
        "{GUN}fact loaded(g: unit): bool\nhook loaded_by_script fact loaded {{ fact(\"loaded\", g) }}\nprocedure check(gun: unit) outcomes {{ ok: bool }} {{\n  outcome ok = loaded(gun)\n}}\n"
    );
    let check = "procedure = \"check\"\n[units.gun]\ntype = \"Gun\"\n";
    let files = [("gun.muster", text.as_str()), ("c.toml", check)];
    let want = [
        "hook `loaded_by_script` of ruleset `gun` failed: it runs itself again and again, more than 16 deep: `loaded_by_script` (derives `loaded`) → `loaded_by_script`",
        "fact(\"loaded\", g)",
    ];
    for (how, args) in [
        ("odds", &["odds", "gun.muster", "--situation", "c.toml"][..]),
        (
            "query",
            &[
                "query",
                "gun.muster",
                "--situation",
                "c.toml",
                "loaded(gun)",
            ],
        ),
    ] {
        stopped_with(how, run_with("self-fact", &files, args), &want);
    }
}

/// Cycles through other hooks: two procedure hooks that perform each
/// other's procedure (with a fact hook read on the way), and two fact
/// hooks that read each other's fact. The message shows the cycle.
#[test]
fn hooks_that_run_one_another_in_a_cycle_stop_with_the_cycle() {
    let procs = format!(
        r#"{GUN}fact ready(g: unit): bool
procedure reload(gun: unit) outcomes {{ done: bool }} {{ }}
hook aim replace shoot {{
  let r = perform("reload", [gun]);
  set_outcome("hits", if r.done {{ 1 }} else {{ 0 }});
}}
hook load after reload {{
  if fact("ready", gun) {{ perform("shoot", [gun]); }}
  set_outcome("done", true);
}}
hook check fact ready {{ true }}
"#
    );
    stopped_with(
        "procedure hooks",
        run_with(
            "cycle-procs",
            &[("gun.muster", &procs), ("s.toml", SITUATION)],
            &["odds", "gun.muster", "--situation", "s.toml"],
        ),
        &["hook `load` of ruleset `gun` failed: hooks run one another again and again, more than 16 deep: `load` (after `reload`) → `aim` (replaces `shoot`) → `load`"],
    );
    let facts = format!(
        r#"{GUN}fact ready(g: unit): bool
fact primed(g: unit): bool
hook is_ready fact ready {{ fact("primed", g) }}
hook is_primed fact primed {{ !fact("ready", g) }}
procedure check(gun: unit) outcomes {{ ok: bool }} {{
  outcome ok = ready(gun)
}}
"#
    );
    stopped_with(
        "fact hooks",
        run_with(
            "cycle-facts",
            &[
                ("gun.muster", &facts),
                ("c.toml", "procedure = \"check\"\n[units.gun]\ntype = \"Gun\"\n"),
            ],
            &["odds", "gun.muster", "--situation", "c.toml"],
        ),
        &["hook `is_primed` of ruleset `gun` failed: hooks run one another again and again, more than 16 deep: `is_ready` (derives `ready`) → `is_primed` (derives `primed`) → `is_ready`"],
    );
}

/// Sixteen nested hook calls, each with a script at its limit of call
/// depth (about 160 KiB of stack each), fit the 2 MiB stack of a sampling
/// thread: each call that finds the stack low runs on a new segment. (Ten
/// chunks of samples, so that the pool's threads run them.)
#[test]
fn nested_hooks_at_their_call_depth_limit_do_not_overflow_the_stack() {
    let text = format!(
        "{GUN}hook again replace shoot {{\n  fn deep(k, g) {{ if k == 0 {{ perform(\"shoot\", [g]) }} else {{ let x = deep(k - 1, g); x }} }}\n  deep(30, gun);\n}}\n"
    );
    stopped_with(
        "sampled",
        run_with(
            "deep-stack",
            &[("gun.muster", &text), ("s.toml", SITUATION)],
            &[
                "odds",
                "gun.muster",
                "--situation",
                "s.toml",
                "--samples",
                "40960",
            ],
        ),
        &[CYCLE_MESSAGE, "deep(30, gun);"],
    );
}

/// A TVBD house rule whose hook on `take_hits` performs `take_hits`: the
/// battle stops at the first hit, with the turn, and exits non-zero.
#[test]
fn a_battle_with_a_self_performing_hook_stops_with_the_diagnostic() {
    // Beside a copy of the book and its default scenario (a ruleset reads
    // only its own folder tree).
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let book = std::fs::read_to_string(rules.join("tillys_very_bad_day.muster")).unwrap();
    let scenario = std::fs::read_to_string(rules.join("scenarios/tvbd_default.toml")).unwrap();
    let text = "extends \"tillys_very_bad_day.muster\"\nhook again \"hits that pass themselves on\" replace take_hits {\n  let r = perform(\"take_hits\", [u, hits]);\n  set_outcome(\"routed\", r.routed);\n}\n";
    let files = [
        ("house.muster", text),
        ("tillys_very_bad_day.muster", book.as_str()),
        ("scenarios/tvbd_default.toml", scenario.as_str()),
    ];
    let want = [
        "hook `again` of ruleset `tillys_very_bad_day` failed: it runs itself again and again, more than 16 deep: `again` (replaces `take_hits`) → `again`",
        "(turn 1)",
        "let r = perform(\"take_hits\", [u, hits]);",
    ];
    let run = run_with(
        "battle-self",
        &files,
        &["battle", "house.muster", "--seed", "3"],
    );
    assert!(
        run.1.trim_end().ends_with(
            "The game stopped here: hook `again` of ruleset `tillys_very_bad_day` failed: it runs \
             itself again and again, more than 16 deep: `again` (replaces `take_hits`) → `again` \
             (turn 1) (the error follows)."
        ),
        "a stopped battle is told as far as it got: {}",
        run.1
    );
    stopped_with("battle", run, &want);
    stopped_with(
        "simulate",
        run_with(
            "simulate-self",
            &files,
            &["simulate", "house.muster", "--runs", "4", "--threads", "2"],
        ),
        &want,
    );
}

/// The internal "not known yet" of odds specialisation cannot be caught:
/// here the procedure sets `crew_left` to 5 and then reads a fact whose
/// hook reads `crew_left` inside a `try`. Folding the fact before the
/// procedure runs must leave it to the run (today the script caught the
/// marker, the fact folded to the `catch`'s -1 and the odds said x = -1).
#[test]
fn a_script_cannot_catch_the_internal_not_known_yet() {
    let text = format!(
        r#"{GUN}fact crew_now(g: unit): int
hook count_crew fact crew_now {{
  let n = -1;
  try {{ n = state(g, "crew_left"); }} catch {{ }}
  n
}}
procedure muster_crew(gun: unit) outcomes {{ x: int }} {{
  gun.crew_left = 5
  outcome x = crew_now(gun)
}}
"#
    );
    let mut b = built(&text);
    let s = b
        .situation(
            "s.toml",
            "procedure = \"muster_crew\"\n[units.gun]\ntype = \"Gun\"\n",
        )
        .unwrap();
    // The rule: crew_left is 5 when the fact is read, so x = 5, always.
    let o = b.exact(&s).unwrap();
    assert_eq!(frac(&o, "x", Value::Int(5)), Some((1, 1)));
    assert_eq!(frac(&o, "x", Value::Int(-1)), Some((0, 1)));
    let o = b.sampled(&s, 100, 1).unwrap();
    assert_eq!(o.get("x").unwrap().p(Value::Int(5)).to_f64(), 1.0);
    // Outside odds the hook reads the state as it is: 6, the gun's crew.
    let (v, _) = b.query(&s, "crew_now(gun)").unwrap();
    assert_eq!(v, Value::Int(6));
}

/// A hook that rolls until it stops seeing sixes can roll any number of
/// dice: exact odds give up past 32 dice in one run and `odds` samples
/// instead (today: an enumeration that never ends, its memory growing).
#[test]
fn a_hook_that_rolls_without_bound_is_sampled_instead() {
    let text = format!(
        "{GUN}hook sixes_run after shoot {{\n  let n = 0;\n  while roll(\"d6\") == 6 {{ n += 1; }}\n  set_outcome(\"hits\", n);\n}}\n"
    );
    let (_, _, d) = exact_stops(&text);
    assert_eq!(d.code, "muster::exact");
    assert_eq!(
        d.message,
        "hook `sixes_run` rolls more than 32 dice in one run: too many to enumerate exactly"
    );
    // The binary says so and samples: P(no six first) = 5/6, P(one six
    // then another face) = 1/6 * 5/6 = 5/36.
    let (ok, out, err) = run_with(
        "sixes-run",
        &[("gun.muster", &text), ("s.toml", SITUATION)],
        &["odds", "gun.muster", "--situation", "s.toml", "--json"],
    );
    assert!(ok, "{err}");
    assert!(
        err.contains("note: hook `sixes_run` rolls more than 32 dice in one run: too many to enumerate exactly; sampling 1,000,000 games instead"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["method"], "sampled", "{j}");
    let hits = &j["outcomes"]["hits"];
    // 1,000,000 samples: standard errors about 0.0004 and 0.0003.
    assert!(
        (hits["0"].as_f64().unwrap() - 5.0 / 6.0).abs() < 0.002,
        "{j}"
    );
    assert!(
        (hits["1"].as_f64().unwrap() - 5.0 / 36.0).abs() < 0.002,
        "{j}"
    );

    // A hook that rolls forever: past 32 dice exact odds sample instead,
    // and the first sample stops at the call's limit of operations.
    let forever = format!("{GUN}hook forever after shoot {{\n  loop {{ roll(\"d6\"); }}\n}}\n");
    let run = run_with(
        "roll-forever",
        &[("gun.muster", &forever), ("s.toml", SITUATION)],
        &["odds", "gun.muster", "--situation", "s.toml"],
    );
    assert!(
        run.2
            .contains("note: hook `forever` rolls more than 32 dice in one run"),
        "{}",
        run.2
    );
    stopped_with(
        "forever",
        run,
        &["hook `forever` of ruleset `gun` failed: it ran past its limit of 100000 operations"],
    );
}

/// A hook that rolls 8 dice and then works runs once for each of the 6^8
/// sequences of faces in exact odds (about 50 minutes today, each run with
/// a budget of its own). The hooks of one exact computation share one
/// budget of 50,000,000 operations: past it, a diagnostic at the hook.
#[test]
fn exact_odds_stop_when_their_hooks_work_too_much_in_all() {
    let text = format!(
        "{GUN}hook eight after shoot {{\n  let r = roll(8, \"d6\");\n  let n = 0;\n  while n < 1000 {{ n += 1; }}\n  set_outcome(\"hits\", r[0]);\n}}\n"
    );
    let (b, s, d) = exact_stops(&text);
    assert_eq!(d.code, "muster::exact");
    assert_eq!(
        d.message,
        "exact odds stopped: the hooks ran past their limit of 50000000 operations in all; hook `eight` runs once for every sequence of faces its dice can show"
    );
    let out = render_plain(&[d], &b.sources);
    assert!(out.contains("hook eight after shoot {"), "{out}");
    assert!(out.contains("help: sample the odds instead"), "{out}");
    // Sampling answers it: the first die's face, 1/6 each.
    let o = b.sampled(&s, 6_000, 2).unwrap();
    for k in 1..=6 {
        let n = o.get("hits").unwrap().p(Value::Int(k)).to_f64() * 6_000.0;
        // Expected 1000, a standard error about 29.
        assert!((n - 1000.0).abs() < 4.5 * 29.0, "{k}: {n}");
    }
}

/// Performs that multiply: a hook that performs a procedure 1000 times
/// whose hook performs another 1000 times (a million hook runs; the
/// binary's `muster odds` ran over a minute today), a loop of performs, and
/// a hook that splits in two 30 times (2^30 performs). The first two pass
/// the limit of 100,000 operations of one hook call counting the hooks it
/// runs and its performs, in exact and sampled odds and in a battle; the
/// last nests deeper than 16.
#[test]
fn performs_that_multiply_stop_at_the_limits_of_one_call() {
    let wide = format!(
        r#"{GUN}procedure leaf(gun: unit) outcomes {{ n: int }} {{ }}
hook leaf_count replace leaf {{ set_outcome("n", 1); }}
procedure branch(gun: unit) outcomes {{ n: int }} {{ }}
hook branch_count replace branch {{
  let t = 0;
  for i in 0..1000 {{ t += perform("leaf", [gun]).n; }}
  set_outcome("n", t);
}}
hook fan_out after shoot {{
  let t = 0;
  for i in 0..1000 {{ t += perform("branch", [gun]).n; }}
  set_outcome("hits", t);
}}
"#
    );
    let want = "hook `fan_out` of ruleset `gun` failed: it ran past its limit of 100000 operations, counting the hooks it ran and 50 for each `perform`: `fan_out` (after `shoot`) → `branch_count` (replaces `branch`)";
    let (b, s, d) = exact_stops(&wide);
    assert!(d.message.contains(want), "{}", d.message);
    let d = b.sampled(&s, 100, 1).unwrap_err();
    assert!(d.message.contains(want), "{}", d.message);

    // A perform counts as 50 operations: a loop of 5000 performs of a
    // procedure without hooks (some 40,000 operations of the loop itself,
    // within the limit today) stops at the limit too.
    let looped = format!(
        "{GUN}procedure nothing(gun: unit) outcomes {{ n: int }} {{ outcome n = 1 }}\nhook busy after shoot {{\n  for i in 0..5000 {{ perform(\"nothing\", [gun]); }}\n}}\n"
    );
    let (_, _, d) = exact_stops(&looped);
    assert_eq!(
        d.message,
        "hook `busy` of ruleset `gun` failed: it ran past its limit of 100000 operations, counting the hooks it ran and 50 for each `perform`: `busy` (after `shoot`)"
    );

    let split = format!(
        r#"{GUN}procedure split(n: int) outcomes {{ leaves: int }} {{ }}
hook fan replace split {{
  if n == 0 {{ set_outcome("leaves", 1); return; }}
  let a = perform("split", [n - 1]);
  let b = perform("split", [n - 1]);
  set_outcome("leaves", a.leaves + b.leaves);
}}
hook root after shoot {{
  let r = perform("split", [30]);
  set_outcome("hits", r.leaves);
}}
"#
    );
    let (_, _, d) = exact_stops(&split);
    assert!(
        d.message.contains("hook `fan` of ruleset `gun` failed: it runs itself again and again, more than 16 deep: `fan` (replaces `split`) → `fan`"),
        "{}",
        d.message
    );

    // In a battle: a step hook whose performs multiply stops the game.
    let relays = r#"
extends "tillys_very_bad_day.muster"
procedure ping(u: unit) outcomes { n: int } { }
hook ping_back replace ping { set_outcome("n", 1); }
procedure relay(u: unit) outcomes { n: int } { }
hook relay_on replace relay {
  let t = 0;
  for i in 0..1000 { t += perform("ping", [u]).n; }
  set_outcome("n", t);
}
hook roll_call before step "Step 4.1 Command Morale" {
  let u = units()[0];
  for i in 0..1000 { perform("relay", [u]); }
}
"#;
    let mut b = house(relays);
    let sc = b.scenario(None).unwrap();
    let prep = Prepared::new(&b.ruleset, &sc).unwrap();
    let Err(d) = prep.play(7, false) else {
        panic!("the battle should have stopped");
    };
    assert!(
        d.message.contains("hook `roll_call` of ruleset `tillys_very_bad_day` failed: it ran past its limit of 100000 operations, counting the hooks it ran and 50 for each `perform`: `roll_call` (before step \"Step 4.1 Command Morale\") → `relay_on` (replaces `relay`)"),
        "{}",
        d.message
    );
    assert!(d.message.contains("turn 1"), "{}", d.message);
}
