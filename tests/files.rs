//! Units made of files of bases (issue 32, item 1): formations that lose
//! bases keeping their width (front-rank bases first where the rules say),
//! expand and contract on the table, and fight file by file with `for
//! file`, in a battle as in `muster odds` (tests/rulesets/files_melee.muster).

use crate::common;
use crate::common::scene::{Scene, Tally};
use muster::base::value::Value;

const RULES: &str = "tests/rulesets/files_melee.muster";

/// A situation of the demo: `a` against `d`, each of `ty`, the facts given.
fn situation(ty_a: &str, ty_d: &str, facts: &[&str], d_state: &str) -> String {
    let facts: Vec<String> = facts.iter().map(|f| format!("\"{f}\"")).collect();
    format!(
        "procedure = \"charge_combat\"\nfacts = [{}]\n[args]\na = \"a\"\nd = \"d\"\n\
         [units.a]\ntype = \"{ty_a}\"\nside = \"near\"\n\
         [units.d]\ntype = \"{ty_d}\"\nside = \"far\"\n{d_state}",
        facts.join(", ")
    )
}

/// An expression of the game's world, as `muster query` shows it.
fn query(scene: &mut Scene, g: &muster::battle::game::Game, expr: &str) -> String {
    scene.build.query_world(&g.world, expr).unwrap().1
}

/// Casualties come off the rear of the deepest files, so a line keeps its
/// width until every file is one base deep; a unit with front-rank bases
/// shot from the front loses those first. On the table its base narrows
/// (from the right) only when a file is gone.
#[test]
fn casualties_keep_the_width_and_front_rank_bases_go_first() {
    let mut scene = Scene::open(RULES, "files_front.toml", &[], 0.0);
    let mut g = scene.start(0, false);
    let pikes = scene.unit(&g, "far_pikes") as u16;
    let files = |scene: &mut Scene, g: &muster::battle::game::Game| {
        (1..=4)
            .map(|i| query(scene, g, &format!("file_bases(far_pikes.formation, {i})")))
            .collect::<Vec<_>>()
            .join("|")
    };
    assert_eq!(files(&mut scene, &g), "2|2|2|2");
    g.perform_named("shot_casualties", &[Value::Unit(pikes), Value::Int(3)])
        .unwrap();
    assert_eq!(files(&mut scene, &g), "2|1|1|1");
    assert_eq!(
        g.world.field.as_ref().unwrap().bases[pikes as usize].width,
        4.0
    );
    g.perform_named("shot_casualties", &[Value::Unit(pikes), Value::Int(2)])
        .unwrap();
    assert_eq!(files(&mut scene, &g), "1|1|1|0");

    // Columns: 2 files of 4, each headed by a front-rank base.
    let cols = scene.unit(&g, "far_columns") as u16;
    let show = |scene: &mut Scene, g: &muster::battle::game::Game| {
        [
            "file_bases(far_columns.formation, 1)",
            "file_bases(far_columns.formation, 2)",
            "front_bases(far_columns.formation)",
        ]
        .map(|e| query(scene, g, e))
        .join(" ")
    };
    assert_eq!(show(&mut scene, &g), "4 4 2");
    g.perform_named("shot_casualties", &[Value::Unit(cols), Value::Int(1)])
        .unwrap();
    assert_eq!(show(&mut scene, &g), "4 3 1");
    g.perform_named("shot_casualties", &[Value::Unit(cols), Value::Int(1)])
        .unwrap();
    assert_eq!(show(&mut scene, &g), "3 3 0");
    // Down to one base: one file, its base one file wide, its left edge
    // (x = 21: it faces south) where it was.
    g.perform_named("shot_casualties", &[Value::Unit(cols), Value::Int(5)])
        .unwrap();
    assert_eq!(show(&mut scene, &g), "1 0 0");
    g.play_step_named("Charge combat").unwrap();
    let b = g.world.field.as_ref().unwrap().bases[cols as usize];
    assert_eq!((b.width, b.centre.x), (1.0, 20.5));
}

/// A formation expands by a file on each side where the table has room
/// (bases taken from the rear ranks) and contracts again; its base on the
/// table widens and narrows on the side the rules say.
#[test]
fn a_formation_expands_and_contracts_on_the_table() {
    let mut scene = Scene::open(RULES, "files_front.toml", &[], 0.0);
    let mut g = scene.start(0, false);
    let u = scene.unit(&g, "far_columns");
    let base = |g: &muster::battle::game::Game| {
        let b = g.world.field.as_ref().unwrap().bases[u];
        (b.width, b.centre.x)
    };
    // 2 files of 1 wide at x 19..21, facing south (its left is east).
    assert_eq!(base(&g), (2.0, 20.0));
    assert_eq!(
        query(&mut scene, &g, "room_to_expand(far_columns, 1, 1)"),
        "true"
    );
    let args = [Value::Unit(u as u16), Value::Int(1), Value::Int(0)];
    g.perform_named("expand_formation", &args).unwrap();
    g.play_step_named("Charge combat").ok();
    assert_eq!(query(&mut scene, &g, "files(far_columns.formation)"), "3");
    assert_eq!(
        query(&mut scene, &g, "formation_ranks(far_columns.formation)"),
        "4"
    );
    // One file more on its left: the east.
    assert_eq!(base(&g), (3.0, 20.5));
    g.perform_named("contract_formation", &args).unwrap();
    g.play_step_named("Charge combat").ok();
    assert_eq!(query(&mut scene, &g, "files(far_columns.formation)"), "2");
    assert_eq!(base(&g), (2.0, 20.0));
    // No room for 6 files more: the table's edge is 3 away on the left.
    assert_eq!(
        query(&mut scene, &g, "room_to_expand(far_columns, 4, 0)"),
        "false"
    );
}

/// Two files of horse against two, level: the odds of the defender taking
/// no wound, worked by hand. File 1 rolls GREEN against GREEN: no wound
/// with a blank (2/6). Then the defender's file shoves with S or W2 (2/6)
/// and its neighbour claims one more, so the attacker's file 2 rolls
/// WHITE (blank 3/6); otherwise GREEN again (blank 2/6): 1/3 x (1/3 x 1/2
/// + 2/3 x 1/3) = 7/54.
#[test]
fn two_files_against_two_match_the_closed_form() {
    let mut b = common::ruleset(RULES);
    let text = situation(
        "Horse",
        "Horse",
        &["facing_file(a, 1, d) == 2", "facing_file(a, 2, d) == 1"],
        "",
    );
    let o = common::exact(&mut b, &text);
    assert_eq!(
        o.get("defender_wounds").unwrap().p(Value::Int(0)).to_f64(),
        7.0 / 54.0
    );
    // Both defender dice W2 (the first a shove, so the second is YELLOW, or
    // both GREEN): 1/6 x 1/6.
    assert_eq!(
        o.get("attacker_wounds").unwrap().p(Value::Int(4)).to_f64(),
        1.0 / 36.0
    );
    assert_eq!(
        o.get("files_fought").unwrap().p(Value::Int(2)).to_f64(),
        1.0
    );
}

/// File 3 fights first against a TUG one wound from breaking: a wound
/// with a potential (S or W2, 2/6) shatters, a defender's shove (attacker
/// blank, defender S or W2: 2/6 x 2/6; attacker W1, defender W2: 2/6 x
/// 1/6) marks it too: 1/2 in all. A marked file's neighbours fight next
/// (file 2 second); otherwise the lowest left (file 1 second).
#[test]
fn a_shatter_makes_the_neighbouring_files_fight_next() {
    let mut b = common::ruleset(RULES);
    let facts = [
        "facing_file(a, 1, d) == 4",
        "facing_file(a, 2, d) == 3",
        "facing_file(a, 3, d) == 2",
        "facing_file(a, 4, d) == 1",
        "first_file(a, d) == 3",
    ];
    let text = situation(
        "Pikes",
        "Pikes",
        &facts,
        "[units.d.state]\nwounds_taken = 4\n",
    );
    let o = common::exact(&mut b, &text);
    let order = o.get("order").unwrap();
    let second = |k: i64| -> f64 {
        order
            .values
            .iter()
            .filter(|(v, _)| matches!(v, Value::Int(n) if n / 100 % 10 == k))
            .map(|(_, p)| p.to_f64())
            .sum()
    };
    assert!(order
        .values
        .iter()
        .all(|(v, _)| matches!(v, Value::Int(n) if n / 1000 == 3)));
    assert!((second(2) - 0.5).abs() < 1e-12, "{}", second(2));
    assert!((second(1) - 0.5).abs() < 1e-12, "{}", second(1));
    // Unmarked, the files go left to right after file 3: 3, 1, 2, 4 (file
    // 1's own mark puts 2 next, which it is anyway). Marked, 2 comes next,
    // and then 1 if file 2 marked in its turn, else 4.
    let p = |n: i64| order.p(Value::Int(n)).to_f64();
    assert_eq!(p(3124), 0.5);
    assert!(p(3214) > 0.0 && p(3241) > 0.0);
    assert_eq!(p(3214) + p(3241), 0.5);
}

/// The battle's charge combat on the table (4 files touching 4, the
/// facing files measured) against `muster odds` with the same facts
/// stated: the distributions agree within sampling error.
#[test]
fn a_frontal_fight_file_by_file_on_the_table_matches_the_odds() {
    let mut scene = Scene::open(RULES, "files_front.toml", &[], 0.0);
    let facts = [
        "facing_file(a, 1, d) == 4",
        "facing_file(a, 2, d) == 3",
        "facing_file(a, 3, d) == 2",
        "facing_file(a, 4, d) == 1",
    ];
    let exact = scene.exact(&situation("Pikes", "Pikes", &facts, ""));
    let mut tally = Tally::new("4 files of pikes -> 4 files of pikes");
    for seed in 0..3_000u64 {
        let mut g = scene.start(seed, false);
        if seed == 0 {
            for i in 1..=4 {
                let e = format!("facing_file(near_pikes, {i}, far_pikes)");
                assert_eq!(query(&mut scene, &g, &e), (5 - i).to_string());
            }
            assert_eq!(
                query(&mut scene, &g, "files_in_contact(near_pikes, far_pikes)"),
                "4"
            );
            assert_eq!(
                query(&mut scene, &g, "files_in_contact(near_pikes, far_columns)"),
                "0"
            );
        }
        g.play_step_named("Charge combat").unwrap();
        let got = [
            (
                "attacker_wounds",
                scene.int(&g, "near_pikes", "wounds_taken").to_string(),
            ),
            (
                "defender_wounds",
                scene.int(&g, "far_pikes", "wounds_taken").to_string(),
            ),
            (
                "attacker_broken",
                scene.bool(&g, "near_pikes", "broken").to_string(),
            ),
            (
                "defender_broken",
                scene.bool(&g, "far_pikes", "broken").to_string(),
            ),
        ];
        tally.add(&scene, seed, &exact, &got);
    }
    assert!(tally.check() >= 8);
}
