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
use std::collections::HashMap;

mod files;

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
    let mut c = Compiler::new();
    c.numbers = numbers.to_vec();
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
            names: HashMap::new(),
            stat_names: HashMap::new(),
            state_names: HashMap::new(),
            side_state_names: HashMap::new(),
            sym_ids: HashMap::new(),
            choice_names: HashMap::new(),
            numbers: Vec::new(),
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

    /// Warn of something that compiles but is likely a mistake: kept apart
    /// from the errors (whose absence lets the ruleset compile), in the
    /// ruleset's `warnings`.
    /// An outcome of listed values (an enum, or `a | b`) that some path
    /// through its procedure never sets would read `none`, which is not
    /// among them: a warning at the `if` (or
    /// `for`) on whose other side it is not set, or at the outcome when no
    /// statement sets it. A warning, not an error: the compiler cannot see
    /// that two `if`s cover every case, or that a path is never taken. A procedure with
    /// hooks is left out (a hook may set the outcome).
    fn warn_unset_outcomes(&mut self, items: &[syntax::Item]) {
        for it in items {
            let ItemKind::Procedure(p) = &it.kind else {
                continue;
            };
            let Some(id) = self.rs.procedure(&p.name.text) else {
                continue;
            };
            let pd = &self.rs.procedures[id as usize];
            let h = &pd.hooks;
            if !h.before.is_empty() || !h.after.is_empty() || h.replace.is_some() {
                continue;
            }
            // An int left unset is 0 and a bool false (a roll never made
            // counted nothing); a unit or side may be `none`.
            let listed: Vec<bool> = pd
                .outcomes
                .iter()
                .map(|o| matches!(o.ty, Ty::Enum(_) | Ty::Symbols(_)))
                .collect();
            for (o, _) in p.outcomes.iter().zip(listed).filter(|(_, l)| *l) {
                let Unset(gap) = unset(&p.body, &o.name.text) else {
                    continue;
                };
                let d = Diag::new(
                    "muster::unset_outcome",
                    format!(
                        "procedure `{}` may leave its outcome `{}` unset, and it would read `none`",
                        p.name.text, o.name.text
                    ),
                );
                let d = match gap {
                    Some((at, why)) => d.at(at, why).note(o.name.span, "the outcome"),
                    None => d.at(o.name.span, "no statement sets it"),
                };
                self.warn(d.help(format!(
                    "set `outcome {} = ...` on every path (an `else` beside an `if` that sets it), or set it first and change it after",
                    o.name.text
                )));
            }
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
        let mut sequence_failed = false;
        for it in items {
            match &it.kind {
                ItemKind::Army(a) => self.army(a),
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
        if !sequence_failed {
            crate::compile::decks::check_shuffled(self);
            crate::compile::hands::check_alternates(self);
        }
        crate::compile::call_graph::check(self);
        self.hook_scripts(items, hooks);
        self.check_notes_of_derived_facts();
    }

    /// A fact a hook derives cannot also be noted (the hook's value is the
    /// fact's everywhere).
    fn check_notes_of_derived_facts(&mut self) {
        fn notes(body: &[St], out: &mut Vec<(Id, Span)>) {
            for st in body {
                match st {
                    St::Note(f, _, _, span) => out.push((*f, *span)),
                    St::If(_, a, b) => {
                        notes(a, out);
                        notes(b, out);
                    }
                    St::For(_, _, _, a) => notes(a, out),
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

    /// Resolve where each hook runs (before the bodies compile, so that the
    /// outcomes hooks add are the procedures' own).
    fn hook_points(&mut self, items: &[syntax::Item]) -> Vec<Option<crate::compile::ir::Point>> {
        use crate::compile::ir::Point;
        let mut out = Vec::new();
        for it in items {
            let ItemKind::Hook(h) = &it.kind else {
                continue;
            };
            let proc = |c: &mut Self, n: &Name| match c.lookup(&n.text) {
                Some(Def::Procedure(p)) => Some(p),
                _ => {
                    let sugg = suggest(&n.text, c.rs.procedures.iter().map(|p| p.name.as_str()));
                    c.err(
                        Diag::new("muster::hook", format!("hook `{}` names no procedure `{}`", h.name.text, n.text))
                            .at(n.span, "no such procedure")
                            .help(match sugg {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "a hook runs before or after a procedure, replaces one, derives a fact, or runs before or after a step".into(),
                            }),
                    );
                    None
                }
            };
            let point = match &h.point {
                syntax::HookPoint::Procedure { after, proc: n } => proc(self, n).map(|p| {
                    if *after {
                        Point::After(p)
                    } else {
                        Point::Before(p)
                    }
                }),
                syntax::HookPoint::Replace(n) => proc(self, n).map(Point::Replace),
                syntax::HookPoint::Step { after, step } => Some(if *after {
                    Point::AfterStep(step.text.clone())
                } else {
                    Point::BeforeStep(step.text.clone())
                }),
                syntax::HookPoint::Fact(n) => match self.lookup(&n.text) {
                    Some(Def::Fact(f)) => Some(Point::Fact(f)),
                    _ => {
                        let sugg = suggest(&n.text, self.rs.facts.iter().map(|f| f.name.as_str()));
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!("hook `{}` names no fact `{}`", h.name.text, n.text),
                            )
                            .at(n.span, "no such fact")
                            .help(match sugg {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "declare the fact with `fact NAME(params): TYPE`".into(),
                            }),
                        );
                        None
                    }
                },
            };
            let takes_outcomes = matches!(
                point,
                Some(Point::Before(_) | Point::After(_) | Point::Replace(_))
            );
            if !h.outcomes.is_empty() && !takes_outcomes {
                self.err(
                    Diag::new("muster::hook", format!("hook `{}` declares outcomes but is not on a procedure", h.name.text))
                        .at(h.outcomes[0].name.span, "outcomes need a procedure")
                        .help("outcomes belong to procedures: attach the hook with `before`, `after` or `replace`"),
                );
            }
            if let Some(Point::Before(p) | Point::After(p) | Point::Replace(p)) = point {
                for o in &h.outcomes {
                    let ty = self.outcome_ty(&o.ty);
                    let outs = &mut self.rs.procedures[p as usize].outcomes;
                    if outs.iter().any(|x| x.name == o.name.text) {
                        self.err(
                            Diag::new("muster::duplicate", format!("procedure `{}` already has an outcome `{}`", self.rs.procedures[p as usize].name, o.name.text))
                                .at(o.name.span, "declared again")
                                .help("a hook's outcomes are added to its procedure's; give this one another name"),
                        );
                    } else {
                        outs.push(OutcomeDef {
                            name: o.name.text.clone(),
                            ty,
                        });
                    }
                }
            }
            out.push(point);
        }
        out
    }

    /// Compile each hook's script against the finished ruleset and attach it.
    fn hook_scripts(
        &mut self,
        items: &[syntax::Item],
        points: Vec<Option<crate::compile::ir::Point>>,
    ) {
        use crate::compile::ir::Point;
        let hooks = items.iter().filter_map(|it| match &it.kind {
            ItemKind::Hook(h) => Some(h),
            _ => None,
        });
        for (h, point) in hooks.zip(points) {
            let Some(point) = point else { continue };
            let syntax::Script::Inline { text, span } = &h.script else {
                continue; // the loader reported the missing file
            };
            let no_outcomes: &[OutcomeDef] = &[];
            let (vars, outcomes): (Vec<String>, &[OutcomeDef]) = match &point {
                Point::Before(p) | Point::Replace(p) => {
                    let pd = &self.rs.procedures[*p as usize];
                    (
                        pd.params.iter().map(|x| x.0.clone()).collect(),
                        &pd.outcomes,
                    )
                }
                Point::After(p) => {
                    let pd = &self.rs.procedures[*p as usize];
                    (pd.names.iter().map(|x| x.0.clone()).collect(), &pd.outcomes)
                }
                Point::BeforeStep(n) | Point::AfterStep(n) => {
                    let known = self
                        .rs
                        .graph
                        .as_ref()
                        .is_some_and(|g| g.nodes.iter().any(|x| &x.name == n));
                    if !known {
                        let steps: Vec<String> = self
                            .rs
                            .graph
                            .iter()
                            .flat_map(|g| g.nodes.iter().map(|x| x.name.clone()))
                            .collect();
                        let sugg = suggest(n, steps.iter().map(|s| s.as_str()));
                        let step_span = match &h.point {
                            syntax::HookPoint::Step { step, .. } => step.span,
                            _ => h.name.span,
                        };
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!("hook `{}` names no step \"{n}\"", h.name.text),
                            )
                            .at(step_span, "no such step in the sequence of play")
                            .help(match sugg {
                                Some(s) => format!("did you mean \"{s}\"?"),
                                None => "name a step of the sequence of play".into(),
                            }),
                        );
                        continue;
                    }
                    (vec!["turn".to_string()], no_outcomes)
                }
                Point::Fact(f) => {
                    let decl = items.iter().find_map(|it| match &it.kind {
                        ItemKind::Fact(fd) if fd.name.text == self.rs.facts[*f as usize].name => {
                            Some(fd)
                        }
                        _ => None,
                    });
                    let names: Option<Vec<String>> = decl
                        .map(|fd| {
                            fd.params
                                .iter()
                                .map(|p| p.0.as_ref().map(|n| n.text.clone()))
                                .collect()
                        })
                        .unwrap_or(Some(Vec::new()));
                    let Some(names) = names else {
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!(
                                    "hook `{}` derives fact `{}`, whose parameters have no names",
                                    h.name.text, self.rs.facts[*f as usize].name
                                ),
                            )
                            .at(h.name.span, "the script could not name its arguments")
                            .help("name the fact's parameters: `fact F(a: unit, b: unit): bool`"),
                        );
                        continue;
                    };
                    (names, no_outcomes)
                }
            };
            let outcomes = outcomes.to_vec();
            let declared = crate::run::hooks::Declared {
                name: &h.name.text,
                doc: h.doc.clone(),
                point: point.clone(),
                vars,
                outcomes: &outcomes,
                text,
                span: *span,
            };
            match crate::run::hooks::compile(&self.rs, declared) {
                Ok(def) => {
                    let id = self.rs.hooks.len() as Id;
                    match point {
                        Point::Before(p) => self.rs.procedures[p as usize].hooks.before.push(id),
                        Point::After(p) => self.rs.procedures[p as usize].hooks.after.push(id),
                        Point::Replace(p) => {
                            if self.rs.procedures[p as usize].hooks.replace.is_some() {
                                self.err(
                                    Diag::new("muster::hook", format!("procedure `{}` is replaced by two hooks", self.rs.procedures[p as usize].name))
                                        .at(h.name.span, "the second")
                                        .help("one hook at most may replace a procedure; remove one, or make one run `after`"),
                                );
                            }
                            self.rs.procedures[p as usize].hooks.replace = Some(id);
                        }
                        Point::Fact(f) => {
                            let fd = &self.rs.facts[f as usize];
                            if fd.battle.is_some() || fd.hook.is_some() {
                                let name = fd.name.clone();
                                self.err(
                                    Diag::new(
                                        "muster::hook",
                                        format!("fact `{name}` is already derived"),
                                    )
                                    .at(h.name.span, "a second derivation")
                                    .help(
                                        "a fact is derived one way: by `in battle:` or by one hook",
                                    ),
                                );
                            }
                            self.rs.facts[f as usize].hook = Some(id);
                        }
                        Point::BeforeStep(_) | Point::AfterStep(_) => {}
                    }
                    self.rs.hooks.push(def);
                }
                Err(d) => self.err(d),
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

    // ------------------------------------------------------------ expressions

    pub fn expect(&mut self, got: &Ty, want: &Ty, span: Span, what: &str) -> bool {
        let ok = match (got, want) {
            (Ty::Symbols(a), Ty::Symbols(b)) => a.iter().all(|x| b.contains(x)),
            _ => got == want,
        };
        if !ok {
            let (g, w) = (self.rs.ty_name(got), self.rs.ty_name(want));
            self.err(
                Diag::new(
                    "muster::type",
                    format!("{what} should be {w}, but this is {g}"),
                )
                .at(span, format!("this is {g}"))
                .help(format!("write an expression of type {w} here")),
            );
        }
        ok
    }

    /// Compile an expression; `want` guides how bare names resolve (enum
    /// values and outcome symbols). `None` means an error was reported.
    /// Compile an expression (on a stack with room for it: see
    /// [`crate::front::nesting`]).
    pub fn expr(
        &mut self,
        e: &syntax::Expr,
        sc: &mut Scope,
        want: Option<&Ty>,
    ) -> Option<(Ex, Ty)> {
        crate::front::nesting::guarded(|| self.expr_here(e, sc, want))
    }

    fn expr_here(
        &mut self,
        e: &syntax::Expr,
        sc: &mut Scope,
        want: Option<&Ty>,
    ) -> Option<(Ex, Ty)> {
        use syntax::BinOp as B;
        if want == Some(&Ty::Dice) && crate::compile::rolls::is_pool_syntax(self, sc, e) {
            return crate::compile::rolls::pool_value(self, e, sc);
        }
        Some(match &e.kind {
            ExprKind::Roll { .. } => return crate::compile::rolls::roll(self, e, sc),
            ExprKind::Int(i) => (Ex::Const(Value::Int(*i)), Ty::Int),
            ExprKind::Bool(b) => (Ex::Const(Value::Bool(*b)), Ty::Bool),
            // `none`: a missing stat (a number), or no unit / no side.
            ExprKind::None => (
                Ex::Const(Value::None),
                match want {
                    Some(t @ (Ty::Unit | Ty::Side)) => t.clone(),
                    _ => Ty::Int,
                },
            ),
            ExprKind::Unlimited => (Ex::Const(Value::Int(UNLIMITED)), Ty::Int),
            ExprKind::Name(n) => return self.name_expr(n, sc, want),
            ExprKind::Field(x, f) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                return self.field(xe, xt, f, sc.stat_fields, x.span);
            }
            ExprKind::Original(x) => {
                let ExprKind::Field(u, f) = &x.kind else {
                    self.err(
                        Diag::new("muster::original", "`original(...)` takes a unit's stat")
                            .at(x.span, "not `unit.stat`")
                            .help("write `original(u.resolve)` for the unit's starting value"),
                    );
                    return None;
                };
                let (ue, ut) = self.expr(u, sc, None)?;
                if ut != Ty::Unit {
                    return self.not_unit(&ut, u.span);
                }
                match self.stat_names.get(&f.text) {
                    Some(s) => (Ex::Stat(Box::new(ue), *s), Ty::Int),
                    None => {
                        self.unknown_field(f, "stat");
                        return None;
                    }
                }
            }
            ExprKind::Call(n, args) => return self.call(n, args, sc, e.span),
            ExprKind::Odds(o) => return crate::compile::chance::compile(self, o, sc, e.span),
            ExprKind::Neg(x) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                self.expect(&xt, &Ty::Int, x.span, "the operand of `-`");
                (Ex::Neg(Box::new(xe)), Ty::Int)
            }
            ExprKind::Not(x) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                self.expect(&xt, &Ty::Bool, x.span, "the operand of `not`");
                (Ex::Not(Box::new(xe)), Ty::Bool)
            }
            ExprKind::Binary(op, a, b) => {
                let bin = match op {
                    B::Or => Bin::Or,
                    B::And => Bin::And,
                    B::Eq => Bin::Eq,
                    B::Ne => Bin::Ne,
                    B::Lt => Bin::Lt,
                    B::Le => Bin::Le,
                    B::Gt => Bin::Gt,
                    B::Ge => Bin::Ge,
                    B::Add => Bin::Add,
                    B::Sub => Bin::Sub,
                    B::Mul => Bin::Mul,
                    B::Div => Bin::Div,
                };
                let (ae, at) = self.expr(a, sc, None)?;
                let (be, bt) = self.expr(b, sc, Some(&at))?;
                let ty = match bin {
                    Bin::Or | Bin::And => {
                        self.expect(&at, &Ty::Bool, a.span, "each side of `and`/`or`");
                        self.expect(&bt, &Ty::Bool, b.span, "each side of `and`/`or`");
                        Ty::Bool
                    }
                    Bin::Eq | Bin::Ne => {
                        self.expect(&bt, &at, b.span, "the right side of the comparison");
                        Ty::Bool
                    }
                    Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge => {
                        self.expect(&at, &Ty::Int, a.span, "a number compared with `<`/`>`");
                        self.expect(&bt, &Ty::Int, b.span, "a number compared with `<`/`>`");
                        Ty::Bool
                    }
                    _ => {
                        self.expect(&at, &Ty::Int, a.span, "an arithmetic operand");
                        self.expect(&bt, &Ty::Int, b.span, "an arithmetic operand");
                        Ty::Int
                    }
                };
                (Ex::Bin(bin, Box::new(ae), Box::new(be)), ty)
            }
            ExprKind::Is(x, names, neg) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                let ex = match &xt {
                    // `u is inferior`: a test of the unit's quality.
                    Ty::Unit
                        if !names.is_empty()
                            && names
                                .iter()
                                .all(|n| matches!(self.lookup(&n.text), Some(Def::Quality(_)))) =>
                    {
                        let mut set = vec![false; self.rs.qualities.len()];
                        for n in names {
                            if let Some(Def::Quality(q)) = self.lookup(&n.text) {
                                set[q as usize] = true;
                            }
                        }
                        Ex::IsQuality(Box::new(xe), set)
                    }
                    Ty::Unit => Ex::IsType(Box::new(xe), self.type_set(names)?),
                    Ty::Enum(en) => {
                        let mut syms = Vec::new();
                        for n in names {
                            match self.lookup(&n.text) {
                                Some(Def::Variant(e2, s)) if e2 == *en => syms.push(s),
                                _ => {
                                    let ename = self.rs.enums[*en as usize].name.clone();
                                    let vars: Vec<String> = self.rs.enums[*en as usize]
                                        .variants
                                        .iter()
                                        .map(|v| self.rs.symbols[*v as usize].clone())
                                        .collect();
                                    self.err(
                                        Diag::new(
                                            "muster::unknown_name",
                                            format!("`{}` is not a value of {ename}", n.text),
                                        )
                                        .at(n.span, format!("not one of {}", vars.join(" | ")))
                                        .help(format!("{ename} is one of: {}", vars.join(", "))),
                                    );
                                    return None;
                                }
                            }
                        }
                        Ex::IsSym(Box::new(xe), syms)
                    }
                    other => {
                        let t = self.rs.ty_name(other);
                        self.err(
                            Diag::new("muster::type", format!("`is` needs a unit or an enum value, but this is {t}"))
                                .at(x.span, format!("this is {t}"))
                                .help("use `is` to test a unit's type or class (`u is Horse`) or an enum (`position(a, b) is to_flank`); compare numbers with `==`"),
                        );
                        return None;
                    }
                };
                let ex = if *neg { Ex::Not(Box::new(ex)) } else { ex };
                (ex, Ty::Bool)
            }
            ExprKind::If(c, a, b) => {
                let (ce, ct) = self.expr(c, sc, None)?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `if`");
                let (ae, at) = self.expr(a, sc, want)?;
                let (be, bt) = self.expr(b, sc, Some(want.unwrap_or(&at)))?;
                let ty = match (&at, &bt) {
                    (Ty::Symbols(x), Ty::Symbols(y)) => {
                        let mut v = x.clone();
                        v.extend(y.iter().filter(|s| !x.contains(s)));
                        Ty::Symbols(v)
                    }
                    _ => {
                        self.expect(&bt, &at, b.span, "the `else` branch");
                        at
                    }
                };
                (Ex::If(Box::new(ce), Box::new(ae), Box::new(be)), ty)
            }
            ExprKind::Quant(q, var, coll, body, value) => {
                let sides = match coll {
                    None => false,
                    Some(c) if c.text == "sides" => true,
                    Some(c) if c.text == "units" => false,
                    Some(c) => {
                        self.err(
                            Diag::new(
                                "muster::quantifier",
                                format!("cannot range over `{}`", c.text),
                            )
                            .at(c.span, "not a collection")
                            .help("quantifiers range over `units` (the default) or `sides`"),
                        );
                        return None;
                    }
                };
                let totals = matches!(
                    q,
                    syntax::Quant::Sum | syntax::Quant::Min | syntax::Quant::Max
                );
                let word = match q {
                    syntax::Quant::Sum => "sum",
                    syntax::Quant::Min => "min",
                    syntax::Quant::Max => "max",
                    syntax::Quant::Any => "any",
                    syntax::Quant::All => "all",
                    syntax::Quant::Count => "count",
                    syntax::Quant::First => "first",
                };
                match (totals, value) {
                    (true, None) => {
                        self.err(
                            Diag::new("muster::quantifier", format!("`{word}` needs a value to add up"))
                                .at(e.span, "no `of VALUE`")
                                .help(format!("write `{word} {}: CONDITION of VALUE`, e.g. `sum u: u.side == s of u.resolve`", var.text)),
                        );
                        return None;
                    }
                    (false, Some(v)) => {
                        self.err(
                            Diag::new("muster::quantifier", format!("`{word}` takes no `of VALUE`"))
                                .at(v.span, "a value here")
                                .help("only `sum`, `min` and `max` add up a value; `any`, `all`, `count` and `first` test a condition"),
                        );
                        return None;
                    }
                    _ => {}
                }
                let m = sc.mark();
                let slot = sc.bind(&var.text, if sides { Ty::Side } else { Ty::Unit });
                let r = self.expr(body, sc, None);
                let v = value.as_ref().map(|v| self.expr(v, sc, None));
                sc.reset(m);
                let (be, bt) = r?;
                self.expect(&bt, &Ty::Bool, body.span, "the condition of a quantifier");
                let be = match (v, value) {
                    (Some(v), Some(vs)) => {
                        let (ve, vt) = v?;
                        self.expect(&vt, &Ty::Int, vs.span, "the value a quantifier adds up");
                        // Over the units that qualify: sum adds 0 for the
                        // rest, min and max skip them (`none`).
                        let skip = if *q == syntax::Quant::Sum {
                            Value::Int(0)
                        } else {
                            Value::None
                        };
                        Ex::If(Box::new(be), Box::new(ve), Box::new(Ex::Const(skip)))
                    }
                    _ => be,
                };
                let ty = match q {
                    syntax::Quant::Count
                    | syntax::Quant::Sum
                    | syntax::Quant::Min
                    | syntax::Quant::Max => Ty::Int,
                    syntax::Quant::First if sides => Ty::Side,
                    syntax::Quant::First => Ty::Unit,
                    _ => Ty::Bool,
                };
                (Ex::Quant(*q, sides, slot, Box::new(be)), ty)
            }
            ExprKind::Dice {
                count,
                die,
                scoring,
                counting,
                reroll,
            } => {
                if !sc.dice {
                    self.err(
                        Diag::new("muster::dice_outside_procedure", "dice can only be rolled inside a procedure")
                            .at(e.span, "a roll here")
                            .help("tables, defines and quantities describe facts; roll in a procedure and pass the result in"),
                    );
                    return None;
                }
                let (ce, ct) = self.expr(count, sc, None)?;
                self.expect(&ct, &Ty::Int, count.span, "the number of dice");
                self.check_pool_count(&ce, count.span);
                let Some(Def::Die(d)) = self.lookup(&die.text) else {
                    self.unknown(
                        die,
                        "die",
                        Some("declare it, e.g. `die d6 = 1..6`, or `import core`".into()),
                    );
                    return None;
                };
                let mode = if let Some(t) = scoring {
                    let (te, tt) = self.expr(t, sc, None)?;
                    self.expect(&tt, &Ty::Int, t.span, "the score needed");
                    DiceMode::Scoring(Box::new(te))
                } else if !counting.is_empty() {
                    let faces = self.rs.dice[d as usize].faces.clone();
                    let mut marks = vec![false; faces.len()];
                    for f in counting {
                        let mut hit = false;
                        for (i, (n, _)) in faces.iter().enumerate() {
                            if *n == f.text {
                                marks[i] = true;
                                hit = true;
                            }
                        }
                        if !hit {
                            let names: Vec<String> = faces.iter().map(|x| x.0.clone()).collect();
                            self.err(
                                Diag::new(
                                    "muster::unknown_name",
                                    format!("die `{}` has no face `{}`", die.text, f.text),
                                )
                                .at(f.span, "no such face")
                                .help(format!("its faces are: {}", names.join(", "))),
                            );
                        }
                    }
                    DiceMode::Counting(marks)
                } else {
                    DiceMode::Sum
                };
                (
                    Ex::Dice {
                        count: Box::new(ce),
                        die: d,
                        mode,
                        reroll: *reroll,
                        span: e.span,
                    },
                    Ty::Int,
                )
            }
        })
    }

    /// A pool whose number of dice is a constant: negative is an error
    /// (a roll cannot have fewer than no dice; one computed at run time
    /// fails there), none a warning (it rolls nothing, always 0).
    fn check_pool_count(&mut self, count: &Ex, span: Span) {
        match const_int(count) {
            Some(n) if n < 0 => self.err(
                Diag::new("muster::negative_pool", format!("a pool of {n} dice"))
                    .at(span, "this is negative")
                    .help("a pool rolls 0 or more dice; check the number of dice"),
            ),
            Some(0) => self.warn(
                Diag::new("muster::empty_pool", "a pool of 0 dice rolls nothing")
                    .at(span, "always 0 dice")
                    .help("this roll always reads 0; give the number of dice the rule means, or remove the roll"),
            ),
            _ => {}
        }
    }

    fn not_unit<X>(&mut self, t: &Ty, span: Span) -> Option<X> {
        let tn = self.rs.ty_name(t);
        self.err(
            Diag::new("muster::type", format!("expected a unit, but this is {tn}"))
                .at(span, format!("this is {tn}"))
                .help("stats and state belong to units (and side state to sides)"),
        );
        None
    }

    fn unknown_field(&mut self, f: &Name, what: &str) {
        let mut cands: Vec<&str> = self.rs.stats.iter().map(|s| s.as_str()).collect();
        cands.extend(self.rs.states.iter().map(|s| s.name.as_str()));
        cands.extend(self.rs.side_states.iter().map(|s| s.name.as_str()));
        let sugg = suggest(&f.text, cands.into_iter());
        self.err(
            Diag::new(
                "muster::unknown_name",
                format!("unknown {what} `{}`", f.text),
            )
            .at(f.span, format!("no {what} of this name"))
            .help(match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None => "declare it with `stat`, `state` or `side_state`".into(),
            }),
        );
    }

    fn field(
        &mut self,
        xe: Ex,
        xt: Ty,
        f: &Name,
        stat_fields: bool,
        span: Span,
    ) -> Option<(Ex, Ty)> {
        match xt {
            Ty::Unit => {
                if f.text == "side" {
                    return Some((Ex::SideOf(Box::new(xe)), Ty::Side));
                }
                if !stat_fields {
                    if let Some(s) = self.state_names.get(&f.text) {
                        let ty = self.rs.states[*s as usize].ty.clone();
                        return Some((Ex::State(Box::new(xe), *s), ty));
                    }
                }
                if let Some(s) = self.stat_names.get(&f.text) {
                    return Some((Ex::Stat(Box::new(xe), *s), Ty::Int));
                }
                self.unknown_field(f, if stat_fields { "stat" } else { "stat or state" });
                None
            }
            Ty::Side => {
                if let Some(s) = self.side_state_names.get(&f.text) {
                    let ty = self.rs.side_states[*s as usize].ty.clone();
                    return Some((Ex::SideState(Box::new(xe), *s), ty));
                }
                self.unknown_field(f, "side state");
                None
            }
            Ty::Tallies(fx) => crate::compile::rolls::tally_field(self, xe, fx, f),
            other => self.not_unit(&other, span),
        }
    }

    fn name_expr(&mut self, n: &Name, sc: &mut Scope, want: Option<&Ty>) -> Option<(Ex, Ty)> {
        if let Some(Ty::Symbols(syms)) = want {
            if let Some(s) = self.sym_ids.get(&n.text) {
                if syms.contains(s) {
                    return Some((Ex::Const(Value::Sym(*s)), Ty::Symbols(vec![*s])));
                }
            }
        }
        if let Some((ty, slot)) = sc.lookup(&n.text) {
            return Some((Ex::Local(slot), ty));
        }
        match self.lookup(&n.text) {
            Some(Def::Option(o)) => match self.rs.options[o as usize].number {
                // A number option is fixed when the ruleset is compiled.
                Some(v) => Some((Ex::Const(Value::Int(v)), Ty::Int)),
                None => Some((Ex::Option(o), Ty::Bool)),
            },
            Some(Def::Side(s)) => Some((Ex::Const(Value::Side(s)), Ty::Side)),
            Some(Def::Variant(e, s)) => Some((Ex::Const(Value::Sym(s)), Ty::Enum(e))),
            Some(Def::Die(_)) => {
                let one = syntax::Expr {
                    kind: ExprKind::Int(1),
                    span: n.span,
                };
                let e = syntax::Expr {
                    kind: ExprKind::Dice {
                        count: Box::new(one),
                        die: n.clone(),
                        scoring: None,
                        counting: vec![],
                        reroll: None,
                    },
                    span: n.span,
                };
                self.expr(&e, sc, want)
            }
            Some(Def::Fact(_) | Def::Define(_) | Def::Table(_) | Def::Quantity(_)) => {
                self.err(
                    Diag::new("muster::call", format!("`{}` takes arguments", n.text))
                        .at(n.span, "used without arguments")
                        .help(format!(
                            "call it as `{}(...)`, with no space before the parenthesis",
                            n.text
                        )),
                );
                None
            }
            Some(Def::UnitType(_) | Def::Class(_) | Def::Group(_)) => {
                self.err(
                    Diag::new(
                        "muster::type",
                        format!("`{}` is a kind of unit, not a value", n.text),
                    )
                    .at(n.span, "a unit type, class or group")
                    .help(format!(
                        "test a unit against it with `is`: `u is {}`",
                        n.text
                    )),
                );
                None
            }
            Some(_) | None if sc.failed.contains(&n.text) => None,
            None if want == Some(&Ty::Dice) => {
                // Where dice are wanted (a pool, a table of dice), an unknown
                // name is most likely a die not declared.
                let dice: Vec<String> = self
                    .names
                    .iter()
                    .filter(|(_, (d, _))| matches!(d, Def::Die(_)))
                    .map(|(k, _)| k.clone())
                    .collect();
                let help = match suggest(&n.text, dice.iter().map(|s| s.as_str())) {
                    Some(s) => format!("did you mean `{}`?", self.display_name(&s)),
                    None => format!(
                        "declare it, e.g. `die {} = {{ blank x3, S, W1 x2 }}`, or name a table or define of type `dice`",
                        n.text
                    ),
                };
                self.err(
                    Diag::new("muster::unknown_name", format!("unknown die `{}`", n.text))
                        .at(n.span, "not a die, nor a local or option")
                        .help(help),
                );
                None
            }
            Some(_) | None => {
                let mut cands: Vec<String> = self.names.keys().cloned().collect();
                cands.extend(sc.locals.iter().map(|l| l.0.clone()));
                if let Some(Ty::Symbols(s)) = want {
                    cands.extend(s.iter().map(|x| self.rs.symbols[*x as usize].clone()));
                }
                let sugg = suggest(&n.text, cands.iter().map(|s| s.as_str()));
                let help = match (sugg, want) {
                    (Some(s), _) => format!("did you mean `{}`?", self.display_name(&s)),
                    (None, Some(w @ Ty::Symbols(_))) => {
                        format!("this outcome is one of: {}", self.rs.ty_name(w))
                    }
                    _ => "declare it first, or check the spelling".to_string(),
                };
                self.err(
                    Diag::new("muster::unknown_name", format!("unknown name `{}`", n.text))
                        .at(n.span, "not a parameter, local, option, side or enum value")
                        .help(help),
                );
                None
            }
        }
    }

    fn call(
        &mut self,
        n: &Name,
        args: &[syntax::Expr],
        sc: &mut Scope,
        span: Span,
    ) -> Option<(Ex, Ty)> {
        let callable = matches!(
            self.lookup(&n.text),
            Some(
                Def::Fact(_)
                    | Def::Define(_)
                    | Def::Table(_)
                    | Def::Quantity(_)
                    | Def::Procedure(_)
            )
        );
        if let (false, Some(b)) = (callable, Builtin::named(&n.text)) {
            let (ps, ret) = b.signature();
            let mut params = Vec::new();
            for p in ps {
                params.push(self.builtin_ty(*p, n)?);
            }
            let ret = self.builtin_ty(ret, n)?;
            let args = self.args(n, args, &params, sc, span)?;
            return Some((Ex::Builtin(b, args), ret));
        }
        let (params, ret, mk): (Vec<Ty>, Ty, MakeCall) = match self.lookup(&n.text) {
            Some(Def::Fact(i)) => {
                let f = &self.rs.facts[i as usize];
                (f.params.clone(), f.ty.clone(), |i, a| Ex::Fact(i, a))
            }
            Some(Def::Define(i)) => {
                let f = &self.rs.defines[i as usize];
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Define(i, a),
                )
            }
            Some(Def::Table(i)) => {
                let f = &self.rs.tables[i as usize];
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Table(i, a),
                )
            }
            Some(Def::Quantity(i)) => {
                let f = &self.rs.quantities[i as usize].func;
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Quantity(i, a),
                )
            }
            Some(Def::Procedure(_)) => {
                self.err(
                    Diag::new(
                        "muster::call",
                        format!("`{}` is a procedure, not a value", n.text),
                    )
                    .at(n.span, "a procedure")
                    .help(format!(
                        "run it as a statement: `call {}(...)`; read its results through state",
                        n.text
                    )),
                );
                return None;
            }
            _ => {
                self.unknown(n, "fact, define, table or quantity", None);
                return None;
            }
        };
        let id = match self.lookup(&n.text) {
            Some(Def::Fact(i) | Def::Define(i) | Def::Table(i) | Def::Quantity(i)) => i,
            _ => unreachable!(),
        };
        let args = self.args(n, args, &params, sc, span)?;
        Some((mk(id, args), ret))
    }

    /// The type a builtin's parameter or result has in this ruleset.
    fn builtin_ty(&mut self, t: BTy, n: &Name) -> Option<Ty> {
        let enum_named = |c: &Self, name: &str| match c.lookup(name) {
            Some(Def::Enum(e)) => Some(Ty::Enum(e)),
            _ => None,
        };
        Some(match t {
            BTy::Num => Ty::Int,
            BTy::Bool => Ty::Bool,
            BTy::Unit => Ty::Unit,
            BTy::Zone | BTy::Terrain => {
                let (name, module) = if t == BTy::Zone {
                    ("zone", "core")
                } else {
                    ("terrain", "battle")
                };
                match enum_named(self, name) {
                    Some(ty) => ty,
                    None => {
                        self.err(
                            Diag::new(
                                "muster::unknown_name",
                                format!("`{}` needs the enum `{name}`", n.text),
                            )
                            .at(n.span, format!("no `enum {name}` is declared"))
                            .help(format!("add `import {module}` near the top of the ruleset")),
                        );
                        return None;
                    }
                }
            }
        })
    }

    pub fn args(
        &mut self,
        n: &Name,
        args: &[syntax::Expr],
        params: &[Ty],
        sc: &mut Scope,
        span: Span,
    ) -> Option<Vec<Ex>> {
        if args.len() != params.len() {
            self.err(
                Diag::new(
                    "muster::arity",
                    format!(
                        "`{}` takes {} argument{}, but {} {} given",
                        n.text,
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "is" } else { "are" }
                    ),
                )
                .at(span, "wrong number of arguments")
                .help(format!(
                    "its parameters are: ({})",
                    params
                        .iter()
                        .map(|p| self.rs.ty_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for (a, p) in args.iter().zip(params) {
            match self.expr(a, sc, Some(p)) {
                Some((e, t)) => {
                    ok &= self.expect(&t, p, a.span, "this argument");
                    out.push(e);
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    // ------------------------------------------------------------ statements

    fn block(&mut self, stmts: &[Stmt], sc: &mut Scope, outcomes: &[OutcomeDef]) -> Vec<St> {
        let m = sc.mark();
        let mut out = Vec::new();
        for s in stmts {
            if let Some(st) = self.stmt(s, sc, outcomes) {
                out.push(st);
            }
        }
        sc.reset(m);
        out
    }

    fn stmt(&mut self, s: &Stmt, sc: &mut Scope, outcomes: &[OutcomeDef]) -> Option<St> {
        crate::front::nesting::guarded(|| self.stmt_here(s, sc, outcomes))
    }

    fn stmt_here(&mut self, s: &Stmt, sc: &mut Scope, outcomes: &[OutcomeDef]) -> Option<St> {
        match s {
            Stmt::Let(n, e) => {
                let Some((ex, ty)) = self.expr(e, sc, None) else {
                    sc.failed.push(n.text.clone());
                    return None;
                };
                if let Some((_, _)) = sc.lookup(&n.text) {
                    self.err(
                        Diag::new(
                            "muster::duplicate",
                            format!("`{}` is already bound here", n.text),
                        )
                        .at(n.span, "bound again")
                        .help("give each `let` its own name"),
                    );
                    return None;
                }
                let slot = sc.bind(&n.text, ty);
                Some(St::Let(slot, ex))
            }
            Stmt::Outcome(n, e) => {
                let Some(i) = outcomes.iter().position(|o| o.name == n.text) else {
                    let sugg = suggest(&n.text, outcomes.iter().map(|o| o.name.as_str()));
                    let ty = self
                        .expr(e, sc, None)
                        .map(|(_, t)| self.rs.ty_name(&t))
                        .unwrap_or_else(|| "int".into());
                    self.err(
                        Diag::new(
                            "muster::unknown_outcome",
                            format!("`{}` is not an outcome of this procedure", n.text),
                        )
                        .at(n.span, "not declared in `outcomes { }`")
                        .help(match sugg {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => format!(
                                "declare it in the procedure's header: `outcomes {{ {}: {ty} }}`",
                                n.text
                            ),
                        }),
                    );
                    return None;
                };
                let want = outcomes[i].ty.clone();
                let (ex, ty) = self.expr(e, sc, Some(&want))?;
                self.expect(&ty, &want, e.span, &format!("outcome `{}`", n.text));
                Some(St::Outcome(i as u16, ex))
            }
            Stmt::Require(e, msg, span) => {
                let (ex, ty) = self.expr(e, sc, None)?;
                self.expect(&ty, &Ty::Bool, e.span, "a requirement");
                Some(St::Require(ex, msg.clone(), *span))
            }
            Stmt::If(c, a, b) => {
                let (ce, ct) = self.expr(c, sc, None)?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `if`");
                let a = self.block(a, sc, outcomes);
                let b = self.block(b, sc, outcomes);
                Some(St::If(ce, a, b))
            }
            Stmt::ForFile(ff) => self.for_file(ff, sc, outcomes),
            Stmt::Mark(e, span) => self.mark(e, *span, sc),
            Stmt::For(var, coll, c, body) => {
                let sides = match coll {
                    None => false,
                    Some(n) if n.text == "sides" => true,
                    Some(n) if n.text == "units" => false,
                    Some(n) => {
                        self.err(
                            Diag::new(
                                "muster::quantifier",
                                format!("cannot range over `{}`", n.text),
                            )
                            .at(n.span, "not a collection")
                            .help("`for` ranges over `units` (the default) or `sides`"),
                        );
                        return None;
                    }
                };
                if sc.lookup(&var.text).is_some() {
                    self.err(
                        Diag::new(
                            "muster::duplicate",
                            format!("`{}` is already bound here", var.text),
                        )
                        .at(var.span, "bound again")
                        .help("give the loop's variable a name of its own"),
                    );
                    return None;
                }
                let m = sc.mark();
                let slot = sc.bind(&var.text, if sides { Ty::Side } else { Ty::Unit });
                let r = self.expr(c, sc, None);
                let body = self.block(body, sc, outcomes);
                sc.reset(m);
                let (ce, ct) = r?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `for`");
                Some(St::For(sides, slot, ce, body))
            }
            Stmt::Assign(target, op, v, span) => {
                let ExprKind::Field(x, f) = &target.kind else {
                    self.err(
                        Diag::new("muster::assign", "only unit or side state can be changed")
                            .at(target.span, "not `unit.state`")
                            .help(
                                "write `u.resolve -= hits`; locals made with `let` do not change",
                            ),
                    );
                    return None;
                };
                let (xe, xt) = self.expr(x, sc, None)?;
                let op = match op {
                    syntax::AssignOp::Set => ModOp::Set,
                    syntax::AssignOp::Add => ModOp::Add,
                    syntax::AssignOp::Sub => ModOp::Sub,
                };
                let (is_side, id, ty) = match xt {
                    Ty::Unit => match self.state_names.get(&f.text) {
                        Some(i) => (false, *i, self.rs.states[*i as usize].ty.clone()),
                        None => {
                            let what = if self.stat_names.contains_key(&f.text) {
                                self.err(
                                    Diag::new("muster::assign", format!("`{}` is a stat, which never changes", f.text))
                                        .at(f.span, "a stat")
                                        .help(format!("declare a state for what changes in play: `state {}: int = self.{}`", f.text, f.text)),
                                );
                                return None;
                            } else {
                                "state"
                            };
                            self.unknown_field(f, what);
                            return None;
                        }
                    },
                    Ty::Side => match self.side_state_names.get(&f.text) {
                        Some(i) => (true, *i, self.rs.side_states[*i as usize].ty.clone()),
                        None => {
                            self.unknown_field(f, "side state");
                            return None;
                        }
                    },
                    other => return self.not_unit(&other, x.span),
                };
                let (ve, vt) = self.expr(v, sc, Some(&ty))?;
                if op == ModOp::Set {
                    self.expect(&vt, &ty, v.span, "the new value");
                } else {
                    self.expect(&ty, &Ty::Int, f.span, "a state changed with += or -=");
                    self.expect(&vt, &Ty::Int, v.span, "the amount");
                }
                Some(if is_side {
                    St::AssignSideState {
                        side: xe,
                        state: id,
                        op,
                        value: ve,
                        span: *span,
                    }
                } else {
                    St::AssignState {
                        unit: xe,
                        state: id,
                        op,
                        value: ve,
                        span: *span,
                    }
                })
            }
            Stmt::Note(n, args, v, span) => {
                let Some(Def::Fact(f)) = self.lookup(&n.text) else {
                    self.unknown(n, "fact", None);
                    return None;
                };
                let def = self.rs.facts[f as usize].clone();
                if def.battle.is_some() {
                    self.err(
                        Diag::new(
                            "muster::note",
                            format!("fact `{}` is derived from the table, so it cannot be noted", n.text),
                        )
                        .at(n.span, "derived `in battle:`")
                        .help("note facts that procedures decide (declared charges, hits this turn), not measured ones"),
                    );
                    return None;
                }
                let args = self.args(n, args, &def.params, sc, *span)?;
                let value = match v {
                    Some(e) => {
                        let (ex, ty) = self.expr(e, sc, Some(&def.ty))?;
                        self.expect(&ty, &def.ty, e.span, "the noted value");
                        ex
                    }
                    None => {
                        if def.ty != Ty::Bool {
                            self.err(
                                Diag::new(
                                    "muster::note",
                                    format!("fact `{}` is not true or false", n.text),
                                )
                                .at(n.span, "needs a value")
                                .help(format!("write `note {}(...) = VALUE`", n.text)),
                            );
                            return None;
                        }
                        Ex::Const(Value::Bool(true))
                    }
                };
                Some(St::Note(f, args, value, *span))
            }
            Stmt::Call(n, args, span) => {
                let Some(Def::Procedure(p)) = self.lookup(&n.text) else {
                    self.unknown(n, "procedure", None);
                    return None;
                };
                let params: Vec<Ty> = self.rs.procedures[p as usize]
                    .params
                    .iter()
                    .map(|x| x.1.clone())
                    .collect();
                let args = self.args(n, args, &params, sc, *span)?;
                Some(St::Call(p, args, *span))
            }
        }
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

/// Whether a block sets an outcome on every path ([`Unset`] otherwise).
enum Setting {
    Always,
    /// Not on every path: the first place a path passes it by (None: no
    /// statement sets it at all).
    Unset(Option<(Span, &'static str)>),
}
use Setting::Unset;

/// Does `body` set outcome `name` on every path through it? A `call` is
/// taken to set it (the callee's outcomes are its own to check); a loop
/// may run no times.
fn unset(body: &[Stmt], name: &str) -> Setting {
    let mut gap = None;
    for st in body {
        match sets(st, name) {
            Setting::Always => return Setting::Always,
            Unset(g) => gap = gap.or(g),
        }
    }
    Unset(gap)
}

/// [`unset`] of one statement.
fn sets(st: &Stmt, name: &str) -> Setting {
    let may = |b: &[Stmt]| b.iter().any(|s| may_set(s, name));
    match st {
        Stmt::Outcome(n, _) if n.text == name => Setting::Always,
        Stmt::Call(..) => Setting::Always,
        Stmt::If(c, then, other) => match (&c.kind, unset(then, name), unset(other, name)) {
            (ExprKind::Bool(true), t, _) => t,
            (ExprKind::Bool(false), _, o) => o,
            (_, Setting::Always, Setting::Always) => Setting::Always,
            (_, Setting::Always, Unset(g)) => {
                Unset(g.or(Some((c.span, "not set when this is false"))))
            }
            (_, Unset(g), Setting::Always) => {
                Unset(g.or(Some((c.span, "not set when this is true"))))
            }
            (_, Unset(a), Unset(b)) => Unset(a.or(b)),
        },
        Stmt::For(_, _, c, b) if may(b) => {
            Unset(Some((c.span, "not set when the loop runs no times")))
        }
        Stmt::ForFile(f) if may(&f.body) => Unset(Some((f.span, "not set when no file is fought"))),
        _ => Unset(None),
    }
}

/// Does `st` set outcome `name` on some path?
fn may_set(st: &Stmt, name: &str) -> bool {
    match st {
        Stmt::Outcome(n, _) => n.text == name,
        Stmt::Call(..) => true,
        Stmt::If(_, a, b) => a.iter().chain(b).any(|s| may_set(s, name)),
        Stmt::For(_, _, _, b) => b.iter().any(|s| may_set(s, name)),
        Stmt::ForFile(f) => f.body.iter().any(|s| may_set(s, name)),
        _ => false,
    }
}
