//! Hooks: the odd rules no table or procedure holds well, written as rhai
//! scripts attached to a ruleset (docs/LANGUAGE.md, "Hooks").
//!
//! A hook runs before or after a procedure or a step, replaces a
//! procedure's body, or derives a fact. Scripts are compiled once, when the
//! ruleset is; one engine serves every ruleset and every thread (the API
//! reaches the call's world through a per-thread pointer, see [`Env`]).
//!
//! The script API is narrow on purpose: read facts, rules, stats and state;
//! roll dice only through the engine's seeded generator; change the game
//! only through the language's own operations (state, side state, noted
//! facts, a unit falling back) and the procedure's outcomes; log a line. No
//! file system, no network, no clock, and every call runs under limits of
//! operations, call depth and sizes.

use crate::diagnostic::Diag;
use crate::dice::DiceSource;
use crate::eval::{Ctx, Eval, EvalError, NoDice};
use crate::ir::{DieDef, Ex, Id, ModOp, OutcomeDef, Ruleset, Ty};
use crate::syntax::Span;
use crate::value::Value;
use crate::world::World;
use rhai::{Array, Dynamic, Engine, EvalAltResult, Position, Scope, AST};
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

/// Reusable hook helpers, written in rhai: every hook can call them, and a
/// hook may name one of these files as its script.
const STDLIB_SCRIPTS: &[(&str, &str)] = &[("hooks.rhai", include_str!("../stdlib/hooks.rhai"))];

/// The text of a script file shipped in stdlib/.
pub fn stdlib_script(path: &str) -> Option<&'static str> {
    STDLIB_SCRIPTS
        .iter()
        .find(|(n, _)| *n == path)
        .map(|(_, t)| *t)
}

/// The most operations one hook call may take (an endless loop stops here).
pub const MAX_OPERATIONS: u64 = 100_000;
/// The deepest chain of script function calls.
pub const MAX_CALL_LEVELS: usize = 32;
/// The longest string and the largest array or map a script may build.
pub const MAX_STRING: usize = 4_096;
pub const MAX_ARRAY: usize = 1_024;
pub const MAX_MAP: usize = 256;

/// Where a compiled hook runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Point {
    Before(Id),
    After(Id),
    /// The procedure's body is the script.
    Replace(Id),
    BeforeStep(String),
    AfterStep(String),
    /// The script's value is the fact's.
    Fact(Id),
}

/// A compiled hook.
#[derive(Clone, Debug)]
pub struct HookDef {
    pub name: String,
    pub doc: Option<String>,
    pub point: Point,
    /// The names the script sees, in the order their values are given.
    pub vars: Vec<String>,
    /// Does the script (or a helper it calls) roll dice?
    pub rolls: bool,
    ast: Arc<AST>,
    /// The script's text in its source, and where each of its lines starts
    /// (to point a diagnostic at the script's line).
    span: Span,
    lines: Vec<u32>,
}

/// A unit, as a script sees it (compare with `==`, print with `name(u)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitRef(pub u16);

/// A side, as a script sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SideRef(pub u16);

/// Where the state a hook reads and changes lives.
pub enum Store<'a> {
    /// A battle: the world itself, changed in place.
    Battle(&'a mut World),
    /// One run of a specialised procedure (odds): the situation's world,
    /// with this run's state apart.
    Run {
        world: &'a World,
        state: &'a mut [Value],
        side_state: &'a mut [Value],
    },
    /// A fact being derived: read only.
    Read(Ctx<'a>),
}

impl Store<'_> {
    fn ctx(&self) -> Ctx<'_> {
        match self {
            Store::Battle(w) => Ctx::new(w),
            Store::Run {
                world,
                state,
                side_state,
            } => Ctx {
                world,
                state,
                side_state,
                dirty: None,
            },
            Store::Read(c) => *c,
        }
    }
    fn world(&self) -> &World {
        match self {
            Store::Battle(w) => w,
            Store::Run { world, .. } => world,
            Store::Read(c) => c.world,
        }
    }
}

/// The outcomes of the procedure a hook is attached to: its declared
/// outcomes, where each lands in the caller's array (if the caller takes
/// it), and that array.
pub struct Outs<'a> {
    pub defs: &'a [OutcomeDef],
    pub map: &'a [Option<u16>],
    pub values: &'a mut [Value],
}

/// Everything one hook call may touch.
pub struct Env<'a, 'r> {
    pub ev: &'a Eval<'r>,
    pub store: Store<'a>,
    pub dice: &'a mut dyn DiceSource,
    pub outs: Option<Outs<'a>>,
    /// Lines the hook logged (a battle's narrative shows them).
    pub log: &'a mut Vec<String>,
}

thread_local! {
    /// The [`Env`] of the hook call running on this thread (null when none).
    static CURRENT: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
}

/// Puts the previous call's [`Env`] back when a (possibly nested) call ends.
struct Restore(*mut ());

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

type Res<T> = Result<T, Box<EvalAltResult>>;

/// Marks an error raised because a value is not known while specialising.
const NOT_STATIC: &str = "\u{1}not static";
/// Marks an error raised because a die is wanted beyond a scripted prefix.
const MORE_DICE: &str = "\u{1}more dice";

/// Run `f` with the current call's [`Env`].
fn with_env<T>(f: impl FnOnce(&mut Env) -> Res<T>) -> Res<T> {
    let p = CURRENT.with(|c| c.get());
    if p.is_null() {
        return Err("this function works only while a hook runs".into());
    }
    // SAFETY: `p` was set by `call` from a `&mut Env` that outlives the
    // script run it brackets, on this thread; a nested call replaces it and
    // `Restore` puts it back before the outer script can run again, so no
    // two live `&mut` come from the same pointer at once.
    let env = unsafe { &mut *(p as *mut Env) };
    f(env)
}

fn err<T>(msg: impl Into<String>) -> Res<T> {
    Err(msg.into().into())
}

// ------------------------------------------------------------ values

fn to_dynamic(rs: &Ruleset, v: Value) -> Res<Dynamic> {
    Ok(match v {
        Value::None => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from(b),
        Value::Int(i) => Dynamic::from(i),
        Value::Unit(u) => Dynamic::from(UnitRef(u)),
        Value::Side(s) => Dynamic::from(SideRef(s)),
        Value::Sym(s) => Dynamic::from(rs.symbols[s as usize].clone()),
        Value::Frac(n, d) => {
            return err(format!(
                "the value {n}/{d} is a fraction, which scripts cannot hold; round it in the rule with floor() or ceil()"
            ))
        }
    })
}

/// A script's value as a value of type `ty`.
fn to_value(rs: &Ruleset, d: &Dynamic, ty: &Ty) -> Res<Value> {
    if d.is_unit() {
        return Ok(Value::None);
    }
    let bad = || {
        err(format!(
            "expected {}, got {} ({})",
            rs.ty_name(ty),
            d.type_name(),
            d
        ))
    };
    match ty {
        Ty::Int => d.as_int().map(Value::Int).or_else(|_| bad()),
        Ty::Bool => d.as_bool().map(Value::Bool).or_else(|_| bad()),
        Ty::Unit => match d.clone().try_cast::<UnitRef>() {
            Some(u) => Ok(Value::Unit(u.0)),
            None => bad(),
        },
        Ty::Side => match d.clone().try_cast::<SideRef>() {
            Some(s) => Ok(Value::Side(s.0)),
            None => bad(),
        },
        Ty::Enum(_) | Ty::Symbols(_) => {
            let Ok(s) = d.clone().into_string() else {
                return bad();
            };
            let allowed: &[u32] = match ty {
                Ty::Enum(e) => &rs.enums[*e as usize].variants,
                Ty::Symbols(v) => v,
                _ => unreachable!(),
            };
            match allowed.iter().find(|&&x| rs.symbols[x as usize] == s) {
                Some(x) => Ok(Value::Sym(*x)),
                None => bad(),
            }
        }
    }
}

fn eval_err(e: EvalError) -> Box<EvalAltResult> {
    match e {
        EvalError::NotStatic => NOT_STATIC.into(),
        EvalError::Fault(d) => d.message.clone().into(),
    }
}

// ------------------------------------------------------------ the API

/// Evaluate a compiled expression in the current call.
fn eval_in(env: &mut Env, e: &Ex) -> Res<Dynamic> {
    let rs = env.ev.rs;
    let c = env.store.ctx();
    let mut frame = [];
    let v = env
        .ev
        .eval(c, e, &mut frame, &mut *env.dice)
        .map_err(eval_err)?;
    to_dynamic(rs, v)
}

fn unit_arg(u: &UnitRef, env: &Env) -> Res<usize> {
    let u = u.0 as usize;
    if u >= env.store.world().units.len() {
        return err(format!("there is no unit #{u}"));
    }
    Ok(u)
}

/// A call's arguments as values of the parameters' types (`what` names
/// the callee in the error for a wrong count).
fn typed_args<'t>(
    rs: &Ruleset,
    what: &str,
    args: &[Dynamic],
    tys: impl ExactSizeIterator<Item = &'t Ty>,
) -> Res<Vec<Value>> {
    if tys.len() != args.len() {
        return err(format!(
            "{what} takes {} arguments, not {}",
            tys.len(),
            args.len()
        ));
    }
    args.iter()
        .zip(tys)
        .map(|(a, t)| to_value(rs, a, t))
        .collect()
}

/// `fact(name, args...)`.
fn fact(name: &str, args: &[Dynamic]) -> Res<Dynamic> {
    with_env(|env| {
        let rs = env.ev.rs;
        let Some(f) = rs.fact(name) else {
            return err(format!("there is no fact `{name}`"));
        };
        let args = typed_args(
            rs,
            &format!("fact `{name}`"),
            args,
            rs.facts[f as usize].params.iter(),
        )?;
        let args = args.into_iter().map(Ex::Const).collect();
        eval_in(env, &Ex::Fact(f, args))
    })
}

/// What `rule(name, ...)` names: a define, a table or a quantity.
#[derive(Clone, Copy)]
enum RuleRef {
    Define(Id),
    Table(Id),
    Quantity(Id),
}

impl RuleRef {
    fn named(rs: &Ruleset, name: &str) -> Option<RuleRef> {
        let at = |v: Option<usize>| v.map(|i| i as Id);
        at(rs.defines.iter().position(|d| d.name == name))
            .map(RuleRef::Define)
            .or_else(|| at(rs.tables.iter().position(|d| d.name == name)).map(RuleRef::Table))
            .or_else(|| {
                at(rs.quantities.iter().position(|d| d.func.name == name)).map(RuleRef::Quantity)
            })
    }
    fn params(self, rs: &Ruleset) -> &[(String, Ty)] {
        match self {
            RuleRef::Define(i) => &rs.defines[i as usize].params,
            RuleRef::Table(i) => &rs.tables[i as usize].params,
            RuleRef::Quantity(i) => &rs.quantities[i as usize].func.params,
        }
    }
}

/// `rule(name, args...)`: a define, a table, or a quantity with its modifiers.
fn rule(name: &str, args: &[Dynamic]) -> Res<Dynamic> {
    with_env(|env| {
        let rs = env.ev.rs;
        let Some(r) = RuleRef::named(rs, name) else {
            return err(format!("there is no define, table or quantity `{name}`"));
        };
        let args = typed_args(
            rs,
            &format!("`{name}`"),
            args,
            r.params(rs).iter().map(|p| &p.1),
        )?;
        let args: Vec<Ex> = args.into_iter().map(Ex::Const).collect();
        let e = match r {
            RuleRef::Define(id) => Ex::Define(id, args),
            RuleRef::Table(id) => Ex::Table(id, args),
            RuleRef::Quantity(id) => Ex::Quantity(id, args),
        };
        eval_in(env, &e)
    })
}

/// The index of a unit's (or side's) state in the flat state array.
fn state_index(env: &Env, side: bool, who: u16, name: &str) -> Res<(usize, Ty)> {
    let rs = env.ev.rs;
    let (id, list) = if side {
        (rs.side_state(name), &rs.side_states)
    } else {
        (rs.state(name), &rs.states)
    };
    let Some(id) = id else {
        return err(format!(
            "there is no {} `{name}`",
            if side { "side state" } else { "state" }
        ));
    };
    Ok((
        who as usize * list.len() + id as usize,
        list[id as usize].ty.clone(),
    ))
}

fn read_state(side: bool, who: u16, name: &str) -> Res<Dynamic> {
    with_env(|env| {
        let (i, _) = state_index(env, side, who, name)?;
        let c = env.store.ctx();
        if let Some(d) = c.dirty {
            let id = i % if side {
                env.ev.rs.side_states.len()
            } else {
                env.ev.rs.states.len()
            };
            if (side && d.side_states[id]) || (!side && d.states[id]) {
                return Err(NOT_STATIC.into());
            }
        }
        let v = if side { c.side_state[i] } else { c.state[i] };
        to_dynamic(env.ev.rs, v)
    })
}

fn write_state(side: bool, who: u16, name: &str, op: ModOp, v: &Dynamic) -> Res<()> {
    with_env(|env| {
        let (i, ty) = state_index(env, side, who, name)?;
        let rs = env.ev.rs;
        let v = match op {
            ModOp::Set => to_value(rs, v, &ty)?,
            _ => Value::Int(
                v.as_int()
                    .or_else(|t| err(format!("expected an amount, got {t}")))?,
            ),
        };
        let slot = match &mut env.store {
            Store::Battle(w) => {
                if side {
                    &mut w.side_state[i]
                } else {
                    &mut w.state[i]
                }
            }
            Store::Run {
                state, side_state, ..
            } => {
                if side {
                    &mut side_state[i]
                } else {
                    &mut state[i]
                }
            }
            Store::Read(_) => return err("a fact hook cannot change the game"),
        };
        *slot = match op {
            ModOp::Set => v,
            _ => {
                let (Some(cur), Some(a)) = (slot.as_int(), v.as_int()) else {
                    return err(format!("`{name}` is not a number"));
                };
                Value::Int(crate::dice::apply_op(op, cur, a))
            }
        };
        env.ev.forget();
        Ok(())
    })
}

fn roll_one(env: &mut Env, die: &str) -> Res<(i64, usize)> {
    let rs = env.ev.rs;
    let Some(d) = rs.dice.iter().position(|d| d.name == die) else {
        return err(format!("there is no die `{die}`"));
    };
    let def: &DieDef = &rs.dice[d];
    let f = env
        .dice
        .face(def)
        .map_err(|e| -> Box<EvalAltResult> { e.into() })?;
    Ok((def.faces[f].1, f))
}

fn outcome_slot(env: &Env, name: &str) -> Res<(usize, Option<usize>)> {
    let Some(o) = &env.outs else {
        return err("only a hook on a procedure has outcomes");
    };
    let Some(i) = o.defs.iter().position(|d| d.name == name) else {
        return err(format!("the procedure has no outcome `{name}`"));
    };
    Ok((i, o.map.get(i).copied().flatten().map(|j| j as usize)))
}

fn name_of(env: &Env, v: Value) -> String {
    env.store.world().show(env.ev.rs, v)
}

/// Does unit `u` have the type, class, group or quality `what`?
fn unit_is(env: &Env, u: usize, what: &str) -> Res<bool> {
    let rs = env.ev.rs;
    let inst = &env.store.world().units[u];
    let ty = &rs.unit_types[inst.ty as usize];
    if ty.name.eq_ignore_ascii_case(what) {
        return Ok(true);
    }
    if let Some(c) = rs.classes.iter().position(|c| c == what) {
        return Ok(ty.classes[c]);
    }
    if let Some((_, flags)) = rs.groups.iter().find(|(g, _)| g == what) {
        return Ok(flags[inst.ty as usize]);
    }
    if let Some(q) = rs.quality(what) {
        return Ok(inst.quality == Some(q));
    }
    if rs.unit_type(what).is_some() {
        return Ok(false);
    }
    err(format!(
        "`{what}` is not a unit type, class, group or quality"
    ))
}

fn units_where(keep: impl Fn(&World, usize) -> bool) -> Res<Array> {
    with_env(|env| {
        let w = env.store.world();
        Ok((0..w.units.len())
            .filter(|&i| w.field.as_ref().is_none_or(|f| f.on_table[i]) && keep(w, i))
            .map(|i| Dynamic::from(UnitRef(i as u16)))
            .collect())
    })
}

/// `perform(name, [args])`: run one of the ruleset's procedures (with its own
/// hooks) as the language's `call` does; its outcomes as a map.
fn call_procedure(env: &mut Env, name: &str, args: &[Dynamic]) -> Res<rhai::Map> {
    let rs = env.ev.rs;
    let Some(p) = rs.procedure(name) else {
        return err(format!("there is no procedure `{name}`"));
    };
    let pd = &rs.procedures[p as usize];
    let vals = typed_args(
        rs,
        &format!("procedure `{name}`"),
        args,
        pd.params.iter().map(|p| &p.1),
    )?;
    let run = |w: &mut World, dice: &mut dyn DiceSource, log: &mut Vec<String>| {
        crate::procedures::run_whole(env.ev, w, p, &vals, dice, log)
            .map_err(|d| -> Box<EvalAltResult> { d.message.into() })
    };
    let outs = match &mut env.store {
        Store::Battle(w) => run(w, &mut *env.dice, &mut *env.log)?,
        Store::Run {
            world,
            state,
            side_state,
        } => {
            // The situation's world with this run's state, changed and
            // copied back.
            let mut w = (*world).clone();
            w.state.copy_from_slice(state);
            w.side_state.copy_from_slice(side_state);
            let o = run(&mut w, &mut *env.dice, &mut *env.log)?;
            state.copy_from_slice(&w.state);
            side_state.copy_from_slice(&w.side_state);
            o
        }
        Store::Read(_) => return err("a fact hook cannot change the game"),
    };
    env.ev.forget();
    let mut m = rhai::Map::new();
    for (o, v) in pd.outcomes.iter().zip(outs) {
        m.insert(o.name.as_str().into(), to_dynamic(rs, v)?);
    }
    Ok(m)
}

/// The names of the API's functions (a script may call these, the stdlib
/// helpers, its own functions and rhai's standard ones).
pub const API: &[&str] = &[
    "fact",
    "rule",
    "state",
    "side_state",
    "stat",
    "option",
    "is_a",
    "type_of_unit",
    "quality_of",
    "side",
    "name",
    "units",
    "friends",
    "enemies",
    "roll",
    "set_state",
    "add_state",
    "set_side_state",
    "add_side_state",
    "note",
    "outcome",
    "set_outcome",
    "fall_back",
    "perform",
    "log",
];

/// API functions that change the game (a fact hook may not call them).
const EFFECTS: &[&str] = &[
    "set_state",
    "add_state",
    "set_side_state",
    "add_side_state",
    "note",
    "set_outcome",
    "fall_back",
    "perform",
];

fn register(e: &mut Engine) {
    e.register_type_with_name::<UnitRef>("Unit")
        .register_type_with_name::<SideRef>("Side")
        .register_fn("==", |a: UnitRef, b: UnitRef| a == b)
        .register_fn("!=", |a: UnitRef, b: UnitRef| a != b)
        .register_fn("==", |a: SideRef, b: SideRef| a == b)
        .register_fn("!=", |a: SideRef, b: SideRef| a != b)
        .register_fn("to_string", |u: &mut UnitRef| {
            with_env(|env| Ok(name_of(env, Value::Unit(u.0)))).unwrap_or_default()
        })
        .register_fn("to_string", |s: &mut SideRef| {
            with_env(|env| Ok(name_of(env, Value::Side(s.0)))).unwrap_or_default()
        })
        .register_fn("to_debug", |u: &mut UnitRef| format!("unit #{}", u.0))
        .register_fn("to_debug", |s: &mut SideRef| format!("side #{}", s.0));

    // Reading.
    e.register_fn("fact", |n: &str| fact(n, &[]))
        .register_fn("fact", |n: &str, a: Dynamic| fact(n, &[a]))
        .register_fn("fact", |n: &str, a: Dynamic, b: Dynamic| fact(n, &[a, b]))
        .register_fn("fact", |n: &str, a: Dynamic, b: Dynamic, c: Dynamic| {
            fact(n, &[a, b, c])
        })
        .register_fn("rule", |n: &str| rule(n, &[]))
        .register_fn("rule", |n: &str, a: Dynamic| rule(n, &[a]))
        .register_fn("rule", |n: &str, a: Dynamic, b: Dynamic| rule(n, &[a, b]))
        .register_fn("rule", |n: &str, a: Dynamic, b: Dynamic, c: Dynamic| {
            rule(n, &[a, b, c])
        })
        .register_fn("state", |u: UnitRef, n: &str| read_state(false, u.0, n))
        .register_fn("side_state", |s: SideRef, n: &str| read_state(true, s.0, n))
        .register_fn("stat", |u: UnitRef, n: &str| {
            with_env(|env| {
                let u = unit_arg(&u, env)?;
                let Some(s) = env.ev.rs.stat(n) else {
                    return err(format!("there is no stat `{n}`"));
                };
                eval_in(
                    env,
                    &Ex::Stat(Box::new(Ex::Const(Value::Unit(u as u16))), s),
                )
            })
        })
        .register_fn("option", |n: &str| {
            with_env(|env| match env.ev.rs.option(n) {
                Some(o) => Ok(env.store.world().options[o as usize]),
                None => err(format!("there is no option `{n}`")),
            })
        })
        .register_fn("is_a", |u: UnitRef, what: &str| {
            with_env(|env| {
                let u = unit_arg(&u, env)?;
                unit_is(env, u, what)
            })
        })
        .register_fn("type_of_unit", |u: UnitRef| {
            with_env(|env| {
                let u = unit_arg(&u, env)?;
                let ty = env.store.world().units[u].ty;
                Ok(env.ev.rs.unit_types[ty as usize].name.clone())
            })
        })
        .register_fn("quality_of", |u: UnitRef| {
            with_env(|env| {
                let u = unit_arg(&u, env)?;
                Ok(match env.store.world().units[u].quality {
                    Some(q) => Dynamic::from(env.ev.rs.qualities[q as usize].name.clone()),
                    None => Dynamic::UNIT,
                })
            })
        })
        .register_fn("side", |u: UnitRef| {
            with_env(|env| {
                let u = unit_arg(&u, env)?;
                Ok(SideRef(env.store.world().units[u].side))
            })
        })
        .register_fn("name", |u: UnitRef| {
            with_env(|env| Ok(name_of(env, Value::Unit(u.0))))
        })
        .register_fn("name", |s: SideRef| {
            with_env(|env| Ok(name_of(env, Value::Side(s.0))))
        })
        .register_fn("units", || units_where(|_, _| true))
        .register_fn("friends", |u: UnitRef| {
            units_where(move |w, i| {
                i != u.0 as usize && w.units[i].side == w.units[u.0 as usize].side
            })
        })
        .register_fn("enemies", |u: UnitRef| {
            units_where(move |w, i| w.units[i].side != w.units[u.0 as usize].side)
        });

    // Dice: only the engine's generator.
    e.register_fn("roll", |die: &str| {
        with_env(|env| Ok(roll_one(env, die)?.0))
    })
    .register_fn("roll", |n: i64, die: &str| {
        with_env(|env| {
            if !(0..=MAX_ARRAY as i64).contains(&n) {
                return err(format!("cannot roll {n} dice"));
            }
            (0..n)
                .map(|_| roll_one(env, die).map(|r| Dynamic::from(r.0)))
                .collect::<Res<Array>>()
        })
    });

    // Changing the game, through the language's own operations.
    e.register_fn("set_state", |u: UnitRef, n: &str, v: Dynamic| {
        write_state(false, u.0, n, ModOp::Set, &v)
    })
    .register_fn("add_state", |u: UnitRef, n: &str, v: Dynamic| {
        write_state(false, u.0, n, ModOp::Add, &v)
    })
    .register_fn("set_side_state", |s: SideRef, n: &str, v: Dynamic| {
        write_state(true, s.0, n, ModOp::Set, &v)
    })
    .register_fn("add_side_state", |s: SideRef, n: &str, v: Dynamic| {
        write_state(true, s.0, n, ModOp::Add, &v)
    })
    .register_fn("note", |n: &str, args: Array, v: Dynamic| {
        with_env(|env| {
            let rs = env.ev.rs;
            let Some(f) = rs.fact(n) else {
                return err(format!("there is no fact `{n}`"));
            };
            let fd = &rs.facts[f as usize];
            if fd.hook.is_some() || fd.battle.is_some() {
                return err(format!("fact `{n}` is derived, so it cannot be noted"));
            }
            let key = typed_args(rs, &format!("fact `{n}`"), &args, fd.params.iter())?;
            let v = to_value(rs, &v, &fd.ty)?;
            match &mut env.store {
                Store::Battle(w) => {
                    w.set_fact(f, key, v);
                    env.ev.forget();
                }
                // Noting is bookkeeping for later steps of a battle; the
                // odds of one resolution ignore it, as they ignore `note`.
                Store::Run { .. } => {}
                Store::Read(_) => return err("a fact hook cannot change the game"),
            }
            Ok(())
        })
    })
    .register_fn("outcome", |n: &str| {
        with_env(|env| {
            let (i, slot) = outcome_slot(env, n)?;
            let o = env.outs.as_ref().expect("checked");
            let v = match slot {
                Some(j) => o.values[j],
                None => crate::odds::default_outcome(&o.defs[i].ty),
            };
            to_dynamic(env.ev.rs, v)
        })
    })
    .register_fn("set_outcome", |n: &str, v: Dynamic| {
        with_env(|env| {
            let (i, slot) = outcome_slot(env, n)?;
            let rs = env.ev.rs;
            let o = env.outs.as_mut().expect("checked");
            let v = to_value(rs, &v, &o.defs[i].ty)?;
            if let Some(j) = slot {
                o.values[j] = v;
            }
            Ok(())
        })
    })
    .register_fn("fall_back", |u: UnitRef, d: i64| {
        with_env(|env| {
            let u = unit_arg(&u, env)?;
            match &mut env.store {
                Store::Battle(w) => {
                    let moved = match w.field.as_mut() {
                        Some(f) => f.fall_back(u, d as f64),
                        None => 0.0,
                    };
                    env.ev.forget();
                    let line = format!("{} falls back {moved:.1}", w.units[u].name);
                    env.log.push(line);
                    Ok(moved.round() as i64)
                }
                // Positions do not enter the odds of one resolution.
                Store::Run { .. } => Ok(0),
                Store::Read(_) => err("a fact hook cannot change the game"),
            }
        })
    })
    .register_fn("perform", |n: &str, args: Array| {
        with_env(|env| call_procedure(env, n, &args))
    })
    .register_fn("log", |s: &str| {
        with_env(|env| {
            env.log.push(s.to_string());
            Ok(())
        })
    });
}

/// The one engine every hook runs on.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut e = Engine::new();
        e.set_max_operations(MAX_OPERATIONS)
            .set_max_call_levels(MAX_CALL_LEVELS)
            .set_max_string_size(MAX_STRING)
            .set_max_array_size(MAX_ARRAY)
            .set_max_map_size(MAX_MAP)
            .set_max_expr_depths(64, 32)
            .set_strict_variables(true);
        e.disable_symbol("eval");
        e.on_print(|s| {
            let _ = with_env(|env| {
                env.log.push(s.to_string());
                Ok(())
            });
        });
        e.on_debug(|_, _, _| {});
        register(&mut e);
        e
    })
}

/// The stdlib helpers, compiled once.
fn helpers() -> &'static AST {
    static HELPERS: OnceLock<AST> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let (_, text) = STDLIB_SCRIPTS[0];
        engine()
            .compile(text)
            .expect("stdlib/hooks.rhai compiles (tested)")
    })
}

// ------------------------------------------------------------ compiling

/// What the compiler knows of a hook before its script is compiled.
pub struct Declared<'a> {
    pub name: &'a str,
    pub doc: Option<String>,
    pub point: Point,
    pub vars: Vec<String>,
    /// The outcomes a script may read and set (a procedure hook's).
    pub outcomes: &'a [OutcomeDef],
    pub text: &'a str,
    pub span: Span,
}

fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i as u32 + 1))
        .collect()
}

/// The span of a script position (its whole line from the column on).
fn span_at(span: Span, lines: &[u32], text_len: u32, pos: Position) -> Span {
    let Some(line) = pos.line() else {
        return span;
    };
    let start = lines.get(line - 1).copied().unwrap_or(0);
    let end = lines.get(line).map(|e| e - 1).unwrap_or(text_len);
    let col = pos.position().unwrap_or(1).saturating_sub(1) as u32;
    let from = (start + col).min(end);
    Span {
        file: span.file,
        start: span.start + from,
        end: span.start + end.max(from),
    }
}

/// Compile a hook's script and check what it names against the ruleset.
pub fn compile(rs: &Ruleset, d: Declared) -> Result<HookDef, Diag> {
    let lines = line_starts(d.text);
    let at = |pos: Position| span_at(d.span, &lines, d.text.len() as u32, pos);
    // Variables, not constants: the optimiser would fold a constant's
    // placeholder value into the script.
    let mut scope = Scope::new();
    for v in &d.vars {
        scope.push(v.as_str(), Dynamic::UNIT);
    }
    let ast = engine().compile_with_scope(&scope, d.text).map_err(|e| {
        Diag::new(
            "muster::hook",
            format!("the script of hook `{}` does not compile: {}", d.name, e.0),
        )
        .at(at(e.1), "here")
        .help(format!(
            "hooks are written in rhai; this hook sees {}",
            if d.vars.is_empty() {
                "no variables".to_string()
            } else {
                d.vars.join(", ")
            }
        ))
    })?;
    // Only the hook's own text is checked: the helpers are the ruleset's
    // only when it has what they name (checked when they run).
    let own: Vec<String> = ast
        .iter_functions()
        .chain(helpers().iter_functions())
        .map(|f| f.name.to_string())
        .collect();
    let mut problem: Option<Diag> = None;
    let mut rolls = false;
    let is_fact = matches!(d.point, Point::Fact(_));
    ast.walk(&mut |path: &[rhai::ASTNode]| {
        // A call is an expression, or a statement of its own.
        let (call, pos) = match path.last() {
            Some(rhai::ASTNode::Expr(rhai::Expr::FnCall(c, p) | rhai::Expr::MethodCall(c, p)))
            | Some(rhai::ASTNode::Stmt(rhai::Stmt::FnCall(c, p))) => (c, *p),
            _ => return true,
        };
        if call.is_operator_call() {
            return true;
        }
        let f = call.name.as_str();
        rolls |= f == "roll";
        let lit = |i: usize| match call.args.get(i) {
            Some(rhai::Expr::StringConstant(s, _)) => Some(s.as_str()),
            _ => None,
        };
        let wrong = |msg: String, help: &str| {
            Diag::new("muster::hook", format!("hook `{}`: {msg}", d.name))
                .at(at(pos), "here")
                .help(help.to_string())
        };
        let found = check_call(rs, &d, f, call.args.len(), &lit, is_fact, &own);
        if let Err((msg, help)) = found {
            problem = Some(wrong(msg, &help));
            return false;
        }
        true
    });
    if let Some(p) = problem {
        return Err(p);
    }
    if is_fact && rolls {
        return Err(Diag::new(
            "muster::hook",
            format!("hook `{}` derives a fact but rolls dice", d.name),
        )
        .at(d.span, "this script calls roll()")
        .help("a fact has one value in a situation; roll in a procedure, or a hook on one"));
    }
    let ast = helpers().merge(&ast);
    Ok(HookDef {
        name: d.name.to_string(),
        doc: d.doc,
        point: d.point,
        vars: d.vars,
        rolls,
        ast: Arc::new(ast),
        span: d.span,
        lines,
    })
}

/// Check one call of a script against the ruleset: the names its literal
/// arguments give, and effects where they are not allowed.
fn check_call<'a>(
    rs: &Ruleset,
    d: &Declared,
    f: &str,
    nargs: usize,
    lit: &dyn Fn(usize) -> Option<&'a str>,
    is_fact: bool,
    own: &[String],
) -> Result<(), (String, String)> {
    let missing = |what: &str, n: &str, all: Vec<&str>| {
        let sugg = crate::compile::suggest(n, all.into_iter());
        (
            format!("there is no {what} `{n}`"),
            match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the ruleset declares every {what} a hook can read"),
            },
        )
    };
    if own.iter().any(|o| o == f) && !API.contains(&f) {
        return Ok(());
    }
    if is_fact && EFFECTS.contains(&f) {
        return Err((
            format!("a fact hook cannot change the game (it calls `{f}`)"),
            "derive the value only; change state in a hook on a procedure or step".into(),
        ));
    }
    match f {
        "fact" | "note" => {
            if let Some(n) = lit(0) {
                let Some(id) = rs.fact(n) else {
                    return Err(missing(
                        "fact",
                        n,
                        rs.facts.iter().map(|x| x.name.as_str()).collect(),
                    ));
                };
                let want = rs.facts[id as usize].params.len();
                if f == "fact" && nargs != want + 1 {
                    return Err((
                        format!("fact `{n}` takes {want} arguments, not {}", nargs - 1),
                        "pass the fact's arguments after its name".into(),
                    ));
                }
            }
        }
        "rule" => {
            if let Some(n) = lit(0) {
                let Some(params) = RuleRef::named(rs, n).map(|r| r.params(rs)) else {
                    let mut all: Vec<&str> = rs.defines.iter().map(|x| x.name.as_str()).collect();
                    all.extend(rs.tables.iter().map(|x| x.name.as_str()));
                    all.extend(rs.quantities.iter().map(|x| x.func.name.as_str()));
                    return Err(missing("define, table or quantity", n, all));
                };
                if nargs != params.len() + 1 {
                    return Err((
                        format!("`{n}` takes {} arguments, not {}", params.len(), nargs - 1),
                        "pass the rule's arguments after its name".into(),
                    ));
                }
            }
        }
        "state" | "set_state" | "add_state" => {
            if let Some(n) = lit(1) {
                if rs.state(n).is_none() {
                    return Err(missing(
                        "state",
                        n,
                        rs.states.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        "side_state" | "set_side_state" | "add_side_state" => {
            if let Some(n) = lit(1) {
                if rs.side_state(n).is_none() {
                    return Err(missing(
                        "side state",
                        n,
                        rs.side_states.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        "stat" => {
            if let Some(n) = lit(1) {
                if rs.stat(n).is_none() {
                    return Err(missing(
                        "stat",
                        n,
                        rs.stats.iter().map(|x| x.as_str()).collect(),
                    ));
                }
            }
        }
        "option" => {
            if let Some(n) = lit(0) {
                if rs.option(n).is_none() {
                    return Err(missing(
                        "option",
                        n,
                        rs.options.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        "roll" => {
            if let Some(n) = lit(nargs.saturating_sub(1)) {
                if !rs.dice.iter().any(|x| x.name == n) {
                    return Err(missing(
                        "die",
                        n,
                        rs.dice.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        "is_a" => {
            if let Some(n) = lit(1) {
                let known = rs.unit_type(n).is_some()
                    || rs.classes.iter().any(|c| c == n)
                    || rs.groups.iter().any(|(g, _)| g == n)
                    || rs.quality(n).is_some();
                if !known {
                    let mut all: Vec<&str> =
                        rs.unit_types.iter().map(|x| x.name.as_str()).collect();
                    all.extend(rs.classes.iter().map(|x| x.as_str()));
                    all.extend(rs.groups.iter().map(|x| x.0.as_str()));
                    all.extend(rs.qualities.iter().map(|x| x.name.as_str()));
                    return Err(missing("unit type, class, group or quality", n, all));
                }
            }
        }
        "perform" => {
            if let Some(n) = lit(0) {
                if rs.procedure(n).is_none() {
                    return Err(missing(
                        "procedure",
                        n,
                        rs.procedures.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        "outcome" | "set_outcome" => {
            if d.outcomes.is_empty()
                && matches!(
                    d.point,
                    Point::Fact(_) | Point::BeforeStep(_) | Point::AfterStep(_)
                )
            {
                return Err((
                    format!("only a hook on a procedure has outcomes (it calls `{f}`)"),
                    "attach the hook to a procedure with `before`, `after` or `replace`".into(),
                ));
            }
            if let Some(n) = lit(0) {
                if !d.outcomes.iter().any(|o| o.name == n) {
                    return Err(missing(
                        "outcome",
                        n,
                        d.outcomes.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

// ------------------------------------------------------------ running

/// Why a hook call did not finish.
pub enum Failed {
    /// A real problem, reported.
    Fault(Box<Diag>),
    /// It read state a specialisation cannot know yet.
    NotStatic,
    /// It wanted a die beyond the scripted ones (exact odds enumerate them).
    MoreDice,
}

impl From<Failed> for EvalError {
    fn from(f: Failed) -> Self {
        match f {
            Failed::Fault(d) => EvalError::Fault(d),
            _ => EvalError::NotStatic,
        }
    }
}

impl Failed {
    /// As a diagnostic (the markers become internal errors).
    pub fn diag(self) -> Diag {
        match self {
            Failed::Fault(d) => *d,
            Failed::NotStatic => Diag::new("muster::hook", "a hook read a value not known yet"),
            Failed::MoreDice => Diag::new("muster::hook", "a hook rolled more dice than given"),
        }
    }
}

/// The innermost error (through calls of script functions).
fn root(e: &EvalAltResult) -> &EvalAltResult {
    match e {
        EvalAltResult::ErrorInFunctionCall(_, _, inner, _) => root(inner),
        e => e,
    }
}

fn failure(rs: &Ruleset, h: &HookDef, e: &EvalAltResult) -> Failed {
    let r = root(e);
    if let EvalAltResult::ErrorRuntime(v, _) = r {
        if let Some(s) = v.read_lock::<rhai::ImmutableString>() {
            if s.as_str() == NOT_STATIC {
                return Failed::NotStatic;
            }
            if s.as_str() == MORE_DICE {
                return Failed::MoreDice;
            }
        }
    }
    let (what, help) = match r {
        EvalAltResult::ErrorTooManyOperations(_) => (
            format!("it ran past its limit of {MAX_OPERATIONS} operations"),
            "a hook call must finish within its limit: look for a loop that never ends".to_string(),
        ),
        EvalAltResult::ErrorStackOverflow(_) => (
            format!("it called functions more than {MAX_CALL_LEVELS} deep"),
            "look for a function that calls itself without end".to_string(),
        ),
        EvalAltResult::ErrorDataTooLarge(what, _) => (
            format!("{what} grew past its limit (strings {MAX_STRING}, arrays {MAX_ARRAY}, maps {MAX_MAP})"),
            "keep what a hook builds small".to_string(),
        ),
        EvalAltResult::ErrorRuntime(v, _) => (
            v.to_string(),
            "the script threw this error, or the ruleset refused a call it made".to_string(),
        ),
        other => (
            other.to_string(),
            "see docs/LANGUAGE.md, \"Hooks\", for the script API".to_string(),
        ),
    };
    // The innermost position inside this script (a helper's, else the call's).
    let pos = match r.position() {
        p if !p.is_none() => p,
        _ => e.position(),
    };
    let span = span_at(h.span, &h.lines, h.span.len() as u32, pos);
    Failed::Fault(Box::new(
        Diag::new(
            "muster::hook",
            match rs.id.as_str() {
                // A ruleset without a `ruleset` line: its file names it.
                "" => format!("hook `{}` failed: {what}", h.name),
                id => format!("hook `{}` of ruleset `{id}` failed: {what}", h.name),
            },
        )
        .at(span, format!("in hook `{}`", h.name))
        .help(help),
    ))
}

/// Run hook `hook` with its variables' values, in `env`; the script's value.
pub fn call(env: &mut Env, hook: Id, vars: &[Value]) -> Result<Dynamic, Failed> {
    let rs = env.ev.rs;
    let h = &rs.hooks[hook as usize];
    let mut scope = Scope::new();
    for (n, v) in h.vars.iter().zip(vars) {
        let d = to_dynamic(rs, *v).map_err(|e| failure(rs, h, &e))?;
        scope.push_constant(n.as_str(), d);
    }
    let p = env as *mut Env as *mut ();
    let prev = CURRENT.with(|c| c.replace(p));
    let _restore = Restore(prev);
    engine()
        .eval_ast_with_scope::<Dynamic>(&mut scope, &h.ast)
        .map_err(|e| failure(rs, h, &e))
}

/// The value of a fact a hook derives (read only, no dice).
pub fn fact_value(
    ev: &Eval,
    c: Ctx,
    hook: Id,
    fact: Id,
    args: &[Value],
) -> Result<Value, EvalError> {
    let mut log = Vec::new();
    let mut env = Env {
        ev,
        store: Store::Read(c),
        dice: &mut NoDice,
        outs: None,
        log: &mut log,
    };
    let d = call(&mut env, hook, args)?;
    let rs = ev.rs;
    to_value(rs, &d, &rs.facts[fact as usize].ty)
        .map_err(|e| EvalError::from(failure(rs, &rs.hooks[hook as usize], &e)))
}

/// Dice for a hook under exact odds: the given faces, then a request for more.
pub struct Prefix<'a> {
    pub faces: &'a [usize],
    pub next: usize,
    /// The die wanted past the prefix, if one was.
    pub wanted: Option<DieDef>,
}

impl DiceSource for Prefix<'_> {
    fn face(&mut self, die: &DieDef) -> Result<usize, String> {
        match self.faces.get(self.next) {
            Some(f) => {
                self.next += 1;
                Ok(*f)
            }
            None => {
                self.wanted = Some(die.clone());
                Err(MORE_DICE.into())
            }
        }
    }
}
