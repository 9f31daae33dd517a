//! Tilly's Very Bad Day v1: the book's worked examples, exact odds checked
//! against closed forms and against sampling, and snapshots of odds tables.

use muster::base::value::Value;
use muster::run::dice::Prob;
use muster::run::odds::Odds;
use muster::Build;
use std::path::Path;

const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);

fn tvbd() -> Build {
    match muster::build(Path::new(RULES)) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    }
}

fn situation(b: &mut Build, text: &str) -> muster::odds::situation::Situation {
    match b.situation("test.toml", text) {
        Ok(s) => s,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&d, &b.sources)
        ),
    }
}

fn exact(b: &mut Build, text: &str) -> Odds {
    let s = situation(b, text);
    match b.exact(&s) {
        Ok(o) => o,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&[d], &b.sources)
        ),
    }
}

fn sym(b: &Build, name: &str) -> Value {
    Value::Sym(b.ruleset.symbols.iter().position(|s| s == name).unwrap() as u32)
}

fn frac(p: Prob) -> (u128, u128) {
    p.fraction().expect("exact odds stay exact fractions")
}

fn query(b: &mut Build, s: &muster::odds::situation::Situation, e: &str) -> String {
    match b.query(s, e) {
        Ok((_, shown)) => shown,
        Err(d) => panic!(
            "{}",
            muster::front::diagnostic::render_plain(&d, &b.sources)
        ),
    }
}

// ------------------------------------------------------------------ the issue's figures

#[test]
fn horse_charging_front_of_pike_and_shot_in_the_open() {
    let mut b = tvbd();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/rules/situations/tvbd_horse_charges_pike.toml"
    ))
    .unwrap();
    let o = exact(&mut b, &text);
    let w = o.get("winner").unwrap();
    assert_eq!(frac(w.p(sym(&b, "attacker"))), (184, 729));
    assert_eq!(frac(w.p(sym(&b, "draw"))), (664, 2187));
    assert_eq!(frac(w.p(sym(&b, "defender"))), (971, 2187));
}

/// The same three numbers from the closed form: hits are binomial, horse
/// 3 dice at 1/3 (5-6 charging the front of pike+shot), pike+shot 4 at 1/3.
#[test]
fn horse_against_pike_closed_form() {
    let binom = |n: u32, k: u32| -> f64 {
        let c = (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
        c * (1.0f64 / 3.0).powi(k as i32) * (2.0f64 / 3.0).powi((n - k) as i32)
    };
    let mut win = 0.0;
    let mut draw = 0.0;
    for a in 0..=3 {
        for d in 0..=4 {
            let p = binom(3, a) * binom(4, d);
            if a > d {
                win += p
            } else if a == d {
                draw += p
            }
        }
    }
    assert!((win - 184.0 / 729.0).abs() < 1e-12);
    assert!((draw - 664.0 / 2187.0).abs() < 1e-12);
}

#[test]
fn command_check_at_resolve_3_passes_91_in_216() {
    let mut b = tvbd();
    let o = exact(
        &mut b,
        r#"
procedure = "command_check"
[units.unit]
type = "Horse"
"#,
    );
    // 1 - (5/6)^3 = 91/216.
    assert_eq!(
        frac(o.get("passed").unwrap().p(Value::Bool(true))),
        (91, 216)
    );
}

// ------------------------------------------------------------------ worked examples

/// §Infantry defending difficult terrain: "a horse unit with 3 resolve would
/// throw 2d6 rather than 3d6 when shooting at dragoons in a field".
#[test]
fn horse_shooting_at_dragoons_in_a_field_throws_two_dice() {
    let mut b = tvbd();
    let text = r#"
procedure = "shoot"
facts = ["in_difficult(target)"]
[units.shooter]
type = "Horse"
[units.target]
type = "Dragoons"
"#;
    let o = exact(&mut b, text);
    assert_eq!(o.get("dice").unwrap().p(Value::Int(2)).to_f64(), 1.0);
    // Two dice hitting on 6: P(no hit) = 25/36.
    assert_eq!(frac(o.get("hits").unwrap().p(Value::Int(0))), (25, 36));
    // In the open the same horse throws all 3.
    let open = exact(
        &mut b,
        &text.replace(r#"facts = ["in_difficult(target)"]"#, ""),
    );
    assert_eq!(open.get("dice").unwrap().p(Value::Int(3)).to_f64(), 1.0);
}

/// §Infantry defending uphill or fortifications: "a horse unit with 3 resolve
/// would throw 2d6 rather than 3d6 when charging a pike+shot unit defending
/// the crest of a hill", and "a pike+shot unit with 2 resolve would throw
/// only 1d6 when charging shot unit entrenched behind fortifications".
#[test]
fn charging_uphill_and_into_fortifications_costs_a_die() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
facts = ["charging(horse)", "uphill_of(pike, horse)"]
[units.horse]
type = "Horse"
side = "attacker"
[units.pike]
type = "Pike+Shot"
side = "defender"
"#,
    );
    assert_eq!(query(&mut b, &s, "melee_dice(horse, pike)"), "2");
    let s = situation(
        &mut b,
        r#"
facts = ["charging(pike)", "fortified(shot)"]
[units.pike]
type = "Pike+Shot"
side = "attacker"
[units.pike.state]
resolve = 2
[units.shot]
type = "Shot"
side = "defender"
"#,
    );
    assert_eq!(query(&mut b, &s, "melee_dice(pike, shot)"), "1");
    // Without the works, two dice.
    let s = situation(
        &mut b,
        r#"
facts = ["charging(pike)"]
[units.pike]
type = "Pike+Shot"
[units.pike.state]
resolve = 2
[units.shot]
type = "Shot"
"#,
    );
    assert_eq!(query(&mut b, &s, "melee_dice(pike, shot)"), "2");
}

fn army_morale(
    b: &mut Build,
    lost: i64,
    original: i64,
    other_lost: i64,
    rolls: &str,
    variable: bool,
) -> Odds {
    let text = format!(
        r#"
procedure = "army_morale"
{rolls}
[args]
s = "attacker"
[options]
variable_army_morale = {variable}
[sides.attacker]
lost = {lost}
original_units = {original}
[sides.defender]
lost = {other_lost}
original_units = {original}
"#
    );
    let s = situation(b, &text);
    if s.rolls.is_some() {
        b.scripted(&s).unwrap()
    } else {
        b.exact(&s).unwrap()
    }
}

/// §Step 4.4 Army Morale: 25 units, break point 8 1/3: 8 lost fights on, 9 breaks.
#[test]
fn army_break_point_of_25_units() {
    let mut b = tvbd();
    let fights_on = army_morale(&mut b, 8, 25, 0, "", false);
    assert_eq!(
        fights_on
            .get("defeated")
            .unwrap()
            .p(Value::Bool(false))
            .to_f64(),
        1.0
    );
    let breaks = army_morale(&mut b, 9, 25, 0, "", false);
    assert_eq!(
        breaks
            .get("defeated")
            .unwrap()
            .p(Value::Bool(true))
            .to_f64(),
        1.0
    );
}

/// §Optional Rule: Variable Army Morale: the French (25 units) lose 7 and roll
/// 3: 10 is less than 12 1/2, they fight on; then 10 lost and a roll of 4
/// makes 14, and they flee.
#[test]
fn variable_army_morale_example() {
    let mut b = tvbd();
    let turn4 = army_morale(&mut b, 7, 25, 3, "rolls = [3]", true);
    assert_eq!(
        turn4
            .get("defeated")
            .unwrap()
            .p(Value::Bool(false))
            .to_f64(),
        1.0
    );
    let turn5 = army_morale(&mut b, 10, 25, 3, "rolls = [4]", true);
    assert_eq!(
        turn5.get("defeated").unwrap().p(Value::Bool(true)).to_f64(),
        1.0
    );
    // Exactly: with 7 lost only a 6 reaches 12 1/2; with 10 lost, 3 or more.
    let p7 = army_morale(&mut b, 7, 25, 3, "", true);
    assert_eq!(
        frac(p7.get("defeated").unwrap().p(Value::Bool(true))),
        (1, 6)
    );
    let p10 = army_morale(&mut b, 10, 25, 3, "", true);
    assert_eq!(
        frac(p10.get("defeated").unwrap().p(Value::Bool(true))),
        (2, 3)
    );
    // The side with fewer losses does not roll at all.
    let fewer = army_morale(&mut b, 3, 25, 10, "", true);
    assert_eq!(
        fewer
            .get("defeated")
            .unwrap()
            .p(Value::Bool(false))
            .to_f64(),
        1.0
    );
}

/// §Optional Rule: Unit Quality: 45 points buy 11 superior units (1 spare),
/// 15 ordinary, 22 inferior (1 spare), or 45 rabble.
#[test]
fn points_example() {
    let b = tvbd();
    let rs = &b.ruleset;
    let cost = |q: &str| {
        rs.qualities[rs.quality(q).unwrap() as usize]
            .points
            .unwrap()
    };
    let buy = |q: &str| (45 / cost(q), 45 % cost(q));
    assert_eq!(buy("superior"), (11, 1));
    assert_eq!(buy("ordinary"), (15, 0));
    assert_eq!(buy("inferior"), (22, 1));
    assert_eq!(buy("rabble"), (45, 0));
    // And two inferior units cost what one superior unit does... minus nothing:
    // the book's "+1 superior, -1 inferior" around ordinary's 3.
    assert_eq!(cost("superior") - cost("ordinary"), 1);
    assert_eq!(cost("ordinary") - cost("inferior"), 1);
}

/// §Optional Rule: Unit Quality: ordinary pike+shot have 4 resolve, veterans
/// (superior) 5, recent recruits (inferior) 3.
#[test]
fn quality_adjusts_resolve() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
[units.veteran]
type = "Pike+Shot"
quality = "superior"
[units.plain]
type = "Pike+Shot"
[units.recruit]
type = "Pike+Shot"
quality = "inferior"
"#,
    );
    assert_eq!(query(&mut b, &s, "veteran.resolve"), "5");
    assert_eq!(query(&mut b, &s, "plain.resolve"), "4");
    assert_eq!(query(&mut b, &s, "recruit.resolve"), "3");
}

/// §Optional Rule: Unit Quality, Rabble: "the normal rabble rules apply so
/// they only have 1 resolve", whatever their type: a rabble-quality
/// pike+shot or horse has 1 resolve (the quality sets it: `resolve = 1`),
/// where the quality used to leave the type's 4 and 3.
#[test]
fn rabble_quality_has_one_resolve_whatever_the_type() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
[units.mob]
type = "Pike+Shot"
quality = "rabble"
[units.riders]
type = "Horse"
quality = "rabble"
[units.peasants]
type = "Rabble"
quality = "rabble"
"#,
    );
    assert_eq!(query(&mut b, &s, "mob.resolve"), "1");
    assert_eq!(query(&mut b, &s, "original(mob.resolve)"), "1");
    assert_eq!(query(&mut b, &s, "riders.resolve"), "1");
    assert_eq!(query(&mut b, &s, "peasants.resolve"), "1");
    // The quality sets resolve only: the pike+shot keeps its range and scores.
    assert_eq!(query(&mut b, &s, "mob.range"), "4");
    assert_eq!(query(&mut b, &s, "mob.melee_hit"), "5");
}

/// The horse of tvbd_horse_charges_pike.toml charging a rabble-quality
/// pike+shot: the pike+shot throws 1 die (its resolve), not 4. Horse hits
/// a ~ Bin(3, 1/3), pike+shot d ~ Bin(1, 1/3): the defender wins only on
/// d = 1, a = 0 (8/81); draws on a = d (16/81 + 12/81); routs on a >= 1
/// (1 - 8/27).
#[test]
fn rabble_quality_pike_and_shot_melees_with_one_die() {
    let mut b = tvbd();
    let text = r#"
procedure = "melee"
facts = [
  "charging(attacker)",
  "position(defender, attacker) is to_front",
  "position(attacker, defender) is to_front",
]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
quality = "rabble"
"#;
    let o = exact(&mut b, text);
    let w = o.get("winner").unwrap();
    assert_eq!(frac(w.p(sym(&b, "defender"))), (8, 81));
    assert_eq!(frac(w.p(sym(&b, "draw"))), (28, 81));
    assert_eq!(frac(w.p(sym(&b, "attacker"))), (5, 9));
    let d = o.get("defender_hits").unwrap();
    assert_eq!(frac(d.p(Value::Int(1))), (1, 3));
    assert_eq!(frac(d.p(Value::Int(2))), (0, 1));
    let r = o.get("defender_routed").unwrap();
    assert_eq!(frac(r.p(Value::Bool(true))), (19, 27));
}

// ------------------------------------------------------------------ Figure 11: charges

/// (A) Imperialist horse and Weimarian horse charge each other: both charges
/// happen, the attacker's (Weimarian) first.
#[test]
fn figure_11_a_horse_charge_each_other() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
facts = ["declared_charge(weimar_horse, imperial_horse)", "declared_charge(imperial_horse, weimar_horse)"]
[units.weimar_horse]
type = "Horse"
side = "attacker"
[units.imperial_horse]
type = "Horse"
side = "defender"
"#,
    );
    assert_eq!(
        query(&mut b, &s, "charges(weimar_horse, imperial_horse)"),
        "true"
    );
    assert_eq!(
        query(&mut b, &s, "charges(imperial_horse, weimar_horse)"),
        "true"
    );
    assert_eq!(query(&mut b, &s, "charge_order(weimar_horse)"), "1");
    assert_eq!(query(&mut b, &s, "charge_order(imperial_horse)"), "2");
}

/// (B) French horse charge Spanish pike+shot and shot. The pike+shot already
/// shot, so cannot fire point blank; the shot reserved its fire and can. Had
/// the Spanish infantry declared a charge, the cavalry charge would cancel it.
#[test]
fn figure_11_b_and_figure_12_point_blank() {
    let mut b = tvbd();
    let text = r#"
facts = [
  "declared_charge(french_horse, spanish_pike)",
  "declared_charge(french_horse, spanish_shot)",
]
[units.french_horse]
type = "Horse"
side = "attacker"
[units.spanish_pike]
type = "Pike+Shot"
side = "defender"
[units.spanish_pike.state]
shot_this_turn = true
[units.spanish_shot]
type = "Shot"
side = "defender"
"#;
    let s = situation(&mut b, text);
    assert_eq!(
        query(&mut b, &s, "charges(french_horse, spanish_pike)"),
        "true"
    );
    assert_eq!(
        query(
            &mut b,
            &s,
            "may_shoot_point_blank(spanish_pike, french_horse)"
        ),
        "false"
    );
    assert_eq!(
        query(
            &mut b,
            &s,
            "may_shoot_point_blank(spanish_shot, french_horse)"
        ),
        "true"
    );
    let declared = text.replace(
        "\"declared_charge(french_horse, spanish_shot)\",",
        "\"declared_charge(french_horse, spanish_shot)\",\n  \"declared_charge(spanish_pike, french_horse)\",",
    );
    let s = situation(&mut b, &declared);
    assert_eq!(query(&mut b, &s, "charge_cancelled(spanish_pike)"), "true");
    assert_eq!(
        query(&mut b, &s, "charges(spanish_pike, french_horse)"),
        "false"
    );
    // A unit whose charge was cancelled may still shoot point blank, if it has not shot.
    let fresh = declared.replace("shot_this_turn = true", "shot_this_turn = false");
    let s = situation(&mut b, &fresh);
    assert_eq!(
        query(
            &mut b,
            &s,
            "may_shoot_point_blank(spanish_pike, french_horse)"
        ),
        "true"
    );
}

/// (C) French pike+shot charge Spanish pike+shot, while Spanish horse charge
/// the French pike+shot: the cavalry charge cancels the infantry's.
#[test]
fn figure_11_c_cavalry_pre_empts_infantry() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
facts = [
  "declared_charge(french_pike, spanish_pike)",
  "declared_charge(spanish_horse, french_pike)",
  "position(french_pike, spanish_horse) is to_front",
]
[units.french_pike]
type = "Pike+Shot"
side = "attacker"
[units.spanish_pike]
type = "Pike+Shot"
side = "defender"
[units.spanish_horse]
type = "Horse"
side = "defender"
"#,
    );
    assert_eq!(query(&mut b, &s, "charge_cancelled(french_pike)"), "true");
    assert_eq!(
        query(&mut b, &s, "charges(french_pike, spanish_pike)"),
        "false"
    );
    assert_eq!(
        query(&mut b, &s, "charges(spanish_horse, french_pike)"),
        "true"
    );
}

/// (D) Weimarian pike+shot have Imperial cannons to front, so may charge only
/// them, not the Imperial pike+shot to their flank. The Imperial pike+shot
/// have no enemy to front, so wheel and charge the Weimarians' flank, which
/// cancels the Weimarian charge and saves the guns.
#[test]
fn figure_11_d_flank_charge_saves_the_guns() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
facts = [
  "position(weimar_pike, imperial_guns) is to_front",
  "position(weimar_pike, imperial_pike) is to_flank",
  "position(imperial_pike, weimar_pike) is to_flank",
  "position(imperial_guns, weimar_pike) is to_front",
  "declared_charge(weimar_pike, imperial_guns)",
  "declared_charge(imperial_pike, weimar_pike)",
]
[units.weimar_pike]
type = "Pike+Shot"
side = "attacker"
[units.imperial_guns]
type = "Cannons"
side = "defender"
[units.imperial_pike]
type = "Pike+Shot"
side = "defender"
"#,
    );
    assert_eq!(
        query(&mut b, &s, "may_declare_charge(weimar_pike, imperial_guns)"),
        "true"
    );
    assert_eq!(
        query(&mut b, &s, "may_declare_charge(weimar_pike, imperial_pike)"),
        "false"
    );
    assert_eq!(
        query(&mut b, &s, "may_declare_charge(imperial_pike, weimar_pike)"),
        "true"
    );
    assert_eq!(query(&mut b, &s, "charge_cancelled(weimar_pike)"), "true");
    assert_eq!(
        query(&mut b, &s, "charges(weimar_pike, imperial_guns)"),
        "false"
    );
    assert_eq!(
        query(&mut b, &s, "charges(imperial_pike, weimar_pike)"),
        "true"
    );
}

// ------------------------------------------------------------------ more rules

/// §Cannons in melee: contacted cannons are eliminated without a fight.
#[test]
fn cannons_contacted_are_eliminated() {
    let mut b = tvbd();
    let o = exact(
        &mut b,
        r#"
procedure = "melee"
facts = ["charging(attacker)"]
[units.attacker]
type = "Rabble"
[units.defender]
type = "Cannons"
"#,
    );
    assert_eq!(
        o.get("defender_routed")
            .unwrap()
            .p(Value::Bool(true))
            .to_f64(),
        1.0
    );
    assert_eq!(
        o.get("winner").unwrap().p(sym(&b, "attacker")).to_f64(),
        1.0
    );
}

/// §Fighting to flank or rear: with an enemy in its rear a unit rolls no dice,
/// so horse charging pike+shot's rear (hitting on 4-6) cannot lose.
#[test]
fn charge_into_the_rear() {
    let mut b = tvbd();
    let o = exact(
        &mut b,
        r#"
procedure = "melee"
facts = ["charging(attacker)", "position(defender, attacker) is to_rear"]
[units.attacker]
type = "Horse"
[units.defender]
type = "Pike+Shot"
"#,
    );
    let w = o.get("winner").unwrap();
    assert_eq!(w.p(sym(&b, "defender")).to_f64(), 0.0);
    // Horse 3 dice at 1/2: P(no hit) = 1/8 is the draw.
    assert_eq!(frac(w.p(sym(&b, "draw"))), (1, 8));
}

/// §Commander casualties and §Commander in melee: an attached commander adds
/// a die hitting on 4-6, and risks falling when the unit takes hits.
#[test]
fn attached_commander_in_melee() {
    let mut b = tvbd();
    let o = exact(
        &mut b,
        r#"
procedure = "melee"
facts = ["attached_commander(defender)", "charging(attacker)"]
[units.attacker]
type = "Shot"
[units.defender]
type = "Shot"
"#,
    );
    // Attacker: 3 dice on 6. Defender: 3 dice on 6 plus 1 die on 4-6.
    // P(commander lost) = P(defender takes >= 1 hit) * (P(routed)*2/6 + P(not routed)*1/6);
    // the defender routs only on 3 hits (resolve 3).
    let p_hits = |k: u32| {
        let c = [1.0, 3.0, 3.0, 1.0][k as usize];
        c * (1.0f64 / 6.0).powi(k as i32) * (5.0f64 / 6.0).powi(3 - k as i32)
    };
    let expect = (p_hits(1) + p_hits(2)) / 6.0 + p_hits(3) * 2.0 / 6.0;
    let got = o
        .get("commander_lost")
        .unwrap()
        .p(Value::Bool(true))
        .to_f64();
    assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
    let d_hits = o.get("defender_hits").unwrap();
    // Defender hits = Bin(3, 1/6) + Bin(1, 1/2): P(0) = (5/6)^3 * 1/2.
    assert_eq!(frac(d_hits.p(Value::Int(0))), (125, 432));
}

/// §Step 4.2 Unit Rally: 1 resolve weakened through melee or shooting
/// (`weakened`), so up to the original resolve, never beyond; resolve lost
/// to command morale (§Step 4.1) is not recovered.
#[test]
fn unit_rally_restores_one_resolve() {
    let mut b = tvbd();
    let base = r#"
procedure = "unit_rally"
facts = ["attached_commander(u)"]
[units.u]
type = "Horse"
[units.u.state]
resolve = RESOLVE
weakened = WEAKENED
"#;
    // (resolve, weakened by hits, resolve after the rally)
    for (resolve, weakened, after) in [(1, 2, 2), (3, 0, 3), (2, 0, 2), (1, 1, 2)] {
        let text = base
            .replace("RESOLVE", &resolve.to_string())
            .replace("WEAKENED", &weakened.to_string());
        let o = exact(&mut b, &text);
        let p = o.get("resolve").unwrap().p(Value::Int(after)).to_f64();
        assert_eq!(p, 1.0, "resolve {resolve}, weakened {weakened}");
    }
}

/// §Shooting criteria: a unit that has already shot may not shoot; odds says so.
#[test]
fn shooting_twice_is_refused() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
procedure = "shoot"
[units.shooter]
type = "Shot"
[units.shooter.state]
shot_this_turn = true
[units.target]
type = "Horse"
"#,
    );
    let err = b.exact(&s).unwrap_err();
    assert_eq!(err.code, "muster::requirement");
}

/// §Shoot front before flank: with an enemy in range to front, a unit may
/// not shoot at one to its flank; cannons never shoot to a flank.
#[test]
fn front_before_flank() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        r#"
facts = ["position(musket, front_foe) is to_front", "position(musket, flank_foe) is to_flank",
         "position(gun, flank_foe) is to_flank", "position(gun, front_foe) is to_front",
         "position(musket, gun) is to_flank", "position(gun, musket) is to_flank"]
[units.musket]
type = "Shot"
side = "attacker"
[units.gun]
type = "Cannons"
side = "attacker"
[units.front_foe]
type = "Horse"
side = "defender"
[units.flank_foe]
type = "Horse"
side = "defender"
"#,
    );
    assert_eq!(query(&mut b, &s, "may_shoot_at(musket, front_foe)"), "true");
    assert_eq!(
        query(&mut b, &s, "may_shoot_at(musket, flank_foe)"),
        "false"
    );
    assert_eq!(query(&mut b, &s, "may_shoot_at(gun, flank_foe)"), "false");
}

// ------------------------------------------------------------------ exact against sampled

const MELEE_TYPES: [&str; 6] = [
    "Horse",
    "Light horse",
    "Dragoons",
    "Pike+Shot",
    "Shot",
    "Rabble",
];
const TARGETS: [&str; 7] = [
    "Horse",
    "Light horse",
    "Dragoons",
    "Pike+Shot",
    "Shot",
    "Rabble",
    "Cannons",
];

fn melee_situation(a: &str, d: &str, pos: &str, difficult: bool) -> String {
    let terrain = if difficult {
        r#", "in_difficult(attacker)", "in_difficult(defender)""#
    } else {
        ""
    };
    format!(
        r#"
procedure = "melee"
facts = ["charging(attacker)", "position(defender, attacker) is {pos}"{terrain}]
[units.attacker]
type = "{a}"
[units.defender]
type = "{d}"
"#
    )
}

/// Every exact probability agrees with 200,000 samples within 4.5 standard
/// errors of the sampled estimate (a false alarm about once in 150,000 checks).
#[test]
fn exact_and_sampled_agree_across_a_grid() {
    let mut b = tvbd();
    let n = 200_000u64;
    let mut checked = 0;
    for (i, (a, d, pos, diff)) in [
        ("Horse", "Pike+Shot", "to_front", false),
        ("Horse", "Pike+Shot", "to_flank", false),
        ("Horse", "Shot", "to_front", true),
        ("Light horse", "Dragoons", "to_rear", false),
        ("Pike+Shot", "Pike+Shot", "to_front", false),
        ("Rabble", "Shot", "to_flank", true),
        ("Dragoons", "Horse", "to_front", false),
    ]
    .into_iter()
    .enumerate()
    {
        let s = situation(&mut b, &melee_situation(a, d, pos, diff));
        let e = b.exact(&s).unwrap();
        let m = b.sampled(&s, n, 1000 + i as u64).unwrap();
        for oc in &e.outcomes {
            let so = m.get(&oc.name).unwrap();
            for (v, p) in &oc.values {
                let p = p.to_f64();
                let q = so.p(*v).to_f64();
                let se = (p * (1.0 - p) / n as f64).sqrt().max(1.0 / n as f64);
                assert!(
                    (p - q).abs() <= 4.5 * se,
                    "{a} vs {d} {pos}: {} = {v:?}: exact {p}, sampled {q}",
                    oc.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100);
}

/// The same seed and sample count give the same answer on 1 and 2 threads.
#[test]
fn sampling_is_deterministic_across_thread_counts() {
    let mut b = tvbd();
    let s = situation(
        &mut b,
        &melee_situation("Horse", "Pike+Shot", "to_front", false),
    );
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| b.sampled(&s, 50_000, 7).unwrap())
    };
    let one = run(1);
    let two = run(2);
    for (x, y) in one.outcomes.iter().zip(&two.outcomes) {
        let xv: Vec<(Value, f64)> = x.values.iter().map(|(v, p)| (*v, p.to_f64())).collect();
        let yv: Vec<(Value, f64)> = y.values.iter().map(|(v, p)| (*v, p.to_f64())).collect();
        assert_eq!(xv, yv);
    }
}

// ------------------------------------------------------------------ snapshots

/// Every unit type charging every other, front / flank / rear, open /
/// difficult: P(attacker wins), P(draw), P(defender wins), exact.
#[test]
fn melee_odds_table() {
    let mut b = tvbd();
    let mut out = String::from(
        "attacker -> defender, aspect, terrain: P(attacker wins) P(draw) P(defender wins)\n",
    );
    let (att, def, draw) = (sym(&b, "attacker"), sym(&b, "defender"), sym(&b, "draw"));
    for a in MELEE_TYPES {
        for d in TARGETS {
            for pos in ["to_front", "to_flank", "to_rear"] {
                for diff in [false, true] {
                    let o = exact(&mut b, &melee_situation(a, d, pos, diff));
                    let w = o.get("winner").unwrap();
                    out.push_str(&format!(
                        "{a:>11} -> {d:<11} {pos:<8} {:<9} {:.4} {:.4} {:.4}\n",
                        if diff { "difficult" } else { "open" },
                        w.p(att).to_f64(),
                        w.p(draw).to_f64(),
                        w.p(def).to_f64()
                    ));
                }
            }
        }
    }
    insta::assert_snapshot!("tvbd_melee_odds", out);
}

/// Every shooter at every target, front and flank, in the open and with the
/// target in difficult terrain: the dice thrown and P(0, 1, 2, 3+ hits).
#[test]
fn shooting_odds_table() {
    let mut b = tvbd();
    let mut out = String::from(
        "shooter -> target, aspect, target terrain: dice; P(0) P(1) P(2) P(3+ hits)\n",
    );
    for s in [
        "Horse",
        "Light horse",
        "Dragoons",
        "Pike+Shot",
        "Shot",
        "Cannons",
    ] {
        for t in TARGETS {
            for pos in ["to_front", "to_flank"] {
                for diff in [false, true] {
                    let terrain = if diff {
                        r#", "in_difficult(target)""#
                    } else {
                        ""
                    };
                    let text = format!(
                        r#"
procedure = "shoot"
facts = ["position(shooter, target) is {pos}"{terrain}]
[units.shooter]
type = "{s}"
[units.target]
type = "{t}"
"#
                    );
                    let sit = situation(&mut b, &text);
                    let line = match b.exact(&sit) {
                        Ok(o) => {
                            let h = o.get("hits").unwrap();
                            let dice = o.get("dice").unwrap().values[0].0;
                            let p = |k: i64| h.p(Value::Int(k)).to_f64();
                            let three = h
                                .values
                                .iter()
                                .filter(|(v, _)| v.as_int().unwrap() >= 3)
                                .fold(0.0, |acc, x| acc + x.1.to_f64());
                            format!(
                                "{:?}; {:.4} {:.4} {:.4} {:.4}",
                                dice.as_int().unwrap(),
                                p(0),
                                p(1),
                                p(2),
                                three
                            )
                        }
                        Err(d) => format!("may not shoot ({})", d.code),
                    };
                    out.push_str(&format!(
                        "{s:>11} -> {t:<11} {pos:<8} {:<9} {line}\n",
                        if diff { "difficult" } else { "open" }
                    ));
                }
            }
        }
    }
    insta::assert_snapshot!("tvbd_shooting_odds", out);
}

/// The typed fast tier (machine code, or interpreted with MUSTER_NO_JIT=1)
/// and the general bytecode roll the same dice in the same order, so one
/// seed gives one answer whichever tier runs.
#[test]
fn both_bytecode_tiers_agree() {
    let mut b = tvbd();
    for (a, d, pos, diff) in [
        ("Horse", "Pike+Shot", "to_front", false),
        ("Shot", "Dragoons", "to_flank", true),
    ] {
        let s = situation(&mut b, &melee_situation(a, d, pos, diff));
        let prog = b.program(&s).unwrap();
        match muster::run::odds::compile_for_sampling(&b.ruleset, &prog) {
            // MUSTER_NO_JIT=1 asks for the interpreted typed tier instead.
            muster::run::odds::Compiled::Typed(t) => assert_eq!(
                t.is_native(),
                std::env::var_os("MUSTER_NO_JIT").is_none(),
                "the melee should run as machine code unless MUSTER_NO_JIT is set"
            ),
            muster::run::odds::Compiled::General(_) => {
                panic!("the melee should fit the typed tier")
            }
        }
        let general = muster::run::bytecode::compile(&b.ruleset, &prog);
        let mut r1 = muster::base::rng::Rng::new(99);
        let mut r2 = muster::base::rng::Rng::new(99);
        let fast = muster::run::odds::tally(&b.ruleset, &prog, 20_000, &mut r1).unwrap();
        let slow =
            muster::run::odds::tally_code(&b.ruleset, &prog, &general, 20_000, &mut r2).unwrap();
        for (f, s) in fast.iter().zip(&slow) {
            let mut f = f.clone();
            let mut s = s.clone();
            f.sort();
            s.sort();
            assert_eq!(f, s);
        }
    }
}

/// §Initiative: a roll-off, re-rolling ties: each army attacks half the time;
/// a scripted tie (3, 3) is rolled again (5, 2) and the first army attacks.
#[test]
fn initiative_is_a_roll_off() {
    let mut b = tvbd();
    let o = exact(&mut b, "procedure = \"initiative\"\n");
    let a = o.get("attacker_is").unwrap();
    assert_eq!(frac(a.p(sym(&b, "first_army"))), (1, 2));
    assert_eq!(frac(a.p(sym(&b, "second_army"))), (1, 2));
    let s = situation(&mut b, "procedure = \"initiative\"\nrolls = [3, 3, 5, 2]\n");
    let o = b.scripted(&s).unwrap();
    assert_eq!(
        o.get("attacker_is")
            .unwrap()
            .p(sym(&b, "first_army"))
            .to_f64(),
        1.0
    );
    let plain = situation(&mut b, "procedure = \"initiative\"\n");
    let sampled = b.sampled(&plain, 100_000, 5).unwrap();
    let p = sampled
        .get("attacker_is")
        .unwrap()
        .p(sym(&b, "first_army"))
        .to_f64();
    // 4.5 standard errors of 100,000 samples at 1/2.
    assert!((p - 0.5).abs() < 4.5 * (0.25f64 / 100_000.0).sqrt(), "{p}");
}
