//! `muster diff A B`, the difference `muster compare` prints first, and
//! `muster odds --ruleset-b`: what a draft changes in the rules and in one
//! resolution's numbers. The pair tests/rulesets/diff/base.muster and
//! draft.muster changes one thing of each kind; relaid.muster is the base
//! written out again, which changes no rule.

use crate::common;

use muster::odds::pair::{difference, Signed};
use muster::run::dice::Prob;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BASE: &str = "tests/rulesets/diff/base.muster";
const DRAFT: &str = "tests/rulesets/diff/draft.muster";
const RELAID: &str = "tests/rulesets/diff/relaid.muster";
const TVBD: &str = "rules/tillys_very_bad_day.muster";
const STEADY: &str = "rules/tvbd_steady_pike.muster";

/// `muster ARGS` from the crate's folder: its standard output, having
/// asserted that it succeeded.
fn muster(args: &[&str]) -> String {
    common::succeeded(common::muster_in(Path::new(ROOT), args))
}

/// The lines of the output that start with `start` (after their indent).
fn lines_of<'o>(out: &'o str, start: &str) -> Vec<&'o str> {
    out.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(start))
        .collect()
}

/// Assert that `out` has exactly this line (after its indent).
fn has_line(out: &str, line: &str) {
    assert!(
        out.lines().any(|l| l.trim_start() == line),
        "no line\n  {line}\nin\n{out}"
    );
}

/// Each kind of change, one line each, with where A and B write it.
#[test]
fn each_kind_of_change_in_a_draft() {
    let out = muster(&["diff", BASE, DRAFT]);
    let at = |a: u32, b: u32| format!("  [{BASE}:{a} -> {DRAFT}:{b}]");
    let only_a = |a: u32| format!("  [A {BASE}:{a}]");
    let only_b = |b: u32| format!("  [B {DRAFT}:{b}]");
    // Unit types: a stat changed, a type removed, a type added; a new stat.
    has_line(&out, &format!("~ Horse.resolve: 4 -> 3{}", at(23, 11)));
    has_line(
        &out,
        &format!(
            "- unit Rabble: classes foot, move 3, resolve 1{}",
            only_a(24)
        ),
    );
    has_line(
        &out,
        &format!(
            "+ unit Dragoons: classes horse, move 6, resolve 2{}",
            only_b(14)
        ),
    );
    has_line(&out, &format!("+ stat charge{}", only_b(9)));
    // Qualities.
    has_line(
        &out,
        &format!("~ quality veteran, resolve: +1 -> +2{}", at(27, 19)),
    );
    has_line(
        &out,
        &format!("~ quality veteran, points: 4 -> 5{}", at(27, 19)),
    );
    // Table rows: removed, changed, added (and where), moved.
    has_line(
        &out,
        &format!("- table to_hit, row when me is Shot: 6{}", only_a(32)),
    );
    has_line(
        &out,
        &format!("~ table to_hit, row when me is Horse: 4 -> 3{}", at(33, 23)),
    );
    has_line(
        &out,
        &format!(
            "+ table to_hit, row when me.resolve > 4: 4 (after row when me is Horse){}",
            only_b(24)
        ),
    );
    has_line(
        &out,
        &format!(
            "> table to_hit, row when me is Pikes: first -> after row when me.resolve > 4{}",
            at(31, 25)
        ),
    );
    // Modifiers.
    has_line(
        &out,
        &format!(
            "~ modifier charging, when: me is Horse -> me is Horse | Dragoons{}",
            at(39, 30)
        ),
    );
    has_line(
        &out,
        &format!(
            "- modifier shaken: source \"Shaken\", quantity dice, change -= 1, when me.resolve < 2{}",
            only_a(40)
        ),
    );
    // Procedures: which changed, and the changed line only.
    has_line(&out, &format!("~ procedure fight, body{}", at(42, 35)));
    has_line(&out, "- outcome hits = n");
    has_line(&out, "+ outcome hits = min(n, 3)");
    assert!(!out.contains("let n = dice(me)"), "{out}");
    has_line(
        &out,
        &format!(
            "- procedure flee: parameters me: unit, outcomes gone: bool, body outcome gone = true{}",
            only_a(51)
        ),
    );
    has_line(
        &out,
        &format!(
            "+ procedure pursue: parameters me: unit, outcomes caught: bool, body outcome caught = d6 >= 5{}",
            only_b(40)
        ),
    );
    // Hooks.
    has_line(
        &out,
        &format!(
            "~ hook cheer, script: log(\"huzzah\"); -> log(\"HUZZAH\");{}",
            at(55, 45)
        ),
    );
    // Steps: who acts changed, removed, added (and where), moved.
    has_line(
        &out,
        &format!(
            "~ step \"Shoot\", actions: do advance(s) for each s in sides -> do advance(s) for each s in sides where s == red{}",
            at(72, 54)
        ),
    );
    has_line(&out, &format!("- step \"Rally\": in turn{}", only_a(74)));
    has_line(
        &out,
        &format!(
            "+ step \"Reserves\": after \"Morale\", in turn, actions do hold(s) for each s in sides{}",
            only_b(56)
        ),
    );
    // Melee and Morale swapped places: the longest order kept in common
    // keeps Shoot and Morale, so Melee is the one that moved (it is
    // written in the base for both).
    has_line(
        &out,
        &format!("> step \"Melee\": after \"Shoot\" -> after \"Reserves\"  [{BASE}:73]"),
    );
    // Options, decisions, policies.
    has_line(
        &out,
        &format!("~ option evade, default: off -> on{}", at(12, 59)),
    );
    has_line(
        &out,
        &format!(
            "~ option cover, title: \"Cover\" -> \"Cover and hedges\"{}",
            at(13, 60)
        ),
    );
    has_line(
        &out,
        &format!("+ option rout: title \"Rout\", default off{}", only_b(61)),
    );
    has_line(
        &out,
        &format!(
            "~ decision advance, then: rally(u) -> pursue(u){}",
            at(61, 66)
        ),
    );
    has_line(
        &out,
        &format!(
            "+ decision charge_in: parameters side: side, doc \"charge\"{}",
            only_b(68)
        ),
    );
    has_line(
        &out,
        &format!(
            "~ policy default, prefer advance: u.move -> 2 * u.move{}",
            at(67, 72)
        ),
    );
    has_line(&out, "27 differences");
    // Grouped by kind, in this order.
    let headings: Vec<&str> = out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' ') && !l.contains(':'))
        .collect();
    assert_eq!(
        headings,
        [
            "27 differences",
            "unit types",
            "stats",
            "qualities",
            "tables",
            "modifiers",
            "procedures",
            "hooks",
            "steps",
            "options",
            "decisions",
            "policies"
        ]
    );
    insta::assert_snapshot!("base_against_draft", out);
}

/// `--json`: one object per change, with the documented fields.
#[test]
fn the_json_of_a_diff() {
    let j: serde_json::Value =
        serde_json::from_str(&muster(&["diff", BASE, DRAFT, "--json"])).unwrap();
    assert_eq!(j["identical"], false);
    assert_eq!(j["a"]["ruleset"], "diff_base");
    assert_eq!(j["b"]["title"], "Diff draft");
    let changes = j["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 27);
    assert_eq!(
        changes[0],
        serde_json::json!({
            "kind": "unit",
            "name": "Horse",
            "part": "resolve",
            "change": "changed",
            "a": "4",
            "b": "3",
            "a_at": format!("{BASE}:23"),
            "b_at": format!("{DRAFT}:11"),
            "lines": [],
        })
    );
    let fight = changes
        .iter()
        .find(|c| c["kind"] == "procedure" && c["name"] == "fight")
        .unwrap();
    assert_eq!(fight["part"], "body");
    assert_eq!(
        fight["lines"],
        serde_json::json!(["- outcome hits = n", "+ outcome hits = min(n, 3)"])
    );
    let moved = changes
        .iter()
        .find(|c| c["change"] == "moved" && c["kind"] == "step");
    assert_eq!(moved.unwrap()["name"], "Melee");
    let removed = changes
        .iter()
        .find(|c| c["kind"] == "modifier" && c["change"] == "removed")
        .unwrap();
    assert_eq!(removed["name"], "shaken");
    assert_eq!(removed["b"], serde_json::Value::Null);
    assert_eq!(removed["b_at"], serde_json::Value::Null);
}

/// A ruleset against itself, and against itself written out in another
/// layout (other comments, spacing, parentheses and name): no rule differs.
#[test]
fn identical_rulesets() {
    let out = muster(&["diff", BASE, BASE]);
    assert_eq!(
        out,
        format!("A: {BASE} (Diff base)\nB: {BASE} (Diff base)\nno rule differs\n")
    );
    let out = muster(&["diff", BASE, RELAID]);
    assert_eq!(
        out,
        format!("A: {BASE} (Diff base)\nB: {RELAID} (Diff base, relaid)\nno rule differs\n")
    );
    let j: serde_json::Value =
        serde_json::from_str(&muster(&["diff", TVBD, TVBD, "--json"])).unwrap();
    assert_eq!(j["identical"], true);
    assert_eq!(j["changes"], serde_json::json!([]));
}

/// The book against its house rule (which `extends` it): the four changes
/// the house rule's comments list, and the decision and step it adds.
#[test]
fn tvbd_against_the_steady_pike_house_rule() {
    let out = muster(&["diff", TVBD, STEADY]);
    has_line(
        &out,
        &format!("~ Pike+Shot.resolve: 4 -> 5  [{TVBD}:48 -> {STEADY}:17]"),
    );
    has_line(
        &out,
        &format!(
            "+ table melee_to_hit, row when me is Horse and charging(me) and foe is \"Pike+Shot\" and position(foe, me) is to_front: 6 (first)  [B {STEADY}:12]"
        ),
    );
    assert_eq!(lines_of(&out, "- modifier infantry_in_cover").len(), 1);
    has_line(
        &out,
        &format!("~ option evade, default: off -> on  [{TVBD}:25 -> {STEADY}:25]"),
    );
    has_line(
        &out,
        &format!("+ step \"Step 4.5 Reserves\": after \"Step 4.4 Army Morale\", in turn, phase \"Phase 4. Morale\", actions do reserves(s) for each s in sides  [B {STEADY}:29]"),
    );
    assert_eq!(lines_of(&out, "+ decision reserves").len(), 1);
    has_line(&out, "6 differences");
    insta::assert_snapshot!("tvbd_against_steady_pike", out);
}

/// A missing file and a broken ruleset are diagnostics, naming which of
/// the two it is, with a non-zero exit and nothing on standard output.
#[test]
fn bad_input() {
    let dir = common::scratch("diff");
    std::fs::write(
        dir.join("broken.muster"),
        "ruleset broken \"Broken\"\nstat move\nunits (move) {\n  Horse : = 6\n}\ntable t(u: unit) -> int {\n  when u is Hrose => 1\n  otherwise => 2\n}\n",
    )
    .unwrap();
    let base = Path::new(ROOT).join(BASE);
    let base = base.to_str().unwrap();
    let out = common::muster_in(&dir, &["diff", base, "missing.muster"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ruleset B (missing.muster) does not build"),
        "{err}"
    );
    assert!(err.contains("cannot read `missing.muster`"), "{err}");
    let out = common::muster_in(&dir, &["diff", "broken.muster", base]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ruleset A (broken.muster) does not build"),
        "{err}"
    );
    assert!(err.contains("broken.muster:7:"), "{err}");
    assert!(err.contains("1 problem found"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `muster compare` prints the rules' difference first, then the games';
/// its `--json` has the difference as `diff`.
#[test]
fn compare_starts_with_the_difference() {
    let diff = muster(&["diff", TVBD, STEADY]);
    let out = muster(&["compare", TVBD, STEADY, "--runs", "10"]);
    assert!(
        out.starts_with(&format!("{diff}\n")),
        "{out}\ndoes not start with\n{diff}"
    );
    let games = &out[diff.len() + 1..];
    assert!(
        games.starts_with("rules/scenarios/tvbd_default.toml — "),
        "{games}"
    );
    assert!(games.contains("B - A"), "{games}");
    let j: serde_json::Value = serde_json::from_str(&muster(&[
        "compare", TVBD, STEADY, "--runs", "10", "--json",
    ]))
    .unwrap();
    let mut d: serde_json::Value =
        serde_json::from_str(&muster(&["diff", TVBD, STEADY, "--json"])).unwrap();
    // `diff --json` is a document of its own (schema_version, kind): the
    // rest is compare's `diff`.
    assert_eq!(
        (&d["schema_version"], &d["kind"]),
        (&1.into(), &"diff".into())
    );
    let doc = d.as_object_mut().unwrap();
    doc.remove("schema_version");
    doc.remove("kind");
    assert_eq!(j["kind"], "compare");
    assert_eq!(j["diff"], d);
    assert_eq!(j["comparison"]["games"], 10);
}

/// Horse charging the front of Pike+Shot under the book and under steady
/// pike, which hits charging horse only on a 6 and gives pike+shot 5
/// resolve. By hand: the horse rolls 3 dice (resolve 3), each hitting on
/// 5-6 (1/3) in the book and on a 6 (1/6) in the house rule, so it scores
/// no hit with (2/3)^3 = 8/27 and (5/6)^3 = 125/216: B - A = 61/216. The
/// pike roll a die per resolve hitting on 5-6: Binomial(4, 1/3) in the
/// book, Binomial(5, 1/3) in the house rule, so 5 hits go from 0 to
/// (1/3)^5 = 1/243 and none from (2/3)^4 = 16/81 to (2/3)^5 = 32/243.
#[test]
fn odds_of_one_situation_under_two_rulesets() {
    let situation = "rules/situations/tvbd_horse_charges_pike.toml";
    let out = muster(&[
        "odds",
        TVBD,
        "--situation",
        situation,
        "--ruleset-b",
        STEADY,
    ]);
    let row = |value: &str, a: &str, b: &str, d: &str, exact: &str| {
        format!("{value:<12} {a:>7} {b:>7} {d:>8}   {exact}")
    };
    has_line(
        &out,
        &row(
            "0",
            "0.2963",
            "0.5787",
            "+0.2824",
            "8/27 -> 125/216 (+61/216)",
        ),
    );
    has_line(
        &out,
        &row("3", "0.0370", "0.0046", "-0.0324", "1/27 -> 1/216 (-7/216)"),
    );
    has_line(
        &out,
        &row(
            "0",
            "0.1975",
            "0.1317",
            "-0.0658",
            "16/81 -> 32/243 (-16/243)",
        ),
    );
    has_line(
        &out,
        &row("5", "0.0000", "0.0041", "+0.0041", "0 -> 1/243 (+1/243)"),
    );
    // The horse (resolve 3) routs on 3 hits or more: 9/81 in the book,
    // (40 + 10 + 1)/243 = 17/81 under steady pike.
    has_line(
        &out,
        &row(
            "true",
            "0.1111",
            "0.2099",
            "+0.0988",
            "1/9 -> 17/81 (+8/81)",
        ),
    );
    // The pike never rout: no difference.
    has_line(&out, &row("false", "1.0000", "1.0000", "0", "1 -> 1 (0)"));
    insta::assert_snapshot!("odds_horse_charges_pike_book_and_steady_pike", out);
    let j: serde_json::Value = serde_json::from_str(&muster(&[
        "odds",
        TVBD,
        "--situation",
        situation,
        "--ruleset-b",
        STEADY,
        "--json",
    ]))
    .unwrap();
    assert_eq!(j["a"]["exact"]["attacker_hits"]["0"], "8/27");
    assert_eq!(j["b"]["exact"]["attacker_hits"]["0"], "125/216");
    assert_eq!(j["exact_difference"]["attacker_hits"]["0"], "61/216");
    assert_eq!(j["exact_difference"]["defender_hits"]["0"], "-16/243");
    assert_eq!(j["exact_difference"]["defender_hits"]["5"], "1/243");
    let d = j["difference"]["attacker_hits"]["0"].as_f64().unwrap();
    assert!((d - 61.0 / 216.0).abs() < 1e-12, "{d}");
}

/// The difference of two probabilities stays an exact fraction, in lowest
/// terms, with its sign, of any size (past 128 bits too); only a sampled
/// estimate makes it a float.
#[test]
fn exact_differences() {
    let p = Prob::ratio;
    let r = |s: &str| s.parse::<num_rational::BigRational>().unwrap();
    assert_eq!(
        difference(&p(8, 27), &p(125, 216)),
        Signed::Exact(r("61/216"))
    );
    assert_eq!(difference(&p(1, 2), &p(1, 3)), Signed::Exact(r("-1/6")));
    assert_eq!(
        difference(&p(1, 3), &p(1, 3)).fraction().as_deref(),
        Some("0")
    );
    assert_eq!(
        difference(&p(1, 3), &p(1, 3)).ratio().as_deref(),
        Some("0/1")
    );
    assert_eq!(
        difference(&p(1, 6), &p(5, 6)).fraction().as_deref(),
        Some("+2/3")
    );
    // 1/(b-1) - 1/b = 1/(b(b-1)): a denominator of 255 bits, kept exact.
    let big = u128::MAX / 3;
    let d = difference(&p(1, big), &p(1, big - 1));
    let want = format!(
        "1/{}",
        num_bigint::BigInt::from(big) * num_bigint::BigInt::from(big - 1)
    );
    assert_eq!(d.ratio(), Some(want));
    assert!(d.to_f64() > 0.0 && d.to_f64() < 1e-70, "{d:?}");
    let d = difference(&p(1, big), &p(1, big - 1).plus(p(1, 2)));
    assert!(matches!(d, Signed::Exact(_)), "{d:?}");
    assert!((d.to_f64() - 0.5).abs() < 1e-12, "{d:?}");
    assert_eq!(
        difference(&Prob::Float(0.5), &p(1, 4)),
        Signed::Float(-0.25)
    );
}

/// The v2.0a draft against v1 (issue 30): the steps the draft renames with
/// `override step ... as ...` are matched by where v1 writes them, so the
/// diff says "renamed" and then what else changed (their phase, the side
/// that acts), instead of every step removed and added again; the new
/// steps, the steps moved (evades before charges), the resolves the sheet
/// changes and the columns it adds are each one line.
#[test]
fn tvbd_against_its_v2_draft() {
    const V2: &str = "rules/tillys_very_bad_day_v2.muster";
    let out = muster(&["diff", TVBD, V2]);
    has_line(
        &out,
        &format!("~ step \"Step 1.1 Attacker Move\", name: \"Step 1.1 Attacker Move\" -> \"Step 3.1 Active player move\"  [{TVBD}:1161]"),
    );
    has_line(
        &out,
        &format!("~ step \"Step 1.2 Defender Shoot\", actions: do shooting(defender) -> do shooting(reactive_side())  [{TVBD}:1165]"),
    );
    has_line(
        &out,
        &format!("> step \"Step 3.2 Charge\": after \"Step 3.1 Declare Charge\" -> after \"Step 3.3 Point Blank Shooting\"  [{TVBD}:1179]"),
    );
    assert_eq!(lines_of(&out, "- step ").len(), 0, "{out}");
    assert_eq!(lines_of(&out, "+ step ").len(), 5, "{out}");
    assert_eq!(lines_of(&out, "~ Shot.resolve: 3 -> 4").len(), 1, "{out}");
    assert_eq!(
        lines_of(&out, "~ Light horse.resolve: 2 -> 3").len(),
        1,
        "{out}"
    );
    assert_eq!(
        lines_of(&out, "+ Cannons.limbered_move: 3").len(),
        1,
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&muster(&["diff", TVBD, V2, "--json"])).unwrap();
    let renamed = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"] == "renamed")
        .count();
    assert_eq!(renamed, 15);
    insta::assert_snapshot!("tvbd_against_v2_draft", out);
}
