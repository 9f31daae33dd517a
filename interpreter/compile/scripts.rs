//! Hook scripts, compiled: each script parsed (strict variables, the
//! sandbox's limits on literals and nesting) and every call it makes
//! checked against the ruleset and against the script API's names (what
//! a call may name, how many arguments it takes, which calls change the
//! game and so are barred from a fact's hook).
//!
//! The API's bodies, which act on a running world, are the run stage's
//! ([`crate::run::hooks`]); here are only its names, so compiling a
//! ruleset needs nothing of the run stage. A test there checks that the
//! engine that runs scripts has exactly these names.

use crate::compile::ir::{HookDef, Id, OutcomeDef, Point, Ruleset, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::Span;
use rhai::{Dynamic, Engine, Position, Scope, AST};
use std::sync::{Arc, OnceLock};

/// The longest string and the largest array or map a script may build.
pub const MAX_STRING: usize = 4_096;
pub const MAX_ARRAY: usize = 1_024;
pub const MAX_MAP: usize = 256;

/// The engine scripts are parsed by: rhai's standard packages, with the
/// limits the sandbox sets on what a script's text may hold (the running
/// engine sets the same, and its own limits of operations and calls).
fn parser() -> &'static Engine {
    static PARSER: OnceLock<Engine> = OnceLock::new();
    PARSER.get_or_init(|| {
        let mut e = Engine::new();
        e.set_max_string_size(MAX_STRING)
            .set_max_array_size(MAX_ARRAY)
            .set_max_map_size(MAX_MAP)
            .set_max_expr_depths(MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH)
            .set_strict_variables(true);
        e.disable_symbol("eval");
        e
    })
}

/// The deepest nesting of a script's expressions, at the top level and
/// in its functions.
pub const MAX_EXPR_DEPTH: usize = 64;
pub const MAX_FUNCTION_EXPR_DEPTH: usize = 32;

/// The names of the API's functions (a script may call these, the stdlib
/// helpers, its own functions and rhai's standard ones).
pub const API: &[&str] = &[
    "fact",
    "rule",
    "state",
    "side_state",
    "stat",
    "option",
    "is_a",
    "type_of_unit",
    "quality_of",
    "side",
    "name",
    "units",
    "friends",
    "enemies",
    "roll",
    "set_state",
    "add_state",
    "set_side_state",
    "add_side_state",
    "note",
    "outcome",
    "set_outcome",
    "fall_back",
    "perform",
    "log",
];

/// API functions that change the game (a fact hook may not call them).
pub const EFFECTS: &[&str] = &[
    "set_state",
    "add_state",
    "set_side_state",
    "add_side_state",
    "note",
    "set_outcome",
    "fall_back",
    "perform",
];

/// What `rule(name, ...)` names: a define, a table or a quantity.
#[derive(Clone, Copy)]
pub enum RuleRef {
    Define(Id),
    Table(Id),
    Quantity(Id),
}

impl RuleRef {
    pub fn named(rs: &Ruleset, name: &str) -> Option<RuleRef> {
        let at = |v: Option<usize>| v.map(|i| i as Id);
        at(rs.defines.iter().position(|d| d.name == name))
            .map(RuleRef::Define)
            .or_else(|| at(rs.tables.iter().position(|d| d.name == name)).map(RuleRef::Table))
            .or_else(|| {
                at(rs.quantities.iter().position(|d| d.func.name == name)).map(RuleRef::Quantity)
            })
    }
    pub fn params(self, rs: &Ruleset) -> &[(String, Ty)] {
        match self {
            RuleRef::Define(i) => &rs.defines[i as usize].params,
            RuleRef::Table(i) => &rs.tables[i as usize].params,
            RuleRef::Quantity(i) => &rs.quantities[i as usize].func.params,
        }
    }
}

/// The stdlib helpers (stdlib/hooks.rhai), compiled once: merged into
/// every hook's script.
pub fn helpers() -> &'static AST {
    static HELPERS: OnceLock<AST> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let (_, text) = crate::front::load::STDLIB_SCRIPTS[0];
        parser()
            .compile(text)
            .expect("stdlib/hooks.rhai compiles (tested)")
    })
}

/// Where each line of a script starts (byte offsets).
pub fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i as u32 + 1))
        .collect()
}

/// The span of a script position (its whole line from the column on).
pub fn span_at(span: Span, lines: &[u32], text_len: u32, pos: Position) -> Span {
    let Some(line) = pos.line() else {
        return span;
    };
    let start = lines.get(line - 1).copied().unwrap_or(0);
    let end = lines.get(line).map(|e| e - 1).unwrap_or(text_len);
    let col = pos.position().unwrap_or(1).saturating_sub(1) as u32;
    let from = (start + col).min(end);
    Span {
        file: span.file,
        start: span.start + from,
        end: span.start + end.max(from),
    }
}

/// What the compiler knows of a hook before its script is compiled.
pub struct Declared<'a> {
    pub name: &'a str,
    pub doc: Option<String>,
    pub point: Point,
    pub vars: Vec<String>,
    /// The outcomes a script may read and set (a procedure hook's).
    pub outcomes: &'a [OutcomeDef],
    pub text: &'a str,
    pub span: Span,
}

/// Compile a hook's script and check what it names against the ruleset.
pub fn compile(rs: &Ruleset, d: Declared) -> Result<HookDef, Diag> {
    let lines = line_starts(d.text);
    let at = |pos: Position| span_at(d.span, &lines, d.text.len() as u32, pos);
    // Variables, not constants: the optimiser would fold a constant's
    // placeholder value into the script.
    let mut scope = Scope::new();
    for v in &d.vars {
        scope.push(v.as_str(), Dynamic::UNIT);
    }
    let ast = parser().compile_with_scope(&scope, d.text).map_err(|e| {
        Diag::new(
            "muster::hook",
            format!("the script of hook `{}` does not compile: {}", d.name, e.0),
        )
        .at(at(e.1), "here")
        .help(format!(
            "hooks are written in rhai; this hook sees {}",
            if d.vars.is_empty() {
                "no variables".to_string()
            } else {
                d.vars.join(", ")
            }
        ))
    })?;
    // Only the hook's own text is checked: the helpers are the ruleset's
    // only when it has what they name (checked when they run).
    let own: Vec<String> = ast
        .iter_functions()
        .chain(helpers().iter_functions())
        .map(|f| f.name.to_string())
        .collect();
    let mut problem: Option<Diag> = None;
    let mut rolls = false;
    let is_fact = matches!(d.point, Point::Fact(_));
    ast.walk(&mut |path: &[rhai::ASTNode]| {
        // A call is an expression, or a statement of its own.
        let (call, pos) = match path.last() {
            Some(rhai::ASTNode::Expr(rhai::Expr::FnCall(c, p) | rhai::Expr::MethodCall(c, p)))
            | Some(rhai::ASTNode::Stmt(rhai::Stmt::FnCall(c, p))) => (c, *p),
            _ => return true,
        };
        if call.is_operator_call() {
            return true;
        }
        let f = call.name.as_str();
        rolls |= f == "roll";
        let lit = |i: usize| match call.args.get(i) {
            Some(rhai::Expr::StringConstant(s, _)) => Some(s.as_str()),
            _ => None,
        };
        let wrong = |msg: String, help: &str| {
            Diag::new("muster::hook", format!("hook `{}`: {msg}", d.name))
                .at(at(pos), "here")
                .help(help.to_string())
        };
        let found = check_call(rs, &d, f, call.args.len(), &lit, is_fact, &own);
        if let Err((msg, help)) = found {
            problem = Some(wrong(msg, &help));
            return false;
        }
        true
    });
    if let Some(p) = problem {
        return Err(p);
    }
    if is_fact && rolls {
        return Err(Diag::new(
            "muster::hook",
            format!("hook `{}` derives a fact but rolls dice", d.name),
        )
        .at(d.span, "this script calls roll()")
        .help("a fact has one value in a situation; roll in a procedure, or a hook on one"));
    }
    let ast = helpers().merge(&ast);
    Ok(HookDef {
        name: d.name.to_string(),
        doc: d.doc,
        point: d.point,
        vars: d.vars,
        rolls,
        ast: Arc::new(ast),
        span: d.span,
        lines,
    })
}

/// Check one call of a script against the ruleset: the names its literal
/// arguments give, and effects where they are not allowed.
fn check_call<'a>(
    rs: &Ruleset,
    d: &Declared,
    f: &str,
    nargs: usize,
    lit: &dyn Fn(usize) -> Option<&'a str>,
    is_fact: bool,
    own: &[String],
) -> Result<(), (String, String)> {
    let missing = |what: &str, n: &str, all: Vec<&str>| {
        let sugg = crate::compile::compiler::suggest(n, all.into_iter());
        (
            format!("there is no {what} `{n}`"),
            match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the ruleset declares every {what} a hook can read"),
            },
        )
    };
    if own.iter().any(|o| o == f) && !API.contains(&f) {
        return Ok(());
    }
    if !API.contains(&f) && !engine_functions().contains(f) {
        return Err(no_such_function(f, own));
    }
    if is_fact && EFFECTS.contains(&f) {
        return Err((
            format!("a fact hook cannot change the game (it calls `{f}`)"),
            "derive the value only; change state in a hook on a procedure or step".into(),
        ));
    }
    // Calls whose literal name must be one of a list: (argument, what, names).
    let listed: Option<(usize, &str, Vec<&str>)> = match f {
        "state" | "set_state" | "add_state" => Some((
            1,
            "state",
            rs.states.iter().map(|x| x.name.as_str()).collect(),
        )),
        "side_state" | "set_side_state" | "add_side_state" => Some((
            1,
            "side state",
            rs.side_states.iter().map(|x| x.name.as_str()).collect(),
        )),
        "stat" => Some((1, "stat", rs.stats.iter().map(|x| x.as_str()).collect())),
        "option" => Some((
            0,
            "option",
            rs.options.iter().map(|x| x.name.as_str()).collect(),
        )),
        "roll" => Some((
            nargs.saturating_sub(1),
            "die",
            rs.dice.iter().map(|x| x.name.as_str()).collect(),
        )),
        "perform" => Some((
            0,
            "procedure",
            rs.procedures.iter().map(|x| x.name.as_str()).collect(),
        )),
        _ => None,
    };
    if let Some((i, what, names)) = listed {
        return match lit(i) {
            Some(n) if !names.contains(&n) => Err(missing(what, n, names)),
            _ => Ok(()),
        };
    }
    match f {
        "fact" | "note" => {
            if let Some(n) = lit(0) {
                let Some(id) = rs.fact(n) else {
                    return Err(missing(
                        "fact",
                        n,
                        rs.facts.iter().map(|x| x.name.as_str()).collect(),
                    ));
                };
                let want = rs.facts[id as usize].params.len();
                if f == "fact" && nargs != want + 1 {
                    return Err((
                        format!("fact `{n}` takes {want} arguments, not {}", nargs - 1),
                        "pass the fact's arguments after its name".into(),
                    ));
                }
            }
        }
        "rule" => {
            if let Some(n) = lit(0) {
                let Some(params) = RuleRef::named(rs, n).map(|r| r.params(rs)) else {
                    let mut all: Vec<&str> = rs.defines.iter().map(|x| x.name.as_str()).collect();
                    all.extend(rs.tables.iter().map(|x| x.name.as_str()));
                    all.extend(rs.quantities.iter().map(|x| x.func.name.as_str()));
                    return Err(missing("define, table or quantity", n, all));
                };
                if nargs != params.len() + 1 {
                    return Err((
                        format!("`{n}` takes {} arguments, not {}", params.len(), nargs - 1),
                        "pass the rule's arguments after its name".into(),
                    ));
                }
            }
        }
        "is_a" => {
            if let Some(n) = lit(1) {
                let known = rs.unit_type(n).is_some()
                    || rs.classes.iter().any(|c| c == n)
                    || rs.groups.iter().any(|(g, _)| g == n)
                    || rs.quality(n).is_some();
                if !known {
                    let mut all: Vec<&str> =
                        rs.unit_types.iter().map(|x| x.name.as_str()).collect();
                    all.extend(rs.classes.iter().map(|x| x.as_str()));
                    all.extend(rs.groups.iter().map(|x| x.0.as_str()));
                    all.extend(rs.qualities.iter().map(|x| x.name.as_str()));
                    return Err(missing("unit type, class, group or quality", n, all));
                }
            }
        }
        "outcome" | "set_outcome" => {
            if d.outcomes.is_empty()
                && matches!(
                    d.point,
                    Point::Fact(_) | Point::BeforeStep(_) | Point::AfterStep(_)
                )
            {
                return Err((
                    format!("only a hook on a procedure has outcomes (it calls `{f}`)"),
                    "attach the hook to a procedure with `before`, `after` or `replace`".into(),
                ));
            }
            if let Some(n) = lit(0) {
                if !d.outcomes.iter().any(|o| o.name == n) {
                    return Err(missing(
                        "outcome",
                        n,
                        d.outcomes.iter().map(|x| x.name.as_str()).collect(),
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// rhai's keywords that are called like functions but registered as none.
const KEYWORD_CALLS: &[&str] = &[
    "print",
    "debug",
    "type_of",
    "Fn",
    "call",
    "curry",
    "is_shared",
    "is_def_var",
    "is_def_fn",
];

/// The names of every function the hooks' engine has: the script API and
/// rhai's standard packages (`len`, `abs`, `to_string`...), and the
/// keywords rhai calls like functions.
pub fn engine_functions() -> &'static std::collections::HashSet<String> {
    static NAMES: OnceLock<std::collections::HashSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        parser()
            .gen_fn_signatures(true)
            .iter()
            .filter_map(|sig| sig.split_once('(').map(|(name, _)| name.to_string()))
            .chain(API.iter().map(|a| a.to_string()))
            .chain(KEYWORD_CALLS.iter().map(|k| k.to_string()))
            .collect()
    })
}

/// Does rhai itself (its standard packages, without the API) have a
/// function of this name? (For the test that the running engine agrees.)
#[cfg(test)]
pub(crate) fn rhai_has(name: &str) -> bool {
    parser()
        .gen_fn_signatures(true)
        .iter()
        .any(|sig| sig.split_once('(').is_some_and(|(n, _)| n == name))
}

/// A call of a function the engine does not have (`roll_dice`): the
/// nearest of the API's functions and the script's own, else the API's list.
fn no_such_function(f: &str, own: &[String]) -> (String, String) {
    let names = API.iter().copied().chain(own.iter().map(String::as_str));
    // Near in spelling, else an API function the name starts with
    // (`roll_dice` is `roll`).
    let near = crate::compile::compiler::suggest(f, names).or_else(|| {
        API.iter()
            .filter(|a| a.len() >= 3 && f.starts_with(**a))
            .max_by_key(|a| a.len())
            .map(|a| a.to_string())
    });
    let help = match near {
        Some(s) => format!(
            "did you mean `{s}`? The script API's functions are: {}",
            API.join(", ")
        ),
        None => format!("the script API's functions are: {}", API.join(", ")),
    };
    (format!("there is no function `{f}`"), help)
}

/// May hook `h`'s script set the outcome `name`? So when it calls
/// `set_outcome` with that name as a literal, or with a name it computes
/// (which may be any). The script's own paths are not followed: a call
/// anywhere in it (or in a function it defines) counts.
pub(crate) fn may_set_outcome(h: &HookDef, name: &str) -> bool {
    let mut found = false;
    h.ast.walk(&mut |path: &[rhai::ASTNode]| {
        let call = match path.last() {
            Some(rhai::ASTNode::Expr(rhai::Expr::FnCall(c, _) | rhai::Expr::MethodCall(c, _)))
            | Some(rhai::ASTNode::Stmt(rhai::Stmt::FnCall(c, _))) => c,
            _ => return true,
        };
        if call.name.as_str() == "set_outcome" {
            found = match call.args.first() {
                Some(rhai::Expr::StringConstant(s, _)) => s.as_str() == name,
                _ => true,
            };
        }
        !found
    });
    found
}
