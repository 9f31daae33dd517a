//! Openings: the decisions the games of one run make alike.
//!
//! Every game of a `simulate` run starts from the same scenario, and until
//! the dice first tell two games apart they play alike: all of a
//! Matchlocks deployment (once per dice-off), a Thistle army's first
//! moves. A decision that
//! rolls no dice is a function of where the game stands (every unit and
//! side state, every noted fact, every base and who is on the table, the
//! decks' piles, the turn) and of its arguments. The first game to make it
//! from a position leaves the position it led to in the run's book; a
//! later game that reaches the same position takes that instead of
//! deciding again. Positions are compared whole, never by hash alone, so
//! a game that takes an opening from the book is the game it would have
//! played (a test plays runs both ways).
//!
//! A game looks in the book only while it is still in a known opening:
//! from its first decision not found there on, it decides everything
//! itself. So each game adds at most one position, the one where it left
//! the known openings, and only when that decision rolled no dice; the
//! book grows by one decision along the common line per game, and stops
//! growing at [`MAX_POSITIONS`] or [`MAX_BYTES`]. A game that keeps a log
//! or a tape never uses the book (its narrative is the decisions' own).

use super::decks::Pile;
use super::{Game, Result_};
use crate::base::value::Value;
use crate::compile::ir::Id;
use crate::run::battlefield::{Base, Pt};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// At most this many positions in a book.
pub const MAX_POSITIONS: usize = 512;

/// At most about this many bytes of positions in a book.
pub const MAX_BYTES: usize = 16 << 20;

/// The positions the games of one run have decided from, each with the
/// position its decision led to. Shared by every game of the run, on any
/// thread; what is in it changes how fast games play, never how.
#[derive(Default)]
pub struct Openings {
    book: Mutex<Book>,
    /// Decisions taken from the book instead of made.
    taken: AtomicU64,
}

#[derive(Default)]
struct Book {
    after: HashMap<Asked, Arc<Position>>,
    bytes: usize,
}

impl Openings {
    /// Forget every position (a benchmark starts each run with none).
    pub fn clear(&self) {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        *b = Book::default();
        self.taken.store(0, Relaxed);
    }

    /// How many positions the book holds.
    pub fn len(&self) -> usize {
        self.book
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .after
            .len()
    }

    /// How many decisions games have taken from the book.
    pub fn taken(&self) -> u64 {
        self.taken.load(Relaxed)
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn find(&self, asked: &Asked) -> Option<Arc<Position>> {
        let b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let found = b.after.get(asked).cloned();
        if found.is_some() {
            self.taken.fetch_add(1, Relaxed);
        }
        found
    }

    fn leave(&self, asked: Asked, after: Position) {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = asked.at.bytes() + after.bytes();
        if b.after.len() >= MAX_POSITIONS || b.bytes + bytes > MAX_BYTES {
            return;
        }
        b.bytes += bytes;
        b.after.insert(asked, Arc::new(after));
    }
}

/// A decision asked with its arguments at a position.
#[derive(PartialEq, Eq, Hash)]
struct Asked {
    d: Id,
    args: Vec<Value>,
    at: Position,
}

/// Everything of a game a decision can read or change.
#[derive(PartialEq, Eq)]
struct Position {
    state: Vec<Value>,
    side_state: Vec<Value>,
    /// Per fact, its noted values in order of their arguments.
    facts: Vec<Vec<(Vec<Value>, Value)>>,
    sides: Vec<u16>,
    bases: Vec<Bits<Base>>,
    on_table: Vec<bool>,
    reserve: Vec<bool>,
    turn_start: Vec<Bits<Pt>>,
    last_from: Vec<Bits<Pt>>,
    /// Per unit, where its own last single move put it: what a purposeful
    /// player shuns (`Game::shunned`), so a decision's answer depends on it.
    moved_to: Vec<Option<Bits<Base>>>,
    retired_through: Vec<(u16, u16)>,
    unplaced: Vec<bool>,
    side_of_army: Vec<u16>,
    result: Option<Result_>,
    piles: Vec<Pile>,
    hands: Vec<Vec<super::hands::Hand>>,
    turn: u32,
    drawing: u32,
}

impl Hash for Position {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // Enough to spread positions; equality compares the rest.
        self.state.hash(h);
        self.side_state.hash(h);
        self.facts.hash(h);
        self.bases.hash(h);
        self.on_table.hash(h);
        self.turn.hash(h);
    }
}

impl Position {
    /// A rough size, for the book's cap.
    fn bytes(&self) -> usize {
        let v = std::mem::size_of::<Value>();
        v * (self.state.len() + self.side_state.len())
            + self
                .facts
                .iter()
                .flatten()
                .map(|(k, _)| v * (k.len() + 1) + 24)
                .sum::<usize>()
            + std::mem::size_of::<Base>() * self.bases.len()
            + 16 * (self.turn_start.len() + self.last_from.len())
            + std::mem::size_of::<Option<Base>>() * self.moved_to.len()
            + 4 * self.retired_through.len()
            + self.piles.iter().map(|p| 24 * p.len()).sum::<usize>()
            + self
                .hands
                .iter()
                .flatten()
                .map(|h| 24 * h.len() + 24)
                .sum::<usize>()
            + 64 * self.on_table.len()
    }
}

/// A value compared and hashed by its bits: two positions are the same
/// only when every coordinate is the same number, sign of zero and all.
struct Bits<T>(T);

impl PartialEq for Bits<Base> {
    fn eq(&self, o: &Self) -> bool {
        self.0.bits() == o.0.bits()
    }
}

impl PartialEq for Bits<Pt> {
    fn eq(&self, o: &Self) -> bool {
        (self.0.x.to_bits(), self.0.y.to_bits()) == (o.0.x.to_bits(), o.0.y.to_bits())
    }
}

impl Eq for Bits<Base> {}
impl Eq for Bits<Pt> {}

impl Hash for Bits<Base> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.bits().hash(h);
    }
}

impl Hash for Bits<Pt> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.0.x.to_bits(), self.0.y.to_bits()).hash(h);
    }
}

impl Game<'_> {
    /// Decide `d`: from the run's book while the game is still in a known
    /// opening, else afresh.
    pub(super) fn decide(&mut self, d: Id, args: &[Value]) -> Result<(), super::Diag> {
        let book = match &self.openings {
            // An alternation's decision takes one option, not all: the
            // book, which knows whole decisions, is left.
            Some(b)
                if self.in_opening
                    && !self.logging
                    && self.taping.is_off()
                    && self.prompt.is_none() =>
            {
                b.clone()
            }
            _ => return self.decide_afresh(d, args),
        };
        let asked = Asked {
            d,
            args: args.to_vec(),
            at: self.position(),
        };
        if let Some(after) = book.find(&asked) {
            self.take_position(&after);
            return Ok(());
        }
        // Out of the known openings: from here on the game decides alone.
        self.in_opening = false;
        let dice = self.rng.clone();
        self.decide_afresh(d, args)?;
        if self.rng == dice {
            book.leave(asked, self.position());
        }
        Ok(())
    }

    fn position(&self) -> Position {
        let f = self.field();
        Position {
            state: self.world.state.clone(),
            side_state: self.world.side_state.clone(),
            facts: self
                .world
                .facts
                .iter()
                .map(|m| {
                    let mut v: Vec<(Vec<Value>, Value)> =
                        m.iter().map(|(k, x)| (k.clone(), *x)).collect();
                    v.sort_unstable();
                    v
                })
                .collect(),
            sides: self.world.units.iter().map(|u| u.side).collect(),
            bases: f.bases.iter().map(|b| Bits(*b)).collect(),
            on_table: f.on_table.clone(),
            reserve: f.reserve.clone(),
            turn_start: f.turn_start.iter().map(|p| Bits(*p)).collect(),
            last_from: f.last_from.iter().map(|p| Bits(*p)).collect(),
            moved_to: (0..self.world.units.len())
                .map(|u| self.moved_to.get(u).copied().flatten().map(Bits))
                .collect(),
            retired_through: f.retired_through.clone(),
            unplaced: self.unplaced.clone(),
            side_of_army: self.side_of_army.clone(),
            result: self.result.clone(),
            piles: self.piles.clone(),
            hands: self.hands.clone(),
            turn: self.turn,
            drawing: self.drawing,
        }
    }

    /// Stand where a position says (everything remembered of the old one
    /// is forgotten).
    fn take_position(&mut self, p: &Position) {
        self.world.state.clone_from(&p.state);
        self.world.side_state.clone_from(&p.side_state);
        for (m, noted) in self.world.facts.iter_mut().zip(&p.facts) {
            m.clear();
            m.extend(noted.iter().cloned());
        }
        let moved = self
            .world
            .units
            .iter()
            .zip(&p.sides)
            .any(|(u, s)| u.side != *s);
        for (u, s) in self.world.units.iter_mut().zip(&p.sides) {
            u.side = *s;
        }
        if moved {
            self.sides_changed();
        }
        let bases: Vec<Base> = p.bases.iter().map(|b| b.0).collect();
        let starts: Vec<Pt> = p.turn_start.iter().map(|q| q.0).collect();
        let from: Vec<Pt> = p.last_from.iter().map(|q| q.0).collect();
        self.field_mut().restore(
            &bases,
            &p.on_table,
            &p.reserve,
            (&starts, &from),
            &p.retired_through,
        );
        self.moved_to.clear();
        self.moved_to
            .extend(p.moved_to.iter().map(|b| b.as_ref().map(|b| b.0)));
        self.unplaced.clone_from(&p.unplaced);
        self.side_of_army.clone_from(&p.side_of_army);
        self.result.clone_from(&p.result);
        self.piles.clone_from(&p.piles);
        self.hands.clone_from(&p.hands);
        self.all_hands_changed();
        self.turn = p.turn;
        self.drawing = p.drawing;
        self.ev.forget();
    }
}

#[cfg(test)]
mod tests {
    use crate::base::value::Value;
    use crate::compile::ir::Ex;

    /// A position taken from the book replaces states without telling the
    /// evaluator what changed: what it remembers is forgotten whole. TVBD's
    /// `most_losses(s)` (`all o in sides: s.lost >= o.lost`) is remembered
    /// per side and reads only side states; asked before and after a
    /// position in which the other side has lost more, it answers for each.
    #[test]
    fn a_position_taken_from_the_book_is_asked_afresh() {
        let (build, mut game) = crate::battle::game::tests::tvbd_game();
        let rs = &build.ruleset;
        let d = rs.defines.iter().position(|d| d.name == "most_losses");
        let call = Ex::Define(
            d.expect("most_losses") as u16,
            vec![Ex::Const(Value::Side(0))],
        );
        assert!(crate::run::eval::worth_remembering(rs)[d.expect("most_losses")]);
        let lost = rs.side_states.iter().position(|s| s.name == "lost");
        let lost = rs.side_states.len() + lost.expect("lost");
        let ask = |g: &super::Game| g.eval(&call, &mut [Value::None; 4]).expect("evaluates");
        // The other side (1) has lost 5 units in the position taken.
        game.world.side_state[lost] = Value::Int(5);
        let after = game.position();
        game.world.side_state[lost] = Value::Int(0);
        game.ev.forget();
        assert_eq!(ask(&game), Value::Bool(true), "nobody has lost");
        assert_eq!(ask(&game), Value::Bool(true), "remembered");
        game.take_position(&after);
        assert_eq!(ask(&game), Value::Bool(false), "side 1 has lost more");
    }
}
