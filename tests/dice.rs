//! Dice constructs through the whole pipeline (parse, compile, specialise,
//! exact and sampled): custom dice with named faces, rerolls, sums.

use muster::base::value::Value;

const RULES: &str = r#"
import core

// A coloured die in the manner of the prompted-actions QRS (its face counts
// are not given by the sheet; these are a test's own).
die green = { blank x3, shove = 1, wound = 1, wounds = 2 }

procedure pools() outcomes {
  wounds: int,
  wound_value: int,
  rerolled_sixes: int,
  rerolled_ones_sum: int,
  two_d6_plus_one: int,
} {
  outcome wounds = 4 green counting wound, wounds
  outcome wound_value = 2 green
  outcome rerolled_sixes = 2 d6 scoring 6+ rerolling misses
  outcome rerolled_ones_sum = d6 rerolling ones
  outcome two_d6_plus_one = 2 d6 + 1
}
"#;

fn odds(samples: Option<u64>) -> muster::run::odds::Odds {
    let mut b = muster::build_text("dice.muster", RULES, None)
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let s = b.situation("s.toml", "procedure = \"pools\"\n").unwrap();
    match samples {
        None => b.exact(&s).unwrap(),
        Some(n) => b.sampled(&s, n, 11).unwrap(),
    }
}

fn p(o: &muster::run::odds::Odds, outcome: &str, v: i64) -> (f64, Option<(u128, u128)>) {
    let x = o.get(outcome).unwrap().p(Value::Int(v));
    (x.to_f64(), x.fraction())
}

#[test]
fn custom_die_counts_named_faces() {
    let o = odds(None);
    // 4 dice, each showing `wound` or `wounds` with probability 2/6 = 1/3:
    // P(0) = (2/3)^4 = 16/81, P(4) = 1/81.
    assert_eq!(p(&o, "wounds", 0).1, Some((16, 81)));
    assert_eq!(p(&o, "wounds", 4).1, Some((1, 81)));
    // The sum of 2 green dice: faces 0,0,0,1,1,2. P(sum = 4) = (1/6)^2.
    assert_eq!(p(&o, "wound_value", 4).1, Some((1, 36)));
    // P(sum = 0) = (1/2)^2.
    assert_eq!(p(&o, "wound_value", 0).1, Some((1, 4)));
}

#[test]
fn rerolls_and_sums() {
    let o = odds(None);
    // A 6 with one reroll of a miss: 1/6 + 5/6 * 1/6 = 11/36 per die; two dice both hit: 121/1296.
    assert_eq!(p(&o, "rerolled_sixes", 2).1, Some((121, 1296)));
    // One d6 rerolling a 1: P(1) = 1/36; P(6) = 1/6 + 1/36 = 7/36.
    assert_eq!(p(&o, "rerolled_ones_sum", 1).1, Some((1, 36)));
    assert_eq!(p(&o, "rerolled_ones_sum", 6).1, Some((7, 36)));
    // 2d6 + 1 = 8 when the dice sum to 7: 1/6.
    assert_eq!(p(&o, "two_d6_plus_one", 8).1, Some((1, 6)));
    assert_eq!(o.get("two_d6_plus_one").unwrap().values.len(), 11);
}

#[test]
fn sampled_matches_exact_for_custom_dice() {
    let e = odds(None);
    let n = 200_000u64;
    let s = odds(Some(n));
    for oc in &e.outcomes {
        for (v, pe) in &oc.values {
            let pe = pe.to_f64();
            let ps = s.get(&oc.name).unwrap().p(*v).to_f64();
            let se = (pe * (1.0 - pe) / n as f64).sqrt().max(1.0 / n as f64);
            assert!(
                (pe - ps).abs() <= 4.5 * se,
                "{} = {v:?}: exact {pe}, sampled {ps}",
                oc.name
            );
        }
    }
}

/// Builtins: Matchlocks-style 1.5 dice per figure rounded up, capped; and
/// they work on rolled values too (exact odds through the builtin).
#[test]
fn rounding_and_caps() {
    let rules = r#"
import core
procedure per_figure(figures: int) outcomes { dice: int, best: int, worst: int, halves: int } {
  outcome dice = ceil(figures * 3 / 2)
  outcome halves = floor(figures / 2)
  outcome best = max(d6, d6)
  outcome worst = min(2, d6)
}
"#;
    // `figures` is an int parameter: run it through a define-free situation
    // by binding the procedure in a ruleset that passes 5 figures.
    let wrapper = format!(
        "{rules}\nprocedure five() outcomes {{ dice: int, best: int, worst: int, halves: int }} {{\n  call per_figure(5)\n}}\n"
    );
    let mut b = muster::build_text("builtins.muster", &wrapper, None)
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let s = b.situation("s.toml", "procedure = \"five\"\n").unwrap();
    let o = b.exact(&s).unwrap();
    // 5 figures at 1.5 dice each: 7.5, rounded up to 8; halved and rounded down: 2.
    assert_eq!(o.get("dice").unwrap().p(Value::Int(8)).to_f64(), 1.0);
    assert_eq!(o.get("halves").unwrap().p(Value::Int(2)).to_f64(), 1.0);
    // The larger of two d6 is 6 with probability 11/36; min(2, d6) is 2 five times in six.
    assert_eq!(
        o.get("best").unwrap().p(Value::Int(6)).fraction(),
        Some((11, 36))
    );
    assert_eq!(
        o.get("worst").unwrap().p(Value::Int(2)).fraction(),
        Some((5, 6))
    );
}

/// A roll-off with uneven sides: d6 against d4, ties rolled again.
/// P(d6 > d4) = 14/24, P(tie) = 4/24, so P(first) = 14/20 = 7/10.
#[test]
fn roll_off_with_uneven_dice() {
    let rules = "import core\ndie d4 = 1..4\nprocedure off() outcomes { first: bool } {\n  outcome first = roll_off(d6, d4) == 1\n}\n";
    let mut b = muster::build_text("off.muster", rules, None)
        .unwrap_or_else(|(d, s)| panic!("{}", muster::front::diagnostic::render_plain(&d, &s)));
    let s = b.situation("s.toml", "procedure = \"off\"\n").unwrap();
    let o = b.exact(&s).unwrap();
    assert_eq!(
        o.get("first").unwrap().p(Value::Bool(true)).fraction(),
        Some((7, 10))
    );
}

/// A roll-off that can never be decided is reported, exactly and sampled.
#[test]
fn undecidable_roll_off_is_reported() {
    let rules = "import core\nprocedure off() outcomes { first: bool } {\n  outcome first = roll_off(3, 3) == 1\n}\n";
    let mut b = muster::build_text("off.muster", rules, None).unwrap();
    let s = b.situation("s.toml", "procedure = \"off\"\n").unwrap();
    let e = b.exact(&s).unwrap_err();
    assert!(e.message.contains("can never be decided"), "{}", e.message);
    assert!(e.span.is_some());
    let e = b.sampled(&s, 10, 1).unwrap_err();
    assert!(e.message.contains("tied 1000 times"), "{}", e.message);
}
