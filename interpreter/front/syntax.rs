//! The syntax tree of a ruleset, as the parser builds it. Every node that an
//! author can get wrong carries a [`Span`] so that the compiler can point at it.

use std::fmt;

/// Which loaded source a span belongs to (an index into [`crate::front::source::Sources`]).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// A name with the place it was written.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A whole ruleset file.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct File {
    pub header: Option<Header>,
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Header {
    pub id: Name,
    pub title: Option<String>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Item {
    pub kind: ItemKind,
    pub overrides: bool,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ItemKind {
    Extends(String),
    Import(Name),
    Measure(Name, Option<String>),
    Die(Die),
    /// `effects NAME ...`: how the faces of rolled dice are read.
    Effects(Effects),
    Enum(Name, Vec<Name>),
    Class(Vec<Name>),
    Group(Name, Vec<Name>),
    Stat(Vec<Name>),
    Sides(Vec<Name>),
    Option(OptionDecl),
    Units(UnitsBlock),
    Quality(Quality),
    State(StateDecl),
    Fact(FactDecl),
    Define(Define),
    Table(Table),
    TableExtend(Name, Vec<Row>),
    Quantity(Quantity),
    Modifier(Modifier),
    Procedure(Procedure),
    Decision(Decision),
    Policy(Policy),
    /// `default_scenario "FILE"`: the scenario battles play by default.
    DefaultScenario(String, Span),
    /// `hook NAME ... { script }`: a rule written as a rhai script.
    Hook(Hook),
    Army(Army),
    Sequence(Sequence),
    /// `deck NAME [(PARAMS)] { card ... }`: a deck of cards.
    Deck(Deck),
    Remove(Name, Name),
    /// A step inserted into the base sequence (`step "X" after "Y" { }`).
    StepPatch(Step),
    /// A base step changed where it stands (`override step "X" ...`).
    StepChange(StepChange),
    /// A base phase renamed (`override phase "X" as "Y"`): the old name, the new.
    PhaseRename(Name, Name),
}

/// `override step "NAME" [as "NEW"] [after|before "OTHER"] [with N = EXPR,
/// ... | { ACTIONS }]`: the first step of the base sequence named NAME,
/// renamed, moved, its actions given expressions for names (`with`, a new
/// actor: `attacker = active_side()`) or replaced.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StepChange {
    pub name: Name,
    pub rename: Option<Name>,
    pub anchor: Option<(bool, Name)>,
    /// `with NAME = EXPR, ...`: every mention of NAME in the step's actions
    /// (not bound there by a `for each` or a quantifier) becomes EXPR.
    pub recast: Vec<(Name, Expr)>,
    /// `{ ACTIONS }`: the step's new actions.
    pub body: Option<Vec<Action>>,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Die {
    pub name: Name,
    pub faces: DieFaces,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum DieFaces {
    Range(i64, i64),
    Named(Vec<Face>),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Face {
    pub name: Name,
    pub count: u32,
    /// `x NAME`: the count is a number option's value (then `count` is 1).
    pub count_option: Option<Name>,
    pub value: i64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OptionDecl {
    pub name: Name,
    pub title: Option<String>,
    pub on: bool,
    /// `= N`: a number the ruleset is compiled with, not a switch.
    pub number: Option<i64>,
}

/// `effects NAME(PARAMS) -> { TALLIES } "doc" { FACE => TALLY N [when COND], ... }`:
/// how the faces of a pool are read.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Effects {
    pub name: Name,
    pub params: Vec<Param>,
    pub tallies: Vec<Name>,
    pub doc: Option<String>,
    pub rows: Vec<EffectRow>,
}

/// One face of an `effects` block and what it yields.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EffectRow {
    pub face: Name,
    /// (tally, amount, condition).
    pub yields: Vec<(Name, i64, Option<Expr>)>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UnitsBlock {
    pub columns: Vec<Name>,
    pub rows: Vec<UnitRow>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UnitRow {
    pub name: Name,
    pub overrides: bool,
    pub classes: Vec<Name>,
    pub values: Vec<(StatValue, Span)>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StatValue {
    None,
    Unlimited,
    Int(i64),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Quality {
    pub name: Name,
    pub default: bool,
    pub lines: Vec<QualityLine>,
}

/// One line of a quality: a stat (or `points`) and what the quality does
/// to it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct QualityLine {
    pub name: Name,
    pub change: QualityChange,
    /// The line's value, as written (after `=`, if any).
    pub value_span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum QualityChange {
    /// `STAT +N` / `STAT -N` (and `points N`): added to the type's value.
    By(i64),
    /// `STAT = V`: the stat is V, whatever the type's; `plus` records a
    /// `+` written after `=` (`resolve = +1`), which the compiler refuses
    /// as ambiguous.
    To { value: StatValue, plus: bool },
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StateDecl {
    pub per_side: bool,
    pub name: Name,
    pub ty: Name,
    pub init: Expr,
    /// `each turn`: reset to the initial value at the start of every turn.
    pub each_turn: bool,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FactDecl {
    pub name: Name,
    /// Parameter types, each with its name when the fact names it (a fact
    /// derived `in battle` must name its parameters).
    pub params: Vec<(Option<Name>, Name)>,
    pub ty: Name,
    pub default: Option<Expr>,
    /// `each turn`: values noted during a turn are forgotten at the next.
    pub each_turn: bool,
    /// `in battle: EXPR`: how the battlefield derives the fact.
    pub battle: Option<Expr>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub name: Name,
    pub ty: Name,
    pub range: Option<(i64, i64)>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Define {
    pub name: Name,
    pub params: Vec<Param>,
    pub ty: Name,
    pub body: Expr,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Table {
    pub name: Name,
    pub params: Vec<Param>,
    pub ty: Name,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub guard: Guard,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Guard {
    Otherwise,
    When(Expr),
    Keys(Vec<KeyPattern>),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum KeyPattern {
    Any(Span),
    Int(i64, Span),
    Range(Option<i64>, Option<i64>, Span),
    Bool(bool, Span),
    Name(Name),
}

impl KeyPattern {
    pub fn span(&self) -> Span {
        match self {
            KeyPattern::Any(s)
            | KeyPattern::Int(_, s)
            | KeyPattern::Range(_, _, s)
            | KeyPattern::Bool(_, s) => *s,
            KeyPattern::Name(n) => n.span,
        }
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Quantity {
    pub name: Name,
    pub params: Vec<Param>,
    pub ty: Name,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub body: Expr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AssignOp {
    Set,
    Add,
    Sub,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Modifier {
    pub name: Name,
    pub source: Option<String>,
    pub quantity: Name,
    pub op: AssignOp,
    pub amount: Expr,
    pub when: Option<Expr>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Procedure {
    pub name: Name,
    pub params: Vec<Param>,
    pub outcomes: Vec<OutcomeDecl>,
    pub body: Vec<Stmt>,
}

/// A hook: a rhai script attached to a point of the ruleset.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Hook {
    pub name: Name,
    pub doc: Option<String>,
    pub point: HookPoint,
    /// Outcomes the hook adds to its procedure (so `odds` reports them).
    pub outcomes: Vec<OutcomeDecl>,
    pub script: Script,
}

/// Where a hook runs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum HookPoint {
    /// `before PROC` / `after PROC` (`after == true`).
    Procedure { after: bool, proc: Name },
    /// `before step "X"` / `after step "X"`.
    Step { after: bool, step: Name },
    /// `replace PROC`: the script is the procedure's body.
    Replace(Name),
    /// `fact F`: the script derives the fact's value.
    Fact(Name),
}

/// A hook's script: inline text (with the span of that text), or a file
/// named relative to the ruleset (the loader reads it and makes it inline).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Script {
    Inline { text: String, span: Span },
    File { path: String, span: Span },
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OutcomeDecl {
    pub name: Name,
    /// Either one type name (`int`, `bool`) or a list of symbols.
    pub ty: Vec<Name>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Decision {
    pub name: Name,
    pub params: Vec<Param>,
    pub doc: Option<String>,
    /// What is chosen among and what then happens (a battle runs it).
    pub choice: Option<Choice>,
}

/// What kind of choice a decision is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ChoiceKind {
    /// `pick a, b where LEGAL ... then PROC(...)`: choose among bindings.
    Pick,
    /// `move u where LEGAL ...`: move units on the table.
    Move,
    /// `charge c onto t where LEGAL ...`: move chargers into contact.
    Charge,
    /// `retire u where LEGAL ...`: move units straight back.
    Retire,
    /// `place u where LEGAL by ORDER`: deploy the units a scenario leaves
    /// unplaced, one at a time; LEGAL is judged with the unit in place.
    Place,
    /// `face u toward t where LEGAL ...`: u turns to face t, which it
    /// touches, and closes up against it, where there is room; options
    /// are taken as `pick` takes them, each unit at most once.
    Face,
}

/// The body of a decision.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    pub kind: ChoiceKind,
    /// The names bound for each option (`s, t`; `c onto t`).
    pub vars: Vec<Name>,
    pub legal: Expr,
    pub clauses: Vec<Clause>,
    pub span: Span,
}

/// A clause of a decision's body.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Clause {
    /// `must COND`, `by ORDER`, `reach N`, `wheel N`, `allowance N`,
    /// `buffer N`, `distance N`: the keyword and its expression.
    Expr(Name, Expr),
    /// `manoeuvre m: OK`, `control e: COND`, `through f: OK`.
    Bound(Name, Name, Expr),
    /// `check PROC(args) [unless COND]`.
    Check(Name, Vec<Expr>, Option<Expr>, Span),
    /// `then PROC(args)`.
    Then(Name, Vec<Expr>, Span),
    /// `pay DECK COST from HOLDER [to HOLDER]`.
    Pay(Box<Pay>),
}

/// A `pick`'s `pay DECK COST from HOLDER [to HOLDER]` clause.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Pay {
    pub deck: Name,
    pub cost: Expr,
    pub from: Expr,
    pub to: Option<Expr>,
    pub span: Span,
}

/// A policy: preference scores for the options of decisions.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Policy {
    pub name: Name,
    pub doc: Option<String>,
    pub lines: Vec<(Name, Expr)>,
    /// `NAME = VALUE` options (`search = purposeful`).
    pub options: Vec<(Name, Name)>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Stmt {
    Let(Name, Expr),
    Outcome(Name, Expr),
    Require(Expr, String, Span),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    Assign(Expr, AssignOp, Expr, Span),
    Call(Name, Vec<Expr>, Span),
    /// `for u [in sides|units]: COND { ... }`
    For(Name, Option<Name>, Expr, Vec<Stmt>),
    /// `note F(args) [= value]`: a fact becomes known in a battle.
    Note(Name, Vec<Expr>, Option<Expr>, Span),
    /// `for file f[, l, r] of FORMATION where COND [from START] { ... }`: the
    /// files of a formation one at a time (see [`ForFile`]).
    ForFile(Box<ForFile>),
    /// `mark N`: what the file being fought leaves for its neighbours.
    Mark(Expr, Span),
}

/// `for file VAR[, LEFT, RIGHT] of FORMATION where COND [from START] { BODY }`:
/// each file `VAR` of the formation (a number, from 1 at its left) for
/// which COND holds is fought once, START first (when given), and after
/// a file whose body marked it, its neighbours that have not fought yet;
/// otherwise the lowest not yet fought. LEFT and RIGHT are the marks of
/// the files to its left and right, if they fought before it (else 0).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ForFile {
    pub var: Name,
    pub beside: Option<(Name, Name)>,
    pub formation: Expr,
    pub cond: Expr,
    pub start: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Army {
    pub name: Name,
    pub rules: Vec<ArmyRule>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ArmyRule {
    pub per_command: bool,
    pub kind: ArmyRuleKind,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ArmyRuleKind {
    Units(i64, i64),
    Points(i64, i64),
    Limit(Name, Limit, i64),
    /// `price DEFINE`
    Price(Name),
    /// `require DEFINE "why"`
    Require(Name, String),
    /// `same units for every side` (true) / `same points for every side`.
    Same {
        units: bool,
    },
    /// `TYPES always QUALITIES`: units of the types have one of the qualities.
    Always(Vec<Name>, Vec<Name>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Limit {
    AtMost,
    AtLeast,
    Exactly,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Sequence {
    pub setup: Vec<PhaseOrStep>,
    pub turn: Vec<PhaseOrStep>,
    pub until: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum PhaseOrStep {
    Phase(Name, Vec<Step>),
    Step(Step),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub name: Name,
    pub anchor: Option<(bool, Name)>,
    pub actions: Vec<Action>,
    pub span: Span,
}

/// `for each V in sides|units [where COND]`: a repetition (of a `do` or a
/// `draw`), or the cards of a `for each` card.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Each {
    pub var: Name,
    /// `sides` or `units` (anything else is reported by the compiler).
    pub coll: Name,
    pub cond: Option<Expr>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Action {
    Do {
        target: Name,
        args: Vec<Expr>,
        each: Option<Each>,
        span: Span,
    },
    /// `draw DECK[(ARGS)] [until N left] [for each ...]`.
    Draw {
        deck: Name,
        /// `None` when the deck is named without parentheses.
        args: Option<Vec<Expr>>,
        /// `until N left`: the count, as written, and its span.
        until: Option<(i64, Span)>,
        each: Option<Each>,
        span: Span,
    },
    /// `shuffle DECK`.
    Shuffle {
        deck: Name,
        span: Span,
    },
    /// `deal DECK to HOLDER up to N [for each ...]`: the holder's hand of
    /// the deck is filled from the top of the pile until it holds N.
    Deal {
        deck: Name,
        holder: Expr,
        size: Expr,
        each: Option<Each>,
        span: Span,
    },
    /// `discard DECK from HOLDER down to N [for each ...]`: the lowest
    /// cards of the holder's hand go until it holds N.
    Discard {
        deck: Name,
        holder: Expr,
        size: Expr,
        each: Option<Each>,
        span: Span,
    },
    /// `alternate DECISION(ARGS) for each s in sides [where COND] [from
    /// SIDE]`: the sides are asked in turn, one option at a time, until
    /// every side in a row has passed.
    Alternate {
        target: Name,
        args: Vec<Expr>,
        each: Each,
        from: Option<Expr>,
        span: Span,
    },
    Goto {
        when: Option<Expr>,
        target: Name,
        span: Span,
    },
    End {
        when: Option<Expr>,
        span: Span,
    },
}

/// A deck of cards: `deck NAME [(PARAMS)] ["doc"] { card ... [after each card { ... }] }`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Deck {
    pub name: Name,
    pub params: Vec<Param>,
    pub doc: Option<String>,
    pub cards: Vec<Card>,
    /// Every `after each card { ACTIONS }` block, in the order written (the
    /// compiler accepts at most one).
    pub after_each: Vec<AfterEach>,
}

/// `after each card { ACTIONS }`: what follows the resolving of each card
/// of a deck.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AfterEach {
    pub actions: Vec<Action>,
    /// The words `after each card`.
    pub span: Span,
}

/// `card NAME [copies N] [for each V in sides|units [where COND]] [when COND] { ACTIONS }`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Card {
    pub name: Name,
    /// `copies N`, as written, with its span.
    pub copies: Option<(i64, Span)>,
    /// `value N`: what the card is worth paid from a hand, with its span.
    pub value: Option<(i64, Span)>,
    pub each: Option<Each>,
    pub when: Option<Expr>,
    pub actions: Vec<Action>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Quant {
    Any,
    All,
    Count,
    /// `first u: COND`: the first unit (or side) for which COND holds, or `none`.
    First,
    /// `sum u: COND of VALUE`: VALUE added up over the units for which COND holds.
    Sum,
    /// `min u: COND of VALUE`: the least VALUE, or `none` when no unit qualifies.
    Min,
    /// `max u: COND of VALUE`: the greatest VALUE, or `none` when no unit qualifies.
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Reroll {
    Misses,
    Ones,
    Hits,
    Sixes,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ExprKind {
    Int(i64),
    Bool(bool),
    None,
    Unlimited,
    Name(Name),
    Field(Box<Expr>, Name),
    Original(Box<Expr>),
    Call(Name, Vec<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `x is A | B` (negated when the flag is set).
    Is(Box<Expr>, Vec<Name>, bool),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `Q x [in sides|units]: COND [of VALUE]` (VALUE for sum, min, max).
    Quant(Quant, Name, Option<Name>, Box<Expr>, Option<Box<Expr>>),
    /// `COUNT DIE [scoring T+] [counting faces] [rerolling KIND]`
    Dice {
        count: Box<Expr>,
        die: Name,
        scoring: Option<Box<Expr>>,
        counting: Vec<Name>,
        reroll: Option<Reroll>,
    },
    /// `roll POOL as EFFECTS(ARGS)`
    Roll {
        pool: Box<Expr>,
        effects: Name,
        args: Vec<Expr>,
    },
    /// `chance(PROC(ARGS) [given FACTS], COND)` or `expect(...)`.
    Odds(Box<OddsOf>),
}

/// `chance(PROC(ARGS) [given FACTS], COND)` (how likely COND is among the
/// procedure's outcomes) or `expect(PROC(ARGS) [given FACTS], VALUE)` (the
/// mean of VALUE): the exact odds of a procedure read by an expression.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OddsOf {
    /// `expect` (a mean) rather than `chance` (a probability).
    pub expect: bool,
    pub procedure: Name,
    pub args: Vec<Expr>,
    /// The facts assumed: `and`-ed calls of facts, `not` a fact, `f(..) is
    /// VALUE` or `f(..) == VALUE`.
    pub given: Option<Expr>,
    /// The condition or value, over the procedure's outcomes by name.
    pub of: Expr,
}

/// The `//` comment lines just above byte `at`'s line, without their
/// slashes: the doc of a declaration (the shipped rulesets cite the
/// book's section there).
pub fn doc_comment(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut lines = Vec::new();
    for line in text[..line_start].lines().rev() {
        match line.trim().strip_prefix("//") {
            Some(c) => lines.push(c.strip_prefix(' ').unwrap_or(c)),
            None => break,
        }
        if lines.len() >= 60 {
            break;
        }
    }
    lines.reverse();
    lines.join("\n")
}
