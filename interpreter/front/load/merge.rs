//! Merging a ruleset's items with what it extends: overrides replace,
//! removals delete, `+=` rows are added, patched steps are inserted. Every
//! change finds what it changes through an index (by kind and name, unit
//! rows by name, steps by name), so a house rule of n items merges in about
//! n steps: scanning the items for each one took minutes for 40,000.

use crate::front::diagnostic::Diag;
use crate::front::syntax::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The name under which an item can be overridden or removed.
fn key(kind: &ItemKind) -> Option<(&'static str, &str)> {
    Some(match kind {
        ItemKind::Die(d) => ("die", &d.name.text),
        ItemKind::Enum(n, _) => ("enum", &n.text),
        ItemKind::Group(n, _) => ("group", &n.text),
        ItemKind::Option(o) => ("option", &o.name.text),
        ItemKind::Quality(q) => ("quality", &q.name.text),
        ItemKind::State(s) => (
            if s.per_side { "side_state" } else { "state" },
            &s.name.text,
        ),
        ItemKind::Fact(f) => ("fact", &f.name.text),
        ItemKind::Define(d) => ("define", &d.name.text),
        ItemKind::Table(t) => ("table", &t.name.text),
        ItemKind::Quantity(q) => ("quantity", &q.name.text),
        ItemKind::Modifier(m) => ("modifier", &m.name.text),
        ItemKind::Procedure(p) => ("procedure", &p.name.text),
        ItemKind::Decision(d) => ("decision", &d.name.text),
        ItemKind::Policy(p) => ("policy", &p.name.text),
        ItemKind::Army(a) => ("army", &a.name.text),
        ItemKind::Sequence(_) => ("sequence", ""),
        ItemKind::Measure(n, _) => ("measure", &n.text),
        ItemKind::Hook(h) => ("hook", &h.name.text),
        ItemKind::Deck(d) => ("deck", &d.name.text),
        ItemKind::Effects(e) => ("effects", &e.name.text),
        _ => return None,
    })
}

/// The items merged so far, in order, with their indexes.
#[derive(Default)]
pub(super) struct Merged {
    /// `None` once removed.
    items: Vec<Option<Item>>,
    /// The live items that have a name, by kind and name, in order.
    by_key: HashMap<&'static str, HashMap<String, Vec<usize>>>,
    /// Rows that `+=` added to the table at an index, oldest first (each
    /// batch goes before the rows already there).
    added_rows: HashMap<usize, Vec<Vec<Row>>>,
    /// The live unit rows by name in ASCII lower case: (item, row), in order.
    units: HashMap<String, Vec<(usize, usize)>>,
    /// Unit rows removed: (item, row).
    removed_rows: HashSet<(usize, usize)>,
    /// The sequence, opened for patching.
    steps: Option<Steps>,
}

impl Merged {
    /// Append an item as it is (an imported library's, or one that
    /// changes nothing already there).
    pub(super) fn push(&mut self, item: Item) {
        let at = self.items.len();
        if let Some((kind, name)) = key(&item.kind) {
            self.by_key
                .entry(kind)
                .or_default()
                .entry(name.to_string())
                .or_default()
                .push(at);
        }
        if let ItemKind::Units(b) = &item.kind {
            for (r, row) in b.rows.iter().enumerate() {
                let name = row.name.text.to_ascii_lowercase();
                self.units.entry(name).or_default().push((at, r));
            }
        }
        self.items.push(Some(item));
    }

    /// Room for `n` more items (a file's, before they are merged one by
    /// one: the list then grows once, not by doubling, each step of which
    /// moved every item so far).
    pub(super) fn reserve(&mut self, n: usize) {
        self.items.reserve(n);
    }

    /// The first live item of a kind and name.
    fn first(&self, kind: &str, name: &str) -> Option<usize> {
        self.by_key.get(kind)?.get(name)?.first().copied()
    }

    fn item(&mut self, at: usize) -> &mut Item {
        self.items[at]
            .as_mut()
            .expect("indexes hold live items only")
    }

    /// Replace the item at `at` (one of the same kind and name): what was
    /// added to or patched into the old one goes with it.
    fn replace(&mut self, at: usize, item: Item) {
        self.items[at] = Some(item);
        self.forget(at);
    }

    fn forget(&mut self, at: usize) {
        self.added_rows.remove(&at);
        if self.steps.as_ref().is_some_and(|s| s.item == at) {
            self.steps = None;
        }
    }

    /// Merge one item of a file; `derived` when the file extends another
    /// (defining a name again is then a mistake, not the compiler's
    /// duplicate).
    pub(super) fn merge(&mut self, item: Item, derived: bool, diags: &mut Vec<Diag>) {
        match item.kind {
            ItemKind::Remove(kind, name) => {
                if !self.remove(&kind.text, &name.text) {
                    diags.push(
                        Diag::new(
                            "muster::nothing_to_remove",
                            format!("there is no {} `{}` to remove", kind.text, name.text),
                        )
                        .at(name.span, "not defined by the extended ruleset")
                        .help("check the spelling; `remove` deletes something the base ruleset defines"),
                    );
                }
            }
            ItemKind::TableExtend(name, rows) => match self.first("table", &name.text) {
                Some(at) => self.added_rows.entry(at).or_default().push(rows),
                None => diags.push(
                    Diag::new("muster::unknown_table", format!("there is no table `{}` to add rows to", name.text))
                        .at(name.span, "no such table in the base ruleset")
                        .help("`table NAME += { rows }` adds rows to a table the extended ruleset defines"),
                ),
            },
            ItemKind::StepPatch(step) => self.patch_step(step, item.span, diags),
            ItemKind::StepChange(change) => self.change_step(change, diags),
            ItemKind::PhaseRename(old, new) => {
                if !self.open_steps().is_some_and(|s| s.rename_phase(&old.text, &new)) {
                    diags.push(
                        Diag::new("muster::unknown_phase", format!("there is no phase \"{}\" to rename", old.text))
                            .at(old.span, "no such phase in the base sequence")
                            .help("name a phase of the extended ruleset's sequence exactly as it is written there"),
                    );
                }
            }
            ItemKind::Units(block) => self.merge_units(block, item.overrides, item.span, diags),
            ref kind => {
                let Some((kind, name)) = key(kind).map(|(k, n)| (k, n.to_string())) else {
                    self.push(item);
                    return;
                };
                match (self.first(kind, &name), item.overrides) {
                    (Some(at), true) => self.replace(at, item),
                    (Some(at), false) if derived => {
                        let first = self.item(at).span;
                        diags.push(
                            Diag::new(
                                "muster::redefined",
                                format!(
                                    "{kind} `{name}` is already defined by the ruleset this file extends"
                                ),
                            )
                            .at(item.span, "defined again here")
                            .note(first, "first defined here")
                            .help(format!(
                                "write `override {kind} ...` to replace it, or choose another name"
                            )),
                        );
                    }
                    (None, true) => diags.push(
                        Diag::new(
                            "muster::nothing_to_override",
                            format!("there is no {kind} `{name}` to override"),
                        )
                        .at(item.span, "`override` needs an existing definition")
                        .help("remove `override` to add a new definition, or check the spelling"),
                    ),
                    // A duplicate within one file is the compiler's to report.
                    _ => self.push(item),
                }
            }
        }
    }

    /// `remove KIND NAME`; whether there was one.
    fn remove(&mut self, kind: &str, name: &str) -> bool {
        match kind {
            "unit" => self.remove_unit(name),
            "step" => self.open_steps().is_some_and(|steps| steps.remove(name)),
            _ => {
                let Some(ats) = self.by_key.get_mut(kind).and_then(|m| m.remove(name)) else {
                    return false;
                };
                for at in ats {
                    self.items[at] = None;
                    self.forget(at);
                }
                true
            }
        }
    }

    /// `remove unit NAME`: its rows in the first units block that has one.
    fn remove_unit(&mut self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        let Some(rows) = self.units.get_mut(&lower) else {
            return false;
        };
        let block = rows[0].0;
        let (gone, kept): (Vec<_>, Vec<_>) = rows.iter().partition(|(at, _)| *at == block);
        if kept.is_empty() {
            self.units.remove(&lower);
        } else {
            *rows = kept;
        }
        self.removed_rows.extend(gone);
        true
    }

    /// A `units` block of an extending file: rows of new types go into a
    /// block of their own; `override` rows change the base's rows in
    /// place. A column the base block lacks joins it (a draft's new stat,
    /// such as TVBD v2.0a's charge move): every live row of that base
    /// block must then get a value in this block, or the rows left
    /// without one are named in one diagnostic (`muster::missing_stat_value`).
    fn merge_units(
        &mut self,
        block: UnitsBlock,
        overrides: bool,
        span: Span,
        diags: &mut Vec<Diag>,
    ) {
        // Where each of this block's columns is in a base block's, worked
        // out once per base block (adding the columns it lacks).
        let mut columns: HashMap<usize, Vec<usize>> = HashMap::default();
        // The base rows given a value in an added column: (block, row, column).
        let mut given: HashSet<(usize, usize, usize)> = HashSet::default();
        // The columns added: (block, column, the column's name here).
        let mut added: Vec<(usize, usize, Name)> = Vec::new();
        let mut fresh = Vec::new();
        for row in block.rows {
            let found = self
                .units
                .get(&row.name.text.to_ascii_lowercase())
                .map(|rows| rows[0]);
            match found {
                Some((at, pos)) if overrides || row.overrides => {
                    let ItemKind::Units(b) = &mut self.items[at].as_mut().expect("live").kind
                    else {
                        unreachable!("unit rows are indexed in units blocks")
                    };
                    let map = columns
                        .entry(at)
                        .or_insert_with(|| base_columns(b, &block.columns, at, &mut added));
                    // Map the new row's columns onto the base block's.
                    let mut new = b.rows[pos].clone();
                    if !row.classes.is_empty() {
                        new.classes = row.classes.clone();
                    }
                    for (ci, &bi) in map.iter().enumerate() {
                        if ci < row.values.len() && bi < new.values.len() {
                            new.values[bi] = row.values[ci];
                            given.insert((at, pos, bi));
                        }
                    }
                    new.span = row.span;
                    b.rows[pos] = new;
                }
                Some((at, pos)) => {
                    let ItemKind::Units(b) = &self.items[at].as_ref().expect("live").kind else {
                        unreachable!("unit rows are indexed in units blocks")
                    };
                    diags.push(
                        Diag::new(
                            "muster::redefined",
                            format!("unit `{}` is already defined", row.name.text),
                        )
                        .at(row.name.span, "defined again here")
                        .note(b.rows[pos].span, "first defined here")
                        .help("write `override` before the row to replace the unit's stats"),
                    );
                }
                None if row.overrides => diags.push(
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
        self.check_added_columns(&added, &given, diags);
        if !fresh.is_empty() {
            self.push(Item {
                kind: ItemKind::Units(UnitsBlock {
                    columns: block.columns,
                    rows: fresh,
                }),
                overrides: false,
                span,
            });
        }
    }

    /// Every live row of a base block a column was added to must have been
    /// given a value in it: the rows that were not are named.
    fn check_added_columns(
        &self,
        added: &[(usize, usize, Name)],
        given: &HashSet<(usize, usize, usize)>,
        diags: &mut Vec<Diag>,
    ) {
        for (at, bi, col) in added {
            let Some(Item {
                kind: ItemKind::Units(b),
                ..
            }) = &self.items[*at]
            else {
                continue;
            };
            let missing: Vec<&str> = (0..b.rows.len())
                .filter(|r| {
                    !self.removed_rows.contains(&(*at, *r)) && !given.contains(&(*at, *r, *bi))
                })
                .map(|r| b.rows[r].name.text.as_str())
                .collect();
            if missing.is_empty() {
                continue;
            }
            diags.push(
                Diag::new(
                    "muster::missing_stat_value",
                    format!(
                        "the new column `{}` has no value for {}",
                        col.text,
                        missing.join(", ")
                    ),
                )
                .at(col.span, "a column the base units table did not have")
                .note(b.rows[0].span, "the base table")
                .help(format!(
                    "a column added to the base's units table needs a value for every type in it: add an `override` row for {} (`none` where the type has none)",
                    missing.join(", ")
                )),
            );
        }
    }
    /// The first sequence, opened for patching (once).
    fn open_steps(&mut self) -> Option<&mut Steps> {
        if self.steps.is_none() {
            let at = self.first("sequence", "")?;
            let ItemKind::Sequence(seq) = &mut self.item(at).kind else {
                unreachable!("the key `sequence` is a sequence's")
            };
            self.steps = Some(Steps::open(at, seq));
        }
        self.steps.as_mut()
    }

    /// A step on its own (`step "X" after "Y" { ... }`): inserted beside
    /// the first step of that name (the setup's own steps first, then its
    /// phases', then the turn's, then its phases').
    fn patch_step(&mut self, step: Step, span: Span, diags: &mut Vec<Diag>) {
        let Some((after, anchor)) = step.anchor.clone() else {
            diags.push(
                Diag::new("muster::step_outside_sequence", format!("step \"{}\" is outside any sequence", step.name.text))
                    .at(span, "a step on its own must say where it goes")
                    .help("write `step \"NAME\" after \"OTHER STEP\" { ... }` (or `before`) to insert it into the base sequence"),
            );
            return;
        };
        let placed = self
            .open_steps()
            .is_some_and(|steps| steps.insert(step, after, &anchor.text));
        if !placed {
            diags.push(
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

    /// `override step "X" ...`: the first step of that name changed where
    /// it stands (or moved beside another).
    fn change_step(&mut self, change: StepChange, diags: &mut Vec<Diag>) {
        let Some(steps) = self.open_steps() else {
            diags.push(
                Diag::new(
                    "muster::unknown_step",
                    format!("there is no sequence with a step \"{}\" to change", change.name.text),
                )
                .at(change.name.span, "no sequence to change")
                .help("`override step` changes a step of the sequence of the ruleset this file extends"),
            );
            return;
        };
        steps.change(change, diags);
    }

    /// The merged items, in order, with every change applied.
    pub(super) fn finish(mut self) -> Vec<Item> {
        if let Some(steps) = self.steps.take() {
            let ItemKind::Sequence(seq) = &mut self.item(steps.item).kind else {
                unreachable!("the steps were opened from a sequence")
            };
            steps.close(seq);
        }
        let mut out = Vec::with_capacity(self.items.len());
        for (at, item) in self.items.into_iter().enumerate() {
            let Some(mut item) = item else { continue };
            match &mut item.kind {
                ItemKind::Table(t) => {
                    if let Some(batches) = self.added_rows.remove(&at) {
                        // The newest batch first, then the older ones, then
                        // the table's own rows.
                        let mut rows: Vec<Row> = batches.into_iter().rev().flatten().collect();
                        rows.append(&mut t.rows);
                        t.rows = rows;
                    }
                }
                ItemKind::Units(b) if !self.removed_rows.is_empty() => {
                    let mut r = 0;
                    b.rows.retain(|_| {
                        r += 1;
                        !self.removed_rows.contains(&(at, r - 1))
                    });
                }
                _ => {}
            }
            out.push(item);
        }
        out
    }
}

/// Where each column of an extending `units` block is in the base block
/// `b` (the item at `at`): a column `b` lacks is added to it, every row
/// getting `none` there until a row of the extending block gives it a
/// value (each added column is recorded in `added`).
fn base_columns(
    b: &mut UnitsBlock,
    cols: &[Name],
    at: usize,
    added: &mut Vec<(usize, usize, Name)>,
) -> Vec<usize> {
    cols.iter()
        .map(
            |col| match b.columns.iter().position(|c| c.text == col.text) {
                Some(bi) => bi,
                None => {
                    b.columns.push(col.clone());
                    for row in &mut b.rows {
                        row.values.push((StatValue::None, col.span));
                    }
                    added.push((at, b.columns.len() - 1, col.clone()));
                    b.columns.len() - 1
                }
            },
        )
        .collect()
}

// -------------------------------------------------------------- the steps

/// No node.
const NIL: u32 = u32::MAX;

/// A sequence opened for patching: its lists of steps as linked lists (a
/// step goes in beside another without shifting the rest), each step's
/// name indexed, and each node labelled in list order so that the first of
/// two steps of one name is found without walking the list.
struct Steps {
    /// The item of the sequence.
    item: usize,
    nodes: Vec<Node>,
    /// In the order steps are searched: the setup's own steps (phases in
    /// between), each setup phase's steps, the turn's own, each turn
    /// phase's.
    lists: Vec<List>,
    /// The lists of the setup's and the turn's own steps.
    setup: u32,
    turn: u32,
    /// Each step name's live nodes, and the first of them in search order.
    names: HashMap<String, Named>,
}

struct Node {
    entry: Entry,
    list: u32,
    prev: u32,
    next: u32,
    /// Increasing along the list.
    label: u64,
}

enum Entry {
    Step(Step),
    /// A phase in a top-level list, and the list of its steps.
    Phase(Name, u32),
    /// A step removed.
    Gone,
}

#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

struct Named {
    nodes: Vec<u32>,
    first: u32,
}

impl Steps {
    /// Take the sequence's steps into linked lists.
    fn open(item: usize, seq: &mut Sequence) -> Steps {
        let mut s = Steps {
            item,
            nodes: Vec::new(),
            lists: Vec::new(),
            setup: 0,
            turn: 0,
            names: HashMap::default(),
        };
        s.setup = s.open_list(std::mem::take(&mut seq.setup));
        s.turn = s.open_list(std::mem::take(&mut seq.turn));
        s
    }

    /// One top-level list and its phases' lists (numbered after it, in
    /// order, which is the search order).
    fn open_list(&mut self, list: Vec<PhaseOrStep>) -> u32 {
        let top = self.new_list();
        let mut phases = Vec::new();
        for p in list {
            match p {
                PhaseOrStep::Step(step) => {
                    self.append(top, Entry::Step(step));
                }
                PhaseOrStep::Phase(name, steps) => {
                    let n = self.append(top, Entry::Phase(name, NIL));
                    phases.push((n, steps));
                }
            }
        }
        for (n, steps) in phases {
            let inner = self.new_list();
            if let Entry::Phase(_, l) = &mut self.nodes[n as usize].entry {
                *l = inner;
            }
            for step in steps {
                self.append(inner, Entry::Step(step));
            }
        }
        top
    }

    fn new_list(&mut self) -> u32 {
        self.lists.push(List {
            head: NIL,
            tail: NIL,
        });
        self.lists.len() as u32 - 1
    }

    /// Add an entry at the end of a list (labels 2^32 apart: a sequence
    /// has far fewer than 2^32 steps).
    fn append(&mut self, list: u32, entry: Entry) -> u32 {
        let tail = self.lists[list as usize].tail;
        let label = if tail == NIL {
            1 << 32
        } else {
            self.nodes[tail as usize].label + (1 << 32)
        };
        let n = self.add_node(entry, list, tail, NIL, label);
        if tail == NIL {
            self.lists[list as usize].head = n;
        } else {
            self.nodes[tail as usize].next = n;
        }
        self.lists[list as usize].tail = n;
        n
    }

    fn add_node(&mut self, entry: Entry, list: u32, prev: u32, next: u32, label: u64) -> u32 {
        let n = self.nodes.len() as u32;
        if let Entry::Step(s) = &entry {
            let named = self.names.entry(s.name.text.clone()).or_insert(Named {
                nodes: Vec::new(),
                first: n,
            });
            named.nodes.push(n);
        }
        self.nodes.push(Node {
            entry,
            list,
            prev,
            next,
            label,
        });
        n
    }

    /// Where a node is in search order.
    fn rank(&self, n: u32) -> (u32, u64) {
        let node = &self.nodes[n as usize];
        (node.list, node.label)
    }

    /// Insert `step` after (or before) the first step named `anchor`;
    /// whether there is one.
    fn insert(&mut self, step: Step, after: bool, anchor: &str) -> bool {
        let Some(a) = self
            .names
            .get(anchor)
            .map(|n| n.first)
            .or_else(|| self.phase_node(anchor))
        else {
            return false;
        };
        let list = self.nodes[a as usize].list;
        let (prev, next) = if after {
            (a, self.nodes[a as usize].next)
        } else {
            (self.nodes[a as usize].prev, a)
        };
        let label = self.label_between(list, prev, next);
        let name = step.name.text.clone();
        let n = self.add_node(Entry::Step(step), list, prev, next, label);
        match prev {
            NIL => self.lists[list as usize].head = n,
            p => self.nodes[p as usize].next = n,
        }
        match next {
            NIL => self.lists[list as usize].tail = n,
            x => self.nodes[x as usize].prev = n,
        }
        let first = self.names[&name].first;
        if (list, label) < self.rank(first) {
            self.names.get_mut(&name).expect("just added").first = n;
        }
        true
    }

    /// Change the first step named as `c` says: its actions replaced or
    /// given new names (`with`), renamed, moved beside another step.
    fn change(&mut self, c: StepChange, diags: &mut Vec<Diag>) {
        let Some(n) = self.names.get(&c.name.text).map(|n| n.first) else {
            diags.push(
                Diag::new(
                    "muster::unknown_step",
                    format!("there is no step \"{}\" to change", c.name.text),
                )
                .at(c.name.span, "no such step in the base sequence")
                .help(
                    "name a step of the extended ruleset's sequence exactly as it is written there",
                ),
            );
            return;
        };
        if c.rename.is_none() && c.anchor.is_none() && c.recast.is_empty() && c.body.is_none() {
            diags.push(
                Diag::new("muster::step_change", format!("this changes nothing in step \"{}\"", c.name.text))
                    .at(c.span, "no new name, place, actor or actions")
                    .help("say what changes: `as \"NEW NAME\"`, `after \"STEP\"` or `before \"STEP\"`, `with NAME = EXPR`, or `{ new actions }`"),
            );
            return;
        }
        if let Some((_, anchor)) = &c.anchor {
            if anchor.text == c.name.text || !self.names.contains_key(&anchor.text) {
                diags.push(
                    Diag::new("muster::unknown_step", format!("there is no other step \"{}\" to move this step beside", anchor.text))
                        .at(anchor.span, "no such step (besides the one moved) in the base sequence")
                        .help("name another step of the extended ruleset's sequence exactly as it is written there"),
                );
                return;
            }
        }
        let Entry::Step(mut step) =
            std::mem::replace(&mut self.nodes[n as usize].entry, Entry::Gone)
        else {
            unreachable!("the names index live steps")
        };
        if let Some(body) = c.body {
            step.actions = body;
        }
        for (name, with) in &c.recast {
            let mut found = 0;
            for a in &mut step.actions {
                found += recast_action(a, &name.text, with);
            }
            if found == 0 {
                diags.push(
                    Diag::new(
                        "muster::step_change",
                        format!("step \"{}\" never names `{}`", c.name.text, name.text),
                    )
                    .at(name.span, "nothing to put this expression in place of")
                    .help("`with NAME = EXPR` replaces a name the step's actions use, such as the side that acts: `with attacker = active_side()`"),
                );
            }
        }
        self.forget_node(n, &c.name.text);
        if let Some(new) = c.rename {
            step.name = new;
        }
        match c.anchor {
            Some((after, anchor)) => {
                self.unlink(n);
                self.insert(step, after, &anchor.text);
            }
            None => {
                let name = step.name.text.clone();
                self.nodes[n as usize].entry = Entry::Step(step);
                let rank = self.rank(n);
                let first = self.names.get(&name).map(|named| self.rank(named.first));
                let named = self.names.entry(name).or_insert(Named {
                    nodes: Vec::new(),
                    first: n,
                });
                named.nodes.push(n);
                if first.is_some_and(|f| rank < f) {
                    named.first = n;
                }
            }
        }
    }

    /// The first phase named `name` (a step placed beside it goes into the
    /// list that holds the phase: between phases, not inside one).
    fn phase_node(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| matches!(&n.entry, Entry::Phase(p, _) if p.text == name))
            .map(|n| n as u32)
    }

    /// Rename the first phase named `old`; whether there is one.
    fn rename_phase(&mut self, old: &str, new: &Name) -> bool {
        for node in &mut self.nodes {
            if let Entry::Phase(name, _) = &mut node.entry {
                if name.text == old {
                    *name = new.clone();
                    return true;
                }
            }
        }
        false
    }

    /// Take node `n` out of the index of the steps named `name`.
    fn forget_node(&mut self, n: u32, name: &str) {
        let Some(named) = self.names.get_mut(name) else {
            return;
        };
        named.nodes.retain(|&m| m != n);
        let nodes = std::mem::take(&mut named.nodes);
        if nodes.is_empty() {
            self.names.remove(name);
            return;
        }
        let first = *nodes
            .iter()
            .min_by_key(|&&m| self.rank(m))
            .expect("not empty");
        let named = self.names.get_mut(name).expect("still there");
        named.nodes = nodes;
        named.first = first;
    }

    /// Take node `n` out of its list (its entry is left as it is).
    fn unlink(&mut self, n: u32) {
        let (list, prev, next) = {
            let node = &self.nodes[n as usize];
            (node.list as usize, node.prev, node.next)
        };
        match prev {
            NIL => self.lists[list].head = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.lists[list].tail = prev,
            x => self.nodes[x as usize].prev = prev,
        }
    }

    /// Remove every step named `name`; whether there was one.
    fn remove(&mut self, name: &str) -> bool {
        let Some(named) = self.names.remove(name) else {
            return false;
        };
        for n in named.nodes {
            self.nodes[n as usize].entry = Entry::Gone;
            self.unlink(n);
        }
        true
    }

    /// A label between two neighbours of a list (`NIL` at either end),
    /// making room first if they are adjacent numbers.
    fn label_between(&mut self, list: u32, prev: u32, next: u32) -> u64 {
        let bounds = |s: &Steps| {
            let lo = if prev == NIL {
                0
            } else {
                s.nodes[prev as usize].label
            };
            let hi = if next == NIL {
                u64::MAX
            } else {
                s.nodes[next as usize].label
            };
            (lo, hi)
        };
        let (mut lo, mut hi) = bounds(self);
        if hi - lo < 2 {
            self.relabel(list, prev);
            (lo, hi) = bounds(self);
        }
        lo + (hi - lo) / 2
    }

    /// Spread out the labels around `at` (the list's start when `NIL`):
    /// the smallest aligned range of labels around it that is sparse
    /// enough (at most 0.75^k of a range of 2^k labels used) is relabelled
    /// evenly. This is the order-maintenance scheme of Bender et al. (2002):
    /// each insertion costs O(log n) relabellings on average, where
    /// relabelling the whole list would make some insertion orders
    /// quadratic.
    fn relabel(&mut self, list: u32, at: u32) {
        let label = if at == NIL {
            0
        } else {
            self.nodes[at as usize].label
        };
        for bits in 1..=64u32 {
            let size = 1u128 << bits;
            let base = (label as u128) & !(size - 1);
            let end = base + size;
            // The nodes whose labels are in [base, end): a stretch of the
            // list around `at`.
            let mut first = if at == NIL {
                self.lists[list as usize].head
            } else {
                at
            };
            let mut count = 0u128;
            if at != NIL {
                count = 1;
                loop {
                    let p = self.nodes[first as usize].prev;
                    if p == NIL || (self.nodes[p as usize].label as u128) < base {
                        break;
                    }
                    first = p;
                    count += 1;
                }
            }
            let mut last = if at == NIL { NIL } else { at };
            let mut n = if at == NIL {
                first
            } else {
                self.nodes[at as usize].next
            };
            while n != NIL && (self.nodes[n as usize].label as u128) < end {
                if last == NIL {
                    first = n;
                }
                last = n;
                count += 1;
                n = self.nodes[n as usize].next;
            }
            // Room for the nodes, the one to come, and both ends.
            let room = size as f64 * 0.75f64.powi(bits as i32);
            if ((count + 3) as f64) <= room {
                let step = size / (count + 2);
                let mut n = first;
                for i in 0..count {
                    self.nodes[n as usize].label = (base + step * (i + 1)) as u64;
                    n = self.nodes[n as usize].next;
                }
                return;
            }
        }
        unreachable!("a list of fewer than 2^32 steps always has room")
    }

    /// Put the steps back into the sequence.
    fn close(mut self, seq: &mut Sequence) {
        seq.setup = self.close_list(self.setup);
        seq.turn = self.close_list(self.turn);
    }

    fn close_list(&mut self, list: u32) -> Vec<PhaseOrStep> {
        let mut out = Vec::new();
        let mut n = self.lists[list as usize].head;
        while n != NIL {
            let node = &mut self.nodes[n as usize];
            let next = node.next;
            match std::mem::replace(&mut node.entry, Entry::Gone) {
                Entry::Step(s) => out.push(PhaseOrStep::Step(s)),
                Entry::Phase(name, inner) => {
                    let steps = self
                        .close_list(inner)
                        .into_iter()
                        .map(|p| match p {
                            PhaseOrStep::Step(s) => s,
                            PhaseOrStep::Phase(..) => unreachable!("phases do not nest"),
                        })
                        .collect();
                    out.push(PhaseOrStep::Phase(name, steps));
                }
                Entry::Gone => {}
            }
            n = next;
        }
        out
    }
}

// -------------------------------------------------------------- recasting a step

/// Put `with` in place of every mention of the name `name` in an action
/// (`with attacker = active_side()`); how many there were. A `for each`
/// that binds the name hides it from the action.
fn recast_action(a: &mut Action, name: &str, with: &Expr) -> usize {
    let each = |e: &mut Option<Each>| -> usize {
        e.as_mut()
            .and_then(|e| e.cond.as_mut())
            .map_or(0, |c| recast_expr(c, name, with))
    };
    match a {
        Action::Do { each: Some(e), .. }
        | Action::Draw { each: Some(e), .. }
        | Action::Deal { each: Some(e), .. }
        | Action::Discard { each: Some(e), .. }
            if e.var.text == name =>
        {
            0
        }
        Action::Alternate { each: e, .. } if e.var.text == name => 0,
        Action::Deal {
            holder,
            size,
            each: e,
            ..
        }
        | Action::Discard {
            holder,
            size,
            each: e,
            ..
        } => recast_expr(holder, name, with) + recast_expr(size, name, with) + each(e),
        Action::Alternate {
            args,
            each: e,
            from,
            ..
        } => {
            args.iter_mut()
                .map(|x| recast_expr(x, name, with))
                .sum::<usize>()
                + e.cond.as_mut().map_or(0, |c| recast_expr(c, name, with))
                + from.as_mut().map_or(0, |f| recast_expr(f, name, with))
        }
        Action::Do { args, each: e, .. } => {
            args.iter_mut()
                .map(|x| recast_expr(x, name, with))
                .sum::<usize>()
                + each(e)
        }
        Action::Draw { args, each: e, .. } => {
            args.iter_mut()
                .flatten()
                .map(|x| recast_expr(x, name, with))
                .sum::<usize>()
                + each(e)
        }
        Action::Goto { when, .. } | Action::End { when, .. } => {
            when.as_mut().map_or(0, |w| recast_expr(w, name, with))
        }
        Action::Shuffle { .. } => 0,
    }
}

/// Put `with` in place of every free mention of `name` in `e`; how many.
/// (An expression is at most [`crate::front::nesting::MAX_EXPR_DEPTH`] deep.)
fn recast_expr(e: &mut Expr, name: &str, with: &Expr) -> usize {
    crate::front::nesting::guarded(|| {
        let go = |x: &mut Expr| recast_expr(x, name, with);
        match &mut e.kind {
            ExprKind::Name(n) if n.text == name => {
                *e = with.clone();
                1
            }
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Unlimited
            | ExprKind::Name(_) => 0,
            ExprKind::Field(x, _)
            | ExprKind::Original(x)
            | ExprKind::Neg(x)
            | ExprKind::Not(x)
            | ExprKind::Is(x, _, _) => go(x),
            ExprKind::Call(_, args) => args.iter_mut().map(go).sum(),
            ExprKind::Binary(_, a, b) => go(a) + go(b),
            ExprKind::If(c, a, b) => go(c) + go(a) + go(b),
            ExprKind::Quant(_, var, _, _, _) if var.text == name => 0,
            ExprKind::Quant(_, _, _, cond, of) => go(cond) + of.as_mut().map_or(0, |o| go(o)),
            ExprKind::Dice { count, scoring, .. } => {
                go(count) + scoring.as_mut().map_or(0, |s| go(s))
            }
            ExprKind::Roll { pool, args, .. } => go(pool) + args.iter_mut().map(go).sum::<usize>(),
            ExprKind::Odds(o) => {
                o.args.iter_mut().map(go).sum::<usize>()
                    + o.given.as_mut().map_or(0, go)
                    + go(&mut o.of)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// What patching a sequence did when it scanned and shifted vectors:
    /// the reference the indexed lists must agree with.
    fn patch_by_scanning(seq: &mut Sequence, step: &Step) -> bool {
        let (after, anchor) = step.anchor.clone().unwrap();
        for list in [&mut seq.setup, &mut seq.turn] {
            if let Some(pos) = list
                .iter()
                .position(|p| matches!(p, PhaseOrStep::Step(s) if s.name.text == anchor.text))
            {
                list.insert(pos + after as usize, PhaseOrStep::Step(step.clone()));
                return true;
            }
            for p in list.iter_mut() {
                if let PhaseOrStep::Phase(_, steps) = p {
                    if let Some(pos) = steps.iter().position(|s| s.name.text == anchor.text) {
                        steps.insert(pos + after as usize, step.clone());
                        return true;
                    }
                }
            }
        }
        false
    }

    fn remove_by_scanning(seq: &mut Sequence, name: &str) -> bool {
        let mut hit = false;
        for list in [&mut seq.setup, &mut seq.turn] {
            let before = list.len();
            list.retain(|p| !matches!(p, PhaseOrStep::Step(s) if s.name.text == name));
            hit |= list.len() != before;
            for p in list.iter_mut() {
                if let PhaseOrStep::Phase(_, steps) = p {
                    let before = steps.len();
                    steps.retain(|s| s.name.text != name);
                    hit |= steps.len() != before;
                }
            }
        }
        hit
    }

    /// A sequence as text: its steps' names (and spans, which tell apart
    /// steps of one name), phase by phase.
    fn shape(seq: &Sequence) -> String {
        let mut out = String::new();
        for list in [&seq.setup, &seq.turn] {
            for p in list {
                match p {
                    PhaseOrStep::Step(s) => out += &format!("{}@{} ", s.name.text, s.span.start),
                    PhaseOrStep::Phase(n, steps) => {
                        out += &format!("[{} ", n.text);
                        for s in steps {
                            out += &format!("{}@{} ", s.name.text, s.span.start);
                        }
                        out += "] ";
                    }
                }
            }
            out += "| ";
        }
        out
    }

    fn items(text: &str) -> Vec<Item> {
        match crate::front::parse::parse_file(text, FileId(0)) {
            Ok(f) => f.items,
            Err(d) => panic!("{text}\n{}", d.message),
        }
    }

    /// Random patches and removals, on few names (so that steps of one
    /// name abound, and many go in at one place, which runs out of labels):
    /// the same sequence and the same diagnostics as scanning.
    #[test]
    fn indexed_steps_patch_as_scanning_did() {
        let mut rng = Rng::new(28);
        let names = ["a", "b", "c", "d", "e", "f"];
        for round in 0..60 {
            let name = |rng: &mut Rng| names[rng.below(names.len() as u64) as usize];
            let mut text = String::from("sequence {\n");
            for list in 0..2 {
                if list == 1 {
                    text += "turn {\n";
                }
                for _ in 0..rng.below(4) {
                    if rng.below(3) == 0 {
                        text += "phase \"P\" {\n";
                        for _ in 0..rng.below(3) {
                            text += &format!("step \"{}\" {{ }}\n", name(&mut rng));
                        }
                        text += "}\n";
                    } else {
                        text += &format!("step \"{}\" {{ }}\n", name(&mut rng));
                    }
                }
            }
            text += "} until true\n}\n";
            // Patches after the base (their spans are later in the text).
            let ops = if round % 10 == 0 { 3000 } else { 200 };
            for _ in 0..ops {
                text += &match rng.below(12) {
                    0 => format!("remove step \"{}\"\n", name(&mut rng)),
                    // Many in one place: after the first "a".
                    1..=5 => format!("step \"{}\" after \"a\" {{ }}\n", name(&mut rng)),
                    k => format!(
                        "step \"{}\" {} \"{}\" {{ }}\n",
                        name(&mut rng),
                        if k % 2 == 0 { "after" } else { "before" },
                        name(&mut rng)
                    ),
                };
            }
            let mut all = items(&text).into_iter();
            let base = all.next().unwrap();
            let ItemKind::Sequence(mut reference) = base.kind.clone() else {
                panic!("the first item is the sequence")
            };
            let (mut merged, mut diags) = (Merged::default(), Vec::new());
            merged.push(base);
            let mut expected = Vec::new();
            for item in all {
                let hit = match &item.kind {
                    ItemKind::Remove(_, n) => remove_by_scanning(&mut reference, &n.text),
                    ItemKind::StepPatch(s) => patch_by_scanning(&mut reference, s),
                    _ => unreachable!(),
                };
                if !hit {
                    expected.push(item.span);
                }
                merged.merge(item, true, &mut diags);
            }
            let out = merged.finish();
            let ItemKind::Sequence(got) = &out[0].kind else {
                panic!("the sequence is still the first item")
            };
            assert_eq!(shape(got), shape(&reference), "round {round}");
            assert_eq!(diags.len(), expected.len(), "round {round}");
        }
    }
}
