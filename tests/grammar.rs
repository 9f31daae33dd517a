//! The grammar guard (issue 33, item 5): every text the project ships or
//! tests parses to the syntax tree it parsed to when the fixture was made,
//! and every text that was refused is refused at the same place with the
//! same diagnostic. A change to the grammar or to the tree builder that is
//! meant to be invisible (a faster grammar) must leave this test passing.
//!
//! The fixture, tests/grammar_trees.tsv, holds one line a text: a hash of
//! the text, what parsing it gave (`ok` and a hash of the whole tree's
//! `Debug` dump, spans included; or `err`, the span, the code, the label and
//! the message) and where the text came from. A text is looked up by the
//! hash of its own bytes, so that a ruleset someone edits later is simply not
//! compared (it is counted as new), never reported as changed.
//!
//! The texts: every `.muster` file under rules/, stdlib/ and tests/, every
//! ```muster block of docs/LANGUAGE.md and docs/GUIDE.md (fragments too: they are refused,
//! and where matters), every raw string of tests/*.rs (rulesets inline in
//! tests, situations and scenarios, which are refused), every fact of the
//! situation and scenario files (as `parse_expr` reads them), and texts
//! made by the fuzz generator (tests/fuzz/gen.rs): fresh rulesets,
//! expressions, and shipped files edited (most edits are refused, and where
//! and why pin the diagnostics of near misses).
//!
//! After a change that is meant to change trees (a new field in
//! syntax.rs, a new construct), remake the fixture with
//! `MUSTER_BLESS_TREES=1 cargo test --release --test all grammar::` and
//! review its diff.

use crate::fuzz::gen;
use muster::front::diagnostic::Diag;
use muster::front::parse::{parse_expr, parse_file};
use muster::front::syntax::FileId;
use std::collections::HashMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const FIXTURE: &str = "tests/grammar_trees.tsv";

/// Generated texts of each kind: fewer in a debug build, where parsing is
/// slower (the fixture holds the release build's, a superset).
const GENERATED: u64 = if cfg!(debug_assertions) { 30 } else { 200 };

/// How a text is read: as a ruleset file or as one expression.
#[derive(Clone, Copy)]
enum As {
    File,
    Expr,
}

struct Text {
    origin: String,
    read_as: As,
    text: String,
}

/// 128 bits of FNV-1a (two 64-bit hashes with different offsets): stable
/// across Rust versions and machines, unlike the standard library's hasher.
fn hash(bytes: &[u8]) -> String {
    let fnv = |offset: u64| {
        bytes.iter().fold(offset, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
        })
    };
    format!(
        "{:016x}{:016x}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142)
    )
}

/// What parsing a text gave, as one line of the fixture.
fn outcome<T: Debug>(r: Result<T, Diag>) -> String {
    match r {
        Ok(tree) => format!("ok {}", hash(format!("{tree:?}").as_bytes())),
        Err(d) => {
            let span = d
                .span
                .map_or("-".to_string(), |s| format!("{}..{}", s.start, s.end));
            let one_line = |s: &str| s.replace(['\t', '\n'], " ");
            format!(
                "err {span} {} | {} | {}",
                d.code,
                one_line(&d.label),
                one_line(&d.message)
            )
        }
    }
}

fn parse(t: &Text) -> String {
    match t.read_as {
        As::File => outcome(parse_file(&t.text, FileId(0))),
        As::Expr => outcome(parse_expr(&t.text, FileId(0), 0)),
    }
}

/// Files under `dir` (recursively) whose name ends in `ext`, sorted.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.to_string_lossy().ends_with(ext) {
            out.push(p);
        }
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(ROOT).unwrap_or(p).display().to_string()
}

/// Every text the guard parses (see the module doc).
fn corpus() -> Vec<Text> {
    let root = Path::new(ROOT);
    let mut out = Vec::new();
    let mut add = |origin: String, read_as: As, text: String| {
        out.push(Text {
            origin,
            read_as,
            text,
        })
    };
    let mut shipped = Vec::new();
    for dir in ["rules", "stdlib", "tests"] {
        files(&root.join(dir), ".muster", &mut shipped);
    }
    let shipped: Vec<(String, String)> = shipped
        .iter()
        .map(|p| (rel(p), std::fs::read_to_string(p).unwrap()))
        .collect();
    for (name, text) in &shipped {
        add(name.clone(), As::File, text.clone());
    }
    // The examples of docs/LANGUAGE.md (as tests/rulesets.rs finds them)
    // and of docs/GUIDE.md.
    for doc_name in ["docs/LANGUAGE.md", "docs/GUIDE.md"] {
        let doc = std::fs::read_to_string(root.join(doc_name)).unwrap();
        for (i, block) in doc.split("```muster\n").skip(1).enumerate() {
            let block = &block[..block.find("```").unwrap_or(block.len())];
            add(
                format!("{doc_name} block {}", i + 1),
                As::File,
                block.to_string(),
            );
        }
    }
    // Raw strings of the tests: inline rulesets, situations, scenarios.
    let mut sources = Vec::new();
    files(&root.join("tests"), ".rs", &mut sources);
    for p in &sources {
        let text = std::fs::read_to_string(p).unwrap();
        for (i, s) in raw_strings(&text).into_iter().enumerate() {
            add(format!("{} raw string {}", rel(p), i + 1), As::File, s);
        }
    }
    // The facts of situations and scenarios, as expressions.
    let mut tomls = Vec::new();
    files(&root.join("rules"), ".toml", &mut tomls);
    files(&root.join("tests"), ".toml", &mut tomls);
    for p in &tomls {
        let text = std::fs::read_to_string(p).unwrap();
        let Ok(v) = text.parse::<toml::Table>() else {
            continue;
        };
        for (i, f) in facts(&toml::Value::Table(v)).into_iter().enumerate() {
            add(format!("{} fact {}", rel(p), i + 1), As::Expr, f);
        }
    }
    // Generated: fresh rulesets and expressions from the grammar, and the
    // shipped rulesets edited.
    for seed in 0..GENERATED {
        let mut g = gen::Gen::new(seed);
        add(format!("generated ruleset {seed}"), As::File, g.ruleset());
        add(format!("generated expression {seed}"), As::Expr, g.expr(4));
        let (name, base) = &shipped[seed as usize % shipped.len()];
        g.learn_names(base);
        let (how, text) = if seed % 2 == 0 {
            ("mildly", g.mutate_mildly(base))
        } else {
            ("", g.mutate(base))
        };
        add(format!("{name} edited {how} {seed}"), As::File, text);
    }
    out
}

/// The `r#"..."#` strings of a Rust source.
fn raw_strings(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find("r#\"") {
        let body = &rest[i + 3..];
        let Some(end) = body.find("\"#") else { break };
        out.push(body[..end].to_string());
        rest = &body[end + 2..];
    }
    out
}

/// Every string of every `facts` array in a TOML document, depth first.
fn facts(v: &toml::Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                match (k.as_str(), x) {
                    ("facts", toml::Value::Array(a)) => {
                        out.extend(a.iter().filter_map(|f| f.as_str()).map(str::to_string))
                    }
                    _ => out.extend(facts(x)),
                }
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|x| out.extend(facts(x))),
        _ => {}
    }
    out
}

/// The fixture: a text's hash to (what parsing gave, where it came from).
fn fixture() -> HashMap<String, (String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join(FIXTURE)).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let (h, r, o) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            (h.to_string(), (r.to_string(), o.to_string()))
        })
        .collect()
}

fn bless(corpus: &[Text]) {
    let mut lines = vec![
        "# tests/grammar.rs: hash of a text, what parsing it gave, where it came from.".to_string(),
        "# Remake: MUSTER_BLESS_TREES=1 cargo test --release --test all grammar::".to_string(),
    ];
    let mut seen = std::collections::HashSet::new();
    for t in corpus {
        let h = hash(t.text.as_bytes());
        if seen.insert(h.clone()) {
            lines.push(format!("{h}\t{}\t{}", parse(t), t.origin));
        }
    }
    std::fs::write(Path::new(ROOT).join(FIXTURE), lines.join("\n") + "\n").unwrap();
}

#[test]
fn every_text_parses_to_the_tree_it_did() {
    let corpus = corpus();
    if std::env::var_os("MUSTER_BLESS_TREES").is_some() {
        bless(&corpus);
    }
    let fixture = fixture();
    let (mut same, mut new, mut files_ok) = (0, 0, 0);
    let mut changed = Vec::new();
    for t in &corpus {
        let Some((want, _)) = fixture.get(&hash(t.text.as_bytes())) else {
            new += 1;
            continue;
        };
        let got = parse(t);
        if &got == want {
            same += 1;
            files_ok += usize::from(matches!(t.read_as, As::File) && got.starts_with("ok"));
        } else {
            changed.push(format!("{}:\n  was {want}\n  now {got}", t.origin));
        }
    }
    eprintln!("grammar guard: {same} texts as before, {new} not in the fixture");
    assert!(
        changed.is_empty(),
        "{} texts parse differently (if meant, remake {FIXTURE}: see tests/grammar.rs):\n{}",
        changed.len(),
        changed.join("\n")
    );
    // The comparison has teeth: most texts are known, and many of them
    // are whole rulesets that parse.
    assert!(same > 2 * new, "{same} known, {new} new");
    assert!(
        files_ok >= 50,
        "only {files_ok} rulesets parsed and compared"
    );
}

/// The dump the guard hashes shows every part of a tree: a change of one
/// name, one number or one span changes the hash.
#[test]
fn the_tree_hash_sees_names_numbers_and_spans() {
    let h = |s: &str| outcome(parse_file(s, FileId(0)));
    let base = h("define f(): int = 1 + 2");
    assert!(base.starts_with("ok "), "{base}");
    assert_ne!(base, h("define g(): int = 1 + 2"));
    assert_ne!(base, h("define f(): int = 1 + 3"));
    assert_ne!(base, h("define f(): int = 1 - 2"));
    assert_ne!(base, h("define f(): int =  1 + 2"));
    assert_ne!(
        h("define f(): int = 1 + 2 * 3"),
        h("define f(): int = (1 + 2) * 3")
    );
    assert_eq!(
        h("define f(): int = 1 +"),
        "err 21..22 muster::syntax | expected an expression | the ruleset does not parse here"
    );
}

/// Where the grammar was made cheaper by trying a rule only when the next
/// character can start it (a value's alternatives, the operators after a
/// value), the rules it no longer tries must not have been the ones a
/// diagnostic lists. These are the places where they would have been: a
/// value read where nothing tracked follows it (`scoring N+`,
/// `original(...)`), and the "expected" list after a value. The outcomes
/// are those of the grammar before issue 33's item 5.
#[test]
fn the_cheaper_grammar_keeps_the_diagnostics_of_near_misses() {
    let cases = [
        // a number read in `scoring`, then no `+`
        (
            "define f(): int = 2 d6 scoring 5",
            "err 31..32 muster::syntax | expected `-`, `any`, `all`, `count`, `first`, `sum`, `min` or `max`, `chance` or `expect`, `roll`, an expression | the ruleset does not parse here",
        ),
        // a name read in `original(...)`, then no `)`
        (
            "define f(): int = original(u.größe)",
            "err 27..28 muster::syntax | expected `any`, `all`, `count`, `first`, `sum`, `min` or `max`, `chance` or `expect`, `none`, `roll`, `true` or `false`, `unlimited`, a name, a number, an expression | the ruleset does not parse here",
        ),
        // after a value: no operator, no name
        (
            "define f(): int = g(1 ]",
            "err 22..23 muster::syntax | expected a name, an operator or `=>` | the ruleset does not parse here",
        ),
        // after `is`: no name
        (
            "define f(): bool = x is ]",
            "err 24..25 muster::syntax | expected a name or \"quoted name\", an operator or `=>` | the ruleset does not parse here",
        ),
        // after `rerolling`: no kind
        (
            "define f(): int = 2 d6 rerolling ]",
            "err 33..34 muster::syntax | expected `misses`, `ones`, `hits` or `sixes` | the ruleset does not parse here",
        ),
        // a statement's start after an assignment
        (
            "procedure p() { x.y = 1 ] }",
            "err 24..25 muster::syntax | expected `call`, `for`, `if`, `let`, `mark`, `note`, `outcome`, `require`, a name, an expression, an operator or `=>` | the ruleset does not parse here",
        ),
        // inside parentheses, after a value
        (
            "define f(): int = (x ]",
            "err 21..22 muster::syntax | expected a name, an operator or `=>` | the ruleset does not parse here",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(outcome(parse_file(text, FileId(0))), want, "{text}");
    }
}
