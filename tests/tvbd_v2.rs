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
