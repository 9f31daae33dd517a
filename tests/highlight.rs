//! The TextMate grammar of editors/vscode/ against every shipped ruleset
//! and stdlib/ file: a small tokeniser over the grammar's own regexes
//! (TextMate's rule: at each place the earliest match wins, the first
//! listed on a tie; a `begin`/`end` region covers what it spans) reads
//! every line, and no character but white space may be left unmatched.
//! The grammar's keywords are the reserved words of grammar/muster.pest,
//! read from it, so that the two cannot drift apart.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn grammar() -> Value {
    let text =
        std::fs::read_to_string(root().join("editors/vscode/syntaxes/muster.tmLanguage.json"))
            .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// One rule of the grammar, its regexes compiled.
enum Rule {
    /// `match`: a scope, and scopes of capture groups.
    Match {
        re: Regex,
        name: String,
        captures: Vec<(usize, String)>,
    },
    /// `begin` ... `end`: everything between is the region's.
    Region {
        begin: Regex,
        end: Regex,
        name: String,
    },
}

/// The grammar's rules in the order TextMate tries them (`include`s of the
/// repository expanded).
fn rules(g: &Value) -> Vec<Rule> {
    fn add(g: &Value, list: &Value, out: &mut Vec<Rule>) {
        for p in list.as_array().unwrap() {
            if let Some(inc) = p["include"].as_str() {
                let key = inc.strip_prefix('#').expect("a repository include");
                add(g, &g["repository"][key]["patterns"], out);
                continue;
            }
            let name = p["name"].as_str().unwrap_or("").to_string();
            let re = |k: &str| {
                let src = p[k].as_str().unwrap();
                Regex::new(&format!("(?m){src}"))
                    .unwrap_or_else(|e| panic!("`{src}` compiles: {e}"))
            };
            if p["begin"].is_string() {
                out.push(Rule::Region {
                    begin: re("begin"),
                    end: re("end"),
                    name,
                });
            } else {
                let captures = p["captures"]
                    .as_object()
                    .map(|c| {
                        c.iter()
                            .map(|(k, v)| (k.parse().unwrap(), v["name"].as_str().unwrap().into()))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(Rule::Match {
                    re: re("match"),
                    name,
                    captures,
                });
            }
        }
    }
    let mut out = Vec::new();
    add(g, &g["patterns"], &mut out);
    out
}

/// A token: its text and scope.
#[derive(Debug)]
struct Token {
    text: String,
    scope: String,
}

/// Tokenise a whole text line by line; the tokens, and the places (line,
/// column, character) no rule matched.
fn tokenise(rules: &[Rule], text: &str) -> (Vec<Token>, Vec<(usize, usize, char)>) {
    let mut tokens = Vec::new();
    let mut unmatched = Vec::new();
    // The region a line starts in (a region may span lines).
    let mut open: Option<(&Regex, &str)> = None;
    for (ln, line) in text.lines().enumerate() {
        let mut pos = 0;
        while pos <= line.len() {
            if let Some((end, scope)) = open {
                match end.find_at(line, pos) {
                    Some(m) => {
                        tokens.push(Token {
                            text: line[pos..m.end()].into(),
                            scope: scope.into(),
                        });
                        pos = m.end();
                        open = None;
                        continue;
                    }
                    None => {
                        tokens.push(Token {
                            text: line[pos..].into(),
                            scope: scope.into(),
                        });
                        break;
                    }
                }
            }
            // The earliest match of any rule; on a tie, the first rule.
            let mut best: Option<(usize, usize, &Rule)> = None;
            for r in rules {
                let re = match r {
                    Rule::Match { re, .. } => re,
                    Rule::Region { begin, .. } => begin,
                };
                if let Some(m) = re.find_at(line, pos) {
                    if m.end() > m.start() && best.is_none_or(|(s, _, _)| m.start() < s) {
                        best = Some((m.start(), m.end(), r));
                    }
                }
            }
            let Some((start, end, rule)) = best else {
                unmatched.extend(gap(line, pos, line.len(), ln));
                break;
            };
            unmatched.extend(gap(line, pos, start, ln));
            match rule {
                Rule::Match { re, name, captures } => {
                    let caps = re.captures_at(line, start).unwrap();
                    if captures.is_empty() {
                        tokens.push(Token {
                            text: line[start..end].into(),
                            scope: name.clone(),
                        });
                    }
                    for (i, scope) in captures {
                        if let Some(c) = caps.get(*i) {
                            tokens.push(Token {
                                text: c.as_str().into(),
                                scope: scope.clone(),
                            });
                        }
                    }
                    // What the captures leave between them is the match's.
                    if !captures.is_empty() {
                        let covered: usize = captures
                            .iter()
                            .filter_map(|(i, _)| caps.get(*i).map(|c| c.len()))
                            .sum();
                        let rest = line[start..end].chars().filter(|c| !c.is_whitespace());
                        assert!(
                            covered >= rest.map(char::len_utf8).sum::<usize>(),
                            "captures cover `{}`",
                            &line[start..end]
                        );
                    }
                    pos = end;
                }
                Rule::Region { end: re, name, .. } => {
                    tokens.push(Token {
                        text: line[start..end].into(),
                        scope: name.clone(),
                    });
                    open = Some((re, name.as_str()));
                    pos = end;
                }
            }
        }
    }
    (tokens, unmatched)
}

/// The characters of `line[from..to]` that are not white space.
fn gap(line: &str, from: usize, to: usize, ln: usize) -> Vec<(usize, usize, char)> {
    line[from..to]
        .char_indices()
        .filter(|(_, c)| !c.is_whitespace())
        .map(|(i, c)| (ln + 1, from + i + 1, c))
        .collect()
}

/// Every shipped ruleset and standard library file.
fn shipped() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["rules", "stdlib"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "muster" || x == "rhai") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The reserved words of grammar/muster.pest: its `reserved` rule spells
/// them by first letter, a one-letter range (`'u'..'u' ~ ("nlimited" |
/// "ntil")`), or whole (`"when"`); a range of several letters (`&('a'..'f')`)
/// only groups them.
fn reserved_words() -> BTreeSet<String> {
    let pest = std::fs::read_to_string(root().join("grammar/muster.pest")).unwrap();
    let start = pest.find("reserved = _{").expect("the reserved rule");
    let body = &pest[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let part = Regex::new(r#""([a-z_]+)"|'([a-z])'\.\.'([a-z])'"#).unwrap();
    let mut words = BTreeSet::new();
    for line in body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|') || l.starts_with('"') || l.starts_with('\''))
    {
        let parts: Vec<&str> = part
            .captures_iter(line)
            .filter_map(|c| match (c.get(1), c.get(2), c.get(3)) {
                (Some(w), _, _) => Some(w.as_str()),
                (None, Some(a), Some(b)) if a.as_str() == b.as_str() => Some(a.as_str()),
                _ => None,
            })
            .collect();
        match (line.contains('~'), parts.split_first()) {
            (true, Some((first, rest))) => words.extend(rest.iter().map(|r| format!("{first}{r}"))),
            (false, Some((w, _))) => {
                words.insert(w.to_string());
            }
            _ => {}
        }
    }
    words
}

#[test]
fn every_line_of_every_shipped_file_is_tokenised() {
    let rules = rules(&grammar());
    let files = shipped();
    assert!(files.len() >= 8, "{files:?}");
    let mut lines = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        lines += text.lines().count();
        let (tokens, unmatched) = tokenise(&rules, &text);
        assert!(
            unmatched.is_empty(),
            "{}: no rule matches {:?} (line, column, character)",
            f.display(),
            &unmatched[..unmatched.len().min(20)]
        );
        assert!(!tokens.is_empty());
    }
    assert!(lines > 5_000, "{lines} lines read");
}

#[test]
fn reserved_words_are_keywords_and_declared_names_are_names() {
    let words = reserved_words();
    assert!(words.len() > 60, "{words:?}");
    for w in [
        "state",
        "stat",
        "side_state",
        "when",
        "let",
        "quantity",
        "until",
    ] {
        assert!(words.contains(w), "{w} read from the pest grammar");
    }
    let rules = rules(&grammar());
    // Each reserved word alone on a line is a keyword, an operator word
    // or a language constant: never a plain name.
    for w in &words {
        let (tokens, _) = tokenise(&rules, w);
        assert_eq!(tokens.len(), 1, "{w}: {tokens:?}");
        let s = &tokens[0].scope;
        assert!(
            s.starts_with("keyword") || s.starts_with("constant.language"),
            "`{w}` is scoped {s}"
        );
    }
    let tvbd = std::fs::read_to_string(root().join("rules/tillys_very_bad_day.muster")).unwrap();
    let (tokens, _) = tokenise(&rules, &tvbd);
    let scope_of = |text: &str| {
        tokens
            .iter()
            .find(|t| t.text == text)
            .map(|t| t.scope.as_str())
            .unwrap_or_else(|| panic!("a token `{text}`"))
    };
    assert_eq!(scope_of("melee_to_hit"), "entity.name.function.muster");
    assert_eq!(scope_of("\"Pike+Shot\""), "string.quoted.double.muster");
    assert_eq!(
        scope_of("// §Units. Pike+shot, shot and rabble are infantry and fight on foot;"),
        "comment.line.double-slash.muster"
    );
    assert_eq!(scope_of("=>"), "keyword.operator.muster");
    // A comment's `"` opens no string; a string's `//` opens no comment.
    let (t, _) = tokenise(&rules, "y = \"a // b\" // \"c");
    let scopes: Vec<&str> = t.iter().map(|t| t.scope.as_str()).collect();
    assert_eq!(
        scopes,
        [
            "variable.other.muster",
            "keyword.operator.muster",
            "string.quoted.double.muster",
            "comment.line.double-slash.muster"
        ]
    );
}

#[test]
fn the_extension_names_the_grammar_and_the_server() {
    let pkg: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("editors/vscode/package.json")).unwrap(),
    )
    .unwrap();
    let g = &pkg["contributes"]["grammars"][0];
    assert_eq!(g["scopeName"], grammar()["scopeName"]);
    assert!(root()
        .join("editors/vscode")
        .join(g["path"].as_str().unwrap())
        .is_file());
    let lang = &pkg["contributes"]["languages"][0];
    assert_eq!(lang["extensions"][0], ".muster");
    assert!(root()
        .join("editors/vscode")
        .join(lang["configuration"].as_str().unwrap())
        .is_file());
    let ext = std::fs::read_to_string(root().join("editors/vscode/extension.js")).unwrap();
    assert!(
        ext.contains("args: ['lsp']"),
        "the extension runs `muster lsp`"
    );
    // Packaged with vsce and tokenised as VS Code does by npm scripts (run
    // by hand: they need the npm registry); the package leaves the tools out.
    assert_eq!(
        pkg["scripts"]["tokenise"],
        "node test/tokenise.js ../../rules/*.muster ../../stdlib/*.muster"
    );
    assert!(pkg["devDependencies"]["vscode-textmate"].is_string());
    assert!(pkg["devDependencies"]["@vscode/vsce"].is_string());
    assert!(root().join("editors/vscode/test/tokenise.js").is_file());
    let ignore = std::fs::read_to_string(root().join("editors/vscode/.vscodeignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "test/**"), "{ignore}");
}
