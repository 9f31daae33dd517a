//! Dice whose faces carry several tallies, read by `effects` blocks; pools
//! of mixed dice rolled at once; pools as values (a table that returns
//! dice, a ladder of colours); face counts as number options. Each exact
//! answer is checked against an enumeration of every face written here,
//! independently of the engine, and the sampled tiers against the exact.

use crate::common;
use muster::base::value::Value;
use muster::run::odds::Odds;
use muster::Build;
use std::collections::BTreeMap;

/// A small ruleset in the manner of the coloured-dice sheet (its face
/// counts are this test's own).
const RULES: &str = r#"
ruleset rolls "rolls"
sides near, far
stat files
class shot
units (files) {
  Musketeers : shot = 2
  Pikes      :      = 3
}
option red_blank "blank faces of a red die" = 1
die red   = { blank x red_blank, S, W1 x2, W2 x2 }
die white = { blank x3, S, W1 x2 }
die d6 = 1..6

effects combat -> { wounds, shoves } "Effect of Dice in Combat" {
  S  => wounds 1, shoves 1
  W1 => wounds 1
  W2 => wounds 2, shoves 1
}

effects fire(flintlock: bool) -> { wounds, drive_backs } "Effect of Dice in Shooting" {
  S  => drive_backs 1, wounds 1 when flintlock
  W1 => wounds 1, drive_backs 1
  W2 => wounds 2, drive_backs 1
}

// A ladder of colours: rung 2 is red, each rung down one colour weaker,
// below white no dice.
table ladder(rung: int in -20..20) -> dice {
  ..0  => none
  1    => white
  2    => red
  3..  => red + white
}

procedure melee(a: unit) outcomes { roll: combat, wounds: int, shoves: int } {
  let r = roll red + white as combat
  outcome roll = r
  outcome wounds = r.wounds
  outcome shoves = r.shoves
}

procedure volley(s: unit, rung: int, flintlock: bool) outcomes { shot: fire, wounds: int, drive_backs: int, dice: dice } {
  let r = roll s.files * ladder(rung) as fire(flintlock)
  outcome shot = r
  outcome wounds = r.wounds
  outcome drive_backs = r.drive_backs
  outcome dice = ladder(rung)
}
"#;

fn build(numbers: &[(&str, i64)]) -> Build {
    // A file of its own for each build: tests run in parallel, and one
    // rewriting a shared file while another reads it gave the reader half
    // a ruleset ("no procedure `volley`", now and then).
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("muster-rolls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rolls-{n}.muster"));
    std::fs::write(&path, RULES).unwrap();
    let numbers: Vec<(String, i64)> = numbers.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    match muster::build_with(&path, &numbers) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    }
}

const MELEE: &str = r#"
procedure = "melee"
[units.pikes]
type = "Pikes"
side = "near"
[args]
a = "pikes"
"#;

fn volley(rung: i64, flintlock: bool) -> String {
    format!(
        "procedure = \"volley\"\n[units.shot]\ntype = \"Musketeers\"\nside = \"near\"\n\
         [args]\ns = \"shot\"\nrung = {rung}\nflintlock = {flintlock}\n"
    )
}

/// A die as the test sees it: each face's tallies, in the order written.
type Faces = Vec<[i64; 2]>;

fn faces(spec: &[(usize, [i64; 2])]) -> Faces {
    spec.iter()
        .flat_map(|(n, t)| std::iter::repeat_n(*t, *n))
        .collect()
}

/// Every way the dice can fall, counted: (tallies, ways), over the product
/// of their face counts.
fn enumerate(dice: &[&Faces]) -> (BTreeMap<[i64; 2], u128>, u128) {
    let mut ways: BTreeMap<[i64; 2], u128> = BTreeMap::from([([0, 0], 1)]);
    let mut total = 1u128;
    for d in dice {
        let mut next = BTreeMap::new();
        for (t, w) in &ways {
            for f in d.iter() {
                *next.entry([t[0] + f[0], t[1] + f[1]]).or_default() += w;
            }
        }
        ways = next;
        total *= d.len() as u128;
    }
    (ways, total)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn reduced(n: u128, d: u128) -> (u128, u128) {
    let g = gcd(n, d);
    (n / g, d / g)
}

/// The combat faces (blank, S, W1, W2) of a red die with `blank` blanks
/// and a white die: (wounds, shoves).
fn red(blank: usize) -> Faces {
    faces(&[(blank, [0, 0]), (1, [1, 1]), (2, [1, 0]), (2, [2, 1])])
}
fn white() -> Faces {
    faces(&[(3, [0, 0]), (1, [1, 1]), (2, [1, 0])])
}

/// The joint distribution as `muster odds` reports it: a roll outcome.
fn joint(b: &Build, o: &Odds, outcome: &str, tallies: [i64; 2]) -> Option<(u128, u128)> {
    let oc = o.get(outcome).unwrap();
    let fx = &b.ruleset.effects[match oc.ty {
        muster::compile::ir::Ty::Tallies(e) => e as usize,
        _ => panic!("{outcome} is not a roll"),
    }];
    oc.values
        .iter()
        .find(|(v, _)| {
            let packed = v.as_int().unwrap();
            [fx.tally(packed, 0), fx.tally(packed, 1)] == tallies
        })
        .map(|(_, p)| p.fraction().unwrap())
}

/// A red and a white die rolled together: every joint (wounds, shoves) and
/// each marginal is the enumeration's, exactly.
#[test]
fn a_mixed_pool_yields_every_tally_at_once() {
    let mut b = build(&[]);
    let o = common::exact(&mut b, MELEE);
    let (ways, total) = enumerate(&[&red(1), &white()]);
    let roll = o.get("roll").unwrap();
    assert_eq!(roll.values.len(), ways.len());
    let mut wounds: BTreeMap<i64, u128> = BTreeMap::new();
    let mut shoves: BTreeMap<i64, u128> = BTreeMap::new();
    for (t, w) in &ways {
        assert_eq!(joint(&b, &o, "roll", *t), Some(reduced(*w, total)), "{t:?}");
        *wounds.entry(t[0]).or_default() += w;
        *shoves.entry(t[1]).or_default() += w;
    }
    for (k, w) in wounds {
        let got = o.get("wounds").unwrap().p(Value::Int(k)).fraction();
        assert_eq!(got, Some(reduced(w, total)), "wounds {k}");
    }
    for (k, w) in shoves {
        let got = o.get("shoves").unwrap().p(Value::Int(k)).fraction();
        assert_eq!(got, Some(reduced(w, total)), "shoves {k}");
    }
    // Two of the numbers, by hand: no effect needs a blank red (1 in 6)
    // and a blank white (1 in 2); 3 wounds and 2 shoves need a red 2W and
    // a white S (2/6 * 1/6).
    assert_eq!(joint(&b, &o, "roll", [0, 0]), Some((1, 12)));
    assert_eq!(joint(&b, &o, "roll", [3, 2]), Some((1, 18)));
}

/// The face count is a number option: two blank faces (a 7-sided red die)
/// change every probability as the enumeration of that die says.
#[test]
fn a_face_count_option_changes_the_odds_as_the_arithmetic_says() {
    let mut b = build(&[("red_blank", 2)]);
    let o = common::exact(&mut b, MELEE);
    let (ways, total) = enumerate(&[&red(2), &white()]);
    for (t, w) in &ways {
        assert_eq!(joint(&b, &o, "roll", *t), Some(reduced(*w, total)), "{t:?}");
    }
    // No effect: 2/7 * 1/2 (it was 1/12 with one blank face).
    assert_eq!(joint(&b, &o, "roll", [0, 0]), Some((1, 7)));
    // A count of 0 leaves the face off the die: red is then 5-sided.
    let mut b = build(&[("red_blank", 0)]);
    let o = common::exact(&mut b, MELEE);
    let (ways, total) = enumerate(&[&red(0), &white()]);
    for (t, w) in &ways {
        assert_eq!(joint(&b, &o, "roll", *t), Some(reduced(*w, total)), "{t:?}");
    }
}

/// A tally that holds only for some weapons: the S face wounds only when
/// the block's `flintlock` argument is true; the other faces do not change.
#[test]
fn a_tally_may_depend_on_an_argument() {
    let mut b = build(&[]);
    // Rung 2 is one red die a file; the musketeers have 2 files.
    for flintlock in [false, true] {
        let o = common::exact(&mut b, &volley(2, flintlock));
        let s_wounds = i64::from(flintlock);
        // (wounds, drive backs) of blank, S, W1, W2.
        let fire = faces(&[(1, [0, 0]), (1, [s_wounds, 1]), (2, [1, 1]), (2, [2, 1])]);
        let (ways, total) = enumerate(&[&fire, &fire]);
        for (t, w) in &ways {
            assert_eq!(
                joint(&b, &o, "shot", *t),
                Some(reduced(*w, total)),
                "flintlock {flintlock}: {t:?}"
            );
        }
    }
}

/// The ladder: a table returns the dice, and a rung below white rolls
/// none; a rung above red rolls red and white. The pool is an outcome too.
#[test]
fn a_table_returns_the_dice_to_roll() {
    let mut b = build(&[]);
    let o = common::exact(&mut b, &volley(0, false));
    let shot = &o.get("shot").unwrap().values;
    assert_eq!(shot.len(), 1);
    assert_eq!(
        (shot[0].0, shot[0].1.fraction()),
        (Value::Int(0), Some((1, 1)))
    );
    let s = common::situation(&mut b, &volley(0, false));
    let w = &s.world;
    assert_eq!(
        w.show_typed(
            &b.ruleset,
            &muster::compile::ir::Ty::Dice,
            o.get("dice").unwrap().values[0].0
        ),
        "no dice"
    );
    let o = common::exact(&mut b, &volley(5, false));
    let shown = w.show_typed(
        &b.ruleset,
        &muster::compile::ir::Ty::Dice,
        o.get("dice").unwrap().values[0].0,
    );
    assert_eq!(shown, "red + white");
    // 2 files of red + white: four dice.
    let fire_red = faces(&[(1, [0, 0]), (1, [0, 1]), (2, [1, 1]), (2, [2, 1])]);
    let fire_white = faces(&[(3, [0, 0]), (1, [0, 1]), (2, [1, 1])]);
    let (ways, total) = enumerate(&[&fire_red, &fire_white, &fire_red, &fire_white]);
    for (t, w) in &ways {
        assert_eq!(joint(&b, &o, "shot", *t), Some(reduced(*w, total)), "{t:?}");
    }
    // Rung 1: one white die a file.
    let o = common::exact(&mut b, &volley(1, false));
    let (ways, total) = enumerate(&[&fire_white, &fire_white]);
    for (t, w) in &ways {
        assert_eq!(joint(&b, &o, "shot", *t), Some(reduced(*w, total)), "{t:?}");
    }
}

/// Sampling (the machine-code tier, and the general bytecode) agrees with
/// the exact joint distribution within sampling error, and both tiers roll
/// the same dice in the same order.
#[test]
fn sampled_rolls_match_the_exact_ones() {
    let mut b = build(&[]);
    for text in [MELEE.to_string(), volley(3, true)] {
        let exact = common::exact(&mut b, &text);
        let n = 200_000u64;
        let sampled = common::sampled(&mut b, &text, n, 5);
        for oc in &exact.outcomes {
            for (v, pe) in &oc.values {
                let pe = pe.to_f64();
                let ps = sampled.get(&oc.name).unwrap().p(*v).to_f64();
                let se = (pe * (1.0 - pe) / n as f64).sqrt().max(1.0 / n as f64);
                assert!(
                    (pe - ps).abs() <= 4.5 * se,
                    "{}: {v:?} exact {pe}, sampled {ps}",
                    oc.name
                );
            }
        }
        let s = common::situation(&mut b, &text);
        let prog = b.program(&s).unwrap();
        match muster::run::odds::compile_for_sampling(&b.ruleset, &prog) {
            muster::run::odds::Compiled::Typed(t) => assert_eq!(
                t.is_native(),
                std::env::var_os("MUSTER_NO_JIT").is_none(),
                "a fixed roll runs as machine code"
            ),
            muster::run::odds::Compiled::General(_) => {
                panic!("a fixed roll fits the typed tier")
            }
        }
        let general = muster::run::bytecode::compile(&b.ruleset, &prog);
        let (mut r1, mut r2) = (
            muster::base::rng::Rng::new(7),
            muster::base::rng::Rng::new(7),
        );
        let fast = muster::run::odds::tally(&b.ruleset, &prog, 20_000, &mut r1).unwrap();
        let slow =
            muster::run::odds::tally_code(&b.ruleset, &prog, &general, 20_000, &mut r2).unwrap();
        for (f, s) in fast.iter().zip(&slow) {
            let (mut f, mut s) = (f.clone(), s.clone());
            f.sort();
            s.sort();
            assert_eq!(f, s);
        }
    }
}

/// A battle runs a procedure through its compiled closures: the same dice
/// in the same order as the tree evaluator, so the same outcomes.
#[test]
fn a_roll_performed_as_a_battle_performs_it() {
    let mut b = build(&[]);
    let s = common::situation(&mut b, &volley(3, true));
    let rs = &b.ruleset;
    let proc = rs.procedure("volley").unwrap();
    let mut code = muster::run::closures::Compiled::default();
    code.add_procedure(&mut muster::run::closures::Lower::new(rs), proc);
    let compiled = muster::run::eval::Eval::new(rs).with_code(std::sync::Arc::new(code));
    let tree = muster::run::eval::Eval::new(rs);
    let args = [Value::Unit(0), Value::Int(3), Value::Bool(true)];
    for seed in 0..50 {
        let (mut w1, mut w2) = (s.world.clone(), s.world.clone());
        let a = muster::run::procedures::perform(
            &compiled,
            &mut w1,
            proc,
            &args,
            &mut muster::base::rng::Rng::new(seed),
        )
        .unwrap();
        let t = muster::run::procedures::perform(
            &tree,
            &mut w2,
            proc,
            &args,
            &mut muster::base::rng::Rng::new(seed),
        )
        .unwrap();
        assert_eq!(a.outcomes, t.outcomes);
        assert_eq!(a.rolls.len(), 4, "two files of red + white");
    }
}

// ------------------------------------------------------------------ mistakes

/// A ruleset that must be rejected: its diagnostics, each with a span, a
/// label and a help line, rendered.
fn rejected(extra: &str) -> (Vec<muster::front::diagnostic::Diag>, String) {
    let text = format!("{RULES}\n{extra}");
    match muster::build_text("bad.muster", &text, None) {
        Ok(_) => panic!("compiled, but it has a mistake:\n{extra}"),
        Err((diags, sources)) => {
            let shown = muster::front::diagnostic::render_plain(&diags, &sources);
            for d in &diags {
                assert!(d.span.is_some(), "{shown}");
                assert!(!d.label.is_empty(), "{shown}");
                assert!(d.help.as_deref().is_some_and(|h| !h.is_empty()), "{shown}");
            }
            (diags, shown)
        }
    }
}

/// The one diagnostic of a mistake: (code, message, help).
fn one(extra: &str) -> (String, String, String) {
    let (d, shown) = rejected(extra);
    assert_eq!(d.len(), 1, "{shown}");
    (
        d[0].code.to_string(),
        d[0].message.clone(),
        d[0].help.clone().unwrap_or_default(),
    )
}

#[test]
fn mistakes_in_effects_blocks() {
    let (code, msg, help) = one("effects bad -> { wounds } { W3 => wounds 1 }");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("muster::unknown_name", "no die has a face `W3`")
    );
    assert_eq!(help, "did you mean `W1`?");
    let (_, msg, help) = one("effects bad -> { wounds } { W1 => wound 1 }");
    assert_eq!(msg, "`bad` yields no tally `wound`");
    assert_eq!(help, "did you mean `wounds`?");
    let (_, msg, _) = one("effects bad -> { wounds } {\n W1 => wounds 1\n W1 => wounds 2\n}");
    assert_eq!(msg, "face `W1` is read twice in `bad`");
    let (_, msg, _) = one("effects bad -> { a, b, c, d, e } { W1 => a 1 }");
    assert_eq!(msg, "`bad` names 5 tallies: a roll holds at most 4");
    let (_, msg, _) = one("effects bad -> { a, a } { W1 => a 1 }");
    assert_eq!(msg, "tally `a` is named twice in `bad`");
    let (_, msg, help) = one("fact flintlock(u: unit): bool = false\n\
         effects bad(u: unit) -> { wounds } { S => wounds 1 when flintlock(u) }");
    assert_eq!(msg, "a face's condition reads a fact");
    assert!(help.contains("pass anything else as an argument"), "{help}");
    // A condition over the parameters' stats and types is fine.
    let text = format!(
        "{RULES}\neffects ok(u: unit) -> {{ wounds }} {{ S => wounds 1 when u is shot and u.files > 1 }}"
    );
    assert!(muster::build_text("ok.muster", &text, None).is_ok());
}

#[test]
fn mistakes_in_pools_and_rolls() {
    let (code, msg, _) = one("define d(u: unit): combat = roll red as combat");
    assert_eq!(
        (code.as_str(), msg.as_str()),
        (
            "muster::dice_outside_procedure",
            "dice can only be rolled inside a procedure"
        )
    );
    let (_, msg, help) = one("define d(u: unit): dice = u.files red");
    assert_eq!(msg, "a pool used as a value has a fixed number of each die");
    assert!(help.contains("roll such a pool where it is made"), "{help}");
    let (_, msg, _) =
        one("procedure p() outcomes { r: combat } { outcome r = roll 2 d6 as combat }");
    assert_eq!(msg, "`combat` reads none of the faces of die `d6`");
    let (_, msg, _) =
        one("procedure p() outcomes { w: int } { outcome w = (roll red as combat).wound }");
    assert_eq!(msg, "a roll read as `combat` has no tally `wound`");
    let (_, msg, _) =
        one("procedure p() outcomes { w: int } { outcome w = (roll red as cmbat).wounds }");
    assert_eq!(msg, "unknown effects block `cmbat`");
    let (_, msg, _) =
        one("procedure p() outcomes { w: int } { outcome w = (roll red as fire).wounds }");
    assert_eq!(msg, "`fire` takes 1 argument(s), given 0");
    let (_, msg, _) = one(
        "procedure p() outcomes { w: int } { outcome w = (roll red scoring 4+ as combat).wounds }",
    );
    assert_eq!(msg, "a pool's dice are read by the `effects` of its roll");
    let (_, msg, _) = one("table t(n: int in 0..1) -> dice { 0 => red\n 1 => 20000 white }");
    assert_eq!(
        msg,
        "a pool of 20000 dice: a pool holds from 0 to 10000 dice"
    );
}

#[test]
fn mistakes_with_face_counts() {
    let (_, msg, _) = one("option loud \"a switch\" = on\ndie blue = { blank x loud, S }");
    assert_eq!(msg, "option `loud` is a switch, not a number");
    let (_, msg, _) = one("die blue = { blank x blue_blank, S }");
    assert_eq!(msg, "unknown option `blue_blank`");
    let (_, msg, _) = one("option none_at_all = 0\ndie blue = { blank x none_at_all }");
    assert_eq!(msg, "die `blue` has no faces");
    // From outside: a number option that is not one.
    let dir = std::env::temp_dir().join(format!("muster-rolls-opt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.muster");
    std::fs::write(&path, RULES).unwrap();
    let Err((d, _)) = muster::build_with(&path, &[("red_blnk".into(), 2)]) else {
        panic!("an unknown number option was accepted");
    };
    assert_eq!(d[0].message, "the ruleset has no number option `red_blnk`");
    assert_eq!(d[0].help.as_deref(), Some("its number options: red_blank"));
    // A situation may not change it (the ruleset is compiled with it).
    let mut b = build(&[]);
    let Err(d) = b.situation("s.toml", &format!("{MELEE}\n[options]\nred_blank = 2\n")) else {
        panic!("a situation changed a number option");
    };
    assert_eq!(
        d[0].message,
        "option `red_blank` is a number the ruleset is compiled with"
    );
}

/// A roll past its limits stops with the same diagnostic exactly and
/// sampled: more dice than a pool may hold, and faces that could count
/// past a tally's 15 bits.
#[test]
fn a_roll_past_its_limits_is_refused() {
    let extra = r#"
effects heavy -> { hits } { W2 => hits 6 }
procedure big(n: int) outcomes { w: int } { outcome w = (roll n red as combat).wounds }
procedure heavy_roll(n: int) outcomes { h: int } { outcome h = (roll n red as heavy).hits }
"#;
    let text = format!("{RULES}\n{extra}");
    let mut b = match muster::build_text("limits.muster", &text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    };
    for (proc, n, want) in [
        ("big", 10_001, "a pool of 10001 dice: more than the 10000 one roll may have"),
        (
            "heavy_roll",
            6_000,
            "a roll of 6000 dice read by `heavy` could count more than 32767 of one tally (a face counts up to 6)",
        ),
    ] {
        let sit = format!("procedure = \"{proc}\"\n[args]\nn = {n}\n");
        let s = common::situation(&mut b, &sit);
        let e = b.exact(&s).expect_err("exact odds refuse it");
        assert_eq!(e.message, want);
        let e = b.sampled(&s, 10, 1).expect_err("sampling refuses it");
        assert_eq!(e.message, want);
    }
    // Within the limits, 5,000 dice of 6 hits a face is fine.
    let s = common::situation(&mut b, "procedure = \"heavy_roll\"\n[args]\nn = 5000\n");
    assert!(b.sampled(&s, 10, 1).is_ok());
}
