//! docs/GUIDE.md is a tested walkthrough: its files (the blocks after a
//! `<!-- file: NAME -->` line, joined in order) are written to a folder,
//! every `$ muster ...` command of a ```text block is run there, and what
//! it prints must be what the guide shows (a `...` line stands for any
//! lines, none included). Every ```muster block parses.

use crate::common;
use std::path::Path;

/// The guide's text.
fn guide() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md")).unwrap()
}

/// The fenced blocks of a Markdown text: (info string, body, the line
/// before the fence).
fn blocks(text: &str) -> Vec<(String, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let before = if i > 0 { lines[i - 1] } else { "" }.to_string();
            let mut body = String::new();
            i += 1;
            while i < lines.len() && lines[i] != "```" {
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            out.push((info.to_string(), body, before));
        }
        i += 1;
    }
    out
}

/// The guide's files, each its blocks joined in order (a blank line
/// between two), written to a fresh folder.
fn write_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<(String, String)> = Vec::new();
    for (_, body, before) in blocks(&guide()) {
        let Some(name) = before
            .strip_prefix("<!-- file: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        match files.iter_mut().find(|(n, _)| n == name) {
            Some((_, text)) => {
                text.push('\n');
                text.push_str(&body);
            }
            None => files.push((name.to_string(), body)),
        }
    }
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    files.into_iter().map(|(n, _)| n).collect()
}

/// Split a command line on spaces (no quoting: the guide needs none).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Does `got` read as `want`, where a `...` line of `want` stands for any
/// lines (none included)? Trailing spaces are ignored.
fn matches(want: &[&str], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((&"...", rest)) => (0..=got.len()).any(|k| matches(rest, &got[k..])),
        Some((w, rest)) => got
            .split_first()
            .is_some_and(|(g, more)| g.trim_end() == w.trim_end() && matches(rest, more)),
    }
}

#[test]
fn the_guides_files_check_and_its_commands_print_what_it_shows() {
    let dir = common::scratch("guide");
    let files = write_files(&dir);
    assert_eq!(
        files,
        [
            "push_of_pike.muster",
            "horse_charges_pikes.toml",
            "skirmish.toml",
            "steady_pikes.muster",
            "push_of_pike_2.muster"
        ]
    );
    for f in files.iter().filter(|f| f.ends_with(".muster")) {
        let out = common::muster_in(&dir, &["check", f]);
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut ran = 0;
    for (info, body, _) in blocks(&guide()) {
        let Some(command) = body
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("$ muster "))
        else {
            continue;
        };
        assert_eq!(info, "text", "a command's output is a text block");
        let out = common::muster_in(&dir, &words(command));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "muster {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Vec<&str> = body.lines().skip(1).collect();
        let got: Vec<&str> = stdout.lines().collect();
        assert!(
            matches(&want, &got),
            "muster {command} printed:\n{stdout}\nthe guide shows:\n{}",
            want.join("\n")
        );
        ran += 1;
    }
    assert_eq!(ran, 5, "the guide's commands");
}

/// Every ```muster block parses, fragments too (a fragment is a line or
/// an item of a ruleset: wrapped in a policy or a decision where it is one).
#[test]
fn every_muster_block_of_the_guide_parses() {
    let mut n = 0;
    for (info, body, _) in blocks(&guide()) {
        if info != "muster" {
            continue;
        }
        n += 1;
        let text = match body.strip_prefix("// fragment\n") {
            Some(f) if f.starts_with("allowance") => format!(
                "decision d(side: side) \"d\" {{\n  move u where u.side == side\n  manoeuvre m: m is straight\n  {f}}}\n"
            ),
            Some(f) if f.contains("=>") && !f.contains('{') => {
                format!("policy p \"p\" {{\n  {f}}}\n")
            }
            Some(f) => f.to_string(),
            None => body.clone(),
        };
        if let Err(d) = muster::front::parse::parse_file(&text, muster::front::syntax::FileId(0)) {
            let mut s = muster::front::source::Sources::default();
            s.add("docs/GUIDE.md block", text.as_str());
            panic!("{}", muster::front::diagnostic::render_plain(&[d], &s));
        }
    }
    assert!(n >= 12, "only {n} muster blocks");
}

#[test]
fn a_dots_line_stands_for_any_lines() {
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a", "...", "d"], &["a", "d"]));
    assert!(!matches(&["a", "...", "d"], &["a", "b"]));
    assert!(!matches(&["a", "b"], &["a", "c"]));
    assert!(!matches(&["a"], &["a", "b"]));
}
