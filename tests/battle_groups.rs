//! Groups of units that move as one body: the `grouped` measure and the
//! `together g:` clause of `move`, `retire` and `charge`, played with a
//! small ruleset (tests/rulesets/groups_demo.muster) on scenarios of their
//! own (tests/scenarios/groups_*.toml). Positions are asserted from the
//! table, not from the narrative.

use muster::base::value::Value;
use muster::battle::game::{Event, Game, MovedWith, Prepared};
use muster::compile::ir::Ruleset;
use muster::front::diagnostic::render_plain;
use muster::run::battlefield::{Base, Pt};
use muster::Build;
use std::path::Path;

const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/rulesets/groups_demo.muster"
);
const SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenarios/");

/// Float noise only: the engine moves bases by exact steps here.
const TOL: f64 = 1e-9;

/// A game on a scenario, set up and not yet begun, with a build to ask
/// questions of its world in the language.
struct Table {
    build: Build,
    game: Game<'static>,
}

/// One `Move` of the log.
#[derive(Debug)]
struct Moved {
    unit: String,
    how: String,
    to: [f64; 3],
    with: Vec<MovedWith>,
}

impl Table {
    fn open(file: &str) -> Table {
        Table::open_with_seed(file, 1)
    }

    fn open_with_seed(file: &str, seed: u64) -> Table {
        let mut build = match muster::build(Path::new(RULES)) {
            Ok(b) => b,
            Err((d, s)) => panic!("{}", render_plain(&d, &s)),
        };
        let path = format!("{SCENARIOS}{file}");
        let sc = match build.scenario(Some(Path::new(&path))) {
            Ok(s) => s,
            Err(d) => panic!("{}", render_plain(&d, &build.sources)),
        };
        let rs: &'static Ruleset = Box::leak(Box::new(build.ruleset.clone()));
        let prep = match Prepared::new(rs, &sc) {
            Ok(p) => p,
            Err(d) => panic!("{}", render_plain(&d, &build.sources)),
        };
        let game = prep.start(seed, true);
        Table { build, game }
    }

    fn u(&self, name: &str) -> u16 {
        self.game
            .world
            .units
            .iter()
            .position(|u| u.name == name)
            .unwrap_or_else(|| panic!("no unit `{name}`")) as u16
    }

    fn base(&self, name: &str) -> Base {
        self.game.world.field.as_ref().unwrap().bases[self.u(name) as usize]
    }

    fn eval(&mut self, expr: &str) -> Value {
        match self.build.query_world(&self.game.world, expr) {
            Ok(v) => v.0,
            Err(d) => panic!("{expr}: {}", render_plain(&d, &self.build.sources)),
        }
    }

    fn holds(&mut self, expr: &str) -> bool {
        match self.eval(expr) {
            Value::Bool(b) => b,
            other => panic!("{expr} is {other:?}, not true or false"),
        }
    }

    fn int(&mut self, expr: &str) -> i64 {
        match self.eval(expr) {
            Value::Int(i) => i,
            other => panic!("{expr} is {other:?}, not a whole number"),
        }
    }

    fn side(&self, name: &str) -> Value {
        let s = self
            .build
            .ruleset
            .sides
            .iter()
            .position(|s| s == name)
            .unwrap_or_else(|| panic!("no side `{name}`"));
        Value::Side(s as u16)
    }

    fn decide(&mut self, decision: &str, side: &str) {
        let args = [self.side(side)];
        if let Err(d) = self.game.decide_named(decision, &args) {
            panic!("{decision}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    fn offered(&mut self, decision: &str, side: &str, unit: &str) -> Vec<(String, Base)> {
        let args = [self.side(side)];
        let u = self.u(unit);
        match self.game.offered_moves(decision, &args, u) {
            Ok(m) => m,
            Err(d) => panic!("{decision}: {}", render_plain(&[d], &self.build.sources)),
        }
    }

    fn moves(&self) -> Vec<Moved> {
        self.game
            .log
            .iter()
            .filter_map(|e| match e {
                Event::Move {
                    unit,
                    how,
                    to,
                    with,
                    ..
                } => Some(Moved {
                    unit: unit.clone(),
                    how: how.clone(),
                    to: *to,
                    with: with.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    fn moves_of(&self, unit: &str) -> Vec<Moved> {
        self.moves()
            .into_iter()
            .filter(|m| m.unit == unit)
            .collect()
    }
}

fn names(with: &[MovedWith]) -> Vec<&str> {
    with.iter().map(|m| m.unit.as_str()).collect()
}

fn assert_moved_by(before: &Base, after: &Base, dx: f64, dy: f64) {
    assert!(
        (after.centre.x - before.centre.x - dx).abs() < TOL
            && (after.centre.y - before.centre.y - dy).abs() < TOL
            && after.facing == before.facing,
        "{before:?} -> {after:?}, expected a move of ({dx}, {dy})"
    );
}

/// `grouped` links the units of one command that touch and line up, and
/// `count g: grouped(u, g)` is the size of u's group (u included).
#[test]
fn grouped_measures_the_groups() {
    let mut t = Table::open("groups_line.toml");
    assert!(t.holds("grouped(pikes_a, pikes_b) and grouped(pikes_b, bills_c)"));
    // Linked through pikes_b: not touching, still one group.
    assert!(t.holds("grouped(pikes_a, bills_c) and grouped(bills_c, pikes_a)"));
    assert!(t.holds("grouped(pikes_a, pikes_a)"));
    // Not touching; another command; the enemy.
    assert!(!t.holds("grouped(pikes_a, straggler)"));
    assert!(!t.holds("grouped(pikes_a, neighbour)"));
    assert!(t.holds("in_contact(pikes_a, neighbour)"));
    assert!(!t.holds("grouped(pikes_a, scots_pikes)"));
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
    assert_eq!(t.int("count g: grouped(bills_c, g)"), 3);
    assert_eq!(t.int("count g: grouped(straggler, g)"), 1);
    assert_eq!(t.int("count g: grouped(neighbour, g)"), 1);
    assert_eq!(t.int("count g: grouped(pikes_a, g) and g != pikes_a"), 2);
    // The slowest member sets the group's pace.
    assert_eq!(t.int("group_move(pikes_a)"), 4);
    assert_eq!(t.int("group_move(straggler)"), 6);
    // Off the table, a unit is in no group, not even its own.
    let b = t.u("pikes_b") as usize;
    t.game.world.field.as_mut().unwrap().set_on_table(b, false);
    assert!(!t.holds("grouped(pikes_b, pikes_b)"));
    assert!(!t.holds("grouped(pikes_a, pikes_b)"));
    // And without pikes_b the line falls apart.
    assert!(!t.holds("grouped(pikes_a, bills_c)"));
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 1);
}

/// A line of three advances together, at the pace of its slowest unit, and
/// is still one group after; a unit of the same command that does not
/// touch it, and a unit of another command that does, are not dragged
/// along: each makes its own move.
#[test]
fn a_line_advances_together() {
    let mut t = Table::open("groups_line.toml");
    let names_ = ["pikes_a", "pikes_b", "bills_c", "straggler", "neighbour"];
    let before: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    t.decide("march", "english");
    let after: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    for i in 0..3 {
        assert_moved_by(&before[i], &after[i], 0.0, 4.0);
    }
    // Alone, at their own pace (6).
    assert_moved_by(&before[3], &after[3], 0.0, 6.0);
    assert_moved_by(&before[4], &after[4], 0.0, 6.0);
    assert!(t.holds("grouped(pikes_a, pikes_b) and grouped(pikes_b, bills_c)"));
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
    // One move for the group, the mover's, naming the others.
    let m = t.moves_of("pikes_a");
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].how, "advances 4.0");
    assert_eq!(names(&m[0].with), ["pikes_b", "bills_c"]);
    assert_eq!(m[0].with[1].to, [14.0, 5.5, 0.0]);
    assert!(t.moves_of("pikes_b").is_empty() && t.moves_of("bills_c").is_empty());
    assert_eq!(t.moves_of("straggler").len(), 1);
    assert!(t.moves_of("straggler")[0].with.is_empty());
    assert_eq!(t.moves_of("neighbour").len(), 1);
    assert!(t.game.narrative().contains(
        "pikes_a advances 4.0 with pikes_b, bills_c: (10.0, 1.5) facing 0 -> (10.0, 5.5) facing 0"
    ));
}

/// Without `together`, the same units each go their own way.
#[test]
fn without_together_each_unit_moves_alone() {
    let mut t = Table::open("groups_line.toml");
    let before = [t.base("pikes_a"), t.base("bills_c")];
    t.decide("march_alone", "english");
    assert_moved_by(&before[0], &t.base("pikes_a"), 0.0, 6.0);
    assert_moved_by(&before[1], &t.base("bills_c"), 0.0, 4.0);
    assert!(t.moves().iter().all(|m| m.with.is_empty()));
    assert!(!t.holds("grouped(pikes_a, bills_c)"));
}

/// A wheel of the group turns the whole line about its outline's front
/// corner on the inside of the wheel, then ahead what the allowance leaves
/// (the wheel costing the chord of the outline's outer front corner): each
/// unit keeps its place in the line.
#[test]
fn a_group_wheels_about_its_outer_corner() {
    let mut t = Table::open("groups_wheel.toml");
    let names_ = ["pikes_a", "pikes_b", "pikes_c"];
    let before: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    t.decide("wheel_about", "english");
    let after: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    let m = t.moves_of("pikes_a");
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].how.starts_with("wheels"), "{}", m[0].how);
    assert_eq!(names(&m[0].with), ["pikes_b", "pikes_c"]);
    // The wheel, read from the table: every unit faces the same new way.
    let w = {
        let f = after[0].facing;
        if f > 180.0 {
            f - 360.0
        } else {
            f
        }
    };
    assert!([-45.0, -22.5, 22.5, 45.0].contains(&w), "{w}");
    for a in &after {
        assert!((a.facing - after[0].facing).abs() < TOL);
    }
    // The outline is x 9..15, front edge y = 2: a wheel right pivots on
    // (15, 2), a wheel left on (9, 2). The outer corner travels the chord
    // 2 * 6 * sin(|w| / 2); the rest of the 6 (or half of it) is straight.
    let pivot = if w > 0.0 {
        Pt::new(15.0, 2.0)
    } else {
        Pt::new(9.0, 2.0)
    };
    let r = w.to_radians();
    let chord = 12.0 * (r.abs() / 2.0).sin();
    let heading = Pt::new(r.sin(), r.cos());
    let expected = |b: &Base, d: f64| {
        // Clockwise by w about the pivot, then ahead d.
        let (x, y) = (b.centre.x - pivot.x, b.centre.y - pivot.y);
        Pt::new(
            pivot.x + x * r.cos() + y * r.sin() + heading.x * d,
            pivot.y - x * r.sin() + y * r.cos() + heading.y * d,
        )
    };
    let fits = |d: f64| {
        before
            .iter()
            .zip(&after)
            .all(|(b, a)| expected(b, d).dist(a.centre) < 1e-6)
    };
    assert!(
        fits(6.0 - chord) || fits((6.0 - chord) / 2.0),
        "{before:?} -> {after:?}"
    );
    // Rigid: every distance between units kept; still one group.
    for i in 0..3 {
        for j in 0..3 {
            let d0 = before[i].centre.dist(before[j].centre);
            let d1 = after[i].centre.dist(after[j].centre);
            assert!((d0 - d1).abs() < 1e-9);
        }
    }
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
}

/// A move that would take one member through another unit is not made: the
/// group goes only as far as that member can.
#[test]
fn a_member_in_the_way_stops_the_group() {
    let mut t = Table::open("groups_blocked.toml");
    let offered = t.offered("march", "english", "pikes_a");
    let starts = t.base("pikes_a");
    assert!(!offered.is_empty());
    for (how, end) in &offered {
        assert!(
            end.centre.y - starts.centre.y <= 2.5 + TOL,
            "{how} goes too far"
        );
    }
    assert!(offered.iter().any(|(how, _)| how == "advances 2.50"));
    let before = [t.base("pikes_a"), t.base("pikes_b"), t.base("pikes_c")];
    t.decide("march", "english");
    assert_moved_by(&before[0], &t.base("pikes_a"), 0.0, 2.5);
    assert_moved_by(&before[1], &t.base("pikes_b"), 0.0, 2.5);
    assert_moved_by(&before[2], &t.base("pikes_c"), 0.0, 2.5);
    // Its front edge where the horse's rear edge was (the horse then made
    // its own move).
    assert!((t.base("pikes_c").centre.y + 0.5 - 4.5).abs() < TOL);

    // Alone, the two on the left would have gone the whole way.
    let mut alone = Table::open("groups_blocked.toml");
    alone.decide("march_alone", "english");
    assert_moved_by(&before[0], &alone.base("pikes_a"), 0.0, 6.0);
    assert_moved_by(&before[2], &alone.base("pikes_c"), 0.0, 2.5);
}

/// A move that would take one member off the table is not offered to the
/// group: the column's front unit stops at the table's edge.
#[test]
fn a_member_at_the_edge_stops_the_group() {
    let mut t = Table::open("groups_edge.toml");
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
    let offered = t.offered("march", "english", "pikes_a");
    let hows: Vec<&str> = offered.iter().map(|(h, _)| h.as_str()).collect();
    // Ahead 6: the front unit would leave the table. Ahead 3, and as far
    // as it goes (4: its front edge on the table's edge), are offered.
    assert!(!hows.contains(&"advances 6.0"), "{hows:?}");
    assert!(hows.contains(&"advances 3.0"), "{hows:?}");
    assert!(hows.contains(&"advances 4.00"), "{hows:?}");
    let start = t.base("pikes_a");
    for (how, end) in &offered {
        assert!(end.centre.y - start.centre.y <= 4.0 + TOL, "{how}");
    }
    t.decide("march", "english");
    let front = t.base("pikes_front");
    assert!(front.centre.y + 0.5 <= 24.0 + TOL, "{front:?}");
    assert!(
        t.base("pikes_a").centre.y > start.centre.y,
        "the group moved"
    );
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
}

/// A group falls back together, as far as the way behind its members
/// allows (in quarters); a unit alone falls back the whole distance.
#[test]
fn a_group_falls_back_together() {
    let mut t = Table::open("groups_retire.toml");
    let before = [
        t.base("pikes_a"),
        t.base("pikes_b"),
        t.base("pikes_c"),
        t.base("loner"),
    ];
    t.decide("fall_back", "english");
    // The horse 1.5 behind pikes_c holds the whole group to 1.5.
    for (i, n) in ["pikes_a", "pikes_b", "pikes_c"].iter().enumerate() {
        assert_moved_by(&before[i], &t.base(n), 0.0, -1.5);
    }
    assert_moved_by(&before[3], &t.base("loner"), 0.0, -3.0);
    let m = t.moves_of("pikes_a");
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].how, "falls back 1.5");
    assert_eq!(names(&m[0].with), ["pikes_b", "pikes_c"]);
    assert!(t.moves_of("pikes_b").is_empty() && t.moves_of("pikes_c").is_empty());
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
}

/// A group of two charges as one body: the charger (on the left) has no
/// enemy ahead of it, its neighbour does, and the group goes straight on
/// until the neighbour touches the enemy. `then` runs once, for the
/// charger; the neighbour does not charge again.
#[test]
fn a_group_of_two_charges() {
    let mut t = Table::open("groups_charge.toml");
    assert!(!t.holds("reachable(pikes_a, scots_pikes, 6, 0)"));
    let before = [t.base("pikes_a"), t.base("pikes_b")];
    t.decide("charges", "english");
    assert_moved_by(&before[0], &t.base("pikes_a"), 0.0, 3.0);
    assert_moved_by(&before[1], &t.base("pikes_b"), 0.0, 3.0);
    assert!(t.holds("in_contact(pikes_b, scots_pikes)"));
    assert!(!t.holds("in_contact(pikes_a, scots_pikes)"));
    let m = t.moves();
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].unit, "pikes_a");
    assert_eq!(m[0].how, "charges scots_pikes");
    assert_eq!(names(&m[0].with), ["pikes_b"]);
    assert_eq!(m[0].to, [10.0, 4.5, 0.0]);
    let hits: Vec<&Event> = t
        .game
        .log
        .iter()
        .filter(|e| matches!(e, Event::Procedure { name, .. } if name == "hit"))
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    match hits[0] {
        Event::Procedure { args, .. } => assert_eq!(args, &["pikes_a", "scots_pikes"]),
        _ => unreachable!(),
    }
}

/// Two charges at each other in one decision, a group's and a single
/// unit's, meet half way: the group (first in the scenario) goes half the
/// straight distance, and the enemy closes the rest when its own charge
/// comes.
#[test]
fn a_group_and_its_target_meet_half_way() {
    let mut t = Table::open("groups_charge.toml");
    let before = [t.base("pikes_a"), t.base("pikes_b")];
    let args: [Value; 0] = [];
    if let Err(d) = t.game.decide_named("all_charges", &args) {
        panic!("{}", render_plain(&[d], &t.build.sources));
    }
    let m = t.moves_of("pikes_a");
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].how, "charges scots_pikes, meeting half way");
    assert_eq!(names(&m[0].with), ["pikes_b"]);
    assert_moved_by(&before[0], &t.base("pikes_a"), 0.0, 1.5);
    assert_moved_by(&before[1], &t.base("pikes_b"), 0.0, 1.5);
    // pikes_b does not charge again; the Scots close the gap.
    assert!(t.moves_of("pikes_b").is_empty());
    assert_eq!(t.moves_of("scots_pikes").len(), 1);
    assert!(t.holds("in_contact(scots_pikes, pikes_a) or in_contact(scots_pikes, pikes_b)"));
}

/// While a group's move is weighed, each member's `touches_terrain` looks
/// along its own path: the wood ahead of pikes_c (not the mover) cuts the
/// group's allowance to 2 for the move of 6, so the group goes 3, the move
/// that keeps pikes_c out of the wood.
#[test]
fn a_members_path_decides_the_allowance() {
    let mut t = Table::open("groups_woods.toml");
    let before = [t.base("pikes_a"), t.base("pikes_c")];
    assert_eq!(t.int("group_move(pikes_a)"), 6);
    t.decide("march", "english");
    assert_moved_by(&before[0], &t.base("pikes_a"), 0.0, 3.0);
    assert_moved_by(&before[1], &t.base("pikes_c"), 0.0, 3.0);
    assert_eq!(t.moves_of("pikes_a")[0].how, "advances 3.0");
}

/// A whole game: the same seed plays the same game, and the JSON log gives
/// each member's move (`with`) only on a group's move.
#[test]
fn the_same_seed_plays_the_same_game() {
    let play = |seed| {
        let t = Table::open_with_seed("groups_line.toml", seed);
        let mut g = t.game;
        g.run().expect("the game plays");
        (g.narrative(), serde_json::to_value(&g.log).unwrap())
    };
    let (a, ja) = play(11);
    let (b, jb) = play(11);
    assert_eq!(a, b);
    assert_eq!(ja, jb);
    assert!(a.contains("advances 4.0 with pikes_b, bills_c"), "{a}");
    let moves: Vec<&serde_json::Value> = ja
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "move")
        .collect();
    let grouped = moves
        .iter()
        .find(|e| e["unit"] == "pikes_a")
        .expect("pikes_a moves");
    assert_eq!(grouped["with"][0]["unit"], "pikes_b");
    assert_eq!(grouped["with"][1]["unit"], "bills_c");
    assert!(grouped["with"][1]["from"].is_array() && grouped["with"][1]["to"].is_array());
    let alone = moves
        .iter()
        .find(|e| e["unit"] == "straggler")
        .expect("the straggler moves");
    assert!(alone.get("with").is_none(), "{alone}");
    insta::assert_snapshot!("groups_line_seed_11", a);
}

/// `back_wheel`: a group retires with a wheel (Thistle §Movement: "retire
/// at 1/2 speed including a wheel") as one body: the outline wheels about
/// its inner front corner as `wheel` does (costing the chord of its outer
/// front corner), then goes straight back with what is left, or half of it.
/// The policy here wants to be as far from the enemy as it can.
#[test]
fn a_group_retires_with_a_wheel() {
    let mut t = Table::open("groups_back_wheel.toml");
    let names_ = ["pikes_a", "pikes_b", "pikes_c"];
    let before: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    let gap = t.eval("gap_to_enemy(pikes_a)");
    // Every back wheel is offered, each either way, whole and half.
    let offered = t.offered("retire_wheeling", "english", "pikes_a");
    assert_eq!(offered.len(), 8, "{offered:?}");
    assert!(offered
        .iter()
        .all(|(how, _)| how.contains("and moves back")));
    t.decide("retire_wheeling", "english");
    let after: Vec<Base> = names_.iter().map(|n| t.base(n)).collect();
    let m = t.moves_of("pikes_a");
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].how.starts_with("wheels"), "{}", m[0].how);
    assert!(m[0].how.contains("and moves back"), "{}", m[0].how);
    assert_eq!(names(&m[0].with), ["pikes_b", "pikes_c"]);
    let f = after[0].facing;
    let w = if f > 180.0 { f - 360.0 } else { f };
    assert!([-45.0, -22.5, 22.5, 45.0].contains(&w), "{w}");
    // The outline is x 9..15, front edge y = 12.5.
    let pivot = if w > 0.0 {
        Pt::new(15.0, 12.5)
    } else {
        Pt::new(9.0, 12.5)
    };
    let r = w.to_radians();
    let chord = 12.0 * (r.abs() / 2.0).sin();
    let heading = Pt::new(r.sin(), r.cos());
    let expected = |b: &Base, d: f64| {
        // Clockwise by w about the pivot, then back d.
        let (x, y) = (b.centre.x - pivot.x, b.centre.y - pivot.y);
        Pt::new(
            pivot.x + x * r.cos() + y * r.sin() - heading.x * d,
            pivot.y - x * r.sin() + y * r.cos() - heading.y * d,
        )
    };
    let fits = |d: f64| {
        before
            .iter()
            .zip(&after)
            .all(|(b, a)| expected(b, d).dist(a.centre) < 1e-6 && (a.facing - f).abs() < TOL)
    };
    assert!(
        fits(6.0 - chord) || fits((6.0 - chord) / 2.0),
        "{before:?} -> {after:?}"
    );
    // Further from the enemy than it started, and still one group.
    let further = format!("gap_to_enemy(pikes_a) > {}", show(gap));
    assert!(t.holds(&further), "{after:?}");
    assert_eq!(t.int("count g: grouped(pikes_a, g)"), 3);
}

/// A number of the rules written back as an expression.
fn show(v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Frac(n, d) => format!("{n} / {d}"),
        other => panic!("{other:?} is not a number"),
    }
}
