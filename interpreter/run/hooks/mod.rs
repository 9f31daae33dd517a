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
//!
//! Here: the hook points, the per-call environment, values crossing between
//! the language and scripts, the engine, and running a hook (with what
//! the calls nested on one thread share: their chain, their operations,
//! and why they must stop); `api` holds the functions scripts call. A
//! script is compiled, and its calls checked against the API's names, by
//! the compiler ([`crate::compile::scripts`]); here the API has its bodies.

use crate::base::value::Value;
use crate::compile::ir::{DieDef, HookDef, Id, OutcomeDef, Point, Ruleset, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::Span;
use crate::run::dice::DiceSource;
use crate::run::eval::{Ctx, Eval, EvalError, NoDice};
use crate::run::world::World;
use rhai::{Dynamic, Engine, EvalAltResult, Position, Scope};
use std::cell::{Cell, RefCell};

mod api;

use crate::compile::scripts::{
    span_at, MAX_ARRAY, MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH, MAX_MAP, MAX_STRING,
};
use api::register;
use std::sync::OnceLock;

/// The most operations one hook call may take, counting those of every hook
/// it runs through `perform` and `fact` (an endless loop, or performs that
/// multiply, stop here).
pub const MAX_OPERATIONS: u64 = 100_000;
/// What one `perform` counts against [`MAX_OPERATIONS`], so that a loop of
/// performs stops about as soon as a loop of operations: running a
/// procedure from a script costs some tens of script operations (measured:
/// about 2.5 us in odds, where it copies the situation's world, against
/// some 30 ns an operation), less in a battle.
pub const PERFORM_OPERATIONS: u64 = 50;
/// The deepest nesting of hook calls: a hook running another through
/// `perform` or `fact`, which runs another... A hook that runs itself
/// without end stops here, long before the thread's stack runs out.
pub const MAX_HOOK_DEPTH: usize = 16;
/// The deepest chain of script function calls.
pub const MAX_CALL_LEVELS: usize = 32;
/// The stack one hook call may need, its nested hook calls aside (a script
/// at its limits of call depth and expression nesting takes under half of
/// it); a call with less left runs on a new segment of [`STACK_SEGMENT`].
const STACK_RED_ZONE: usize = 1 << 20;
const STACK_SEGMENT: usize = 2 << 20;
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

/// Why the hook calls running on this thread must stop, whatever their
/// scripts do. It is kept here, on the Rust side, and the script is ended
/// with rhai's termination, which `try`/`catch` does not catch (an error
/// value would be the script's to catch, or to fake with `throw`).
#[derive(Clone, Debug)]
enum Stop {
    /// A value read is not known yet (odds are specialising).
    NotStatic,
    /// A die is wanted beyond the prefix of faces given (exact odds).
    MoreDice,
    /// The calls together passed [`MAX_OPERATIONS`]: the chain of hooks
    /// running then, outermost first.
    Operations(Vec<Id>),
    /// A call would have nested past [`MAX_HOOK_DEPTH`]: the chain of hooks,
    /// outermost first, the one refused last.
    TooDeep(Vec<Id>),
    /// What an inner call made of a limit passed, passed out unchanged.
    Fault(Box<Diag>),
}

/// What the hook calls nested on one thread share.
#[derive(Default)]
struct Calls {
    /// The hooks running, outermost first, each with the operations it had
    /// taken when last counted.
    chain: Vec<(Id, u64)>,
    /// Operations of the outermost call so far, its nested calls' included.
    operations: u64,
    stop: Option<Stop>,
}

thread_local! {
    static CALLS: RefCell<Calls> = RefCell::new(Calls::default());
}

/// The error that ends a script for good (rhai does not let `catch` see it).
fn stopped() -> Box<EvalAltResult> {
    EvalAltResult::ErrorTerminated(Dynamic::UNIT, Position::NONE).into()
}

/// Stop the running calls (the first reason given stands).
fn halt(why: Stop) -> Box<EvalAltResult> {
    CALLS.with(|c| {
        c.borrow_mut().stop.get_or_insert(why);
    });
    stopped()
}

fn stopping() -> bool {
    CALLS.with(|c| c.borrow().stop.is_some())
}

impl Calls {
    /// Count `n` more operations of the outermost call; past
    /// [`MAX_OPERATIONS`], the calls stop.
    fn charge(&mut self, n: u64) {
        self.operations += n;
        if self.operations > MAX_OPERATIONS && self.stop.is_none() {
            self.stop = Some(Stop::Operations(self.chain.iter().map(|x| x.0).collect()));
        }
    }
}

/// rhai's progress callback, at every operation of every script (`n` is
/// the script's count so far): count it for the outermost call, and end
/// the script if the calls must stop.
fn progress(n: u64) -> Option<Dynamic> {
    CALLS.with(|c| {
        let c = &mut *c.borrow_mut();
        if c.stop.is_none() {
            let last = c
                .chain
                .last_mut()
                .map_or(n, |top| std::mem::replace(&mut top.1, n));
            c.charge(n.saturating_sub(last));
        }
        c.stop.as_ref().map(|_| Dynamic::UNIT)
    })
}

/// Count a `perform` against the running calls' operations: an error that
/// ends the script if that passes the limit.
fn charge_perform() -> Res<()> {
    CALLS.with(|c| c.borrow_mut().charge(PERFORM_OPERATIONS));
    match stopping() {
        true => Err(stopped()),
        false => Ok(()),
    }
}

/// Run `f` with the current call's [`Env`]; if the calls must stop (`f`
/// or something it ran said so), end the script whatever `f` gave.
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
    let r = f(env);
    if stopping() {
        return Err(stopped());
    }
    r
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
        Value::Pool(p) => {
            return err(format!(
                "the value `{}` is a pool of dice, which scripts cannot hold; roll it in the rule and pass its tallies",
                rs.show_pool(p)
            ))
        }
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
        // A roll is its number (its tallies packed), as the rules hold it.
        Ty::Int | Ty::Tallies(_) => d.as_int().map(Value::Int).or_else(|_| bad()),
        Ty::Dice => bad(),
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
        EvalError::NotStatic => halt(Stop::NotStatic),
        EvalError::Fault(d) => d.message.clone().into(),
    }
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
            .set_max_expr_depths(MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH)
            .set_strict_variables(true);
        e.on_progress(progress);
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

/// Where in hook `h`'s script the error `e` arose (the innermost position
/// inside this script, a helper's, else the call's); the whole script if
/// there is no error or no position.
fn place(h: &HookDef, e: Option<&EvalAltResult>) -> Span {
    let Some(e) = e else {
        return h.span;
    };
    let pos = match root(e).position() {
        p if !p.is_none() => p,
        _ => e.position(),
    };
    span_at(h.span, &h.lines, h.span.len() as u32, pos)
}

/// "hook `NAME` of ruleset `ID` failed: WHAT".
fn failed_message(rs: &Ruleset, name: &str, what: &str) -> String {
    match rs.id.as_str() {
        // A ruleset without a `ruleset` line: its file names it.
        "" => format!("hook `{name}` failed: {what}"),
        id => format!("hook `{name}` of ruleset `{id}` failed: {what}"),
    }
}

/// The failure of a hook call that ended with the script's error `e`.
fn failure(rs: &Ruleset, h: &HookDef, e: &EvalAltResult) -> Failed {
    let r = root(e);
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
    Failed::Fault(Box::new(
        Diag::new("muster::hook", failed_message(rs, &h.name, &what))
            .at(place(h, Some(e)), format!("in hook `{}`", h.name))
            .help(help),
    ))
}

/// Where a hook runs, in words: "replaces `shoot`", "derives `loaded`".
fn point_text(rs: &Ruleset, p: &Point) -> String {
    let proc = |i: &Id| &rs.procedures[*i as usize].name;
    match p {
        Point::Before(i) => format!("before `{}`", proc(i)),
        Point::After(i) => format!("after `{}`", proc(i)),
        Point::Replace(i) => format!("replaces `{}`", proc(i)),
        Point::BeforeStep(s) => format!("before step \"{s}\""),
        Point::AfterStep(s) => format!("after step \"{s}\""),
        Point::Fact(f) => format!("derives `{}`", rs.facts[*f as usize].name),
    }
}

/// A chain of hooks, each with its point: "`a` (replaces `p`) → `b` (...)".
fn chain_text(rs: &Ruleset, chain: &[Id]) -> String {
    chain
        .iter()
        .map(|&h| {
            let d = &rs.hooks[h as usize];
            format!("`{}` ({})", d.name, point_text(rs, &d.point))
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The last cycle in a chain of hooks: from a hook's last run but one to
/// its last (`a`, `b`, `a`), if some hook runs twice.
fn last_cycle(chain: &[Id]) -> Option<&[Id]> {
    (1..chain.len()).rev().find_map(|j| {
        chain[..j]
            .iter()
            .rposition(|x| *x == chain[j])
            .map(|i| &chain[i..=j])
    })
}

/// The diagnostic of a call nested past [`MAX_HOOK_DEPTH`], made by the
/// call it would have nested in (`h`, whose error `e` is at the `perform`
/// or `fact` that asked for it). `chain` ends with the hook refused; the
/// message shows the last cycle in it, if there is one.
fn too_deep(rs: &Ruleset, h: &HookDef, e: Option<&EvalAltResult>, chain: &[Id]) -> Diag {
    let what = match last_cycle(chain) {
        Some(c) => {
            let (last, c) = c.split_last().expect("a cycle");
            format!(
                "{}, more than {MAX_HOOK_DEPTH} deep: {} → `{}`",
                if c.len() == 1 {
                    "it runs itself again and again"
                } else {
                    "hooks run one another again and again"
                },
                chain_text(rs, c),
                rs.hooks[*last as usize].name
            )
        }
        None => format!(
            "hooks run one another more than {MAX_HOOK_DEPTH} deep: {}",
            chain_text(rs, chain)
        ),
    };
    Diag::new("muster::hook", failed_message(rs, &h.name, &what))
        .at(
            place(h, e),
            format!("in hook `{}`, {MAX_HOOK_DEPTH} hooks deep", h.name),
        )
        .help(format!(
            "a hook that performs its own procedure or reads its own fact, directly or through other hooks, runs itself again: such a chain must end within {MAX_HOOK_DEPTH} nested hook calls, and one that never ends stops here"
        ))
}

/// The diagnostic of calls that together passed [`MAX_OPERATIONS`], made by
/// the innermost (`h`, stopped at `e`); `chain` is the hooks running then.
fn too_long(rs: &Ruleset, h: &HookDef, e: Option<&EvalAltResult>, chain: &[Id]) -> Diag {
    let outer = &rs.hooks[chain[0] as usize];
    let what = format!(
        "it ran past its limit of {MAX_OPERATIONS} operations, counting the hooks it ran and {PERFORM_OPERATIONS} for each `perform`: {}",
        chain_text(rs, chain)
    );
    Diag::new("muster::hook", failed_message(rs, &outer.name, &what))
        .at(place(h, e), format!("in hook `{}`", h.name))
        .help("a hook call, with every hook it runs, must finish within the limit: look for a loop that never ends, or performs that multiply")
}

/// Enter a call of hook `hook` on this thread: false if it may not run
/// (it would nest too deep, or the calls around it are stopping).
fn enter(hook: Id) -> bool {
    CALLS.with(|c| {
        let c = &mut *c.borrow_mut();
        if c.chain.is_empty() {
            c.operations = 0;
            c.stop = None;
        } else if c.stop.is_some() {
            return false;
        } else if c.chain.len() >= MAX_HOOK_DEPTH {
            let mut chain: Vec<Id> = c.chain.iter().map(|x| x.0).collect();
            chain.push(hook);
            c.stop = Some(Stop::TooDeep(chain));
            return false;
        }
        c.chain.push((hook, 0));
        true
    })
}

/// Leaves the call [`enter`] entered, however the call ends.
struct Entered;

impl Drop for Entered {
    fn drop(&mut self) {
        CALLS.with(|c| c.borrow_mut().chain.pop());
    }
}

/// After a call of `h` (its chain entry gone) that ended with `e`: why the
/// calls stop, if they do, as this call's failure. The first call to end
/// after a limit was passed makes its diagnostic, at its place in its
/// script; the outermost call clears the reason. Also the operations the
/// outermost call has taken so far.
fn after(rs: &Ruleset, h: &HookDef, e: Option<&EvalAltResult>) -> (Option<Failed>, u64) {
    CALLS.with(|c| {
        let c = &mut *c.borrow_mut();
        match &c.stop {
            Some(Stop::Operations(chain)) => {
                c.stop = Some(Stop::Fault(Box::new(too_long(rs, h, e, chain))))
            }
            Some(Stop::TooDeep(chain)) => {
                c.stop = Some(Stop::Fault(Box::new(too_deep(rs, h, e, chain))))
            }
            _ => {}
        }
        let stop = if c.chain.is_empty() {
            c.stop.take()
        } else {
            c.stop.clone()
        };
        let failed = stop.map(|s| match s {
            Stop::NotStatic => Failed::NotStatic,
            Stop::MoreDice => Failed::MoreDice,
            Stop::Fault(d) => Failed::Fault(d),
            Stop::Operations(_) | Stop::TooDeep(_) => unreachable!("made a diagnostic above"),
        });
        (failed, c.operations)
    })
}

/// Run hook `hook` with its variables' values, in `env`; the script's value.
pub fn call(env: &mut Env, hook: Id, vars: &[Value]) -> Result<Dynamic, Failed> {
    call_counted(env, hook, vars).0
}

/// [`call`], and the operations it took with every hook it ran.
pub fn call_counted(env: &mut Env, hook: Id, vars: &[Value]) -> (Result<Dynamic, Failed>, u64) {
    let rs = env.ev.rs;
    let h = &rs.hooks[hook as usize];
    if !enter(hook) {
        // Nested: the call it would nest in stops and reports.
        let d = Diag::new("muster::hook", "hook calls stopped");
        return (Err(Failed::Fault(Box::new(d))), 0);
    }
    let r = {
        let _entered = Entered;
        // Each call, nested ones too, starts with room for a script at its
        // limits; the depth limit bounds how many such segments there are.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || run_script(env, h, vars))
    };
    let (stop, operations) = after(rs, h, r.as_ref().err().map(|e| &**e));
    let r = match stop {
        Some(f) => Err(f),
        None => r.map_err(|e| failure(rs, h, &e)),
    };
    (r, operations)
}

/// The script of `h` run with `vars`, in `env`.
fn run_script(env: &mut Env, h: &HookDef, vars: &[Value]) -> Res<Dynamic> {
    let rs = env.ev.rs;
    let mut scope = Scope::new();
    for (n, v) in h.vars.iter().zip(vars) {
        scope.push_constant(n.as_str(), to_dynamic(rs, *v)?);
    }
    let p = env as *mut Env as *mut ();
    let prev = CURRENT.with(|c| c.replace(p));
    let _restore = Restore(prev);
    engine().eval_ast_with_scope::<Dynamic>(&mut scope, &h.ast)
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
                // The hook stops here, even if the script catches this.
                let _ = halt(Stop::MoreDice);
                Err("a die beyond those given".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::scripts::{engine_functions, API, EFFECTS};
    use std::collections::BTreeSet;

    /// Scripts are checked by the compiler against the API's names
    /// ([`crate::compile::scripts`]) and run here on the engine that has
    /// its bodies: the two agree. Every name the running engine knows is
    /// one the checker knows (rhai's own, or the API's), and every API
    /// name, the effects among them, is registered with a body.
    #[test]
    fn the_running_engine_has_exactly_the_names_the_checker_knows() {
        let running: BTreeSet<String> = super::engine()
            .gen_fn_signatures(true)
            .iter()
            .filter_map(|sig| sig.split_once('(').map(|(name, _)| name.to_string()))
            .collect();
        let known = engine_functions();
        let unknown: Vec<&String> = running.iter().filter(|n| !known.contains(*n)).collect();
        assert!(
            unknown.is_empty(),
            "registered but not checked: {unknown:?}"
        );
        let missing: Vec<&&str> = API.iter().filter(|a| !running.contains(**a)).collect();
        assert!(
            missing.is_empty(),
            "checked but never registered: {missing:?}"
        );
        assert!(EFFECTS.iter().all(|e| API.contains(e)));
        // A name the checker knows only from the API really is the API's
        // (rhai alone has no `perform`), so a script calling it runs the
        // registered body.
        assert!(!crate::compile::scripts::rhai_has("perform"));
        assert!(crate::compile::scripts::rhai_has("len"));
    }
}
