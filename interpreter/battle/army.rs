//! Army lists: check a roster (a TOML file of commands and their units)
//! against one of the ruleset's `army` lists, and total its points.

use crate::base::value::Value;
use crate::compile::ir::{ArmyAlways, ArmyDef, ArmyMatch, Id, Ruleset};
use crate::front::diagnostic::Diag;
use crate::front::source::Sources;
use crate::front::syntax::{Limit, Span};
use crate::odds::situation::{quality_named, span_of, unit_type_named};
use crate::run::eval::{Ctx, Eval, NoDice};
use crate::run::world::World;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RosterFile {
    #[serde(default)]
    army: Option<Spanned<String>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "command", default)]
    commands: Vec<Spanned<CommandSpec>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct CommandSpec {
    name: String,
    units: Vec<Spanned<UnitSpec>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct UnitSpec {
    #[serde(rename = "type")]
    ty: Spanned<String>,
    #[serde(default)]
    quality: Option<Spanned<String>>,
    #[serde(default = "one")]
    count: i64,
}

/// The most units a roster entry may count, and a roster may have when the
/// list prices them with the ruleset's defines (each becomes a unit of a
/// world).
const MAX_PRICED: i64 = 10_000;

fn one() -> i64 {
    1
}

/// One unit entry of a roster, resolved.
#[derive(Clone, Debug)]
pub struct Entry {
    pub ty: Id,
    pub quality: Option<Id>,
    pub count: i64,
    pub span: Span,
}

/// A checked roster: its totals and every rule it breaks.
#[derive(Debug)]
pub struct Report {
    pub army: String,
    pub name: Option<String>,
    pub units: i64,
    pub points: i64,
    /// What the army list allows the whole army: (least, most) units and
    /// points, where it says.
    pub allowed_units: Option<(i64, i64)>,
    pub allowed_points: Option<(i64, i64)>,
    pub commands: Vec<Command>,
    pub problems: Vec<Diag>,
    /// Where army-wide problems point: `army = ...`, else the first command.
    pub whole: Span,
}

/// A command of a roster, as an army builder shows it: each entry with its
/// cost, and the command's totals.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Command {
    pub name: String,
    pub units: i64,
    pub points: i64,
    pub entries: Vec<Line>,
}

/// One entry of a command: so many units of a type and quality, what one
/// costs, and what they cost together.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Line {
    #[serde(rename = "type")]
    pub unit_type: String,
    /// Its quality, or the ruleset's default quality when the entry names
    /// none (none when the ruleset has no qualities).
    pub quality: Option<String>,
    pub count: i64,
    pub each: i64,
    pub points: i64,
}

/// A checked roster as an army builder shows it: the army's totals against
/// what the list allows ("74 points of 45-90"), each command's totals, and
/// each entry with what one unit costs and what the entry costs.
pub fn roster_text(r: &Report) -> String {
    use std::fmt::Write;
    let of = |v: i64, allowed: Option<(i64, i64)>| match allowed {
        Some((lo, hi)) => format!("{v} of {lo}-{hi}"),
        None => v.to_string(),
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} (army list `{}`): {} units, {} points",
        r.name.as_deref().unwrap_or("roster"),
        r.army,
        of(r.units, r.allowed_units),
        of(r.points, r.allowed_points)
    );
    let what = |l: &Line| match &l.quality {
        Some(q) => format!("{} {}, {q}", l.count, l.unit_type),
        None => format!("{} {}", l.count, l.unit_type),
    };
    let wide = r
        .commands
        .iter()
        .flat_map(|c| c.entries.iter())
        .map(|l| what(l).chars().count())
        .max()
        .unwrap_or(0);
    for c in &r.commands {
        let _ = writeln!(o, "  {}: {} units, {} points", c.name, c.units, c.points);
        for l in &c.entries {
            let _ = writeln!(
                o,
                "    {:<wide$}  {:>3} each  {:>4}",
                what(l),
                l.each,
                l.points
            );
        }
    }
    o
}

/// The points one unit costs: its quality's (or the default quality's).
pub fn unit_points(rs: &Ruleset, quality: Option<Id>) -> i64 {
    quality
        .or(rs.default_quality)
        .and_then(|q| rs.qualities[q as usize].points)
        .unwrap_or(0)
}

/// Read a roster and check it. Malformed files are `Err`; broken army rules
/// are the report's `problems`.
pub fn check(
    rs: &Ruleset,
    name: &str,
    text: &str,
    sources: &mut Sources,
) -> Result<Report, Vec<Diag>> {
    let file = sources.add(name, text);
    let f: RosterFile = toml::from_str(text).map_err(|e| {
        let s = e.span().unwrap_or(0..1);
        vec![Diag::new("muster::roster", format!("the roster is not valid: {}", e.message()))
            .at(Span::new(file, s.start, s.end.max(s.start + 1)), "here")
            .help("a roster has `army = \"NAME\"` and `[[command]]` tables with `name` and `units = [{ type = \"Horse\", count = 2 }]`")]
    })?;
    // Army-wide problems point at `army = ...`, or else at the first command.
    let whole = match (&f.army, f.commands.first()) {
        (Some(a), _) => span_of(file, a),
        (None, Some(c)) => span_of(file, c),
        _ => Span::new(file, 0, text.len().min(1)),
    };
    let army: &ArmyDef = match &f.army {
        Some(a) => match rs.armies.iter().find(|x| x.name == *a.get_ref()) {
            Some(x) => x,
            None => {
                return Err(vec![Diag::new(
                    "muster::roster",
                    format!("the ruleset has no army list `{}`", a.get_ref()),
                )
                .at(span_of(file, a), "unknown army list")
                .help(format!(
                    "its army lists are: {}",
                    rs.armies
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))])
            }
        },
        None => match rs.armies.as_slice() {
            [only] => only,
            _ => {
                return Err(vec![Diag::new(
                    "muster::roster",
                    "the roster does not say which army list it follows",
                )
                .at(whole, "no `army = ...`")
                .help("add `army = \"NAME\"` at the top")])
            }
        },
    };
    let mut errs = Vec::new();
    let mut commands: Vec<(String, Vec<Entry>, Span)> = Vec::new();
    for c in &f.commands {
        let mut entries = Vec::new();
        for u in &c.get_ref().units {
            let us = u.get_ref();
            let ty = match unit_type_named(rs, "muster::roster", &us.ty, file) {
                Ok(t) => t,
                Err(d) => {
                    errs.push(d);
                    continue;
                }
            };
            let quality = match &us.quality {
                None => None,
                Some(q) => match quality_named(rs, "muster::roster", q, file) {
                    Ok(q) => Some(q),
                    Err(d) => {
                        errs.push(d);
                        continue;
                    }
                },
            };
            if us.count < 1 {
                errs.push(
                    Diag::new("muster::roster", "a count must be at least 1")
                        .at(span_of(file, u), "count below 1")
                        .help("leave the entry out instead"),
                );
                continue;
            }
            if us.count > MAX_PRICED {
                errs.push(
                    Diag::new("muster::roster", format!("a count of {} units", us.count))
                        .at(span_of(file, u), "too many")
                        .help(format!("a roster entry holds at most {MAX_PRICED} units")),
                );
                continue;
            }
            entries.push(Entry {
                ty,
                quality,
                count: us.count,
                span: span_of(file, u),
            });
        }
        commands.push((c.get_ref().name.clone(), entries, span_of(file, c)));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let count = |entries: &[&Entry], m: &ArmyMatch| -> i64 {
        entries
            .iter()
            .filter(|e| match m {
                ArmyMatch::Types(set) => set[e.ty as usize],
                ArmyMatch::Quality(q) => e.quality.or(rs.default_quality) == Some(*q),
            })
            .map(|e| e.count)
            .sum()
    };
    let mut problems = Vec::new();
    let all: Vec<&Entry> = commands.iter().flat_map(|c| c.1.iter()).collect();
    let units: i64 = all.iter().map(|e| e.count).sum();
    // With `price` or `require`, the roster becomes a world of its own (the
    // first side's units) that the ruleset's defines read.
    let mut world = None;
    if army.price.is_some() || !army.requires.is_empty() {
        if units > MAX_PRICED {
            return Err(vec![Diag::new(
                "muster::roster",
                format!(
                    "a roster of {units} units is more than army list `{}` can price",
                    army.name
                ),
            )
            .at(whole, "this roster")
            .help(format!(
                "an army list with `price` or `require` reads rosters of up to {MAX_PRICED} units"
            ))]);
        }
        let mut w = World::new(rs);
        for (ci, (cname, entries, _)) in commands.iter().enumerate() {
            for (ei, e) in entries.iter().enumerate() {
                for k in 0..e.count {
                    w.add_unit(
                        rs,
                        &format!("{cname} {ci}.{ei}.{k}"),
                        e.ty,
                        e.quality,
                        Some(0),
                    );
                }
            }
        }
        w.init_state(rs).map_err(|d| vec![d])?;
        world = Some(w);
    }
    let ev = Eval::new(rs);
    let eval = |id: Id, arg: Value| -> Result<Value, Vec<Diag>> {
        let f = &rs.defines[id as usize];
        let mut frame = vec![Value::None; f.slots.max(1) as usize];
        frame[0] = arg;
        let w = world.as_ref().expect("a roster world");
        ev.eval(Ctx::new(w), &f.body, &mut frame, &mut NoDice)
            .map_err(|e| {
                vec![e.diag_or(|| {
                    Diag::new("muster::army_list", format!("`{}` has no value for a roster", f.name))
                        .at(f.span, "reads something a roster does not have")
                        .help("a price or requirement reads the units' types, qualities, stats and state, not the table")
                })]
            })
    };
    // Each entry's price of one unit (the first of its copies).
    let mut price_of: Vec<Vec<i64>> = Vec::new();
    let mut next = 0u16;
    for (_, entries, _) in &commands {
        let mut v = Vec::new();
        for e in entries {
            let p = match army.price {
                // A fraction of a point rounds up, as the rules' own `ceil`.
                Some(id) => match eval(id, Value::Unit(next))?.as_frac() {
                    Some((n, d)) if d > 0 => (n + d - 1).div_euclid(d),
                    _ => 0,
                },
                None => unit_points(rs, e.quality),
            };
            v.push(p);
            next += e.count as u16;
        }
        price_of.push(v);
    }
    let points: i64 = commands
        .iter()
        .zip(&price_of)
        .flat_map(|((_, es, _), ps)| es.iter().zip(ps).map(|(e, p)| e.count * p))
        .sum();
    for (id, why, span) in &army.requires {
        if !eval(*id, Value::Side(0))?.as_bool() {
            problems.push(
                Diag::new(
                    "muster::army_list",
                    format!("the army breaks a rule: {why}"),
                )
                .at(whole, "this army")
                .note(*span, "the army list's rule")
                .help(format!(
                    "adjust the roster until `{}` holds",
                    rs.defines[*id as usize].name
                )),
            );
        }
    }
    let range = |what: &str, v: i64, (lo, hi): (i64, i64), at: Span, problems: &mut Vec<Diag>| {
        if v < lo || v > hi {
            problems.push(
                Diag::new(
                    "muster::army_list",
                    format!("{what} is {v}, outside {lo} to {hi}"),
                )
                .at(at, format!("{v} here"))
                .help(format!("army list `{}` allows {lo} to {hi}", army.name)),
            );
        }
    };
    if let Some(r) = army.units {
        range("the army's number of units", units, r, whole, &mut problems);
    }
    if let Some(r) = army.points {
        range("the army's points", points, r, whole, &mut problems);
    }
    for e in commands.iter().flat_map(|c| c.1.iter()) {
        for a in army.always.iter().filter(|a| a.types[e.ty as usize]) {
            always(rs, a, e, &army.name, &mut problems);
        }
    }
    let mut per = Vec::new();
    for ((cname, entries, cspan), prices) in commands.iter().zip(&price_of) {
        let refs: Vec<&Entry> = entries.iter().collect();
        let n: i64 = entries.iter().map(|e| e.count).sum();
        let p: i64 = entries.iter().zip(prices).map(|(e, p)| e.count * p).sum();
        per.push(Command {
            name: cname.clone(),
            units: n,
            points: p,
            entries: entries
                .iter()
                .zip(prices)
                .map(|(e, each)| Line {
                    unit_type: rs.unit_types[e.ty as usize].name.clone(),
                    quality: e
                        .quality
                        .or(rs.default_quality)
                        .map(|q| rs.qualities[q as usize].name.clone()),
                    count: e.count,
                    each: *each,
                    points: e.count * each,
                })
                .collect(),
        });
        if let Some(r) = army.per_command_units {
            range(
                &format!("command \"{cname}\"'s number of units"),
                n,
                r,
                *cspan,
                &mut problems,
            );
        }
        for l in army.limits.iter().filter(|l| l.per_command) {
            limit(
                l,
                count(&refs, &l.matches),
                &format!("command \"{cname}\""),
                *cspan,
                &army.name,
                &mut problems,
            );
        }
    }
    for l in army.limits.iter().filter(|l| !l.per_command) {
        limit(
            l,
            count(&all, &l.matches),
            "the army",
            whole,
            &army.name,
            &mut problems,
        );
    }
    Ok(Report {
        army: army.name.clone(),
        name: f.name,
        units,
        points,
        allowed_units: army.units,
        allowed_points: army.points,
        commands: per,
        problems,
        whole,
    })
}

/// `TYPES always QUALITIES`: a problem at the entry unless its quality (or
/// the default quality) is one of those the rule allows.
fn always(rs: &Ruleset, a: &ArmyAlways, e: &Entry, army: &str, problems: &mut Vec<Diag>) {
    let q = e.quality.or(rs.default_quality);
    if q.is_some_and(|q| a.qualities.contains(&q)) {
        return;
    }
    let ty = &rs.unit_types[e.ty as usize].name;
    let has = match q {
        Some(q) => rs.qualities[q as usize].name.clone(),
        None => "of no quality".to_string(),
    };
    let allowed: Vec<&str> = a
        .qualities
        .iter()
        .map(|q| rs.qualities[*q as usize].name.as_str())
        .collect();
    let allowed = allowed.join(" or ");
    let by_default = rs.default_quality.is_some_and(|d| a.qualities.contains(&d));
    problems.push(
        Diag::new(
            "muster::army_list",
            format!(
                "this {ty} is {has}, but army list `{army}` says {} always {allowed}",
                a.label
            ),
        )
        .at(e.span, format!("{has} {ty}"))
        .note(a.span, "the army list's rule")
        .help(if by_default {
            format!("make it {allowed}, or leave its quality out (the default)")
        } else {
            format!("give it the quality {allowed}")
        }),
    );
}

/// The rules of army lists that compare the armies of a match (`same
/// units for every side`, `same points for every side`): each roster
/// after the first is compared with the first, under the rules of both
/// their lists. A problem points at the later roster.
pub fn compare_sides(rs: &Ruleset, reports: &[Report]) -> Vec<Diag> {
    let list = |r: &Report| rs.armies.iter().find(|a| a.name == r.army);
    let mut problems = Vec::new();
    let Some(first) = reports.first() else {
        return problems;
    };
    for r in &reports[1..] {
        let rules: Vec<(bool, Span, &str)> = [list(first), list(r)]
            .into_iter()
            .flatten()
            .flat_map(|a| a.same.iter().map(move |(u, sp)| (*u, *sp, a.name.as_str())))
            .collect();
        for units in [true, false] {
            let Some((_, span, army)) = rules.iter().find(|x| x.0 == units) else {
                continue;
            };
            let (what, total, mine, theirs) = if units {
                ("units", "number of units", r.units, first.units)
            } else {
                ("points", "points", r.points, first.points)
            };
            if mine != theirs {
                problems.push(
                    Diag::new(
                        "muster::army_list",
                        format!(
                            "the armies differ in {what}: {mine} in this roster, {theirs} in the first"
                        ),
                    )
                    .at(r.whole, format!("{mine} {what}"))
                    .note(first.whole, format!("the first roster: {theirs} {what}"))
                    .note(*span, "the army list's rule")
                    .help(format!(
                        "army list `{army}` gives every side the same {total}; this roster has {} {}",
                        (mine - theirs).abs(),
                        if mine > theirs { "more" } else { "fewer" }
                    )),
                );
            }
        }
    }
    problems
}

fn limit(
    l: &crate::compile::ir::ArmyLimit,
    n: i64,
    who: &str,
    at: Span,
    army: &str,
    problems: &mut Vec<Diag>,
) {
    let (ok, rule) = match l.kind {
        Limit::AtMost => (n <= l.n, format!("at most {}", l.n)),
        Limit::AtLeast => (n >= l.n, format!("at least {}", l.n)),
        Limit::Exactly => (n == l.n, format!("exactly {}", l.n)),
    };
    if !ok {
        problems.push(
            Diag::new(
                "muster::army_list",
                format!(
                    "{who} has {n} {}, but army list `{army}` requires {rule}",
                    l.label
                ),
            )
            .at(at, format!("{n} {}", l.label))
            .help(format!(
                "adjust the roster: {rule} {} {}",
                l.label,
                if who == "the army" {
                    "in the army"
                } else {
                    "per command"
                }
            )),
        );
    }
}
