//! Decks and cards in battles: `shuffle` builds the pile from the cards
//! whose `when`/`where` hold at that moment and shuffles it with the game's
//! one generator; `draw` turns and resolves the top card (`until N left`:
//! all but N); piles last from turn to turn. Each test plays a tiny ruleset
//! of its own on a four-unit scenario and reads the log (as JSON events and
//! as narrative). The shuffle is checked twice: against Fisher–Yates
//! computed here on the same seeded generator, and by the frequencies of
//! the orders over 6,000 seeds.

#![allow(clippy::result_large_err)]

use crate::common;

use muster::base::value::Value;
use muster::battle::game::{Event, Game, Prepared};
use muster::battle::scenario::Scenario;
use muster::front::diagnostic::render_plain;
use muster::Build;
use serde_json::Value as Json;

/// What every test ruleset shares: two sides, leaders and foot, bases, and
/// the procedures the cards run.
const BASE: &str = r#"
ruleset decks_test "Deck tests"
import core
import battle
sides red, blue
class leader, troops
stat resolve
units (resolve) {
  Leader : leader = 1
  Foot   : troops = 3
}
define base_width(u: unit): int = 2
define base_depth(u: unit): int = 1
state activated: int = 0
state fresh: bool = true
side_state bonuses: int = 0
side_state won: bool = false each turn
side_state turns: int = 0

procedure activate(u: unit) { u.activated += 1 }
procedure tire(u: unit) { u.fresh = false }
procedure bonus_for(s: side) { s.bonuses += 1 }
procedure count_turn() { red.turns += 1 }
procedure crown(s: side) { s.won = true }
procedure dice_off() {
  if d6 >= d6 { red.won = true } else { blue.won = true }
}
procedure only_foot(u: unit) { require u is Foot else "only foot may act on this card" }
"#;

/// Two leaders and two foot; `TURNS` is replaced by the turn limit.
const SCENARIO: &str = r#"
turn_limit = TURNS
[table]
width = 20
depth = 20
[[army]]
name = "Red"
[[army.command]]
name = "Red"
units = [
  { type = "Leader", at = [5, 2], name = "Sir Red" },
  { type = "Foot", at = [10, 2], name = "Red Foot" },
]
[[army]]
name = "Blue"
[[army.command]]
name = "Blue"
units = [
  { type = "Leader", at = [5, 18], name = "Lord Blue" },
  { type = "Foot", at = [10, 18], name = "Blue Foot" },
]
"#;

fn build(rules: &str) -> Build {
    let text = format!("{BASE}{rules}");
    match muster::build_text("decks.muster", &text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", common::render_here(&d, &s)),
    }
}

/// The scenario, `turns` turns long.
fn scenario(b: &mut Build, turns: u32) -> Scenario {
    let text = SCENARIO.replace("TURNS", &turns.to_string());
    muster::battle::scenario::read(&b.ruleset, "decks.toml", &text, &mut b.sources)
        .unwrap_or_else(|d| panic!("{}", render_plain(&d, &b.sources)))
}

fn prepared<'r>(b: &'r Build, sc: &Scenario) -> Prepared<'r> {
    Prepared::new(&b.ruleset, sc).unwrap_or_else(|d| panic!("{}", render_plain(&d, &b.sources)))
}

/// The ruleset's battle on the scenario, with a seed.
fn play<'r>(b: &'r Build, sc: &Scenario, seed: u64) -> Game<'r> {
    prepared(b, sc)
        .play(seed, true)
        .unwrap_or_else(|d| panic!("{}", render_plain(&[d], &b.sources)))
}

/// The log as JSON events, cut into turns (the set-up steps are turn 0).
fn turns(g: &Game) -> Vec<Vec<Json>> {
    let mut out = vec![Vec::new()];
    for e in serde_json::to_value(&g.log).unwrap().as_array().unwrap() {
        if e["event"] == "turn" {
            out.push(Vec::new());
        } else {
            out.last_mut().unwrap().push(e.clone());
        }
    }
    out
}

fn of_kind<'a>(events: &'a [Json], kind: &str) -> Vec<&'a Json> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

/// The cards turned, in order, as `card` or `card (on)`.
fn cards_turned(events: &[Json]) -> Vec<String> {
    of_kind(events, "card")
        .iter()
        .map(|e| match e["on"].as_str() {
            Some(on) => format!("{} ({on})", e["card"].as_str().unwrap()),
            None => e["card"].as_str().unwrap().to_string(),
        })
        .collect()
}

fn side_state(b: &Build, g: &Game, side: &str, state: &str) -> Value {
    let rs = &b.ruleset;
    let s = rs.side(side).unwrap() as usize;
    let i = rs.side_state(state).unwrap() as usize;
    g.world.side_state[s * rs.side_states.len() + i]
}

const THREE: &str = r#"
deck three "three plain cards" {
  card a { }
  card b { }
  card c { }
}
"#;

#[test]
fn draw_until_one_left_resolves_all_but_the_last_card() {
    let mut b = build(&format!(
        "{THREE}
sequence {{
  turn {{
    step \"Cards\" {{ shuffle three  draw three until 1 left }}
  }} until any s in sides: s.defeated
}}
"
    ));
    let sc = scenario(&mut b, 5);
    let g = play(&b, &sc, 11);
    let t = turns(&g);
    assert_eq!(t.len(), 6, "set-up and 5 turns");
    for (i, events) in t.iter().enumerate().skip(1) {
        let shuffles = of_kind(events, "shuffle");
        assert_eq!(shuffles.len(), 1, "turn {i}");
        assert_eq!(shuffles[0]["deck"], "three");
        assert_eq!(shuffles[0]["cards"], 3);
        let turned = cards_turned(events);
        assert_eq!(turned.len(), 2, "turn {i}: {turned:?}");
        let unturned = of_kind(events, "unturned");
        assert_eq!(unturned.len(), 1, "turn {i}");
        let left: Vec<&str> = unturned[0]["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(left.len(), 1);
        // The three cards, each once: two turned and the one left.
        let mut all: Vec<&str> = turned.iter().map(String::as_str).collect();
        all.extend(&left);
        all.sort();
        assert_eq!(all, ["a", "b", "c"], "turn {i}");
        // A card without `for each` has no `on` in the JSON.
        assert!(of_kind(events, "card")
            .iter()
            .all(|e| e.get("on").is_none()));
    }
    // The narrative tells the same story.
    let text = g.narrative();
    assert!(
        text.contains("   the three deck is shuffled: 3 cards\n"),
        "{text}"
    );
    assert!(text.contains("== three: "), "{text}");
    assert!(text.contains("   three: left unturned: "), "{text}");
}

#[test]
fn when_and_where_decide_which_cards_go_in_at_each_shuffle() {
    let mut b = build(
        r#"
deck play {
  card leader for each l in units where l is Leader and l.fresh { do tire(l) }
  card late when red.turns >= 2 { do activate(u) for each u in units where u is Foot }
}
sequence {
  turn {
    step "Count" { do count_turn() }
    step "Cards" { shuffle play  draw play until 0 left }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 3);
    let g = play(&b, &sc, 5);
    let t = turns(&g);
    let counts: Vec<i64> = t[1..]
        .iter()
        .map(|e| of_kind(e, "shuffle")[0]["cards"].as_i64().unwrap())
        .collect();
    // Turn 1: both leaders are fresh and `late` is out. Turn 2 on: the
    // leaders were tired, and `late` is in.
    assert_eq!(counts, [2, 1, 1]);
    let mut first = cards_turned(&t[1]);
    first.sort();
    assert_eq!(first, ["leader (Lord Blue)", "leader (Sir Red)"]);
    // Membership was fixed at the shuffle: tiring the first leader did not
    // take the second leader's card out of the pile.
    assert_eq!(cards_turned(&t[2]), ["late"]);
    // `for each ... where` on a `do` in a card: only the foot activate.
    let acts: Vec<String> = of_kind(&t[2], "procedure")
        .iter()
        .filter(|e| e["name"] == "activate")
        .map(|e| e["args"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(acts, ["Red Foot", "Blue Foot"]);
    // The JSON names a `for each` card's unit.
    let leader = of_kind(&t[1], "card")[0];
    assert!(leader["on"].is_string(), "{leader}");
}

#[test]
fn copies_put_identical_cards_in_the_deck() {
    let mut b = build(
        r#"
deck play {
  card skirmish copies 3 { do count_turn() }
  card leader for each l in units where l is Leader { }
  card rally copies 2 for each s in sides { }
}
sequence {
  turn {
    step "Cards" { shuffle play  draw play until 0 left }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 2);
    let g = play(&b, &sc, 9);
    let t = turns(&g);
    for events in &t[1..] {
        // 3 skirmish + 2 leaders + 2 copies for each of 2 sides.
        assert_eq!(of_kind(events, "shuffle")[0]["cards"], 9);
        let turned = cards_turned(events);
        let n = |c: &str| turned.iter().filter(|x| *x == c).count();
        assert_eq!(n("skirmish"), 3, "{turned:?}");
        assert_eq!(n("rally (Red)"), 2, "{turned:?}");
        assert_eq!(n("rally (Blue)"), 2, "{turned:?}");
        assert_eq!(n("leader (Sir Red)"), 1, "{turned:?}");
        // Nothing is left, so nothing is reported unturned.
        assert!(of_kind(events, "unturned").is_empty());
    }
    // Each skirmish card ran its action: 3 a turn over 2 turns.
    assert_eq!(side_state(&b, &g, "red", "turns"), Value::Int(6));
}

#[test]
fn a_deck_s_parameters_are_bound_by_draw() {
    let mut b = build(
        r#"
deck bonus(s: side) "the Bonus deck: the winner of the dice-off draws" {
  card extra copies 5 { do bonus_for(s) }
}
sequence {
  turn {
    step "Bonus" {
      shuffle bonus
      draw bonus(blue)
      do crown(red)
      draw bonus(s) for each s in sides where s.won
    }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 3);
    let g = play(&b, &sc, 1);
    // Each turn: one card for blue, then one for red (the side crowned).
    assert_eq!(side_state(&b, &g, "blue", "bonuses"), Value::Int(3));
    assert_eq!(side_state(&b, &g, "red", "bonuses"), Value::Int(3));
    let t = turns(&g);
    let args: Vec<&str> = of_kind(&t[1], "procedure")
        .iter()
        .filter(|e| e["name"] == "bonus_for")
        .map(|e| e["args"][0].as_str().unwrap())
        .collect();
    assert_eq!(args, ["blue", "red"]);
}

#[test]
fn where_on_a_repetition_is_checked_just_before_it() {
    let mut b = build(
        r#"
deck play { card only { do count_turn() } }
sequence {
  turn {
    step "Crown" {
      shuffle play
      do crown(s) for each s in sides where not any t in sides: t.won
    }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 1);
    let g = play(&b, &sc, 1);
    // Red is crowned first; by blue's turn a side has won, so blue is not.
    assert_eq!(side_state(&b, &g, "red", "won"), Value::Bool(true));
    assert_eq!(side_state(&b, &g, "blue", "won"), Value::Bool(false));
}

#[test]
fn a_deck_never_shuffled_again_runs_out() {
    let mut b = build(
        r#"
deck events "Special Events: never reshuffled" {
  card storm { }
  card fog { }
  card plague { }
}
sequence {
  step "Set-up" { shuffle events }
  turn {
    step "Events" { draw events }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 5);
    let g = play(&b, &sc, 4);
    let t = turns(&g);
    assert_eq!(of_kind(&t[0], "shuffle")[0]["cards"], 3);
    let mut seen = Vec::new();
    for events in &t[1..4] {
        let turned = cards_turned(events);
        assert_eq!(turned.len(), 1);
        seen.extend(turned);
        assert!(of_kind(events, "empty").is_empty());
    }
    seen.sort();
    assert_eq!(seen, ["fog", "plague", "storm"]);
    for events in &t[4..] {
        assert!(cards_turned(events).is_empty());
        let empty = of_kind(events, "empty");
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0]["deck"], "events");
    }
    assert!(g.narrative().contains("   the events deck is empty\n"));
}

#[test]
fn a_draw_from_an_empty_pile_does_nothing() {
    // The pile starts empty in every game: a draw before any shuffle.
    let mut b = build(
        r#"
deck play { card only { do count_turn() } }
sequence {
  turn {
    step "Draw" { draw play }
    step "Shuffle" { shuffle play }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 2);
    let g = play(&b, &sc, 1);
    let t = turns(&g);
    assert_eq!(of_kind(&t[1], "empty").len(), 1);
    assert!(cards_turned(&t[1]).is_empty());
    // Turn 2 draws the card shuffled at the end of turn 1.
    assert_eq!(cards_turned(&t[2]), ["only"]);
    assert_eq!(side_state(&b, &g, "red", "turns"), Value::Int(1));
}

// ---------------------------------------------------------------- after each card

#[test]
fn after_each_card_runs_after_every_turned_card() {
    // The block stands between the cards: where it is written is no matter.
    let mut b = build(
        r#"
side_state after_cards: int = 0
procedure after_card() { red.after_cards += 1 }
deck play {
  card leader for each l in units where l is Leader { do activate(l) }
  after each card {
    do after_card()
    do activate(u) for each u in units where u is Foot
  }
  card bonus copies 2 { do count_turn() }
}
sequence {
  turn {
    step "Cards" { shuffle play  draw play until 1 left }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 3);
    let g = play(&b, &sc, 7);
    // Four cards a turn (two leaders, two bonus), three turned: the block
    // runs three times a turn, not for the card left unturned.
    for events in &turns(&g)[1..] {
        assert_eq!(cards_turned(events).len(), 3);
        let after = of_kind(events, "procedure")
            .iter()
            .filter(|e| e["name"] == "after_card")
            .count();
        assert_eq!(after, 3);
    }
    assert_eq!(side_state(&b, &g, "red", "after_cards"), Value::Int(9));
    let block = b.ruleset.decks[0].after_each.as_ref().unwrap();
    assert_eq!(block.actions.len(), 2);
    // Its `for each ... where` repeats as a step's does: each foot once a card.
    let rs = &b.ruleset;
    let activated = rs.state("activated").unwrap() as usize;
    let foot = g
        .world
        .units
        .iter()
        .position(|u| u.name == "Red Foot")
        .unwrap();
    assert_eq!(
        g.world.state[foot * rs.states.len() + activated],
        Value::Int(9)
    );
}

#[test]
fn after_each_card_reads_the_deck_s_parameters() {
    // Written before the cards this time.
    let mut b = build(
        r#"
deck bonus(s: side) {
  after each card { do bonus_for(s) }
  card extra copies 5 { do count_turn() }
}
sequence {
  turn {
    step "Bonus" { shuffle bonus  draw bonus(blue)  draw bonus(blue)  draw bonus(red) }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 1);
    let g = play(&b, &sc, 2);
    assert_eq!(side_state(&b, &g, "blue", "bonuses"), Value::Int(2));
    assert_eq!(side_state(&b, &g, "red", "bonuses"), Value::Int(1));
    assert_eq!(side_state(&b, &g, "red", "turns"), Value::Int(3));
}

#[test]
fn after_each_card_runs_once_the_card_and_what_it_drew_are_resolved() {
    // Each mark appends a digit, so the trace spells the order of events.
    let mut b = build(
        r#"
side_state trace: int = 0
procedure mark(k: int) { red.trace = red.trace * 10 + k }
deck play {
  card first { do mark(1)  draw bonus(red)  do mark(2) }
  after each card { do mark(9) }
}
deck bonus(s: side) {
  card extra { do mark(3) }
  after each card { do mark(4) }
}
sequence {
  turn {
    step "Cards" { shuffle play  shuffle bonus  draw play }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 1);
    let g = play(&b, &sc, 1);
    // play's card: 1; bonus's card: 3, then bonus's block: 4; the rest of
    // play's card: 2; play's block last: 9.
    assert_eq!(side_state(&b, &g, "red", "trace"), Value::Int(13429));
}

#[test]
fn after_each_card_does_not_run_on_an_empty_pile() {
    let mut b = build(
        r#"
deck play {
  card only { }
  after each card { do count_turn() }
}
sequence {
  turn {
    step "Draw" { draw play  draw play }
    step "Shuffle" { shuffle play }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 2);
    let g = play(&b, &sc, 1);
    let t = turns(&g);
    // Turn 1: two empty draws; turn 2: the card, then an empty draw.
    assert_eq!(of_kind(&t[1], "empty").len(), 2);
    assert_eq!(cards_turned(&t[2]), ["only"]);
    assert_eq!(of_kind(&t[2], "empty").len(), 1);
    assert_eq!(side_state(&b, &g, "red", "turns"), Value::Int(1));
}

#[test]
fn a_problem_inside_after_each_card_names_the_block_and_the_step() {
    let mut b = build(
        r#"
deck play {
  card leader for each l in units where l is Leader { }
  after each card { do only_foot(u) for each u in units where u is Leader }
}
sequence {
  turn {
    step "Cards" { shuffle play  draw play }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 2);
    let prep = prepared(&b, &sc);
    let Err(d) = prep.play(1, true) else {
        panic!("the block's requirement should stop the battle");
    };
    assert_eq!(d.code, "muster::requirement");
    assert!(
        d.message.contains("(turn 1, step \"Cards\")"),
        "{}",
        d.message
    );
    let out = render_plain(&[d], &b.sources);
    assert!(
        out.contains("while resolving the `after each card` block of deck `play`"),
        "{out}"
    );
    assert!(!out.contains("while resolving this card"), "{out}");
    assert!(out.contains("during this step"), "{out}");
    assert!(out.contains("only foot may act on this card"), "{out}");
}

#[test]
fn an_after_each_card_that_draws_its_own_deck_forever_is_stopped() {
    let mut b = build(
        r#"
deck again {
  card again { }
  after each card { shuffle again  draw again }
}
sequence {
  turn { step "Cards" { shuffle again  draw again } }
  until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 1);
    let prep = prepared(&b, &sc);
    let Err(d) = prep.play(1, false) else {
        panic!("the endless block should stop the battle");
    };
    assert_eq!(d.code, "muster::battle");
    assert!(d.message.contains("nest more than"), "{}", d.message);
}

/// The order a game turns the three cards in, for a seed.
fn order(prep: &Prepared, seed: u64) -> Vec<String> {
    let g = prep.play(seed, true).unwrap();
    g.log
        .iter()
        .filter_map(|e| match e {
            Event::Card { card, .. } => Some(card.clone()),
            _ => None,
        })
        .collect()
}

fn three_all_drawn() -> Build {
    build(&format!(
        "{THREE}
sequence {{
  turn {{ step \"Cards\" {{ shuffle three  draw three until 0 left }} }}
  until any s in sides: s.defeated
}}
"
    ))
}

#[test]
fn the_same_seed_turns_the_same_cards_and_the_shuffle_is_fisher_yates() {
    let mut b = three_all_drawn();
    let sc = scenario(&mut b, 1);
    let prep = prepared(&b, &sc);
    assert_eq!(order(&prep, 42), order(&prep, 42));
    let orders: std::collections::HashSet<Vec<String>> = (0..40).map(|s| order(&prep, s)).collect();
    assert!(orders.len() > 1, "different seeds, different orders");
    // Nothing else draws from the generator before the shuffle, so the
    // order is Fisher–Yates on the seed's stream, computed here.
    for seed in 0..200 {
        let mut rng = muster::base::rng::Rng::new(seed);
        let mut deck = vec!["a", "b", "c"];
        for i in (1..deck.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            deck.swap(i, j);
        }
        assert_eq!(order(&prep, seed), deck, "seed {seed}");
    }
}

#[test]
fn every_order_of_three_cards_is_equally_likely() {
    let mut b = three_all_drawn();
    let sc = scenario(&mut b, 1);
    let prep = prepared(&b, &sc);
    let n = 6_000u64;
    let mut orders: std::collections::HashMap<Vec<String>, u64> = Default::default();
    let mut last: std::collections::HashMap<String, u64> = Default::default();
    for seed in 0..n {
        let o = order(&prep, seed);
        assert_eq!(o.len(), 3);
        *last.entry(o[2].clone()).or_default() += 1;
        *orders.entry(o).or_default() += 1;
    }
    assert_eq!(orders.len(), 6, "{orders:?}");
    // Each order 1/6: 1,000 expected, standard error sqrt(n p (1-p)) ~ 28.9.
    let se = (n as f64 * (1.0 / 6.0) * (5.0 / 6.0)).sqrt();
    for (o, k) in &orders {
        let dev = (*k as f64 - n as f64 / 6.0).abs();
        assert!(dev < 4.5 * se, "{o:?}: {k} of {n}");
    }
    // Each card last 1/3 of the time: 2,000 expected, standard error ~ 36.5.
    let se = (n as f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
    assert_eq!(last.len(), 3);
    for (c, k) in &last {
        let dev = (*k as f64 - n as f64 / 3.0).abs();
        assert!(dev < 4.5 * se, "{c} last {k} of {n}");
    }
}

#[test]
fn a_problem_inside_a_card_says_the_turn_the_step_and_the_card() {
    let mut b = build(
        r#"
deck play {
  card leader for each l in units where l is Leader { do only_foot(l) }
}
sequence {
  turn {
    step "Cards" { shuffle play  draw play }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 2);
    let prep = prepared(&b, &sc);
    let Err(d) = prep.play(1, true) else {
        panic!("the card's requirement should stop the battle");
    };
    assert_eq!(d.code, "muster::requirement");
    assert!(
        d.message.contains("(turn 1, step \"Cards\")"),
        "{}",
        d.message
    );
    let out = render_plain(&[d], &b.sources);
    assert!(
        out.contains("while resolving this card of deck `play`"),
        "{out}"
    );
    assert!(out.contains("during this step"), "{out}");
    assert!(out.contains("only foot may act on this card"), "{out}");
}

#[test]
fn a_card_that_draws_itself_forever_is_stopped() {
    let mut b = build(
        r#"
deck again { card again { shuffle again  draw again } }
sequence {
  turn { step "Cards" { shuffle again  draw again } }
  until any s in sides: s.defeated
}
"#,
    );
    let sc = scenario(&mut b, 1);
    let prep = prepared(&b, &sc);
    let Err(d) = prep.play(1, false) else {
        panic!("the endless card should stop the battle");
    };
    assert_eq!(d.code, "muster::battle");
    assert!(d.message.contains("nest more than"), "{}", d.message);
}

#[test]
fn deck_words_are_not_reserved() {
    // `draw` as an outcome symbol, and the other words of decks as names.
    let b = build(
        r#"
state left: int = 0
state copies: int = 1
define card(u: unit): bool = u.left == 0
define deck(u: unit): int = u.copies
procedure duel(a: unit, b: unit) outcomes { winner: attacker | defender | draw } {
  outcome winner = if d6 > 3 then attacker else draw
}
state after: int = 0
procedure each_card() { }
deck shuffle { card draw when true { do count_turn() } }
deck after { card after { } after each card { do each_card() } }
sequence {
  turn {
    step "Duel" { shuffle shuffle  draw shuffle  shuffle after  draw after  do count_turn() }
  } until any s in sides: s.defeated
}
"#,
    );
    assert_eq!(b.ruleset.decks[0].name, "shuffle");
    assert_eq!(b.ruleset.decks[0].cards[0].name, "draw");
    // `after`, a state, and a deck and a card named so.
    assert_eq!(b.ruleset.decks[1].name, "after");
    assert_eq!(b.ruleset.decks[1].cards[0].name, "after");
    assert!(b.ruleset.decks[1].after_each.is_some());
}

#[test]
fn a_house_rule_overrides_and_removes_decks() {
    let dir = std::env::temp_dir().join(format!("muster-decks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("base.muster"),
        format!(
            "{BASE}
deck play {{ card a {{ }} card b {{ }} after each card {{ do count_turn() }} }}
deck events {{ card storm {{ }} }}
sequence {{
  turn {{
    step \"Cards\" {{ shuffle play  draw play until 1 left }}
    step \"Events\" {{ shuffle events  draw events }}
  }} until any s in sides: s.defeated
}}
"
        ),
    )
    .unwrap();
    let house = |text: &str| muster::build_text("house.muster", text, Some(&dir));
    let b = house(
        r#"
extends "base.muster"
override deck play "the club's Play deck" { card only copies 2 { } }
remove step "Events"
remove deck events
"#,
    )
    .unwrap_or_else(|(d, s)| panic!("{}", render_plain(&d, &s)));
    let names: Vec<&str> = b.ruleset.decks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["play"]);
    assert_eq!(b.ruleset.decks[0].cards.len(), 1);
    assert_eq!(b.ruleset.decks[0].cards[0].copies, 2);
    // The override replaces the whole deck, its `after each card` too.
    assert!(b.ruleset.decks[0].after_each.is_none());
    let b = house(
        "extends \"base.muster\"\noverride deck play { after each card { do crown(red) } card only { } }\n",
    )
    .unwrap_or_else(|(d, s)| panic!("{}", render_plain(&d, &s)));
    let block = b.ruleset.decks[0].after_each.as_ref().unwrap();
    assert_eq!(block.actions.len(), 1);
    assert_eq!(b.ruleset.decks[0].cards.len(), 1);
    // Removing a deck a step still draws from is caught.
    let Err((d, _)) = house("extends \"base.muster\"\nremove deck events\n") else {
        panic!("a step draws from the removed deck");
    };
    assert_eq!(d[0].code, "muster::unknown_deck");
    // Overriding a deck that is not there is caught.
    let Err((d, _)) = house("extends \"base.muster\"\noverride deck nope { card a { } }\n") else {
        panic!("there is no deck `nope`");
    };
    assert_eq!(d[0].code, "muster::nothing_to_override");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_command_line_shows_decks() {
    let dir = std::env::temp_dir().join(format!("muster-decks-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = format!(
        "{BASE}
default_scenario \"decks.toml\"
deck play {{
  card leader for each l in units where l is Leader {{ do activate(l) }}
  card bonus {{ do dice_off()  draw bonus(s) for each s in sides where s.won }}
}}
deck bonus(s: side) {{ card extra copies 5 {{ do bonus_for(s) }} }}
sequence {{
  turn {{
    step \"Cards\" {{ shuffle play  shuffle bonus  draw play until 1 left }}
  }} until any s in sides: s.defeated
}}
"
    );
    std::fs::write(dir.join("decks.muster"), rules).unwrap();
    std::fs::write(dir.join("decks.toml"), SCENARIO.replace("TURNS", "3")).unwrap();
    let muster = |args: &[&str]| common::succeeded(common::muster_in(&dir, args));
    let check = muster(&["check", "decks.muster"]);
    assert!(check.contains("2 decks"), "{check}");
    let graph = muster(&["graph", "decks.muster"]);
    assert!(
        graph.contains("shuffle play\\nshuffle bonus\\ndraw play until 1 left"),
        "{graph}"
    );
    let json: Json = serde_json::from_str(&muster(&[
        "battle",
        "decks.muster",
        "--log",
        "json",
        "--seed",
        "3",
    ]))
    .unwrap();
    let events = json["events"].as_array().unwrap();
    let shuffle = events.iter().find(|e| e["event"] == "shuffle").unwrap();
    assert_eq!(
        shuffle,
        &serde_json::json!({"event": "shuffle", "deck": "play", "cards": 3})
    );
    let leader = events
        .iter()
        .find(|e| e["event"] == "card" && e["card"] == "leader")
        .unwrap();
    assert!(
        leader["on"] == "Sir Red" || leader["on"] == "Lord Blue",
        "{leader}"
    );
    let unturned: Vec<&Json> = events.iter().filter(|e| e["event"] == "unturned").collect();
    assert_eq!(unturned.len(), 3, "one a turn");
    assert_eq!(unturned[0]["deck"], "play");
    assert_eq!(unturned[0]["cards"].as_array().unwrap().len(), 1);
    let text = muster(&["battle", "decks.muster", "--seed", "3"]);
    assert!(
        text.contains("   the play deck is shuffled: 3 cards"),
        "{text}"
    );
    assert!(text.contains("== play: leader ("), "{text}");
    assert!(text.contains("   play: left unturned: "), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
