//! A structure-aware generator of Muster input, for fuzzing: rulesets,
//! situations and scenarios built from the grammar (grammar/muster.pest)
//! and from the shipped files, pushed to the extremes a shared file may
//! hold: nesting a hundred thousand deep, lines of a million characters,
//! numbers past 64 bits, non-ASCII text, CRLF line ends, huge counts.
//!
//! Every draw comes from one seeded `muster::base::rng::Rng`, so a case is
//! reproduced by its seed. Used by tests/fuzz.rs (a bounded run in CI) and
//! examples/soak.rs (a long run).

#![allow(dead_code)]

use muster::base::rng::Rng;

/// The generator of one case.
pub struct Gen {
    rng: Rng,
    /// Names to use: the ruleset's own when mutating one (so that most
    /// expressions compile), a few made-up ones otherwise.
    pub names: Vec<String>,
}

/// How deep the extreme nestings go.
const DEPTHS: &[usize] = &[60, 129, 257, 300, 1_025, 5_000, 100_000];

/// Words that are not names (the grammar's reserved words and clause words).
const RESERVED: &[&str] = &[
    "side_state",
    "otherwise",
    "procedure",
    "rerolling",
    "unlimited",
    "counting",
    "decision",
    "modifier",
    "original",
    "outcomes",
    "override",
    "quantity",
    "sequence",
    "extends",
    "measure",
    "outcome",
    "quality",
    "require",
    "ruleset",
    "scoring",
    "define",
    "import",
    "option",
    "remove",
    "class",
    "count",
    "false",
    "group",
    "phase",
    "state",
    "table",
    "until",
    "army",
    "call",
    "each",
    "else",
    "enum",
    "fact",
    "goto",
    "none",
    "stat",
    "step",
    "then",
    "true",
    "turn",
    "when",
    "all",
    "and",
    "any",
    "die",
    "end",
    "for",
    "let",
    "not",
    "per",
    "do",
    "if",
    "in",
    "is",
    "of",
    "or",
    "policy",
    "default_scenario",
    "hook",
    "note",
    "draw",
    "shuffle",
    "must",
    "by",
    "reach",
    "wheel",
    "allowance",
    "buffer",
    "distance",
    "turn_about",
    "manoeuvre",
    "finish",
    "control",
    "through",
    "together",
    "check",
    "unless",
    "where",
    "onto",
    "first",
    "sum",
    "min",
    "max",
];

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            rng: Rng::for_chunk(0xF022, seed),
            names: [
                "u", "t", "x", "resolve", "move", "side", "attacker", "defender",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        }
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.below(n.max(1) as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// Take the names of `text` (identifiers that are not reserved words).
    pub fn learn_names(&mut self, text: &str) {
        let mut seen = std::collections::BTreeSet::new();
        for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if w.len() > 1
                && w.starts_with(|c: char| c.is_ascii_alphabetic())
                && !RESERVED.contains(&w)
            {
                seen.insert(w.to_string());
            }
        }
        if !seen.is_empty() {
            self.names = seen.into_iter().collect();
        }
    }

    /// A whole number as written: mostly small, sometimes an extreme.
    pub fn number(&mut self) -> String {
        match self.below(12) {
            0 => self
                .pick(&[
                    "0",
                    "-1",
                    "2147483647",
                    "2147483648",
                    "4294967296",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "99999999999999999999999999",
                    "1000000",
                ])
                .to_string(),
            1 => "9".repeat(1 + self.below(400)),
            _ => self.below(13).to_string(),
        }
    }

    /// A name: one the ruleset knows, or new, or not ASCII.
    pub fn name(&mut self) -> String {
        match self.below(20) {
            0 => self
                .pick(&["é", "größe", "中", "x\u{301}", "𝔘", "_", "a_b_c"])
                .to_string(),
            1 => format!("n{}", self.below(1000)),
            2 => "n".repeat(1 + self.below(2_000)),
            _ => {
                let names = std::mem::take(&mut self.names);
                let n = self.pick(&names).clone();
                self.names = names;
                n
            }
        }
    }

    /// An expression drawn from the grammar's expression rules, about
    /// `depth` deep.
    pub fn expr(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self.atom();
        }
        let d = depth - 1;
        match self.below(16) {
            0 => format!("{} or {}", self.expr(d), self.expr(d)),
            1 => format!("{} and {}", self.expr(d), self.expr(d)),
            2 => format!("not {}", self.expr(d)),
            3 => {
                let op = *self.pick(&["==", "!=", "<=", ">=", "<", ">"]);
                format!("{} {op} {}", self.expr(d), self.expr(d))
            }
            4 => format!("{} is {}", self.expr(d), self.name()),
            5 => {
                let op = *self.pick(&["+", "-", "*", "/"]);
                format!("{} {op} {}", self.expr(d), self.expr(d))
            }
            6 => {
                let suffix = *self.pick(&[
                    "",
                    " scoring 5+",
                    " scoring 4+ rerolling misses",
                    " rerolling ones",
                    " counting hit",
                ]);
                format!("{} d6{suffix}", self.atom())
            }
            7 => format!("-{}", self.atom()),
            8 => format!("{}.{}", self.atom(), self.name()),
            9 => format!(
                "if {} then {} else {}",
                self.expr(d),
                self.expr(d),
                self.expr(d)
            ),
            10 => {
                let q = *self.pick(&["any", "all", "count", "first", "sum", "min", "max"]);
                let v = self.name();
                let of = if matches!(q, "sum" | "min" | "max") {
                    format!(" of {}", self.expr(d))
                } else {
                    String::new()
                };
                format!("{q} {v}: {}{of}", self.expr(d))
            }
            11 => format!("original({}.{})", self.atom(), self.name()),
            12 => format!("({})", self.expr(d)),
            13 => {
                let n = self.below(4);
                let args: Vec<String> = (0..n).map(|_| self.expr(d)).collect();
                format!("{}({})", self.name(), args.join(", "))
            }
            14 => self.deep(),
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> String {
        match self.below(8) {
            0 | 1 => self.number(),
            2 => self
                .pick(&["true", "false", "none", "unlimited"])
                .to_string(),
            _ => self.name(),
        }
    }

    /// One extreme nesting: brackets, `if`s, `not`s, a chain of operators,
    /// quantifiers or fields, as deep as one of [`DEPTHS`].
    pub fn deep(&mut self) -> String {
        let n = *self.pick(DEPTHS);
        match self.below(7) {
            0 => format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            1 => format!("{}0", "if true then 1 else ".repeat(n)),
            2 => format!("{}true", "not ".repeat(n)),
            3 => vec!["1"; n].join(" + "),
            4 => format!("{}true", "any u: ".repeat(n)),
            5 => format!("u{}", ".resolve".repeat(n)),
            _ => format!("{}1{}", "f(".repeat(n), ")".repeat(n)),
        }
    }

    /// Statements of a procedure's block, about `depth` deep.
    pub fn block(&mut self, depth: u32) -> String {
        let mut out = String::new();
        for _ in 0..1 + self.below(4) {
            let s = match self.below(9) {
                0 => format!("let {} = {}", self.name(), self.expr(2)),
                1 => format!("outcome {} = {}", self.name(), self.expr(2)),
                2 => format!("require {} else \"why\"", self.expr(2)),
                3 if depth > 0 => format!(
                    "if {} {{ {} }} else {{ {} }}",
                    self.expr(2),
                    self.block(depth - 1),
                    self.block(depth - 1)
                ),
                4 if depth > 0 => format!(
                    "for {}: {} {{ {} }}",
                    self.name(),
                    self.expr(1),
                    self.block(depth - 1)
                ),
                5 => format!("{}.{} += {}", self.name(), self.name(), self.expr(1)),
                6 => format!("call {}({})", self.name(), self.expr(1)),
                7 => {
                    // Statements nested to an extreme.
                    let n = *self.pick(DEPTHS);
                    format!("{}outcome x = 1{}", "if true { ".repeat(n), " }".repeat(n))
                }
                _ => format!("note {}({}) = {}", self.name(), self.name(), self.expr(1)),
            };
            out.push_str(&s);
            out.push('\n');
        }
        out
    }

    /// One item of a ruleset, drawn from the grammar's items.
    pub fn item(&mut self) -> String {
        let n = self.name();
        match self.below(16) {
            0 => format!("define {n}(u: unit): int = {}", self.expr(3)),
            1 => format!("define {n}(u: unit, t: unit): bool = {}", self.expr(3)),
            2 => {
                let mut rows = String::new();
                for _ in 0..self.below(6) {
                    rows.push_str(&format!("  when {} => {}\n", self.expr(2), self.expr(1)));
                }
                if !self.one_in(4) {
                    rows.push_str(&format!("  otherwise => {}\n", self.number()));
                }
                format!("table {n}(u: unit) -> int {{\n{rows}}}")
            }
            3 => {
                let (a, b) = (self.number(), self.number());
                format!(
                    "table {n}(x: int) -> int {{\n  ..{a} => 1\n  {a}..{b} => 2\n  {b}.. => 3\n}}"
                )
            }
            4 => format!(
                "modifier {n} \"§1\" : {} {} {} when {}",
                self.name(),
                self.pick(&["+=", "-=", "="]),
                self.expr(1),
                self.expr(2)
            ),
            5 => format!(
                "quantity {n}(u: unit) -> int min {} max {} = {}",
                self.number(),
                self.number(),
                self.expr(2)
            ),
            6 => format!(
                "procedure {n}(u: unit, t: unit) outcomes {{ {}: int, hits: bool }} {{\n{}}}",
                self.name(),
                self.block(2)
            ),
            7 => format!(
                "fact {n}(u: unit): bool = {}\n  in battle: {}",
                self.expr(1),
                self.expr(2)
            ),
            8 => format!("state {n}: int = {}", self.expr(1)),
            9 => format!("option {n} \"an option\" = {}", self.pick(&["on", "off"])),
            10 => format!(
                "units (move, resolve) {{\n  {n} : {} = {}, {}\n}}",
                self.name(),
                self.number(),
                self.number()
            ),
            11 => format!(
                "hook {n} fact {} {{ {} }}",
                self.name(),
                self.pick(&[
                    "1",
                    "let x = 0; while x < 10 { x += 1; } x",
                    "try { fact(\"x\") } catch { -1 }",
                    "loop { }",
                    "roll(\"d6\") + roll(\"d6\")",
                ])
            ),
            12 => format!(
                "die {n} = {{ a x {}, b = {} }}",
                self.number(),
                self.number()
            ),
            // Dice whose faces yield tallies, counted by a number option,
            // read by an effects block, rolled in a procedure.
            13 => format!(
                "option {n}_count = {}\ndie {n} = {{ a x {n}_count, b x {} }}\n\
                 effects {n}_fx(f: bool) -> {{ hits, pushes }} {{ a => hits {}, pushes 1 when f }}\n\
                 procedure {n}_roll(u: unit) outcomes {{ r: {n}_fx, hits: int }} {{\n  let r = roll {} {n} + {} d6 as {n}_fx({})\n  outcome r = r\n  outcome hits = r.hits\n}}",
                self.number(),
                self.number(),
                self.number(),
                self.expr(1),
                self.expr(1),
                self.expr(1)
            ),
            14 => format!(
                "table {n}(x: int in -3..3) -> dice {{\n  ..0 => none\n  1 => {} d6\n  2.. => d6 + {}\n}}",
                self.number(),
                self.name()
            ),
            _ => format!("define {n}(): int = {}", self.deep()),
        }
    }

    /// A fresh ruleset: the vocabulary a ruleset needs, then items.
    pub fn ruleset(&mut self) -> String {
        let mut out = String::from(
            "ruleset fuzz \"generated\"\nimport core\nsides attacker, defender\nclass cavalry, infantry\nstat move, resolve\nunits (move, resolve) {\n  Horse : cavalry = 6, 3\n  Foot : infantry = 4, 4\n}\n",
        );
        self.names.extend(
            ["Horse", "Foot", "cavalry", "infantry", "d6"]
                .iter()
                .map(|s| s.to_string()),
        );
        for _ in 0..1 + self.below(8) {
            out.push_str(&self.item());
            out.push('\n');
        }
        out
    }

    /// `text` (a ruleset, situation or scenario) changed by one to three
    /// structure-aware edits.
    pub fn mutate(&mut self, text: &str) -> String {
        let mut t = text.to_string();
        for _ in 0..1 + self.below(3) {
            t = self.edit(&t);
        }
        t
    }

    /// `text` with one mild edit: a number made extreme, or a name swapped
    /// for another the file knows, so that it mostly still compiles and
    /// runs (and the extreme reaches the engine, not just the parser).
    pub fn mutate_mildly(&mut self, text: &str) -> String {
        let n = self.below(400);
        if self.one_in(2) {
            let num = self.number();
            replace_nth(text, n, |w| w.chars().all(|c| c.is_ascii_digit()), &num)
        } else {
            let name = self.name();
            replace_nth(text, n, |w| self.names.iter().any(|x| x == w), &name)
        }
    }

    fn edit(&mut self, t: &str) -> String {
        let lines: Vec<&str> = t.lines().collect();
        if lines.is_empty() {
            return self.ruleset();
        }
        let i = self.below(lines.len());
        match self.below(11) {
            // A number made extreme.
            0 => replace_nth(
                t,
                self.below(200),
                |w| w.chars().all(|c| c.is_ascii_digit()),
                &self.number(),
            ),
            // A name made another of the file's, or a generated expression.
            1 => {
                let e = self.expr(2);
                replace_nth(
                    t,
                    self.below(400),
                    |w| w.starts_with(|c: char| c.is_ascii_alphabetic()),
                    &e,
                )
            }
            // An extreme nesting where a name was.
            2 => {
                let d = self.deep();
                replace_nth(
                    t,
                    self.below(400),
                    |w| w.starts_with(|c: char| c.is_ascii_alphabetic()),
                    &format!("({d})"),
                )
            }
            // A generated item inserted between lines.
            3 => {
                let item = self.item();
                splice(&lines, i, &[item.as_str(), lines[i]])
            }
            // A line made a million characters long (in a comment, a
            // string, or as a name).
            4 => {
                let long = match self.below(3) {
                    0 => format!("{} // {}", lines[i], "x".repeat(1_000_000)),
                    1 => format!("ruleset long \"{}\" oops", "y".repeat(1_000_000)),
                    _ => format!("{} {}", "z".repeat(1_000_000), lines[i]),
                };
                splice(&lines, i, &[long.as_str()])
            }
            // CRLF line ends.
            5 => t.replace('\n', "\r\n"),
            // Not ASCII.
            6 => {
                let u = *self.pick(&["é", "中文", "\u{301}", "𝔘𝔫𝔦", "\u{feff}", "\u{0}"]);
                let at = floor_boundary(t, self.below(t.len()));
                format!("{}{u}{}", &t[..at], &t[at..])
            }
            // Cut short, or a line dropped or repeated.
            7 => t[..floor_boundary(t, self.below(t.len()))].to_string(),
            8 => splice(&lines, i, &[]),
            9 => splice(&lines, i, &[lines[i], lines[i]]),
            // A line repeated a thousand times (huge counts of rows, units).
            _ => {
                let many = vec![lines[i]; 1_000];
                splice(&lines, i, &many)
            }
        }
    }

    /// A situation file for procedure `proc` of a ruleset whose unit types
    /// include `types`, with generated facts.
    pub fn situation(&mut self, proc: &str, types: &[&str]) -> String {
        let mut facts = Vec::new();
        for _ in 0..self.below(4) {
            let f = if self.one_in(5) {
                self.deep()
            } else {
                self.expr(2)
            };
            facts.push(format!("{f:?}"));
        }
        let mut out = format!("procedure = {proc:?}\nfacts = [{}]\n", facts.join(", "));
        let units = if self.one_in(10) {
            *self.pick(&[100, 5_000])
        } else {
            2
        };
        for k in 0..units {
            let name = match k {
                0 => "attacker".to_string(),
                1 => "defender".to_string(),
                _ => format!("u{k}"),
            };
            let ty = *self.pick(types);
            out.push_str(&format!("[units.{name}]\ntype = {ty:?}\n"));
            if self.one_in(4) {
                out.push_str(&format!("resolve = {}\n", self.number()));
            }
        }
        out
    }
}

/// `t` with the `n`-th word that `which` accepts (counting round) replaced.
fn replace_nth(t: &str, n: usize, which: impl Fn(&str) -> bool, by: &str) -> String {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        let w = c.is_ascii_alphanumeric() || c == '_';
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, t.len()));
    }
    let hits: Vec<(usize, usize)> = words
        .into_iter()
        .filter(|(a, b)| which(&t[*a..*b]))
        .collect();
    if hits.is_empty() {
        return t.to_string();
    }
    let (a, b) = hits[n % hits.len()];
    format!("{}{by}{}", &t[..a], &t[b..])
}

/// The lines with line `i` replaced by `with`.
fn splice(lines: &[&str], i: usize, with: &[&str]) -> String {
    let mut out: Vec<&str> = lines[..i].to_vec();
    out.extend_from_slice(with);
    out.extend_from_slice(&lines[i + 1..]);
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn floor_boundary(t: &str, mut i: usize) -> usize {
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}
