//! Decks of cards, compiled. A `deck` item becomes a [`DeckDef`]: its
//! parameters (bound by `draw NAME(ARGS)`) and its cards, each with the
//! conditions that put it in the pile at a shuffle and the actions that
//! resolve it, and the deck's `after each card` actions, run after each
//! card is resolved. The `draw` and `shuffle` actions of steps and cards are
//! checked here too. A battle plays them (`battle/decks.rs`); the language
//! is described in docs/LANGUAGE.md, "Decks and cards".

use crate::compile::compiler::{suggest, Compiler, Scope};
use crate::compile::ir::{Ex, Id, Ty};
use crate::compile::phase_graph::{play_action, repeat, Repeat, StepAction};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, Action, ExprKind, ItemKind, Name, Span};

/// The most copies of one card (`copies 100000` is a typo, not a deck).
pub const MAX_COPIES: i64 = 1000;

/// A deck: its parameters and its cards, in the order they are declared
/// (the order a shuffle starts from).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DeckDef {
    pub name: String,
    pub doc: Option<String>,
    /// Bound by `draw NAME(ARGS)`, in slots 0.. of every card's frame.
    pub params: Vec<(String, Ty)>,
    pub cards: Vec<CardDef>,
    /// `after each card { ACTIONS }`: run after each card of this deck is
    /// resolved, with the deck's parameters bound (and not the card's V).
    pub after_each: Option<AfterEachDef>,
    pub span: Span,
}

/// A deck's `after each card` block, compiled.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AfterEachDef {
    /// In order; their frames start with the deck's parameters.
    pub actions: Vec<StepAction>,
    /// The words `after each card`.
    pub span: Span,
}

/// One card of a deck (or, with `copies` or `for each`, several alike).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CardDef {
    pub name: String,
    /// How many identical cards go in the pile (for each side or unit,
    /// with `each`).
    pub copies: u32,
    /// `value N`: what the card is worth paid from a hand (0 without).
    pub value: i64,
    /// `for each V in sides|units [where COND]`: one card for each side or
    /// unit for which COND holds at the shuffle. V's slot follows the
    /// deck's parameters; the card's actions read it.
    pub each: Option<Repeat>,
    /// `when COND`: checked once at each shuffle; false leaves the card
    /// (all its copies) out of the pile.
    pub when: Option<Ex>,
    /// What resolving the card does, in order.
    pub actions: Vec<StepAction>,
    /// The frame its conditions and actions need (the deck's parameters
    /// first, then V).
    pub slots: u16,
    pub span: Span,
}

/// Compile every deck of a loaded ruleset: first their names and
/// parameters (a card may draw from or shuffle any deck), then their cards.
pub(crate) fn compile(c: &mut Compiler, items: &[syntax::Item]) {
    let mut declared = Vec::new();
    for it in items {
        let ItemKind::Deck(d) = &it.kind else {
            continue;
        };
        if let Some(first) = c.rs.decks.iter().find(|x| x.name == d.name.text) {
            let first = first.span;
            c.err(
                Diag::new(
                    "muster::duplicate",
                    format!("deck `{}` is defined twice", d.name.text),
                )
                .at(d.name.span, "defined again here")
                .note(first, "first defined here")
                .help("give each deck its own name; a house rule replaces a deck with `override deck NAME ...`"),
            );
            continue;
        }
        let mut params: Vec<(String, Ty)> = Vec::new();
        for p in &d.params {
            if params.iter().any(|(n, _)| *n == p.name.text) {
                c.err(
                    Diag::new(
                        "muster::duplicate",
                        format!(
                            "deck `{}` has two parameters named `{}`",
                            d.name.text, p.name.text
                        ),
                    )
                    .at(p.name.span, "named again here")
                    .help("give each parameter its own name"),
                );
            }
            let ty = c.resolve_ty(&p.ty).unwrap_or(Ty::Int);
            params.push((p.name.text.clone(), ty));
        }
        if d.cards.is_empty() {
            c.err(
                Diag::new(
                    "muster::empty_deck",
                    format!("deck `{}` has no cards", d.name.text),
                )
                .at(d.name.span, "no `card` in this deck")
                .help("give it cards: `card NAME { do PROCEDURE(...) }`"),
            );
        }
        declared.push((c.rs.decks.len(), d));
        c.rs.decks.push(DeckDef {
            name: d.name.text.clone(),
            doc: d.doc.clone(),
            params,
            cards: Vec::new(),
            after_each: None,
            span: d.name.span,
        });
    }
    for (id, d) in declared {
        let mut cards: Vec<CardDef> = Vec::new();
        for (i, card) in d.cards.iter().enumerate() {
            if let Some(j) = d.cards[..i]
                .iter()
                .position(|x| x.name.text == card.name.text)
            {
                c.err(
                    Diag::new(
                        "muster::duplicate",
                        format!(
                            "deck `{}` has two cards named `{}`",
                            d.name.text, card.name.text
                        ),
                    )
                    .at(card.name.span, "named again here")
                    .note(d.cards[j].name.span, "first card of this name")
                    .help("give each card its own name; `copies N` puts several identical cards in the deck"),
                );
                continue;
            }
            if let Some(cd) = compile_card(c, id, d, card) {
                cards.push(cd);
            }
        }
        c.rs.decks[id].cards = cards;
        if let Some((first, rest)) = d.after_each.split_first() {
            for again in rest {
                c.err(
                    Diag::new(
                        "muster::duplicate",
                        format!("deck `{}` has two `after each card` blocks", d.name.text),
                    )
                    .at(again.span, "a second block here")
                    .note(first.span, "the first `after each card` of this deck")
                    .help("a deck has at most one `after each card` block: put all its actions in one, in the order they should run"),
                );
            }
            c.rs.decks[id].after_each = compile_after_each(c, id, d, first);
        }
    }
}

/// Compile a deck's `after each card { ACTIONS }`: a card's actions, with
/// the deck's parameters bound and no card's variable.
fn compile_after_each(
    c: &mut Compiler,
    id: usize,
    d: &syntax::Deck,
    block: &syntax::AfterEach,
) -> Option<AfterEachDef> {
    let params = c.rs.decks[id].params.clone();
    let mut sc = Compiler::scope_for(&params, false);
    let actions = compile_actions(
        c,
        &block.actions,
        &mut sc,
        Refusal {
            who: format!("the `after each card` block of deck `{}`", d.name.text),
            label: "not an action this block can take",
            block: Some(block.span),
            help: "its actions are a card's: `do`, `draw` and `shuffle`; jump or end the game in the step that draws the deck (its procedures can set the state a `goto` tests)",
        },
        |c, before| explain_card_variables(c, before, d, block),
    )?;
    Some(AfterEachDef {
        actions,
        span: block.span,
    })
}

/// How `compile_actions` refuses a `goto` or an `end game`: what holds it,
/// the label, the block to point at, the help line.
struct Refusal {
    who: String,
    label: &'static str,
    block: Option<Span>,
    help: &'static str,
}

/// Compile the actions of a card or of an `after each card` block: `do`,
/// `draw` and `shuffle`, never `goto` or `end game`. `explain` runs after
/// each action with the number of diagnostics before it (to add to what
/// the action's own diagnostics say). None if any action failed.
fn compile_actions(
    c: &mut Compiler,
    actions: &[Action],
    sc: &mut Scope,
    refusal: Refusal,
    mut explain: impl FnMut(&mut Compiler, usize),
) -> Option<Vec<StepAction>> {
    let mut ok = true;
    let mut out = Vec::new();
    for a in actions {
        match a {
            Action::Goto { span, .. } | Action::End { span, .. } => {
                let what = if matches!(a, Action::Goto { .. }) {
                    "`goto`"
                } else {
                    "`end game`"
                };
                let mut diag = Diag::new(
                    "muster::card_action",
                    format!("{} cannot {what}", refusal.who),
                )
                .at(*span, refusal.label);
                if let Some(b) = refusal.block {
                    diag = diag.note(b, "in this block");
                }
                c.err(diag.help(refusal.help));
                ok = false;
            }
            _ => {
                let before = c.diags.len();
                match play_action(c, a, sc) {
                    Some(x) => out.push(x),
                    None => ok = false,
                }
                explain(c, before);
            }
        }
    }
    ok.then_some(out)
}

/// An unknown name in an `after each card` block that is some card's `for
/// each` variable: say why the block cannot see it.
fn explain_card_variables(
    c: &mut Compiler,
    from: usize,
    d: &syntax::Deck,
    block: &syntax::AfterEach,
) {
    for diag in &mut c.diags[from..] {
        if diag.code != "muster::unknown_name" {
            continue;
        }
        let Some(card) = d.cards.iter().find(|card| {
            card.each
                .as_ref()
                .is_some_and(|e| diag.message == format!("unknown name `{}`", e.var.text))
        }) else {
            continue;
        };
        let var = &card.each.as_ref().expect("found by its variable").var;
        diag.label = format!("`{}` is card `{}`'s variable", var.text, card.name.text);
        diag.notes.push((
            var.span,
            "bound here, for this card's own actions".to_string(),
        ));
        diag.notes.push((
            block.span,
            "this block runs after every card of the deck".to_string(),
        ));
        diag.help = Some(format!(
            "the `after each card` block of deck `{}` runs after every card and sees only the deck's parameters, not a card's `for each` variable; act on `{}` in card `{}` itself, or mark it there with a state (`{}.activated = true`) and repeat the block's action `for each u in units where u.activated`",
            d.name.text, var.text, card.name.text, var.text
        ));
    }
}

fn compile_card(
    c: &mut Compiler,
    id: usize,
    d: &syntax::Deck,
    card: &syntax::Card,
) -> Option<CardDef> {
    let params = c.rs.decks[id].params.clone();
    let np = params.len() as u16;
    let mut sc = Compiler::scope_for(&params, false);
    let mut ok = true;
    let copies = match card.copies {
        None => 1,
        Some((n, _)) if (1..=MAX_COPIES).contains(&n) => n as u32,
        Some((n, span)) => {
            c.err(
                Diag::new(
                    "muster::copies",
                    format!("card `{}` has {n} copies", card.name.text),
                )
                .at(span, format!("between 1 and {MAX_COPIES}"))
                .help("`copies N` puts N identical cards in the deck: write a number from 1 (the default) up; leave a card out with `when COND`"),
            );
            ok = false;
            1
        }
    };
    // The conditions are compiled with the deck's parameters bound, so that
    // reading one is reported for what it is (a shuffle has no arguments).
    let when = match &card.when {
        None => None,
        Some(e) => match c.expr(e, &mut sc, None) {
            Some((ex, ty)) => {
                ok &= c.expect(&ty, &Ty::Bool, e.span, "the condition after `when`");
                ok &= reads_no_param(c, &ex, e, d, card, "when");
                Some(ex)
            }
            None => {
                ok = false;
                None
            }
        },
    };
    let each = match &card.each {
        None => None,
        Some(e) => match repeat(c, e, &mut sc) {
            Some(r) => {
                if let (Some(ex), Some(cond)) = (&r.cond, &e.cond) {
                    ok &= reads_no_param(c, ex, cond, d, card, "where");
                }
                Some(r)
            }
            // The actions would read V: leave them until it is right.
            None => return None,
        },
    };
    let actions = compile_actions(
        c,
        &card.actions,
        &mut sc,
        Refusal {
            who: format!("card `{}`", card.name.text),
            label: "not an action a card can take",
            block: None,
            help: "a card's actions are `do`, `draw` and `shuffle`; jump or end the game in the step that draws the card (its procedures can set the state a `goto` tests)",
        },
        |_, _| {},
    );
    let actions = actions.filter(|_| ok)?;
    Some(CardDef {
        name: card.name.text.clone(),
        copies,
        value: card.value.map_or(0, |(n, _)| n),
        each,
        when,
        actions,
        slots: sc.max.max(np + 1),
        span: card.name.span,
    })
}

/// Does a membership condition leave the deck's parameters alone? (They
/// are slots `0..np`; a shuffle evaluates the condition without them.)
fn reads_no_param(
    c: &mut Compiler,
    ex: &Ex,
    e: &syntax::Expr,
    d: &syntax::Deck,
    card: &syntax::Card,
    word: &str,
) -> bool {
    let np = d.params.len() as u16;
    if !reads_slot_below(ex, np) {
        return true;
    }
    let names: Vec<&str> = d.params.iter().map(|p| p.name.text.as_str()).collect();
    let (span, name) = match find_name(e, &names) {
        Some(n) => (n.span, n.text.clone()),
        None => (e.span, names.join("`, `")),
    };
    c.err(
        Diag::new(
            "muster::card_condition",
            format!(
                "the `{word}` of card `{}` reads `{name}`, a parameter of deck `{}`",
                card.name.text, d.name.text
            ),
        )
        .at(span, "a parameter of the deck")
        .help(format!(
            "`{word}` is checked when the deck is shuffled, and a shuffle binds no parameters (only `draw {}(...)` does); test the parameter in the card's actions instead",
            d.name.text
        )),
    );
    false
}

fn reads_slot_below(e: &Ex, n: u16) -> bool {
    match e {
        Ex::Local(s) => *s < n,
        e => e.any_child(&mut |x| reads_slot_below(x, n)),
    }
}

/// The first bare name among `names` that an expression mentions.
fn find_name<'a>(e: &'a syntax::Expr, names: &[&str]) -> Option<&'a Name> {
    let sub = |x: &'a syntax::Expr| find_name(x, names);
    match &e.kind {
        ExprKind::Name(n) => names.contains(&n.text.as_str()).then_some(n),
        ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::None | ExprKind::Unlimited => None,
        ExprKind::Field(x, _)
        | ExprKind::Original(x)
        | ExprKind::Neg(x)
        | ExprKind::Not(x)
        | ExprKind::Is(x, _, _) => sub(x),
        ExprKind::Call(_, args) => args.iter().find_map(sub),
        ExprKind::Binary(_, a, b) => sub(a).or_else(|| sub(b)),
        ExprKind::If(a, b, x) => sub(a).or_else(|| sub(b)).or_else(|| sub(x)),
        ExprKind::Quant(_, _, _, body, value) => {
            sub(body).or_else(|| value.as_deref().and_then(sub))
        }
        ExprKind::Dice { count, scoring, .. } => {
            sub(count).or_else(|| scoring.as_deref().and_then(sub))
        }
        ExprKind::Roll { pool, args, .. } => sub(pool).or_else(|| args.iter().find_map(sub)),
        ExprKind::Odds(o) => o
            .args
            .iter()
            .find_map(sub)
            .or_else(|| o.given.as_ref().and_then(sub))
            .or_else(|| sub(&o.of)),
    }
}

/// The deck a `draw` or `shuffle` names.
pub(crate) fn deck_named(c: &mut Compiler, n: &Name) -> Option<Id> {
    if let Some(i) = c.rs.decks.iter().position(|d| d.name == n.text) {
        return Some(i as Id);
    }
    let sugg = suggest(&n.text, c.rs.decks.iter().map(|d| d.name.as_str()));
    c.err(
        Diag::new("muster::unknown_deck", format!("unknown deck `{}`", n.text))
            .at(n.span, "no deck of this name")
            .help(match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None => "declare it with `deck NAME { card NAME { ... } }`".to_string(),
            }),
    );
    None
}

/// Compile `draw DECK[(ARGS)] [until N left] [for each ...]`.
pub(crate) fn draw_action(
    c: &mut Compiler,
    deck: &Name,
    args: Option<&[syntax::Expr]>,
    until: Option<(i64, Span)>,
    each: Option<&syntax::Each>,
    span: Span,
    sc: &mut Scope,
) -> Option<StepAction> {
    let id = deck_named(c, deck)?;
    let until = match until {
        None => None,
        Some((n, s)) if n < 0 => {
            c.err(
                Diag::new(
                    "muster::until",
                    format!("`until {n} left` can never stop drawing"),
                )
                .at(s, "a count below 0")
                .help("write how many cards stay unturned: `until 1 left` resolves every card but the last; `until 0 left` all of them"),
            );
            return None;
        }
        Some((n, _)) => Some(n.min(u32::MAX as i64) as u32),
    };
    let each = match each {
        Some(e) => Some(repeat(c, e, sc)?),
        None => None,
    };
    let params: Vec<Ty> = c.rs.decks[id as usize]
        .params
        .iter()
        .map(|p| p.1.clone())
        .collect();
    let args = c.args(deck, args.unwrap_or(&[]), &params, sc, span)?;
    Some(StepAction::Draw {
        deck: id,
        args,
        until,
        each,
        slots: sc.max,
    })
}

/// Every deck must be shuffled somewhere (by a step or by a card): a deck
/// never shuffled has an empty pile, so each `draw` of it does nothing.
pub(crate) fn check_shuffled(c: &mut Compiler) {
    let mut shuffled = vec![false; c.rs.decks.len()];
    let mut mark = |actions: &[StepAction]| {
        for a in actions {
            if let StepAction::Shuffle { deck } = a {
                shuffled[*deck as usize] = true;
            }
        }
    };
    if let Some(g) = &c.rs.graph {
        for n in &g.nodes {
            mark(&n.actions);
        }
    }
    for d in &c.rs.decks {
        for card in &d.cards {
            mark(&card.actions);
        }
        if let Some(a) = &d.after_each {
            mark(&a.actions);
        }
    }
    let never: Vec<(String, Span)> =
        c.rs.decks
            .iter()
            .zip(&shuffled)
            .filter(|(_, s)| !**s)
            .map(|(d, _)| (d.name.clone(), d.span))
            .collect();
    for (name, span) in never {
        c.err(
            Diag::new(
                "muster::deck_never_shuffled",
                format!("deck `{name}` is never shuffled, so its pile is always empty"),
            )
            .at(span, "no step or card shuffles this deck")
            .help(format!(
                "piles start empty in every game: add `shuffle {name}` to a step (the first of each turn, for a deck used every turn) or to a card"
            )),
        );
    }
}
