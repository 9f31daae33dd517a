//! Tables: rows of ordered conditions (first match wins, closed by
//! `otherwise`) or of keys matched against the parameters. Keyed tables are
//! checked for gaps and overlaps over their parameters' domains. Both kinds
//! compile to a chain of `if`s.

use crate::compile::{Compiler, Scope};
use crate::diagnostic::Diag;
use crate::ir::{Bin, Ex, Ty};
use crate::syntax::{self, Guard, KeyPattern};
use crate::value::Value;

/// The most key combinations a table's coverage check will enumerate.
const MAX_COMBINATIONS: usize = 100_000;

pub(crate) fn compile_table(
    c: &mut Compiler,
    t: &syntax::Table,
    params: &[(String, Ty)],
    want: &Ty,
    scope: &mut Scope,
) -> Option<Ex> {
    if t.rows.is_empty() {
        c.err(
            Diag::new(
                "muster::table_empty",
                format!("table `{}` has no rows", t.name.text),
            )
            .at(t.name.span, "empty table")
            .help("add rows: `when COND => VALUE` ... `otherwise => VALUE`, or `KEY => VALUE`"),
        );
        return None;
    }
    let keyed = t
        .rows
        .iter()
        .filter(|r| matches!(r.guard, Guard::Keys(_)))
        .count();
    if keyed != 0 && keyed != t.rows.len() {
        let first = t
            .rows
            .iter()
            .find(|r| !matches!(r.guard, Guard::Keys(_)))
            .unwrap();
        c.err(
            Diag::new("muster::table_mixed", format!("table `{}` mixes keyed rows with `when` rows", t.name.text))
                .at(first.span, "a condition row among keyed rows")
                .help("a table is either keyed (`3..5 => V`) or ordered conditions (`when C => V` ... `otherwise => V`)"),
        );
        return None;
    }
    let mut values = Vec::new();
    for r in &t.rows {
        let (ve, vt) = c.expr(&r.value, scope, Some(want))?;
        c.expect(
            &vt,
            want,
            r.value.span,
            &format!("a value of table `{}`", t.name.text),
        );
        values.push(ve);
    }
    if keyed == 0 {
        conditional(c, t, values, scope)
    } else {
        keyed_table(c, t, params, values)
    }
}

fn conditional(
    c: &mut Compiler,
    t: &syntax::Table,
    values: Vec<Ex>,
    scope: &mut Scope,
) -> Option<Ex> {
    let mut conds = Vec::new();
    let mut otherwise = None;
    for (i, r) in t.rows.iter().enumerate() {
        if otherwise.is_some() {
            c.err(
                Diag::new(
                    "muster::table_unreachable_row",
                    format!("this row of table `{}` can never be used", t.name.text),
                )
                .at(r.span, "after `otherwise`")
                .note(t.rows[i - 1].span, "`otherwise` matches everything")
                .help("rows are tried in order; move `otherwise` to the end"),
            );
            return None;
        }
        match &r.guard {
            Guard::Otherwise => otherwise = Some(values[i].clone()),
            Guard::When(e) => {
                let (ce, ct) = c.expr(e, scope, None)?;
                c.expect(&ct, &Ty::Bool, e.span, "a row's condition");
                conds.push((ce, values[i].clone()));
            }
            Guard::Keys(_) => unreachable!(),
        }
    }
    let Some(mut acc) = otherwise else {
        c.err(
            Diag::new(
                "muster::table_gap",
                format!(
                    "table `{}` has a gap: no row applies when every condition is false",
                    t.name.text
                ),
            )
            .at(t.rows.last().unwrap().span, "the last row has a condition")
            .help("end the table with `otherwise => VALUE`"),
        );
        return None;
    };
    for (ce, ve) in conds.into_iter().rev() {
        acc = Ex::If(Box::new(ce), Box::new(ve), Box::new(acc));
    }
    Some(acc)
}

/// One key pattern, checked against its parameter's type.
#[derive(Clone, Debug)]
enum Key {
    Any,
    Range(Option<i64>, Option<i64>),
    Exact(Value),
}

impl Key {
    fn matches(&self, v: Value) -> bool {
        match (self, v) {
            (Key::Any, _) => true,
            (Key::Exact(x), v) => *x == v,
            (Key::Range(a, b), Value::Int(i)) => {
                a.is_none_or(|a| i >= a) && b.is_none_or(|b| i <= b)
            }
            _ => false,
        }
    }
    fn condition(&self, slot: u16) -> Ex {
        let local = || Box::new(Ex::Local(slot));
        match self {
            Key::Any => Ex::Const(Value::Bool(true)),
            Key::Exact(v) => Ex::Bin(Bin::Eq, local(), Box::new(Ex::Const(*v))),
            Key::Range(a, b) => {
                let lo = a.map(|a| Ex::Bin(Bin::Ge, local(), Box::new(Ex::Const(Value::Int(a)))));
                let hi = b.map(|b| Ex::Bin(Bin::Le, local(), Box::new(Ex::Const(Value::Int(b)))));
                match (lo, hi) {
                    (Some(l), Some(h)) => Ex::Bin(Bin::And, Box::new(l), Box::new(h)),
                    (Some(x), None) | (None, Some(x)) => x,
                    (None, None) => Ex::Const(Value::Bool(true)),
                }
            }
        }
    }
}

fn show(c: &Compiler, v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Sym(s) => c.rs.symbols[s as usize].clone(),
        Value::Side(s) => c.rs.sides[s as usize].clone(),
        other => format!("{other:?}"),
    }
}

fn keyed_table(
    c: &mut Compiler,
    t: &syntax::Table,
    params: &[(String, Ty)],
    values: Vec<Ex>,
) -> Option<Ex> {
    // The domain of each parameter.
    let mut domains: Vec<Vec<Value>> = Vec::new();
    for (p, (pname, ty)) in t.params.iter().zip(params) {
        let d = match (ty, p.range) {
            (Ty::Int, Some((a, b))) if b >= a && (b - a) < 10_000 => {
                (a..=b).map(Value::Int).collect()
            }
            (Ty::Int, Some((a, b))) if b < a => {
                c.err(
                    Diag::new("muster::table_domain", format!("parameter `{pname}` of table `{}` has the range {a}..{b}, which is empty", t.name.text))
                        .at(p.name.span, "reversed range")
                        .help(format!("write the low end first: `{pname}: int in {b}..{a}`")),
                );
                return None;
            }
            (Ty::Bool, _) => vec![Value::Bool(false), Value::Bool(true)],
            (Ty::Enum(e), _) => c.enum_values(*e),
            (Ty::Side, _) => (0..c.rs.sides.len() as u16).map(Value::Side).collect(),
            _ => {
                c.err(
                    Diag::new("muster::table_domain", format!("keyed table `{}` cannot check parameter `{pname}`", t.name.text))
                        .at(p.name.span, "no finite set of values")
                        .help(format!("give an int key its range, e.g. `{pname}: int in 1..6`; unit parameters need `when` rows")),
                );
                return None;
            }
        };
        domains.push(d);
    }
    // Each row's keys.
    let mut rows: Vec<Vec<Key>> = Vec::new();
    for r in &t.rows {
        let Guard::Keys(ks) = &r.guard else {
            unreachable!()
        };
        if ks.len() != params.len() {
            c.err(
                Diag::new(
                    "muster::table_key",
                    format!(
                        "this row has {} key{} but table `{}` has {} parameter{}",
                        ks.len(),
                        if ks.len() == 1 { "" } else { "s" },
                        t.name.text,
                        params.len(),
                        if params.len() == 1 { "" } else { "s" }
                    ),
                )
                .at(r.span, "wrong number of keys")
                .help(
                    "write one key per parameter, as a tuple `(a, b) => V` when there are several",
                ),
            );
            return None;
        }
        let mut keys = Vec::new();
        for (k, (_, ty)) in ks.iter().zip(params) {
            let key = match (k, ty) {
                (KeyPattern::Any(_), _) => Key::Any,
                (KeyPattern::Int(i, _), Ty::Int) => Key::Exact(Value::Int(*i)),
                (KeyPattern::Range(a, b, _), Ty::Int) => Key::Range(*a, *b),
                (KeyPattern::Bool(b, _), Ty::Bool) => Key::Exact(Value::Bool(*b)),
                (KeyPattern::Name(n), ty) => Key::Exact(c.lookup_key_name(n, ty)?),
                (k, ty) => {
                    let tn = c.rs.ty_name(ty);
                    c.err(
                        Diag::new("muster::table_key", format!("this key does not fit a parameter of type {tn}"))
                            .at(k.span(), format!("not a {tn}"))
                            .help("numbers and ranges key int parameters; true/false key bools; names key enums"),
                    );
                    return None;
                }
            };
            keys.push(key);
        }
        rows.push(keys);
    }
    // Coverage: every combination matched by exactly one row.
    let total: usize = domains.iter().map(Vec::len).product();
    if total > MAX_COMBINATIONS {
        c.err(
            Diag::new(
                "muster::table_domain",
                format!(
                    "table `{}` has {total} key combinations, too many to check",
                    t.name.text
                ),
            )
            .at(t.name.span, "domain too large")
            .help(format!(
                "narrow the int ranges so that at most {MAX_COMBINATIONS} combinations remain"
            )),
        );
        return None;
    }
    let mut gaps = Vec::new();
    let mut overlaps: Vec<(usize, usize, String)> = Vec::new();
    let mut idx = vec![0usize; domains.len()];
    for _ in 0..total {
        let combo: Vec<Value> = idx.iter().zip(&domains).map(|(i, d)| d[*i]).collect();
        let hits: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, ks)| ks.iter().zip(&combo).all(|(k, v)| k.matches(*v)))
            .map(|(i, _)| i)
            .collect();
        let shown = || {
            let parts: Vec<String> = combo.iter().map(|v| show(c, *v)).collect();
            if parts.len() == 1 {
                parts[0].clone()
            } else {
                format!("({})", parts.join(", "))
            }
        };
        if hits.is_empty() {
            gaps.push(shown());
        } else if hits.len() > 1
            && !overlaps
                .iter()
                .any(|(a, b, _)| *a == hits[0] && *b == hits[1])
        {
            overlaps.push((hits[0], hits[1], shown()));
        }
        // Next combination (odometer).
        for (i, d) in idx.iter_mut().zip(&domains).rev() {
            *i += 1;
            if *i < d.len() {
                break;
            }
            *i = 0;
        }
    }
    let mut ok = true;
    if !gaps.is_empty() {
        ok = false;
        let more = if gaps.len() > 5 {
            format!(" and {} more", gaps.len() - 5)
        } else {
            String::new()
        };
        let list: Vec<String> = gaps.iter().take(5).cloned().collect();
        c.err(
            Diag::new("muster::table_gap", format!("table `{}` has a gap: no row for {}{more}", t.name.text, list.join(", ")))
                .at(t.name.span, "not every key is covered")
                .help("add rows for the missing keys, or widen a range (`6..` runs to the top of the domain)"),
        );
    }
    for (a, b, key) in overlaps {
        ok = false;
        c.err(
            Diag::new(
                "muster::table_overlap",
                format!("rows of table `{}` overlap at {key}", t.name.text),
            )
            .at(t.rows[b].span, "this row also matches")
            .note(t.rows[a].span, "first row that matches")
            .help("each key must be matched by exactly one row; narrow one of the ranges"),
        );
    }
    if !ok {
        return None;
    }
    let mut acc = Ex::Const(Value::None);
    for (keys, v) in rows.into_iter().zip(values).rev() {
        let mut cond: Option<Ex> = None;
        for (slot, k) in keys.iter().enumerate() {
            if matches!(k, Key::Any) {
                continue;
            }
            let e = k.condition(slot as u16);
            cond = Some(match cond {
                None => e,
                Some(prev) => Ex::Bin(Bin::And, Box::new(prev), Box::new(e)),
            });
        }
        acc = match cond {
            None => v,
            Some(cnd) => Ex::If(Box::new(cnd), Box::new(v), Box::new(acc)),
        };
    }
    Some(acc)
}
