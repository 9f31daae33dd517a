//! The compiler: resolves every name of a loaded ruleset, checks types,
//! checks tables for gaps and overlaps, attaches modifiers to the quantities
//! they change, and builds the phase graph. It reports every problem it finds
//! as a [`Diag`], never stopping at the first.

use crate::base::value::{Value, UNLIMITED};
use crate::compile::ir::*;
use crate::compile::phase_graph;
use crate::compile::tables;
use crate::front::diagnostic::Diag;
use crate::front::load::Loaded;
use crate::front::syntax::{self, ExprKind, ItemKind, Name, Span, Stmt};
use rustc_hash::FxHashMap as HashMap;

mod expr;
mod files;
mod hooks;
mod outcomes;
mod stmt;

/// What a global name refers to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Def {
    Die(Id),
    Effects(Id),
    Enum(Id),
    Variant(Id, u32),
    Class(Id),
    Group(Id),
    UnitType(Id),
    Side(Id),
    Option(Id),
    Quality(Id),
    Fact(Id),
    Define(Id),
    Table(Id),
    Quantity(Id),
    Modifier(Id),
    Procedure(Id),
    Decision(Id),
    Army(Id),
    Measure,
}

fn def_kind(d: Def) -> &'static str {
    match d {
        Def::Die(_) => "a die",
        Def::Effects(_) => "an effects block",
        Def::Enum(_) => "an enum",
        Def::Variant(..) => "an enum value",
        Def::Class(_) => "a class",
        Def::Group(_) => "a group",
        Def::UnitType(_) => "a unit type",
        Def::Side(_) => "a side",
        Def::Option(_) => "an option",
        Def::Quality(_) => "a quality",
        Def::Fact(_) => "a fact",
        Def::Define(_) => "a define",
        Def::Table(_) => "a table",
        Def::Quantity(_) => "a quantity",
        Def::Modifier(_) => "a modifier",
        Def::Procedure(_) => "a procedure",
        Def::Decision(_) => "a decision",
        Def::Army(_) => "an army list",
        Def::Measure => "a measure",
    }
}

/// Compile a loaded ruleset.
pub fn compile(loaded: &Loaded) -> Result<Ruleset, Vec<Diag>> {
    compile_with(loaded, &[])
}

/// Compile a loaded ruleset with some of its number options set
/// (`--option NAME=N`): as if a house rule overrode each.
pub fn compile_with(loaded: &Loaded, numbers: &[(String, i64)]) -> Result<Ruleset, Vec<Diag>> {
    compile_numbered(loaded, numbers, false)
}

/// [`compile_with`] for `muster odds`. A ruleset known to compile clean
/// (`known_clean`: the very same ruleset and numbers compiled without a
/// mistake before, as [`crate::front::cache::CheckedRecord`] records) is
/// compiled without the checks that can only find a mistake (loops and
/// depth of calls, notes of derived facts, `alternate`s and shuffles), and
/// without what the odds of a procedure never read: the decisions' choices,
/// the policies and the army lists (`rs.decisions` keep their names and
/// parameters, without a choice; `rs.policies` and `rs.armies` are empty;
/// the weighings of policies' `chance`/`expect`, numbered after all
/// others, are not made). Everything a procedure, define, table, quantity,
/// modifier, fact, deck, hook or the sequence compiles to is compiled as
/// [`compile_with`] compiles it: those come before, or never read, what is
/// left out. Warnings may be fewer; `muster odds` shows none of them.
/// Otherwise the ruleset is compiled whole, as [`compile_with`] does.
pub fn compile_for_odds(
    loaded: &Loaded,
    numbers: &[(String, i64)],
    known_clean: bool,
) -> Result<Ruleset, Vec<Diag>> {
    compile_numbered(loaded, numbers, known_clean)
}

/// [`compile_with`], or [`compile_for_odds`] when `known_clean`.
fn compile_numbered(
    loaded: &Loaded,
    numbers: &[(String, i64)],
    known_clean: bool,
) -> Result<Ruleset, Vec<Diag>> {
    let mut c = Compiler::new();
    c.numbers = numbers.to_vec();
    c.known_clean = known_clean;
    c.run(loaded);
    if c.diags.is_empty() {
        c.warn_if_empty();
        c.warn_unset_outcomes(&loaded.items);
        Ok(c.rs)
    } else {
        // The warnings too, after the errors: they may explain them.
        let mut diags = c.diags;
        diags.append(&mut c.rs.warnings);
        Err(diags)
    }
}

pub(crate) struct Compiler {
    pub rs: Ruleset,
    pub diags: Vec<Diag>,
    names: HashMap<String, (Def, Span)>,
    stat_names: HashMap<String, Id>,
    state_names: HashMap<String, Id>,
    side_state_names: HashMap<String, Id>,
    sym_ids: HashMap<String, u32>,
    /// Each decision's option names, for compiling policies.
    pub(crate) choice_names: HashMap<Id, Vec<String>>,
    /// Number options set from outside the ruleset (`--option NAME=N`).
    numbers: Vec<(String, i64)>,
    /// The ruleset compiled clean before, compiled for the odds of its
    /// procedures only (see [`compile_for_odds`]).
    known_clean: bool,
}

/// Locals of the function being compiled.
#[derive(Default)]
pub(crate) struct Scope {
    locals: Vec<(String, Ty, u16)>,
    next: u16,
    pub max: u16,
    dice: bool,
    /// In a state initialiser, `self.X` reads the stat X.
    stat_fields: bool,
    /// Names of `let`s whose value did not compile: their mistake is
    /// reported once, so a later use is not an unknown name as well.
    failed: Vec<String>,
}

impl Scope {
    pub fn new(dice: bool) -> Self {
        Scope {
            dice,
            ..Default::default()
        }
    }
    /// May expressions in this scope roll dice (a procedure's body)?
    pub(crate) fn rolls_dice(&self) -> bool {
        self.dice
    }
    pub fn bind(&mut self, name: &str, ty: Ty) -> u16 {
        let slot = self.next;
        self.locals.push((name.to_string(), ty, slot));
        self.next += 1;
        self.max = self.max.max(self.next);
        slot
    }
    pub(crate) fn lookup(&self, name: &str) -> Option<(Ty, u16)> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, t, s)| (t.clone(), *s))
    }
    pub(crate) fn mark(&self) -> (usize, u16) {
        (self.locals.len(), self.next)
    }
    pub(crate) fn reset(&mut self, m: (usize, u16)) {
        self.locals.truncate(m.0);
        self.next = m.1;
    }
}

/// The longest name (in characters) "did you mean" compares: real names
/// are far shorter, and comparing two names costs the product of their
/// lengths (two of 40,000 characters took seconds).
const MAX_SUGGEST_CHARS: usize = 128;

/// The value of an integer expression made only of numbers, `-` and
/// `+ - *` (`(0 - 2)`), if it is one: what the compiler can see of a
/// pool's size.
fn const_int(e: &Ex) -> Option<i64> {
    match e {
        Ex::Const(Value::Int(n)) => Some(*n),
        Ex::Neg(x) => const_int(x)?.checked_neg(),
        Ex::Bin(op, a, b) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match op {
                Bin::Add => a.checked_add(b),
                Bin::Sub => a.checked_sub(b),
                Bin::Mul => a.checked_mul(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A stat's value as the unit table (or a quality's `STAT = V`) writes it.
fn stat_value(v: syntax::StatValue) -> Value {
    match v {
        syntax::StatValue::None => Value::None,
        syntax::StatValue::Unlimited => Value::Int(UNLIMITED),
        syntax::StatValue::Int(n) => Value::Int(n),
    }
}

/// The closest known name, for "did you mean" help lines: the first of the
/// nearest within an edit distance of a third of its length (at least 2).
/// Bounded: names longer than [`MAX_SUGGEST_CHARS`] are not compared, nor
/// names whose length alone puts them too far, and a comparison stops as
/// soon as it cannot beat the best so far.
pub(crate) fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    if name.len() > 4 * MAX_SUGGEST_CHARS {
        return None;
    }
    let lname: Vec<char> = name.to_lowercase().chars().collect();
    if lname.len() > MAX_SUGGEST_CHARS {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.len() > 4 * MAX_SUGGEST_CHARS {
            continue;
        }
        let allowed = 2.max(c.len() / 3);
        // A later candidate replaces the best only when strictly nearer.
        let limit = match best {
            Some((0, _)) => break,
            Some((d, _)) => allowed.min(d - 1),
            None => allowed,
        };
        let lc: Vec<char> = c.to_lowercase().chars().collect();
        if lc.len() > MAX_SUGGEST_CHARS || lc.len().abs_diff(lname.len()) > limit {
            continue;
        }
        if let Some(d) = edit_distance_within(&lname, &lc, limit) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// The edit distance between `a` and `b` if it is at most `limit`; `None`
/// as soon as every way through exceeds it.
fn edit_distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        if cur.iter().all(|&d| d > limit) {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()]).filter(|&d| d <= limit)
}

type T = Option<Ty>;

/// A callable in the call graph: (kind, id, what it calls, name, where).
/// Builds the call of a fact, define, table or quantity.
type MakeCall = fn(Id, Vec<Ex>) -> Ex;

impl Compiler {
    /// A compiler that knows every name of an already compiled ruleset, to
    /// compile further expressions against it (queries, situation facts).
    pub fn from_ruleset(rs: &Ruleset) -> Self {
        let mut c = Compiler::new();
        c.rs = rs.clone();
        let sp = Span::default();
        let put = |c: &mut Compiler, n: &str, d: Def| {
            c.names.insert(n.to_string(), (d, sp));
        };
        for (i, x) in rs.dice.iter().enumerate() {
            put(&mut c, &x.name, Def::Die(i as Id));
        }
        for (i, e) in rs.enums.iter().enumerate() {
            put(&mut c, &e.name, Def::Enum(i as Id));
            for v in &e.variants {
                put(&mut c, &rs.symbols[*v as usize], Def::Variant(i as Id, *v));
            }
        }
        for (i, s) in rs.symbols.iter().enumerate() {
            c.sym_ids.insert(s.clone(), i as u32);
        }
        for (i, x) in rs.classes.iter().enumerate() {
            put(&mut c, x, Def::Class(i as Id));
        }
        for (i, x) in rs.groups.iter().enumerate() {
            put(&mut c, &x.0, Def::Group(i as Id));
        }
        for (i, x) in rs.unit_types.iter().enumerate() {
            put(&mut c, &x.name, Def::UnitType(i as Id));
        }
        for (i, x) in rs.sides.iter().enumerate() {
            put(&mut c, x, Def::Side(i as Id));
        }
        for (i, x) in rs.options.iter().enumerate() {
            put(&mut c, &x.name, Def::Option(i as Id));
        }
        for (i, x) in rs.qualities.iter().enumerate() {
            put(&mut c, &x.name, Def::Quality(i as Id));
        }
        for (i, x) in rs.facts.iter().enumerate() {
            put(&mut c, &x.name, Def::Fact(i as Id));
        }
        for (i, x) in rs.defines.iter().enumerate() {
            put(&mut c, &x.name, Def::Define(i as Id));
        }
        for (i, x) in rs.tables.iter().enumerate() {
            put(&mut c, &x.name, Def::Table(i as Id));
        }
        for (i, x) in rs.quantities.iter().enumerate() {
            put(&mut c, &x.func.name, Def::Quantity(i as Id));
        }
        for (i, x) in rs.procedures.iter().enumerate() {
            put(&mut c, &x.name, Def::Procedure(i as Id));
        }
        for (i, x) in rs.decisions.iter().enumerate() {
            put(&mut c, &x.name, Def::Decision(i as Id));
        }
        for (i, x) in rs.effects.iter().enumerate() {
            put(&mut c, &x.name, Def::Effects(i as Id));
        }
        for (i, x) in rs.stats.iter().enumerate() {
            c.stat_names.insert(x.clone(), i as Id);
        }
        for (i, x) in rs.states.iter().enumerate() {
            c.state_names.insert(x.name.clone(), i as Id);
        }
        for (i, x) in rs.side_states.iter().enumerate() {
            c.side_state_names.insert(x.name.clone(), i as Id);
        }
        c
    }

    /// Compile one expression with the given locals bound (no dice).
    pub fn query(
        &mut self,
        e: &syntax::Expr,
        locals: &[(String, Ty)],
    ) -> Result<(Ex, Ty, u16), Vec<Diag>> {
        let mut sc = Self::scope_for(locals, false);
        let r = self.expr(e, &mut sc, None);
        match r {
            Some((ex, ty)) if self.diags.is_empty() => Ok((ex, ty, sc.max)),
            _ => Err(std::mem::take(&mut self.diags)),
        }
    }

    fn new() -> Self {
        Compiler {
            rs: Ruleset {
                id: String::new(),
                title: String::new(),
                measure: None,
                symbols: Vec::new(),
                dice: Vec::new(),
                effects: Vec::new(),
                pools: Vec::new(),
                enums: Vec::new(),
                classes: Vec::new(),
                groups: Vec::new(),
                stats: Vec::new(),
                unit_types: Vec::new(),
                qualities: Vec::new(),
                default_quality: None,
                options: Vec::new(),
                sides: Vec::new(),
                states: Vec::new(),
                side_states: Vec::new(),
                facts: Vec::new(),
                defines: Vec::new(),
                tables: Vec::new(),
                quantities: Vec::new(),
                modifiers: Vec::new(),
                procedures: Vec::new(),
                decisions: Vec::new(),
                policies: Vec::new(),
                default_scenario: None,
                armies: Vec::new(),
                graph: None,
                hooks: Vec::new(),
                decks: Vec::new(),
                weighings: Vec::new(),
                warnings: Vec::new(),
            },
            diags: Vec::new(),
            names: HashMap::default(),
            stat_names: HashMap::default(),
            state_names: HashMap::default(),
            side_state_names: HashMap::default(),
            sym_ids: HashMap::default(),
            choice_names: HashMap::default(),
            numbers: Vec::new(),
            known_clean: false,
        }
    }

    pub fn err(&mut self, d: Diag) {
        self.diags.push(d);
    }

    /// A ruleset with nothing to run (no unit type, procedure or sequence:
    /// an empty file, or one that only imports) compiles, but `check`'s
    /// "ok" would hide that it is the wrong file or an unsaved one: a
    /// warning, not an error, since a file being started is not wrong.
    fn warn_if_empty(&mut self) {
        let rs = &self.rs;
        if rs.unit_types.is_empty() && rs.procedures.is_empty() && rs.graph.is_none() {
            self.warn(
                Diag::new(
                    "muster::empty_ruleset",
                    "the ruleset declares nothing to run: no unit type, procedure or sequence of play",
                )
                // The file named on the command line is read first.
                .at(Span::new(syntax::FileId(0), 0, 0), "in this file")
                .help("check that this is the file you meant (and that it is saved); docs/LANGUAGE.md shows a ruleset's parts"),
            );
        }
    }

    pub fn warn(&mut self, d: Diag) {
        self.rs.warnings.push(d.warning());
    }

    fn declare(&mut self, name: &Name, def: Def) -> bool {
        let key = name.text.clone();
        if let Some((old, span)) = self.names.get(&key) {
            let d = Diag::new(
                "muster::duplicate",
                format!("`{}` is defined twice", name.text),
            )
            .at(name.span, format!("defined again here as {}", def_kind(def)))
            .note(*span, format!("first defined here as {}", def_kind(*old)))
            .help("every unit, table, modifier, fact and procedure needs its own name; in a house rule write `override` to replace one");
            self.err(d);
            return false;
        }
        self.names.insert(key, (def, name.span));
        true
    }

    /// Declare a global name (false, with a diagnostic, if it is taken).
    pub(crate) fn declare_name(&mut self, name: &Name, def: Def) -> bool {
        self.declare(name, def)
    }

    pub(crate) fn lookup_def(&self, name: &str) -> Option<Def> {
        self.lookup(name)
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Def> {
        self.names.get(name).map(|x| x.0)
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(i) = self.sym_ids.get(s) {
            return *i;
        }
        let i = self.rs.symbols.len() as u32;
        self.rs.symbols.push(s.to_string());
        self.sym_ids.insert(s.to_string(), i);
        i
    }

    pub(crate) fn unknown(&mut self, name: &Name, what: &str, help_extra: Option<String>) {
        // Declared, but as something else: say what it is (the closest
        // name would be itself: "did you mean `recoils`?").
        if let Some((def, at)) = self.names.get(&name.text).copied() {
            let kind = def_kind(def);
            self.err(
                Diag::new(
                    "muster::wrong_kind",
                    format!("`{}` is {kind}, not a {what}", name.text),
                )
                .at(name.span, format!("a {what} is needed here"))
                .note(at, format!("declared here as {kind}"))
                .help(help_extra.unwrap_or_else(|| format!("name a {what} here"))),
            );
            return;
        }
        let cands: Vec<String> = self.names.keys().cloned().collect();
        let sugg = suggest(&name.text, cands.iter().map(|s| s.as_str()));
        let help = match (sugg, help_extra) {
            (Some(s), _) => {
                let shown = self
                    .names
                    .get(&s)
                    .map(|_| self.display_name(&s))
                    .unwrap_or(s);
                format!("did you mean `{shown}`?")
            }
            (None, Some(h)) => h,
            (None, None) => format!("declare it first, or check the spelling of this {what}"),
        };
        self.err(
            Diag::new(
                "muster::unknown_name",
                format!("unknown {what} `{}`", name.text),
            )
            .at(name.span, "not defined anywhere in this ruleset")
            .help(help),
        );
    }

    fn display_name(&self, lower: &str) -> String {
        for u in &self.rs.unit_types {
            if u.name.to_lowercase() == lower {
                return u.name.clone();
            }
        }
        lower.to_string()
    }

    pub(crate) fn resolve_ty(&mut self, n: &Name) -> T {
        match n.text.as_str() {
            "int" => Some(Ty::Int),
            "bool" => Some(Ty::Bool),
            "unit" => Some(Ty::Unit),
            "side" => Some(Ty::Side),
            _ => match self.lookup(&n.text) {
                Some(Def::Enum(e)) => Some(Ty::Enum(e)),
                _ if crate::compile::rolls::named_ty(self, &n.text).is_some() => {
                    crate::compile::rolls::named_ty(self, &n.text)
                }
                _ => {
                    self.err(
                        Diag::new("muster::unknown_type", format!("unknown type `{}`", n.text))
                            .at(n.span, "not a type")
                            .help("types are int, bool, unit, side, dice, or the name of an enum or an effects block"),
                    );
                    None
                }
            },
        }
    }

    // ------------------------------------------------------------ the passes

    fn run(&mut self, loaded: &Loaded) {
        if let Some(h) = &loaded.header {
            self.rs.id = h.id.text.clone();
            self.rs.title = h.title.clone().unwrap_or_else(|| h.id.text.clone());
        }
        let items = &loaded.items;
        // Pass 1: vocabulary.
        for it in items {
            match &it.kind {
                ItemKind::Measure(n, _) => {
                    self.rs.measure = Some(n.text.clone());
                    self.declare(n, Def::Measure);
                }
                ItemKind::Enum(n, vs) => {
                    let id = self.rs.enums.len() as Id;
                    if self.declare(n, Def::Enum(id)) {
                        let mut variants = Vec::new();
                        for v in vs {
                            let s = self.intern(&v.text);
                            if self.declare(v, Def::Variant(id, s)) {
                                variants.push(s);
                            }
                        }
                        self.rs.enums.push(EnumDef {
                            name: n.text.clone(),
                            variants,
                        });
                    }
                }
                ItemKind::Class(ns) => {
                    for n in ns {
                        let id = self.rs.classes.len() as Id;
                        if self.declare(n, Def::Class(id)) {
                            self.rs.classes.push(n.text.clone());
                        }
                    }
                }
                ItemKind::Stat(ns) => {
                    for n in ns {
                        if self.stat_names.contains_key(&n.text) {
                            self.err(
                                Diag::new(
                                    "muster::duplicate",
                                    format!("stat `{}` is declared twice", n.text),
                                )
                                .at(n.span, "declared again here")
                                .help("declare each stat once"),
                            );
                            continue;
                        }
                        self.stat_names
                            .insert(n.text.clone(), self.rs.stats.len() as Id);
                        self.rs.stats.push(n.text.clone());
                    }
                }
                ItemKind::Sides(ns) => {
                    for n in ns {
                        let id = self.rs.sides.len() as Id;
                        if self.declare(n, Def::Side(id)) {
                            self.rs.sides.push(n.text.clone());
                        }
                    }
                }
                ItemKind::Option(o) => {
                    let id = self.rs.options.len() as Id;
                    if self.declare(&o.name, Def::Option(id)) {
                        self.rs.options.push(OptionDef {
                            name: o.name.text.clone(),
                            title: o.title.clone(),
                            on: o.on,
                            number: o.number,
                        });
                    }
                }
                _ => {}
            }
        }
        self.set_numbers();
        // Dice after the options (a face's count may be a number option),
        // then how their faces read.
        for it in items {
            if let ItemKind::Die(d) = &it.kind {
                self.declare_die(d);
            }
        }
        let effects = crate::compile::rolls::declare_effects(self, items);
        // Pass 2: unit types, then groups and qualities (which name them).
        for it in items {
            if let ItemKind::Units(b) = &it.kind {
                self.units(b);
            }
        }
        for it in items {
            match &it.kind {
                ItemKind::Group(n, members) => {
                    let set = self.type_set(members);
                    let id = self.rs.groups.len() as Id;
                    if self.declare(n, Def::Group(id)) {
                        self.rs
                            .groups
                            .push((n.text.clone(), set.unwrap_or_default()));
                    }
                }
                ItemKind::Quality(q) => self.quality(q),
                _ => {}
            }
        }
        // Pass 3: signatures of everything that can be called.
        let mut bodies = Vec::new();
        for it in items {
            match &it.kind {
                ItemKind::State(s) => {
                    let ty = self.resolve_ty(&s.ty).unwrap_or(Ty::Int);
                    let (map, list) = if s.per_side {
                        (&mut self.side_state_names, &mut self.rs.side_states)
                    } else {
                        (&mut self.state_names, &mut self.rs.states)
                    };
                    if map.contains_key(&s.name.text) {
                        self.err(
                            Diag::new(
                                "muster::duplicate",
                                format!("state `{}` is declared twice", s.name.text),
                            )
                            .at(s.name.span, "declared again here")
                            .help("declare each state once"),
                        );
                        continue;
                    }
                    map.insert(s.name.text.clone(), list.len() as Id);
                    list.push(StateDef {
                        name: s.name.text.clone(),
                        ty: ty.clone(),
                        init: Func {
                            name: s.name.text.clone(),
                            params: vec![],
                            ty,
                            slots: 1,
                            body: Ex::Const(Value::None),
                            span: s.name.span,
                        },
                        each_turn: s.each_turn,
                    });
                }
                ItemKind::Fact(f) => {
                    let (params, param_names): (Vec<Ty>, Vec<Option<String>>) = f
                        .params
                        .iter()
                        .filter_map(|p| {
                            let name = p.0.as_ref().map(|n| n.text.clone());
                            self.resolve_ty(&p.1).map(|t| (t, name))
                        })
                        .unzip();
                    let ty = self.resolve_ty(&f.ty).unwrap_or(Ty::Bool);
                    let id = self.rs.facts.len() as Id;
                    if self.declare(&f.name, Def::Fact(id)) {
                        self.rs.facts.push(FactDef {
                            name: f.name.text.clone(),
                            params,
                            ty,
                            default: None,
                            each_turn: f.each_turn,
                            battle: None,
                            hook: None,
                            param_names,
                            span: it.span,
                        });
                    }
                }
                ItemKind::Define(d) => {
                    let id = self.rs.defines.len() as Id;
                    if let Some(f) = self.signature(&d.name, &d.params, &d.ty, Def::Define(id)) {
                        self.rs.defines.push(f);
                        bodies.push(it);
                    }
                }
                ItemKind::Table(t) => {
                    let id = self.rs.tables.len() as Id;
                    if let Some(f) = self.signature(&t.name, &t.params, &t.ty, Def::Table(id)) {
                        self.rs.tables.push(f);
                        bodies.push(it);
                    }
                }
                ItemKind::Quantity(q) => {
                    let id = self.rs.quantities.len() as Id;
                    if let Some(f) = self.signature(&q.name, &q.params, &q.ty, Def::Quantity(id)) {
                        if f.ty != Ty::Int {
                            self.err(
                                Diag::new(
                                    "muster::type",
                                    format!("quantity `{}` must be an int", q.name.text),
                                )
                                .at(q.ty.span, "not int")
                                .help(
                                    "quantities are numbers that modifiers add to or subtract from",
                                ),
                            );
                        }
                        if let (Some(lo), Some(hi)) = (q.min, q.max) {
                            if lo > hi {
                                self.err(
                                    Diag::new("muster::quantity_bounds", format!("quantity `{}` has min {lo} above max {hi}", q.name.text))
                                        .at(q.name.span, "no value fits")
                                        .help("write the smaller bound after `min` and the larger after `max`"),
                                );
                            }
                        }
                        self.rs.quantities.push(QuantityDef {
                            func: f,
                            min: q.min,
                            max: q.max,
                            modifiers: Vec::new(),
                        });
                        bodies.push(it);
                    }
                }
                ItemKind::Procedure(p) => {
                    let id = self.rs.procedures.len() as Id;
                    if self.declare(&p.name, Def::Procedure(id)) {
                        let params = p
                            .params
                            .iter()
                            .map(|x| {
                                (
                                    x.name.text.clone(),
                                    self.resolve_ty(&x.ty).unwrap_or(Ty::Int),
                                )
                            })
                            .collect();
                        let mut outcomes = Vec::new();
                        for o in &p.outcomes {
                            let ty = self.outcome_ty(&o.ty);
                            if outcomes.iter().any(|x: &OutcomeDef| x.name == o.name.text) {
                                self.err(
                                    Diag::new(
                                        "muster::duplicate",
                                        format!("outcome `{}` is declared twice", o.name.text),
                                    )
                                    .at(o.name.span, "declared again")
                                    .help("each outcome needs its own name"),
                                );
                            }
                            outcomes.push(OutcomeDef {
                                name: o.name.text.clone(),
                                ty,
                            });
                        }
                        self.rs.procedures.push(ProcDef {
                            name: p.name.text.clone(),
                            params,
                            outcomes,
                            slots: 0,
                            body: Vec::new(),
                            span: p.name.span,
                            names: Vec::new(),
                            hooks: ProcHooks::default(),
                        });
                        bodies.push(it);
                    }
                }
                ItemKind::Decision(d) => {
                    let id = self.rs.decisions.len() as Id;
                    if self.declare(&d.name, Def::Decision(id)) {
                        let params = d
                            .params
                            .iter()
                            .map(|x| {
                                (
                                    x.name.text.clone(),
                                    self.resolve_ty(&x.ty).unwrap_or(Ty::Int),
                                )
                            })
                            .collect();
                        self.rs.decisions.push(DecisionDef {
                            name: d.name.text.clone(),
                            params,
                            doc: d.doc.clone(),
                            choice: None,
                        });
                    }
                }
                ItemKind::Modifier(m) => {
                    let id = self.rs.modifiers.len() as Id;
                    if self.declare(&m.name, Def::Modifier(id)) {
                        bodies.push(it);
                        // Placeholder until its body compiles.
                        self.rs.modifiers.push(ModifierDef {
                            name: m.name.text.clone(),
                            source: m.source.clone(),
                            quantity: 0,
                            op: ModOp::Add,
                            amount: Ex::Const(Value::Int(0)),
                            when: None,
                            span: m.name.span,
                        });
                    }
                }
                _ => {}
            }
        }
        // What each face of a roll yields (its conditions may name anything
        // declared by now, to be told what they may not read).
        crate::compile::rolls::effects_rows(self, items, &effects);
        let hooks = self.hook_points(items);
        // Pass 4: bodies.
        for it in items {
            match &it.kind {
                ItemKind::State(s) => self.state_init(s),
                ItemKind::Fact(f) => {
                    self.fact_default(f);
                    self.fact_in_battle(f);
                }
                ItemKind::DefaultScenario(path, span) => {
                    self.rs.default_scenario = Some((path.clone(), *span));
                }
                _ => {}
            }
        }
        let (mut di, mut ti, mut qi, mut pi, mut mi) = (0, 0, 0, 0, 0);
        for it in bodies {
            match &it.kind {
                ItemKind::Define(d) => {
                    self.define_body(di, d);
                    di += 1;
                }
                ItemKind::Table(t) => {
                    self.table_body(ti, t);
                    ti += 1;
                }
                ItemKind::Quantity(q) => {
                    self.quantity_body(qi, q);
                    qi += 1;
                }
                ItemKind::Procedure(p) => {
                    self.procedure_body(pi, p);
                    pi += 1;
                }
                ItemKind::Modifier(m) => {
                    crate::compile::modifiers::compile_modifier(self, mi, m);
                    mi += 1;
                }
                _ => {}
            }
        }
        // Decks before decisions: a `pick` may pay with a deck's cards.
        crate::compile::decks::compile(self, items);
        // For the odds of a procedure only (a ruleset known to compile
        // clean), the choices, policies and army lists are left out: nothing
        // compiled before reads them, nor does anything the odds run.
        let whole = !self.known_clean;
        if whole {
            for it in items {
                if let ItemKind::Decision(d) = &it.kind {
                    crate::compile::decisions::compile_choice(self, d);
                }
            }
            for it in items {
                if let ItemKind::Policy(p) = &it.kind {
                    crate::compile::decisions::compile_policy(self, p, it.span);
                }
            }
        }
        let mut sequence_failed = false;
        for it in items {
            match &it.kind {
                ItemKind::Army(a) if whole => self.army(a),
                ItemKind::Sequence(s) => {
                    if self.rs.graph.is_some() {
                        self.err(
                            Diag::new("muster::duplicate", "the sequence of play is defined twice")
                                .at(it.span, "second sequence")
                                .help("a ruleset has one sequence; a house rule writes `override sequence { ... }`"),
                        );
                        continue;
                    }
                    let g = phase_graph::build(self, s);
                    sequence_failed = g.is_none();
                    self.rs.graph = g;
                }
                _ => {}
            }
        }
        // Which decks are shuffled is known only from a sequence that compiled.
        // Checks that only ever add a mistake: none to find in a ruleset
        // known to compile clean (and `alternate` reads the choices).
        if !sequence_failed && whole {
            crate::compile::decks::check_shuffled(self);
            crate::compile::hands::check_alternates(self);
        }
        if whole {
            crate::compile::call_graph::check(self);
        }
        self.hook_scripts(items, hooks);
        if whole {
            self.check_notes_of_derived_facts();
        }
    }

    /// A fact a hook derives cannot also be noted (the hook's value is the
    /// fact's everywhere).
    fn check_notes_of_derived_facts(&mut self) {
        fn notes(body: &[St], out: &mut Vec<(Id, Span)>) {
            for st in body {
                match st {
                    St::Note(f, _, _, span) => out.push((*f, *span)),
                    St::If(_, a, b, _) => {
                        notes(a, out);
                        notes(b, out);
                    }
                    St::For(_, _, _, a, _) => notes(a, out),
                    _ => {}
                }
            }
        }
        let mut found = Vec::new();
        for p in &self.rs.procedures {
            notes(&p.body, &mut found);
        }
        for (f, span) in found {
            let fd = &self.rs.facts[f as usize];
            if let Some(h) = fd.hook {
                let msg = format!(
                    "fact `{}` is derived by hook `{}`, so it cannot be noted",
                    fd.name, self.rs.hooks[h as usize].name
                );
                self.err(Diag::new("muster::note", msg).at(span, "noted here").help(
                    "note facts that procedures decide; a derived fact's value is its hook's",
                ));
            }
        }
    }

    fn declare_die(&mut self, d: &syntax::Die) {
        let faces = match &d.faces {
            syntax::DieFaces::Range(a, b) => {
                if b < a || b - a > 1000 {
                    self.err(
                        Diag::new("muster::die", format!("die `{}` has no faces", d.name.text))
                            .at(d.name.span, "empty or huge range")
                            .help("write the faces as LOW..HIGH, e.g. `die d6 = 1..6`"),
                    );
                    return;
                }
                (*a..=*b).map(|v| (v.to_string(), v)).collect()
            }
            syntax::DieFaces::Named(fs) => {
                let mut v = Vec::new();
                for f in fs {
                    let Some(count) = self.face_count(f) else {
                        continue;
                    };
                    if count == 0 && f.count_option.is_some() {
                        // An option may leave a face off the die.
                        continue;
                    }
                    if count == 0 {
                        self.err(
                            Diag::new(
                                "muster::die",
                                format!("face `{}` appears on no side of the die", f.name.text),
                            )
                            .at(f.name.span, "x0")
                            .help("give each face a count of at least 1, or leave it out"),
                        );
                    }
                    for _ in 0..count {
                        v.push((f.name.text.clone(), f.value));
                    }
                }
                if v.is_empty() {
                    self.err(
                        Diag::new("muster::die", format!("die `{}` has no faces", d.name.text))
                            .at(d.name.span, "every face is counted 0")
                            .help("give some face a count of at least 1"),
                    );
                    return;
                }
                v
            }
        };
        let id = self.rs.dice.len() as Id;
        if self.declare(&d.name, Def::Die(id)) {
            self.rs.dice.push(DieDef {
                name: d.name.text.clone(),
                faces,
            });
        }
    }

    /// How many sides of a die show face `f`: its count, or the value of the
    /// number option it names (from 0 to 1,000).
    fn face_count(&mut self, f: &syntax::Face) -> Option<u32> {
        let Some(o) = &f.count_option else {
            return Some(f.count);
        };
        let found = self.rs.options.iter().find(|x| x.name == o.text);
        match found.map(|x| x.number) {
            Some(Some(n)) if (0..=1000).contains(&n) => Some(n as u32),
            Some(Some(n)) => {
                self.err(
                    Diag::new(
                        "muster::die",
                        format!("option `{}` counts {n} faces of `{}`", o.text, f.name.text),
                    )
                    .at(o.span, "from 0 to 1,000 faces")
                    .help(format!("set `{}` to a count from 0 to 1000", o.text)),
                );
                None
            }
            Some(None) => {
                self.err(
                    Diag::new(
                        "muster::die",
                        format!("option `{}` is a switch, not a number", o.text),
                    )
                    .at(o.span, "an on/off option")
                    .help(format!(
                        "declare the count as a number: `option {} = 2`",
                        o.text
                    )),
                );
                None
            }
            None => {
                self.unknown(o, "option", Some("declare the count first: `option red_blank \"blank faces of a red die\" = 1`".into()));
                None
            }
        }
    }

    /// Give the number options set from outside (`--option NAME=N`) their
    /// values; a name that is no number option is a diagnostic.
    fn set_numbers(&mut self) {
        for (name, v) in std::mem::take(&mut self.numbers) {
            let names: Vec<String> = self
                .rs
                .options
                .iter()
                .filter(|o| o.number.is_some())
                .map(|o| o.name.clone())
                .collect();
            match self.rs.options.iter_mut().find(|o| o.name == name) {
                Some(o) if o.number.is_some() => o.number = Some(v),
                Some(_) => self.err(
                    Diag::new(
                        "muster::option",
                        format!("option `{name}` is a switch, not a number"),
                    )
                    .help(format!(
                        "switch it with `--option {name}=on` or `--option {name}=off`"
                    )),
                ),
                None => self.err(
                    Diag::new(
                        "muster::option",
                        format!("the ruleset has no number option `{name}`"),
                    )
                    .help(if names.is_empty() {
                        "it declares no number options (`option NAME = N`)".to_string()
                    } else {
                        format!("its number options: {}", names.join(", "))
                    }),
                ),
            }
        }
    }

    fn units(&mut self, b: &syntax::UnitsBlock) {
        let mut cols = Vec::new();
        for c in &b.columns {
            match self.stat_names.get(&c.text) {
                Some(i) => cols.push(Some(*i)),
                None => {
                    let sugg = suggest(&c.text, self.rs.stats.iter().map(|s| s.as_str()));
                    self.err(
                        Diag::new("muster::unknown_stat", format!("unknown stat `{}`", c.text))
                            .at(c.span, "not declared with `stat`")
                            .help(match sugg {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => format!("declare it: `stat {}`", c.text),
                            }),
                    );
                    cols.push(None);
                }
            }
        }
        for row in &b.rows {
            if row.values.len() != b.columns.len() {
                self.err(
                    Diag::new(
                        "muster::unit_row",
                        format!(
                            "unit `{}` has {} value{} but the table has {} column{}",
                            row.name.text,
                            row.values.len(),
                            if row.values.len() == 1 { "" } else { "s" },
                            b.columns.len(),
                            if b.columns.len() == 1 { "" } else { "s" }
                        ),
                    )
                    .at(row.span, "wrong number of values")
                    .help(format!(
                        "give one value per column ({}); write `none` where the unit has no such stat",
                        b.columns.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ")
                    )),
                );
                continue;
            }
            let mut classes = vec![false; self.rs.classes.len()];
            for c in &row.classes {
                match self.lookup(&c.text) {
                    Some(Def::Class(i)) => classes[i as usize] = true,
                    _ => self.unknown(c, "class", Some(format!("declare it: `class {}`", c.text))),
                }
            }
            let mut stats = vec![Value::None; self.rs.stats.len()];
            for (col, (v, _)) in cols.iter().zip(&row.values) {
                if let Some(i) = col {
                    stats[*i as usize] = stat_value(*v);
                }
            }
            let id = self.rs.unit_types.len() as Id;
            if self.declare(&row.name, Def::UnitType(id)) {
                self.rs.unit_types.push(UnitType {
                    name: row.name.text.clone(),
                    classes,
                    stats,
                    span: row.span,
                });
            }
        }
    }

    /// The unit types named by a list of types, classes and groups.
    fn type_set(&mut self, names: &[Name]) -> Option<Vec<bool>> {
        let mut set = vec![false; self.rs.unit_types.len()];
        let mut ok = true;
        for n in names {
            match self.lookup(&n.text) {
                Some(Def::UnitType(i)) => set[i as usize] = true,
                Some(Def::Class(c)) => {
                    for (i, u) in self.rs.unit_types.iter().enumerate() {
                        if u.classes[c as usize] {
                            set[i] = true;
                        }
                    }
                }
                Some(Def::Group(g)) => {
                    for (i, b) in self.rs.groups[g as usize].1.iter().enumerate() {
                        if *b {
                            set[i] = true;
                        }
                    }
                }
                Some(Def::Quality(_)) => {
                    // A quality among types: `is` tests qualities only on
                    // their own.
                    self.err(
                        Diag::new(
                            "muster::type_mismatch",
                            format!("`{}` is a quality, and qualities cannot be mixed with unit types, classes or groups in one `is`", n.text),
                        )
                        .at(n.span, "a quality")
                        .help(format!("test it on its own: `u is {} or u is ...`", n.text)),
                    );
                    ok = false;
                }
                _ => {
                    self.unknown(n, "unit type, class or group", None);
                    ok = false;
                }
            }
        }
        ok.then_some(set)
    }

    /// `quality NAME { ... }`: each line adjusts a stat (`resolve +1`),
    /// sets it (`resolve = 1`) or prices the quality (`points 3`); a stat
    /// (or `points`) is named once.
    fn quality(&mut self, q: &syntax::Quality) {
        use syntax::QualityChange::{By, To};
        let mut adjust = Vec::new();
        let mut set = Vec::new();
        let mut points = None;
        let mut seen: Vec<&Name> = Vec::new();
        for line in &q.lines {
            let n = &line.name;
            if let Some(first) = seen.iter().find(|f| f.text == n.text) {
                self.err(
                    Diag::new(
                        "muster::quality",
                        format!("quality `{}` names `{}` twice", q.name.text, n.text),
                    )
                    .at(n.span, "named again here")
                    .note(first.span, "first named here")
                    .help(format!(
                        "give `{}` one line: `{} +N` adjusts it, `{} = N` sets it",
                        n.text, n.text, n.text
                    )),
                );
                continue;
            }
            seen.push(n);
            if let To { plus: true, .. } = line.change {
                self.err(
                    Diag::new(
                        "muster::quality",
                        format!(
                            "quality `{}` both sets and adjusts `{}`",
                            q.name.text, n.text
                        ),
                    )
                    .at(line.value_span, "`=` sets the value, `+` adjusts it")
                    .help(format!(
                        "write `{} = N` for a value whatever the unit type's, or `{} +N` to add to it",
                        n.text, n.text
                    )),
                );
                continue;
            }
            if n.text == "points" {
                match line.change {
                    By(v)
                    | To {
                        value: syntax::StatValue::Int(v),
                        ..
                    } => points = Some(v),
                    To { .. } => self.err(
                        Diag::new(
                            "muster::quality",
                            format!("quality `{}` has no number of points", q.name.text),
                        )
                        .at(line.value_span, "not a number")
                        .help("write `points N`: what one unit of the quality costs"),
                    ),
                }
                continue;
            }
            let Some(i) = self.stat_names.get(&n.text).copied() else {
                let sugg = suggest(&n.text, self.rs.stats.iter().map(|s| s.as_str()));
                let verb = if matches!(line.change, By(_)) {
                    "adjusts"
                } else {
                    "sets"
                };
                self.err(
                    Diag::new(
                        "muster::unknown_stat",
                        format!("quality `{}` {verb} unknown stat `{}`", q.name.text, n.text),
                    )
                    .at(n.span, "not a stat")
                    .help(match sugg {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "a quality line is `STAT +N`, `STAT = N` or `points N`".into(),
                    }),
                );
                continue;
            };
            match line.change {
                By(d) => adjust.push((i, d)),
                To { value, .. } => set.push((i, stat_value(value))),
            }
        }
        let id = self.rs.qualities.len() as Id;
        if self.declare(&q.name, Def::Quality(id)) {
            if q.default {
                self.rs.default_quality = Some(id);
            }
            self.rs.qualities.push(QualityDef {
                name: q.name.text.clone(),
                adjust,
                set,
                points,
            });
        }
    }

    fn outcome_ty(&mut self, names: &[Name]) -> Ty {
        if names.len() == 1 {
            match names[0].text.as_str() {
                "int" => return Ty::Int,
                "bool" => return Ty::Bool,
                t => {
                    if let Some(Def::Enum(e)) = self.lookup(t) {
                        return Ty::Enum(e);
                    }
                    if let Some(ty) = crate::compile::rolls::named_ty(self, t) {
                        return ty;
                    }
                }
            }
        }
        Ty::Symbols(names.iter().map(|n| self.intern(&n.text)).collect())
    }

    fn signature(
        &mut self,
        name: &Name,
        params: &[syntax::Param],
        ty: &Name,
        def: Def,
    ) -> Option<Func> {
        let ty = self.resolve_ty(ty);
        let params: Vec<(String, Ty)> = params
            .iter()
            .map(|p| {
                (
                    p.name.text.clone(),
                    self.resolve_ty(&p.ty).unwrap_or(Ty::Int),
                )
            })
            .collect();
        if !self.declare(name, def) {
            return None;
        }
        Some(Func {
            name: name.text.clone(),
            slots: params.len() as u16,
            params,
            ty: ty.unwrap_or(Ty::Int),
            body: Ex::Const(Value::None),
            span: name.span,
        })
    }

    pub(crate) fn scope_for(params: &[(String, Ty)], dice: bool) -> Scope {
        let mut s = Scope::new(dice);
        for (n, t) in params {
            s.bind(n, t.clone());
        }
        s
    }

    fn state_init(&mut self, s: &syntax::StateDecl) {
        let (list_is_side, id) = if s.per_side {
            (true, self.side_state_names.get(&s.name.text).copied())
        } else {
            (false, self.state_names.get(&s.name.text).copied())
        };
        let Some(id) = id else { return };
        let mut scope = Scope::new(false);
        scope.bind("self", if list_is_side { Ty::Side } else { Ty::Unit });
        scope.stat_fields = true;
        let want = if list_is_side {
            self.rs.side_states[id as usize].ty.clone()
        } else {
            self.rs.states[id as usize].ty.clone()
        };
        let Some((ex, ty)) = self.expr(&s.init, &mut scope, Some(&want)) else {
            return;
        };
        self.expect(&ty, &want, s.init.span, "the state's initial value");
        let slots = scope.max;
        let def = if list_is_side {
            &mut self.rs.side_states[id as usize]
        } else {
            &mut self.rs.states[id as usize]
        };
        def.init.body = ex;
        def.init.slots = slots;
    }

    fn fact_default(&mut self, f: &syntax::FactDecl) {
        let Some(e) = &f.default else { return };
        let Some(Def::Fact(id)) = self.lookup(&f.name.text) else {
            return;
        };
        let want = self.rs.facts[id as usize].ty.clone();
        let mut scope = Scope::new(false);
        let Some((ex, ty)) = self.expr(e, &mut scope, Some(&want)) else {
            return;
        };
        self.expect(&ty, &want, e.span, "the fact's default");
        match ex {
            Ex::Const(v) => self.rs.facts[id as usize].default = Some(v),
            _ => self.err(
                Diag::new(
                    "muster::fact_default",
                    format!("the default of fact `{}` is not a constant", f.name.text),
                )
                .at(e.span, "must be a literal value")
                .help("write a literal default such as `= false`, `= 0` or `= to_front`"),
            ),
        }
    }

    /// A fact's `in battle:` derivation, over its named parameters.
    fn fact_in_battle(&mut self, f: &syntax::FactDecl) {
        let Some(e) = &f.battle else { return };
        let Some(Def::Fact(id)) = self.lookup(&f.name.text) else {
            return;
        };
        let def = self.rs.facts[id as usize].clone();
        let mut params = Vec::new();
        for ((n, t), ty) in f.params.iter().zip(&def.params) {
            let Some(n) = n else {
                self.err(
                    Diag::new(
                        "muster::fact_params",
                        format!(
                            "fact `{}` is derived in battle but does not name its parameters",
                            f.name.text
                        ),
                    )
                    .at(t.span, "a parameter without a name")
                    .help(format!(
                        "name each parameter, e.g. `fact {}(a: {}, ...)`",
                        f.name.text, t.text
                    )),
                );
                return;
            };
            params.push((n.text.clone(), ty.clone()));
        }
        let mut scope = Self::scope_for(&params, false);
        let Some((ex, ty)) = self.expr(e, &mut scope, Some(&def.ty)) else {
            return;
        };
        self.expect(&ty, &def.ty, e.span, "the fact's derivation");
        self.rs.facts[id as usize].battle = Some(Func {
            name: f.name.text.clone(),
            params,
            ty,
            slots: scope.max,
            body: ex,
            span: e.span,
        });
    }

    fn define_body(&mut self, id: usize, d: &syntax::Define) {
        let f = &self.rs.defines[id];
        let (params, want) = (f.params.clone(), f.ty.clone());
        let mut scope = Self::scope_for(&params, false);
        if let Some((ex, ty)) = self.expr(&d.body, &mut scope, Some(&want)) {
            self.expect(&ty, &want, d.body.span, "the define's body");
            self.rs.defines[id].body = ex;
            self.rs.defines[id].slots = scope.max;
        }
    }

    fn quantity_body(&mut self, id: usize, q: &syntax::Quantity) {
        let f = &self.rs.quantities[id].func;
        let params = f.params.clone();
        let mut scope = Self::scope_for(&params, false);
        if let Some((ex, ty)) = self.expr(&q.body, &mut scope, Some(&Ty::Int)) {
            self.expect(&ty, &Ty::Int, q.body.span, "the quantity's value");
            self.rs.quantities[id].func.body = ex;
            let s = self.rs.quantities[id].func.slots.max(scope.max);
            self.rs.quantities[id].func.slots = s;
        }
    }

    fn table_body(&mut self, id: usize, t: &syntax::Table) {
        let f = &self.rs.tables[id];
        let (params, want) = (f.params.clone(), f.ty.clone());
        let mut scope = Self::scope_for(&params, false);
        // Rows compile to a chain of `if`s a row deep: one longer than any
        // expression may go is refused before it is built.
        if t.rows.len() > crate::front::nesting::MAX_EXPANDED_DEPTH {
            self.err(
                Diag::new(
                    "muster::nesting",
                    format!(
                        "table `{}` has {} rows, more than the {} a table may have",
                        t.name.text,
                        t.rows.len(),
                        crate::front::nesting::MAX_EXPANDED_DEPTH
                    ),
                )
                .at(t.name.span, "too many rows")
                .help("rows are tried in order, a level each; split the table in two, the second its first's `otherwise`"),
            );
            return;
        }
        let body = tables::compile_table(self, t, &params, &want, &mut scope);
        if let Some(b) = body {
            self.rs.tables[id].body = b;
        }
        self.rs.tables[id].slots = scope.max;
    }

    fn procedure_body(&mut self, id: usize, p: &syntax::Procedure) {
        let params = self.rs.procedures[id].params.clone();
        let mut scope = Self::scope_for(&params, true);
        let outcomes = self.rs.procedures[id].outcomes.clone();
        // The top-level block, by hand: an `after` hook sees what it binds.
        let mut body = Vec::new();
        for s in &p.body {
            if let Some(st) = self.stmt(s, &mut scope, &outcomes) {
                body.push(st);
            }
        }
        self.rs.procedures[id].names = scope
            .locals
            .iter()
            .map(|(n, _, slot)| (n.clone(), *slot))
            .collect();
        self.rs.procedures[id].body = body;
        self.rs.procedures[id].slots = scope.max;
    }

    /// The define an army list's `price` or `require` names: one parameter
    /// of type `param`, giving a number (`price`) or a bool (`require`).
    fn army_define(&mut self, n: &syntax::Name, param: Ty, rule: &str, gives: &str) -> Option<Id> {
        let want_bool = rule == "require";
        let ok = match self.lookup(&n.text) {
            Some(Def::Define(id)) => {
                let f = &self.rs.defines[id as usize];
                let ty_ok = if want_bool {
                    f.ty == Ty::Bool
                } else {
                    f.ty == Ty::Int
                };
                (f.params.len() == 1 && f.params[0].1 == param && ty_ok).then_some(id)
            }
            _ => None,
        };
        if ok.is_none() {
            let of = if param == Ty::Unit {
                "u: unit"
            } else {
                "s: side"
            };
            self.err(
                Diag::new(
                    "muster::army_list",
                    format!(
                        "`{rule} {}` needs a define of one {} giving {gives}",
                        n.text,
                        if param == Ty::Unit { "unit" } else { "side" }
                    ),
                )
                .at(n.span, "not such a define")
                .help(format!(
                    "write `define {}({of}): {} = ...`",
                    n.text,
                    if want_bool { "bool" } else { "int" }
                )),
            );
        }
        ok
    }

    fn army(&mut self, a: &syntax::Army) {
        let mut def = ArmyDef {
            name: a.name.text.clone(),
            units: None,
            points: None,
            per_command_units: None,
            limits: Vec::new(),
            price: None,
            requires: Vec::new(),
            same: Vec::new(),
            always: Vec::new(),
        };
        for r in &a.rules {
            if r.per_command
                && matches!(
                    r.kind,
                    syntax::ArmyRuleKind::Same { .. } | syntax::ArmyRuleKind::Always(..)
                )
            {
                self.err(
                    Diag::new("muster::army_list", "this rule takes no `per command:`")
                        .at(r.span, "not a rule of one command")
                        .help("`same ... for every side` compares whole armies, and `always` holds of every unit wherever it is: remove `per command:`"),
                );
                continue;
            }
            match &r.kind {
                syntax::ArmyRuleKind::Same { units } => def.same.push((*units, r.span)),
                syntax::ArmyRuleKind::Always(types, qualities) => {
                    if let Some(a) = self.army_always(types, qualities, r.span) {
                        def.always.push(a);
                    }
                }
                syntax::ArmyRuleKind::Price(n) => {
                    def.price = self.army_define(n, Ty::Unit, "price", "a number");
                }
                syntax::ArmyRuleKind::Require(n, why) => {
                    if let Some(id) = self.army_define(n, Ty::Side, "require", "true or false") {
                        def.requires.push((id, why.clone(), r.span));
                    }
                }
                syntax::ArmyRuleKind::Units(lo, hi) => {
                    if r.per_command {
                        def.per_command_units = Some((*lo, *hi))
                    } else {
                        def.units = Some((*lo, *hi))
                    }
                }
                syntax::ArmyRuleKind::Points(lo, hi) => def.points = Some((*lo, *hi)),
                syntax::ArmyRuleKind::Limit(n, kind, v) => {
                    let matches = match self.lookup(&n.text) {
                        Some(Def::Quality(q)) => Some(ArmyMatch::Quality(q)),
                        _ => self.type_set(std::slice::from_ref(n)).map(ArmyMatch::Types),
                    };
                    if let Some(m) = matches {
                        def.limits.push(ArmyLimit {
                            label: n.text.clone(),
                            per_command: r.per_command,
                            matches: m,
                            kind: *kind,
                            n: *v,
                        });
                    }
                }
            }
        }
        let id = self.rs.armies.len() as Id;
        if self.declare(&a.name, Def::Army(id)) {
            self.rs.armies.push(def);
        }
    }

    /// `TYPES always QUALITIES`: unit types (classes, groups) before
    /// `always`, qualities after.
    fn army_always(
        &mut self,
        types: &[Name],
        qualities: &[Name],
        span: Span,
    ) -> Option<ArmyAlways> {
        let mut ok = true;
        for n in types {
            if let Some(Def::Quality(_)) = self.lookup(&n.text) {
                self.err(
                    Diag::new("muster::army_list", format!("`{}` is a quality", n.text))
                        .at(n.span, "a quality before `always`")
                        .help("write unit types (classes, groups) before `always` and qualities after: `Commander | Cannons always ordinary`"),
                );
                ok = false;
            }
        }
        let mut qs = Vec::new();
        for n in qualities {
            match self.lookup(&n.text) {
                Some(Def::Quality(q)) => qs.push(q),
                _ => {
                    let names: Vec<&str> =
                        self.rs.qualities.iter().map(|q| q.name.as_str()).collect();
                    let help = match suggest(&n.text, names.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None if names.is_empty() => {
                            "declare it: `quality NAME { ... }`".to_string()
                        }
                        None => format!("the qualities are: {}", names.join(", ")),
                    };
                    self.err(
                        Diag::new(
                            "muster::army_list",
                            format!("`{}` is not a quality", n.text),
                        )
                        .at(n.span, "not a quality")
                        .help(help),
                    );
                    ok = false;
                }
            }
        }
        if !ok {
            return None;
        }
        let set = self.type_set(types)?;
        Some(ArmyAlways {
            label: types
                .iter()
                .map(|n| n.text.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
            types: set,
            qualities: qs,
            span,
        })
    }

    /// Compile a step's action target and arguments (procedure or decision).
    pub fn action_target(&mut self, n: &Name) -> Option<(bool, Id, Vec<Ty>)> {
        match self.lookup(&n.text) {
            Some(Def::Procedure(p)) => Some((
                true,
                p,
                self.rs.procedures[p as usize]
                    .params
                    .iter()
                    .map(|x| x.1.clone())
                    .collect(),
            )),
            Some(Def::Decision(d)) => Some((
                false,
                d,
                self.rs.decisions[d as usize]
                    .params
                    .iter()
                    .map(|x| x.1.clone())
                    .collect(),
            )),
            _ => {
                self.unknown(
                    n,
                    "procedure or decision",
                    Some(
                        "a step does a procedure or asks a decision declared in the ruleset".into(),
                    ),
                );
                None
            }
        }
    }

    pub fn lookup_key_name(&mut self, n: &Name, ty: &Ty) -> Option<Value> {
        match (ty, self.lookup(&n.text)) {
            (Ty::Enum(e), Some(Def::Variant(e2, s))) if *e == e2 => Some(Value::Sym(s)),
            (Ty::Side, Some(Def::Side(s))) => Some(Value::Side(s)),
            _ => {
                let t = self.rs.ty_name(ty);
                self.err(
                    Diag::new("muster::table_key", format!("`{}` is not a value of {t}", n.text))
                        .at(n.span, format!("expected a value of {t}"))
                        .help("a key names a value of the parameter's type: an enum value, a number, a range, true/false, or `_`"),
                );
                None
            }
        }
    }

    pub fn enum_values(&self, e: Id) -> Vec<Value> {
        self.rs.enums[e as usize]
            .variants
            .iter()
            .map(|s| Value::Sym(*s))
            .collect()
    }

    /// What kind of thing a name is ("a table", "a fact"...), if it is known.
    pub fn kind_of(&self, name: &str) -> Option<&'static str> {
        self.lookup(name).map(def_kind)
    }

    pub fn quantity_id(&self, name: &str) -> Option<Id> {
        match self.lookup(name) {
            Some(Def::Quantity(q)) => Some(q),
            _ => None,
        }
    }

    pub fn quantity_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .names
            .iter()
            .filter(|(_, (d, _))| matches!(d, Def::Quantity(_)))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }

    pub fn scope_with(params: &[(String, Ty)]) -> Scope {
        Self::scope_for(params, false)
    }
}
