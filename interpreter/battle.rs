//! Battles: the compiled phase graph played on a field, turn by turn, with
//! every choice a player makes answered by a policy and every roll drawn
//! from one seeded generator. Nothing here knows a particular ruleset: the
//! rules say what is legal (a decision's `where` and clauses), the policy
//! what is preferred, and the engine only moves bases and keeps the log.

use crate::battlefield::{self, Base, Pt};
use crate::closures::{Compiled, Lower};
use crate::diagnostic::Diag;
use crate::eval::{Change, Ctx, Eval, EvalError, NoDice};
use crate::field::{to_len, Feature, Field};
use crate::ir::{Bin, ChoiceDef, ChoiceKind, Ex, Id, Ruleset, Ty};
use crate::phase_graph::{Repeat, StepAction};
use crate::rng::Rng;
use crate::scenario::Scenario;
use crate::value::Value;
use crate::world::World;
use serde::Serialize;
use std::sync::Arc;

mod decks;
mod groups;
mod openings;

pub use openings::Openings;

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
    /// A `draw` found the deck's pile empty, and did nothing.
    Empty {
        deck: String,
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

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Turn { turn } => write!(f, "\n=== Turn {turn} ==="),
            Event::Step { phase, step } => match phase {
                Some(p) => write!(f, "-- {p} / {step}"),
                None => write!(f, "-- {step}"),
            },
            Event::Procedure {
                name,
                args,
                rolls,
                modifiers,
                outcomes,
                log,
                sides,
            } => {
                write!(f, "   {name}({})", args.join(", "))?;
                if !modifiers.is_empty() {
                    write!(f, " [{}]", modifiers.join("; "))?;
                }
                if !rolls.is_empty() {
                    let r: Vec<String> = rolls.iter().map(|x| x.to_string()).collect();
                    write!(f, " rolls [{}]", r.join(" "))?;
                }
                let shown: Vec<String> = outcomes
                    .iter()
                    .filter(|(_, v)| v != "false" && v != "0" && v != "none")
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect();
                if !shown.is_empty() {
                    write!(f, ": {}", shown.join(", "))?;
                }
                for l in log {
                    write!(f, "\n      > {l}")?;
                }
                for c in sides {
                    write!(f, "\n      {}: {} {} -> {}", c.side, c.state, c.from, c.to)?;
                }
                Ok(())
            }
            Event::Hook { name, rolls, log } => {
                write!(f, "   hook {name}")?;
                if !rolls.is_empty() {
                    let r: Vec<String> = rolls.iter().map(|x| x.to_string()).collect();
                    write!(f, " rolls [{}]", r.join(" "))?;
                }
                for l in log {
                    write!(f, "\n      > {l}")?;
                }
                Ok(())
            }
            Event::Move {
                unit,
                how,
                from,
                to,
                with,
            } => {
                write!(f, "   {unit} {how}")?;
                if !with.is_empty() {
                    let names: Vec<&str> = with.iter().map(|m| m.unit.as_str()).collect();
                    write!(f, " with {}", names.join(", "))?;
                }
                write!(
                    f,
                    ": ({:.1}, {:.1}) facing {:.0} -> ({:.1}, {:.1}) facing {:.0}",
                    from[0], from[1], from[2], to[0], to[1], to[2]
                )
            }
            Event::Stays { unit, why } => write!(f, "   {unit} stays: {why}"),
            Event::Leaves { unit } => write!(f, "   {unit} leaves the table"),
            Event::Arrives { unit, at } => write!(
                f,
                "   {unit} arrives at ({:.1}, {:.1}) facing {:.0}",
                at[0], at[1], at[2]
            ),
            Event::Placed { unit, at } => write!(
                f,
                "   {unit} deploys at ({:.1}, {:.1}) facing {:.0}",
                at[0], at[1], at[2]
            ),
            Event::Sides { army, side } => write!(f, "   {army} is the {side}"),
            Event::Shuffle { deck, cards } => write!(
                f,
                "   the {deck} deck is shuffled: {cards} card{}",
                if *cards == 1 { "" } else { "s" }
            ),
            Event::Card { deck, card, on } => match on {
                Some(on) => write!(f, "== {deck}: {card} ({on})"),
                None => write!(f, "== {deck}: {card}"),
            },
            Event::Unturned { deck, cards } => {
                write!(f, "   {deck}: left unturned: {}", cards.join(", "))
            }
            Event::Empty { deck } => write!(f, "   the {deck} deck is empty"),
            Event::End { turns, result } => {
                write!(f, "\n=== End after {turns} turns: {result} ===")
            }
        }
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

/// A picture of the table at the end of a turn.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub turn: u32,
    pub bases: Vec<Base>,
    pub on_table: Vec<bool>,
    pub resolve: Vec<Option<i64>>,
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
    pub turn_limit: Option<u32>,
    /// Remember define values between changes of the world (on by
    /// default; a test plays with it off to show it changes nothing).
    pub remember: bool,
    /// Per unit: left by the scenario for the ruleset's deployment to place.
    pub unplaced: Vec<bool>,
    off_table: Option<Id>,
    manoeuvres: Manoeuvres,
    /// What the games evaluate over and over, compiled once.
    code: Arc<BattleCode>,
    /// The book of openings the games of [`Prepared::play`] share (None:
    /// each game decides everything itself); see [`openings`].
    pub openings: Option<Arc<Openings>>,
}

/// The expressions a battle evaluates over and over, compiled to closures
/// (see [`crate::closures`]): every expression of every decision's body,
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
    /// Per `move` decision: whether its `manoeuvre` condition reads only
    /// the unit and the manoeuvre, and nothing of the world that changes
    /// (TVBD's `may_manoeuvre(u, m)`, by type and quality): its answers
    /// then hold for the whole game.
    fixed_manoeuvres: Vec<bool>,
}

impl BattleCode {
    fn new(rs: &Ruleset, units: usize, compile: bool) -> BattleCode {
        let mut lower = Lower::new(rs);
        let mut compiled = Compiled::default();
        let mut widths = Vec::new();
        let mut splits = Vec::new();
        let mut controls = Vec::new();
        let mut fixed_manoeuvres = Vec::new();
        for (d, dec) in rs.decisions.iter().enumerate() {
            let mut width = frame_slots(rs, d as Id);
            let Some(ch) = &dec.choice else {
                widths.push(width);
                splits.push(None);
                controls.push(None);
                fixed_manoeuvres.push(false);
                continue;
            };
            fixed_manoeuvres.push(ch.manoeuvre.as_ref().is_some_and(|(m, ok)| {
                crate::eval::reads_only_fixed(rs, ok)
                    && (0..width as u16).all(|s| s == ch.vars[0] || s == *m || !reads_local(ok, s))
            }));
            controls.push(
                ch.control
                    .as_ref()
                    .and_then(|(e, cond)| bound_test(rs, cond, ch.vars[0], *e)),
            );
            let split = (ch.kind == ChoiceKind::Pick).then(|| Split::of(rs, ch, width));
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
        ]
        .into_iter()
        .flatten(),
    );
    out.extend(
        [&ch.manoeuvre, &ch.control, &ch.through, &ch.together]
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

fn fault_of(e: EvalError) -> Diag {
    match e {
        EvalError::Fault(d) => *d,
        EvalError::NotStatic => Diag::new("muster::runtime", "a value could not be computed"),
    }
}

fn needs(what: &str, help: &str) -> Diag {
    Diag::new(
        "muster::battle",
        format!("this ruleset cannot play battles: {what}"),
    )
    .help(help.to_string())
}

impl<'r> Prepared<'r> {
    /// Set up a scenario for a ruleset: units, sides, the field.
    pub fn new(rs: &'r Ruleset, sc: &Scenario) -> Result<Self, Vec<Diag>> {
        if rs.graph.is_none() {
            return Err(vec![needs(
                "it has no sequence of play",
                "write a `sequence { ... }`",
            )]);
        }
        let zone_syms = Field::zone_symbols(rs).ok_or_else(|| {
            vec![needs(
                "it has no `enum zone`",
                "add `import core` near the top of the ruleset",
            )]
        })?;
        let Some(m) = enum_syms(rs, "manoeuvre") else {
            return Err(vec![needs(
                "it has no `enum manoeuvre`",
                "add `import battle` near the top of the ruleset",
            )]);
        };
        let sym = |n: &str| m.iter().find(|x| x.0 == n).map_or(u32::MAX, |x| x.1);
        let manoeuvres = Manoeuvres {
            straight: sym("straight"),
            wheel: sym("wheel"),
            about_face: sym("about_face"),
            oblique: sym("oblique"),
            turn: sym("quarter_turn"),
            sideways: sym("sideways"),
            backwards: sym("backwards"),
            pivot: sym("pivot"),
            free: sym("free"),
        };
        if sc.armies.len() != 2 || rs.sides.len() != 2 {
            return Err(vec![needs(
                "a battle is fought by two armies on the ruleset's two sides",
                "declare `sides a, b` and give the scenario two armies",
            )]);
        }
        let mut world = World::new(rs);
        for (o, on) in &sc.options {
            world.options[*o as usize] = *on;
        }
        let mut army_of = Vec::new();
        let mut command_of = Vec::new();
        for (a, c, u) in sc.units() {
            world.add_unit(rs, &u.name, u.ty, u.quality, Some(a as u16));
            army_of.push(a);
            command_of.push(c);
        }
        world.init_state(rs).map_err(|d| vec![d])?;
        // Base sizes come from the ruleset.
        let size = |name: &str| {
            rs.tables
                .iter()
                .chain(rs.defines.iter())
                .find(|f| f.name == name)
        };
        let (Some(bw), Some(bd)) = (size("base_width"), size("base_depth")) else {
            return Err(vec![needs(
                "it does not say how big a unit's base is",
                "define `table base_width(u: unit) -> int` and `table base_depth(u: unit) -> int` (or defines), in the ruleset's measure",
            )]);
        };
        let ev = Eval::new(rs);
        let mut sizes = Vec::new();
        for u in 0..world.units.len() {
            let mut frame = vec![Value::Unit(u as u16); bw.slots.max(bd.slots).max(1) as usize];
            let w = ev
                .eval(Ctx::new(&world), &bw.body, &mut frame, &mut NoDice)
                .map_err(|e| vec![fault_of(e)])?;
            frame.fill(Value::Unit(u as u16));
            let d = ev
                .eval(Ctx::new(&world), &bd.body, &mut frame, &mut NoDice)
                .map_err(|e| vec![fault_of(e)])?;
            let (Some(w), Some(d)) = (to_len(w), to_len(d)) else {
                return Err(vec![needs(
                    "a base size is not a number",
                    "base_width and base_depth must give numbers for every unit type",
                )]);
            };
            sizes.push((w, d));
        }
        let mut placed = Vec::new();
        for (i, (_, _, u)) in sc.units().enumerate() {
            placed.push(u.at.map(|p| Base::new(p, u.facing, sizes[i].0, sizes[i].1)));
        }
        // Reserves start off the table and are not deployed with the rest.
        let reserve: Vec<bool> = sc.units().map(|(_, _, u)| u.reserve).collect();
        let unplaced: Vec<bool> = placed
            .iter()
            .zip(&reserve)
            .map(|(p, r)| p.is_none() && !r)
            .collect();
        if let Some((_, (_, _, u))) = sc
            .units()
            .enumerate()
            .find(|(i, _)| unplaced[*i] || reserve[*i])
        {
            let deploys = rs.decisions.iter().any(|d| {
                d.choice
                    .as_ref()
                    .is_some_and(|c| c.kind == ChoiceKind::Place)
            });
            if !deploys {
                return Err(vec![if u.reserve {
                    Diag::new(
                        "muster::scenario",
                        format!("reserve `{}` could never arrive", u.name),
                    )
                    .at(u.span, "held in reserve")
                    .help("this ruleset has no `place u where ...` decision to bring a reserve onto the table: leave out `reserve`, and give the unit an `at`")
                } else {
                    Diag::new(
                        "muster::scenario",
                        format!("unit `{}` has no place on the table", u.name),
                    )
                    .at(u.span, "no `at`")
                    .help("this ruleset has no deployment decision (`place u where ...`): give every unit `at = [x, y]`")
                }]);
            }
        }
        let problems = sc.check_placement(&placed);
        if !problems.is_empty() {
            return Err(problems);
        }
        let terrain: Vec<Feature> = sc
            .terrain
            .iter()
            .map(|t| Feature {
                name: t.name.clone(),
                kind: match t.kind {
                    Value::Sym(s) => s,
                    _ => u32::MAX,
                },
                kind_name: t.kind_name.clone(),
                shape: t.shape.clone(),
            })
            .collect();
        world.field = Some(Box::new(Field::new(
            sc.width,
            sc.depth,
            Arc::new(terrain),
            placed
                .iter()
                .zip(sc.units())
                .enumerate()
                .map(|(i, (b, (_, _, u)))| {
                    // Waiting to be deployed: off the table until placed.
                    b.unwrap_or_else(|| {
                        Base::new(
                            Pt {
                                x: -1000.0,
                                y: -1000.0,
                            },
                            u.facing,
                            sizes[i].0,
                            sizes[i].1,
                        )
                    })
                })
                .collect(),
            army_of
                .iter()
                .map(|a| if *a == 0 { 0.0 } else { sc.depth })
                .collect(),
            army_of
                .iter()
                .zip(&command_of)
                .map(|(a, c)| (*a * 1000 + *c) as u16)
                .collect(),
            zone_syms,
        )));
        if let Some(f) = world.field.as_mut() {
            for (i, u) in unplaced.iter().enumerate() {
                if *u || reserve[i] {
                    f.set_on_table(i, false);
                }
                f.reserve[i] = reserve[i];
            }
        }
        // A reserve is off the table as far as the rules are concerned too.
        if let Some(s) = rs.state("off_table") {
            let ns = rs.states.len();
            for (i, r) in reserve.iter().enumerate() {
                if *r {
                    world.state[i * ns + s as usize] = Value::Bool(true);
                }
            }
        }
        // Deployment rules the ruleset states.
        if let Some(f) = rs.defines.iter().find(|f| f.name == "legal_deployment") {
            let mut diags = Vec::new();
            for (i, (_, _, u)) in sc.units().enumerate() {
                if unplaced[i] || reserve[i] {
                    continue;
                }
                let mut frame = vec![Value::None; f.slots.max(1) as usize];
                frame[0] = Value::Unit(i as u16);
                let ok = ev
                    .eval(Ctx::new(&world), &f.body, &mut frame, &mut NoDice)
                    .map_err(|e| vec![fault_of(e)])?;
                if !ok.as_bool() {
                    diags.push(
                        Diag::new(
                            "muster::scenario",
                            format!("unit `{}` is deployed where the rules do not allow", u.name),
                        )
                        .at(u.span, "breaks the ruleset's `legal_deployment`")
                        .note(f.span, "the ruleset's deployment rule")
                        .help("move the unit into its army's deployment zone (pike+shot: the centre zone)"),
                    );
                }
            }
            if !diags.is_empty() {
                return Err(diags);
            }
        }
        let mut policy = Vec::new();
        for a in &sc.armies {
            policy.push(match &a.policy {
                Some((name, span)) => match rs.policies.iter().position(|p| &p.name == name) {
                    Some(i) => Some(i),
                    None => {
                        let sugg = crate::compile::suggest(
                            name,
                            rs.policies.iter().map(|p| p.name.as_str()),
                        );
                        return Err(vec![Diag::new(
                            "muster::scenario",
                            format!("unknown policy `{name}`"),
                        )
                        .at(*span, "not a policy of this ruleset")
                        .help(match sugg {
                            Some(s) => format!("did you mean \"{s}\"?"),
                            None => format!(
                                "the policies are: {}",
                                rs.policies
                                    .iter()
                                    .map(|p| p.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        })]);
                    }
                },
                None => rs.policies.iter().position(|p| p.name == "default"),
            });
        }
        let code = Arc::new(BattleCode::new(rs, world.units.len(), true));
        Ok(Prepared {
            rs,
            world,
            army_of,
            command_of,
            army_names: sc.armies.iter().map(|a| a.name.clone()).collect(),
            policy,
            turn_limit: sc.turn_limit,
            remember: true,
            unplaced,
            off_table: rs.state("off_table"),
            manoeuvres,
            code,
            openings: Some(Default::default()),
        })
    }

    /// Play with the expression tree walked, not compiled (a test plays
    /// both ways to show they are the same game).
    pub fn walking_the_tree(mut self) -> Self {
        self.code = Arc::new(BattleCode::new(self.rs, self.world.units.len(), false));
        // A book of its own: its games take nothing the compiled ones decided.
        self.openings = self.openings.as_ref().map(|_| Default::default());
        self
    }

    /// Play one game with a seed; with `log`, keep the narrative and a
    /// picture of the table after every turn. Without a log, the game
    /// takes the openings other games of this preparation left in its
    /// book, and leaves one (see [`openings`]): the same game, sooner.
    pub fn play(&self, seed: u64, log: bool) -> Result<Game<'r>, Diag> {
        let mut g = self.start(seed, log);
        g.openings = self.openings.clone();
        g.run()?;
        Ok(g)
    }

    /// A game set up and not yet begun (tests play single steps of it).
    pub fn start(&self, seed: u64, log: bool) -> Game<'r> {
        let mut g = self.fresh(seed, log);
        if log {
            g.ev.trace = Some(Default::default());
        }
        g
    }

    fn fresh(&self, seed: u64, log: bool) -> Game<'r> {
        Game {
            rs: self.rs,
            ev: if self.remember {
                Eval::remembering(self.rs, self.world.units.len(), self.world.side_names.len())
            } else {
                Eval::new(self.rs)
            }
            .with_code(self.code.compiled.clone()),
            world: self.world.clone(),
            rng: Rng::new(seed),
            log: Vec::new(),
            logging: log,
            turn: 0,
            army_of: self.army_of.clone(),
            side_of_army: vec![0, 1],
            policy: self.policy.clone(),
            turn_limit: self.turn_limit,
            off_table: self.off_table,
            m: self.manoeuvres,
            snapshots: Vec::new(),
            army_names: self.army_names.clone(),
            unplaced: self.unplaced.clone(),
            result: None,
            code: self.code.clone(),
            piles: vec![Default::default(); self.rs.decks.len()],
            drawing: 0,
            taping: Taping::Off,
            openings: None,
            in_opening: true,
            manoeuvres_known: Default::default(),
        }
    }

    /// Play one game and tape the rules' answers.
    pub fn play_taped(&self, seed: u64, log: bool) -> Result<(Game<'r>, Tape), Diag> {
        let mut g = self.start(seed, log);
        g.taping = Taping::Record(Default::default());
        g.run()?;
        let tape = match std::mem::replace(&mut g.taping, Taping::Off) {
            Taping::Record(t) => t.into_inner(),
            _ => unreachable!("taped from the start"),
        };
        Ok((g, tape))
    }

    /// Play one game again from its tape, with the seed it was taped with;
    /// a game that asks more than the tape holds, or something it answered
    /// with an error, fails.
    pub fn replay(&self, seed: u64, tape: Tape, log: bool) -> Result<Game<'r>, Diag> {
        let mut g = self.start(seed, log);
        g.taping = Taping::Play(tape, Default::default());
        g.run()?;
        Ok(g)
    }
}

/// A game being played (and, once over, its record).
pub struct Game<'r> {
    rs: &'r Ruleset,
    ev: Eval<'r>,
    pub world: World,
    rng: Rng,
    pub log: Vec<Event>,
    logging: bool,
    pub turn: u32,
    army_of: Vec<usize>,
    side_of_army: Vec<u16>,
    policy: Vec<Option<usize>>,
    turn_limit: Option<u32>,
    off_table: Option<Id>,
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
    /// manoeuvre, as they are found (forgotten if the sides change:
    /// [`Game::sides_changed`]).
    manoeuvres_known: rustc_hash::FxHashMap<(Id, u16, u32), bool>,
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
        if self.logging {
            let ev = e(self);
            self.log.push(ev);
        }
    }

    fn eval(&self, e: &Ex, frame: &mut [Value]) -> Result<Value, Diag> {
        self.eval_raw(e, frame).map_err(fault_of)
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

    /// The summary of the finished game.
    pub fn summary(&self) -> GameSummary {
        let types = self.rs.unit_types.len();
        let mut lost = vec![vec![0u32; types]; 2];
        for (u, a) in self.army_of.iter().enumerate() {
            if !self.field().on_table[u] && !self.field().reserve[u] {
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
    pub fn run(&mut self) -> Result<(), Diag> {
        let graph = self.rs.graph.as_ref().expect("checked in Prepared::new");
        let mut node = graph.start;
        let limit = self.turn_limit.unwrap_or(DEFAULT_TURN_LIMIT);
        for _ in 0..MAX_STEPS {
            if node == graph.end {
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
            self.step_hooks(&n.name, false, n.span)?;
            for a in &n.actions {
                self.action(a, &n.name, n.span)?;
            }
            self.step_hooks(&n.name, true, n.span)?;
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
        span: crate::syntax::Span,
    ) -> Result<(), Diag> {
        use crate::hooks::{self, Point};
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
            let mut dice = crate::procedures::Recorder {
                inner: &mut self.rng,
                rolls: Vec::new(),
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
        let Some(s) = self.off_table else { return };
        let ns = self.rs.states.len();
        for u in 0..self.world.units.len() {
            if self.field().on_table[u] && self.world.state[u * ns + s as usize].as_bool() {
                self.field_mut().set_on_table(u, false);
                let unit = self.world.units[u].name.clone();
                self.note(|_| Event::Leaves { unit });
            }
        }
    }

    /// Play one action of a step; a problem without a place of its own is
    /// reported at the step, with the turn it happened in (and, for a
    /// problem met while resolving a card, the step's name).
    fn action(
        &mut self,
        a: &StepAction,
        step: &str,
        span: crate::syntax::Span,
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
        let Some(mut frame) = self.repetition(each, i, slots, base)? else {
            return Ok(None);
        };
        let mut vals = Vec::with_capacity(args.len());
        for e in args {
            vals.push(self.eval(e, &mut frame)?);
        }
        Ok(Some(vals))
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
            } => {
                for i in 0..self.repetitions(each.as_ref()) {
                    let Some(vals) = self.arguments(each.as_ref(), i, *slots, base, args)? else {
                        continue;
                    };
                    if *procedure {
                        self.perform(*target, &vals)
                            .map_err(|d| self.broken_by_the_table(d, &vals))?;
                    } else {
                        self.decide(*target, &vals)?;
                    }
                    self.sync_off_table();
                }
                Ok(())
            }
            StepAction::Draw {
                deck,
                args,
                until,
                each,
                slots,
            } => {
                for i in 0..self.repetitions(each.as_ref()) {
                    let Some(vals) = self.arguments(each.as_ref(), i, *slots, base, args)? else {
                        continue;
                    };
                    self.draw(*deck, &vals, *until)?;
                }
                Ok(())
            }
            StepAction::Shuffle { deck } => self.shuffle(*deck),
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
    /// side or unit), or `None` when its `where` does not hold now.
    fn repetition(
        &self,
        each: Option<&Repeat>,
        i: usize,
        slots: u16,
        base: &[Value],
    ) -> Result<Option<Vec<Value>>, Diag> {
        let mut frame = vec![Value::None; (slots as usize).max(1).max(base.len())];
        frame[..base.len()].copy_from_slice(base);
        if let Some(r) = each {
            frame[r.slot as usize] = Self::repeated(r, i);
            if let Some(c) = &r.cond {
                if !self.eval(c, &mut frame)?.as_bool() {
                    return Ok(None);
                }
            }
        }
        Ok(Some(frame))
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

    fn perform(&mut self, proc: Id, args: &[Value]) -> Result<crate::procedures::Performed, Diag> {
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
        let p = crate::procedures::perform(&self.ev, &mut self.world, proc, args, &mut self.rng)?;
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
                    .map(|(o, v)| (o.name.clone(), self.show(*v)))
                    .collect(),
                log: p.log.clone(),
                sides,
            };
            self.log.push(ev);
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

    // ------------------------------------------------------------ decisions

    fn policy_of(&self, args: &[Value], params: &[(String, Ty)]) -> Option<usize> {
        let side = params
            .iter()
            .zip(args)
            .find_map(|((_, t), v)| match (t, v) {
                (Ty::Side, Value::Side(s)) => Some(*s),
                _ => None,
            })?;
        let army = self.side_of_army.iter().position(|s| *s == side)?;
        self.policy[army]
    }

    /// Make decision `d` now, whatever the book of openings holds.
    fn decide_afresh(&mut self, d: Id, args: &[Value]) -> Result<(), Diag> {
        let dec = &self.rs.decisions[d as usize];
        let Some(ch) = &dec.choice else {
            // A decision without a body (deployment from the scenario).
            return Ok(());
        };
        // The policy is the deciding side's (a side parameter), else the
        // army's of the unit being decided for (the option's first name).
        let has_side = dec.params.iter().any(|(_, t)| *t == Ty::Side);
        let prefer = Prefer {
            d,
            side_policy: has_side.then(|| self.policy_of(args, &dec.params)),
            var: ch.vars[0] as usize,
        };
        let slots = self.code.widths[d as usize].max(args.len() + 4);
        let mut frame = vec![Value::None; slots];
        frame[..args.len()].copy_from_slice(args);
        match ch.kind {
            ChoiceKind::Pick => self.pick(ch, prefer, frame),
            ChoiceKind::Move => self.move_units(ch, prefer, frame),
            ChoiceKind::Charge => self.charges(ch, frame),
            ChoiceKind::Retire => self.retire(ch, prefer, frame),
            ChoiceKind::Place => self.place(ch, prefer, frame),
        }
    }

    fn units_on_table(&self) -> Vec<u16> {
        (0..self.world.units.len() as u16)
            .filter(|u| self.field().on_table[*u as usize])
            .collect()
    }

    #[inline(never)]
    fn score(&self, prefer: Prefer, frame: &mut [Value]) -> Result<Value, Diag> {
        let policy = match prefer.side_policy {
            Some(p) => p,
            None => match frame[prefer.var] {
                Value::Unit(u) => self.policy[self.army_of[u as usize]],
                _ => None,
            },
        };
        match policy.and_then(|p| self.rs.policies[p].prefer[prefer.d as usize].as_ref()) {
            Some((e, _)) => self.eval(e, frame),
            None => Ok(Value::Int(0)),
        }
    }

    /// `pick`: take legal options one at a time (each at most once), the
    /// ones the rules say must be taken first, then the policy's favourite
    /// while it scores 0 or more.
    #[inline(never)]
    fn pick(&mut self, ch: &ChoiceDef, prefer: Prefer, mut frame: Vec<Value>) -> Result<(), Diag> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let n = ch.vars.len();
        let mut taken: Vec<Vec<u16>> = Vec::new();
        // The options found legal so far; after each one taken only these
        // are checked again, and the whole table once more when they run
        // out (an action can make a new option legal: a rout opens a line
        // of fire).
        let mut known: Vec<Vec<u16>> = Vec::new();
        let mut failed: Vec<u16> = Vec::new();
        let mut rescanned = false;
        let cap = self.world.units.len().pow(n as u32).min(100_000) + 1;
        for _ in 0..cap {
            let mut best: Option<(bool, Value, Value, Vec<u16>)> = None;
            let mut still = Vec::with_capacity(known.len());
            for opt in std::mem::take(&mut known) {
                for (k, s) in ch.vars.iter().enumerate() {
                    frame[*s as usize] = Value::Unit(opt[k]);
                }
                if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                    continue;
                }
                let must = match &ch.must {
                    Some(m) => self.eval(m, &mut frame)?.as_bool(),
                    None => false,
                };
                let order = match &ch.order {
                    Some(o) => self.eval(o, &mut frame)?,
                    None => Value::Int(0),
                };
                let score = self.score(prefer, &mut frame)?;
                still.push(opt.clone());
                if !(must || score.num_cmp(Value::Int(0)) != Some(Less)) {
                    continue;
                }
                let better = match &best {
                    None => true,
                    Some((bm, bo, bs, _)) => {
                        (must && !bm)
                            || (must == *bm
                                && (order.num_cmp(*bo) == Some(Less)
                                    || (order.num_cmp(*bo) == Some(Equal)
                                        && score.num_cmp(*bs) == Some(Greater))))
                    }
                };
                if better {
                    best = Some((must, order, score, opt));
                }
            }
            known = still;
            let Some((_, _, _, opt)) = best else {
                if rescanned {
                    break;
                }
                known = self.scan(prefer.d, ch, &mut frame, &taken)?;
                known.retain(|o| !failed.contains(&o[0]));
                rescanned = true;
                continue;
            };
            rescanned = false;
            known.retain(|o| *o != opt);
            for (k, s) in ch.vars.iter().enumerate() {
                frame[*s as usize] = Value::Unit(opt[k]);
            }
            taken.push(opt.clone());
            if !self.passes_check(ch, opt[0], &mut frame)? {
                // A check is the unit's: failed, it takes no other option.
                known.retain(|o| o[0] != opt[0]);
                failed.push(opt[0]);
                continue;
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// Every legal option of a `pick` not yet taken, in the units' order.
    /// Units off the table are among the options (a routed enemy is what
    /// heroics reward); the rules' `where` says which may take part.
    ///
    /// The parts of LEGAL that name only the option's first unit (`s.side
    /// == side`, `not s.shot_this_turn`, opened up from the defines LEGAL
    /// calls) are checked once per first unit, not once per option: the
    /// same answer, far fewer evaluations. Should such a part fail to
    /// evaluate, the unit's options are judged whole.
    #[inline(never)]
    fn scan(
        &mut self,
        d: Id,
        ch: &ChoiceDef,
        frame: &mut [Value],
        taken: &[Vec<u16>],
    ) -> Result<Vec<Vec<u16>>, Diag> {
        let units: Vec<u16> = (0..self.world.units.len() as u16).collect();
        let n = ch.vars.len();
        let mut out = Vec::new();
        if units.is_empty() || n == 0 {
            return Ok(out);
        }
        // The split is made (and compiled) once, with the scenario; its
        // parts' own slots start past the decision's names and arguments.
        let split = match &self.code.splits[d as usize] {
            Some(s) if s.frame <= frame.len() => s.clone(),
            _ => Arc::new(Split::of(self.rs, ch, frame.len())),
        };
        let Split {
            first_only,
            second_only,
            both,
            width,
            sides,
            contact,
            bound,
            ..
        } = &*split;
        let bound_swapped = bound.as_ref().is_some_and(|bd| bd.swapped);
        let mut wide = frame.to_vec();
        wide.resize(*width, Value::None);
        // Per unit: does it pass the parts naming only the second name?
        // (None: a part failed to evaluate; judge its options whole.)
        let mut second_ok: Vec<Option<bool>> = Vec::new();
        if n == 2 {
            for &u in &units {
                wide[ch.vars[1] as usize] = Value::Unit(u);
                second_ok.push(self.all_hold(second_only, &mut wide));
            }
        }
        for &u0 in &units {
            wide[ch.vars[0] as usize] = Value::Unit(u0);
            match self.all_hold(first_only, &mut wide) {
                Some(false) => continue,
                Some(true) => {}
                None => {
                    // Judge this unit's options whole.
                    frame[ch.vars[0] as usize] = Value::Unit(u0);
                    self.scan_whole(ch, frame, taken, &units, u0, &mut out)?;
                    continue;
                }
            }
            frame[ch.vars[0] as usize] = Value::Unit(u0);
            let reach = match bound {
                Some(bd) if n == 2 => self.reach(bd, u0),
                _ => None,
            };
            if n == 1 {
                if !taken.iter().any(|t| t[..] == [u0])
                    && self.all_hold(both, &mut wide) == Some(true)
                {
                    out.push(vec![u0]);
                }
                continue;
            }
            if n == 2 {
                for (j, &u1) in units.iter().enumerate() {
                    if second_ok[j] == Some(false) || taken.iter().any(|t| t[..] == [u0, u1]) {
                        continue;
                    }
                    wide[ch.vars[1] as usize] = Value::Unit(u1);
                    // A first part that compares the two sides is settled
                    // here (it cannot fail): the rest is asked only of the
                    // pairs it lets through.
                    let mut rest = match (sides, second_ok[j]) {
                        (Some(same), Some(true)) => {
                            let w = &self.world.units;
                            if (w[u0 as usize].side == w[u1 as usize].side) != *same {
                                continue;
                            }
                            &both[1..]
                        }
                        _ => &both[..],
                    };
                    // A next part that only bases within a distance can
                    // satisfy is settled for the pairs plainly further
                    // apart: false, as the part itself would find.
                    // (With the second unit's parts passed, the sides
                    // test, if any, is settled above: `rest` starts at it.)
                    if let (Some(r), Some(true)) = (&reach, second_ok[j]) {
                        let (a, b) = if bound_swapped { (u1, u0) } else { (u0, u1) };
                        if r.turns_away(self.field(), a as usize, b as usize) {
                            continue;
                        }
                    }
                    // So is a next part asking whether the two touch: the
                    // table's own measure, the value the part would have.
                    if let (Some(swapped), Some(true)) = (contact, second_ok[j]) {
                        let (a, b) = if *swapped { (u1, u0) } else { (u0, u1) };
                        let touch = self.field().of_two(
                            crate::ir::Builtin::InContact,
                            a as usize,
                            b as usize,
                        );
                        if touch != Some(Value::Bool(true)) {
                            continue;
                        }
                        rest = &rest[1..];
                    }
                    let ok = match (second_ok[j], self.all_hold(rest, &mut wide)) {
                        (Some(true), Some(b)) => b,
                        _ => {
                            frame[ch.vars[1] as usize] = Value::Unit(u1);
                            self.eval(&ch.legal, frame)?.as_bool()
                        }
                    };
                    if ok {
                        out.push(vec![u0, u1]);
                    }
                }
                continue;
            }
            self.scan_whole(ch, frame, taken, &units, u0, &mut out)?;
        }
        Ok(out)
    }

    /// A decision's `then PROC(args)`: what taking an option does; units
    /// the procedure takes off the table leave it at once.
    fn run_then(&mut self, ch: &ChoiceDef, frame: &mut [Value]) -> Result<(), Diag> {
        if let Some((p, args)) = &ch.then {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(self.eval(a, frame)?);
            }
            self.perform(*p, &vals)?;
            self.sync_off_table();
        }
        Ok(())
    }

    /// What bound `bd` says of the pairs whose first unit is `u0`, or None
    /// when PRE or LIMIT fails to evaluate or LIMIT is not a whole number
    /// (its pairs are then asked the fact itself).
    fn reach(&self, bd: &Bound, u0: u16) -> Option<Reach> {
        let mut frame = vec![Value::None; bd.slots];
        frame[bd.first] = Value::Unit(u0);
        match self.all_hold(&bd.pre, &mut frame)? {
            false => Some(Reach::None),
            true => match self.eval_raw(&bd.limit, &mut frame) {
                Ok(Value::Int(n)) => Some(Reach::within(n)),
                _ => None,
            },
        }
    }

    /// What the bound of decision `d`'s `control` condition, if it has one,
    /// says of mover `u` ([`Game::reach`]).
    pub(super) fn control_reach(&self, d: Id, u: u16) -> Option<Reach> {
        let bd = self.code.controls.get(d as usize)?.as_ref()?;
        self.reach(bd, u)
    }

    /// Does enemy `e` hold unit `u` in its zone of control (`cond`, the
    /// `control` condition, with `e` in `e_slot` and `u` in the frame)?
    /// Settled without asking when `reach` (the condition's bound for `u`)
    /// says so.
    #[inline]
    pub(super) fn controls(
        &mut self,
        cond: &Ex,
        e_slot: u16,
        reach: Option<&Reach>,
        e: u16,
        u: u16,
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        if let Some(r) = reach {
            if r.turns_away(self.field(), u as usize, e as usize) {
                return Ok(false);
            }
        }
        frame[e_slot as usize] = Value::Unit(e);
        Ok(self.eval(cond, frame)?.as_bool())
    }

    /// Do all the parts hold? (None: one failed to evaluate.)
    fn all_hold(&self, parts: &[Ex], frame: &mut [Value]) -> Option<bool> {
        for p in parts {
            match self.eval_raw(p, frame) {
                Ok(v) if !v.as_bool() => return Some(false),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        Some(true)
    }

    /// The options of a `pick` whose first unit is `u0`, each judged by
    /// LEGAL whole.
    fn scan_whole(
        &mut self,
        ch: &ChoiceDef,
        frame: &mut [Value],
        taken: &[Vec<u16>],
        units: &[u16],
        u0: u16,
        out: &mut Vec<Vec<u16>>,
    ) -> Result<(), Diag> {
        let n = ch.vars.len();
        let mut idx = vec![0usize; n - 1];
        'rest: loop {
            let mut opt = Vec::with_capacity(n);
            opt.push(u0);
            opt.extend(idx.iter().map(|i| units[*i]));
            if !taken.contains(&opt) {
                for (k, s) in ch.vars.iter().enumerate() {
                    frame[*s as usize] = Value::Unit(opt[k]);
                }
                if self.eval(&ch.legal, frame)?.as_bool() {
                    out.push(opt);
                }
            }
            let mut k = n - 1;
            loop {
                if k == 0 {
                    break 'rest;
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < units.len() {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok(())
    }

    /// A decision's `check PROC(args) unless COND`: may unit `u` take the
    /// option? (The procedure runs, and its `passed` outcome says.)
    fn passes_check(&mut self, ch: &ChoiceDef, u: u16, frame: &mut [Value]) -> Result<bool, Diag> {
        let Some((p, args, unless)) = &ch.check else {
            return Ok(true);
        };
        if let Some(e) = unless {
            if self.eval(e, frame)?.as_bool() {
                return Ok(true);
            }
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.eval(a, frame)?);
        }
        let done = self.perform(*p, &vals)?;
        let i = self.rs.procedures[*p as usize]
            .outcomes
            .iter()
            .position(|o| o.name == "passed")
            .expect("checked by the compiler");
        if done.outcomes[i].as_bool() {
            return Ok(true);
        }
        let unit = self.world.units[u as usize].name.clone();
        self.note(|_| Event::Stays {
            unit,
            why: "failed its check".into(),
        });
        Ok(false)
    }

    // ------------------------------------------------------------ movement

    fn on_table(&self, b: &Base) -> bool {
        self.field().holds(b)
    }

    /// Is the path (start excluded) clear for unit `u`: on the table, not
    /// through enemies, through friends only where `through` allows, ending
    /// on nobody.
    fn path_clear(
        &self,
        ch: &ChoiceDef,
        u: u16,
        path: &[Base],
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        self.path_clear_near(ch, u, path, frame, &self.code.everyone)
    }

    /// Does a base of unit `u` at `end` overlap one of the units `near`
    /// that are on the table? Then no path there is clear
    /// ([`Game::path_clear_near`] turns down a path that ends on anyone).
    fn ends_on_someone(&self, u: u16, end: &Base, near: &[usize]) -> bool {
        let f = self.field();
        near.iter()
            .any(|&o| o != u as usize && f.on_table[o] && end.overlaps(&f.bases[o]))
    }

    /// [`Game::path_clear`], looking only at the units `near` (in order):
    /// every other unit is too far from the path to matter.
    fn path_clear_near(
        &self,
        ch: &ChoiceDef,
        u: u16,
        path: &[Base],
        frame: &mut [Value],
        near: &[usize],
    ) -> Result<bool, Diag> {
        let f = self.field();
        let end = path.last().expect("a path has an end");
        // Most paths are well inside the table: no base to look at.
        let bounds = battlefield::Bounds::of(path);
        if !bounds.within(f.width, f.depth) && !path.iter().all(|b| self.on_table(b)) {
            return Ok(false);
        }
        // Most bases are far from the whole path: no overlap to look for.
        for &o in near {
            let ob = &f.bases[o];
            if o == u as usize || !f.on_table[o] || bounds.clear_of(ob, 0.0) {
                continue;
            }
            if end.overlaps(ob) {
                return Ok(false);
            }
            if path.iter().skip(1).any(|b| b.overlaps(ob)) {
                let friend = self.world.units[o].side == self.world.units[u as usize].side;
                let allowed = match (&ch.through, friend) {
                    (Some((slot, e)), true) => {
                        frame[*slot as usize] = Value::Unit(o as u16);
                        self.eval(e, frame)?.as_bool()
                    }
                    _ => false,
                };
                if !allowed {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The enemies of unit `u` among `near` that are on the table, in
    /// `near`'s order, each with whether it is certainly further than
    /// `buffer` from where `u` stands ([`Field::apart`]): what
    /// [`Game::buffer_shortfall_near`] looks at. While `u` stands where it
    /// is, a caller may keep them for all its candidate ends: a distance
    /// remembered later only confirms what the bound said.
    fn buffer_enemies<'a>(
        &'a self,
        u: u16,
        buffer: f64,
        near: &'a [usize],
    ) -> impl Iterator<Item = (usize, bool)> + 'a {
        let f = self.field();
        let side = self.world.units[u as usize].side;
        near.iter()
            .filter(move |&&o| f.on_table[o] && self.world.units[o].side != side)
            .map(move |&o| (o, f.apart(u as usize, o, buffer - 1e-9)))
    }

    /// By how much unit `u`, moving from `start` to `end`, breaks the enemy
    /// buffer zone (the end no closer than `buffer` to any enemy, or, for a
    /// unit already closer, no closer than it was), looking only at the
    /// `enemies` ([`Game::buffer_enemies`]: every other enemy is too far
    /// from the start and the end to matter): None when it does not; else
    /// how much nearer than allowed it comes to the first of them it comes
    /// too near. A base moved `x` comes at most `x` nearer to anything, so
    /// an end moved less than that from this one breaks the zone too.
    fn buffer_shortfall_near(
        &self,
        u: u16,
        start: &Base,
        end: &Base,
        buffer: f64,
        enemies: impl IntoIterator<Item = (usize, bool)>,
    ) -> Option<f64> {
        let f = self.field();
        for (o, apart) in enemies {
            let ob = &f.bases[o];
            // No point of a base is further than its radius from its
            // centre: far apart at the end and at the start, no exact
            // distance is needed.
            let far_at_end = end.centre.dist(ob.centre) - end.radius() - ob.radius() >= buffer;
            if far_at_end && apart {
                continue;
            }
            // The start is where the unit stands: its distances are known.
            let before = f.dist(u as usize, o);
            if before >= buffer - 1e-9 && far_at_end {
                continue;
            }
            let before = if start == &f.bases[u as usize] {
                before
            } else {
                start.distance(ob)
            };
            let after = end.distance(ob);
            // No nearer than the buffer, or, already nearer, than before.
            let least = if before >= buffer - 1e-9 {
                buffer - 1e-9
            } else {
                before - 1e-9
            };
            if after < least {
                return Some(least - after);
            }
        }
        None
    }

    /// Candidate moves of one unit with one manoeuvre, before the rules'
    /// checks: (description, where it ends, the way there).
    fn candidates(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        target: Option<Pt>,
    ) -> Vec<(How, Base, Way)> {
        let mm = self.m;
        let mut out = Vec::new();
        let two = |to: Base| (to, Way::Two(to));
        // A handful of moves per manoeuvre: the whole allowance and half of
        // it (the policy picks among them; a finer grid costs time).
        let fractions = [1.0, 0.5];
        if m == mm.straight {
            for fr in fractions {
                let d = allowance * fr;
                out.push((How::Advances(d), b.straight_end(d), Way::Straight(d)));
            }
        } else if m == mm.wheel {
            for w in [-45.0, -22.5, 22.5, 45.0] {
                let cost = b.wheel_cost(w);
                if cost > allowance + 1e-9 {
                    continue;
                }
                let wheeled = b.wheel_end(w);
                for fr in [1.0, 0.5] {
                    let d = (allowance - cost) * fr;
                    let end = if d > 1e-9 {
                        wheeled.straight_end(d)
                    } else {
                        wheeled
                    };
                    out.push((How::WheelsAndAdvances(w, d), end, Way::Wheel(w, d)));
                }
            }
        } else if m == mm.about_face {
            let turned = b.pivoted(180.0);
            let (end, way) = two(turned);
            out.push((How::AboutFaces, end, way));
            for fr in [1.0, 0.5] {
                let d = allowance * fr;
                out.push((
                    How::AboutFacesAndAdvances(d),
                    turned.straight_end(d),
                    Way::AboutFace(d),
                ));
            }
        } else if m == mm.oblique {
            for a in [-45.0, 45.0] {
                let d = allowance;
                out.push((
                    How::Obliquely(a, d),
                    b.oblique_end(a, d),
                    Way::Oblique(a, d),
                ));
            }
        } else if m == mm.turn {
            for a in [-90.0, 90.0] {
                let (end, way) = two(b.pivoted(a));
                out.push((How::Turns(a), end, way));
            }
        } else if m == mm.sideways {
            for s in [-allowance, allowance] {
                let (end, way) = two(b.shifted(s));
                out.push((How::Shifts(s), end, way));
            }
        } else if m == mm.backwards {
            for fr in [1.0, 0.5] {
                let d = allowance * fr;
                out.push((How::MovesBack(d), b.straight_end(-d), Way::Straight(-d)));
            }
        } else if m == mm.pivot {
            if let Some(t) = target {
                let a = battlefield::norm_angle(battlefield::bearing(b.centre, t) - b.facing);
                if a.abs() > 1.0 {
                    let (end, way) = two(b.pivoted(a));
                    out.push((How::Pivots(a), end, way));
                }
            }
        } else if m == mm.free {
            if let Some(t) = target {
                let (dx, dy) = (t.x - b.centre.x, t.y - b.centre.y);
                let len = (dx * dx + dy * dy).sqrt();
                if len > 1e-9 {
                    let go = len.min(allowance);
                    let (end, way) = two(Base::new(
                        Pt {
                            x: b.centre.x + dx / len * go,
                            y: b.centre.y + dy / len * go,
                        },
                        b.facing,
                        b.width,
                        b.depth,
                    ));
                    out.push((How::Rides(go), end, way));
                }
            }
        }
        out
    }

    /// Where a unit heads with a pivot (to face the nearest enemy) or a free
    /// move (just behind the rear edge of the wider friendly base nearest
    /// the enemy). Known limit: this target is the engine's choice, not the
    /// policy's; a policy only accepts or refuses the move. A group's move
    /// passes the other members (`skip`): none of them is the friend.
    fn target_for(&self, u: u16, skip: &[u16], m: u32) -> Option<Pt> {
        // Only a pivot and a free move head for a point.
        if m != self.m.pivot && m != self.m.free {
            return None;
        }
        let f = self.field();
        let me = &f.bases[u as usize];
        let side = self.world.units[u as usize].side;
        if m == self.m.pivot {
            return match f.nearest(&self.world, u as usize, true) {
                Value::Unit(e) => Some(f.bases[e as usize].centre),
                _ => None,
            };
        }
        let enemies: Vec<&Base> = f
            .bases
            .iter()
            .enumerate()
            .filter(|(o, _)| f.on_table[*o] && self.world.units[*o].side != side)
            .map(|(_, b)| b)
            .collect();
        let nearest = |p: Pt| {
            enemies
                .iter()
                .map(|e| e.distance_to_point(p))
                .fold(f64::INFINITY, f64::min)
        };
        // Free move: behind the friend (of the same army, not a commander-sized base) nearest the enemy.
        let mut best: Option<(f64, Pt)> = None;
        for (o, b) in f.bases.iter().enumerate() {
            if o == u as usize
                || skip.contains(&(o as u16))
                || !f.on_table[o]
                || self.world.units[o].side != side
                || b.width <= me.width
            {
                continue;
            }
            let d = nearest(b.centre);
            let spot = b.advanced(-(b.depth + me.depth) / 2.0 - 0.01).centre;
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, spot));
            }
        }
        best.map(|(_, p)| p)
    }

    /// `move`: every legal unit of the side may move; the policy scores
    /// where each candidate move would leave it against staying put.
    /// Every move the rules allow unit `u` (with `frame` holding the
    /// decision's arguments): (description, path, manoeuvre). Each has been
    /// checked against the table's edges, other units (friends only where
    /// `through` allows), the enemy buffer zone, an enemy zone of control
    /// holding the unit (stand, close, or move directly away) and the
    /// allowance over its actual path.
    /// How far the mover may go with manoeuvre `m` (bound in `frame`), or
    /// None when the rules refuse it: the `manoeuvre` clause does not hold,
    /// or the allowance is 0 for anything but a turn in place.
    pub(super) fn manoeuvre_allowance(
        &mut self,
        ch: &ChoiceDef,
        d: Id,
        m: u32,
        frame: &mut [Value],
    ) -> Result<Option<f64>, Diag> {
        let Some((m_slot, m_ok)) = &ch.manoeuvre else {
            return Ok(None);
        };
        frame[*m_slot as usize] = Value::Sym(m);
        let fixed = self.code.fixed_manoeuvres.get(d as usize) == Some(&true);
        let key = match frame[ch.vars[0] as usize] {
            Value::Unit(u) if fixed => Some((d, u, m)),
            _ => None,
        };
        let ok = match key.and_then(|k| self.manoeuvres_known.get(&k)) {
            Some(ok) => *ok,
            None => {
                let ok = self.eval(m_ok, frame)?.as_bool();
                if let Some(k) = key {
                    self.manoeuvres_known.insert(k, ok);
                }
                ok
            }
        };
        if !ok {
            return Ok(None);
        }
        let Some(allowance) = ch
            .allowance
            .as_ref()
            .map(|e| self.eval(e, frame))
            .transpose()?
            .and_then(to_len)
        else {
            return Ok(None);
        };
        let turns_only = m == self.m.pivot || m == self.m.turn || m == self.m.about_face;
        if allowance <= 1e-9 && !turns_only {
            return Ok(None);
        }
        Ok(Some(allowance))
    }

    #[inline(never)]
    fn legal_moves(
        &mut self,
        ch: &ChoiceDef,
        d: Id,
        u: u16,
        frame: &mut [Value],
    ) -> Result<Vec<(How, Base, u32)>, Diag> {
        let mut out = Vec::new();
        if ch.manoeuvre.is_none() {
            return Ok(out);
        }
        let all = [
            self.m.straight,
            self.m.wheel,
            self.m.about_face,
            self.m.oblique,
            self.m.turn,
            self.m.sideways,
            self.m.backwards,
            self.m.pivot,
            self.m.free,
        ];
        let start = self.field().bases[u as usize];
        // Which enemy holds the unit in its zone of control (the closest).
        let mut zoc: Option<(u16, f64)> = None;
        if let Some((e_slot, cond)) = &ch.control {
            let reach = self.control_reach(d, u);
            for e in self.units_on_table() {
                if self.world.units[e as usize].side == self.world.units[u as usize].side {
                    continue;
                }
                if self.controls(cond, *e_slot, reach.as_ref(), e, u, frame)? {
                    let gap = self.field().dist(u as usize, e as usize);
                    if zoc.is_none_or(|(_, least)| gap < least) {
                        zoc = Some((e, gap));
                    }
                }
            }
        }
        let buffer = match &ch.buffer {
            Some(e) => to_len(self.eval(e, frame)?).unwrap_or(0.0),
            None => 0.0,
        };
        let mut allowed = Vec::new();
        for m in all {
            if let Some(allowance) = self.manoeuvre_allowance(ch, d, m, frame)? {
                allowed.push((m, allowance));
            }
        }
        // No centre of any path below moves further than the allowance and
        // a wheel about a corner (twice the base's radius): the units further
        // than that, the bases' sizes and the buffer zone, with room to
        // spare, can neither block a path nor be too close at its end.
        let reach = allowed.iter().fold(0.0f64, |r, (_, a)| r.max(*a)) + 2.0 * start.radius();
        let near = self
            .field()
            .near(u as usize, &start, reach, buffer.max(0.0));
        let enemies: Vec<(usize, bool)> = self.buffer_enemies(u, buffer, &near).collect();
        // Lent a path, the table's answers change only for
        // `touches_terrain` of the unit: not for a path clear of all
        // terrain when the unit standing is.
        let terrain = self.field().terrain_within(&start, reach);
        let mut path = Vec::new();
        for (m, allowance) in allowed {
            let Some((m_slot, _)) = &ch.manoeuvre else {
                unreachable!("a manoeuvre was allowed")
            };
            frame[*m_slot as usize] = Value::Sym(m);
            let target = self.target_for(u, &[], m);
            let mut cands = self.candidates(m, &start, allowance, target);
            if m == self.m.straight {
                // As far ahead as the unit may go (up to the enemy buffer
                // zone, a friend, the table's edge), in quarters of the measure.
                cands.extend(advance_as_far(
                    &start,
                    allowance,
                    |d| {
                        let end = start.advanced(d);
                        self.buffer_shortfall_near(u, &start, &end, buffer, enemies.iter().copied())
                    },
                    |path| self.path_clear_near(ch, u, path, frame, &near),
                )?);
            }
            for (how, end, way) in cands {
                // The checks that need only the end come first: most
                // candidates fail one of them, and then no path is laid.
                // (Each check is a question about the move alone, so which
                // fails first changes nothing but the time it takes.)
                if self
                    .buffer_shortfall_near(u, &start, &end, buffer, enemies.iter().copied())
                    .is_some()
                {
                    continue;
                }
                if let Some((e, before)) = zoc {
                    if !zoc_allows(&start, &end, &self.field().bases[e as usize], before) {
                        continue;
                    }
                }
                if self.ends_on_someone(u, &end, &near) {
                    continue;
                }
                way.lay(&start, &mut path);
                debug_assert!(path.last() == Some(&end), "{how:?}");
                debug_assert!(path
                    .iter()
                    .all(|b| b.centre.dist(start.centre) <= reach + 1e-9));
                if !self.path_clear_near(ch, u, &path, frame, &near)? {
                    continue;
                }
                // The allowance again, now that the path is known (the
                // path lent to the field for `touches_terrain`, then taken
                // back), unless the path reads as the unit standing: then
                // it is the allowance worked out above.
                let allowed_now = if Field::path_clear_of_terrain(&path, &terrain) {
                    allowance
                } else {
                    self.field_path_mut().path = Some((u, std::mem::take(&mut path)));
                    let allowed_now = ch
                        .allowance
                        .as_ref()
                        .map(|e| self.eval(e, frame))
                        .transpose();
                    path = match self.field_path_mut().path.take() {
                        Some((_, p)) => p,
                        None => unreachable!("the path was just lent"),
                    };
                    allowed_now?.and_then(to_len).unwrap_or(0.0)
                };
                let cost = path_cost(&path, m == self.m.wheel);
                if cost > allowed_now + 1e-6 && cost > 1e-9 {
                    continue;
                }
                out.push((how, end, m));
            }
        }
        Ok(out)
    }

    /// `move`: every legal unit of the side may move; the policy scores
    /// where each legal move would leave it against staying put.
    #[inline(never)]
    fn move_units(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        let u_slot = ch.vars[0] as usize;
        let Some((m_slot, _)) = &ch.manoeuvre else {
            return Ok(());
        };
        // Units that have had their turn: moved or stayed, alone or with
        // a group (kept only with `together`).
        let mut had_turn = vec![false; self.world.units.len()];
        for u in self.units_on_table() {
            if !self.field().on_table[u as usize] || had_turn[u as usize] {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                continue;
            }
            if ch.together.is_some() {
                let others = self.together_with(ch, u, None, &had_turn, &mut frame)?;
                had_turn[u as usize] = true;
                for o in &others {
                    had_turn[*o as usize] = true;
                }
                if !others.is_empty() {
                    self.move_group(ch, prefer, u, &others, &mut frame)?;
                    continue;
                }
            }
            // A unit with no legal move stays without being scored (about
            // two units in five of those asked, in TVBD). A policy's score
            // reads only the decision's arguments and the unit, which
            // finding the moves leaves as they were.
            let moves = self.legal_moves(ch, prefer.d, u, &mut frame)?;
            if moves.is_empty() {
                continue;
            }
            let start = self.field().bases[u as usize];
            let stand = self.field().stand(u as usize);
            let stay = self.score(prefer, &mut frame)?;
            let mut best: Option<(Value, How, Base, u32)> = None;
            for (how, end, m) in moves {
                frame[*m_slot as usize] = Value::Sym(m);
                self.set_base(u as usize, end);
                let s = self.score(prefer, &mut frame);
                self.field_mut().put_back(&stand);
                let s = s?;
                if best
                    .as_ref()
                    .is_none_or(|(bs, ..)| s.num_cmp(*bs) == Some(std::cmp::Ordering::Greater))
                {
                    best = Some((s, how, end, m));
                }
            }
            let Some((s, how, end, m)) = best else {
                continue;
            };
            if s.num_cmp(stay) != Some(std::cmp::Ordering::Greater) {
                continue;
            }
            frame[*m_slot as usize] = Value::Sym(m);
            if !self.passes_check(ch, u, &mut frame)? {
                continue;
            }
            self.set_base(u as usize, end);
            let unit = self.world.units[u as usize].name.clone();
            self.note(|_| Event::Move {
                unit,
                how: how.to_string(),
                from: place(&start),
                to: place(&end),
                with: Vec::new(),
            });
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// The moves the rules offer unit `u` under decision `name` (called
    /// with `args`), as (description, where it would end): what a policy
    /// chooses among. For tests and tools; a game does this itself.
    pub fn offered_moves(
        &mut self,
        name: &str,
        args: &[Value],
        u: u16,
    ) -> Result<Vec<(String, Base)>, Diag> {
        let rs = self.rs;
        let Some(d) = rs.decisions.iter().position(|d| d.name == name) else {
            return Err(Diag::new("muster::battle", format!("no decision `{name}`")));
        };
        let Some(ch) = &rs.decisions[d].choice else {
            return Ok(Vec::new());
        };
        let mut frame = vec![Value::None; (ch.slots as usize).max(args.len() + 4)];
        frame[..args.len()].copy_from_slice(args);
        frame[ch.vars[0] as usize] = Value::Unit(u);
        if !self.eval(&ch.legal, &mut frame)?.as_bool() {
            return Ok(Vec::new());
        }
        if ch.together.is_some() {
            let done = vec![false; self.world.units.len()];
            let others = self.together_with(ch, u, None, &done, &mut frame)?;
            if !others.is_empty() {
                let mut group = vec![u];
                group.extend(others);
                return Ok(self
                    .group_moves(ch, d as Id, &group, &mut frame)?
                    .into_iter()
                    .map(|mv| {
                        let end = *mv.paths[0].last().expect("a path has an end");
                        (mv.how.to_string(), end)
                    })
                    .collect());
            }
        }
        Ok(self
            .legal_moves(ch, d as Id, u, &mut frame)?
            .into_iter()
            .map(|(how, end, _)| (how.to_string(), end))
            .collect())
    }

    /// Ask a decision of the ruleset by name now, with `args` (a step of
    /// play does this; tests use it to play one step of a figure).
    pub fn decide_named(&mut self, name: &str, args: &[Value]) -> Result<(), Diag> {
        let Some(d) = self.rs.decisions.iter().position(|d| d.name == name) else {
            return Err(Diag::new("muster::battle", format!("no decision `{name}`")));
        };
        // The caller may have changed the world itself.
        self.ev.forget();
        self.decide(d as Id, args)?;
        self.sync_off_table();
        Ok(())
    }

    /// Run a procedure of the ruleset by name now, with `args`.
    pub fn perform_named(
        &mut self,
        name: &str,
        args: &[Value],
    ) -> Result<crate::procedures::Performed, Diag> {
        let Some(p) = self.rs.procedure(name) else {
            return Err(Diag::new(
                "muster::battle",
                format!("no procedure `{name}`"),
            ));
        };
        // The caller may have changed the world itself.
        self.ev.forget();
        let r = self.perform(p, args)?;
        self.sync_off_table();
        Ok(r)
    }

    /// `charge`: legal charges in the rules' order, each by the cheapest
    /// wheel-then-straight path into contact; two units charging each other
    /// meet half way.
    #[inline(never)]
    fn charges(&mut self, ch: &ChoiceDef, mut frame: Vec<Value>) -> Result<(), Diag> {
        let (c_slot, t_slot) = (ch.vars[0] as usize, ch.vars[1] as usize);
        let units = self.units_on_table();
        let mut list: Vec<(Value, u16, u16)> = Vec::new();
        for &c in &units {
            for &t in &units {
                if c == t {
                    continue;
                }
                frame[c_slot] = Value::Unit(c);
                frame[t_slot] = Value::Unit(t);
                if self.eval(&ch.legal, &mut frame)?.as_bool() {
                    let order = match &ch.order {
                        Some(o) => self.eval(o, &mut frame)?,
                        None => Value::Int(0),
                    };
                    list.push((order, c, t));
                }
            }
        }
        list.sort_by(|a, b| a.0.num_cmp(b.0).unwrap_or(std::cmp::Ordering::Equal));
        let mut moved: Vec<u16> = Vec::new();
        // Members of a group that has had its charge (made or not): they
        // are not offered one of their own (kept only with `together`).
        let mut held: Vec<u16> = Vec::new();
        for (_, c, t) in list.clone() {
            if moved.contains(&c)
                || held.contains(&c)
                || !self.field().on_table[c as usize]
                || !self.field().on_table[t as usize]
            {
                continue;
            }
            frame[c_slot] = Value::Unit(c);
            frame[t_slot] = Value::Unit(t);
            let reach =
                to_len(self.eval(ch.reach.as_ref().expect("compiler checked"), &mut frame)?)
                    .unwrap_or(0.0);
            let wheel = match &ch.wheel {
                Some(w) => to_len(self.eval(w, &mut frame)?).unwrap_or(0.0),
                None => 0.0,
            };
            if ch.together.is_some() {
                // Units that have charged already stay out of the group,
                // and so does the target.
                let mut skip = vec![false; self.world.units.len()];
                for m in &moved {
                    skip[*m as usize] = true;
                }
                let others = self.together_with(ch, c, Some(t), &skip, &mut frame)?;
                if !others.is_empty() {
                    held.extend(&others);
                    let mut group = vec![c];
                    group.extend(others);
                    let mutual = list.iter().any(|(_, a, b)| *a == t && group.contains(b))
                        && !moved.contains(&t);
                    // None: it could not reach, and nobody moved.
                    if let Some(then) = self.charge_group(&group, t, reach, wheel, mutual) {
                        moved.extend(&group);
                        if then {
                            self.run_then(ch, &mut frame)?;
                        }
                    }
                    continue;
                }
            }
            let f = self.field();
            let (cb, tb) = (f.bases[c as usize], f.bases[t as usize]);
            let name = self.world.units[c as usize].name.clone();
            let target = self.world.units[t as usize].name.clone();
            if cb.in_contact(&tb) {
                moved.push(c);
            } else {
                let obstacles: Vec<Base> = f
                    .bases
                    .iter()
                    .enumerate()
                    .filter(|(o, _)| f.on_table[*o] && *o != c as usize && *o != t as usize)
                    .map(|(_, b)| *b)
                    .collect();
                let Some(path) = battlefield::charge_path(&cb, &tb, reach, wheel, &obstacles)
                else {
                    self.note(|_| Event::Stays {
                        unit: name,
                        why: format!("cannot reach {target}"),
                    });
                    continue;
                };
                // Meeting half way: the target charges back and has not moved.
                let mutual = list.iter().any(|(_, a, b)| *a == t && *b == c) && !moved.contains(&t);
                let end = if mutual && path.wheel.abs() < 1e-9 {
                    cb.advanced(path.distance / 2.0)
                } else {
                    path.end
                };
                self.set_base(c as usize, end);
                moved.push(c);
                let how = if mutual && path.wheel.abs() < 1e-9 {
                    format!("charges {target}, meeting half way")
                } else if path.wheel.abs() > 1e-9 {
                    format!("wheels {:+.0} and charges {target}", path.wheel)
                } else {
                    format!("charges {target}")
                };
                self.note(|_| Event::Move {
                    unit: name,
                    how,
                    from: place(&cb),
                    to: place(&end),
                    with: Vec::new(),
                });
                // A charge that stopped short (meeting half way: the target
                // comes the rest) still charged.
                if !end.in_contact(&tb) && !mutual {
                    continue;
                }
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// `place`: deploy the units the scenario left unplaced, one at a time
    /// in the rules' order (`by`): each goes where the policy scores best
    /// among the points of a 1-unit grid over its army's half of the table
    /// where the base is wholly on the table, on no other unit, and LEGAL
    /// holds with the unit there. Units arriving during the battle (off the
    /// table with `off_table` false: a reserve or a unit a rule brought
    /// back) are placed the same way on the whole table; one with no such
    /// point goes back off the table.
    #[inline(never)]
    fn place(&mut self, ch: &ChoiceDef, prefer: Prefer, mut frame: Vec<Value>) -> Result<(), Diag> {
        use std::cmp::Ordering::{Equal, Greater};
        let u_slot = ch.vars[0] as usize;
        let mut todo: Vec<(Value, u16)> = Vec::new();
        for u in 0..self.world.units.len() as u16 {
            if !self.unplaced[u as usize] && !self.arriving(u as usize) {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            let order = match &ch.order {
                Some(o) => self.eval(o, &mut frame)?,
                None => Value::Int(0),
            };
            todo.push((order, u));
        }
        todo.sort_by(|a, b| a.0.num_cmp(b.0).unwrap_or(Equal));
        let (w, d) = (self.field().width, self.field().depth);
        // LEGAL's first part, when it reads nothing of where the unit
        // stands but how far it is from its own edge (`from_own_edge(u) +
        // base_depth(u) / 2 <= 9`): the same along a row of spots, so a row
        // it turns down is left at its first free spot.
        let mut next = frame.len() as u16;
        let mut parts = Vec::new();
        conjuncts(self.rs, &ch.legal, &mut next, &mut parts, 0);
        let by_row = parts
            .into_iter()
            .next()
            .filter(|p| same_along_a_row(self.rs, p, 0));
        frame.resize(frame.len().max(next as usize), Value::None);
        for (_, u) in todo {
            frame[u_slot] = Value::Unit(u);
            // Deployment looks at the army's half of the table; a unit
            // arriving during the battle at the whole of it.
            let arriving = !self.unplaced[u as usize];
            let waiting = self.field().bases[u as usize];
            let near_edge = self.field().edge[u as usize] < d / 2.0;
            let mut best: Option<(Value, Base)> = None;
            let rows = if arriving { d } else { d / 2.0 };
            let (nx, ny) = (w.floor() as i64, rows.floor() as i64);
            // On the table while its places are weighed (nothing between
            // two of them looks at it: the clash test passes it over).
            self.field_mut().set_on_table(u as usize, true);
            for j in 0..ny {
                let y = if near_edge {
                    0.5 + j as f64
                } else {
                    d - 0.5 - j as f64
                };
                let mut row_asked = by_row.is_none();
                for i in 0..nx {
                    let b = Base::new(
                        Pt {
                            x: 0.5 + i as f64,
                            y,
                        },
                        waiting.facing,
                        waiting.width,
                        waiting.depth,
                    );
                    if !self.on_table(&b) {
                        continue;
                    }
                    let f = self.field();
                    let clash = f
                        .bases
                        .iter()
                        .enumerate()
                        .any(|(o, ob)| o != u as usize && f.on_table[o] && b.overlaps(ob));
                    if clash {
                        continue;
                    }
                    self.set_base(u as usize, b);
                    if !row_asked {
                        row_asked = true;
                        let first = by_row.as_ref().expect("asked only when there is one");
                        // (Should it fail to evaluate, LEGAL reports it.)
                        if let Ok(false) = self.eval_raw(first, &mut frame).map(|v| v.as_bool()) {
                            break;
                        }
                    }
                    let legal = self.eval(&ch.legal, &mut frame);
                    let score = match legal {
                        Ok(l) if l.as_bool() => Some(self.score(prefer, &mut frame)),
                        Ok(_) => None,
                        Err(e) => Some(Err(e)),
                    };
                    if let Some(s) = score {
                        let s = match s {
                            Ok(s) => s,
                            Err(e) => {
                                self.field_mut().set_on_table(u as usize, false);
                                return Err(e);
                            }
                        };
                        if best
                            .as_ref()
                            .is_none_or(|(bs, _)| s.num_cmp(*bs) == Some(Greater))
                        {
                            best = Some((s, b));
                        }
                    }
                }
            }
            self.field_mut().set_on_table(u as usize, false);
            let unit = self.world.units[u as usize].name.clone();
            if arriving && best.is_none() {
                // Nowhere it may come on: it stays off the table.
                self.set_base(u as usize, waiting);
                if let Some(s) = self.off_table {
                    let ns = self.rs.states.len();
                    self.world.state[u as usize * ns + s as usize] = Value::Bool(true);
                    self.ev.changed(Change::State(s));
                }
                self.note(|_| Event::Stays {
                    unit,
                    why: "no place allowed to arrive at".into(),
                });
                continue;
            }
            let Some((_, b)) = best else {
                self.set_base(u as usize, waiting);
                return Err(Diag::new(
                    "muster::battle",
                    format!("unit `{unit}` cannot be deployed: no free place on its army's half of the table is allowed"),
                )
                .help("make the table bigger, give the scenario fewer units, or place some with `at`"));
            };
            self.set_base(u as usize, b);
            self.field_mut().set_on_table(u as usize, true);
            self.unplaced[u as usize] = false;
            self.field_mut().reserve[u as usize] = false;
            if arriving {
                self.note(|_| Event::Arrives {
                    unit,
                    at: place(&b),
                });
            } else {
                self.note(|_| Event::Placed {
                    unit,
                    at: place(&b),
                });
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }

    /// A unit off the table that a rule brought back (its `off_table` set
    /// to false): the next `place` decision whose `where` allows puts it
    /// down.
    fn arriving(&self, u: usize) -> bool {
        !self.field().on_table[u]
            && self
                .off_table
                .is_some_and(|s| !self.world.state[u * self.rs.states.len() + s as usize].as_bool())
    }

    /// `retire`: units go straight back `distance`, through friends where
    /// `through` allows, stopping short where the way is blocked.
    #[inline(never)]
    fn retire(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        let u_slot = ch.vars[0] as usize;
        // Units that have had their turn, alone or with a group (kept only
        // with `together`).
        let mut had_turn = vec![false; self.world.units.len()];
        for u in self.units_on_table() {
            if had_turn[u as usize] {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                continue;
            }
            let mut others = Vec::new();
            if ch.together.is_some() {
                others = self.together_with(ch, u, None, &had_turn, &mut frame)?;
                had_turn[u as usize] = true;
                for o in &others {
                    had_turn[*o as usize] = true;
                }
            }
            let must = match &ch.must {
                Some(m) => self.eval(m, &mut frame)?.as_bool(),
                None => false,
            };
            let score = self.score(prefer, &mut frame)?;
            if !must && score.num_cmp(Value::Int(0)) == Some(std::cmp::Ordering::Less) {
                continue;
            }
            if !must && !self.passes_check(ch, u, &mut frame)? {
                continue;
            }
            let d = to_len(self.eval(ch.distance.as_ref().expect("compiler checked"), &mut frame)?)
                .unwrap_or(0.0);
            let turn = match &ch.turn_about {
                Some(e) => self.eval(e, &mut frame)?.as_bool(),
                None => false,
            };
            if !others.is_empty() {
                self.retire_group(ch, u, &others, d, turn, &mut frame)?;
                self.run_then(ch, &mut frame)?;
                continue;
            }
            let start = self.field().bases[u as usize];
            let mut done = None;
            let mut k = (d / 0.25).round() as i64;
            while k > 0 {
                let dist = k as f64 * 0.25;
                let path = start.straight_path(-dist);
                if self.path_clear(ch, u, &path, &mut frame)? {
                    done = Some((dist, *path.last().unwrap()));
                    break;
                }
                k -= 1;
            }
            let unit = self.world.units[u as usize].name.clone();
            let turned = if turn { ", turning about" } else { "" };
            match done {
                Some((dist, end)) => {
                    // Turning about in place covers the same ground.
                    let end = if turn { end.pivoted(180.0) } else { end };
                    self.set_base(u as usize, end);
                    self.note(|_| Event::Move {
                        unit,
                        how: format!("falls back {dist:.1}{turned}"),
                        from: place(&start),
                        to: place(&end),
                        with: Vec::new(),
                    });
                }
                None if turn => {
                    let end = start.pivoted(180.0);
                    self.set_base(u as usize, end);
                    self.note(|_| Event::Move {
                        unit,
                        how: "has no room to fall back, turning about".into(),
                        from: place(&start),
                        to: place(&end),
                        with: Vec::new(),
                    });
                }
                None => self.note(|_| Event::Stays {
                    unit,
                    why: "no room to fall back".into(),
                }),
            }
            self.run_then(ch, &mut frame)?;
        }
        Ok(())
    }
}

/// A `pick`'s LEGAL split into its `and`-ed parts (see [`conjuncts`]) by
/// the option's names they read: only the first, only the second (of two),
/// or both (or more).
struct Split {
    /// The length of the decision's frame the split was made for.
    frame: usize,
    /// The frame's length with the slots the opened-up defines need.
    width: usize,
    first_only: Vec<Ex>,
    second_only: Vec<Ex>,
    both: Vec<Ex>,
    /// With two names, when the first part of `both` only compares the two
    /// units' sides (`enemies(s, t)`: other sides): whether it asks for the
    /// same side. The scan then makes that test itself.
    sides: Option<bool>,
    /// With two names, when the next part of `both` (after the sides test,
    /// if any) is whether the two are in contact (`in_contact(a, d)`, or a
    /// battle fact derived as that, `engaged(a, d)`): whether it names them
    /// the other way round. The scan then measures that itself.
    contact: Option<bool>,
    /// With two names and no contact test, when the next part of `both`
    /// (after the sides test, if any) can hold only for bases within a
    /// distance the first unit settles (TVBD's and Thistle's `in_range(s,
    /// t)`): see [`Bound`].
    bound: Option<Bound>,
}

/// A define, or a battle fact without a hook, of two units (a pick's two,
/// or a `move`'s unit and the enemy `control` asks about) whose body is
/// `... and distance(x, y) <= LIMIT and ...` (or `<`, or `reachable(x, y,
/// LIMIT, WHEEL)` with a WHEEL surely a number: see `distance_within`),
/// where LIMIT reads only the parameter the first unit is passed as and
/// rolls no dice, and each part before the distance either reads only
/// that parameter too (PRE) or cannot fail ([`crate::eval::cannot_fail`]):
/// TVBD's and Thistle's `in_range(s, t)` (`s.range != none and distance(s,
/// t) <= s.range`), TVBD's `can_reach(c, t)` and `zone_of_control(e, u)`.
/// Per first unit the caller works out PRE (false: the body is false for
/// every second unit) and LIMIT, and turns away a pair whose bases'
/// centres put them plainly further apart than LIMIT
/// ([`Field::apart_by_centres`]), as the comparison would itself before
/// measuring (`Lower::distance_compared`): the body's value, found without
/// asking it, since no part before the distance can fail instead. (By the
/// centres alone, not by remembered distances: a replay, remembering none,
/// must ask the rules the same questions.)
#[derive(Clone, Debug)]
struct Bound {
    /// The fact's own frame: its parameters, then its slots.
    slots: usize,
    /// The parameter the first unit is passed as (0 or 1).
    first: usize,
    /// The conjuncts before the distance that read only the first unit,
    /// in the body's frame.
    pre: Vec<Ex>,
    limit: Ex,
    /// Whether the distance names the second unit first.
    swapped: bool,
}

/// What a [`Bound`] says of one first unit's pairs.
pub(super) enum Reach {
    /// PRE does not hold: the fact is false for every second unit.
    None,
    /// Pairs plainly further apart than this are turned away.
    Within(f64),
}

impl Reach {
    /// What a LIMIT of `n` (a whole number of the measure) settles: the
    /// pairs further apart than it, with the margin `distance_compared`
    /// allows (distances are kept to 1/64 of the measure).
    fn within(n: i64) -> Reach {
        Reach::Within(n as f64 + crate::field::KEPT_TO)
    }

    /// Does this turn units `a` and `b` of the table away unasked? With a
    /// limit, when they are certainly further apart ([`Field::beyond`]:
    /// off the table, their distance is `unlimited` and `reachable`
    /// false).
    fn turns_away(&self, f: &Field, a: usize, b: usize) -> bool {
        match self {
            Reach::None => true,
            Reach::Within(k) => f.beyond(a, b, *k),
        }
    }
}

impl Split {
    fn of(rs: &Ruleset, ch: &ChoiceDef, frame: usize) -> Split {
        let mut next = frame as u16;
        let mut parts = Vec::new();
        conjuncts(rs, &ch.legal, &mut next, &mut parts, 0);
        let later = &ch.vars[1..];
        let (first_only, rest): (Vec<Ex>, Vec<Ex>) = parts
            .into_iter()
            .partition(|p| !later.iter().any(|s| reads_local(p, *s)));
        // With two names, the parts that name only the second are checked
        // once per unit too.
        let (second_only, both): (Vec<Ex>, Vec<Ex>) = if ch.vars.len() == 2 {
            rest.into_iter().partition(|p| !reads_local(p, ch.vars[0]))
        } else {
            (Vec::new(), rest)
        };
        let sides = match (&ch.vars[..], both.first()) {
            ([a, b], Some(p)) => side_test(rs, p, *a, *b),
            _ => None,
        };
        let next_part = both.get(usize::from(sides.is_some()));
        let contact = match (&ch.vars[..], next_part) {
            ([a, b], Some(p)) => contact_test(rs, p, *a, *b),
            _ => None,
        };
        let bound = match (&ch.vars[..], next_part, contact) {
            ([a, b], Some(p), None) => bound_test(rs, p, *a, *b),
            _ => None,
        };
        Split {
            frame,
            width: next as usize,
            first_only,
            second_only,
            both,
            sides,
            contact,
            bound,
        }
    }
}

/// Is `e` a comparison of the sides of the units in slots `a` and `b`
/// (`a.side == b.side`, `a.side != b.side`, or a define called with the
/// two whose body is one)? Some(true) for the same side, Some(false) for
/// other sides. It cannot fail to evaluate on two units.
fn side_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<bool> {
    let of = |x: &Ex| match x {
        Ex::SideOf(u) => match **u {
            Ex::Local(l) => Some(l),
            _ => None,
        },
        _ => None,
    };
    match e {
        Ex::Bin(op @ (Bin::Eq | Bin::Ne), x, y) => {
            let (p, q) = (of(x)?, of(y)?);
            ((p, q) == (a, b) || (p, q) == (b, a)).then_some(*op == Bin::Eq)
        }
        Ex::Define(d, args) => {
            let f = &rs.defines[*d as usize];
            let local = |x: &Ex| match x {
                Ex::Local(l) => Some(*l),
                _ => None,
            };
            let (p, q) = match &args[..] {
                [x, y] if f.slots == 2 => (local(x)?, local(y)?),
                _ => return None,
            };
            let inner = side_test(rs, &f.body, 0, 1)?;
            ((p, q) == (a, b) || (p, q) == (b, a)).then_some(inner)
        }
        _ => None,
    }
}

/// Is `e` whether the units in slots `a` and `b` are in contact
/// (`in_contact` of the two, or a battle fact of the two, without a hook,
/// derived as `in_contact` of its parameters in order)? Some(false) when
/// it names them `a` first, Some(true) when `b` first. On two units it is
/// the table's measure and cannot fail to evaluate.
fn contact_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<bool> {
    use crate::ir::Builtin as B;
    let pair = |args: &[Ex]| match args {
        [Ex::Local(p), Ex::Local(q)] => Some((*p, *q)),
        _ => None,
    };
    let (p, q) = match e {
        Ex::Builtin(B::InContact, args) => pair(args)?,
        Ex::Fact(f, args) => {
            let fd = &rs.facts[*f as usize];
            let derived = fd.battle.as_ref()?;
            let in_order =
                matches!(&derived.body, Ex::Builtin(B::InContact, x) if pair(x) == Some((0, 1)));
            if fd.hook.is_some() || !in_order {
                return None;
            }
            pair(args)?
        }
        _ => return None,
    };
    if (p, q) == (a, b) {
        Some(false)
    } else if (p, q) == (b, a) {
        Some(true)
    } else {
        None
    }
}

/// The `and`-ed parts of a condition, with the calls of defines whose
/// bodies are themselves `and`s opened up (two levels deep), rewritten into
/// the caller's frame: the define's parameters become the call's arguments,
/// its other locals move to fresh slots from `next` on.
fn conjuncts(rs: &Ruleset, e: &Ex, next: &mut u16, out: &mut Vec<Ex>, depth: u8) {
    match e {
        Ex::Bin(Bin::And, a, b) => {
            conjuncts(rs, a, next, out, depth);
            conjuncts(rs, b, next, out, depth);
        }
        Ex::Define(d, args)
            if depth < 2
                && args
                    .iter()
                    .all(|a| matches!(a, Ex::Local(_) | Ex::Const(_)))
                && matches!(rs.defines[*d as usize].body, Ex::Bin(Bin::And, ..)) =>
        {
            let f = &rs.defines[*d as usize];
            let np = args.len() as u16;
            let base = *next;
            *next += f.slots.saturating_sub(np);
            let mut remap = |x: &Ex| -> Option<Ex> {
                None.or(match x {
                    Ex::Local(i) if *i < np => Some(args[*i as usize].clone()),
                    Ex::Local(i) => Some(Ex::Local(base + i - np)),
                    _ => None,
                })
            };
            let body = remap_quants(&f.body, np, base, &mut remap);
            conjuncts(rs, &body, next, out, depth + 1);
        }
        e => out.push(e.clone()),
    }
}

/// Is `e` a define or battle fact of the units in slots `a` and `b` that
/// only bases within a distance settled by `a` can satisfy ([`Bound`])?
fn bound_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<Bound> {
    let (derived, args) = match e {
        Ex::Fact(f, args) => {
            let fd = &rs.facts[*f as usize];
            if fd.hook.is_some() {
                return None;
            }
            (fd.battle.as_ref()?, args)
        }
        Ex::Define(d, args) => (&rs.defines[*d as usize], args),
        _ => return None,
    };
    let first = match &args[..] {
        [Ex::Local(p), Ex::Local(q)] if (*p, *q) == (a, b) => 0u16,
        [Ex::Local(p), Ex::Local(q)] if (*p, *q) == (b, a) => 1,
        _ => return None,
    };
    let second = 1 - first;
    let mut parts = Vec::new();
    derived.body.conjuncts(&mut parts);
    let mut pre = Vec::new();
    for part in parts {
        if let Some((p, q, limit)) = distance_within(rs, part) {
            if (p, q) == (first, second) || (p, q) == (second, first) {
                if reads_local(limit, second) || crate::eval::rolls_dice(rs, limit) {
                    return None;
                }
                return Some(Bound {
                    slots: (derived.slots as usize).max(2),
                    first: first as usize,
                    pre,
                    limit: limit.clone(),
                    swapped: p == second,
                });
            }
        }
        if crate::eval::rolls_dice(rs, part) {
            return None;
        }
        if reads_local(part, second) {
            // Asked of each pair before the distance: passed over for
            // the pairs further apart, so only if it cannot fail (the
            // parameters are the two units).
            if !crate::eval::cannot_fail(rs, part, 0b11) {
                return None;
            }
            continue;
        }
        pre.push(part.clone());
    }
    None
}

/// Is `e` a part that holds only for bases within a distance of each
/// other: `distance(p, q) <= limit` (or `<`) of two locals, or
/// `reachable(p, q, limit, wheel)` (a charge reaches no further than its
/// cost) whose wheel, worked out and taken as a length before the reach
/// is, is surely a number ([`surely_a_number`])? Then (p, q, limit).
fn distance_within<'e>(rs: &Ruleset, e: &'e Ex) -> Option<(u16, u16, &'e Ex)> {
    use crate::ir::Builtin;
    match e {
        Ex::Bin(Bin::Le | Bin::Lt, x, limit) => match &**x {
            Ex::Builtin(Builtin::Distance, xy) => match &xy[..] {
                [Ex::Local(p), Ex::Local(q)] => Some((*p, *q, &**limit)),
                _ => None,
            },
            _ => None,
        },
        Ex::Builtin(Builtin::Reachable, args) => match &args[..] {
            [Ex::Local(p), Ex::Local(q), limit, wheel] if *p < 64 && *q < 64 => {
                let units = 1u64 << p | 1u64 << q;
                surely_a_number(rs, wheel, units).then_some((*p, *q, limit))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Is `e` surely a number, never failing to be worked out (the units in
/// the locals of `units`)? A number, or `if C then A else B` of such with
/// a C that cannot fail ([`crate::eval::cannot_fail`]) and rolls no dice.
fn surely_a_number(rs: &Ruleset, e: &Ex, units: u64) -> bool {
    match e {
        Ex::Const(v) => v.as_frac().is_some(),
        Ex::If(c, a, b) => {
            !crate::eval::rolls_dice(rs, c)
                && crate::eval::cannot_fail(rs, c, units)
                && surely_a_number(rs, a, units)
                && surely_a_number(rs, b, units)
        }
        _ => false,
    }
}

/// Rewrite a define's body into another frame: locals by `remap`, and the
/// slots quantifiers bind moved the same way (`slot - params + base`).
fn remap_quants(e: &Ex, np: u16, base: u16, remap: &mut dyn FnMut(&Ex) -> Option<Ex>) -> Ex {
    crate::odds::map(e, &mut |x| match x {
        Ex::Quant(q, sides, slot, body) => Some(Ex::Quant(
            *q,
            *sides,
            base + slot - np,
            Box::new(remap_quants(body, np, base, remap)),
        )),
        other => remap(other),
    })
}

/// Is `e` the same for every spot of a row of a `place` decision: does it
/// read nothing of where the unit stands but how far it is from its own
/// table edge (with the unit's stats and states, types, sides, the table's
/// size, and the defines and tables that read only those)?
fn same_along_a_row(rs: &Ruleset, e: &Ex, depth: u8) -> bool {
    use crate::ir::Builtin as B;
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

/// Does the expression read local `slot`?
fn reads_local(e: &Ex, slot: u16) -> bool {
    match e {
        Ex::Local(s) => *s == slot,
        e => e.any_child(&mut |c| reads_local(c, slot)),
    }
}

/// The way a candidate move goes from its start (laid out as a path only
/// for a move whose end passes the first checks: most are turned down by
/// the end alone).
pub(super) enum Way {
    /// Straight to this end.
    Two(Base),
    /// Straight ahead `d` (back, when negative), a base every half measure.
    Straight(f64),
    /// A wheel of `w` degrees about a front corner, then ahead `d`.
    Wheel(f64, f64),
    /// An about face, then ahead `d`.
    AboutFace(f64),
    /// Obliquely: `d` along the bearing `a` off the facing, facing kept.
    Oblique(f64, f64),
    /// A path already laid out.
    Laid(Vec<Base>),
}

impl Way {
    /// The path from `b`, start first, laid into `out` (emptied first: one
    /// buffer serves every candidate of a move). Its last base is the end
    /// [`Game::candidates`] gave, bit for bit.
    pub(super) fn lay(&self, b: &Base, out: &mut Vec<Base>) {
        out.clear();
        match self {
            Way::Two(end) => out.extend([*b, *end]),
            Way::Straight(d) => out.extend(b.straight_bases(*d)),
            Way::Wheel(w, d) => {
                out.extend(b.wheel_bases(*w));
                if *d > 1e-9 {
                    let end = *out.last().expect("a path has an end");
                    out.extend(end.straight_bases(*d).skip(1));
                }
            }
            Way::AboutFace(d) => {
                out.push(*b);
                out.extend(b.pivoted(180.0).straight_bases(*d));
            }
            Way::Oblique(a, d) => out.extend(b.oblique_bases(*a, *d)),
            Way::Laid(path) => out.extend_from_slice(path),
        }
    }
}

/// The furthest straight advance from `start` ([`furthest_advance`], its
/// path `clear`) as a candidate move, when it is neither the whole nor half
/// the allowance, which [`Game::candidates`] offers already.
fn advance_as_far<E>(
    start: &Base,
    allowance: f64,
    shortfall: impl FnMut(f64) -> Option<f64>,
    mut clear: impl FnMut(&[Base]) -> Result<bool, E>,
) -> Result<Option<(How, Base, Way)>, E> {
    let found = furthest_advance(allowance, shortfall, |d| {
        let path = start.straight_path(d);
        Ok(clear(&path)?.then_some(path))
    })?;
    Ok(found.and_then(|(d, path)| {
        let new =
            d < allowance * 0.5 - 1e-9 || (d < allowance - 1e-9 && d > allowance * 0.5 + 1e-9);
        let end = *path.last().expect("a path has an end");
        new.then_some((How::AdvancesAsFar(d), end, Way::Laid(path)))
    }))
}

/// The furthest advance, in quarters of the measure down from `allowance`,
/// whose end keeps the enemy buffer zone and whose path is `clear` (which
/// gives what it found), or None. `shortfall` says by how much an end
/// breaks the zone (see [`Game::buffer_shortfall_near`]): the quarters that
/// would move it less than that are skipped, since a base moved `x` comes
/// at most `x` nearer to anything (less a margin for rounding). The buffer
/// comes first: it needs only the end, and it is what usually stops an
/// advance.
fn furthest_advance<T, E>(
    allowance: f64,
    mut shortfall: impl FnMut(f64) -> Option<f64>,
    mut clear: impl FnMut(f64) -> Result<Option<T>, E>,
) -> Result<Option<(f64, T)>, E> {
    let mut d = (allowance * 4.0).floor() / 4.0;
    while d > 0.0 {
        if let Some(short) = shortfall(d) {
            let mut back = 0.25;
            d -= 0.25;
            while d > 0.0 && back < short - 1e-6 {
                back += 0.25;
                d -= 0.25;
            }
            continue;
        }
        if let Some(found) = clear(d)? {
            return Ok(Some((d, found)));
        }
        d -= 0.25;
    }
    Ok(None)
}

/// May a unit held in an enemy's zone of control (the enemy's base `eb`,
/// `before` away at the start) move from `start` to `end`? Only if it ends
/// closer to that enemy, or goes directly away from it (within 15 degrees
/// of the line from the enemy's centre through the unit's).
///
/// The direction is asked first: it needs two bearings, where closing
/// needs an exact distance between the bases.
pub(crate) fn zoc_allows(start: &Base, end: &Base, eb: &Base, before: f64) -> bool {
    let moved = end.centre.dist(start.centre);
    let directly_away = moved > 1e-6 && {
        let away = battlefield::bearing(eb.centre, start.centre);
        let dir = battlefield::bearing(start.centre, end.centre);
        battlefield::norm_angle(dir - away).abs() <= 15.0
    };
    directly_away || end.distance(eb) < before - 1e-6
}

/// What a path costs against the allowance: the distance the centre
/// travels, except that a wheel costs what its outside corner travels
/// (the first part of a wheel path turns in place about a corner).
fn path_cost(path: &[Base], wheel: bool) -> f64 {
    let mut cost = 0.0;
    let mut i = 0;
    if wheel {
        // The wheel: consecutive bases whose facing changes.
        while i + 1 < path.len() && (path[i + 1].facing - path[i].facing).abs() > 1e-9 {
            i += 1;
        }
        if i > 0 {
            cost += path[0].wheel_cost(battlefield::norm_angle(path[i].facing - path[0].facing));
        }
    }
    for w in path[i..].windows(2) {
        cost += w[0].centre.dist(w[1].centre);
    }
    cost
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{conjuncts, furthest_advance, same_along_a_row, Split};
    use crate::battlefield::tests::Rng;
    use crate::battlefield::{Base, Pt};

    /// A ruleset of the repository, built (for the tests of the modules
    /// that compile and play its rules).
    pub(crate) fn ruleset(file: &str) -> crate::ir::Ruleset {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        match crate::build(&path) {
            Ok(b) => b.ruleset,
            Err(_) => panic!("{file} builds"),
        }
    }

    /// Matchlocks deploys within 9 inches of its own edge: the first part
    /// of its deployment's LEGAL is the same along a row of spots (a row
    /// it turns down is left at once); the parts after it, which measure
    /// from the centre line and to the friends placed, are not.
    #[test]
    fn a_deployment_part_that_reads_only_the_edge_is_the_same_along_a_row() {
        let rs = ruleset("rules/never_mind_the_matchlocks.muster");
        let ch = choice(&rs, "deploy");
        let mut next = ch.slots;
        let mut parts = Vec::new();
        conjuncts(&rs, &ch.legal, &mut next, &mut parts, 0);
        let row: Vec<bool> = parts.iter().map(|p| same_along_a_row(&rs, p, 0)).collect();
        assert_eq!(row, [true, false, false], "{parts:?}");
    }

    /// The scan settles a pair's side test itself where LEGAL's first part
    /// naming both units is one: TVBD's shooting, charges, melees and
    /// heroics (a unit rewarded for an enemy's rout) open with
    /// `enemies(..)`; point blank (contact first) does not.
    #[test]
    fn a_pick_that_opens_with_a_side_test_is_split_so() {
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let sides = |name: &str| split(rs, name).sides;
        assert_eq!(sides("shooting"), Some(false));
        assert_eq!(sides("declare_charges"), Some(false));
        assert_eq!(sides("fight_melees"), Some(false));
        assert_eq!(sides("heroics"), Some(false));
        assert_eq!(sides("point_blank"), None);
    }

    /// The id of the ruleset's fact `name`.
    fn fact_id(rs: &crate::ir::Ruleset, name: &str) -> u16 {
        rs.facts.iter().position(|f| f.name == name).expect(name) as u16
    }

    /// The body of decision `name` of `rs`.
    fn choice<'a>(rs: &'a crate::ir::Ruleset, name: &str) -> &'a crate::ir::ChoiceDef {
        let d = rs.decisions.iter().find(|d| d.name == name).expect(name);
        d.choice.as_ref().expect("a choice")
    }

    /// The split a `pick` decision of `rs` is scanned by.
    fn split(rs: &crate::ir::Ruleset, name: &str) -> Split {
        let ch = choice(rs, name);
        Split::of(rs, ch, ch.slots as usize)
    }

    /// Point blank (contact first) and melee (contact after the side test)
    /// have their contact test made by the scan; shooting and charges do
    /// not touch. A fact counts only when derived as `in_contact` of its
    /// parameters in order (either way round at the call), without a hook.
    #[test]
    fn a_pick_that_asks_for_contact_is_split_so() {
        use crate::ir::{Builtin, Ex};
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let contact = |name: &str| split(rs, name).contact;
        assert_eq!(contact("point_blank"), Some(false));
        assert_eq!(contact("fight_melees"), Some(false));
        assert_eq!(contact("shooting"), None);
        assert_eq!(contact("declare_charges"), None);
        let engaged = fact_id(rs, "engaged");
        let fact = |a, b| Ex::Fact(engaged, vec![Ex::Local(a), Ex::Local(b)]);
        assert_eq!(super::contact_test(rs, &fact(3, 4), 3, 4), Some(false));
        assert_eq!(super::contact_test(rs, &fact(4, 3), 3, 4), Some(true));
        assert_eq!(super::contact_test(rs, &fact(3, 5), 3, 4), None);
        let touch = Ex::Builtin(Builtin::InContact, vec![Ex::Local(4), Ex::Local(3)]);
        assert_eq!(super::contact_test(rs, &touch, 3, 4), Some(true));
        // Derived the other way round, or with a hook: not the measure.
        let mut turned = rs.clone();
        let f = &mut turned.facts[engaged as usize];
        f.battle.as_mut().expect("derived").body =
            Ex::Builtin(Builtin::InContact, vec![Ex::Local(1), Ex::Local(0)]);
        assert_eq!(super::contact_test(&turned, &fact(3, 4), 3, 4), None);
        let mut hooked = rs.clone();
        hooked.facts[engaged as usize].hook = Some(0);
        assert_eq!(super::contact_test(&hooked, &fact(3, 4), 3, 4), None);
    }

    /// Shooting's `in_range(s, t)` (`s.range != none and distance(s, t) <=
    /// s.range`) is bounded by the shooter, in TVBD and Thistle alike, and
    /// so is TVBD's charge declaration, by `can_reach(u, t)`
    /// (`reachable(u, t, 3, if position(u, t) is to_front then 0 else
    /// 45)`: its wheel cannot fail); point blank and melee are not. A
    /// limit that reads the second unit, a wheel that may fail, a hook, or
    /// a fact asked the other way round with its distance so too, are told
    /// apart.
    #[test]
    fn a_pick_that_asks_for_range_is_bounded_by_it() {
        use crate::ir::{Bin, Builtin, Ex};
        use crate::value::Value;
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let bound = |rs: &crate::ir::Ruleset, name: &str| split(rs, name).bound;
        let b = bound(rs, "shooting").expect("shooting is bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 1, false));
        let b = bound(rs, "declare_charges").expect("charges are bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 0, false));
        assert!(matches!(b.limit, Ex::Const(Value::Int(3))), "{:?}", b.limit);
        for name in ["point_blank", "fight_melees"] {
            assert!(bound(rs, name).is_none(), "{name}");
        }
        // A wheel that may fail (arithmetic on a stat), or may not be a
        // number (a stat, which may be `none`), leaves the charge
        // unbounded, and a reach the target settles does too.
        let can_reach = fact_id(rs, "can_reach") as usize;
        let reach_body = |limit: Ex, wheel: Ex| {
            let mut r = rs.clone();
            let body = &mut r.facts[can_reach].battle.as_mut().expect("derived").body;
            let Ex::Builtin(Builtin::Reachable, args) = body else {
                panic!("can_reach is reachable(...): {body:?}")
            };
            (args[2], args[3]) = (limit, wheel);
            r
        };
        let three = || Ex::Const(Value::Int(3));
        let moves = rs.stats.iter().position(|s| s == "move").expect("move") as u16;
        let stat = |l: u16| Ex::Stat(Box::new(Ex::Local(l)), moves);
        let sum = Ex::Bin(
            Bin::Add,
            Box::new(stat(0)),
            Box::new(Ex::Const(Value::Int(0))),
        );
        assert!(bound(&reach_body(three(), sum), "declare_charges").is_none());
        assert!(bound(&reach_body(three(), stat(0)), "declare_charges").is_none());
        assert!(bound(&reach_body(stat(1), three()), "declare_charges").is_none());
        let b = bound(&reach_body(stat(0), three()), "declare_charges");
        assert!(b.is_some(), "a reach the charger settles");
        let thistle = &ruleset("rules/thistle_lily_and_rose.muster");
        let b = bound(thistle, "shooting").expect("Thistle's shooting is bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 1, false));

        let in_range = fact_id(rs, "in_range");
        let fact = |a, b| Ex::Fact(in_range, vec![Ex::Local(a), Ex::Local(b)]);
        // Asked of (t, s): the first unit is the fact's second parameter,
        // whose range is not what it reads.
        assert!(super::bound_test(rs, &fact(4, 3), 3, 4).is_none());
        assert!(super::bound_test(rs, &fact(3, 5), 3, 4).is_none());
        let mut flipped = rs.clone();
        let body = &mut flipped.facts[in_range as usize]
            .battle
            .as_mut()
            .expect("derived")
            .body;
        // With its parameters swapped (`b.range != none and distance(b, a)
        // <= b.range` for in_range(a, b)), asked as in_range(t, s) it is
        // bounded by the pick's first unit, passed second; asked as
        // in_range(s, t), not.
        *body = crate::odds::map(body, &mut |x| match x {
            Ex::Local(0) => Some(Ex::Local(1)),
            Ex::Local(1) => Some(Ex::Local(0)),
            _ => None,
        });
        let b = super::bound_test(&flipped, &fact(4, 3), 3, 4).expect("bounded by s");
        assert_eq!((b.first, b.swapped), (1, false));
        assert!(super::bound_test(&flipped, &fact(3, 4), 3, 4).is_none());
        let mut hooked = rs.clone();
        hooked.facts[in_range as usize].hook = Some(0);
        assert!(super::bound_test(&hooked, &fact(3, 4), 3, 4).is_none());
    }

    /// TVBD's `control e: zone_of_control(e, u)` (`enemies(e, u) and not
    /// (e is Commander) and not e.routed and distance(e, u) <= 3 and ...`)
    /// is bounded by the mover, passed second, at 3: the parts before the
    /// distance read the enemy but cannot fail. Asked with the enemy first,
    /// its two parts of the enemy alone are the PRE. A part before the
    /// distance that may fail (arithmetic) leaves it unbounded.
    #[test]
    fn a_zone_of_control_is_bounded_by_its_distance() {
        use crate::eval::cannot_fail;
        use crate::ir::{Bin, Ex};
        use crate::value::Value;
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let ch = choice(rs, "move");
        let (e, cond) = ch.control.as_ref().expect("a control clause");
        let u = ch.vars[0];
        let b = super::bound_test(rs, cond, u, *e).expect("bounded by the mover");
        assert_eq!((b.first, b.pre.len(), b.swapped), (1, 0, true));
        assert!(matches!(b.limit, Ex::Const(Value::Int(3))), "{:?}", b.limit);
        let b = super::bound_test(rs, cond, *e, u).expect("bounded by the enemy");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 2, false));

        let zoc = rs.defines.iter().position(|d| d.name == "zone_of_control");
        let zoc = zoc.expect("zone_of_control");
        let resolve = rs.states.iter().position(|s| s.name == "resolve");
        let resolve = resolve.expect("resolve") as u16;
        let local = |s: u16| Box::new(Ex::Local(s));
        let e_resolve = || Box::new(Ex::State(local(0), resolve));
        let sum = Ex::Bin(Bin::Add, e_resolve(), Box::new(Ex::Const(Value::Int(0))));
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), e_resolve());
        let mut failing = rs.clone();
        let body = &mut failing.defines[zoc].body;
        *body = Ex::Bin(Bin::And, Box::new(may_fail.clone()), Box::new(body.clone()));
        assert!(super::bound_test(&failing, cond, u, *e).is_none());

        // What cannot fail: a state, a side, a type of a unit known to be
        // one; a define of those (`enemies`); a fact with a default.
        let units = 0b11;
        let compare = Ex::Bin(Bin::Ge, e_resolve(), e_resolve());
        assert!(cannot_fail(rs, &compare, units));
        assert!(
            !cannot_fail(rs, &compare, 0b10),
            "local 0 is not known a unit"
        );
        assert!(!cannot_fail(rs, &may_fail, units));
        let enemies = rs.defines.iter().position(|d| d.name == "enemies");
        let enemies = enemies.expect("core's enemies") as u16;
        let call = Ex::Define(enemies, vec![Ex::Local(0), Ex::Local(1)]);
        assert!(cannot_fail(rs, &call, units));
        let swapped = Ex::Define(enemies, vec![Ex::Local(1), Ex::Local(2)]);
        assert!(
            !cannot_fail(rs, &swapped, units),
            "local 2 is not known a unit"
        );
        let charging = Ex::Fact(fact_id(rs, "charging"), vec![Ex::Local(0)]);
        assert!(cannot_fail(rs, &charging, units));
        let mut no_default = rs.clone();
        no_default.facts[fact_id(rs, "charging") as usize].default = None;
        assert!(!cannot_fail(&no_default, &charging, units));
        // A measure of two units cannot fail, nor a fact the table derives
        // as one (`engaged(a, b)`: `in_contact(a, b)`); another measure
        // may (the nearest enemy, of a unit off the table), as may one of
        // a local not known to be a unit.
        use crate::ir::Builtin;
        let measure =
            |b, args: &[u16]| Ex::Builtin(b, args.iter().map(|l| Ex::Local(*l)).collect());
        assert!(cannot_fail(rs, &measure(Builtin::Zone, &[0, 1]), units));
        assert!(!cannot_fail(rs, &measure(Builtin::Zone, &[0, 2]), units));
        assert!(!cannot_fail(
            rs,
            &measure(Builtin::NearestEnemy, &[0]),
            units
        ));
        let engaged = Ex::Fact(fact_id(rs, "engaged"), vec![Ex::Local(0), Ex::Local(1)]);
        assert!(cannot_fail(rs, &engaged, units));
    }

    /// A bound turns away only pairs plainly further apart than its limit.
    /// Two square bases corner to corner along the line of their centres
    /// (where the centres' bound is as tight as it gets) exactly 3 apart,
    /// or a shade more that the rules still see as 3, are kept; 1/16
    /// further apart, they are turned away. A pair one of which is
    /// off the table is turned away unless the limit is `unlimited`.
    /// Where PRE fails, every pair is.
    #[test]
    fn a_bound_keeps_bases_at_its_limit() {
        use super::Reach;
        use crate::field::Field;
        let at = |x: f64| Base::new(Pt::new(x, 10.0), 45.0, 1.0, 1.0);
        let r = at(0.0).radius();
        let field = |gap: f64| {
            let bases = vec![at(10.0), at(10.0 + 2.0 * r + gap)];
            let f = Field::new(
                45.0,
                30.0,
                Default::default(),
                bases,
                vec![0.0; 2],
                vec![0, 1],
                [0, 1, 2],
            );
            let d = f.bases[0].distance(&f.bases[1]);
            assert!((d - gap).abs() < 1e-9, "corner to corner: {d}");
            f
        };
        let exact = field(3.0);
        assert!(!Reach::within(3).turns_away(&exact, 0, 1));
        assert!(!Reach::within(3).turns_away(&exact, 1, 0));
        assert!(Reach::None.turns_away(&exact, 0, 1));
        // A shade further, the rules still see 3 (distances are kept to
        // 1/64): kept too.
        let shade = field(3.0 + 1.0 / 130.0);
        let d = shade.bases[0].distance(&shade.bases[1]);
        assert_eq!(crate::field::to_value(d), crate::value::Value::Int(3));
        assert!(!Reach::within(3).turns_away(&shade, 0, 1));
        let further = field(3.0 + 1.0 / 16.0);
        assert!(Reach::within(3).turns_away(&further, 0, 1));
        // Off the table, the distance is `unlimited`: more than any other
        // limit (turned away), not more than `unlimited` (asked).
        let mut off = field(1.0);
        off.on_table[1] = false;
        use crate::value::{Value, UNLIMITED};
        let d = off.of_two(crate::ir::Builtin::Distance, 0, 1);
        assert_eq!(d, Some(Value::Int(UNLIMITED)));
        assert!(Reach::within(3).turns_away(&off, 0, 1));
        assert!(Reach::within(3).turns_away(&off, 1, 0));
        assert!(Reach::within(UNLIMITED - 1).turns_away(&off, 0, 1));
        assert!(!Reach::within(UNLIMITED).turns_away(&off, 0, 1));
        assert!(!Reach::within(UNLIMITED).turns_away(&further, 0, 1));
    }

    /// A `manoeuvre` condition that reads only the unit, the manoeuvre and
    /// what does not change in a game (types, qualities) is answered once
    /// per unit and manoeuvre: TVBD's and Matchlocks'; not Thistle's (a
    /// limbered gun, a group's size), nor one that also reads a unit's
    /// state or the deciding side.
    #[test]
    fn a_manoeuvre_condition_of_types_alone_holds_for_the_game() {
        use crate::ir::{Bin, Ex, Ruleset};
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

    /// The buffer rule for enemies `es` (as the game applies it): an end
    /// no nearer than `buffer` to each, or, for one already nearer at the
    /// start, no nearer than it was; by how much it falls short.
    fn shortfall(start: &Base, end: &Base, es: &[Base], buffer: f64) -> Option<f64> {
        es.iter().find_map(|e| {
            let before = start.distance(e);
            let after = end.distance(e);
            let least = if before >= buffer - 1e-9 {
                buffer - 1e-9
            } else {
                before - 1e-9
            };
            (after < least).then_some(least - after)
        })
    }

    /// Skipping the quarters a shortfall rules out finds the advance that
    /// trying every quarter finds, over random starts, enemies around the
    /// line of advance, and paths blocked at random; and it skips.
    #[test]
    fn furthest_advance_skips_only_what_the_buffer_rules_out() {
        let mut r = Rng(7);
        let (mut asked, mut asked_each, mut found, mut none) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let start = Base::new(
                Pt::new(r.range(0.0, 40.0), r.range(0.0, 40.0)),
                r.range(0.0, 360.0),
                r.range(1.0, 4.0),
                r.range(0.5, 2.0),
            );
            let allowance = r.range(0.0, 12.0);
            let buffer = [1.0, 2.0, 0.5][(r.next() % 3) as usize];
            let es: Vec<Base> = (0..(r.next() % 4))
                .map(|_| {
                    let ahead = start.advanced(r.range(-2.0, 14.0));
                    let off = ahead.shifted(r.range(-4.0, 4.0));
                    Base::new(
                        off.centre,
                        r.range(0.0, 360.0),
                        r.range(1.0, 4.0),
                        r.range(0.5, 2.0),
                    )
                })
                .collect();
            let blocked: Vec<bool> = (0..64).map(|_| r.next().is_multiple_of(3)).collect();
            let clear = |d: f64| -> Result<Option<f64>, ()> {
                Ok((!blocked[(d * 4.0) as usize % 64]).then_some(d))
            };
            let mut calls = 0;
            let got = furthest_advance(
                allowance,
                |d| {
                    calls += 1;
                    shortfall(&start, &start.advanced(d), &es, buffer)
                },
                clear,
            )
            .unwrap();
            // Every quarter tried in turn.
            let mut want = None;
            let mut d = (allowance * 4.0).floor() / 4.0;
            while d > 0.0 {
                asked_each += 1;
                if shortfall(&start, &start.advanced(d), &es, buffer).is_none() {
                    if let Some(x) = clear(d).unwrap() {
                        want = Some((d, x));
                        break;
                    }
                }
                d -= 0.25;
            }
            assert_eq!(got, want, "{start:?} {allowance} {buffer} {es:?}");
            asked += calls;
            match got {
                Some(_) => found += 1,
                None => none += 1,
            }
        }
        assert!(found > 5_000 && none > 1_000, "{found} found, {none} none");
        assert!(
            asked * 10 < asked_each * 8,
            "{asked} asked, {asked_each} each"
        );
    }
}
