//! Battles: the compiled phase graph played on a field, turn by turn, with
//! every choice a player makes answered by a policy and every roll drawn
//! from one seeded generator. Nothing here knows a particular ruleset: the
//! rules say what is legal (a decision's `where` and clauses), the policy
//! what is preferred, and the engine only moves bases and keeps the log.
//!
//! Here: the game loop (set-up, turns, steps, procedures) and the
//! decisions `charge`, `place` and `retire`. Apart, in battle/: `pick.rs`
//! (options of one or more units, and how a pick's LEGAL is split to scan
//! them), `moves.rs` (a unit's candidate moves and the rules' checks on
//! each), `groups.rs` (the same for a group moving together), `decks.rs`
//! (card-driven steps) and `openings.rs` (the decisions a run's games make
//! alike).

use crate::base::rng::Rng;
use crate::base::value::Value;
use crate::battle::scenario::Scenario;
use crate::compile::ir::{ChoiceDef, ChoiceKind, Ex, Id, Ruleset, Search, Ty};
use crate::compile::phase_graph::{Repeat, StepAction};
use crate::front::diagnostic::Diag;
use crate::run::battlefield::{self, Base, Pt};
use crate::run::closures::{Compiled, Lower};
use crate::run::eval::{Change, Ctx, Eval, EvalError, NoDice};
use crate::run::field::{to_len, Feature, Field};
use crate::run::world::World;
use serde::Serialize;
use std::sync::Arc;

mod decide;
mod decks;
mod groups;
mod hands;
mod moves;
mod narrative;
mod openings;
mod pick;
mod prepare;
mod prompts;

pub use openings::Openings;
use pick::{bound_test, conjuncts, needs_noted, reads_local, Bound, Split};

/// One thing that happened, as data (`--log json`) and as narrative.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Turn {
        turn: u32,
    },
    Step {
        phase: Option<String>,
        step: String,
    },
    /// A procedure ran: its arguments, every die rolled, its outcomes.
    Procedure {
        name: String,
        args: Vec<String>,
        rolls: Vec<i64>,
        /// The dice rolled as the narrative shows them (a named face by its
        /// die and name: `green:W1`); not in the JSON, whose `rolls` keep
        /// the faces' values.
        #[serde(skip)]
        faces: Vec<String>,
        /// The modifiers that applied while it ran.
        modifiers: Vec<String>,
        outcomes: Vec<(String, String)>,
        /// Lines its hooks logged.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        log: Vec<String>,
        /// The side state it changed (an army's morale tokens, say).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        sides: Vec<SideChange>,
    },
    /// A hook on a step ran: the dice it rolled and the lines it logged.
    Hook {
        name: String,
        rolls: Vec<i64>,
        log: Vec<String>,
    },
    /// A unit moved (or charged, or retired), with the units of its group
    /// that moved with it (`with`, left out of the JSON when none did).
    Move {
        unit: String,
        how: String,
        from: [f64; 3],
        to: [f64; 3],
        #[serde(skip_serializing_if = "Vec::is_empty")]
        with: Vec<MovedWith>,
    },
    /// A unit that wanted to move could not.
    Stays {
        unit: String,
        why: String,
    },
    /// A unit left the table.
    Leaves {
        unit: String,
    },
    /// A unit deployed.
    Placed {
        unit: String,
        at: [f64; 3],
    },
    /// A unit came onto the table during the battle (a reserve, or one a
    /// rule brought back).
    Arrives {
        unit: String,
        at: [f64; 3],
    },
    /// The sides were settled (who is the attacker).
    Sides {
        army: String,
        side: String,
    },
    /// A deck was shuffled: its pile now holds `cards` cards.
    Shuffle {
        deck: String,
        cards: usize,
    },
    /// A card was turned and resolved; `on` names its side or unit (a
    /// `for each` card), left out of the JSON otherwise.
    Card {
        deck: String,
        card: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        on: Option<String>,
    },
    /// `draw ... until N left` stopped: the cards left in the pile, top
    /// first, each as `card` or `card (side or unit)`.
    Unturned {
        deck: String,
        cards: Vec<String>,
    },
    /// A `draw` (or a `deal`) found the deck's pile empty.
    Empty {
        deck: String,
    },
    /// `deal`: cards went from the pile into a unit's hand; `holds` is the
    /// whole hand after, lowest first.
    Dealt {
        deck: String,
        to: String,
        cards: Vec<String>,
        holds: Vec<String>,
    },
    /// `discard`: a hand's lowest cards went to the discards.
    Discarded {
        deck: String,
        from: String,
        cards: Vec<String>,
        holds: Vec<String>,
    },
    /// A `pay` clause: a card left a hand for an option (the option's
    /// units), to the discards or, `to`, into another hand.
    Paid {
        deck: String,
        from: String,
        card: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        option: Vec<String>,
    },
    /// A `pay` clause refused an option: the hand held no card worth the
    /// cost.
    Refused {
        deck: String,
        from: String,
        cost: String,
        option: Vec<String>,
        holds: Vec<String>,
    },
    /// `alternate`: a side was asked and took no option.
    Passes {
        side: String,
        /// The decision it was asked (the narrative names it, so that the
        /// passes of a step's several alternations can be told apart).
        #[serde(skip)]
        prompt: String,
    },
    End {
        turns: u32,
        result: String,
    },
}

/// A side's state a procedure changed: which side, which state, from what
/// to what (see [`Event::Procedure`]).
#[derive(Clone, Debug, Serialize)]
pub struct SideChange {
    pub side: String,
    pub state: String,
    pub from: String,
    pub to: String,
}

/// A unit that moved with its group's leader (see [`Event::Move`]).
#[derive(Clone, Debug, Serialize)]
pub struct MovedWith {
    pub unit: String,
    pub from: [f64; 3],
    pub to: [f64; 3],
}

fn place(b: &Base) -> [f64; 3] {
    let r = |x: f64| (x * 100.0).round() / 100.0;
    [r(b.centre.x), r(b.centre.y), r(b.facing)]
}

impl Event {
    /// The bytes of its line of the narrative (its text and a newline),
    /// counted without writing them.
    fn narrative_len(&self) -> usize {
        /// A writer that only counts.
        struct Count(usize);
        impl std::fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        let mut n = Count(1);
        let _ = std::fmt::write(&mut n, format_args!("{self}"));
        n.0
    }
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Result_ {
    /// The army (by its index in the scenario) that won.
    Won(usize),
    Draw,
    /// The scenario's turn limit came first.
    TurnLimit,
}

/// What a game produced.
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    pub result: Result_,
    pub turns: u32,
    /// Per army, per unit type: units that left the table.
    pub lost: Vec<Vec<u32>>,
}

/// A hand as the narrative shows it: its cards, or `nothing`.
fn hand_text(holds: &[String]) -> String {
    if holds.is_empty() {
        "nothing".to_string()
    } else {
        holds.join(", ")
    }
}

impl GameSummary {
    /// The summary as `battle --log json` prints it: the result in words
    /// (`won`, `draw`, `turn_limit`) with the winner by name, and each
    /// army's losses by unit type name (types it lost none of left out).
    pub fn json(&self, rs: &crate::compile::ir::Ruleset, armies: &[String]) -> serde_json::Value {
        use serde_json::json;
        let (result, winner) = match &self.result {
            Result_::Won(a) => ("won", armies.get(*a).map(String::as_str)),
            Result_::Draw => ("draw", None),
            Result_::TurnLimit => ("turn_limit", None),
        };
        let lost: Vec<_> = armies
            .iter()
            .zip(&self.lost)
            .map(|(army, by_type)| {
                let types: Vec<_> = by_type
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(t, n)| json!({"unit_type": rs.unit_types[t].name, "lost": n}))
                    .collect();
                json!({"army": army, "unit_types": types})
            })
            .collect();
        json!({"result": result, "winner": winner, "turns": self.turns, "lost": lost})
    }
}

/// A picture of the table at the end of a turn.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub turn: u32,
    pub bases: Vec<Base>,
    pub on_table: Vec<bool>,
    pub resolve: Vec<Option<i64>>,
    /// Per unit: its formation's bases file by file, left to right (empty
    /// when the ruleset keeps no formations; see [`crate::run::field::files`]).
    pub files: Vec<Vec<i64>>,
}

/// Which policy line scores a decision's options: the deciding side's
/// policy when the decision has a side parameter, else the policy of the
/// army of the unit in slot `var` (the option's first name).
#[derive(Clone, Copy)]
struct Prefer {
    d: Id,
    side_policy: Option<Option<usize>>,
    var: usize,
}

/// What a candidate move does, as the log words it. Kept as numbers and
/// put into words only for a move the log shows: a unit weighs dozens of
/// candidates for each move it makes.
#[derive(Clone, Copy, Debug)]
enum How {
    Advances(f64),
    /// As far ahead as the way allows (to the quarter measure).
    AdvancesAsFar(f64),
    WheelsAndAdvances(f64, f64),
    WheelsAndMovesBack(f64, f64),
    AboutFaces,
    AboutFacesAndAdvances(f64),
    Obliquely(f64, f64),
    Turns(f64),
    Shifts(f64),
    MovesBack(f64),
    Pivots(f64),
    Rides(f64),
}

impl std::fmt::Display for How {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            How::Advances(d) => write!(f, "advances {d:.1}"),
            How::AdvancesAsFar(d) => write!(f, "advances {d:.2}"),
            How::WheelsAndAdvances(w, d) => write!(f, "wheels {w:+.0} and advances {d:.1}"),
            How::WheelsAndMovesBack(w, d) => write!(f, "wheels {w:+.0} and moves back {d:.1}"),
            How::AboutFaces => write!(f, "about faces"),
            How::AboutFacesAndAdvances(d) => write!(f, "about faces and advances {d:.1}"),
            How::Obliquely(a, d) => write!(f, "advances obliquely {a:+.0} {d:.1}"),
            How::Turns(a) => write!(f, "turns {a:+.0}"),
            How::Shifts(s) => write!(f, "shifts {s:+.1}"),
            How::MovesBack(d) => write!(f, "moves back {d:.1}"),
            How::Pivots(a) => write!(f, "pivots {a:+.0}"),
            How::Rides(d) => write!(f, "rides {d:.1}"),
        }
    }
}

/// Everything a game needs that does not change from game to game.
pub struct Prepared<'r> {
    pub rs: &'r Ruleset,
    pub world: World,
    /// Per unit: its army and command in the scenario.
    pub army_of: Vec<usize>,
    pub command_of: Vec<usize>,
    pub army_names: Vec<String>,
    /// Per army: the policy it plays (index into `rs.policies`).
    pub policy: Vec<Option<usize>>,
    /// Per army: the search its player makes for moves, in place of its
    /// policy's `search` (None: the policy's). Read from the scenario's
    /// `search` key; the battle bench and tests/search.rs set it to compare
    /// two searches with the same scores.
    pub search: Vec<Option<Search>>,
    pub turn_limit: Option<u32>,
    /// Remember define values between changes of the world (on by
    /// default; a test plays with it off to show it changes nothing).
    pub remember: bool,
    /// Per unit: left by the scenario for the ruleset's deployment to place.
    pub unplaced: Vec<bool>,
    off_table: Option<Id>,
    in_place_of: Option<Id>,
    manoeuvres: Manoeuvres,
    /// What the games evaluate over and over, compiled once.
    code: Arc<BattleCode>,
    /// The book of openings the games of [`Prepared::play`] share (None:
    /// each game decides everything itself); see [`openings`].
    pub openings: Option<Arc<Openings>>,
}

/// The expressions a battle evaluates over and over, compiled to closures
/// (see [`crate::run::closures`]): every expression of every decision's body,
/// every policy's scores, the parts each `pick` scans by, and every
/// procedure's statements.
struct BattleCode {
    compiled: Arc<Compiled>,
    /// Every unit, in order (what a move is checked against when no
    /// nearer list is known).
    everyone: Vec<usize>,
    /// Per decision: the width of its frames.
    widths: Vec<usize>,
    /// Per `pick` decision: its LEGAL split for scanning.
    splits: Vec<Option<Arc<Split>>>,
    /// Per `move` decision: the [`Bound`] of its `control` condition, with
    /// the mover first and the enemy second.
    controls: Vec<Option<Bound>>,
    /// Per `move` decision: whether its `manoeuvre` condition (and its
    /// `finish` condition) reads only the unit and the manoeuvres, and
    /// nothing of the world that changes (TVBD's `may_manoeuvre(u, m)`, by
    /// type and quality): its answers then hold for the whole game.
    fixed_manoeuvres: Vec<bool>,
    /// Per `charge` decision: the noted facts one of which a pair must
    /// hold for LEGAL to ([`needs_noted`]): only those pairs are asked.
    needs: Vec<Option<Vec<(Id, bool)>>>,
}

impl BattleCode {
    fn new(rs: &Ruleset, units: usize, compile: bool) -> BattleCode {
        let mut lower = Lower::new(rs);
        let mut compiled = Compiled::default();
        let mut widths = Vec::new();
        let mut splits = Vec::new();
        let mut controls = Vec::new();
        let mut fixed_manoeuvres = Vec::new();
        let mut needs = Vec::new();
        for (d, dec) in rs.decisions.iter().enumerate() {
            let mut width = frame_slots(rs, d as Id);
            needs.push(match &dec.choice {
                Some(ch) if ch.kind == ChoiceKind::Charge && ch.vars.len() == 2 => {
                    needs_noted(rs, &ch.legal, ch.vars[0], ch.vars[1])
                }
                _ => None,
            });
            let Some(ch) = &dec.choice else {
                widths.push(width);
                splits.push(None);
                controls.push(None);
                fixed_manoeuvres.push(false);
                continue;
            };
            // The `finish` condition too, when there is one: it reads the
            // unit, the manoeuvre and the finishing change.
            let n = ch.finish.as_ref().map(|(n, _)| *n);
            let fixed = |ok: &Ex, m: u16| {
                crate::run::eval::reads_only_fixed(rs, ok)
                    && (0..width as u16)
                        .all(|s| s == ch.vars[0] || s == m || Some(s) == n || !reads_local(ok, s))
            };
            fixed_manoeuvres.push(ch.manoeuvre.as_ref().is_some_and(|(m, ok)| {
                fixed(ok, *m) && ch.finish.as_ref().is_none_or(|(_, fin)| fixed(fin, *m))
            }));
            controls.push(
                ch.control
                    .as_ref()
                    .and_then(|(e, cond)| bound_test(rs, cond, ch.vars[0], *e)),
            );
            let split = matches!(ch.kind, ChoiceKind::Pick | ChoiceKind::Face)
                .then(|| Split::of(rs, ch, width));
            if compile {
                let mut exprs = choice_exprs(ch);
                exprs.extend(
                    rs.policies
                        .iter()
                        .filter_map(|p| p.prefer[d].as_ref().map(|x| &x.0)),
                );
                for e in exprs {
                    compiled.add(&mut lower, e, width);
                    width = width.max(compiled.get(e).map_or(0, |c| c.need()));
                }
            }
            widths.push(width);
            splits.push(split.map(|s| {
                if compile {
                    // The parts are compiled where they will stay: in the Arc.
                    let s = Arc::new(s);
                    let mut need = s.width;
                    for e in s.first_only.iter().chain(&s.second_only).chain(&s.both) {
                        compiled.add(&mut lower, e, s.width);
                        need = need.max(compiled.get(e).map_or(0, |c| c.need()));
                    }
                    let mut s = Arc::try_unwrap(s).ok().expect("not shared yet");
                    s.width = need;
                    Arc::new(s)
                } else {
                    Arc::new(s)
                }
            }));
        }
        if compile {
            for p in 0..rs.procedures.len() {
                compiled.add_procedure(&mut lower, p as Id);
            }
        }
        BattleCode {
            compiled: Arc::new(compiled),
            everyone: (0..units).collect(),
            widths,
            splits,
            controls,
            fixed_manoeuvres,
            needs,
        }
    }
}

/// Every expression of a decision's body.
fn choice_exprs(ch: &ChoiceDef) -> Vec<&Ex> {
    let mut out = vec![&ch.legal];
    out.extend(
        [
            &ch.must,
            &ch.order,
            &ch.reach,
            &ch.wheel,
            &ch.allowance,
            &ch.buffer,
            &ch.distance,
            &ch.turn_about,
            &ch.frontal,
        ]
        .into_iter()
        .flatten(),
    );
    out.extend(
        [
            &ch.manoeuvre,
            &ch.finish,
            &ch.control,
            &ch.through,
            &ch.together,
            &ch.meeting,
        ]
        .into_iter()
        .flatten()
        .map(|(_, e)| e),
    );
    if let Some((_, args, unless)) = &ch.check {
        out.extend(args);
        out.extend(unless);
    }
    if let Some((_, args)) = &ch.then {
        out.extend(args);
    }
    out
}

/// How many slots a decision's frame has: its body's, its policies', and
/// room for its arguments.
fn frame_slots(rs: &Ruleset, d: Id) -> usize {
    let dec = &rs.decisions[d as usize];
    let Some(ch) = &dec.choice else {
        return dec.params.len() + 4;
    };
    let policy_slots = rs
        .policies
        .iter()
        .filter_map(|p| p.prefer[d as usize].as_ref().map(|x| x.1))
        .max()
        .unwrap_or(0);
    ch.slots.max(policy_slots).max(dec.params.len() as u16 + 4) as usize
}

/// The symbols of stdlib battle's `manoeuvre` values.
#[derive(Clone, Copy, Debug, Default)]
struct Manoeuvres {
    straight: u32,
    wheel: u32,
    about_face: u32,
    oblique: u32,
    turn: u32,
    sideways: u32,
    backwards: u32,
    pivot: u32,
    free: u32,
    back_wheel: u32,
}

impl Manoeuvres {
    /// Every manoeuvre, in the order a unit's moves are offered.
    /// `back_wheel` came last to the language, and comes last here, so
    /// that the moves offered before it keep their order (on equal scores
    /// the earlier wins).
    fn all(&self) -> [u32; 10] {
        [
            self.straight,
            self.wheel,
            self.about_face,
            self.oblique,
            self.turn,
            self.sideways,
            self.backwards,
            self.pivot,
            self.free,
            self.back_wheel,
        ]
    }

    /// Whether manoeuvre `m` starts with a wheel, whose cost is the chord
    /// its outer front corner travels ([`moves::path_cost`]).
    fn wheels(&self, m: u32) -> bool {
        m == self.wheel || m == self.back_wheel
    }
}

fn enum_syms(rs: &Ruleset, name: &str) -> Option<Vec<(String, u32)>> {
    let e = rs.enums.iter().find(|e| e.name == name)?;
    Some(
        e.variants
            .iter()
            .map(|s| (rs.symbols[*s as usize].clone(), *s))
            .collect(),
    )
}

fn needs(what: &str, help: &str) -> Diag {
    Diag::new(
        "muster::battle",
        format!("this ruleset cannot play battles: {what}"),
    )
    .help(help.to_string())
}

/// A game being played (and, once over, its record).
pub struct Game<'r> {
    rs: &'r Ruleset,
    ev: Eval<'r>,
    pub world: World,
    rng: Rng,
    pub log: Vec<Event>,
    logging: bool,
    /// The bytes the log takes so far (see [`MAX_LOG_BYTES`]).
    log_bytes: usize,
    /// Which of the log's limits an event or a snapshot was left out for:
    /// the game stops with [`Game::log_full`].
    log_overflow: Option<Overflow>,
    pub turn: u32,
    army_of: Vec<usize>,
    side_of_army: Vec<u16>,
    policy: Vec<Option<usize>>,
    search: Vec<Option<Search>>,
    /// How many candidate moves the game weighed ([`MoveStats`]).
    pub move_stats: MoveStats,
    turn_limit: Option<u32>,
    off_table: Option<Id>,
    /// The state `in_place_of` (a unit): see [`Game::take_places`].
    in_place_of: Option<Id>,
    m: Manoeuvres,
    pub snapshots: Vec<Snapshot>,
    army_names: Vec<String>,
    /// Per unit: still waiting to be deployed.
    unplaced: Vec<bool>,
    result: Option<Result_>,
    /// What the game evaluates over and over, compiled.
    code: Arc<BattleCode>,
    /// Per deck: its draw pile, top first (see [`decks`]).
    piles: Vec<decks::Pile>,
    /// Per deck, per unit: the cards the unit holds (see [`hands`]); a
    /// deck's list stays empty until its first `deal`.
    hands: Vec<Vec<hands::Hand>>,
    /// The `alternate` under way, if any (see [`prompts`]).
    prompt: Option<prompts::Prompt>,
    /// How many cards are being resolved, one inside another.
    drawing: u32,
    /// Whether the rules' answers are taped, or played back ([`Tape`]).
    taping: Taping,
    /// The run's book of openings, when the game may use it.
    openings: Option<Arc<Openings>>,
    /// Whether every decision so far was found in the book.
    in_opening: bool,
    /// The answers of `manoeuvre` conditions that hold for the whole game
    /// (see `BattleCode::fixed_manoeuvres`), by decision, unit and
    /// manoeuvre: refused, or allowed with the changes of direction that
    /// may finish the move (`finish`), as they are found (forgotten if the sides change:
    /// [`Game::sides_changed`]).
    manoeuvres_known: rustc_hash::FxHashMap<(Id, u16, u32), Option<moves::Finishes>>,
    /// The move search's buffers, used again every unit-turn.
    scratch: moves::Scratch,
    /// Per unit: where its own last single move (a `move` decision) put
    /// it; a purposeful player does not make that move again once the
    /// game has moved the unit off it ([`Game::shunned`]).
    moved_to: Vec<Option<Base>>,
}

/// What a game's player did to find its units' single moves (a group's
/// moves are not counted): the unit-turns in which it looked (a unit with
/// a manoeuvre allowed), the candidate moves it made, those whose path it
/// laid (they passed the checks that need only the end), those that were
/// legal, and those it scored (every legal one, unless none was).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveStats {
    pub unit_turns: u64,
    pub generated: u64,
    pub laid: u64,
    pub legal: u64,
    pub scored: u64,
    /// Unit-turns a purposeful search looked at again with the thorough
    /// fan (it found nothing better than standing still).
    pub second_looks: u64,
    /// Candidate moves a purposeful player dropped for ending where the
    /// game had moved the unit off after its last move ([`Game::shunned`]).
    pub shunned: u64,
}

impl std::ops::AddAssign for MoveStats {
    fn add_assign(&mut self, o: MoveStats) {
        self.unit_turns += o.unit_turns;
        self.generated += o.generated;
        self.laid += o.laid;
        self.legal += o.legal;
        self.scored += o.scored;
        self.second_looks += o.second_looks;
        self.shunned += o.shunned;
    }
}

/// Every answer the rules gave a game's engine, in the order it asked: a
/// game played again from its tape with the same seed asks the rules
/// nothing and is the same game (procedures still run, rolling the same
/// dice). The battle benchmark times such replays: how fast this engine
/// plays with rules that cost nothing to evaluate, a bound no evaluator of
/// the rules, compiled or hand-written in Rust, can beat.
#[derive(Clone, Debug, Default)]
pub struct Tape(Vec<Option<Value>>);

impl Tape {
    /// How many answers it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds no answer.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A game's [`Tape`]: off, being recorded, or played back (the next answer).
enum Taping {
    Off,
    Record(std::cell::RefCell<Tape>),
    Play(Tape, std::cell::Cell<usize>),
}

impl Taping {
    fn is_off(&self) -> bool {
        matches!(self, Taping::Off)
    }
}

/// The most steps a game may take (a runaway `goto` loop is reported).
const MAX_STEPS: usize = 100_000;
/// Without a turn limit, a game stops after this many turns.
const DEFAULT_TURN_LIMIT: u32 = 50;

/// The most events one game's log may hold. The longest shipped seeded
/// games log some 1,500 (Matchlocks); a rule or a hook that logs in a loop
/// is stopped here, with a diagnostic, instead of filling the memory.
pub const MAX_LOG_EVENTS: usize = 200_000;

/// The most bytes one game's log may take: its narrative, as `muster
/// battle` prints it, and the table at the end of each turn (for `--svg`).
/// The longest shipped seeded games print some 80 KB: this is 400 times
/// that.
pub const MAX_LOG_BYTES: usize = 32 << 20;

/// Which limit of the log an event or a snapshot would have broken.
#[derive(Clone, Copy, Debug)]
enum Overflow {
    Events,
    Bytes,
}

/// The most spots one `place` decision may weigh, over all the units it
/// puts down ([`Game::spots_of`]): each asks the rules about the unit
/// standing there. TVBD's book deployment weighs some 24,000 spots; 1,000
/// units on a table of 72 by 48 weigh 1.7 million, in about 7 seconds.
pub const MAX_DEPLOYMENT_SPOTS: i64 = 2_000_000;

impl<'r> Game<'r> {
    fn field(&self) -> &Field {
        self.world.field.as_ref().expect("a battle has a field")
    }
    fn field_mut(&mut self) -> &mut Field {
        self.ev.changed(Change::Field);
        self.world.field.as_mut().expect("a battle has a field")
    }

    /// The table, to lend it the path of the move being weighed (or take
    /// it back): what is remembered of everything else stays good.
    fn field_path_mut(&mut self) -> &mut Field {
        self.ev.changed(Change::Path);
        self.world.field.as_mut().expect("a battle has a field")
    }

    /// Put a unit on a new base.
    pub fn set_base(&mut self, u: usize, b: Base) {
        self.field_mut().set_base(u, b);
    }

    fn note(&mut self, e: impl FnOnce(&Self) -> Event) {
        if self.logging && self.log_overflow.is_none() {
            let ev = e(self);
            self.record(ev);
        }
    }

    /// Add an event to the log, unless the log is full ([`MAX_LOG_EVENTS`],
    /// [`MAX_LOG_BYTES`]): then it is left out, and the game stops after
    /// the hook or the action being played ([`Game::log_full`]).
    fn record(&mut self, ev: Event) {
        if self.log.len() >= MAX_LOG_EVENTS {
            self.log_overflow = Some(Overflow::Events);
        } else if self.log_takes(ev.narrative_len()) {
            self.log.push(ev);
        }
    }

    /// Count `bytes` more of the log, if they fit in [`MAX_LOG_BYTES`]
    /// (else the log has overflowed).
    fn log_takes(&mut self, bytes: usize) -> bool {
        match self.log_bytes.checked_add(bytes) {
            Some(n) if n <= MAX_LOG_BYTES => {
                self.log_bytes = n;
                true
            }
            _ => {
                self.log_overflow = Some(Overflow::Bytes);
                false
            }
        }
    }

    /// The diagnostic of a game whose log outgrew its limits, if it has,
    /// at the step that was being played.
    fn log_full(&self, step: Option<&crate::compile::phase_graph::Node>) -> Result<(), Diag> {
        let Some(over) = self.log_overflow else {
            return Ok(());
        };
        let what = match over {
            Overflow::Events => format!("holds more than {MAX_LOG_EVENTS} events"),
            Overflow::Bytes => format!("takes more than {} MB", MAX_LOG_BYTES >> 20),
        };
        let turn = self.turn;
        let d = Diag::new("muster::battle", format!("the game's log {what}"));
        let d = match step {
            Some(n) => Diag {
                message: format!("{} (turn {turn}, step \"{}\")", d.message, n.name),
                ..d.at(n.span, "while playing this step")
            },
            None => Diag {
                message: format!("{} (turn {turn})", d.message),
                ..d
            },
        };
        Err(d.help(format!(
            "a rule or a hook that logs in a loop? a game's log holds at most {MAX_LOG_EVENTS} \
             events and {} MB, where the longest shipped games log some 1,500 events and 80 KB; \
             `muster simulate` plays without a log",
            MAX_LOG_BYTES >> 20
        )))
    }

    fn eval(&self, e: &Ex, frame: &mut [Value]) -> Result<Value, Diag> {
        self.eval_raw(e, frame).map_err(Diag::from)
    }

    /// Evaluate, compiled where the expression was compiled.
    #[inline]
    fn eval_raw(&self, e: &Ex, frame: &mut [Value]) -> Result<Value, EvalError> {
        if let Taping::Off = self.taping {
            return self.ev.run(Ctx::new(&self.world), e, frame, &mut NoDice);
        }
        self.eval_taped(e, frame)
    }

    /// [`Game::eval_raw`] while the rules' answers are taped or played back.
    #[cold]
    #[inline(never)]
    fn eval_taped(&self, e: &Ex, frame: &mut [Value]) -> Result<Value, EvalError> {
        match &self.taping {
            Taping::Off => unreachable!("eval_raw evaluates untaped itself"),
            Taping::Record(t) => {
                let r = self.ev.run(Ctx::new(&self.world), e, frame, &mut NoDice);
                t.borrow_mut().0.push(r.as_ref().ok().copied());
                r
            }
            Taping::Play(t, next) => {
                let i = next.get();
                next.set(i + 1);
                match t.0.get(i) {
                    Some(Some(v)) => Ok(*v),
                    Some(None) => Err(EvalError::NotStatic),
                    None => Err(Diag::new(
                        "muster::battle",
                        "the game asked the rules more than its tape holds",
                    )
                    .help("replay a tape with the scenario and the seed it was taped with")
                    .into()),
                }
            }
        }
    }

    /// The summary of the finished game. A unit is lost when it has left
    /// the table (not one still held in reserve), or stands on it out of
    /// the battle: the stdlib's state `out_of_battle` (Matchlocks' guns
    /// the enemy holds).
    pub fn summary(&self) -> GameSummary {
        let types = self.rs.unit_types.len();
        let mut lost = vec![vec![0u32; types]; 2];
        let ns = self.rs.states.len();
        let out = self.rs.state("out_of_battle");
        let out_of_battle =
            |u: usize| out.is_some_and(|s| self.world.state[u * ns + s as usize].as_bool());
        for (u, a) in self.army_of.iter().enumerate() {
            if (!self.field().on_table[u] && !self.field().reserve[u]) || out_of_battle(u) {
                lost[*a][self.world.units[u].ty as usize] += 1;
            }
        }
        GameSummary {
            result: self.result.clone().unwrap_or(Result_::TurnLimit),
            turns: self.turn,
            lost,
        }
    }

    /// The narrative, one line per event.
    pub fn narrative(&self) -> String {
        let mut s = String::new();
        for e in &self.log {
            s.push_str(&e.to_string());
            s.push('\n');
        }
        s
    }

    /// Play the game from the start of the sequence of play to its end.
    /// A game whose log outgrows its limits stops after the hook or the
    /// action that filled it, with a diagnostic ([`Game::log_full`]).
    pub fn run(&mut self) -> Result<(), Diag> {
        self.run_steps()?;
        self.log_full(None)
    }

    /// [`Game::run`], but for the log's last check.
    fn run_steps(&mut self) -> Result<(), Diag> {
        let graph = self.rs.graph.as_ref().expect("checked in Prepared::new");
        let mut node = graph.start;
        let limit = self.turn_limit.unwrap_or(DEFAULT_TURN_LIMIT);
        for _ in 0..MAX_STEPS {
            if node == graph.end {
                // A game that ends mid-turn is drawn as it ended, too.
                if self.snapshots.last().is_some_and(|s| s.turn != self.turn) {
                    self.snapshot();
                }
                self.finish(false);
                return Ok(());
            }
            if node == graph.turn_start {
                if self.turn == 0 {
                    // The table as deployed, before the first turn.
                    self.snapshot();
                }
                self.start_turn()?;
            }
            let n = &graph.nodes[node];
            if node != graph.turn_end {
                let (phase, step) = (n.phase.clone(), n.name.clone());
                self.note(|_| Event::Step { phase, step });
            }
            self.play_node(n)?;
            if node == graph.turn_end {
                self.snapshot();
            }
            let mut next = None;
            for e in &n.edges {
                let ok = match &e.when {
                    None => true,
                    Some(c) => {
                        let mut frame = vec![Value::None; 8];
                        self.eval(c, &mut frame)?.as_bool()
                    }
                };
                if ok {
                    next = Some(e.to);
                    break;
                }
            }
            let Some(next) = next else {
                return Err(Diag::new(
                    "muster::battle",
                    "play reached a step with no way on",
                ));
            };
            if node == graph.turn_end && next != graph.end && self.turn >= limit {
                self.finish(true);
                return Ok(());
            }
            node = next;
        }
        Err(Diag::new(
            "muster::battle",
            format!("the game took more than {MAX_STEPS} steps"),
        )
        .help("a `goto` loop that never ends the turn? check the sequence of play"))
    }

    fn snapshot(&mut self) {
        if !self.logging {
            return;
        }
        // A snapshot counts towards the log's bytes, as the memory it takes.
        let units = self.world.units.len();
        let per_unit = std::mem::size_of::<Base>()
            + std::mem::size_of::<bool>()
            + std::mem::size_of::<Option<i64>>();
        if !self.log_takes(units * per_unit) {
            return;
        }
        let resolve = self.rs.state("resolve");
        let ns = self.rs.states.len();
        let f = self.field();
        let snap = Snapshot {
            turn: self.turn,
            bases: f.bases.clone(),
            on_table: f.on_table.clone(),
            resolve: (0..self.world.units.len())
                .map(|u| resolve.and_then(|r| self.world.state[u * ns + r as usize].as_int()))
                .collect(),
            files: (0..self.world.units.len())
                .map(|u| {
                    f.formation(&self.world, u).map_or_else(Vec::new, |x| {
                        let files = crate::run::battlefield::files::files(x);
                        (1..=files)
                            .map(|i| crate::run::battlefield::files::file_bases(x, i))
                            .collect()
                    })
                })
                .collect(),
        };
        self.snapshots.push(snap);
    }

    fn finish(&mut self, limit: bool) {
        let defeated = self.rs.side_state("defeated");
        let nss = self.rs.side_states.len();
        let lost: Vec<bool> = (0..2)
            .map(|a| {
                let s = self.side_of_army[a] as usize;
                defeated.is_some_and(|d| self.world.side_state[s * nss + d as usize].as_bool())
            })
            .collect();
        let result = match (limit, lost[0], lost[1]) {
            (_, true, true) => Result_::Draw,
            (_, true, false) => Result_::Won(1),
            (_, false, true) => Result_::Won(0),
            (true, _, _) => Result_::TurnLimit,
            (false, false, false) => Result_::Draw,
        };
        let text = match &result {
            Result_::Won(a) => format!("{} wins", self.army_names[*a]),
            Result_::Draw => "a draw".to_string(),
            Result_::TurnLimit => "the turn limit is reached".to_string(),
        };
        let turns = self.turn;
        self.note(|_| Event::End {
            turns,
            result: text,
        });
        self.result = Some(result);
    }

    fn start_turn(&mut self) -> Result<(), Diag> {
        self.turn += 1;
        let turn = self.turn;
        self.note(|_| Event::Turn { turn });
        self.field_mut().start_turn();
        let reset = self.world.reset_each_turn(self.rs);
        self.ev.forget();
        reset
    }

    /// Take off the table every unit the rules have removed.
    /// Run the hooks on a step (`after` ones when `after`), in the order
    /// they are declared; each sees the turn.
    fn step_hooks(
        &mut self,
        step: &str,
        after: bool,
        span: crate::front::syntax::Span,
    ) -> Result<(), Diag> {
        use crate::compile::ir::Point;
        use crate::run::hooks;
        let rs = self.rs;
        for (i, h) in rs.hooks.iter().enumerate() {
            let hit = match &h.point {
                Point::BeforeStep(s) => !after && s == step,
                Point::AfterStep(s) => after && s == step,
                _ => false,
            };
            if !hit {
                continue;
            }
            let mut log = Vec::new();
            let mut dice = crate::run::procedures::Recorder {
                inner: &mut self.rng,
                rolls: Vec::new(),
                faces: None,
            };
            let r = {
                let mut env = hooks::Env {
                    ev: &self.ev,
                    store: hooks::Store::Battle(&mut self.world),
                    dice: &mut dice,
                    outs: None,
                    log: &mut log,
                };
                hooks::call(&mut env, i as Id, &[Value::Int(self.turn as i64)])
            };
            let rolls = dice.rolls;
            self.ev.forget();
            if let Err(e) = r {
                let turn = self.turn;
                let d = e.diag();
                return Err(Diag {
                    message: format!("{} (turn {turn}, step \"{step}\")", d.message),
                    ..d
                }
                .note(span, "during this step"));
            }
            if !rolls.is_empty() || !log.is_empty() {
                let name = h.name.clone();
                self.note(|_| Event::Hook { name, rolls, log });
            }
            self.sync_off_table();
        }
        Ok(())
    }

    fn sync_off_table(&mut self) {
        self.sync_formations();
        let Some(s) = self.off_table else { return };
        let rows = self.plan_places();
        let ns = self.rs.states.len();
        for u in 0..self.world.units.len() {
            if self.field().on_table[u] && self.world.state[u * ns + s as usize].as_bool() {
                self.field_mut().set_on_table(u, false);
                let unit = self.world.units[u].name.clone();
                self.note(|_| Event::Leaves { unit });
            }
        }
        self.take_places(rows);
    }

    /// Units a rule brought back (`off_table` false) whose state
    /// `in_place_of` names a unit, grouped by that unit, each row with the
    /// bases it would take: side by side along the unit's front edge, left
    /// to right in the scenario's order, facing as it faces, the row centred
    /// on it and each front edge on its front edge. A row that would leave
    /// the table, or overlap a unit staying on it or an earlier row, has no
    /// room: its units stay off the table ("stays: no room in the place of
    /// ...") and the unit they were to replace, if it was leaving in the
    /// same action, stays on the table. Either way `in_place_of` goes back
    /// to none, so only a later `place` decision brings such a unit back.
    fn plan_places(&mut self) -> Vec<(usize, Vec<usize>, Vec<Base>)> {
        let (Some(s), Some(p)) = (self.off_table, self.in_place_of) else {
            return Vec::new();
        };
        let ns = self.rs.states.len();
        let off = |g: &Self, u: usize| g.world.state[u * ns + s as usize].as_bool();
        let mut rows: Vec<(usize, Vec<usize>, Vec<Base>)> = Vec::new();
        for u in 0..self.world.units.len() {
            if self.field().on_table[u] || off(self, u) {
                continue;
            }
            let Value::Unit(o) = self.world.state[u * ns + p as usize] else {
                continue;
            };
            self.world.state[u * ns + p as usize] = Value::None;
            self.ev.changed(Change::State(p));
            match rows.iter_mut().find(|(r, _, _)| *r == o as usize) {
                Some((_, pieces, _)) => pieces.push(u),
                None => rows.push((o as usize, vec![u], Vec::new())),
            }
        }
        let mut planned: Vec<(usize, Vec<usize>, Vec<Base>)> = Vec::new();
        for (o, pieces, _) in rows {
            let ob = self.field().bases[o];
            let (fwd, right) = (ob.forward(), ob.right());
            let front = ob.centre + fwd * (ob.depth * 0.5);
            let total: f64 = pieces.iter().map(|&u| self.field().bases[u].width).sum();
            let mut left = -total * 0.5;
            let mut bases = Vec::with_capacity(pieces.len());
            for &u in &pieces {
                let w = self.field().bases[u];
                let c = front + right * (left + w.width * 0.5) - fwd * (w.depth * 0.5);
                bases.push(Base::new(c, ob.facing, w.width, w.depth));
                left += w.width;
            }
            let f = self.field();
            let staying = |x: usize| x != o && f.on_table[x] && !off(self, x);
            let room = bases.iter().all(|b| {
                f.holds(b)
                    && !f
                        .bases
                        .iter()
                        .enumerate()
                        .any(|(x, xb)| staying(x) && b.overlaps(xb))
                    && !planned.iter().flat_map(|r| &r.2).any(|pb| b.overlaps(pb))
            });
            if room {
                planned.push((o, pieces, bases));
                continue;
            }
            let instead = self.world.units[o].name.clone();
            for &u in &pieces {
                self.world.state[u * ns + s as usize] = Value::Bool(true);
                let unit = self.world.units[u].name.clone();
                let why = format!("no room in the place of {instead}");
                self.note(|_| Event::Stays { unit, why });
            }
            self.ev.changed(Change::State(s));
            if self.field().on_table[o] && off(self, o) {
                self.world.state[o * ns + s as usize] = Value::Bool(false);
            }
        }
        planned
    }

    /// Put the rows [`Game::plan_places`] found room for on the table
    /// ("arrives at ..."), once the units leaving have left.
    fn take_places(&mut self, rows: Vec<(usize, Vec<usize>, Vec<Base>)>) {
        for (_, pieces, bases) in rows {
            for (u, b) in pieces.into_iter().zip(bases) {
                self.set_base(u, b);
                self.field_mut().set_on_table(u, true);
                self.field_mut().reserve[u] = false;
                self.unplaced[u] = false;
                let unit = self.world.units[u].name.clone();
                self.note(|_| Event::Arrives {
                    unit,
                    at: place(&b),
                });
            }
        }
    }

    /// Bases follow their formations (see [`crate::run::field::files`]): the
    /// rules' casualties, expansions and contractions change the units'
    /// frontage on the table. A base resized is a change of the table:
    /// what the memo remembers of it (gaps, lines of sight, the pair rows
    /// of compiled code) is stale.
    fn sync_formations(&mut self) {
        if self.field().formations.is_none() {
            return;
        }
        let mut field = self.world.field.take().expect("a battle has a table");
        let resized = field.sync_formations(&self.world);
        self.world.field = Some(field);
        if resized {
            self.ev.changed(Change::Field);
        }
    }

    /// Play one action of a step; a problem without a place of its own is
    /// reported at the step, with the turn it happened in (and, for a
    /// problem met while resolving a card, the step's name).
    fn action(
        &mut self,
        a: &StepAction,
        step: &str,
        span: crate::front::syntax::Span,
    ) -> Result<(), Diag> {
        self.play(a, &[]).map_err(|d| {
            let turn = self.turn;
            let cards = !matches!(a, StepAction::Do { .. });
            let d = if d.span.is_none() {
                d.at(span, "while playing this step")
            } else if cards {
                d.note(span, "during this step")
            } else {
                d
            };
            let when = match (turn, cards) {
                (0, false) => "game set-up".to_string(),
                (_, false) => format!("turn {turn}"),
                (0, true) => format!("game set-up, step \"{step}\""),
                (_, true) => format!("turn {turn}, step \"{step}\""),
            };
            Diag {
                message: format!("{} ({when})", d.message),
                ..d
            }
        })
    }

    /// A requirement that a step's own `do` broke: no decision offered the
    /// arguments, the table did (the scenario's armies or positions), so
    /// the help says so and names them.
    fn broken_by_the_table(&self, d: Diag, vals: &[Value]) -> Diag {
        if d.code != "muster::requirement" {
            return d;
        }
        let who: Vec<String> = vals.iter().map(|v| self.label(*v)).collect();
        let who = if who.is_empty() {
            String::new()
        } else {
            format!(" ({})", who.join(", "))
        };
        d.help(format!(
            "the step's procedure{who} found the scenario breaking this rule: change the scenario's armies or positions, or remove or override the step in a house rule"
        ))
    }

    /// The arguments of repetition `i` of an action (None: its `where`
    /// leaves this repetition out).
    fn arguments(
        &mut self,
        each: Option<&Repeat>,
        i: usize,
        slots: u16,
        base: &[Value],
        args: &[Ex],
    ) -> Result<Option<Vec<Value>>, Diag> {
        let (mut frame, mut vals) = (Vec::new(), Vec::new());
        let kept = self.arguments_into(each, i, slots, base, args, &mut frame, &mut vals)?;
        Ok(kept.then_some(vals))
    }

    /// Run `f` with the arguments of each repetition of an action that its
    /// `where` keeps, in order; one frame and one list of arguments serve
    /// every repetition.
    fn each_repetition(
        &mut self,
        each: Option<&Repeat>,
        slots: u16,
        base: &[Value],
        args: &[Ex],
        mut f: impl FnMut(&mut Self, &[Value]) -> Result<(), Diag>,
    ) -> Result<(), Diag> {
        let (mut frame, mut vals) = (Vec::new(), Vec::new());
        for i in 0..self.repetitions(each) {
            if self.arguments_into(each, i, slots, base, args, &mut frame, &mut vals)? {
                f(self, &vals)?;
            }
        }
        Ok(())
    }

    /// [`Game::arguments`] into `vals`, made in `frame` (buffers a loop
    /// over the repetitions uses again); false when left out.
    #[allow(clippy::too_many_arguments)]
    fn arguments_into(
        &mut self,
        each: Option<&Repeat>,
        i: usize,
        slots: u16,
        base: &[Value],
        args: &[Ex],
        frame: &mut Vec<Value>,
        vals: &mut Vec<Value>,
    ) -> Result<bool, Diag> {
        if !self.repetition(each, i, slots, base, frame)? {
            return Ok(false);
        }
        vals.clear();
        for e in args {
            vals.push(self.eval(e, frame)?);
        }
        Ok(true)
    }

    /// Play an action with `base` in the first slots of its frame (a card's
    /// deck arguments and side or unit; nothing for a step's own action).
    fn play(&mut self, a: &StepAction, base: &[Value]) -> Result<(), Diag> {
        match a {
            StepAction::Do {
                procedure,
                target,
                args,
                each,
                slots,
            } => self.each_repetition(each.as_ref(), *slots, base, args, |g, vals| {
                if *procedure {
                    g.perform(*target, vals)
                        .map_err(|d| g.broken_by_the_table(d, vals))?;
                } else {
                    g.decide(*target, vals)?;
                }
                g.sync_off_table();
                Ok(())
            }),
            StepAction::Draw {
                deck,
                args,
                until,
                each,
                slots,
            } => self.each_repetition(each.as_ref(), *slots, base, args, |g, vals| {
                g.draw(*deck, vals, *until)
            }),
            StepAction::Shuffle { deck } => self.shuffle(*deck),
            StepAction::Deal {
                deck,
                holder,
                size,
                discard,
                each,
                slots,
            } => {
                let mut frame = Vec::new();
                for i in 0..self.repetitions(each.as_ref()) {
                    if !self.repetition(each.as_ref(), i, *slots, base, &mut frame)? {
                        continue;
                    }
                    let Value::Unit(u) = self.eval(holder, &mut frame)? else {
                        // No holder (`none`): nobody to deal to.
                        continue;
                    };
                    // `none`, `unlimited` or a fraction is no hand size.
                    let n = self.eval(size, &mut frame)?.as_int().unwrap_or(-1);
                    if *discard {
                        self.discard(*deck, u, n)?;
                    } else {
                        self.deal(*deck, u, n)?;
                    }
                }
                Ok(())
            }
            StepAction::Alternate {
                decision,
                args,
                each,
                from,
                slots,
                ..
            } => self.alternate(*decision, args, each, from.as_ref(), *slots, base),
        }
    }

    /// How many times an action runs: once, or once per side or unit.
    fn repetitions(&self, each: Option<&Repeat>) -> usize {
        match each {
            None => 1,
            Some(r) if r.sides => self.world.side_names.len().min(self.rs.sides.len()),
            Some(_) => self.world.units.len(),
        }
    }

    /// The side or unit of repetition `i`.
    fn repeated(r: &Repeat, i: usize) -> Value {
        if r.sides {
            Value::Side(i as u16)
        } else {
            Value::Unit(i as u16)
        }
    }

    /// The frame of repetition `i` of an action (`base` first, then the
    /// side or unit), made afresh in `frame`; false when its `where` does
    /// not hold now.
    fn repetition(
        &self,
        each: Option<&Repeat>,
        i: usize,
        slots: u16,
        base: &[Value],
        frame: &mut Vec<Value>,
    ) -> Result<bool, Diag> {
        frame.clear();
        frame.resize((slots as usize).max(1).max(base.len()), Value::None);
        frame[..base.len()].copy_from_slice(base);
        if let Some(r) = each {
            frame[r.slot as usize] = Self::repeated(r, i);
            if let Some(c) = &r.cond {
                if !self.eval(c, frame)?.as_bool() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The name of the army on side `s` (the side's own name before the
    /// sides are settled).
    fn army_of_side(&self, s: usize) -> String {
        match self.side_of_army.iter().position(|x| *x as usize == s) {
            Some(a) => self.army_names[a].clone(),
            None => self.show(Value::Side(s as _)),
        }
    }

    /// A value as the narrative names it: a side by its army's name.
    pub(crate) fn label(&self, v: Value) -> String {
        match v {
            Value::Side(s) => self.army_of_side(s as usize),
            v => self.show(v),
        }
    }

    fn show(&self, v: Value) -> String {
        self.world.show(self.rs, v)
    }

    /// An outcome as the log shows it: a roll read by an `effects` block as
    /// its tallies (`{wounds 1, potential 1}`, the ones not 0), any other
    /// value as [`Game::show`] does.
    fn show_outcome(&self, ty: &Ty, v: Value) -> String {
        let (Ty::Tallies(fx), Value::Int(packed)) = (ty, v) else {
            return self.show(v);
        };
        let fx = &self.rs.effects[*fx as usize];
        let parts: Vec<String> = fx
            .tallies
            .iter()
            .enumerate()
            .map(|(k, name)| (name, fx.tally(packed, k)))
            .filter(|(_, n)| *n != 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }

    fn perform(
        &mut self,
        proc: Id,
        args: &[Value],
    ) -> Result<crate::run::procedures::Performed, Diag> {
        // What the log shows: procedures that rolled or changed something.
        let before = self.logging.then(|| {
            (
                self.world.state.clone(),
                self.world.side_state.clone(),
                self.world.facts.iter().map(|f| f.len()).sum::<usize>(),
            )
        });
        if let Some(t) = &self.ev.trace {
            t.borrow_mut().clear();
        }
        // The procedure tells the evaluator each thing it changes.
        let p = crate::run::procedures::perform_showing(
            &self.ev,
            &mut self.world,
            proc,
            args,
            &mut self.rng,
            self.logging,
        )?;
        let mut sides = Vec::new();
        let changed = before.is_some_and(|(st, sst, nf)| {
            let nss = self.rs.side_states.len();
            for (i, (was, now)) in sst.iter().zip(&self.world.side_state).enumerate() {
                if was != now {
                    sides.push(SideChange {
                        side: self.army_of_side(i / nss),
                        state: self.rs.side_states[i % nss].name.clone(),
                        from: self.show(*was),
                        to: self.show(*now),
                    });
                }
            }
            !p.rolls.is_empty()
                || !p.log.is_empty()
                || !sides.is_empty()
                || st != self.world.state
                || nf != self.world.facts.iter().map(|f| f.len()).sum::<usize>()
        });
        if changed {
            let pd = &self.rs.procedures[proc as usize];
            let ev = Event::Procedure {
                name: pd.name.clone(),
                args: args.iter().map(|v| self.show(*v)).collect(),
                rolls: p.rolls.clone(),
                faces: p.faces.clone(),
                modifiers: self
                    .ev
                    .trace
                    .as_ref()
                    .map(|t| {
                        t.borrow()
                            .iter()
                            .map(|m| {
                                let md = &self.rs.modifiers[*m as usize];
                                match &md.source {
                                    Some(s) => format!("{}: {s}", md.name),
                                    None => md.name.clone(),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                outcomes: pd
                    .outcomes
                    .iter()
                    .zip(&p.outcomes)
                    .map(|(o, v)| (o.name.clone(), self.show_outcome(&o.ty, *v)))
                    .collect(),
                log: p.log.clone(),
                sides,
            };
            self.record(ev);
        }
        // The sides a set-up procedure settles (after its own log line).
        if self.turn == 0 {
            self.settle_sides(&p.outcomes);
        }
        Ok(p)
    }

    /// The units' sides have changed: what was worked out from them (the
    /// field's lists by side, the manoeuvre answers kept for the game) is
    /// forgotten.
    pub(super) fn sides_changed(&mut self) {
        self.manoeuvres_known.clear();
        self.field_mut().forget_sides();
    }

    /// A set-up procedure that says which army takes the first side
    /// (an outcome `first_army` or `second_army`, as TVBD's initiative).
    fn settle_sides(&mut self, outcomes: &[Value]) {
        for v in outcomes {
            let Value::Sym(s) = v else { continue };
            let name = self.rs.symbols[*s as usize].as_str();
            let first = match name {
                "first_army" => 0,
                "second_army" => 1,
                _ => continue,
            };
            let sides = [first, 1 - first];
            self.side_of_army = vec![sides[0] as u16, sides[1] as u16];
            for (u, a) in self.army_of.iter().enumerate() {
                self.world.units[u].side = self.side_of_army[*a];
            }
            self.sides_changed();
            // State that counts units per side starts again.
            let _ = self.world.init_state(self.rs);
            self.ev.forget();
            for a in 0..2 {
                let army = self.army_names[a].clone();
                let side = self.rs.sides[self.side_of_army[a] as usize].clone();
                self.note(|_| Event::Sides { army, side });
            }
        }
    }
}

/// Is `e` the same for every spot of a row of a `place` decision: does it
/// read nothing of where the unit stands but how far it is from its own
/// table edge (with the unit's stats and states, types, sides, the table's
/// size, and the defines and tables that read only those)?
fn same_along_a_row(rs: &Ruleset, e: &Ex, depth: u8) -> bool {
    use crate::compile::ir::Builtin as B;
    let ok = match e {
        Ex::Const(_)
        | Ex::Local(_)
        | Ex::Option(_)
        | Ex::Stat(..)
        | Ex::State(..)
        | Ex::SideState(..)
        | Ex::SideOf(_)
        | Ex::IsType(..)
        | Ex::IsQuality(..)
        | Ex::IsSym(..)
        | Ex::Not(_)
        | Ex::Neg(_)
        | Ex::Bin(..)
        | Ex::If(..) => true,
        Ex::Builtin(B::FromOwnEdge | B::TableWidth | B::TableDepth | B::Min | B::Max, _) => true,
        Ex::Define(d, _) => {
            depth < 4 && same_along_a_row(rs, &rs.defines[*d as usize].body, depth + 1)
        }
        Ex::Table(t, _) => {
            depth < 4 && same_along_a_row(rs, &rs.tables[*t as usize].body, depth + 1)
        }
        _ => false,
    };
    ok && !e.any_child(&mut |c| !same_along_a_row(rs, c, depth))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{conjuncts, same_along_a_row};

    /// A ruleset of the repository, built (for the tests of the modules
    /// that compile and play its rules).
    pub(crate) fn ruleset(file: &str) -> crate::compile::ir::Ruleset {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        match crate::build(&path) {
            Ok(b) => b.ruleset,
            Err(_) => panic!("{file} builds"),
        }
    }

    /// A TVBD game of the default scenario, set up and not begun, with a
    /// build to compile queries against its world (the game has its own
    /// copy of the ruleset: the same ids as the build's).
    pub(crate) fn tvbd_game() -> (crate::Build, super::Game<'static>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut build = match crate::build(&path.join("rules/tillys_very_bad_day.muster")) {
            Ok(b) => b,
            Err(_) => panic!("TVBD builds"),
        };
        let sc = build.scenario(None).expect("the default scenario");
        let rs: &'static crate::compile::ir::Ruleset = Box::leak(Box::new(build.ruleset.clone()));
        let prep = super::Prepared::new(rs, &sc).expect("prepared");
        (build, prep.start(1, false))
    }

    /// The body of decision `name` of `rs`.
    pub(crate) fn choice<'a>(
        rs: &'a crate::compile::ir::Ruleset,
        name: &str,
    ) -> &'a crate::compile::ir::ChoiceDef {
        let d = rs.decisions.iter().find(|d| d.name == name).expect(name);
        d.choice.as_ref().expect("a choice")
    }

    /// Matchlocks deploys within 9 inches of its own edge: the first part
    /// of its deployment's LEGAL is the same along a row of spots (a row
    /// it turns down is left at once); the parts after it, which measure
    /// from the centre line, to the friends placed and to friendly Field
    /// Guns, are not.
    #[test]
    fn a_deployment_part_that_reads_only_the_edge_is_the_same_along_a_row() {
        let rs = ruleset("rules/never_mind_the_matchlocks.muster");
        let ch = choice(&rs, "deploy");
        let mut next = ch.slots;
        let mut parts = Vec::new();
        conjuncts(&rs, &ch.legal, &mut next, &mut parts, 0);
        let row: Vec<bool> = parts.iter().map(|p| same_along_a_row(&rs, p, 0)).collect();
        assert_eq!(row, [true, false, false, false], "{parts:?}");
    }

    /// A `manoeuvre` condition that reads only the unit, the manoeuvre and
    /// what does not change in a game (types, qualities) is answered once
    /// per unit and manoeuvre: TVBD's and Matchlocks'; not Thistle's (a
    /// limbered gun, a group's size), nor one that also reads a unit's
    /// state or the deciding side.
    #[test]
    fn a_manoeuvre_condition_of_types_alone_holds_for_the_game() {
        use crate::compile::ir::{Bin, Ex, Ruleset};
        let fixed = |rs: &Ruleset, name: &str| {
            let d = rs
                .decisions
                .iter()
                .position(|d| d.name == name)
                .expect(name);
            super::BattleCode::new(rs, 0, false).fixed_manoeuvres[d]
        };
        let tvbd = ruleset("rules/tillys_very_bad_day.muster");
        assert!(fixed(&tvbd, "move"));
        let matchlocks = ruleset("rules/never_mind_the_matchlocks.muster");
        for name in ["moves", "leader_move", "pursuits", "leader_go"] {
            assert!(fixed(&matchlocks, name), "{name}");
        }
        assert!(!fixed(
            &ruleset("rules/thistle_lily_and_rose.muster"),
            "move"
        ));

        let d = tvbd
            .decisions
            .iter()
            .position(|d| d.name == "move")
            .expect("move");
        let ch = tvbd.decisions[d].choice.as_ref().expect("a choice");
        let u = Box::new(Ex::Local(ch.vars[0]));
        let routed = tvbd
            .states
            .iter()
            .position(|s| s.name == "routed")
            .expect("routed");
        let also = |part: Ex| {
            let mut r = tvbd.clone();
            let cond = &mut r.decisions[d].choice.as_mut().expect("a choice").manoeuvre;
            let (_, ok) = cond.as_mut().expect("a manoeuvre clause");
            *ok = Ex::Bin(Bin::And, Box::new(ok.clone()), Box::new(part));
            r
        };
        let state = Ex::Not(Box::new(Ex::State(u.clone(), routed as u16)));
        assert!(!fixed(&also(state), "move"));
        let side = Ex::Bin(Bin::Eq, Box::new(Ex::SideOf(u)), Box::new(Ex::Local(0)));
        assert!(!fixed(&also(side), "move"));
    }
}
