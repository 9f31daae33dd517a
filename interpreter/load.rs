//! Loading: read a ruleset file, follow its `extends` and `import`s, and
//! merge everything into one list of items (overrides replace, removals
//! delete, `+=` rows are added, patched steps are inserted). The compiler
//! then sees one flat ruleset.

use crate::diagnostic::Diag;
use crate::parse::parse_file;
use crate::source::Sources;
use crate::syntax::*;
use std::path::{Path, PathBuf};

/// The standard library, embedded so that the binary runs from anywhere.
const STDLIB: &[(&str, &str)] = &[
    ("core", include_str!("../stdlib/core.muster")),
    ("battle", include_str!("../stdlib/battle.muster")),
];

/// A ruleset's merged items, ready to compile.
#[derive(Debug, Default)]
pub struct Loaded {
    pub header: Option<Header>,
    pub items: Vec<Item>,
}

/// Load a ruleset from a path (following `extends` relative to it).
pub fn load_path(path: &Path, sources: &mut Sources) -> Result<Loaded, Vec<Diag>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![
            Diag::new("muster::io", format!("cannot read {}: {e}", path.display()))
                .help("check the path; rulesets live in rules/"),
        ]
    })?;
    load_text(&path.display().to_string(), &text, path.parent(), sources)
}

/// Load a ruleset from text; `dir` is where `extends` paths are looked up.
pub fn load_text(
    name: &str,
    text: &str,
    dir: Option<&Path>,
    sources: &mut Sources,
) -> Result<Loaded, Vec<Diag>> {
    let mut loader = Loader {
        sources,
        stack: Vec::new(),
        imported: Vec::new(),
        diags: Vec::new(),
    };
    let mut out = Loaded::default();
    loader.load(name, text, dir.map(Path::to_path_buf), &mut out, None);
    if loader.diags.is_empty() {
        Ok(out)
    } else {
        Err(loader.diags)
    }
}

struct Loader<'a> {
    sources: &'a mut Sources,
    stack: Vec<String>,
    imported: Vec<String>,
    diags: Vec<Diag>,
}

/// The name under which an item can be overridden or removed.
fn key(kind: &ItemKind) -> Option<(&'static str, String)> {
    Some(match kind {
        ItemKind::Die(d) => ("die", d.name.text.clone()),
        ItemKind::Enum(n, _) => ("enum", n.text.clone()),
        ItemKind::Group(n, _) => ("group", n.text.clone()),
        ItemKind::Option(o) => ("option", o.name.text.clone()),
        ItemKind::Quality(q) => ("quality", q.name.text.clone()),
        ItemKind::State(s) => (
            if s.per_side { "side_state" } else { "state" },
            s.name.text.clone(),
        ),
        ItemKind::Fact(f) => ("fact", f.name.text.clone()),
        ItemKind::Define(d) => ("define", d.name.text.clone()),
        ItemKind::Table(t) => ("table", t.name.text.clone()),
        ItemKind::Quantity(q) => ("quantity", q.name.text.clone()),
        ItemKind::Modifier(m) => ("modifier", m.name.text.clone()),
        ItemKind::Procedure(p) => ("procedure", p.name.text.clone()),
        ItemKind::Decision(d) => ("decision", d.name.text.clone()),
        ItemKind::Policy(p) => ("policy", p.name.text.clone()),
        ItemKind::Army(a) => ("army", a.name.text.clone()),
        ItemKind::Sequence(_) => ("sequence", String::new()),
        ItemKind::Measure(n, _) => ("measure", n.text.clone()),
        ItemKind::Hook(h) => ("hook", h.name.text.clone()),
        ItemKind::Deck(d) => ("deck", d.name.text.clone()),
        _ => return None,
    })
}

impl Loader<'_> {
    fn load(
        &mut self,
        name: &str,
        text: &str,
        dir: Option<PathBuf>,
        out: &mut Loaded,
        from: Option<Span>,
    ) {
        if self.stack.iter().any(|s| s == name) {
            let mut d = Diag::new(
                "muster::extends_cycle",
                format!(
                    "`{name}` extends itself through {}",
                    self.stack.join(" -> ")
                ),
            )
            .help("a ruleset can extend another, but the chain must not loop back");
            if let Some(s) = from {
                d = d.at(s, "this extends closes the loop");
            }
            self.diags.push(d);
            return;
        }
        let file = self.sources.add(name, text);
        let parsed = match parse_file(text, file) {
            Ok(f) => f,
            Err(d) => {
                self.diags.push(d);
                return;
            }
        };
        self.stack.push(name.to_string());
        // The outermost file that names itself names the ruleset: a house
        // rule with its own `ruleset` line is itself, not its base.
        if out.header.is_none() {
            out.header = parsed.header.clone();
        }
        let extends_something = parsed
            .items
            .iter()
            .any(|i| matches!(i.kind, ItemKind::Extends(_)));
        for item in parsed.items {
            match &item.kind {
                ItemKind::Extends(path) => {
                    let p = dir
                        .as_ref()
                        .map(|d| d.join(path))
                        .unwrap_or_else(|| PathBuf::from(path));
                    match std::fs::read_to_string(&p) {
                        Ok(t) => {
                            let pd = p.parent().map(Path::to_path_buf);
                            self.load(&p.display().to_string(), &t, pd, out, Some(item.span));
                        }
                        Err(e) => self.diags.push(
                            Diag::new("muster::extends", format!("cannot read `{path}`: {e}"))
                                .at(item.span, "the ruleset this file extends")
                                .help(
                                    "paths in `extends` are relative to the file that names them",
                                ),
                        ),
                    }
                }
                ItemKind::Import(n) => {
                    if self.imported.contains(&n.text) {
                        continue;
                    }
                    match STDLIB.iter().find(|(k, _)| *k == n.text) {
                        Some((k, t)) => {
                            self.imported.push(n.text.clone());
                            let mut lib = Loaded::default();
                            self.load(
                                &format!("stdlib/{k}.muster"),
                                t,
                                None,
                                &mut lib,
                                Some(n.span),
                            );
                            out.items.extend(lib.items);
                        }
                        None => self.diags.push(
                            Diag::new(
                                "muster::import",
                                format!("there is no standard library `{}`", n.text),
                            )
                            .at(n.span, "unknown library")
                            .help(format!(
                                "the standard library has: {}",
                                STDLIB
                                    .iter()
                                    .map(|(k, _)| *k)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        ),
                    }
                }
                _ => {
                    let mut item = item;
                    if let ItemKind::Hook(h) = &mut item.kind {
                        self.read_script(h, dir.as_deref());
                    }
                    self.merge(item, out, extends_something)
                }
            }
        }
        self.stack.pop();
    }

    /// A hook's `script "FILE"`: read it (next to the file that names it,
    /// else from stdlib/) and make it an inline script in its own source.
    fn read_script(&mut self, h: &mut Hook, dir: Option<&Path>) {
        let Script::File { path, span } = &h.script else {
            return;
        };
        let local = dir.map(|d| d.join(path)).filter(|p| p.is_file());
        let (name, text) = match local {
            Some(p) => match std::fs::read_to_string(&p) {
                Ok(t) => (p.display().to_string(), t),
                Err(e) => {
                    self.diags.push(
                        Diag::new("muster::hook", format!("cannot read `{path}`: {e}"))
                            .at(*span, "the hook's script")
                            .help("check the file's permissions and encoding (UTF-8)"),
                    );
                    return;
                }
            },
            None => match crate::hooks::stdlib_script(path) {
                Some(t) => (format!("stdlib/{path}"), t.to_string()),
                None => {
                    self.diags.push(
                        Diag::new("muster::hook", format!("there is no script `{path}`"))
                            .at(*span, "not found next to this file nor in stdlib/")
                            .help("a hook's script file is named relative to the ruleset that declares it"),
                    );
                    return;
                }
            },
        };
        let len = text.len();
        let file = self.sources.add(name, text.as_str());
        h.script = Script::Inline {
            text,
            span: Span::new(file, 0, len),
        };
    }

    fn merge(&mut self, item: Item, out: &mut Loaded, derived: bool) {
        match item.kind {
            ItemKind::Remove(kind, name) => self.remove(&kind, &name, out),
            ItemKind::TableExtend(name, rows) => {
                let found = out.items.iter_mut().find_map(|i| match &mut i.kind {
                    ItemKind::Table(t) if t.name.text == name.text => Some(t),
                    _ => None,
                });
                match found {
                    Some(t) => {
                        let mut new = rows;
                        new.append(&mut t.rows);
                        t.rows = new;
                    }
                    None => self.diags.push(
                        Diag::new("muster::unknown_table", format!("there is no table `{}` to add rows to", name.text))
                            .at(name.span, "no such table in the base ruleset")
                            .help("`table NAME += { rows }` adds rows to a table the extended ruleset defines"),
                    ),
                }
            }
            ItemKind::StepPatch(step) => self.patch_step(step, item.span, out),
            ItemKind::Units(block) => self.merge_units(block, item.overrides, item.span, out),
            ref kind => {
                let Some(k) = key(kind) else {
                    out.items.push(item);
                    return;
                };
                let existing = out
                    .items
                    .iter()
                    .position(|i| key(&i.kind).as_ref() == Some(&k));
                match (existing, item.overrides) {
                    (Some(i), true) => out.items[i] = item,
                    (Some(i), false) if derived => {
                        let first = out.items[i].span;
                        self.diags.push(
                            Diag::new(
                                "muster::redefined",
                                format!(
                                    "{} `{}` is already defined by the ruleset this file extends",
                                    k.0, k.1
                                ),
                            )
                            .at(item.span, "defined again here")
                            .note(first, "first defined here")
                            .help(format!(
                                "write `override {} ...` to replace it, or choose another name",
                                k.0
                            )),
                        );
                    }
                    (None, true) => self.diags.push(
                        Diag::new(
                            "muster::nothing_to_override",
                            format!("there is no {} `{}` to override", k.0, k.1),
                        )
                        .at(item.span, "`override` needs an existing definition")
                        .help("remove `override` to add a new definition, or check the spelling"),
                    ),
                    // A duplicate within one file is the compiler's to report.
                    _ => out.items.push(item),
                }
            }
        }
    }

    fn merge_units(&mut self, block: UnitsBlock, overrides: bool, span: Span, out: &mut Loaded) {
        let mut fresh = Vec::new();
        for row in block.rows {
            let found = out.items.iter_mut().find_map(|i| match &mut i.kind {
                ItemKind::Units(b) => {
                    let pos = b
                        .rows
                        .iter()
                        .position(|r| r.name.text.eq_ignore_ascii_case(&row.name.text))?;
                    Some((b, pos))
                }
                _ => None,
            });
            match found {
                Some((b, pos)) if overrides || row.overrides => {
                    // Map the new row's columns onto the base block's.
                    let mut new = b.rows[pos].clone();
                    new.classes = if row.classes.is_empty() {
                        new.classes
                    } else {
                        row.classes.clone()
                    };
                    for (ci, col) in block.columns.iter().enumerate() {
                        match b.columns.iter().position(|c| c.text == col.text) {
                            Some(bi) if ci < row.values.len() && bi < new.values.len() => {
                                new.values[bi] = row.values[ci]
                            }
                            Some(_) => {}
                            None => self.diags.push(
                                Diag::new("muster::unknown_stat", format!("the base units table has no column `{}`", col.text))
                                    .at(col.span, "not a column of the base table")
                                    .help("an overriding row may use any of the base table's columns, in any order"),
                            ),
                        }
                    }
                    new.span = row.span;
                    b.rows[pos] = new;
                }
                Some((b, pos)) => {
                    let first = b.rows[pos].span;
                    self.diags.push(
                        Diag::new(
                            "muster::redefined",
                            format!("unit `{}` is already defined", row.name.text),
                        )
                        .at(row.name.span, "defined again here")
                        .note(first, "first defined here")
                        .help("write `override` before the row to replace the unit's stats"),
                    );
                }
                None if row.overrides => self.diags.push(
                    Diag::new(
                        "muster::nothing_to_override",
                        format!("there is no unit `{}` to override", row.name.text),
                    )
                    .at(row.name.span, "`override` needs an existing unit")
                    .help("remove `override` to add a new unit type"),
                ),
                None => fresh.push(row),
            }
        }
        if !fresh.is_empty() {
            out.items.push(Item {
                kind: ItemKind::Units(UnitsBlock {
                    columns: block.columns,
                    rows: fresh,
                }),
                overrides: false,
                span,
            });
        }
    }

    fn remove(&mut self, kind: &Name, name: &Name, out: &mut Loaded) {
        let removed = match kind.text.as_str() {
            "unit" => out.items.iter_mut().any(|i| match &mut i.kind {
                ItemKind::Units(b) => {
                    let before = b.rows.len();
                    b.rows
                        .retain(|r| !r.name.text.eq_ignore_ascii_case(&name.text));
                    b.rows.len() != before
                }
                _ => false,
            }),
            "step" => match out.items.iter_mut().find_map(|i| match &mut i.kind {
                ItemKind::Sequence(s) => Some(s),
                _ => None,
            }) {
                Some(seq) => {
                    let mut hit = false;
                    for list in [&mut seq.setup, &mut seq.turn] {
                        list.retain(|p| !matches!(p, PhaseOrStep::Step(s) if s.name.text == name.text && {hit = true; true}));
                        for p in list.iter_mut() {
                            if let PhaseOrStep::Phase(_, steps) = p {
                                let before = steps.len();
                                steps.retain(|s| s.name.text != name.text);
                                hit |= steps.len() != before;
                            }
                        }
                    }
                    hit
                }
                None => false,
            },
            k => {
                let before = out.items.len();
                out.items.retain(|i| {
                    key(&i.kind)
                        .map(|(a, b)| !(a == k && b == name.text))
                        .unwrap_or(true)
                });
                out.items.len() != before
            }
        };
        if !removed {
            self.diags.push(
                Diag::new(
                    "muster::nothing_to_remove",
                    format!("there is no {} `{}` to remove", kind.text, name.text),
                )
                .at(name.span, "not defined by the extended ruleset")
                .help("check the spelling; `remove` deletes something the base ruleset defines"),
            );
        }
    }

    fn patch_step(&mut self, step: Step, span: Span, out: &mut Loaded) {
        let Some((after, anchor)) = step.anchor.clone() else {
            self.diags.push(
                Diag::new("muster::step_outside_sequence", format!("step \"{}\" is outside any sequence", step.name.text))
                    .at(span, "a step on its own must say where it goes")
                    .help("write `step \"NAME\" after \"OTHER STEP\" { ... }` (or `before`) to insert it into the base sequence"),
            );
            return;
        };
        let seq = out.items.iter_mut().find_map(|i| match &mut i.kind {
            ItemKind::Sequence(s) => Some(s),
            _ => None,
        });
        let mut placed = false;
        if let Some(seq) = seq {
            for list in [&mut seq.setup, &mut seq.turn] {
                if placed {
                    break;
                }
                // A step directly in the list, or inside a phase.
                if let Some(pos) = list
                    .iter()
                    .position(|p| matches!(p, PhaseOrStep::Step(s) if s.name.text == anchor.text))
                {
                    list.insert(pos + after as usize, PhaseOrStep::Step(step.clone()));
                    placed = true;
                    break;
                }
                for p in list.iter_mut() {
                    if let PhaseOrStep::Phase(_, steps) = p {
                        if let Some(pos) = steps.iter().position(|s| s.name.text == anchor.text) {
                            steps.insert(pos + after as usize, step.clone());
                            placed = true;
                            break;
                        }
                    }
                }
            }
        }
        if !placed {
            self.diags.push(
                Diag::new(
                    "muster::unknown_step",
                    format!(
                        "there is no step \"{}\" to place this step beside",
                        anchor.text
                    ),
                )
                .at(anchor.span, "no such step in the base sequence")
                .help(
                    "name a step of the extended ruleset's sequence exactly as it is written there",
                ),
            );
        }
    }
}
