//! Hands of cards and prompts, compiled: the `deal` and `discard` actions
//! (a holder's hand of a deck filled from the pile, or cut down), the
//! `alternate` action (the sides asked a decision in turn until all pass)
//! and a `pick`'s `pay` clause (an option costs a card from a hand). A
//! battle plays them (`battle/hands.rs`, `battle/prompts.rs`); the language
//! is described in docs/LANGUAGE.md, "Hands and prompts".

use crate::compile::compiler::{Compiler, Def, Scope};
use crate::compile::decks::deck_named;
use crate::compile::ir::{ChoiceKind, Ex, Id, PayDef, Ty};
use crate::compile::phase_graph::{repeat, StepAction};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, Name, Span};

/// A unit-valued expression (a hand's holder).
fn holder(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope, what: &str) -> Option<Ex> {
    let (ex, ty) = c.expr(e, sc, Some(&Ty::Unit))?;
    c.expect(&ty, &Ty::Unit, e.span, what).then_some(ex)
}

/// A number-valued expression (a hand's size, a card's cost).
fn number(c: &mut Compiler, e: &syntax::Expr, sc: &mut Scope, what: &str) -> Option<Ex> {
    let (ex, ty) = c.expr(e, sc, Some(&Ty::Int))?;
    c.expect(&ty, &Ty::Int, e.span, what).then_some(ex)
}

/// Compile `deal DECK to HOLDER up to N [for each ...]` (or, with
/// `discard`, `discard DECK from HOLDER down to N [for each ...]`).
pub(crate) fn deal_action(
    c: &mut Compiler,
    deck: &Name,
    who: &syntax::Expr,
    size: &syntax::Expr,
    each: Option<&syntax::Each>,
    discard: bool,
    sc: &mut Scope,
) -> Option<StepAction> {
    let id = deck_named(c, deck);
    let each = match each {
        Some(e) => Some(repeat(c, e, sc)?),
        None => None,
    };
    let holder = holder(c, who, sc, "the holder of the hand")?;
    let size = number(c, size, sc, "the size of the hand")?;
    Some(StepAction::Deal {
        deck: id?,
        holder,
        size,
        discard,
        each,
        slots: sc.max,
    })
}

/// Compile `alternate DECISION(ARGS) for each s in sides [where COND] [from
/// SIDE]`: a decision asked of each side in turn.
pub(crate) fn alternate_action(
    c: &mut Compiler,
    target: &Name,
    args: &[syntax::Expr],
    each: &syntax::Each,
    from: Option<&syntax::Expr>,
    span: Span,
    sc: &mut Scope,
) -> Option<StepAction> {
    let Some(Def::Decision(d)) = c.lookup_def(&target.text) else {
        c.unknown(
            target,
            "decision",
            Some("`alternate` asks a decision (a `pick`) of each side in turn".into()),
        );
        return None;
    };
    if each.coll.text != "sides" {
        c.err(
            Diag::new(
                "muster::quantifier",
                format!("`alternate` goes round the sides, not `{}`", each.coll.text),
            )
            .at(each.coll.span, "not `sides`")
            .help("write `alternate prompt(s) for each s in sides`"),
        );
        return None;
    }
    let each = repeat(c, each, sc)?;
    let from = match from {
        None => None,
        Some(e) => {
            let (ex, ty) = c.expr(e, sc, Some(&Ty::Side))?;
            if !c.expect(&ty, &Ty::Side, e.span, "the side that starts (`from`)") {
                return None;
            }
            Some(ex)
        }
    };
    let params: Vec<Ty> = c.rs.decisions[d as usize]
        .params
        .iter()
        .map(|x| x.1.clone())
        .collect();
    let args = c.args(target, args, &params, sc, span)?;
    Some(StepAction::Alternate {
        decision: d,
        args,
        each,
        from,
        slots: sc.max,
        span: target.span,
    })
}

/// Compile a `pick`'s `pay DECK COST from HOLDER [to HOLDER]` clause.
pub(crate) fn pay_clause(
    c: &mut Compiler,
    deck: &Name,
    cost: &syntax::Expr,
    from: &syntax::Expr,
    to: Option<&syntax::Expr>,
    sc: &mut Scope,
) -> Option<PayDef> {
    let id = deck_named(c, deck);
    let cost = number(c, cost, sc, "the cost of the option (`pay`)")?;
    let from = holder(c, from, sc, "the hand that pays (`from`)")?;
    let to = match to {
        None => None,
        Some(e) => Some(holder(c, e, sc, "the hand that receives (`to`)")?),
    };
    Some(PayDef {
        deck: id?,
        cost,
        from,
        to,
    })
}

/// Every `alternate` asks a decision that takes one option at a time: a
/// `pick` or a `face`. (Checked once every decision's body is compiled.)
pub(crate) fn check_alternates(c: &mut Compiler) {
    let Some(g) = &c.rs.graph else { return };
    let mut bad: Vec<(Id, Span)> = Vec::new();
    for n in &g.nodes {
        for a in &n.actions {
            if let StepAction::Alternate { decision, span, .. } = a {
                let kind = c.rs.decisions[*decision as usize]
                    .choice
                    .as_ref()
                    .map(|ch| ch.kind);
                if !matches!(kind, Some(ChoiceKind::Pick | ChoiceKind::Face)) {
                    bad.push((*decision, *span));
                }
            }
        }
    }
    for (d, span) in bad {
        let name = c.rs.decisions[d as usize].name.clone();
        c.err(
            Diag::new(
                "muster::alternate",
                format!("`alternate` asks `{name}`, which is not a `pick` or a `face`"),
            )
            .at(span, "asked in turn here")
            .help("the sides take one option each time they are asked: give the decision a `pick` body"),
        );
    }
}
