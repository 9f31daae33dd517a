//! Rules compiled to closures: the hot path of battles.
//!
//! A battle asks the same few questions thousands of times a game: is this
//! option legal, what does the policy make of this move, does this part of
//! a pick's LEGAL hold for this pair. Walking the expression tree for each
//! ([`crate::run::eval`]) spends most of its time on the walk itself: a call per
//! node and a frame per define. Here each expression a battle asks over and
//! over is compiled once per prepared scenario into nested closures:
//!
//! - a local, and a unit's stat, state, side or type, is read in one step;
//! - comparisons and sums of whole numbers take a short path;
//! - the defines, tables and battle facts an expression calls are compiled
//!   into it (inlined): their parameters read the caller's locals (or
//!   constants) where the arguments are such, else fresh slots of the
//!   caller's frame that the arguments are computed into first, in order;
//!   so no call builds a frame;
//! - a define the battle remembers (see [`Eval::remembering`]) stays a call
//!   through the same memo, its body compiled once;
//! - a quantity is a call, its base and modifiers compiled once;
//! - a pool of dice rolls from the caller's dice (a procedure's statements
//!   are compiled too; a decision rolls none);
//! - a fact a hook derives is the hook's ([`crate::run::hooks`]).
//!
//! The values and the errors are the tree evaluator's, exactly: the
//! closures call the same helpers for everything but the walk, and roll
//! the same dice in the same order. A battle plays move for move the same
//! with its compiled code as without (`tests/battle.rs`, `tests/thistle.rs`
//! and `tests/matchlocks_battle.rs` play both).

use crate::base::value::Value;
use crate::compile::ir::{Bin, Builtin, DiceMode, Ex, Func, Id, Ruleset, St};
use crate::front::syntax::Quant;
use crate::front::syntax::Reroll;
use crate::run::dice::{DiceSource, Reading};
use crate::run::eval::{self, Ctx, Eval, Remembered, R};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

/// What compiled code runs against: the evaluator (its memo, its trace of
/// modifiers), the world, and the dice (a procedure's; a decision's roll
/// none).
pub struct Cx<'a, 'r> {
    pub ev: &'a Eval<'r>,
    pub c: Ctx<'a>,
    dice: RefCell<&'a mut dyn DiceSource>,
}

/// A compiled expression: reads its locals from a frame, may write the
/// slots its quantifiers and inlined calls use.
type Fun = dyn Fn(&Cx, &mut [Value]) -> R<Value> + Send + Sync;

/// One expression compiled, and how wide a frame it needs.
pub struct Code {
    f: Box<Fun>,
    need: usize,
}

impl Code {
    /// Evaluate in `frame`; a frame narrower than the code needs is widened
    /// for the run (its own slots are written back, as the tree evaluator
    /// would have left them).
    #[inline]
    pub fn run(
        &self,
        ev: &Eval,
        c: Ctx,
        frame: &mut [Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let cx = Cx {
            ev,
            c,
            dice: RefCell::new(dice),
        };
        if frame.len() >= self.need {
            return (self.f)(&cx, frame);
        }
        let mut wide = vec![Value::None; self.need];
        wide[..frame.len()].copy_from_slice(frame);
        let r = (self.f)(&cx, &mut wide);
        let n = frame.len();
        frame.copy_from_slice(&wide[..n]);
        r
    }

    /// The frame slots the code uses.
    pub fn need(&self) -> usize {
        self.need
    }

    /// Run a function's body compiled on its own with its arguments' values
    /// (its frame on the stack when small).
    fn call(&self, cx: &Cx, args: &[Value]) -> R<Value> {
        let mut small = [Value::None; 16];
        let n = self.need.max(args.len());
        if n <= small.len() {
            small[..args.len()].copy_from_slice(args);
            return (self.f)(cx, &mut small[..n]);
        }
        let mut big = vec![Value::None; n];
        big[..args.len()].copy_from_slice(args);
        (self.f)(cx, &mut big)
    }
}

/// The compiled forms of a set of expressions, found by the expression
/// itself (its address in the ruleset or in the structure that holds it,
/// which a battle only borrows, so it cannot move).
#[derive(Default)]
pub struct Compiled {
    codes: FxHashMap<usize, Code>,
    /// Per procedure compiled: the width of its frames.
    procedures: FxHashMap<Id, usize>,
}

impl Compiled {
    /// Compile every expression of procedure `p`'s statements (it runs in
    /// frames of at least its own slots).
    pub fn add_procedure(&mut self, lower: &mut Lower, p: Id) {
        let rs = lower.rs;
        let pd = &rs.procedures[p as usize];
        let mut width = (pd.slots as usize).max(pd.params.len());
        let mut exprs = Vec::new();
        statement_exprs(&pd.body, &mut exprs);
        for e in exprs {
            self.add(lower, e, width);
            width = width.max(self.codes[&(e as *const Ex as usize)].need);
        }
        self.procedures.insert(p, width);
    }

    /// How wide procedure `p`'s frames must be for its compiled code (its
    /// own slots when it was not compiled).
    pub fn procedure_width(&self, p: Id) -> Option<usize> {
        self.procedures.get(&p).copied()
    }

    /// Compile `e`, which runs in frames of at least `width` slots.
    pub fn add(&mut self, lower: &mut Lower, e: &Ex, width: usize) {
        self.codes
            .entry(e as *const Ex as usize)
            .or_insert_with(|| lower.code(e, width));
    }

    /// The compiled form of `e`, if it was compiled.
    #[inline]
    pub fn get(&self, e: &Ex) -> Option<&Code> {
        self.codes.get(&(e as *const Ex as usize))
    }
}

/// Where a local of the body being compiled lives: a slot of the frame the
/// code runs in, or a constant the call site passed.
#[derive(Clone, Copy)]
enum At {
    Slot(u16),
    Value(Value),
}

/// The locals of the body being compiled: the top-level expression's own
/// (`at` empty: local i is slot i), or an inlined body's.
struct Scope {
    at: Vec<At>,
}

impl Scope {
    fn top() -> Scope {
        Scope { at: Vec::new() }
    }
    fn get(&self, i: u16) -> At {
        if self.at.is_empty() {
            At::Slot(i)
        } else {
            self.at[i as usize]
        }
    }
    /// Where local `i` lives, if the scope knows it.
    fn try_get(&self, i: u16) -> Option<At> {
        if self.at.is_empty() {
            Some(At::Slot(i))
        } else {
            self.at.get(i as usize).copied()
        }
    }
    /// The frame slot `x` reads, when it is a local that lives in one.
    fn slot_of(&self, x: &Ex) -> Option<usize> {
        match x {
            Ex::Local(l) => match self.try_get(*l)? {
                At::Slot(s) => Some(s as usize),
                At::Value(_) => None,
            },
            _ => None,
        }
    }
    fn slot(&self, i: u16) -> usize {
        match self.get(i) {
            At::Slot(s) => s as usize,
            At::Value(_) => unreachable!("a quantifier's variable is never an argument"),
        }
    }
}

/// How deep calls are compiled into their callers; deeper ones are calls.
const INLINE_DEPTH: u8 = 6;

/// The compiler: one per ruleset, its standalone bodies shared by the
/// expressions it compiles.
pub struct Lower<'r> {
    rs: &'r Ruleset,
    /// Per define: remembered by a battle's evaluator (kept a call).
    remembered: Vec<bool>,
    /// The defines and battle facts remembered per pair of units (calls too).
    pairs: eval::PairRows,
    /// The bodies of the pair rows, compiled once.
    pair_bodies: FxHashMap<u16, Arc<Code>>,
    /// Slots used so far by the expression being compiled.
    need: usize,
    depth: u8,
    defines: Vec<Option<Arc<Code>>>,
    quantities: Vec<Option<Arc<QuantityCode>>>,
    /// While a quantity is compiled: the calls its parts make more than
    /// once with the same parameters, worked out once an evaluation.
    shared: Vec<Shared>,
}

/// What a [`Shared`] call calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Callee {
    Fact,
    Define,
    Table,
}

/// A call of a battle fact, define or table, with the quantity's own
/// parameters (`args`, by slot), that a quantity's base and modifiers make
/// more than once (`close_going(u)` in three modifiers' conditions; the
/// table `manoeuvre_allowance(u, m)` as the base and in a condition): the
/// first asks it and keeps the value in slot `val` (slot `flag` then
/// true), the others read it. Nothing changes the world while a quantity
/// is worked out, and the call rolls no dice, so it is the value each would
/// have got.
struct Shared {
    callee: Callee,
    id: Id,
    args: Vec<u16>,
    flag: u16,
    val: u16,
}

/// A quantity compiled: its base value and its modifiers' conditions and
/// amounts, all in one frame of `need` slots (the parameters first).
struct QuantityCode {
    base: Box<Fun>,
    when: Vec<Option<Box<Fun>>>,
    amount: Vec<Box<Fun>>,
    need: usize,
}

impl<'r> Lower<'r> {
    pub fn new(rs: &'r Ruleset) -> Self {
        let remembered = eval::worth_remembering(rs);
        Lower {
            rs,
            pairs: eval::PairRows::of(rs, &remembered),
            remembered,
            pair_bodies: FxHashMap::default(),
            need: 0,
            depth: 0,
            defines: vec![None; rs.defines.len()],
            quantities: vec![None; rs.quantities.len()],
            shared: Vec::new(),
        }
    }

    /// Compile a top-level expression over frames of `width` slots.
    pub fn code(&mut self, e: &Ex, width: usize) -> Code {
        let saved = (self.need, self.depth, std::mem::take(&mut self.shared));
        self.need = width.max(max_local(e) + 1);
        self.depth = 0;
        let f = self.lower(e, &Scope::top());
        let code = Code { f, need: self.need };
        (self.need, self.depth, self.shared) = saved;
        code
    }

    fn fresh(&mut self) -> u16 {
        let s = self.need;
        self.need += 1;
        s as u16
    }

    /// A function's body compiled on its own, over its own frame.
    fn standalone(&mut self, f: &Func) -> Code {
        self.code(&f.body, f.slots as usize)
    }

    fn define_body(&mut self, d: Id) -> Arc<Code> {
        if let Some(c) = &self.defines[d as usize] {
            return c.clone();
        }
        let rs = self.rs;
        let c = Arc::new(self.standalone(&rs.defines[d as usize]));
        self.defines[d as usize] = Some(c.clone());
        c
    }

    /// A call of a battle fact or a define.
    fn lower_call(&mut self, e: &Ex, sc: &Scope) -> Box<Fun> {
        let rs = self.rs;
        match e {
            Ex::Fact(f, args) => self.fact(*f, args, sc),
            Ex::Table(t, args) => self.call(&rs.tables[*t as usize], args, sc),
            Ex::Define(d, args) => {
                let f = &rs.defines[*d as usize];
                if self.remembered[*d as usize] {
                    self.remembered_define(*d, args, sc)
                } else if let Some(row) = self.pairs.define[*d as usize] {
                    self.remembered_pair(row, f, args, sc)
                } else {
                    self.call(f, args, sc)
                }
            }
            _ => unreachable!("a call of a fact, a define or a table"),
        }
    }

    fn quantity_body(&mut self, q: Id) -> Arc<QuantityCode> {
        if let Some(c) = &self.quantities[q as usize] {
            return c.clone();
        }
        let rs = self.rs;
        let qd = &rs.quantities[q as usize];
        let saved = (self.need, self.depth, std::mem::take(&mut self.shared));
        self.need = qd.func.slots as usize;
        self.depth = 0;
        // The calls made more than once, with the parameters alone.
        let mut calls: Vec<(Callee, Id, Vec<u16>, usize)> = Vec::new();
        for e in quantity_parts(rs, q) {
            repeated_calls(rs, e, qd.func.params.len(), &mut calls);
        }
        for (callee, id, args, n) in calls {
            if n > 1 {
                let (flag, val) = (self.fresh(), self.fresh());
                self.shared.push(Shared {
                    callee,
                    id,
                    args,
                    flag,
                    val,
                });
            }
        }
        let base = self.lower(&qd.func.body, &Scope::top());
        let mut when = Vec::new();
        let mut amount = Vec::new();
        for m in &qd.modifiers {
            let md = &rs.modifiers[*m as usize];
            when.push(md.when.as_ref().map(|w| self.lower(w, &Scope::top())));
            amount.push(self.lower(&md.amount, &Scope::top()));
        }
        let c = Arc::new(QuantityCode {
            base,
            when,
            amount,
            need: self.need,
        });
        (self.need, self.depth, self.shared) = saved;
        self.quantities[q as usize] = Some(c.clone());
        c
    }

    /// Arguments of a call as the places its parameters live, and the code
    /// that computes the ones that are neither locals nor constants into
    /// fresh slots (in order, before the body).
    fn bind(&mut self, args: &[Ex], sc: &Scope) -> (Vec<At>, Vec<(usize, Box<Fun>)>) {
        let mut at = Vec::with_capacity(args.len());
        let mut pre = Vec::new();
        for a in args {
            match a {
                Ex::Local(l) => at.push(sc.get(*l)),
                Ex::Const(v) => at.push(At::Value(*v)),
                _ => {
                    let code = self.lower(a, sc);
                    let s = self.fresh();
                    pre.push((s as usize, code));
                    at.push(At::Slot(s));
                }
            }
        }
        (at, pre)
    }

    /// A define, table or battle fact called with `args`: compiled into the
    /// caller, or (deep down) called.
    fn call(&mut self, f: &Func, args: &[Ex], sc: &Scope) -> Box<Fun> {
        if self.depth >= INLINE_DEPTH {
            let body = Arc::new(self.standalone(f));
            let args: Vec<Box<Fun>> = args.iter().map(|a| self.lower(a, sc)).collect();
            return Box::new(move |cx, fr| {
                let mut inner = vec![Value::None; body.need.max(args.len())];
                for (i, a) in args.iter().enumerate() {
                    inner[i] = a(cx, fr)?;
                }
                (body.f)(cx, &mut inner)
            });
        }
        let (mut at, pre) = self.bind(args, sc);
        for _ in args.len()..f.slots as usize {
            let s = self.fresh();
            at.push(At::Slot(s));
        }
        self.depth += 1;
        let body = self.lower(&f.body, &Scope { at });
        self.depth -= 1;
        with_pre(pre, body)
    }

    /// A unit-valued expression read for its index: a slot, or code.
    fn unit(&mut self, e: &Ex, sc: &Scope) -> Src {
        match e {
            Ex::Local(l) => match sc.get(*l) {
                At::Slot(s) => Src::Slot(s as usize),
                At::Value(v) => Src::Code(Box::new(move |_, _| Ok(v))),
            },
            e => Src::Code(self.lower(e, sc)),
        }
    }

    /// `chance` / `expect`: the arguments and given facts compiled, the
    /// odds taken (or remembered) by the evaluator, `of` compiled to read
    /// each ending's outcomes from the slots they live in here.
    fn odds(&mut self, o: &crate::compile::ir::OddsEx, sc: &Scope) -> Box<Fun> {
        let args: Vec<Box<Fun>> = o.args.iter().map(|a| self.lower(a, sc)).collect();
        let given: Vec<(Id, Vec<Box<Fun>>, Box<Fun>)> = o
            .given
            .iter()
            .map(|(f, a, v)| {
                let a = a.iter().map(|x| self.lower(x, sc)).collect();
                (*f, a, self.lower(v, sc))
            })
            .collect();
        let slots: Vec<usize> = (0..o.outcomes).map(|i| sc.slot(o.first + i)).collect();
        let of = self.lower(&o.of, sc);
        let o = Arc::new(o.clone());
        Box::new(move |cx, fr| {
            let mut key = Vec::with_capacity(args.len() + given.len());
            for a in &args {
                key.push(a(cx, fr)?);
            }
            let mut facts = Vec::with_capacity(given.len());
            for (f, a, v) in &given {
                let mut k = Vec::with_capacity(a.len());
                for x in a {
                    k.push(x(cx, fr)?);
                }
                let v = v(cx, fr)?;
                key.extend_from_slice(&k);
                key.push(v);
                facts.push((*f, k, v));
            }
            cx.ev.odds_answer(cx.c, &o, key, &facts, &mut |out| {
                for (s, v) in slots.iter().zip(out) {
                    fr[*s] = *v;
                }
                of(cx, fr)
            })
        })
    }

    fn lower(&mut self, e: &Ex, sc: &Scope) -> Box<Fun> {
        let rs = self.rs;
        match e {
            Ex::Const(v) => {
                let v = *v;
                Box::new(move |_, _| Ok(v))
            }
            Ex::Local(l) => match sc.get(*l) {
                At::Slot(s) => {
                    let s = s as usize;
                    Box::new(move |_, fr| Ok(fr[s]))
                }
                At::Value(v) => Box::new(move |_, _| Ok(v)),
            },
            Ex::Option(o) => {
                let o = *o as usize;
                Box::new(move |cx, _| Ok(Value::Bool(cx.c.world.options[o])))
            }
            Ex::Stat(u, s) => {
                let s = *s as usize;
                by_unit(self.unit(u, sc), move |cx, u| {
                    Ok(cx.c.world.units[u].stats[s])
                })
            }
            Ex::State(u, s) => {
                let (ns, s) = (rs.states.len(), *s as usize);
                by_unit(self.unit(u, sc), move |cx, u| Ok(cx.c.state[u * ns + s]))
            }
            Ex::SideOf(u) => by_unit(self.unit(u, sc), |cx, u| {
                Ok(Value::Side(cx.c.world.units[u].side))
            }),
            Ex::IsType(u, set) => {
                let set: Box<[bool]> = set.clone().into_boxed_slice();
                by_unit(self.unit(u, sc), move |cx, u| {
                    Ok(Value::Bool(set[cx.c.world.units[u].ty as usize]))
                })
            }
            Ex::IsQuality(u, set) => {
                let set: Box<[bool]> = set.clone().into_boxed_slice();
                by_unit(self.unit(u, sc), move |cx, u| {
                    Ok(Value::Bool(
                        cx.c.world.units[u].quality.is_some_and(|q| set[q as usize]),
                    ))
                })
            }
            Ex::SideState(x, s) => {
                let (nss, s) = (rs.side_states.len(), *s as usize);
                let x = self.lower(x, sc);
                Box::new(move |cx, fr| match x(cx, fr)? {
                    Value::Side(sd) => Ok(cx.c.side_state[sd as usize * nss + s]),
                    _ => Err(eval::not_a_side()),
                })
            }
            Ex::IsSym(x, syms) => {
                let x = self.lower(x, sc);
                if let [one] = syms[..] {
                    return Box::new(move |cx, fr| {
                        Ok(Value::Bool(matches!(x(cx, fr)?, Value::Sym(s) if s == one)))
                    });
                }
                let syms: Box<[u32]> = syms.clone().into_boxed_slice();
                Box::new(move |cx, fr| {
                    Ok(Value::Bool(
                        matches!(x(cx, fr)?, Value::Sym(s) if syms.contains(&s)),
                    ))
                })
            }
            Ex::Not(x) => {
                let x = self.lower(x, sc);
                Box::new(move |cx, fr| Ok(Value::Bool(!x(cx, fr)?.as_bool())))
            }
            Ex::Neg(x) => {
                let x = self.lower(x, sc);
                Box::new(move |cx, fr| eval::negate(x(cx, fr)?))
            }
            Ex::If(c, a, b) => {
                let (c, a, b) = (self.lower(c, sc), self.lower(a, sc), self.lower(b, sc));
                Box::new(move |cx, fr| {
                    if c(cx, fr)?.as_bool() {
                        a(cx, fr)
                    } else {
                        b(cx, fr)
                    }
                })
            }
            Ex::Bin(op, a, b) => self.binary(*op, a, b, sc),
            Ex::Odds(o) => self.odds(o, sc),
            Ex::Quant(q, sides, slot, body) => {
                let slot = sc.slot(*slot);
                let sieve = match (q, &**body) {
                    _ if *sides => None,
                    (Quant::Sum | Quant::Min | Quant::Max, Ex::If(c, _, d)) => match **d {
                        Ex::Const(v) => self.sieve(c, sc, slot).map(|s| (s, Some(v))),
                        _ => None,
                    },
                    (Quant::Sum | Quant::Min | Quant::Max, _) => None,
                    _ => self.sieve(body, sc, slot).map(|s| (s, None)),
                };
                let body = self.lower(body, sc);
                quantifier(*q, *sides, slot, body, sieve)
            }
            Ex::Fact(..) | Ex::Define(..) | Ex::Table(..)
                if !self.shared.is_empty() && sc.at.is_empty() =>
            {
                let (callee, id, args) = match e {
                    Ex::Fact(f, a) => (Callee::Fact, *f, a),
                    Ex::Define(d, a) => (Callee::Define, *d, a),
                    Ex::Table(t, a) => (Callee::Table, *t, a),
                    _ => unreachable!("matched above"),
                };
                let slots = params_only(args, usize::MAX);
                let at = self.shared.iter().position(|c| {
                    c.callee == callee && c.id == id && Some(&c.args) == slots.as_ref()
                });
                let Some(at) = at else {
                    return self.lower_call(e, sc);
                };
                let (flag, val) = (self.shared[at].flag as usize, self.shared[at].val as usize);
                let first = self.lower_call(e, sc);
                Box::new(move |cx, fr| {
                    if let Value::Bool(true) = fr[flag] {
                        return Ok(fr[val]);
                    }
                    let v = first(cx, fr)?;
                    fr[val] = v;
                    fr[flag] = Value::Bool(true);
                    Ok(v)
                })
            }
            Ex::Fact(..) | Ex::Define(..) => self.lower_call(e, sc),
            Ex::Table(t, args) => self.call(&rs.tables[*t as usize], args, sc),
            Ex::Quantity(q, args) => self.quantity(*q, args, sc),
            Ex::Builtin(Builtin::RollOff, args) => {
                let (a, b) = (self.lower(&args[0], sc), self.lower(&args[1], sc));
                Box::new(move |cx, fr| {
                    for _ in 0..eval::ROLL_OFF_LIMIT {
                        let (x, y) = (a(cx, fr)?, b(cx, fr)?);
                        if let Some(w) = Eval::roll_off_winner(x, y) {
                            return Ok(w);
                        }
                    }
                    Err(Eval::roll_off_tied())
                })
            }
            Ex::Dice {
                count,
                die,
                mode,
                reroll,
                ..
            } => self.dice(count, *die, mode, *reroll, sc),
            Ex::Roll(r) => self.roll(r, sc),
            Ex::Tally(x, fx, k) => {
                let (x, fx, k) = (self.lower(x, sc), *fx, *k);
                Box::new(move |cx, fr| cx.ev.tally_of(x(cx, fr)?, fx, k))
            }
            Ex::Builtin(b, args) => {
                let b = *b;
                let args: Vec<Box<Fun>> = args.iter().map(|a| self.lower(a, sc)).collect();
                if !b.measures_table() {
                    return with_args(args, move |_, v| eval::builtin(b, v));
                }
                with_args(args, move |cx, v| {
                    // Two units of the table: straight to the measure (the
                    // general way reports the rest).
                    if let ([x, y], Some(f)) = (v, &cx.c.world.field) {
                        if let (Some(a), Some(o)) = (f.index(*x), f.index(*y)) {
                            if let Some(m) = f.of_two(b, a, o) {
                                return Ok(m);
                            }
                        }
                    }
                    cx.ev.measure(cx.c, b, v)
                })
            }
        }
    }

    fn binary(&mut self, op: Bin, a: &Ex, b: &Ex, sc: &Scope) -> Box<Fun> {
        if let (Ex::Builtin(Builtin::Distance, ab), Bin::Le | Bin::Lt | Bin::Gt | Bin::Ge) = (a, op)
        {
            return self.distance_compared(op, &ab[0], &ab[1], b, sc);
        }
        if matches!(op, Bin::And | Bin::Or) {
            let mut parts = Vec::new();
            self.chain(op, a, sc, &mut parts);
            self.chain(op, b, sc, &mut parts);
            return if op == Bin::And {
                Box::new(move |cx, fr| {
                    for p in &parts {
                        if !p(cx, fr)?.as_bool() {
                            return Ok(Value::Bool(false));
                        }
                    }
                    Ok(Value::Bool(true))
                })
            } else {
                Box::new(move |cx, fr| {
                    for p in &parts {
                        if p(cx, fr)?.as_bool() {
                            return Ok(Value::Bool(true));
                        }
                    }
                    Ok(Value::Bool(false))
                })
            };
        }
        if is_comparison(op) {
            if let (Some(x), Some(y)) = (self.read(a, sc), self.read(b, sc)) {
                return Box::new(move |cx, fr| {
                    let (v, w) = (x.get(cx, fr)?, y.get(cx, fr)?);
                    compared(op, v, w)
                });
            }
        }
        let x = self.lower(a, sc);
        // A comparison with a whole number: the number is not a call.
        if let (true, Ex::Const(Value::Int(k))) = (is_comparison(op), b) {
            let k = *k;
            return Box::new(move |cx, fr| compared(op, x(cx, fr)?, Value::Int(k)));
        }
        let y = self.lower(b, sc);
        match op {
            op if is_comparison(op) => Box::new(move |cx, fr| {
                let (v, w) = (x(cx, fr)?, y(cx, fr)?);
                compared(op, v, w)
            }),
            Bin::Add | Bin::Sub | Bin::Mul => Box::new(move |cx, fr| {
                let (v, w) = (x(cx, fr)?, y(cx, fr)?);
                if let (Value::Int(i), Value::Int(j)) = (v, w) {
                    let r = match op {
                        Bin::Add => i.checked_add(j),
                        Bin::Sub => i.checked_sub(j),
                        _ => i.checked_mul(j),
                    };
                    if let Some(r) = r {
                        return Ok(Value::Int(r));
                    }
                }
                eval::binary(op, v, w)
            }),
            _ => Box::new(move |cx, fr| {
                let (v, w) = (x(cx, fr)?, y(cx, fr)?);
                eval::binary(op, v, w)
            }),
        }
    }

    /// The operands of a chain of `and`s (or of `or`s), in order, into
    /// `out`: one loop that stops at the first false (true) instead of a
    /// closure per operator. A define or table called with locals or
    /// constants whose body is such a chain too is opened up into it.
    fn chain(&mut self, op: Bin, e: &Ex, sc: &Scope, out: &mut Vec<Box<Fun>>) {
        match e {
            Ex::Bin(o, a, b) if *o == op => {
                self.chain(op, a, sc, out);
                self.chain(op, b, sc, out);
            }
            Ex::Define(d, args)
                if self.depth < INLINE_DEPTH
                    && !self.remembered[*d as usize]
                    && self.pairs.define[*d as usize].is_none()
                    && matches!(self.rs.defines[*d as usize].body, Ex::Bin(o, ..) if o == op)
                    && args
                        .iter()
                        .all(|a| matches!(a, Ex::Local(_) | Ex::Const(_))) =>
            {
                let f = &self.rs.defines[*d as usize];
                let (mut at, pre) = self.bind(args, sc);
                debug_assert!(pre.is_empty(), "locals and constants need no slots");
                for _ in args.len()..f.slots as usize {
                    let s = self.fresh();
                    at.push(At::Slot(s));
                }
                self.depth += 1;
                self.chain(op, &f.body, &Scope { at }, out);
                self.depth -= 1;
            }
            e => out.push(self.lower(e, sc)),
        }
    }

    /// A test of a quantifier's unit alone (in slot `var`, its side against
    /// another unit's or a side, or its type) that settles the body `e` for
    /// the units it turns away: the body's first `and`ed part, say (`any e:
    /// enemies(u, e) and ...`: not an enemy, the body is false), or its
    /// first `or`ed one (`all f: not friends(f, u) or ...`: not a friend,
    /// the body is true). (For `sum`, `min` and `max`, whose body is `if
    /// COND then VALUE else DEFAULT`, the caller looks in COND.)
    fn sieve(&self, e: &Ex, sc: &Scope, var: usize) -> Option<Sieve> {
        match self.decides(e, sc, var, 0) {
            Part::Test(test, on) => Some(Sieve {
                test,
                when: !on,
                val: false,
                sure: true,
                command: None,
                near: None,
            }),
            Part::Sieve(s) => Some(s),
            Part::Harmless | Part::Near { .. } | Part::Other => None,
        }
    }

    /// What `e` is for a unit in slot `var` by a test of that unit alone
    /// ([`Part`]), looking through `not`, the first parts of `and`s and
    /// `or`s (past parts that cannot fail to evaluate:
    /// [`eval::cannot_fail`], the quantifier's unit known to be one), and
    /// the defines called with locals.
    fn decides(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        match self.decides_part(e, sc, var, depth) {
            Part::Other => {
                if eval::cannot_fail(self.rs, e, locals_at(sc, &[var])) {
                    Part::Harmless
                } else {
                    Part::Other
                }
            }
            p => p,
        }
    }

    /// For `A and B` where A may fail to evaluate and B is false for a far
    /// unit ([`Part::Near`]): B's part when A cannot fail with the units
    /// that B's reach reads known to be units (the sieve is made ready
    /// only when they are: TVBD's `in_range(s, t)`, `s.range != none and
    /// distance(s, t) <= s.range`).
    fn near_after(&self, a: &Ex, b: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        match self.decides(b, sc, var, depth) {
            Part::Near { of, limit } => {
                let slots = match limit {
                    Limit::Stat { of: s, .. } => vec![var, of, s],
                    Limit::Const(_) => vec![var, of],
                };
                if eval::cannot_fail(self.rs, a, locals_at(sc, &slots)) {
                    Part::Near { of, limit }
                } else {
                    Part::Other
                }
            }
            _ => Part::Other,
        }
    }

    fn decides_part(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        let slot = |x: &Ex| sc.slot_of(x);
        let side = |x: &Ex| match x {
            Ex::SideOf(u) => slot(u),
            _ => None,
        };
        match e {
            Ex::Bin(op @ (Bin::And | Bin::Or), a, b) => {
                // The value that settles the chain.
                let settles = *op == Bin::Or;
                // `x == g or grouped(g, x)` (a define `in_group(g, x)`, say):
                // the unit is g or in g's group.
                if settles {
                    if let Some(of) = self.group_of_slot(a, b, sc, var) {
                        return Part::Test(Test::Group { of }, true);
                    }
                }
                let first = self.decides(a, sc, var, depth);
                // Both parts false for a far unit: so is the `or`.
                if let (true, Part::Near { of: p, limit: x }) = (settles, &first) {
                    return match (*x, self.near(b, sc, var, depth)) {
                        (Limit::Const(x), Some((q, Limit::Const(y)))) if q == *p => Part::Near {
                            of: q,
                            limit: Limit::Const(x.max(y)),
                        },
                        (x, Some((q, y))) if q == *p && x == y => Part::Near { of: q, limit: x },
                        _ => Part::Other,
                    };
                }
                let settled = |p: Part| match p {
                    Part::Test(test, on) => Part::Sieve(Sieve {
                        test,
                        when: if settles { on } else { !on },
                        val: settles,
                        sure: true,
                        command: None,
                        near: None,
                    }),
                    Part::Sieve(s) if s.val == settles => Part::Sieve(s),
                    Part::Harmless => Part::Harmless,
                    // An `and` whose first part is false for a far unit.
                    p @ Part::Near { .. } if !settles => p,
                    _ => Part::Other,
                };
                match settled(first) {
                    Part::Harmless => settled(self.decides(b, sc, var, depth)),
                    // An `and` whose first part cannot fail to evaluate: a
                    // later part naming the unit's command settles it false
                    // for a unit of another command too. (Parts that cannot
                    // fail are looked past.)
                    Part::Sieve(first) if !settles && first.sure => {
                        match self.decides(b, sc, var, depth) {
                            Part::Test(Test::Command { of }, true) => Part::Sieve(Sieve {
                                command: first.command.or(Some(of)),
                                ..first
                            }),
                            Part::Test(..) | Part::Harmless => Part::Sieve(first),
                            Part::Sieve(s) if s.sure => Part::Sieve(Sieve {
                                command: first.command.or(s.command),
                                near: nearer(first.near, s.near),
                                ..first
                            }),
                            // A later part false for a far unit: so is
                            // the body (what follows it is not looked at).
                            Part::Near { of, limit } => Part::Sieve(Sieve {
                                near: nearer(first.near, Some((of, limit))),
                                sure: false,
                                ..first
                            }),
                            _ => Part::Sieve(Sieve {
                                sure: false,
                                ..first
                            }),
                        }
                    }
                    Part::Sieve(s) => Part::Sieve(Sieve { sure: false, ..s }),
                    Part::Other if !settles => self.near_after(a, b, sc, var, depth),
                    p => p,
                }
            }
            Ex::Not(x) => match self.decides(x, sc, var, depth) {
                Part::Test(t, on) => Part::Test(t, !on),
                // (What a unit of another command gives is not negated
                // with it: dropped.)
                Part::Sieve(s) => Part::Sieve(Sieve {
                    val: !s.val,
                    command: None,
                    near: None,
                    ..s
                }),
                // (`not` of a part false for a far unit: nothing known.)
                Part::Near { .. } => Part::Other,
                p => p,
            },
            Ex::Define(d, args)
                if depth < INLINE_DEPTH
                    && !self.remembered[*d as usize]
                    && self.pairs.define[*d as usize].is_none()
                    && args
                        .iter()
                        .all(|a| matches!(a, Ex::Local(_) | Ex::Const(_))) =>
            {
                match self.scope_of(args, sc) {
                    Some(inner) => {
                        self.decides(&self.rs.defines[*d as usize].body, &inner, var, depth + 1)
                    }
                    None => Part::Other,
                }
            }
            Ex::Bin(op @ (Bin::Eq | Bin::Ne), x, y) => {
                let same = *op == Bin::Eq;
                let test = |of, unit| Part::Test(Test::Side { of, unit, same }, true);
                match (side(x), side(y), slot(x), slot(y)) {
                    (Some(p), Some(q), _, _) if p == var && q != var => test(q, true),
                    (Some(p), Some(q), _, _) if q == var && p != var => test(p, true),
                    (Some(p), None, _, Some(q)) if p == var && q != var => test(q, false),
                    (None, Some(p), Some(q), _) if p == var && q != var => test(q, false),
                    // Equality never fails to evaluate, nor does a local.
                    (None, None, Some(_), Some(_)) => Part::Harmless,
                    _ => Part::Other,
                }
            }
            // A fact only ever noted, not true by default: true exactly
            // for the units it is noted true of.
            Ex::Fact(f, args) if self.noted_only(*f) => match self.noted_args(args, sc, var) {
                Some(args) => Part::Test(Test::Noted { fact: *f, args }, true),
                None => Part::Other,
            },
            // A battle fact: what its derivation is (a battle's world has
            // the table, and sieves are made ready only there).
            Ex::Fact(f, args)
                if depth < INLINE_DEPTH
                    && self.rs.facts[*f as usize].hook.is_none()
                    && self.rs.facts[*f as usize].battle.is_some() =>
            {
                let body = match &self.rs.facts[*f as usize].battle {
                    Some(b) => &b.body,
                    None => unreachable!("matched above"),
                };
                match self.scope_of(args, sc) {
                    Some(inner) => match self.decides(body, &inner, var, depth + 1) {
                        // Only what is false for a far unit is taken: a
                        // test or sieve of the body would also have to
                        // know its parts cannot fail.
                        p @ Part::Near { .. } => p,
                        _ => Part::Other,
                    },
                    None => Part::Other,
                }
            }
            Ex::Builtin(Builtin::InContact, args) => match self.other_of_pair(args, sc, var) {
                Some(of) => Part::Near {
                    of,
                    limit: Limit::Const(crate::run::battlefield::CONTACT),
                },
                None => Part::Other,
            },
            // `distance(x, y) <= K` or `< K`, K a whole number or a stat
            // of a unit other than the quantifier's (as `distance_compared`
            // reads it: distances are kept to 1/64 of the measure).
            Ex::Bin(Bin::Le | Bin::Lt, d, k) => {
                let limit = match &**k {
                    Ex::Const(Value::Int(k)) if (0..crate::base::value::UNLIMITED).contains(k) => {
                        Some(Limit::of_int(*k))
                    }
                    Ex::Stat(u, stat) => match slot(u) {
                        Some(of) if of != var => Some(Limit::Stat {
                            of,
                            stat: *stat as usize,
                        }),
                        _ => None,
                    },
                    _ => None,
                };
                match (&**d, limit) {
                    (Ex::Builtin(Builtin::Distance, args), Some(limit)) => {
                        match self.other_of_pair(args, sc, var) {
                            Some(of) => Part::Near { of, limit },
                            None => Part::Other,
                        }
                    }
                    _ => Part::Other,
                }
            }
            Ex::Builtin(Builtin::SameCommand, args) => match &args[..] {
                [x, y] => match (slot(x), slot(y)) {
                    (Some(p), Some(q)) if p == var && q != var => {
                        Part::Test(Test::Command { of: q }, true)
                    }
                    (Some(p), Some(q)) if q == var && p != var => {
                        Part::Test(Test::Command { of: p }, true)
                    }
                    _ => Part::Other,
                },
                _ => Part::Other,
            },
            Ex::IsType(x, set) if slot(x) == Some(var) => {
                Part::Test(Test::Type(set.clone().into_boxed_slice()), true)
            }
            _ => Part::Other,
        }
    }

    /// Is fact `f` only ever noted (no derivation in a battle, no hook),
    /// and its default not true? (Without a default, an unnoted fact
    /// fails to evaluate.)
    fn noted_only(&self, f: Id) -> bool {
        let fd = &self.rs.facts[f as usize];
        fd.hook.is_none() && fd.battle.is_none() && fd.default.is_some_and(|v| !v.as_bool())
    }

    /// The arguments of a [`Test::Noted`] fact: locals and constants, the
    /// quantifier's unit (in slot `var`) exactly once among them.
    fn noted_args(&self, args: &[Ex], sc: &Scope, var: usize) -> Option<Box<[NotedArg]>> {
        let args = args
            .iter()
            .map(|a| match a {
                Ex::Local(l) => match sc.try_get(*l)? {
                    At::Slot(s) if s as usize == var => Some(NotedArg::Unit),
                    At::Slot(s) => Some(NotedArg::Slot(s as usize)),
                    At::Value(v) => Some(NotedArg::Value(v)),
                },
                Ex::Const(v) => Some(NotedArg::Value(*v)),
                _ => None,
            })
            .collect::<Option<Box<[NotedArg]>>>()?;
        let units = args.iter().filter(|a| matches!(a, NotedArg::Unit)).count();
        (units == 1).then_some(args)
    }

    /// The part a [`Lower::decides`] finds false for a far unit, if it is one.
    fn near(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Option<(usize, Limit)> {
        match self.decides(e, sc, var, depth) {
            Part::Near { of, limit } => Some((of, limit)),
            _ => None,
        }
    }

    /// For a measure of two units `x, y` of which one is the quantifier's
    /// (in slot `var`): the other's slot.
    fn other_of_pair(&self, args: &[Ex], sc: &Scope, var: usize) -> Option<usize> {
        match args {
            [x, y] => match (sc.slot_of(x)?, sc.slot_of(y)?) {
                (p, q) if p == var && q != var => Some(q),
                (p, q) if q == var && p != var => Some(p),
                _ => None,
            },
            _ => None,
        }
    }

    /// The scope of a body called with `args`, when each is a local or a
    /// constant.
    fn scope_of(&self, args: &[Ex], sc: &Scope) -> Option<Scope> {
        let at = args
            .iter()
            .map(|a| match a {
                Ex::Local(l) => sc.try_get(*l),
                Ex::Const(v) => Some(At::Value(*v)),
                _ => None,
            })
            .collect::<Option<Vec<At>>>()?;
        Some(Scope { at })
    }

    /// For `x == g or grouped(g, x)` (either way round each; `grouped`
    /// directly or through a battle fact whose battle value it is), x the
    /// quantifier's unit in slot `var`: g's slot.
    fn group_of_slot(&self, a: &Ex, b: &Ex, sc: &Scope, var: usize) -> Option<usize> {
        let slot = |x: &Ex| sc.slot_of(x);
        let other = |p: &Ex, q: &Ex| match (slot(p)?, slot(q)?) {
            (p, q) if p == var && q != var => Some(q),
            (p, q) if q == var && p != var => Some(p),
            _ => None,
        };
        let Ex::Bin(Bin::Eq, x, y) = a else {
            return None;
        };
        let g = other(x, y)?;
        let pair = match b {
            Ex::Builtin(Builtin::Grouped, args) => args,
            Ex::Fact(f, args) => {
                let fd = &self.rs.facts[*f as usize];
                let plain = |b: &crate::compile::ir::Func| match &b.body {
                    Ex::Builtin(Builtin::Grouped, ps) => {
                        matches!(
                            &ps[..],
                            [Ex::Local(0), Ex::Local(1)] | [Ex::Local(1), Ex::Local(0)]
                        )
                    }
                    _ => false,
                };
                if fd.hook.is_some() || !fd.battle.as_ref().is_some_and(plain) {
                    return None;
                }
                args
            }
            _ => return None,
        };
        match &pair[..] {
            [p, q] if other(p, q) == Some(g) => Some(g),
            _ => None,
        }
    }

    /// An operand read in one step, if it is that simple.
    fn read(&self, e: &Ex, sc: &Scope) -> Option<Read> {
        let slot = |u: &Ex| match u {
            Ex::Local(l) => match sc.get(*l) {
                At::Slot(s) => Some(s as usize),
                At::Value(_) => None,
            },
            _ => None,
        };
        Some(match e {
            Ex::Const(v) => Read::Const(*v),
            Ex::Local(l) => match sc.get(*l) {
                At::Slot(s) => Read::Slot(s as usize),
                At::Value(v) => Read::Const(v),
            },
            Ex::State(u, st) => Read::State(slot(u)?, *st as usize, self.rs.states.len()),
            Ex::Stat(u, st) => Read::Stat(slot(u)?, *st as usize),
            Ex::SideOf(u) => Read::Side(slot(u)?),
            _ => return None,
        })
    }

    /// `distance(p, q) OP k`: most units are far apart (or plainly close),
    /// and the centres settle the comparison without measuring the bases.
    /// A distance is rounded to 1/64 ([`crate::run::field::to_value`]); the
    /// centres decide only when they put the bases more than 1/64 beyond
    /// `k`, or the centres themselves more than 1/64 within it (the bases
    /// are no further apart than their centres), so the answer is the
    /// measured one's. The order of evaluation is the tree's
    /// (the distance's units, then `k`); a distance of units off the table,
    /// or a `k` that is not a whole number, is measured.
    fn distance_compared(&mut self, op: Bin, p: &Ex, q: &Ex, k: &Ex, sc: &Scope) -> Box<Fun> {
        let (p, q, k) = (self.lower(p, sc), self.lower(q, sc), self.lower(k, sc));
        Box::new(move |cx, fr| {
            let (a, b) = (p(cx, fr)?, q(cx, fr)?);
            if let (Value::Unit(i), Value::Unit(j), Some(f)) = (a, b, &cx.c.world.field) {
                let (i, j) = (i as usize, j as usize);
                if i < f.bases.len() && j < f.bases.len() && f.on_table[i] && f.on_table[j] {
                    let limit = k(cx, fr)?;
                    if let Value::Int(n) = limit {
                        if f.apart(i, j, crate::run::field::plainly_beyond(n)) {
                            return Ok(Value::Bool(matches!(op, Bin::Gt | Bin::Ge)));
                        }
                        if f.close(i, j, n as f64 - crate::run::field::KEPT_TO) {
                            return Ok(Value::Bool(matches!(op, Bin::Lt | Bin::Le)));
                        }
                    }
                    let d = f
                        .of_two(Builtin::Distance, i, j)
                        .expect("a distance is a measure of two units");
                    return compared(op, d, limit);
                }
            }
            let d = cx.ev.measure(cx.c, Builtin::Distance, &[a, b])?;
            eval::binary(op, d, k(cx, fr)?)
        })
    }

    fn fact(&mut self, f: Id, args: &[Ex], sc: &Scope) -> Box<Fun> {
        let rs = self.rs;
        let fd = &rs.facts[f as usize];
        let noted = self.noted(f, args, sc);
        if let Some(b) = &fd.battle {
            // Derived from the table: a battle's world has one (an odds
            // situation's does not, and states the fact instead).
            let derived = match self.pairs.fact[f as usize] {
                Some(row) => self.remembered_pair(row, b, args, sc),
                None => self.call(b, args, sc),
            };
            return Box::new(move |cx, fr| {
                if cx.c.world.field.is_some() {
                    derived(cx, fr)
                } else {
                    noted(cx, fr)
                }
            });
        }
        noted
    }

    /// A fact's value from its hook, or as noted (else its default).
    fn noted(&mut self, f: Id, args: &[Ex], sc: &Scope) -> Box<Fun> {
        let args: Vec<Box<Fun>> = args.iter().map(|a| self.lower(a, sc)).collect();
        match self.rs.facts[f as usize].hook {
            Some(h) => with_args(args, move |cx, key| {
                crate::run::hooks::fact_value(cx.ev, cx.c, h, f, key)
            }),
            None => with_args(args, move |cx, key| cx.ev.noted(cx.c, f, key)),
        }
    }

    /// A remembered define: looked up in the memo, else its body run on its
    /// own frame and the value remembered.
    fn remembered_define(&mut self, d: Id, args: &[Ex], sc: &Scope) -> Box<Fun> {
        let body = self.define_body(d);
        let arg = args.first().map(|a| self.lower(a, sc));
        Box::new(move |cx, fr| {
            let arg = match &arg {
                Some(a) => Some(a(cx, fr)?),
                None => None,
            };
            let run = |cx: &Cx| body.call(cx, &[arg.unwrap_or(Value::None)]);
            match cx.ev.remembered(d, arg) {
                Remembered::Known(v) => Ok(v),
                Remembered::Unknown { slot, at } => {
                    let v = run(cx)?;
                    cx.ev.remember(slot, at, v);
                    Ok(v)
                }
                Remembered::Never => run(cx),
            }
        })
    }

    /// A define or battle fact of two units remembered per pair: looked up
    /// in the memo, else its body run on its own frame and the value
    /// remembered; compiled into the caller as well, for a game where the
    /// row does not pay ([`Eval::pair_row_pays`]).
    fn remembered_pair(&mut self, row: u16, f: &Func, args: &[Ex], sc: &Scope) -> Box<Fun> {
        let inline = self.call(f, args, sc);
        let body = match self.pair_bodies.get(&row) {
            Some(b) => b.clone(),
            None => {
                let b = Arc::new(self.standalone(f));
                self.pair_bodies.insert(row, b.clone());
                b
            }
        };
        let (x, y) = (self.lower(&args[0], sc), self.lower(&args[1], sc));
        Box::new(move |cx, fr| {
            if !cx.ev.pair_row_pays(row) {
                return inline(cx, fr);
            }
            let (a, b) = (x(cx, fr)?, y(cx, fr)?);
            match cx.ev.remembered_pair(row, a, b) {
                Remembered::Known(v) => Ok(v),
                Remembered::Unknown { slot, at } => {
                    let v = body.call(cx, &[a, b])?;
                    cx.ev.remember_pair(slot, at, v);
                    Ok(v)
                }
                Remembered::Never => body.call(cx, &[a, b]),
            }
        })
    }

    /// A quantity: its base value, then its modifiers applied in order
    /// (through [`crate::compile::modifiers::apply`]), traced for the battle's log.
    fn quantity(&mut self, q: Id, args: &[Ex], sc: &Scope) -> Box<Fun> {
        let code = self.quantity_body(q);
        let args: Vec<Box<Fun>> = args.iter().map(|a| self.lower(a, sc)).collect();
        Box::new(move |cx, fr| {
            let rs = cx.ev.rs;
            let qd = &rs.quantities[q as usize];
            let mut inner = [Value::None; 16];
            let mut big;
            let inner: &mut [Value] = if code.need <= inner.len() {
                &mut inner[..code.need.max(args.len())]
            } else {
                big = vec![Value::None; code.need];
                &mut big
            };
            for (i, a) in args.iter().enumerate() {
                inner[i] = a(cx, fr)?;
            }
            let base = (code.base)(cx, inner)?;
            let base = cx.ev.base_value(q, base)?;
            let v = crate::compile::modifiers::apply(
                qd,
                &rs.modifiers,
                base,
                |i, part, _| match part {
                    crate::compile::modifiers::Part::When => match &code.when[i] {
                        Some(w) => w(cx, inner),
                        None => Ok(Value::Bool(true)),
                    },
                    crate::compile::modifiers::Part::Amount => (code.amount[i])(cx, inner),
                },
                |m| cx.ev.applied(m),
            )?;
            Ok(Value::Int(v))
        })
    }

    /// A pool of dice: how many, how read (the score needed, computed
    /// after the count, as the tree evaluator does), rolled from the
    /// caller's dice.
    fn dice(
        &mut self,
        count: &Ex,
        die: Id,
        mode: &DiceMode,
        reroll: Option<Reroll>,
        sc: &Scope,
    ) -> Box<Fun> {
        let count = self.lower(count, sc);
        let score = match mode {
            DiceMode::Scoring(t) => Some(self.lower(t, sc)),
            _ => None,
        };
        let fixed = match mode {
            DiceMode::Sum => Some(Reading::Sum),
            DiceMode::Counting(m) => Some(Reading::Counting(m.clone())),
            DiceMode::Scoring(_) => None,
        };
        Box::new(move |cx, fr| {
            let n = count(cx, fr)?;
            let n = cx.ev.num(n, "the number of dice")?;
            let scored;
            let reading = match (&fixed, &score) {
                (Some(r), _) => r,
                (None, Some(t)) => {
                    let t = t(cx, fr)?;
                    scored = Reading::Scoring(cx.ev.num(t, "the score needed")?);
                    &scored
                }
                (None, None) => unreachable!("a scoring pool has a score"),
            };
            cx.ev
                .roll_pool(die, reading, reroll, n, &mut **cx.dice.borrow_mut())
        })
    }
}

impl Lower<'_> {
    /// A roll: its counts, pools and arguments compiled, the dice rolled
    /// and read by the evaluator's own [`Eval::roll_dice`].
    fn roll(&mut self, r: &crate::compile::ir::Roll, sc: &Scope) -> Box<Fun> {
        use crate::compile::ir::PartDice;
        enum Part {
            Die(Id),
            Pool(Box<Fun>),
        }
        let parts: Vec<(Box<Fun>, Part)> = r
            .parts
            .iter()
            .map(|p| {
                let dice = match &p.dice {
                    PartDice::Die(d) => Part::Die(*d),
                    PartDice::Pool(e) => Part::Pool(self.lower(e, sc)),
                };
                (self.lower(&p.count, sc), dice)
            })
            .collect();
        let args: Vec<Box<Fun>> = r.args.iter().map(|a| self.lower(a, sc)).collect();
        let fx = r.effects;
        let at = r.span;
        Box::new(move |cx, fr| {
            let mut dice = crate::run::rolling::RollDice::with_capacity(parts.len());
            for (count, part) in &parts {
                let n = cx.ev.num(count(cx, fr)?, "the number of dice")?;
                match part {
                    Part::Die(d) => dice.push((*d, n)),
                    Part::Pool(p) => cx.ev.add_pool(p(cx, fr)?, n, at, &mut dice)?,
                }
            }
            let mut a = Vec::with_capacity(args.len());
            for f in &args {
                a.push(f(cx, fr)?);
            }
            cx.ev
                .roll_dice(cx.c, fx, &dice, &a, &mut **cx.dice.borrow_mut())
        })
    }
}

/// Every expression of a procedure's statements, in order.
fn statement_exprs<'a>(body: &'a [St], out: &mut Vec<&'a Ex>) {
    for st in body {
        match st {
            St::Let(_, e) | St::Outcome(_, e) | St::Require(e, ..) => out.push(e),
            St::If(c, a, b) => {
                out.push(c);
                statement_exprs(a, out);
                statement_exprs(b, out);
            }
            St::For(_, _, c, b) => {
                out.push(c);
                statement_exprs(b, out);
            }
            St::AssignState { unit, value, .. } => {
                out.push(unit);
                out.push(value);
            }
            St::AssignSideState { side, value, .. } => {
                out.push(side);
                out.push(value);
            }
            St::Call(_, args, _) => out.extend(args),
            St::Note(_, args, v, _) => {
                out.extend(args);
                out.push(v);
            }
        }
    }
}

/// Code that computes the arguments in order (on the stack) and then
/// `then` of their values.
fn with_args<F>(args: Vec<Box<Fun>>, then: F) -> Box<Fun>
where
    F: Fn(&Cx, &[Value]) -> R<Value> + Send + Sync + 'static,
{
    match args.len() {
        1 => {
            let [x] = take(args);
            Box::new(move |cx, fr| then(cx, &[x(cx, fr)?]))
        }
        2 => {
            let [x, y] = take(args);
            Box::new(move |cx, fr| then(cx, &[x(cx, fr)?, y(cx, fr)?]))
        }
        _ => Box::new(move |cx, fr| {
            let mut small = [Value::None; 4];
            let mut big = Vec::new();
            let v: &mut [Value] = if args.len() <= small.len() {
                &mut small[..args.len()]
            } else {
                big.resize(args.len(), Value::None);
                &mut big
            };
            for (slot, a) in v.iter_mut().zip(&args) {
                *slot = a(cx, fr)?;
            }
            then(cx, v)
        }),
    }
}

/// The codes of a call's arguments, when there are exactly `N`.
fn take<const N: usize>(args: Vec<Box<Fun>>) -> [Box<Fun>; N] {
    args.try_into()
        .unwrap_or_else(|_| unreachable!("the caller counted the arguments"))
}

/// An operand read in one step: a local, a constant, or a unit's state,
/// stat or side (the unit in a slot).
#[derive(Clone, Copy)]
enum Read {
    Slot(usize),
    Const(Value),
    /// The unit's slot, the state, the number of states.
    State(usize, usize, usize),
    Stat(usize, usize),
    Side(usize),
}

impl Read {
    #[inline(always)]
    fn get(self, cx: &Cx, fr: &[Value]) -> R<Value> {
        let unit = |s: usize| match fr[s] {
            Value::Unit(u) => Ok(u as usize),
            other => Err(eval::not_a_unit(other)),
        };
        Ok(match self {
            Read::Slot(s) => fr[s],
            Read::Const(v) => v,
            Read::State(s, st, ns) => cx.c.state[unit(s)? * ns + st],
            Read::Stat(s, st) => cx.c.world.units[unit(s)?].stats[st],
            Read::Side(s) => Value::Side(cx.c.world.units[unit(s)?].side),
        })
    }
}

/// A unit read for its index: from a slot, or computed.
enum Src {
    Slot(usize),
    Code(Box<Fun>),
}

/// Code that reads a unit (its index) and then `then` of it; anything but a
/// unit is the tree evaluator's error.
fn by_unit<F>(src: Src, then: F) -> Box<Fun>
where
    F: Fn(&Cx, usize) -> R<Value> + Send + Sync + 'static,
{
    match src {
        Src::Slot(s) => Box::new(move |cx, fr| match fr[s] {
            Value::Unit(u) => then(cx, u as usize),
            other => Err(eval::not_a_unit(other)),
        }),
        Src::Code(c) => Box::new(move |cx, fr| match c(cx, fr)? {
            Value::Unit(u) => then(cx, u as usize),
            other => Err(eval::not_a_unit(other)),
        }),
    }
}

/// A body run after its computed arguments are put in their slots.
fn with_pre(pre: Vec<(usize, Box<Fun>)>, body: Box<Fun>) -> Box<Fun> {
    match pre.len() {
        0 => body,
        1 => {
            let (s, a) = pre.into_iter().next().expect("one");
            Box::new(move |cx, fr| {
                fr[s] = a(cx, fr)?;
                body(cx, fr)
            })
        }
        _ => Box::new(move |cx, fr| {
            for (s, a) in &pre {
                fr[*s] = a(cx, fr)?;
            }
            body(cx, fr)
        }),
    }
}

/// What [`Lower::decides`] finds of an expression, for the unit of a
/// quantifier.
enum Part {
    /// The expression is true exactly when the test comes out as given.
    Test(Test, bool),
    /// When the test comes out `when`, the expression is `val`, whatever
    /// else holds.
    Sieve(Sieve),
    /// It cannot fail to evaluate, and tells nothing: look further.
    Harmless,
    /// False, without failing to evaluate, for a unit whose base is
    /// further than `limit` from that of the unit in slot `of`, or when
    /// either is off the table (`in_contact`, `distance(..) <= K`); what
    /// it is for a unit closer is not known.
    Near { of: usize, limit: Limit },
    /// Nothing to go by.
    Other,
}

/// How far a [`Part::Near`] reaches: a number of the measure, or a stat
/// of the unit in slot `of` (read when the sieve is made ready), either
/// with the margin `distance_compared` allows (distances are kept to
/// 1/64 of the measure).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    Const(f64),
    Stat { of: usize, stat: usize },
}

impl Limit {
    /// A whole number `k` of the measure, with the margin.
    fn of_int(k: i64) -> Limit {
        Limit::Const(crate::run::field::plainly_beyond(k))
    }

    /// The reach for one run, or None when the stat's unit is not a unit
    /// or the stat not a whole number below `unlimited` (nothing known).
    fn read(self, cx: &Cx, fr: &[Value]) -> Option<f64> {
        match self {
            Limit::Const(x) => Some(x),
            Limit::Stat { of, stat } => match fr[of] {
                Value::Unit(u) => match cx.c.world.units.get(u as usize)?.stats.get(stat)? {
                    Value::Int(k) if (0..crate::base::value::UNLIMITED).contains(k) => {
                        Some(crate::run::field::plainly_beyond(*k))
                    }
                    _ => None,
                },
                _ => None,
            },
        }
    }
}

/// The locals of scope `sc` that are in one of `slots`, as a mask.
fn locals_at(sc: &Scope, slots: &[usize]) -> u64 {
    (0..64u16)
        .filter(|l| matches!(sc.try_get(*l), Some(At::Slot(s)) if slots.contains(&(s as usize))))
        .fold(0u64, |m, l| m | 1 << l)
}

/// A test a quantifier makes of each unit before its body.
enum Test {
    /// The unit's side the same as (`same`), or other than, the side of
    /// the unit (`unit`) or the side in slot `of`.
    Side { of: usize, unit: bool, same: bool },
    /// The unit's type one of these.
    Type(Box<[bool]>),
    /// The unit the one in slot `of`, or of its group on the table.
    Group { of: usize },
    /// The unit of the command of the unit in slot `of`.
    Command { of: usize },
    /// A fact only ever noted (no derivation, no hook), whose default is
    /// not true, noted true with these arguments, the unit among them.
    Noted { fact: Id, args: Box<[NotedArg]> },
}

/// An argument of a [`Test::Noted`] fact.
enum NotedArg {
    /// The quantifier's unit.
    Unit,
    /// The value in this slot.
    Slot(usize),
    Value(Value),
}

/// A quantifier's sieve ([`Lower::sieve`]): a unit whose test comes out
/// `when` makes the body `val` (for `sum`, `min` and `max`, whose body is
/// `if COND then VALUE else DEFAULT`, COND `val`), so the body is not run
/// for it where that settles what the body gives.
struct Sieve {
    test: Test,
    when: bool,
    val: bool,
    /// Does the part it was made from never fail to evaluate? (Then a
    /// later part's test may be made first.)
    sure: bool,
    /// For a sieve that settles the body false (`val` false): the unit
    /// must also be of the command of the unit in this slot, else the body
    /// is false.
    command: Option<usize>,
    /// For a sieve that settles the body false: the unit's base must also
    /// be within this of the base of the unit in this slot, both on the
    /// table, else the body is false (a later part is [`Part::Near`]).
    near: Option<(usize, Limit)>,
}

/// The nearer of two [`Sieve::near`]s about one slot, both numbers, else
/// the first (each is a reach the body needs).
fn nearer(a: Option<(usize, Limit)>, b: Option<(usize, Limit)>) -> Option<(usize, Limit)> {
    match (a, b) {
        (Some((p, Limit::Const(x))), Some((q, Limit::Const(y)))) if p == q => {
            Some((p, Limit::Const(x.min(y))))
        }
        (a, b) => a.or(b),
    }
}

/// A [`Sieve`] ready for one run of a quantifier: the side it compares
/// with read once. None when it cannot be (its slot does not hold a unit
/// or a side: the body itself then reports or decides).
struct Ready<'s> {
    test: Tested<'s>,
    when: bool,
    val: bool,
    /// The command the unit must be of, if the sieve asks.
    command: Option<u16>,
    /// The unit (of the table) the unit's base must be within the limit
    /// of, if the sieve asks.
    near: Option<(usize, f64)>,
}

enum Tested<'s> {
    Side(u16, bool),
    Type(&'s [bool]),
    Command(u16),
    /// The unit and its group (None: off the table).
    Group(usize, Option<usize>),
    /// The units for which the fact is noted true.
    Noted(Vec<u16>),
}

impl Sieve {
    fn ready(&self, cx: &Cx, fr: &[Value]) -> Option<Ready<'_>> {
        let test = match &self.test {
            Test::Side { of, unit, same } => match (fr[*of], unit) {
                (Value::Unit(u), true) => {
                    Tested::Side(cx.c.world.units.get(u as usize)?.side, *same)
                }
                (Value::Side(s), false) => Tested::Side(s, *same),
                _ => return None,
            },
            Test::Type(set) => Tested::Type(set),
            Test::Group { of } => match fr[*of] {
                Value::Unit(g) if (g as usize) < cx.c.world.units.len() => {
                    let f = cx.c.world.field.as_ref()?;
                    Tested::Group(g as usize, f.group_of(cx.c.world, g as usize))
                }
                _ => return None,
            },
            Test::Command { of } => match fr[*of] {
                Value::Unit(u) => {
                    Tested::Command(*cx.c.world.field.as_ref()?.command.get(u as usize)?)
                }
                _ => return None,
            },
            Test::Noted { fact, args } => {
                let mut units = Vec::new();
                'noted: for (key, v) in cx.c.world.facts.get(*fact as usize)? {
                    if !v.as_bool() || key.len() != args.len() {
                        continue;
                    }
                    let mut unit = None;
                    for (k, a) in key.iter().zip(args.iter()) {
                        match (a, k) {
                            (NotedArg::Unit, Value::Unit(x)) => unit = Some(*x),
                            (NotedArg::Slot(s), k) if *k == fr[*s] => {}
                            (NotedArg::Value(c), k) if k == c => {}
                            _ => continue 'noted,
                        }
                    }
                    units.extend(unit);
                }
                Tested::Noted(units)
            }
        };
        let command = match self.command {
            Some(of) => match fr[of] {
                Value::Unit(u) => Some(*cx.c.world.field.as_ref()?.command.get(u as usize)?),
                _ => return None,
            },
            None => None,
        };
        let near = match self.near {
            Some((of, limit)) => match fr[of] {
                Value::Unit(u) if (u as usize) < cx.c.world.field.as_ref()?.bases.len() => {
                    limit.read(cx, fr).map(|limit| (u as usize, limit))
                }
                _ => return None,
            },
            None => None,
        };
        Some(Ready {
            test,
            when: self.when,
            val: self.val,
            command,
            near,
        })
    }
}

impl Ready<'_> {
    /// The body's value for unit `i`, when the sieve settles it.
    #[inline(always)]
    fn settles(&self, cx: &Cx, i: usize) -> Option<bool> {
        let u = &cx.c.world.units[i];
        let t = match self.test {
            Tested::Side(s, same) => (u.side == s) == same,
            Tested::Type(set) => set[u.ty as usize],
            Tested::Noted(ref units) => units.contains(&(i as u16)),
            Tested::Command(c) => cx.c.world.field.as_ref().is_some_and(|f| f.command[i] == c),
            Tested::Group(g, group) => {
                i == g
                    || (group.is_some()
                        && cx
                            .c
                            .world
                            .field
                            .as_ref()
                            .is_some_and(|f| f.group_of(cx.c.world, i) == group))
            }
        };
        if t == self.when {
            return Some(self.val);
        }
        match self.command {
            Some(c) if cx.c.world.field.as_ref().is_some_and(|f| f.command[i] != c) => {
                return Some(false)
            }
            _ => {}
        }
        match (self.near, &cx.c.world.field) {
            (Some((o, limit)), Some(f)) if f.beyond(i, o, limit) => Some(false),
            _ => None,
        }
    }
}

/// A quantifier's sieve ready for a run over `n` units. Its slot is read as
/// the body's first part would read it: only when there is a unit to run
/// the body for.
fn ready<'s>(
    sieve: &'s Option<(Sieve, Option<Value>)>,
    n: usize,
    cx: &Cx,
    fr: &[Value],
) -> Option<Ready<'s>> {
    if n == 0 {
        return None;
    }
    sieve.as_ref().and_then(|(s, _)| s.ready(cx, fr))
}

/// `any`, `all`, `first`, `count`, `sum`, `min` and `max` over the units
/// (or sides), the variable in `slot`, as the tree evaluator runs them; a
/// unit whose body the sieve settles is not run (for `sum`, `min` and
/// `max`, a unit whose COND it settles false gives `default`, the body's
/// constant otherwise).
fn quantifier(
    q: Quant,
    sides: bool,
    slot: usize,
    body: Box<Fun>,
    sieve: Option<(Sieve, Option<Value>)>,
) -> Box<Fun> {
    let n = move |cx: &Cx| {
        if sides {
            cx.c.world.side_names.len()
        } else {
            cx.c.world.units.len()
        }
    };
    let var = move |i: usize| {
        if sides {
            Value::Side(i as u16)
        } else {
            Value::Unit(i as u16)
        }
    };
    let default = sieve.as_ref().and_then(|(_, d)| *d);
    match q {
        Quant::Any => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(true) => return Ok(Value::Bool(true)),
                    Some(false) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if body(cx, fr)?.as_bool() {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }),
        Quant::All => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(false) => return Ok(Value::Bool(false)),
                    Some(true) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if !body(cx, fr)?.as_bool() {
                    return Ok(Value::Bool(false));
                }
            }
            Ok(Value::Bool(true))
        }),
        Quant::First => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(true) => {
                        fr[slot] = var(i);
                        return Ok(fr[slot]);
                    }
                    Some(false) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if body(cx, fr)?.as_bool() {
                    return Ok(fr[slot]);
                }
            }
            Ok(Value::None)
        }),
        Quant::Count => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            let mut count = 0i64;
            for i in 0..n(cx) {
                if let Some(b) = r.as_ref().and_then(|r| r.settles(cx, i)) {
                    count += i64::from(b);
                    continue;
                }
                fr[slot] = var(i);
                count += i64::from(body(cx, fr)?.as_bool());
            }
            Ok(Value::Int(count))
        }),
        Quant::Sum | Quant::Min | Quant::Max => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            let mut best = eval::total_start(q);
            for i in 0..n(cx) {
                let v = match (r.as_ref().and_then(|r| r.settles(cx, i)), default) {
                    (Some(false), Some(d)) => d,
                    _ => {
                        fr[slot] = var(i);
                        body(cx, fr)?
                    }
                };
                best = eval::total_step(q, best, v)?;
            }
            Ok(best)
        }),
    }
}

/// A comparison the tree evaluator would make through [`eval::binary`],
/// decided here without it where that is plain: two whole numbers, two
/// numbers (exact fractions), or equality of two values that are not
/// numbers (units, sides, symbols, truth values, `none`).
#[inline]
fn compared(op: Bin, v: Value, w: Value) -> R<Value> {
    use std::cmp::Ordering::*;
    if let (Value::Int(i), Value::Int(j)) = (v, w) {
        return Ok(Value::Bool(compare(op, i, j)));
    }
    let numeric = |x: Value| matches!(x, Value::Int(_) | Value::Frac(..));
    match (numeric(v), numeric(w)) {
        (true, true) => {
            let o = v.num_cmp(w).expect("two numbers compare");
            Ok(Value::Bool(match op {
                Bin::Eq => o == Equal,
                Bin::Ne => o != Equal,
                Bin::Lt => o == Less,
                Bin::Le => o != Greater,
                Bin::Gt => o == Greater,
                _ => o != Less,
            }))
        }
        (false, false) if matches!(op, Bin::Eq | Bin::Ne) => {
            Ok(Value::Bool((v == w) == (op == Bin::Eq)))
        }
        _ => eval::binary(op, v, w),
    }
}

fn is_comparison(op: Bin) -> bool {
    matches!(
        op,
        Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge
    )
}

#[inline]
fn compare(op: Bin, a: i64, b: i64) -> bool {
    match op {
        Bin::Eq => a == b,
        Bin::Ne => a != b,
        Bin::Lt => a < b,
        Bin::Le => a <= b,
        Bin::Gt => a > b,
        _ => a >= b,
    }
}

/// Quantity `q`'s expressions: its base, then each modifier's condition
/// (if any) and amount.
fn quantity_parts(rs: &Ruleset, q: Id) -> impl Iterator<Item = &Ex> {
    let qd = &rs.quantities[q as usize];
    std::iter::once(&qd.func.body).chain(qd.modifiers.iter().flat_map(|m| {
        let md = &rs.modifiers[*m as usize];
        md.when.iter().chain(std::iter::once(&md.amount))
    }))
}

/// The slots of `args` when each is a parameter (a local below `params`).
fn params_only(args: &[Ex], params: usize) -> Option<Vec<u16>> {
    args.iter()
        .map(|a| match a {
            Ex::Local(l) if (*l as usize) < params => Some(*l),
            _ => None,
        })
        .collect()
}

/// Count, in `calls`, the calls in `e` (not inside a quantifier, nor in
/// what it calls) of battle facts without a hook and of defines, made with
/// the parameters alone (locals below `params`) and rolling no dice
/// anywhere down: (fact?, id, argument slots, how many).
fn repeated_calls(
    rs: &Ruleset,
    e: &Ex,
    params: usize,
    calls: &mut Vec<(Callee, Id, Vec<u16>, usize)>,
) {
    let call = match e {
        Ex::Quant(..) => return,
        Ex::Fact(f, a) if rs.facts[*f as usize].hook.is_none() => Some((Callee::Fact, *f, a)),
        Ex::Define(d, a) => Some((Callee::Define, *d, a)),
        Ex::Table(t, a) => Some((Callee::Table, *t, a)),
        _ => None,
    };
    if let Some((callee, id, args)) = call {
        if let Some(slots) = params_only(args, params) {
            if !eval::rolls_dice(rs, e) {
                match calls
                    .iter_mut()
                    .find(|c| c.0 == callee && c.1 == id && c.2 == slots)
                {
                    Some(c) => c.3 += 1,
                    None => calls.push((callee, id, slots, 1)),
                }
            }
        }
        return;
    }
    e.any_child(&mut |c| {
        repeated_calls(rs, c, params, calls);
        false
    });
}

/// The highest local an expression reads or binds (0 when none).
fn max_local(e: &Ex) -> usize {
    let mut m = 0usize;
    fn walk(e: &Ex, m: &mut usize) {
        match e {
            Ex::Local(s) => *m = (*m).max(*s as usize),
            Ex::Quant(_, _, s, _) => *m = (*m).max(*s as usize),
            Ex::Odds(o) if o.outcomes > 0 => *m = (*m).max((o.first + o.outcomes - 1) as usize),
            _ => {}
        }
        e.any_child(&mut |c| {
            walk(c, m);
            false
        });
    }
    walk(e, &mut m);
    m
}

#[cfg(test)]
mod tests {
    use super::{quantity_parts, repeated_calls, Callee, Limit, Lower, Scope, Test};
    use crate::battle::game::tests::{ruleset, tvbd_game};
    use crate::compile::ir::Ex;

    fn thistle() -> crate::compile::ir::Ruleset {
        ruleset("rules/thistle_lily_and_rose.muster")
    }

    /// `count u: in_group(g, u) and ...` (Thistle's group_size): the
    /// quantifier runs its body only for g and the units of g's group,
    /// `in_group` being `u == g or same_group(g, u)` and `same_group` the
    /// table's `grouped`.
    #[test]
    fn a_quantifier_over_a_group_looks_only_at_the_group() {
        let rs = thistle();
        let lower = Lower::new(&rs);
        let sieve_of = |name: &str| {
            let d = rs.defines.iter().find(|d| d.name == name).expect(name);
            let Ex::Quant(_, false, slot, body) = &d.body else {
                panic!("{name} is a quantifier over the units")
            };
            lower.sieve(body, &Scope::top(), *slot as usize)
        };
        let Some(s) = sieve_of("group_size") else {
            panic!("group_size has a sieve")
        };
        assert!(matches!(s.test, Test::Group { of: 0 }));
        assert!(!s.when && !s.val, "not of the group: the body is false");
        let Some(s) = sieve_of("groups_engaged") else {
            panic!("groups_engaged has a sieve")
        };
        assert!(matches!(s.test, Test::Group { of: 0 }));
    }

    /// Matchlocks counts a unit's brigade mates placed: `count f:
    /// brigade_mate(f, u) and ...`, a brigade mate being another unit,
    /// a friend, of the same command, not a leader. The quantifier tests
    /// the side first, then, those parts being sure to evaluate, the
    /// command too: the body runs only for friends of u's command.
    #[test]
    fn a_quantifier_over_a_command_looks_only_at_the_command() {
        let rs = ruleset("rules/never_mind_the_matchlocks.muster");
        let lower = Lower::new(&rs);
        let d = rs
            .defines
            .iter()
            .find(|d| d.name == "placed_mates")
            .expect("placed_mates");
        let Ex::Quant(_, false, slot, body) = &d.body else {
            panic!("a quantifier over the units")
        };
        let Some(s) = lower.sieve(body, &Scope::top(), *slot as usize) else {
            panic!("placed_mates has a sieve")
        };
        assert!(matches!(
            s.test,
            Test::Side {
                of: 0,
                unit: true,
                same: true
            }
        ));
        assert_eq!(s.command, Some(0));
        assert!(!s.val && !s.sure);
        // Negated, a unit of another command makes the body true, not
        // false: the command is not tested.
        let not = Ex::Not(body.clone());
        let Some(s) = lower.sieve(&not, &Scope::top(), *slot as usize) else {
            panic!("the negation has a sieve")
        };
        assert_eq!(s.command, None);
        assert!(s.val);
    }

    fn tvbd() -> crate::compile::ir::Ruleset {
        ruleset("rules/tillys_very_bad_day.muster")
    }

    /// The sieve of a quantifier over the units in define `name`'s body
    /// (or a fact's battle derivation).
    fn sieve_of(
        lower: &Lower,
        rs: &crate::compile::ir::Ruleset,
        name: &str,
    ) -> Option<super::Sieve> {
        let body = match rs.defines.iter().find(|d| d.name == name) {
            Some(d) => &d.body,
            None => {
                let f = rs.facts.iter().find(|f| f.name == name).expect(name);
                &f.battle.as_ref().expect("derived in battle").body
            }
        };
        let Ex::Quant(_, false, slot, body) = body else {
            panic!("{name} is a quantifier over the units")
        };
        lower.sieve(body, &Scope::top(), *slot as usize)
    }

    /// TVBD asks whether an enemy is in contact (`locked_in_melee`, a
    /// battle fact; `engaged_with_enemy`, either way round through the
    /// fact `engaged`) and whether a friendly horse is within 3 TUM
    /// (`cavalry_support`, past `not f.routed`, which cannot fail for the
    /// quantifier's own unit): after the side, each body is false for a
    /// unit out of that reach, so the quantifier does not run it there.
    /// Negated, or with a part before that may fail, or with a reach that
    /// is not a number, nothing is known.
    #[test]
    fn a_quantifier_that_asks_for_nearness_skips_the_units_out_of_reach() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Builtin};
        use crate::run::battlefield::CONTACT;
        let rs = &tvbd();
        let lower = Lower::new(rs);
        let near = |name: &str| match sieve_of(&lower, rs, name) {
            Some(s) => {
                assert!(!s.val, "{name}: a far unit makes the body false");
                s.near
            }
            None => panic!("{name} has a sieve"),
        };
        let three = Some((0, Limit::Const(3.0 + 1.0 / 64.0)));
        assert_eq!(near("locked_in_melee"), Some((0, Limit::Const(CONTACT))));
        assert_eq!(near("engaged_with_enemy"), Some((0, Limit::Const(CONTACT))));
        assert_eq!(near("cavalry_support"), three);
        // Shooting's range is the shooter's stat, read when the sieve is
        // made ready: `in_range(s, t)` asks `s.range != none` first, which
        // cannot fail once the shooter is known to be a unit.
        let range = rs.stat("range").expect("range") as usize;
        let by_range = Some((0, Limit::Stat { of: 0, stat: range }));
        assert_eq!(near("enemy_in_range_to_front"), by_range);
        assert_eq!(near("friends_in_range_to_front"), by_range);

        let d = rs.defines.iter().find(|d| d.name == "cavalry_support");
        let Ex::Quant(_, false, slot, body) = &d.expect("cavalry_support").body else {
            panic!("a quantifier")
        };
        let var = *slot as usize;
        let not = Ex::Not(body.clone());
        let s = lower.sieve(&not, &Scope::top(), var).expect("a sieve");
        assert_eq!((s.val, s.near), (true, None), "negated: not false when far");
        // `resolve + 0 >= resolve` of the other unit may fail (it is not
        // known to be a unit): put first after the side, the distance
        // after it is not looked at.
        let resolve = rs.states.iter().position(|s| s.name == "resolve");
        let resolve = resolve.expect("resolve") as u16;
        let of = |l: u16| Box::new(Ex::State(Box::new(Ex::Local(l)), resolve));
        let sum = Ex::Bin(Bin::Add, of(0), Box::new(Ex::Const(Value::Int(0))));
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), of(0));
        // The chain's first part: `friends(u, f)`.
        let mut side = &**body;
        while let Ex::Bin(Bin::And, a, _) = side {
            side = a;
        }
        assert!(matches!(side, Ex::Define(..)), "{side:?}");
        let side = &Box::new(side.clone());
        let distance = Ex::Builtin(Builtin::Distance, vec![Ex::Local(0), Ex::Local(1)]);
        let within = |k: Ex| Ex::Bin(Bin::Le, Box::new(distance.clone()), Box::new(k));
        let chain = |a: Ex, b: Ex| Ex::Bin(Bin::And, Box::new(a), Box::new(b));
        let three = || Ex::Const(Value::Int(3));
        let plain = chain((**side).clone(), within(three()));
        let s = lower.sieve(&plain, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, Some((0, Limit::Const(3.0 + 1.0 / 64.0))));
        let failing = chain(chain((**side).clone(), may_fail.clone()), within(three()));
        let s = lower.sieve(&failing, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // The same part asked of the quantifier's unit cannot fail.
        let own = |l: u16| Box::new(Ex::State(Box::new(Ex::Local(l)), resolve));
        let harmless = Ex::Bin(Bin::Ge, own(1), own(1));
        let sure = chain(chain((**side).clone(), harmless), within(three()));
        let s = lower.sieve(&sure, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, Some((0, Limit::Const(3.0 + 1.0 / 64.0))));
        // A reach that is a stat of the other unit (`move`, stat 0).
        let stat = |l: u16| Ex::Stat(Box::new(Ex::Local(l)), 0);
        let by_stat = Some((0, Limit::Stat { of: 0, stat: 0 }));
        let plain = chain((**side).clone(), within(stat(0)));
        let s = lower.sieve(&plain, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, by_stat);
        // Of the quantifier's own unit: a reach per unit, nothing known.
        let own = chain((**side).clone(), within(stat(1)));
        let s = lower.sieve(&own, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // A part just before the distance (the two `and`ed together, as
        // `in_range` has them) that reads the other unit (`x.move !=
        // none`) cannot fail once the sieve knows that unit is one; one
        // that reads a third local may.
        let ne_none =
            |l: u16| Ex::Bin(Bin::Ne, Box::new(stat(l)), Box::new(Ex::Const(Value::None)));
        let known = chain((**side).clone(), chain(ne_none(0), within(stat(0))));
        let s = lower.sieve(&known, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, by_stat);
        let third = chain((**side).clone(), chain(ne_none(2), within(stat(0))));
        let s = lower.sieve(&third, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // And one that may fail even so.
        let failing = chain((**side).clone(), chain(may_fail, within(stat(0))));
        let s = lower.sieve(&failing, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
    }

    /// `expr`, with the unit `a` in it, evaluated in `world` by the tree
    /// evaluator and compiled: the same value (asserted), as a truth.
    fn both(
        build: &mut crate::Build,
        world: &crate::run::world::World,
        a: usize,
        expr: &str,
    ) -> bool {
        use crate::base::value::Value;
        use crate::run::eval::{Ctx, Eval, NoDice};
        let rs = &build.ruleset;
        let locals = [("a".to_string(), crate::compile::ir::Ty::Unit)];
        let file = build.sources.add("query", expr);
        let e = crate::front::parse::parse_expr(expr, file, 0).expect("parses");
        let mut c = crate::compile::compiler::Compiler::from_ruleset(rs);
        let (ex, _, slots) = c.query(&e, &locals).expect("compiles");
        let mut frame = vec![Value::None; (slots as usize).max(1)];
        frame[0] = Value::Unit(a as u16);
        let ev = Eval::new(rs);
        let tree = ev.eval(Ctx::new(world), &ex, &mut frame.clone(), &mut NoDice);
        let code = Lower::new(rs).code(&ex, frame.len());
        let compiled = code.run(&ev, Ctx::new(world), &mut frame, &mut NoDice);
        match (tree, compiled) {
            (Ok(t), Ok(c)) => {
                assert_eq!(t, c, "{expr}: the tree's value");
                t.as_bool()
            }
            _ => panic!("{expr} evaluates"),
        }
    }

    /// The `n`th unit of `side` that is not a commander.
    fn nth_of(
        rs: &crate::compile::ir::Ruleset,
        w: &crate::run::world::World,
        side: u16,
        n: usize,
    ) -> usize {
        let units = w.units.iter().enumerate().filter(|(_, u)| {
            u.side == side && !rs.unit_types[u.ty as usize].name.contains("Commander")
        });
        units.map(|(i, _)| i).nth(n).expect("units enough")
    }

    /// Compiled, a quantifier that skips the units out of reach gives what
    /// the tree evaluator gives, at the reach and just beyond it: two
    /// square bases corner to corner along the line of their centres
    /// (where the centres' bound is as tight as it gets), every other
    /// unit off the table.
    #[test]
    fn a_quantifier_that_asks_for_nearness_keeps_the_units_at_its_reach() {
        use crate::run::battlefield::{Base, Pt};
        let (mut build, mut game) = tvbd_game();
        let nth = |side, n| nth_of(&build.ruleset, &game.world, side, n);
        let (a, friend, enemy) = (nth(0, 0), nth(0, 1), nth(1, 0));
        let at = |x: f64| Base::new(Pt::new(x, 10.0), 45.0, 1.0, 1.0);
        let r = at(0.0).radius();
        let f = game.world.field.as_mut().expect("a battle has a table");
        for u in 0..f.bases.len() {
            f.set_on_table(u, false);
        }
        for u in [a, friend, enemy] {
            f.set_on_table(u, true);
        }
        f.set_base(a, at(20.0));
        let mut ask =
            |world: &crate::run::world::World, expr: &str| both(&mut build, world, a, expr);
        // In contact (0.005 apart, under CONTACT), then not (0.02).
        let contact = "any e: enemies(a, e) and in_contact(a, e)";
        for (gap, holds) in [(0.005, true), (0.02, false)] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_base(enemy, at(20.0 + 2.0 * r + gap));
            f.set_base(friend, at(40.0));
            assert_eq!(ask(&game.world, contact), holds, "gap {gap}");
            assert_eq!(ask(&game.world, "locked_in_melee(a)"), holds, "gap {gap}");
        }
        // Exactly 3 apart, or a shade more that the rules read as 3: kept;
        // 1/16 more: not.
        let support = "any f: friends(a, f) and not f.routed and distance(a, f) <= 3";
        for (gap, holds) in [
            (3.0, true),
            (3.0 + 1.0 / 130.0, true),
            (3.0 + 1.0 / 16.0, false),
        ] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_base(enemy, at(80.0));
            f.set_base(friend, at(20.0 + 2.0 * r + gap));
            assert_eq!(ask(&game.world, support), holds, "gap {gap}");
        }
        // Off the table, the friend is never within reach.
        let f = game.world.field.as_mut().expect("a table");
        f.set_base(friend, at(20.0 + 2.0 * r + 1.0));
        assert!(ask(&game.world, support));
        let f = game.world.field.as_mut().expect("a table");
        f.set_on_table(friend, false);
        assert!(!ask(&game.world, support));

        // A reach that is a stat, read as the run begins: a shooter's own
        // range (4 TUM: not a horse, whose range is 2), kept at it and a
        // shade more, not 1/16 more. A unit with no range (none) reaches
        // no one, and no reach is read.
        use crate::base::value::{Value, UNLIMITED};
        let range = build.ruleset.stat("range").expect("range") as usize;
        let of_side_0 = |ranged: bool| {
            let w = &game.world.units;
            let has = |u: &crate::run::world::UnitInst| {
                matches!(u.stats[range], Value::Int(k) if k < UNLIMITED) == ranged
            };
            w.iter()
                .position(|u| u.side == 0 && has(u) && u.stats[range] != Value::Int(2))
        };
        let (shooter, unranged) = (of_side_0(true), of_side_0(false));
        let (shooter, unranged) = (shooter.expect("a shooter"), unranged.expect("no range"));
        assert_eq!(game.world.units[shooter].stats[range], Value::Int(4));
        let in_range = "any f: friends(a, f) and in_range(a, f)";
        for (gap, holds) in [
            (4.0, true),
            (4.0 + 1.0 / 130.0, true),
            (4.0 + 1.0 / 16.0, false),
        ] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_on_table(friend, true);
            for u in [a, shooter, unranged] {
                f.set_on_table(u, u == shooter);
            }
            f.set_base(shooter, at(20.0));
            f.set_base(friend, at(20.0 + 2.0 * r + gap));
            let got = both(&mut build, &game.world, shooter, in_range);
            assert_eq!(got, holds, "gap {gap}");
            let f = game.world.field.as_mut().expect("a table");
            f.set_on_table(shooter, false);
            f.set_on_table(unranged, true);
            f.set_base(unranged, at(20.0));
            let got = both(&mut build, &game.world, unranged, in_range);
            assert!(!got, "gap {gap}: no range");
        }
    }

    /// TVBD asks `charges_this_turn(c)`: `any t: charges(c, t)`, a charge
    /// being `declared_charge(c, t) and not charge_cancelled(c)`, and
    /// `declared_charge` a fact only ever noted, false by default. The
    /// quantifier runs its body only for the units the fact is noted true
    /// of, with c first. A fact with a derivation, a hook, no default or a
    /// default of true is not such a test.
    #[test]
    fn a_quantifier_over_a_noted_fact_looks_only_at_the_units_noted() {
        use super::NotedArg;
        let rs = &mut tvbd();
        let sieve = |rs: &crate::compile::ir::Ruleset, name: &str| {
            let lower = Lower::new(rs);
            sieve_of(&lower, rs, name).map(|s| (s.test, s.when, s.val))
        };
        let Some((Test::Noted { fact, args }, false, false)) = sieve(rs, "charges_this_turn")
        else {
            panic!("charges_this_turn is sieved by the noted charges")
        };
        assert_eq!(rs.facts[fact as usize].name, "declared_charge");
        assert!(matches!(&args[..], [NotedArg::Slot(0), NotedArg::Unit]));
        let declared = rs.facts.iter().position(|f| f.name == "declared_charge");
        let declared = declared.expect("declared_charge");
        // True by default, or without a default: the test would be wrong.
        for default in [Some(crate::base::value::Value::Bool(true)), None] {
            rs.facts[declared].default = default;
            assert!(
                !matches!(
                    sieve(rs, "charges_this_turn"),
                    Some((Test::Noted { .. }, ..))
                ),
                "{default:?}"
            );
        }
    }

    /// Compiled, a quantifier over a noted fact gives what the tree gives:
    /// with nothing noted, with charges noted for other units and the
    /// other way round, with one noted false, and with one noted true.
    #[test]
    fn a_quantifier_over_a_noted_fact_finds_what_is_noted() {
        use crate::base::value::Value;
        let (mut build, mut game) = tvbd_game();
        let nth = |side, n| nth_of(&build.ruleset, &game.world, side, n);
        let (a, b, e, f) = (nth(0, 0), nth(0, 1), nth(1, 0), nth(1, 1));
        let declared = build
            .ruleset
            .fact("declared_charge")
            .expect("declared_charge");
        let unit = |u: usize| Value::Unit(u as u16);
        // (Nobody charges a or b: neither's own charge is cancelled.)
        let charges = "any t: charges(a, t)";
        let declares = "any t: declared_charge(a, t)";
        let charged = "any c: declared_charge(c, a)";
        let w = &mut game.world;
        assert!(!both(&mut build, w, a, charges));
        assert!(!both(&mut build, w, a, charged));
        w.set_fact(declared, vec![unit(b), unit(e)], Value::Bool(true));
        w.set_fact(declared, vec![unit(a), unit(f)], Value::Bool(false));
        assert!(!both(&mut build, w, a, charges), "noted false");
        assert!(!both(&mut build, w, a, declares), "noted false");
        assert!(!both(&mut build, w, a, charged));
        assert!(both(&mut build, w, b, charges));
        assert!(both(&mut build, w, e, charged));
        assert!(!both(&mut build, w, e, declares), "noted the other way");
        w.set_fact(declared, vec![unit(a), unit(e)], Value::Bool(true));
        assert!(both(&mut build, w, a, charges));
        w.set_fact(declared, vec![unit(f), unit(a)], Value::Bool(true));
        assert!(both(&mut build, w, a, declares));
        assert!(both(&mut build, w, a, charged));
    }

    /// Thistle's move allowance asks `close_going(u)` in three modifiers'
    /// conditions, and TVBD's its table twice: compiled, the quantity works
    /// each out once an evaluation.
    /// A call with a quantifier's unit, or inside a quantifier, is not
    /// counted (its argument changes as the quantifier runs).
    #[test]
    fn a_fact_asked_in_several_modifiers_is_counted_once_per_call() {
        let rs = &thistle();
        let id = rs
            .quantities
            .iter()
            .position(|q| q.func.name == "move_allowance")
            .expect("move_allowance");
        let params = rs.quantities[id].func.params.len();
        let mut calls = Vec::new();
        for e in quantity_parts(rs, id as u16) {
            repeated_calls(rs, e, params, &mut calls);
        }
        let named = |callee: Callee, id: u16| match callee {
            Callee::Fact => rs.facts[id as usize].name.clone(),
            Callee::Define => rs.defines[id as usize].name.clone(),
            Callee::Table => rs.tables[id as usize].name.clone(),
        };
        let mut seen: Vec<(String, Vec<u16>, usize)> = calls
            .iter()
            .map(|(callee, id, args, n)| (named(*callee, *id), args.clone(), *n))
            .collect();
        seen.sort();
        assert!(
            seen.contains(&("close_going".to_string(), vec![0], 3)),
            "{seen:?}"
        );
        assert!(
            seen.contains(&("group_size".to_string(), vec![0], 3)),
            "{seen:?}"
        );
        // group_size's own quantifier calls in_group(g, u) with its unit:
        // never one of the quantity's.
        assert!(!seen.iter().any(|(n, ..)| n == "in_group"), "{seen:?}");

        // TVBD's move allowance is the table manoeuvre_allowance(u, m),
        // which its difficult-terrain modifier asks again.
        let rs = &tvbd();
        let id = rs
            .quantities
            .iter()
            .position(|q| q.func.name == "move_allowance");
        let id = id.expect("move_allowance") as u16;
        let mut calls = Vec::new();
        for e in quantity_parts(rs, id) {
            repeated_calls(rs, e, 2, &mut calls);
        }
        let table = rs
            .tables
            .iter()
            .position(|t| t.name == "manoeuvre_allowance");
        let table = table.expect("manoeuvre_allowance") as u16;
        assert!(
            calls.contains(&(Callee::Table, table, vec![0, 1], 2)),
            "{calls:?}"
        );
    }
}
