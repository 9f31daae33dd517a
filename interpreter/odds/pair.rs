//! `muster odds A --situation S --ruleset-b B`: one situation's odds under
//! two rulesets, side by side, with the difference B - A of each outcome's
//! values. The two rulesets number their symbols differently, so outcomes
//! are matched by name and values by how they are shown (`attacker`, `3`).

use crate::run::dice::Prob;
use crate::run::odds::{Method, Odds};
use num_rational::BigRational;
use num_traits::{One, Signed as _, Zero};
use serde_json::{json, Map, Value};

/// One situation's odds under one ruleset, its values shown as text.
pub struct Shown {
    pub ruleset: String,
    pub method: Method,
    /// Each outcome: its name and (value shown, probability), in order.
    pub outcomes: Vec<(String, Vec<(String, Prob)>)>,
}

impl Shown {
    /// Odds with their values shown by `show`.
    pub fn new(
        ruleset: &str,
        odds: &Odds,
        show: impl Fn(crate::base::value::Value) -> String,
    ) -> Shown {
        Shown {
            ruleset: ruleset.to_string(),
            method: odds.method.clone(),
            outcomes: odds
                .outcomes
                .iter()
                .map(|o| {
                    let values = o
                        .values
                        .iter()
                        .map(|(v, p)| (show(*v), p.clone()))
                        .collect();
                    (o.name.clone(), values)
                })
                .collect(),
        }
    }

    fn outcome(&self, name: &str) -> Option<&[(String, Prob)]> {
        self.outcomes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// One value of an outcome under both rulesets; `None` when the ruleset's
/// procedure has no such outcome at all (a value it never gives is 0).
pub struct Row {
    pub value: String,
    pub a: Option<Prob>,
    pub b: Option<Prob>,
}

/// A difference of two probabilities: exact while both are.
#[derive(Clone, Debug, PartialEq)]
pub enum Signed {
    /// In lowest terms, of any size.
    Exact(BigRational),
    Float(f64),
}

impl Signed {
    pub fn to_f64(&self) -> f64 {
        match self {
            Signed::Exact(r) => {
                let x = Prob::Big(std::sync::Arc::new(r.abs())).to_f64();
                if r.is_negative() {
                    -x
                } else {
                    x
                }
            }
            Signed::Float(x) => *x,
        }
    }
    /// `-1/36`, `5/72`, `0/1`, as `muster odds --json` writes its exact
    /// fractions; none unless exact.
    pub fn ratio(&self) -> Option<String> {
        match self {
            Signed::Exact(r) => Some(format!("{}/{}", r.numer(), r.denom())),
            Signed::Float(_) => None,
        }
    }
    /// `-1/36`, `+5/72`, `0`; none unless exact.
    pub fn fraction(&self) -> Option<String> {
        match self {
            Signed::Exact(r) if r.is_zero() => Some("0".into()),
            Signed::Exact(r) => {
                let sign = if r.is_negative() { "" } else { "+" };
                if r.denom().is_one() {
                    Some(format!("{sign}{}", r.numer()))
                } else {
                    Some(format!("{sign}{}/{}", r.numer(), r.denom()))
                }
            }
            Signed::Float(_) => None,
        }
    }
}

/// b - a, exact when both are.
pub fn difference(a: &Prob, b: &Prob) -> Signed {
    match (a.big(), b.big()) {
        (Some(a), Some(b)) => Signed::Exact(b - a),
        _ => Signed::Float(b.to_f64() - a.to_f64()),
    }
}

/// Every outcome of either, A's first, each with the values of either:
/// numbers in numeric order, other values A's order then B's new ones.
pub fn pair(a: &Shown, b: &Shown) -> Vec<(String, Vec<Row>)> {
    let mut names: Vec<&str> = a.outcomes.iter().map(|(n, _)| n.as_str()).collect();
    for (n, _) in &b.outcomes {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let (va, vb) = (a.outcome(name), b.outcome(name));
            let mut values: Vec<&str> = Vec::new();
            for (v, _) in va.into_iter().chain(vb).flatten() {
                if !values.contains(&v.as_str()) {
                    values.push(v);
                }
            }
            if values.iter().all(|v| v.parse::<i64>().is_ok()) {
                values.sort_by_key(|v| v.parse::<i64>().unwrap_or(0));
            }
            let p = |side: Option<&[(String, Prob)]>, v: &str| {
                side.map(|s| {
                    s.iter()
                        .find(|(x, _)| x == v)
                        .map_or(Prob::ZERO, |(_, p)| p.clone())
                })
            };
            let rows = values
                .into_iter()
                .map(|v| Row {
                    value: v.to_string(),
                    a: p(va, v),
                    b: p(vb, v),
                })
                .collect();
            (name.to_string(), rows)
        })
        .collect()
}

/// How odds were worked out, in words.
pub fn method_text(m: &Method) -> String {
    match m {
        Method::Exact => "exact".into(),
        Method::Sampled { samples, seed } => format!("sampled: {samples} runs, seed {seed}"),
        Method::Scripted => "scripted rolls".into(),
    }
}

/// The two distributions as a table: per value A, B, B - A, and the exact
/// fractions where both are exact. `read` (the situation read back, see
/// [`crate::cli::odds_report::Report::situation_text`]) comes before the odds.
pub fn table(proc: &str, desc: Option<&str>, read: &str, a: &Shown, b: &Shown) -> String {
    let mut out = String::new();
    if let Some(d) = desc {
        out.push_str(&format!("{d}\n"));
    }
    out.push_str(&format!("{proc}\n"));
    out.push_str(&format!(
        "  A: {} ({})\n",
        a.ruleset,
        method_text(&a.method)
    ));
    out.push_str(&format!(
        "  B: {} ({})\n",
        b.ruleset,
        method_text(&b.method)
    ));
    out.push_str(read);
    let exact = a.method == Method::Exact && b.method == Method::Exact;
    for (name, rows) in pair(a, b) {
        let w = rows
            .iter()
            .map(|r| r.value.len())
            .max()
            .unwrap_or(0)
            .max(12);
        out.push_str(&format!(
            "\n{name}\n  {:<w$} {:>7} {:>7} {:>8}{}\n",
            "",
            "A",
            "B",
            "B - A",
            if exact {
                "   exact: A -> B (B - A)"
            } else {
                ""
            }
        ));
        for r in rows {
            let shown =
                |p: Option<&Prob>| p.map_or("-".to_string(), |p| format!("{:.4}", p.to_f64()));
            let (diff, frac) = match (&r.a, &r.b) {
                (Some(pa), Some(pb)) => {
                    let d = difference(pa, pb);
                    let frac = match (exact, pa.exact_text(), pb.exact_text(), d.fraction()) {
                        (true, Some(_), Some(_), Some(fd)) => format!("   {pa} -> {pb} ({fd})"),
                        _ => String::new(),
                    };
                    (signed(d.to_f64()), frac)
                }
                _ => ("-".to_string(), String::new()),
            };
            out.push_str(&format!(
                "  {:<w$} {:>7} {:>7} {:>8}{frac}\n",
                r.value,
                shown(r.a.as_ref()),
                shown(r.b.as_ref()),
                diff
            ));
        }
    }
    out
}

/// A difference to four places, signed, or `0` when there is none.
fn signed(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:+.4}")
    }
}

/// The two distributions as JSON: `a` and `b` as `muster odds --json`
/// gives each, and `difference` (B - A per outcome and value), with
/// `exact_difference` as fractions where both are exact.
pub fn json(a: Value, b: Value, sa: &Shown, sb: &Shown) -> Value {
    let mut diff = Map::new();
    let mut exact = Map::new();
    let both_exact = sa.method == Method::Exact && sb.method == Method::Exact;
    for (name, rows) in pair(sa, sb) {
        let (mut d, mut e) = (Map::new(), Map::new());
        for r in rows {
            if let (Some(pa), Some(pb)) = (&r.a, &r.b) {
                let s = difference(pa, pb);
                d.insert(r.value.clone(), json!(s.to_f64()));
                if let (true, Some(f)) = (both_exact, s.ratio()) {
                    e.insert(r.value, json!(f));
                }
            }
        }
        diff.insert(name.clone(), Value::Object(d));
        if !e.is_empty() {
            exact.insert(name, Value::Object(e));
        }
    }
    let mut root = Map::new();
    root.insert("a".into(), a);
    root.insert("b".into(), b);
    root.insert("difference".into(), Value::Object(diff));
    if !exact.is_empty() {
        root.insert("exact_difference".into(), Value::Object(exact));
    }
    Value::Object(root)
}
