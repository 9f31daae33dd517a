//! The compiled ruleset: every name resolved to an index, every expression
//! type-checked. This is what the odds engine (and later the battle engine)
//! runs; nothing here refers back to source text except spans for runtime
//! diagnostics.

use crate::base::value::Value;
use crate::compile::phase_graph::PhaseGraph;
use crate::front::syntax::{Reroll, Span};

pub type Id = u16;

/// A value's type, as the compiler checks it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ty {
    Int,
    Bool,
    Unit,
    Side,
    Enum(Id),
    /// One of a procedure outcome's listed symbols.
    Symbols(Vec<u32>),
    /// A pool of dice, not yet rolled (`red + white`): see [`PoolDef`].
    Dice,
    /// A roll read by an `effects` block: every tally it names at once.
    Tallies(Id),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Ruleset {
    pub id: String,
    pub title: String,
    pub measure: Option<String>,
    /// Every enum variant and outcome symbol, by global id.
    pub symbols: Vec<String>,
    pub dice: Vec<DieDef>,
    /// How the faces of rolled dice are read (`effects` blocks).
    pub effects: Vec<EffectsDef>,
    /// Every pool of dice a rule names as a value, by `Value::Pool` id.
    pub pools: Vec<PoolDef>,
    pub enums: Vec<EnumDef>,
    pub classes: Vec<String>,
    pub groups: Vec<(String, Vec<bool>)>,
    pub stats: Vec<String>,
    pub unit_types: Vec<UnitType>,
    pub qualities: Vec<QualityDef>,
    pub default_quality: Option<Id>,
    pub options: Vec<OptionDef>,
    pub sides: Vec<String>,
    pub states: Vec<StateDef>,
    pub side_states: Vec<StateDef>,
    pub facts: Vec<FactDef>,
    pub defines: Vec<Func>,
    pub tables: Vec<Func>,
    pub quantities: Vec<QuantityDef>,
    pub modifiers: Vec<ModifierDef>,
    pub procedures: Vec<ProcDef>,
    pub decisions: Vec<DecisionDef>,
    pub policies: Vec<PolicyDef>,
    /// The scenario a battle plays when none is given, as written (relative
    /// to the ruleset's file), with where it is declared.
    pub default_scenario: Option<(String, Span)>,
    pub armies: Vec<ArmyDef>,
    pub graph: Option<PhaseGraph>,
    /// Rules written as rhai scripts, compiled (see [`crate::compile::scripts`]).
    /// Not serialised (a rhai AST is not): a ruleset with hooks is never
    /// kept compiled (see [`crate::front::cache::CheckedRecord`]).
    #[serde(skip)]
    pub hooks: Vec<HookDef>,
    /// Decks of cards (see [`crate::compile::decks`]).
    pub decks: Vec<crate::compile::decks::DeckDef>,
    /// Every `chance`/`expect` compiled, by [`OddsEx::row`]: what a battle
    /// must watch to know when an answer it remembers is out of date.
    pub weighings: Vec<Weighing>,
    /// What the compiler warned of (a constant empty pool...): shown by
    /// `check`, the language server and `check --message-format json`.
    /// Not serialised: the ruleset kept for `muster odds`, which shows none.
    #[serde(skip)]
    pub warnings: Vec<crate::front::diagnostic::Diag>,
}

/// A `chance`/`expect` as a battle's memory of its answers sees it: the
/// procedure weighed and the expression read over its outcomes.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Weighing {
    pub procedure: Id,
    pub of: Ex,
}

impl Ruleset {
    pub fn procedure(&self, name: &str) -> Option<Id> {
        self.procedures
            .iter()
            .position(|p| p.name == name)
            .map(|i| i as Id)
    }
    pub fn unit_type(&self, name: &str) -> Option<Id> {
        self.unit_types
            .iter()
            .position(|u| u.name.eq_ignore_ascii_case(name))
            .map(|i| i as Id)
    }
    pub fn quality(&self, name: &str) -> Option<Id> {
        self.qualities
            .iter()
            .position(|u| u.name.eq_ignore_ascii_case(name))
            .map(|i| i as Id)
    }
    pub fn state(&self, name: &str) -> Option<Id> {
        self.states
            .iter()
            .position(|u| u.name == name)
            .map(|i| i as Id)
    }
    pub fn side_state(&self, name: &str) -> Option<Id> {
        self.side_states
            .iter()
            .position(|u| u.name == name)
            .map(|i| i as Id)
    }
    pub fn option(&self, name: &str) -> Option<Id> {
        self.options
            .iter()
            .position(|u| u.name == name)
            .map(|i| i as Id)
    }
    pub fn stat(&self, name: &str) -> Option<Id> {
        self.stats.iter().position(|u| u == name).map(|i| i as Id)
    }
    pub fn side(&self, name: &str) -> Option<Id> {
        self.sides.iter().position(|u| u == name).map(|i| i as Id)
    }
    pub fn fact(&self, name: &str) -> Option<Id> {
        self.facts
            .iter()
            .position(|u| u.name == name)
            .map(|i| i as Id)
    }
    pub fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Int => "int".into(),
            Ty::Bool => "bool".into(),
            Ty::Unit => "unit".into(),
            Ty::Side => "side".into(),
            Ty::Enum(e) => self.enums[*e as usize].name.clone(),
            Ty::Symbols(s) => s
                .iter()
                .map(|x| self.symbols[*x as usize].clone())
                .collect::<Vec<_>>()
                .join(" | "),
            Ty::Dice => "dice".into(),
            Ty::Tallies(e) => format!("a roll read as {}", self.effects[*e as usize].name),
        }
    }

    /// A pool as a reader writes it: `2 red + white`, or `no dice`.
    pub fn show_pool(&self, p: u32) -> String {
        let parts = &self.pools[p as usize].parts;
        if parts.is_empty() {
            return "no dice".into();
        }
        parts
            .iter()
            .map(|(d, n)| match n {
                1 => self.dice[*d as usize].name.clone(),
                n => format!("{n} {}", self.dice[*d as usize].name),
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// A pool of dice as a value (a table's `-> dice`): how many of each die,
/// by die id, each die once, in die order.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PoolDef {
    pub parts: Vec<(Id, i64)>,
}

/// How many bits each tally of a roll takes in the number that holds them
/// all: a roll is one `i64` (so that exact odds convolve it, and sampling
/// adds it, as any number), its first tally in the highest lane.
pub const TALLY_BITS: u32 = 15;
/// The most tallies one `effects` block may name (4 lanes of 15 bits).
pub const MAX_TALLIES: usize = 4;
/// The most one tally of a roll may count (one lane).
pub const MAX_TALLY: i64 = (1 << TALLY_BITS) - 1;

/// An `effects` block: how the faces of rolled dice are read. Each face
/// name yields tallies, some only when a condition over the block's
/// parameters holds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EffectsDef {
    pub name: String,
    pub doc: Option<String>,
    pub params: Vec<(String, Ty)>,
    pub tallies: Vec<String>,
    /// (face name, what it yields).
    pub rows: Vec<(String, Vec<EffectYield>)>,
    /// Locals the conditions need (the parameters first).
    pub slots: u16,
    /// Each die's faces, read (by die id, then face index), when no yield
    /// has a condition.
    pub fixed: Option<Vec<Vec<i64>>>,
    pub span: Span,
}

/// What one face yields of one tally, and when.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EffectYield {
    pub tally: u8,
    pub amount: i64,
    /// Over the block's parameters (in its frame).
    pub when: Option<Ex>,
}

impl EffectsDef {
    /// Where tally `k` sits in a roll's number.
    pub fn shift(&self, k: usize) -> u32 {
        TALLY_BITS * (self.tallies.len() - 1 - k) as u32
    }
    /// Tally `k` of a roll.
    pub fn tally(&self, packed: i64, k: usize) -> i64 {
        (packed >> self.shift(k)) & MAX_TALLY
    }
    /// A die's faces read by this block, each yield kept when `holds` says
    /// its condition holds: one number per face, every tally in its lane.
    pub fn read_die<E>(
        &self,
        die: &DieDef,
        mut holds: impl FnMut(&Ex) -> Result<bool, E>,
    ) -> Result<Vec<i64>, E> {
        let mut out = Vec::with_capacity(die.faces.len());
        for (face, _) in &die.faces {
            let mut v = 0i64;
            for (name, yields) in &self.rows {
                if name != face {
                    continue;
                }
                for y in yields {
                    if y.when.as_ref().map_or(Ok(true), &mut holds)? {
                        v += y.amount << self.shift(y.tally as usize);
                    }
                }
            }
            out.push(v);
        }
        Ok(out)
    }
    /// The most one face of these readings counts of any one tally.
    pub fn most_per_face(&self, readings: &[&[i64]]) -> i64 {
        let mut most = 0;
        for r in readings {
            for v in r.iter() {
                for k in 0..self.tallies.len() {
                    most = most.max(self.tally(*v, k));
                }
            }
        }
        most
    }
}

/// A die: its faces in order, each with a name and a value.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DieDef {
    pub name: String,
    pub faces: Vec<(String, i64)>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EnumDef {
    pub name: String,
    /// Global symbol ids of the variants, in order.
    pub variants: Vec<u32>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UnitType {
    pub name: String,
    pub classes: Vec<bool>,
    /// One value per declared stat.
    pub stats: Vec<Value>,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct QualityDef {
    pub name: String,
    /// `STAT +N`: added to the unit type's value (a stat the type lacks
    /// stays `none`).
    pub adjust: Vec<(Id, i64)>,
    /// `STAT = V`: the value, whatever the unit type's.
    pub set: Vec<(Id, Value)>,
    pub points: Option<i64>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OptionDef {
    pub name: String,
    pub title: Option<String>,
    pub on: bool,
    /// A number option's value (fixed when the ruleset is compiled); `None`
    /// for a switch.
    pub number: Option<i64>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StateDef {
    pub name: String,
    pub ty: Ty,
    /// Evaluated with the unit (or side) in slot 0.
    pub init: Func,
    /// Reset to the initial value at the start of every turn of a battle.
    pub each_turn: bool,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FactDef {
    pub name: String,
    pub params: Vec<Ty>,
    pub ty: Ty,
    pub default: Option<Value>,
    /// Values noted during a battle turn are forgotten at the next.
    pub each_turn: bool,
    /// How a battle derives the fact from the table (`in battle: EXPR`).
    pub battle: Option<Func>,
    /// A hook that derives the fact (in battles and situations alike).
    pub hook: Option<Id>,
    /// Each parameter's name, where the declaration names it.
    pub param_names: Vec<Option<String>>,
    /// The declaration (its doc comment is the comment above it): `odds`
    /// reads a stated fact back in its words.
    pub span: Span,
}

/// A define, a table (rows compiled to a chain of `If`s), or an initialiser:
/// a body over a frame of `slots` locals, the parameters first.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Func {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ty: Ty,
    pub slots: u16,
    pub body: Ex,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct QuantityDef {
    pub func: Func,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// Modifiers on this quantity, in the order they apply.
    pub modifiers: Vec<Id>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ModOp {
    Set,
    Add,
    Sub,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ModifierDef {
    pub name: String,
    pub source: Option<String>,
    pub quantity: Id,
    pub op: ModOp,
    /// Both evaluated in the quantity's frame (its parameters in its slots).
    pub amount: Ex,
    pub when: Option<Ex>,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OutcomeDef {
    pub name: String,
    pub ty: Ty,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProcDef {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub outcomes: Vec<OutcomeDef>,
    pub slots: u16,
    pub body: Vec<St>,
    pub span: Span,
    /// The names bound at the end of the body (parameters, then the
    /// top-level `let`s) and their slots: what an `after` hook sees.
    pub names: Vec<(String, u16)>,
    pub hooks: ProcHooks,
}

/// The hooks attached to a procedure, in the order they are declared.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcHooks {
    pub before: Vec<Id>,
    pub after: Vec<Id>,
    /// A hook whose script is the procedure's body.
    pub replace: Option<Id>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DecisionDef {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub doc: Option<String>,
    /// What a battle chooses among, and what then happens.
    pub choice: Option<ChoiceDef>,
}

pub use crate::front::syntax::ChoiceKind;

/// A decision's body, compiled. Every expression runs in one frame: the
/// decision's parameters, then the option's names (`vars`), then the names
/// the bound clauses introduce, then temporaries (`slots` in all).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ChoiceDef {
    pub kind: ChoiceKind,
    /// Slots of the option's names (`s, t`; `c onto t`; `u`).
    pub vars: Vec<u16>,
    /// Which options are legal.
    pub legal: Ex,
    /// Options that must be taken whatever the policy prefers.
    pub must: Option<Ex>,
    /// The order options are taken in (lowest first).
    pub order: Option<Ex>,
    /// Charges: the most a charge may cost, and the widest wheel (degrees).
    pub reach: Option<Ex>,
    pub wheel: Option<Ex>,
    /// Moves: the allowance, and the enemy buffer zone.
    pub allowance: Option<Ex>,
    pub buffer: Option<Ex>,
    /// Retirements: how far straight back.
    pub distance: Option<Ex>,
    /// Retirements: `turn_about COND`: when it holds, the unit (or group)
    /// ends turned about in place, its back to where it came from.
    pub turn_about: Option<Ex>,
    /// Retirements: `turn_first COND`: when it holds, the unit first turns
    /// about in place, so it goes back toward where its front faced.
    pub turn_first: Option<Ex>,
    /// Retirements: `away_from X`: when X is another unit on the table, the
    /// unit first turns in place to face X's centre, so it goes straight
    /// back directly away from X.
    pub away_from: Option<Ex>,
    /// Charges: `frontal COND`: when it holds for the pair, the charge must
    /// end touching the target's front (some part of the charger, or of the
    /// member that touches, in the target's front zone).
    pub frontal: Option<Ex>,
    /// `manoeuvre m: OK`: which manoeuvres a unit may use (slot of m).
    pub manoeuvre: Option<(u16, Ex)>,
    /// `finish n: OK`: the change of direction n (a wheel, an about face or
    /// a turn) a unit may make at the end of a move made with manoeuvre m,
    /// after its straight part (slot of n).
    pub finish: Option<(u16, Ex)>,
    /// `control e: COND`: enemy e holds the unit in its zone of control.
    pub control: Option<(u16, Ex)>,
    /// `through f: OK`: the unit may pass through friend f.
    pub through: Option<(u16, Ex)>,
    /// `together g: COND`: unit g moves with the mover (or charger) as one
    /// body (a group).
    pub together: Option<(u16, Ex)>,
    /// Retirements: `meeting e: COND`: an enemy e in the way back for which
    /// COND holds stops the unit in contact with it (not a quarter short);
    /// `then` reads e, the enemy met or `none`.
    pub meeting: Option<(u16, Ex)>,
    /// `check PROC(args) unless COND`: the procedure's `passed` outcome
    /// decides whether the option may be taken.
    pub check: Option<(Id, Vec<Ex>, Option<Ex>)>,
    /// `then PROC(args)`: what taking an option does.
    pub then: Option<(Id, Vec<Ex>)>,
    /// `pay DECK COST from HOLDER [to HOLDER]`: what taking an option costs
    /// (a `pick`'s; see [`crate::compile::hands`]).
    pub pay: Option<PayDef>,
    pub slots: u16,
    pub span: Span,
}

/// A `pick`'s `pay` clause: taking an option costs the lowest card of value
/// `cost` or more from `from`'s hand of `deck`; the option is refused when
/// the hand holds none. With `to`, the card goes into that unit's hand
/// (a gift), else to the deck's discards.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PayDef {
    pub deck: Id,
    pub cost: Ex,
    pub from: Ex,
    pub to: Option<Ex>,
}

/// A policy: a preference score per decision (for the decisions it covers),
/// evaluated in the decision's frame.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PolicyDef {
    pub name: String,
    pub doc: Option<String>,
    /// Per decision id: the preference and the slots its frame needs.
    pub prefer: Vec<Option<(Ex, u16)>>,
    /// How the player looks for its moves (`search = ...`).
    pub search: Search,
    pub span: Span,
}

/// How a policy's player looks for the moves of a `move` decision
/// (`search = thorough | purposeful | stand_off` in the policy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Search {
    /// A fixed fan of manoeuvres: each allowed manoeuvre at the whole and
    /// half the allowance, wheels of 22.5 and 45 degrees either way, and
    /// so on (every candidate checked, every legal one scored).
    #[default]
    Thorough,
    /// Moves toward what the policy can value: toward or to face each
    /// enemy within reach, into the line of the nearest friends, standing
    /// still, falling back; one candidate per purpose and manoeuvre.
    Purposeful,
    /// The purposeful moves, and stops short of each purpose to stand off
    /// at: all and half of what a wheel, a back wheel or an about face
    /// leaves, an oblique toward and away, half a fall back, shifts along
    /// the line either way. For a policy that values a gap to keep short
    /// of contact (Matchlocks' `preferred_gap`), which the purposeful
    /// moves, stopping at contact, play weaker than the thorough fan.
    StandOff,
}

impl Search {
    /// Every search, with its name in a policy.
    pub const ALL: [(Search, &'static str); 3] = [
        (Search::Thorough, "thorough"),
        (Search::Purposeful, "purposeful"),
        (Search::StandOff, "stand_off"),
    ];

    /// Whether the search heads for purposes (the nearest enemies, the
    /// friend's place), not the whole fan: purposeful and stand-off.
    pub fn has_purposes(self) -> bool {
        self != Search::Thorough
    }

    /// The names of every search, as a sentence lists them ("`a`, `b`
    /// or `c`", each wrapped by `quote`): for diagnostics' help.
    pub fn names(quote: &str) -> String {
        let names: Vec<String> = Search::ALL
            .iter()
            .map(|(_, n)| format!("{quote}{n}{quote}"))
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        }
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ArmyDef {
    pub name: String,
    pub units: Option<(i64, i64)>,
    pub points: Option<(i64, i64)>,
    pub per_command_units: Option<(i64, i64)>,
    /// (what is limited, per command?, limit kind, number)
    pub limits: Vec<ArmyLimit>,
    /// `price DEFINE`: the define (of one unit) that prices a unit.
    pub price: Option<Id>,
    /// `require DEFINE "why"`: defines of one side that must hold, with
    /// the reason and where the rule is written.
    pub requires: Vec<(Id, String, crate::front::syntax::Span)>,
    /// `same units for every side` (true) or `same points for every side`
    /// (false), with where the rule is written: checked across the armies
    /// of a match.
    pub same: Vec<(bool, crate::front::syntax::Span)>,
    /// `TYPES always QUALITIES`.
    pub always: Vec<ArmyAlways>,
}

/// `Commander | Cannons always ordinary`: units of these types must have
/// one of these qualities.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ArmyAlways {
    /// The types as written (`Commander | Cannons`).
    pub label: String,
    /// Unit types matched (by index).
    pub types: Vec<bool>,
    pub qualities: Vec<Id>,
    pub span: crate::front::syntax::Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ArmyLimit {
    pub label: String,
    pub per_command: bool,
    pub matches: ArmyMatch,
    pub kind: crate::front::syntax::Limit,
    pub n: i64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ArmyMatch {
    /// Unit types matched (by index).
    Types(Vec<bool>),
    Quality(Id),
}

/// A statement of a procedure.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum St {
    /// `let`: the slot, the value, and the value's place in the source
    /// (where a run-time fault in it is reported; so for each span below).
    Let(u16, Ex, Span),
    Outcome(u16, Ex, Span),
    Require(Ex, String, Span),
    /// `if`: the condition, the blocks, the condition's place.
    If(Ex, Vec<St>, Vec<St>, Span),
    AssignState {
        unit: Ex,
        state: Id,
        op: ModOp,
        value: Ex,
        span: Span,
    },
    AssignSideState {
        side: Ex,
        state: Id,
        op: ModOp,
        value: Ex,
        span: Span,
    },
    /// Call a procedure: its arguments, and the slot in this frame where the
    /// callee's frame starts once inlined.
    Call(Id, Vec<Ex>, Span),
    /// `for`: over the sides (`true`) or units, the variable's slot, the
    /// condition, the block.
    For(bool, u16, Ex, Vec<St>, Span),
    /// Note a fact in a battle (odds of one resolution ignore it).
    Note(Id, Vec<Ex>, Ex, Span),
}

impl St {
    /// The statement's place in the source: where a run-time fault in it
    /// is reported.
    pub fn span(&self) -> Span {
        match self {
            St::Let(_, _, s)
            | St::Outcome(_, _, s)
            | St::Require(_, _, s)
            | St::If(_, _, _, s)
            | St::For(_, _, _, _, s)
            | St::AssignState { span: s, .. }
            | St::AssignSideState { span: s, .. }
            | St::Call(_, _, s)
            | St::Note(_, _, _, s) => *s,
        }
    }
}

/// What a pool of dice produces.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum DiceMode {
    /// The sum of the face values.
    Sum,
    /// How many dice show the given score or more.
    Scoring(Box<Ex>),
    /// How many dice show one of the marked faces.
    Counting(Vec<bool>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Bin {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

/// The most dice one pool may have. A rule that computes more (a stat
/// mistyped as 1000000) gets a diagnostic instead of a roll that would
/// take minutes and record gigabytes ([`crate::run::dice::pool_too_big`]).
pub const MAX_POOL: i64 = 10_000;

/// The most files a formation holds (a file-by-file fight is unrolled to
/// this many rounds; [`crate::run::battlefield::files`] packs a queue of
/// them, four bits a file, in a 64-bit word).
pub const MAX_FILES: usize = 14;

/// Functions every ruleset has: arithmetic, and the battlefield's measures
/// (which have values only in a battle: an odds situation states the facts
/// they derive instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Builtin {
    Min,
    Max,
    /// Round up: `ceil(figures * 3 / 2)` dice for 1.5 per figure.
    Ceil,
    Floor,
    /// A dice-off: roll both sides, again while they tie; 1 when the first
    /// is higher, 2 when the second is (initiative, the bonus-card dice-off).
    RollOff,
    /// `distance(a, b)`: closest distance between the two bases.
    Distance,
    /// `zone(a, b)`: where b lies as seen from a (core's `zone`).
    Zone,
    /// `same_flank(a, b, c)`: b and c both have a part in the same flank zone of a.
    SameFlank,
    /// `in_front_within(a, b, d)`: part of b in a's front zone within d of its front edge.
    InFrontWithin,
    /// `front_flank(a, b)`: b is to a's flank with its centre ahead of the
    /// line of a's front edge (TVBD v2.0a's to-front-flank; a unit to flank
    /// and not so is behind-flank).
    FrontFlank,
    /// `in_contact(a, b)`: the bases touch.
    InContact,
    /// `aligned(a, b)`: facing the same or the opposite way, sides in line.
    Aligned,
    /// `nearest_enemy(a)`, `nearest_friend(a)`: the closest unit on the
    /// table of the other side / the same side (`none` if there is none).
    NearestEnemy,
    NearestFriend,
    /// `in_terrain(a, kind)`: a's centre point is in a feature of that kind.
    InTerrain,
    /// `touches_terrain(a, kind)`: any part of a is in such a feature; while
    /// a move is being weighed, any part of its path.
    TouchesTerrain,
    /// `within_terrain(a, kind)`: every corner of a's base is inside one
    /// feature of that kind (the whole base, the features being convex).
    WithinTerrain,
    /// `uphill(a, b)`: a's centre is higher than b's (heights from the
    /// features whose terrain kind is a hill: highest at the centre).
    Uphill,
    /// `sight_crosses(a, b, kind)`: the line between the centres crosses a
    /// feature of that kind that holds neither centre.
    SightCrosses,
    /// `crossed_terrain(a, kind)`: the straight line from where a's centre
    /// stood before its last move this turn to where it stands enters a
    /// feature of that kind (crosses it, for a `line`).
    CrossedTerrain,
    /// `units_between(a, b)`: another unit's base lies across the line between the centres.
    UnitsBetween,
    /// `gap_narrower(a, b, w)`: the line between the centres passes between
    /// two of a's friends whose bases are less than w apart (one on each
    /// side of the line).
    GapNarrower,
    /// `reachable(a, b, reach, wheel)`: a charge (a wheel of at most `wheel`
    /// degrees, then straight) costing at most `reach` brings a into contact with b.
    Reachable,
    /// `from_own_edge(a)`: how far a's centre is from its army's base edge.
    FromOwnEdge,
    /// `line_within(a, b, c, d)`: the straight line between a's and b's
    /// centres passes within d of c's base (through it, when d is 0).
    LineWithin,
    /// `from_left_edge(a, b)`: how far a's centre is from the table's
    /// left-hand side edge as b's army sees it, standing at its base edge
    /// and looking across the table (Matchlocks' "left to right across the
    /// table, viewed by the Player who Moved last").
    FromLeftEdge,
    /// `from_centre_line(a)`: how far a's centre is from the line that runs
    /// from one base edge to the other through the middle of the table
    /// (x = width / 2): how far out from the centre zone's middle.
    FromCentreLine,
    /// `same_command(a, b)`: the scenario puts both in one command.
    SameCommand,
    /// `grouped(a, b)`: both on the table, of one side and one command, and
    /// linked by a chain of touching, aligned units (a group).
    Grouped,
    /// `command_number(a)`: which of its army's commands a is in, counting
    /// from 0 in the scenario's order.
    CommandNumber,
    /// `in_reserve(a)`: the scenario holds a back (`reserve = true`) and it
    /// has not yet come onto the table.
    InReserve,
    /// `table_width()`, `table_depth()`.
    TableWidth,
    TableDepth,
    /// `group_reachable(a, b, reach, wheel)`: as `reachable`, for a's whole
    /// group (`grouped`) charging as one body.
    GroupReachable,
    /// `group_reachable_front(a, b, reach, wheel)`: as `group_reachable`,
    /// but only a path that ends with a member touching b's front will do
    /// (the reach check that agrees with a charge's `frontal` clause).
    GroupReachableFront,
    /// `moved_this_turn(a)`: how far a's centre is from where it stood when
    /// the turn began.
    MovedThisTurn,
    /// `in_arc(a, b, degrees)`: some part of b lies within the arc of that
    /// many degrees centred straight ahead of the middle of a's front edge.
    InArc,
    /// `on_line_through(a, b, c)`: the line from a's centre through b's
    /// centre, carried on beyond b, crosses c's base.
    OnLineThrough,
    /// `room_behind(a)`: how far a could go straight back before its base
    /// left the table or touched an enemy's base behind it (friends are
    /// the rules' to pass or not).
    RoomBehind,
    /// `retired_through(a, b)`: a's last `retire` this turn went through
    /// b's base (a friend its `through` let it pass).
    RetiredThrough,
    /// `opposite_file(a, i, d)`: the file of d that a's file i touches with
    /// its front (0 if none); the files are the units' `formation` state
    /// (see [`crate::run::battlefield::files`]).
    OppositeFile,
    /// `files_in_contact(a, d)`: how many of a's files touch d.
    FilesInContact,
    /// `room_to_expand(a, left, right)`: a's base, `left` files wider on its
    /// left and `right` on its right, is on the table and on no other unit.
    RoomToExpand,
    /// `cards_held(a, v)`: how many cards worth `v` or more unit a holds in its
    /// hands (of every deck; 0 outside a battle and before any `deal`).
    CardsHeld,
    // Formations (pure: numbers in, a number out; see
    // `crate::run::battlefield::files`).
    /// `formation(files, bases, front)`.
    Formation,
    /// `files(f)`.
    Files,
    /// `file_bases(f, i)`.
    FileBases,
    /// `formation_bases(f)`.
    FormationBases,
    /// `formation_ranks(f)`.
    FormationRanks,
    /// `front_bases(f)`.
    FrontBases,
    /// `remove_bases(f, n)`.
    RemoveBases,
    /// `remove_front_bases(f, n)`.
    RemoveFrontBases,
    /// `expand(f, left, right)`.
    Expand,
    /// `contract(f, left, right)`.
    Contract,
    // The bookkeeping of `for file` (no name: the compiler writes them).
    LoopAdd,
    LoopStart,
    LoopNext,
    LoopTook,
    LoopUnqueue,
    LoopAfter,
    LoopMark,
    LoopMarkOf,
}

/// The types of a builtin's parameters and result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BTy {
    Num,
    Bool,
    Unit,
    /// core's `enum zone`.
    Zone,
    /// the ruleset's `enum terrain` (stdlib battle's).
    Terrain,
}

impl BTy {
    /// Its name as a ruleset writes the type.
    pub fn word(self) -> &'static str {
        match self {
            BTy::Num => "int",
            BTy::Bool => "bool",
            BTy::Unit => "unit",
            BTy::Zone => "zone",
            BTy::Terrain => "terrain",
        }
    }
}

impl Builtin {
    /// Every builtin a ruleset may call, by its name.
    pub const NAMED: &'static [(&'static str, Builtin)] = &[
        ("min", Builtin::Min),
        ("max", Builtin::Max),
        ("ceil", Builtin::Ceil),
        ("floor", Builtin::Floor),
        ("roll_off", Builtin::RollOff),
        ("distance", Builtin::Distance),
        ("zone", Builtin::Zone),
        ("same_flank", Builtin::SameFlank),
        ("in_front_within", Builtin::InFrontWithin),
        ("front_flank", Builtin::FrontFlank),
        ("in_contact", Builtin::InContact),
        ("aligned", Builtin::Aligned),
        ("nearest_enemy", Builtin::NearestEnemy),
        ("nearest_friend", Builtin::NearestFriend),
        ("in_terrain", Builtin::InTerrain),
        ("touches_terrain", Builtin::TouchesTerrain),
        ("within_terrain", Builtin::WithinTerrain),
        ("uphill", Builtin::Uphill),
        ("sight_crosses", Builtin::SightCrosses),
        ("crossed_terrain", Builtin::CrossedTerrain),
        ("units_between", Builtin::UnitsBetween),
        ("gap_narrower", Builtin::GapNarrower),
        ("reachable", Builtin::Reachable),
        ("from_own_edge", Builtin::FromOwnEdge),
        ("from_centre_line", Builtin::FromCentreLine),
        ("from_left_edge", Builtin::FromLeftEdge),
        ("line_within", Builtin::LineWithin),
        ("same_command", Builtin::SameCommand),
        ("grouped", Builtin::Grouped),
        ("command_number", Builtin::CommandNumber),
        ("in_reserve", Builtin::InReserve),
        ("table_width", Builtin::TableWidth),
        ("table_depth", Builtin::TableDepth),
        ("in_arc", Builtin::InArc),
        ("moved_this_turn", Builtin::MovedThisTurn),
        ("group_reachable", Builtin::GroupReachable),
        ("group_reachable_front", Builtin::GroupReachableFront),
        ("on_line_through", Builtin::OnLineThrough),
        ("room_behind", Builtin::RoomBehind),
        ("retired_through", Builtin::RetiredThrough),
        ("opposite_file", Builtin::OppositeFile),
        ("files_in_contact", Builtin::FilesInContact),
        ("room_to_expand", Builtin::RoomToExpand),
        ("cards_held", Builtin::CardsHeld),
        ("formation", Builtin::Formation),
        ("files", Builtin::Files),
        ("file_bases", Builtin::FileBases),
        ("formation_bases", Builtin::FormationBases),
        ("formation_ranks", Builtin::FormationRanks),
        ("front_bases", Builtin::FrontBases),
        ("remove_bases", Builtin::RemoveBases),
        ("remove_front_bases", Builtin::RemoveFrontBases),
        ("expand", Builtin::Expand),
        ("contract", Builtin::Contract),
    ];

    pub fn named(name: &str) -> Option<Builtin> {
        Builtin::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, b)| b)
    }

    /// How it is called: `distance(unit, unit) -> int`.
    pub fn shown(name: &str) -> Option<String> {
        let (params, result) = Builtin::named(name)?.signature();
        let params: Vec<&str> = params.iter().map(|t| t.word()).collect();
        Some(format!(
            "{name}({}) -> {}",
            params.join(", "),
            result.word()
        ))
    }

    /// Parameter types and result type.
    pub fn signature(self) -> (&'static [BTy], BTy) {
        use BTy::*;
        use Builtin as B;
        match self {
            B::Min | B::Max | B::RollOff => (&[Num, Num], Num),
            B::Ceil | B::Floor => (&[Num], Num),
            B::Distance => (&[Unit, Unit], Num),
            B::Zone => (&[Unit, Unit], Zone),
            B::SameFlank => (&[Unit, Unit, Unit], Bool),
            B::InFrontWithin => (&[Unit, Unit, Num], Bool),
            B::InContact
            | B::Aligned
            | B::Uphill
            | B::UnitsBetween
            | B::SameCommand
            | B::Grouped
            | B::RetiredThrough
            | B::FrontFlank => (&[Unit, Unit], Bool),
            B::NearestEnemy | B::NearestFriend => (&[Unit], Unit),
            B::InTerrain | B::TouchesTerrain | B::WithinTerrain | B::CrossedTerrain => {
                (&[Unit, Terrain], Bool)
            }
            B::SightCrosses => (&[Unit, Unit, Terrain], Bool),
            B::GapNarrower => (&[Unit, Unit, Num], Bool),
            B::Reachable | B::GroupReachable | B::GroupReachableFront => {
                (&[Unit, Unit, Num, Num], Bool)
            }
            B::FromOwnEdge | B::FromCentreLine | B::CommandNumber => (&[Unit], Num),
            B::FromLeftEdge => (&[Unit, Unit], Num),
            B::LineWithin => (&[Unit, Unit, Unit, Num], Bool),
            B::InReserve => (&[Unit], Bool),
            B::TableWidth | B::TableDepth => (&[], Num),
            B::InArc => (&[Unit, Unit, Num], Bool),
            B::MovedThisTurn | B::RoomBehind => (&[Unit], Num),
            B::OnLineThrough => (&[Unit, Unit, Unit], Bool),
            B::OppositeFile => (&[Unit, Num, Unit], Num),
            B::CardsHeld => (&[Unit, Num], Num),
            B::FilesInContact => (&[Unit, Unit], Num),
            B::RoomToExpand => (&[Unit, Num, Num], Bool),
            B::Formation => (&[Num, Num, Bool], Num),
            B::Files | B::FormationBases | B::FormationRanks | B::FrontBases => (&[Num], Num),
            B::FileBases
            | B::RemoveBases
            | B::RemoveFrontBases
            | B::LoopNext
            | B::LoopTook
            | B::LoopUnqueue => (&[Num, Num], Num),
            B::Expand | B::Contract | B::LoopStart | B::LoopMark | B::LoopMarkOf => {
                (&[Num, Num, Num], Num)
            }
            B::LoopAdd => (&[Num, Num, Bool], Num),
            B::LoopAfter => (&[Num, Num, Num, Num], Num),
        }
    }

    /// Is it a builtin of formations or of the `for file` loop: whole
    /// numbers in, a whole number out ([`crate::run::eval::formation_call`])?
    pub fn on_formations(self) -> bool {
        !self.measures_table()
            && !matches!(
                self,
                Builtin::Min | Builtin::Max | Builtin::Ceil | Builtin::Floor | Builtin::RollOff
            )
    }

    /// Does it measure the battlefield (and so have a value only in a battle)?
    pub fn measures_table(self) -> bool {
        !matches!(
            self,
            Builtin::Min
                | Builtin::Max
                | Builtin::Ceil
                | Builtin::Floor
                | Builtin::RollOff
                | Builtin::Formation
                | Builtin::Files
                | Builtin::FileBases
                | Builtin::FormationBases
                | Builtin::FormationRanks
                | Builtin::FrontBases
                | Builtin::RemoveBases
                | Builtin::RemoveFrontBases
                | Builtin::Expand
                | Builtin::Contract
                | Builtin::LoopAdd
                | Builtin::LoopStart
                | Builtin::LoopNext
                | Builtin::LoopTook
                | Builtin::LoopUnqueue
                | Builtin::LoopAfter
                | Builtin::LoopMark
                | Builtin::LoopMarkOf
        )
    }
}

/// A compiled expression.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Ex {
    Const(Value),
    Local(u16),
    Option(Id),
    Stat(Box<Ex>, Id),
    State(Box<Ex>, Id),
    SideState(Box<Ex>, Id),
    SideOf(Box<Ex>),
    Fact(Id, Vec<Ex>),
    Define(Id, Vec<Ex>),
    Table(Id, Vec<Ex>),
    Quantity(Id, Vec<Ex>),
    Builtin(Builtin, Vec<Ex>),
    /// Unit type membership: one flag per unit type.
    IsType(Box<Ex>, Vec<bool>),
    /// Quality membership (`u is inferior`): one flag per quality.
    IsQuality(Box<Ex>, Vec<bool>),
    /// Symbol membership.
    IsSym(Box<Ex>, Vec<u32>),
    Not(Box<Ex>),
    Neg(Box<Ex>),
    Bin(Bin, Box<Ex>, Box<Ex>),
    If(Box<Ex>, Box<Ex>, Box<Ex>),
    /// Quantifier over units (`sides == false`) or sides; the variable's slot.
    Quant(crate::front::syntax::Quant, bool, u16, Box<Ex>),
    Dice {
        count: Box<Ex>,
        die: Id,
        mode: DiceMode,
        reroll: Option<Reroll>,
        span: Span,
    },
    /// `roll POOL as EFFECTS(ARGS)`: the parts of the pool rolled together,
    /// their faces read by an `effects` block: one number holding every
    /// tally (see [`EffectsDef::tally`]).
    Roll(Box<Roll>),
    /// Tally `k` of a roll (`r.wounds`), read by `effects`.
    Tally(Box<Ex>, Id, u8),
    /// `chance(...)` / `expect(...)`: a procedure's exact odds, read.
    Odds(Box<OddsEx>),
}

/// `chance(PROC(ARGS) given FACTS, COND)` or `expect(..., VALUE)` compiled
/// (see [`crate::compile::chance`] and [`crate::run::chance`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OddsEx {
    /// A mean of `of` (else the probability that `of` holds).
    pub expect: bool,
    pub procedure: Id,
    pub args: Vec<Ex>,
    /// Facts noted in the world the odds are taken in: (fact, arguments, value).
    pub given: Vec<(Id, Vec<Ex>, Ex)>,
    /// The local slot of the procedure's first outcome (the others follow):
    /// `of` reads them.
    pub first: u16,
    /// How many outcomes the procedure has (slots from `first`).
    pub outcomes: u16,
    /// Its place in [`Ruleset::weighings`].
    pub row: u16,
    pub of: Ex,
    pub span: Span,
}

/// A roll of a pool (see [`Ex::Roll`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Roll {
    pub parts: Vec<RollPart>,
    pub effects: Id,
    pub args: Vec<Ex>,
    pub span: Span,
}

/// Part of a pool: `count` of a die, or `count` times a pool value.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RollPart {
    pub count: Ex,
    pub dice: PartDice,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum PartDice {
    Die(Id),
    /// An expression of type `dice` (a `Value::Pool`).
    Pool(Ex),
}

impl Ex {
    /// Does evaluating this roll dice?
    pub fn is_random(&self) -> bool {
        match self {
            // A roll-off rolls again on a tie, whatever its sides are.
            Ex::Dice { .. } | Ex::Roll(_) | Ex::Builtin(Builtin::RollOff, _) => true,
            e => e.any_child(&mut |c| c.is_random()),
        }
    }

    /// The `and`-ed parts of this expression, in order, into `out` (the
    /// expression itself when it is not an `and`).
    pub fn conjuncts<'e>(&'e self, out: &mut Vec<&'e Ex>) {
        match self {
            Ex::Bin(Bin::And, a, b) => {
                a.conjuncts(out);
                b.conjuncts(out);
            }
            other => out.push(other),
        }
    }

    /// Does `f` hold for any direct child (short-circuits)? The one walk over
    /// an expression's children that the analyses share.
    pub fn any_child(&self, f: &mut dyn FnMut(&Ex) -> bool) -> bool {
        match self {
            Ex::Const(_) | Ex::Local(_) | Ex::Option(_) => false,
            Ex::Stat(e, _)
            | Ex::State(e, _)
            | Ex::SideState(e, _)
            | Ex::SideOf(e)
            | Ex::IsType(e, _)
            | Ex::IsQuality(e, _)
            | Ex::IsSym(e, _)
            | Ex::Not(e)
            | Ex::Neg(e)
            | Ex::Quant(_, _, _, e)
            | Ex::Tally(e, _, _) => f(e),
            Ex::Roll(r) => {
                r.parts.iter().any(|p| {
                    f(&p.count)
                        || match &p.dice {
                            PartDice::Pool(e) => f(e),
                            PartDice::Die(_) => false,
                        }
                }) || r.args.iter().any(&mut *f)
            }
            Ex::Fact(_, a)
            | Ex::Define(_, a)
            | Ex::Table(_, a)
            | Ex::Quantity(_, a)
            | Ex::Builtin(_, a) => a.iter().any(&mut *f),
            Ex::Bin(_, a, b) => f(a) || f(b),
            Ex::If(c, a, b) => f(c) || f(a) || f(b),
            Ex::Odds(o) => {
                o.args.iter().any(&mut *f)
                    || o.given
                        .iter()
                        .any(|(_, a, v)| a.iter().any(&mut *f) || f(v))
                    || f(&o.of)
            }
            Ex::Dice { count, mode, .. } => {
                f(count)
                    || match mode {
                        DiceMode::Scoring(t) => f(t),
                        _ => false,
                    }
            }
        }
    }
}

/// Where a compiled hook runs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Point {
    Before(Id),
    After(Id),
    /// The procedure's body is the script.
    Replace(Id),
    BeforeStep(String),
    AfterStep(String),
    /// The script's value is the fact's.
    Fact(Id),
}

/// A compiled hook: its script compiled by rhai and checked
/// ([`crate::compile::scripts`]), run by [`crate::run::hooks`].
#[derive(Clone, Debug)]
pub struct HookDef {
    pub name: String,
    pub doc: Option<String>,
    pub point: Point,
    /// The names the script sees, in the order their values are given.
    pub vars: Vec<String>,
    /// Does the script (or a helper it calls) roll dice?
    pub rolls: bool,
    pub(crate) ast: std::sync::Arc<rhai::AST>,
    /// The script's text in its source, and where each of its lines starts
    /// (to point a diagnostic at the script's line).
    pub(crate) span: Span,
    pub(crate) lines: Vec<u32>,
}

impl HookDef {
    /// The hook's script in its source.
    pub fn span(&self) -> Span {
        self.span
    }
}
