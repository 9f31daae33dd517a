//! Hands in a battle: cards of a deck held by a unit (a general) between
//! the moment they are dealt and the moment they are paid, given away or
//! discarded. `deal DECK to HOLDER up to N` fills a hand from the top of
//! the deck's pile; `discard DECK from HOLDER down to N` puts its lowest
//! cards on the discards; a `pick`'s `pay` clause takes the lowest card
//! worth the cost (or refuses the option). A deck's discards are every
//! card neither in the pile nor in a hand: `shuffle` gathers them, and
//! leaves the cards held in hands where they are ([`Game::held`]).
//!
//! A ruleset without `deal` never fills a hand, so its games are what they
//! were before hands existed.

use super::{decks::Pile, Event, Game};
use crate::base::value::Value;
use crate::compile::ir::{Id, PayDef};
use crate::front::diagnostic::Diag;
use crate::run::eval::Change;

/// One unit's hand of one deck: each card by its index in the deck, with
/// its side or unit (as a pile holds it), kept lowest value first.
pub(super) type Hand = Vec<(u16, Value)>;

/// The most cards one hand may hold: far beyond any book's hand (the
/// coloured-dice QRS deals four or five), and small enough that a size
/// typed with a zero too many stops the game instead of dealing the deck.
pub const MAX_HAND: i64 = 1000;

impl Game<'_> {
    /// The hand of `deck` held by unit `u` (empty when none was dealt).
    pub(super) fn hand(&self, deck: Id, u: u16) -> &[(u16, Value)] {
        self.hands[deck as usize]
            .get(u as usize)
            .map_or(&[], |h| h.as_slice())
    }

    fn hand_mut(&mut self, deck: Id, u: u16) -> &mut Hand {
        let n = self.world.units.len();
        let hs = &mut self.hands[deck as usize];
        if hs.len() < n {
            hs.resize(n, Vec::new());
        }
        &mut hs[u as usize]
    }

    /// Tell the world what unit `u` holds now (the values of its cards in
    /// every deck, lowest first: what `cards_held(u, v)` counts), and forget what
    /// was remembered of the hands (`cards_held` is one of the table's measures
    /// to the evaluator: a change of hands is a change of the table).
    fn hands_changed(&mut self, u: u16) {
        let mut values: Vec<i64> = (0..self.hands.len() as Id)
            .flat_map(|d| self.hand(d, u).iter().map(move |c| (d, *c)))
            .map(|(d, c)| self.value(d, c))
            .collect();
        values.sort_unstable();
        let n = self.world.units.len();
        let held = &mut self.world.held;
        if held.len() < n {
            held.resize(n, Vec::new());
        }
        held[u as usize] = values;
        self.ev.changed(Change::Field);
    }

    /// Every unit's hands told to the world again (a position taken from
    /// the book of openings replaces them whole).
    pub(super) fn all_hands_changed(&mut self) {
        for u in 0..self.world.units.len() as u16 {
            self.hands_changed(u);
        }
    }

    /// A card's value (the deck's `value N`).
    fn value(&self, deck: Id, card: (u16, Value)) -> i64 {
        self.rs.decks[deck as usize].cards[card.0 as usize].value
    }

    /// A card as the log names it: its name (and side or unit, for a `for
    /// each` card).
    fn card_label(&self, deck: Id, card: (u16, Value)) -> String {
        let c = &self.rs.decks[deck as usize].cards[card.0 as usize];
        match c.each {
            Some(_) => format!("{} ({})", c.name, self.label(card.1)),
            None => c.name.clone(),
        }
    }

    fn labels(&self, deck: Id, cards: &[(u16, Value)]) -> Vec<String> {
        cards.iter().map(|c| self.card_label(deck, *c)).collect()
    }

    /// Put a card in a hand, keeping it lowest value first (ties in the
    /// deck's order).
    fn take_into(&mut self, deck: Id, u: u16, card: (u16, Value)) {
        let key = |g: &Self, c: (u16, Value)| (g.value(deck, c), c.0);
        let k = key(self, card);
        let at = self.hand(deck, u).partition_point(|c| key(self, *c) <= k);
        self.hand_mut(deck, u).insert(at, card);
        self.hands_changed(u);
    }

    /// Remove the cards held in any hand of `deck` from a pile being built
    /// by a shuffle (each held card takes out one like it).
    pub(super) fn without_held(&self, deck: Id, pile: &mut Pile) {
        for hand in &self.hands[deck as usize] {
            for card in hand {
                if let Some(i) = pile.iter().position(|c| c == card) {
                    pile.remove(i);
                }
            }
        }
    }

    /// `deal DECK to HOLDER up to N`: cards off the top of the pile into
    /// the holder's hand until it holds `size` (an empty pile deals what
    /// it has and says so).
    pub(super) fn deal(&mut self, deck: Id, u: u16, size: i64) -> Result<(), Diag> {
        let size = checked_size(self, deck, size)?;
        let mut dealt = Vec::new();
        while self.hand(deck, u).len() < size {
            let Some(card) = self.piles[deck as usize].pop_front() else {
                self.note(|g| Event::Empty {
                    deck: g.rs.decks[deck as usize].name.clone(),
                });
                break;
            };
            dealt.push(card);
            self.take_into(deck, u, card);
        }
        if !dealt.is_empty() {
            self.note(|g| Event::Dealt {
                deck: g.rs.decks[deck as usize].name.clone(),
                to: g.label(Value::Unit(u)),
                cards: g.labels(deck, &dealt),
                holds: g.labels(deck, g.hand(deck, u)),
            });
        }
        Ok(())
    }

    /// `discard DECK from HOLDER down to N`: the hand's lowest cards go to
    /// the discards until it holds `size`.
    pub(super) fn discard(&mut self, deck: Id, u: u16, size: i64) -> Result<(), Diag> {
        let size = checked_size(self, deck, size)?;
        let held = self.hand(deck, u).len();
        if held <= size {
            return Ok(());
        }
        let gone: Vec<(u16, Value)> = self.hand_mut(deck, u).drain(..held - size).collect();
        self.hands_changed(u);
        self.note(|g| Event::Discarded {
            deck: g.rs.decks[deck as usize].name.clone(),
            from: g.label(Value::Unit(u)),
            cards: g.labels(deck, &gone),
            holds: g.labels(deck, g.hand(deck, u)),
        });
        Ok(())
    }

    /// A `pick`'s `pay` clause, for the option in `frame` (whose units are
    /// `opt`): the lowest card of the payer's hand worth the cost goes to
    /// the receiver's hand, or to the discards. `false` (and the refusal
    /// in the log) when the hand holds no such card.
    pub(super) fn pay(
        &mut self,
        pay: &PayDef,
        opt: &[u16],
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        // A cost that is no whole number (`none`, a fraction) is rounded
        // up: a card must be worth at least it.
        let cost = match self.eval(&pay.cost, frame)? {
            Value::Int(i) => i,
            v => v
                .as_frac()
                .map_or(i64::MAX, |(n, d)| (n + d - 1).div_euclid(d)),
        };
        let Value::Unit(from) = self.eval(&pay.from, frame)? else {
            return Err(Diag::new(
                "muster::battle",
                "the hand that pays (`pay ... from`) is no unit",
            )
            .help("the `from` of a `pay` clause names the unit that holds the hand: guard the decision's `where` so it is never `none`"));
        };
        let to = match &pay.to {
            None => None,
            Some(e) => match self.eval(e, frame)? {
                Value::Unit(t) => Some(t),
                _ => {
                    return Err(Diag::new(
                        "muster::battle",
                        "the hand that receives (`pay ... to`) is no unit",
                    )
                    .help("guard the decision's `where` so the receiver is never `none`"))
                }
            },
        };
        let deck = pay.deck;
        let at = self
            .hand(deck, from)
            .iter()
            .position(|c| self.value(deck, *c) >= cost);
        let option: Vec<String> = opt.iter().map(|u| self.label(Value::Unit(*u))).collect();
        let Some(at) = at else {
            self.note(|g| Event::Refused {
                deck: g.rs.decks[deck as usize].name.clone(),
                from: g.label(Value::Unit(from)),
                cost: g.cost_label(deck, cost),
                option,
                holds: g.labels(deck, g.hand(deck, from)),
            });
            return Ok(false);
        };
        let card = self.hand_mut(deck, from).remove(at);
        self.hands_changed(from);
        if let Some(t) = to {
            self.take_into(deck, t, card);
        }
        self.note(|g| Event::Paid {
            deck: g.rs.decks[deck as usize].name.clone(),
            from: g.label(Value::Unit(from)),
            card: g.card_label(deck, card),
            to: to.map(|t| g.label(Value::Unit(t))),
            option,
        });
        Ok(true)
    }

    /// A cost as the log names it: the name of the deck's first card of
    /// that value ("III"), else the number.
    fn cost_label(&self, deck: Id, cost: i64) -> String {
        self.rs.decks[deck as usize]
            .cards
            .iter()
            .find(|c| c.value == cost)
            .map_or_else(|| cost.to_string(), |c| c.name.clone())
    }
}

/// A hand's size as a count, or the diagnostic for one out of bounds.
fn checked_size(g: &Game<'_>, deck: Id, size: i64) -> Result<usize, Diag> {
    if !(0..=MAX_HAND).contains(&size) {
        return Err(Diag::new(
            "muster::battle",
            format!(
                "a hand of deck `{}` of {size} cards",
                g.rs.decks[deck as usize].name
            ),
        )
        .help(format!(
            "a hand holds 0 to {MAX_HAND} cards: check the size the `deal` or `discard` works out"
        )));
    }
    Ok(size as usize)
}
