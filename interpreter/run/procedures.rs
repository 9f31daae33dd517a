//! Running a procedure once, for real: its statements executed against a
//! [`World`], dice from a [`DiceSource`] (the battle's seeded generator),
//! unit and side state written back, facts noted. This is what a battle
//! does at every step; `odds` instead specialises a procedure and counts
//! every way it can come out.

use crate::base::value::Value;
use crate::compile::ir::{DieDef, Id, ModOp, St};
use crate::front::diagnostic::Diag;
use crate::run::dice::DiceSource;
use crate::run::eval::{Change, Ctx, Eval};
use crate::run::hooks::{self, Env, Failed, Outs, Store};
use crate::run::world::World;

/// What one run of a procedure produced.
#[derive(Clone, Debug, Default)]
pub struct Performed {
    /// The procedure's outcomes, in declaration order.
    pub outcomes: Vec<Value>,
    /// Every die rolled, by face value, in order.
    pub rolls: Vec<i64>,
    /// Every die rolled as the narrative shows it (only when asked for,
    /// see [`perform_showing`]): a numbered face by its number, a named one
    /// by its die and name (`green:W1`), since the value of a named face
    /// (often 0) does not say which it was.
    pub faces: Vec<String>,
    /// Lines its hooks logged.
    pub log: Vec<String>,
}

/// Dice that remember what came up.
pub(crate) struct Recorder<'a> {
    pub inner: &'a mut dyn DiceSource,
    pub rolls: Vec<i64>,
    /// The faces as shown, when a narrative wants them (`None`: not kept,
    /// so that games nobody reads make no strings).
    pub faces: Option<Vec<String>>,
}

impl DiceSource for Recorder<'_> {
    fn face(&mut self, die: &DieDef) -> Result<usize, String> {
        let f = self.inner.face(die)?;
        let (label, value) = &die.faces[f];
        self.rolls.push(*value);
        if let Some(shown) = &mut self.faces {
            shown.push(if *label == value.to_string() {
                label.clone()
            } else {
                format!("{}:{label}", die.name)
            });
        }
        Ok(f)
    }
}

/// Run procedure `proc` with `args` against the world.
pub fn perform(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    args: &[Value],
    dice: &mut dyn DiceSource,
) -> Result<Performed, Diag> {
    perform_showing(ev, w, proc, args, dice, false)
}

/// [`perform`], keeping the faces rolled as the narrative shows them
/// ([`Performed::faces`]) when `show_faces` (a battle that keeps a log).
pub fn perform_showing(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    args: &[Value],
    dice: &mut dyn DiceSource,
    show_faces: bool,
) -> Result<Performed, Diag> {
    let mut rec = Recorder {
        inner: dice,
        rolls: Vec::new(),
        faces: show_faces.then(Vec::new),
    };
    let mut log = Vec::new();
    let outcomes = run_whole(ev, w, proc, args, &mut rec, &mut log)?;
    Ok(Performed {
        outcomes,
        rolls: rec.rolls,
        faces: rec.faces.unwrap_or_default(),
        log,
    })
}

/// Run procedure `proc` whole (as [`perform`] and a hook's
/// `perform(name, [args])` do): its outcomes in declaration order, its dice
/// from `dice`, its hooks' lines into `log`.
pub(crate) fn run_whole(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    args: &[Value],
    dice: &mut dyn DiceSource,
    log: &mut Vec<String>,
) -> Result<Vec<Value>, Diag> {
    let p = &ev.rs.procedures[proc as usize];
    let mut outcomes: Vec<Value> = p
        .outcomes
        .iter()
        .map(|o| crate::run::odds::default_outcome(&o.ty))
        .collect();
    let map: Vec<Option<u16>> = (0..outcomes.len() as u16).map(Some).collect();
    run(ev, w, proc, args, &map, &mut outcomes, dice, log)?;
    Ok(outcomes)
}

/// Run a procedure's hooks and body: `before` hooks, the body (or the hook
/// that replaces it), `after` hooks.
#[allow(clippy::too_many_arguments)]
fn run(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    args: &[Value],
    map: &[Option<u16>],
    outcomes: &mut [Value],
    dice: &mut dyn DiceSource,
    log: &mut Vec<String>,
) -> Result<(), Diag> {
    let p = &ev.rs.procedures[proc as usize];
    let mut frame = vec![Value::None; ev.procedure_width(proc).max(args.len())];
    frame[..args.len()].copy_from_slice(args);
    let hook = |w: &mut World,
                h: Id,
                vars: &[Value],
                outcomes: &mut [Value],
                dice: &mut dyn DiceSource,
                log: &mut Vec<String>| {
        let mut env = Env {
            ev,
            store: Store::Battle(w),
            dice,
            outs: Some(Outs {
                defs: &p.outcomes,
                map,
                values: outcomes,
            }),
            log,
        };
        let r = hooks::call(&mut env, h, vars).map_err(Failed::diag);
        ev.forget();
        r.map(|_| ())
    };
    for &h in &p.hooks.before {
        hook(w, h, args, outcomes, dice, log)?;
    }
    match p.hooks.replace {
        Some(h) => hook(w, h, args, outcomes, dice, log)?,
        None => block(ev, w, proc, &p.body, &mut frame, map, outcomes, dice, log)?,
    }
    if !p.hooks.after.is_empty() {
        let vars: Vec<Value> = p.names.iter().map(|(_, s)| frame[*s as usize]).collect();
        for &h in &p.hooks.after {
            hook(w, h, &vars, outcomes, dice, log)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn block(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    body: &[St],
    frame: &mut [Value],
    map: &[Option<u16>],
    outcomes: &mut [Value],
    dice: &mut dyn DiceSource,
    log: &mut Vec<String>,
) -> Result<(), Diag> {
    for st in body {
        statement(ev, w, proc, st, frame, map, outcomes, dice, log)
            .map_err(|d| d.or_at(st.span(), FAULT_HERE))?;
    }
    Ok(())
}

/// How a run-time fault of a statement with no place of its own (a
/// value that is `none`, a division by zero) labels the statement.
pub(crate) const FAULT_HERE: &str = "this failed while it was worked out";

/// Run one statement of a procedure ([`block`] places its faults).
#[allow(clippy::too_many_arguments)]
fn statement(
    ev: &Eval,
    w: &mut World,
    proc: Id,
    st: &St,
    frame: &mut [Value],
    map: &[Option<u16>],
    outcomes: &mut [Value],
    dice: &mut dyn DiceSource,
    log: &mut Vec<String>,
) -> Result<(), Diag> {
    {
        match st {
            St::Let(slot, e, _) => {
                frame[*slot as usize] = ev.run(Ctx::new(w), e, frame, dice).map_err(Diag::from)?;
            }
            St::Outcome(i, e, _) => {
                let v = ev.run(Ctx::new(w), e, frame, dice).map_err(Diag::from)?;
                if let Some(Some(j)) = map.get(*i as usize) {
                    outcomes[*j as usize] = v;
                }
            }
            St::Require(e, msg, span) => {
                if !ev
                    .run(Ctx::new(w), e, frame, dice)
                    .map_err(Diag::from)?
                    .as_bool()
                {
                    return Err(Diag::new(
                        "muster::requirement",
                        format!("a rule was broken during the battle: {msg}"),
                    )
                    .at(*span, "this requirement does not hold")
                    .help("the decision that led here offered an option the procedure does not allow; make the decision's `where` condition imply the procedure's requirements"));
                }
            }
            St::If(c, a, b, _) => {
                let branch = if ev
                    .run(Ctx::new(w), c, frame, dice)
                    .map_err(Diag::from)?
                    .as_bool()
                {
                    a
                } else {
                    b
                };
                block(ev, w, proc, branch, frame, map, outcomes, dice, log)?;
            }
            St::For(sides, slot, c, body, _) => {
                let n = if *sides {
                    w.side_names.len()
                } else {
                    w.units.len()
                };
                for i in 0..n {
                    frame[*slot as usize] = if *sides {
                        Value::Side(i as u16)
                    } else {
                        Value::Unit(i as u16)
                    };
                    if ev
                        .run(Ctx::new(w), c, frame, dice)
                        .map_err(Diag::from)?
                        .as_bool()
                    {
                        block(ev, w, proc, body, frame, map, outcomes, dice, log)?;
                    }
                }
            }
            St::AssignState {
                unit,
                state,
                op,
                value,
                span,
            } => {
                let u = ev.run(Ctx::new(w), unit, frame, dice).map_err(Diag::from)?;
                let v = ev
                    .run(Ctx::new(w), value, frame, dice)
                    .map_err(Diag::from)?;
                let Value::Unit(u) = u else {
                    return Err(Diag::new(
                        "muster::runtime",
                        "state of something that is not a unit",
                    )
                    .at(*span, "here"));
                };
                let i = u as usize * ev.rs.states.len() + *state as usize;
                w.state[i] = apply(ev, *op, w.state[i], v).map_err(|d| d.at(*span, "here"))?;
                ev.changed(Change::State(*state));
            }
            St::AssignSideState {
                side,
                state,
                op,
                value,
                span,
            } => {
                let s = ev.run(Ctx::new(w), side, frame, dice).map_err(Diag::from)?;
                let v = ev
                    .run(Ctx::new(w), value, frame, dice)
                    .map_err(Diag::from)?;
                let Value::Side(s) = s else {
                    return Err(Diag::new(
                        "muster::runtime",
                        "side state of something that is not a side",
                    )
                    .at(*span, "here"));
                };
                let i = s as usize * ev.rs.side_states.len() + *state as usize;
                w.side_state[i] =
                    apply(ev, *op, w.side_state[i], v).map_err(|d| d.at(*span, "here"))?;
                ev.changed(Change::SideState(*state));
            }
            St::Call(callee, args, _) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(ev.run(Ctx::new(w), a, frame, dice).map_err(Diag::from)?);
                }
                // The callee's outcomes feed the caller's of the same name.
                let me = &ev.rs.procedures[proc as usize];
                let cmap: Vec<Option<u16>> = ev.rs.procedures[*callee as usize]
                    .outcomes
                    .iter()
                    .map(|o| {
                        me.outcomes
                            .iter()
                            .position(|x| x.name == o.name)
                            .and_then(|j| map.get(j).copied().flatten())
                    })
                    .collect();
                run(ev, w, *callee, &vals, &cmap, outcomes, dice, log)?;
            }
            St::Note(f, args, v, _) => {
                let mut key = Vec::with_capacity(args.len());
                for a in args {
                    key.push(ev.run(Ctx::new(w), a, frame, dice).map_err(Diag::from)?);
                }
                let v = ev.run(Ctx::new(w), v, frame, dice).map_err(Diag::from)?;
                w.set_fact(*f, key, v);
                ev.changed(Change::Fact(*f));
            }
        }
    }
    Ok(())
}

fn apply(ev: &Eval, op: ModOp, cur: Value, v: Value) -> Result<Value, Diag> {
    Ok(match op {
        ModOp::Set => v,
        _ => {
            let c = ev.num(cur, "the state being changed").map_err(Diag::from)?;
            let a = ev.num(v, "the amount").map_err(Diag::from)?;
            Value::Int(crate::run::dice::apply_op(op, c, a))
        }
    })
}
