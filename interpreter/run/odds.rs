//! Odds: how often each outcome of a procedure happens in a situation.
//!
//! A procedure is first specialised to the situation: calls are inlined and
//! everything the situation fixes (facts, stats, tables, quantities and their
//! modifiers, state not yet changed) is folded to constants, leaving a short
//! program of dice and arithmetic. That program is then either
//! - run exactly: each statement that rolls branches over the exact
//!   distribution of its roll (pools by convolution, see [`crate::run::dice`]), or
//! - sampled: run many times with the seeded generator, in fixed chunks so
//!   that the result is the same for any number of threads.

use crate::base::rng::Rng;
use crate::base::value::Value;
use crate::compile::ir::*;
use crate::front::diagnostic::Diag;
use crate::front::syntax::Span;
use crate::run::dice::{self, add_mass, Dist, Prob, Scripted};
use crate::run::eval::{binary, Ctx, Dirty, Eval, EvalError, NoDice};
use crate::run::hooks;
use crate::run::world::World;
use rayon::prelude::*;
use std::rc::Rc;

/// One instruction of a specialised procedure.
#[derive(Clone, Debug)]
pub enum Op {
    Let(u16, Ex),
    Outcome(u16, Ex),
    Require(Ex, String, Span),
    JumpIfNot(Ex, usize),
    Jump(usize),
    Assign {
        side: bool,
        target: Ex,
        state: Id,
        op: ModOp,
        value: Ex,
    },
    /// Run a hook of procedure `proc`: the values of its variables, and
    /// where the procedure's outcomes land in the program's.
    Hook {
        hook: Id,
        proc: Id,
        vars: Vec<Ex>,
        outs: Vec<Option<u16>>,
    },
}

impl Op {
    /// The value the op computes (a `let`, an outcome, a requirement's or
    /// a jump's condition, the value a change assigns).
    fn value(&self) -> Option<&Ex> {
        match self {
            Op::Let(_, e) | Op::Outcome(_, e) | Op::Require(e, _, _) | Op::JumpIfNot(e, _) => {
                Some(e)
            }
            Op::Assign { value, .. } => Some(value),
            Op::Jump(_) | Op::Hook { .. } => None,
        }
    }

    /// The unit or side a change of state applies to.
    fn target(&self) -> Option<&Ex> {
        match self {
            Op::Assign { target, .. } => Some(target),
            _ => None,
        }
    }
}

/// A procedure specialised to one situation.
#[derive(Clone, Debug)]
pub struct Program {
    pub ops: Vec<Op>,
    /// Each op's statement in the source: where a run-time fault in it is
    /// reported ([`Program::locate`]).
    spans: Vec<Span>,
    /// Does this op's expression roll dice?
    random: Vec<bool>,
    pub frame: Vec<Value>,
    pub outcomes: Vec<OutcomeDef>,
    pub world: World,
    /// The procedure it runs (a run that leaves an outcome unset names it).
    pub procedure: Id,
}

/// The answer: each outcome's distribution.
#[derive(Clone, Debug)]
pub struct Odds {
    pub method: Method,
    pub outcomes: Vec<OutcomeOdds>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Method {
    Exact,
    Sampled { samples: u64, seed: u64 },
    Scripted,
}

#[derive(Clone, Debug)]
pub struct OutcomeOdds {
    pub name: String,
    /// Its type (how its values read: a roll's tallies by name).
    pub ty: Ty,
    /// (value, probability), in value order.
    pub values: Vec<(Value, Prob)>,
}

impl Odds {
    pub fn get(&self, outcome: &str) -> Option<&OutcomeOdds> {
        self.outcomes.iter().find(|o| o.name == outcome)
    }
}

impl OutcomeOdds {
    /// The probability of one value (0 when it never happens).
    pub fn p(&self, v: Value) -> Prob {
        self.values
            .iter()
            .find(|(x, _)| *x == v)
            .map(|x| x.1.clone())
            .unwrap_or(Prob::ZERO)
    }
}

// ------------------------------------------------------------ specialising

struct Spec<'r> {
    ev: Eval<'r>,
    world: World,
    known: Vec<Option<Value>>,
    dirty: Dirty,
    ops: Vec<Op>,
    /// Each op's statement ([`Program::spans`]), and the statement being
    /// specialised.
    spans: Vec<Span>,
    at: Span,
    outcomes: Vec<OutcomeDef>,
    /// The call being specialised, for messages: `melee(attacker, defender)`.
    context: String,
    /// The locals given a value before an enclosing `if` whose condition
    /// is not known and given another in one of its branches: there such a
    /// local's known value is written to the frame too, since which path
    /// was taken is not known. (Locals of the branch's own are not: they
    /// end with it, and writing them would cost the typed tier.)
    escaping: Vec<u16>,
    /// Which locals have been given a value so far.
    bound: Vec<bool>,
    /// The outcomes the caller will read (`chance`/`expect`), when not
    /// all: work after the last statement that may set one of them (or
    /// refuse the procedure) is not specialised at all.
    wanted: Option<Vec<bool>>,
}

/// The locals (in the caller's frame) a block may give a value: its `let`s
/// and its `for` variables, in nested blocks too (a called procedure's
/// locals are a frame of their own).
fn assigned(body: &[St], base: u16, out: &mut Vec<u16>) {
    for s in body {
        match s {
            St::Let(slot, _, _) | St::For(_, slot, _, _, _) => out.push(slot + base),
            _ => {}
        }
        match s {
            St::If(_, a, b, _) => {
                assigned(a, base, out);
                assigned(b, base, out);
            }
            St::For(_, _, _, a, _) => assigned(a, base, out),
            _ => {}
        }
    }
}

/// Move an inlined callee's locals to its place in the caller's frame.
fn relocate(e: &Ex, base: u16) -> Ex {
    if base == 0 {
        return e.clone();
    }
    map(e, &mut |x| match x {
        Ex::Local(s) => Some(Ex::Local(s + base)),
        Ex::Quant(q, sd, slot, body) => Some(Ex::Quant(
            *q,
            *sd,
            slot + base,
            Box::new(relocate(body, base)),
        )),
        _ => None,
    })
}

/// Rebuild an expression bottom-up; `f` may replace a node (and then its
/// children are not visited).
pub(crate) fn map(e: &Ex, f: &mut dyn FnMut(&Ex) -> Option<Ex>) -> Ex {
    if let Some(r) = f(e) {
        return r;
    }
    let b = |x: &Ex, f: &mut dyn FnMut(&Ex) -> Option<Ex>| Box::new(map(x, f));
    match e {
        Ex::Const(_) | Ex::Local(_) | Ex::Option(_) => e.clone(),
        Ex::Stat(x, s) => Ex::Stat(b(x, f), *s),
        Ex::State(x, s) => Ex::State(b(x, f), *s),
        Ex::SideState(x, s) => Ex::SideState(b(x, f), *s),
        Ex::SideOf(x) => Ex::SideOf(b(x, f)),
        Ex::Fact(i, a) => Ex::Fact(*i, a.iter().map(|x| map(x, f)).collect()),
        Ex::Define(i, a) => Ex::Define(*i, a.iter().map(|x| map(x, f)).collect()),
        Ex::Table(i, a) => Ex::Table(*i, a.iter().map(|x| map(x, f)).collect()),
        Ex::Quantity(i, a) => Ex::Quantity(*i, a.iter().map(|x| map(x, f)).collect()),
        Ex::Builtin(b, a) => Ex::Builtin(*b, a.iter().map(|x| map(x, f)).collect()),
        Ex::IsType(x, s) => Ex::IsType(b(x, f), s.clone()),
        Ex::IsQuality(x, s) => Ex::IsQuality(b(x, f), s.clone()),
        Ex::IsSym(x, s) => Ex::IsSym(b(x, f), s.clone()),
        Ex::Not(x) => Ex::Not(b(x, f)),
        Ex::Neg(x) => Ex::Neg(b(x, f)),
        Ex::Bin(op, x, y) => Ex::Bin(*op, b(x, f), b(y, f)),
        Ex::If(c, x, y) => Ex::If(b(c, f), b(x, f), b(y, f)),
        Ex::Quant(q, s, slot, body) => Ex::Quant(*q, *s, *slot, b(body, f)),
        Ex::Dice {
            count,
            die,
            mode,
            reroll,
            span,
        } => Ex::Dice {
            count: b(count, f),
            die: *die,
            mode: match mode {
                DiceMode::Scoring(t) => DiceMode::Scoring(b(t, f)),
                m => m.clone(),
            },
            reroll: *reroll,
            span: *span,
        },
        Ex::Roll(r) => Ex::Roll(Box::new(Roll {
            parts: r
                .parts
                .iter()
                .map(|p| RollPart {
                    count: map(&p.count, f),
                    dice: match &p.dice {
                        PartDice::Die(d) => PartDice::Die(*d),
                        PartDice::Pool(e) => PartDice::Pool(map(e, f)),
                    },
                })
                .collect(),
            effects: r.effects,
            args: r.args.iter().map(|x| map(x, f)).collect(),
            span: r.span,
        })),
        Ex::Tally(x, fx, k) => Ex::Tally(b(x, f), *fx, *k),
        Ex::Odds(o) => Ex::Odds(Box::new(OddsEx {
            expect: o.expect,
            procedure: o.procedure,
            args: o.args.iter().map(|x| map(x, f)).collect(),
            given: o
                .given
                .iter()
                .map(|(g, a, v)| (*g, a.iter().map(|x| map(x, f)).collect(), map(v, f)))
                .collect(),
            first: o.first,
            outcomes: o.outcomes,
            row: o.row,
            of: map(&o.of, f),
            span: o.span,
        })),
    }
}

/// Algebra the situation makes possible once its constants are in: a pool
/// of no dice is 0, `x + 0` is `x`, `true and e` is `e`, a constant `if`
/// picks its branch.
fn simplify(e: Ex) -> Ex {
    use Value::{Bool, Int};
    match e {
        Ex::Dice { ref count, .. } if matches!(**count, Ex::Const(Int(n)) if n == 0) => {
            Ex::Const(Int(0))
        }
        Ex::Bin(Bin::Add, a, b) => match (*a, *b) {
            (Ex::Const(Int(0)), x) | (x, Ex::Const(Int(0))) => x,
            (a, b) => Ex::Bin(Bin::Add, Box::new(a), Box::new(b)),
        },
        Ex::Bin(Bin::Sub, a, b) => match (*a, *b) {
            (x, Ex::Const(Int(0))) => x,
            (a, b) => Ex::Bin(Bin::Sub, Box::new(a), Box::new(b)),
        },
        Ex::Bin(Bin::And, a, b) => match (*a, *b) {
            (Ex::Const(Bool(true)), x) | (x, Ex::Const(Bool(true))) => x,
            (Ex::Const(Bool(false)), _) => Ex::Const(Bool(false)),
            (a, b) => Ex::Bin(Bin::And, Box::new(a), Box::new(b)),
        },
        Ex::Bin(Bin::Or, a, b) => match (*a, *b) {
            (Ex::Const(Bool(false)), x) | (x, Ex::Const(Bool(false))) => x,
            (Ex::Const(Bool(true)), _) => Ex::Const(Bool(true)),
            (a, b) => Ex::Bin(Bin::Or, Box::new(a), Box::new(b)),
        },
        Ex::If(c, a, b) => match *c {
            Ex::Const(v) => {
                if v.as_bool() {
                    *a
                } else {
                    *b
                }
            }
            c => Ex::If(Box::new(c), a, b),
        },
        Ex::Not(x) => match *x {
            Ex::Const(Bool(b)) => Ex::Const(Bool(!b)),
            x => Ex::Not(Box::new(x)),
        },
        Ex::Roll(r) => crate::run::rolling::simplify_roll(*r),
        e => e,
    }
}

/// Does the expression read a local that is not yet known (and not bound by
/// a quantifier inside it)?
fn reads_unknown(e: &Ex, known: &[Option<Value>], bound: &mut Vec<u16>) -> bool {
    match e {
        Ex::Local(s) => known[*s as usize].is_none() && !bound.contains(s),
        Ex::Quant(_, _, slot, body) => {
            bound.push(*slot);
            let r = reads_unknown(body, known, bound);
            bound.pop();
            r
        }
        Ex::Dice { .. } | Ex::Roll(_) => true,
        e => e.any_child(&mut |c| reads_unknown(c, known, bound)),
    }
}

impl Spec<'_> {
    fn fold(&mut self, e: &Ex) -> Ex {
        // Substitute known locals.
        let known = &self.known;
        let e = map(e, &mut |x| match x {
            Ex::Local(s) => known[*s as usize].map(Ex::Const),
            _ => None,
        });
        self.fold_rec(&e)
    }

    fn fold_rec(&mut self, e: &Ex) -> Ex {
        if let Ex::Const(_) = e {
            return e.clone();
        }
        // A sum whose terms roll dice: one term per unit (or side), each
        // folded with its unit known, so that the terms convolve.
        if let Ex::Quant(crate::front::syntax::Quant::Sum, sides, slot, body) = e {
            if body.is_random() {
                let n = if *sides {
                    self.world.side_names.len()
                } else {
                    self.world.units.len()
                };
                let mut total = Ex::Const(Value::Int(0));
                for i in 0..n {
                    let v = if *sides {
                        Value::Side(i as u16)
                    } else {
                        Value::Unit(i as u16)
                    };
                    let term = map(body, &mut |x| match x {
                        Ex::Local(s) if s == slot => Some(Ex::Const(v)),
                        _ => None,
                    });
                    let term = self.fold_rec(&term);
                    total = simplify(Ex::Bin(Bin::Add, Box::new(total), Box::new(term)));
                }
                return total;
            }
        }
        if !e.is_random() && !reads_unknown(e, &self.known, &mut Vec::new()) {
            let mut frame: Vec<Value> = self
                .known
                .iter()
                .map(|k| k.unwrap_or(Value::None))
                .collect();
            let ctx = Ctx {
                world: &self.world,
                state: &self.world.state,
                side_state: &self.world.side_state,
                dirty: Some(&self.dirty),
            };
            match self.ev.eval(ctx, e, &mut frame, &mut NoDice) {
                Ok(v) => return Ex::Const(v),
                Err(EvalError::Fault(_)) => return e.clone(),
                Err(EvalError::NotStatic) => {}
            }
        }
        // Fold the children one level down, then simplify what is left.
        let mut first = true;
        let folded = map(e, &mut |x| {
            if first {
                first = false;
                None
            } else {
                Some(self.fold_rec(x))
            }
        });
        simplify(folded)
    }

    /// Add an op, made from the statement being specialised.
    fn push(&mut self, op: Op) {
        self.ops.push(op);
        self.spans.push(self.at);
    }

    fn slot(&mut self, n: usize) -> u16 {
        let base = self.known.len();
        self.known.resize(base + n, None);
        self.bound.resize(base + n, false);
        base as u16
    }

    /// Specialise a block. `tail`: may a statement after the block (in the
    /// blocks around it) set a wanted outcome? When not, the block ends at
    /// its own last such statement.
    fn block(
        &mut self,
        body: &[St],
        base: u16,
        outcome_map: &[Option<u16>],
        tail: bool,
    ) -> Result<(), Diag> {
        let stop = if tail {
            body.len()
        } else {
            body.iter()
                .rposition(|s| self.matters(s, outcome_map, 0))
                .map_or(0, |i| i + 1)
        };
        for (k, s) in body[..stop].iter().enumerate() {
            let tail = tail || k + 1 < stop;
            self.at = s.span();
            match s {
                St::Let(slot, e, _) => {
                    let e = self.fold(&relocate(e, base));
                    let slot = slot + base;
                    match e {
                        Ex::Const(v) if self.escaping.contains(&slot) => {
                            self.known[slot as usize] = Some(v);
                            self.push(Op::Let(slot, Ex::Const(v)));
                        }
                        Ex::Const(v) => self.known[slot as usize] = Some(v),
                        e => {
                            // (A `for` runs a block again: forget the last round's value.)
                            self.known[slot as usize] = None;
                            self.push(Op::Let(slot, e))
                        }
                    }
                    self.bound[slot as usize] = true;
                }
                St::Outcome(i, e, _) => {
                    let e = self.fold(&relocate(e, base));
                    if let Some(Some(o)) = outcome_map.get(*i as usize) {
                        self.push(Op::Outcome(*o, e));
                    }
                }
                St::Require(e, msg, span) => {
                    let e = self.fold(&relocate(e, base));
                    match e {
                        Ex::Const(Value::Bool(true)) => {}
                        Ex::Const(_) => {
                            return Err(require_failed(
                                &format!("{} ({})", msg, self.context),
                                *span,
                            ))
                        }
                        e => self.push(Op::Require(e, msg.clone(), *span)),
                    }
                }
                St::If(c, a, b, _) => {
                    let c = self.fold(&relocate(c, base));
                    match c {
                        Ex::Const(v) => {
                            let branch = if v.as_bool() { a } else { b };
                            self.block(branch, base, outcome_map, tail)?;
                        }
                        c => {
                            // A local either branch may change is in the
                            // frame before it, and unknown after it (a
                            // `for file` loop's bookkeeping, a `mark`).
                            let mut changed = Vec::new();
                            assigned(a, base, &mut changed);
                            assigned(b, base, &mut changed);
                            let outer = self.escaping.len();
                            for &s in &changed {
                                if !self.bound[s as usize] {
                                    continue;
                                }
                                self.escaping.push(s);
                                if let Some(v) = self.known[s as usize].take() {
                                    self.push(Op::Let(s, Ex::Const(v)));
                                }
                            }
                            let jump_if_not = self.ops.len();
                            self.push(Op::JumpIfNot(c, 0));
                            self.block(a, base, outcome_map, tail)?;
                            let jump = self.ops.len();
                            self.push(Op::Jump(0));
                            let else_at = self.ops.len();
                            for &s in &changed {
                                self.known[s as usize] = None;
                            }
                            self.block(b, base, outcome_map, tail)?;
                            let end = self.ops.len();
                            self.escaping.truncate(outer);
                            for &s in &changed {
                                self.known[s as usize] = None;
                            }
                            if let Op::JumpIfNot(_, t) = &mut self.ops[jump_if_not] {
                                *t = else_at;
                            }
                            if let Op::Jump(t) = &mut self.ops[jump] {
                                *t = end;
                            }
                        }
                    }
                }
                St::AssignState {
                    unit,
                    state,
                    op,
                    value,
                    ..
                }
                | St::AssignSideState {
                    side: unit,
                    state,
                    op,
                    value,
                    ..
                } => {
                    let is_side = matches!(s, St::AssignSideState { .. });
                    let target = self.fold(&relocate(unit, base));
                    let value = self.fold(&relocate(value, base));
                    if is_side {
                        self.dirty.side_states[*state as usize] = true;
                    } else {
                        self.dirty.states[*state as usize] = true;
                    }
                    self.push(Op::Assign {
                        side: is_side,
                        target,
                        state: *state,
                        op: *op,
                        value,
                    });
                }
                St::Call(p, args, _) => {
                    let callee = &self.ev.rs.procedures[*p as usize];
                    let args: Vec<Ex> =
                        args.iter().map(|a| self.fold(&relocate(a, base))).collect();
                    let cb = self.slot(callee.slots as usize);
                    for (i, a) in args.into_iter().enumerate() {
                        self.bound[cb as usize + i] = true;
                        match a {
                            Ex::Const(v) => self.known[cb as usize + i] = Some(v),
                            a => self.push(Op::Let(cb + i as u16, a)),
                        }
                    }
                    let map = self.callee_map(*p);
                    self.procedure(*p, cb, &map, tail)?;
                }
                St::For(sides, slot, c, body, at) => {
                    // Unrolled: the units (sides) are the situation's.
                    let n = if *sides {
                        self.world.side_names.len()
                    } else {
                        self.world.units.len()
                    };
                    let slot = (slot + base) as usize;
                    self.bound[slot] = true;
                    for i in 0..n {
                        self.known[slot] = Some(if *sides {
                            Value::Side(i as u16)
                        } else {
                            Value::Unit(i as u16)
                        });
                        let body = [St::If(c.clone(), body.clone(), Vec::new(), *at)];
                        self.block(&body, base, outcome_map, true)?;
                    }
                    self.known[slot] = None;
                }
                // Noting a fact is bookkeeping for later steps of a battle;
                // the odds of one resolution do not depend on it.
                St::Note(..) => {}
            }
        }
        Ok(())
    }
}

impl Spec<'_> {
    /// Where a called procedure's outcomes land: in the caller's of the
    /// same name.
    fn callee_map(&self, p: Id) -> Vec<Option<u16>> {
        self.ev.rs.procedures[p as usize]
            .outcomes
            .iter()
            .map(|o| {
                self.outcomes
                    .iter()
                    .position(|x| x.name == o.name)
                    .map(|i| i as u16)
            })
            .collect()
    }

    /// May this statement set a wanted outcome, or refuse the procedure
    /// (a `require`, a hook)? Everything may when all outcomes are wanted.
    /// A state it changes, a fact it notes or a die it rolls cannot change
    /// a wanted outcome no later statement sets.
    fn matters(&self, s: &St, map: &[Option<u16>], depth: usize) -> bool {
        let Some(wanted) = &self.wanted else {
            return true;
        };
        match s {
            St::Outcome(i, _, _) => {
                matches!(map.get(*i as usize), Some(Some(o)) if wanted[*o as usize])
            }
            St::Require(..) => true,
            St::If(_, a, b, _) => a.iter().chain(b).any(|s| self.matters(s, map, depth)),
            St::For(_, _, _, body, _) => body.iter().any(|s| self.matters(s, map, depth)),
            St::Call(p, _, _) => {
                let callee = &self.ev.rs.procedures[*p as usize];
                let h = &callee.hooks;
                if depth > 16 || h.replace.is_some() || !h.before.is_empty() || !h.after.is_empty()
                {
                    return true;
                }
                let map = self.callee_map(*p);
                callee.body.iter().any(|s| self.matters(s, &map, depth + 1))
            }
            St::Let(..) | St::AssignState { .. } | St::AssignSideState { .. } | St::Note(..) => {
                false
            }
        }
    }

    /// A procedure whose frame starts at `base`: its `before` hooks, its
    /// body (or the hook that replaces it), its `after` hooks.
    fn procedure(&mut self, p: Id, base: u16, map: &[Option<u16>], tail: bool) -> Result<(), Diag> {
        let pd = &self.ev.rs.procedures[p as usize];
        let hooks = pd.hooks.clone();
        let params: Vec<u16> = (0..pd.params.len() as u16).collect();
        let names: Vec<u16> = pd.names.iter().map(|(_, s)| *s).collect();
        let emit = |spec: &mut Self, h: Id, slots: &[u16]| {
            let vars = slots
                .iter()
                .map(|s| spec.fold(&Ex::Local(base + s)))
                .collect();
            spec.push(Op::Hook {
                hook: h,
                proc: p,
                vars,
                outs: map.to_vec(),
            });
            // What a hook changes is not known in advance.
            spec.dirty.states.iter_mut().for_each(|d| *d = true);
            spec.dirty.side_states.iter_mut().for_each(|d| *d = true);
        };
        for &h in &hooks.before {
            emit(self, h, &params);
        }
        match hooks.replace {
            Some(h) => emit(self, h, &params),
            None => {
                let body = self.ev.rs.procedures[p as usize].body.clone();
                self.block(&body, base, map, tail || !hooks.after.is_empty())?;
            }
        }
        for &h in &hooks.after {
            emit(self, h, &names);
        }
        Ok(())
    }
}

fn require_failed(msg: &str, span: Span) -> Diag {
    Diag::new(
        "muster::requirement",
        format!("the situation breaks a rule: {msg}"),
    )
    .at(span, "this requirement does not hold")
    .help("change the situation's units or facts so that the procedure's requirements hold")
}

/// Specialise procedure `proc` to a world, with its parameters bound to `args`.
pub fn specialise(rs: &Ruleset, world: World, proc: Id, args: &[Value]) -> Result<Program, Diag> {
    specialise_wanting(rs, world, proc, args, None, None)
}

/// [`specialise`] for a caller that reads only the outcomes `wanted` (when
/// given): the work after the last statement that may set one of them is
/// left out (the other outcomes keep their defaults). `lender`: an
/// evaluator whose compiled define bodies the folding may run
/// ([`Eval::lend_define_bodies`]).
pub(crate) fn specialise_wanting<'r>(
    rs: &'r Ruleset,
    world: World,
    proc: Id,
    args: &[Value],
    wanted: Option<&[bool]>,
    lender: Option<&Eval<'r>>,
) -> Result<Program, Diag> {
    let p = &rs.procedures[proc as usize];
    let shown: Vec<String> = p
        .params
        .iter()
        .zip(args)
        .map(|((n, _), v)| match v {
            Value::Unit(u) => format!(
                "{n} = {} ({})",
                world.show(rs, *v),
                rs.unit_types[world.units[*u as usize].ty as usize].name
            ),
            _ => format!("{n} = {}", world.show(rs, *v)),
        })
        .collect();
    let context = format!("in {}({})", p.name, shown.join(", "));
    let mut spec = Spec {
        context,
        ev: Eval::new(rs),
        world,
        known: vec![None; p.slots as usize],
        dirty: Dirty {
            states: vec![false; rs.states.len()],
            side_states: vec![false; rs.side_states.len()],
        },
        ops: Vec::new(),
        spans: Vec::new(),
        at: p.span,
        outcomes: p.outcomes.clone(),
        escaping: Vec::new(),
        bound: vec![false; p.slots as usize],
        wanted: wanted.map(<[bool]>::to_vec),
    };
    for (i, a) in args.iter().enumerate() {
        spec.known[i] = Some(*a);
        spec.bound[i] = true;
    }
    let map: Vec<Option<u16>> = (0..p.outcomes.len() as u16).map(Some).collect();
    if let Some(l) = lender {
        l.lend_define_bodies(&spec.ev);
    }
    let done = spec.procedure(proc, 0, &map, false);
    if let Some(l) = lender {
        l.take_back_define_bodies(&spec.ev);
    }
    done?;
    let random = spec
        .ops
        .iter()
        // Hooks are run whole (exact odds enumerate their dice).
        .map(|o| o.value().is_some_and(Ex::is_random) || o.target().is_some_and(Ex::is_random))
        .collect();
    let frame = spec
        .known
        .iter()
        .map(|k| k.unwrap_or(Value::None))
        .collect();
    Ok(Program {
        ops: spec.ops,
        spans: spec.spans,
        random,
        frame,
        outcomes: spec.outcomes,
        world: spec.world,
        procedure: proc,
    })
}

impl Program {
    /// Place a run-time fault of op `pc` that has no place of its own at
    /// the op's statement.
    pub fn locate(&self, pc: usize, d: Diag) -> Diag {
        match self.spans.get(pc) {
            Some(at) => d.or_at(*at, crate::run::procedures::FAULT_HERE),
            None => d,
        }
    }

    /// Drop the work that no outcome in `wanted` depends on: a `let`, an
    /// outcome or a change of state whose value no later op that matters
    /// reads (by backward liveness over the ops, jumps followed). What is
    /// dropped rolls no dice, so the exact walk branches only on the rolls
    /// the wanted outcomes need. Requirements, jumps and hooks are kept (a
    /// program with a hook is left whole). The other outcomes keep their
    /// defaults.
    pub fn keep_outcomes(&mut self, rs: &Ruleset, wanted: &[bool]) {
        if self.ops.iter().any(|o| matches!(o, Op::Hook { .. })) {
            return;
        }
        // Variables: frame slots, then outcomes, then states, then side states.
        let (nf, no, ns) = (self.frame.len(), self.outcomes.len(), rs.states.len());
        let n = nf + no + ns + rs.side_states.len();
        // What each op reads, once: the frame slots, states and side states
        // (sets of variables as bits).
        let words = n.div_ceil(64);
        let bits = |flags: &[bool]| {
            let mut b = vec![0u64; words];
            for (i, on) in flags.iter().enumerate() {
                if *on {
                    b[i / 64] |= 1 << (i % 64);
                }
            }
            b
        };
        let has = |b: &[u64], i: usize| b[i / 64] >> (i % 64) & 1 == 1;
        let drop = |b: &mut [u64], i: usize| b[i / 64] &= !(1 << (i % 64));
        let reads = |e: &Ex, into: &mut Vec<bool>| vars_read(rs, e, into, nf, nf + no, ns);
        let state_var =
            |side: bool, state: Id| nf + no + if side { ns } else { 0 } + state as usize;
        let op_reads: Vec<Vec<u64>> = self
            .ops
            .iter()
            .map(|op| {
                let mut r = vec![false; n];
                for e in op.value().into_iter().chain(op.target()) {
                    reads(e, &mut r);
                }
                if let Op::Assign {
                    side, state, op, ..
                } = op
                {
                    if !matches!(op, ModOp::Set) {
                        r[state_var(*side, *state)] = true;
                    }
                }
                bits(&r)
            })
            .collect();
        let mut end = vec![false; n];
        end[nf..nf + no].copy_from_slice(wanted);
        let mut live_in: Vec<Vec<u64>> = vec![vec![0; words]; self.ops.len()];
        live_in.push(bits(&end));
        let mut useful = vec![true; self.ops.len()];
        // Branches found to choose between two ways to the same place.
        let mut idle = vec![false; self.ops.len()];
        loop {
            let mut changed = false;
            for pc in (0..self.ops.len()).rev() {
                let mut live = match &self.ops[pc] {
                    Op::Jump(t) => live_in[*t].clone(),
                    Op::JumpIfNot(_, t) => {
                        let mut l = live_in[pc + 1].clone();
                        l.iter_mut().zip(&live_in[*t]).for_each(|(a, b)| *a |= *b);
                        l
                    }
                    _ => live_in[pc + 1].clone(),
                };
                let keep = match &self.ops[pc] {
                    Op::Let(s, _) => {
                        let k = has(&live, *s as usize);
                        drop(&mut live, *s as usize);
                        k
                    }
                    Op::Outcome(i, _) => {
                        let k = has(&live, nf + *i as usize);
                        drop(&mut live, nf + *i as usize);
                        k
                    }
                    // A change to one unit's state leaves the others': it
                    // kills nothing.
                    Op::Assign { side, state, .. } => has(&live, state_var(*side, *state)),
                    Op::JumpIfNot(..) => !idle[pc],
                    Op::Require(..) | Op::Jump(_) | Op::Hook { .. } => true,
                };
                if keep {
                    live.iter_mut()
                        .zip(&op_reads[pc])
                        .for_each(|(a, b)| *a |= *b);
                }
                if keep != useful[pc] {
                    useful[pc] = keep;
                    changed = true;
                }
                if live != live_in[pc] {
                    live_in[pc] = live;
                    changed = true;
                }
            }
            if changed {
                continue;
            }
            // Where the program really goes from `pc` on: past ops that do
            // nothing, along jumps.
            let land = |mut pc: usize| {
                let mut steps = 0;
                while pc < self.ops.len() && steps <= self.ops.len() {
                    match &self.ops[pc] {
                        Op::Jump(t) => pc = *t,
                        _ if !useful[pc] => pc += 1,
                        _ => break,
                    }
                    steps += 1;
                }
                pc
            };
            let mut more = false;
            for (pc, op) in self.ops.iter().enumerate() {
                if let Op::JumpIfNot(_, t) = op {
                    if !idle[pc] && land(pc + 1) == land(*t) {
                        idle[pc] = true;
                        more = true;
                    }
                }
            }
            if !more {
                break;
            }
        }
        for (pc, u) in useful.into_iter().enumerate() {
            if !u {
                self.ops[pc] = Op::Jump(pc + 1);
                self.random[pc] = false;
            }
        }
    }
}

/// Mark in `into` what evaluating `e` reads: frame slots (below
/// `slots`), unit states (from `states`) and side states (after the `ns`
/// unit states). A call is looked into for the states it reads.
fn vars_read(rs: &Ruleset, e: &Ex, into: &mut [bool], slots: usize, states: usize, ns: usize) {
    let calls = |into: &mut [bool]| {
        let (st, sst) = crate::run::eval::states_read(rs, e);
        for (i, on) in st.into_iter().chain(sst).enumerate() {
            into[states + i] |= on;
        }
    };
    match e {
        Ex::Local(s) | Ex::Quant(_, _, s, _) if (*s as usize) < slots => into[*s as usize] = true,
        Ex::State(_, s) => into[states + *s as usize] = true,
        Ex::SideState(_, s) => into[states + ns + *s as usize] = true,
        // `of` reads its own slots, not the program's.
        Ex::Odds(o) => {
            calls(into);
            let given = o.given.iter().flat_map(|(_, a, v)| a.iter().chain([v]));
            for x in o.args.iter().chain(given) {
                vars_read(rs, x, into, slots, states, ns);
            }
            return;
        }
        Ex::Fact(f, _)
            if rs.facts[*f as usize].battle.is_none() && rs.facts[*f as usize].hook.is_none() => {}
        Ex::Fact(..) | Ex::Define(..) | Ex::Table(..) | Ex::Quantity(..) => calls(into),
        _ => {}
    }
    e.any_child(&mut |c| {
        vars_read(rs, c, into, slots, states, ns);
        false
    });
}

/// The default value of an outcome never assigned on some path of play.
pub(crate) fn default_outcome(ty: &Ty) -> Value {
    match ty {
        // A roll never made counted nothing.
        Ty::Int | Ty::Tallies(_) => Value::Int(0),
        Ty::Bool => Value::Bool(false),
        _ => Value::None,
    }
}

// ------------------------------------------------------------ running

struct Run<'a> {
    ev: Eval<'a>,
    prog: &'a Program,
}

impl Run<'_> {
    fn ctx<'b>(&'b self, state: &'b [Value], side_state: &'b [Value]) -> Ctx<'b> {
        Ctx {
            world: &self.prog.world,
            state,
            side_state,
            dirty: None,
        }
    }

    /// Change one unit or side state; `to` is (side state?, the unit or side,
    /// which state, how).
    fn assign(
        &self,
        st: &mut Rc<Vec<Value>>,
        side_st: &mut Rc<Vec<Value>>,
        to: (bool, Value, Id, ModOp),
        v: Value,
    ) -> Result<(), Diag> {
        let (is_side, target, state, op) = to;
        let (idx, store) = match (is_side, target) {
            (false, Value::Unit(u)) => (
                u as usize * self.ev.rs.states.len() + state as usize,
                Rc::make_mut(st),
            ),
            (true, Value::Side(s)) => (
                s as usize * self.ev.rs.side_states.len() + state as usize,
                Rc::make_mut(side_st),
            ),
            _ => {
                return Err(Diag::new(
                    "muster::runtime",
                    "assignment to something that is not a unit or side",
                ))
            }
        };
        store[idx] = match op {
            ModOp::Set => v,
            _ => {
                let cur = self
                    .ev
                    .num(store[idx], "the state being changed")
                    .map_err(Diag::from)?;
                let amt = self.ev.num(v, "the amount").map_err(Diag::from)?;
                Value::Int(dice::apply_op(op, cur, amt))
            }
        };
        Ok(())
    }

    /// The values of a hook's variables on branch `b`.
    fn hook_vars(&self, b: &Branch, vars: &[Ex]) -> Result<Vec<Value>, Diag> {
        let mut frame = b.frame.clone();
        vars.iter()
            .map(|e| {
                let c = self.ctx(&b.state, &b.side_state);
                self.ev
                    .eval(c, e, &mut frame, &mut NoDice)
                    .map_err(Diag::from)
            })
            .collect()
    }

    /// Run the hook at `at` once, its dice showing `faces`: the branch that
    /// continues after it, or the die it wants next, and the operations the
    /// run took.
    fn hook_once(&self, at: &HookAt, faces: &[usize], p: Prob) -> (HookRun, u64) {
        let Op::Hook {
            hook, proc, outs, ..
        } = &self.prog.ops[at.b.pc]
        else {
            unreachable!("a hook is run at its op");
        };
        let b = &at.b;
        let mut nb = Branch {
            pc: b.pc + 1,
            frame: b.frame.clone(),
            state: b.state.clone(),
            side_state: b.side_state.clone(),
            out: b.out.clone(),
            p: b.p.times(p),
        };
        let mut dice = hooks::Prefix {
            faces,
            next: 0,
            wanted: None,
        };
        let mut log = Vec::new();
        let (r, ops) = {
            let mut env = hooks::Env {
                ev: &self.ev,
                store: hooks::Store::Run {
                    world: &self.prog.world,
                    state: Rc::make_mut(&mut nb.state).as_mut_slice(),
                    side_state: Rc::make_mut(&mut nb.side_state).as_mut_slice(),
                },
                dice: &mut dice,
                outs: Some(hooks::Outs {
                    defs: &self.ev.rs.procedures[*proc as usize].outcomes,
                    map: outs,
                    values: &mut nb.out,
                }),
                log: &mut log,
            };
            hooks::call_counted(&mut env, *hook, &at.vals)
        };
        // A die wanted past the prefix: the run stopped there.
        let run = match (dice.wanted, r) {
            (Some(die), _) => HookRun::Wants(die),
            (None, Ok(_)) => HookRun::Done(nb),
            (None, Err(e)) => HookRun::Failed(e.diag()),
        };
        (run, ops)
    }

    /// The exact distribution of an expression's value.
    fn dist(&self, c: Ctx, e: &Ex, frame: &mut [Value]) -> Result<Dist, Diag> {
        if !e.is_random() {
            let v = self.ev.eval(c, e, frame, &mut NoDice).map_err(Diag::from)?;
            return Ok(vec![(v, Prob::ONE)]);
        }
        let mut out: Dist = Vec::new();
        match e {
            Ex::Dice {
                count,
                die,
                mode,
                reroll,
                span,
            } => {
                let counts = self.dist(c, count, frame)?;
                let targets = match mode {
                    DiceMode::Scoring(t) => self.dist(c, t, frame)?,
                    _ => vec![(Value::None, Prob::ONE)],
                };
                for (n, pn) in &counts {
                    let n = self.ev.num(*n, "the number of dice").map_err(Diag::from)?;
                    if let Some(m) = dice::pool_too_big(n) {
                        return Err(Diag::from(crate::run::eval::pool_fault(m, *span)));
                    }
                    for (t, pt) in &targets {
                        let reading = match mode {
                            DiceMode::Sum => dice::Reading::Sum,
                            DiceMode::Scoring(_) => dice::Reading::Scoring(
                                self.ev.num(*t, "the score needed").map_err(Diag::from)?,
                            ),
                            DiceMode::Counting(m) => dice::Reading::Counting(m.clone()),
                        };
                        for (v, p) in
                            dice::pool_dist(&self.ev.rs.dice[*die as usize], &reading, *reroll, n)
                        {
                            add_mass(&mut out, Value::Int(v), p.times(pn).times(pt));
                        }
                    }
                }
            }
            Ex::Roll(r) => return self.roll_dist(c, r, frame),
            Ex::Tally(x, fx, k) => {
                for (v, p) in self.dist(c, x, frame)? {
                    let t = self.ev.tally_of(v, *fx, *k).map_err(Diag::from)?;
                    add_mass(&mut out, t, p);
                }
            }
            Ex::Bin(op, a, b) => {
                let da = self.dist(c, a, frame)?;
                let db = self.dist(c, b, frame)?;
                for (x, p) in &da {
                    for (y, q) in &db {
                        let v = match op {
                            Bin::And => Value::Bool(x.as_bool() && y.as_bool()),
                            Bin::Or => Value::Bool(x.as_bool() || y.as_bool()),
                            _ => binary(*op, *x, *y).map_err(Diag::from)?,
                        };
                        add_mass(&mut out, v, p.times(q));
                    }
                }
            }
            Ex::Builtin(crate::compile::ir::Builtin::RollOff, args) => {
                // Re-rolling ties: P(first wins) = P(a > b) / (1 - P(a = b)).
                let da = self.dist(c, &args[0], frame)?;
                let db = self.dist(c, &args[1], frame)?;
                let (mut first, mut second) = (Prob::ZERO, Prob::ZERO);
                for (x, p) in &da {
                    for (y, q) in &db {
                        match x.num_cmp(*y) {
                            Some(std::cmp::Ordering::Greater) => first = first.plus(p.times(q)),
                            Some(std::cmp::Ordering::Less) => second = second.plus(p.times(q)),
                            _ => {}
                        }
                    }
                }
                let decided = first.plus(&second);
                if decided.is_zero() {
                    return Err(Diag::new(
                        "muster::runtime",
                        "a roll-off can never be decided: every roll ties",
                    )
                    .help(
                        "each side of `roll_off` must be able to come out higher than the other",
                    ));
                }
                add_mass(&mut out, Value::Int(1), first.divide(&decided));
                add_mass(&mut out, Value::Int(2), second.divide(decided));
            }
            Ex::Not(x) => {
                for (v, p) in self.dist(c, x, frame)? {
                    add_mass(&mut out, Value::Bool(!v.as_bool()), p);
                }
            }
            Ex::Neg(x) => {
                for (v, p) in self.dist(c, x, frame)? {
                    let n = binary(Bin::Sub, Value::Int(0), v).map_err(Diag::from)?;
                    add_mass(&mut out, n, p);
                }
            }
            Ex::If(cond, a, b) => {
                for (v, p) in self.dist(c, cond, frame)? {
                    let branch = if v.as_bool() { a } else { b };
                    for (x, q) in self.dist(c, branch, frame)? {
                        add_mass(&mut out, x, p.times(q));
                    }
                }
            }
            other => {
                // A call or test whose arguments roll: evaluate each combination.
                let mut args: Vec<(usize, Dist)> = Vec::new();
                let children: Vec<&Ex> = match other {
                    Ex::Fact(_, a)
                    | Ex::Define(_, a)
                    | Ex::Table(_, a)
                    | Ex::Quantity(_, a)
                    | Ex::Builtin(_, a) => a.iter().collect(),
                    Ex::IsSym(x, _)
                    | Ex::IsType(x, _)
                    | Ex::IsQuality(x, _)
                    | Ex::Stat(x, _)
                    | Ex::State(x, _)
                    | Ex::SideState(x, _)
                    | Ex::SideOf(x) => vec![x],
                    _ => {
                        return Err(Diag::new(
                            "muster::exact",
                            "this roll cannot be computed exactly",
                        )
                        .help("run the situation with `--samples N` to estimate it instead"))
                    }
                };
                for (i, ch) in children.iter().enumerate() {
                    args.push((i, self.dist(c, ch, frame)?));
                }
                let mut idx = vec![0usize; args.len()];
                loop {
                    let mut p = Prob::ONE;
                    let vals: Vec<Value> = args
                        .iter()
                        .zip(&idx)
                        .map(|((_, d), i)| {
                            p = p.times(&d[*i].1);
                            d[*i].0
                        })
                        .collect();
                    let mut k = 0;
                    let fixed = map(other, &mut |x| {
                        if std::ptr::eq(x, other) {
                            return None;
                        }
                        if k < vals.len() && children.iter().any(|ch| std::ptr::eq(*ch, x)) {
                            k += 1;
                            return Some(Ex::Const(vals[k - 1]));
                        }
                        None
                    });
                    let v = self
                        .ev
                        .eval(c, &fixed, frame, &mut NoDice)
                        .map_err(Diag::from)?;
                    add_mass(&mut out, v, p);
                    // Next combination.
                    let mut carry = true;
                    for (j, (_, d)) in args.iter().enumerate().rev() {
                        if !carry {
                            break;
                        }
                        idx[j] += 1;
                        if idx[j] < d.len() {
                            carry = false;
                        } else {
                            idx[j] = 0;
                        }
                    }
                    if carry {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }
}

impl Run<'_> {
    /// The exact distribution of a roll: for each value its counts, pools
    /// and arguments may take (one, once specialised), the convolution of
    /// its dice read face by face: the joint distribution of its tallies.
    fn roll_dist(&self, c: Ctx, r: &Roll, frame: &mut [Value]) -> Result<Dist, Diag> {
        let mut children: Vec<&Ex> = Vec::new();
        for p in &r.parts {
            children.push(&p.count);
            if let PartDice::Pool(e) = &p.dice {
                children.push(e);
            }
        }
        children.extend(&r.args);
        let dists = children
            .iter()
            .map(|e| self.dist(c, e, frame))
            .collect::<Result<Vec<Dist>, Diag>>()?;
        let mut out: Dist = Vec::new();
        let mut idx = vec![0usize; dists.len()];
        loop {
            let mut p = Prob::ONE;
            let vals: Vec<Value> = dists
                .iter()
                .zip(&idx)
                .map(|(d, i)| {
                    p = p.times(&d[*i].1);
                    d[*i].0
                })
                .collect();
            let mut next = vals.iter();
            let mut parts = crate::run::rolling::RollDice::new();
            for part in &r.parts {
                let n = self
                    .ev
                    .num(*next.next().expect("a count"), "the number of dice")
                    .map_err(Diag::from)?;
                match part.dice {
                    PartDice::Die(d) => parts.push((d, n)),
                    PartDice::Pool(_) => {
                        let v = *next.next().expect("a pool");
                        self.ev
                            .add_pool(v, n, r.span, &mut parts)
                            .map_err(Diag::from)?;
                    }
                }
            }
            let args: Vec<Value> = next.copied().collect();
            let readings = self
                .ev
                .readings(c, r.effects, &parts, &args)
                .map_err(Diag::from)?;
            self.ev
                .check_roll(r.effects, &parts, &readings)
                .map_err(Diag::from)?;
            let rolled: Vec<(&DieDef, &[i64], i64)> = parts
                .iter()
                .zip(&readings)
                .map(|((d, n), rd)| (&self.ev.rs.dice[*d as usize], rd.as_ref(), *n))
                .collect();
            for (v, q) in dice::parts_dist(&rolled) {
                add_mass(&mut out, Value::Int(v), q.times(&p));
            }
            // The next combination of the children's values.
            let mut carry = true;
            for (j, d) in dists.iter().enumerate().rev() {
                idx[j] += 1;
                if idx[j] < d.len() {
                    carry = false;
                    break;
                }
                idx[j] = 0;
            }
            if carry {
                return Ok(out);
            }
        }
    }
}

/// How many branches an exact computation may explore before it gives up
/// (the caller then samples instead). A run of a hook counts as one.
pub const MAX_BRANCHES: usize = 2_000_000;
/// The most dice one run of a hook may roll in an exact computation (which
/// tries every face of each); past it the caller samples instead. A hook
/// that rolls until some face comes up would otherwise never end.
pub const MAX_EXACT_HOOK_DICE: usize = 32;
/// The most operations the hooks of one exact computation may take in all,
/// over every run of every hook and every hook those run (500 hook calls
/// at their limit, [`hooks::MAX_OPERATIONS`]; a few seconds).
pub const MAX_EXACT_OPERATIONS: u64 = 500 * hooks::MAX_OPERATIONS;

/// Why exact odds were not computed.
#[derive(Debug)]
pub enum ExactError {
    /// A limit that sampling does not have was passed: the caller may
    /// sample instead.
    TooMany(Limit),
    Fault(Diag),
}

/// A limit of exact odds that sampling does not have.
#[derive(Debug)]
pub enum Limit {
    /// More than [`MAX_BRANCHES`] branches.
    Branches,
    /// A run of this hook rolled more than [`MAX_EXACT_HOOK_DICE`] dice.
    HookDice(String),
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Limit::Branches => write!(
                f,
                "more than {MAX_BRANCHES} branches: too many to compute exactly"
            ),
            Limit::HookDice(h) => write!(
                f,
                "hook `{h}` rolls more than {MAX_EXACT_HOOK_DICE} dice in one run: too many to enumerate exactly"
            ),
        }
    }
}

/// The exact computation's stop when its hooks pass [`MAX_EXACT_OPERATIONS`]
/// (sampling would be as slow: each sample runs them too).
fn too_much_hook_work(rs: &Ruleset, hook: Id) -> Diag {
    let h = &rs.hooks[hook as usize];
    Diag::new(
        "muster::exact",
        format!(
            "exact odds stopped: the hooks ran past their limit of {MAX_EXACT_OPERATIONS} operations in all; hook `{}` runs once for every sequence of faces its dice can show",
            h.name
        ),
    )
    .at(h.span(), format!("hook `{}`", h.name))
    .help("sample the odds instead with `--samples N`, or have the hook roll fewer dice before its work")
}

struct Branch {
    pc: usize,
    frame: Vec<Value>,
    /// The unit and side state, shared by the branches a roll splits into
    /// until one of them changes it (most never do: copying the whole state
    /// per face was most of a small procedure's exact walk).
    state: Rc<Vec<Value>>,
    side_state: Rc<Vec<Value>>,
    out: Vec<Value>,
    p: Prob,
}

/// A branch that reached a hook, with the values of the hook's variables:
/// every run of the hook starts from it.
struct HookAt {
    b: Branch,
    vals: Vec<Value>,
}

/// How one run of a hook ended.
enum HookRun {
    /// The branch that continues after it.
    Done(Branch),
    /// It wants one more die than its faces gave.
    Wants(DieDef),
    Failed(Diag),
}

/// What an exact computation has still to explore, depth first: a branch
/// to run on, or one run of a hook with its dice showing `faces` (of
/// probability `p`). A hook's runs wait here one by one, so memory holds
/// only the runs of the current path, not all of them.
enum Todo {
    Branch(Branch),
    Hook {
        at: Rc<HookAt>,
        faces: Vec<usize>,
        p: Prob,
    },
}

/// Outcome distributions being summed, each value found by hashing (an
/// outcome a hook sets may take as many values as there are branches).
struct Acc {
    dists: Vec<Dist>,
    index: Vec<std::collections::HashMap<Value, usize>>,
}

impl Acc {
    fn new(n: usize) -> Acc {
        Acc {
            dists: vec![Vec::new(); n],
            index: vec![Default::default(); n],
        }
    }
    /// As [`add_mass`] to outcome `i`.
    fn add(&mut self, i: usize, v: Value, p: Prob) {
        if p.is_zero() {
            return;
        }
        let d = &mut self.dists[i];
        match self.index[i].get(&v) {
            Some(&k) => d[k].1 = d[k].1.plus(p),
            None => {
                self.index[i].insert(v, d.len());
                d.push((v, p));
            }
        }
    }
}

/// Exact odds: branch over the exact distribution of every roll.
pub fn exact(rs: &Ruleset, prog: &Program) -> Result<Odds, ExactError> {
    let mut acc = Acc::new(prog.outcomes.len());
    exact_leaves(rs, prog, &mut |out, p| {
        for (i, v) in out.iter().enumerate() {
            acc.add(i, *v, p.clone());
        }
        true
    })?;
    finish(rs, prog, acc.dists, Method::Exact).map_err(ExactError::Fault)
}

/// Every way the program can end, with its probability: `leaf` is given
/// each ending's outcomes (in the program's order) and its probability,
/// and may stop the walk by answering false. The endings of one outcome
/// vector may come more than once (by different paths).
pub fn exact_leaves(
    rs: &Ruleset,
    prog: &Program,
    leaf: &mut dyn FnMut(&[Value], &Prob) -> bool,
) -> Result<(), ExactError> {
    let run = Run {
        ev: Eval::new(rs),
        prog,
    };
    let mut stack = vec![Todo::Branch(Branch {
        pc: 0,
        frame: prog.frame.clone(),
        state: Rc::new(prog.world.state.clone()),
        side_state: Rc::new(prog.world.side_state.clone()),
        out: prog
            .outcomes
            .iter()
            .map(|o| default_outcome(&o.ty))
            .collect(),
        p: Prob::ONE,
    })];
    let mut branches = 0usize;
    let mut operations = 0u64;
    // The op being run: a fault with no place of its own is placed at its
    // statement.
    let now = std::cell::Cell::new(0usize);
    let f = |d: Diag| ExactError::Fault(prog.locate(now.get(), d));
    while let Some(todo) = stack.pop() {
        branches += 1;
        if branches > MAX_BRANCHES {
            return Err(ExactError::TooMany(Limit::Branches));
        }
        let mut b = match todo {
            Todo::Branch(b) => b,
            Todo::Hook { at, faces, p } => {
                let (r, ops) = run.hook_once(&at, &faces, p.clone());
                operations += ops;
                now.set(at.b.pc);
                let Op::Hook { hook, .. } = &prog.ops[at.b.pc] else {
                    unreachable!("a hook is run at its op");
                };
                if operations > MAX_EXACT_OPERATIONS {
                    return Err(f(too_much_hook_work(rs, *hook)));
                }
                match r {
                    HookRun::Done(nb) => stack.push(Todo::Branch(nb)),
                    // Try each face of the die it wants.
                    HookRun::Wants(_) if faces.len() >= MAX_EXACT_HOOK_DICE => {
                        let name = rs.hooks[*hook as usize].name.clone();
                        return Err(ExactError::TooMany(Limit::HookDice(name)));
                    }
                    HookRun::Wants(die) => {
                        let n = die.faces.len() as u128;
                        for face in 0..die.faces.len() {
                            let mut longer = faces.clone();
                            longer.push(face);
                            stack.push(Todo::Hook {
                                at: at.clone(),
                                faces: longer,
                                p: p.times(Prob::ratio(1, n)),
                            });
                        }
                    }
                    HookRun::Failed(d) => return Err(f(d)),
                }
                continue;
            }
        };
        loop {
            if b.pc >= prog.ops.len() {
                if !b.p.is_zero() && !leaf(&b.out, &b.p) {
                    return Ok(());
                }
                break;
            }
            let op = &prog.ops[b.pc];
            now.set(b.pc);
            if let Op::Hook { vars, .. } = op {
                let vals = run.hook_vars(&b, vars).map_err(f)?;
                stack.push(Todo::Hook {
                    at: Rc::new(HookAt { b, vals }),
                    faces: Vec::new(),
                    p: Prob::ONE,
                });
                break;
            }
            if prog.random[b.pc] {
                // Branch: one continuation per value of the roll.
                let (e, assign_target) =
                    (op.value().expect("a jump or hook never rolls"), op.target());
                if assign_target.is_some_and(|t| t.is_random()) {
                    return Err(f(Diag::new(
                        "muster::exact",
                        "a roll decides which unit a change applies to",
                    )
                    .help("run the situation with `--samples N` instead")));
                }
                let d = {
                    let c = run.ctx(&b.state, &b.side_state);
                    run.dist(c, e, &mut b.frame).map_err(f)?
                };
                for (v, p) in d {
                    let mut nb = Branch {
                        pc: b.pc,
                        frame: b.frame.clone(),
                        state: b.state.clone(),
                        side_state: b.side_state.clone(),
                        out: b.out.clone(),
                        p: b.p.times(p),
                    };
                    match op {
                        Op::Let(s, _) => {
                            nb.frame[*s as usize] = v;
                            nb.pc += 1;
                        }
                        Op::Outcome(i, _) => {
                            nb.out[*i as usize] = v;
                            nb.pc += 1;
                        }
                        Op::Require(_, msg, span) => {
                            if !v.as_bool() {
                                return Err(f(require_failed(msg, *span)));
                            }
                            nb.pc += 1;
                        }
                        Op::JumpIfNot(_, t) => nb.pc = if v.as_bool() { nb.pc + 1 } else { *t },
                        Op::Assign {
                            side,
                            target,
                            state,
                            op,
                            ..
                        } => {
                            let t = {
                                let c = run.ctx(&nb.state, &nb.side_state);
                                run.ev
                                    .eval(c, target, &mut nb.frame, &mut NoDice)
                                    .map_err(|e| f(Diag::from(e)))?
                            };
                            run.assign(
                                &mut nb.state,
                                &mut nb.side_state,
                                (*side, t, *state, *op),
                                v,
                            )
                            .map_err(f)?;
                            nb.pc += 1;
                        }
                        Op::Jump(_) | Op::Hook { .. } => unreachable!(),
                    }
                    stack.push(Todo::Branch(nb));
                }
                break;
            }
            // A deterministic op: run it in place.
            let next = b.pc + 1;
            match op {
                Op::Jump(t) => {
                    b.pc = *t;
                    continue;
                }
                _ => {
                    let c = run.ctx(&b.state, &b.side_state);
                    let mut nd = NoDice;
                    match op {
                        Op::Let(s, e) => {
                            b.frame[*s as usize] = run
                                .ev
                                .eval(c, e, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?
                        }
                        Op::Outcome(i, e) => {
                            b.out[*i as usize] = run
                                .ev
                                .eval(c, e, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?
                        }
                        Op::Require(e, msg, span) => {
                            if !run
                                .ev
                                .eval(c, e, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?
                                .as_bool()
                            {
                                return Err(f(require_failed(msg, *span)));
                            }
                        }
                        Op::JumpIfNot(e, t) => {
                            if !run
                                .ev
                                .eval(c, e, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?
                                .as_bool()
                            {
                                b.pc = *t;
                                continue;
                            }
                        }
                        Op::Assign {
                            side,
                            target,
                            state,
                            op,
                            value,
                        } => {
                            let t = run
                                .ev
                                .eval(c, target, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?;
                            let v = run
                                .ev
                                .eval(c, value, &mut b.frame, &mut nd)
                                .map_err(|e| f(Diag::from(e)))?;
                            run.assign(&mut b.state, &mut b.side_state, (*side, t, *state, *op), v)
                                .map_err(f)?;
                        }
                        Op::Jump(_) | Op::Hook { .. } => unreachable!(),
                    }
                    b.pc = next;
                }
            }
        }
    }
    Ok(())
}

fn finish(_rs: &Ruleset, prog: &Program, acc: Vec<Dist>, method: Method) -> Result<Odds, Diag> {
    let outcomes = prog
        .outcomes
        .iter()
        .zip(acc)
        .map(|(o, mut d)| {
            d.sort_by_key(|(v, _)| *v);
            OutcomeOdds {
                name: o.name.clone(),
                ty: o.ty.clone(),
                values: d,
            }
        })
        .collect();
    Ok(Odds { method, outcomes })
}

/// How often each value of each outcome came up.
pub type Tally = Vec<Vec<(Value, u64)>>;

/// Samples per chunk: each chunk has its own generator stream.
pub const CHUNK: u64 = 4096;

/// Sampled odds over `samples` runs. The same seed and sample count give the
/// same answer whatever the number of threads.
pub fn sampled(
    rs: &Ruleset,
    prog: &Program,
    samples: u64,
    seed: u64,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Odds, Diag> {
    let chunks = samples.div_ceil(CHUNK);
    let code = compile_for_sampling(rs, prog);
    // The first chunk (in order) that fails is the one reported; chunks
    // after a failed one need not run (a hook that fails in every sample
    // would otherwise run to its limit once per chunk).
    let first_failed = std::sync::atomic::AtomicU64::new(u64::MAX);
    let tallies: Vec<Result<Tally, Diag>> = (0..chunks)
        .into_par_iter()
        .map(|ci| {
            if ci > first_failed.load(std::sync::atomic::Ordering::Relaxed) {
                // Never read: an earlier chunk's error comes first.
                return Ok(Tally::new());
            }
            let n = CHUNK.min(samples - ci * CHUNK);
            let mut rng = Rng::for_chunk(seed, ci);
            let t = tally_compiled(rs, prog, &code, n, &mut rng);
            if t.is_err() {
                first_failed.fetch_min(ci, std::sync::atomic::Ordering::Relaxed);
            }
            if let Some(p) = progress {
                p(n);
            }
            t
        })
        .collect();
    let mut acc: Vec<Vec<(Value, u64)>> = vec![Vec::new(); prog.outcomes.len()];
    for t in tallies {
        for (a, t) in acc.iter_mut().zip(t?) {
            for (v, c) in t {
                match a.iter_mut().find(|(x, _)| *x == v) {
                    Some((_, k)) => *k += c,
                    None => a.push((v, c)),
                }
            }
        }
    }
    let dists = acc
        .into_iter()
        .map(|a| {
            a.into_iter()
                .map(|(v, c)| (v, Prob::Float(c as f64 / samples as f64)))
                .collect()
        })
        .collect();
    finish(rs, prog, dists, Method::Sampled { samples, seed })
}

/// Run the program `n` times on one generator stream, counting outcomes.
pub fn tally(rs: &Ruleset, prog: &Program, n: u64, rng: &mut Rng) -> Result<Tally, Diag> {
    tally_compiled(rs, prog, &compile_for_sampling(rs, prog), n, rng)
}

/// Add one run's outcomes to the counts. `last` remembers the slot each
/// outcome's value last landed in: most runs repeat it.
pub(crate) fn count_outcomes<V: PartialEq + Copy>(
    counts: &mut [Vec<(V, u64)>],
    last: &mut [usize],
    out: &[V],
) {
    for ((c, v), l) in counts.iter_mut().zip(out).zip(last.iter_mut()) {
        if let Some((x, k)) = c.get_mut(*l) {
            if x == v {
                *k += 1;
                continue;
            }
        }
        match c.iter().position(|(x, _)| x == v) {
            Some(i) => {
                c[i].1 += 1;
                *l = i;
            }
            None => {
                c.push((*v, 1));
                *l = c.len() - 1;
            }
        }
    }
}

/// The bytecode a sampled run uses: the typed tier when the program fits it.
pub enum Compiled {
    Typed(Box<crate::run::bytecode::typed::Typed>),
    General(crate::run::bytecode::Code),
}

/// Compile a specialised program for sampling.
pub fn compile_for_sampling(rs: &Ruleset, prog: &Program) -> Compiled {
    match crate::run::bytecode::typed::compile(rs, prog) {
        Some(t) => Compiled::Typed(Box::new(t)),
        None => Compiled::General(crate::run::bytecode::compile(rs, prog)),
    }
}

/// [`tally`] with the program already compiled.
pub fn tally_compiled(
    rs: &Ruleset,
    prog: &Program,
    code: &Compiled,
    n: u64,
    rng: &mut Rng,
) -> Result<Tally, Diag> {
    match code {
        Compiled::General(c) => tally_code(rs, prog, c, n, rng),
        Compiled::Typed(t) => {
            let counts = t.tally(rs, n, rng)?;
            Ok(counts
                .into_iter()
                .enumerate()
                .map(|(i, c)| c.into_iter().map(|(v, k)| (t.value(i, v), k)).collect())
                .collect())
        }
    }
}

/// [`tally`] with the program already compiled to general bytecode.
pub fn tally_code(
    rs: &Ruleset,
    prog: &Program,
    code: &crate::run::bytecode::Code,
    n: u64,
    rng: &mut Rng,
) -> Result<Tally, Diag> {
    let mut regs = code.registers();
    let mut st = prog.world.state.clone();
    let mut sst = prog.world.side_state.clone();
    let mut out = vec![Value::None; prog.outcomes.len()];
    let mut counts: Tally = vec![Vec::new(); prog.outcomes.len()];
    let mut last = vec![0usize; prog.outcomes.len()];
    for _ in 0..n {
        st.copy_from_slice(&prog.world.state);
        sst.copy_from_slice(&prog.world.side_state);
        code.run(rs, prog, &mut regs, &mut st, &mut sst, rng, &mut out)?;
        count_outcomes(&mut counts, &mut last, &out);
    }
    Ok(counts)
}

/// Run once with scripted dice (a book's worked example).
pub fn scripted(rs: &Ruleset, prog: &Program, rolls: &[i64]) -> Result<Odds, Diag> {
    let code = crate::run::bytecode::compile(rs, prog);
    let mut regs = code.registers();
    let mut st = prog.world.state.clone();
    let mut sst = prog.world.side_state.clone();
    let mut out = vec![Value::None; prog.outcomes.len()];
    let mut src = Scripted {
        rolls: rolls.to_vec(),
        next: 0,
    };
    code.run(rs, prog, &mut regs, &mut st, &mut sst, &mut src, &mut out)?;
    if src.next < rolls.len() {
        return Err(Diag::new(
            "muster::script",
            format!(
                "the procedure rolled {} dice but the situation scripts {}",
                src.next,
                rolls.len()
            ),
        )
        .help("give exactly one scripted roll per die rolled"));
    }
    let acc = out.iter().map(|v| vec![(*v, Prob::ONE)]).collect();
    finish(rs, prog, acc, Method::Scripted)
}
