//! `muster odds` as a dice calculator shows its answers (issue 35): exact
//! fractions of any size (past 128 bits, never a silent float), each numeric
//! outcome's mean and its at-least and at-most chances, values that never
//! happen at 0, numbers in numeric order, 95% intervals on sampled odds, and
//! a note when `--seed` has nothing to seed.

use crate::common;
use num_bigint::BigInt;
use serde_json::Value;

const RULES: &str = r#"
import core

procedure pools() outcomes {
  // 60 dice: the chance of every face a 1 is 1/6^60, past 128 bits.
  total: int,
  // 2d6: eleven values, 10 to 12 after 9 in numeric order.
  two: int,
  // Only even numbers: the odd ones between never happen.
  even: int,
  six: bool,
} {
  outcome total = 60 d6
  outcome two = 2 d6
  outcome even = 2 * d6
  outcome six = d6 >= 7
}
"#;

/// The folder with the ruleset and a situation asking for `pools`.
fn folder(name: &str) -> std::path::PathBuf {
    let dir = common::scratch(name);
    std::fs::write(dir.join("pools.muster"), RULES).unwrap();
    std::fs::write(dir.join("s.toml"), "procedure = \"pools\"\n").unwrap();
    dir
}

fn json(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["odds", "pools.muster", "--situation", "s.toml", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&common::succeeded(common::muster_in(dir, &args))).unwrap()
}

/// The `details` entry of one outcome.
fn detail<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap()
}

fn row<'a>(d: &'a Value, value: &str) -> &'a Value {
    d["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["value"] == value)
        .unwrap_or_else(|| panic!("no value {value} in {d}"))
}

/// 6^k as a decimal string.
fn six_to(k: u32) -> String {
    num_traits::pow(BigInt::from(6), k as usize).to_string()
}

/// The sum of 60 d6 counted by hand at its low end: all ones (1 way), one
/// two (60 ways), a three or two twos (60 + C(60,2) = 1830 ways), each over
/// 6^60 (about 4.9e46, more than u128's 3.4e38). The mean is 60 * 7/2.
#[test]
fn fractions_past_128_bits_stay_exact() {
    let dir = folder("odds-big");
    let j = json(&dir, &[]);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["method"], "exact");
    let den = six_to(60);
    assert_eq!(j["exact"]["total"]["60"], format!("1/{den}"));
    assert_eq!(j["exact"]["total"]["360"], format!("1/{den}"));
    // 60/6^60 = 10/6^59 * ... in lowest terms: 60 = 2^2 * 3 * 5.
    let r = |n: u64| {
        let q = num_rational::BigRational::new(BigInt::from(n), six_to(60).parse().unwrap());
        format!("{}/{}", q.numer(), q.denom())
    };
    assert_eq!(j["exact"]["total"]["61"], r(60));
    assert_eq!(j["exact"]["total"]["62"], r(1830));
    let d = detail(&j, "total");
    assert_eq!(d["exact_mean"], "210");
    assert_eq!(d["mean"], 210.0);
    assert_eq!(row(d, "60")["at_least"], 1.0);
    assert_eq!(row(d, "360")["at_most"], 1.0);
    // The whole distribution sums to exactly 1: the chances of 60..=360
    // added as fractions.
    let sum = d["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["exact"]
                .as_str()
                .unwrap()
                .parse::<num_rational::BigRational>()
                .unwrap()
        })
        .fold(num_rational::BigRational::from_integer(0.into()), |a, b| {
            a + b
        });
    assert_eq!(sum, num_rational::BigRational::from_integer(1.into()));
    assert_eq!(d["values"].as_array().unwrap().len(), 301);
    // The table shows the fraction whole, not a float.
    let text = common::succeeded(common::muster_in(
        &dir,
        &["odds", "pools.muster", "--situation", "s.toml"],
    ));
    assert!(text.contains(&format!("  1/{den}\n")), "{text}");
}

/// 2d6 as a dice calculator shows it: mean 7, P(at least 10) = 6/36,
/// P(at most 4) = 6/36, values in numeric order; `2 * d6` leaves the odd
/// numbers at 0 between its values; a boolean that never holds shows 0.
#[test]
fn means_at_least_at_most_and_zeros() {
    let dir = folder("odds-columns");
    let j = json(&dir, &[]);
    let two = detail(&j, "two");
    assert_eq!(two["exact_mean"], "7");
    let values: Vec<&str> = two["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        values,
        ["2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]
    );
    let keys: Vec<&String> = j["outcomes"]["two"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 11);
    assert_eq!(keys[8..], ["10", "11", "12"]);
    assert!((row(two, "10")["at_least"].as_f64().unwrap() - 6.0 / 36.0).abs() < 1e-15);
    assert!((row(two, "4")["at_most"].as_f64().unwrap() - 6.0 / 36.0).abs() < 1e-15);
    let even = detail(&j, "even");
    assert_eq!(row(even, "3")["exact"], "0/1");
    assert_eq!(row(even, "3")["chance"], 0.0);
    assert_eq!(even["values"].as_array().unwrap().len(), 11);
    assert_eq!(row(detail(&j, "six"), "true")["chance"], 0.0);
    assert!(detail(&j, "six").get("mean").is_none());

    let text = common::succeeded(common::muster_in(
        &dir,
        &["odds", "pools.muster", "--situation", "s.toml"],
    ));
    let block = text.split("\n\n").find(|b| b.starts_with("two")).unwrap();
    assert_eq!(
        block.lines().take(3).collect::<Vec<_>>(),
        [
            "two  (mean 7.0000)",
            "  value  chance  at least  at most  exact",
            "  2      0.0278    1.0000   0.0278  1/36",
        ]
    );
    assert!(
        block.contains("\n  10     0.0833    0.1667   0.9167  1/12"),
        "{block}"
    );
    let even = text.split("\n\n").find(|b| b.starts_with("even")).unwrap();
    assert!(
        even.contains("\n  3           0    0.8333   0.1667  0\n"),
        "{even}"
    );
}

/// Sampled odds carry a 95% interval on every value, which holds the exact
/// chance (checked on 2d6's 11 values, 20,000 samples); exact odds asked
/// for with `--seed` say the seed is unused.
#[test]
fn sampled_intervals_and_an_unused_seed() {
    let dir = folder("odds-sampled");
    let exact = json(&dir, &[]);
    let sampled = json(&dir, &["--samples", "20000", "--seed", "4"]);
    assert_eq!(sampled["method"], "sampled");
    let (e, s) = (detail(&exact, "two"), detail(&sampled, "two"));
    let mut inside = 0;
    for v in 2..=12 {
        let v = v.to_string();
        let p = row(e, &v)["chance"].as_f64().unwrap();
        let i = &row(s, &v)["interval"];
        let (lo, hi) = (i[0].as_f64().unwrap(), i[1].as_f64().unwrap());
        assert!(lo < hi && lo >= 0.0 && hi <= 1.0, "{v}: {i}");
        if lo <= p && p <= hi {
            inside += 1;
        }
    }
    // 95% each: all 11 inside with chance 0.57; at least 9 with 0.998.
    assert!(
        inside >= 9,
        "{inside} of 11 intervals hold the exact chance"
    );
    assert!(row(e, "7").get("interval").is_none());

    let out = common::muster_in(
        &dir,
        &[
            "odds",
            "pools.muster",
            "--situation",
            "s.toml",
            "--seed",
            "9",
        ],
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "note: --seed 9 is unused: the odds are not sampled\n"
    );
    let out = common::muster_in(&dir, &["odds", "pools.muster", "--situation", "s.toml"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
