//! Tilly's Very Bad Day v2.0a as a draft of v1 (issue 30): the language a
//! draft needs (a column added to the base's units table, the finer
//! relative positions of the sheet, a base step changed in place), and the
//! draft itself, rules/tillys_very_bad_day_v2.muster, checked against
//! closed forms and played.

use crate::common;
use muster::diagnostic::{render_plain, Diag};
use muster::value::Value;
use muster::Build;
use std::path::Path;

/// The crate's `rules/` folder, where a draft of TVBD v1 lives.
fn rules() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

/// A draft of TVBD v1, written out here, that must compile.
fn draft(text: &str) -> Build {
    match muster::build_text("draft.muster", text, Some(&rules())) {
        Ok(b) => b,
        Err((d, s)) => panic!("the draft should compile:\n{}", render_plain(&d, &s)),
    }
}

/// A draft that must be rejected: its diagnostics' codes and their text.
fn refused(text: &str) -> (Vec<&'static str>, String) {
    match muster::build_text("draft.muster", text, Some(&rules())) {
        Ok(_) => panic!("the draft compiled, but it has a mistake the compiler should catch"),
        Err((d, s)) => (
            d.iter().map(|d: &Diag| d.code).collect(),
            render_plain(&d, &s),
        ),
    }
}

/// A unit type's stat, as the compiled ruleset holds it.
fn stat(b: &Build, unit: &str, name: &str) -> Value {
    let t = b.ruleset.unit_type(unit).unwrap() as usize;
    b.ruleset.unit_types[t].stats[b.ruleset.stat(name).unwrap() as usize]
}

// ============================================================ a column added to the base's table

/// Every base type given a value in the new column: the base's table has
/// it, the values given, and the old columns as they were (the row named
/// in a new order, one column changed).
#[test]
fn an_extending_units_block_adds_a_column_to_the_base_rows() {
    let b = draft(
        r#"
extends "tillys_very_bad_day.muster"
stat charge_move
override units (charge_move, resolve) {
  Commander     : = 3, 1
  Horse         : = 3, 3
  "Light horse" : = 3, 3
  Dragoons      : = 3, 3
  "Pike+Shot"   : = 3, 4
  Shot          : = 3, 4
  Rabble        : = 3, 2
  Cannons       : = 0, 2
}
"#,
    );
    assert_eq!(stat(&b, "Horse", "charge_move"), Value::Int(3));
    assert_eq!(stat(&b, "Cannons", "charge_move"), Value::Int(0));
    assert_eq!(stat(&b, "Shot", "resolve"), Value::Int(4));
    // v1's columns stand where the draft is silent.
    assert_eq!(stat(&b, "Light horse", "move"), Value::Int(8));
    assert_eq!(stat(&b, "Pike+Shot", "melee_hit"), Value::Int(5));
}

/// A base type given no value in the new column is named, all of them in
/// one diagnostic at the column; a type the draft removed is not asked for.
#[test]
fn a_new_column_names_the_base_rows_left_without_a_value() {
    let (codes, text) = refused(
        r#"
extends "tillys_very_bad_day.muster"
stat charge_move
remove unit Rabble
units (charge_move) {
  override Horse : = 3
  override "Light horse" : = 3
  override Dragoons : = 3
  override "Pike+Shot" : = 3
  override Shot : = 3
}
"#,
    );
    assert_eq!(codes, ["muster::missing_stat_value"]);
    assert!(
        text.contains("the new column `charge_move` has no value for Commander, Cannons"),
        "{text}"
    );
    assert!(text.contains("row for Commander, Cannons"), "{text}");
}

/// A column no `stat` declares is still an unknown stat, at the column.
#[test]
fn a_new_column_must_be_a_declared_stat() {
    let (codes, text) = refused(
        r#"
extends "tillys_very_bad_day.muster"
override units (charge_mvoe) {
  Commander : = 3
  Horse : = 3
  "Light horse" : = 3
  Dragoons : = 3
  "Pike+Shot" : = 3
  Shot : = 3
  Rabble : = 3
  Cannons : = 0
}
"#,
    );
    assert_eq!(codes, ["muster::unknown_stat"], "{text}");
    assert!(text.contains("charge_mvoe"), "{text}");
}

// ============================================================ to-front-flank and behind-flank

/// `front_flank(a, b)`: of the units to a's flank, those whose centre is
/// ahead of the line of a's front edge (the sheet's to-front-flank); the
/// others to flank are behind-flank. A unit to front or to rear is neither.
#[test]
fn front_flank_splits_the_flank_zone_at_the_line_of_the_front_edge() {
    let mut t = common::table::Table::open(
        "rules/tillys_very_bad_day.muster",
        Some("tests/scenarios/tvbd2_positions.toml"),
        1,
    );
    // Facing -x, toward the viewer's right side edge (x = 23.5).
    // Centre 1.2 ahead of the viewer's centre: 0.7 ahead of its front edge.
    t.place_facing("ahead", 25.0, 11.2, 270.0);
    // Touching the side edge, level with the viewer's centre.
    t.place_facing("beside", 24.0, 10.0, 270.0);
    // Centre just level with the front edge's line (y 10.5): behind-flank.
    t.place_facing("level", 20.0, 10.5, 90.0);
    t.place_facing("in_front", 22.5, 13.0, 180.0);
    t.place_facing("behind", 22.5, 7.0, 0.0);
    for (unit, zone, front_flank) in [
        ("ahead", "to_flank", true),
        ("beside", "to_flank", false),
        ("level", "to_flank", false),
        ("in_front", "to_front", false),
        ("behind", "to_rear", false),
    ] {
        assert_eq!(
            t.eval(&format!("position(viewer, {unit})")),
            t.sym(zone),
            "{unit}"
        );
        assert_eq!(
            t.holds(&format!("front_flank(viewer, {unit})")),
            front_flank,
            "{unit}"
        );
    }
    // A unit is nowhere round itself.
    assert!(!t.holds("front_flank(viewer, viewer)"));
}

// ============================================================ a base step changed where it stands

/// The names of the turn's steps, in order, with their phases.
fn turn_steps(b: &Build) -> Vec<String> {
    let g = b.ruleset.graph.as_ref().unwrap();
    g.nodes
        .iter()
        .filter(|n| n.in_turn)
        .map(|n| n.name.clone())
        .collect()
}

/// The arguments of a step's `do` actions, as the compiler made them.
fn step_args(b: &Build, step: &str) -> Vec<String> {
    let g = b.ruleset.graph.as_ref().unwrap();
    let node = g.nodes.iter().find(|n| n.name == step).unwrap();
    node.actions
        .iter()
        .map(|a| match a {
            muster::phase_graph::StepAction::Do { args, .. } => format!("{args:?}"),
            other => format!("{other:?}"),
        })
        .collect()
}

/// `with attacker = EXPR` puts the expression where the step named the
/// side (in both its actions), `as` renames it, and it stays where it
/// was; v1's other steps are untouched.
#[test]
fn a_step_is_given_a_new_actor_and_name_in_place() {
    let v1 = common::ruleset("rules/tillys_very_bad_day.muster");
    let b = draft(
        r#"
extends "tillys_very_bad_day.muster"
override step "Step 1.1 Attacker Move" as "Step 3.1 Active Player Move" with attacker = defender
override step "Step 1.2 Defender Shoot" as "Step 3.2 Reactive Player Shoot" with defender = attacker
"#,
    );
    let (old, new) = (turn_steps(&v1), turn_steps(&b));
    assert_eq!(old.len(), new.len());
    assert_eq!(new[0], "Step 3.1 Active Player Move");
    assert_eq!(new[1], "Step 3.2 Reactive Player Shoot");
    assert_eq!(old[2..], new[2..]);
    // face_in_melee and move, each now for the defender (side 1).
    assert_eq!(
        step_args(&b, "Step 3.1 Active Player Move"),
        ["[Const(Side(1))]", "[Const(Side(1))]"]
    );
    assert_eq!(
        step_args(&b, "Step 3.2 Reactive Player Shoot"),
        ["[Const(Side(0))]"]
    );
    assert_eq!(
        step_args(&v1, "Step 1.1 Attacker Move"),
        ["[Const(Side(0))]", "[Const(Side(0))]"]
    );
}

/// A step moved (`before`), and one whose actions are replaced: the rest
/// of the sequence keeps its order.
#[test]
fn a_step_is_moved_or_its_actions_replaced() {
    let v1 = common::ruleset("rules/tillys_very_bad_day.muster");
    let b = draft(
        r#"
extends "tillys_very_bad_day.muster"
override step "Step 3.3 Point Blank Shooting" as "Evades" before "Step 3.2 Charge" {
  do evades(s) for each s in sides where evade
}
override step "Step 4.2 Unit Rally" after "Step 4.3 Unit Heroics"
"#,
    );
    let mut want = turn_steps(&v1);
    let pb = want
        .iter()
        .position(|s| s == "Step 3.3 Point Blank Shooting")
        .unwrap();
    want.remove(pb);
    let charge = want.iter().position(|s| s == "Step 3.2 Charge").unwrap();
    want.insert(charge, "Evades".into());
    let rally = want
        .iter()
        .position(|s| s == "Step 4.2 Unit Rally")
        .unwrap();
    let r = want.remove(rally);
    want.insert(rally + 1, r);
    assert_eq!(turn_steps(&b), want);
    assert_eq!(step_args(&b, "Evades").len(), 1);
}

/// Misuse: a step that is not there, a name the step never uses, a move
/// beside itself, a change that changes nothing.
#[test]
fn a_step_change_that_cannot_apply_is_refused() {
    for (text, code, says) in [
        (
            r#"override step "Step 1.1 Atacker Move" with attacker = defender"#,
            "muster::unknown_step",
            "there is no step \"Step 1.1 Atacker Move\" to change",
        ),
        (
            r#"override step "Step 1.2 Defender Shoot" with attacker = defender"#,
            "muster::step_change",
            "step \"Step 1.2 Defender Shoot\" never names `attacker`",
        ),
        (
            r#"override step "Step 3.2 Charge" after "Step 3.2 Charge""#,
            "muster::unknown_step",
            "there is no other step \"Step 3.2 Charge\" to move this step beside",
        ),
        (
            r#"override step "Step 3.2 Charge""#,
            "muster::step_change",
            "this changes nothing in step \"Step 3.2 Charge\"",
        ),
    ] {
        let (codes, r) = refused(&format!("extends \"tillys_very_bad_day.muster\"\n{text}\n"));
        assert_eq!(codes, [code], "{r}");
        assert!(r.contains(says), "{r}");
    }
}
