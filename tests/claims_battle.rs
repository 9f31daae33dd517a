//! Claims and Colours, part 2 (issue 32): the coloured-dice QRS's turn
//! played on the table, with hands of cards and prompted actions. Hands
//! and prompts are engine constructs (`deal`, `discard`, a `pick`'s `pay`
//! clause, `alternate`); the first tests play them in a tiny ruleset of
//! their own, where every card is known, then in the port: gifts in and
//! out of range, a seeded game pinned by a snapshot, and a melee fought on
//! the table against `muster odds` of the same procedure with the same
//! facts.

#![allow(clippy::result_large_err)]

use crate::common;
use crate::common::scene::{play, runs, Scene, Tally};

use muster::battle::{Game, Prepared};
use muster::diagnostic::render_plain;
use muster::scenario::Scenario;
use muster::Build;
use serde_json::Value as Json;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/");
const RULES: &str = "rules/claims_and_colours.muster";

/// A tiny ruleset: a leader with a hand of a deck of four I cards and one
/// II, and two foot whose actions cost a card. `RULES` is replaced by the
/// decisions and the sequence under test.
const TINY: &str = r#"
ruleset hands_test "Hand tests"
import core
import battle
sides red, blue
class leader, troops
stat cost
units (cost) {
  Leader  : leader = 0
  Cheap   : troops = 1
  Dear    : troops = 2
}
define base_width(u: unit): int = 2
define base_depth(u: unit): int = 1
state acted: int = 0
procedure act(u: unit) { u.acted += 1 }
define leader_of(u: unit): unit = first l: l is leader and friends(l, u)
deck colours "four I and one II" {
  card I copies 4 value 1 { }
  card II value 2 { }
}
RULES
"#;

const TINY_SCENARIO: &str = r#"
turn_limit = 1
[table]
width = 20
depth = 20
[[army]]
name = "Red"
[[army.command]]
name = "Red"
units = [
  { type = "Leader", at = [3, 2], name = "Sir Red" },
  { type = "Cheap", at = [8, 2], name = "Red cheap" },
  { type = "Dear", at = [13, 2], name = "Red dear" },
]
[[army]]
name = "Blue"
[[army.command]]
name = "Blue"
units = [
  { type = "Leader", at = [3, 18], name = "Lord Blue" },
  { type = "Cheap", at = [8, 18], name = "Blue cheap" },
  { type = "Dear", at = [13, 18], name = "Blue dear" },
]
"#;

fn tiny(rules: &str) -> Build {
    let text = TINY.replace("RULES", rules);
    match muster::build_text("hands.muster", &text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render_plain(&d, &s).replace(ROOT, "")),
    }
}

fn tiny_scenario(b: &mut Build) -> Scenario {
    muster::scenario::read(&b.ruleset, "hands.toml", TINY_SCENARIO, &mut b.sources)
        .unwrap_or_else(|d| panic!("{}", render_plain(&d, &b.sources)))
}

fn play_game<'r>(b: &'r Build, sc: &Scenario, seed: u64) -> Game<'r> {
    Prepared::new(&b.ruleset, sc)
        .unwrap_or_else(|d| panic!("{}", render_plain(&d, &b.sources)))
        .play(seed, true)
        .unwrap_or_else(|d| panic!("{}", render_plain(&[d], &b.sources)))
}

fn events(g: &Game) -> Vec<Json> {
    serde_json::to_value(&g.log)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn of_kind<'a>(events: &'a [Json], kind: &str) -> Vec<&'a Json> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Each leader is dealt a hand of 2; Red's leader holds only I cards after
/// the cheap foot pays one, so the dear foot (II) is refused, and says so;
/// the sides go round until both pass.
#[test]
fn a_prompt_is_refused_when_the_hand_lacks_the_colour() {
    // Every card but one II: the deck's order is the seed's; find a seed
    // whose deal gives Red two I cards (the test checks it did).
    let mut b = tiny(
        r#"
decision prompt(side: side) "act, paying a card of the unit's cost" {
  pick u where u.side == side and u is troops and u.acted == 0
  pay colours u.cost from leader_of(u)
  then act(u)
}
policy default "act" { prompt => u.cost }
sequence {
  step "Cards" { shuffle colours }
  turn {
    step "Deal" { deal colours to l up to 2 for each l in units where l is leader }
    step "Prompts" { alternate prompt(s) for each s in sides }
  } until any s in sides: s.defeated
}
"#,
    );
    let sc = tiny_scenario(&mut b);
    let mut checked = 0;
    for seed in 1..40 {
        let g = play_game(&b, &sc, seed);
        let ev = events(&g);
        let dealt = of_kind(&ev, "dealt");
        let red = dealt.iter().find(|e| e["to"] == "Sir Red").unwrap();
        if strings(&red["holds"]) != ["I", "I"] {
            continue;
        }
        checked += 1;
        // The dear foot, preferred by the policy, is refused; the cheap one pays.
        let refused = of_kind(&ev, "refused");
        let red_refused: Vec<&&Json> = refused.iter().filter(|e| e["from"] == "Sir Red").collect();
        assert_eq!(red_refused.len(), 1, "seed {seed}: {}", g.narrative());
        assert_eq!(red_refused[0]["cost"], "II");
        assert_eq!(strings(&red_refused[0]["option"]), ["Red dear"]);
        assert_eq!(strings(&red_refused[0]["holds"]), ["I", "I"]);
        let paid = of_kind(&ev, "paid");
        let red_paid: Vec<&&Json> = paid.iter().filter(|e| e["from"] == "Sir Red").collect();
        assert_eq!(red_paid.len(), 1, "seed {seed}: {}", g.narrative());
        assert_eq!(red_paid[0]["card"], "I");
        assert_eq!(strings(&red_paid[0]["option"]), ["Red cheap"]);
        // The refused option is not asked again: Red passes after it.
        let text = g.narrative();
        assert!(
            text.contains(
                "   Red dear refused: Sir Red holds no II or better (colours; holds I, I)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("   Sir Red pays I (colours) for Red cheap\n"),
            "{text}"
        );
        // Both sides pass last, one after the other.
        let tail: Vec<&Json> = ev
            .iter()
            .filter(|e| e["event"] != "end")
            .rev()
            .take(2)
            .collect();
        assert!(tail.iter().all(|e| e["event"] == "passes"), "{text}");
        // The dear foot never acted; the cheap one did.
        assert!(!text.contains("act(Red dear)"), "{text}");
        assert!(text.contains("act(Red cheap)"), "{text}");
    }
    assert!(checked > 0, "no seed dealt Red two I cards");
}

/// A deal fills a hand only up to its size; a discard cuts it down, the
/// lowest cards first; a shuffle leaves the held cards in the hands.
#[test]
fn deal_and_discard_keep_the_hand_size_and_the_pile_counts_the_held_cards() {
    let mut b = tiny(
        r#"
policy default "nothing" { }
sequence {
  turn {
    step "Deal" {
      shuffle colours
      deal colours to l up to 3 for each l in units where l is leader
    }
    step "Discard" { discard colours from l down to 1 for each l in units where l is leader }
  } until any s in sides: s.defeated
}
"#,
    );
    let mut sc = tiny_scenario(&mut b);
    sc.turn_limit = Some(2);
    let g = play_game(&b, &sc, 5);
    let ev = events(&g);
    // Turn 1: 5 cards, 3 dealt to each leader... only 5 exist, so Blue gets 2.
    let shuffles = of_kind(&ev, "shuffle");
    assert_eq!(shuffles[0]["cards"], 5);
    let dealt = of_kind(&ev, "dealt");
    assert_eq!(strings(&dealt[0]["holds"]).len(), 3);
    assert_eq!(strings(&dealt[1]["holds"]).len(), 2);
    // The pile ran dry dealing Blue's third card (and again in turn 2).
    assert_eq!(of_kind(&ev, "empty").len(), 2, "{}", g.narrative());
    // Each keeps its highest card.
    for d in of_kind(&ev, "discarded").iter().take(2) {
        let kept = strings(&d["holds"]);
        assert_eq!(kept.len(), 1);
        let gone = strings(&d["cards"]);
        assert!(gone.iter().all(|c| c == "I" || kept[0] == "II"), "{d}");
    }
    // Turn 2: the two held cards stay out of the pile (3 shuffled); each
    // leader is dealt back up to 3, as far as the pile goes.
    assert_eq!(shuffles[1]["cards"], 3);
    let turn2: Vec<&&Json> = dealt.iter().skip(2).collect();
    let held: usize = turn2.iter().map(|d| strings(&d["cards"]).len()).sum();
    assert_eq!(held, 3, "{}", g.narrative());
}

/// `alternate` asks a decision that takes one option at a time: a `move`
/// is refused, at the span of the decision's name.
#[test]
fn alternate_asks_only_a_pick() {
    let text = TINY.replace(
        "RULES",
        r#"
decision walk(side: side) "move" {
  move u where u.side == side
  manoeuvre m: m is straight
  allowance 1
}
policy default "walk" { walk => 0 }
sequence {
  turn {
    step "Walk" { shuffle colours  alternate walk(s) for each s in sides }
  } until any s in sides: s.defeated
}
"#,
    );
    let Err((d, s)) = muster::build_text("hands.muster", &text, None) else {
        panic!("an alternate of a move decision compiled");
    };
    let shown = render_plain(&d, &s);
    assert!(shown.contains("muster::alternate"), "{shown}");
    assert!(
        shown.contains("`alternate` asks `walk`, which is not a `pick` or a `face`"),
        "{shown}"
    );
}

/// A `pay` names a deck that exists.
#[test]
fn a_pay_clause_names_a_deck() {
    let text = TINY.replace(
        "RULES",
        r#"
decision prompt(side: side) "act" {
  pick u where u.side == side and u is troops
  pay colour 1 from leader_of(u)
  then act(u)
}
sequence {
  turn { step "Act" { shuffle colours  alternate prompt(s) for each s in sides } } until any s in sides: s.defeated
}
"#,
    );
    let Err((d, s)) = muster::build_text("hands.muster", &text, None) else {
        panic!("a pay of an unknown deck compiled");
    };
    let shown = render_plain(&d, &s);
    assert!(shown.contains("unknown deck `colour`"), "{shown}");
    assert!(shown.contains("did you mean `colours`?"), "{shown}");
}

/// 8.SP1.1 and 8.SP1.3 in the port: every general is dealt his hand's size
/// (a talented army commander 5 + 1, competent sub-generals 4, an
/// instinctive army commander 4 + 1); the floating professional army
/// commander gifts two cards to the sub-general 8BW away and none to the
/// one 21BW away; in turn 2 the hands are replenished to their sizes.
#[test]
fn a_hand_is_replenished_and_gifted_in_range_and_not_out_of_range() {
    let table = Scene::open(RULES, "claims_gifts.toml", &[], 0.0);
    for seed in 1..6 {
        let mut g = table.start(seed, true);
        g.run().unwrap_or_else(|d| panic!("{d:?}"));
        let ev = events(&g);
        let mut turn = 0;
        let mut dealt: Vec<(u32, String, usize)> = Vec::new();
        let mut gifts: Vec<(u32, String, String)> = Vec::new();
        for e in &ev {
            match e["event"].as_str().unwrap() {
                "turn" => turn = e["turn"].as_u64().unwrap() as u32,
                "dealt" => dealt.push((
                    turn,
                    e["to"].as_str().unwrap().to_string(),
                    strings(&e["holds"]).len(),
                )),
                "paid" if e.get("to").is_some() => gifts.push((
                    turn,
                    e["from"].as_str().unwrap().to_string(),
                    e["to"].as_str().unwrap().to_string(),
                )),
                _ => {}
            }
        }
        let first: Vec<(String, usize)> = dealt
            .iter()
            .filter(|d| d.0 == 1)
            .map(|d| (d.1.clone(), d.2))
            .collect();
        assert_eq!(
            first,
            [
                ("Gustavus".to_string(), 6),
                ("Horn".to_string(), 4),
                ("Baner".to_string(), 4),
                ("Tilly".to_string(), 5)
            ],
            "seed {seed}"
        );
        let turn1: Vec<&(u32, String, String)> = gifts.iter().filter(|x| x.0 == 1).collect();
        assert_eq!(turn1.len(), 2, "seed {seed}: {}", g.narrative());
        assert!(
            turn1.iter().all(|x| x.1 == "Gustavus" && x.2 == "Horn"),
            "seed {seed}: {turn1:?}"
        );
        // (Baner may ride into range later: turn 1 only.)
        assert!(turn1.iter().all(|x| x.2 != "Baner"), "seed {seed}");
        // Tilly, instinctive, has no professional sub-general to gift to.
        assert!(gifts.iter().all(|x| x.1 != "Tilly"), "seed {seed}");
        // Turn 2: Gustavus is dealt back up to his 6 (he gave 2 and paid
        // for prompts; the hand after the deal holds 6).
        let g2 = dealt
            .iter()
            .find(|d| d.0 == 2 && d.1 == "Gustavus")
            .unwrap_or_else(|| panic!("seed {seed}: {}", g.narrative()));
        assert_eq!(g2.2, 6, "seed {seed}");
    }
}

/// The seeded game of the default scenario, as a reader of the sheet sees
/// it: hands dealt, gifts, charge and move prompts paid and refused, the
/// sides passing in turn, charge combats, shooting, drive backs, KABs.
#[test]
fn a_seeded_battle_of_the_default_scenario() {
    let mut b = common::ruleset(RULES);
    let sc = b
        .scenario(None)
        .unwrap_or_else(|d| panic!("{}", render_plain(&d, &b.sources)));
    let g = play_game(&b, &sc, 1);
    let text = g.narrative();
    for what in [
        " is dealt ",
        " gives ",
        " pays ",
        " refused: ",
        " passes\n",
        "declare_charge(",
        "fight_charge(",
        "open_fire(",
        " falls back ",
        "take_kab(",
        "fight(",
    ] {
        assert!(text.contains(what), "no `{what}` in the game");
    }
    insta::assert_snapshot!("claims_battle_seed_1", text);
}

/// 8.SP5.2 on the table against `muster odds`: a brigade and a tercio in
/// frontal contact fight part 1's melee; over many seeds the battle's
/// outcomes follow the exact odds of `melee_combat` with the facts the
/// table gives (each to the other's front, the tercio in 4 ranks).
#[test]
fn a_battle_melee_follows_the_exact_odds() {
    let mut scene = Scene::open(RULES, "claims_melee.toml", &[], 0.0);
    let situation = r#"
procedure = "melee_combat"
facts = ["ranks(tercio) == 4", "ranks(brigade) == 2"]
[args]
a = "brigade"
d = "tercio"
[units.brigade]
type = "Swedish Brigade"
side = "near"
[units.tercio]
type = "Tercio"
side = "far"
"#;
    let exact = scene.exact(situation);
    let mut tally = Tally::new("brigade and tercio in melee");
    for seed in 0..3000 {
        let mut g = scene.start(seed, true);
        play(&mut g, "8.SP5.2 Melee");
        let r = runs(&g, "fight");
        assert_eq!(r.len(), 1, "seed {seed}");
        assert_eq!(r[0].args, ["brigade", "tercio"]);
        let got: Vec<(&str, String)> = [
            "wounds_on_defender",
            "wounds_on_attacker",
            "attacker_shoves",
            "defender_shoves",
        ]
        .iter()
        .map(|o| {
            let v = r[0]
                .outcomes
                .iter()
                .find(|(n, _)| n == o)
                .map_or_else(|| panic!("no {o}"), |x| x.1.clone());
            (*o, v)
        })
        .collect();
        tally.add(&scene, seed, &exact, &got);
        // The claims are the table's: the tercio's 4 ranks against foot.
        assert_eq!(r[0].outcome("attacker_claims"), "0");
        assert_eq!(r[0].outcome("defender_claims"), "2");
        assert_eq!(r[0].outcome("attacker_dice"), "white");
        assert_eq!(r[0].outcome("defender_dice"), "yellow");
    }
    assert!(tally.check() >= 8);
}
