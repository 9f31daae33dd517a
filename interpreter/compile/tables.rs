//! Tables: rows of ordered conditions (first match wins, closed by
//! `otherwise`) or of keys matched against the parameters. Keyed tables are
//! checked for gaps and overlaps over their parameters' domains. Both kinds
//! compile to a chain of `if`s.

use crate::base::value::Value;
use crate::compile::compiler::{Compiler, Scope};
use crate::compile::ir::{Bin, Ex, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, Guard, KeyPattern};
use std::collections::{HashMap, HashSet};

/// The most key combinations a table's coverage check will enumerate.
const MAX_COMBINATIONS: usize = 100_000;
/// The most overlaps of one table reported one by one (the rest are
/// counted in one more diagnostic).
const MAX_OVERLAPS_SHOWN: usize = 10;

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
    /// Whether the key matches a value (what [`Coverage`] paints, one value
    /// at a time: its tests check it against this).
    #[cfg(test)]
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
    let total = domains
        .iter()
        .fold(1usize, |n, d| n.saturating_mul(d.len()));
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
    let cover = Coverage::paint(&domains, &rows);
    let shown = |idx: &[usize]| {
        let parts: Vec<String> = idx
            .iter()
            .zip(&domains)
            .map(|(i, d)| show(c, d[*i]))
            .collect();
        if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("({})", parts.join(", "))
        }
    };
    let (mut gaps, mut shown_gaps) = (0usize, Vec::new());
    let mut overlaps: Vec<(usize, usize, String)> = Vec::new();
    let mut pairs = HashSet::new();
    let mut idx = vec![0usize; domains.len()];
    for _ in 0..total {
        match cover.rows_at(&idx) {
            [None, _] => {
                gaps += 1;
                if shown_gaps.len() < 5 {
                    shown_gaps.push(shown(&idx));
                }
            }
            [Some(a), Some(b)] if pairs.insert((a, b)) => overlaps.push((a, b, shown(&idx))),
            _ => {}
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
    if gaps != 0 {
        ok = false;
        let more = if gaps > 5 {
            format!(" and {} more", gaps - 5)
        } else {
            String::new()
        };
        c.err(
            Diag::new("muster::table_gap", format!("table `{}` has a gap: no row for {}{more}", t.name.text, shown_gaps.join(", ")))
                .at(t.name.span, "not every key is covered")
                .help("add rows for the missing keys, or widen a range (`6..` runs to the top of the domain)"),
        );
    }
    let help = "each key must be matched by exactly one row; narrow one of the ranges";
    for (a, b, key) in overlaps.iter().take(MAX_OVERLAPS_SHOWN) {
        ok = false;
        c.err(
            Diag::new(
                "muster::table_overlap",
                format!("rows of table `{}` overlap at {key}", t.name.text),
            )
            .at(t.rows[*b].span, "this row also matches")
            .note(t.rows[*a].span, "first row that matches")
            .help(help),
        );
    }
    if overlaps.len() > MAX_OVERLAPS_SHOWN {
        c.err(
            Diag::new(
                "muster::table_overlap",
                format!(
                    "and {} more pairs of rows of table `{}` overlap",
                    overlaps.len() - MAX_OVERLAPS_SHOWN,
                    t.name.text
                ),
            )
            .at(t.name.span, "more overlapping rows in this table")
            .help(format!(
                "{help} (the first {MAX_OVERLAPS_SHOWN} overlaps of a table are shown)"
            )),
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

/// Which rows match each key combination (a cell): the first two, which is
/// all the check needs. Each row matches a box of cells (an interval of
/// each parameter's domain), painted in row order; a cell that already has
/// two rows is skipped over (a union-find of the next cell with room), so
/// a table costs about its rows times the lines of its boxes plus its
/// cells, not its rows times its cells (500,000 overlapping rows took
/// minutes).
struct Coverage {
    /// Per cell, the first two rows that match it.
    hits: Vec<[Option<usize>; 2]>,
    /// How far apart neighbours of each parameter are in `hits`: the
    /// parameter with the largest domain is the contiguous one, so that a
    /// box has as few lines as it can.
    strides: Vec<usize>,
}

impl Coverage {
    fn paint(domains: &[Vec<Value>], rows: &[Vec<Key>]) -> Coverage {
        let n = domains.len();
        let cells = domains.iter().map(Vec::len).product::<usize>();
        // Lay the cells out with the largest domain innermost.
        let inner = (0..n).max_by_key(|&p| domains[p].len()).unwrap_or(0);
        let mut strides = vec![0usize; n];
        let mut stride = 1;
        if n != 0 {
            strides[inner] = 1;
            stride = domains[inner].len();
        }
        for p in (0..n).rev().filter(|&p| p != inner) {
            strides[p] = stride;
            stride *= domains[p].len();
        }
        let index: Vec<HashMap<Value, usize>> = domains
            .iter()
            .map(|d| d.iter().enumerate().map(|(i, v)| (*v, i)).collect())
            .collect();
        let mut cover = Coverage {
            hits: vec![[None, None]; cells],
            strides,
        };
        // next[i]: a cell at or after i that has room (== cells: none).
        let mut next: Vec<usize> = (0..=cells).collect();
        let outer: Vec<usize> = (0..n).filter(|&p| p != inner).collect();
        for (r, keys) in rows.iter().enumerate() {
            if find(&mut next, 0) == cells {
                break; // every cell has its two rows
            }
            let Some(bx) = keys
                .iter()
                .enumerate()
                .map(|(p, k)| interval(k, &domains[p], &index[p]))
                .collect::<Option<Vec<_>>>()
            else {
                continue; // the row matches nothing
            };
            let mut at: Vec<usize> = outer.iter().map(|&p| bx[p].0).collect();
            loop {
                let base: usize = outer
                    .iter()
                    .zip(&at)
                    .map(|(&p, &i)| i * cover.strides[p])
                    .sum();
                let (lo, hi) = if n == 0 { (0, 0) } else { bx[inner] };
                let mut cell = find(&mut next, base + lo);
                while cell <= base + hi {
                    let h = &mut cover.hits[cell];
                    if h[0].is_none() {
                        h[0] = Some(r);
                    } else {
                        h[1] = Some(r);
                        next[cell] = cell + 1;
                    }
                    cell = find(&mut next, cell + 1);
                }
                // The next line of the box (odometer over the outer parameters).
                let mut moved = false;
                for (k, &p) in outer.iter().enumerate().rev() {
                    if at[k] < bx[p].1 {
                        at[k] += 1;
                        moved = true;
                        break;
                    }
                    at[k] = bx[p].0;
                }
                if !moved {
                    break;
                }
            }
        }
        cover
    }

    /// The first two rows that match a combination (indices into the
    /// parameters' domains).
    fn rows_at(&self, idx: &[usize]) -> [Option<usize>; 2] {
        let cell: usize = idx.iter().zip(&self.strides).map(|(i, s)| i * s).sum();
        self.hits[cell]
    }
}

/// The first cell at or after `i` with room (path-halving union-find).
fn find(next: &mut [usize], mut i: usize) -> usize {
    while next[i] != i {
        next[i] = next[next[i]];
        i = next[i];
    }
    i
}

/// The interval of a domain's indices a key matches (`None`: no value).
/// Int domains are ascending runs (`a..=b`), so a range is an interval.
fn interval(k: &Key, domain: &[Value], index: &HashMap<Value, usize>) -> Option<(usize, usize)> {
    let last = domain.len().checked_sub(1)?;
    match k {
        Key::Any => Some((0, last)),
        Key::Exact(v) => index.get(v).map(|&i| (i, i)),
        Key::Range(a, b) => {
            let Value::Int(first) = domain[0] else {
                return None;
            };
            let lo = a.map_or(0, |a| a.saturating_sub(first).max(0));
            let hi = b.map_or(last as i64, |b| b.saturating_sub(first).min(last as i64));
            (lo <= hi && hi >= 0 && (lo as usize) <= last).then_some((lo as usize, hi as usize))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// The first two rows matching each combination, one row and one value
    /// at a time (what the check did before it painted boxes).
    fn brute(domains: &[Vec<Value>], rows: &[Vec<Key>], idx: &[usize]) -> [Option<usize>; 2] {
        let mut hits = rows
            .iter()
            .enumerate()
            .filter(|(_, ks)| {
                ks.iter()
                    .zip(idx)
                    .enumerate()
                    .all(|(p, (k, i))| k.matches(domains[p][*i]))
            })
            .map(|(r, _)| r);
        [hits.next(), hits.next()]
    }

    fn random_key(rng: &mut Rng, domain: &[Value]) -> Key {
        let pick = |rng: &mut Rng| domain[rng.below(domain.len() as u64) as usize];
        match (rng.below(4), domain[0]) {
            (0, _) => Key::Any,
            (1, Value::Int(first)) => {
                // Ranges that may stick out of the domain at either end.
                let a = first - 2 + rng.below(domain.len() as u64 + 4) as i64;
                let b = a + rng.below(5) as i64 - 1;
                let open = rng.below(4);
                Key::Range((open != 1).then_some(a), (open != 2).then_some(b))
            }
            (2, Value::Int(first)) => Key::Exact(Value::Int(first + domain.len() as i64)),
            _ => Key::Exact(pick(rng)),
        }
    }

    /// Painting finds the same first two rows as matching every row against
    /// every combination, for random tables of one to three parameters.
    #[test]
    fn painted_coverage_is_the_brute_force_one() {
        let mut rng = Rng::new(28);
        for _ in 0..400 {
            let params = 1 + rng.below(3) as usize;
            let domains: Vec<Vec<Value>> = (0..params)
                .map(|_| match rng.below(3) {
                    0 => vec![Value::Bool(false), Value::Bool(true)],
                    1 => (0..1 + rng.below(4) as u32).map(Value::Sym).collect(),
                    _ => {
                        let first = rng.below(7) as i64 - 3;
                        (first..first + 1 + rng.below(7) as i64)
                            .map(Value::Int)
                            .collect()
                    }
                })
                .collect();
            let rows: Vec<Vec<Key>> = (0..rng.below(9))
                .map(|_| domains.iter().map(|d| random_key(&mut rng, d)).collect())
                .collect();
            let cover = Coverage::paint(&domains, &rows);
            let mut idx = vec![0usize; params];
            loop {
                assert_eq!(
                    cover.rows_at(&idx),
                    brute(&domains, &rows, &idx),
                    "{domains:?} {rows:?} at {idx:?}"
                );
                let mut moved = false;
                for (i, d) in idx.iter_mut().zip(&domains).rev() {
                    *i += 1;
                    if *i < d.len() {
                        moved = true;
                        break;
                    }
                    *i = 0;
                }
                if !moved {
                    break;
                }
            }
        }
    }
}
