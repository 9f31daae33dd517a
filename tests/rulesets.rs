//! Every ruleset in rules/ compiles; the house rule changes what it says it
//! changes and nothing else; every example in docs/LANGUAGE.md parses.

use muster::base::value::Value;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn muster_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            muster_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "muster") {
            out.push(p);
        }
    }
}

#[test]
fn every_ruleset_in_rules_checks() {
    let mut files = Vec::new();
    muster_files(&Path::new(ROOT).join("rules"), &mut files);
    assert!(files.len() >= 2, "{files:?}");
    for f in files {
        if let Err((d, s)) = muster::build(&f) {
            panic!(
                "{}: {}",
                f.display(),
                muster::front::diagnostic::render_plain(&d, &s)
            );
        }
    }
}

fn build(rel: &str) -> muster::Build {
    match muster::build(&Path::new(ROOT).join(rel)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    }
}

const HORSE_VS_PIKE: &str = r#"
procedure = "melee"
facts = ["charging(attacker)"]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#;

/// Binomial probabilities as exact fractions over a common denominator.
fn binom(n: u64, k: u64, p_num: u64, p_den: u64) -> (u128, u128) {
    let c = (0..k).fold(1u128, |acc, i| acc * (n - i) as u128 / (i + 1) as u128);
    let num = c * (p_num as u128).pow(k as u32) * ((p_den - p_num) as u128).pow((n - k) as u32);
    (num, (p_den as u128).pow(n as u32))
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn steady_pike_house_rule() {
    let mut b = build("rules/tvbd_steady_pike.muster");
    let s = b.situation("s.toml", HORSE_VS_PIKE).unwrap();
    let o = b.exact(&s).unwrap();
    // Horse: 3 dice hitting on 6 only. Pike+shot: 5 resolve, 5 dice on 5-6.
    let mut num = 0u128;
    let den = 6u128.pow(3) * 3u128.pow(5);
    for a in 0..=3 {
        for d in 0..=5 {
            if a > d {
                let (x, _) = binom(3, a, 1, 6);
                let (y, _) = binom(5, d, 1, 3);
                num += x * y;
            }
        }
    }
    let g = gcd(num, den);
    let win = o.get("winner").unwrap().p(Value::Sym(
        b.ruleset
            .symbols
            .iter()
            .position(|x| x == "attacker")
            .unwrap() as u32,
    ));
    assert_eq!(win.fraction(), Some((num / g, den / g)));
    // The book's numbers are unchanged in the book.
    let mut base = build("rules/tillys_very_bad_day.muster");
    let s = base.situation("s.toml", HORSE_VS_PIKE).unwrap();
    let o = base.exact(&s).unwrap();
    let win = o.get("winner").unwrap().p(Value::Sym(
        base.ruleset
            .symbols
            .iter()
            .position(|x| x == "attacker")
            .unwrap() as u32,
    ));
    assert_eq!(win.fraction(), Some((184, 729)));
}

#[test]
fn house_rule_removes_the_cover_modifier_and_adds_a_step() {
    let mut b = build("rules/tvbd_steady_pike.muster");
    assert!(b
        .ruleset
        .modifiers
        .iter()
        .all(|m| m.name != "infantry_in_cover"));
    let s = b
        .situation(
            "s.toml",
            r#"
facts = ["in_difficult(dragoons)"]
[units.horse]
type = "Horse"
[units.dragoons]
type = "Dragoons"
"#,
        )
        .unwrap();
    // Without the modifier the horse keeps all 3 dice against dragoons in cover.
    assert_eq!(
        b.query(&s, "shooting_dice(horse, dragoons)").unwrap().1,
        "3"
    );
    assert_eq!(b.query(&s, "evade").unwrap().1, "true");
    let g = b.ruleset.graph.as_ref().unwrap();
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    let i = names
        .iter()
        .position(|n| *n == "Step 4.4 Army Morale")
        .unwrap();
    assert_eq!(names[i + 1], "Step 4.5 Reserves");
    // Pike+shot's other stats are the book's.
    let ps = &b.ruleset.unit_types[b.ruleset.unit_type("Pike+Shot").unwrap() as usize];
    let stat = |n: &str| ps.stats[b.ruleset.stat(n).unwrap() as usize];
    assert_eq!(
        (stat("move"), stat("range"), stat("resolve")),
        (Value::Int(3), Value::Int(4), Value::Int(5))
    );
}

/// Every ```muster block of docs/LANGUAGE.md parses (blocks that start with
/// `// fragment` are excerpts and are skipped).
#[test]
fn language_reference_examples_parse() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/LANGUAGE.md")).unwrap();
    let mut n = 0;
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("```muster\n") {
        let body = &rest[i + 10..];
        let end = body.find("```").unwrap();
        let block = &body[..end];
        rest = &body[end + 3..];
        if block.trim_start().starts_with("// fragment") {
            continue;
        }
        n += 1;
        if let Err(d) = muster::front::parse::parse_file(block, muster::front::syntax::FileId(0)) {
            let mut s = muster::front::source::Sources::default();
            s.add("docs/LANGUAGE.md block", block);
            panic!("{}", muster::front::diagnostic::render_plain(&[d], &s));
        }
    }
    assert!(n >= 10, "only {n} examples found");
}
