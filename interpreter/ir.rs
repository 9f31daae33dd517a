//! The compiled ruleset: every name resolved to an index, every expression
//! type-checked. This is what the odds engine (and later the battle engine)
//! runs; nothing here refers back to source text except spans for runtime
//! diagnostics.

use crate::phase_graph::PhaseGraph;
use crate::syntax::{Reroll, Span};
use crate::value::Value;

pub type Id = u16;

/// A value's type, as the compiler checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Bool,
    Unit,
    Side,
    Enum(Id),
    /// One of a procedure outcome's listed symbols.
    Symbols(Vec<u32>),
}

#[derive(Clone, Debug)]
pub struct Ruleset {
    pub id: String,
    pub title: String,
    pub measure: Option<String>,
    /// Every enum variant and outcome symbol, by global id.
    pub symbols: Vec<String>,
    pub dice: Vec<DieDef>,
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
    pub armies: Vec<ArmyDef>,
    pub graph: Option<PhaseGraph>,
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
        }
    }
}

/// A die: its faces in order, each with a name and a value.
#[derive(Clone, Debug)]
pub struct DieDef {
    pub name: String,
    pub faces: Vec<(String, i64)>,
}

#[derive(Clone, Debug)]
pub struct EnumDef {
    pub name: String,
    /// Global symbol ids of the variants, in order.
    pub variants: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct UnitType {
    pub name: String,
    pub classes: Vec<bool>,
    /// One value per declared stat.
    pub stats: Vec<Value>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct QualityDef {
    pub name: String,
    pub adjust: Vec<(Id, i64)>,
    pub points: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct OptionDef {
    pub name: String,
    pub title: Option<String>,
    pub on: bool,
}

#[derive(Clone, Debug)]
pub struct StateDef {
    pub name: String,
    pub ty: Ty,
    /// Evaluated with the unit (or side) in slot 0.
    pub init: Func,
}

#[derive(Clone, Debug)]
pub struct FactDef {
    pub name: String,
    pub params: Vec<Ty>,
    pub ty: Ty,
    pub default: Option<Value>,
}

/// A define, a table (rows compiled to a chain of `If`s), or an initialiser:
/// a body over a frame of `slots` locals, the parameters first.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ty: Ty,
    pub slots: u16,
    pub body: Ex,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct QuantityDef {
    pub func: Func,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// Modifiers on this quantity, in the order they apply.
    pub modifiers: Vec<Id>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModOp {
    Set,
    Add,
    Sub,
}

#[derive(Clone, Debug)]
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

#[derive(Clone, Debug)]
pub struct OutcomeDef {
    pub name: String,
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub struct ProcDef {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub outcomes: Vec<OutcomeDef>,
    pub slots: u16,
    pub body: Vec<St>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct DecisionDef {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub doc: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ArmyDef {
    pub name: String,
    pub units: Option<(i64, i64)>,
    pub points: Option<(i64, i64)>,
    pub per_command_units: Option<(i64, i64)>,
    /// (what is limited, per command?, limit kind, number)
    pub limits: Vec<ArmyLimit>,
}

#[derive(Clone, Debug)]
pub struct ArmyLimit {
    pub label: String,
    pub per_command: bool,
    pub matches: ArmyMatch,
    pub kind: crate::syntax::Limit,
    pub n: i64,
}

#[derive(Clone, Debug)]
pub enum ArmyMatch {
    /// Unit types matched (by index).
    Types(Vec<bool>),
    Quality(Id),
}

/// A statement of a procedure.
#[derive(Clone, Debug)]
pub enum St {
    Let(u16, Ex),
    Outcome(u16, Ex),
    Require(Ex, String, Span),
    If(Ex, Vec<St>, Vec<St>),
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
}

/// What a pool of dice produces.
#[derive(Clone, Debug)]
pub enum DiceMode {
    /// The sum of the face values.
    Sum,
    /// How many dice show the given score or more.
    Scoring(Box<Ex>),
    /// How many dice show one of the marked faces.
    Counting(Vec<bool>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Functions every ruleset has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Min,
    Max,
    /// Round up: `ceil(figures * 3 / 2)` dice for 1.5 per figure.
    Ceil,
    Floor,
    /// A dice-off: roll both sides, again while they tie; 1 when the first
    /// is higher, 2 when the second is (initiative, the bonus-card dice-off).
    RollOff,
}

impl Builtin {
    pub fn named(name: &str) -> Option<(Builtin, usize)> {
        Some(match name {
            "min" => (Builtin::Min, 2),
            "max" => (Builtin::Max, 2),
            "ceil" => (Builtin::Ceil, 1),
            "floor" => (Builtin::Floor, 1),
            "roll_off" => (Builtin::RollOff, 2),
            _ => return None,
        })
    }
}

/// A compiled expression.
#[derive(Clone, Debug)]
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
    /// Symbol membership.
    IsSym(Box<Ex>, Vec<u32>),
    Not(Box<Ex>),
    Neg(Box<Ex>),
    Bin(Bin, Box<Ex>, Box<Ex>),
    If(Box<Ex>, Box<Ex>, Box<Ex>),
    /// Quantifier over units (`sides == false`) or sides; the variable's slot.
    Quant(crate::syntax::Quant, bool, u16, Box<Ex>),
    Dice {
        count: Box<Ex>,
        die: Id,
        mode: DiceMode,
        reroll: Option<Reroll>,
        span: Span,
    },
}

impl Ex {
    /// Does evaluating this roll dice?
    pub fn is_random(&self) -> bool {
        match self {
            // A roll-off rolls again on a tie, whatever its sides are.
            Ex::Dice { .. } | Ex::Builtin(Builtin::RollOff, _) => true,
            e => e.any_child(&mut |c| c.is_random()),
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
            | Ex::IsSym(e, _)
            | Ex::Not(e)
            | Ex::Neg(e)
            | Ex::Quant(_, _, _, e) => f(e),
            Ex::Fact(_, a)
            | Ex::Define(_, a)
            | Ex::Table(_, a)
            | Ex::Quantity(_, a)
            | Ex::Builtin(_, a) => a.iter().any(&mut *f),
            Ex::Bin(_, a, b) => f(a) || f(b),
            Ex::If(c, a, b) => f(c) || f(a) || f(b),
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
