//! The layout is the architecture (issue 37): interpreter/ holds one
//! folder a stage of the pipeline, in this order,
//!
//! base -> front -> compile -> run -> odds -> battle -> cli
//!
//! and a stage's code uses only its own stage and the stages before it.
//! This test reads every source file under interpreter/ (comments, string
//! literals and `#[cfg(test)]` modules left out: a unit test may use
//! anything) and fails on a `crate::STAGE` path that points forward.
//!
//! Uses that still point forward would be listed in [`KNOWN`], each with
//! why and what would end it; the list is empty (the last, the compiler's
//! use of the run stage's hook engine, ended when the script API's names
//! moved to `compile::scripts`). A new one fails the test; so does a
//! listed one that has gone (the list only shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The stages, first to last: each folder of interpreter/.
const STAGES: &[&str] = &["base", "front", "compile", "run", "odds", "battle", "cli"];

/// Forward uses not yet turned round: (the module that uses, the module it
/// uses), as `stage::module`. None.
const KNOWN: &[(&str, &str)] = &[];

/// A source file's code with comments, string and character literals
/// blanked out (replaced by spaces, so that positions stay put).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { c } else { b' ' }))
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let rest = &b[i..];
        let after_ident = i > 0 && ident(b[i - 1]);
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &b[i..j]);
            i = j;
        } else if !after_ident
            && (rest.starts_with(b"r#") || rest.starts_with(b"r\"") || rest.starts_with(b"br"))
        {
            let start = if rest[0] == b'b' { 2 } else { 1 };
            let hashes = rest[start..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(start + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + start + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest[0] == b'\'' {
            // A character literal ('a', '\n', '\u{1F}'), not a lifetime.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|n| n + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(6)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..2]).ok());
                ch.and_then(|s| s.chars().next())
                    .map(|c| 1 + c.len_utf8())
                    .filter(|&n| rest.get(n) == Some(&b'\''))
                    .map(|n| n + 1)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &b[i..i + n]);
                    i += n;
                }
                None => {
                    out.push(b[i]);
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `code` without its `#[cfg(test)] mod NAME { ... }` blocks.
fn without_tests(code: &str) -> String {
    let mut s = code.to_string();
    while let Some(at) = s.find("#[cfg(test)]") {
        let after = &s[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_mod = trimmed.starts_with("mod ")
            || trimmed.starts_with("pub(crate) mod ")
            || trimmed.starts_with("pub mod ");
        let Some(open) = after.find('{').filter(|_| is_mod) else {
            // A test-only item that is not a module: drop the attribute only.
            s.replace_range(at..at + "#[cfg(test)]".len(), "");
            continue;
        };
        let start = at + "#[cfg(test)]".len() + open;
        let mut depth = 0;
        let mut end = s.len();
        for (k, c) in s[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        s.replace_range(at..end, "");
    }
    s
}

/// The modules named after `crate::` in `code`, as `stage::module`:
/// `crate::run::eval::Eval` gives `run::eval`, and a group
/// `crate::{run::eval, compile::{ir, tables}}` gives each path in it.
fn crate_paths(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(n) = code[from..].find("crate::") {
        let at = from + n;
        from = at + "crate::".len();
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b'$') {
            continue;
        }
        let mut paths = Vec::new();
        use_tree(
            &mut code[from..].chars().peekable(),
            &mut Vec::new(),
            &mut paths,
        );
        for p in paths {
            if p.len() >= 2 {
                found.push(format!("{}::{}", p[0], p[1]));
            } else if let Some(s) = p.first() {
                found.push(s.clone());
            }
        }
    }
    found
}

/// Reads one use tree (`a::b`, `a::{b, c::d}`) from `it`, pushing each
/// whole path (from the tree's start) to `out`.
fn use_tree(
    it: &mut std::iter::Peekable<impl Iterator<Item = char>>,
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    let depth = prefix.len();
    let skip_space = |it: &mut std::iter::Peekable<_>| {
        while it.next_if(|c: &char| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_space(it);
        if it.peek() == Some(&'{') {
            it.next();
            loop {
                use_tree(it, prefix, out);
                skip_space(it);
                match it.next() {
                    Some(',') => {
                        skip_space(it);
                        if it.peek() == Some(&'}') {
                            it.next();
                            break;
                        }
                    }
                    _ => break,
                }
            }
            prefix.truncate(depth);
            return;
        }
        let mut seg = String::new();
        while let Some(&c) = it.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                seg.push(c);
                it.next();
            } else {
                break;
            }
        }
        if !seg.is_empty() && seg != "self" {
            prefix.push(seg);
        }
        let mut colons = 0;
        while colons < 2 && it.peek() == Some(&':') {
            it.next();
            colons += 1;
        }
        if colons < 2 {
            out.push(prefix.clone());
            prefix.truncate(depth);
            // `as NAME`, or the rest of an expression: up to the group's next item.
            while it.next_if(|c| *c != ',' && *c != '}').is_some() {}
            return;
        }
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module a file is, as `stage::module` (`run/hooks/api.rs` is
/// `run::hooks`): the unit the known list names.
fn module_of(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs").trim_end_matches("/mod");
    rel.split('/').take(2).collect::<Vec<_>>().join("::")
}

/// Every forward use: (using module, used module) with the first file and
/// line of each.
fn forward_uses() -> BTreeMap<(String, String), String> {
    let root = Path::new(ROOT).join("interpreter");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let rank = |s: &str| STAGES.iter().position(|x| *x == s);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let Some(stage) = rel.split('/').next().filter(|_| rel.contains('/')) else {
            continue; // lib.rs and main.rs: the crate's roots use every stage
        };
        let from = rank(stage).unwrap_or_else(|| panic!("interpreter/{rel}: `{stage}` is not a stage folder; add it to STAGES in tests/layers.rs"));
        let src = std::fs::read_to_string(&f).unwrap();
        let code = without_tests(&code_only(&src));
        for p in crate_paths(&code) {
            let to_stage = p.split("::").next().unwrap();
            let Some(to) = rank(to_stage) else { continue };
            if to > from {
                let module = p.split("::").nth(1).unwrap_or("");
                let at = [
                    format!("crate::{to_stage}::{module}"),
                    format!("crate::{to_stage}"),
                ]
                .iter()
                .find_map(|s| code.find(s.as_str()))
                .unwrap_or(0);
                let line = src[..at].lines().count() + 1;
                out.entry((module_of(&rel), p.clone()))
                    .or_insert(format!("interpreter/{rel}:{line}"));
            }
        }
    }
    out
}

#[test]
fn no_stage_uses_a_later_one() {
    let found = forward_uses();
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(k, _)| !known.contains(*k))
        .map(|((a, b), at)| format!("  {a} uses {b} (first at {at})"))
        .collect();
    let gone: Vec<String> = known
        .iter()
        .filter(|k| !found.contains_key(*k))
        .map(|(a, b)| format!("  ({a:?}, {b:?})"))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "stages are {}; a stage may use only itself and those before it.\n\
         uses that point forward:\n{}\n\
         listed in KNOWN but gone (take them off the list):\n{}",
        STAGES.join(" -> "),
        new.join("\n"),
        gone.join("\n")
    );
}

#[test]
fn the_scanner_sees_paths_and_not_strings_comments_or_tests() {
    let src = r##"
use crate::{run::eval::Eval, compile::{ir, tables as t}, base::value as v,};
// crate::cli::simulate in a comment
let s = "crate::battle::game in a string";
let r = r#"crate::run::odds"#;
let c = '{';
fn f() { crate::front::parse::parse_file(); }
#[cfg(test)]
mod tests { use crate::cli::lsp; }
"##;
    let code = without_tests(&code_only(src));
    assert_eq!(
        crate_paths(&code),
        [
            "run::eval",
            "compile::ir",
            "compile::tables",
            "base::value",
            "front::parse"
        ]
    );
    assert_eq!(module_of("run/hooks/api.rs"), "run::hooks");
    assert_eq!(module_of("run/hooks/mod.rs"), "run::hooks");
    assert_eq!(module_of("odds/engine.rs"), "odds::engine");
}
