//! The sampled hot path: a specialised procedure ([`crate::run::odds::Program`])
//! compiled to a flat register program. Locals live in the first registers,
//! constants are preloaded into registers, state is read and written at
//! indices fixed at compile time, and a pool of dice is one instruction.
//! Anything unusual left after specialisation (a fact whose arguments depend
//! on the dice, a quantity over changed state...) falls back to the tree
//! evaluator, so every program runs; the common ones run fast.

use crate::base::value::Value;
use crate::compile::ir::{Bin, DiceMode, Ex, Id, ModOp, Ruleset};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{Reroll, Span};
use crate::run::dice::{self, DiceSource, Reading};
use crate::run::eval::{binary, Ctx, Eval, NoDice};
use crate::run::odds::{Op, Program};

pub mod native;
pub mod typed;

type Reg = u32;

/// One instruction.
#[derive(Clone, Debug)]
enum I {
    Move {
        dst: Reg,
        src: Reg,
    },
    LoadState {
        dst: Reg,
        idx: u32,
    },
    LoadSideState {
        dst: Reg,
        idx: u32,
    },
    /// Change state at a fixed index.
    Store {
        side: bool,
        idx: u32,
        op: ModOp,
        src: Reg,
    },
    /// Change state of a unit or side known only at run time.
    StoreDyn {
        side: bool,
        target: Reg,
        state: Id,
        op: ModOp,
        src: Reg,
    },
    /// Roll `n` dice of `die`, read as `reading`; `target` is the score
    /// register for a scoring pool.
    Pool {
        dst: Reg,
        n: Reg,
        die: Id,
        reading: PoolReading,
        reroll: Option<Reroll>,
    },
    /// A pool the situation fixed: `n` dice of `die`, a hit when the face
    /// index is `min_face` or more (hits on T+ with no reroll).
    PoolFixed {
        dst: Reg,
        n: u32,
        die: Id,
        min_face: u32,
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
    JumpIfNot {
        cond: Reg,
        to: u32,
    },
    JumpIf {
        cond: Reg,
        to: u32,
    },
    /// Compare two integers and jump when the comparison fails.
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
    /// Fallback: evaluate an expression tree.
    Eval {
        dst: Reg,
        ex: Box<Ex>,
    },
    /// Run a hook of procedure `proc` with its variables' registers.
    Hook {
        hook: Id,
        proc: Id,
        vars: Box<[Reg]>,
        outs: Box<[Option<u16>]>,
    },
}

#[derive(Clone, Debug)]
enum PoolReading {
    Sum,
    Scoring(Reg),
    Counting(Box<[bool]>),
}

/// A compiled program, ready to run many times.
#[derive(Clone, Debug)]
pub struct Code {
    instrs: Vec<I>,
    /// Initial registers: the program's frame, then constants, then temporaries.
    init: Vec<Value>,
    messages: Vec<(String, Span)>,
    /// Where each of the program's ops starts among the instructions (a
    /// fault is placed at its op's statement).
    starts: Vec<usize>,
    /// Each outcome's value when a path of play never sets it.
    defaults: Vec<Value>,
    nstates: usize,
    nside_states: usize,
}

struct Builder<'a> {
    rs: &'a Ruleset,
    instrs: Vec<I>,
    init: Vec<Value>,
    messages: Vec<(String, Span)>,
    constants: Vec<(Value, Reg)>,
}

impl Builder<'_> {
    fn temp(&mut self) -> Reg {
        self.init.push(Value::None);
        (self.init.len() - 1) as Reg
    }

    fn constant(&mut self, v: Value) -> Reg {
        // Constants are few; share equal ones.
        if let Some((_, r)) = self.constants.iter().find(|(c, _)| *c == v) {
            return *r;
        }
        self.init.push(v);
        let r = (self.init.len() - 1) as Reg;
        self.constants.push((v, r));
        r
    }

    fn state_index(&self, side: bool, target: &Ex, state: Id) -> Option<u32> {
        state_index(self.rs, side, target, state)
    }

    /// Compile `e`, leaving its value in a register (`dst` when given).
    fn expr(&mut self, e: &Ex, dst: Option<Reg>) -> Reg {
        let out = |b: &mut Self| dst.unwrap_or_else(|| b.temp());
        if let Some((n, die, min_face)) = fixed_pool(self.rs, e) {
            let d = out(self);
            self.instrs.push(I::PoolFixed {
                dst: d,
                n,
                die,
                min_face,
            });
            return d;
        }
        match e {
            Ex::Const(v) => match dst {
                Some(d) => {
                    let c = self.constant(*v);
                    self.instrs.push(I::Move { dst: d, src: c });
                    d
                }
                None => self.constant(*v),
            },
            Ex::Local(s) => match dst {
                Some(d) if d != *s as Reg => {
                    self.instrs.push(I::Move {
                        dst: d,
                        src: *s as Reg,
                    });
                    d
                }
                _ => *s as Reg,
            },
            Ex::State(t, s) if self.state_index(false, t, *s).is_some() => {
                let idx = self.state_index(false, t, *s).unwrap();
                let d = out(self);
                self.instrs.push(I::LoadState { dst: d, idx });
                d
            }
            Ex::SideState(t, s) if self.state_index(true, t, *s).is_some() => {
                let idx = self.state_index(true, t, *s).unwrap();
                let d = out(self);
                self.instrs.push(I::LoadSideState { dst: d, idx });
                d
            }
            Ex::Bin(Bin::And, a, b) | Ex::Bin(Bin::Or, a, b) => {
                let is_and = matches!(e, Ex::Bin(Bin::And, ..));
                let d = out(self);
                self.expr(a, Some(d));
                let jump = self.instrs.len();
                self.instrs.push(if is_and {
                    I::JumpIfNot { cond: d, to: 0 }
                } else {
                    I::JumpIf { cond: d, to: 0 }
                });
                self.expr(b, Some(d));
                let end = self.instrs.len() as u32;
                match &mut self.instrs[jump] {
                    I::JumpIfNot { to, .. } | I::JumpIf { to, .. } => *to = end,
                    _ => unreachable!(),
                }
                d
            }
            Ex::Bin(op, a, b) => {
                let ra = self.expr(a, None);
                let rb = self.expr(b, None);
                let d = out(self);
                self.instrs.push(I::Bin {
                    op: *op,
                    dst: d,
                    a: ra,
                    b: rb,
                });
                d
            }
            Ex::Not(a) => {
                let ra = self.expr(a, None);
                let d = out(self);
                self.instrs.push(I::Not { dst: d, a: ra });
                d
            }
            Ex::Neg(a) => {
                let ra = self.expr(a, None);
                let d = out(self);
                self.instrs.push(I::Neg { dst: d, a: ra });
                d
            }
            Ex::If(c, a, b) => {
                let d = out(self);
                let rc = self.expr(c, None);
                let j = self.instrs.len();
                self.instrs.push(I::JumpIfNot { cond: rc, to: 0 });
                self.expr(a, Some(d));
                let j2 = self.instrs.len();
                self.instrs.push(I::Jump { to: 0 });
                let else_at = self.instrs.len() as u32;
                self.expr(b, Some(d));
                let end = self.instrs.len() as u32;
                if let I::JumpIfNot { to, .. } = &mut self.instrs[j] {
                    *to = else_at;
                }
                if let I::Jump { to } = &mut self.instrs[j2] {
                    *to = end;
                }
                d
            }
            Ex::Dice {
                count,
                die,
                mode,
                reroll,
                ..
            } => {
                let n = self.expr(count, None);
                let reading = match mode {
                    DiceMode::Sum => PoolReading::Sum,
                    DiceMode::Scoring(t) => PoolReading::Scoring(self.expr(t, None)),
                    DiceMode::Counting(m) => PoolReading::Counting(m.clone().into_boxed_slice()),
                };
                let d = out(self);
                self.instrs.push(I::Pool {
                    dst: d,
                    n,
                    die: *die,
                    reading,
                    reroll: *reroll,
                });
                d
            }
            other => {
                let d = out(self);
                self.instrs.push(I::Eval {
                    dst: d,
                    ex: Box::new(other.clone()),
                });
                d
            }
        }
    }
}

/// The most dice a fixed pool has: the machine-code tier unrolls one, a
/// roll a die. A larger constant pool is rolled as any other pool (and one
/// over [`crate::compile::ir::MAX_POOL`] stops with its diagnostic, where an
/// unrolled million dice took gigabytes to compile).
const MAX_FIXED_POOL: i64 = 64;

/// A pool the situation has fixed: a constant number of dice (at most
/// [`MAX_FIXED_POOL`]) scoring a constant T+ with no reroll, on a die whose
/// faces rise in value. Returns the count, the die, and the index of the
/// first face that scores.
pub(crate) fn fixed_pool(rs: &Ruleset, e: &Ex) -> Option<(u32, Id, u32)> {
    let Ex::Dice {
        count,
        die,
        mode: DiceMode::Scoring(t),
        reroll: None,
        ..
    } = e
    else {
        return None;
    };
    let (Ex::Const(Value::Int(n)), Ex::Const(Value::Int(score))) = (&**count, &**t) else {
        return None;
    };
    // A negative pool is rolled as any other, which reports it.
    if !(0..=MAX_FIXED_POOL).contains(n) {
        return None;
    }
    let faces = &rs.dice[*die as usize].faces;
    if !faces.windows(2).all(|w| w[0].1 <= w[1].1) {
        return None;
    }
    let min_face = faces
        .iter()
        .position(|f| f.1 >= *score)
        .unwrap_or(faces.len());
    Some((*n as u32, *die, min_face as u32))
}

/// Where a unit's (or side's) state lives in the flat state array, when the
/// specialiser has fixed which unit (or side) it is.
pub(crate) fn state_index(rs: &Ruleset, side: bool, target: &Ex, state: Id) -> Option<u32> {
    match (side, target) {
        (false, Ex::Const(Value::Unit(u))) => {
            Some((*u as usize * rs.states.len() + state as usize) as u32)
        }
        (true, Ex::Const(Value::Side(s))) => {
            Some((*s as usize * rs.side_states.len() + state as usize) as u32)
        }
        _ => None,
    }
}

/// Compile a specialised program.
pub fn compile(rs: &Ruleset, prog: &Program) -> Code {
    let mut b = Builder {
        rs,
        instrs: Vec::new(),
        init: prog.frame.clone(),
        messages: Vec::new(),
        constants: Vec::new(),
    };
    let mut starts = Vec::with_capacity(prog.ops.len() + 1);
    // Jumps name op indices; patch them to instruction indices at the end.
    let mut patches: Vec<(usize, usize)> = Vec::new();
    for op in &prog.ops {
        starts.push(b.instrs.len());
        match op {
            Op::Let(s, e) => {
                b.expr(e, Some(*s as Reg));
            }
            Op::Outcome(i, e) => {
                let r = b.expr(e, None);
                b.instrs.push(I::Outcome { idx: *i, src: r });
            }
            Op::Require(e, msg, span) => {
                let r = b.expr(e, None);
                b.messages.push((msg.clone(), *span));
                b.instrs.push(I::Require {
                    cond: r,
                    msg: (b.messages.len() - 1) as u32,
                });
            }
            Op::JumpIfNot(
                Ex::Bin(op @ (Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Eq | Bin::Ne), x, y),
                t,
            ) => {
                let ra = b.expr(x, None);
                let rb = b.expr(y, None);
                patches.push((b.instrs.len(), *t));
                b.instrs.push(I::JumpUnlessCmp {
                    op: *op,
                    a: ra,
                    b: rb,
                    to: 0,
                });
            }
            Op::JumpIfNot(e, t) => {
                let r = b.expr(e, None);
                patches.push((b.instrs.len(), *t));
                b.instrs.push(I::JumpIfNot { cond: r, to: 0 });
            }
            Op::Jump(t) => {
                patches.push((b.instrs.len(), *t));
                b.instrs.push(I::Jump { to: 0 });
            }
            Op::Assign {
                side,
                target,
                state,
                op,
                value,
            } => {
                let src = b.expr(value, None);
                match b.state_index(*side, target, *state) {
                    Some(idx) => b.instrs.push(I::Store {
                        side: *side,
                        idx,
                        op: *op,
                        src,
                    }),
                    None => {
                        let t = b.expr(target, None);
                        b.instrs.push(I::StoreDyn {
                            side: *side,
                            target: t,
                            state: *state,
                            op: *op,
                            src,
                        });
                    }
                }
            }
            Op::Hook {
                hook,
                proc,
                vars,
                outs,
            } => {
                let vars = vars.iter().map(|e| b.expr(e, None)).collect();
                b.instrs.push(I::Hook {
                    hook: *hook,
                    proc: *proc,
                    vars,
                    outs: outs.clone().into_boxed_slice(),
                });
            }
        }
    }
    starts.push(b.instrs.len());
    for (at, op) in patches {
        let to = starts[op] as u32;
        match &mut b.instrs[at] {
            I::Jump { to: t } | I::JumpIfNot { to: t, .. } | I::JumpUnlessCmp { to: t, .. } => {
                *t = to
            }
            _ => unreachable!(),
        }
    }
    Code {
        instrs: b.instrs,
        init: b.init,
        messages: b.messages,
        starts,
        defaults: prog
            .outcomes
            .iter()
            .map(|o| crate::run::odds::default_outcome(&o.ty))
            .collect(),
        nstates: rs.states.len(),
        nside_states: rs.side_states.len(),
    }
}

#[inline]
fn int(v: Value, what: &str) -> Result<i64, Diag> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Frac(n, d) => Ok(n.div_euclid(d) as i64),
        _ => Err(
            Diag::new("muster::runtime", format!("{what} is not a number ({v:?})")).help(
                "a unit without this stat cannot take part here; guard the rule with `!= none`",
            ),
        ),
    }
}

impl Code {
    /// Fresh registers for a run.
    pub fn registers(&self) -> Vec<Value> {
        self.init.clone()
    }

    /// Run once. `regs` must come from [`Code::registers`] (it is reset
    /// here); `state` and `side_state` are changed in place; each outcome's
    /// value is written to `out` (defaults first).
    #[allow(clippy::too_many_arguments)]
    pub fn run<D: DiceSource>(
        &self,
        rs: &Ruleset,
        prog: &Program,
        regs: &mut [Value],
        state: &mut [Value],
        side_state: &mut [Value],
        dice: &mut D,
        out: &mut [Value],
    ) -> Result<(), Diag> {
        let mut at = 0usize;
        self.run_at(rs, prog, regs, state, side_state, dice, out, &mut at)
            .map_err(|d| {
                // The op whose instructions hold `at` (ops that made none
                // come before the one that did).
                let op = self.starts.partition_point(|s| *s <= at).saturating_sub(1);
                prog.locate(op, d)
            })
    }

    /// [`Code::run`], keeping in `at` the instruction being run.
    #[allow(clippy::too_many_arguments)]
    fn run_at<D: DiceSource>(
        &self,
        rs: &Ruleset,
        prog: &Program,
        regs: &mut [Value],
        state: &mut [Value],
        side_state: &mut [Value],
        dice: &mut D,
        out: &mut [Value],
        at: &mut usize,
    ) -> Result<(), Diag> {
        // No reset of the registers: every register a run reads is either
        // preloaded (frame, constants) or written earlier in the same run.
        out.copy_from_slice(&self.defaults);
        let mut pc = 0usize;
        let n = self.instrs.len();
        while pc < n {
            *at = pc;
            match &self.instrs[pc] {
                I::Move { dst, src } => regs[*dst as usize] = regs[*src as usize],
                I::LoadState { dst, idx } => regs[*dst as usize] = state[*idx as usize],
                I::LoadSideState { dst, idx } => regs[*dst as usize] = side_state[*idx as usize],
                I::Store { side, idx, op, src } => {
                    let store = if *side { &mut *side_state } else { &mut *state };
                    let v = regs[*src as usize];
                    store[*idx as usize] = match op {
                        ModOp::Set => v,
                        _ => Value::Int(dice::apply_op(
                            *op,
                            int(store[*idx as usize], "the state being changed")?,
                            int(v, "the amount")?,
                        )),
                    };
                }
                I::StoreDyn {
                    side,
                    target,
                    state: st,
                    op,
                    src,
                } => {
                    let idx = match (side, regs[*target as usize]) {
                        (false, Value::Unit(u)) => u as usize * self.nstates + *st as usize,
                        (true, Value::Side(s)) => s as usize * self.nside_states + *st as usize,
                        _ => {
                            return Err(Diag::new(
                                "muster::runtime",
                                "a change of state names no unit or side",
                            ))
                        }
                    };
                    let store = if *side { &mut *side_state } else { &mut *state };
                    let v = regs[*src as usize];
                    store[idx] = match op {
                        ModOp::Set => v,
                        _ => Value::Int(dice::apply_op(
                            *op,
                            int(store[idx], "the state being changed")?,
                            int(v, "the amount")?,
                        )),
                    };
                }
                I::Pool {
                    dst,
                    n,
                    die,
                    reading,
                    reroll,
                } => {
                    let count = int(regs[*n as usize], "the number of dice")?;
                    if let Some(m) = dice::pool_too_big(count) {
                        return Err(Diag::new("muster::runtime", m)
                            .help("check the number of dice the rule computes"));
                    }
                    let d = &rs.dice[*die as usize];
                    let total = match (reading, reroll) {
                        // The common case, kept tight: hits on T+, no reroll.
                        (PoolReading::Scoring(t), None) => {
                            let t = int(regs[*t as usize], "the score needed")?;
                            let mut hits = 0i64;
                            for _ in 0..count.max(0) {
                                let f =
                                    dice.face(d).map_err(|m| Diag::new("muster::runtime", m))?;
                                hits += i64::from(d.faces[f].1 >= t);
                            }
                            hits
                        }
                        _ => {
                            let r = match reading {
                                PoolReading::Sum => Reading::Sum,
                                PoolReading::Scoring(t) => {
                                    Reading::Scoring(int(regs[*t as usize], "the score needed")?)
                                }
                                PoolReading::Counting(m) => Reading::Counting(m.to_vec()),
                            };
                            dice::roll_pool(d, &r, *reroll, count, dice)
                                .map_err(|m| Diag::new("muster::runtime", m))?
                        }
                    };
                    regs[*dst as usize] = Value::Int(total);
                }
                I::PoolFixed {
                    dst,
                    n,
                    die,
                    min_face,
                } => {
                    let d = &rs.dice[*die as usize];
                    let mut hits = 0i64;
                    for _ in 0..*n {
                        let f = dice.face(d).map_err(|m| Diag::new("muster::runtime", m))?;
                        hits += i64::from(f as u32 >= *min_face);
                    }
                    regs[*dst as usize] = Value::Int(hits);
                }
                I::Bin { op, dst, a, b } => {
                    let (x, y) = (regs[*a as usize], regs[*b as usize]);
                    regs[*dst as usize] = match (op, x, y) {
                        (Bin::Add, Value::Int(p), Value::Int(q)) if p.checked_add(q).is_some() => {
                            Value::Int(p + q)
                        }
                        (Bin::Sub, Value::Int(p), Value::Int(q)) if p.checked_sub(q).is_some() => {
                            Value::Int(p - q)
                        }
                        (Bin::Gt, Value::Int(p), Value::Int(q)) => Value::Bool(p > q),
                        (Bin::Ge, Value::Int(p), Value::Int(q)) => Value::Bool(p >= q),
                        (Bin::Lt, Value::Int(p), Value::Int(q)) => Value::Bool(p < q),
                        (Bin::Le, Value::Int(p), Value::Int(q)) => Value::Bool(p <= q),
                        (Bin::Eq, Value::Int(p), Value::Int(q)) => Value::Bool(p == q),
                        _ => binary(*op, x, y).map_err(Diag::from)?,
                    };
                }
                I::Not { dst, a } => {
                    regs[*dst as usize] = Value::Bool(!regs[*a as usize].as_bool())
                }
                I::Neg { dst, a } => {
                    regs[*dst as usize] =
                        binary(Bin::Sub, Value::Int(0), regs[*a as usize]).map_err(Diag::from)?
                }
                I::Jump { to } => {
                    pc = *to as usize;
                    continue;
                }
                I::JumpIfNot { cond, to } => {
                    if !regs[*cond as usize].as_bool() {
                        pc = *to as usize;
                        continue;
                    }
                }
                I::JumpIf { cond, to } => {
                    if regs[*cond as usize].as_bool() {
                        pc = *to as usize;
                        continue;
                    }
                }
                I::JumpUnlessCmp { op, a, b, to } => {
                    let holds = match (regs[*a as usize], regs[*b as usize]) {
                        (Value::Int(p), Value::Int(q)) => match op {
                            Bin::Lt => p < q,
                            Bin::Le => p <= q,
                            Bin::Gt => p > q,
                            Bin::Ge => p >= q,
                            Bin::Eq => p == q,
                            _ => p != q,
                        },
                        (x, y) => binary(*op, x, y).map_err(Diag::from)?.as_bool(),
                    };
                    if !holds {
                        pc = *to as usize;
                        continue;
                    }
                }
                I::Outcome { idx, src } => out[*idx as usize] = regs[*src as usize],
                I::Require { cond, msg } => {
                    if !regs[*cond as usize].as_bool() {
                        let (m, span) = &self.messages[*msg as usize];
                        return Err(Diag::new("muster::requirement", format!("the situation breaks a rule: {m}"))
                            .at(*span, "this requirement does not hold")
                            .help("change the situation's units or facts so that the procedure's requirements hold"));
                    }
                }
                I::Eval { dst, ex } => {
                    let ctx = Ctx {
                        world: &prog.world,
                        state,
                        side_state,
                        dirty: None,
                    };
                    let v = if ex.is_random() {
                        Eval::new(rs)
                            .eval(ctx, ex, regs, dice)
                            .map_err(Diag::from)?
                    } else {
                        Eval::new(rs)
                            .eval(ctx, ex, regs, &mut NoDice)
                            .map_err(Diag::from)?
                    };
                    regs[*dst as usize] = v;
                }
                I::Hook {
                    hook,
                    proc,
                    vars,
                    outs,
                } => {
                    let vals: Vec<Value> = vars.iter().map(|r| regs[*r as usize]).collect();
                    let ev = Eval::new(rs);
                    let mut log = Vec::new();
                    let mut env = crate::run::hooks::Env {
                        ev: &ev,
                        store: crate::run::hooks::Store::Run {
                            world: &prog.world,
                            state,
                            side_state,
                        },
                        dice,
                        outs: Some(crate::run::hooks::Outs {
                            defs: &rs.procedures[*proc as usize].outcomes,
                            map: outs,
                            values: out,
                        }),
                        log: &mut log,
                    };
                    let _value = crate::run::hooks::call(&mut env, *hook, &vals)
                        .map_err(crate::run::hooks::Failed::diag)?;
                    // Lines a hook logs show in battles; odds have no log.
                }
            }
            pc += 1;
        }
        Ok(())
    }
}
