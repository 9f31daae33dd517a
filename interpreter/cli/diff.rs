//! `muster diff`: the rule-level difference of two rulesets.
//!
//! Both rulesets are compared as the loader leaves them: every `extends`
//! followed, every override, removal, `+=` row and patched step applied
//! (see [`crate::front::load`]). Each rule becomes an [`Entry`] (a unit type, a
//! table, a step, ...) made of [`Part`]s (a stat column, a table row, a
//! procedure's body), each written out as canonical text: expressions and
//! statements are printed from the syntax tree, so layout, comments and
//! source places never count as a difference, only what the rules say.
//!
//! [`entries`] destructures every item kind and every field of the merged
//! syntax tree without `..`: a field added to the language that this module
//! does not compare is a compile error here, not a difference silently
//! missed.

use crate::front::load::Loaded;
use crate::front::source::Sources;
use crate::front::syntax::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// What kind of rule an entry is. The order is the order of the groups in
/// the text output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Unit,
    Stat,
    Quality,
    Table,
    Modifier,
    Quantity,
    Define,
    Procedure,
    Hook,
    Step,
    Sequence,
    Option,
    Decision,
    Policy,
    Army,
    State,
    SideState,
    Fact,
    Deck,
    Die,
    Effects,
    Enum,
    Class,
    Group,
    Sides,
    Measure,
    DefaultScenario,
}

impl Kind {
    /// The word before a rule's name.
    fn word(self) -> &'static str {
        match self {
            Kind::Unit => "unit",
            Kind::Stat => "stat",
            Kind::Quality => "quality",
            Kind::Table => "table",
            Kind::Modifier => "modifier",
            Kind::Quantity => "quantity",
            Kind::Define => "define",
            Kind::Procedure => "procedure",
            Kind::Hook => "hook",
            Kind::Step => "step",
            Kind::Sequence => "sequence",
            Kind::Option => "option",
            Kind::Decision => "decision",
            Kind::Policy => "policy",
            Kind::Army => "army",
            Kind::State => "state",
            Kind::SideState => "side_state",
            Kind::Fact => "fact",
            Kind::Deck => "deck",
            Kind::Die => "die",
            Kind::Effects => "effects",
            Kind::Enum => "enum",
            Kind::Class => "class",
            Kind::Group => "group",
            Kind::Sides => "sides",
            Kind::Measure => "measure",
            Kind::DefaultScenario => "default_scenario",
        }
    }

    /// The heading of the kind's group in the text output.
    fn heading(self) -> &'static str {
        match self {
            Kind::Unit => "unit types",
            Kind::Stat => "stats",
            Kind::Quality => "qualities",
            Kind::Table => "tables",
            Kind::Modifier => "modifiers",
            Kind::Quantity => "quantities",
            Kind::Define => "defines",
            Kind::Procedure => "procedures",
            Kind::Hook => "hooks",
            Kind::Step => "steps",
            Kind::Sequence => "sequence",
            Kind::Option => "options",
            Kind::Decision => "decisions",
            Kind::Policy => "policies",
            Kind::Army => "army lists",
            Kind::State => "unit state",
            Kind::SideState => "side state",
            Kind::Fact => "facts",
            Kind::Deck => "decks",
            Kind::Die => "dice",
            Kind::Effects => "effects of dice",
            Kind::Enum => "enums",
            Kind::Class => "classes",
            Kind::Group => "groups",
            Kind::Sides => "sides",
            Kind::Measure => "measures",
            Kind::DefaultScenario => "default scenario",
        }
    }

    /// Kinds whose entries have an order that matters (the sequence of play).
    fn ordered(self) -> bool {
        self == Kind::Step
    }
}

/// How a rule (or a part of one) differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    Added,
    Removed,
    Changed,
    /// In both, in another place of an ordered list (a step of the
    /// sequence, a row of a table).
    Moved,
    /// In both under another name (a step B renames with `override step
    /// "X" as "Y"`): `a` and `b` are the names; the rule's other changes
    /// are listed under A's name.
    Renamed,
}

/// One difference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub kind: Kind,
    /// The rule's name (`Horse`, `melee_to_hit`, a step's title).
    pub name: String,
    /// The part of the rule that differs (a stat column, a table row's
    /// keys, `body`), or none for the rule as a whole.
    pub part: Option<String>,
    pub change: How,
    /// What A says (none when it is added), as canonical text; a moved
    /// item's place (`after X`, `first`).
    pub a: Option<String>,
    /// What B says (none when it is removed).
    pub b: Option<String>,
    /// Where A writes it, `file:line`.
    pub a_at: Option<String>,
    /// Where B writes it.
    pub b_at: Option<String>,
    /// A changed text of several lines (a procedure's body, a hook's
    /// script): the lines that differ, each starting with `- ` (only in A)
    /// or `+ ` (only in B), runs apart separated by `  ...`.
    pub lines: Vec<String>,
}

/// One side of a difference: the file as named, and the ruleset's header.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub file: String,
    pub ruleset: Option<String>,
    pub title: Option<String>,
}

/// The difference of two rulesets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    pub a: Side,
    pub b: Side,
    pub identical: bool,
    pub changes: Vec<Change>,
}

/// A loaded ruleset with the texts its spans point into.
pub struct Input<'a> {
    /// The file as the command line named it.
    pub file: &'a str,
    pub loaded: &'a Loaded,
    pub sources: &'a Sources,
}

/// The difference of ruleset A and ruleset B.
pub fn diff(a: Input, b: Input) -> Diff {
    let (ea, mut eb) = (entries(a.loaded), entries(b.loaded));
    let mut changes = Vec::new();
    let (lines_a, lines_b) = (Lines::of(a.sources), Lines::of(b.sources));
    let at_a = |s: Span| lines_a.place(s);
    let at_b = |s: Span| lines_b.place(s);
    // A rule B renamed is still written where A writes it: matched by that
    // place, it is compared under A's name.
    for (old, new, sa, sb) in renamed(&ea, &mut eb, a.sources, b.sources) {
        changes.push(Change {
            a: Some(quoted(&old)),
            b: Some(quoted(&new)),
            a_at: Some(at_a(sa)),
            b_at: Some(at_b(sb)),
            ..Change::new(Kind::Step, &old, Some("name"), How::Renamed)
        });
    }
    let index = |es: &[Entry]| -> HashMap<(Kind, String), usize> {
        es.iter()
            .enumerate()
            .map(|(i, e)| ((e.kind, e.name.clone()), i))
            .collect()
    };
    let (ia, ib) = (index(&ea), index(&eb));
    // What A has that B lacks, then what both have, in A's order; then
    // what only B has, in B's order.
    for e in &ea {
        match ib.get(&(e.kind, e.name.clone())) {
            None => changes.push(Change {
                a: summary(e, None),
                a_at: Some(at_a(e.span)),
                ..Change::new(e.kind, &e.name, None, How::Removed)
            }),
            Some(&j) => compare_parts(e, &eb[j], &at_a, &at_b, &mut changes),
        }
    }
    for (k, e) in eb.iter().enumerate() {
        if !ia.contains_key(&(e.kind, e.name.clone())) {
            let after = e.kind.ordered().then(|| predecessor(&eb, k));
            changes.push(Change {
                b: summary(e, after.as_deref()),
                b_at: Some(at_b(e.span)),
                ..Change::new(e.kind, &e.name, None, How::Added)
            });
        }
    }
    moved_entries(&ea, &eb, &at_a, &at_b, &mut changes);
    // Group by kind, keeping each group's order.
    changes.sort_by_key(|c| c.kind);
    let side = |i: &Input| Side {
        file: i.file.to_string(),
        ruleset: i.loaded.header.as_ref().map(|h| h.id.text.clone()),
        title: i.loaded.header.as_ref().and_then(|h| h.title.clone()),
    };
    Diff {
        a: side(&a),
        b: side(&b),
        identical: changes.is_empty(),
        changes,
    }
}

/// The steps of B that are steps of A under another name: a step of B
/// whose name A lacks, written at the very place (file and offset) where a
/// step of A that B lacks is written. Each gets A's name in `eb`; returned
/// as (A's name, B's name, A's span, B's span).
fn renamed(
    ea: &[Entry],
    eb: &mut [Entry],
    sa: &Sources,
    sb: &Sources,
) -> Vec<(String, String, Span, Span)> {
    let names = |es: &[Entry]| -> std::collections::HashSet<String> {
        es.iter()
            .filter(|e| e.kind == Kind::Step)
            .map(|e| e.name.clone())
            .collect()
    };
    let (na, nb) = (names(ea), names(eb));
    let origin = |s: &Sources, span: Span| (s.get(span.file).name.clone(), span.start);
    let only_a: HashMap<(String, u32), &Entry> = ea
        .iter()
        .filter(|e| e.kind == Kind::Step && !nb.contains(&e.name))
        .map(|e| (origin(sa, e.span), e))
        .collect();
    let mut out = Vec::new();
    for e in eb
        .iter_mut()
        .filter(|e| e.kind == Kind::Step && !na.contains(&e.name))
    {
        if let Some(old) = only_a.get(&origin(sb, e.span)) {
            out.push((old.name.clone(), e.name.clone(), old.span, e.span));
            e.name = old.name.clone();
        }
    }
    out
}

impl Change {
    fn new(kind: Kind, name: &str, part: Option<&str>, change: How) -> Change {
        Change {
            kind,
            name: name.to_string(),
            part: part.map(str::to_string),
            change,
            a: None,
            b: None,
            a_at: None,
            b_at: None,
            lines: Vec::new(),
        }
    }
}

/// A rule in a form to compare.
struct Entry {
    kind: Kind,
    name: String,
    span: Span,
    /// Its parts, each compared on its own, keys unique within the entry.
    parts: Vec<Part>,
}

struct Part {
    key: String,
    /// Canonical text; several lines for a body.
    text: String,
    span: Span,
    /// Whether its place among the entry's other ordered parts matters (a
    /// table's rows: the first that matches gives the value).
    ordered: bool,
}

/// Where each line of each source starts, to name places by line without
/// counting a file's lines again for each difference.
struct Lines<'s> {
    sources: &'s Sources,
    starts: Vec<Vec<u32>>,
}

impl<'s> Lines<'s> {
    fn of(sources: &'s Sources) -> Lines<'s> {
        let starts = (0..sources.len())
            .map(|i| crate::compile::scripts::line_starts(&sources.get(FileId(i as u32)).text))
            .collect();
        Lines { sources, starts }
    }

    /// `file:line` of a span.
    fn place(&self, span: Span) -> String {
        let line = self.starts[span.file.0 as usize].partition_point(|&s| s <= span.start);
        format!("{}:{line}", self.sources.get(span.file).name)
    }
}

/// A one-line account of a whole rule added or removed: its short parts
/// (`resolve 4, move 12`), and for a step where it goes.
fn summary(e: &Entry, after: Option<&str>) -> Option<String> {
    const LONG: usize = 160;
    let mut s = String::new();
    let bits = e
        .parts
        .iter()
        .filter(|p| !p.text.contains('\n') && !p.text.is_empty())
        .map(|p| format!("{} {}", p.key, p.text));
    for bit in after.map(str::to_string).into_iter().chain(bits) {
        if s.len() + bit.len() > LONG {
            s.push_str(", ...");
            break;
        }
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&bit);
    }
    (!s.is_empty()).then_some(s)
}

/// Where the `k`th entry of an ordered kind comes: after the entry of the
/// same kind before it, or first.
fn predecessor(es: &[Entry], k: usize) -> String {
    let kind = es[k].kind;
    match es[..k].iter().rev().find(|e| e.kind == kind) {
        Some(p) => format!("after {}", shown_name(kind, &p.name)),
        None => "first".into(),
    }
}

/// The parts of a rule both rulesets have: added, removed, changed, and
/// (for ordered parts) moved.
fn compare_parts(
    a: &Entry,
    b: &Entry,
    at_a: &dyn Fn(Span) -> String,
    at_b: &dyn Fn(Span) -> String,
    out: &mut Vec<Change>,
) {
    let pb: HashMap<&str, &Part> = b.parts.iter().map(|p| (p.key.as_str(), p)).collect();
    let pa: HashMap<&str, &Part> = a.parts.iter().map(|p| (p.key.as_str(), p)).collect();
    let new = |p: &Part, how| Change::new(a.kind, &a.name, Some(&p.key), how);
    for p in &a.parts {
        match pb.get(p.key.as_str()) {
            None => out.push(Change {
                a: Some(p.text.clone()),
                a_at: Some(at_a(p.span)),
                ..new(p, How::Removed)
            }),
            Some(q) if q.text != p.text => {
                let several = p.text.contains('\n') || q.text.contains('\n');
                out.push(Change {
                    a: Some(p.text.clone()),
                    b: Some(q.text.clone()),
                    a_at: Some(at_a(p.span)),
                    b_at: Some(at_b(q.span)),
                    lines: if several {
                        line_diff(&p.text, &q.text)
                    } else {
                        Vec::new()
                    },
                    ..new(p, How::Changed)
                })
            }
            Some(_) => {}
        }
    }
    for (k, q) in b.parts.iter().enumerate() {
        if !pa.contains_key(q.key.as_str()) {
            let mut text = q.text.clone();
            if q.ordered {
                let after = match b.parts[..k].iter().rev().find(|p| p.ordered) {
                    None => "first".to_string(),
                    Some(p) => format!("after {}", p.key),
                };
                text = format!("{text} ({after})");
            }
            out.push(Change {
                b: Some(text),
                b_at: Some(at_b(q.span)),
                ..new(q, How::Added)
            });
        }
    }
    let ordered = |e: &'_ Entry| -> Vec<usize> {
        (0..e.parts.len()).filter(|&i| e.parts[i].ordered).collect()
    };
    let (oa, ob) = (ordered(a), ordered(b));
    let ka: Vec<&str> = oa.iter().map(|&i| a.parts[i].key.as_str()).collect();
    let kb: Vec<&str> = ob.iter().map(|&i| b.parts[i].key.as_str()).collect();
    let before = |keys: &[&str], i: usize| match i {
        0 => "first".to_string(),
        _ => format!("after {}", keys[i - 1]),
    };
    for (i, j) in moved(&ka, &kb) {
        out.push(Change {
            a: Some(before(&ka, i)),
            b: Some(before(&kb, j)),
            a_at: Some(at_a(a.parts[oa[i]].span)),
            b_at: Some(at_b(b.parts[ob[j]].span)),
            ..Change::new(a.kind, &a.name, Some(ka[i]), How::Moved)
        });
    }
}

/// Entries of an ordered kind (steps) that both rulesets have but in
/// another order.
fn moved_entries(
    ea: &[Entry],
    eb: &[Entry],
    at_a: &dyn Fn(Span) -> String,
    at_b: &dyn Fn(Span) -> String,
    out: &mut Vec<Change>,
) {
    let ordered =
        |es: &[Entry]| -> Vec<usize> { (0..es.len()).filter(|&i| es[i].kind.ordered()).collect() };
    let (oa, ob) = (ordered(ea), ordered(eb));
    let names = |es: &[Entry], o: &[usize]| -> Vec<String> {
        o.iter()
            .map(|&i| format!("{}\u{0}{}", es[i].kind.word(), es[i].name))
            .collect()
    };
    let (na, nb) = (names(ea, &oa), names(eb, &ob));
    let ka: Vec<&str> = na.iter().map(String::as_str).collect();
    let kb: Vec<&str> = nb.iter().map(String::as_str).collect();
    for (i, j) in moved(&ka, &kb) {
        let (x, y) = (&ea[oa[i]], &eb[ob[j]]);
        out.push(Change {
            a: Some(predecessor(ea, oa[i])),
            b: Some(predecessor(eb, ob[j])),
            a_at: Some(at_a(x.span)),
            b_at: Some(at_b(y.span)),
            ..Change::new(x.kind, &x.name, None, How::Moved)
        });
    }
}

/// The most cells a longest common subsequence is worked out over; past
/// it (bodies of thousands of lines) a difference is shown without
/// looking for lines in common inside the changed stretch.
const LCS_CELLS: usize = 4_000_000;

/// For each of two sequences, which items are in a longest common
/// subsequence of the two (after their common start and end).
fn common(a: &[&str], b: &[&str]) -> (Vec<bool>, Vec<bool>) {
    let (mut ka, mut kb) = (vec![false; a.len()], vec![false; b.len()]);
    let mut s = 0;
    while s < a.len() && s < b.len() && a[s] == b[s] {
        ka[s] = true;
        kb[s] = true;
        s += 1;
    }
    let mut e = 0;
    while e < a.len() - s && e < b.len() - s && a[a.len() - 1 - e] == b[b.len() - 1 - e] {
        ka[a.len() - 1 - e] = true;
        kb[b.len() - 1 - e] = true;
        e += 1;
    }
    let (ma, mb) = (&a[s..a.len() - e], &b[s..b.len() - e]);
    if ma.is_empty() || mb.is_empty() || ma.len().saturating_mul(mb.len()) > LCS_CELLS {
        return (ka, kb);
    }
    // len[i][j]: the LCS of ma[i..] and mb[j..].
    let w = mb.len() + 1;
    let mut len = vec![0u32; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            len[i * w + j] = if ma[i] == mb[j] {
                len[(i + 1) * w + j + 1] + 1
            } else {
                len[(i + 1) * w + j].max(len[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < ma.len() && j < mb.len() {
        if ma[i] == mb[j] {
            ka[s + i] = true;
            kb[s + j] = true;
            i += 1;
            j += 1;
        } else if len[(i + 1) * w + j] >= len[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (ka, kb)
}

/// Keys (unique within each list) that both lists hold but whose order
/// among the common keys changed: (index in a, index in b), in b's order.
fn moved(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let (sa, sb): (HashSet<&str>, HashSet<&str>) =
        (a.iter().copied().collect(), b.iter().copied().collect());
    let ca: Vec<&str> = a.iter().copied().filter(|k| sb.contains(k)).collect();
    let cb: Vec<&str> = b.iter().copied().filter(|k| sa.contains(k)).collect();
    let (_, kept) = common(&ca, &cb);
    let pos_a: HashMap<&str, usize> = a.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let pos_b: HashMap<&str, usize> = b.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    cb.iter()
        .zip(kept)
        .filter(|(_, kept)| !kept)
        .map(|(k, _)| (pos_a[k], pos_b[k]))
        .collect()
}

/// The lines of two texts that differ, `- ` for A's and `+ ` for B's,
/// separate runs parted by `  ...`.
fn line_diff(a: &str, b: &str) -> Vec<String> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let (ka, kb) = common(&la, &lb);
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut gap = false;
    while i < la.len() || j < lb.len() {
        if i < la.len() && j < lb.len() && ka[i] && kb[j] {
            gap = !out.is_empty();
            i += 1;
            j += 1;
            continue;
        }
        if gap {
            out.push("  ...".to_string());
            gap = false;
        }
        if i < la.len() && !ka[i] {
            out.push(format!("- {}", la[i]));
            i += 1;
        } else if j < lb.len() && !kb[j] {
            out.push(format!("+ {}", lb[j]));
            j += 1;
        } else {
            // One side's common line waits for the other's removals or
            // additions to be listed.
            i += usize::from(i < la.len() && !ka[i]);
            j += usize::from(j < lb.len() && !kb[j]);
        }
    }
    out
}

// ------------------------------------------------------------ text output

impl std::fmt::Display for Diff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |s: &Side| match &s.title {
            Some(t) => format!("{} ({t})", s.file),
            None => s.file.clone(),
        };
        writeln!(f, "A: {}", side(&self.a))?;
        writeln!(f, "B: {}", side(&self.b))?;
        if self.changes.is_empty() {
            return writeln!(f, "no rule differs");
        }
        let n = self.changes.len();
        writeln!(f, "{n} difference{}", if n == 1 { "" } else { "s" })?;
        let mut kind = None;
        for c in &self.changes {
            if kind != Some(c.kind) {
                writeln!(f, "\n{}", c.kind.heading())?;
                kind = Some(c.kind);
            }
            writeln!(f, "  {}", c.line())?;
            for l in &c.lines {
                writeln!(f, "      {l}")?;
            }
        }
        Ok(())
    }
}

impl Change {
    /// The change in one line: a mark (`+` added, `-` removed, `~`
    /// changed, `>` moved), what, the values, and where.
    fn line(&self) -> String {
        let mark = match self.change {
            How::Added => '+',
            How::Removed => '-',
            How::Changed => '~',
            How::Moved => '>',
            How::Renamed => '~',
        };
        let what = match (self.kind, &self.part) {
            (Kind::Unit, Some(p)) => format!("{}.{p}", self.name),
            (k, _) if self.name.is_empty() => k.word().to_string(),
            (k, _) => format!("{} {}", k.word(), shown_name(k, &self.name)),
        };
        let what = match (self.kind, &self.part) {
            (Kind::Unit, _) | (_, None) => what,
            (_, Some(p)) => format!("{what}, {p}"),
        };
        let values = match (self.change, one_line(&self.a), one_line(&self.b)) {
            (How::Changed, _, _) if !self.lines.is_empty() => String::new(),
            (How::Changed | How::Moved | How::Renamed, Some(a), Some(b)) => format!(": {a} -> {b}"),
            (How::Added, _, Some(b)) => format!(": {b}"),
            (How::Removed, Some(a), _) => format!(": {a}"),
            _ => String::new(),
        };
        let at = match (&self.a_at, &self.b_at) {
            (Some(a), Some(b)) if a == b => format!("  [{a}]"),
            (Some(a), Some(b)) => format!("  [{a} -> {b}]"),
            (Some(a), None) => format!("  [A {a}]"),
            (None, Some(b)) => format!("  [B {b}]"),
            (None, None) => String::new(),
        };
        format!("{mark} {what}{values}{at}")
    }
}

/// A value that fits on one line.
fn one_line(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|v| !v.contains('\n'))
}

/// A rule's name as the language writes it: a step's title is a string.
fn shown_name(kind: Kind, name: &str) -> String {
    match kind {
        Kind::Step => format!("\"{name}\""),
        _ => quoted(name),
    }
}

/// A name as the language writes it: bare when it is a word, else quoted.
fn quoted(name: &str) -> String {
    let word = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if word {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

// ------------------------------------------------- the rules, as entries

/// Every rule of a loaded ruleset as an entry. The header (id and title)
/// names the ruleset and is not a rule: [`diff`] shows it apart.
fn entries(loaded: &Loaded) -> Vec<Entry> {
    let Loaded { header: _, items } = loaded;
    let mut out = Out::default();
    // A ruleset plays the last `default_scenario` it is given (a draft's
    // over its base's): only that one is compared.
    let last_scenario = items
        .iter()
        .rposition(|i| matches!(i.kind, ItemKind::DefaultScenario(..)));
    for (k, item) in items.iter().enumerate() {
        if matches!(item.kind, ItemKind::DefaultScenario(..)) && Some(k) != last_scenario {
            continue;
        }
        // `overrides` says how the item was merged, not what it is.
        let Item {
            kind,
            overrides: _,
            span,
        } = item;
        out.item(kind, *span);
    }
    out.finish()
}

/// The entries found so far, and how often each name was seen (two steps
/// of one title are told apart as `#2`).
#[derive(Default)]
struct Out {
    entries: Vec<Entry>,
    seen: HashMap<(Kind, String), usize>,
}

impl Out {
    fn add(&mut self, kind: Kind, name: &str, span: Span, parts: Vec<(String, String, Span)>) {
        self.add_entry(kind, name, span, parts, Vec::new());
    }

    /// An entry with parts, then parts whose order matters.
    fn add_entry(
        &mut self,
        kind: Kind,
        name: &str,
        span: Span,
        parts: Vec<(String, String, Span)>,
        ordered: Vec<(String, String, Span)>,
    ) {
        let n = self.seen.entry((kind, name.to_string())).or_default();
        *n += 1;
        let name = match *n {
            1 => name.to_string(),
            k => format!("{name} #{k}"),
        };
        self.entries.push(Entry {
            kind,
            name,
            span,
            parts: unique(parts, ordered),
        });
    }

    fn finish(self) -> Vec<Entry> {
        self.entries
    }

    /// One merged item's entries.
    fn item(&mut self, kind: &ItemKind, span: Span) {
        let part = |k: &str, t: String| (k.to_string(), t, span);
        match kind {
            ItemKind::Measure(name, title) => self.add(
                Kind::Measure,
                &name.text,
                span,
                vec![part("title", text(title))],
            ),
            ItemKind::Die(Die { name, faces }) => {
                let faces = match faces {
                    DieFaces::Range(lo, hi) => format!("{lo}..{hi}"),
                    DieFaces::Named(fs) => fs
                        .iter()
                        .map(
                            |Face {
                                 name,
                                 count,
                                 count_option,
                                 value,
                             }| match count_option {
                                Some(o) => format!("{} x{} = {value}", name.text, o.text),
                                None => format!("{} x{count} = {value}", name.text),
                            },
                        )
                        .collect::<Vec<_>>()
                        .join(", "),
                };
                self.add(Kind::Die, &name.text, span, vec![part("faces", faces)])
            }
            ItemKind::Effects(Effects {
                name,
                params: ps,
                tallies,
                doc,
                rows,
            }) => {
                let mut parts = vec![
                    part("parameters", params(ps)),
                    part("tallies", names(tallies, ", ")),
                    part("doc", text(doc)),
                ];
                for EffectRow { face, yields } in rows {
                    let y = yields
                        .iter()
                        .map(|(t, n, when)| match when {
                            Some(w) => format!("{} {n} when {}", t.text, expr(w)),
                            None => format!("{} {n}", t.text),
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    parts.push((format!("face {}", face.text), y, face.span));
                }
                self.add(Kind::Effects, &name.text, span, parts)
            }
            ItemKind::Enum(name, variants) => self.add(
                Kind::Enum,
                &name.text,
                span,
                vec![part("variants", names(variants, ", "))],
            ),
            ItemKind::Class(names) => {
                for n in names {
                    self.add(Kind::Class, &n.text, n.span, Vec::new());
                }
            }
            ItemKind::Group(name, members) => self.add(
                Kind::Group,
                &name.text,
                span,
                vec![part("members", names(members, " | "))],
            ),
            ItemKind::Stat(names) => {
                for n in names {
                    self.add(Kind::Stat, &n.text, n.span, Vec::new());
                }
            }
            ItemKind::Sides(sides) => self.add(
                Kind::Sides,
                "",
                span,
                vec![part("sides", names(sides, ", "))],
            ),
            ItemKind::Option(OptionDecl {
                name,
                title,
                on,
                number,
            }) => self.add(
                Kind::Option,
                &name.text,
                span,
                vec![
                    part("title", text(title)),
                    part(
                        "default",
                        match number {
                            Some(n) => n.to_string(),
                            None => if *on { "on" } else { "off" }.into(),
                        },
                    ),
                ],
            ),
            ItemKind::Units(block) => self.units(block),
            ItemKind::Quality(Quality {
                name,
                default,
                lines,
            }) => {
                let mut parts = vec![part("default", yes(*default))];
                for QualityLine {
                    name,
                    change,
                    value_span,
                } in lines
                {
                    let t = match change {
                        // `points N` is a price, not an adjustment.
                        QualityChange::By(n) if name.text == "points" => n.to_string(),
                        QualityChange::By(n) => format!("{n:+}"),
                        QualityChange::To { value, plus } => {
                            format!("= {}{}", if *plus { "+" } else { "" }, stat_value(*value))
                        }
                    };
                    parts.push((name.text.clone(), t, name.span.to(*value_span)));
                }
                self.add(Kind::Quality, &name.text, span, parts)
            }
            ItemKind::State(StateDecl {
                per_side,
                name,
                ty,
                init,
                each_turn,
            }) => self.add(
                if *per_side {
                    Kind::SideState
                } else {
                    Kind::State
                },
                &name.text,
                span,
                vec![
                    part("type", ty.text.clone()),
                    part("initial", expr(init)),
                    part("each turn", yes(*each_turn)),
                ],
            ),
            ItemKind::Fact(FactDecl {
                name,
                params,
                ty,
                default,
                each_turn,
                battle,
            }) => {
                let params = params
                    .iter()
                    .map(|(n, t)| match n {
                        Some(n) => format!("{}: {}", n.text, t.text),
                        None => t.text.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                self.add(
                    Kind::Fact,
                    &name.text,
                    span,
                    vec![
                        part("parameters", params),
                        part("type", ty.text.clone()),
                        part("default", opt_expr(default.as_ref())),
                        part("each turn", yes(*each_turn)),
                        part("in battle", opt_expr(battle.as_ref())),
                    ],
                )
            }
            ItemKind::Define(Define {
                name,
                params: ps,
                ty,
                body,
            }) => self.add(
                Kind::Define,
                &name.text,
                span,
                vec![
                    part("parameters", params(ps)),
                    part("type", ty.text.clone()),
                    part("value", expr(body)),
                ],
            ),
            ItemKind::Table(Table {
                name,
                params: ps,
                ty,
                rows,
            }) => {
                let parts = vec![
                    part("parameters", params(ps)),
                    part("type", ty.text.clone()),
                ];
                // The rows' order is compared: the first that matches
                // gives the value.
                let rows = rows
                    .iter()
                    .map(|Row { guard, value, span }| {
                        (format!("row {}", guard_text(guard)), expr(value), *span)
                    })
                    .collect();
                self.add_entry(Kind::Table, &name.text, span, parts, rows)
            }
            ItemKind::Quantity(Quantity {
                name,
                params: ps,
                ty,
                min,
                max,
                body,
            }) => {
                let bound = |b: &Option<i64>| b.map(|n| n.to_string()).unwrap_or_default();
                self.add(
                    Kind::Quantity,
                    &name.text,
                    span,
                    vec![
                        part("parameters", params(ps)),
                        part("type", ty.text.clone()),
                        part("min", bound(min)),
                        part("max", bound(max)),
                        part("value", expr(body)),
                    ],
                )
            }
            ItemKind::Modifier(Modifier {
                name,
                source,
                quantity,
                op,
                amount,
                when,
            }) => self.add(
                Kind::Modifier,
                &name.text,
                span,
                vec![
                    part("source", text(source)),
                    part("quantity", quantity.text.clone()),
                    part("change", format!("{} {}", assign_op(*op), expr(amount))),
                    part("when", opt_expr(when.as_ref())),
                ],
            ),
            ItemKind::Procedure(Procedure {
                name,
                params: ps,
                outcomes: os,
                body,
            }) => self.add(
                Kind::Procedure,
                &name.text,
                span,
                vec![
                    part("parameters", params(ps)),
                    part("outcomes", outcomes(os)),
                    part("body", block(body)),
                ],
            ),
            ItemKind::Hook(Hook {
                name,
                doc,
                point,
                outcomes: os,
                script,
            }) => {
                let point = match point {
                    HookPoint::Procedure { after, proc } => {
                        format!("{} {}", before_after(*after), proc.text)
                    }
                    HookPoint::Step { after, step } => {
                        format!("{} step \"{}\"", before_after(*after), step.text)
                    }
                    HookPoint::Replace(p) => format!("replace {}", p.text),
                    HookPoint::Fact(f) => format!("fact {}", f.text),
                };
                let script = match script {
                    Script::Inline { text, span: _ } => script_lines(text),
                    Script::File { path, span: _ } => format!("file \"{path}\""),
                };
                self.add(
                    Kind::Hook,
                    &name.text,
                    span,
                    vec![
                        part("doc", text(doc)),
                        part("point", point),
                        part("outcomes", outcomes(os)),
                        part("script", script),
                    ],
                )
            }
            ItemKind::Decision(d) => self.decision(d, span),
            ItemKind::Policy(Policy {
                name,
                doc,
                lines,
                options,
            }) => {
                let mut parts = vec![part("doc", text(doc))];
                for (o, v) in options {
                    parts.push((o.text.clone(), v.text.clone(), o.span.to(v.span)));
                }
                for (d, e) in lines {
                    parts.push((format!("prefer {}", d.text), expr(e), d.span.to(e.span)));
                }
                self.add(Kind::Policy, &name.text, span, parts)
            }
            ItemKind::DefaultScenario(file, at) => self.add(
                Kind::DefaultScenario,
                "",
                *at,
                vec![("file".into(), file.clone(), *at)],
            ),
            ItemKind::Army(Army { name, rules }) => {
                let parts = rules.iter().map(army_rule).collect();
                self.add(Kind::Army, &name.text, span, parts)
            }
            ItemKind::Sequence(seq) => self.sequence(seq),
            ItemKind::Deck(deck) => self.deck(deck, span),
            // The loader follows `extends` and `import` and applies
            // removals, `+=` rows, patched and changed steps and renamed
            // phases: none is left in a merged ruleset, and what they did
            // is in the items above (the sequence's steps).
            ItemKind::Extends(_)
            | ItemKind::Import(_)
            | ItemKind::Remove(_, _)
            | ItemKind::TableExtend(_, _)
            | ItemKind::StepPatch(_)
            | ItemKind::StepChange(_)
            | ItemKind::PhaseRename(_, _) => {}
        }
    }

    /// A units block: an entry per unit type, a part per column.
    fn units(&mut self, block: &UnitsBlock) {
        let UnitsBlock { columns, rows } = block;
        for UnitRow {
            name,
            overrides: _,
            classes,
            values,
            span,
        } in rows
        {
            let mut parts = vec![("classes".to_string(), names(classes, " "), *span)];
            for (col, (v, at)) in columns.iter().zip(values) {
                parts.push((col.text.clone(), stat_value(*v), *at));
            }
            self.add(Kind::Unit, &name.text, *span, parts);
        }
    }

    fn decision(&mut self, d: &Decision, span: Span) {
        let Decision {
            name,
            params: ps,
            doc,
            choice,
        } = d;
        let mut parts = vec![
            ("parameters".to_string(), params(ps), span),
            ("doc".to_string(), text(doc), span),
        ];
        if let Some(Choice {
            kind,
            vars,
            legal,
            clauses,
            span,
        }) = choice
        {
            let kind = crate::compile::decisions::kind_word(*kind);
            let what = format!("{kind} {} where {}", names(vars, ", "), expr(legal));
            parts.push(("choice".into(), what, *span));
            for c in clauses {
                let (key, text, at) = match c {
                    Clause::Expr(k, e) => (k.text.clone(), expr(e), k.span.to(e.span)),
                    Clause::Bound(k, v, e) => (
                        k.text.clone(),
                        format!("{}: {}", v.text, expr(e)),
                        k.span.to(e.span),
                    ),
                    Clause::Check(p, args, unless, at) => (
                        "check".into(),
                        format!(
                            "{}({}){}",
                            p.text,
                            exprs(args),
                            unless
                                .as_ref()
                                .map(|u| format!(" unless {}", expr(u)))
                                .unwrap_or_default()
                        ),
                        *at,
                    ),
                    Clause::Then(p, args, at) => {
                        ("then".into(), format!("{}({})", p.text, exprs(args)), *at)
                    }
                    Clause::Pay(pay) => (
                        "pay".into(),
                        format!(
                            "{} {} from {}{}",
                            pay.deck.text,
                            expr(&pay.cost),
                            expr(&pay.from),
                            pay.to
                                .as_ref()
                                .map(|t| format!(" to {}", expr(t)))
                                .unwrap_or_default()
                        ),
                        pay.span,
                    ),
                };
                parts.push((key, text, at));
            }
        }
        self.add(Kind::Decision, &name.text, span, parts);
    }

    /// The sequence: an entry per step (where it is and what it does), in
    /// order, and one for the condition that ends the game.
    fn sequence(&mut self, seq: &Sequence) {
        let Sequence {
            setup,
            turn,
            until,
            span,
        } = seq;
        for (section, list) in [("setup", setup), ("turn", turn)] {
            for ps in list {
                match ps {
                    PhaseOrStep::Phase(phase, steps) => {
                        let place = format!("{section}, phase \"{}\"", phase.text);
                        for s in steps {
                            self.step(&place, s);
                        }
                    }
                    PhaseOrStep::Step(s) => self.step(section, s),
                }
            }
        }
        self.add(
            Kind::Sequence,
            "",
            *span,
            vec![("until".into(), expr(until), until.span)],
        );
    }

    fn step(&mut self, place: &str, s: &Step) {
        // A patched step's anchor says where it was put; where it is (its
        // phase, and its order among the steps) is compared instead.
        let Step {
            name,
            anchor: _,
            actions: acts,
            span,
        } = s;
        let parts = vec![
            ("in".to_string(), place.to_string(), *span),
            ("actions".to_string(), actions(acts, ""), *span),
        ];
        self.add(Kind::Step, &name.text, *span, parts);
    }

    fn deck(&mut self, deck: &Deck, span: Span) {
        let Deck {
            name,
            params: ps,
            doc,
            cards,
            after_each,
        } = deck;
        let mut parts = vec![
            ("parameters".to_string(), params(ps), span),
            ("doc".to_string(), text(doc), span),
        ];
        for Card {
            name,
            copies,
            value,
            each: e,
            when,
            actions: acts,
            span,
        } in cards
        {
            let mut head = Vec::new();
            if let Some((n, _)) = copies {
                head.push(format!("copies {n}"));
            }
            if let Some((n, _)) = value {
                head.push(format!("value {n}"));
            }
            if let Some(e) = e {
                head.push(each(e));
            }
            if let Some(w) = when {
                head.push(format!("when {}", expr(w)));
            }
            let text = format!("{}\n{}", head.join(" "), actions(acts, ""));
            parts.push((format!("card {}", quoted(&name.text)), text, *span));
        }
        for AfterEach {
            actions: acts,
            span,
        } in after_each
        {
            parts.push(("after each card".into(), actions(acts, ""), *span));
        }
        self.add(Kind::Deck, &name.text, span, parts);
    }
}

/// Parts with keys made unique (`#2` after the first), those whose order
/// matters last.
fn unique(parts: Vec<(String, String, Span)>, ordered: Vec<(String, String, Span)>) -> Vec<Part> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let flagged = parts
        .into_iter()
        .map(|p| (p, false))
        .chain(ordered.into_iter().map(|p| (p, true)));
    flagged
        .map(|((key, text, span), ordered)| {
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            let key = match *n {
                1 => key,
                k => format!("{key} #{k}"),
            };
            Part {
                key,
                text,
                span,
                ordered,
            }
        })
        .collect()
}

/// A string of the ruleset (a title, a doc), quoted; none is empty.
fn text(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!("\"{s}\"")).unwrap_or_default()
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn before_after(after: bool) -> &'static str {
    if after {
        "after"
    } else {
        "before"
    }
}

fn names(ns: &[Name], sep: &str) -> String {
    ns.iter()
        .map(|n| quoted(&n.text))
        .collect::<Vec<_>>()
        .join(sep)
}

fn stat_value(v: StatValue) -> String {
    match v {
        StatValue::None => "none".into(),
        StatValue::Unlimited => "unlimited".into(),
        StatValue::Int(n) => n.to_string(),
    }
}

fn assign_op(op: AssignOp) -> &'static str {
    match op {
        AssignOp::Set => "=",
        AssignOp::Add => "+=",
        AssignOp::Sub => "-=",
    }
}

fn params(ps: &[Param]) -> String {
    ps.iter()
        .map(|Param { name, ty, range }| match range {
            Some((lo, hi)) => format!("{}: {} {lo}..{hi}", name.text, ty.text),
            None => format!("{}: {}", name.text, ty.text),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn outcomes(os: &[OutcomeDecl]) -> String {
    os.iter()
        .map(|OutcomeDecl { name, ty }| format!("{}: {}", name.text, names(ty, " | ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A hook's script, each line trimmed and blank lines left out (the
/// layout of a script is not a rule).
fn script_lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn army_rule(r: &ArmyRule) -> (String, String, Span) {
    let ArmyRule {
        per_command,
        kind,
        span,
    } = r;
    let limit = |l: &Limit| match l {
        Limit::AtMost => "at most",
        Limit::AtLeast => "at least",
        Limit::Exactly => "exactly",
    };
    let (key, text) = match kind {
        ArmyRuleKind::Units(lo, hi) => ("units".to_string(), format!("{lo}..{hi}")),
        ArmyRuleKind::Points(lo, hi) => ("points".to_string(), format!("{lo}..{hi}")),
        ArmyRuleKind::Limit(what, l, n) => (
            format!("limit {}", quoted(&what.text)),
            format!("{} {n}", limit(l)),
        ),
        ArmyRuleKind::Price(d) => ("price".to_string(), d.text.clone()),
        ArmyRuleKind::Require(d, why) => (format!("require {}", d.text), format!("\"{why}\"")),
        ArmyRuleKind::Same { units } => (
            "same for every side".to_string(),
            if *units { "units" } else { "points" }.to_string(),
        ),
        ArmyRuleKind::Always(types, qualities) => (
            format!("{} always", names(types, " | ")),
            names(qualities, " | "),
        ),
    };
    let key = if *per_command {
        format!("per command {key}")
    } else {
        key
    };
    (key, text, *span)
}

// ------------------------------------------ canonical text of the syntax

/// A block of statements, one a line, nested blocks indented.
fn block(body: &[Stmt]) -> String {
    let mut out = String::new();
    stmts(body, 0, &mut out);
    out.trim_end().to_string()
}

fn stmts(body: &[Stmt], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for s in body {
        match s {
            Stmt::Let(n, e) => {
                let _ = writeln!(out, "{pad}let {} = {}", n.text, expr(e));
            }
            Stmt::Outcome(n, e) => {
                let _ = writeln!(out, "{pad}outcome {} = {}", n.text, expr(e));
            }
            Stmt::Require(e, why, _) => {
                let _ = writeln!(out, "{pad}require {} else \"{why}\"", expr(e));
            }
            Stmt::If(c, then, els) => {
                let _ = writeln!(out, "{pad}if {} {{", expr(c));
                stmts(then, depth + 1, out);
                if !els.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    stmts(els, depth + 1, out);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Assign(l, op, r, _) => {
                let _ = writeln!(out, "{pad}{} {} {}", expr(l), assign_op(*op), expr(r));
            }
            Stmt::Call(n, args, _) => {
                let _ = writeln!(out, "{pad}call {}({})", n.text, exprs(args));
            }
            Stmt::For(v, coll, cond, body) => {
                let coll = coll
                    .as_ref()
                    .map(|c| format!(" in {}", c.text))
                    .unwrap_or_default();
                let _ = writeln!(out, "{pad}for {}{coll}: {} {{", v.text, expr(cond));
                stmts(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Note(f, args, value, _) => {
                let value = value
                    .as_ref()
                    .map(|v| format!(" = {}", expr(v)))
                    .unwrap_or_default();
                let _ = writeln!(out, "{pad}note {}({}){value}", f.text, exprs(args));
            }
            Stmt::ForFile(ff) => {
                let beside = ff
                    .beside
                    .as_ref()
                    .map(|(l, r)| format!(", {}, {}", l.text, r.text))
                    .unwrap_or_default();
                let start = ff
                    .start
                    .as_ref()
                    .map(|s| format!(" from {}", expr(s)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{pad}for file {}{beside} of {} where {}{start} {{",
                    ff.var.text,
                    expr(&ff.formation),
                    expr(&ff.cond)
                );
                stmts(&ff.body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Mark(e, _) => {
                let _ = writeln!(out, "{pad}mark {}", expr(e));
            }
        }
    }
}

/// A step's (or a card's) actions, one a line.
fn actions(acts: &[Action], pad: &str) -> String {
    let mut out = Vec::new();
    for a in acts {
        let line = match a {
            Action::Do {
                target,
                args,
                each: e,
                span: _,
            } => format!(
                "do {}({}){}",
                target.text,
                exprs(args),
                e.as_ref()
                    .map(|e| format!(" {}", each(e)))
                    .unwrap_or_default()
            ),
            Action::Draw {
                deck,
                args,
                until,
                each: e,
                span: _,
            } => format!(
                "draw {}{}{}{}",
                deck.text,
                args.as_ref()
                    .map(|a| format!("({})", exprs(a)))
                    .unwrap_or_default(),
                until
                    .map(|(n, _)| format!(" until {n} left"))
                    .unwrap_or_default(),
                e.as_ref()
                    .map(|e| format!(" {}", each(e)))
                    .unwrap_or_default()
            ),
            Action::Shuffle { deck, span: _ } => format!("shuffle {}", deck.text),
            Action::Deal {
                deck,
                holder,
                size,
                each: e,
                span: _,
            } => format!(
                "deal {} to {} up to {}{}",
                deck.text,
                expr(holder),
                expr(size),
                e.as_ref()
                    .map(|e| format!(" {}", each(e)))
                    .unwrap_or_default()
            ),
            Action::Discard {
                deck,
                holder,
                size,
                each: e,
                span: _,
            } => format!(
                "discard {} from {} down to {}{}",
                deck.text,
                expr(holder),
                expr(size),
                e.as_ref()
                    .map(|e| format!(" {}", each(e)))
                    .unwrap_or_default()
            ),
            Action::Alternate {
                target,
                args,
                each: e,
                from,
                span: _,
            } => format!(
                "alternate {}({}) {}{}",
                target.text,
                exprs(args),
                each(e),
                from.as_ref()
                    .map(|f| format!(" from {}", expr(f)))
                    .unwrap_or_default()
            ),
            Action::Goto {
                when,
                target,
                span: _,
            } => format!(
                "{}goto \"{}\"",
                when.as_ref()
                    .map(|w| format!("if {} ", expr(w)))
                    .unwrap_or_default(),
                target.text
            ),
            Action::End { when, span: _ } => format!(
                "end game{}",
                when.as_ref()
                    .map(|w| format!(" when {}", expr(w)))
                    .unwrap_or_default()
            ),
        };
        out.push(format!("{pad}{line}"));
    }
    out.join("\n")
}

fn each(e: &Each) -> String {
    let Each { var, coll, cond } = e;
    format!(
        "for each {} in {}{}",
        var.text,
        coll.text,
        cond.as_ref()
            .map(|c| format!(" where {}", expr(c)))
            .unwrap_or_default()
    )
}

fn guard_text(g: &Guard) -> String {
    match g {
        Guard::Otherwise => "otherwise".into(),
        Guard::When(e) => format!("when {}", expr(e)),
        Guard::Keys(keys) => {
            let keys: Vec<String> = keys
                .iter()
                .map(|k| match k {
                    KeyPattern::Any(_) => "_".into(),
                    KeyPattern::Int(n, _) => n.to_string(),
                    KeyPattern::Range(lo, hi, _) => format!(
                        "{}..{}",
                        lo.map(|n| n.to_string()).unwrap_or_default(),
                        hi.map(|n| n.to_string()).unwrap_or_default()
                    ),
                    KeyPattern::Bool(b, _) => b.to_string(),
                    KeyPattern::Name(n) => quoted(&n.text),
                })
                .collect();
            format!("({})", keys.join(", "))
        }
    }
}

fn opt_expr(e: Option<&Expr>) -> String {
    e.map(expr).unwrap_or_default()
}

fn exprs(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(", ")
}

/// An expression as text, with the parentheses its precedence needs.
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    crate::front::nesting::guarded(|| write_expr(e, 0, &mut out));
    out
}

/// How tightly an expression binds (higher binds tighter); `if` and the
/// quantifiers reach as far right as they can, so they bind least.
fn prec(e: &ExprKind) -> u8 {
    match e {
        ExprKind::If(..) | ExprKind::Quant(..) => 0,
        ExprKind::Binary(BinOp::Or, ..) => 1,
        ExprKind::Binary(BinOp::And, ..) => 2,
        ExprKind::Not(_) => 3,
        ExprKind::Binary(
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
            ..,
        )
        | ExprKind::Is(..) => 4,
        ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => 5,
        ExprKind::Binary(BinOp::Mul | BinOp::Div, ..) => 6,
        ExprKind::Dice { .. } => 7,
        ExprKind::Neg(_) => 8,
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Unlimited
        | ExprKind::Name(_)
        | ExprKind::Field(..)
        | ExprKind::Original(_)
        | ExprKind::Call(..)
        | ExprKind::Odds(_)
        // `roll POOL as EFFECTS(ARGS)` ends where its arguments do.
        | ExprKind::Roll { .. } => 9,
    }
}

fn write_expr(e: &Expr, min: u8, out: &mut String) {
    let p = prec(&e.kind);
    let paren = p < min;
    if paren {
        out.push('(');
    }
    let bin = |op: BinOp| match op {
        BinOp::Or => "or",
        BinOp::And => "and",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
    };
    let rec = |e: &Expr, min: u8, out: &mut String| {
        crate::front::nesting::guarded(|| write_expr(e, min, out))
    };
    match &e.kind {
        ExprKind::Int(n) => {
            let _ = write!(out, "{n}");
        }
        ExprKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::None => out.push_str("none"),
        ExprKind::Unlimited => out.push_str("unlimited"),
        ExprKind::Name(n) => out.push_str(&quoted(&n.text)),
        ExprKind::Field(x, f) => {
            rec(x, 9, out);
            let _ = write!(out, ".{}", f.text);
        }
        ExprKind::Original(x) => {
            out.push_str("original(");
            rec(x, 0, out);
            out.push(')');
        }
        ExprKind::Call(f, args) => {
            let _ = write!(out, "{}(", f.text);
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                rec(a, 0, out);
            }
            out.push(')');
        }
        ExprKind::Neg(x) => {
            out.push('-');
            rec(x, 9, out);
        }
        ExprKind::Not(x) => {
            out.push_str("not ");
            rec(x, 3, out);
        }
        ExprKind::Binary(op, a, b) => {
            // Left-associative: the right operand binds one tighter; a
            // comparison takes no comparison on either side.
            let right = if p == 4 { 5 } else { p + 1 };
            rec(a, if p == 4 { 5 } else { p }, out);
            let _ = write!(out, " {} ", bin(*op));
            rec(b, right, out);
        }
        ExprKind::Is(x, ns, negated) => {
            rec(x, 5, out);
            let _ = write!(
                out,
                " is {}{}",
                if *negated { "not " } else { "" },
                names(ns, " | ")
            );
        }
        ExprKind::If(c, a, b) => {
            out.push_str("if ");
            rec(c, 0, out);
            out.push_str(" then ");
            rec(a, 0, out);
            out.push_str(" else ");
            rec(b, 0, out);
        }
        ExprKind::Odds(o) => {
            let _ = write!(
                out,
                "{}({}(",
                if o.expect { "expect" } else { "chance" },
                o.procedure.text
            );
            for (i, a) in o.args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                rec(a, 0, out);
            }
            out.push(')');
            if let Some(g) = &o.given {
                out.push_str(" given ");
                rec(g, 0, out);
            }
            out.push_str(", ");
            rec(&o.of, 0, out);
            out.push(')');
        }
        ExprKind::Roll {
            pool,
            effects,
            args,
        } => {
            out.push_str("roll ");
            rec(pool, 5, out);
            let _ = write!(out, " as {}", effects.text);
            if !args.is_empty() {
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    rec(a, 0, out);
                }
                out.push(')');
            }
        }
        ExprKind::Quant(q, v, coll, cond, of) => {
            let q = match q {
                Quant::Any => "any",
                Quant::All => "all",
                Quant::Count => "count",
                Quant::First => "first",
                Quant::Sum => "sum",
                Quant::Min => "min",
                Quant::Max => "max",
            };
            let _ = write!(out, "{q} {}", v.text);
            if let Some(c) = coll {
                let _ = write!(out, " in {}", c.text);
            }
            out.push_str(": ");
            rec(cond, 1, out);
            if let Some(of) = of {
                out.push_str(" of ");
                rec(of, 1, out);
            }
        }
        ExprKind::Dice {
            count,
            die,
            scoring,
            counting,
            reroll,
        } => {
            rec(count, 8, out);
            let _ = write!(out, " {}", die.text);
            if let Some(t) = scoring {
                out.push_str(" scoring ");
                rec(t, 8, out);
                out.push('+');
            }
            if !counting.is_empty() {
                let _ = write!(out, " counting {}", names(counting, ", "));
            }
            if let Some(r) = reroll {
                let r = match r {
                    Reroll::Misses => "misses",
                    Reroll::Ones => "ones",
                    Reroll::Hits => "hits",
                    Reroll::Sixes => "sixes",
                };
                let _ = write!(out, " rerolling {r}");
            }
        }
    }
    if paren {
        out.push(')');
    }
}
