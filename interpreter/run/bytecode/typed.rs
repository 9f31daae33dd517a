//! The fast tier: a specialised procedure on plain `i64` registers. The
//! compiler has already checked every type, so a bool is 0 or 1, a symbol,
//! unit or side is its index, and no instruction inspects a tag. Programs
//! that need more (division into fractions, `none`, a fact whose arguments
//! depend on the dice) are refused here and run on the general tier.

use crate::base::rng::Rng;
use crate::base::value::Value;
use crate::compile::ir::{Bin, Builtin, DiceMode, Ex, Id, ModOp, Ruleset, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{Reroll, Span};
use crate::run::dice::{self, Reading};
use crate::run::odds::{Op, Program};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

pub(crate) type Reg = u32;

/// One instruction of the fast tier.
#[derive(Clone, Debug)]
pub(crate) enum T {
    Move {
        dst: Reg,
        src: Reg,
    },
    Load {
        side: bool,
        dst: Reg,
        idx: u32,
    },
    Store {
        side: bool,
        idx: u32,
        op: ModOp,
        src: Reg,
    },
    /// `n` dice of `sides` faces; a hit when the face index is `min_face` or more.
    PoolFixed {
        dst: Reg,
        n: u32,
        sides: u64,
        min_face: u64,
    },
    /// A pool the situation did not fix: `pools[pool]` says how to read it.
    Pool {
        dst: Reg,
        n: Reg,
        pool: u32,
    },
    Bin {
        op: Bin,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Not {
        dst: Reg,
        a: Reg,
    },
    Neg {
        dst: Reg,
        a: Reg,
    },
    Jump {
        to: u32,
    },
    JumpIfZero {
        cond: Reg,
        to: u32,
    },
    JumpIfNonZero {
        cond: Reg,
        to: u32,
    },
    JumpUnlessCmp {
        op: Bin,
        a: Reg,
        b: Reg,
        to: u32,
    },
    Outcome {
        idx: u16,
        src: Reg,
    },
    Require {
        cond: Reg,
        msg: u32,
    },
    /// A roll read by an `effects` block: `rolls[roll]` says its dice.
    Roll {
        dst: Reg,
        roll: u32,
    },
    /// One tally of a roll: `(src >> shift) & MAX_TALLY`.
    Tally {
        dst: Reg,
        src: Reg,
        shift: u32,
    },
    /// A builtin of formations or of the `for file` loop
    /// ([`crate::run::eval::formation_call`]): `calls[call]` names it; `args`
    /// holds its arguments' registers (those past its arity unread).
    Formation {
        dst: Reg,
        call: u32,
        args: [Reg; 4],
    },
}

/// A roll's dice, their counts and how their faces read (fixed when the
/// program is compiled: the `effects` block's arguments are constants).
#[derive(Clone, Debug)]
pub(crate) struct TRoll {
    pub dice: Vec<Id>,
    /// The register holding each part's count.
    pub counts: Vec<Reg>,
    /// Each part's count, when every one is a constant (and the roll is
    /// known to be within its limits).
    pub fixed: Option<Vec<i64>>,
    pub readings: Vec<Box<[i64]>>,
    pub effects: Id,
    /// The most one face of the roll counts of any one tally.
    pub most: i64,
}

/// How a general pool reads its dice; `target` holds the score for a
/// scoring pool.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub die: Id,
    pub reading: Reading,
    pub target: Option<Reg>,
    pub reroll: Option<Reroll>,
    /// Where the rule rolls it, for a pool that cannot be rolled.
    pub span: Span,
}

/// How an outcome's `i64` reads back as a value.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Int,
    Bool,
    Sym,
    Pool,
    /// A roll read by an `effects` block of this many tallies (each in
    /// its 15-bit lane of the number).
    Tallies(u8),
}

/// A program on `i64` registers.
#[derive(Debug)]
pub struct Typed {
    rs_dice: Vec<crate::compile::ir::DieDef>,
    pools: Vec<Pool>,
    rolls: Vec<TRoll>,
    /// The builtins `T::Formation` calls.
    calls: Vec<Builtin>,
    native: Option<super::native::Native>,
    code: Vec<T>,
    init: Vec<i64>,
    messages: Vec<(String, Span)>,
    defaults: Vec<i64>,
    kinds: Vec<Kind>,
    state: Vec<i64>,
    side_state: Vec<i64>,
    /// The pool and the number of dice of the last pool machine code could
    /// not roll (written only then), for its diagnostic.
    failed_pool: (AtomicU64, AtomicI64),
}

/// A pool of `n` dice (rolled with the generator, so failing only for its
/// size: below none or over the most), at the rule that rolls it.
fn pool_error(p: &Pool, n: i64) -> Diag {
    Diag::new(
        "muster::runtime",
        dice::pool_too_big(n).unwrap_or_else(|| format!("a pool of {n} dice could not be rolled")),
    )
    .at(p.span, "this pool")
    .help("check the number of dice the rule computes")
}

/// A value as an `i64`, if it has one.
fn enc(v: Value) -> Option<i64> {
    Some(match v {
        Value::Int(i) => i,
        Value::Bool(b) => b as i64,
        Value::Sym(s) => s as i64,
        Value::Unit(u) => u as i64,
        Value::Side(s) => s as i64,
        Value::Pool(p) => p as i64,
        Value::None | Value::Frac(..) => return None,
    })
}

struct B<'a> {
    rs: &'a Ruleset,
    world: &'a crate::run::world::World,
    pools: Vec<Pool>,
    rolls: Vec<TRoll>,
    calls: Vec<Builtin>,
    code: Vec<T>,
    init: Vec<i64>,
    consts: Vec<(i64, Reg)>,
}

impl B<'_> {
    fn temp(&mut self) -> Reg {
        self.init.push(0);
        (self.init.len() - 1) as Reg
    }
    fn konst(&mut self, v: i64) -> Reg {
        if let Some((_, r)) = self.consts.iter().find(|(c, _)| *c == v) {
            return *r;
        }
        self.init.push(v);
        let r = (self.init.len() - 1) as Reg;
        self.consts.push((v, r));
        r
    }
    fn index(&self, side: bool, t: &Ex, s: Id) -> Option<u32> {
        super::state_index(self.rs, side, t, s)
    }

    /// Compile `e` into a register; `None` when the fast tier cannot run it.
    fn expr(&mut self, e: &Ex, dst: Option<Reg>) -> Option<Reg> {
        let out = |b: &mut Self| dst.unwrap_or_else(|| b.temp());
        Some(match e {
            Ex::Const(v) => {
                let c = self.konst(enc(*v)?);
                match dst {
                    Some(d) => {
                        self.code.push(T::Move { dst: d, src: c });
                        d
                    }
                    None => c,
                }
            }
            Ex::Local(s) => match dst {
                Some(d) if d != *s as Reg => {
                    self.code.push(T::Move {
                        dst: d,
                        src: *s as Reg,
                    });
                    d
                }
                _ => *s as Reg,
            },
            Ex::State(t, s) | Ex::SideState(t, s) => {
                let side = matches!(e, Ex::SideState(..));
                let idx = self.index(side, t, *s)?;
                let d = out(self);
                self.code.push(T::Load { side, dst: d, idx });
                d
            }
            Ex::Bin(Bin::Div, ..) => return None,
            Ex::Bin(op @ (Bin::And | Bin::Or), a, b) => {
                let d = out(self);
                self.expr(a, Some(d))?;
                let j = self.code.len();
                self.code.push(if *op == Bin::And {
                    T::JumpIfZero { cond: d, to: 0 }
                } else {
                    T::JumpIfNonZero { cond: d, to: 0 }
                });
                self.expr(b, Some(d))?;
                let end = self.code.len() as u32;
                if let T::JumpIfZero { to, .. } | T::JumpIfNonZero { to, .. } = &mut self.code[j] {
                    *to = end;
                }
                d
            }
            Ex::Bin(op, a, b) => {
                let ra = self.expr(a, None)?;
                let rb = self.expr(b, None)?;
                let d = out(self);
                self.code.push(T::Bin {
                    op: *op,
                    dst: d,
                    a: ra,
                    b: rb,
                });
                d
            }
            Ex::Not(a) => {
                let ra = self.expr(a, None)?;
                let d = out(self);
                self.code.push(T::Not { dst: d, a: ra });
                d
            }
            Ex::Neg(a) => {
                let ra = self.expr(a, None)?;
                let d = out(self);
                self.code.push(T::Neg { dst: d, a: ra });
                d
            }
            Ex::If(c, a, b) => {
                let d = out(self);
                let rc = self.expr(c, None)?;
                let j = self.code.len();
                self.code.push(T::JumpIfZero { cond: rc, to: 0 });
                self.expr(a, Some(d))?;
                let j2 = self.code.len();
                self.code.push(T::Jump { to: 0 });
                let else_at = self.code.len() as u32;
                self.expr(b, Some(d))?;
                let end = self.code.len() as u32;
                if let T::JumpIfZero { to, .. } = &mut self.code[j] {
                    *to = else_at;
                }
                if let T::Jump { to } = &mut self.code[j2] {
                    *to = end;
                }
                d
            }
            Ex::Dice {
                count,
                die,
                mode,
                reroll,
                span,
            } => {
                if let Some((n, die, min_face)) = super::fixed_pool(self.rs, e) {
                    let d = out(self);
                    let sides = self.rs.dice[die as usize].faces.len() as u64;
                    self.code.push(T::PoolFixed {
                        dst: d,
                        n,
                        sides,
                        min_face: min_face as u64,
                    });
                    return Some(d);
                }
                let n = self.expr(count, None)?;
                let (reading, target) = match mode {
                    DiceMode::Sum => (Reading::Sum, None),
                    DiceMode::Scoring(t) => (Reading::Scoring(0), Some(self.expr(t, None)?)),
                    DiceMode::Counting(m) => (Reading::Counting(m.clone()), None),
                };
                self.pools.push(Pool {
                    die: *die,
                    reading,
                    target,
                    reroll: *reroll,
                    span: *span,
                });
                let pool = (self.pools.len() - 1) as u32;
                let d = out(self);
                self.code.push(T::Pool { dst: d, n, pool });
                d
            }
            Ex::Roll(r) => {
                let roll = self.roll(r)?;
                let d = out(self);
                self.code.push(T::Roll { dst: d, roll });
                d
            }
            Ex::Tally(x, fx, k) => {
                let src = self.expr(x, None)?;
                let shift = self.rs.effects[*fx as usize].shift(*k as usize);
                let d = out(self);
                self.code.push(T::Tally { dst: d, src, shift });
                d
            }
            Ex::Builtin(f @ (Builtin::Min | Builtin::Max), args) if args.len() == 2 => {
                self.min_max(*f == Builtin::Min, &args[0], &args[1], dst)?
            }
            Ex::Builtin(f, args) if f.on_formations() && args.len() <= 4 => {
                self.formation(*f, args, dst)?
            }
            _ => return None,
        })
    }

    /// A builtin of formations (a casualty's `remove_bases`, a `for file`
    /// loop's bookkeeping): its arguments into registers, then one call of
    /// the function the tree evaluator calls, so that the part 1
    /// situations of a ruleset that keeps formations stay on this tier.
    fn formation(&mut self, f: Builtin, args: &[Ex], dst: Option<Reg>) -> Option<Reg> {
        let mut regs = [0 as Reg; 4];
        for (r, a) in regs.iter_mut().zip(args) {
            *r = self.expr(a, None)?;
        }
        let call = match self.calls.iter().position(|c| *c == f) {
            Some(i) => i,
            None => {
                self.calls.push(f);
                self.calls.len() - 1
            }
        } as u32;
        let d = dst.unwrap_or_else(|| self.temp());
        self.code.push(T::Formation {
            dst: d,
            call,
            args: regs,
        });
        Some(d)
    }

    /// `min(a, b)` or `max(a, b)` as a move and a compare: no instruction of
    /// its own, so the machine code compiles it as it compiles any branch.
    /// (A drive back capped by a move, `max(0, ...)` of a tally, keep a
    /// procedure on this tier.) Ties keep `b`, as the evaluator does.
    fn min_max(&mut self, min: bool, a: &Ex, b: &Ex, dst: Option<Reg>) -> Option<Reg> {
        let ra = self.expr(a, None)?;
        let rb = self.expr(b, None)?;
        // A destination that is `a`'s own register would lose `a` to the
        // first move: work in a temporary then.
        let d = match dst {
            Some(d) if d != ra => d,
            _ => self.temp(),
        };
        self.code.push(T::Move { dst: d, src: rb });
        // Keep b unless a is strictly on the wanted side of it.
        let j = self.code.len();
        self.code.push(T::JumpUnlessCmp {
            op: if min { Bin::Lt } else { Bin::Gt },
            a: ra,
            b: rb,
            to: 0,
        });
        self.code.push(T::Move { dst: d, src: ra });
        let end = self.code.len() as u32;
        if let T::JumpUnlessCmp { to, .. } = &mut self.code[j] {
            *to = end;
        }
        match dst {
            Some(want) if want != d => {
                self.code.push(T::Move { dst: want, src: d });
                Some(want)
            }
            _ => Some(d),
        }
    }

    /// A roll whose `effects` arguments and pools the situation has fixed:
    /// its faces are read once, here. `None` (the general tier) otherwise,
    /// or when a fixed roll breaks its limits (the general tier reports it).
    fn roll(&mut self, r: &crate::compile::ir::Roll) -> Option<u32> {
        use crate::compile::ir::PartDice;
        let mut args = Vec::new();
        for a in &r.args {
            let Ex::Const(v) = a else { return None };
            args.push(*v);
        }
        let (mut dice, mut counts, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
        for p in &r.parts {
            let each: Vec<(Id, i64)> = match &p.dice {
                PartDice::Die(d) => vec![(*d, 1)],
                PartDice::Pool(Ex::Const(Value::Pool(q))) => {
                    self.rs.pools[*q as usize].parts.clone()
                }
                PartDice::Pool(_) => return None,
            };
            for (d, k) in each {
                dice.push(d);
                match &p.count {
                    Ex::Const(Value::Int(n)) => {
                        let n = n.checked_mul(k)?;
                        fixed.push(n);
                        counts.push(self.konst(n));
                    }
                    count => {
                        let n = self.expr(count, None)?;
                        let reg = if k == 1 {
                            n
                        } else {
                            let (kr, d) = (self.konst(k), self.temp());
                            self.code.push(T::Bin {
                                op: Bin::Mul,
                                dst: d,
                                a: n,
                                b: kr,
                            });
                            d
                        };
                        counts.push(reg);
                    }
                }
            }
        }
        let ev = crate::run::eval::Eval::new(self.rs);
        let c = crate::run::eval::Ctx::new(self.world);
        let ids: Vec<(Id, i64)> = dice.iter().map(|d| (*d, 0)).collect();
        let readings = ev.readings(c, r.effects, &ids, &args).ok()?;
        let fixed = if fixed.len() == dice.len() {
            let parts: Vec<(Id, i64)> = dice.iter().copied().zip(fixed.iter().copied()).collect();
            ev.check_roll(r.effects, &parts, &readings).ok()?;
            Some(fixed)
        } else {
            None
        };
        let readings: Vec<Box<[i64]>> = readings
            .iter()
            .map(|x| x.to_vec().into_boxed_slice())
            .collect();
        let most = {
            let read: Vec<&[i64]> = readings.iter().map(|x| x.as_ref()).collect();
            self.rs.effects[r.effects as usize].most_per_face(&read)
        };
        self.rolls.push(TRoll {
            dice,
            counts,
            fixed,
            readings,
            effects: r.effects,
            most,
        });
        Some((self.rolls.len() - 1) as u32)
    }
}

/// Compile a program for the fast tier, if it fits.
pub fn compile(rs: &Ruleset, prog: &Program) -> Option<Typed> {
    let mut b = B {
        rs,
        world: &prog.world,
        pools: Vec::new(),
        rolls: Vec::new(),
        calls: Vec::new(),
        code: Vec::new(),
        init: prog.frame.iter().map(|v| enc(*v).unwrap_or(0)).collect(),
        consts: Vec::new(),
    };
    let mut messages = Vec::new();
    let mut starts = Vec::new();
    let mut patches = Vec::new();
    for op in &prog.ops {
        starts.push(b.code.len());
        match op {
            Op::Let(s, e) => {
                b.expr(e, Some(*s as Reg))?;
            }
            Op::Outcome(i, e) => {
                let r = b.expr(e, None)?;
                b.code.push(T::Outcome { idx: *i, src: r });
            }
            Op::Require(e, m, span) => {
                let r = b.expr(e, None)?;
                messages.push((m.clone(), *span));
                b.code.push(T::Require {
                    cond: r,
                    msg: (messages.len() - 1) as u32,
                });
            }
            Op::JumpIfNot(
                Ex::Bin(op @ (Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Eq | Bin::Ne), x, y),
                t,
            ) => {
                let ra = b.expr(x, None)?;
                let rb = b.expr(y, None)?;
                patches.push((b.code.len(), *t));
                b.code.push(T::JumpUnlessCmp {
                    op: *op,
                    a: ra,
                    b: rb,
                    to: 0,
                });
            }
            Op::JumpIfNot(e, t) => {
                let r = b.expr(e, None)?;
                patches.push((b.code.len(), *t));
                b.code.push(T::JumpIfZero { cond: r, to: 0 });
            }
            Op::Jump(t) => {
                patches.push((b.code.len(), *t));
                b.code.push(T::Jump { to: 0 });
            }
            // Scripts run in the general tier.
            Op::Hook { .. } => return None,
            Op::Assign {
                side,
                target,
                state,
                op,
                value,
            } => {
                let src = b.expr(value, None)?;
                let idx = b.index(*side, target, *state)?;
                b.code.push(T::Store {
                    side: *side,
                    idx,
                    op: *op,
                    src,
                });
            }
        }
    }
    starts.push(b.code.len());
    for (at, op) in patches {
        let to = starts[op] as u32;
        match &mut b.code[at] {
            T::Jump { to: t } | T::JumpIfZero { to: t, .. } | T::JumpUnlessCmp { to: t, .. } => {
                *t = to
            }
            _ => unreachable!(),
        }
    }
    let kinds = prog
        .outcomes
        .iter()
        .map(|o| match o.ty {
            Ty::Int => Some(Kind::Int),
            Ty::Bool => Some(Kind::Bool),
            Ty::Symbols(_) | Ty::Enum(_) => Some(Kind::Sym),
            Ty::Tallies(e) => Some(Kind::Tallies(rs.effects[e as usize].tallies.len() as u8)),
            Ty::Dice => Some(Kind::Pool),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let defaults = prog
        .outcomes
        .iter()
        .map(|o| enc(crate::run::odds::default_outcome(&o.ty)).unwrap_or(-1))
        .collect();
    let state = prog
        .world
        .state
        .iter()
        .map(|v| enc(*v))
        .collect::<Option<Vec<_>>>()?;
    let side_state = prog
        .world
        .side_state
        .iter()
        .map(|v| enc(*v))
        .collect::<Option<Vec<_>>>()?;
    let mut typed = Typed {
        rs_dice: rs.dice.clone(),
        pools: b.pools,
        rolls: b.rolls,
        calls: b.calls,
        native: None,
        code: b.code,
        init: b.init,
        messages,
        defaults,
        kinds,
        state,
        side_state,
        failed_pool: Default::default(),
    };
    // Machine code when it can be had (MUSTER_NO_JIT=1 keeps interpreting).
    if std::env::var_os("MUSTER_NO_JIT").is_none() {
        typed.native = super::native::compile(&typed);
    }
    Some(typed)
}

/// How often each outcome took each `i64` value.
pub type Counts = Vec<Vec<(i64, u64)>>;

/// Outcome counts: small values (bools, hits, symbol ids) in dense arrays,
/// anything else in a short list. The machine code counts the dense ones
/// itself (see [`Dense::cells`]).
pub(crate) struct Dense {
    /// `DENSE` counters an outcome, one after another, then one counter
    /// nothing reads (where the machine code counts a value that is not
    /// dense, so that it need not branch).
    dense: Vec<u64>,
    /// Per outcome, the tallies of a roll outcome (0 for any other): its
    /// number is folded to a dense index (see [`fold`]).
    tallies: Vec<u8>,
    sparse: Counts,
    last: Vec<usize>,
}

pub(crate) const DENSE: usize = 128;

/// A roll's number (tallies in 15-bit lanes, the first highest) as a dense
/// index: each of `k` tallies gets `7 / k` bits of the 7 a dense index has,
/// so a joint outcome of small tallies (wounds 2, shoves 1) is counted in
/// the array, not searched for in the list. -1 when a tally is too large
/// for its bits (that value is always counted in the list). The machine
/// code folds the same way (`native::dense_key`).
#[inline]
fn fold(v: i64, k: u8) -> i64 {
    let bits = 7 / u32::from(k);
    let mut key = 0i64;
    for lane in (0..u32::from(k)).rev() {
        let t = (v >> (crate::compile::ir::TALLY_BITS * lane)) & crate::compile::ir::MAX_TALLY;
        if t >> bits != 0 {
            return -1;
        }
        key = (key << bits) | t;
    }
    if v >> (crate::compile::ir::TALLY_BITS * u32::from(k)) != 0 {
        return -1;
    }
    key
}

/// The roll's number a dense index of [`fold`] stands for.
fn unfold(key: i64, k: u8) -> i64 {
    let bits = 7 / u32::from(k);
    let mut v = 0i64;
    for lane in 0..u32::from(k) {
        let t = (key >> (bits * lane)) & ((1 << bits) - 1);
        v |= t << (crate::compile::ir::TALLY_BITS * lane);
    }
    v
}

impl Dense {
    fn new(kinds: &[Kind]) -> Self {
        let outcomes = kinds.len();
        Dense {
            dense: vec![0; outcomes * DENSE + 1],
            tallies: kinds
                .iter()
                .map(|k| match k {
                    Kind::Tallies(n) => *n,
                    _ => 0,
                })
                .collect(),
            sparse: vec![Vec::new(); outcomes],
            last: vec![0; outcomes],
        }
    }

    /// Outcome `o`'s value `v` as its dense index, if it has one.
    #[inline]
    fn key(&self, o: usize, v: i64) -> Option<usize> {
        let k = self.tallies[o];
        let key = if k == 0 { v } else { fold(v, k) };
        (0..DENSE as i64).contains(&key).then_some(key as usize)
    }

    /// Count one run's outcomes.
    #[inline]
    fn add(&mut self, out: &[i64]) {
        for (o, v) in out.iter().enumerate() {
            match self.key(o, *v) {
                Some(key) => self.dense[o * DENSE + key] += 1,
                None => self.add_sparse(o, *v),
            }
        }
    }

    /// Count, of one run's outcomes, those the machine code did not (it
    /// counted every value with a dense index).
    fn add_rest(&mut self, out: &[i64]) {
        for (o, v) in out.iter().enumerate() {
            if self.key(o, *v).is_none() {
                self.add_sparse(o, *v);
            }
        }
    }

    fn add_sparse(&mut self, o: usize, v: i64) {
        crate::run::odds::count_outcomes(
            &mut self.sparse[o..=o],
            &mut self.last[o..=o],
            std::slice::from_ref(&v),
        )
    }

    /// The counters the machine code increments (see the field `dense`).
    pub(crate) fn cells_len(&self) -> usize {
        self.dense.len()
    }

    pub(crate) fn cells(&mut self) -> *mut u64 {
        self.dense.as_mut_ptr()
    }

    fn finish(self) -> Counts {
        self.dense
            .chunks_exact(DENSE)
            .zip(self.tallies)
            .zip(self.sparse)
            .map(|((d, k), mut s)| {
                s.extend(d.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, n)| {
                    (
                        if k == 0 {
                            i as i64
                        } else {
                            unfold(i as i64, k)
                        },
                        *n,
                    )
                }));
                s
            })
            .collect()
    }
}

impl Typed {
    pub(crate) fn code(&self) -> &[T] {
        &self.code
    }
    pub(crate) fn init(&self) -> &[i64] {
        &self.init
    }
    pub(crate) fn pools(&self) -> &[Pool] {
        &self.pools
    }
    pub(crate) fn rolls(&self) -> &[TRoll] {
        &self.rolls
    }
    /// The builtins `T::Formation` calls.
    pub(crate) fn calls(&self) -> &[Builtin] {
        &self.calls
    }
    /// Call formation builtin `call` (see [`T::Formation`]).
    #[inline]
    pub(crate) fn formation_call(&self, call: u32, args: [i64; 4]) -> i64 {
        crate::run::eval::formation_call(self.calls[call as usize], args)
    }
    /// How many sides die `d` has.
    pub(crate) fn sides(&self, d: Id) -> u64 {
        self.rs_dice[d as usize].faces.len() as u64
    }
    pub(crate) fn state_len(&self) -> usize {
        self.state.len()
    }
    pub(crate) fn side_state_len(&self) -> usize {
        self.side_state.len()
    }
    /// The tallies of outcome `o` when it is a roll (its dense index is
    /// folded from them, see [`fold`]), else 0.
    pub(crate) fn outcome_tallies(&self, o: usize) -> u8 {
        match self.kinds[o] {
            Kind::Tallies(k) => k,
            _ => 0,
        }
    }
    pub(crate) fn outcome_len(&self) -> usize {
        self.defaults.len()
    }
    pub(crate) fn initial_state(&self) -> &[i64] {
        &self.state
    }
    pub(crate) fn initial_side_state(&self) -> &[i64] {
        &self.side_state
    }
    pub(crate) fn defaults(&self) -> &[i64] {
        &self.defaults
    }
    /// Is this program running as machine code?
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }

    /// Roll general pool `pool`: `n` dice, `t` the score when it scores.
    pub(crate) fn roll_pool(
        &self,
        pool: usize,
        n: i64,
        t: i64,
        rng: &mut Rng,
    ) -> Result<i64, Diag> {
        let p = &self.pools[pool];
        let reading = match &p.reading {
            Reading::Scoring(_) => Reading::Scoring(t),
            r => r.clone(),
        };
        dice::roll_pool(&self.rs_dice[p.die as usize], &reading, p.reroll, n, rng).map_err(|_| {
            self.failed_pool.0.store(pool as u64, Ordering::Relaxed);
            self.failed_pool.1.store(n, Ordering::Relaxed);
            pool_error(p, n)
        })
    }

    fn native_error(&self, code: i64) -> Diag {
        match code {
            super::native::OVERFLOW => overflow(),
            // Rolled with the generator, a pool fails only for its size (below 0 or over the most).
            super::native::POOL_ERROR => {
                let pool = self.failed_pool.0.load(Ordering::Relaxed) as usize;
                let n = self.failed_pool.1.load(Ordering::Relaxed);
                pool_error(&self.pools[pool], n)
            }
            k => {
                let (m, span) = &self.messages[(k - 1) as usize];
                Diag::new("muster::requirement", format!("the situation breaks a rule: {m}"))
                    .at(*span, "this requirement does not hold")
                    .help("change the situation's units or facts so that the procedure's requirements hold")
            }
        }
    }

    /// Run `n` times on one generator stream, counting outcomes.
    pub fn tally(&self, rs: &Ruleset, n: u64, rng: &mut Rng) -> Result<Counts, Diag> {
        let mut regs = self.init.clone();
        let mut st = self.state.clone();
        let mut sst = self.side_state.clone();
        let mut out = self.defaults.clone();
        let mut counts = Dense::new(&self.kinds);
        for _ in 0..n {
            match &self.native {
                // The machine code starts each run from the initial state itself.
                // It counts the outcomes with a dense index itself.
                Some(native) => {
                    let code = native.run(self, &mut st, &mut sst, &mut out, &mut counts, rng);
                    match code {
                        0 => {}
                        super::native::NOT_ALL_COUNTED => counts.add_rest(&out),
                        _ => return Err(self.native_error(code)),
                    }
                    continue;
                }
                None => {
                    st.copy_from_slice(&self.state);
                    sst.copy_from_slice(&self.side_state);
                    out.copy_from_slice(&self.defaults);
                    self.run(rs, &mut regs, &mut st, &mut sst, rng, &mut out)?;
                }
            }
            counts.add(&out);
        }
        Ok(counts.finish())
    }

    /// Read an outcome's `i64` back as a value.
    pub fn value(&self, outcome: usize, v: i64) -> Value {
        match self.kinds[outcome] {
            Kind::Int | Kind::Tallies(_) => Value::Int(v),
            Kind::Bool => Value::Bool(v != 0),
            Kind::Sym if v < 0 => Value::None,
            Kind::Sym => Value::Sym(v as u32),
            // An outcome of dice left unset (a charge that never made
            // contact rolls no combat dice) is `none`, as on the other tiers.
            Kind::Pool if v < 0 => Value::None,
            Kind::Pool => Value::Pool(v as u32),
        }
    }

    /// Roll roll `roll` with `counts` dice of each part. Its limits are
    /// checked first (as the tree evaluator checks them: the same message).
    pub(crate) fn roll(
        &self,
        rs: &Ruleset,
        roll: usize,
        counts: &[i64],
        rng: &mut Rng,
    ) -> Result<i64, Diag> {
        let r = &self.rolls[roll];
        if r.fixed.is_none() {
            let n: i64 = counts
                .iter()
                .map(|c| (*c).max(0))
                .fold(0, i64::saturating_add);
            if n > crate::compile::ir::MAX_POOL
                || n.saturating_mul(r.most) > crate::compile::ir::MAX_TALLY
            {
                return Err(self.roll_error(rs, roll, counts));
            }
        }
        let mut total = 0i64;
        for ((d, reading), n) in r.dice.iter().zip(&r.readings).zip(counts) {
            let sides = self.rs_dice[*d as usize].faces.len() as u64;
            for _ in 0..*n {
                total += reading[rng.below(sides) as usize];
            }
        }
        Ok(total)
    }

    /// The diagnostic of a roll past its limits, as [`crate::run::eval::Eval::check_roll`] gives it.
    #[cold]
    fn roll_error(&self, rs: &Ruleset, roll: usize, counts: &[i64]) -> Diag {
        let r = &self.rolls[roll];
        let parts: Vec<(Id, i64)> = r.dice.iter().copied().zip(counts.iter().copied()).collect();
        let read: Vec<std::borrow::Cow<[i64]>> = r
            .readings
            .iter()
            .map(|x| std::borrow::Cow::Borrowed(x.as_ref()))
            .collect();
        match crate::run::eval::Eval::new(rs).check_roll(r.effects, &parts, &read) {
            Err(crate::run::eval::EvalError::Fault(d)) => *d,
            _ => Diag::new("muster::runtime", "a roll past its limits"),
        }
    }

    #[inline]
    fn run(
        &self,
        rs: &Ruleset,
        regs: &mut [i64],
        st: &mut [i64],
        sst: &mut [i64],
        rng: &mut Rng,
        out: &mut [i64],
    ) -> Result<(), Diag> {
        let code = &self.code[..];
        let mut pc = 0usize;
        while let Some(ins) = code.get(pc) {
            pc += 1;
            match ins {
                T::Move { dst, src } => regs[*dst as usize] = regs[*src as usize],
                T::Load { side, dst, idx } => {
                    regs[*dst as usize] = if *side {
                        sst[*idx as usize]
                    } else {
                        st[*idx as usize]
                    }
                }
                T::Store { side, idx, op, src } => {
                    let store = if *side { &mut *sst } else { &mut *st };
                    let v = regs[*src as usize];
                    let cur = &mut store[*idx as usize];
                    *cur = match op {
                        ModOp::Set => v,
                        ModOp::Add => cur.saturating_add(v),
                        ModOp::Sub => cur.saturating_sub(v),
                    };
                }
                T::PoolFixed {
                    dst,
                    n,
                    sides,
                    min_face,
                } => {
                    let mut hits = 0i64;
                    for _ in 0..*n {
                        hits += i64::from(rng.below(*sides) >= *min_face);
                    }
                    regs[*dst as usize] = hits;
                }
                T::Pool { dst, n, pool } => {
                    let t = self.pools[*pool as usize]
                        .target
                        .map(|r| regs[r as usize])
                        .unwrap_or(0);
                    regs[*dst as usize] =
                        self.roll_pool(*pool as usize, regs[*n as usize], t, rng)?;
                }
                T::Bin { op, dst, a, b } => {
                    let (x, y) = (regs[*a as usize], regs[*b as usize]);
                    regs[*dst as usize] = match op {
                        Bin::Add => x.checked_add(y).ok_or_else(overflow)?,
                        Bin::Sub => x.checked_sub(y).ok_or_else(overflow)?,
                        Bin::Mul => x.checked_mul(y).ok_or_else(overflow)?,
                        Bin::Lt => (x < y) as i64,
                        Bin::Le => (x <= y) as i64,
                        Bin::Gt => (x > y) as i64,
                        Bin::Ge => (x >= y) as i64,
                        Bin::Eq => (x == y) as i64,
                        Bin::Ne => (x != y) as i64,
                        Bin::And => (x != 0 && y != 0) as i64,
                        Bin::Or => (x != 0 || y != 0) as i64,
                        Bin::Div => unreachable!("division never reaches the fast tier"),
                    };
                }
                T::Not { dst, a } => regs[*dst as usize] = (regs[*a as usize] == 0) as i64,
                T::Neg { dst, a } => {
                    regs[*dst as usize] = regs[*a as usize].checked_neg().ok_or_else(overflow)?
                }
                T::Jump { to } => pc = *to as usize,
                T::JumpIfZero { cond, to } => {
                    if regs[*cond as usize] == 0 {
                        pc = *to as usize;
                    }
                }
                T::JumpIfNonZero { cond, to } => {
                    if regs[*cond as usize] != 0 {
                        pc = *to as usize;
                    }
                }
                T::JumpUnlessCmp { op, a, b, to } => {
                    let (x, y) = (regs[*a as usize], regs[*b as usize]);
                    let holds = match op {
                        Bin::Lt => x < y,
                        Bin::Le => x <= y,
                        Bin::Gt => x > y,
                        Bin::Ge => x >= y,
                        Bin::Eq => x == y,
                        _ => x != y,
                    };
                    if !holds {
                        pc = *to as usize;
                    }
                }
                T::Outcome { idx, src } => out[*idx as usize] = regs[*src as usize],
                T::Roll { dst, roll } => {
                    let r = &self.rolls[*roll as usize];
                    let mut small = [0i64; 8];
                    let mut big = Vec::new();
                    let counts: &mut [i64] = if r.counts.len() <= small.len() {
                        &mut small[..r.counts.len()]
                    } else {
                        big.resize(r.counts.len(), 0);
                        &mut big
                    };
                    for (c, reg) in counts.iter_mut().zip(&r.counts) {
                        *c = regs[*reg as usize];
                    }
                    regs[*dst as usize] = self.roll(rs, *roll as usize, counts, rng)?;
                }
                T::Tally { dst, src, shift } => {
                    regs[*dst as usize] =
                        (regs[*src as usize] >> shift) & crate::compile::ir::MAX_TALLY
                }
                T::Formation { dst, call, args } => {
                    let a = args.map(|r| regs[r as usize]);
                    regs[*dst as usize] = self.formation_call(*call, a);
                }
                T::Require { cond, msg } => {
                    if regs[*cond as usize] == 0 {
                        let (m, span) = &self.messages[*msg as usize];
                        return Err(Diag::new("muster::requirement", format!("the situation breaks a rule: {m}"))
                            .at(*span, "this requirement does not hold")
                            .help("change the situation's units or facts so that the procedure's requirements hold"));
                    }
                }
            }
        }
        Ok(())
    }
}

fn overflow() -> Diag {
    Diag::new("muster::runtime", "arithmetic overflow").help("check the numbers the rule computes")
}
