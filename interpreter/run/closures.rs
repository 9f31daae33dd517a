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

mod sieve;
use sieve::quantifier;

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

    /// [`Code::call`] from the tree evaluator: in world `c`, rolling
    /// `dice`.
    pub(crate) fn call_in(
        &self,
        ev: &Eval,
        c: Ctx,
        args: &[Value],
        dice: &mut dyn DiceSource,
    ) -> R<Value> {
        let cx = Cx {
            ev,
            c,
            dice: RefCell::new(dice),
        };
        self.call(&cx, args)
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

/// Define bodies compiled on their own for the tree evaluator of a
/// procedure being specialised for its odds ([`crate::run::odds`]): the
/// body of each define compiled when first called, and kept while the
/// evaluator that lends them lives (a battle's, over its game). It holds
/// the compiler's own state, not the ruleset (which each call passes), so
/// that an evaluator holding it stays covariant in its ruleset's lifetime.
pub(crate) struct DefineBodies {
    parts: Option<LowerParts>,
}

/// What a [`Lower`] keeps between expressions, without its ruleset.
struct LowerParts {
    remembered: Vec<bool>,
    pairs: eval::PairRows,
    pair_bodies: FxHashMap<u16, Arc<Code>>,
    defines: Vec<Option<Arc<Code>>>,
    quantities: Vec<Option<Arc<QuantityCode>>>,
}

impl DefineBodies {
    pub(crate) fn new() -> Self {
        DefineBodies { parts: None }
    }

    /// Define `d`'s body of ruleset `rs` (always the same ruleset),
    /// compiled on its own frame.
    pub(crate) fn body(&mut self, rs: &Ruleset, d: Id) -> Arc<Code> {
        if let Some(Some(c)) = self.parts.as_ref().map(|p| &p.defines[d as usize]) {
            return c.clone();
        }
        let mut lower = match self.parts.take() {
            Some(p) => Lower {
                rs,
                remembered: p.remembered,
                pairs: p.pairs,
                pair_bodies: p.pair_bodies,
                need: 0,
                depth: 0,
                defines: p.defines,
                quantities: p.quantities,
                shared: Vec::new(),
            },
            None => Lower::new(rs),
        };
        let c = lower.define_body(d);
        self.parts = Some(LowerParts {
            remembered: lower.remembered,
            pairs: lower.pairs,
            pair_bodies: lower.pair_bodies,
            defines: lower.defines,
            quantities: lower.quantities,
        });
        c
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
            St::Let(_, e, _) | St::Outcome(_, e, _) | St::Require(e, ..) => out.push(e),
            St::If(c, a, b, _) => {
                out.push(c);
                statement_exprs(a, out);
                statement_exprs(b, out);
            }
            St::For(_, _, c, b, _) => {
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
    use super::{quantity_parts, repeated_calls, Callee};
    use crate::battle::game::tests::ruleset;

    pub(super) fn thistle() -> crate::compile::ir::Ruleset {
        ruleset("rules/thistle_lily_and_rose.muster")
    }

    pub(super) fn tvbd() -> crate::compile::ir::Ruleset {
        ruleset("rules/tillys_very_bad_day.muster")
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
