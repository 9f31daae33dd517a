//! The diagnostics an author gets for common mistakes, one test a mistake.
//!
//! Each test feeds the compiler (or the situation reader, or the runtime) a
//! small piece of text with one mistake in it, asserts that it is REJECTED
//! with the expected diagnostic code, that every diagnostic points at a span
//! with a label and carries a help line, and snapshots the rendered text
//! (plain, no colour) under `tests/snapshots/`.

use muster::front::diagnostic::Diag;
use muster::front::source::Sources;
use muster::Build;
use std::path::Path;

/// The real ruleset, for situation-file mistakes.
const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);

/// A small, valid ruleset; each test appends one mistake to it.
macro_rules! ruleset {
    ($mistake:literal) => {
        concat!(
            "import core\n",
            "sides attacker, defender\n",
            "class cavalry, infantry\n",
            "stat resolve\n",
            "units (resolve) {\n",
            "  Horse : cavalry = 3\n",
            "  Shot  : infantry = 3\n",
            "}\n",
            $mistake
        )
    };
}

/// Every diagnostic points somewhere, says what is there, and says what to do;
/// and the rendered text shows both the label and the help line.
fn check_shape(diags: &[Diag], rendered: &str) {
    assert!(!diags.is_empty(), "rejected without any diagnostic");
    for d in diags {
        assert!(
            d.span.is_some(),
            "`{}` ({}) points at no span:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            !d.label.trim().is_empty(),
            "`{}` ({}) has an empty label:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            d.help.as_deref().is_some_and(|h| !h.trim().is_empty()),
            "`{}` ({}) has no help line:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            rendered.contains(d.label.as_str()),
            "the label {:?} is not in the rendered text:\n{rendered}",
            d.label
        );
    }
    assert!(
        rendered.contains("help:"),
        "no help line rendered:\n{rendered}"
    );
}

fn codes(diags: &[Diag]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code).collect()
}

fn render(diags: &[Diag], sources: &Sources) -> String {
    crate::common::render_here(diags, sources)
}

/// Compile a ruleset that must be rejected; its diagnostics, rendered.
fn rejected(name: &str, text: &str) -> (Vec<Diag>, String) {
    match muster::build_text(name, text, None) {
        Ok(_) => panic!("`{name}` compiled, but it has a mistake the compiler should catch"),
        Err((diags, sources)) => {
            let rendered = render(&diags, &sources);
            check_shape(&diags, &rendered);
            (diags, rendered)
        }
    }
}

fn build_ok(name: &str, text: &str) -> Build {
    match muster::build_text(name, text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("`{name}` should compile:\n{}", render(&d, &s)),
    }
}

fn tvbd() -> Build {
    match muster::build(Path::new(TVBD)) {
        Ok(b) => b,
        Err((d, s)) => panic!("the TVBD ruleset should compile:\n{}", render(&d, &s)),
    }
}

/// Read a situation that must be rejected against the TVBD ruleset.
fn bad_situation(text: &str) -> (Vec<Diag>, String) {
    let mut b = tvbd();
    match b.situation("bad.toml", text) {
        Ok(_) => panic!("the situation was accepted, but it has a mistake:\n{text}"),
        Err(diags) => {
            let rendered = render(&diags, &b.sources);
            check_shape(&diags, &rendered);
            (diags, rendered)
        }
    }
}

/// Read a (valid) situation, then run it exactly; the run must fail.
fn failed_run(mut b: Build, text: &str) -> (Diag, String) {
    let s = match b.situation("bad.toml", text) {
        Ok(s) => s,
        Err(d) => panic!("the situation should read:\n{}", render(&d, &b.sources)),
    };
    match b.exact(&s) {
        Ok(_) => panic!("the run succeeded, but the situation breaks the rules:\n{text}"),
        Err(d) => {
            let diags = [d];
            let rendered = render(&diags, &b.sources);
            check_shape(&diags, &rendered);
            let [d] = diags;
            (d, rendered)
        }
    }
}

// ====================================================================== names

#[test]
fn typo_in_unit_name_in_is_test() {
    let (d, r) = rejected(
        "typo.muster",
        ruleset!("define is_horse(u: unit): bool = u is Hrose\n"),
    );
    assert_eq!(codes(&d), ["muster::unknown_name"]);
    assert!(r.contains("did you mean `Horse`?"), "{r}");
    insta::assert_snapshot!("typo_in_unit_name_in_is_test", r);
}

/// A quality among unit types in one `is`: said as such, not as an
/// unknown name (it used to answer "did you mean `raw`?" to `raw`).
#[test]
fn quality_mixed_with_types_in_is_test() {
    let (d, r) = rejected(
        "mix.muster",
        ruleset!("quality raw { }\ndefine weak(u: unit): bool = u is raw | Horse\n"),
    );
    assert_eq!(codes(&d), ["muster::type_mismatch"]);
    assert!(r.contains("`raw` is a quality"), "{r}");
    assert!(r.contains("u is raw or u is"), "{r}");
}

/// A quality sets a stat (`resolve = 1`) or adjusts it (`resolve +1`);
/// `resolve = +1` could mean either, so it is refused, pointing at the
/// value.
#[test]
fn quality_both_sets_and_adjusts() {
    let (d, r) = rejected(
        "quality.muster",
        ruleset!("quality rabble { resolve = +1 points 1 }\n"),
    );
    assert_eq!(codes(&d), ["muster::quality"]);
    assert!(
        r.contains("quality `rabble` both sets and adjusts `resolve`"),
        "{r}"
    );
    assert!(r.contains("write `resolve = N`"), "{r}");
    assert!(
        r.contains("9 │ quality rabble { resolve = +1 points 1 }"),
        "{r}"
    );
}

/// A quality names each stat once: a set and an adjustment of the same
/// stat are refused, with the first line noted.
#[test]
fn quality_names_a_stat_twice() {
    let (d, r) = rejected(
        "twice.muster",
        ruleset!("quality rabble { resolve = 1 resolve -1 points 1 }\n"),
    );
    assert_eq!(codes(&d), ["muster::quality"]);
    assert!(r.contains("quality `rabble` names `resolve` twice"), "{r}");
    assert!(r.contains("first named here"), "{r}");
}

/// A quality that sets a stat nobody declared: the closest stat suggested.
#[test]
fn quality_sets_an_unknown_stat() {
    let (d, r) = rejected(
        "unknown.muster",
        ruleset!("quality rabble { resolv = 1 points 1 }\n"),
    );
    assert_eq!(codes(&d), ["muster::unknown_stat"]);
    assert!(
        r.contains("quality `rabble` sets unknown stat `resolv`"),
        "{r}"
    );
    assert!(r.contains("did you mean `resolve`?"), "{r}");
}

/// `points` are a number: `points = none` is refused.
#[test]
fn quality_points_must_be_a_number() {
    let (d, r) = rejected(
        "points.muster",
        ruleset!("quality rabble { resolve = 1 points = none }\n"),
    );
    assert_eq!(codes(&d), ["muster::quality"]);
    assert!(
        r.contains("quality `rabble` has no number of points"),
        "{r}"
    );
}

/// `always` takes unit types before it and qualities after: a quality
/// before it, or a name after it that is no quality, is refused.
#[test]
fn army_always_names_types_then_qualities() {
    let (d, r) = rejected(
        "always.muster",
        ruleset!("quality plain default { }\narmy a {\n  Horse always plan\n}\n"),
    );
    assert_eq!(codes(&d), ["muster::army_list"]);
    assert!(r.contains("`plan` is not a quality"), "{r}");
    assert!(r.contains("did you mean `plain`?"), "{r}");
    let (d, r) = rejected(
        "always.muster",
        ruleset!("quality plain default { }\narmy a {\n  plain always plain\n}\n"),
    );
    assert_eq!(codes(&d), ["muster::army_list"]);
    assert!(r.contains("`plain` is a quality"), "{r}");
}

/// `same ... for every side` and `always` are not rules of one command.
#[test]
fn army_rules_between_sides_take_no_per_command() {
    let (d, r) = rejected(
        "same.muster",
        ruleset!("army a {\n  per command: same units for every side\n}\n"),
    );
    assert_eq!(codes(&d), ["muster::army_list"]);
    assert!(r.contains("this rule takes no `per command:`"), "{r}");
}

#[test]
fn unknown_standard_library() {
    let (d, r) = rejected("import.muster", "import kore\n");
    assert_eq!(codes(&d), ["muster::import"]);
    insta::assert_snapshot!("unknown_standard_library", r);
}

// ===================================================================== tables

#[test]
fn table_gap_missing_otherwise() {
    let (d, r) = rejected(
        "gap.muster",
        ruleset!(
            "fact charging(unit): bool = false
table dice(u: unit) -> int {
  when charging(u) => 2
  when u is Horse  => 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::table_gap"]);
    assert!(r.contains("otherwise"), "{r}");
    insta::assert_snapshot!("table_gap_missing_otherwise", r);
}

#[test]
fn keyed_table_gap_over_int_domain() {
    let (d, r) = rejected(
        "keygap.muster",
        ruleset!(
            "table result(roll: int in 1..6) -> int {
  1..2 => 0
  4..6 => 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::table_gap"]);
    assert!(r.contains("no row for 3"), "{r}");
    insta::assert_snapshot!("keyed_table_gap_over_int_domain", r);
}

#[test]
fn keyed_rows_overlap() {
    let (d, r) = rejected(
        "overlap.muster",
        ruleset!(
            "table result(roll: int in 1..6) -> int {
  1..3 => 0
  3..6 => 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::table_overlap"]);
    assert!(r.contains("overlap at 3"), "{r}");
    insta::assert_snapshot!("keyed_rows_overlap", r);
}

#[test]
fn row_after_otherwise() {
    let (d, r) = rejected(
        "after_otherwise.muster",
        ruleset!(
            "table dice(u: unit) -> int {
  when u is Horse => 2
  otherwise       => 1
  when u is Shot  => 3
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::table_unreachable_row"]);
    insta::assert_snapshot!("row_after_otherwise", r);
}

#[test]
fn dice_rolled_inside_a_table() {
    let (d, r) = rejected(
        "dice_table.muster",
        ruleset!(
            "table dice(u: unit) -> int {
  when u is Horse => d6
  otherwise       => 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::dice_outside_procedure"]);
    insta::assert_snapshot!("dice_rolled_inside_a_table", r);
}

// ================================================================== modifiers

#[test]
fn modifier_on_unknown_quantity() {
    let (d, r) = rejected(
        "modifier_typo.muster",
        ruleset!(
            "quantity dice(me: unit) -> int min 0 = me.resolve
modifier brave \"Brave\" : dcie += 1 when me is Horse
"
        ),
    );
    assert_eq!(codes(&d), ["muster::unknown_quantity"]);
    assert!(r.contains("did you mean `dice`?"), "{r}");
    insta::assert_snapshot!("modifier_on_unknown_quantity", r);
}

/// A common slip: modifying the table behind a quantity instead of the quantity.
#[test]
fn modifier_on_a_table() {
    let (d, r) = rejected(
        "modifier_table.muster",
        ruleset!(
            "table base_dice(me: unit) -> int {
  otherwise => me.resolve
}
modifier brave \"Brave\" : base_dice += 1 when me is Horse
"
        ),
    );
    assert_eq!(codes(&d), ["muster::modifier_target"]);
    insta::assert_snapshot!("modifier_on_a_table", r);
}

#[test]
fn modifier_that_can_never_apply() {
    let (d, r) = rejected(
        "never.muster",
        ruleset!(
            "quantity dice(me: unit) -> int min 0 = me.resolve
modifier odd \"Odd\" : dice += 1 when me is Horse and me is Shot
"
        ),
    );
    assert_eq!(codes(&d), ["muster::modifier_never_applies"]);
    insta::assert_snapshot!("modifier_that_can_never_apply", r);
}

// =================================================================== sequence

#[test]
fn step_that_can_never_run() {
    let (d, r) = rejected(
        "unreachable.muster",
        ruleset!(
            "procedure nothing() { }
sequence {
  turn {
    step \"A\" { do nothing() goto \"C\" }
    step \"B\" { do nothing() }
    step \"C\" { do nothing() }
  } until true
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::unreachable_step"]);
    assert!(r.contains("step \"B\" can never run"), "{r}");
    insta::assert_snapshot!("step_that_can_never_run", r);
}

#[test]
fn goto_to_a_missing_step() {
    let (d, r) = rejected(
        "dangling.muster",
        ruleset!(
            "procedure nothing() { }
sequence {
  turn {
    step \"Shoot\" { do nothing() if true goto \"Melee\" }
    step \"Mele\" { do nothing() }
  } until true
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::dangling_step"]);
    insta::assert_snapshot!("goto_to_a_missing_step", r);
}

#[test]
fn turn_loop_with_no_way_out() {
    let (d, r) = rejected(
        "endless.muster",
        ruleset!(
            "procedure nothing() { }
sequence {
  turn {
    step \"A\" { do nothing() }
  } until false
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::endless_turns"]);
    insta::assert_snapshot!("turn_loop_with_no_way_out", r);
}

// ============================================================ types and calls

#[test]
fn adding_a_bool_to_an_int() {
    let (d, r) = rejected(
        "type.muster",
        ruleset!("define bad(u: unit): int = u.resolve + true\n"),
    );
    assert_eq!(codes(&d), ["muster::type"]);
    insta::assert_snapshot!("adding_a_bool_to_an_int", r);
}

#[test]
fn fact_called_with_wrong_number_of_arguments() {
    let (d, r) = rejected(
        "arity.muster",
        ruleset!(
            "fact charging(unit): bool = false
define bad(u: unit, v: unit): bool = charging(u, v)
"
        ),
    );
    assert_eq!(codes(&d), ["muster::arity"]);
    insta::assert_snapshot!("fact_called_with_wrong_number_of_arguments", r);
}

#[test]
fn recursive_define() {
    let (d, r) = rejected(
        "recursive.muster",
        ruleset!(
            "define a(u: unit): int = b(u) + 1
define b(u: unit): int = a(u) - 1
"
        ),
    );
    assert_eq!(codes(&d), ["muster::recursion"]);
    insta::assert_snapshot!("recursive_define", r);
}

// ================================================================= procedures

#[test]
fn unknown_outcome_assigned() {
    let (d, r) = rejected(
        "outcome.muster",
        ruleset!(
            "procedure melee(a: unit, b: unit) outcomes { winner: bool } {
  outcome loser = true
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::unknown_outcome"]);
    insta::assert_snapshot!("unknown_outcome_assigned", r);
}

#[test]
fn assigning_to_a_stat() {
    let (d, r) = rejected(
        "assign_stat.muster",
        ruleset!(
            "procedure weaken(u: unit) {
  u.resolve -= 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::assign"]);
    insta::assert_snapshot!("assigning_to_a_stat", r);
}

// ============================================================= definitions

#[test]
fn duplicate_definition() {
    let (d, r) = rejected(
        "duplicate.muster",
        ruleset!(
            "define strong(u: unit): bool = u.resolve >= 3
define strong(u: unit): bool = u.resolve >= 4
"
        ),
    );
    assert_eq!(codes(&d), ["muster::duplicate"]);
    insta::assert_snapshot!("duplicate_definition", r);
}

#[test]
fn units_row_with_wrong_number_of_values() {
    let (d, r) = rejected(
        "unit_row.muster",
        "import core
class cavalry, infantry
stat move, resolve
units (move, resolve) {
  Horse : cavalry = 6, 3
  Shot  : infantry = 3
}
",
    );
    assert_eq!(codes(&d), ["muster::unit_row"]);
    insta::assert_snapshot!("units_row_with_wrong_number_of_values", r);
}

// ===================================================================== syntax

#[test]
fn syntax_error_missing_arrow() {
    let (d, r) = rejected(
        "syntax.muster",
        ruleset!(
            "table dice(u: unit) -> int {
  when u is Horse 2
  otherwise => 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::syntax"]);
    insta::assert_snapshot!("syntax_error_missing_arrow", r);
}

#[test]
fn syntax_error_missing_arrow_in_keyed_row() {
    let (d, r) = rejected(
        "syntax_keyed.muster",
        ruleset!(
            "table result(roll: int in 1..6) -> int {
  1..3 => 0
  4..6 1
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::syntax"]);
    insta::assert_snapshot!("syntax_error_missing_arrow_in_keyed_row", r);
}

/// `each` is a reserved word (`for each`); an author does not know that.
#[test]
fn syntax_error_reserved_word_as_name() {
    let (d, r) = rejected(
        "reserved.muster",
        ruleset!(
            "procedure share(u: unit) outcomes { each: int } {
  outcome each = u.resolve
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::syntax"]);
    insta::assert_snapshot!("syntax_error_reserved_word_as_name", r);
}

// ================================================================ composition

#[test]
fn extends_a_missing_file() {
    let (d, r) = rejected("house.muster", "import core\nextends \"nope.muster\"\n");
    assert_eq!(codes(&d), ["muster::extends"]);
    assert!(r.contains("nope.muster"), "{r}");
    insta::assert_snapshot!("extends_a_missing_file", r);
}

#[test]
fn override_of_nothing() {
    let (d, r) = rejected(
        "override.muster",
        ruleset!("override table charge_dice(u: unit) -> int { otherwise => 1 }\n"),
    );
    assert_eq!(codes(&d), ["muster::nothing_to_override"]);
    insta::assert_snapshot!("override_of_nothing", r);
}

#[test]
fn house_rule_redefines_without_override() {
    let dir = std::env::temp_dir().join(format!("muster-diagnostics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("base.muster"),
        "ruleset base \"Base rules\"
import core
class cavalry
stat resolve
units (resolve) { Horse : cavalry = 3 }
table melee_to_hit(me: unit) -> int {
  when me is Horse => 5
  otherwise        => 6
}
",
    )
    .unwrap();
    let club = dir.join("club.muster");
    std::fs::write(
        &club,
        "ruleset club \"Club rules\"
extends \"base.muster\"
table melee_to_hit(me: unit) -> int {
  otherwise => 4
}
",
    )
    .unwrap();
    let result = muster::build(&club);
    let _ = std::fs::remove_dir_all(&dir);
    let (d, r) = match result {
        Ok(_) => panic!("the house rule compiled, but it redefines a table without `override`"),
        Err((diags, sources)) => {
            let r = render(&diags, &sources).replace(&dir.display().to_string(), "[TMP]");
            check_shape(&diags, &r);
            (diags, r)
        }
    };
    assert_eq!(codes(&d), ["muster::redefined"]);
    assert!(
        r.contains("first defined here (see [TMP]/base.muster:6)"),
        "{r}"
    );
    insta::assert_snapshot!("house_rule_redefines_without_override", r);
}

// ============================================================ situation files

#[test]
fn situation_unknown_unit_type() {
    let (d, r) = bad_situation(
        r#"procedure = "melee"
[units.attacker]
type = "Hrose"
[units.defender]
type = "Pike+Shot"
"#,
    );
    // One problem only: the parameter it leaves unbound is not reported again.
    assert_eq!(codes(&d), ["muster::situation"]);
    assert!(r.contains("did you mean \"Horse\"?"), "{r}");
    insta::assert_snapshot!("situation_unknown_unit_type", r);
}

#[test]
fn situation_unknown_fact() {
    let (d, r) = bad_situation(
        r#"procedure = "melee"
facts = ["chargin(attacker)"]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#,
    );
    assert_eq!(codes(&d), ["muster::situation"]);
    assert!(r.contains("did you mean `charging`?"), "{r}");
    insta::assert_snapshot!("situation_unknown_fact", r);
}

#[test]
fn situation_fact_with_wrong_enum_value() {
    let (d, r) = bad_situation(
        r#"procedure = "melee"
facts = ["position(defender, attacker) is to_side"]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#,
    );
    assert_eq!(codes(&d), ["muster::situation"]);
    assert!(r.contains("to_front, to_flank, to_rear"), "{r}");
    insta::assert_snapshot!("situation_fact_with_wrong_enum_value", r);
}

#[test]
fn situation_unknown_procedure() {
    let (d, r) = bad_situation(
        r#"procedure = "mele"
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#,
    );
    assert_eq!(codes(&d), ["muster::situation"]);
    assert!(r.contains("did you mean `melee`?"), "{r}");
    insta::assert_snapshot!("situation_unknown_procedure", r);
}

#[test]
fn situation_toml_syntax_error() {
    let (d, r) = bad_situation(
        r#"procedure = "melee"
[units.attacker]
type = "Horse
[units.defender]
type = "Pike+Shot"
"#,
    );
    assert_eq!(codes(&d), ["muster::situation"]);
    insta::assert_snapshot!("situation_toml_syntax_error", r);
}

#[test]
fn situation_missing_procedure_parameter() {
    let (d, r) = bad_situation(
        r#"procedure = "melee"
[units.attacker]
type = "Horse"
[units.foe]
type = "Pike+Shot"
side = "defender"
"#,
    );
    assert_eq!(codes(&d), ["muster::situation"]);
    assert!(r.contains("`defender`"), "{r}");
    insta::assert_snapshot!("situation_missing_procedure_parameter", r);
}

#[test]
fn situation_breaks_a_requirement() {
    let (d, r) = failed_run(
        tvbd(),
        r#"procedure = "melee"
[units.attacker]
type = "Horse"
side = "attacker"
[units.defender]
type = "Pike+Shot"
side = "attacker"
"#,
    );
    assert_eq!(d.code, "muster::requirement");
    assert!(r.contains("only enemies fight a melee"), "{r}");
    insta::assert_snapshot!("situation_breaks_a_requirement", r);
}

// ==================================================================== runtime

#[test]
fn runtime_fact_with_no_default() {
    let b = build_ok(
        "no_default.muster",
        ruleset!(
            "fact charging(unit): bool
procedure charge(attacker: unit) outcomes { charged: bool } {
  outcome charged = charging(attacker)
}
"
        ),
    );
    let (d, r) = failed_run(
        b,
        r#"procedure = "charge"
[units.attacker]
type = "Horse"
"#,
    );
    assert_eq!(d.code, "muster::runtime");
    insta::assert_snapshot!("runtime_fact_with_no_default", r);
}

#[test]
fn runtime_division_by_zero() {
    let b = build_ok(
        "divide.muster",
        ruleset!(
            "fact lost(unit): int = 0
procedure share(attacker: unit) outcomes { per_loss: int } {
  outcome per_loss = attacker.resolve / lost(attacker)
}
"
        ),
    );
    let (d, r) = failed_run(
        b,
        r#"procedure = "share"
[units.attacker]
type = "Horse"
"#,
    );
    assert_eq!(d.code, "muster::runtime");
    insta::assert_snapshot!("runtime_division_by_zero", r);
}

/// A run-time fault is placed at the statement that failed, whichever
/// way the odds are taken: the exact walk, the sampled bytecode, and a
/// fault met before any die is rolled (while the procedure is specialised
/// to the situation) all point at the same line of the ruleset, and name
/// the situation's procedure line in the help.
#[test]
fn runtime_faults_are_placed_at_their_statement_exact_and_sampled() {
    let text = ruleset!(
        "fact lost(unit): int = 0
procedure share(attacker: unit) outcomes { per_loss: int } {
  let bonus = 1 d6
  let per_die = (bonus + attacker.resolve) / lost(attacker)
  outcome per_loss = per_die
}
"
    );
    let situation = r#"procedure = "share"
[units.attacker]
type = "Horse"
"#;
    let line_of = |b: &Build, d: &Diag| {
        let at = d.span.expect("placed in the ruleset");
        let src = b.sources.get(at.file);
        assert_eq!(src.name, "divide.muster");
        src.text[..at.start as usize].matches('\n').count() + 1
    };
    // The ruleset's fifth line: `let per_die = ...` (after the macro's eight).
    let want = 8 + 4;
    let mut b = build_ok("divide.muster", text);
    let s = b.situation("bad.toml", situation).unwrap();
    let exact = b.exact(&s).expect_err("a division by zero");
    assert!(
        exact.message.starts_with("division by zero"),
        "{}",
        exact.message
    );
    assert_eq!(line_of(&b, &exact), want);
    assert_eq!(exact.label, "this failed while it was worked out");
    assert_eq!(exact.notes.len(), 1, "the situation's line, as a note");
    assert_eq!(b.sources.get(exact.notes[0].0.file).name, "bad.toml");
    let sampled = b.sampled(&s, 100, 1).expect_err("a division by zero");
    assert!(
        sampled.message.starts_with("division by zero"),
        "{}",
        sampled.message
    );
    assert_eq!(line_of(&b, &sampled), want);
    assert_eq!(sampled.label, exact.label);
    // No die before it: the specialiser meets the fault itself.
    let folded = text.replace("let bonus = 1 d6", "let bonus = 2");
    let mut b = build_ok("divide.muster", &folded);
    let s = b.situation("bad.toml", situation).unwrap();
    let d = b.exact(&s).expect_err("a division by zero");
    assert_eq!(
        (d.message.as_str(), line_of(&b, &d)),
        ("division by zero: 5 / 0", want)
    );
}

/// In a battle, a fault of a procedure's statement is placed at that
/// statement (not at the step that ran the procedure): TVBD's initiative
/// roll, rewritten to divide by the number of units that are none.
#[test]
fn a_battle_s_fault_is_placed_at_its_statement() {
    let tvbd = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/tillys_very_bad_day.muster"),
    )
    .unwrap();
    let roll = "  outcome attacker_is = if roll_off(d6, d6) == 1 then first_army else second_army";
    assert!(tvbd.contains(roll));
    let broken = tvbd.replace(
        roll,
        "  let nobody = count u: false\n  outcome attacker_is = if 6 / nobody == 1 then first_army else second_army",
    );
    // A folder of the test's own: `create_dir` fails rather than reuse one
    // that exists, so the removal below only ever removes what it made.
    let dir = std::env::temp_dir().join(format!("muster-fault-{}", std::process::id()));
    std::fs::create_dir(&dir).expect("a fresh folder for the test");
    std::fs::create_dir(dir.join("scenarios")).unwrap();
    std::fs::write(dir.join("broken.muster"), broken).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/scenarios/tvbd_default.toml"),
        dir.join("scenarios/tvbd_default.toml"),
    )
    .unwrap();
    let out = crate::common::muster_in(
        &dir,
        &["battle", "broken.muster", "--seed", "1", "--color", "never"],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("division by zero: 6 / 0 (game set-up)"),
        "{err}"
    );
    assert!(
        err.contains("if 6 / nobody == 1"),
        "the statement is shown: {err}"
    );
    assert!(err.contains("this failed while it was worked out"), "{err}");
}

// ================================================================ decisions

#[test]
fn together_in_a_pick_decision() {
    let (d, r) = rejected(
        "together_pick.muster",
        ruleset!(
            "procedure shoot(s: unit, t: unit) { }
decision shooting(side: side) \"pick targets\" {
  pick s, t where s.side == side and s != t
  together g: g != s
  then shoot(s, t)
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::decision"]);
    assert!(
        r.contains("a `pick` decision has no `together` clause"),
        "{r}"
    );
    insta::assert_snapshot!("together_in_a_pick_decision", r);
}

/// A `face` decision names a unit and the unit it turns toward, and takes
/// `must`, `by`, `check` and `then`: a charge's `reach` is refused.
#[test]
fn face_takes_the_clauses_of_a_pick() {
    let (d, r) = rejected(
        "face.muster",
        ruleset!(
            "import battle
decision face_it(side: side) \"face\" {
  face u toward t where u.side == side and in_contact(u, t)
  reach 3
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::decision"]);
    assert!(r.contains("a `face` decision has no `reach` clause"), "{r}");
    assert!(
        r.contains("`face` takes `must`, `by`, `check` and `then`"),
        "{r}"
    );
    build_ok(
        "face_ok.muster",
        ruleset!(
            "import battle
decision face_it(side: side) \"face\" {
  face u toward t where u.side == side and in_contact(u, t)
  by 0
}
"
        ),
    );
}

/// `finish n:` (a second change of direction at the end of a move) is a
/// clause of `move` alone, and not of a move `together`: a charge has no
/// second change of direction (TVBD §Optional Rule: Unit Quality, "not in a
/// Charge step"), and a group ends its move as it made it.
#[test]
fn finish_only_in_a_move_of_one_unit() {
    let (d, r) = rejected(
        "finish_charge.muster",
        ruleset!(
            "import battle
procedure charged(c: unit, t: unit) { }
decision charges() \"charge\" {
  charge c onto t where c != t
  reach 3
  finish n: n is wheel
  then charged(c, t)
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::decision"]);
    assert!(
        r.contains("a `charge` decision has no `finish` clause"),
        "{r}"
    );
    insta::assert_snapshot!("finish_in_a_charge_decision", r);
    let (d, r) = rejected(
        "finish_together.muster",
        ruleset!(
            "import battle
decision move(side: side) \"move\" {
  move u where u.side == side
  manoeuvre m: m is straight
  finish n: n is about_face
  allowance 3
  together g: g != u
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::decision"]);
    assert!(
        r.contains("a move `together` has no `finish` clause"),
        "{r}"
    );
    insta::assert_snapshot!("finish_in_a_move_together", r);
    // Alone, the same move compiles, and `finish` reads the move's manoeuvre.
    build_ok(
        "finish_alone.muster",
        ruleset!(
            "import battle
decision move(side: side) \"move\" {
  move u where u.side == side
  manoeuvre m: m is straight | wheel
  finish n: m is straight and n is about_face
  allowance 3
}
"
        ),
    );
}

#[test]
fn together_given_twice_or_not_a_condition() {
    let (d, r) = rejected(
        "together_twice.muster",
        ruleset!(
            "decision fall_back(side: side) \"retire\" {
  retire u where u.side == side
  distance 3
  together g: g != u
  together h: h != u
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::decision"]);
    assert!(r.contains("the `together` clause is given twice"), "{r}");
    let (_, r) = rejected(
        "together_number.muster",
        ruleset!(
            "decision fall_back(side: side) \"retire\" {
  retire u where u.side == side
  distance 3
  together g: g.resolve
}
"
        ),
    );
    assert!(r.contains("together"), "{r}");
}

// ==================================================================== hooks

#[test]
fn hook_reads_an_unknown_fact() {
    let (d, r) = rejected(
        "hook_fact.muster",
        ruleset!(
            "fact in_cover(u: unit): bool = false
procedure shoot(shooter: unit) outcomes { hits: int } {
  outcome hits = shooter.resolve d6 scoring 6+
}
hook cover_save after shoot {
  if fact(\"in_covr\", shooter) { set_outcome(\"hits\", 0); }
}
"
        ),
    );
    assert_eq!(codes(&d), ["muster::hook"]);
    insta::assert_snapshot!("hook_reads_an_unknown_fact", r);
}

#[test]
fn hook_on_a_missing_step() {
    let (d, r) = rejected(
        "hook_step.muster",
        ruleset!(
            "procedure tick() { }
sequence {
  turn {
    step \"Shoot\" { do tick() }
  } until true
}
hook h before step \"Shooting\" { log(\"x\"); }
"
        ),
    );
    assert_eq!(codes(&d), ["muster::hook"]);
    insta::assert_snapshot!("hook_on_a_missing_step", r);
}

#[test]
fn runtime_hook_loops_forever() {
    let b = build_ok(
        "spin.muster",
        ruleset!(
            "procedure shoot(shooter: unit) outcomes { hits: int } {
  outcome hits = shooter.resolve d6 scoring 6+
}
hook spin after shoot {
  let n = 0;
  while n >= 0 { n += 1; }
}
"
        ),
    );
    let (d, r) = failed_run(
        b,
        r#"procedure = "shoot"
[units.shooter]
type = "Shot"
"#,
    );
    assert_eq!(d.code, "muster::hook");
    insta::assert_snapshot!("runtime_hook_loops_forever", r);
}

// ====================================================================== decks

/// The small ruleset with a sequence of one step, for deck mistakes.
const DECK_BASE: &str = "import core
sides attacker, defender
class cavalry, infantry
stat resolve
units (resolve) {
  Horse : cavalry = 3
  Shot  : infantry = 3
}
state activated: int = 0
procedure activate(u: unit) { u.activated += 1 }
procedure cheer(s: side) { }
";

/// The decks most tests start from, and the step that shuffles and draws them.
const DECKS: &str = "deck play {
  card horse for each u in units where u is Horse { do activate(u) }
  card cheer copies 2 { do cheer(attacker) }
}
deck bonus(s: side) {
  card extra { do cheer(s) }
}
";
const STEP: &str = "shuffle play  shuffle bonus  draw play until 1 left  draw bonus(attacker)";

/// A ruleset of the base, these decks, and a sequence of one step with
/// these actions.
fn with_decks(decks: &str, step: &str) -> String {
    format!(
        "{DECK_BASE}{decks}sequence {{
  turn {{
    step \"Cards\" {{ {step} }}
  }} until any u in units: u.activated > 9
}}
"
    )
}

#[test]
fn decks_without_mistakes_compile() {
    let b = build_ok("decks.muster", &with_decks(DECKS, STEP));
    assert_eq!(b.ruleset.decks.len(), 2);
}

#[test]
fn deck_defined_twice() {
    let text = with_decks(&format!("{DECKS}deck play {{ card again {{ }} }}\n"), STEP);
    let (d, r) = rejected("deck_twice.muster", &text);
    assert_eq!(codes(&d), ["muster::duplicate"]);
    assert!(r.contains("first defined here"), "{r}");
    insta::assert_snapshot!("deck_defined_twice", r);
}

#[test]
fn card_named_twice_in_a_deck() {
    let decks = DECKS.replace(
        "card cheer copies 2 { do cheer(attacker) }",
        "card cheer { do cheer(attacker) }\n  card cheer { do cheer(defender) }",
    );
    let (d, r) = rejected("card_twice.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::duplicate"]);
    assert!(r.contains("copies N"), "{r}");
    insta::assert_snapshot!("card_named_twice_in_a_deck", r);
}

#[test]
fn draw_from_an_unknown_deck() {
    let step = STEP.replace("draw play", "draw plya");
    let (d, r) = rejected("unknown_deck.muster", &with_decks(DECKS, &step));
    assert_eq!(codes(&d), ["muster::unknown_deck"]);
    assert!(r.contains("did you mean `play`?"), "{r}");
    insta::assert_snapshot!("draw_from_an_unknown_deck", r);
}

#[test]
fn deck_drawn_with_the_wrong_number_of_arguments() {
    let step = STEP.replace("draw bonus(attacker)", "draw bonus");
    let (d, r) = rejected("deck_arity.muster", &with_decks(DECKS, &step));
    assert_eq!(codes(&d), ["muster::arity"]);
    insta::assert_snapshot!("deck_drawn_with_the_wrong_number_of_arguments", r);
}

#[test]
fn deck_drawn_with_an_argument_of_the_wrong_type() {
    let step = STEP.replace("draw bonus(attacker)", "draw bonus(3)");
    let (d, r) = rejected("deck_arg_type.muster", &with_decks(DECKS, &step));
    assert_eq!(codes(&d), ["muster::type"]);
    insta::assert_snapshot!("deck_drawn_with_an_argument_of_the_wrong_type", r);
}

#[test]
fn card_with_no_copies() {
    let decks = DECKS.replace("copies 2", "copies 0");
    let (d, r) = rejected("copies.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::copies"]);
    insta::assert_snapshot!("card_with_no_copies", r);
}

#[test]
fn card_for_each_over_something_else() {
    let decks = DECKS.replace("for each u in units", "for each u in horses");
    let (d, r) = rejected("card_each.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::quantifier"]);
    insta::assert_snapshot!("card_for_each_over_something_else", r);
}

#[test]
fn card_when_that_is_not_a_condition() {
    let decks = DECKS.replace("card cheer copies 2", "card cheer copies 2 when 3");
    let (d, r) = rejected("card_when.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::type"]);
    insta::assert_snapshot!("card_when_that_is_not_a_condition", r);
}

#[test]
fn card_where_that_is_not_a_condition() {
    let decks = DECKS.replace("where u is Horse", "where u.activated");
    let (d, r) = rejected("card_where.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::type"]);
    insta::assert_snapshot!("card_where_that_is_not_a_condition", r);
}

#[test]
fn card_condition_reads_a_deck_parameter() {
    let decks = DECKS.replace("card extra {", "card extra when s == attacker {");
    let (d, r) = rejected("card_param.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::card_condition"]);
    assert!(r.contains("reads `s`, a parameter of deck `bonus`"), "{r}");
    insta::assert_snapshot!("card_condition_reads_a_deck_parameter", r);
}

#[test]
fn deck_never_shuffled() {
    let step = STEP.replace("shuffle bonus  ", "");
    let (d, r) = rejected("never_shuffled.muster", &with_decks(DECKS, &step));
    assert_eq!(codes(&d), ["muster::deck_never_shuffled"]);
    assert!(r.contains("shuffle bonus"), "{r}");
    insta::assert_snapshot!("deck_never_shuffled", r);
}

#[test]
fn draw_until_a_negative_count() {
    let step = STEP.replace("until 1 left", "until -1 left");
    let (d, r) = rejected("until.muster", &with_decks(DECKS, &step));
    assert_eq!(codes(&d), ["muster::until"]);
    insta::assert_snapshot!("draw_until_a_negative_count", r);
}

#[test]
fn goto_inside_a_card() {
    let decks = DECKS.replace("{ do cheer(s) }", "{ do cheer(s) goto \"Cards\" }");
    let (d, r) = rejected("card_goto.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::card_action"]);
    insta::assert_snapshot!("goto_inside_a_card", r);
}

#[test]
fn deck_without_cards() {
    let decks = format!("{DECKS}deck events {{ }}\n");
    let step = format!("{STEP}  shuffle events");
    let (d, r) = rejected("empty_deck.muster", &with_decks(&decks, &step));
    assert_eq!(codes(&d), ["muster::empty_deck"]);
    insta::assert_snapshot!("deck_without_cards", r);
}

#[test]
fn two_after_each_card_blocks_in_a_deck() {
    let decks = DECKS.replace(
        "  card cheer copies 2",
        "  after each card { do cheer(attacker) }\n  card cheer copies 2",
    );
    let decks = decks.replace(
        "card extra { do cheer(s) }",
        "card extra { do cheer(s) }\n  after each card { do cheer(s) }",
    );
    let decks = decks.replace(
        "\n}\ndeck bonus",
        "\n  after each card { do cheer(defender) }\n}\ndeck bonus",
    );
    let (d, r) = rejected("after_each_twice.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::duplicate"]);
    assert!(r.contains("two `after each card` blocks"), "{r}");
    assert!(
        r.contains("the first `after each card` of this deck"),
        "{r}"
    );
    insta::assert_snapshot!("two_after_each_card_blocks_in_a_deck", r);
}

#[test]
fn after_each_card_reads_a_card_s_variable() {
    let decks = DECKS.replace(
        "  card cheer copies 2 { do cheer(attacker) }\n",
        "  card cheer copies 2 { do cheer(attacker) }\n  after each card { do activate(u) }\n",
    );
    let (d, r) = rejected("after_each_var.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::unknown_name"]);
    assert!(r.contains("not a card's `for each` variable"), "{r}");
    insta::assert_snapshot!("after_each_card_reads_a_card_s_variable", r);
}

#[test]
fn goto_inside_after_each_card() {
    let decks = DECKS.replace(
        "  card extra { do cheer(s) }\n",
        "  card extra { do cheer(s) }\n  after each card { do cheer(s) goto \"Cards\" }\n",
    );
    let (d, r) = rejected("after_each_goto.muster", &with_decks(&decks, STEP));
    assert_eq!(codes(&d), ["muster::card_action"]);
    assert!(r.contains("cannot `goto`"), "{r}");
    insta::assert_snapshot!("goto_inside_after_each_card", r);
}
