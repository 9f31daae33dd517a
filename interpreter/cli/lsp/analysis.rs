//! What the language server knows of one ruleset document: the diagnostics
//! `muster check` gives it (loading with its `extends` and `import`s, then
//! compiling), the names its merged items declare (in the document, the
//! files it extends and the standard library), and what a hover on each
//! shows. Built from the editor's text, never from the file on disk.

use crate::compile::ir::Ruleset;
use crate::front::diagnostic::Diag;
use crate::front::source::Sources;
use crate::front::syntax::doc_comment;
use crate::front::syntax::*;
use lsp_types::{CompletionItemKind, SymbolKind};
use std::path::{Path, PathBuf};

/// What a name declares, for the words a hover shows and the icons an
/// editor draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    UnitType,
    Table,
    Fact,
    Define,
    Procedure,
    Enum,
    EnumValue,
    Class,
    Group,
    Stat,
    Side,
    Option,
    Quality,
    State,
    Quantity,
    Modifier,
    Decision,
    Policy,
    Hook,
    Die,
    Effects,
    Measure,
    Army,
    Deck,
    Phase,
    Step,
}

impl Kind {
    /// The kind in words, as a hover names it.
    pub fn word(self) -> &'static str {
        match self {
            Kind::UnitType => "unit type",
            Kind::Table => "table",
            Kind::Fact => "fact",
            Kind::Define => "define",
            Kind::Procedure => "procedure",
            Kind::Enum => "enum",
            Kind::EnumValue => "enum value",
            Kind::Class => "class",
            Kind::Group => "group",
            Kind::Stat => "stat",
            Kind::Side => "side",
            Kind::Option => "option",
            Kind::Quality => "quality",
            Kind::State => "state",
            Kind::Quantity => "quantity",
            Kind::Modifier => "modifier",
            Kind::Decision => "decision",
            Kind::Policy => "policy",
            Kind::Hook => "hook",
            Kind::Die => "die",
            Kind::Effects => "effects",
            Kind::Measure => "measure",
            Kind::Army => "army",
            Kind::Deck => "deck",
            Kind::Phase => "phase",
            Kind::Step => "step",
        }
    }

    pub fn symbol(self) -> SymbolKind {
        match self {
            Kind::UnitType | Kind::Quality | Kind::Army => SymbolKind::CLASS,
            Kind::Table | Kind::Define | Kind::Quantity => SymbolKind::FUNCTION,
            Kind::Procedure | Kind::Decision | Kind::Hook | Kind::Policy => SymbolKind::METHOD,
            Kind::Fact | Kind::Stat | Kind::State => SymbolKind::PROPERTY,
            Kind::Enum | Kind::Class | Kind::Group | Kind::Side => SymbolKind::ENUM,
            Kind::EnumValue => SymbolKind::ENUM_MEMBER,
            Kind::Option | Kind::Measure | Kind::Die => SymbolKind::CONSTANT,
            Kind::Modifier | Kind::Effects => SymbolKind::OPERATOR,
            Kind::Deck => SymbolKind::ARRAY,
            Kind::Phase | Kind::Step => SymbolKind::EVENT,
        }
    }

    pub fn completion(self) -> CompletionItemKind {
        match self.symbol() {
            SymbolKind::CLASS => CompletionItemKind::CLASS,
            SymbolKind::FUNCTION => CompletionItemKind::FUNCTION,
            SymbolKind::METHOD => CompletionItemKind::METHOD,
            SymbolKind::PROPERTY => CompletionItemKind::PROPERTY,
            SymbolKind::ENUM => CompletionItemKind::ENUM,
            SymbolKind::ENUM_MEMBER => CompletionItemKind::ENUM_MEMBER,
            SymbolKind::CONSTANT => CompletionItemKind::CONSTANT,
            SymbolKind::OPERATOR => CompletionItemKind::OPERATOR,
            _ => CompletionItemKind::VALUE,
        }
    }
}

/// One declared name.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: String,
    pub kind: Kind,
    /// Where the name is written.
    pub span: Span,
    /// The whole declaration (its doc comment is the comment above it).
    pub item: Span,
    /// The declaration it belongs to (an enum value's enum, a unit row's
    /// `units` block, a step's phase), by index in the list.
    pub parent: Option<usize>,
    /// The item of the merged list it comes from (a table's rows are read
    /// from there).
    pub index: usize,
}

/// The names `items` declare, in order.
pub fn defs(items: &[Item]) -> Vec<Def> {
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let add = |out: &mut Vec<Def>, n: &Name, kind: Kind, parent: Option<usize>| {
            out.push(Def {
                name: n.text.clone(),
                kind,
                span: n.span,
                item: item.span,
                parent,
                index,
            });
            out.len() - 1
        };
        match &item.kind {
            ItemKind::Measure(n, _) => {
                add(&mut out, n, Kind::Measure, None);
            }
            ItemKind::Die(d) => {
                add(&mut out, &d.name, Kind::Die, None);
            }
            ItemKind::Effects(e) => {
                add(&mut out, &e.name, Kind::Effects, None);
            }
            ItemKind::Enum(n, values) => {
                let p = add(&mut out, n, Kind::Enum, None);
                for v in values {
                    add(&mut out, v, Kind::EnumValue, Some(p));
                }
            }
            ItemKind::Class(ns) => ns.iter().for_each(|n| {
                add(&mut out, n, Kind::Class, None);
            }),
            ItemKind::Group(n, _) => {
                add(&mut out, n, Kind::Group, None);
            }
            ItemKind::Stat(ns) => ns.iter().for_each(|n| {
                add(&mut out, n, Kind::Stat, None);
            }),
            ItemKind::Sides(ns) => ns.iter().for_each(|n| {
                add(&mut out, n, Kind::Side, None);
            }),
            ItemKind::Option(o) => {
                add(&mut out, &o.name, Kind::Option, None);
            }
            ItemKind::Units(u) => u.rows.iter().for_each(|r| {
                add(&mut out, &r.name, Kind::UnitType, None);
            }),
            ItemKind::Quality(q) => {
                add(&mut out, &q.name, Kind::Quality, None);
            }
            ItemKind::State(s) => {
                add(&mut out, &s.name, Kind::State, None);
            }
            ItemKind::Fact(f) => {
                add(&mut out, &f.name, Kind::Fact, None);
            }
            ItemKind::Define(d) => {
                add(&mut out, &d.name, Kind::Define, None);
            }
            ItemKind::Table(t) => {
                add(&mut out, &t.name, Kind::Table, None);
            }
            ItemKind::Quantity(q) => {
                add(&mut out, &q.name, Kind::Quantity, None);
            }
            ItemKind::Modifier(m) => {
                add(&mut out, &m.name, Kind::Modifier, None);
            }
            ItemKind::Procedure(p) => {
                add(&mut out, &p.name, Kind::Procedure, None);
            }
            ItemKind::Decision(d) => {
                add(&mut out, &d.name, Kind::Decision, None);
            }
            ItemKind::Policy(p) => {
                add(&mut out, &p.name, Kind::Policy, None);
            }
            ItemKind::Hook(h) => {
                add(&mut out, &h.name, Kind::Hook, None);
            }
            ItemKind::Army(a) => {
                add(&mut out, &a.name, Kind::Army, None);
            }
            ItemKind::Deck(d) => {
                add(&mut out, &d.name, Kind::Deck, None);
            }
            ItemKind::Sequence(s) => {
                for ps in s.setup.iter().chain(&s.turn) {
                    match ps {
                        PhaseOrStep::Phase(n, steps) => {
                            let p = add(&mut out, n, Kind::Phase, None);
                            for st in steps {
                                add(&mut out, &st.name, Kind::Step, Some(p));
                            }
                        }
                        PhaseOrStep::Step(st) => {
                            add(&mut out, &st.name, Kind::Step, None);
                        }
                    }
                }
            }
            ItemKind::StepPatch(st) => {
                add(&mut out, &st.name, Kind::Step, None);
            }
            _ => {}
        }
    }
    out
}

/// A ruleset document, analysed.
pub struct Analysis {
    pub sources: Sources,
    /// The merged items (empty when loading failed).
    pub items: Vec<Item>,
    pub defs: Vec<Def>,
    /// The compiled ruleset, when it compiled.
    pub ruleset: Option<Ruleset>,
    /// What `muster check` reports.
    pub diags: Vec<Diag>,
    /// The document's own text among the sources (what its spans name).
    pub doc: Option<FileId>,
}

/// Load and compile `text` as the ruleset file at `path` (what it extends
/// is read relative to it; unsaved texts of other files through
/// [`crate::front::source::set_overlay`]).
pub fn analyse(path: &Path, text: &str) -> Analysis {
    let mut sources = Sources::default();
    let name = path.display().to_string();
    let loaded = crate::front::load::load_text(&name, text, path.parent(), &mut sources);
    let (items, ruleset, diags) = match loaded {
        Err(d) => (Vec::new(), None, d),
        Ok(l) => match crate::compile::compiler::compile(&l) {
            Ok(rs) => {
                let warnings = rs.warnings.clone();
                (l.items, Some(rs), warnings)
            }
            Err(d) => (l.items, None, d),
        },
    };
    let diags = crate::capped(diags, &sources);
    let doc = (0..sources.len() as u32)
        .map(FileId)
        .find(|f| sources.get(*f).name == name);
    Analysis {
        doc,
        defs: defs(&items),
        sources,
        items,
        ruleset,
        diags,
    }
}

/// Where the standard library's files are on disk, for go-to-definition
/// (the binary embeds them): `$MUSTER_STDLIB`, else the stdlib/ folder of
/// the source tree the binary was built from.
pub fn stdlib_dir() -> PathBuf {
    std::env::var_os("MUSTER_STDLIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib"))
}

/// The file a loaded source was read from: its name, or for the embedded
/// standard library (`stdlib/core.muster`) the file in [`stdlib_dir`].
pub fn source_path(sources: &Sources, file: FileId) -> PathBuf {
    let s = sources.get(file);
    match (s.name.strip_prefix("stdlib/"), &s.folder) {
        (Some(rest), None) => stdlib_dir().join(rest),
        _ => {
            let p = PathBuf::from(&s.name);
            p.canonicalize().unwrap_or(p)
        }
    }
}

impl Analysis {
    /// The declaration of `name`: as written, else (unit types and
    /// qualities are matched so) ignoring case.
    pub fn find(&self, name: &str) -> Option<&Def> {
        self.defs
            .iter()
            .find(|d| d.name == name)
            .or_else(|| self.defs.iter().find(|d| d.name.eq_ignore_ascii_case(name)))
    }

    /// What a hover on `d` shows, in Markdown: its declaration line, the
    /// comment above it (which cites the book's section), and for a unit
    /// type its row as compiled, a table its rows.
    pub fn hover(&self, d: &Def) -> String {
        let src = self.sources.get(d.span.file);
        let mut out = format!("```muster\n{}\n```\n", declaration(&src.text, d));
        let doc = doc_comment(&src.text, d.item.start as usize);
        if !doc.is_empty() {
            out.push_str(&format!("\n{doc}\n"));
        }
        match d.kind {
            Kind::UnitType => {
                if let Some(row) = self.unit_row(&d.name) {
                    out.push_str(&format!("\n{row}"));
                }
            }
            Kind::Table => out.push_str(&self.table_rows(d)),
            _ => {}
        }
        let line = src.text[..(d.span.start as usize).min(src.text.len())]
            .matches('\n')
            .count()
            + 1;
        out.push_str(&format!(
            "\n*{}* `{}`, {} line {line}\n",
            d.kind.word(),
            d.name,
            src.name
        ));
        out
    }

    /// A unit type as the compiled ruleset has it (after `extends`,
    /// overrides and patches): classes, each stat, and what each quality
    /// makes of it.
    fn unit_row(&self, name: &str) -> Option<String> {
        let rs = self.ruleset.as_ref()?;
        let u = &rs.unit_types[rs.unit_type(name)? as usize];
        let classes: Vec<&str> = rs
            .classes
            .iter()
            .zip(&u.classes)
            .filter(|(_, on)| **on)
            .map(|(c, _)| c.as_str())
            .collect();
        let mut out = format!("**{}** ({})\n\n", u.name, classes.join(", "));
        out.push_str(&format!("| {} |\n", rs.stats.join(" | ")));
        out.push_str(&format!("|{}\n", " --- |".repeat(rs.stats.len())));
        let shown: Vec<String> = u.stats.iter().map(|v| stat_text(*v)).collect();
        out.push_str(&format!("| {} |\n", shown.join(" | ")));
        for q in &rs.qualities {
            let mut parts = Vec::new();
            for (s, by) in &q.adjust {
                let base = u.stats.get(*s as usize).copied();
                let now = match base {
                    Some(crate::base::value::Value::Int(v))
                        if v < crate::base::value::UNLIMITED =>
                    {
                        (v + by).to_string()
                    }
                    Some(v) => stat_text(v),
                    None => "?".into(),
                };
                parts.push(format!("{} {now} ({by:+})", rs.stats[*s as usize]));
            }
            for (s, v) in &q.set {
                parts.push(format!("{} {}", rs.stats[*s as usize], stat_text(*v)));
            }
            if let Some(p) = q.points {
                parts.push(format!("{p} points"));
            }
            if !parts.is_empty() {
                out.push_str(&format!("\n- {}: {}", q.name, parts.join(", ")));
            }
        }
        out.push('\n');
        Some(out)
    }

    /// A table's rows, as written (rows added with `+=` first, as they
    /// are tried), at most [`MAX_ROWS_SHOWN`].
    fn table_rows(&self, d: &Def) -> String {
        let Some(Item {
            kind: ItemKind::Table(t),
            ..
        }) = self.items.get(d.index)
        else {
            return String::new();
        };
        let mut out = String::from("\n```muster\n");
        for r in t.rows.iter().take(MAX_ROWS_SHOWN) {
            out.push_str(self.sources.slice(r.span).trim());
            out.push('\n');
        }
        if t.rows.len() > MAX_ROWS_SHOWN {
            out.push_str(&format!(
                "// and {} more rows\n",
                t.rows.len() - MAX_ROWS_SHOWN
            ));
        }
        out.push_str("```\n");
        out
    }
}

/// The most rows of a table a hover lists.
const MAX_ROWS_SHOWN: usize = 40;

/// A stat's value as the `units` table writes it.
fn stat_text(v: crate::base::value::Value) -> String {
    match v {
        crate::base::value::Value::Int(n) if n >= crate::base::value::UNLIMITED => {
            "unlimited".into()
        }
        v => v.to_string(),
    }
}

/// The line that declares `d` (for a unit row or an enum value, the line
/// the name is on), at most 200 characters.
fn declaration(text: &str, d: &Def) -> String {
    let at = if matches!(d.kind, Kind::UnitType | Kind::EnumValue | Kind::Step) {
        d.span.start
    } else {
        d.item.start
    } as usize;
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = text[start..end].trim();
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{} ...", &line[..i]),
        None => line.to_string(),
    }
}
