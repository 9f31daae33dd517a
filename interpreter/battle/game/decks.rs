//! Decks in a battle: each deck's draw pile, `shuffle` (the pile rebuilt
//! from the deck's cards whose `when`/`where` hold now, then shuffled with
//! the game's one generator) and `draw` (the top card turned and its
//! actions resolved, then the deck's `after each card` actions). Piles
//! start empty in every game and keep their cards from turn to turn until
//! the next shuffle, so a deck never shuffled again runs out. A ruleset without decks never gets here, so its games draw
//! nothing more from the generator.

use super::{Event, Game};
use crate::base::value::Value;
use crate::compile::decks::CardDef;
use crate::compile::ir::Id;
use crate::front::diagnostic::Diag;
use std::collections::VecDeque;

/// A deck's draw pile, top first: each card by its index in the deck, with
/// its side or unit (`Value::None` for a card without `for each`).
pub(super) type Pile = VecDeque<(u16, Value)>;

/// Cards resolved one inside another (a card drawing from a deck whose
/// card draws again...) past this depth are reported: a card that shuffles
/// and draws its own deck never ends.
const MAX_NESTED_DRAWS: u32 = 64;

/// The most cards a shuffled pile may hold: some 7,000 times the largest
/// shipped pile (13, Matchlocks' Command deck). `copies 1000` of cards
/// `for each` of a thousand units would make millions, each resolved in
/// turn and named in the log.
pub const MAX_PILE: usize = 100_000;

/// The most cards one `draw ... until N left` may turn (a card that
/// reshuffles the deck it is drawn from can otherwise turn cards forever).
const MAX_CARDS_IN_ONE_DRAW: usize = 10_000;

/// Put card `ci`'s copies (for side or unit `v`) on a pile being built,
/// unless the pile would then hold more than [`MAX_PILE`] cards.
fn add_copies(
    pile: &mut Pile,
    card: &CardDef,
    ci: usize,
    v: Value,
    deck: &str,
) -> Result<(), Diag> {
    if pile.len() + card.copies as usize > MAX_PILE {
        return Err(Diag::new(
            "muster::battle",
            format!("shuffling deck `{deck}` makes a pile of more than {MAX_PILE} cards"),
        )
        .help(
            "each card goes in `copies` times, and once for each side or unit with `for each`: \
             give fewer copies, or a `where` that takes fewer units",
        ));
    }
    pile.extend((0..card.copies).map(|_| (ci as u16, v)));
    Ok(())
}

impl Game<'_> {
    /// `shuffle DECK`: the pile becomes every card whose `when` (and, for
    /// each side or unit, `where`) holds now, in the order the deck
    /// declares them (copies in a row, `for each` in side or scenario
    /// order), then shuffled by Fisher–Yates: for i from n-1 down to 1,
    /// j = below(i + 1), swap i and j.
    pub(super) fn shuffle(&mut self, deck: Id) -> Result<(), Diag> {
        let rs = self.rs;
        let d = &rs.decks[deck as usize];
        let mut pile = Pile::new();
        for (ci, card) in d.cards.iter().enumerate() {
            let mut frame = vec![Value::None; card.slots.max(1) as usize];
            if let Some(w) = &card.when {
                if !self.eval(w, &mut frame)?.as_bool() {
                    continue;
                }
            }
            match &card.each {
                None => add_copies(&mut pile, card, ci, Value::None, &d.name)?,
                Some(r) => {
                    for i in 0..self.repetitions(Some(r)) {
                        let v = Self::repeated(r, i);
                        frame[r.slot as usize] = v;
                        if let Some(c) = &r.cond {
                            if !self.eval(c, &mut frame)?.as_bool() {
                                continue;
                            }
                        }
                        add_copies(&mut pile, card, ci, v, &d.name)?;
                    }
                }
            }
        }
        // Cards held in hands stay there: the pile is the rest.
        self.without_held(deck, &mut pile);
        let cards = pile.len();
        let slice = pile.make_contiguous();
        for i in (1..cards).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            slice.swap(i, j);
        }
        self.piles[deck as usize] = pile;
        self.note(|_| Event::Shuffle {
            deck: d.name.clone(),
            cards,
        });
        Ok(())
    }

    /// `draw DECK(ARGS)`: turn the top card and resolve it (an empty pile
    /// is noted and nothing happens); with `until N left`, turn and resolve
    /// cards while the pile holds more than N, then note those left.
    pub(super) fn draw(
        &mut self,
        deck: Id,
        args: &[Value],
        until: Option<u32>,
    ) -> Result<(), Diag> {
        let d = &self.rs.decks[deck as usize];
        let Some(left) = until else {
            if self.piles[deck as usize].is_empty() {
                self.note(|_| Event::Empty {
                    deck: d.name.clone(),
                });
                return Ok(());
            }
            return self.turn_card(deck, args);
        };
        let mut turned = 0;
        while self.piles[deck as usize].len() > left as usize {
            if turned == MAX_CARDS_IN_ONE_DRAW {
                return Err(Diag::new(
                    "muster::battle",
                    format!(
                        "one `draw {} until {left} left` turned {MAX_CARDS_IN_ONE_DRAW} cards without stopping",
                        d.name
                    ),
                )
                .help("a card that shuffles the deck it is drawn from refills the pile; shuffle in the step instead"));
            }
            self.turn_card(deck, args)?;
            turned += 1;
        }
        if self.logging && !self.piles[deck as usize].is_empty() {
            let cards = self.piles[deck as usize]
                .iter()
                .map(|&(ci, v)| self.card_name(&d.cards[ci as usize], v))
                .collect();
            self.note(|_| Event::Unturned {
                deck: d.name.clone(),
                cards,
            });
        }
        Ok(())
    }

    /// A card as the log names it: `leader (Sir William Waller)`.
    fn card_name(&self, card: &CardDef, v: Value) -> String {
        match card.each {
            Some(_) => format!("{} ({})", card.name, self.label(v)),
            None => card.name.clone(),
        }
    }

    /// Take the top card off a (non-empty) pile and resolve it: its actions
    /// run with the deck's arguments and its side or unit bound, then the
    /// deck's `after each card` actions with the deck's arguments alone.
    fn turn_card(&mut self, deck: Id, args: &[Value]) -> Result<(), Diag> {
        let rs = self.rs;
        let d = &rs.decks[deck as usize];
        let Some((ci, v)) = self.piles[deck as usize].pop_front() else {
            return Ok(());
        };
        let card = &d.cards[ci as usize];
        self.note(|g| Event::Card {
            deck: d.name.clone(),
            card: card.name.clone(),
            on: card.each.as_ref().map(|_| g.label(v)),
        });
        if self.drawing >= MAX_NESTED_DRAWS {
            return Err(Diag::new(
                "muster::battle",
                format!("cards drawn while resolving cards nest more than {MAX_NESTED_DRAWS} deep"),
            )
            .at(card.span, "this card was drawn inside itself over and over")
            .help("a card that shuffles and draws its own deck never ends; draw from another deck, or shuffle in a step"));
        }
        let mut frame = vec![Value::None; (card.slots as usize).max(args.len())];
        frame[..args.len()].copy_from_slice(args);
        if let Some(r) = &card.each {
            frame[r.slot as usize] = v;
        }
        self.drawing += 1;
        let done = card
            .actions
            .iter()
            .try_for_each(|a| self.play(a, &frame))
            .map_err(|e| (e, card.span, "this card"));
        // The deck's `after each card` block, once the card (and every card
        // it drew) is resolved: the deck's arguments bound, not the card's V.
        let done = done.and_then(|()| match &d.after_each {
            None => Ok(()),
            Some(after) => after
                .actions
                .iter()
                .try_for_each(|a| self.play(a, args))
                .map_err(|e| (e, after.span, "the `after each card` block")),
        });
        self.drawing -= 1;
        done.map_err(|(e, span, what)| {
            let what = format!("while resolving {what} of deck `{}`", d.name);
            if e.span.is_none() {
                e.at(span, what)
            } else {
                e.note(span, what)
            }
        })
    }
}
