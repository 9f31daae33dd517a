//! Tilly's Very Bad Day v2.0a as a draft of v1 (issue 30): the language a
//! draft needs (a column added to the base's units table, the finer
//! relative positions of the sheet, a base step changed in place), and the
//! draft itself, rules/tillys_very_bad_day_v2.muster, checked against
//! closed forms and played.

use crate::common;
use muster::base::value::Value;
use muster::Build;
use std::path::Path;

/// The crate's `rules/` folder, where a draft of TVBD v1 lives.
fn rules() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

use common::{draft, draft_refused as refused};

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
            muster::compile::phase_graph::StepAction::Do { args, .. } => format!("{args:?}"),
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

// ============================================================ the draft

const V1: &str = "rules/tillys_very_bad_day.muster";
const V2: &str = "rules/tillys_very_bad_day_v2.muster";

/// A situation file of rules/situations/.
fn situation_text(name: &str) -> String {
    std::fs::read_to_string(rules().join("situations").join(name)).unwrap()
}

/// P(the first of two binomials beats, ties, loses to the second): the
/// attacker's `a` dice each hitting with `pa`, the defender's `d` with `pd`.
fn melee_closed_form(a: usize, pa: f64, d: usize, pd: f64) -> [f64; 3] {
    let (x, y) = (common::binomial(a, pa), common::binomial(d, pd));
    let mut out = [0.0; 3];
    for (i, px) in x.iter().enumerate() {
        for (j, py) in y.iter().enumerate() {
            out[if i > j {
                0
            } else if i == j {
                1
            } else {
                2
            }] += px * py;
        }
    }
    out
}

/// P(attacker wins), P(draw), P(defender wins) of a melee situation.
fn winner(b: &mut Build, text: &str) -> [f64; 3] {
    let o = common::exact(b, text);
    let w = o.get("winner").unwrap();
    ["attacker", "draw", "defender"].map(|s| w.p(common::sym(b, s)).to_f64())
}

/// The draft's main melees beside v1's, each against its closed form:
/// horse charging the front of pike+shot in the open (unchanged: 3 dice on
/// 5-6 against 4 on 5-6); pike+shot on pike+shot, supported (4 against 4)
/// and the defender unsupported (4 against 3; v1 knows no support: 4
/// against 4); light horse charging shot behind-flank (v2.0a: 3 dice on
/// 4-6 against the shot's 1 die on 6; v1: 2 dice on 6 against 1 on 6).
#[test]
fn the_drafts_main_melees_beside_v1s() {
    let (mut v1, mut v2) = (common::ruleset(V1), common::ruleset(V2));
    let third = 1.0 / 3.0;
    let mut out =
        String::from("situation: v1 P(attacker wins) P(draw) P(defender wins) | v2.0a the same\n");
    for (file, want_v1, want_v2) in [
        (
            "tvbd2_horse_charges_pike.toml",
            melee_closed_form(3, third, 4, third),
            melee_closed_form(3, third, 4, third),
        ),
        (
            "tvbd2_pike_supported.toml",
            melee_closed_form(4, third, 4, third),
            melee_closed_form(4, third, 4, third),
        ),
        (
            "tvbd2_pike_unsupported.toml",
            melee_closed_form(4, third, 4, third),
            melee_closed_form(4, third, 3, third),
        ),
        (
            "tvbd2_light_horse_behind_flank.toml",
            melee_closed_form(2, 1.0 / 6.0, 1, 1.0 / 6.0),
            melee_closed_form(3, 0.5, 1, 1.0 / 6.0),
        ),
    ] {
        let text = situation_text(file);
        // v1 has no support: the same melee without the facts it lacks.
        let v1_text: String = text
            .lines()
            .filter(|l| !l.contains("supported("))
            .map(|l| format!("{l}\n"))
            .collect();
        let (got_v1, got_v2) = (winner(&mut v1, &v1_text), winner(&mut v2, &text));
        for k in 0..3 {
            assert!(
                (got_v1[k] - want_v1[k]).abs() < 1e-12,
                "{file} v1: {got_v1:?} {want_v1:?}"
            );
            assert!(
                (got_v2[k] - want_v2[k]).abs() < 1e-12,
                "{file} v2: {got_v2:?} {want_v2:?}"
            );
        }
        out += &format!(
            "{file}: {:.4} {:.4} {:.4} | {:.4} {:.4} {:.4}\n",
            got_v1[0], got_v1[1], got_v1[2], got_v2[0], got_v2[1], got_v2[2]
        );
    }
    insta::assert_snapshot!("tvbd2_melee_odds_beside_v1", out);
}

/// The new shooting modifiers (QRS Shooting Dice), by query: horse in
/// difficult terrain lose a die; pike+shot in difficult terrain no longer
/// count as in cover, dragoons and shot still do; rabble and cannon in
/// field fortifications now do.
#[test]
fn the_drafts_shooting_dice() {
    let mut b = common::ruleset(V2);
    let s = common::situation(
        &mut b,
        r#"
facts = ["in_difficult(horse)", "in_difficult(ps)", "in_difficult(shot)", "fortified(rabble)", "fortified(guns)"]
[units.horse]
type = "Horse"
[units.ps]
type = "Pike+Shot"
[units.shot]
type = "Shot"
[units.rabble]
type = "Rabble"
[units.guns]
type = "Cannons"
[units.musketeers]
type = "Shot"
"#,
    );
    for (expr, want) in [
        ("shooting_dice(horse, ps)", "2"),
        ("shooting_dice(musketeers, ps)", "4"),
        ("shooting_dice(musketeers, shot)", "3"),
        ("shooting_dice(musketeers, rabble)", "3"),
        ("shooting_dice(musketeers, guns)", "3"),
    ] {
        assert_eq!(b.query(&s, expr).unwrap().1, want, "{expr}");
    }
}

/// The table's support (QRS Infantry Support) against `muster odds`: the
/// battle's melee step, a supported pike+shot against an unsupported one,
/// on many seeds, gives the exact odds of the two-unit melee with the
/// support stated (4 dice against 3).
#[test]
fn a_supported_melee_on_the_table_matches_the_exact_odds() {
    use common::scene::{Scene, Tally};
    let mut scene = Scene::open(V2, "tvbd2_support.toml", &[], 10.0);
    let text = situation_text("tvbd2_pike_unsupported.toml");
    let exact = scene.exact(&text);
    let mut tally = Tally::new("supported pike+shot -> unsupported pike+shot");
    for seed in 0..8_000u64 {
        let mut g = scene.start(seed, false);
        let (front, foe) = (scene.unit(&g, "front"), scene.unit(&g, "foe"));
        if seed == 0 {
            for (expr, want) in [
                ("supported(front)", "true"),
                ("supported(foe)", "false"),
                ("position(front, support)", "to_rear"),
                ("melee_dice(front, foe)", "4"),
                ("melee_dice(foe, front)", "3"),
            ] {
                let (_, got) = scene.build.query_world(&g.world, expr).unwrap();
                assert_eq!(got, want, "{expr}");
            }
        }
        let args = [Value::Unit(front as u16), Value::Unit(foe as u16)];
        g.perform_named("charged", &args).unwrap();
        g.play_step_named("Step 5.5 Melee").unwrap();
        let (a, d) = (
            scene.int(&g, "front", "scored"),
            scene.int(&g, "foe", "scored"),
        );
        let winner = match (
            scene.bool(&g, "front", "lost_melee"),
            scene.bool(&g, "foe", "lost_melee"),
        ) {
            (false, true) => "attacker",
            (true, false) => "defender",
            (false, false) => "draw",
            (true, true) => panic!("seed {seed}: both lost"),
        };
        let got = [
            ("winner", winner.to_string()),
            ("attacker_hits", a.to_string()),
            ("defender_hits", d.to_string()),
        ];
        tally.add(&scene, seed, &exact, &got);
    }
    assert!(tally.check() >= 10);
}

/// `muster check`, `battle` and `simulate` run the draft on its default
/// scenario; the seeded battle's log is pinned.
#[test]
fn the_draft_checks_and_plays_its_default_battle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = common::succeeded(common::muster_in(root, &["check", V2]));
    assert!(out.contains("tillys_very_bad_day_v2.muster: ok"), "{out}");
    let log = common::succeeded(common::muster_in(root, &["battle", V2, "--seed", "7"]));
    // The sheet's turn: initiative, the active player first, evades before charges.
    for line in [
        "-- Phase 2. Initiative",
        "-- Phase 3. Active Player / Step 3.1 Active player move",
        "-- Phase 4. Reactive Player / Step 4.2 Active player shoot",
        "-- Phase 5. Close Combat / Step 5.3 Evades",
        "-- Phase 6. Morale / Step 6.5 Commander rally",
    ] {
        assert!(log.contains(line), "{line}");
    }
    insta::assert_snapshot!("tvbd2_default_seed_7", log);
    let sim = common::succeeded(common::muster_in(root, &["simulate", V2, "--runs", "20"]));
    assert!(sim.contains("20"), "{sim}");
}

/// A phase renamed, a step placed before a phase (between phases, in the
/// turn's own list, so the log shows it without a phase), and a phase that
/// is not there. Changes apply in the order written: the step names the
/// phase by its v1 name, before the rename.
#[test]
fn a_phase_is_renamed_and_a_step_goes_before_a_phase() {
    let b = draft(
        r#"
extends "tillys_very_bad_day.muster"
step "Phase 2. Initiative" before "Phase 1. Attacker" { do initiative() }
override phase "Phase 1. Attacker" as "Phase 3. Active Player"
"#,
    );
    let g = b.ruleset.graph.as_ref().unwrap();
    let turn: Vec<(Option<String>, String)> = g
        .nodes
        .iter()
        .filter(|n| n.in_turn)
        .map(|n| (n.phase.clone(), n.name.clone()))
        .collect();
    assert_eq!(turn[0], (None, "Phase 2. Initiative".into()));
    assert_eq!(
        turn[1],
        (
            Some("Phase 3. Active Player".into()),
            "Step 1.1 Attacker Move".into()
        )
    );
    let (codes, r) = refused(
        "extends \"tillys_very_bad_day.muster\"\noverride phase \"Phase 9. Tea\" as \"Phase 10\"\n",
    );
    assert_eq!(codes, ["muster::unknown_phase"], "{r}");
    assert!(
        r.contains("there is no phase \"Phase 9. Tea\" to rename"),
        "{r}"
    );
}
