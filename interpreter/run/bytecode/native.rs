//! Native code for the fast tier: a typed program ([`super::typed`]) compiled
//! with Cranelift into one machine-code function per specialised procedure.
//! Registers become SSA variables, state and outcomes are plain memory, and
//! dice come from the same seeded generator through a callback, in the same
//! order, so a seed gives the same answer natively as interpreted. Every
//! problem the interpreter would report comes back as a code and becomes the
//! same diagnostic. If code generation fails for any reason, the caller keeps
//! interpreting.

use super::typed::{Dense, Pool, Typed, DENSE, T};
use crate::base::rng::Rng;
use crate::compile::ir::{Bin, ModOp};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, InstBuilder, MemFlagsData, Signature, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::collections::BTreeSet;

/// The generated function: (unit state, side state, outcomes, generator,
/// program, outcome counters) -> 0, or a code (see [`Native::run`]).
type Entry =
    unsafe extern "C" fn(*mut i64, *mut i64, *mut i64, *mut Rng, *const Typed, *mut u64) -> i64;

/// Error codes the generated code returns.
pub const OVERFLOW: i64 = -1;
pub const POOL_ERROR: i64 = -2;
/// Not an error: the run is done, but some outcome's value has no dense
/// counter and is left for the caller to count.
pub const NOT_ALL_COUNTED: i64 = -3;

/// A compiled procedure. The code lives as long as this value.
pub struct Native {
    entry: Entry,
    // Owns the executable memory; only touched again when dropped.
    module: Option<JITModule>,
}

// SAFETY: after `finalize_definitions` the module is never used again except
// to free its memory in `Drop`, which needs `&mut self`, so no other thread
// can be running the code then. The entry point is plain machine code that
// only touches the pointers it is given.
unsafe impl Send for Native {}
unsafe impl Sync for Native {}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `&mut self` means no call of `entry` is in progress, and
            // the pointer is never used after this.
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Native")
    }
}

/// The most dice of a fixed roll generated inline, one after another; a
/// larger one calls back into Rust.
const MAX_UNROLLED_ROLL: i64 = 64;

/// The rare end of Lemire's reduction, exactly as [`Rng::below`] does it:
/// the generated code has drawn `x` and found `low = x * n (mod 2^64)`
/// below `n`; reject while under the threshold, then return the high word.
extern "C" fn muster_below_finish(rng: *mut Rng, n: u64, low: u64, high: u64) -> u64 {
    // SAFETY: the generated code passes through the `&mut Rng` that
    // `Native::run` received, for the duration of that call.
    let rng = unsafe { &mut *rng };
    let threshold = n.wrapping_neg() % n;
    let (mut low, mut high) = (low, high);
    while low < threshold {
        let m = (rng.next_u64() as u128) * (n as u128);
        low = m as u64;
        high = (m >> 64) as u64;
    }
    high
}

/// A fixed roll too large to unroll (see [`super::typed::TRoll`]).
extern "C" fn muster_roll(typed: *const Typed, roll: u64, rng: *mut Rng) -> i64 {
    // SAFETY: both pointers come from `Native::run`'s own references.
    let (typed, rng) = unsafe { (&*typed, &mut *rng) };
    let r = &typed.rolls()[roll as usize];
    let counts = r.fixed.as_deref().unwrap_or_default();
    let mut total = 0i64;
    for ((d, reading), n) in r.dice.iter().zip(&r.readings).zip(counts) {
        let sides = typed.sides(*d);
        for _ in 0..*n {
            total += reading[rng.below(sides) as usize];
        }
    }
    total
}

extern "C" fn muster_pool(typed: *const Typed, pool: u64, n: i64, t: i64, rng: *mut Rng) -> i64 {
    // SAFETY: both pointers come from `Native::run`'s own references.
    let (typed, rng) = unsafe { (&*typed, &mut *rng) };
    typed
        .roll_pool(pool as usize, n, t, rng)
        .unwrap_or(i64::MIN)
}

/// A builtin of formations ([`T::Formation`]): the Rust function every
/// tier calls.
extern "C" fn muster_formation(
    typed: *const Typed,
    call: u64,
    a0: i64,
    a1: i64,
    a2: i64,
    a3: i64,
) -> i64 {
    // SAFETY: the pointer comes from `Native::run`'s own reference.
    let typed = unsafe { &*typed };
    typed.formation_call(call as u32, [a0, a1, a2, a3])
}

impl Native {
    /// Run once from the situation's initial state (the code resets state, side
    /// state and outcome defaults itself); state and outcomes are written in place,
    /// and each outcome whose value has a dense counter is counted in `counts`.
    /// Returns 0, [`NOT_ALL_COUNTED`] (the caller counts the rest), [`OVERFLOW`],
    /// [`POOL_ERROR`], or k > 0 when requirement k - 1 failed.
    pub(crate) fn run(
        &self,
        typed: &Typed,
        st: &mut [i64],
        sst: &mut [i64],
        out: &mut [i64],
        counts: &mut Dense,
        rng: &mut Rng,
    ) -> i64 {
        debug_assert!(
            st.len() >= typed.state_len()
                && sst.len() >= typed.side_state_len()
                && out.len() >= typed.outcome_len()
                && counts.cells_len() > typed.outcome_len() * DENSE
        );
        // SAFETY: `compile` checked that every index the code uses is within
        // these slices' lengths (the typed program's own state and outcome
        // sizes, asserted above; the counters hold `DENSE` an outcome and one
        // more), and the code keeps no pointer after return.
        unsafe {
            (self.entry)(
                st.as_mut_ptr(),
                sst.as_mut_ptr(),
                out.as_mut_ptr(),
                rng as *mut Rng,
                typed as *const Typed,
                counts.cells(),
            )
        }
    }
}

/// Compile a typed program to machine code, or `None` (keep interpreting).
pub fn compile(p: &Typed) -> Option<Native> {
    // Every memory index must fit the arrays `run` is given.
    for ins in p.code() {
        let ok = match ins {
            T::Load { side, idx, .. } | T::Store { side, idx, .. } => {
                (*idx as usize)
                    < if *side {
                        p.side_state_len()
                    } else {
                        p.state_len()
                    }
            }
            T::Outcome { idx, .. } => (*idx as usize) < p.outcome_len(),
            T::Pool { pool, .. } => (*pool as usize) < p.pools().len(),
            T::Formation { call, .. } => (*call as usize) < p.calls().len(),
            // A roll whose counts are only known in play is interpreted.
            T::Roll { roll, .. } => p
                .rolls()
                .get(*roll as usize)
                .is_some_and(|r| r.fixed.is_some()),
            _ => true,
        };
        if !ok {
            return None;
        }
    }
    let mut flags = settings::builder();
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    flags.set("opt_level", "speed").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    jb.symbol("muster_pool", muster_pool as *const u8);
    jb.symbol("muster_roll", muster_roll as *const u8);
    jb.symbol("muster_below_finish", muster_below_finish as *const u8);
    jb.symbol("muster_formation", muster_formation as *const u8);
    let mut module = JITModule::new(jb);
    let ptr = module.target_config().pointer_type();

    let mut finish_sig = module.make_signature();
    finish_sig.params.extend([
        AbiParam::new(ptr),
        AbiParam::new(types::I64),
        AbiParam::new(types::I64),
        AbiParam::new(types::I64),
    ]);
    finish_sig.returns.push(AbiParam::new(types::I64));
    let finish_id = module
        .declare_function("muster_below_finish", Linkage::Import, &finish_sig)
        .ok()?;
    let mut pool_sig = module.make_signature();
    pool_sig.params.extend([
        AbiParam::new(ptr),
        AbiParam::new(types::I64),
        AbiParam::new(types::I64),
        AbiParam::new(types::I64),
        AbiParam::new(ptr),
    ]);
    pool_sig.returns.push(AbiParam::new(types::I64));
    let pool_id = module
        .declare_function("muster_pool", Linkage::Import, &pool_sig)
        .ok()?;

    let mut roll_sig = module.make_signature();
    roll_sig.params.extend([
        AbiParam::new(ptr),
        AbiParam::new(types::I64),
        AbiParam::new(ptr),
    ]);
    roll_sig.returns.push(AbiParam::new(types::I64));
    let roll_id = module
        .declare_function("muster_roll", Linkage::Import, &roll_sig)
        .ok()?;

    let mut formation_sig = module.make_signature();
    formation_sig.params.push(AbiParam::new(ptr));
    for _ in 0..5 {
        formation_sig.params.push(AbiParam::new(types::I64));
    }
    formation_sig.returns.push(AbiParam::new(types::I64));
    let formation_id = module
        .declare_function("muster_formation", Linkage::Import, &formation_sig)
        .ok()?;

    let mut sig: Signature = module.make_signature();
    for _ in 0..6 {
        sig.params.push(AbiParam::new(ptr));
    }
    sig.returns.push(AbiParam::new(types::I64));
    let fid = module
        .declare_function("procedure", Linkage::Local, &sig)
        .ok()?;
    let mut ctx = Context::new();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, fid.as_u32());
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let pool_fn = module.declare_func_in_func(pool_id, b.func);
        let roll_fn = module.declare_func_in_func(roll_id, b.func);
        let formation_fn = module.declare_func_in_func(formation_id, b.func);
        let finish = module.declare_func_in_func(finish_id, b.func);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let (st, sst, out, rng, prog, cells) = (
            params[0], params[1], params[2], params[3], params[4], params[5],
        );
        // Each run starts from the situation. State, side state and outcomes
        // live in variables (every index is fixed at compile time); only the
        // outcomes are written out, once, at the end.
        let _ = (st, sst);
        let slots = |b: &mut FunctionBuilder, values: &[i64]| -> Vec<Variable> {
            values
                .iter()
                .map(|v| {
                    let var = b.declare_var(types::I64);
                    let c = b.ins().iconst(types::I64, *v);
                    b.def_var(var, c);
                    var
                })
                .collect()
        };
        let state_vars = slots(&mut b, p.initial_state());
        let side_vars = slots(&mut b, p.initial_side_state());
        let out_vars = slots(&mut b, p.defaults());
        let vars: Vec<Variable> = p.init().iter().map(|_| b.declare_var(types::I64)).collect();
        let face_var = b.declare_var(types::I64);
        for (v, init) in vars.iter().zip(p.init()) {
            let c = b.ins().iconst(types::I64, *init);
            b.def_var(*v, c);
        }
        let code = p.code();
        // A block for every jump target (and for the end).
        let mut targets = BTreeSet::new();
        targets.insert(0usize);
        targets.insert(code.len());
        for ins in code {
            match ins {
                T::Jump { to }
                | T::JumpIfZero { to, .. }
                | T::JumpIfNonZero { to, .. }
                | T::JumpUnlessCmp { to, .. } => {
                    targets.insert(*to as usize);
                }
                _ => {}
            }
        }
        let blocks: std::collections::BTreeMap<usize, Block> =
            targets.iter().map(|t| (*t, b.create_block())).collect();
        // A block that returns `code`, filled once the rest is (cranelift
        // wants each block filled before the builder moves to another).
        let mut failures: Vec<(Block, i64)> = Vec::new();
        let mut fail = |b: &mut FunctionBuilder, code: i64| {
            let blk = b.create_block();
            failures.push((blk, code));
            blk
        };
        let overflow = fail(&mut b, OVERFLOW);
        let pool_error = fail(&mut b, POOL_ERROR);
        b.ins().jump(blocks[&0], &[]);
        let mut open = false;
        // Continue straight on in a fresh block after a conditional branch.
        let branch = |b: &mut FunctionBuilder, cond: Value, yes: Block| {
            let next = b.create_block();
            b.ins().brif(cond, yes, &[], next, &[]);
            b.switch_to_block(next);
        };
        // Checked arithmetic: jump to `overflow` when it does not fit.
        let checked = |b: &mut FunctionBuilder, (r, o): (Value, Value)| {
            branch(b, o, overflow);
            r
        };
        let saturate = |b: &mut FunctionBuilder, add: bool, x: Value, y: Value| {
            let (r, o) = if add {
                b.ins().sadd_overflow(x, y)
            } else {
                b.ins().ssub_overflow(x, y)
            };
            // On overflow the result goes to the end the operand pushes it to.
            let up = b.ins().icmp_imm_s(
                if add {
                    IntCC::SignedGreaterThan
                } else {
                    IntCC::SignedLessThan
                },
                y,
                0,
            );
            let max = b.ins().iconst(types::I64, i64::MAX);
            let min = b.ins().iconst(types::I64, i64::MIN);
            let sat = b.ins().select(up, max, min);
            b.ins().select(o, sat, r)
        };
        let boolean = |b: &mut FunctionBuilder, c: Value| b.ins().uextend(types::I64, c);
        let mem = MemFlagsData::trusted();
        for (i, ins) in code.iter().enumerate() {
            if let Some(blk) = blocks.get(&i) {
                // The entry block already jumped to the first instruction's.
                if open {
                    b.ins().jump(*blk, &[]);
                }
                b.switch_to_block(*blk);
                open = true;
            } else if !open {
                // Unreachable code after a jump: give it a block of its own.
                let blk = b.create_block();
                b.switch_to_block(blk);
                open = true;
            }
            let get = |b: &mut FunctionBuilder, r: u32| b.use_var(vars[r as usize]);
            match ins {
                T::Move { dst, src } => {
                    let v = get(&mut b, *src);
                    b.def_var(vars[*dst as usize], v);
                }
                T::Load { side, dst, idx } => {
                    let slot = if *side {
                        side_vars[*idx as usize]
                    } else {
                        state_vars[*idx as usize]
                    };
                    let v = b.use_var(slot);
                    b.def_var(vars[*dst as usize], v);
                }
                T::Store { side, idx, op, src } => {
                    let slot = if *side {
                        side_vars[*idx as usize]
                    } else {
                        state_vars[*idx as usize]
                    };
                    let v = get(&mut b, *src);
                    let new = match op {
                        ModOp::Set => v,
                        ModOp::Add | ModOp::Sub => {
                            let cur = b.use_var(slot);
                            saturate(&mut b, *op == ModOp::Add, cur, v)
                        }
                    };
                    b.def_var(slot, new);
                }
                T::PoolFixed {
                    dst,
                    n,
                    sides,
                    min_face,
                } => {
                    let sides = b.ins().iconst(types::I64, *sides as i64);
                    let mut acc = b.ins().iconst(types::I64, 0);
                    for _ in 0..*n {
                        let face = inline_below(&mut b, rng, sides, finish, face_var);
                        let hit = b.ins().icmp_imm_u(
                            IntCC::UnsignedGreaterThanOrEqual,
                            face,
                            *min_face as i64,
                        );
                        let hit = boolean(&mut b, hit);
                        acc = b.ins().iadd(acc, hit);
                    }
                    b.def_var(vars[*dst as usize], acc);
                }
                T::Pool { dst, n, pool, .. } => {
                    let nv = get(&mut b, *n);
                    let tv = match p.pools()[*pool as usize] {
                        Pool {
                            target: Some(t), ..
                        } => get(&mut b, t),
                        _ => b.ins().iconst(types::I64, 0),
                    };
                    let idx = b.ins().iconst(types::I64, *pool as i64);
                    let call = b.ins().call(pool_fn, &[prog, idx, nv, tv, rng]);
                    let r = b.inst_results(call)[0];
                    let bad = b.ins().icmp_imm_s(IntCC::Equal, r, i64::MIN);
                    branch(&mut b, bad, pool_error);
                    b.def_var(vars[*dst as usize], r);
                }
                T::Roll { dst, roll } => {
                    let r = &p.rolls()[*roll as usize];
                    let counts = r.fixed.as_deref().unwrap_or_default();
                    let n: i64 = counts.iter().map(|c| (*c).max(0)).sum();
                    let v = if n <= MAX_UNROLLED_ROLL {
                        // Each die inline: a face, then its reading from the
                        // typed program's table.
                        let mut acc = b.ins().iconst(types::I64, 0);
                        for ((d, reading), n) in r.dice.iter().zip(&r.readings).zip(counts) {
                            let sides = b.ins().iconst(types::I64, p.sides(*d) as i64);
                            // SAFETY (of the loads below): the table is a
                            // boxed slice of the typed program, which owns
                            // this code and never changes its rolls; each
                            // face is below the die's number of sides, the
                            // table's length.
                            let table = b.ins().iconst(ptr, reading.as_ptr() as i64);
                            for _ in 0..*n {
                                let face = inline_below(&mut b, rng, sides, finish, face_var);
                                let off = b.ins().imul_imm_u(face, 8);
                                let at = b.ins().iadd(table, off);
                                let v = b.ins().load(types::I64, mem, at, 0);
                                acc = b.ins().iadd(acc, v);
                            }
                        }
                        acc
                    } else {
                        let idx = b.ins().iconst(types::I64, *roll as i64);
                        let call = b.ins().call(roll_fn, &[prog, idx, rng]);
                        b.inst_results(call)[0]
                    };
                    b.def_var(vars[*dst as usize], v);
                }
                T::Tally { dst, src, shift } => {
                    let x = get(&mut b, *src);
                    let x = b.ins().ushr_imm_u(x, *shift as i64);
                    let v = b.ins().band_imm_u(x, crate::compile::ir::MAX_TALLY);
                    b.def_var(vars[*dst as usize], v);
                }
                T::Formation { dst, call, args } => {
                    let idx = b.ins().iconst(types::I64, i64::from(*call));
                    let mut params = vec![prog, idx];
                    for r in args {
                        params.push(get(&mut b, *r));
                    }
                    let c = b.ins().call(formation_fn, &params);
                    let v = b.inst_results(c)[0];
                    b.def_var(vars[*dst as usize], v);
                }
                T::Bin { op, dst, a, b: bb } => {
                    let (x, y) = (get(&mut b, *a), get(&mut b, *bb));
                    let v = match op {
                        Bin::Add => {
                            let r = b.ins().sadd_overflow(x, y);
                            checked(&mut b, r)
                        }
                        Bin::Sub => {
                            let r = b.ins().ssub_overflow(x, y);
                            checked(&mut b, r)
                        }
                        Bin::Mul => {
                            let r = b.ins().smul_overflow(x, y);
                            checked(&mut b, r)
                        }
                        Bin::And | Bin::Or => {
                            let xb = b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                            let yb = b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                            let c = if *op == Bin::And {
                                b.ins().band(xb, yb)
                            } else {
                                b.ins().bor(xb, yb)
                            };
                            boolean(&mut b, c)
                        }
                        Bin::Div => return None,
                        cmp => {
                            let c = b.ins().icmp(cc(*cmp), x, y);
                            boolean(&mut b, c)
                        }
                    };
                    b.def_var(vars[*dst as usize], v);
                }
                T::Not { dst, a } => {
                    let x = get(&mut b, *a);
                    let c = b.ins().icmp_imm_s(IntCC::Equal, x, 0);
                    let v = boolean(&mut b, c);
                    b.def_var(vars[*dst as usize], v);
                }
                T::Neg { dst, a } => {
                    let x = get(&mut b, *a);
                    let zero = b.ins().iconst(types::I64, 0);
                    let r = b.ins().ssub_overflow(zero, x);
                    let v = checked(&mut b, r);
                    b.def_var(vars[*dst as usize], v);
                }
                T::Jump { to } => {
                    b.ins().jump(blocks[&(*to as usize)], &[]);
                    open = false;
                }
                T::JumpIfZero { cond, to } | T::JumpIfNonZero { cond, to } => {
                    let x = get(&mut b, *cond);
                    let when = if matches!(ins, T::JumpIfZero { .. }) {
                        IntCC::Equal
                    } else {
                        IntCC::NotEqual
                    };
                    let c = b.ins().icmp_imm_s(when, x, 0);
                    branch(&mut b, c, blocks[&(*to as usize)]);
                }
                T::JumpUnlessCmp { op, a, b: bb, to } => {
                    let (x, y) = (get(&mut b, *a), get(&mut b, *bb));
                    let holds = b.ins().icmp(cc(*op), x, y);
                    let fails = b.ins().icmp_imm_s(IntCC::Equal, holds, 0);
                    branch(&mut b, fails, blocks[&(*to as usize)]);
                }
                T::Outcome { idx, src } => {
                    let v = get(&mut b, *src);
                    b.def_var(out_vars[*idx as usize], v);
                }
                T::Require { cond, msg } => {
                    let x = get(&mut b, *cond);
                    let c = b.ins().icmp_imm_s(IntCC::Equal, x, 0);
                    let bad = fail(&mut b, *msg as i64 + 1);
                    branch(&mut b, c, bad);
                }
            }
        }
        let end = blocks[&code.len()];
        if open {
            b.ins().jump(end, &[]);
        }
        b.switch_to_block(end);
        // Write the outcomes out, and count each whose value has a dense
        // counter (without a branch: one that has none is counted in the
        // spare counter past the last outcome's, and the caller counts it).
        let spare = b
            .ins()
            .iconst(types::I64, (p.outcome_len() * DENSE * 8) as i64);
        let mut missed = b.ins().iconst(types::I8, 0);
        for (i, var) in out_vars.iter().enumerate() {
            let v = b.use_var(*var);
            b.ins().store(mem, v, out, (i as i32) * 8);
            let (key, dense) = dense_key(&mut b, v, p.outcome_tallies(i));
            let at = b.ins().iadd_imm_u(key, (i * DENSE) as i64);
            let at = b.ins().imul_imm_u(at, 8);
            let at = b.ins().select(dense, at, spare);
            let at = b.ins().iadd(cells, at);
            let n = b.ins().load(types::I64, mem, at, 0);
            let n = b.ins().iadd_imm_u(n, 1);
            b.ins().store(mem, n, at, 0);
            let not_dense = b.ins().bxor_imm_u(dense, 1);
            missed = b.ins().bor(missed, not_dense);
        }
        let zero = b.ins().iconst(types::I64, 0);
        let rest = b.ins().iconst(types::I64, NOT_ALL_COUNTED);
        let code = b.ins().select(missed, rest, zero);
        b.ins().return_(&[code]);
        for (blk, code) in failures {
            b.switch_to_block(blk);
            let v = b.ins().iconst(types::I64, code);
            b.ins().return_(&[v]);
        }
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    module.define_function(fid, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let code = module.get_finalized_function(fid);
    // SAFETY: `code` is the finalized function declared with `sig`, whose
    // five pointer parameters and i64 result match `Entry`.
    let entry: Entry = unsafe { std::mem::transmute::<*const u8, Entry>(code) };
    Some(Native {
        entry,
        module: Some(module),
    })
}

/// One die, inline: step the PCG-64 MCG state in place (it is the only field
/// of the `#[repr(C)]` [`Rng`]), take its XSL-RR output `x`, and reduce it to
/// `0..n` by Lemire's method; the rare rejection path calls back.
fn inline_below(
    b: &mut FunctionBuilder,
    rng: Value,
    n: Value,
    finish: cranelift_codegen::ir::FuncRef,
    face: Variable,
) -> Value {
    let mem = MemFlagsData::trusted();
    let state = b.ins().load(types::I128, mem, rng, 0);
    let mlo = b
        .ins()
        .iconst(types::I64, crate::base::rng::MULTIPLIER as u64 as i64);
    let mhi = b.ins().iconst(
        types::I64,
        (crate::base::rng::MULTIPLIER >> 64) as u64 as i64,
    );
    let mult = b.ins().iconcat(mlo, mhi);
    let state = b.ins().imul(state, mult);
    b.ins().store(mem, state, rng, 0);
    let (lo, hi) = b.ins().isplit(state);
    let rot = b.ins().ushr_imm_u(hi, 58);
    let xsl = b.ins().bxor(hi, lo);
    let x = b.ins().rotr(xsl, rot);
    let low = b.ins().imul(x, n);
    let high = b.ins().umulhi(x, n);
    b.def_var(face, high);
    let rare = b.ins().icmp(IntCC::UnsignedLessThan, low, n);
    let slow = b.create_block();
    let join = b.create_block();
    b.ins().brif(rare, slow, &[], join, &[]);
    b.switch_to_block(slow);
    let call = b.ins().call(finish, &[rng, n, low, high]);
    let r = b.inst_results(call)[0];
    b.def_var(face, r);
    b.ins().jump(join, &[]);
    b.switch_to_block(join);
    b.use_var(face)
}

/// An outcome's value as the index of its dense counter, and whether it
/// has one (an `i8` 0 or 1): the value itself for anything but a roll, a
/// roll's tallies folded as `typed::fold` folds them (`tallies` > 0).
fn dense_key(b: &mut FunctionBuilder, v: Value, tallies: u8) -> (Value, Value) {
    if tallies == 0 {
        let dense = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, v, DENSE as i64);
        return (v, dense);
    }
    let lanes = i64::from(tallies);
    let bits = 7 / lanes;
    let lane_bits = i64::from(crate::compile::ir::TALLY_BITS);
    // Nothing above the last lane (nor a sign).
    let high = b.ins().sshr_imm_u(v, lanes * lane_bits);
    let mut dense = b.ins().icmp_imm_u(IntCC::Equal, high, 0);
    let mut key = b.ins().iconst(types::I64, 0);
    for lane in (0..lanes).rev() {
        let t = b.ins().ushr_imm_u(v, lane * lane_bits);
        let t = b.ins().band_imm_u(t, crate::compile::ir::MAX_TALLY);
        let fits = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, t, 1 << bits);
        dense = b.ins().band(dense, fits);
        let shifted = b.ins().ishl_imm_u(key, bits);
        key = b.ins().bor(shifted, t);
    }
    (key, dense)
}

fn cc(op: Bin) -> IntCC {
    match op {
        Bin::Lt => IntCC::SignedLessThan,
        Bin::Le => IntCC::SignedLessThanOrEqual,
        Bin::Gt => IntCC::SignedGreaterThan,
        Bin::Ge => IntCC::SignedGreaterThanOrEqual,
        Bin::Eq => IntCC::Equal,
        _ => IntCC::NotEqual,
    }
}
