//! How `muster odds` shows one ruleset's odds, as a dice calculator does:
//! each outcome's values in their order (every value its type can take
//! between those that happen, at probability 0 where it never does), the
//! chance of each, for numbers the chance of at least and at most it and the
//! outcome's mean, exact fractions of any size when the odds are exact, and
//! 95% intervals when they are sampled. The text table and the JSON both
//! read the same [`Report`].

use crate::base::value::Value;
use crate::cli::simulate::wilson;
use crate::compile::ir::{Ruleset, Ty};
use crate::odds::situation::Reading;
use crate::run::dice::Prob;
use crate::run::odds::{Method, Odds, OutcomeOdds};
use crate::run::world::World;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use serde_json::{json, Map, Value as Json};

/// The widest run of whole numbers filled in between the values that
/// happen: wider, and only the values that happen are listed.
const MAX_GAP_FILL: i64 = 60;

/// One outcome, ready to show.
pub struct Outcome {
    pub name: String,
    pub rows: Vec<Row>,
    /// The mean of a numeric outcome.
    pub mean: Option<Mean>,
}

/// A mean: exact (a fraction of any size) or estimated from samples.
pub enum Mean {
    Exact(BigRational),
    Sampled(f64),
}

impl Mean {
    pub fn to_f64(&self) -> f64 {
        match self {
            Mean::Exact(r) => {
                let x = Prob::Big(std::sync::Arc::new(r.abs())).to_f64();
                if r.is_negative() {
                    -x
                } else {
                    x
                }
            }
            Mean::Sampled(x) => *x,
        }
    }
    /// The exact mean as `n/d` (`n` when whole); none when sampled.
    pub fn fraction(&self) -> Option<String> {
        match self {
            Mean::Exact(r) if r.is_integer() => Some(r.numer().to_string()),
            Mean::Exact(r) => Some(format!("{}/{}", r.numer(), r.denom())),
            Mean::Sampled(_) => None,
        }
    }
}

/// One value of an outcome.
pub struct Row {
    pub label: String,
    pub p: Prob,
    /// For numbers: P(outcome >= value) and P(outcome <= value).
    pub at_least: Option<Prob>,
    pub at_most: Option<Prob>,
    /// For sampled odds: the 95% interval of `p` (Wilson's score interval).
    pub interval: Option<(f64, f64)>,
}

/// A whole `muster odds` answer, ready to show.
pub struct Report {
    pub procedure: String,
    pub method: Method,
    pub outcomes: Vec<Outcome>,
    /// The facts the situation states, read back (shown before the odds,
    /// so that a fact stated the wrong way round is seen).
    pub situation: Vec<Reading>,
}

impl Report {
    pub fn new(rs: &Ruleset, w: &World, procedure: &str, odds: &Odds) -> Report {
        let samples = match odds.method {
            Method::Sampled { samples, .. } => Some(samples),
            _ => None,
        };
        let outcomes = odds
            .outcomes
            .iter()
            .map(|oc| outcome(rs, w, oc, samples))
            .collect();
        Report {
            procedure: procedure.to_string(),
            method: odds.method.clone(),
            outcomes,
            situation: Vec::new(),
        }
    }

    /// The report with the situation's facts read back.
    pub fn with_situation(mut self, readings: Vec<Reading>) -> Report {
        self.situation = readings;
        self
    }

    /// The block that reads the situation's facts back, one a line: as
    /// written, then in words. Empty when it states none.
    pub fn situation_text(&self) -> String {
        if self.situation.is_empty() {
            return String::new();
        }
        let width = self
            .situation
            .iter()
            .map(|r| r.written.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::from("\nthe situation, as read\n");
        for r in &self.situation {
            let pad = width - r.written.chars().count();
            out.push_str(&format!(
                "  {}{}  {}\n",
                r.written,
                " ".repeat(pad),
                r.words
            ));
        }
        out
    }

    fn exact(&self) -> bool {
        self.method == Method::Exact
    }

    /// The table `muster odds` prints.
    pub fn text(&self, description: Option<&str>) -> String {
        let mut out = String::new();
        if let Some(d) = description {
            out.push_str(&format!("{d}\n"));
        }
        out.push_str(&format!(
            "{} ({})\n",
            self.procedure,
            crate::odds::pair::method_text(&self.method)
        ));
        out.push_str(&self.situation_text());
        for oc in &self.outcomes {
            out.push('\n');
            out.push_str(&oc.name);
            if let Some(m) = &oc.mean {
                out.push_str(&format!("  (mean {}", decimal(m.to_f64())));
                if let (true, Some(f)) = (self.exact(), m.fraction()) {
                    if f.contains('/') {
                        out.push_str(&format!(" = {f}"));
                    }
                }
                out.push(')');
            }
            out.push('\n');
            out.push_str(&self.table(oc));
        }
        out
    }

    /// One outcome's rows, in columns as wide as their longest entry.
    fn table(&self, oc: &Outcome) -> String {
        let numeric = oc.mean.is_some();
        let mut head = vec!["value".to_string(), "chance".to_string()];
        if numeric {
            head.push("at least".into());
            head.push("at most".into());
        }
        let sampled = oc.rows.iter().any(|r| r.interval.is_some());
        if sampled {
            head.push("95% interval".into());
        }
        let exact = self.exact() && oc.rows.iter().all(|r| r.p.is_exact());
        if exact {
            head.push("exact".into());
        }
        let mut lines = vec![head];
        for r in &oc.rows {
            let mut l = vec![r.label.clone(), chance(&r.p)];
            if numeric {
                l.push(r.at_least.as_ref().map_or(String::new(), chance));
                l.push(r.at_most.as_ref().map_or(String::new(), chance));
            }
            if sampled {
                l.push(r.interval.map_or(String::new(), |(lo, hi)| {
                    format!("{} to {}", decimal(lo), decimal(hi))
                }));
            }
            if exact {
                l.push(match r.p.exact_text().as_deref() {
                    Some("0/1") => "0".into(),
                    Some("1/1") => "1".into(),
                    f => f.unwrap_or_default().to_string(),
                });
            }
            lines.push(l);
        }
        let cols = lines[0].len();
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for l in &lines {
            let mut s = String::from("  ");
            for (c, cell) in l.iter().enumerate() {
                let pad = width[c] - cell.chars().count();
                if c == 0 {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                } else if c == cols - 1 && exact {
                    s.push_str("  ");
                    s.push_str(cell);
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        }
        out
    }

    /// The JSON `muster odds --json` prints: `outcomes` (value -> chance)
    /// and `exact` (value -> fraction) as before, and `details`, each
    /// outcome in order with its mean and its values in order.
    pub fn json(&self, ruleset: &str) -> Json {
        let mut outcomes = Map::new();
        let mut exact = Map::new();
        let mut details = Vec::new();
        for oc in &self.outcomes {
            let mut m = Map::new();
            let mut e = Map::new();
            let mut rows = Vec::new();
            for r in &oc.rows {
                m.insert(r.label.clone(), json!(r.p.to_f64()));
                let fraction = r.p.exact_text().filter(|_| self.exact());
                if let Some(f) = &fraction {
                    e.insert(r.label.clone(), json!(f));
                }
                let mut row = Map::new();
                row.insert("value".into(), json!(r.label));
                row.insert("chance".into(), json!(r.p.to_f64()));
                if let Some(f) = fraction {
                    row.insert("exact".into(), json!(f));
                }
                if let (Some(a), Some(b)) = (&r.at_least, &r.at_most) {
                    row.insert("at_least".into(), json!(a.to_f64()));
                    row.insert("at_most".into(), json!(b.to_f64()));
                }
                if let Some((lo, hi)) = r.interval {
                    row.insert("interval".into(), json!([lo, hi]));
                }
                rows.push(Json::Object(row));
            }
            outcomes.insert(oc.name.clone(), Json::Object(m));
            if !e.is_empty() {
                exact.insert(oc.name.clone(), Json::Object(e));
            }
            let mut d = Map::new();
            d.insert("name".into(), json!(oc.name));
            if let Some(mean) = &oc.mean {
                d.insert("mean".into(), json!(mean.to_f64()));
                if let (true, Some(f)) = (self.exact(), mean.fraction()) {
                    d.insert("exact_mean".into(), json!(f));
                }
            }
            d.insert("values".into(), Json::Array(rows));
            details.push(Json::Object(d));
        }
        let mut root = Map::new();
        root.insert("ruleset".into(), json!(ruleset));
        root.insert("procedure".into(), json!(self.procedure));
        if !self.situation.is_empty() {
            let read: Vec<Json> = self
                .situation
                .iter()
                .map(|r| json!({"fact": r.written, "reads": r.words}))
                .collect();
            root.insert("situation".into(), Json::Array(read));
        }
        match &self.method {
            Method::Exact => {
                root.insert("method".into(), json!("exact"));
            }
            Method::Sampled { samples, seed } => {
                root.insert("method".into(), json!("sampled"));
                root.insert("samples".into(), json!(samples));
                root.insert("seed".into(), json!(seed));
            }
            Method::Scripted => {
                root.insert("method".into(), json!("scripted"));
            }
        }
        root.insert("outcomes".into(), Json::Object(outcomes));
        if !exact.is_empty() {
            root.insert("exact".into(), Json::Object(exact));
        }
        root.insert("details".into(), Json::Array(details));
        crate::cli::output::json_document("odds", Json::Object(root))
    }
}

/// A chance to four places; `0` when it is exactly none and `<0.0001` when
/// it is some but rounds to none, so neither is mistaken for the other.
fn chance(p: &Prob) -> String {
    if p.is_zero() {
        "0".into()
    } else if p.to_f64() < 0.00005 {
        "<0.0001".into()
    } else {
        format!("{:.4}", p.to_f64())
    }
}

fn decimal(x: f64) -> String {
    format!("{x:.4}")
}

/// One outcome's rows: its values in order, every value of its type filled
/// in between (at 0), with the at-least and at-most chances of numbers.
fn outcome(rs: &Ruleset, w: &World, oc: &OutcomeOdds, samples: Option<u64>) -> Outcome {
    let values = filled(rs, oc);
    let numeric = !values.is_empty()
        && values
            .iter()
            .all(|(v, _)| matches!(v, Value::Int(_) | Value::Frac(..)))
        && !matches!(oc.ty, Ty::Tallies(_));
    // P(at least each value), summed from the greatest down.
    let mut at_least = vec![None; values.len()];
    if numeric {
        let mut above = Prob::ZERO;
        for (i, (_, p)) in values.iter().enumerate().rev() {
            above = above.plus(p);
            at_least[i] = Some(above.clone());
        }
    }
    let mut rows = Vec::with_capacity(values.len());
    let mut below = Prob::ZERO;
    for ((v, p), at_least) in values.iter().zip(at_least) {
        let at_most = numeric.then(|| {
            below = below.plus(p);
            below.clone()
        });
        rows.push(Row {
            label: w.show_typed(rs, &oc.ty, *v),
            p: p.clone(),
            at_least,
            at_most,
            interval: samples.map(|n| wilson(p.to_f64(), n)),
        });
    }
    let mean = numeric.then(|| mean(&values));
    Outcome {
        name: oc.name.clone(),
        rows,
        mean,
    }
}

/// The outcome's values with the values of its type it never gives: both
/// truth values, every symbol it may take, whole numbers between the least
/// and greatest (up to [`MAX_GAP_FILL`] of them); all in order.
fn filled(rs: &Ruleset, oc: &OutcomeOdds) -> Vec<(Value, Prob)> {
    let mut all: Vec<Value> = match &oc.ty {
        Ty::Bool => vec![Value::Bool(false), Value::Bool(true)],
        Ty::Symbols(s) => s.iter().map(|&x| Value::Sym(x)).collect(),
        Ty::Enum(e) => rs.enums[*e as usize]
            .variants
            .iter()
            .map(|&x| Value::Sym(x))
            .collect(),
        Ty::Int => {
            let ints: Vec<i64> = oc
                .values
                .iter()
                .filter_map(|(v, _)| match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                })
                .collect();
            match (ints.iter().min(), ints.iter().max()) {
                (Some(&lo), Some(&hi))
                    if ints.len() == oc.values.len() && hi - lo < MAX_GAP_FILL =>
                {
                    (lo..=hi).map(Value::Int).collect()
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    if all.is_empty() {
        return oc.values.clone();
    }
    // A value outside what the type lists (none, say) keeps its place
    // after those listed.
    for (v, _) in &oc.values {
        if !all.contains(v) {
            all.push(*v);
        }
    }
    all.into_iter()
        .map(|v| {
            let p = oc
                .values
                .iter()
                .find(|(x, _)| *x == v)
                .map_or(Prob::ZERO, |(_, p)| p.clone());
            (v, p)
        })
        .collect()
}

/// The mean of a numeric outcome: exact when every chance is.
fn mean(values: &[(Value, Prob)]) -> Mean {
    let exact: Option<BigRational> = values.iter().try_fold(BigRational::zero(), |acc, (v, p)| {
        let p = p.big()?;
        let x = match v {
            Value::Int(i) => BigRational::from_integer(BigInt::from(*i)),
            Value::Frac(n, d) => BigRational::new(BigInt::from(*n), BigInt::from(*d)),
            _ => return None,
        };
        Some(acc + x * p)
    });
    match exact {
        Some(m) => Mean::Exact(m),
        None => Mean::Sampled(
            values
                .iter()
                .map(|(v, p)| {
                    let x = match v {
                        Value::Int(i) => *i as f64,
                        Value::Frac(n, d) => *n as f64 / *d as f64,
                        _ => 0.0,
                    };
                    x * p.to_f64()
                })
                .sum(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chances_of_none_and_of_almost_none_differ() {
        assert_eq!(chance(&Prob::ZERO), "0");
        assert_eq!(chance(&Prob::ratio(1, 46656)), "<0.0001");
        assert_eq!(chance(&Prob::ratio(8, 27)), "0.2963");
    }
}
