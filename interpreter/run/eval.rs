//! The evaluator: computes a compiled expression against a [`World`] and its
//! current state, rolling dice through a [`DiceSource`]. Quantities get their
//! modifiers applied here (through [`crate::compile::modifiers::apply`]).

use crate::base::value::Value;
use crate::compile::ir::*;
use crate::front::diagnostic::Diag;
use crate::front::syntax::{Quant, Span};
use crate::run::dice::{self, DiceSource, Reading};
use crate::run::world::World;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

/// Why an evaluation stopped.
#[derive(Debug)]
pub enum EvalError {
    /// A genuine problem (a missing fact, arithmetic on `none`...).
    Fault(Box<Diag>),
    /// Only while specialising: the value depends on dice or on state that
    /// changes during the procedure, so it cannot be computed in advance.
    NotStatic,
}

impl EvalError {
    /// The diagnostic of a stopped evaluation: a fault's own; for a value
    /// that could not be computed in advance, `not_static`, which says what
    /// that means where the value was asked (a roster's price, a state's
    /// first value).
    pub fn diag_or(self, not_static: impl FnOnce() -> Diag) -> Diag {
        match self {
            EvalError::Fault(d) => *d,
            EvalError::NotStatic => not_static(),
        }
    }
}

/// The one conversion of a run-time fault to a diagnostic. Outside
/// specialising every value can be computed when it is asked, so a value
/// that could not be is the engine's fault, and says so.
impl From<EvalError> for Diag {
    fn from(e: EvalError) -> Diag {
        e.diag_or(|| {
            Diag::new("muster::runtime", "a value could not be computed where it was asked")
                .help("this is a fault of Muster, not of the rules: please report it, with the ruleset and the command that showed it")
        })
    }
}

impl From<Diag> for EvalError {
    fn from(d: Diag) -> Self {
        EvalError::Fault(Box::new(d))
    }
}

pub type R<T> = Result<T, EvalError>;

/// Which states a procedure has written so far (reads of them are not static).
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    pub states: Vec<bool>,
    pub side_states: Vec<bool>,
}

impl Dirty {
    /// Has nothing changed yet?
    fn clean(&self) -> bool {
        !self.states.contains(&true) && !self.side_states.contains(&true)
    }
}

/// What an expression is evaluated against.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub world: &'a World,
    pub state: &'a [Value],
    pub side_state: &'a [Value],
    pub dirty: Option<&'a Dirty>,
}

impl<'a> Ctx<'a> {
    pub fn new(world: &'a World) -> Self {
        Ctx {
            world,
            state: &world.state,
            side_state: &world.side_state,
            dirty: None,
        }
    }
}

/// A source of dice for evaluations that must not roll (initialisers).
pub struct NoDice;

impl DiceSource for NoDice {
    fn face(&mut self, _: &DieDef) -> Result<usize, String> {
        Err("no dice may be rolled here".into())
    }
}

pub struct Eval<'r> {
    pub rs: &'r Ruleset,
    /// Expressions compiled to closures (a battle's), run in their place
    /// by [`Eval::run`].
    code: Option<std::sync::Arc<crate::run::closures::Compiled>>,
    /// In a battle: values of the defines that range over units (`any e:`),
    /// remembered until what they read changes (the battle says when).
    memo: Option<Memo>,
    /// When set, the modifiers that applied (a battle's log shows them).
    pub trace: Option<std::cell::RefCell<Vec<Id>>>,
    /// In a battle: the answers of `chance` and `expect` (see
    /// [`crate::run::chance`]), each with the clock it was taken at; good while
    /// nothing in the world has changed since.
    odds: std::cell::RefCell<FxHashMap<OddsKey, (u32, Value)>>,
    /// Define bodies compiled on their own: while a procedure is specialised
    /// and nothing it changes has been changed yet, a define is run compiled
    /// rather than walked ([`Eval::lend_define_bodies`]).
    define_bodies: std::cell::RefCell<Option<Box<crate::run::closures::DefineBodies>>>,
}

/// What a `chance` or `expect` answer depends on beside the world: the
/// expression (its [`OddsEx::row`]) and the values of its arguments and
/// given facts.
type OddsKey = (u16, Vec<Value>);

/// Does `of` read no local but the outcomes, its own quantifiers' and the
/// locals the key holds (an argument or given fact that is a bare local)?
/// Only then is its value, and so the answer, a function of the ending and
/// the key.
fn closed(o: &OddsEx) -> bool {
    fn keyed(o: &OddsEx, s: u16) -> bool {
        let bare = |e: &Ex| matches!(e, Ex::Local(l) if *l == s);
        o.args.iter().any(bare)
            || o.given
                .iter()
                .any(|(_, args, v)| bare(v) || args.iter().any(bare))
    }
    fn walk(e: &Ex, o: &OddsEx, bound: &mut Vec<u16>) -> bool {
        match e {
            Ex::Local(s) => {
                (o.first..o.first + o.outcomes).contains(s) || bound.contains(s) || keyed(o, *s)
            }
            Ex::Quant(_, _, slot, body) => {
                bound.push(*slot);
                let r = walk(body, o, bound);
                bound.pop();
                r
            }
            e => !e.any_child(&mut |c| !walk(c, o, bound)),
        }
    }
    walk(&o.of, o, &mut Vec::new())
}

/// A part of the world a battle has just changed: the remembered values
/// that read it are forgotten, the others kept.
#[derive(Clone, Copy, Debug)]
pub enum Change {
    /// One unit state, of any unit.
    State(Id),
    /// One side state, of any side.
    SideState(Id),
    /// The noted values of one fact.
    Fact(Id),
    /// The table: where the bases are, which are on it.
    Field,
    /// Only the path of the move being weighed (lent to the table and
    /// taken back): what reads it is `touches_terrain`.
    Path,
}

/// Remembered values of defines of at most one unit or side: a table of
/// (define, argument) slots, each stamped with the clock when computed. A
/// change stamps the rows that read it (each row knows what its define
/// reads, through every define, table, quantity and fact it calls); a
/// value is good while no change to its row came after it.
struct Memo {
    /// Per define: does its body range over units (directly or through
    /// another define), and has it at most one parameter? Only those are
    /// worth remembering.
    worth: Vec<bool>,
    units: usize,
    /// Slots per define: no argument, each unit, each side.
    per: usize,
    /// Ticks at every change.
    clock: std::cell::Cell<u32>,
    /// Per row (each define, then nearest_enemy and nearest_friend): the
    /// clock of the last change to what it reads.
    stale: Vec<std::cell::Cell<u32>>,
    /// The rows that read each unit state, side state, fact, and the table.
    by_state: Vec<Vec<u16>>,
    by_side_state: Vec<Vec<u16>>,
    by_fact: Vec<Vec<u16>>,
    by_field: Vec<u16>,
    by_path: Vec<u16>,
    values: std::cell::RefCell<Vec<(u32, Value)>>,
    /// The rows of pairs of units (after the one-unit rows): per row, a
    /// value per ordered pair, made when first needed.
    first_pair_row: usize,
    pairs: std::cell::RefCell<Vec<Vec<(u32, Value)>>>,
    /// Per row of pairs: how often it was asked, and how often it knew.
    /// A row that seldom knows is given up for the rest of the game
    /// ([`Eval::pair_row_pays`]).
    pair_asked: Vec<std::cell::Cell<u32>>,
    pair_known: Vec<std::cell::Cell<u32>>,
    /// The row of the first `chance`/`expect` ([`crate::compile::ir::Ruleset::weighings`]).
    first_odds_row: usize,
}

impl Memo {
    fn slot(&self, d: Id, arg: Option<Value>) -> Option<usize> {
        let i = match arg {
            None => 0,
            Some(Value::Unit(u)) => 1 + u as usize,
            Some(Value::Side(s)) => 1 + self.units + s as usize,
            _ => return None,
        };
        (i < self.per).then_some(d as usize * self.per + i)
    }

    /// The value remembered in `slot` of row `d`, if nothing it reads has
    /// changed since.
    #[inline]
    fn get(&self, d: Id, slot: usize) -> Option<Value> {
        let (stamp, v) = self.values.borrow()[slot];
        (stamp >= self.stale[d as usize].get()).then_some(v)
    }

    /// Remember a value computed at clock `at` (unless the world changed
    /// meanwhile).
    #[inline]
    fn put(&self, slot: usize, at: u32, v: Value) {
        if self.clock.get() == at {
            self.values.borrow_mut()[slot] = (at, v);
        }
    }

    fn tick(&self) -> u32 {
        let now = self.clock.get() + 1;
        self.clock.set(now);
        now
    }
}

/// Does evaluating `e` range over the units or sides, or measure the table?
fn ranges(rs: &Ruleset, e: &Ex, seen: &mut Vec<bool>) -> bool {
    match e {
        Ex::Quant(..) => true,
        Ex::Builtin(b, _) if b.measures_table() => true,
        Ex::Define(d, a) => {
            let d = *d as usize;
            if !seen[d] {
                seen[d] = true;
                if ranges(rs, &rs.defines[d].body, seen) {
                    return true;
                }
            }
            a.iter().any(|x| ranges(rs, x, seen))
        }
        e => e.any_child(&mut |c| ranges(rs, c, seen)),
    }
}

/// The defines and battle facts of two units whose values a battle
/// remembers per pair: their bodies range over the units or make a costly
/// measure of the table (a charge's path, a line of sight, a gap), directly
/// or through what they call. Each has a row of the memo, numbered after
/// the rows of one unit (every define, then the two nearest-unit rows).
#[derive(Clone, Debug)]
pub(crate) struct PairRows {
    pub define: Vec<Option<u16>>,
    pub fact: Vec<Option<u16>>,
    /// The bodies, by row (from the first pair row on).
    bodies: Vec<PairBody>,
}

#[derive(Clone, Copy, Debug)]
enum PairBody {
    Define(Id),
    Fact(Id),
}

impl PairRows {
    /// The rows of a ruleset whose defines remembered per unit are
    /// `remembered` ([`worth_remembering`]).
    pub(crate) fn of(rs: &Ruleset, remembered: &[bool]) -> PairRows {
        let two_units = |f: &Func| f.params.len() == 2 && f.params.iter().all(|p| p.1 == Ty::Unit);
        let mut next = rs.defines.len() + 2;
        let mut bodies = Vec::new();
        let mut row = |body: PairBody| {
            bodies.push(body);
            next += 1;
            Some((next - 1) as u16)
        };
        let define = rs
            .defines
            .iter()
            .enumerate()
            .map(|(d, f)| {
                (two_units(f) && costly(rs, &f.body, &mut Costly::new(rs, remembered)))
                    .then(|| row(PairBody::Define(d as Id)))
                    .flatten()
            })
            .collect();
        let fact = rs
            .facts
            .iter()
            .enumerate()
            .map(|(i, f)| match &f.battle {
                Some(b)
                    if two_units(b) && costly(rs, &b.body, &mut Costly::new(rs, remembered)) =>
                {
                    row(PairBody::Fact(i as Id))
                }
                _ => None,
            })
            .collect();
        PairRows {
            define,
            fact,
            bodies,
        }
    }

    fn body<'a>(&self, rs: &'a Ruleset, i: usize) -> &'a Func {
        match self.bodies[i] {
            PairBody::Define(d) => &rs.defines[d as usize],
            PairBody::Fact(f) => rs.facts[f as usize]
                .battle
                .as_ref()
                .expect("a pair row of a fact is of its battle body"),
        }
    }
}

/// What [`costly`] has looked into already.
struct Costly {
    defines: Vec<bool>,
    tables: Vec<bool>,
    facts: Vec<bool>,
}

impl Costly {
    /// Nothing looked into yet, but for the defines remembered per unit:
    /// calling one of those is cheap once its value is known.
    fn new(rs: &Ruleset, remembered: &[bool]) -> Costly {
        Costly {
            defines: remembered.to_vec(),
            tables: vec![false; rs.tables.len()],
            facts: vec![false; rs.facts.len()],
        }
    }
}

/// Does evaluating `e` range over the units, or make a costly measure of
/// the table, directly or through a define (but one remembered per unit),
/// table or battle fact it calls?
fn costly(rs: &Ruleset, e: &Ex, seen: &mut Costly) -> bool {
    use Builtin as B;
    let here = match e {
        Ex::Quant(..)
        | Ex::Builtin(
            B::Reachable
            | B::GroupReachable
            | B::GroupReachableFront
            | B::SightCrosses
            | B::UnitsBetween
            | B::GapNarrower
            | B::InArc
            | B::OnLineThrough
            | B::RoomBehind,
            _,
        ) => true,
        Ex::Define(d, _) => {
            !std::mem::replace(&mut seen.defines[*d as usize], true)
                && costly(rs, &rs.defines[*d as usize].body, seen)
        }
        Ex::Table(t, _) => {
            !std::mem::replace(&mut seen.tables[*t as usize], true)
                && costly(rs, &rs.tables[*t as usize].body, seen)
        }
        Ex::Fact(f, _) => match &rs.facts[*f as usize].battle {
            Some(b) => {
                !std::mem::replace(&mut seen.facts[*f as usize], true) && costly(rs, &b.body, seen)
            }
            None => false,
        },
        _ => false,
    };
    here || e.any_child(&mut |c| costly(rs, c, seen))
}

/// Per define: is it worth remembering (at most one parameter, and its
/// body ranges over the units, directly or through another define)?
pub(crate) fn worth_remembering(rs: &Ruleset) -> Vec<bool> {
    (0..rs.defines.len())
        .map(|d| {
            let mut seen = vec![false; rs.defines.len()];
            seen[d] = true;
            rs.defines[d].params.len() <= 1 && ranges(rs, &rs.defines[d].body, &mut seen)
        })
        .collect()
}

/// Can evaluating `e` in a battle never fail, whatever units the locals
/// whose bits are set in `units` hold (and whatever the other locals
/// hold)? A conservative answer: constants, locals and options; a unit's
/// stat, state, side, type or quality when the unit is one of those
/// locals, and the table's measures of two of them (`distance`, `zone`,
/// `in_contact`, `aligned`, `uphill`, `units_between`, `same_command`);
/// `not`, `is`, `and`, `or`, comparisons and `if` of such parts; a fact
/// with a default (noted, not hooked) or a define or battle fact whose
/// body is such, called with such arguments. Arithmetic, tables,
/// quantities, quantifiers, other measures, hooks and dice may fail:
/// `false`.
pub(crate) fn cannot_fail(rs: &Ruleset, e: &Ex, units: u64) -> bool {
    fn walk(rs: &Ruleset, e: &Ex, units: u64, depth: u8) -> bool {
        let unit = |x: &Ex| matches!(x, Ex::Local(s) if *s < 64 && units >> s & 1 == 1);
        let call = |body: &Func, args: &[Ex]| {
            let inner = args
                .iter()
                .enumerate()
                .filter(|(i, a)| *i < 64 && unit(a))
                .fold(0u64, |m, (i, _)| m | 1 << i);
            depth < 8
                && args.iter().all(|a| walk(rs, a, units, depth))
                && walk(rs, &body.body, inner, depth + 1)
        };
        match e {
            Ex::Const(_) | Ex::Local(_) | Ex::Option(_) => true,
            Ex::Stat(x, _)
            | Ex::State(x, _)
            | Ex::SideOf(x)
            | Ex::IsType(x, _)
            | Ex::IsQuality(x, _) => unit(x),
            Ex::IsSym(x, _) | Ex::Not(x) => walk(rs, x, units, depth),
            // The table's measures of two units (of the table in a battle).
            Ex::Builtin(
                Builtin::Distance
                | Builtin::Zone
                | Builtin::InContact
                | Builtin::Aligned
                | Builtin::Uphill
                | Builtin::UnitsBetween
                | Builtin::SameCommand,
                xy,
            ) => xy.len() == 2 && xy.iter().all(unit),
            Ex::Bin(Bin::Add | Bin::Sub | Bin::Mul | Bin::Div, ..) => false,
            Ex::Bin(_, a, b) => walk(rs, a, units, depth) && walk(rs, b, units, depth),
            Ex::If(c, a, b) => [c, a, b].iter().all(|x| walk(rs, x, units, depth)),
            Ex::Define(d, args) => call(&rs.defines[*d as usize], args),
            Ex::Fact(f, args) => {
                let fd = &rs.facts[*f as usize];
                match (&fd.battle, fd.hook) {
                    (_, Some(_)) => false,
                    (Some(body), None) => call(body, args),
                    (None, None) => {
                        fd.default.is_some() && args.iter().all(|a| walk(rs, a, units, depth))
                    }
                }
            }
            _ => false,
        }
    }
    walk(rs, e, units, 0)
}

/// Does evaluating `e` roll dice or run a hook, there or in anything it
/// calls (defines, tables, quantities and their modifiers, battle facts)?
pub(crate) fn rolls_dice(rs: &Ruleset, e: &Ex) -> bool {
    Reads::of(rs, e).dice
}

/// Does evaluating `e` read nothing of a battle's world that changes (no
/// state, side state, fact, measure of the table, dice or hook, there or
/// in anything it calls)? Its value then depends on its locals alone, the
/// same for a whole game once its sides are settled.
pub(crate) fn reads_only_fixed(rs: &Ruleset, e: &Ex) -> bool {
    let r = Reads::of(rs, e);
    let none = |flags: &[bool]| !flags.iter().any(|x| *x);
    !r.dice && !r.field && !r.path && none(&r.states) && none(&r.side_states) && none(&r.facts)
}

/// The unit states and side states evaluating `e` reads, there or in
/// anything it calls (all of them when it may run a hook).
pub(crate) fn states_read(rs: &Ruleset, e: &Ex) -> (Vec<bool>, Vec<bool>) {
    let r = Reads::of(rs, e);
    (r.states, r.side_states)
}

/// What an expression reads of the parts of a battle's world that change
/// (beside its arguments; stats, options and sides are fixed for a game).
#[derive(Default)]
struct Reads {
    states: Vec<bool>,
    side_states: Vec<bool>,
    /// Noted facts (and, to be safe, every fact called).
    facts: Vec<bool>,
    field: bool,
    /// Does it read the path of a move being weighed (`touches_terrain`)?
    path: bool,
    /// Does it roll dice (or run a hook, which may)?
    dice: bool,
    /// Defines, tables and quantities already looked into.
    seen: Vec<bool>,
    /// Procedures already looked into (by `chance`/`expect`).
    procedures: Vec<bool>,
}

impl Reads {
    fn of(rs: &Ruleset, e: &Ex) -> Reads {
        let mut r = Reads {
            states: vec![false; rs.states.len()],
            side_states: vec![false; rs.side_states.len()],
            facts: vec![false; rs.facts.len()],
            field: false,
            path: false,
            dice: false,
            seen: vec![false; rs.defines.len() + rs.tables.len() + rs.quantities.len()],
            procedures: vec![false; rs.procedures.len()],
        };
        r.walk(rs, e);
        r
    }

    /// Everything: what a hook may read.
    fn everything(&mut self) {
        self.states.iter_mut().for_each(|x| *x = true);
        self.side_states.iter_mut().for_each(|x| *x = true);
        self.facts.iter_mut().for_each(|x| *x = true);
        self.field = true;
        self.path = true;
        self.dice = true;
    }

    /// What procedure `p` reads, through the procedures it calls: its
    /// statements' expressions, the states it changes by `+=`/`-=`, and
    /// (for a `for` over the units, or a hook) more, to be safe.
    fn procedure(&mut self, rs: &Ruleset, p: Id) {
        if std::mem::replace(&mut self.procedures[p as usize], true) {
            return;
        }
        let pd = &rs.procedures[p as usize];
        if pd.hooks.replace.is_some() || !pd.hooks.before.is_empty() || !pd.hooks.after.is_empty() {
            self.everything();
        }
        self.statements(rs, &pd.body);
    }

    fn statements(&mut self, rs: &Ruleset, body: &[St]) {
        for s in body {
            match s {
                St::Let(_, e, _) | St::Outcome(_, e, _) | St::Require(e, _, _) => self.walk(rs, e),
                St::If(c, a, b, _) => {
                    self.walk(rs, c);
                    self.statements(rs, a);
                    self.statements(rs, b);
                }
                St::AssignState {
                    unit, state, value, ..
                } => {
                    self.states[*state as usize] = true;
                    self.walk(rs, unit);
                    self.walk(rs, value);
                }
                St::AssignSideState {
                    side, state, value, ..
                } => {
                    self.side_states[*state as usize] = true;
                    self.walk(rs, side);
                    self.walk(rs, value);
                }
                St::Call(q, args, _) => {
                    args.iter().for_each(|a| self.walk(rs, a));
                    self.procedure(rs, *q);
                }
                St::For(_, _, c, b, _) => {
                    self.field = true;
                    self.walk(rs, c);
                    self.statements(rs, b);
                }
                St::Note(f, args, v, _) => {
                    self.facts[*f as usize] = true;
                    args.iter().for_each(|a| self.walk(rs, a));
                    self.walk(rs, v);
                }
            }
        }
    }

    /// Look into a define, table or quantity (numbered one after the other) once.
    fn first_visit(&mut self, i: usize) -> bool {
        !std::mem::replace(&mut self.seen[i], true)
    }

    fn walk(&mut self, rs: &Ruleset, e: &Ex) {
        let (nd, nt) = (rs.defines.len(), rs.tables.len());
        match e {
            Ex::State(_, s) => self.states[*s as usize] = true,
            Ex::SideState(_, s) => self.side_states[*s as usize] = true,
            Ex::Dice { .. } | Ex::Roll(_) | Ex::Builtin(Builtin::RollOff, _) => self.dice = true,
            // The odds of a procedure read whatever it reads (it rolls none
            // of the battle's dice).
            Ex::Odds(o) => {
                let dice = self.dice;
                self.procedure(rs, o.procedure);
                self.dice = dice;
            }
            Ex::Builtin(b, _) if b.measures_table() => {
                self.field = true;
                self.path |= *b == Builtin::TouchesTerrain;
            }
            Ex::Fact(f, _) => {
                self.facts[*f as usize] = true;
                if let Some(b) = &rs.facts[*f as usize].battle {
                    self.walk(rs, &b.body);
                }
                // A hook may read anything: count it as reading everything.
                if rs.facts[*f as usize].hook.is_some() {
                    self.everything();
                }
            }
            Ex::Define(d, _) if self.first_visit(*d as usize) => {
                self.walk(rs, &rs.defines[*d as usize].body)
            }
            Ex::Table(t, _) if self.first_visit(nd + *t as usize) => {
                self.walk(rs, &rs.tables[*t as usize].body)
            }
            Ex::Quantity(q, _) if self.first_visit(nd + nt + *q as usize) => {
                let qd = &rs.quantities[*q as usize];
                self.walk(rs, &qd.func.body);
                for m in &qd.modifiers {
                    let md = &rs.modifiers[*m as usize];
                    self.walk(rs, &md.amount);
                    if let Some(w) = &md.when {
                        self.walk(rs, w);
                    }
                }
            }
            _ => {}
        }
        e.any_child(&mut |c| {
            self.walk(rs, c);
            false
        });
    }
}

pub(crate) fn fault(msg: impl Into<String>, help: impl Into<String>) -> EvalError {
    EvalError::Fault(Box::new(Diag::new("muster::runtime", msg).help(help)))
}

/// `cards_held(a, v)`: how many cards worth `v` or more unit `a` holds (the
/// world's copy of the battle's hands; none outside a battle).
fn cards_held(c: Ctx, v: &[Value]) -> R<Value> {
    if c.dirty.is_some() {
        return Err(EvalError::NotStatic);
    }
    let Value::Unit(u) = v[0] else {
        return Err(fault(
            format!("`cards_held` needs a unit, not {}", v[0]),
            "guard the rule so the holder is never `none`",
        ));
    };
    let Some((n, d)) = v[1].as_frac() else {
        return Err(fault(
            format!("`cards_held` needs a card value, not {}", v[1]),
            "the second argument is the least value a card counted is worth",
        ));
    };
    let hand = c
        .world
        .held
        .get(u as usize)
        .map_or(&[][..], |h| h.as_slice());
    Ok(Value::Int(
        hand.iter().filter(|&&x| x * d >= n).count() as i64
    ))
}

/// A pool of dice that cannot be rolled for its size (below none, over
/// [`crate::compile::ir::MAX_POOL`]), at the rule that rolls it.
#[cold]
pub(crate) fn pool_fault(msg: String, span: Span) -> EvalError {
    EvalError::Fault(Box::new(
        Diag::new("muster::runtime", msg)
            .at(span, "this pool")
            .help("check the number of dice the rule computes"),
    ))
}

/// A unit was expected (the compiler's type checks make this a bug).
#[cold]
pub(crate) fn not_a_unit(other: Value) -> EvalError {
    fault(
        format!("expected a unit, found {other:?}"),
        "this is a bug in the compiler's type checks",
    )
}

/// A side was expected (the compiler's type checks make this a bug).
#[cold]
pub(crate) fn not_a_side() -> EvalError {
    fault(
        "expected a side",
        "this is a bug in the compiler's type checks",
    )
}

/// `-v`.
pub(crate) fn negate(v: Value) -> R<Value> {
    Value::Int(0)
        .arith('-', v)
        .ok_or_else(|| fault("cannot negate this value", "negate numbers only"))
}

/// What the memo knows of a define's value for an argument.
pub(crate) enum Remembered {
    /// The value, still good.
    Known(Value),
    /// Not known: compute it, then [`Eval::remember`] it in `slot` (it was
    /// asked for at clock `at`).
    Unknown { slot: usize, at: u32 },
    /// Not remembered for this define or argument: compute it.
    Never,
}

impl<'r> Eval<'r> {
    pub fn new(rs: &'r Ruleset) -> Self {
        Eval {
            rs,
            code: None,
            memo: None,
            trace: None,
            odds: Default::default(),
            define_bodies: Default::default(),
        }
    }

    /// An evaluator that remembers the values of defines ranging over the
    /// units until what they read changes: a battle says what it changes
    /// ([`Eval::changed`]) or that anything may have ([`Eval::forget`]).
    pub fn remembering(rs: &'r Ruleset, units: usize, sides: usize) -> Self {
        let worth = worth_remembering(rs);
        // Two more rows: nearest_enemy and nearest_friend (they measure the
        // table); then the rows of pairs.
        let pair_rows = PairRows::of(rs, &worth);
        let first_pair_row = worth.len() + 2;
        // Then a row per `chance`/`expect`, for its remembered answers.
        let first_odds_row = first_pair_row + pair_rows.bodies.len();
        let rows = first_odds_row + rs.weighings.len();
        let mut by_state = vec![Vec::new(); rs.states.len()];
        let mut by_side_state = vec![Vec::new(); rs.side_states.len()];
        let mut by_fact = vec![Vec::new(); rs.facts.len()];
        let mut by_field: Vec<u16> = vec![first_pair_row as u16 - 2, first_pair_row as u16 - 1];
        let mut by_path: Vec<u16> = Vec::new();
        let ones = rs
            .defines
            .iter()
            .enumerate()
            .filter(|(d, _)| worth[*d])
            .map(|(d, f)| (d as u16, f));
        let pairs = (0..pair_rows.bodies.len())
            .map(|i| ((first_pair_row + i) as u16, pair_rows.body(rs, i)));
        let weighings = rs.weighings.iter().enumerate().map(|(i, w)| {
            let mut r = Reads::of(rs, &w.of);
            r.procedure(rs, w.procedure);
            ((first_odds_row + i) as u16, r)
        });
        let reads = ones
            .chain(pairs)
            .map(|(row, f)| (row, Reads::of(rs, &f.body)))
            .chain(weighings);
        for (row, r) in reads {
            let mark = |flags: &[bool], by: &mut [Vec<u16>]| {
                for (i, on) in flags.iter().enumerate() {
                    if *on {
                        by[i].push(row);
                    }
                }
            };
            mark(&r.states, &mut by_state);
            mark(&r.side_states, &mut by_side_state);
            mark(&r.facts, &mut by_fact);
            if r.field {
                by_field.push(row);
            }
            if r.path {
                by_path.push(row);
            }
        }
        let per = 1 + units + sides;
        Eval {
            rs,
            code: None,
            memo: Some(Memo {
                first_odds_row,
                values: std::cell::RefCell::new(vec![(0, Value::None); first_pair_row * per]),
                first_pair_row,
                pairs: std::cell::RefCell::new(vec![Vec::new(); pair_rows.bodies.len()]),
                pair_asked: vec![std::cell::Cell::new(0); pair_rows.bodies.len()],
                pair_known: vec![std::cell::Cell::new(0); pair_rows.bodies.len()],
                worth,
                units,
                per,
                clock: std::cell::Cell::new(1),
                stale: vec![std::cell::Cell::new(1); rows],
                by_state,
                by_side_state,
                by_fact,
                by_field,
                by_path,
            }),
            trace: None,
            odds: Default::default(),
            define_bodies: Default::default(),
        }
    }

    /// Forget every remembered value: anything in the world may have changed.
    pub fn forget(&self) {
        if let Some(m) = &self.memo {
            let now = m.tick();
            for s in &m.stale {
                s.set(now);
            }
        }
    }

    /// Forget the remembered values that read what has just changed.
    #[inline]
    pub fn changed(&self, what: Change) {
        let Some(m) = &self.memo else { return };
        let rows = match what {
            Change::State(s) => &m.by_state[s as usize],
            Change::SideState(s) => &m.by_side_state[s as usize],
            Change::Fact(f) => &m.by_fact[f as usize],
            Change::Field => &m.by_field,
            Change::Path => &m.by_path,
        };
        let now = m.tick();
        for r in rows {
            m.stale[*r as usize].set(now);
        }
    }

    /// The answer remembered for a `chance` or `expect`, if the world has
    /// not changed since it was taken (only a battle remembers).
    fn odds_remembered(&self, key: &OddsKey) -> Option<Value> {
        let m = self.memo.as_ref()?;
        let odds = self.odds.borrow();
        let (at, v) = odds.get(key)?;
        (*at >= m.stale[m.first_odds_row + key.0 as usize].get()).then_some(*v)
    }

    /// Remember a `chance` or `expect` answer taken at clock `at` (unless
    /// the world changed meanwhile).
    fn odds_remember(&self, key: OddsKey, at: u32, v: Value) {
        if let Some(m) = &self.memo {
            if m.clock.get() != at {
                return;
            }
            let mut odds = self.odds.borrow_mut();
            // Answers of older worlds are of no more use.
            if odds.len() > 4096 {
                let first = m.first_odds_row;
                odds.retain(|k, (at, _)| *at >= m.stale[first + k.0 as usize].get());
            }
            odds.insert(key, (at, v));
        }
    }

    /// `chance(...)` or `expect(...)` ([`crate::run::chance`]), walked.
    #[inline(never)]
    fn odds_of(
        &self,
        c: Ctx,
        o: &OddsEx,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let mut key = Vec::with_capacity(o.args.len() + o.given.len());
        for a in &o.args {
            key.push(self.eval(c, a, frame, dice)?);
        }
        let mut given = Vec::with_capacity(o.given.len());
        for (f, args, v) in &o.given {
            let mut k = Vec::with_capacity(args.len());
            for a in args {
                k.push(self.eval(c, a, frame, dice)?);
            }
            let v = self.eval(c, v, frame, dice)?;
            key.extend_from_slice(&k);
            key.push(v);
            given.push((*f, k, v));
        }
        let first = o.first as usize;
        self.odds_answer(c, o, key, &given, &mut |out| {
            frame[first..first + out.len()].copy_from_slice(out);
            self.eval(c, &o.of, frame, &mut NoDice)
        })
    }

    /// A `chance` or `expect` whose arguments and given facts have the
    /// values `key` (the arguments first, then each given fact's arguments
    /// and value) and `given`: remembered, or weighed with `of` reading the
    /// outcomes of each ending.
    pub(crate) fn odds_answer(
        &self,
        c: Ctx,
        o: &OddsEx,
        key: Vec<Value>,
        given: &[(Id, Vec<Value>, Value)],
        of: &mut dyn FnMut(&[Value]) -> R<Value>,
    ) -> R<Value> {
        let key = (o.row, key);
        // An `of` reading a local of the caller's that the key does not
        // hold has answers the key does not tell apart: never remembered.
        if self.memo.is_none() || !closed(o) {
            return crate::run::chance::weigh(self, c, o, &key.1[..o.args.len()], given, of);
        }
        if let Some(v) = self.odds_remembered(&key) {
            return Ok(v);
        }
        let at = self.memo.as_ref().map_or(0, |m| m.clock.get());
        let v = crate::run::chance::weigh(self, c, o, &key.1[..o.args.len()], given, of)?;
        self.odds_remember(key, at, v);
        Ok(v)
    }

    /// Lend `to` (an evaluator specialising a procedure) this evaluator's
    /// compiled define bodies, made on first use; [`Eval::take_back_define_bodies`]
    /// returns them.
    pub(crate) fn lend_define_bodies(&self, to: &Eval<'r>) {
        let b = self
            .define_bodies
            .take()
            .unwrap_or_else(|| Box::new(crate::run::closures::DefineBodies::new()));
        *to.define_bodies.borrow_mut() = Some(b);
    }

    /// Take back the define bodies lent to `from`.
    pub(crate) fn take_back_define_bodies(&self, from: &Eval<'r>) {
        if let Some(b) = from.define_bodies.take() {
            *self.define_bodies.borrow_mut() = Some(b);
        }
    }

    /// Define `d` called with `args`, run compiled when this evaluator holds
    /// define bodies and nothing the procedure being specialised changes
    /// has been changed yet (the compiled code reads state without asking
    /// whether it changed; everything else it asks the same helpers, so
    /// the value or the error is the walk's). `None`: walk it.
    #[inline(never)]
    fn compiled_define(
        &self,
        c: Ctx,
        d: Id,
        args: &[Ex],
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> Option<R<Value>> {
        if !c.dirty.is_some_and(Dirty::clean) {
            return None;
        }
        let body = self.define_bodies.borrow_mut().as_mut()?.body(self.rs, d);
        let mut vals = [Value::None; 12];
        if args.len() > vals.len() {
            return None;
        }
        for (i, a) in args.iter().enumerate() {
            match self.eval(c, a, frame, dice) {
                Ok(v) => vals[i] = v,
                Err(e) => return Some(Err(e)),
            }
        }
        Some(body.call_in(self, c, &vals[..args.len()], dice))
    }

    /// Run compiled code where an expression has some ([`crate::run::closures`]).
    pub fn with_code(mut self, code: std::sync::Arc<crate::run::closures::Compiled>) -> Self {
        self.code = Some(code);
        self
    }

    /// Evaluate `e`: its compiled code if it has some, else the tree.
    #[inline]
    pub fn run(&self, c: Ctx, e: &Ex, frame: &mut [Value], dice: &mut dyn DiceSource) -> R<Value> {
        match self.code.as_ref().and_then(|k| k.get(e)) {
            Some(code) => code.run(self, c, frame, dice),
            None => self.eval(c, e, frame, dice),
        }
    }

    /// How wide procedure `p`'s frames must be (its compiled code may use
    /// more slots than the procedure declares).
    pub(crate) fn procedure_width(&self, p: Id) -> usize {
        let pd = &self.rs.procedures[p as usize];
        let own = pd.slots as usize;
        self.code
            .as_ref()
            .and_then(|k| k.procedure_width(p))
            .map_or(own, |w| w.max(own))
    }

    /// Are the values of define `d` remembered (a battle's evaluator, and a
    /// define of at most one unit or side that ranges over the units)?
    #[inline]
    pub(crate) fn remembers(&self, d: Id) -> bool {
        self.memo.as_ref().is_some_and(|m| m.worth[d as usize])
    }

    /// What is remembered of define `d` for its argument (`None`: it has none).
    #[inline]
    pub(crate) fn remembered(&self, d: Id, arg: Option<Value>) -> Remembered {
        let Some(m) = &self.memo else {
            return Remembered::Never;
        };
        let Some(slot) = m.slot(d, arg) else {
            return Remembered::Never;
        };
        match m.get(d, slot) {
            Some(v) => Remembered::Known(v),
            None => Remembered::Unknown {
                slot,
                at: m.clock.get(),
            },
        }
    }

    /// Remember a value [`Eval::remembered`] asked for.
    #[inline]
    pub(crate) fn remember(&self, slot: usize, at: u32, v: Value) {
        if let Some(m) = &self.memo {
            m.put(slot, at, v);
        }
    }

    /// Is pair row `row` worth asking? Not without a memo, nor once it has
    /// been asked often and known seldom (under one time in eight after
    /// 512 asks): its values change faster than they are asked for again,
    /// and computing them directly is cheaper. (Whether a value is
    /// remembered never changes what it is.)
    #[inline]
    pub(crate) fn pair_row_pays(&self, row: u16) -> bool {
        let Some(m) = &self.memo else {
            return false;
        };
        let i = row as usize - m.first_pair_row;
        let asked = m.pair_asked[i].get();
        asked < 512 || m.pair_known[i].get() * 8 >= asked
    }

    /// What is remembered in pair row `row` ([`PairRows`]) for units `a`
    /// and `b`, in that order.
    #[inline]
    pub(crate) fn remembered_pair(&self, row: u16, a: Value, b: Value) -> Remembered {
        let Some(m) = &self.memo else {
            return Remembered::Never;
        };
        let (Value::Unit(a), Value::Unit(b)) = (a, b) else {
            return Remembered::Never;
        };
        let (a, b) = (a as usize, b as usize);
        if a >= m.units || b >= m.units {
            return Remembered::Never;
        }
        let slot = a * m.units + b;
        let i = row as usize - m.first_pair_row;
        m.pair_asked[i].set(m.pair_asked[i].get().saturating_add(1));
        let pairs = m.pairs.borrow();
        if let Some((stamp, v)) = pairs[i].get(slot) {
            if *stamp >= m.stale[row as usize].get() {
                m.pair_known[i].set(m.pair_known[i].get().saturating_add(1));
                return Remembered::Known(*v);
            }
        }
        Remembered::Unknown {
            slot: i * m.units * m.units + slot,
            at: m.clock.get(),
        }
    }

    /// Remember a value [`Eval::remembered_pair`] asked for.
    #[inline]
    pub(crate) fn remember_pair(&self, slot: usize, at: u32, v: Value) {
        let Some(m) = &self.memo else { return };
        if m.clock.get() != at {
            return;
        }
        let n = m.units * m.units;
        let mut pairs = m.pairs.borrow_mut();
        let row = &mut pairs[slot / n];
        if row.is_empty() {
            // A row the memory cannot hold remembers nothing (the same
            // values, computed again) rather than aborting.
            if row.try_reserve_exact(n).is_err() {
                return;
            }
            row.resize(n, (0, Value::None));
        }
        row[slot % n] = (at, v);
    }

    /// Evaluate a state initialiser for one unit or side.
    pub fn call_init(&self, w: &World, f: &Func, subject: Value) -> Result<Value, Diag> {
        // Most initialisers are a constant (`false`, `0`), asked of every
        // unit at set-up and, for states reset each turn, every turn.
        if let Ex::Const(v) = f.body {
            return Ok(v);
        }
        // The rest need a few slots: their frame lives on the stack.
        let n = f.slots.max(1) as usize;
        let (mut small, mut big) = ([Value::None; 8], Vec::new());
        let frame: &mut [Value] = if n <= small.len() {
            &mut small[..n]
        } else {
            big.resize(n, Value::None);
            &mut big
        };
        frame[0] = subject;
        let ctx = Ctx {
            world: w,
            state: &[],
            side_state: &[],
            dirty: None,
        };
        self.eval(ctx, &f.body, frame, &mut NoDice).map_err(|e| {
            e.diag_or(|| {
                Diag::new(
                    "muster::runtime",
                    format!("state `{}` cannot be initialised", f.name),
                )
            })
        })
    }

    fn unit(&self, v: Value) -> R<usize> {
        match v {
            Value::Unit(u) => Ok(u as usize),
            other => Err(not_a_unit(other)),
        }
    }

    pub fn num(&self, v: Value, what: &str) -> R<i64> {
        match v {
            Value::Int(i) => Ok(i),
            Value::Frac(n, d) => Ok(n.div_euclid(d) as i64),
            Value::None => Err(fault(
                format!("{what} is `none`"),
                "a unit type without this stat (a `none` in its units row) cannot take part here; guard the rule with `u.stat != none`",
            )),
            other => Err(fault(format!("{what} is not a number ({other:?})"), "this is a bug in the compiler's type checks")),
        }
    }

    pub fn eval(
        &self,
        c: Ctx,
        ex: &Ex,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        Ok(match ex {
            Ex::Const(v) => *v,
            Ex::Local(s) => frame[*s as usize],
            Ex::Option(o) => Value::Bool(c.world.options[*o as usize]),
            Ex::Stat(u, s) => {
                let u = self.unit(self.eval(c, u, frame, dice)?)?;
                c.world.units[u].stats[*s as usize]
            }
            Ex::State(u, s) => {
                if let Some(d) = c.dirty {
                    if d.states[*s as usize] {
                        return Err(EvalError::NotStatic);
                    }
                }
                let u = self.unit(self.eval(c, u, frame, dice)?)?;
                c.state[u * self.rs.states.len() + *s as usize]
            }
            Ex::SideState(x, s) => {
                if let Some(d) = c.dirty {
                    if d.side_states[*s as usize] {
                        return Err(EvalError::NotStatic);
                    }
                }
                let Value::Side(sd) = self.eval(c, x, frame, dice)? else {
                    return Err(not_a_side());
                };
                c.side_state[sd as usize * self.rs.side_states.len() + *s as usize]
            }
            Ex::SideOf(u) => {
                let u = self.unit(self.eval(c, u, frame, dice)?)?;
                Value::Side(c.world.units[u].side)
            }
            Ex::Fact(f, args) => {
                if let (Some(_), Some(d)) = (&c.world.field, &self.rs.facts[*f as usize].battle) {
                    return self.call(c, d, args, frame, dice);
                }
                if let Some(h) = self.rs.facts[*f as usize].hook {
                    let mut key = Vec::with_capacity(args.len());
                    for a in args {
                        key.push(self.eval(c, a, frame, dice)?);
                    }
                    return crate::run::hooks::fact_value(self, c, h, *f, &key);
                }
                self.noted_fact(c, *f, args, frame, dice)?
            }
            Ex::Define(d, args) => {
                let f = &self.rs.defines[*d as usize];
                if !self.remembers(*d) || c.dirty.is_some() {
                    if c.dirty.is_some() {
                        if let Some(v) = self.compiled_define(c, *d, args, frame, dice) {
                            return v;
                        }
                    }
                    return self.call(c, f, args, frame, dice);
                }
                let arg = match args.first() {
                    Some(a) => Some(self.eval(c, a, frame, dice)?),
                    None => None,
                };
                let vals: [Value; 1] = [arg.unwrap_or(Value::None)];
                let vals = &vals[..args.len()];
                match self.remembered(*d, arg) {
                    Remembered::Known(v) => v,
                    Remembered::Unknown { slot, at } => {
                        let v = self.call_values(c, f, vals, dice)?;
                        self.remember(slot, at, v);
                        v
                    }
                    Remembered::Never => self.call_values(c, f, vals, dice)?,
                }
            }
            Ex::Table(t, args) => {
                let f = &self.rs.tables[*t as usize];
                self.call(c, f, args, frame, dice)?
            }
            Ex::Quantity(q, args) => self.quantity(c, *q, args, frame, dice)?,
            Ex::Builtin(Builtin::RollOff, args) => return self.roll_off(c, args, frame, dice),
            Ex::Builtin(b, args) => {
                let mut v = [Value::None; 4];
                for (i, a) in args.iter().enumerate() {
                    v[i] = self.eval(c, a, frame, dice)?;
                }
                let v = &v[..args.len()];
                if b.measures_table() {
                    return self.measure(c, *b, v);
                }
                builtin(*b, v)?
            }
            Ex::IsType(u, set) => {
                let u = self.unit(self.eval(c, u, frame, dice)?)?;
                Value::Bool(set[c.world.units[u].ty as usize])
            }
            Ex::IsQuality(u, set) => {
                let u = self.unit(self.eval(c, u, frame, dice)?)?;
                Value::Bool(c.world.units[u].quality.is_some_and(|q| set[q as usize]))
            }
            Ex::IsSym(x, syms) => match self.eval(c, x, frame, dice)? {
                Value::Sym(s) => Value::Bool(syms.contains(&s)),
                _ => Value::Bool(false),
            },
            Ex::Not(x) => Value::Bool(!self.eval(c, x, frame, dice)?.as_bool()),
            Ex::Neg(x) => negate(self.eval(c, x, frame, dice)?)?,
            Ex::Bin(op, a, b) => {
                match op {
                    Bin::And => {
                        return Ok(Value::Bool(
                            self.eval(c, a, frame, dice)?.as_bool()
                                && self.eval(c, b, frame, dice)?.as_bool(),
                        ))
                    }
                    Bin::Or => {
                        return Ok(Value::Bool(
                            self.eval(c, a, frame, dice)?.as_bool()
                                || self.eval(c, b, frame, dice)?.as_bool(),
                        ))
                    }
                    _ => {}
                }
                let x = self.eval(c, a, frame, dice)?;
                let y = self.eval(c, b, frame, dice)?;
                binary(*op, x, y)?
            }
            Ex::If(cond, a, b) => {
                if self.eval(c, cond, frame, dice)?.as_bool() {
                    self.eval(c, a, frame, dice)?
                } else {
                    self.eval(c, b, frame, dice)?
                }
            }
            Ex::Quant(q @ (Quant::Sum | Quant::Min | Quant::Max), sides, slot, body) => {
                self.total(c, *q, *sides, *slot, body, frame, dice)?
            }
            Ex::Quant(q, sides, slot, body) => {
                let n = if *sides {
                    c.world.side_names.len()
                } else {
                    c.world.units.len()
                };
                let mut count = 0i64;
                for i in 0..n {
                    frame[*slot as usize] = if *sides {
                        Value::Side(i as u16)
                    } else {
                        Value::Unit(i as u16)
                    };
                    let hit = self.eval(c, body, frame, dice)?.as_bool();
                    match q {
                        Quant::Any if hit => return Ok(Value::Bool(true)),
                        Quant::First if hit => return Ok(frame[*slot as usize]),
                        Quant::All if !hit => return Ok(Value::Bool(false)),
                        _ => count += i64::from(hit),
                    }
                }
                match q {
                    Quant::Any => Value::Bool(false),
                    Quant::All => Value::Bool(true),
                    Quant::First => Value::None,
                    _ => Value::Int(count),
                }
            }
            Ex::Dice {
                count,
                die,
                mode,
                reroll,
                span,
            } => self.roll(c, count, *die, mode, *reroll, frame, dice, *span)?,
            Ex::Roll(r) => self.roll_ex(c, r, frame, dice)?,
            Ex::Odds(o) => self.odds_of(c, o, frame, dice)?,
            Ex::Tally(x, fx, k) => {
                let v = self.eval(c, x, frame, dice)?;
                self.tally_of(v, *fx, *k)?
            }
        })
    }

    /// A fact noted in the world (or stated by a situation), else its default.
    #[inline(never)]
    fn noted_fact(
        &self,
        c: Ctx,
        f: Id,
        args: &[Ex],
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        // Most facts have a few arguments: their key lives on the stack.
        let mut small = [Value::None; 4];
        let mut big = Vec::new();
        let key: &mut [Value] = if args.len() <= small.len() {
            &mut small[..args.len()]
        } else {
            big.resize(args.len(), Value::None);
            &mut big
        };
        for (k, a) in key.iter_mut().zip(args) {
            *k = self.eval(c, a, frame, dice)?;
        }
        self.noted(c, f, key)
    }

    /// The value of fact `f` for the arguments `key`: noted in the world
    /// (or stated by a situation), else the fact's default.
    #[inline]
    pub(crate) fn noted(&self, c: Ctx, f: Id, key: &[Value]) -> R<Value> {
        Ok(match c.world.facts[f as usize].get(key) {
            Some(v) => *v,
            None => match self.rs.facts[f as usize].default {
                Some(v) => v,
                None => {
                    let shown: Vec<String> =
                        key.iter().map(|v| c.world.show(self.rs, *v)).collect();
                    let call = format!("{}({})", self.rs.facts[f as usize].name, shown.join(", "));
                    return Err(fault(
                        format!("fact `{call}` is not known here and has no default"),
                        format!("state it in the situation's `facts`, e.g. \"{call}\", or give the fact a default in the ruleset"),
                    ));
                }
            },
        })
    }

    /// A quantity: its base value with its modifiers applied.
    #[inline(never)]
    fn quantity(
        &self,
        c: Ctx,
        q: Id,
        args: &[Ex],
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let qd = &self.rs.quantities[q as usize];
        let mut inner = vec![Value::None; qd.func.slots as usize];
        for (i, a) in args.iter().enumerate() {
            inner[i] = self.eval(c, a, frame, dice)?;
        }
        let base = self.eval(c, &qd.func.body, &mut inner, dice)?;
        let base = self.base_value(q, base)?;
        let v = crate::compile::modifiers::apply(
            qd,
            &self.rs.modifiers,
            base,
            |_, _, e| self.eval(c, e, &mut inner, &mut NoDice),
            |m| self.applied(m),
        )?;
        Ok(Value::Int(v))
    }

    /// A quantity's base value as a number.
    #[inline]
    pub(crate) fn base_value(&self, q: Id, v: Value) -> R<i64> {
        match v {
            Value::Int(i) => Ok(i),
            other => self.num(
                other,
                &format!(
                    "the base value of `{}`",
                    self.rs.quantities[q as usize].func.name
                ),
            ),
        }
    }

    /// Modifier `m` applied: a battle's log shows it.
    pub(crate) fn applied(&self, m: Id) {
        if let Some(t) = &self.trace {
            let mut t = t.borrow_mut();
            if !t.contains(&m) {
                t.push(m);
            }
        }
    }

    /// `roll_off(a, b)`: 1 when `a` rolls higher, 2 when `b` does.
    #[inline(never)]
    fn roll_off(
        &self,
        c: Ctx,
        args: &[Ex],
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        if c.dirty.is_some() {
            return Err(EvalError::NotStatic);
        }
        // Roll both again while they tie; a die that always ties is a
        // broken rule, not an endless loop.
        for _ in 0..ROLL_OFF_LIMIT {
            let a = self.eval(c, &args[0], frame, dice)?;
            let b = self.eval(c, &args[1], frame, dice)?;
            if let Some(w) = Self::roll_off_winner(a, b) {
                return Ok(w);
            }
        }
        Err(Self::roll_off_tied())
    }

    /// A measure of the table, with its arguments' values.
    #[inline(never)]
    pub(crate) fn measure(&self, c: Ctx, b: Builtin, v: &[Value]) -> R<Value> {
        if b == Builtin::CardsHeld {
            return cards_held(c, v);
        }
        let Some(f) = &c.world.field else {
            if c.dirty.is_some() {
                return Err(EvalError::NotStatic);
            }
            return Err(fault(
                format!("`{}` measures the table: it has a value only in a battle", format!("{b:?}").to_lowercase()),
                "in an odds situation, state the facts the rules derive from the table instead (`facts = [...]`)",
            ));
        };
        // The nearest units are asked for again and again while a move is
        // weighed: remembered like defines.
        let row = match b {
            Builtin::NearestEnemy => 0,
            Builtin::NearestFriend => 1,
            _ => return f.measure(c.world, b, v),
        };
        let Some(m) = &self.memo else {
            return f.measure(c.world, b, v);
        };
        let d = (m.worth.len() + row) as Id;
        let Some(slot) = m.slot(d, Some(v[0])) else {
            return f.measure(c.world, b, v);
        };
        if let Some(x) = m.get(d, slot) {
            return Ok(x);
        }
        let at = m.clock.get();
        let x = f.measure(c.world, b, v)?;
        m.put(slot, at, x);
        Ok(x)
    }

    /// `sum`, `min` or `max` over the units (or sides): the body is `if
    /// COND then VALUE else 0` (sum) or `else none` (min, max, which skip
    /// it); `none` when no unit qualifies for min or max.
    #[allow(clippy::too_many_arguments)]
    fn total(
        &self,
        c: Ctx,
        q: Quant,
        sides: bool,
        slot: u16,
        body: &Ex,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let n = if sides {
            c.world.side_names.len()
        } else {
            c.world.units.len()
        };
        let mut best = total_start(q);
        for i in 0..n {
            frame[slot as usize] = if sides {
                Value::Side(i as u16)
            } else {
                Value::Unit(i as u16)
            };
            let v = self.eval(c, body, frame, dice)?;
            best = total_step(q, best, v)?;
        }
        Ok(best)
    }

    /// A pool of dice, rolled and read.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn roll(
        &self,
        c: Ctx,
        count: &Ex,
        die: Id,
        mode: &DiceMode,
        reroll: Option<crate::front::syntax::Reroll>,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
        span: Span,
    ) -> R<Value> {
        if c.dirty.is_some() {
            return Err(EvalError::NotStatic);
        }
        let n = self.eval(c, count, frame, dice)?;
        let n = self.num(n, "the number of dice")?;
        if let Some(m) = dice::pool_too_big(n) {
            return Err(pool_fault(m, span));
        }
        let reading = self.reading(c, mode, frame, dice)?;
        self.roll_pool(die, &reading, reroll, n, dice)
    }

    /// Roll `n` dice of `die` and read them.
    pub(crate) fn roll_pool(
        &self,
        die: Id,
        reading: &Reading,
        reroll: Option<crate::front::syntax::Reroll>,
        n: i64,
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let d = &self.rs.dice[die as usize];
        // A roll fails for its size (ir::MAX_POOL) or, scripted, for
        // want of rolls: the help says which.
        let v = dice::roll_pool(d, reading, reroll, n, dice).map_err(|m| {
            let help = if dice::pool_too_big(n).is_some() {
                "check the number of dice the rule computes"
            } else {
                "give one scripted roll for every die the procedure rolls"
            };
            fault(m, help)
        })?;
        Ok(Value::Int(v))
    }

    /// A roll-off's two sides compared: `Some(1)` or `Some(2)` for the
    /// winner, `None` on a tie (roll again).
    pub(crate) fn roll_off_winner(a: Value, b: Value) -> Option<Value> {
        match a.num_cmp(b) {
            Some(Ordering::Greater) => Some(Value::Int(1)),
            Some(Ordering::Less) => Some(Value::Int(2)),
            _ => None,
        }
    }

    /// A roll-off tied every time it was rolled.
    pub(crate) fn roll_off_tied() -> EvalError {
        fault(
            format!("a roll-off tied {ROLL_OFF_LIMIT} times running"),
            "each side of `roll_off` must be able to come out higher than the other",
        )
    }

    pub fn reading(
        &self,
        c: Ctx,
        mode: &DiceMode,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Reading> {
        Ok(match mode {
            DiceMode::Sum => Reading::Sum,
            DiceMode::Scoring(t) => {
                let t = self.eval(c, t, frame, dice)?;
                Reading::Scoring(self.num(t, "the score needed")?)
            }
            DiceMode::Counting(m) => Reading::Counting(m.clone()),
        })
    }

    /// Call a function with its arguments' values.
    fn call_values(&self, c: Ctx, f: &Func, args: &[Value], dice: &mut dyn DiceSource) -> R<Value> {
        let n = (f.slots as usize).max(args.len());
        let mut small = [Value::None; 12];
        let mut big;
        let inner: &mut [Value] = if n <= small.len() {
            &mut small[..n]
        } else {
            big = vec![Value::None; n];
            &mut big
        };
        inner[..args.len()].copy_from_slice(args);
        self.eval(c, &f.body, inner, dice)
    }

    fn call(
        &self,
        c: Ctx,
        f: &Func,
        args: &[Ex],
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        // Small frames live on the stack: rules call defines constantly.
        let n = f.slots as usize;
        let mut small = [Value::None; 12];
        let mut big;
        let inner: &mut [Value] = if n <= small.len() {
            &mut small[..n.max(args.len())]
        } else {
            big = vec![Value::None; n];
            &mut big
        };
        for (i, a) in args.iter().enumerate() {
            inner[i] = self.eval(c, a, frame, dice)?;
        }
        self.eval(c, &f.body, inner, dice)
    }
}

/// Where `sum` (0), `min` and `max` (`none`) start.
pub(crate) fn total_start(q: Quant) -> Value {
    if q == Quant::Sum {
        Value::Int(0)
    } else {
        Value::None
    }
}

/// `sum`, `min` or `max` so far, with one more unit's value `v` (`none`
/// is skipped by min and max).
#[inline]
pub(crate) fn total_step(q: Quant, best: Value, v: Value) -> R<Value> {
    if q == Quant::Sum {
        return binary(Bin::Add, best, v);
    }
    if v == Value::None {
        return Ok(best);
    }
    let take = match best.num_cmp(v) {
        None => best == Value::None,
        Some(o) if q == Quant::Min => o == Ordering::Greater,
        Some(o) => o == Ordering::Less,
    };
    Ok(if take { v } else { best })
}

/// How many ties in a row a roll-off may have before it is reported.
pub const ROLL_OFF_LIMIT: usize = 1000;

/// A builtin function on numbers.
pub fn builtin(b: Builtin, v: &[Value]) -> R<Value> {
    let num = |x: Value| {
        x.as_frac().ok_or_else(|| {
            fault(
                format!(
                    "`{}` needs numbers, not {x}",
                    format!("{b:?}").to_lowercase()
                ),
                "a unit without this stat cannot take part; guard the rule with `!= none`",
            )
        })
    };
    Ok(match b {
        Builtin::Min | Builtin::Max => {
            let (x, y) = (v[0], v[1]);
            num(x)?;
            num(y)?;
            let less = x.num_cmp(y) == Some(Ordering::Less);
            if less == (b == Builtin::Min) {
                x
            } else {
                y
            }
        }
        Builtin::Ceil => {
            let (n, d) = num(v[0])?;
            Value::Int(n.div_euclid(d) + i64::from(n.rem_euclid(d) != 0))
        }
        Builtin::Floor => {
            let (n, d) = num(v[0])?;
            Value::Int(n.div_euclid(d))
        }
        Builtin::RollOff => {
            unreachable!("a roll-off is evaluated by the caller, which rolls again on ties")
        }
        Builtin::Formation
        | Builtin::Files
        | Builtin::FileBases
        | Builtin::FormationBases
        | Builtin::FormationRanks
        | Builtin::FrontBases
        | Builtin::RemoveBases
        | Builtin::RemoveFrontBases
        | Builtin::Expand
        | Builtin::Contract
        | Builtin::LoopAdd
        | Builtin::LoopStart
        | Builtin::LoopNext
        | Builtin::LoopTook
        | Builtin::LoopUnqueue
        | Builtin::LoopAfter
        | Builtin::LoopMark
        | Builtin::LoopMarkOf => formation_builtin(b, v)?,
        _ => unreachable!("the table's measures are evaluated by field::Field::measure"),
    })
}

/// A builtin of formations and of the `for file` loop (see
/// [`crate::run::battlefield::files`]): whole numbers (and a flag) in, a whole
/// number out.
fn formation_builtin(b: Builtin, v: &[Value]) -> R<Value> {
    let n = |i: usize| {
        match v[i] {
        Value::Int(x) => Ok(x),
        Value::Bool(x) => Ok(i64::from(x)),
        x => Err(fault(
            format!(
                "`{}` needs whole numbers, not {x}",
                format!("{b:?}").to_lowercase()
            ),
            "a formation is a whole number (a unit's `formation` state); guard a stat that may be `none`",
        )),
    }
    };
    let mut a = [0i64; 4];
    for (i, x) in a.iter_mut().enumerate().take(v.len()) {
        *x = n(i)?;
    }
    Ok(Value::Int(formation_call(b, a)))
}

/// A builtin of formations or of the `for file` loop on its arguments as
/// whole numbers (a flag as 0 or 1; the arguments past its arity are
/// ignored). Every tier calls this one function: the tree evaluator, the
/// typed fast tier and its machine code (through a callback), so they
/// agree by construction. Total: any numbers give a number.
pub(crate) fn formation_call(b: Builtin, a: [i64; 4]) -> i64 {
    use crate::run::battlefield::files as fl;
    match b {
        Builtin::Formation => fl::new(a[0], a[1], a[2] != 0),
        Builtin::Files => fl::files(a[0]),
        Builtin::FileBases => fl::file_bases(a[0], a[1]),
        Builtin::FormationBases => fl::bases(a[0]),
        Builtin::FormationRanks => fl::ranks(a[0]),
        Builtin::FrontBases => fl::front_bases(a[0]),
        Builtin::RemoveBases => fl::remove(a[0], a[1], false),
        Builtin::RemoveFrontBases => fl::remove(a[0], a[1], true),
        Builtin::Expand => fl::expand(a[0], a[1], a[2]),
        Builtin::Contract => fl::contract(a[0], a[1], a[2]),
        Builtin::LoopAdd => fl::loop_add(a[0], a[1], a[2] != 0),
        Builtin::LoopStart => fl::loop_start(a[0], a[1], a[2]),
        Builtin::LoopNext => fl::loop_next(a[0], a[1]),
        Builtin::LoopTook => fl::loop_took(a[0], a[1]),
        Builtin::LoopUnqueue => fl::loop_unqueue(a[0], a[1]),
        Builtin::LoopAfter => fl::loop_after(a[0], a[1], a[2], a[3]),
        Builtin::LoopMark => fl::loop_mark(a[0], a[1], a[2]),
        Builtin::LoopMarkOf => fl::loop_mark_of(a[0], a[1], a[2]),
        _ => unreachable!("not a builtin of formations"),
    }
}

/// A binary operation on two values (not `and`/`or`, which short-circuit).
pub fn binary(op: Bin, x: Value, y: Value) -> R<Value> {
    let arith = |o: char| {
        x.arith(o, y).ok_or_else(|| {
            if matches!(x, Value::None) || matches!(y, Value::None) {
                fault(
                    "arithmetic on `none`",
                    "a unit without this stat cannot take part; guard the rule with `!= none`",
                )
            } else if o == '/' && y.as_frac().is_some_and(|(n, _)| n == 0) {
                fault(
                    format!("division by zero: {x} / 0"),
                    "guard the division with a condition that the divisor is not 0",
                )
            } else {
                fault(
                    format!("arithmetic overflow: {x} {o} {y}"),
                    "check the numbers the rule computes",
                )
            }
        })
    };
    Ok(match op {
        Bin::Eq => Value::Bool(eq(x, y)),
        Bin::Ne => Value::Bool(!eq(x, y)),
        Bin::Lt => Value::Bool(x.num_cmp(y) == Some(Ordering::Less)),
        Bin::Le => Value::Bool(matches!(
            x.num_cmp(y),
            Some(Ordering::Less | Ordering::Equal)
        )),
        Bin::Gt => Value::Bool(x.num_cmp(y) == Some(Ordering::Greater)),
        Bin::Ge => Value::Bool(matches!(
            x.num_cmp(y),
            Some(Ordering::Greater | Ordering::Equal)
        )),
        Bin::Add => arith('+')?,
        Bin::Sub => arith('-')?,
        Bin::Mul => arith('*')?,
        Bin::Div => arith('/')?,
        Bin::And | Bin::Or => unreachable!("short-circuit operators are evaluated by the caller"),
    })
}

fn eq(x: Value, y: Value) -> bool {
    match x.num_cmp(y) {
        Some(o) => o == Ordering::Equal,
        None => x == y,
    }
}
