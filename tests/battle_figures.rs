//! Tilly's Very Bad Day v1 played on the table: the book's figures of
//! charges, point blank shooting and rallying back (Figures 11, 12 and 14),
//! the optional evade and melees of several units (which have no figure:
//! small scenes built from the book's words), a melee of two units sampled
//! against `muster odds`' exact distribution, and the facts the table measures (command range, zones of
//! control, position, blocking terrain, difficult terrain, hills), each run through
//! the ruleset's own decisions and procedures on a scenario of its own
//! (tests/scenarios/tvbd_*.toml).
//!
//! The book's figures are lost from its text: each scenario reconstructs its
//! figure from the book's words and says so.
//!
//! §Deployment keeps both armies out of the 8 TUM neutral zone across the
//! middle of the table (the ruleset's `legal_deployment`), so two enemies
//! never deploy closer than 8 TUM, while the figures need them within charge
//! reach (3 TUM). So every scenario writes the second army's units
//! `FIGURE_SHIFT` (10) TUM further back than the figure has them, and
//! [`Figure::open`] moves each of them 10 TUM toward the first army after
//! `Prepared::new` has checked the deployment (writing the bases of
//! `game.world.field`), before anything is played.

use crate::common;

use common::scene::{Scene, Tally};
use muster::base::value::Value;
use muster::battle::game::{Event, Game};
use muster::compile::ir::Search;
use muster::front::diagnostic::render_plain;
use muster::run::battlefield::{bearing, norm_angle, Base, Pt};
use muster::Build;

const RULES: &str = "rules/tillys_very_bad_day.muster";

/// How far each scenario writes the second army's units behind where its
/// figure has them (see the module doc).
const FIGURE_SHIFT: f64 = 10.0;

/// Positions are asserted to this much (TUM).
const TOL: f64 = 0.05;

/// A figure on the table: a game set up from a scenario and not yet begun
/// (army 0 the attacker, army 1 the defender), and a build to ask questions
/// of its world in the language.
struct Figure {
    build: Build,
    game: Game<'static>,
}

/// One `Move` of the log: unit, how, from and to as (x, y, facing).
#[derive(Debug)]
struct Moved {
    unit: String,
    how: String,
    from: [f64; 3],
    to: [f64; 3],
}

/// A figure's scenario set up once, to be started on many seeds (a
/// sampled test plays one step thousands of times), the second army
/// closed up to where its figure has it.
fn scene(file: &str, options: &[(&str, bool)]) -> Scene {
    Scene::open(RULES, file, options, FIGURE_SHIFT)
}

impl Figure {
    fn open(file: &str) -> Figure {
        Figure::open_with_seed(file, 1)
    }

    fn open_with_seed(file: &str, seed: u64) -> Figure {
        Figure::open_with(file, seed, &[])
    }

    /// A figure with optional rules switched (`("evade", true)`), as
    /// `--option` switches them.
    fn open_with(file: &str, seed: u64, options: &[(&str, bool)]) -> Figure {
        Figure::open_searching(file, seed, options, None)
    }

    /// A figure whose players search for moves the way `search` says
    /// (None: as their policies say). The tests of the fan of moves the
    /// rules offer ask the thorough search, which tries every manoeuvre
    /// (the shipped policies search purposefully, toward their purposes).
    fn open_searching(
        file: &str,
        seed: u64,
        options: &[(&str, bool)],
        search: Option<Search>,
    ) -> Figure {
        let mut scene = scene(file, options);
        if search.is_some() {
            scene.prep.search = vec![search; scene.prep.policy.len()];
        }
        let game = scene.start(seed, true);
        let f = Figure {
            build: scene.build,
            game,
        };
        f.assert_no_overlaps();
        f
    }

    fn u(&self, name: &str) -> u16 {
        self.game
            .world
            .units
            .iter()
            .position(|u| u.name == name)
            .unwrap_or_else(|| panic!("no unit `{name}`")) as u16
    }

    fn unit(&self, name: &str) -> Value {
        Value::Unit(self.u(name))
    }

    /// Evaluate an expression of the language against the game's world,
    /// units bound by name: (value, as shown).
    fn eval(&mut self, expr: &str) -> (Value, String) {
        match self.build.query_world(&self.game.world, expr) {
            Ok(v) => v,
            Err(d) => panic!("{expr}: {}", render_plain(&d, &self.build.sources)),
        }
    }

    fn holds(&mut self, expr: &str) -> bool {
        match self.eval(expr).0 {
            Value::Bool(b) => b,
            other => panic!("{expr} is {other:?}, not true or false"),
        }
    }

    fn shown(&mut self, expr: &str) -> String {
        self.eval(expr).1
    }

    fn base(&self, name: &str) -> Base {
        self.game.world.field.as_ref().unwrap().bases[self.u(name) as usize]
    }

    fn on_table(&self, name: &str) -> bool {
        self.game.world.field.as_ref().unwrap().on_table[self.u(name) as usize]
    }

    fn set_state(&mut self, name: &str, state: &str, v: Value) {
        let rs = &self.build.ruleset;
        let s = rs
            .state(state)
            .unwrap_or_else(|| panic!("no state `{state}`")) as usize;
        let i = self.u(name) as usize * rs.states.len() + s;
        self.game.world.state[i] = v;
    }

    fn perform(&mut self, proc: &str, units: &[&str]) {
        let args: Vec<Value> = units.iter().map(|n| self.unit(n)).collect();
        if let Err(d) = self.game.perform_named(proc, &args) {
            panic!("{proc}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    fn decide(&mut self, decision: &str, args: &[Value]) {
        if let Err(d) = self.game.decide_named(decision, args) {
            panic!("{decision}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    /// Play the step of the ruleset's sequence called `name`, all of it.
    fn step(&mut self, name: &str) {
        if let Err(d) = self.game.play_step_named(name) {
            panic!("{name}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    /// Step 3.4 Melee: who fought whom (each `engage` of the log, as
    /// (unit, its opponent)).
    fn melee(&mut self) -> Vec<[String; 2]> {
        self.step("Step 3.4 Melee");
        self.runs_of("engage")
            .into_iter()
            .map(|a| [a[0].clone(), a[1].clone()])
            .collect()
    }

    /// The `Move` events of the log, in order.
    fn moves(&self) -> Vec<Moved> {
        self.game
            .log
            .iter()
            .filter_map(|e| match e {
                Event::Move {
                    unit,
                    how,
                    from,
                    to,
                    ..
                } => Some(Moved {
                    unit: unit.clone(),
                    how: how.clone(),
                    from: *from,
                    to: *to,
                }),
                _ => None,
            })
            .collect()
    }

    /// The arguments of every run of procedure `name` in the log.
    fn runs_of(&self, name: &str) -> Vec<Vec<String>> {
        self.game
            .log
            .iter()
            .filter_map(|e| match e {
                Event::Procedure { name: n, args, .. } if n == name => Some(args.clone()),
                _ => None,
            })
            .collect()
    }

    /// No two bases on the table overlap (touching is allowed).
    fn assert_no_overlaps(&self) {
        let f = self.game.world.field.as_ref().unwrap();
        let units = &self.game.world.units;
        for a in 0..f.bases.len() {
            for b in 0..a {
                if f.on_table[a] && f.on_table[b] {
                    assert!(
                        !f.bases[a].overlaps(&f.bases[b]),
                        "{} and {} overlap: {:?} / {:?}",
                        units[a].name,
                        units[b].name,
                        f.bases[a],
                        f.bases[b]
                    );
                }
            }
        }
    }

    fn narrative(&self) -> String {
        self.game.narrative()
    }
}

fn assert_at(f: &Figure, name: &str, x: f64, y: f64, facing: f64) {
    let b = f.base(name);
    assert!(
        (b.centre.x - x).abs() <= TOL
            && (b.centre.y - y).abs() <= TOL
            && norm_angle(b.facing - facing).abs() <= 0.5,
        "{name} is at ({:.3}, {:.3}) facing {:.1}, expected ({x}, {y}) facing {facing}",
        b.centre.x,
        b.centre.y,
        b.facing
    );
}

const ATTACKER: Value = Value::Side(0);
const DEFENDER: Value = Value::Side(1);

// ---------------------------------------------------------------- Figure 11

/// §Step 3.2 Charge, Figure 11 (A): "the Imperialist horse and Weimarian
/// horse declare charges on each other. Both charges happen, with the
/// Weimarians as the attacker moving first, and the two units meet half way."
#[test]
fn figure_11a_horse_charging_each_other_meet_half_way() {
    let mut f = Figure::open("tvbd_fig11a_horse_meet_half_way.toml");
    assert!(f.holds("may_declare_charge(weimarian_horse, imperialist_horse)"));
    assert!(f.holds("may_declare_charge(imperialist_horse, weimarian_horse)"));
    assert_eq!(f.shown("distance(weimarian_horse, imperialist_horse)"), "2");

    f.perform("declare_charge", &["weimarian_horse", "imperialist_horse"]);
    f.perform("declare_charge", &["imperialist_horse", "weimarian_horse"]);
    // Both charges happen: neither cancels the other (front on, horse on horse).
    assert!(f.holds("charges(weimarian_horse, imperialist_horse)"));
    assert!(f.holds("charges(imperialist_horse, weimarian_horse)"));
    assert!(!f.holds("charge_cancelled(weimarian_horse)"));
    assert!(!f.holds("charge_cancelled(imperialist_horse)"));
    // §Conduct charges: attacker cavalry (1) before defender cavalry (2).
    assert_eq!(f.shown("charge_order(weimarian_horse)"), "1");
    assert_eq!(f.shown("charge_order(imperialist_horse)"), "2");

    f.decide("charge_moves", &[]);

    // The attacker's horse moved first, then the defender's.
    let moves = f.moves();
    let who: Vec<&str> = moves.iter().map(|m| m.unit.as_str()).collect();
    assert_eq!(who, ["weimarian_horse", "imperialist_horse"], "{moves:?}");
    // Each covered half the 2 TUM between them, straight ahead: the front
    // edges meet at y = 10.5, half way between 9.5 and 11.5.
    assert_at(&f, "weimarian_horse", 22.5, 10.0, 0.0);
    assert_at(&f, "imperialist_horse", 22.5, 11.0, 180.0);
    for m in &moves {
        let d = Pt::new(m.from[0], m.from[1]).dist(Pt::new(m.to[0], m.to[1]));
        assert!((d - 1.0).abs() <= TOL, "{} moved {d}", m.unit);
    }
    assert!(f.holds("in_contact(weimarian_horse, imperialist_horse)"));
    f.assert_no_overlaps();
}

/// §Step 3.2 and §Step 3.4: both horse of Figure 11 (A) charged, so both are
/// charging in the melee that follows (Table 1 note 2: horse charging
/// anything but the front of pike+shot hit on 4-6), and the two fight one
/// melee. (At commit 3478fd4 the horse that moved first, stopping short of
/// contact half way, was never noted as charging.)
#[test]
fn figure_11a_both_horse_count_as_charging() {
    let mut f = Figure::open("tvbd_fig11a_horse_meet_half_way.toml");
    f.perform("declare_charge", &["weimarian_horse", "imperialist_horse"]);
    f.perform("declare_charge", &["imperialist_horse", "weimarian_horse"]);
    f.decide("charge_moves", &[]);
    assert!(f.holds("charging(imperialist_horse)"));
    assert!(f.holds("charging(weimarian_horse)"));
    assert_eq!(
        f.shown("melee_to_hit(weimarian_horse, imperialist_horse)"),
        "4"
    );
    assert_eq!(
        f.shown("melee_to_hit(imperialist_horse, weimarian_horse)"),
        "4"
    );
    // Each fights the other, each the primary unit against the other.
    assert_eq!(
        f.melee(),
        [
            ["weimarian_horse", "imperialist_horse"].map(String::from),
            ["imperialist_horse", "weimarian_horse"].map(String::from),
        ]
    );
    assert!(!f.holds("secondary(weimarian_horse) or secondary(imperialist_horse)"));
}

/// §Step 3.2 Charge, Figure 11 (B): the French horse charges the Spanish
/// pike+shot and shot side by side; the Spanish do not bother declaring;
/// the pike+shot has already fired and cannot shoot point blank, the shot
/// reserved its fire and can.
///
/// The ruleset's `declare_charges` takes one target per charger (the book's
/// horse "declare a charge on the two Spanish infantry units"). The default
/// policy's `charge_prospect` declares on the shot (3 dice at 4-6 against
/// 3 at 6: 9 - 3 = 6) rather than the pike+shot (3 at 5-6 against its front,
/// 4 at 5-6: 6 - 8 = -2). The charge straight ahead then contacts both.
#[test]
fn figure_11b_horse_charges_two_foot_and_only_the_shot_may_fire() {
    let mut f = Figure::open("tvbd_fig11b_horse_charges_two_foot.toml");
    // The Spanish pike+shot has already fired this turn.
    f.set_state("spanish_pike_shot", "shot_this_turn", Value::Bool(true));

    assert!(f.holds("may_declare_charge(french_horse, spanish_pike_shot)"));
    assert!(f.holds("may_declare_charge(french_horse, spanish_shot)"));
    assert_eq!(f.shown("charge_prospect(french_horse, spanish_shot)"), "6");
    assert_eq!(
        f.shown("charge_prospect(french_horse, spanish_pike_shot)"),
        "-2"
    );
    f.decide("declare_charges", &[ATTACKER]);
    assert!(f.holds("declared_charge(french_horse, spanish_shot)"));
    assert!(!f.holds("declared_charge(french_horse, spanish_pike_shot)"));

    // The Spanish player does not bother: the pike+shot may not (it shot),
    // and the shot's charge would be pre-empted by the cavalry charge on it.
    assert!(!f.holds("may_declare_charge(spanish_pike_shot, french_horse)"));
    f.decide("declare_charges", &[DEFENDER]);
    assert!(!f
        .holds("any x: declared_charge(spanish_shot, x) or declared_charge(spanish_pike_shot, x)"));
    assert!(f.holds("charge_cancelled(spanish_shot)"));

    f.decide("charge_moves", &[]);
    // Straight ahead 2 TUM, across the join: in contact with both.
    let moves = f.moves();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!(moves[0].unit, "french_horse");
    assert_at(&f, "french_horse", 22.5, 11.0, 0.0);
    assert!(f.holds("engaged(spanish_shot, french_horse)"));
    assert!(f.holds("engaged(spanish_pike_shot, french_horse)"));
    assert!(f.holds("charging(french_horse)"));
    f.assert_no_overlaps();

    // §Step 3.3: the shot reserved its fire and may shoot point blank; the
    // pike+shot has already shot.
    assert!(f.holds("may_shoot_point_blank(spanish_shot, french_horse)"));
    assert!(!f.holds("may_shoot_point_blank(spanish_pike_shot, french_horse)"));
}

/// Figure 11 (B) when the horse's declaration names the pike+shot (as legal
/// a declaration as on the shot): the charge still meets both units, and in
/// the book the horse charges both, so the shot, which reserved its fire, may
/// still shoot point blank (the ruleset's reading in `charged_by`).
#[test]
fn figure_11b_the_other_unit_the_charge_meets_is_also_its_target() {
    let mut f = Figure::open("tvbd_fig11b_horse_charges_two_foot.toml");
    f.set_state("spanish_pike_shot", "shot_this_turn", Value::Bool(true));
    assert!(f.holds("may_declare_charge(french_horse, spanish_pike_shot)"));
    f.perform("declare_charge", &["french_horse", "spanish_pike_shot"]);
    f.decide("charge_moves", &[]);
    assert!(f.holds("engaged(spanish_shot, french_horse)"));
    assert!(f.holds("engaged(spanish_pike_shot, french_horse)"));
    assert!(f.holds("may_shoot_point_blank(spanish_shot, french_horse)"));
    // Cancellation is settled from the declarations before any charge moves
    // (§Cancel charges): the shot declared nothing, so there is nothing of
    // its to cancel, and no declaration names it.
    assert!(!f.holds("charge_cancelled(spanish_shot)"));
}

/// §Cancel charges, Figure 11 (C): "the French pike+shot unit declares a
/// charge on the Spanish pike+shot unit. However, the Spanish horse unit also
/// declared a charge on the French pike+shot unit ... the French charge
/// declaration is cancelled."
#[test]
fn figure_11c_cavalry_charge_cancels_the_infantry_charge_on_it() {
    let mut f = Figure::open("tvbd_fig11c_charge_cancelled.toml");
    assert!(f.holds("may_declare_charge(french_pike_shot, spanish_pike_shot)"));
    assert!(f.holds("may_declare_charge(spanish_horse, french_pike_shot)"));
    f.perform("declare_charge", &["french_pike_shot", "spanish_pike_shot"]);
    f.perform("declare_charge", &["spanish_horse", "french_pike_shot"]);

    assert!(f.holds("charge_cancelled(french_pike_shot)"));
    assert!(!f.holds("charges(french_pike_shot, spanish_pike_shot)"));
    assert!(!f.holds("charge_cancelled(spanish_horse)"));
    assert!(f.holds("charges(spanish_horse, french_pike_shot)"));

    f.decide("charge_moves", &[]);
    // Only the horse moved: 2 TUM straight ahead onto the French front.
    let moves = f.moves();
    let who: Vec<&str> = moves.iter().map(|m| m.unit.as_str()).collect();
    assert_eq!(who, ["spanish_horse"], "{moves:?}");
    assert_at(&f, "spanish_horse", 24.0, 10.0, 180.0);
    assert_at(&f, "french_pike_shot", 23.0, 9.0, 0.0);
    assert_at(&f, "spanish_pike_shot", 22.0, 12.0, 180.0);
    assert!(f.holds("in_contact(spanish_horse, french_pike_shot)"));
    assert!(!f.holds("in_contact(french_pike_shot, spanish_pike_shot)"));
    assert!(f.holds("charging(spanish_horse)"));
    assert!(!f.holds("charging(french_pike_shot)"));
    // §Step 3.3: "A unit that had its own charge cancelled can ... conduct
    // point blank shooting."
    assert!(f.holds("may_shoot_point_blank(french_pike_shot, spanish_horse)"));
    f.assert_no_overlaps();
}

/// §Charge front before flank and §Cancel charges, Figure 11 (D): the
/// Weimarian pike+shot may declare only on the cannons to its front, not on
/// the Imperialist pike+shot to its flank; that pike+shot has no enemy to
/// front, so it may wheel to charge the Weimarians' flank; its declaration
/// cancels the Weimarian charge and the guns are saved.
#[test]
fn figure_11d_flank_charge_cancels_the_charge_on_the_guns() {
    let mut f = Figure::open("tvbd_fig11d_guns_saved.toml");
    // The Weimarians: the cannons to front, in reach straight ahead.
    assert_eq!(
        f.shown("position(weimarian_pike_shot, imperialist_cannons)"),
        "to_front"
    );
    assert!(f.holds("may_declare_charge(weimarian_pike_shot, imperialist_cannons)"));
    // The Imperialist pike+shot is to their flank, and in reach with a
    // wheel: only "front before flank" forbids it.
    assert_eq!(
        f.shown("position(weimarian_pike_shot, imperialist_pike_shot)"),
        "to_flank"
    );
    assert!(f.holds("can_reach(weimarian_pike_shot, imperialist_pike_shot)"));
    assert!(f.holds("enemy_in_reach_to_front(weimarian_pike_shot)"));
    assert!(!f.holds("may_declare_charge(weimarian_pike_shot, imperialist_pike_shot)"));
    // The Imperialists: no enemy to front; the Weimarians to flank, in
    // reach with a wheel.
    assert!(!f.holds("enemy_in_reach_to_front(imperialist_pike_shot)"));
    assert_eq!(
        f.shown("position(imperialist_pike_shot, weimarian_pike_shot)"),
        "to_flank"
    );
    assert!(f.holds("can_reach(imperialist_pike_shot, weimarian_pike_shot)"));
    assert!(f.holds("may_declare_charge(imperialist_pike_shot, weimarian_pike_shot)"));

    f.perform(
        "declare_charge",
        &["weimarian_pike_shot", "imperialist_cannons"],
    );
    f.perform(
        "declare_charge",
        &["imperialist_pike_shot", "weimarian_pike_shot"],
    );
    // A charge on its flank cancels the Weimarians' own.
    assert!(f.holds("charge_cancelled(weimarian_pike_shot)"));
    assert!(!f.holds("charges(weimarian_pike_shot, imperialist_cannons)"));
    assert!(f.holds("charges(imperialist_pike_shot, weimarian_pike_shot)"));

    f.decide("charge_moves", &[]);
    let moves = f.moves();
    let who: Vec<&str> = moves.iter().map(|m| m.unit.as_str()).collect();
    assert_eq!(who, ["imperialist_pike_shot"], "{moves:?}");
    assert!(moves[0].how.starts_with("wheels +"), "{moves:?}");
    assert!(f.holds("in_contact(imperialist_pike_shot, weimarian_pike_shot)"));
    assert_at(&f, "weimarian_pike_shot", 22.5, 9.0, 0.0);
    assert_at(&f, "imperialist_cannons", 21.5, 11.5, 180.0);
    assert!(!f.holds("in_contact(weimarian_pike_shot, imperialist_cannons)"));
    f.assert_no_overlaps();

    // The melee step: the only melee is the Imperialist charge; the guns,
    // never contacted, are saved.
    assert_eq!(
        f.melee(),
        [
            ["weimarian_pike_shot", "imperialist_pike_shot"].map(String::from),
            ["imperialist_pike_shot", "weimarian_pike_shot"].map(String::from),
        ]
    );
    assert!(f.on_table("imperialist_cannons"));
    assert!(!f.holds("imperialist_cannons.routed"));
    insta::assert_snapshot!("figure_11d_narrative", f.narrative());
}

/// §Charge front before flank: "If a unit, other than commanders, has enemy
/// within charge reach to front, then it must charge straight ahead, with
/// no change of direction." The target stands askew; straight ahead reaches
/// it (2.7 TUM), and so would a cheaper wheel of 10 degrees (2.5 TUM).
#[test]
fn a_charge_at_an_enemy_to_front_goes_straight_ahead() {
    let mut f = Figure::open("tvbd_charge_straight_ahead.toml");
    assert_eq!(
        f.shown("position(french_pike_shot, spanish_pike_shot)"),
        "to_front"
    );
    assert!(f.holds("can_reach(french_pike_shot, spanish_pike_shot)"));
    f.perform("declare_charge", &["french_pike_shot", "spanish_pike_shot"]);
    f.decide("charge_moves", &[]);
    let moves = f.moves();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert!(f.holds("in_contact(french_pike_shot, spanish_pike_shot)"));
    // Straight ahead: facing and x kept.
    assert_eq!(moves[0].how, "charges spanish_pike_shot", "{moves:?}");
    let b = f.base("french_pike_shot");
    assert!(
        b.facing.abs() < 1e-9 && (b.centre.x - 24.5).abs() < 1e-9,
        "{b:?}"
    );
}

// ---------------------------------------------------------------- commander charges

/// §Commander charges, both ways the book allows, in one scene
/// (tvbd_commander_charges.toml), played through Steps 3.1, 3.2 and 3.4:
///
/// - the horse charges the shot 1.5 TUM ahead (the default policy:
///   3 dice at 4-6 against 3 at 6), and its general, touching its rear,
///   charges with it: he moves the same 1.5 TUM, after the horse (§Conduct
///   charges: commanders last), and is still attached to it;
/// - the pike+shot is locked in melee (its front on the Spanish pike+shot's
///   since an earlier turn); its general, 1.5 TUM behind it, charges to
///   attach to it, straight ahead into contact with its rear.
///
/// Neither general is a charger in the melee (he never initiates one); each
/// adds his die to the unit he is attached to. The Spanish general, far
/// from every friend, does not charge. On a873aa1 commanders never charged:
/// the horse's general was left behind, and neither unit had a commander's
/// die.
#[test]
fn a_commander_charges_with_his_unit_and_to_attach_to_one_locked_in_melee() {
    let mut f = Figure::open("tvbd_commander_charges.toml");
    assert!(f.holds("locked_in_melee(pike) and locked_in_melee(spanish_pike)"));
    assert!(f.holds("attached(horse) == horse_general"));
    assert!(f.holds("attached(pike) == none"));
    f.step("Step 3.1 Declare Charge");
    assert!(f.holds("declared_charge(horse, shot)"));
    assert!(f.holds("declared_join(horse_general, horse)"));
    assert!(f.holds("declared_join(foot_general, pike)"));
    assert!(!f.holds("any x: declared_join(spanish_general, x)"));
    f.step("Step 3.2 Charge");
    let moves = f.moves();
    let who: Vec<(&str, &str)> = moves
        .iter()
        .map(|m| (m.unit.as_str(), m.how.as_str()))
        .collect();
    assert_eq!(
        who,
        [
            ("horse", "charges shot"),
            ("horse_general", "charges to join horse"),
            ("foot_general", "charges to join pike"),
        ],
        "{moves:?}"
    );
    assert_at(&f, "horse", 14.0, 10.5, 0.0);
    assert_at(&f, "horse_general", 14.0, 9.5, 0.0);
    assert_at(&f, "foot_general", 25.0, 8.0, 0.0);
    f.assert_no_overlaps();
    assert!(f.holds("attached(horse) == horse_general"));
    assert!(f.holds("attached(pike) == foot_general"));
    assert!(f.holds("charging(horse)"));
    assert!(!f.holds("charging(horse_general) or charging(foot_general)"));
    f.step("Step 3.3 Point Blank Shooting");
    f.step("Step 3.4 Melee");
    for unit in ["horse", "pike"] {
        let struck = outcomes_of(&f, "strike", unit);
        assert_eq!(struck.len(), 1, "{}", f.narrative());
        assert!(
            struck[0].contains(&("commander".to_string(), "true".to_string())),
            "{unit}: {:?}",
            struck[0]
        );
    }
}

/// §Commander charges: a commander charges only with, or to attach to, a
/// friend that is charging or locked in melee; he never charges an enemy
/// (§Charging criteria: "a unit, other than commanders"), and one already
/// attached to a unit locked in melee needs no charge to stay.
#[test]
fn a_commander_charges_only_to_join_a_fight() {
    let mut f = Figure::open("tvbd_commander_charges.toml");
    assert!(!f.holds("any t: may_declare_charge(horse_general, t)"));
    // Before any declaration the horse is not charging: its general may not
    // join it yet, but the foot general may join the locked pike+shot.
    assert!(!f.holds("may_join_charge(horse_general, horse)"));
    assert!(f.holds("may_join_charge(foot_general, pike)"));
    assert!(!f.holds("may_join_charge(foot_general, spanish_pike)"));
    assert!(!f.holds("may_join_charge(spanish_general, spanish_pike)"));
    f.perform("declare_charge", &["horse", "shot"]);
    assert!(f.holds("may_join_charge(horse_general, horse)"));
    // Too far from the horse (11 TUM) to reach it with a charge.
    assert!(!f.holds("may_join_charge(foot_general, horse)"));
    f.perform("declare_join", &["foot_general", "pike"]);
    f.decide("charge_moves", &[]);
    assert!(f.holds("attached(pike) == foot_general"));
    // Attached to the locked pike+shot, he has no charge to make.
    assert!(!f.holds("may_join_charge(foot_general, pike)"));
}

// ---------------------------------------------------------------- facing in melee

/// §Fighting to flank or rear: "On the following turns the unit can change
/// facing, if there is space, to increase its strength in melee." Three
/// French units locked in melee, a Spanish horse's front against the right
/// flank of each (tvbd_facing_in_melee.toml), each fighting with 1 die. In
/// the French Move step (Step 1.1):
///
/// - pike_a turns to face its horse (a turn of 90 degrees) and closes up
///   against it: from (15, 10) facing 0 to (15.5, 10) facing 90, its front
///   on the horse's; it now fights with its 4 resolve dice;
/// - pike_b would, but turned its base would lie on the French shot 0.3 TUM
///   behind it: no space, it stays, still at 1 die;
/// - the rabble only wheels, so it may not turn.
///
/// On a873aa1 a unit locked in melee never changed facing.
#[test]
fn a_unit_locked_in_melee_turns_to_face_a_flank_attacker_if_there_is_space() {
    let mut f = Figure::open("tvbd_facing_in_melee.toml");
    for (u, h) in [
        ("pike_a", "horse_a"),
        ("pike_b", "horse_b"),
        ("rabble", "horse_r"),
    ] {
        assert!(f.holds(&format!("locked_in_melee({u})")), "{u}");
        assert!(f.holds(&format!("position({u}, {h}) is to_flank")), "{u}");
        assert_eq!(f.shown(&format!("melee_dice({u}, {h})")), "1", "{u}");
    }
    assert!(f.holds("may_face(pike_a, horse_a) and may_face(pike_b, horse_b)"));
    assert!(!f.holds("may_face(rabble, horse_r)"));
    f.step("Step 1.1 Attacker Move");
    let moves = f.moves();
    let turned: Vec<(&str, &str)> = moves
        .iter()
        .filter(|m| m.how.starts_with("turns to face"))
        .map(|m| (m.unit.as_str(), m.how.as_str()))
        .collect();
    assert_eq!(turned, [("pike_a", "turns to face horse_a")], "{moves:?}");
    assert_at(&f, "pike_a", 15.5, 10.0, 90.0);
    assert!(f.holds("in_contact(pike_a, horse_a) and position(pike_a, horse_a) is to_front"));
    assert_eq!(f.shown("melee_dice(pike_a, horse_a)"), "4");
    assert!(
        f.narrative()
            .contains("pike_b stays: no room to face horse_b"),
        "{}",
        f.narrative()
    );
    assert_at(&f, "pike_b", 28.0, 10.0, 0.0);
    assert_eq!(f.shown("melee_dice(pike_b, horse_b)"), "1");
    assert_at(&f, "rabble", 21.0, 10.0, 0.0);
    f.assert_no_overlaps();
}

// ---------------------------------------------------------------- Figure 12

/// §Step 3.3 Point Blank Shooting, Figure 12: the Spanish pike+shot has shot
/// at the French pike+shot; the Spanish shot reserved its fire; the French
/// horse charges straight ahead at both. The pike+shot may not fire at the
/// horse; the shot can and will. Played through the ruleset's own steps:
/// the shot (`shoot`), the declarations, the charges and Step 3.3.
#[test]
fn figure_12_only_the_unit_that_reserved_its_fire_shoots_point_blank() {
    let mut f = Figure::open_with_seed("tvbd_fig12_point_blank.toml", 12);
    // Earlier in the turn: the Spanish pike+shot shoots the French pike+shot.
    assert_eq!(
        f.shown("position(spanish_pike_shot, french_pike_shot)"),
        "to_front"
    );
    assert!(f.holds("may_shoot_at(spanish_pike_shot, french_pike_shot)"));
    f.perform("shoot", &["spanish_pike_shot", "french_pike_shot"]);
    assert!(f.holds("spanish_pike_shot.shot_this_turn"));
    // The shot could have fired at the horse, and reserves its fire.
    assert!(f.holds("may_shoot_at(spanish_shot, french_horse)"));

    // Step 3.1: the French pike+shot is beyond charge reach (3.5 TUM); the
    // horse declares (on the shot: see figure_11b); the Spanish do not.
    assert!(!f.holds("can_reach(french_pike_shot, spanish_pike_shot)"));
    f.decide("declare_charges", &[ATTACKER]);
    f.decide("declare_charges", &[DEFENDER]);
    assert!(f.holds("charges(french_horse, spanish_shot)"));
    assert!(!f.holds("any c: any t: charges(c, t) and c != french_horse"));

    // Step 3.2: straight ahead into both Spanish units.
    f.decide("charge_moves", &[]);
    assert_at(&f, "french_horse", 22.5, 11.0, 0.0);
    assert!(f.holds("engaged(spanish_pike_shot, french_horse)"));
    assert!(f.holds("engaged(spanish_shot, french_horse)"));

    // Step 3.3: only the shot fires, at the horse.
    assert!(!f.holds("may_shoot_point_blank(spanish_pike_shot, french_horse)"));
    assert!(f.holds("may_shoot_point_blank(spanish_shot, french_horse)"));
    f.decide("point_blank", &[ATTACKER]);
    f.decide("point_blank", &[DEFENDER]);
    let fired = f.runs_of("point_blank_shot");
    assert_eq!(
        fired,
        [vec!["spanish_shot".to_string(), "french_horse".to_string()]]
    );
    assert!(f.holds("spanish_shot.shot_this_turn"));
    insta::assert_snapshot!("figure_12_narrative", f.narrative());
}

// ---------------------------------------------------------------- Figure 14

/// §Step 3.5 Rally back, Figure 14 (A): French Horse 1, weakened by the
/// exchange of fire with the Spanish pike+shot, is rallied back by choice:
/// 3 TUM straight back, through French Horse 2 directly behind it (Table 4:
/// horse through horse, backwards, aligned), to stand behind it.
#[test]
fn figure_14a_voluntary_rally_back_through_the_supporting_horse() {
    let mut f = Figure::open("tvbd_fig14a_voluntary_rally_back.toml");
    // The exchange of fire "doesn't go well for the horse": 1 resolve left.
    f.set_state("french_horse_1", "resolve", Value::Int(1));
    assert!(f.holds("may_rally_back(french_horse_1)"));
    assert!(!f.holds("french_horse_1.lost_melee"));
    assert!(f.holds("aligned(french_horse_1, french_horse_2)"));
    assert!(f.holds("may_interpenetrate(french_horse_1, backwards, french_horse_2)"));
    assert!(f.holds("in_command(french_horse_1)"));
    // The default policy rallies back a horse of 1 resolve within 2 TUM of
    // the enemy, and keeps a fresh one where it is.
    f.decide("rally_back", &[ATTACKER]);

    let moves = f.moves();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!(moves[0].unit, "french_horse_1");
    assert_eq!(moves[0].how, "falls back 3.0");
    // 3 TUM straight back, facing kept: base y 6.5..7.5, clear of Horse 2
    // (y 8..9), which did not move.
    assert_at(&f, "french_horse_1", 22.5, 7.0, 0.0);
    assert_at(&f, "french_horse_2", 22.5, 8.5, 0.0);
    assert!(!f.base("french_horse_1").overlaps(&f.base("french_horse_2")));
    assert_eq!(
        f.shown("position(french_horse_2, french_horse_1)"),
        "to_rear"
    );
    f.assert_no_overlaps();
}

/// §Step 3.5 Rally back, Figure 14 (B): Weimarian Horse 1 lost its melee and
/// must rally back (no choice, no command check).
///
/// West, the book's geometry (Horse 2 touching behind Horse 1): the book's
/// horse "moves backward through the supporting unit and stops on the far
/// side, only 2 TUM from its original position". The engine's `retire`
/// always takes the full distance it can (3 TUM here), so it ends 1 TUM
/// beyond the far side, not just clear of it: both are legal backward moves
/// (§Change of direction: backwards at least 1 and at most 3 TUM); the book's
/// player chose 2, the engine takes 3.
///
/// East, Horse 2 1.5 TUM behind: the full 3 TUM would end on top of it, and
/// clearing its far side would take 3.5 TUM ("the moving unit must fully
/// clear the far side"), so the engine stops where it can, 1.5 TUM back,
/// against Horse 2's front: it does not pass through.
#[test]
fn figure_14b_compulsory_rally_back_stops_where_it_can() {
    let mut f = Figure::open("tvbd_fig14b_compulsory_rally_back.toml");
    for h in ["west_horse_1", "east_horse_1"] {
        // Inflicted 1 hit, suffered 2: lost the melee, 1 resolve left.
        f.set_state(h, "lost_melee", Value::Bool(true));
        f.set_state(h, "resolve", Value::Int(1));
        assert!(f.holds(&format!("may_rally_back({h})")));
    }
    assert!(f.holds("in_contact(west_horse_1, west_pike_shot)"));
    assert!(f.holds("in_contact(east_horse_1, east_pike_shot)"));
    f.decide("rally_back", &[ATTACKER]);

    let moves = f.moves();
    let who: Vec<&str> = moves.iter().map(|m| m.unit.as_str()).collect();
    assert_eq!(who, ["west_horse_1", "east_horse_1"], "{moves:?}");
    // West: through Horse 2 and 3 TUM back (the book: 2).
    assert_at(&f, "west_horse_1", 16.0, 7.0, 0.0);
    assert_at(&f, "west_horse_2", 16.0, 9.0, 0.0);
    assert_eq!(f.shown("position(west_horse_2, west_horse_1)"), "to_rear");
    // East: 1.5 TUM back, touching Horse 2, not through it.
    assert_at(&f, "east_horse_1", 29.0, 8.5, 0.0);
    assert_at(&f, "east_horse_2", 29.0, 7.5, 0.0);
    assert!(f.holds("in_contact(east_horse_1, east_horse_2)"));
    assert_eq!(f.shown("position(east_horse_2, east_horse_1)"), "to_front");
    // Both out of contact with the enemy; nobody on top of anybody.
    assert!(!f.holds("in_contact(west_horse_1, west_pike_shot)"));
    assert!(!f.holds("in_contact(east_horse_1, east_pike_shot)"));
    f.assert_no_overlaps();
}

// ---------------------------------------------------------------- Evade

/// The light horse of tvbd_evade_light_horse.toml charged by the French
/// horse: Steps 3.1 and 3.2 played, the horse in contact.
fn light_horse_charged(evade: bool) -> Figure {
    let mut f = Figure::open_with("tvbd_evade_light_horse.toml", 5, &[("evade", evade)]);
    assert_at(&f, "french_horse", 22.5, 9.0, 0.0);
    assert_at(&f, "spanish_light_horse", 22.5, 11.5, 180.0);
    // Step 3.1: the horse declares (3 dice on 4+ against 2 on 6); the
    // light horse does not.
    assert_eq!(
        f.shown("charge_prospect(french_horse, spanish_light_horse)"),
        "7"
    );
    f.decide("declare_charges", &[ATTACKER]);
    f.decide("declare_charges", &[DEFENDER]);
    assert!(f.holds("charges(french_horse, spanish_light_horse)"));
    assert!(!f.holds("any x: charges(spanish_light_horse, x)"));
    // Step 3.2: 1.5 TUM straight ahead into contact.
    f.decide("charge_moves", &[]);
    assert_at(&f, "french_horse", 22.5, 10.5, 0.0);
    assert!(f.holds("engaged(spanish_light_horse, french_horse)"));
    assert!(f.holds("may_shoot_point_blank(spanish_light_horse, french_horse)"));
    f
}

/// Step 3.3 as the sequence plays it: the evades (asked only with the
/// option on), then point blank fire.
fn step_3_3(f: &mut Figure, evade: bool) {
    if evade {
        f.decide("evades", &[ATTACKER]);
        f.decide("evades", &[DEFENDER]);
    }
    f.decide("point_blank", &[ATTACKER]);
    f.decide("point_blank", &[DEFENDER]);
}

/// The narrative, a line an event, without the indent.
fn narrated(f: &Figure) -> Vec<String> {
    f.narrative()
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

/// §Optional Rule: Evade, switched on: light horse in open terrain, charged
/// frontally by horse, may evade instead of shooting point blank: it could
/// shoot, nothing blocks its 3 TUM straight back (the table's edge is 18 TUM
/// behind it), and the only enemy it touches is the charger, to its front.
/// The default policy evades: the horse's 3 dice on 4+ against its 2 point
/// blank dice and 2 melee dice on 6. It does not shoot, fights no melee,
/// and rallies back 3 TUM in Step 3.5; the horse stays where its charge
/// ended, even weakened (when the policy would otherwise rally it back).
#[test]
fn evade_light_horse_in_the_open_evades_a_horse_charge() {
    let mut f = light_horse_charged(true);
    assert!(f.holds("evade"));
    assert_eq!(f.shown("room_behind(spanish_light_horse)"), "18");
    assert!(f.holds("evade_clears(spanish_light_horse)"));
    assert!(f.holds("may_evade(spanish_light_horse, french_horse)"));
    // In sixths of a hit: 3 x 3 against 2 x 1 (melee) + 2 x 1 (point blank).
    assert_eq!(
        f.shown("evade_prospect(spanish_light_horse, french_horse)"),
        "5"
    );

    // Step 3.3: the light horse evades, and so does not shoot.
    step_3_3(&mut f, true);
    assert_eq!(
        f.runs_of("evade_charge"),
        [vec![
            "spanish_light_horse".to_string(),
            "french_horse".to_string()
        ]]
    );
    assert!(f.runs_of("point_blank_shot").is_empty());
    assert!(f.holds("spanish_light_horse.evading"));
    assert!(!f.holds("spanish_light_horse.shot_this_turn"));
    assert!(!f.holds("may_shoot_point_blank(spanish_light_horse, french_horse)"));
    assert!(f.holds("charge_evaded(french_horse)"));

    // Step 3.4: though in contact, the two do not fight.
    assert!(f.holds("engaged(spanish_light_horse, french_horse)"));
    assert!(!f.holds("melee_foes(french_horse, spanish_light_horse)"));
    assert!(f.melee().is_empty());
    assert!(f.runs_of("strike").is_empty());
    assert_eq!(f.shown("french_horse.resolve"), "3");
    assert_eq!(f.shown("spanish_light_horse.resolve"), "2");

    // Step 3.5: the charger stays. Weakened to 1 resolve within 2 TUM of
    // the enemy, the default policy would rally it back; the rules do not
    // let it.
    f.set_state("french_horse", "resolve", Value::Int(1));
    assert!(!f.holds("may_rally_back(french_horse)"));
    f.decide("rally_back", &[ATTACKER]);
    // The light horse must: 3 TUM straight back, facing kept, no check.
    assert!(f.holds("may_rally_back(spanish_light_horse)"));
    f.decide("rally_back", &[DEFENDER]);
    let moves = f.moves();
    assert_eq!(moves.len(), 2, "{moves:?}");
    assert_eq!(moves[0].unit, "french_horse");
    assert_eq!(moves[1].unit, "spanish_light_horse");
    assert_eq!(moves[1].how, "falls back 3.0");
    assert_eq!(moves[1].from, [22.5, 11.5, 180.0]);
    assert_eq!(moves[1].to, [22.5, 14.5, 180.0]);
    assert_at(&f, "spanish_light_horse", 22.5, 14.5, 180.0);
    assert_at(&f, "french_horse", 22.5, 10.5, 0.0);
    assert!(!f.holds("engaged(spanish_light_horse, french_horse)"));
    assert_eq!(f.shown("distance(spanish_light_horse, french_horse)"), "3");
    f.assert_no_overlaps();
    assert_eq!(
        narrated(&f),
        [
            "declare_charge(french_horse, spanish_light_horse)",
            "french_horse charges spanish_light_horse: (22.5, 9.0) facing 0 -> (22.5, 10.5) facing 0",
            "charged(french_horse, spanish_light_horse)",
            "evade_charge(spanish_light_horse, french_horse)",
            "spanish_light_horse falls back 3.0: (22.5, 11.5) facing 180 -> (22.5, 14.5) facing 180",
        ]
    );
}

/// The same charge with the optional rule off (the book's default): the
/// light horse may not evade; it shoots point blank and then fights.
#[test]
fn evade_off_the_light_horse_shoots_and_fights() {
    let mut f = light_horse_charged(false);
    assert!(!f.holds("evade"));
    assert!(f.holds("evade_clears(spanish_light_horse)"));
    assert!(!f.holds("may_evade(spanish_light_horse, french_horse)"));
    // Asked anyway, the evade decision offers nothing.
    f.decide("evades", &[DEFENDER]);
    assert!(f.runs_of("evade_charge").is_empty());

    // Step 3.3: the light horse's 2 dice hit once (on 6): the horse is
    // down to 2.
    step_3_3(&mut f, false);
    assert_eq!(
        f.runs_of("point_blank_shot"),
        [vec![
            "spanish_light_horse".to_string(),
            "french_horse".to_string()
        ]]
    );
    assert_eq!(f.shown("french_horse.resolve"), "2");
    assert!(f.holds("spanish_light_horse.shot_this_turn"));
    assert!(!f.holds("spanish_light_horse.evading"));

    // Step 3.4: they fight. The horse, charging, rolls its 2 dice on 4+
    // and hits once; the light horse's 2 dice on 6 miss: it lost.
    assert!(f.holds("melee_foes(french_horse, spanish_light_horse)"));
    assert_eq!(
        f.melee(),
        [
            ["french_horse", "spanish_light_horse"].map(String::from),
            ["spanish_light_horse", "french_horse"].map(String::from),
        ]
    );
    assert_eq!(f.shown("french_horse.resolve"), "2");
    assert_eq!(f.shown("spanish_light_horse.resolve"), "1");
    assert!(f.holds("spanish_light_horse.lost_melee"));

    // Step 3.5: the light horse must rally back; the horse, which won, may not.
    assert!(!f.holds("may_rally_back(french_horse)"));
    f.decide("rally_back", &[ATTACKER]);
    f.decide("rally_back", &[DEFENDER]);
    assert_at(&f, "french_horse", 22.5, 10.5, 0.0);
    assert_at(&f, "spanish_light_horse", 22.5, 14.5, 180.0);
    assert_eq!(
        narrated(&f),
        [
            "declare_charge(french_horse, spanish_light_horse)",
            "french_horse charges spanish_light_horse: (22.5, 9.0) facing 0 -> (22.5, 10.5) facing 0",
            "charged(french_horse, spanish_light_horse)",
            "point_blank_shot(spanish_light_horse, french_horse) rolls [6 1]: dice 2, hits 1",
            "engage(french_horse, spanish_light_horse)",
            "engage(spanish_light_horse, french_horse)",
            "strike(french_horse) rolls [5 1]: dice 2, hits 1",
            "strike(spanish_light_horse) rolls [1 5]: dice 2",
            "melee_result(french_horse): result won",
            "melee_result(spanish_light_horse): result lost",
            "take_melee_hits(spanish_light_horse): hits 1",
            "spanish_light_horse falls back 3.0: (22.5, 11.5) facing 180 -> (22.5, 14.5) facing 180",
        ]
    );
}

/// §Optional Rule: Evade: light horse only from open terrain, dragoons and
/// shot only from difficult terrain. Three horse charge three Spanish units
/// frontally (tvbd_evade_terrain.toml), the option on: the light horse in a
/// wood and the shot in the open may not evade, and shoot point blank; the
/// shot in a wood may, and does (the default policy: the horse's 3 dice on
/// 4+ against its 3 point blank and 3 melee dice on 6). Each could shoot,
/// and each would get clear: only the terrain decides.
#[test]
fn evade_only_light_horse_in_the_open_or_foot_in_difficult_terrain() {
    let mut f = Figure::open_with("tvbd_evade_terrain.toml", 3, &[("evade", true)]);
    for (unit, difficult) in [
        ("woods_light_horse", true),
        ("open_shot", false),
        ("woods_shot", true),
    ] {
        assert_eq!(
            f.holds(&format!("in_difficult({unit})")),
            difficult,
            "{unit}"
        );
    }
    f.decide("declare_charges", &[ATTACKER]);
    f.decide("declare_charges", &[DEFENDER]);
    f.decide("charge_moves", &[]);
    // Each horse 1.5 TUM on, its centre still in the open.
    for (horse, x) in [
        ("west_horse", 8.0),
        ("centre_horse", 22.5),
        ("east_horse", 37.0),
    ] {
        assert_at(&f, horse, x, 10.5, 0.0);
        assert!(!f.holds(&format!("in_difficult({horse})")), "{horse}");
    }
    for (unit, horse, evades) in [
        ("woods_light_horse", "west_horse", false),
        ("open_shot", "centre_horse", false),
        ("woods_shot", "east_horse", true),
    ] {
        assert!(f.holds(&format!("engaged({unit}, {horse})")), "{unit}");
        assert!(
            f.holds(&format!("may_shoot_point_blank({unit}, {horse})")),
            "{unit}"
        );
        assert_eq!(f.shown(&format!("room_behind({unit})")), "18", "{unit}");
        assert!(f.holds(&format!("evade_clears({unit})")), "{unit}");
        assert_eq!(
            f.holds(&format!("may_evade({unit}, {horse})")),
            evades,
            "{unit}"
        );
    }
    assert_eq!(f.shown("evade_prospect(woods_shot, east_horse)"), "3");

    step_3_3(&mut f, true);
    assert_eq!(
        f.runs_of("evade_charge"),
        [vec!["woods_shot".to_string(), "east_horse".to_string()]]
    );
    let fired = f.runs_of("point_blank_shot");
    assert_eq!(
        fired,
        [
            vec!["woods_light_horse".to_string(), "west_horse".to_string()],
            vec!["open_shot".to_string(), "centre_horse".to_string()],
        ]
    );
    // Only the two that stood fight.
    let mut fought = f.melee();
    fought.sort();
    assert_eq!(
        fought,
        [
            ["centre_horse", "open_shot"].map(String::from),
            ["open_shot", "centre_horse"].map(String::from),
            ["west_horse", "woods_light_horse"].map(String::from),
            ["woods_light_horse", "west_horse"].map(String::from),
        ]
    );
    // Step 3.5: the shot, which is not cavalry, rallies back as its evade.
    f.decide("rally_back", &[DEFENDER]);
    assert_at(&f, "woods_shot", 37.0, 14.5, 180.0);
    assert_at(&f, "east_horse", 37.0, 10.5, 0.0);
    assert!(!f.holds("engaged(woods_shot, east_horse)"));
}

/// §Optional Rule: Evade: "the evade move gets the unit out of contact with
/// all enemy". Four light horse in the open, each charged frontally by
/// horse (tvbd_evade_blocked.toml), the option on. Each may shoot point
/// blank; only the one whose 3 TUM straight back is clear may evade:
///
/// - edge: the table's edge 0.5 TUM behind it (`room_behind` 1/2): no room
///   for the 3 TUM;
/// - flank: a second horse charged its right flank: it touches an enemy
///   to its flank, which going back it would slide along (its way back is
///   clear: `room_behind` 5, to the table's edge);
/// - pike: a friendly pike+shot touches its rear, which light horse may not
///   pass through;
/// - support: a friendly horse touches its rear, aligned, which it may pass
///   through: it evades, and in Step 3.5 goes back 3 TUM through the horse
///   to stand 1 TUM beyond it.
#[test]
fn evade_only_when_the_move_gets_clear_of_every_enemy() {
    let mut f = Figure::open_with("tvbd_evade_blocked.toml", 3, &[("evade", true)]);
    f.decide("declare_charges", &[ATTACKER]);
    f.decide("declare_charges", &[DEFENDER]);
    f.decide("charge_moves", &[]);
    assert_at(&f, "edge_horse", 5.0, 2.0, 180.0);
    assert_at(&f, "flank_horse", 14.0, 6.5, 180.0);
    assert_at(&f, "side_horse", 15.5, 6.25, 270.0);
    assert_at(&f, "pike_horse", 23.0, 6.5, 180.0);
    assert_at(&f, "support_charger", 32.0, 6.5, 180.0);
    assert_eq!(
        f.shown("position(flank_light_horse, side_horse)"),
        "to_flank"
    );
    assert!(f.holds("engaged(flank_light_horse, side_horse)"));
    assert_eq!(f.shown("position(pike_light_horse, pike_shot)"), "to_rear");
    assert!(!f.holds("may_interpenetrate(pike_light_horse, backwards, pike_shot)"));
    assert!(f.holds("may_interpenetrate(support_light_horse, backwards, support_horse)"));

    for (unit, horse, room, clears) in [
        ("edge_light_horse", "edge_horse", "1/2", false),
        ("flank_light_horse", "flank_horse", "5", false),
        ("pike_light_horse", "pike_horse", "5", false),
        ("support_light_horse", "support_charger", "5", true),
    ] {
        assert!(
            f.holds(&format!("may_shoot_point_blank({unit}, {horse})")),
            "{unit}"
        );
        assert!(!f.holds(&format!("in_difficult({unit})")), "{unit}");
        assert_eq!(f.shown(&format!("room_behind({unit})")), room, "{unit}");
        assert_eq!(f.holds(&format!("evade_clears({unit})")), clears, "{unit}");
        assert_eq!(
            f.holds(&format!("may_evade({unit}, {horse})")),
            clears,
            "{unit}"
        );
    }
    assert!(!f.holds("may_evade(flank_light_horse, side_horse)"));

    step_3_3(&mut f, true);
    assert_eq!(
        f.runs_of("evade_charge"),
        [vec![
            "support_light_horse".to_string(),
            "support_charger".to_string()
        ]]
    );
    assert_eq!(
        f.runs_of("point_blank_shot"),
        [
            vec!["edge_light_horse".to_string(), "edge_horse".to_string()],
            vec!["flank_light_horse".to_string(), "flank_horse".to_string()],
            vec!["pike_light_horse".to_string(), "pike_horse".to_string()],
        ]
    );
    // Step 3.5: through the supporting horse, 3 TUM back.
    f.decide("rally_back", &[ATTACKER]);
    let moves = f.moves();
    let support: Vec<&Moved> = moves
        .iter()
        .filter(|m| m.unit == "support_light_horse")
        .collect();
    assert_eq!(support.len(), 1, "{moves:?}");
    assert_eq!(support[0].how, "falls back 3.0");
    assert_at(&f, "support_light_horse", 32.0, 2.5, 0.0);
    assert_at(&f, "support_horse", 32.0, 4.5, 0.0);
    assert!(!f.holds("engaged(support_light_horse, support_charger)"));
    f.assert_no_overlaps();
}

// ---------------------------------------------------------------- command

/// §Being "in command": within 8 TUM of its own commander (measured base to
/// base); another command's commander does not count.
#[test]
fn in_command_within_eight_tum_of_its_own_commander() {
    let mut f = Figure::open("tvbd_command_range.toml");
    assert_eq!(f.shown("distance(near_pike_shot, french_general)"), "7");
    assert_eq!(f.shown("distance(edge_pike_shot, french_general)"), "8");
    assert_eq!(f.shown("distance(far_pike_shot, french_general)"), "9");
    assert!(f.holds("in_command(near_pike_shot)"));
    assert!(f.holds("in_command(edge_pike_shot)"));
    assert!(!f.holds("in_command(far_pike_shot)"));
    // The other command's commander stands 1 TUM from it.
    assert_eq!(f.shown("distance(far_pike_shot, other_general)"), "1");
    assert!(!f.holds("near_commander(far_pike_shot)"));
}

/// §Command check: a unit out of command that wants to move must check
/// first; units in command move without one. Played through the ruleset's
/// move step (the default policy advances every unit).
#[test]
fn only_the_unit_out_of_command_checks_before_moving() {
    let mut f = Figure::open_with_seed("tvbd_command_range.toml", 7);
    f.decide("move", &[ATTACKER]);
    let checks = f.runs_of("command_check");
    assert_eq!(checks, [vec!["far_pike_shot".to_string()]]);
    let moved: Vec<String> = f.moves().into_iter().map(|m| m.unit).collect();
    assert!(moved.contains(&"near_pike_shot".to_string()), "{moved:?}");
    assert!(moved.contains(&"edge_pike_shot".to_string()), "{moved:?}");
}

/// §Being "in command": "the commander cannot, of course, be a casualty".
#[test]
fn a_unit_whose_commander_is_gone_is_not_in_command() {
    let mut f = Figure::open("tvbd_command_range.toml");
    assert!(f.holds("in_command(near_pike_shot)"));
    f.perform("rout", &["french_general"]);
    assert!(!f.on_table("french_general"));
    assert!(!f.holds("in_command(near_pike_shot)"));
    assert!(!f.holds("in_command(edge_pike_shot)"));
}

// ---------------------------------------------------------------- zones of control

/// Whether a move from `start` to `end` ends closer to the enemy `e` or goes
/// directly away from it (within 15 degrees).
fn closes_or_backs_away(start: &Base, end: &Base, e: &Base) -> (bool, bool) {
    let closer = end.distance(e) < start.distance(e) - 1e-6;
    let moved = start.centre.dist(end.centre);
    let away = moved > 1e-6
        && norm_angle(bearing(start.centre, end.centre) - bearing(e.centre, start.centre)).abs()
            <= 15.0;
    (closer, away)
}

/// The moves the rules offer unit `name` in its side's move step, each
/// checked against the ZOC rule of the enemy `enemy`: every one must end
/// closer to it or go directly away from it. Returns (how, end, closer,
/// directly away) for each.
fn offered_in_zoc(f: &mut Figure, name: &str, enemy: &str) -> Vec<(String, Base, bool, bool)> {
    let u = f.u(name);
    let e = f.base(enemy);
    let start = f.base(name);
    let offered = f.game.offered_moves("move", &[ATTACKER], u).expect("moves");
    assert!(!offered.is_empty(), "{name}: nothing offered");
    offered
        .into_iter()
        .map(|(how, end)| {
            let (c, a) = closes_or_backs_away(&start, &end, &e);
            assert!(
                c || a,
                "{name}: offered `{how}`, ending at {end:?}, neither closer to {enemy} nor directly away"
            );
            (how, end, c, a)
        })
        .collect()
}

/// §Zones of Control: "Units inside an enemy ZOC must remain stationary,
/// move closer to the unit, or move directly away from the unit." Every move
/// the rules offer a pike+shot 2 TUM, or 3 TUM (the zone's edge), before an
/// enemy pike+shot ends closer or goes directly away; at 3 TUM both kinds are
/// offered, straight ahead and straight back; no sideways move. A pike+shot
/// 5 TUM before an enemy (beyond the 3 TUM zone) is also offered the
/// sideways moves across the enemy's front.
#[test]
fn inside_a_zone_of_control_only_stand_close_or_back_away() {
    let mut f = Figure::open_searching("tvbd_zone_of_control.toml", 1, &[], Some(Search::Thorough));
    assert!(f.holds("zone_of_control(western_pike_shot, held_pike_shot)"));
    assert!(f.holds("zone_of_control(central_pike_shot, edge_pike_shot)"));
    assert!(!f.holds("any e: zone_of_control(e, free_pike_shot)"));

    // 2 TUM away: only closer or directly away, and something directly away
    // (3 TUM straight back among them).
    let held = offered_in_zoc(&mut f, "held_pike_shot", "western_pike_shot");
    assert!(held.iter().any(|m| m.3), "{held:?}");
    assert!(held
        .iter()
        .any(|(_, b, _, _)| (b.centre.x - 16.5).abs() <= TOL && (b.centre.y - 6.0).abs() <= TOL));
    assert!(
        !held.iter().any(|(how, ..)| how.starts_with("shifts")),
        "{held:?}"
    );

    // 3 TUM away: both kinds, each as a straight move along the unit's line.
    let edge = offered_in_zoc(&mut f, "edge_pike_shot", "central_pike_shot");
    let straight = |b: &Base| (b.centre.x - 22.5).abs() <= 1e-6;
    assert!(
        edge.iter()
            .any(|(_, b, c, _)| *c && straight(b) && b.centre.y > 8.0 && b.facing == 0.0),
        "no straight advance offered: {edge:?}"
    );
    assert!(
        edge.iter()
            .any(|(_, b, _, a)| *a && straight(b) && b.centre.y < 8.0),
        "no straight move back offered: {edge:?}"
    );
    assert!(
        !edge.iter().any(|(how, ..)| how.starts_with("shifts")),
        "{edge:?}"
    );

    // Outside the zone: sideways moves across the enemy's front.
    let free = f.u("free_pike_shot");
    let enemy = f.base("eastern_pike_shot");
    let start = f.base("free_pike_shot");
    let offered = f
        .game
        .offered_moves("move", &[ATTACKER], free)
        .expect("moves");
    let across: Vec<&str> = offered
        .iter()
        .filter(|(_, end)| closes_or_backs_away(&start, end, &enemy) == (false, false))
        .map(|(how, _)| how.as_str())
        .collect();
    assert!(across.contains(&"shifts -1.0"), "{offered:?}");
    assert!(across.contains(&"shifts +1.0"), "{offered:?}");
}

/// §Enemy buffer zone and §Zones of Control: a pike+shot 2 TUM before an
/// enemy may move closer, up to the 1 TUM buffer: 1 TUM straight ahead.
#[test]
fn in_a_zone_of_control_a_unit_may_close_up_to_the_buffer() {
    let mut f = Figure::open("tvbd_zone_of_control.toml");
    let held = offered_in_zoc(&mut f, "held_pike_shot", "western_pike_shot");
    assert!(
        held.iter()
            .any(|(_, b, _, _)| (b.centre.x - 16.5).abs() <= TOL
                && (b.centre.y - 10.0).abs() <= TOL
                && b.facing == 0.0),
        "no advance of 1 TUM offered: {held:?}"
    );
}

// ---------------------------------------------------------------- unit quality

/// What a wheel of 45 degrees costs a 2 TUM wide base: the chord its
/// outside corner travels, 2 x 2 x sin 22.5 (§Change of direction).
fn wheel_45_cost() -> f64 {
    4.0 * (22.5f64).to_radians().sin()
}

/// The moves unit `name` is offered in the attacker's move step.
fn offered(f: &mut Figure, name: &str) -> Vec<(String, Base)> {
    let u = f.u(name);
    f.game.offered_moves("move", &[ATTACKER], u).expect("moves")
}

/// Whether `offered` holds a move told as `how`, ending at (x, y) facing
/// `facing`.
fn offers(offered: &[(String, Base)], how: &str, x: f64, y: f64, facing: f64) -> bool {
    offered.iter().any(|(h, b)| {
        h == how
            && (b.centre.x - x).abs() <= TOL
            && (b.centre.y - y).abs() <= TOL
            && norm_angle(b.facing - facing).abs() <= 0.01
    })
}

/// §Optional Rule: Unit Quality: "Superior units can make two turns, wheels,
/// and/or about faces in a turn, one at the start of their move and one at
/// the end". A superior horse (move 6) may advance the whole 6 TUM and then
/// about face or turn (in place, costing nothing); a wheel at the end comes
/// out of the same allowance, so it advances 6 - 1.531 = 4.469 TUM and then
/// wheels 45, or wheels 45 at the start and at the end, with 6 - 2 x 1.531
/// = 2.939 TUM between. A superior pike+shot (move 3) advances 1.469 and
/// wheels. No finishing move costs more than the allowance. Ordinary and
/// inferior units end as the move left them, and so does the superior one
/// when the optional rule is off.
#[test]
fn a_superior_unit_changes_direction_again_at_the_end_of_its_move() {
    let mut f = Figure::open_searching("tvbd_superior_finish.toml", 1, &[], Some(Search::Thorough));
    let w = wheel_45_cost();
    assert!((w - 1.5307).abs() < 1e-4);

    let veteran = offered(&mut f, "veteran_horse");
    let told = |o: &[(String, Base)]| o.iter().map(|(h, _)| h.clone()).collect::<Vec<_>>();
    assert!(
        offers(
            &veteran,
            "advances 6.0, then about faces",
            12.0,
            14.0,
            180.0
        ),
        "{:?}",
        told(&veteran)
    );
    assert!(offers(
        &veteran,
        "advances 6.0, then turns +90",
        12.0,
        14.0,
        90.0
    ));
    assert!(offers(
        &veteran,
        "advances 6.0, then turns -90",
        12.0,
        14.0,
        270.0
    ));
    // Advance 4.469, then wheel right about the front-right corner, (13, 8 +
    // 4.469 + 0.5): the centre ends 1 TUM left of and 0.5 behind the corner
    // along the new facing.
    let wheel_end =
        |x: f64, y: f64, facing: f64| Base::new(Pt { x, y }, facing, 2.0, 1.0).wheeled(45.0);
    let end = wheel_end(12.0, 8.0 + 6.0 - w, 0.0);
    assert!(
        offers(
            &veteran,
            "advances 4.5, then wheels +45",
            end.centre.x,
            end.centre.y,
            45.0
        ),
        "{:?}",
        told(&veteran)
    );
    // Wheel left 45, advance 2.939 along the new facing, then wheel right 45.
    let start = Base::new(Pt { x: 12.0, y: 8.0 }, 0.0, 2.0, 1.0);
    let first = start.wheeled(-45.0).advanced(6.0 - 2.0 * w);
    let end = first.wheeled(45.0);
    assert!(
        offers(
            &veteran,
            "wheels -45 and advances 2.9, then wheels +45",
            end.centre.x,
            end.centre.y,
            0.0
        ),
        "{:?}",
        told(&veteran)
    );
    // No finishing wheel after the whole allowance: it would cost 6 + 1.531.
    assert!(!veteran
        .iter()
        .any(|(h, _)| h.starts_with("advances 6.0, then wheels")));
    // Every finishing move stays within 6 TUM of its start (a turn in place
    // costs nothing; the wheel's chord is at least what its centre travels).
    for (h, b) in veteran.iter().filter(|(h, _)| h.contains(", then ")) {
        assert!(
            b.centre.dist(Pt { x: 12.0, y: 8.0 }) <= 6.0 + TOL,
            "`{h}` ends {b:?}"
        );
    }

    // The same horse with a wood 2.5 TUM ahead: any move into it goes at
    // most 3 TUM, wheel included. Half the room a finishing wheel leaves in
    // the open (2.234, then 1.531) goes into the wood and costs 3.77; an
    // advance of 3 then an about face costs 3.
    assert!(veteran
        .iter()
        .any(|(h, _)| h == "advances 2.2, then wheels +45"));
    let wood = offered(&mut f, "wood_veteran");
    assert!(
        offers(&wood, "advances 3.0, then about faces", 5.0, 11.0, 180.0),
        "{:?}",
        told(&wood)
    );
    assert!(
        !wood
            .iter()
            .any(|(h, _)| h.starts_with("advances") && h.contains(", then wheels")),
        "{:?}",
        told(&wood)
    );

    let pike = offered(&mut f, "veteran_pike");
    let end = wheel_end(27.0, 8.0 + 3.0 - w, 0.0);
    assert!(
        offers(
            &pike,
            "advances 1.5, then wheels +45",
            end.centre.x,
            end.centre.y,
            45.0
        ),
        "{:?}",
        told(&pike)
    );
    assert!(offers(
        &pike,
        "advances 3.0, then about faces",
        27.0,
        11.0,
        180.0
    ));

    for name in ["ordinary_horse", "recruit_horse"] {
        let o = offered(&mut f, name);
        assert!(
            o.iter().any(|(h, _)| h == "advances 6.0"),
            "{name}: {:?}",
            told(&o)
        );
        assert!(
            !o.iter().any(|(h, _)| h.contains(", then ")),
            "{name}: {:?}",
            told(&o)
        );
    }

    let mut off = Figure::open_searching(
        "tvbd_superior_finish.toml",
        1,
        &[("unit_quality", false)],
        Some(Search::Thorough),
    );
    let o = offered(&mut off, "veteran_horse");
    assert!(o.iter().any(|(h, _)| h == "advances 6.0"));
    assert!(
        !o.iter().any(|(h, _)| h.contains(", then ")),
        "{:?}",
        told(&o)
    );
}

/// The outcomes of every run of procedure `name` whose first argument is
/// `first`, in the log's order.
fn outcomes_of(f: &Figure, name: &str, first: &str) -> Vec<Vec<(String, String)>> {
    f.game
        .log
        .iter()
        .filter_map(|e| match e {
            Event::Procedure {
                name: n,
                args,
                outcomes,
                ..
            } if n == name && args.first().is_some_and(|a| a == first) => Some(outcomes.clone()),
            _ => None,
        })
        .collect()
}

/// §Optional Rule: Unit Quality, Rabble: a rabble-quality pike+shot has 1
/// resolve on the table (the quality sets it), so in the melee step it
/// throws 1 die against the horse touching its front, not the type's 4.
#[test]
fn a_rabble_quality_pike_and_shot_fights_with_one_resolve() {
    let mut f = Figure::open("tvbd_rabble_pike.toml");
    assert_eq!(f.shown("pike_shot.resolve"), "1");
    assert_eq!(f.shown("original(pike_shot.resolve)"), "1");
    assert_eq!(f.shown("spanish_horse.resolve"), "3");
    f.perform("charged", &["horse", "pike_shot"]);
    f.step("Step 3.4 Melee");
    let struck = outcomes_of(&f, "strike", "pike_shot");
    assert_eq!(struck.len(), 1, "{}", f.narrative());
    assert!(
        struck[0].contains(&("dice".to_string(), "1".to_string())),
        "{:?}",
        struck[0]
    );
    let horse = outcomes_of(&f, "strike", "horse");
    assert!(
        horse[0].contains(&("dice".to_string(), "3".to_string())),
        "{:?}",
        horse[0]
    );
}

// ---------------------------------------------------------------- difficult going

/// Table 1 note 1 and §Movement allowance: "3 TUM in difficult terrain".
/// A horse (move 6) with a wood (10 TUM wide) 2.5 TUM ahead may go into
/// it, but no move forward it is offered takes its centre further than 3
/// TUM (the allowance is worked out again along each path: any move
/// forward of more than 2.5 touches the wood); the furthest straight
/// advance is 3, which ends in the wood. Moves back, away from the wood,
/// go the whole 6, and so does a horse with open ground ahead.
#[test]
fn a_move_into_difficult_terrain_goes_3_tum() {
    let mut f = Figure::open("tvbd_difficult_going.toml");
    assert!(
        !f.holds("difficult_going(wood_horse)"),
        "not in the wood yet"
    );
    let u = f.u("wood_horse");
    let start = f.base("wood_horse");
    let offered = f.game.offered_moves("move", &[ATTACKER], u).expect("moves");
    assert!(!offered.is_empty());
    for (how, end) in offered
        .iter()
        .filter(|(_, b)| b.centre.y > start.centre.y + TOL)
    {
        assert!(
            start.centre.dist(end.centre) <= 3.0 + TOL,
            "`{how}` goes further than 3 TUM: {end:?}"
        );
    }
    assert!(
        offered.iter().any(|(_, b)| (b.centre.y - 2.0).abs() <= TOL),
        "no about face and 6 TUM away from the wood: {offered:?}"
    );
    let ahead = |d: f64| {
        offered
            .iter()
            .any(|(_, b)| (b.centre.x - 22.5).abs() <= TOL && (b.centre.y - (8.0 + d)).abs() <= TOL)
    };
    assert!(ahead(3.0), "no advance of 3 TUM into the wood: {offered:?}");

    let u = f.u("open_horse");
    let offered = f.game.offered_moves("move", &[ATTACKER], u).expect("moves");
    assert!(
        offered
            .iter()
            .any(|(_, b)| { (b.centre.x - 5.0).abs() <= TOL && (b.centre.y - 14.0).abs() <= TOL }),
        "no advance of 6 TUM in the open: {offered:?}"
    );
}

// ---------------------------------------------------------------- the table's measures

/// §Unit facing and position: to front if any part is in the front zone
/// (even if part is also in a flank zone); to flank if not to front and any
/// part is in a flank zone (even if part is in the rear zone); to rear if
/// wholly in the rear zone.
#[test]
fn position_to_front_to_flank_to_rear() {
    let mut f = Figure::open("tvbd_table_measures.toml");
    assert_eq!(f.shown("position(viewer, front_enemy)"), "to_front");
    assert_eq!(f.shown("position(viewer, flank_friend)"), "to_flank");
    assert_eq!(f.shown("position(viewer, rear_friend)"), "to_rear");
    // Seen the other way round.
    assert_eq!(f.shown("position(front_enemy, viewer)"), "to_front");
    assert_eq!(f.shown("position(rear_friend, viewer)"), "to_front");
    // Not symmetric: the viewer's right end (x 17..17.5) lies ahead of
    // `flank_friend`, in its front zone.
    assert_eq!(f.shown("position(flank_friend, viewer)"), "to_front");
}

/// §Shooting criteria: "The target is on the far side of blocking terrain
/// (village, wood, crest of a hill)": a wood between shooter and target
/// blocks the shot; the same pair with nothing between may shoot.
#[test]
fn a_wood_between_blocks_the_shot() {
    let mut f = Figure::open("tvbd_table_measures.toml");
    assert!(f.holds("in_range(blocked_shooter, blocked_target)"));
    assert!(f.holds("blocked(blocked_shooter, blocked_target)"));
    assert!(!f.holds("may_shoot_at(blocked_shooter, blocked_target)"));
    assert!(f.holds("in_range(clear_shooter, clear_target)"));
    assert!(!f.holds("blocked(clear_shooter, clear_target)"));
    assert!(f.holds("may_shoot_at(clear_shooter, clear_target)"));
}

/// §Terrain (woods are difficult) and §Unit facing and position ("the
/// position of a stand is assumed to be the centre point of the stand"): a
/// horse whose centre is in a wood is in difficult terrain and hits on 6 in
/// melee (Table 1 note 2); one with only the edge of its base in the wood is
/// not, though a move of it touches the wood (Table 1 note 1, movement).
#[test]
fn in_difficult_by_the_centre_of_the_base() {
    let mut f = Figure::open("tvbd_table_measures.toml");
    assert!(f.holds("in_difficult(woods_horse)"));
    assert!(!f.holds("in_difficult(edge_horse)"));
    assert!(f.holds("difficult_going(edge_horse)"));
    assert!(!f.holds("in_difficult(viewer)"));
    assert_eq!(f.shown("melee_to_hit(woods_horse, front_enemy)"), "6");
    assert_eq!(f.shown("melee_to_hit(edge_horse, front_enemy)"), "5");
}

/// §Infantry defending uphill or fortifications: the pike+shot on the crest
/// is uphill of the horse on the slope (by the centres of the bases), and
/// "a horse unit with 3 resolve would throw 2d6 rather than 3d6 when
/// charging a pike+shot unit defending the crest of a hill".
#[test]
fn uphill_of_on_a_hill() {
    let mut f = Figure::open("tvbd_table_measures.toml");
    assert!(f.holds("uphill_of(crest_pike_shot, slope_horse)"));
    assert!(!f.holds("uphill_of(slope_horse, crest_pike_shot)"));
    assert!(!f.holds("uphill_of(clear_shooter, clear_target)"));
    assert!(!f.holds("uphill_of(clear_target, clear_shooter)"));
    // The horse charges up the hill; a pike+shot charges on the flat.
    let charging = f.build.ruleset.fact("charging").unwrap();
    for c in ["slope_horse", "clear_shooter"] {
        let u = f.unit(c);
        f.game.world.set_fact(charging, vec![u], Value::Bool(true));
    }
    assert_eq!(f.shown("melee_dice(slope_horse, crest_pike_shot)"), "2");
    assert_eq!(f.shown("melee_dice(clear_shooter, clear_target)"), "4");
}

// ------------------------------------------------- melees of several units

/// §Step 3.4, Figure 12 played on: the French horse, down to 2 resolve by
/// the shot's point blank fire, has charged into both Spanish foot, so the
/// melee is the horse against the pike+shot and the shot (seed 12).
///
/// - The horse fights the shot (its opponent): charging anything but the
///   front of pike+shot it hits on 4-6 (Table 1 note 2), against 5-6 at
///   the pike+shot.
/// - Two Spanish units melee the horse, so one is primary: the pike+shot
///   (4 dice at 5-6); the shot is secondary, 1 die at 6 (§Primary and
///   secondary melee units).
/// - The horse's 2 dice [5 2] hit once; the pike+shot's [6 5 6 3] three
///   times; the shot's [2] misses. The horse's one hit routs no one, so the
///   default policy puts it on the weaker enemy: the shot (3 resolve,
///   against the pike+shot's 4).
/// - Results per unit (§Step 3.5: a unit lost if it suffered more hits than
///   it inflicted): the horse 1 against 3, lost, and routs (2 - 3); the
///   pike+shot 3 against 0, won; the shot 0 against 1, lost (3 -> 2).
#[test]
fn figure_12_the_horse_fights_both_foot_it_charged() {
    let mut f = Figure::open_with_seed("tvbd_fig12_point_blank.toml", 12);
    f.perform("shoot", &["spanish_pike_shot", "french_pike_shot"]);
    f.decide("declare_charges", &[ATTACKER]);
    f.decide("declare_charges", &[DEFENDER]);
    f.decide("charge_moves", &[]);
    f.decide("point_blank", &[ATTACKER]);
    f.decide("point_blank", &[DEFENDER]);
    assert_eq!(f.shown("french_horse.resolve"), "2");
    assert!(f.holds("melee_foes(french_horse, spanish_pike_shot)"));
    assert!(f.holds("melee_foes(french_horse, spanish_shot)"));
    assert_eq!(f.shown("melee_to_hit(french_horse, spanish_shot)"), "4");
    assert_eq!(
        f.shown("melee_to_hit(french_horse, spanish_pike_shot)"),
        "5"
    );

    assert_eq!(
        f.melee(),
        [
            ["french_horse", "spanish_shot"].map(String::from),
            ["spanish_pike_shot", "french_horse"].map(String::from),
            ["spanish_shot", "french_horse"].map(String::from),
        ]
    );
    assert!(f.holds("secondary(spanish_shot)"));
    assert!(!f.holds("secondary(spanish_pike_shot) or secondary(french_horse)"));
    assert_eq!(f.shown("spanish_shot.scored"), "0");
    assert_eq!(f.shown("spanish_pike_shot.scored"), "3");
    assert_eq!(f.shown("french_horse.scored"), "1");
    assert_eq!(
        f.runs_of("give_hits"),
        [vec!["french_horse".to_string(), "spanish_shot".to_string()]]
    );
    assert!(f.holds("french_horse.routed and french_horse.lost_melee"));
    assert!(f.holds("spanish_pike_shot.held_melee and not spanish_pike_shot.lost_melee"));
    assert!(f.holds("won_melee_against(spanish_pike_shot, french_horse)"));
    assert!(f.holds("hit_in_melee(spanish_pike_shot, french_horse)"));
    assert!(f.holds("hit_in_melee(french_horse, spanish_shot)"));
    assert!(!f.holds("hit_in_melee(spanish_shot, french_horse)"));
    assert_eq!(f.shown("spanish_shot.resolve"), "2");
    assert!(f.holds("spanish_shot.lost_melee"));
    assert_eq!(f.shown("spanish_pike_shot.resolve"), "4");
    insta::assert_snapshot!("figure_12_melee_narrative", f.narrative());
}

/// §Primary and secondary melee units: two horse touching one pike+shot's
/// front. The first to take it as its opponent is primary (3 dice), the
/// other secondary (1 die); the pike+shot, attacked only from its front,
/// rolls its 4 (seed 1: what each rolled is in the narrative).
#[test]
fn two_on_one_the_second_unit_rolls_one_die() {
    let mut f = Figure::open("tvbd_two_horse_on_one_pike.toml");
    assert_eq!(f.shown("position(pike_shot, horse_a)"), "to_front");
    assert_eq!(f.shown("position(pike_shot, horse_b)"), "to_front");
    assert!(f.holds("locked_in_melee(horse_a) and locked_in_melee(pike_shot)"));
    assert_eq!(
        f.melee(),
        [
            ["horse_a", "pike_shot"].map(String::from),
            ["horse_b", "pike_shot"].map(String::from),
            ["pike_shot", "horse_a"].map(String::from),
        ]
    );
    let dice: Vec<(String, String)> = f
        .game
        .log
        .iter()
        .filter_map(|e| match e {
            Event::Procedure {
                name,
                args,
                outcomes,
                ..
            } if name == "strike" => {
                let d = outcomes.iter().find(|(o, _)| o == "dice").unwrap();
                Some((args[0].clone(), d.1.clone()))
            }
            _ => None,
        })
        .collect();
    let want = [("horse_a", "3"), ("horse_b", "1"), ("pike_shot", "4")];
    assert_eq!(
        dice,
        want.map(|(u, d)| (u.to_string(), d.to_string())),
        "{}",
        f.narrative()
    );
}

/// The same melee played on 6,000 seeds against a closed form. The horse
/// throw 3 + 1 dice at 5-6, the pike+shot 4 at 5-6, so the hits each side
/// suffers are Binomial(4, 1/3), and the pike+shot wins when its hits
/// exceed the horse's: P = (1 - P(tie)) / 2, with P(tie) = sum over k of
/// C(4,k)^2 2^(8-2k) / 3^8 = 1921/6561, so P = 2320/6561 (0.354). Were the
/// second horse primary too, its hits would be Binomial(6, 1/3) and the
/// pike+shot would win 0.218 of the time.
#[test]
fn two_on_one_against_its_closed_form() {
    let scene = scene("tvbd_two_horse_on_one_pike.toml", &[]);
    let n = 6_000u64;
    let mut won = 0u64;
    let mut lost = [0u64; 5];
    for seed in 0..n {
        let mut g = scene.start(seed, false);
        g.play_step_named("Step 3.4 Melee").unwrap();
        let int = |state: &str| match scene.state(&g, "pike_shot", state) {
            Value::Int(r) => r,
            v => panic!("{state}: {v:?}"),
        };
        // Its hits suffered are the resolve it lost (at most its 4).
        let suffered = 4 - int("resolve");
        if int("scored") > suffered {
            won += 1;
            assert_eq!(
                scene.state(&g, "pike_shot", "held_melee"),
                Value::Bool(true)
            );
        }
        lost[suffered as usize] += 1;
    }
    let within = |count: u64, p: f64, what: &str| {
        let got = count as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (got - p).abs() < 4.5 * se,
            "{what}: {got:.4} against {p:.4}"
        );
    };
    within(won, 2320.0 / 6561.0, "the pike+shot wins");
    let choose = [1.0, 4.0, 6.0, 4.0, 1.0];
    for (k, c) in choose.iter().enumerate() {
        let p = c * (1.0f64 / 3.0).powi(k as i32) * (2.0f64 / 3.0).powi(4 - k as i32);
        within(lost[k], p, &format!("the pike+shot loses {k} resolve"));
    }
}

/// §Step 3.4: "If a unit is fighting a melee with more than one enemy unit
/// the player can choose to divide his hits". The pike+shot touches both
/// horse; horse_a is down to 1 resolve. Given 4 hits, the default policy
/// routs horse_a with 1 and horse_b with the other 3; given 2, it routs
/// horse_a and puts the last on horse_b.
#[test]
fn hits_are_divided_to_rout_the_enemies_they_can() {
    for (hits, b_resolve, b_routed) in [(4, "0", true), (2, "2", false)] {
        let mut f = Figure::open("tvbd_two_horse_on_one_pike.toml");
        f.set_state("horse_a", "resolve", Value::Int(1));
        f.decide("melee_opponents", &[ATTACKER]);
        f.decide("melee_opponents", &[DEFENDER]);
        // The dice as if rolled: the horse miss, the pike+shot hits `hits`.
        f.set_state("pike_shot", "scored", Value::Int(hits));
        f.set_state("pike_shot", "to_give", Value::Int(hits));
        f.decide("divide_hits", &[ATTACKER]);
        f.decide("divide_hits", &[DEFENDER]);
        let given: Vec<Vec<String>> = f.runs_of("give_hits");
        assert_eq!(
            given,
            [
                vec!["pike_shot".to_string(), "horse_a".to_string()],
                vec!["pike_shot".to_string(), "horse_b".to_string()],
            ]
        );
        assert_eq!(f.shown("horse_a.given"), "1");
        assert_eq!(f.shown("horse_b.given"), (hits - 1).to_string());
        for u in ["horse_a", "horse_b", "pike_shot"] {
            f.perform("melee_result", &[u]);
        }
        for u in ["horse_a", "horse_b", "pike_shot"] {
            f.perform("take_melee_hits", &[u]);
        }
        assert!(f.holds("horse_a.routed"));
        assert_eq!(f.shown("horse_b.resolve"), b_resolve);
        assert_eq!(f.holds("horse_b.routed"), b_routed);
        assert!(f.holds("pike_shot.held_melee"));
        assert!(f.holds("horse_a.lost_melee and horse_b.lost_melee"));
        assert!(f.holds(
            "won_melee_against(pike_shot, horse_a) and won_melee_against(pike_shot, horse_b)"
        ));
    }
}

/// §Step 3.4 between two units, against the project's second method: the
/// battle's melee step (engage, strike, melee_result, take_melee_hits, the
/// facts measured on the table) against `muster odds`' exact distribution
/// of the two-unit `melee` procedure with the same facts stated. Three
/// scenes: a horse charging the front of a pike+shot (horse on 5-6, 184/729
/// to win), the same horse charging its flank (4+; the pike+shot's dice
/// are the ruleset's against a flank attack), and a horse charging a horse
/// (4+ against 5+). 20,000 seeds each; every probability of the winner, of
/// each side's hits and of each side's rout is within 4.5 standard errors,
/// and no outcome the exact odds rule out happens. (Rallying back is Step
/// 3.5, a decision; it is not compared.)
#[test]
fn a_melee_of_two_units_matches_the_exact_odds() {
    let mut scene = scene("tvbd_horse_on_pike.toml", &[]);
    let n = 20_000u64;
    let flank_on = Base::new(Pt { x: 22.5, y: 10.5 }, 90.0, 2.0, 1.0);
    let front_on = Base::new(Pt { x: 22.5, y: 10.0 }, 180.0, 2.0, 1.0);
    let out_of_it = Base::new(Pt { x: 15.0, y: 20.0 }, 180.0, 2.0, 1.0);
    for (target, defender, aspect, place) in [
        ("pike_shot", "Pike+Shot", "to_front", None),
        ("pike_shot", "Pike+Shot", "to_flank", Some(flank_on)),
        ("spanish_horse", "Horse", "to_front", Some(front_on)),
    ] {
        let text = format!(
            r#"
procedure = "melee"
facts = ["charging(attacker)", "position(defender, attacker) is {aspect}",
         "position(attacker, defender) is to_front"]
[units.attacker]
type = "Horse"
[units.defender]
type = "{defender}"
"#
        );
        let exact = scene.exact(&text);
        let mut tally = Tally::new(&format!("horse -> {defender} {aspect}"));
        for seed in 0..n {
            let mut g = scene.start(seed, false);
            let (horse, foe) = (scene.unit(&g, "horse"), scene.unit(&g, target));
            if let Some(b) = place {
                if target == "spanish_horse" {
                    g.set_base(scene.unit(&g, "pike_shot"), out_of_it);
                }
                g.set_base(foe, b);
            }
            let args = [Value::Unit(horse as u16), Value::Unit(foe as u16)];
            g.perform_named("charged", &args).unwrap();
            g.play_step_named("Step 3.4 Melee").unwrap();
            let int = |who: &str, state: &str| scene.int(&g, who, state);
            let bool = |who: &str, state: &str| scene.bool(&g, who, state);
            let (a, d) = (int("horse", "scored"), int(target, "scored"));
            // Hits cost resolve: the horse started with 3, the foe with 4 or 3.
            let start = if defender == "Horse" { 3 } else { 4 };
            assert_eq!(int("horse", "resolve"), (3 - d).max(0), "seed {seed}");
            assert_eq!(int(target, "resolve"), (start - a).max(0), "seed {seed}");
            let winner = match (bool("horse", "lost_melee"), bool(target, "lost_melee")) {
                (false, true) => "attacker",
                (true, false) => "defender",
                (false, false) => "draw",
                (true, true) => panic!("seed {seed}: both lost"),
            };
            let got = [
                ("winner", winner.to_string()),
                ("attacker_hits", a.to_string()),
                ("defender_hits", d.to_string()),
                ("attacker_routed", bool("horse", "routed").to_string()),
                ("defender_routed", bool(target, "routed").to_string()),
            ];
            tally.add(&scene, seed, &exact, &got);
        }
        let compared = tally.check();
        assert!(compared >= 10, "{compared}");
    }
}

/// §Fighting to flank or rear with §Optional Rule: Evade: an enemy that
/// evades is in no melee, so it does not make a unit it touches fight to a
/// flank or rear. A French pike+shot is locked in melee, front to front,
/// with a Spanish pike+shot (tvbd_evader_beside_a_melee.toml); a Spanish
/// light horse touches its right flank, then its rear. Standing there, the
/// light horse cuts the French dice against the Spanish pike+shot from its
/// resolve (4) to 1 (flank) or 0 (rear), and fights the French itself;
/// evading (the state `evade_charge` sets, set here directly: the evade
/// itself is tested above), it leaves the French its 4 dice and fights no
/// one. Step 3.4 is played each time and the dice the French roll read
/// from the log.
#[test]
fn an_evader_does_not_count_as_a_flank_or_rear_attacker() {
    // The light horse's base (2 wide, 1 deep) with its front edge on the
    // French pike+shot's right flank edge (x = 23.5, y 8.5..9.5), facing
    // west, or on its rear edge (y = 8.5), facing north.
    let flank = Base::new(Pt { x: 24.0, y: 9.0 }, 270.0, 2.0, 1.0);
    let rear = Base::new(Pt { x: 22.5, y: 8.0 }, 0.0, 2.0, 1.0);
    for (place, aspect, dice_beside) in [(flank, "to_flank", 1), (rear, "to_rear", 0)] {
        for evading in [false, true] {
            let mut f = Figure::open_with("tvbd_evader_beside_a_melee.toml", 1, &[("evade", true)]);
            let lh = f.u("spanish_light_horse") as usize;
            f.game.set_base(lh, place);
            f.assert_no_overlaps();
            assert!(f.holds("engaged(french_pike_shot, spanish_pike_shot)"));
            assert!(f.holds("engaged(french_pike_shot, spanish_light_horse)"));
            assert!(f.holds("locked_in_melee(french_pike_shot)"));
            assert_eq!(
                f.shown("position(french_pike_shot, spanish_light_horse)"),
                aspect
            );
            assert_eq!(
                f.shown("position(french_pike_shot, spanish_pike_shot)"),
                "to_front"
            );
            f.set_state("spanish_light_horse", "evading", Value::Bool(evading));
            let dice = if evading { 4 } else { dice_beside };
            assert_eq!(
                f.shown("melee_dice(french_pike_shot, spanish_pike_shot)"),
                dice.to_string(),
                "{aspect}, evading {evading}"
            );
            let fought = f.melee();
            let struck: Vec<String> = narrated(&f)
                .into_iter()
                .filter(|l| l.starts_with("strike(french_pike_shot)"))
                .collect();
            // A unit with no dice rolls nothing and changes nothing: the
            // log has no line of its strike.
            if dice == 0 {
                assert!(struck.is_empty(), "{struck:?}");
                assert_eq!(f.shown("french_pike_shot.scored"), "0");
            } else {
                assert_eq!(struck.len(), 1, "{}", f.narrative());
                assert!(
                    struck[0].contains(&format!(": dice {dice}")),
                    "{aspect}, evading {evading}: {}",
                    struck[0]
                );
            }
            // The French fight the Spanish pike+shot; the light horse
            // fights the French unless it evades.
            let by_light_horse = fought.iter().any(|[a, _]| a == "spanish_light_horse");
            assert_eq!(by_light_horse, !evading, "{aspect}: {fought:?}");
            assert!(fought.contains(&["french_pike_shot", "spanish_pike_shot"].map(String::from)));
        }
    }
}
