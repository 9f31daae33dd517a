//! Claims and Colours (rules/claims_and_colours.muster), the port of the
//! coloured-dice quick reference sheet: every situation of
//! rules/situations/claims_*.toml answered exactly, each answer checked
//! against an enumeration of every face of every die written here from the
//! sheet (and the port's assumed face counts), not from the engine; the
//! charge also against a large sampled run; the odds tables pinned; and the
//! face counts changed through the number options and a house rule.

use crate::common;
use muster::base::value::Value;
use muster::run::odds::Odds;
use muster::Build;
use std::collections::BTreeMap;
use std::path::Path;

const RULESET: &str = "rules/claims_and_colours.muster";

fn claims() -> Build {
    common::ruleset(RULESET)
}

fn situation(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules/situations")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

// ------------------------------------------------------------------ the dice, by hand

#[derive(Clone, Copy, PartialEq, Debug)]
enum Face {
    Blank,
    S,
    W1,
    W2,
}

/// A colour's face counts (blank, S, W1, W2): the port's stated assumption.
#[derive(Clone, Copy)]
struct Colour([u32; 4]);

const RED: Colour = Colour([1, 1, 2, 2]);
const YELLOW: Colour = Colour([1, 1, 3, 1]);
const GREEN: Colour = Colour([2, 1, 2, 1]);
const WHITE: Colour = Colour([3, 1, 2, 0]);
const BLACK: Colour = Colour([4, 1, 1, 0]);

impl Colour {
    fn faces(self) -> Vec<Face> {
        let kinds = [Face::Blank, Face::S, Face::W1, Face::W2];
        kinds
            .iter()
            .zip(self.0)
            .flat_map(|(f, n)| std::iter::repeat_n(*f, n as usize))
            .collect()
    }
}

/// §Effect of Dice in Combat: (wounds, potential shove or shatter).
fn combat(f: Face) -> (i64, i64) {
    match f {
        Face::Blank => (0, 0),
        Face::S => (1, 1),
        Face::W1 => (1, 0),
        Face::W2 => (2, 1),
    }
}

/// §Effect of Dice in Shooting: (wounds, drive backs).
fn fire(f: Face, flintlock: bool) -> (i64, i64) {
    match f {
        Face::Blank => (0, 0),
        Face::S => (i64::from(flintlock), 1),
        Face::W1 => (1, 1),
        Face::W2 => (2, 1),
    }
}

/// An exact probability.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frac(u128, u128);

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Frac {
    fn reduced(self) -> Frac {
        let g = gcd(self.0, self.1).max(1);
        Frac(self.0 / g, self.1 / g)
    }
    fn plus(self, o: Frac) -> Frac {
        Frac(self.0 * o.1 + o.0 * self.1, self.1 * o.1).reduced()
    }
}

/// Outcome -> value -> probability.
type Table = BTreeMap<String, BTreeMap<i64, Frac>>;

/// Every way `dice` can fall, each equally likely, mapped by `f` to outcome
/// values.
fn enumerate(dice: &[Colour], mut f: impl FnMut(&[Face]) -> Vec<(&'static str, i64)>) -> Table {
    let faces: Vec<Vec<Face>> = dice.iter().map(|c| c.faces()).collect();
    let total: u128 = faces.iter().map(|f| f.len() as u128).product();
    let mut idx = vec![0usize; faces.len()];
    let mut out = Table::new();
    loop {
        let shown: Vec<Face> = idx.iter().zip(&faces).map(|(i, f)| f[*i]).collect();
        for (name, v) in f(&shown) {
            let e = out
                .entry(name.to_string())
                .or_default()
                .entry(v)
                .or_insert(Frac(0, 1));
            *e = e.plus(Frac(1, total));
        }
        let mut carry = true;
        for (i, f) in idx.iter_mut().zip(&faces).rev() {
            *i += 1;
            if *i < f.len() {
                carry = false;
                break;
            }
            *i = 0;
        }
        if carry {
            return out;
        }
    }
}

/// The engine's exact odds of the outcomes `want` enumerates, as numbers
/// (false 0, true 1), must be the enumeration's, value for value.
fn agrees(o: &Odds, want: &Table) {
    for (name, dist) in want {
        let got = o.get(name).unwrap_or_else(|| panic!("no outcome {name}"));
        let mut mine: BTreeMap<i64, Frac> = BTreeMap::new();
        for (v, p) in &got.values {
            let k = match v {
                Value::Int(i) => *i,
                Value::Bool(b) => i64::from(*b),
                other => panic!("{name}: {other:?} is not a number"),
            };
            let (n, d) = p.fraction().expect("exact");
            mine.insert(k, Frac(n, d));
        }
        assert_eq!(&mine, dist, "{name}");
    }
}

fn exact(name: &str) -> Odds {
    common::exact(&mut claims(), &situation(name))
}

fn sum(faces: &[Face], read: impl Fn(Face) -> (i64, i64)) -> (i64, i64) {
    faces.iter().fold((0, 0), |(a, b), f| {
        let (x, y) = read(*f);
        (a + x, b + y)
    })
}

/// One file's combat against another, as `file_combat` plays it: the
/// wounds each way, the shoves and shatters, the breaks (TUG Break: bases
/// lost before, half the TUG's bases rounded up).
struct Fight {
    on_d: i64,
    on_a: i64,
    a_pot: i64,
    d_pot: i64,
    a_broken: bool,
    d_broken: bool,
}

fn breaks(bases: i64, lost: i64, wounds: i64) -> bool {
    wounds > 0 && lost + wounds > (bases + 1) / 2
}

impl Fight {
    fn outcomes(&self, a_breaks: bool, d_breaks: bool) -> Vec<(&'static str, i64)> {
        vec![
            ("wounds_on_defender", self.on_d),
            ("wounds_on_attacker", self.on_a),
            ("attacker_shatters", i64::from(self.a_pot > 0 && d_breaks)),
            (
                "attacker_shoves",
                i64::from(self.a_pot > 0 && !d_breaks && self.on_d > self.on_a),
            ),
            ("defender_shatters", i64::from(self.d_pot > 0 && a_breaks)),
            (
                "defender_shoves",
                i64::from(self.d_pot > 0 && !a_breaks && self.on_a > self.on_d),
            ),
            ("attacker_broken", i64::from(self.a_broken)),
            ("defender_broken", i64::from(self.d_broken)),
        ]
    }
}

// ------------------------------------------------------------------ the situations

/// Pistol-armed horse (4 bases, 5BW move) charge stationary Pike & Shot
/// 3BW away through the fire of two files: WHITE each (foot shot at
/// mounted), each effect doubled (shot at cavalry), capped at the horse's
/// move; contact if the horse still covers 3BW; then the horse claim 1
/// (pistol) against 3 (Pike & Shot stationary vs mounted): WHITE against
/// YELLOW.
#[test]
fn horse_charging_pike_and_shot() {
    let o = exact("claims_horse_charge_pike_and_shot.toml");
    let want = enumerate(&[WHITE, WHITE, WHITE, YELLOW], |f| {
        let (fire_w, effects) = sum(&f[..2], |x| fire(x, false));
        let driven = (2 * effects).min(5);
        let contact = 5 - driven >= 3;
        let mut out = vec![
            ("fire_wounds", fire_w),
            ("drive_back_effects", effects),
            ("driven_back", driven),
            ("contact", i64::from(contact)),
        ];
        if contact {
            let (on_d, a_pot) = combat(f[2]);
            let (on_a, d_pot) = combat(f[3]);
            let a_breaks = breaks(4, fire_w, on_a);
            let d_breaks = breaks(8, 0, on_d);
            let fight = Fight {
                on_d,
                on_a,
                a_pot,
                d_pot,
                a_broken: a_breaks,
                d_broken: d_breaks,
            };
            out.extend(fight.outcomes(a_breaks, d_breaks));
            out.push(("attacker_claims", 1));
            out.push(("defender_claims", 3));
        } else {
            out.extend(
                Fight {
                    on_d: 0,
                    on_a: 0,
                    a_pot: 0,
                    d_pot: 0,
                    a_broken: false,
                    d_broken: false,
                }
                .outcomes(false, false),
            );
            // The claims are made whether or not the charge goes home.
            out.push(("attacker_claims", 1));
            out.push(("defender_claims", 3));
        }
        out
    });
    agrees(&o, &want);
    // By hand: the charge goes home unless both dice show a face (1/2 each).
    let contact = o.get("contact").unwrap();
    assert_eq!(contact.p(Value::Bool(true)).fraction(), Some((3, 4)));
}

/// The same charge sampled a million times: within sampling error of the
/// exact answer, outcome by outcome.
#[test]
fn horse_charging_pike_and_shot_sampled() {
    let mut b = claims();
    let text = situation("claims_horse_charge_pike_and_shot.toml");
    let e = common::exact(&mut b, &text);
    let n = 1_000_000u64;
    let s = common::sampled(&mut b, &text, n, 31);
    for oc in &e.outcomes {
        for (v, pe) in &oc.values {
            let pe = pe.to_f64();
            let ps = s.get(&oc.name).unwrap().p(*v).to_f64();
            let se = (pe * (1.0 - pe) / n as f64).sqrt().max(1.0 / n as f64);
            assert!(
                (pe - ps).abs() <= 4.5 * se,
                "{}: {v:?} exact {pe}, sampled {ps}",
                oc.name
            );
        }
    }
}

/// Cuirassiers charge the flank of a Tercio: 4 claims (flank charge) to 0,
/// RED and WHITE against BLACK, 1 automatic wound on the Tercio.
#[test]
fn a_flank_charge() {
    let o = exact("claims_flank_charge.toml");
    let want = enumerate(&[RED, WHITE, BLACK], |f| {
        let (w, a_pot) = sum(&f[..2], combat);
        let (on_a, d_pot) = combat(f[2]);
        let on_d = w + 1;
        let d_breaks = breaks(12, 0, on_d);
        let a_breaks = breaks(4, 0, on_a);
        let mut out = Fight {
            on_d,
            on_a,
            a_pot,
            d_pot,
            a_broken: a_breaks,
            d_broken: d_breaks,
        }
        .outcomes(a_breaks, d_breaks);
        out.push(("attacker_claims", 4));
        out.push(("defender_claims", 0));
        out
    });
    agrees(&o, &want);
    let dice = &o.get("attacker_dice").unwrap().values;
    assert_eq!(claims().ruleset.show_pool(pool(dice[0].0)), "red + white");
}

fn pool(v: Value) -> u32 {
    match v {
        Value::Pool(p) => p,
        other => panic!("{other:?} is not a pool"),
    }
}

/// A Fighting Phase melee with a general in the file: the superior Swedes
/// claim 3 (quality, general, pistol), the cuirassiers 2 (armour, pistol):
/// GREEN against WHITE.
#[test]
fn a_melee_with_a_general_in_the_file() {
    let o = exact("claims_melee_general_in_file.toml");
    let want = enumerate(&[GREEN, WHITE], |f| {
        let (on_d, a_pot) = combat(f[0]);
        let (on_a, d_pot) = combat(f[1]);
        let (a_breaks, d_breaks) = (breaks(4, 0, on_a), breaks(4, 0, on_d));
        let mut out = Fight {
            on_d,
            on_a,
            a_pot,
            d_pot,
            a_broken: a_breaks,
            d_broken: d_breaks,
        }
        .outcomes(a_breaks, d_breaks);
        out.push(("attacker_claims", 3));
        out.push(("defender_claims", 2));
        out
    });
    agrees(&o, &want);
    // Without the general the claims are level: GREEN each.
    let text = situation("claims_melee_general_in_file.toml").replace(
        "facts = [\"general_fighting(swedes) is general_in_file\"]",
        "",
    );
    let o = common::exact(&mut claims(), &text);
    assert_eq!(o.get("attacker_claims").unwrap().values[0].0, Value::Int(2));
    let b = claims();
    let d = |name: &str| b.ruleset.show_pool(pool(o.get(name).unwrap().values[0].0));
    assert_eq!(
        (d("attacker_dice"), d("defender_dice")),
        ("green".into(), "green".into())
    );
}

/// Four files of fusiliers at deadly range on Highlanders: RED (two
/// upgrades), flintlocks (S wounds); the drive back capped at the
/// Highlanders' 3BW move; 6 bases, broken past 3 lost.
#[test]
fn a_volley_at_deadly_range_with_upgrades() {
    let o = exact("claims_volley_deadly_range.toml");
    let want = enumerate(&[RED, RED, RED, RED], |f| {
        let (w, effects) = sum(f, |x| fire(x, true));
        vec![
            ("fire_wounds", w),
            ("drive_back_effects", effects),
            ("driven_back", effects.min(3)),
            ("target_broken", i64::from(breaks(6, 0, w))),
        ]
    });
    agrees(&o, &want);
}

/// Two files of Pike & Shot at long range into cover: BLACK (two
/// downgrades); matchlocks (S does not wound).
#[test]
fn a_volley_at_long_range_into_cover() {
    let o = exact("claims_volley_long_range_cover.toml");
    let want = enumerate(&[BLACK, BLACK], |f| {
        let (w, effects) = sum(f, |x| fire(x, false));
        vec![
            ("fire_wounds", w),
            ("drive_back_effects", effects),
            ("driven_back", effects.min(3)),
            ("target_broken", i64::from(breaks(4, 0, w))),
        ]
    });
    agrees(&o, &want);
}

/// The drive back tally (ME17.J): WHITE dice; each effect counted twice
/// (shot at cavalry), one less for superior troops, never below 0 nor
/// past the cuirassiers' 5BW move.
#[test]
fn a_drive_back_tally() {
    let o = exact("claims_drive_back_tally.toml");
    let want = enumerate(&[WHITE, WHITE, WHITE], |f| {
        let (w, effects) = sum(f, |x| fire(x, false));
        vec![
            ("fire_wounds", w),
            ("drive_back_effects", effects),
            ("driven_back", (2 * effects - 1).clamp(0, 5)),
        ]
    });
    agrees(&o, &want);
    // The tally alone, with no dice: 2 effects of shot on a Keil (-3): 0;
    // on drilled superior foot at 2 (no cavalry bonus): 0; 4 effects of
    // shot on cavalry, 8, capped at 5.
    let mut b = claims();
    for (target, quality, effects, want) in [
        ("Keil", "average", 2, 0),
        ("Fusiliers", "superior", 2, 0),
        ("Fusiliers", "average", 3, 2),
        ("Horse", "average", 4, 5),
    ] {
        let text = format!(
            "procedure = \"drive_back\"\nfacts = []\n[args]\ns = \"pike\"\nt = \"target\"\neffects = {effects}\nshooting_phase = true\n\
             [units.pike]\ntype = \"Pike & Shot\"\nside = \"near\"\n\
             [units.target]\ntype = \"{target}\"\nquality = \"{quality}\"\nside = \"far\"\n"
        );
        let o = common::exact(&mut b, &text);
        assert_eq!(
            o.get("driven_back").unwrap().values[0].0,
            Value::Int(want),
            "{target} {quality} {effects}"
        );
    }
}

/// A poor TUG driven into friends (U4): 1 automatic wound and a RED die;
/// 3 of 8 bases lost before, so any wound of the die breaks it.
#[test]
fn a_kab_test() {
    let o = exact("claims_kab_test.toml");
    let want = enumerate(&[RED], |f| {
        let (w, _) = match f[0] {
            Face::Blank => (0, 0),
            Face::S | Face::W1 => (1, 0),
            Face::W2 => (2, 0),
        };
        vec![
            ("kab_wounds", 1 + w),
            ("broken", i64::from(breaks(8, 3, 1 + w))),
        ]
    });
    agrees(&o, &want);
    // No reason to test, no test: the requirement says why.
    let mut b = claims();
    let text = situation("claims_kab_test.toml").replace(
        "facts = [\"kab_trigger(pike, driven_into_friends)\"]",
        "facts = [\"kab_trigger(pike, camp_sacked)\"]",
    );
    let s = common::situation(&mut b, &text);
    let e = b
        .exact(&s)
        .expect_err("a sacked camp is tested at the end of the turn");
    assert!(e.message.contains("U1-U8"), "{}", e.message);
    // A talented general who lost a base in his file (G1): 1 wound and a
    // GREEN die.
    let general = "procedure = \"general_kab_test\"\n\
        facts = [\"general_kab_trigger(g, base_lost_in_his_file)\"]\n\
        [args]\ng = \"g\"\n[units.g]\ntype = \"General\"\nquality = \"talented\"\nside = \"near\"\n";
    let o = common::exact(&mut b, general);
    let want = enumerate(&[GREEN], |f| {
        let w = match f[0] {
            Face::Blank => 0,
            Face::S | Face::W1 => 1,
            Face::W2 => 2,
        };
        // Reading: a general is killed by 3 wounds or more (a W2 face).
        vec![("kab_wounds", 1 + w), ("killed", i64::from(w == 2))]
    });
    agrees(&o, &want);
}

/// The variable move of an evade by skirmish: Croats move 6BW; the 1D6
/// scores 0 -3BW, 1 -2BW, 2 -1BW, 3-5 nothing, 6 +1BW, 7 +2BW; then -2BW
/// for the skirmish.
#[test]
fn a_variable_move() {
    let o = exact("claims_variable_move.toml");
    let mut want: Table = Table::new();
    for roll in 1..=6i64 {
        let change = match roll {
            0 => -3,
            1 => -2,
            2 => -1,
            3..=5 => 0,
            6 => 1,
            _ => 2,
        } - 2;
        for (name, v) in [
            ("score", roll),
            ("change", change),
            ("distance", 6 + change),
        ] {
            let e = want
                .entry(name.into())
                .or_default()
                .entry(v)
                .or_insert(Frac(0, 1));
            *e = e.plus(Frac(1, 6));
        }
    }
    agrees(&o, &want);
    // A poor unit: 1D6 - 1, so a 1 scores 0 (-3BW); with the optional rule a
    // superior one scores up to 7 (+2BW).
    let mut b = claims();
    let poor = situation("claims_variable_move.toml")
        .replace("side = \"near\"", "side = \"near\"\nquality = \"poor\"");
    let o = common::exact(&mut b, &poor);
    assert_eq!(
        o.get("change").unwrap().p(Value::Int(-5)).fraction(),
        Some((1, 6))
    );
    let better = situation("claims_variable_move.toml")
        .replace("side = \"near\"", "side = \"near\"\nquality = \"superior\"")
        .replace(
            "[args]",
            "[options]\nquality_variable_move = true\n\n[args]",
        );
    let o = common::exact(&mut b, &better);
    assert_eq!(
        o.get("change").unwrap().p(Value::Int(0)).fraction(),
        Some((1, 6))
    );
}

// ------------------------------------------------------------------ snapshots

/// Every situation's exact odds, as one table: each outcome's values with
/// their fractions. A change to the rules or the dice shows up here.
fn odds_table(b: &mut Build) -> String {
    let mut out = String::new();
    let mut names: Vec<_> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/situations"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("claims_"))
            .collect();
    names.sort();
    for name in names {
        let s = common::situation(b, &situation(&name));
        let o = b.exact(&s).unwrap();
        out.push_str(&format!("== {name}\n"));
        for oc in &o.outcomes {
            let vals: Vec<String> = oc
                .values
                .iter()
                .map(|(v, p)| {
                    let (n, d) = p.fraction().unwrap();
                    format!("{} {n}/{d}", s.world.show_typed(&b.ruleset, &oc.ty, *v))
                })
                .collect();
            out.push_str(&format!("{}: {}\n", oc.name, vals.join("; ")));
        }
    }
    out
}

#[test]
fn claims_odds_tables() {
    insta::assert_snapshot!("claims_odds", odds_table(&mut claims()));
}

// ------------------------------------------------------------------ face counts

/// The face counts are the port's assumption: a WHITE die with 4 blank
/// faces (7 sides), set on the command line's way or by a house rule,
/// changes the charge as the enumeration of that die says.
#[test]
fn changing_a_face_count_changes_the_odds_as_the_arithmetic_says() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RULESET);
    let by_option = muster::build_with(&path, &[("white_blank".into(), 4)])
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let house = "extends \"claims_and_colours.muster\"\noverride option white_blank \"my WHITE dice\" = 4\n";
    let by_house_rule = muster::build_text("my_dice.muster", house, path.parent())
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let wide = Colour([4, 1, 2, 0]);
    for mut b in [by_option, by_house_rule] {
        let o = common::exact(&mut b, &situation("claims_horse_charge_pike_and_shot.toml"));
        let want = enumerate(&[wide, wide], |f| {
            let (_, effects) = sum(f, |x| fire(x, false));
            vec![("contact", i64::from(5 - (2 * effects).min(5) >= 3))]
        });
        agrees(&o, &want);
        // P(contact) = P(at most one face of two) = 1 - (3/7)^2 = 40/49.
        assert_eq!(
            o.get("contact").unwrap().p(Value::Bool(true)).fraction(),
            Some((40, 49))
        );
        // The table of every situation changes where WHITE is rolled, and
        // nowhere else.
        let before = odds_table(&mut claims());
        let after = odds_table(&mut b);
        let changed: Vec<&str> = before
            .split("== ")
            .zip(after.split("== "))
            .filter(|(x, y)| x != y)
            .map(|(x, _)| x.lines().next().unwrap_or(""))
            .collect();
        assert_eq!(
            changed,
            [
                "claims_drive_back_tally.toml",
                "claims_files_charge.toml",
                "claims_fire_and_charge.toml",
                "claims_flank_charge.toml",
                "claims_horse_charge_pike_and_shot.toml",
                "claims_melee_general_in_file.toml"
            ]
        );
    }
}

/// Every situation but the variable move (its table is keyed by the roll,
/// which only the general bytecode reads) and the file-by-file charge (its
/// `facing_file` fact takes the loop's file, known only in play) sampled
/// on the fast tier (the casualties' `remove_bases` is a formation
/// builtin, which that tier calls)
/// (machine code) and on the general bytecode from one seed: the same dice in the same order, so the
/// same counts (outcomes that are constant are counted once for all runs
/// on the fast tier, and `and`s whose right side cannot fail have no
/// branch there: neither may change a count).
#[test]
fn the_sampling_tiers_agree() {
    let mut b = claims();
    for name in [
        "claims_horse_charge_pike_and_shot.toml",
        "claims_flank_charge.toml",
        "claims_melee_general_in_file.toml",
        "claims_volley_deadly_range.toml",
        "claims_kab_test.toml",
        "claims_drive_back_tally.toml",
        "claims_volley_long_range_cover.toml",
    ] {
        let s = common::situation(&mut b, &situation(name));
        let prog = b.program(&s).unwrap();
        assert!(
            matches!(
                muster::run::odds::compile_for_sampling(&b.ruleset, &prog),
                muster::run::odds::Compiled::Typed(_)
            ),
            "{name} fits the fast tier"
        );
        let general = muster::run::bytecode::compile(&b.ruleset, &prog);
        let (mut r1, mut r2) = (
            muster::base::rng::Rng::new(3),
            muster::base::rng::Rng::new(3),
        );
        let fast = muster::run::odds::tally(&b.ruleset, &prog, 30_000, &mut r1).unwrap();
        let slow =
            muster::run::odds::tally_code(&b.ruleset, &prog, &general, 30_000, &mut r2).unwrap();
        for (f, s) in fast.iter().zip(&slow) {
            let (mut f, mut s) = (f.clone(), s.clone());
            f.sort();
            s.sort();
            assert_eq!(f, s, "{name}");
        }
    }
}

// ------------------------------------------------------------------ bad input

/// A house rule on top of the port, which must be rejected: its one
/// diagnostic, with a place, a label and a help line.
fn refused(extra: &str) -> muster::front::diagnostic::Diag {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let text = format!("extends \"claims_and_colours.muster\"\n{extra}\n");
    match muster::build_text("house.muster", &text, Some(&dir)) {
        Ok(_) => panic!("compiled, but it has a mistake:\n{extra}"),
        Err((d, s)) => {
            let shown = muster::front::diagnostic::render_plain(&d, &s);
            assert_eq!(d.len(), 1, "{shown}");
            assert!(d[0].span.is_some() && !d[0].label.is_empty(), "{shown}");
            assert!(
                d[0].help.as_deref().is_some_and(|h| !h.is_empty()),
                "{shown}"
            );
            d.into_iter().next().unwrap()
        }
    }
}

/// A face read as a tally its block does not yield: the block's tallies
/// are named.
#[test]
fn a_face_with_an_unknown_tally_is_refused() {
    let d = refused("effects push -> { wounds, shoves } { S => wounds 1, shove 1 }");
    assert_eq!(d.message, "`push` yields no tally `shove`");
    assert_eq!(d.help.as_deref(), Some("did you mean `shoves`?"));
    let d = refused("effects push -> { wounds } { W2 => wounds 2, drive_backs 1 }");
    assert_eq!(d.message, "`push` yields no tally `drive_backs`");
    assert_eq!(
        d.help.as_deref(),
        Some("the tallies are declared after `->`: { wounds }")
    );
}

/// A pool naming a die never declared, added to a table's dice or in a
/// table of dice: "unknown die", once (the roll's `let` is not reported
/// again as an unknown name where it is read).
#[test]
fn a_pool_of_an_undeclared_die_is_refused() {
    let d = refused(
        "procedure blue_charge(x: int) outcomes { w: int } {\n  \
         let r = roll combat_dice(x) + blue as combat\n  outcome w = r.wounds\n}",
    );
    assert_eq!(d.message, "unknown die `blue`");
    assert!(d.help.as_deref().unwrap().contains("die blue = {"), "{d:?}");
    let d = refused("table mine(x: int in 0..1) -> dice {\n  0 => red\n  1 => red + whte\n}");
    assert_eq!(d.message, "unknown die `whte`");
    assert_eq!(d.help.as_deref(), Some("did you mean `white`?"));
    let d = refused(
        "procedure blue_volley(n: int) outcomes { w: int } {\n  \
         let r = roll n blue as fire(false)\n  outcome w = r.wounds\n}",
    );
    assert_eq!(d.message, "unknown die `blue`");
}

/// A face count below 0, from the command line's option or a house rule:
/// refused where the die counts it, saying what a count may be.
#[test]
fn a_negative_face_count_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RULESET);
    let Err((d, s)) = muster::build_with(&path, &[("red_w2".into(), -1)]) else {
        panic!("a RED die with -1 faces of 2 wounds was accepted");
    };
    let shown = muster::front::diagnostic::render_plain(&d, &s);
    assert_eq!(d.len(), 1, "{shown}");
    assert_eq!(d[0].message, "option `red_w2` counts -1 faces of `W2`");
    assert_eq!(d[0].label, "from 0 to 1,000 faces");
    assert_eq!(
        d[0].help.as_deref(),
        Some("set `red_w2` to a count from 0 to 1000")
    );
    // The place is the count in the die's declaration.
    assert!(shown.contains("W2 x red_w2"), "{shown}");
    let d = refused("override option white_s \"my WHITE dice\" = -2");
    assert_eq!(d.message, "option `white_s` counts -2 faces of `S`");
}

/// A ladder asked for a rung it has no row for: the roll that finds no dice
/// is the place, exactly and sampled alike, and the help says how to end a
/// ladder. (The port's own ladders end in open rows, `..0 => none` and
/// `5.. => red`, so they have no such rung; a shorter one does.)
#[test]
fn a_ladder_step_past_the_end_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let house = "extends \"claims_and_colours.muster\"\n\
        table short_ladder(rung: int in 0..2) -> dice {\n  0 => none\n  1 => black\n  2 => white\n}\n\
        procedure short_volley(rung: int) outcomes { w: int } {\n  \
        let r = roll 2 * short_ladder(rung) as fire(false)\n  outcome w = r.wounds\n}\n";
    let mut b = muster::build_text("house.muster", house, Some(&dir))
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    // On the ladder: 2 WHITE dice, each wounding on 2 faces of 6.
    let s = common::situation(&mut b, "procedure = \"short_volley\"\n[args]\nrung = 2\n");
    let o = b.exact(&s).unwrap();
    assert_eq!(
        o.get("w").unwrap().p(Value::Int(0)).fraction(),
        Some((4, 9))
    );
    let s = common::situation(&mut b, "procedure = \"short_volley\"\n[args]\nrung = 3\n");
    let exact = b.exact(&s).expect_err("rung 3 is past the ladder");
    let sampled = b
        .sampled(&s, 100, 1)
        .expect_err("rung 3 is past the ladder");
    for d in [exact, sampled] {
        assert_eq!(
            d.message,
            "this roll has no dice: a table of dice had no row for its key"
        );
        assert_eq!(d.label, "no dice to roll here");
        assert!(
            d.help.as_deref().unwrap().contains("`..0 => none`"),
            "{d:?}"
        );
        let shown = muster::front::diagnostic::render_plain(&[d], &b.sources);
        assert!(
            shown.contains("roll 2 * short_ladder(rung) as fire(false)"),
            "{shown}"
        );
    }
}

/// Casualties keep the formation in odds as on the table: 2 RED dice
/// wound a Pike & Shot TUG (8 bases in 4 files), its bases come off the
/// rear keeping the width (`remove_bases`), and the files and bases left
/// read the same exactly, on the fast tier (machine code, or interpreted
/// with MUSTER_NO_JIT=1) and on the general bytecode. Before the fast
/// tier ran the formation builtins, such a procedure fell back to the
/// general bytecode (and the port kept formations only in battles).
#[test]
fn casualties_keep_the_formation_on_every_odds_tier() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let house = "extends \"claims_and_colours.muster\"\n\
        procedure hit(t: unit) outcomes { files_left: int, bases_left: int, deepest: int } {\n  \
        let r = roll 2 * red as combat\n  call take_wounds(t, r.wounds)\n  \
        outcome files_left = files(t.formation)\n  \
        outcome bases_left = formation_bases(t.formation)\n  \
        outcome deepest = formation_ranks(t.formation)\n}\n";
    let mut b = muster::build_text("house.muster", house, Some(&dir))
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let text = "procedure = \"hit\"\n[args]\nt = \"foot\"\n[units.foot]\ntype = \"Pike & Shot\"\nside = \"far\"\n";
    let s = common::situation(&mut b, text);
    let exact = b.exact(&s).unwrap();
    // A RED die: 1 blank, 1 S (1 wound), 2 W1, 2 W2 of 6; two of them
    // wound 0 to 4 times. The width stays 4 files until a file would
    // lose its last base, which 4 wounds of 8 bases never make it do.
    let files = exact.get("files_left").unwrap();
    assert_eq!(files.p(Value::Int(4)).fraction(), Some((1, 1)));
    let bases = exact.get("bases_left").unwrap();
    // 4 wounds: both dice W2 (2/6 each).
    assert_eq!(bases.p(Value::Int(4)).fraction(), Some((1, 9)));
    // No wound: both blank.
    assert_eq!(bases.p(Value::Int(8)).fraction(), Some((1, 36)));
    let deepest = exact.get("deepest").unwrap();
    // Files of 2 until the fourth wound leaves every file one base deep.
    assert_eq!(
        deepest.p(Value::Int(1)).fraction(),
        bases.p(Value::Int(4)).fraction()
    );
    let prog = b.program(&s).unwrap();
    assert!(matches!(
        muster::run::odds::compile_for_sampling(&b.ruleset, &prog),
        muster::run::odds::Compiled::Typed(_)
    ));
    let general = muster::run::bytecode::compile(&b.ruleset, &prog);
    let (mut r1, mut r2) = (
        muster::base::rng::Rng::new(5),
        muster::base::rng::Rng::new(5),
    );
    let fast = muster::run::odds::tally(&b.ruleset, &prog, 20_000, &mut r1).unwrap();
    let slow = muster::run::odds::tally_code(&b.ruleset, &prog, &general, 20_000, &mut r2).unwrap();
    for (f, s) in fast.iter().zip(&slow) {
        let (mut f, mut s) = (f.clone(), s.clone());
        f.sort();
        s.sort();
        assert_eq!(f, s);
    }
    // The fast tier's bases left: 8 minus the wounds, never a value the
    // exact answer does not have.
    let sampled = b.sampled(&s, 20_000, 5).unwrap();
    let got = sampled.get("bases_left").unwrap();
    for v in 0..=8 {
        let e = bases.p(Value::Int(v)).to_f64();
        let g = got.p(Value::Int(v)).to_f64();
        assert!((e - g).abs() < 0.015, "{v} bases: {e} exact, {g} sampled");
    }
}
