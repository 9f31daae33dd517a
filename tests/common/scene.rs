//! A battle's scene set up once and started on many seeds, and the check
//! that what the battles did agrees with `muster odds`' exact odds of the
//! same procedure with the facts stated (tests/battle_figures.rs,
//! tests/battle_odds.rs).
//!
//! The odds tests state the facts a rule reads; a battle derives them from
//! the table. A scene builds the table, plays one step of the sequence on
//! thousands of seeds, and [`Tally`] compares the distribution of what the
//! battles did with the exact distribution of the procedure in a situation
//! that states the facts of each seed.

use super::exact;
use muster::base::value::Value;
use muster::battle::game::{Event, Game, Prepared};
use muster::compile::ir::Ruleset;
use muster::front::diagnostic::render_plain;
use muster::run::odds::Odds;
use muster::Build;
use std::collections::HashMap;
use std::path::Path;

/// A scenario of tests/scenarios/ set up once, to be started on many seeds.
pub struct Scene {
    pub build: Build,
    pub prep: Prepared<'static>,
    /// How far each unit of the second army moves toward the first when a
    /// game starts (TVBD's figures: see tests/battle_figures.rs).
    shift: f64,
    /// The exact odds of each situation asked so far, by its text.
    odds: HashMap<String, Odds>,
}

impl Scene {
    /// The ruleset `rules` (a path under the crate's folder) with the
    /// scenario `file` of tests/scenarios/, optional rules switched as
    /// `--option` switches them; each game starts with the second army
    /// `shift` closer to the first (0: where the scenario has it).
    pub fn open(rules: &str, file: &str, options: &[(&str, bool)], shift: f64) -> Scene {
        let mut build = super::ruleset(rules);
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/scenarios")
            .join(file);
        let sc = match build.scenario(Some(&path)) {
            Ok(s) => s,
            Err(d) => panic!("{}", render_plain(&d, &build.sources)),
        };
        // The game keeps its own copy of the ruleset, so that the build
        // stays free to compile queries against the game's world.
        let rs: &'static Ruleset = Box::leak(Box::new(build.ruleset.clone()));
        let mut prep = match Prepared::new(rs, &sc) {
            Ok(p) => p,
            Err(d) => panic!("{}", render_plain(&d, &build.sources)),
        };
        for (name, on) in options {
            let o = rs
                .option(name)
                .unwrap_or_else(|| panic!("no option `{name}`"));
            prep.world.options[o as usize] = *on;
        }
        Scene {
            build,
            prep,
            shift,
            odds: HashMap::new(),
        }
    }

    /// The game on `seed`, not yet begun, the second army moved `shift`
    /// toward the first.
    pub fn start(&self, seed: u64, log: bool) -> Game<'static> {
        let mut game = self.prep.start(seed, log);
        if self.shift != 0.0 {
            let w = &mut game.world;
            let field = w.field.as_mut().expect("a battle has a field");
            for (u, unit) in w.units.iter().enumerate() {
                assert_eq!(unit.side, (field.edge[u] > 0.0) as u16, "army 0 attacks");
                if unit.side == 1 {
                    field.bases[u].centre.y -= self.shift;
                }
            }
        }
        game
    }

    /// The index of unit `name`.
    pub fn unit(&self, game: &Game, name: &str) -> usize {
        game.world
            .units
            .iter()
            .position(|u| u.name == name)
            .unwrap_or_else(|| panic!("no unit `{name}`"))
    }

    /// Where the state `state` of unit `name` is kept in the world.
    fn slot(&self, game: &Game, name: &str, state: &str) -> usize {
        let rs = &self.build.ruleset;
        let s = rs
            .state(state)
            .unwrap_or_else(|| panic!("no state `{state}`")) as usize;
        self.unit(game, name) * rs.states.len() + s
    }

    /// The state `state` of unit `name` in `game`.
    pub fn state(&self, game: &Game, name: &str, state: &str) -> Value {
        game.world.state[self.slot(game, name, state)]
    }

    pub fn int(&self, game: &Game, name: &str, state: &str) -> i64 {
        match self.state(game, name, state) {
            Value::Int(i) => i,
            v => panic!("{name}.{state}: {v:?}"),
        }
    }

    pub fn bool(&self, game: &Game, name: &str, state: &str) -> bool {
        self.state(game, name, state) == Value::Bool(true)
    }

    pub fn set_state(&self, game: &mut Game, name: &str, state: &str, v: Value) {
        let i = self.slot(game, name, state);
        game.world.state[i] = v;
    }

    /// The unit type of unit `name`.
    pub fn type_of(&self, game: &Game, name: &str) -> String {
        let ty = game.world.units[self.unit(game, name)].ty;
        self.build.ruleset.unit_types[ty as usize].name.clone()
    }

    /// Where the side state `state` of side `side` (0 or 1) is kept.
    fn side_slot(&self, side: usize, state: &str) -> usize {
        let rs = &self.build.ruleset;
        let s = rs
            .side_states
            .iter()
            .position(|x| x.name == state)
            .unwrap_or_else(|| panic!("no side state `{state}`"));
        side * rs.side_states.len() + s
    }

    pub fn side_state(&self, game: &Game, side: usize, state: &str) -> Value {
        game.world.side_state[self.side_slot(side, state)]
    }

    pub fn set_side_state(&self, game: &mut Game, side: usize, state: &str, v: Value) {
        game.world.side_state[self.side_slot(side, state)] = v;
    }

    /// A value as the battle's log shows it.
    pub fn show(&self, v: Value) -> String {
        self.prep.world.show(&self.build.ruleset, v)
    }

    /// `muster odds`' exact distribution of a situation (TOML text),
    /// worked out once per text.
    pub fn exact(&mut self, situation: &str) -> Odds {
        if let Some(o) = self.odds.get(situation) {
            return o.clone();
        }
        let o = exact(&mut self.build, situation);
        self.odds.insert(situation.to_string(), o.clone());
        o
    }
}

/// Play the step of the sequence called `step`.
pub fn play(game: &mut Game, step: &str) {
    if let Err(d) = game.play_step_named(step) {
        panic!("{step}: {d:?}");
    }
}

/// One run of a procedure in a battle's log: its arguments, the dice it
/// rolled (and the procedures it called), and its outcomes (name, value as
/// shown).
pub struct Run {
    pub args: Vec<String>,
    pub rolls: Vec<i64>,
    pub outcomes: Vec<(String, String)>,
}

impl Run {
    /// The value of outcome `name`, as shown.
    pub fn outcome(&self, name: &str) -> String {
        self.outcomes
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no outcome `{name}`"))
            .1
            .clone()
    }
}

/// Every run of procedure `name` in the game's log (a game started with
/// its log on), in order. A run that rolled no die and changed nothing is
/// not in the log.
pub fn runs(game: &Game, name: &str) -> Vec<Run> {
    game.log
        .iter()
        .filter_map(|e| match e {
            Event::Procedure {
                name: n,
                args,
                rolls,
                outcomes,
                ..
            } if n == name => Some(Run {
                args: args.clone(),
                rolls: rolls.clone(),
                outcomes: outcomes.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// What battles did, seed by seed, set against the exact odds of the same
/// procedure with the facts of each seed stated: for every outcome and
/// value, on how many seeds the battle gave it, and how many the exact odds
/// expect (the sum of its probabilities over the seeds) with their variance.
pub struct Tally {
    what: String,
    rows: Vec<Row>,
    seeds: u64,
}

struct Row {
    outcome: String,
    value: String,
    expected: f64,
    variance: f64,
    seen: u64,
}

impl Tally {
    pub fn new(what: &str) -> Tally {
        Tally {
            what: what.to_string(),
            rows: Vec::new(),
            seeds: 0,
        }
    }

    fn row(&mut self, outcome: &str, value: &str) -> &mut Row {
        let i = match self
            .rows
            .iter()
            .position(|r| r.outcome == outcome && r.value == value)
        {
            Some(i) => i,
            None => {
                self.rows.push(Row {
                    outcome: outcome.to_string(),
                    value: value.to_string(),
                    expected: 0.0,
                    variance: 0.0,
                    seen: 0,
                });
                self.rows.len() - 1
            }
        };
        &mut self.rows[i]
    }

    /// One seed: the battle gave `got` (each outcome's value as shown);
    /// `exact` is the distribution for the facts of that seed. A value the
    /// exact odds give no chance fails the test at once, naming the seed.
    pub fn add(&mut self, scene: &Scene, seed: u64, exact: &Odds, got: &[(&str, String)]) {
        self.seeds += 1;
        for (name, value) in got {
            let o = exact
                .get(name)
                .unwrap_or_else(|| panic!("{}: the odds have no outcome `{name}`", self.what));
            let mut possible = false;
            for (v, p) in &o.values {
                let (p, shown) = (p.to_f64(), scene.show(*v));
                possible |= p > 0.0 && shown == *value;
                let r = self.row(name, &shown);
                r.expected += p;
                r.variance += p * (1.0 - p);
            }
            assert!(
                possible,
                "{}, seed {seed}: the battle gave {name} = {value}, which the exact odds rule out",
                self.what
            );
            self.row(name, value).seen += 1;
        }
    }

    /// Every value's count is within 4.5 standard deviations of what the
    /// exact odds expect (at least 4.5 seeds either way). Returns how many
    /// (outcome, value) pairs were compared.
    pub fn check(&self) -> usize {
        assert!(self.seeds > 0, "{}: nothing was compared", self.what);
        for r in &self.rows {
            let sd = r.variance.sqrt().max(1.0);
            assert!(
                (r.seen as f64 - r.expected).abs() < 4.5 * sd,
                "{}: {} = {}: the battle gave it {} times in {}, the exact odds {:.1} (sd {:.1})",
                self.what,
                r.outcome,
                r.value,
                r.seen,
                self.seeds,
                r.expected,
                sd
            );
        }
        self.rows.len()
    }
}
