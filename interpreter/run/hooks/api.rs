//! The script API: the functions a hook may call, registered on the one
//! engine. Each reaches the running call's [`Env`] through [`with_env`].

use super::*;
use crate::compile::ir::{DieDef, Ex, ModOp, Ruleset, Ty};
use crate::compile::scripts::RuleRef;
use rhai::{Array, Dynamic, Engine, EvalAltResult};

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
                return Err(halt(Stop::NotStatic));
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
                Value::Int(crate::run::dice::apply_op(op, cur, a))
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
    charge_perform()?;
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
        crate::run::procedures::run_whole(env.ev, w, p, &vals, dice, log)
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

pub(super) fn register(e: &mut Engine) {
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
                Some(o) if env.ev.rs.options[o as usize].number.is_some() => err(format!(
                    "option `{n}` is a number, not a switch; read it in the rules and pass it to the script"
                )),
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
                None => crate::run::odds::default_outcome(&o.defs[i].ty),
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
