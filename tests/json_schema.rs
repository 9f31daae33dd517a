//! Every `--json` document against docs/json.md (issue 35): each command is
//! run on a shipped ruleset and its output checked field by field, in the
//! order the document lists them, with the type each field has; nested
//! records (an outcome's values, a simulate's wins and losses, a battle's
//! summary) too. A field renamed, dropped, reordered or retyped fails here,
//! and the schema version says when that was meant.

use crate::common;
use serde_json::Value;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TVBD: &str = "rules/tillys_very_bad_day.muster";
const STEADY: &str = "rules/tvbd_steady_pike.muster";

/// The JSON a command prints, run from the repository's root.
fn run(args: &[&str]) -> Value {
    let out = common::succeeded(common::muster_in(Path::new(ROOT), args));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// A JSON type as the docs name it.
#[derive(Clone, Copy, Debug)]
enum T {
    Str,
    Num,
    Int,
    Bool,
    Obj,
    Arr,
    /// A string or null.
    StrOrNull,
}

fn is(v: &Value, t: T) -> bool {
    match t {
        T::Str => v.is_string(),
        T::Num => v.is_number(),
        T::Int => v.is_u64() || v.is_i64(),
        T::Bool => v.is_boolean(),
        T::Obj => v.is_object(),
        T::Arr => v.is_array(),
        T::StrOrNull => v.is_string() || v.is_null(),
    }
}

/// `v` is an object whose fields are `fields` (name, type, required) in
/// that order, optional ones where present, and nothing else.
fn check(what: &str, v: &Value, fields: &[(&str, T, bool)]) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {v}"));
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    let want: Vec<&str> = fields
        .iter()
        .filter(|(name, _, required)| *required || obj.contains_key(*name))
        .map(|(name, _, _)| *name)
        .collect();
    assert_eq!(keys, want, "{what}: the fields and their order");
    for (name, t, _) in fields {
        if let Some(x) = obj.get(*name) {
            assert!(is(x, *t), "{what}.{name}: not {t:?}: {x}");
        }
    }
}

/// Every element of the array `v` is a record of `fields`.
fn each(what: &str, v: &Value, fields: &[(&str, T, bool)]) {
    let items = v
        .as_array()
        .unwrap_or_else(|| panic!("{what}: not an array"));
    assert!(!items.is_empty(), "{what}: empty");
    for (i, x) in items.iter().enumerate() {
        check(&format!("{what}[{i}]"), x, fields);
    }
}

const HEAD: [(&str, T, bool); 2] = [("schema_version", T::Int, true), ("kind", T::Str, true)];

fn with_head(rest: &[(&'static str, T, bool)]) -> Vec<(&'static str, T, bool)> {
    HEAD.iter().chain(rest).copied().collect()
}

fn head_is(v: &Value, kind: &str) {
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], kind);
}

const ODDS: [(&str, T, bool); 9] = [
    ("ruleset", T::Str, true),
    ("procedure", T::Str, true),
    ("situation", T::Arr, false),
    ("method", T::Str, true),
    ("samples", T::Int, false),
    ("seed", T::Int, false),
    ("outcomes", T::Obj, true),
    ("exact", T::Obj, false),
    ("details", T::Arr, true),
];

fn check_odds(what: &str, v: &Value) {
    check(what, v, &with_head(&ODDS));
    for d in v["details"].as_array().unwrap() {
        check(
            &format!("{what}.details"),
            d,
            &[
                ("name", T::Str, true),
                ("mean", T::Num, false),
                ("exact_mean", T::Str, false),
                ("values", T::Arr, true),
            ],
        );
        each(
            &format!("{what}.details.values"),
            &d["values"],
            &[
                ("value", T::Str, true),
                ("chance", T::Num, true),
                ("exact", T::Str, false),
                ("at_least", T::Num, false),
                ("at_most", T::Num, false),
                ("interval", T::Arr, false),
            ],
        );
    }
}

#[test]
fn odds_exact_sampled_and_paired() {
    let s = "rules/situations/tvbd_horse_charges_pike.toml";
    let exact = run(&["odds", TVBD, "--situation", s, "--json"]);
    head_is(&exact, "odds");
    check_odds("odds", &exact);
    assert_eq!(exact["method"], "exact");
    each(
        "odds.situation",
        &exact["situation"],
        &[("fact", T::Str, true), ("reads", T::Str, true)],
    );
    let sampled = run(&[
        "odds",
        TVBD,
        "--situation",
        s,
        "--json",
        "--samples",
        "2000",
    ]);
    check_odds("odds sampled", &sampled);
    assert!(sampled["details"][0]["values"][0]["interval"].is_array());
    let pair = run(&[
        "odds",
        TVBD,
        "--situation",
        s,
        "--ruleset-b",
        STEADY,
        "--json",
    ]);
    head_is(&pair, "odds_pair");
    check(
        "odds_pair",
        &pair,
        &with_head(&[
            ("a", T::Obj, true),
            ("b", T::Obj, true),
            ("difference", T::Obj, true),
            ("exact_difference", T::Obj, false),
        ]),
    );
    check_odds("odds_pair.a", &pair["a"]);
    check_odds("odds_pair.b", &pair["b"]);
}

const SUMMARY: [(&str, T, bool); 13] = [
    ("ruleset", T::Str, true),
    ("scenario", T::Str, true),
    ("games", T::Int, true),
    ("seed", T::Int, true),
    ("armies", T::Arr, true),
    ("wins", T::Arr, true),
    ("draws", T::Obj, true),
    ("turn_limit", T::Obj, true),
    ("turn_limit_games", T::Arr, true),
    ("length", T::Arr, true),
    ("mean_turns", T::Num, true),
    ("median_turns", T::Int, true),
    ("losses", T::Arr, true),
];

fn check_summary(what: &str, v: &Value) {
    let rate = [
        ("count", T::Int, true),
        ("rate", T::Num, true),
        ("low", T::Num, true),
        ("high", T::Num, true),
    ];
    let mut wins = vec![("army", T::Str, true)];
    wins.extend(rate);
    each(&format!("{what}.wins"), &v["wins"], &wins);
    check(&format!("{what}.draws"), &v["draws"], &rate);
    check(&format!("{what}.turn_limit"), &v["turn_limit"], &rate);
    // Empty when every game was decided (shard::games_at_the_turn_limit_...
    // checks a run with some).
    if v["turn_limit"]["count"] != 0 {
        each(
            &format!("{what}.turn_limit_games"),
            &v["turn_limit_games"],
            &[("game", T::Int, true), ("seed", T::Int, true)],
        );
    }
    each(
        &format!("{what}.length"),
        &v["length"],
        &[("turns", T::Int, true), ("games", T::Int, true)],
    );
    each(
        &format!("{what}.losses"),
        &v["losses"],
        &[("army", T::Str, true), ("unit_types", T::Arr, true)],
    );
    each(
        &format!("{what}.losses.unit_types"),
        &v["losses"][0]["unit_types"],
        &[
            ("unit_type", T::Str, true),
            ("fielded", T::Int, true),
            ("mean_lost", T::Num, true),
            ("lost_share", T::Num, true),
        ],
    );
}

#[test]
fn simulate_and_compare() {
    let v = run(&["simulate", TVBD, "--runs", "6", "--json"]);
    head_is(&v, "simulate");
    check("simulate", &v, &with_head(&SUMMARY));
    check_summary("simulate", &v);
    assert_eq!(v["wins"][0]["army"], v["armies"][0]);
    assert_eq!(v["ruleset"], "Tilly's Very Bad Day (v1)");

    let c = run(&["compare", TVBD, STEADY, "--runs", "10", "--json"]);
    head_is(&c, "compare");
    check(
        "compare",
        &c,
        &with_head(&[
            ("a", T::Str, true),
            ("b", T::Str, true),
            ("scenario", T::Str, true),
            ("diff", T::Obj, true),
            ("comparison", T::Obj, true),
        ]),
    );
    let cmp = &c["comparison"];
    check(
        "compare.comparison",
        cmp,
        &[
            ("rulesets", T::Arr, true),
            ("games", T::Int, true),
            ("seed", T::Int, true),
            ("a", T::Obj, true),
            ("b", T::Obj, true),
            ("shifts", T::Arr, true),
        ],
    );
    check("compare.comparison.a", &cmp["a"], &SUMMARY);
    check_summary("compare.comparison.b", &cmp["b"]);
}

#[test]
fn battle_log() {
    let v = run(&["battle", TVBD, "--seed", "3", "--log", "json"]);
    head_is(&v, "battle");
    check(
        "battle",
        &v,
        &with_head(&[
            ("ruleset", T::Str, true),
            ("title", T::Str, true),
            ("scenario", T::Str, true),
            ("seed", T::Int, true),
            ("units", T::Arr, true),
            ("events", T::Arr, true),
            ("summary", T::Obj, true),
        ]),
    );
    each(
        "battle.units",
        &v["units"],
        &[
            ("name", T::Str, true),
            ("army", T::Str, true),
            ("type", T::Str, true),
        ],
    );
    for e in v["events"].as_array().unwrap() {
        assert!(e["event"].is_string(), "{e}");
    }
    let s = &v["summary"];
    check(
        "battle.summary",
        s,
        &[
            ("result", T::Str, true),
            ("winner", T::StrOrNull, true),
            ("turns", T::Int, true),
            ("lost", T::Arr, true),
        ],
    );
    let result = s["result"].as_str().unwrap();
    assert!(["won", "draw", "turn_limit"].contains(&result), "{result}");
    assert_eq!(s["winner"].is_string(), result == "won");
    each(
        "battle.summary.lost",
        &s["lost"],
        &[("army", T::Str, true), ("unit_types", T::Arr, true)],
    );
    for army in s["lost"].as_array().unwrap() {
        for t in army["unit_types"].as_array().unwrap() {
            check(
                "battle.summary.lost.unit_types",
                t,
                &[("unit_type", T::Str, true), ("lost", T::Int, true)],
            );
            assert!(t["lost"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn diff_army_and_query() {
    let d = run(&["diff", TVBD, STEADY, "--json"]);
    head_is(&d, "diff");
    check(
        "diff",
        &d,
        &with_head(&[
            ("a", T::Obj, true),
            ("b", T::Obj, true),
            ("identical", T::Bool, true),
            ("changes", T::Arr, true),
        ]),
    );
    let a = run(&[
        "army",
        TVBD,
        "--roster",
        "rules/rosters/tvbd_cavalry_heavy.toml",
        "--json",
    ]);
    head_is(&a, "army");
    check(
        "army",
        &a,
        &with_head(&[("ruleset", T::Str, true), ("rosters", T::Arr, true)]),
    );
    each(
        "army.rosters",
        &a["rosters"],
        &[
            ("army", T::Str, true),
            ("name", T::Str, true),
            ("units", T::Int, true),
            ("points", T::Int, true),
            ("allowed", T::Obj, true),
            ("commands", T::Arr, true),
            ("problems", T::Arr, true),
        ],
    );
    let q = run(&[
        "query",
        TVBD,
        "--situation",
        "rules/situations/tvbd_horse_charges_pike.toml",
        "charging(attacker)",
        "--json",
    ]);
    head_is(&q, "query");
    check(
        "query",
        &q,
        &with_head(&[("ruleset", T::Str, true), ("values", T::Obj, true)]),
    );
    assert_eq!(q["values"]["charging(attacker)"], "true");
}
