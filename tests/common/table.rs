//! A ruleset's battle on a test scenario, set up and not begun: a
//! [`Scene`] prepared once and started on many seeds (a sampled test plays
//! one step thousands of times), and a [`Table`], one game with a build to
//! ask questions of its world in the language.

#![allow(dead_code)]

use muster::base::value::Value;
use muster::battle::game::{Event, Game, Prepared};
use muster::compile::ir::Ruleset;
use muster::front::diagnostic::render_plain;
use muster::run::battlefield::{Base, Pt};
use muster::Build;
use std::path::Path;

/// A scenario of a ruleset, prepared once (units placed by the scenario,
/// options set), to be started on many seeds.
pub struct Scene {
    pub build: Build,
    pub prep: Prepared<'static>,
}

impl Scene {
    /// `rules` and `scenario` are paths under the crate's folder; `None`
    /// is the ruleset's default scenario. `options` are switched as
    /// `--option` switches them.
    pub fn open(rules: &str, scenario: Option<&str>, options: &[(&str, bool)]) -> Scene {
        Scene::of_build(super::ruleset(rules), scenario, options)
    }

    /// [`Scene::open`] on a ruleset already built (with number options
    /// set, say: `muster::build_with`).
    pub fn of_build(mut build: Build, scenario: Option<&str>, options: &[(&str, bool)]) -> Scene {
        let path = scenario.map(|s| Path::new(env!("CARGO_MANIFEST_DIR")).join(s));
        let sc = match build.scenario(path.as_deref()) {
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
        Scene { build, prep }
    }

    /// The game on `seed`, set up and not begun.
    pub fn start(&self, seed: u64, log: bool) -> Game<'static> {
        self.prep.start(seed, log)
    }

    /// The state `state` of unit `name` in `game`.
    pub fn state(&self, game: &Game, name: &str, state: &str) -> Value {
        let rs = &self.build.ruleset;
        let s = rs
            .state(state)
            .unwrap_or_else(|| panic!("no state `{state}`")) as usize;
        game.world.state[index(game, name) * rs.states.len() + s]
    }

    /// An enum value (an outcome's symbol) by name.
    pub fn sym(&self, name: &str) -> Value {
        super::sym(&self.build, name)
    }

    /// Set state `state` of unit `name` in `game` (what earlier play would
    /// have done).
    pub fn set(&self, game: &mut Game, name: &str, state: &str, v: Value) {
        let rs = &self.build.ruleset;
        let s = rs
            .state(state)
            .unwrap_or_else(|| panic!("no state `{state}`")) as usize;
        let i = index(game, name) * rs.states.len() + s;
        game.world.state[i] = v;
    }

    /// Note fact `fact` of `units` in `game` (as a procedure's `note` would).
    pub fn note(&self, game: &mut Game, fact: &str, units: &[&str], v: Value) {
        let f = self
            .build
            .ruleset
            .fact(fact)
            .unwrap_or_else(|| panic!("no fact `{fact}`"));
        let args = units.iter().map(|u| unit(game, u)).collect();
        game.world.set_fact(f, args, v);
    }

    /// A value as the log shows it.
    pub fn show(&self, v: Value) -> String {
        self.prep.world.show(&self.build.ruleset, v)
    }

    /// `muster odds`' exact distribution of the situation `text`.
    pub fn exact(&mut self, text: &str) -> muster::run::odds::Odds {
        super::exact(&mut self.build, text)
    }
}

/// Unit `name`'s index in `game`.
pub fn index(game: &Game, name: &str) -> usize {
    game.world
        .units
        .iter()
        .position(|u| u.name == name)
        .unwrap_or_else(|| panic!("no unit `{name}`"))
}

/// Unit `name` of `game` as a value.
pub fn unit(game: &Game, name: &str) -> Value {
    Value::Unit(index(game, name) as u16)
}

/// Put unit `name`'s base at (x, y), keeping its size; facing `facing`
/// (degrees: 0 toward the second army's edge) or, when None, as it was.
pub fn place(game: &mut Game, name: &str, x: f64, y: f64, facing: Option<f64>) {
    let i = index(game, name);
    let b = game.world.field.as_ref().expect("a battle").bases[i];
    let facing = facing.unwrap_or(b.facing);
    game.set_base(i, Base::new(Pt { x, y }, facing, b.width, b.depth));
}

/// The outcomes of the last run of procedure `name` in `game`'s log, by
/// name, as the narrative shows them.
pub fn last_outcomes(game: &Game, name: &str) -> Vec<(String, String)> {
    game.log
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Procedure {
                name: n, outcomes, ..
            } if n == name => Some(outcomes.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no run of `{name}` in the log"))
}

/// One game with a build to ask questions of its world in the language.
pub struct Table {
    pub build: Build,
    pub game: Game<'static>,
}

impl Table {
    /// The game of `scenario` (see [`Scene::open`]) on `seed`, logged.
    pub fn open(rules: &str, scenario: Option<&str>, seed: u64) -> Table {
        Table::open_with(rules, scenario, seed, &[])
    }

    /// The same, with options switched.
    pub fn open_with(
        rules: &str,
        scenario: Option<&str>,
        seed: u64,
        options: &[(&str, bool)],
    ) -> Table {
        Table::of_scene(Scene::open(rules, scenario, options), seed)
    }

    /// The game of a scene ([`Scene::of_build`]) on `seed`, logged.
    pub fn of_scene(scene: Scene, seed: u64) -> Table {
        let game = scene.start(seed, true);
        Table {
            build: scene.build,
            game,
        }
    }

    pub fn u(&self, name: &str) -> Value {
        unit(&self.game, name)
    }

    pub fn eval(&mut self, expr: &str) -> Value {
        match self.build.query_world(&self.game.world, expr) {
            Ok(v) => v.0,
            Err(d) => panic!("{expr}: {}", render_plain(&d, &self.build.sources)),
        }
    }

    pub fn holds(&mut self, expr: &str) -> bool {
        match self.eval(expr) {
            Value::Bool(b) => b,
            other => panic!("{expr} is {other:?}, not true or false"),
        }
    }

    pub fn int(&mut self, expr: &str) -> i64 {
        match self.eval(expr) {
            Value::Int(i) => i,
            other => panic!("{expr} is {other:?}, not a whole number"),
        }
    }

    /// Set a unit's state directly (what earlier play would have done).
    pub fn set(&mut self, unit: &str, state: &str, v: Value) {
        let u = index(&self.game, unit);
        let s = self
            .build
            .ruleset
            .states
            .iter()
            .position(|d| d.name == state)
            .unwrap_or_else(|| panic!("no state `{state}`"));
        let ns = self.build.ruleset.states.len();
        self.game.world.state[u * ns + s] = v;
    }

    /// Put a unit's base at (x, y), keeping its facing and size.
    pub fn place(&mut self, unit: &str, x: f64, y: f64) {
        place(&mut self.game, unit, x, y, None);
    }

    /// Put a unit's base at (x, y) facing `facing` degrees.
    pub fn place_facing(&mut self, unit: &str, x: f64, y: f64, facing: f64) {
        place(&mut self.game, unit, x, y, Some(facing));
    }

    /// Where a unit's base is: (x, y, facing).
    pub fn at(&self, unit: &str) -> (f64, f64, f64) {
        let b = self.game.world.field.as_ref().expect("a battle").bases[index(&self.game, unit)];
        (b.centre.x, b.centre.y, b.facing)
    }

    pub fn perform(&mut self, proc: &str, args: &[Value]) {
        if let Err(d) = self.game.perform_named(proc, args) {
            panic!("{proc}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    pub fn decide(&mut self, decision: &str, args: &[Value]) {
        if let Err(d) = self.game.decide_named(decision, args) {
            panic!("{decision}: {}", render_plain(&[d], &self.build.sources));
        }
    }

    pub fn side(&self, i: u16) -> Value {
        Value::Side(i)
    }

    pub fn sym(&self, name: &str) -> Value {
        super::sym(&self.build, name)
    }

    /// The outcomes of the last run of procedure `name`.
    pub fn outcomes(&self, name: &str) -> Vec<(String, String)> {
        last_outcomes(&self.game, name)
    }

    /// One outcome of the last run of procedure `name`, as shown.
    pub fn outcome(&self, name: &str, outcome: &str) -> String {
        self.outcomes(name)
            .into_iter()
            .find(|(n, _)| n == outcome)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("`{name}` has no outcome `{outcome}` in the log"))
    }
}

/// How often each value of a procedure's outcomes came up over many
/// games, against `muster odds`' exact distribution of the same procedure
/// with the same facts stated.
pub struct Tally {
    /// The games counted.
    pub n: u64,
    /// (outcome, value as the log shows it) and how often.
    counts: std::collections::BTreeMap<(String, String), u64>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new()
    }
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            n: 0,
            counts: Default::default(),
        }
    }

    /// One game's outcomes (as an `Event::Procedure` holds them).
    pub fn add(&mut self, outcomes: &[(String, String)]) {
        self.n += 1;
        for (name, v) in outcomes {
            *self.counts.entry((name.clone(), v.clone())).or_default() += 1;
        }
    }

    /// Each value of each outcome in `names` came up as often as the exact
    /// odds say, within 4.5 standard errors (at least 4.5 / n), and nothing
    /// came up that they give no chance. `show` writes an exact value as
    /// the log does. Returns how many (outcome, value) pairs were compared.
    pub fn assert_matches(
        &self,
        what: &str,
        exact: &muster::run::odds::Odds,
        show: impl Fn(Value) -> String,
        names: &[&str],
    ) -> usize {
        let n = self.n as f64;
        let mut compared = 0;
        for &name in names {
            let o = exact
                .get(name)
                .unwrap_or_else(|| panic!("{what}: no outcome `{name}` in the odds"));
            let want: Vec<(String, f64)> = o
                .values
                .iter()
                .map(|(v, p)| (show(*v), p.to_f64()))
                .collect();
            for (v, p) in &want {
                let c = self
                    .counts
                    .get(&(name.to_string(), v.clone()))
                    .copied()
                    .unwrap_or(0);
                let got = c as f64 / n;
                let se = (p * (1.0 - p) / n).sqrt().max(1.0 / n);
                assert!(
                    (got - p).abs() < 4.5 * se,
                    "{what}: {name} = {v}: battle {got:.4} ({c} of {}), exact {p:.4}",
                    self.n
                );
                compared += 1;
            }
            for ((o_name, v), c) in &self.counts {
                if o_name == name {
                    assert!(
                        want.iter().any(|(w, p)| w == v && *p > 0.0),
                        "{what}: {name} = {v} came up {c} times; the exact odds give it no chance"
                    );
                }
            }
        }
        compared
    }
}
