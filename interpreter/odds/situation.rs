//! Situation files: the TOML an `odds` query reads. A situation names the
//! procedure, the units taking part (type, quality, side, state), side state,
//! options, the facts that hold (written in the language itself), and
//! optionally scripted rolls for a book's worked example.

use crate::base::value::Value;
use crate::compile::ir::{Id, Ruleset, Ty};
use crate::front::diagnostic::Diag;
use crate::front::parse::parse_expr;
use crate::front::source::Sources;
use crate::front::syntax::{ExprKind, FileId, Span};
use crate::run::world::World;
use crate::run::world::MAX_UNITS;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    procedure: Option<Spanned<String>>,
    #[serde(default)]
    units: BTreeMap<String, Spanned<UnitSpec>>,
    #[serde(default)]
    sides: BTreeMap<String, Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    facts: Vec<Spanned<String>>,
    #[serde(default)]
    args: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    rolls: Option<Vec<i64>>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct UnitSpec {
    #[serde(rename = "type")]
    ty: Spanned<String>,
    #[serde(default)]
    quality: Option<Spanned<String>>,
    #[serde(default)]
    side: Option<Spanned<String>>,
    #[serde(default)]
    state: BTreeMap<String, Spanned<toml::Value>>,
}

/// A situation, resolved against a ruleset.
#[derive(Clone, Debug)]
pub struct Situation {
    /// The procedure `odds` runs (a situation for queries may name none).
    pub procedure: Option<Id>,
    pub world: World,
    /// The procedure's arguments, in parameter order.
    pub args: Vec<Value>,
    pub rolls: Option<Vec<i64>>,
    pub description: Option<String>,
    /// Where the situation names its procedure (or its first line): runtime
    /// problems that have no place of their own are reported here.
    pub span: Span,
    /// The facts it states, in its order: what `odds` says it understood.
    pub stated: Vec<Stated>,
}

/// One fact a situation states: the fact, its arguments and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Stated {
    pub fact: Id,
    pub args: Vec<Value>,
    pub value: Value,
}

/// A number option (a face count...) named by a situation or scenario: it
/// is fixed when the ruleset is compiled, so a file run against the
/// compiled ruleset cannot change it.
pub(crate) fn number_option_fixed(name: &str, at: Span) -> Diag {
    Diag::new(
        "muster::option",
        format!("option `{name}` is a number the ruleset is compiled with"),
    )
    .at(at, "set here")
    .help(format!(
        "give it on the command line (`--option {name}=N`) or in a house rule that extends the ruleset (`override option {name} = N`)"
    ))
}

pub(crate) fn span_of<T>(file: FileId, s: &Spanned<T>) -> Span {
    let r = s.span();
    Span::new(file, r.start, r.end)
}

/// A unit type named in a TOML file, or a diagnostic with a suggestion.
pub(crate) fn unit_type_named(
    rs: &Ruleset,
    code: &'static str,
    name: &Spanned<String>,
    file: FileId,
) -> Result<Id, Diag> {
    rs.unit_type(name.get_ref()).ok_or_else(|| {
        let sugg = crate::compile::compiler::suggest(
            name.get_ref(),
            rs.unit_types.iter().map(|u| u.name.as_str()),
        );
        Diag::new(code, format!("unknown unit type `{}`", name.get_ref()))
            .at(span_of(file, name), "not a unit type of this ruleset")
            .help(match sugg {
                Some(x) => format!("did you mean \"{x}\"?"),
                None => format!(
                    "the unit types are: {}",
                    rs.unit_types
                        .iter()
                        .map(|u| u.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    })
}

/// A quality named in a TOML file, or a diagnostic listing the qualities.
pub(crate) fn quality_named(
    rs: &Ruleset,
    code: &'static str,
    name: &Spanned<String>,
    file: FileId,
) -> Result<Id, Diag> {
    rs.quality(name.get_ref()).ok_or_else(|| {
        Diag::new(code, format!("unknown quality `{}`", name.get_ref()))
            .at(span_of(file, name), "not a quality of this ruleset")
            .help(format!(
                "the qualities are: {}",
                rs.qualities
                    .iter()
                    .map(|q| q.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
    })
}

/// Read a situation. Problems are diagnostics pointing into the file.
pub fn read(
    rs: &Ruleset,
    name: &str,
    text: &str,
    sources: &mut Sources,
) -> Result<Situation, Vec<Diag>> {
    let file = sources.add(name, text);
    let f: File = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..1);
        vec![Diag::new("muster::situation", format!("the situation file is not valid: {}", e.message()))
            .at(Span::new(file, span.start, span.end.max(span.start + 1)), "here")
            .help("a situation has `procedure = \"NAME\"`, `[units.NAME] type = \"...\"`, and optionally `facts`, `[options]`, `[sides.NAME]`, `args`, `rolls`")]
    })?;
    let mut diags = Vec::new();
    let proc = match &f.procedure {
        None => None,
        Some(pn) => match rs.procedure(pn.get_ref()) {
            Some(p) => Some(p),
            None => {
                let sugg = crate::compile::compiler::suggest(
                    pn.get_ref(),
                    rs.procedures.iter().map(|p| p.name.as_str()),
                );
                diags.push(
                    Diag::new(
                        "muster::situation",
                        format!("the ruleset has no procedure `{}`", pn.get_ref()),
                    )
                    .at(span_of(file, pn), "unknown procedure")
                    .help(match sugg {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "its procedures are: {}",
                            rs.procedures
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }),
                );
                None
            }
        },
    };
    let mut world = World::new(rs);
    // Options.
    for (k, v) in &f.options {
        match rs.option(k) {
            Some(o) => match (rs.options[o as usize].number, v.get_ref()) {
                (None, toml::Value::Boolean(on)) => world.options[o as usize] = *on,
                (None, _) => diags.push(
                    Diag::new("muster::situation", format!("option `{k}` is on or off"))
                        .at(span_of(file, v), "not true or false")
                        .help(format!("write `{k} = true` or `{k} = false`")),
                ),
                (Some(_), _) => diags.push(number_option_fixed(k, span_of(file, v))),
            },
            None => diags.push(
                Diag::new(
                    "muster::situation",
                    format!("the ruleset has no option `{k}`"),
                )
                .at(span_of(file, v), "unknown option")
                .help(format!(
                    "its options are: {}",
                    rs.options
                        .iter()
                        .map(|o| o.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ),
        }
    }
    // Units: no more than a scenario may have (their numbers are 16-bit,
    // and exact odds weigh every unit against every other).
    if f.units.len() > MAX_UNITS {
        let mut spans: Vec<Span> = f.units.values().map(|u| span_of(file, u)).collect();
        spans.sort_by_key(|s| s.start);
        diags.push(
            Diag::new(
                "muster::situation",
                format!("the situation has {} units, more than the {MAX_UNITS} it may have", f.units.len()),
            )
            .at(spans[MAX_UNITS], format!("unit {} of the situation", MAX_UNITS + 1))
            .help(format!(
                "a situation has at most {MAX_UNITS} units, as a scenario does: name only the units \
                 the procedure looks at"
            )),
        );
        return Err(diags);
    }
    let mut unit_ids: BTreeMap<String, u16> = BTreeMap::new();
    for (name, spec) in &f.units {
        let s = spec.get_ref();
        let ty = match unit_type_named(rs, "muster::situation", &s.ty, file) {
            Ok(t) => t,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let quality = match &s.quality {
            None => None,
            Some(q) => match quality_named(rs, "muster::situation", q, file) {
                Ok(q) => Some(q),
                Err(d) => {
                    diags.push(d);
                    None
                }
            },
        };
        let side = match &s.side {
            Some(sd) => match rs.side(sd.get_ref()) {
                Some(x) => Some(x),
                None => {
                    diags.push(
                        Diag::new(
                            "muster::situation",
                            format!("unknown side `{}`", sd.get_ref()),
                        )
                        .at(span_of(file, sd), "not a side of this ruleset")
                        .help(if rs.sides.is_empty() {
                            "this ruleset declares no sides; leave `side` out".to_string()
                        } else {
                            format!("the sides are: {}", rs.sides.join(", "))
                        }),
                    );
                    None
                }
            },
            // A unit named like a side belongs to it.
            None => rs.side(name),
        };
        let id = world.add_unit(rs, name, ty, quality, side);
        unit_ids.insert(name.clone(), id);
    }
    if let Err(d) = world.init_state(rs) {
        diags.push(d);
        return Err(diags);
    }
    // Unit state.
    let ns = rs.states.len();
    for (name, spec) in &f.units {
        let Some(u) = unit_ids.get(name) else {
            continue;
        };
        for (k, v) in &spec.get_ref().state {
            match rs.state(k) {
                Some(s) => match toml_value(v.get_ref(), &rs.states[s as usize].ty, rs) {
                    Some(val) => world.state[*u as usize * ns + s as usize] = val,
                    None => diags.push(bad_value(file, v, &rs.ty_name(&rs.states[s as usize].ty))),
                },
                None => diags.push(
                    Diag::new(
                        "muster::situation",
                        format!("the ruleset has no unit state `{k}`"),
                    )
                    .at(span_of(file, v), "unknown state")
                    .help(format!(
                        "unit state is: {}",
                        rs.states
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                ),
            }
        }
    }
    // Side state.
    let nss = rs.side_states.len();
    for (name, table) in &f.sides {
        let Some(sd) = world.side_names.iter().position(|s| s == name) else {
            diags.push(
                Diag::new("muster::situation", format!("unknown side `{name}`"))
                    .at(span_of(file, table), "not a side")
                    .help(format!("the sides are: {}", world.side_names.join(", "))),
            );
            continue;
        };
        for (k, v) in table.get_ref() {
            match rs.side_state(k) {
                Some(s) => match toml_value(v.get_ref(), &rs.side_states[s as usize].ty, rs) {
                    Some(val) => world.side_state[sd * nss + s as usize] = val,
                    None => diags.push(bad_value(
                        file,
                        v,
                        &rs.ty_name(&rs.side_states[s as usize].ty),
                    )),
                },
                None => diags.push(
                    Diag::new(
                        "muster::situation",
                        format!("the ruleset has no side state `{k}`"),
                    )
                    .at(span_of(file, v), "unknown side state")
                    .help(format!(
                        "side state is: {}",
                        rs.side_states
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                ),
            }
        }
    }
    // Facts, written as expressions of the language; each once (two
    // values for one fact contradict each other: neither wins).
    let mut stated: Vec<(Stated, Span)> = Vec::new();
    for fact in &f.facts {
        let sp = fact.span();
        // The text sits between quotes; spans start after the opening one.
        match parse_expr(&number_is(fact.get_ref()), file, sp.start + 1) {
            Err(d) => diags.push(d),
            Ok(e) => match assert_fact(rs, &world, &unit_ids, &e) {
                Err(d) => diags.push(d),
                Ok(st) => match stated
                    .iter()
                    .find(|(o, _)| o.fact == st.fact && o.args == st.args)
                {
                    Some((o, at)) if o.value != st.value => {
                        diags.push(contradiction(rs, &world, &st, o, *at, e.span))
                    }
                    Some(_) => {}
                    None => {
                        world.set_fact(st.fact, st.args.clone(), st.value);
                        stated.push((st, e.span));
                    }
                },
            },
        }
    }
    // Arguments.
    let mut args = Vec::new();
    if let Some(p) = proc {
        let pd = &rs.procedures[p as usize];
        for (pname, pty) in &pd.params {
            let given = f.args.get(pname);
            // A number, true/false or an enum value is the argument itself.
            if !matches!(pty, Ty::Unit | Ty::Side) {
                match given {
                    Some(g) => match toml_value(g.get_ref(), pty, rs) {
                        Some(v) => args.push(v),
                        None => diags.push(bad_value(file, g, &rs.ty_name(pty))),
                    },
                    None => {
                        let mut d = Diag::new(
                            "muster::situation",
                            format!(
                                "procedure `{}` needs its parameter `{pname}` ({})",
                                pd.name,
                                rs.ty_name(pty)
                            ),
                        )
                        .help(format!("add `{pname} = VALUE` under `[args]`"));
                        if let Some(pn) = &f.procedure {
                            d = d.at(span_of(file, pn), "this procedure");
                        }
                        diags.push(d);
                    }
                }
                continue;
            }
            let target = match given.map(|g| g.get_ref()) {
                None => pname.clone(),
                Some(toml::Value::String(s)) => s.clone(),
                Some(_) => {
                    diags.push(bad_value(
                        file,
                        given.unwrap(),
                        "quoted name of a unit or side",
                    ));
                    continue;
                }
            };
            // A unit that was declared but rejected has been reported already.
            if f.units.contains_key(&target) && !unit_ids.contains_key(&target) {
                continue;
            }
            let v = match pty {
                Ty::Unit => unit_ids.get(&target).map(|u| Value::Unit(*u)),
                Ty::Side => world
                    .side_names
                    .iter()
                    .position(|s| *s == target)
                    .map(|s| Value::Side(s as u16)),
                _ => None,
            };
            match v {
                Some(v) => args.push(v),
                None => {
                    let mut d = Diag::new(
                        "muster::situation",
                        format!("procedure `{}` needs its parameter `{pname}` ({})", pd.name, rs.ty_name(pty)),
                    )
                    .help(format!(
                        "add `[units.{pname}]` (or `[args] {pname} = \"NAME\"` naming a {} of the situation)",
                        rs.ty_name(pty)
                    ));
                    d = match (given, &f.procedure) {
                        (Some(g), _) => d.at(span_of(file, g), "no unit or side of this name"),
                        (None, Some(pn)) => d.at(span_of(file, pn), "this procedure"),
                        (None, None) => d,
                    };
                    diags.push(d);
                }
            }
        }
        for (k, v) in &f.args {
            if !pd.params.iter().any(|(n, _)| n == k) {
                diags.push(
                    Diag::new(
                        "muster::situation",
                        format!("procedure `{}` has no parameter `{k}`", pd.name),
                    )
                    .at(span_of(file, v), "unknown parameter")
                    .help(format!(
                        "its parameters are: {}",
                        pd.params
                            .iter()
                            .map(|p| p.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                );
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Situation {
        procedure: proc,
        world,
        args,
        rolls: f.rolls,
        description: f.description,
        stated: stated.into_iter().map(|(st, _)| st).collect(),
        span: f
            .procedure
            .as_ref()
            .map(|p| span_of(file, p))
            .unwrap_or(Span::new(file, 0, text.len().min(1))),
    })
}

fn bad_value(file: FileId, v: &Spanned<toml::Value>, ty: &str) -> Diag {
    Diag::new("muster::situation", format!("this value is not a {ty}"))
        .at(span_of(file, v), format!("expected a {ty}"))
        .help("numbers for int state and arguments, true/false for bool, a quoted name for an enum value, a unit or a side")
}

fn toml_value(v: &toml::Value, ty: &Ty, rs: &Ruleset) -> Option<Value> {
    match (v, ty) {
        (toml::Value::Integer(i), Ty::Int) => Some(Value::Int(*i)),
        (toml::Value::Boolean(b), Ty::Bool) => Some(Value::Bool(*b)),
        (toml::Value::String(s), Ty::Enum(e)) => rs.enums[*e as usize]
            .variants
            .iter()
            .find(|v| rs.symbols[**v as usize] == *s)
            .map(|v| Value::Sym(*v)),
        _ => None,
    }
}

/// A fact statement with `is NUMBER` (`"overlaps(defender) is 1"`, which
/// the language does not parse: `is` takes names) as `== NUMBER`, the
/// same length, so that spans stay where the author wrote them.
fn number_is(text: &str) -> std::borrow::Cow<'_, str> {
    match text.rsplit_once(" is ") {
        Some((lhs, n)) if n.trim().parse::<i64>().is_ok() => format!("{lhs} == {n}").into(),
        _ => text.into(),
    }
}

/// Two statements of one fact with different values: the second is
/// reported, with the first as its note.
fn contradiction(
    rs: &Ruleset,
    world: &World,
    st: &Stated,
    first: &Stated,
    first_at: Span,
    at: Span,
) -> Diag {
    let say = |s: &Stated| describe_value(rs, world, s.value);
    Diag::new(
        "muster::situation",
        format!(
            "fact `{}` is stated twice, as {} and as {}",
            rs.facts[st.fact as usize].name,
            say(first),
            say(st)
        ),
    )
    .at(at, format!("stated as {} here", say(st)))
    .note(first_at, format!("stated as {} here", say(first)))
    .help("a situation states each fact once; keep the one you mean")
}

/// A type's name with its article: "an int", "a bool".
fn article(name: &str) -> String {
    let an = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if an { "an" } else { "a" })
}

/// A fact's value as a situation writes it.
fn describe_value(rs: &Ruleset, world: &World, v: Value) -> String {
    match v {
        Value::Unit(u) => world.units[u as usize].name.clone(),
        Value::Side(s) => world.side_names[s as usize].clone(),
        Value::Sym(s) => rs.symbols[s as usize].clone(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// Read one fact statement: `f(a, b)`, `not f(a)`, `f(a) == V`, `f(a, b) is V`.
fn assert_fact(
    rs: &Ruleset,
    world: &World,
    units: &BTreeMap<String, u16>,
    e: &crate::front::syntax::Expr,
) -> Result<Stated, Diag> {
    let bad = || {
        Diag::new("muster::situation", "a fact is written `name(args)`, `not name(args)`, `name(args) == value` or `name(args) is value`")
            .at(e.span, "not a fact statement")
            .help("e.g. \"charging(attacker)\", \"not in_difficult(defender)\", \"position(defender, attacker) is to_flank\"")
    };
    enum Given<'a> {
        True,
        Bool(bool),
        Int(i64),
        Name(&'a crate::front::syntax::Name),
    }
    let (call, value) = match &e.kind {
        ExprKind::Call(n, a) => ((n, a), Given::True),
        ExprKind::Not(inner) => match &inner.kind {
            ExprKind::Call(n, a) => ((n, a), Given::Bool(false)),
            _ => return Err(bad()),
        },
        ExprKind::Is(lhs, names, false) if names.len() == 1 => match &lhs.kind {
            ExprKind::Call(n, a) => ((n, a), Given::Name(&names[0])),
            _ => return Err(bad()),
        },
        ExprKind::Binary(crate::front::syntax::BinOp::Eq, lhs, rhs) => match (&lhs.kind, &rhs.kind)
        {
            (ExprKind::Call(n, a), ExprKind::Name(v)) => ((n, a), Given::Name(v)),
            (ExprKind::Call(n, a), ExprKind::Int(i)) => ((n, a), Given::Int(*i)),
            (ExprKind::Call(n, a), ExprKind::Bool(b)) => ((n, a), Given::Bool(*b)),
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    };
    let (name, args) = call;
    let Some(fid) = rs.fact(&name.text) else {
        let sugg =
            crate::compile::compiler::suggest(&name.text, rs.facts.iter().map(|f| f.name.as_str()));
        return Err(Diag::new(
            "muster::situation",
            format!("the ruleset has no fact `{}`", name.text),
        )
        .at(name.span, "unknown fact")
        .help(match sugg {
            Some(s) => format!("did you mean `{s}`?"),
            None => "a situation states facts the ruleset declares with `fact`".to_string(),
        }));
    };
    let fd = &rs.facts[fid as usize];
    if let Some(h) = fd.hook {
        return Err(Diag::new(
            "muster::situation",
            format!(
                "fact `{}` is derived by hook `{}`; a situation cannot state it",
                fd.name, rs.hooks[h as usize].name
            ),
        )
        .at(name.span, "derived, not stated")
        .help("state what the hook reads instead (the units' state, other facts)"));
    }
    if args.len() != fd.params.len() {
        return Err(Diag::new(
            "muster::situation",
            format!("fact `{}` takes {} arguments", fd.name, fd.params.len()),
        )
        .at(e.span, "wrong number of arguments")
        .help(format!(
            "its parameters are: ({})",
            fd.params
                .iter()
                .map(|t| rs.ty_name(t))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut key = Vec::new();
    for (a, ty) in args.iter().zip(&fd.params) {
        let v = match (&a.kind, ty) {
            (ExprKind::Name(n), Ty::Unit) => units.get(&n.text).map(|u| Value::Unit(*u)),
            (ExprKind::Name(n), Ty::Side) => world
                .side_names
                .iter()
                .position(|s| *s == n.text)
                .map(|s| Value::Side(s as u16)),
            (ExprKind::Name(n), Ty::Enum(en)) => enum_value(rs, *en, &n.text),
            (ExprKind::Int(i), Ty::Int) => Some(Value::Int(*i)),
            (ExprKind::Bool(b), Ty::Bool) => Some(Value::Bool(*b)),
            _ => None,
        };
        match v {
            Some(v) => key.push(v),
            None => {
                return Err(Diag::new(
                    "muster::situation",
                    format!("this argument is not a {} of the situation", rs.ty_name(ty)),
                )
                .at(a.span, format!("expected a {}", rs.ty_name(ty)))
                .help(format!(
                    "name one of the situation's units: {}",
                    units.keys().cloned().collect::<Vec<_>>().join(", ")
                )))
            }
        }
    }
    let wrong = |what: &str| {
        Diag::new(
            "muster::situation",
            format!(
                "fact `{}` is {}, not {what}",
                fd.name,
                article(&rs.ty_name(&fd.ty))
            ),
        )
        .at(e.span, "wrong kind of value")
        .help(match fd.ty {
            Ty::Bool => format!("write \"{}(...)\" or \"not {}(...)\"", fd.name, fd.name),
            Ty::Int => format!(
                "a number fact is given its value: write \"{}(...) is NUMBER\" (or `== NUMBER`)",
                fd.name
            ),
            _ => format!("write \"{}(...) is VALUE\"", fd.name),
        })
    };
    let v = match value {
        Given::True if fd.ty == Ty::Bool => Value::Bool(true),
        Given::Bool(b) if fd.ty == Ty::Bool => Value::Bool(b),
        Given::Int(i) if fd.ty == Ty::Int => Value::Int(i),
        Given::True | Given::Bool(_) => return Err(wrong("true/false")),
        Given::Int(_) => return Err(wrong("a number")),
        Given::Name(n) => {
            let v = match &fd.ty {
                Ty::Enum(en) => enum_value(rs, *en, &n.text),
                Ty::Unit => units.get(&n.text).map(|u| Value::Unit(*u)),
                Ty::Side => world
                    .side_names
                    .iter()
                    .position(|s| *s == n.text)
                    .map(|s| Value::Side(s as u16)),
                _ => None,
            };
            match v {
                Some(v) => v,
                None => {
                    return Err(Diag::new(
                        "muster::situation",
                        format!("`{}` is not a value of fact `{}`", n.text, fd.name),
                    )
                    .at(n.span, format!("expected a {}", rs.ty_name(&fd.ty)))
                    .help(match &fd.ty {
                        Ty::Enum(en) => format!(
                            "one of: {}",
                            rs.enums[*en as usize]
                                .variants
                                .iter()
                                .map(|v| rs.symbols[*v as usize].as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        _ => "check the fact's type in the ruleset".to_string(),
                    }))
                }
            }
        }
    };
    Ok(Stated {
        fact: fid,
        args: key,
        value: v,
    })
}

fn enum_value(rs: &Ruleset, en: Id, name: &str) -> Option<Value> {
    rs.enums[en as usize]
        .variants
        .iter()
        .find(|v| rs.symbols[**v as usize] == name)
        .map(|v| Value::Sym(*v))
}

/// One fact a situation states, read back as `odds` understood it: as
/// written (with the situation's names) and in the words of the fact's
/// declaration, its arguments put in their parameters' places, so that a
/// relation stated the wrong way round reads the wrong way round.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// `position(defender, attacker) is to_flank`, `not charging(attacker)`.
    pub written: String,
    /// `where attacker lies as seen from defender: to_flank`.
    pub words: String,
}

impl Situation {
    /// The facts the situation states, each read back ([`Reading`]).
    pub fn readings(&self, rs: &Ruleset, sources: &Sources) -> Vec<Reading> {
        self.stated
            .iter()
            .map(|st| reading(rs, &self.world, sources, st))
            .collect()
    }
}

/// The most characters of a fact's doc that a reading quotes.
const MAX_WORDS: usize = 100;

/// One stated fact read back: see [`Reading`].
fn reading(rs: &Ruleset, world: &World, sources: &Sources, st: &Stated) -> Reading {
    let fd = &rs.facts[st.fact as usize];
    let args: Vec<String> = st
        .args
        .iter()
        .map(|v| describe_value(rs, world, *v))
        .collect();
    let call = format!("{}({})", fd.name, args.join(", "));
    let value = describe_value(rs, world, st.value);
    let written = match st.value {
        Value::Bool(true) => call,
        Value::Bool(false) => format!("not {call}"),
        _ => format!("{call} is {value}"),
    };
    let text = &sources.get(fd.span.file).text;
    let doc = crate::front::syntax::doc_comment(text, fd.span.start as usize);
    let (mut said, placed) = in_its_places(fd, &first_sentence(&fd.name, &doc), &args);
    if said.is_empty() {
        said = fd.name.replace('_', " ");
    }
    if !placed && !args.is_empty() {
        said = format!("{said} ({})", roles(rs, fd, &args));
    }
    let words = match st.value {
        Value::Bool(true) => said,
        Value::Bool(false) => format!("not: {said}"),
        _ => format!("{said}: {value}"),
    };
    Reading { written, words }
}

/// The first sentence of a fact's doc comment, without the book's section
/// (`§Step 3.2: `) or the fact's own signature (`position(u, other): `)
/// before it, cut to [`MAX_WORDS`] characters.
fn first_sentence(name: &str, doc: &str) -> String {
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut s = flat.as_str();
    if s.starts_with('§') {
        s = s.split_once(": ").map_or("", |(_, rest)| rest);
    }
    if let Some(rest) = s.strip_prefix(name).filter(|r| r.starts_with('(')) {
        if let Some((_, after)) = rest.split_once("): ") {
            s = after;
        }
    }
    let end = s.find(". ").map_or(s.len(), |i| i + 1);
    let s = s[..end].trim_end_matches('.');
    match s.char_indices().nth(MAX_WORDS) {
        Some((i, _)) => format!("{} ...", &s[..i]),
        None => s.to_string(),
    }
}

/// The doc's words with the arguments in their parameters' places: a
/// parameter written `` `u` `` becomes the argument; where the doc speaks of
/// "the unit" (one parameter) or "the first unit" and "the second" (two),
/// as the shipped rulesets do, those become the arguments. Also whether any
/// argument was placed.
fn in_its_places(fd: &crate::compile::ir::FactDef, said: &str, args: &[String]) -> (String, bool) {
    let mut out = said.to_string();
    for (name, arg) in fd.param_names.iter().zip(args) {
        if let Some(n) = name {
            out = out.replace(&format!("`{n}`"), arg);
        }
    }
    if out == said {
        let swaps: &[(&str, usize)] = match args.len() {
            1 => &[("the unit", 0)],
            2 => &[
                ("the first unit", 0),
                ("the second unit", 1),
                ("the second", 1),
            ],
            _ => &[],
        };
        for (phrase, i) in swaps {
            out = replace_phrase(&out, phrase, &args[*i]);
        }
    }
    let placed = out != said;
    (out, placed)
}

/// `text` with each whole-word `phrase` (any case of its first letter)
/// replaced by `by`: "the unit" but not "the units".
fn replace_phrase(text: &str, phrase: &str, by: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    let capital = format!("{}{}", phrase[..1].to_uppercase(), &phrase[1..]);
    loop {
        let hit = [rest.find(phrase), rest.find(capital.as_str())]
            .into_iter()
            .flatten()
            .min();
        let Some(i) = hit else { break };
        let after = &rest[i + phrase.len()..];
        let whole = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let before_ok = !rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..i]);
        out.push_str(if whole && before_ok {
            by
        } else {
            &rest[i..i + phrase.len()]
        });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Each argument with its parameter: `u = defender, other = attacker`
/// (an unnamed parameter goes by its type, numbered when there are more).
fn roles(rs: &Ruleset, fd: &crate::compile::ir::FactDef, args: &[String]) -> String {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            let name = match fd.param_names.get(i).cloned().flatten() {
                Some(n) => n,
                None if args.len() == 1 => rs.ty_name(&fd.params[i]),
                None => format!("{} {}", rs.ty_name(&fd.params[i]), i + 1),
            };
            format!("{name} = {a}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}
