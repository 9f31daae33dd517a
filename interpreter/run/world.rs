//! The world rules are evaluated against: the units present (type, quality,
//! side, stats, state), the state of each side, the options in force, and the
//! facts that hold. An odds situation builds one; the battlefield will build
//! them turn by turn.

use crate::base::value::Value;
use crate::compile::ir::{Id, Ruleset, Ty};
use crate::front::diagnostic::Diag;
use rustc_hash::FxHashMap;

/// One unit present.
#[derive(Clone, Debug)]
pub struct UnitInst {
    pub name: String,
    pub ty: Id,
    pub quality: Option<Id>,
    pub side: u16,
    /// Stats after the quality's adjustments.
    pub stats: Vec<Value>,
}

/// The most units a scenario (or a situation) may have, both armies
/// together: some 25 times the largest shipped scenario (38 units), and 14
/// times the biggest game TVBD describes (36 a side). A battle's work
/// grows with the square of its units (every rule that looks at every
/// other unit, for each unit), and so do the per-pair caches of the table:
/// a TVBD battle of 1,000 units takes half a second a turn and some 300 MB
/// (see docs/LANGUAGE.md, "Scenario files").
pub const MAX_UNITS: usize = 1000;

#[derive(Clone, Debug, Default)]
pub struct World {
    pub units: Vec<UnitInst>,
    /// Names of the sides (the ruleset's, then one per unit without a side).
    pub side_names: Vec<String>,
    pub options: Vec<bool>,
    /// Facts that hold, per fact id: argument values -> value (looked up
    /// often in a battle: a fast hash, and lookups by slice, no allocation).
    pub facts: Vec<FxHashMap<Vec<Value>, Value>>,
    /// Unit state, `units.len() * states` values, unit-major.
    pub state: Vec<Value>,
    /// Side state, `side_names.len() * side_states` values, side-major.
    pub side_state: Vec<Value>,
    /// In a battle, the table: facts derived `in battle:` and the
    /// battlefield's measures read it.
    pub field: Option<Box<crate::run::field::Field>>,
    /// In a battle, per unit: the values of the cards it holds in its
    /// hands of every deck, lowest first (what `cards_held` reads; empty
    /// elsewhere, and for a unit dealt nothing).
    pub held: Vec<Vec<i64>>,
}

impl World {
    /// An empty world for a ruleset, with its options at their defaults.
    pub fn new(rs: &Ruleset) -> Self {
        World {
            units: Vec::new(),
            side_names: rs.sides.clone(),
            options: rs.options.iter().map(|o| o.on).collect(),
            facts: vec![FxHashMap::default(); rs.facts.len()],
            state: Vec::new(),
            side_state: Vec::new(),
            field: None,
            held: Vec::new(),
        }
    }

    /// Add a unit; its state is initialised by [`World::init_state`].
    pub fn add_unit(
        &mut self,
        rs: &Ruleset,
        name: &str,
        ty: Id,
        quality: Option<Id>,
        side: Option<u16>,
    ) -> u16 {
        let mut stats = rs.unit_types[ty as usize].stats.clone();
        let q = quality.or(rs.default_quality);
        if let Some(q) = q {
            let qd = &rs.qualities[q as usize];
            for (s, v) in &qd.set {
                stats[*s as usize] = *v;
            }
            for (s, d) in &qd.adjust {
                if let Value::Int(v) = stats[*s as usize] {
                    stats[*s as usize] = Value::Int(v + d);
                }
            }
        }
        let side = side.unwrap_or_else(|| {
            self.side_names.push(name.to_string());
            (self.side_names.len() - 1) as u16
        });
        self.units.push(UnitInst {
            name: name.to_string(),
            ty,
            quality: q,
            side,
            stats,
        });
        (self.units.len() - 1) as u16
    }

    /// Evaluate every state's initialiser for every unit and side.
    pub fn init_state(&mut self, rs: &Ruleset) -> Result<(), Diag> {
        self.state = vec![Value::None; self.units.len() * rs.states.len()];
        self.side_state = vec![Value::None; self.side_names.len() * rs.side_states.len()];
        self.initialise(rs, |_| true)
    }

    /// The start of a battle turn: `each turn` states go back to their
    /// initial values and `each turn` facts are forgotten.
    pub fn reset_each_turn(&mut self, rs: &Ruleset) -> Result<(), Diag> {
        self.initialise(rs, |s| s.each_turn)?;
        for (i, f) in rs.facts.iter().enumerate() {
            if f.each_turn {
                self.facts[i].clear();
            }
        }
        Ok(())
    }

    /// Set the states `which` picks to their initial values.
    fn initialise(
        &mut self,
        rs: &Ruleset,
        which: impl Fn(&crate::compile::ir::StateDef) -> bool,
    ) -> Result<(), Diag> {
        let ev = crate::run::eval::Eval::new(rs);
        let ns = rs.states.len();
        for (i, s) in rs.states.iter().enumerate().filter(|(_, s)| which(s)) {
            for u in 0..self.units.len() {
                let v = ev.call_init(self, &s.init, Value::Unit(u as u16))?;
                self.state[u * ns + i] = v;
            }
        }
        let nss = rs.side_states.len();
        for (i, s) in rs.side_states.iter().enumerate().filter(|(_, s)| which(s)) {
            for sd in 0..self.side_names.len() {
                let v = ev.call_init(self, &s.init, Value::Side(sd as u16))?;
                self.side_state[sd * nss + i] = v;
            }
        }
        Ok(())
    }

    pub fn set_fact(&mut self, fact: Id, args: Vec<Value>, v: Value) {
        self.facts[fact as usize].insert(args, v);
    }

    /// A value as a reader writes it, given its type: a roll's tallies by
    /// name (`wounds 2, shoves 1`), a pool by its dice (`red + white`),
    /// anything else as [`World::show`] does.
    pub fn show_typed(&self, rs: &Ruleset, ty: &Ty, v: Value) -> String {
        match (ty, v) {
            (Ty::Tallies(e), Value::Int(packed)) => {
                let fx = &rs.effects[*e as usize];
                fx.tallies
                    .iter()
                    .enumerate()
                    .map(|(k, t)| format!("{t} {}", fx.tally(packed, k)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            _ => self.show(rs, v),
        }
    }

    /// How to show a value to a reader.
    pub fn show(&self, rs: &Ruleset, v: Value) -> String {
        match v {
            Value::None => "none".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Frac(n, d) => format!("{n}/{d}"),
            Value::Sym(s) => rs.symbols[s as usize].clone(),
            Value::Unit(u) => self
                .units
                .get(u as usize)
                .map(|x| x.name.clone())
                .unwrap_or_default(),
            Value::Side(s) => self.side_names.get(s as usize).cloned().unwrap_or_default(),
            Value::Pool(p) => rs.show_pool(p),
        }
    }
}
