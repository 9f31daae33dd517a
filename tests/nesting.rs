//! Deep nesting is a diagnostic, never a stack overflow (issue 28): brackets,
//! `if`s, `not`s, chains of operators, statements, calls of defines and
//! procedures, and table rows, in a ruleset, a situation file or a query,
//! each a hundred thousand deep; and rules right at each limit still
//! compile and give their exact values.

use crate::common;

use muster::base::value::Value;
use muster::front::nesting::{MAX_EXPANDED_DEPTH, MAX_EXPR_DEPTH, MAX_NESTING};
use std::path::Path;

const DEEP: usize = 100_000;

/// A small ruleset with `extra` appended.
fn rules(extra: &str) -> String {
    format!("import core\nsides attacker, defender\nstat resolve\nunits (resolve) {{ Horse : = 3 }}\n{extra}\n")
}

/// The ruleset's diagnostics, which must be refused.
fn refused(text: &str) -> Vec<muster::front::diagnostic::Diag> {
    match muster::build_text("deep.muster", text, None) {
        Ok(_) => panic!("accepted"),
        Err((d, _)) => d,
    }
}

/// Refused with exactly one `muster::front::nesting` diagnostic, whose message is
/// returned.
fn too_deep(text: &str) -> String {
    let d = refused(text);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, "muster::nesting", "{d:?}");
    assert!(d[0].span.is_some() && d[0].help.is_some());
    d[0].message.clone()
}

fn built(text: &str) -> muster::Build {
    match muster::build_text("deep.muster", text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    }
}

fn parens(n: usize, inner: &str) -> String {
    format!("{}{inner}{}", "(".repeat(n), ")".repeat(n))
}

#[test]
fn brackets_a_hundred_thousand_deep() {
    let text = rules(&format!("define x(): int = {}", parens(DEEP, "1")));
    let d = refused(&text);
    assert_eq!(d[0].code, "muster::nesting");
    assert_eq!(
        d[0].message,
        format!("the rules nest deeper than {MAX_NESTING} levels here")
    );
    // At the first bracket past the limit.
    let at = text.find(" = (").unwrap() + 3 + MAX_NESTING;
    assert_eq!(d[0].span.unwrap().start as usize, at);
}

#[test]
fn chains_without_brackets_a_hundred_thousand_deep() {
    let ifs = "if true then 1 else ".repeat(DEEP);
    assert!(too_deep(&rules(&format!("define x(): int = {ifs}0"))).contains("128 levels"));
    let nots = "not ".repeat(DEEP);
    assert!(too_deep(&rules(&format!("define x(): bool = {nots}true"))).contains("256 levels"));
    let sum = vec!["1"; DEEP].join(" + ");
    assert!(too_deep(&rules(&format!("define x(): int = {sum}"))).contains("256 levels"));
    let ors = vec!["true"; DEEP].join(" or ");
    assert!(too_deep(&rules(&format!("define x(): bool = {ors}"))).contains("256 levels"));
    let fields = ".resolve".repeat(DEEP);
    too_deep(&rules(&format!("define x(u: unit): int = u{fields}")));
    let quants = "any u: ".repeat(DEEP);
    too_deep(&rules(&format!("define x(): bool = {quants}true")));
}

#[test]
fn statements_a_hundred_thousand_deep() {
    let nested = format!(
        "{}outcome n = 1{}",
        "if true { ".repeat(DEEP),
        " }".repeat(DEEP)
    );
    too_deep(&rules(&format!(
        "procedure p() outcomes {{ n: int }} {{ {nested} }}"
    )));
    let chain = format!(
        "if false {{ }}{} else {{ }}",
        " else if false { }".repeat(DEEP)
    );
    too_deep(&rules(&format!(
        "procedure p() outcomes {{ n: int }} {{ {chain} outcome n = 1 }}"
    )));
}

#[test]
fn calls_and_rows_a_hundred_thousand_deep() {
    // Each define calls the next: the chain is found without recursing
    // over it, and refused where it starts to be too deep.
    let mut defines = String::new();
    for i in 0..20_000 {
        defines.push_str(&format!("define f{i}(x: int): int = f{}(x) + 1\n", i + 1));
    }
    defines.push_str("define f20000(x: int): int = x\n");
    let d = refused(&rules(&defines));
    assert_eq!(d.len(), 1, "one diagnostic, where the depth starts");
    assert_eq!(
        d[0].message,
        format!(
            "`f19488` goes more than {MAX_EXPANDED_DEPTH} levels deep with the defines, tables and quantities it calls expanded"
        )
    );
    // A loop of 20,000 defines is a loop, found without recursion.
    let looped = defines.replace(
        "define f20000(x: int): int = x",
        "define f20000(x: int): int = f0(x)",
    );
    let d = refused(&rules(&looped));
    assert_eq!(d[0].code, "muster::recursion");
    assert!(d[0]
        .message
        .starts_with("`f0` calls itself: f0 -> f1 -> f2"));
    // Procedures calling procedures.
    let mut procs = String::new();
    for i in 0..5_000 {
        procs.push_str(&format!(
            "procedure p{i}() outcomes {{ n: int }} {{ call p{}() }}\n",
            i + 1
        ));
    }
    procs.push_str("procedure p5000() outcomes { n: int } { outcome n = 1 }\n");
    assert!(too_deep(&rules(&procs)).contains("with the procedures it calls expanded"));
    // A table's conditional rows are a chain of `if`s.
    let rows = "when false => 1\n".repeat(DEEP);
    assert_eq!(
        too_deep(&rules(&format!(
            "table t(u: unit) -> int {{ {rows} otherwise => 0 }}"
        ))),
        format!("table `t` has 100001 rows, more than the {MAX_EXPANDED_DEPTH} a table may have")
    );
    // Rows within that count, but too deep with the define they call.
    let rows = "when false => 1\n".repeat(1000);
    let deep = format!(
        "{}table t(u: unit) -> int {{ {rows} otherwise => f0(1) }}",
        define_chain(20)
    );
    assert!(too_deep(&rules(&deep)).starts_with("`t` goes more than"));
}

#[test]
fn a_situation_fact_and_a_query_a_hundred_thousand_deep() {
    let tvbd = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/tillys_very_bad_day.muster");
    let mut b = muster::build(&tvbd).unwrap_or_else(|_| panic!("TVBD builds"));
    let text = format!(
        "procedure = \"melee\"\nfacts = [\"{}\"]\n[units.attacker]\ntype = \"Horse\"\n[units.defender]\ntype = \"Pike+Shot\"\n",
        parens(DEEP, "charging(attacker)")
    );
    let Err(d) = b.situation("deep.toml", &text) else {
        panic!("accepted")
    };
    assert_eq!(d[0].code, "muster::nesting");
    let ok = "procedure = \"melee\"\n[units.attacker]\ntype = \"Horse\"\n[units.defender]\ntype = \"Pike+Shot\"\n";
    let s = b
        .situation("ok.toml", ok)
        .unwrap_or_else(|_| panic!("a plain situation"));
    let Err(d) = b.query(&s, &parens(DEEP, "1")) else {
        panic!("accepted")
    };
    assert_eq!(d[0].code, "muster::nesting");
    let Err(d) = b.query(&s, &vec!["1"; DEEP].join("+")) else {
        panic!("accepted")
    };
    assert_eq!(d[0].code, "muster::nesting");
    // At the limits the query answers.
    let (v, _) = b
        .query(&s, &parens(MAX_NESTING - 1, "2 + 3"))
        .unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(v, Value::Int(5));
    let (v, _) = b
        .query(&s, &vec!["1"; MAX_EXPR_DEPTH].join("+"))
        .unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(v, Value::Int(MAX_EXPR_DEPTH as i64));
}

#[test]
fn the_binary_reports_and_exits_non_zero() {
    let dir = std::env::temp_dir().join(format!("muster-nesting-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("deep.muster"),
        rules(&format!("define x(): int = {}", parens(DEEP, "1"))),
    )
    .unwrap();
    let out = common::muster_in(&dir, &["check", "deep.muster"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("muster::nesting"), "{err}");
    assert!(err.contains("error: 1 problem found"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chain of `n` defines, each one more than the next: f0(x) = x + n.
fn define_chain(n: usize) -> String {
    let mut t = String::new();
    for i in 0..n {
        t.push_str(&format!("define f{i}(x: int): int = f{}(x) + 1\n", i + 1));
    }
    t.push_str(&format!("define f{n}(x: int): int = x\n"));
    t
}

#[test]
fn rules_at_each_limit_give_their_values() {
    // Each define adds two levels (its `+` and its call): 511 of them go
    // 1023 deep, one level inside the limit; 512 go one past it.
    assert_eq!(2 * 511 + 1, MAX_EXPANDED_DEPTH - 1);
    too_deep(&rules(&define_chain(512)));
    let sum = vec!["1"; MAX_EXPR_DEPTH].join(" + ");
    let text = rules(&format!(
        "{}define deepest(): int = {sum}\ndefine nested(): int = {}\n\
         procedure roll() outcomes {{ r: int, s: int }} {{\n  outcome r = f0(1 d6)\n  outcome s = deepest() + nested()\n}}",
        define_chain(511),
        parens(MAX_NESTING, "7"),
    ));
    let mut b = built(&text);
    let situation = "procedure = \"roll\"\n";
    let o = common::exact(&mut b, situation);
    for face in 1..=6 {
        assert_eq!(
            o.get("r").unwrap().p(Value::Int(511 + face)).to_f64(),
            1.0 / 6.0
        );
    }
    assert_eq!(
        o.get("s")
            .unwrap()
            .p(Value::Int(MAX_EXPR_DEPTH as i64 + 7))
            .to_f64(),
        1.0
    );
    let o = common::sampled(&mut b, situation, 600, 1);
    let total: f64 = (512..=517)
        .map(|v| o.get("r").unwrap().p(Value::Int(v)).to_f64())
        .sum();
    assert_eq!(total, 1.0);
}
