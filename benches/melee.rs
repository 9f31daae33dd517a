//! Melee benchmark: Horse (3 dice, hits on 5+) charging the front of
//! Pike+Shot (4 dice, hits on 5+), from `rules/situations/tvbd_horse_charges_pike.toml`.
//!
//! Measured in one run:
//! 1. NATIVE: a hand-written Rust loop of the same melee (dice, winner, the
//!    resolve loss, routed flags and rally-back flag of `take_hits`/`rout`),
//!    tallying every outcome the procedure reports;
//! 2. MUSTER: `odds::tally` of the specialised program on one thread, on the
//!    tier it gets (machine code unless `MUSTER_NO_JIT=1`), printed first;
//! 3. EXACT: `odds::exact` of the specialised program, and `Build::exact`
//!    (specialisation included);
//! 4. PARALLEL: `odds::sampled` on the default rayon pool.
//!
//! Then, in the same run, a pool of mixed colours (issue 31): Claims and
//! Colours' flank charge (`rules/situations/claims_flank_charge.toml`),
//! cuirassiers rolling RED + WHITE read as combat tallies against a
//! Tercio's BLACK: `odds::tally` of its specialised program against a
//! hand-written loop of the same dice, reading, breaks and outcomes (target
//! at most 3x); the two roll the same faces from the same seed, so their
//! counts must be equal, not just close.
//!
//! Run with `cargo bench --bench melee`. Environment:
//! - `MUSTER_BENCH_N`: samples per repetition (default 2,000,000);
//! - `MUSTER_BENCH_DUMP=1`: print the specialised program first;
//! - `MUSTER_BENCH_ONLY=native|interp|exact|parallel|mixed|mixed_interp`: run only that loop
//!   (best of 5, no table), for profiling one path with perf or callgrind.

use muster::base::rng::Rng;
use muster::base::value::Value;
use muster::run::odds::{self, Program};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

const DEFAULT_N: u64 = 2_000_000;
const REPS: usize = 5;
const SEED: u64 = 0x5EED_7111;
/// P(attacker wins) = 184/729 exactly.
const P_ATTACKER_WINS: f64 = 184.0 / 729.0;
const TOLERANCE: f64 = 0.003;
/// Below this many samples the sampling check is too noisy to mean much.
const MIN_N_FOR_CHECK: u64 = 200_000;

/// Best (smallest) time of `REPS` runs of `f`, and the last run's result.
fn best_of<T>(mut f: impl FnMut(usize) -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for rep in 0..REPS {
        let t = Instant::now();
        let r = black_box(f(rep));
        best = best.min(t.elapsed());
        last = Some(r);
    }
    (best, last.expect("REPS > 0"))
}

// ------------------------------------------------------------------ native

/// Outcome tallies of the hand-written melee, one counter per value of each
/// of the procedure's outcomes.
#[derive(Clone, Debug, Default)]
struct NativeTally {
    /// attacker, defender, draw
    winner: [u64; 3],
    attacker_hits: [u64; 4],
    defender_hits: [u64; 5],
    attacker_routed: [u64; 2],
    defender_routed: [u64; 2],
    attacker_must_rally_back: [u64; 2],
    defender_must_rally_back: [u64; 2],
    commander_lost: [u64; 2],
}

/// One unit's mutable state, as the ruleset's `state`s.
#[derive(Clone, Copy)]
struct UnitState {
    resolve: i64,
    routed: bool,
}

/// `take_hits` (without an attached commander, as in this situation) and `rout`.
#[inline(always)]
fn take_hits(u: &mut UnitState, side_lost: &mut i64, hits: i64) {
    if hits > 0 && !u.routed {
        u.resolve -= hits;
        if u.resolve <= 0 {
            u.resolve = 0;
            u.routed = true;
            *side_lost += 1;
        }
    }
}

/// Count the dice of a pool of `n` d6 that score `target` or more.
#[inline(always)]
fn scoring(rng: &mut Rng, n: i64, target: u64) -> i64 {
    let mut hits = 0;
    for _ in 0..n {
        hits += i64::from(rng.below(6) + 1 >= target);
    }
    hits
}

fn native(n: u64, rng: &mut Rng) -> NativeTally {
    // Table 1: Horse resolve 3, Pike+Shot resolve 4; both hit on 5+ here.
    const HORSE_RESOLVE: i64 = 3;
    const PIKE_RESOLVE: i64 = 4;
    const HORSE_HIT: u64 = 5;
    const PIKE_HIT: u64 = 5;
    const ATTACKER_IS_CAVALRY: bool = true;
    const DEFENDER_IS_CAVALRY: bool = false;
    let mut t = NativeTally::default();
    for _ in 0..n {
        let mut att = UnitState {
            resolve: HORSE_RESOLVE,
            routed: false,
        };
        let mut def = UnitState {
            resolve: PIKE_RESOLVE,
            routed: false,
        };
        let (mut att_lost, mut def_lost) = (0i64, 0i64);
        let a = scoring(rng, att.resolve, HORSE_HIT);
        let d = scoring(rng, def.resolve, PIKE_HIT);
        let winner = if a > d {
            0
        } else if d > a {
            1
        } else {
            2
        };
        let attacker_must_rally_back = ATTACKER_IS_CAVALRY && d > a;
        let defender_must_rally_back = DEFENDER_IS_CAVALRY && a > d;
        take_hits(&mut def, &mut def_lost, a);
        take_hits(&mut att, &mut att_lost, d);
        black_box((att.resolve, def.resolve, att_lost, def_lost));
        t.winner[winner] += 1;
        t.attacker_hits[a as usize] += 1;
        t.defender_hits[d as usize] += 1;
        t.attacker_routed[usize::from(att.routed)] += 1;
        t.defender_routed[usize::from(def.routed)] += 1;
        t.attacker_must_rally_back[usize::from(attacker_must_rally_back)] += 1;
        t.defender_must_rally_back[usize::from(defender_must_rally_back)] += 1;
        t.commander_lost[0] += 1;
    }
    t
}

// ------------------------------------------------------------------ mixed-colour pool

/// One face of a coloured die read by the sheet's Effect of Dice in Combat:
/// (wounds, potential shove or shatter). Faces in the order the ruleset
/// declares them: blank, S, W1, W2, with the port's assumed counts.
type Read = (i64, i64);
const RED: [Read; 6] = [(0, 0), (1, 1), (1, 0), (1, 0), (2, 1), (2, 1)];
const WHITE: [Read; 6] = [(0, 0), (0, 0), (0, 0), (1, 1), (1, 0), (1, 0)];
const BLACK: [Read; 6] = [(0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (1, 0)];

/// Outcome counts of the hand-written flank charge, one counter per value
/// of each of `charge_combat`'s outcomes.
#[derive(Clone, Debug, Default)]
struct MixedTally {
    attacker_claims: [u64; 1],
    defender_claims: [u64; 1],
    attacker_dice: [u64; 1],
    defender_dice: [u64; 1],
    /// By wounds * 3 + potential.
    attacker_roll: [u64; 16],
    defender_roll: [u64; 16],
    wounds_on_defender: [u64; 6],
    wounds_on_attacker: [u64; 3],
    attacker_shoves: [u64; 2],
    attacker_shatters: [u64; 2],
    defender_shoves: [u64; 2],
    defender_shatters: [u64; 2],
    attacker_broken: [u64; 2],
    defender_broken: [u64; 2],
}

/// A TUG's bases lost and whether it broke (`take_wounds`).
#[derive(Clone, Copy, Default)]
struct Tug {
    lost: i64,
    broken: bool,
}

#[inline(always)]
fn take_wounds(t: &mut Tug, half: i64, wounds: i64) {
    if wounds > 0 && t.lost + wounds > half {
        t.broken = true;
    }
    t.lost += wounds;
}

/// The flank charge by hand: claims 4 to 0 (RED + WHITE against BLACK, 1
/// automatic wound), each roll's tallies, the wounds, the breaks (the
/// Tercio's 12 bases break past 6 lost, the cuirassiers' 4 past 2), the
/// shoves and shatters.
fn mixed_native(n: u64, rng: &mut Rng) -> MixedTally {
    let mut t = MixedTally::default();
    for _ in 0..n {
        let (mut cuirassiers, mut tercio) = (Tug::default(), Tug::default());
        let r = RED[rng.below(6) as usize];
        let w = WHITE[rng.below(6) as usize];
        let b = BLACK[rng.below(6) as usize];
        let (aw, ap) = (r.0 + w.0, r.1 + w.1);
        let (on_d, on_a) = (aw + 1, b.0);
        take_wounds(&mut tercio, 6, on_d);
        take_wounds(&mut cuirassiers, 2, on_a);
        t.attacker_claims[0] += 1;
        t.defender_claims[0] += 1;
        t.attacker_dice[0] += 1;
        t.defender_dice[0] += 1;
        t.attacker_roll[(aw * 3 + ap) as usize] += 1;
        t.defender_roll[(b.0 * 3 + b.1) as usize] += 1;
        t.wounds_on_defender[on_d as usize] += 1;
        t.wounds_on_attacker[on_a as usize] += 1;
        t.defender_broken[usize::from(tercio.broken)] += 1;
        t.attacker_broken[usize::from(cuirassiers.broken)] += 1;
        t.attacker_shatters[usize::from(ap > 0 && tercio.broken)] += 1;
        t.attacker_shoves[usize::from(ap > 0 && !tercio.broken && on_d > on_a)] += 1;
        t.defender_shatters[usize::from(b.1 > 0 && cuirassiers.broken)] += 1;
        t.defender_shoves[usize::from(b.1 > 0 && !cuirassiers.broken && on_a > on_d)] += 1;
    }
    t
}

/// Claims and Colours and its flank charge, specialised.
fn mixed_program() -> (muster::Build, Program) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = root.join("rules/claims_and_colours.muster");
    let mut b = muster::build(&rules).unwrap_or_else(|(d, _)| panic!("ruleset: {d:?}"));
    let text = std::fs::read_to_string(root.join("rules/situations/claims_flank_charge.toml"))
        .expect("read the situation file");
    let s = b
        .situation("claims_flank_charge.toml", &text)
        .unwrap_or_else(|d| panic!("situation: {d:?}"));
    let prog = b
        .program(&s)
        .unwrap_or_else(|d| panic!("specialise: {d:?}"));
    (b, prog)
}

/// The mixed-colour pool measured: muster's sampled tally against the
/// hand-written loop, best of `REPS`, in this run; the ratio returned.
fn mixed_pool(n: u64) -> f64 {
    let (b, prog) = mixed_program();
    let rs = &b.ruleset;
    let tier = match odds::compile_for_sampling(rs, &prog) {
        odds::Compiled::Typed(t) if t.is_native() => "typed, machine code (Cranelift)",
        odds::Compiled::Typed(_) => "typed bytecode, interpreted",
        odds::Compiled::General(_) => "general bytecode, interpreted",
    };
    black_box(mixed_native(n / 10, &mut Rng::new(SEED)));
    black_box(odds::tally(rs, &prog, n / 10, &mut Rng::new(SEED)).expect("tally"));
    let (t_native, nt) =
        best_of(|rep| mixed_native(black_box(n), &mut Rng::new(SEED + rep as u64)));
    let (t_muster, counts) = best_of(|rep| {
        odds::tally(
            rs,
            black_box(&prog),
            black_box(n),
            &mut Rng::new(SEED + rep as u64),
        )
        .expect("tally")
    });
    // Same seed, same faces: the counts are the hand-written loop's.
    let ix = prog
        .outcomes
        .iter()
        .position(|o| o.name == "wounds_on_defender")
        .expect("wounds_on_defender");
    let mut same = true;
    for (v, k) in &counts[ix] {
        let w = v.as_int().expect("a number") as usize;
        same &= nt.wounds_on_defender.get(w) == Some(k);
    }
    let ns_native = t_native.as_nanos() as f64 / n as f64;
    let ns_muster = t_muster.as_nanos() as f64 / n as f64;
    let ratio = ns_muster / ns_native;
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!();
    println!(
        "mixed-colour pool: cuirassiers' RED + WHITE against a Tercio's BLACK (combat tallies); n = {n}, best of {REPS}"
    );
    println!("sampled tier: {tier}");
    println!("{:-<78}", "");
    println!("{:<34} {:>13.2} ns", "native, per sample", ns_native);
    println!(
        "{:<34} {:>13.2} ns",
        "muster (odds::tally), per sample", ns_muster
    );
    println!(
        "{:<34} {:>15.2}x {:>12}  {}",
        "ratio muster / native",
        ratio,
        "<= 3x",
        mark(ratio <= 3.0)
    );
    println!(
        "{:<34} {:>16} {:>12}  {}",
        "same faces, same counts",
        same,
        "true",
        mark(same)
    );
    println!("{:-<78}", "");
    if !same {
        eprintln!("melee bench: the mixed pool's counts differ from the hand-written loop's");
        std::process::exit(1);
    }
    ratio
}

// ------------------------------------------------------------------ interpreted

/// P(winner == attacker) from `odds::tally`'s counts.
fn p_attacker_from_tally(
    counts: &[Vec<(Value, u64)>],
    winner_ix: usize,
    attacker: Value,
    n: u64,
) -> f64 {
    let wins = counts[winner_ix]
        .iter()
        .find(|(v, _)| *v == attacker)
        .map_or(0, |x| x.1);
    wins as f64 / n as f64
}

fn main() {
    let n: u64 = match std::env::var("MUSTER_BENCH_N") {
        Ok(s) => s
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("MUSTER_BENCH_N must be a positive integer, got {s:?}")),
        Err(_) => DEFAULT_N,
    };
    assert!(n > 0, "MUSTER_BENCH_N must be positive");
    let warm_n = (n / 10).max(1);

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = root.join("rules/tillys_very_bad_day.muster");
    let sit_path = root.join("rules/situations/tvbd_horse_charges_pike.toml");
    let mut b = match muster::build(&rules) {
        Ok(b) => b,
        Err((diags, _)) => panic!("ruleset does not build: {diags:?}"),
    };
    let text = std::fs::read_to_string(&sit_path).expect("read the situation file");
    let s = b
        .situation("tvbd_horse_charges_pike.toml", &text)
        .unwrap_or_else(|d| panic!("situation does not read: {d:?}"));
    let prog: Program = b
        .program(&s)
        .unwrap_or_else(|d| panic!("cannot specialise: {d:?}"));
    if std::env::var_os("MUSTER_BENCH_DUMP").is_some() {
        println!("specialised program ({} ops):", prog.ops.len());
        for (i, op) in prog.ops.iter().enumerate() {
            println!("  {i:2}: {op:?}");
        }
        println!("  frame: {:?}", prog.frame);
        println!(
            "  sizes: Value {} B, Ex {} B, Result<Value, EvalError> {} B, Ctx {} B",
            std::mem::size_of::<Value>(),
            std::mem::size_of::<muster::compile::ir::Ex>(),
            std::mem::size_of::<Result<Value, muster::run::eval::EvalError>>(),
            std::mem::size_of::<muster::run::eval::Ctx>(),
        );
        println!();
    }
    let tier = match odds::compile_for_sampling(&b.ruleset, &prog) {
        odds::Compiled::Typed(t) if t.is_native() => "typed, machine code (Cranelift)",
        odds::Compiled::Typed(_) => "typed bytecode, interpreted",
        odds::Compiled::General(_) => "general bytecode, interpreted",
    };
    println!("sampled tier: {tier}");
    let winner_ix = prog
        .outcomes
        .iter()
        .position(|o| o.name == "winner")
        .expect("the melee has a `winner` outcome");
    let attacker = Value::Sym(
        b.ruleset
            .symbols
            .iter()
            .position(|x| x == "attacker")
            .expect("symbol `attacker`") as u32,
    );
    let rs = &b.ruleset;

    if let Ok(only) = std::env::var("MUSTER_BENCH_ONLY") {
        let t = Instant::now();
        for rep in 0..REPS as u64 {
            match only.as_str() {
                "native" => {
                    black_box(native(n, &mut Rng::new(SEED + rep)));
                }
                "interp" => {
                    black_box(odds::tally(rs, &prog, n, &mut Rng::new(SEED + rep)).expect("tally"));
                }
                "exact" => {
                    for _ in 0..n / 1000 {
                        black_box(odds::exact(rs, &prog).expect("exact"));
                    }
                }
                "parallel" => {
                    black_box(odds::sampled(rs, &prog, n, SEED + rep, None).expect("sampled"));
                }
                "mixed" => {
                    black_box(mixed_native(n, &mut Rng::new(SEED + rep)));
                }
                "mixed_interp" => {
                    let (mb, mp) = mixed_program();
                    black_box(
                        odds::tally(&mb.ruleset, &mp, n, &mut Rng::new(SEED + rep)).expect("tally"),
                    );
                }
                other => panic!("MUSTER_BENCH_ONLY: unknown path {other:?}"),
            }
        }
        println!("{only}: {REPS} x n = {n} in {:?}", t.elapsed());
        return;
    }

    // Warm-up: every path once at a tenth of the size.
    black_box(native(warm_n, &mut Rng::new(SEED)));
    black_box(odds::tally(rs, &prog, warm_n, &mut Rng::new(SEED)).expect("tally"));
    black_box(odds::exact(rs, &prog).expect("exact"));
    black_box(odds::sampled(rs, &prog, warm_n, SEED, None).expect("sampled"));

    // 1. Native.
    let (t_native, nt) = best_of(|rep| native(black_box(n), &mut Rng::new(SEED + rep as u64)));
    let p_native = nt.winner[0] as f64 / n as f64;

    // 2. Interpreted, sampled on one thread.
    let (t_interp, counts) = best_of(|rep| {
        odds::tally(
            rs,
            black_box(&prog),
            black_box(n),
            &mut Rng::new(SEED + rep as u64),
        )
        .expect("tally")
    });
    let p_interp = p_attacker_from_tally(&counts, winner_ix, attacker, n);

    // 3. Exact: the specialised program, then the whole path from the situation.
    let exact_iters: u32 = 2_000;
    let (t_exact, odds_exact) = best_of(|_| {
        let mut last = None;
        for _ in 0..exact_iters {
            last = Some(odds::exact(black_box(rs), black_box(&prog)).expect("exact"));
        }
        last.expect("iterations > 0")
    });
    let (t_exact_full, _) = best_of(|_| {
        let mut last = None;
        for _ in 0..exact_iters {
            last = Some(b.exact(black_box(&s)).expect("exact"));
        }
        last.expect("iterations > 0")
    });
    let p_exact = odds_exact.get("winner").expect("winner odds").p(attacker);

    // 4. Parallel, on the default rayon pool.
    let threads = rayon::current_num_threads();
    let (t_par, odds_par) = best_of(|rep| {
        odds::sampled(
            black_box(rs),
            black_box(&prog),
            black_box(n),
            SEED + rep as u64,
            None,
        )
        .expect("sampled")
    });
    let p_par = odds_par
        .get("winner")
        .expect("winner odds")
        .p(attacker)
        .to_f64();

    // ------------------------------------------------------------ report
    let ns_per = |d: Duration| d.as_nanos() as f64 / n as f64;
    let ns_native = ns_per(t_native);
    let ns_interp = ns_per(t_interp);
    let ratio = ns_interp / ns_native;
    let us_exact = t_exact.as_secs_f64() * 1e6 / f64::from(exact_iters);
    let us_exact_full = t_exact_full.as_secs_f64() * 1e6 / f64::from(exact_iters);
    let par_rate = n as f64 / t_par.as_secs_f64();
    let one_thread_rate = n as f64 / t_interp.as_secs_f64();
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };

    println!("melee: Horse (3d6, 5+) charges Pike+Shot (4d6, 5+); n = {n}, best of {REPS}");
    println!("{:-<78}", "");
    println!("{:<34} {:>16} {:>12}", "measure", "value", "target");
    println!("{:-<78}", "");
    println!(
        "{:<34} {:>13.2} ns {:>12}",
        "native, per sample", ns_native, ""
    );
    println!(
        "{:<34} {:>13.2} ns {:>12}",
        "muster (odds::tally), per sample", ns_interp, ""
    );
    println!(
        "{:<34} {:>15.2}x {:>12}  {}",
        "ratio muster / native",
        ratio,
        "<= 3x",
        mark(ratio <= 3.0)
    );
    println!(
        "{:<34} {:>13.2} us {:>12}  {}",
        "exact (odds::exact), per call",
        us_exact,
        "< 50 us",
        mark(us_exact < 50.0)
    );
    println!(
        "{:<34} {:>13.2} us {:>12}",
        "exact (Build::exact, +specialise)", us_exact_full, ""
    );
    println!(
        "{:<34} {:>14.3e}/s {:>12}",
        format!("parallel sampled ({threads} threads)"),
        par_rate,
        ""
    );
    println!(
        "{:<34} {:>14.3e}/s {:>12}",
        "  (one-thread tally, for scale)", one_thread_rate, ""
    );
    println!("{:-<78}", "");

    let check_sampling = n >= MIN_N_FOR_CHECK;
    let mut all_ok = true;
    println!("P(attacker wins): 184/729 = {P_ATTACKER_WINS:.6}");
    for (name, p) in [
        ("native", p_native),
        ("interpreted", p_interp),
        ("parallel", p_par),
    ] {
        let err = (p - P_ATTACKER_WINS).abs();
        let ok = err <= TOLERANCE;
        let verdict = if check_sampling {
            all_ok &= ok;
            mark(ok)
        } else {
            "(n too small to check)"
        };
        println!("  {name:<12} {p:.6}  (|diff| {err:.6} <= {TOLERANCE}) {verdict}");
    }
    let exact_ok = p_exact.fraction() == Some((184, 729));
    all_ok &= exact_ok;
    println!("  {:<12} {}  {}", "exact", p_exact, mark(exact_ok));
    mixed_pool(n);
    if !all_ok {
        eprintln!("melee bench: an odds check failed");
        std::process::exit(1);
    }
}
