//! Modifiers: named changes to a quantity ("-1 die when shooting at infantry
//! in difficult terrain"). This module compiles them, checks that each can
//! apply at all, and is where they are applied.

use crate::base::value::Value;
use crate::compile::compiler::{suggest, Compiler};
use crate::compile::ir::{Ex, ModOp, QuantityDef, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax;

pub(crate) fn compile_modifier(c: &mut Compiler, id: usize, m: &syntax::Modifier) {
    let Some(q) = c.quantity_id(&m.quantity.text) else {
        if let Some(kind) = c.kind_of(&m.quantity.text) {
            c.err(
                Diag::new("muster::modifier_target", format!("modifier `{}` changes `{}`, which is {kind}, not a quantity", m.name.text, m.quantity.text))
                    .at(m.quantity.span, kind.to_string())
                    .help(format!("modifiers change quantities: declare one over it, e.g. `quantity {0}_value(...) -> int = {0}(...)`, and modify that", m.quantity.text)),
            );
            return;
        }
        let names = c.quantity_names();
        let sugg = suggest(&m.quantity.text, names.iter().map(|s| s.as_str()));
        c.err(
            Diag::new(
                "muster::unknown_quantity",
                format!(
                    "modifier `{}` changes unknown quantity `{}`",
                    m.name.text, m.quantity.text
                ),
            )
            .at(m.quantity.span, "not a quantity")
            .help(match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None if names.is_empty() => {
                    "declare the quantity first: `quantity NAME(params) -> int = ...`".into()
                }
                None => format!("the quantities are: {}", names.join(", ")),
            }),
        );
        return;
    };
    let params = c.rs.quantities[q as usize].func.params.clone();
    let mut scope = Compiler::scope_with(&params);
    let Some((amount, at)) = c.expr(&m.amount, &mut scope, Some(&Ty::Int)) else {
        return;
    };
    c.expect(&at, &Ty::Int, m.amount.span, "a modifier's amount");
    let when = match &m.when {
        None => None,
        Some(w) => {
            let Some((we, wt)) = c.expr(w, &mut scope, None) else {
                return;
            };
            c.expect(&wt, &Ty::Bool, w.span, "a modifier's condition");
            if let Some(why) = never_applies(&we, c) {
                c.err(
                    Diag::new("muster::modifier_never_applies", format!("modifier `{}` can never apply", m.name.text))
                        .at(w.span, why)
                        .help("check the condition: two `is` tests on the same unit that share no unit type can never both hold"),
                );
                return;
            }
            Some(we)
        }
    };
    let slots = scope.max;
    let qd = &mut c.rs.quantities[q as usize];
    qd.func.slots = qd.func.slots.max(slots);
    qd.modifiers.push(id as u16);
    let md = &mut c.rs.modifiers[id];
    md.quantity = q;
    md.op = match m.op {
        syntax::AssignOp::Set => ModOp::Set,
        syntax::AssignOp::Add => ModOp::Add,
        syntax::AssignOp::Sub => ModOp::Sub,
    };
    md.amount = amount;
    md.when = when;
}

/// Why a condition can never hold, if that is plain from its shape: a
/// literal `false`, or a conjunction of `is` tests on one local that no unit
/// type satisfies.
fn never_applies(e: &Ex, c: &Compiler) -> Option<String> {
    let mut parts = Vec::new();
    e.conjuncts(&mut parts);
    let mut sets: Vec<(u16, Vec<bool>)> = Vec::new();
    for p in parts {
        match p {
            Ex::Const(Value::Bool(false)) => return Some("always false".into()),
            Ex::IsType(x, set) => {
                if let Ex::Local(s) = **x {
                    match sets.iter_mut().find(|(k, _)| *k == s) {
                        Some((_, cur)) => cur.iter_mut().zip(set).for_each(|(a, b)| *a &= *b),
                        None => sets.push((s, set.clone())),
                    }
                }
            }
            _ => {}
        }
    }
    for (_, set) in sets {
        if !set.iter().any(|b| *b) && !c.rs.unit_types.is_empty() {
            return Some("no unit type passes all of these `is` tests".into());
        }
    }
    None
}

/// Which expression of a modifier is being evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    When,
    Amount,
}

/// Apply a quantity's modifiers to its base value, in order, then clamp.
/// `eval(i, part, e)` evaluates `part` of the quantity's `i`th modifier
/// (`e`, its condition or its amount) in the quantity's frame.
pub fn apply<E>(
    q: &QuantityDef,
    modifiers: &[crate::compile::ir::ModifierDef],
    base: i64,
    mut eval: impl FnMut(usize, Part, &Ex) -> Result<Value, E>,
    mut applied: impl FnMut(crate::compile::ir::Id),
) -> Result<i64, E> {
    let mut v = base;
    for (i, m) in q.modifiers.iter().enumerate() {
        let md = &modifiers[*m as usize];
        if let Some(w) = &md.when {
            if !eval(i, Part::When, w)?.as_bool() {
                continue;
            }
        }
        applied(*m);
        let amount = eval(i, Part::Amount, &md.amount)?.as_int().unwrap_or(0);
        v = match md.op {
            ModOp::Set => amount,
            ModOp::Add => v.saturating_add(amount),
            ModOp::Sub => v.saturating_sub(amount),
        };
    }
    if let Some(lo) = q.min {
        v = v.max(lo);
    }
    if let Some(hi) = q.max {
        v = v.min(hi);
    }
    Ok(v)
}
