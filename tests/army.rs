//! Army lists: TVBD's (§Army Lists, §Commands, §Optional Rule: Unit
//! Quality) and Matchlocks' (§III Army Troop Restrictions, §IV priced per
//! figure): rosters are totalled and every broken limit is reported.

use crate::common;

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Each command's (name, units, points).
fn totals(r: &muster::battle::army::Report) -> Vec<(String, i64, i64)> {
    r.commands
        .iter()
        .map(|c| (c.name.clone(), c.units, c.points))
        .collect()
}

/// The roster as an army builder shows it: every entry's cost, each
/// command's total, the army's against the list's limits; each entry's
/// points are its count times the cost of one (the quality's points:
/// superior 4, ordinary 3, inferior 2), and add up to the command's.
#[test]
fn the_roster_shows_each_units_cost() {
    let out = common::succeeded(common::muster_in(
        Path::new(ROOT),
        &[
            "army",
            "rules/tillys_very_bad_day.muster",
            "--roster",
            "rules/rosters/tvbd_cavalry_heavy.toml",
        ],
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Cavalry-heavy army (army list `standard`): 24 of 15-30 units, 74 of 45-90 points"
    );
    assert_eq!(lines[1], "  Right wing: 8 units, 26 points");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["1", "Commander,", "ordinary", "3", "each", "3"]
    );
    assert_eq!(
        lines[3].split_whitespace().collect::<Vec<_>>(),
        ["2", "Horse,", "superior", "4", "each", "8"]
    );
    assert_eq!(
        lines[4].split_whitespace().collect::<Vec<_>>(),
        ["4", "Horse,", "ordinary", "3", "each", "12"]
    );
    let mut b = tvbd();
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("rules/rosters/tvbd_cavalry_heavy.toml"))
            .unwrap();
    let r = muster::battle::army::check(&b.ruleset, "roster.toml", &text, &mut b.sources).unwrap();
    for c in &r.commands {
        assert_eq!(
            c.entries.iter().map(|l| l.points).sum::<i64>(),
            c.points,
            "{}",
            c.name
        );
        assert_eq!(
            c.entries.iter().map(|l| l.count).sum::<i64>(),
            c.units,
            "{}",
            c.name
        );
        for l in &c.entries {
            let q = l.quality.as_deref().unwrap();
            let each = match q {
                "superior" => 4,
                "ordinary" => 3,
                "inferior" => 2,
                _ => panic!("{q}"),
            };
            assert_eq!((l.each, l.points), (each, each * l.count), "{l:?}");
        }
    }
    // The JSON has the same, by name.
    let json = common::succeeded(common::muster_in(
        Path::new(ROOT),
        &[
            "army",
            "rules/tillys_very_bad_day.muster",
            "--roster",
            "rules/rosters/tvbd_cavalry_heavy.toml",
            "--json",
        ],
    ));
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["kind"], "army");
    let v = &j["rosters"][0];
    assert_eq!(v["allowed"]["points"], serde_json::json!([45, 90]));
    assert_eq!(v["commands"][0]["entries"][1]["type"], "Horse");
    assert_eq!(v["commands"][0]["entries"][1]["each"], 4);
    assert_eq!(v["commands"][0]["entries"][1]["points"], 8);
}

fn tvbd() -> muster::Build {
    common::ruleset("rules/tillys_very_bad_day.muster")
}

/// §Example cavalry heavy army, Figure 5 (a): 9,000 infantry at 1,500 a
/// unit, 9,000 cavalry at 750 and 24 guns at 12 are 6 foot, 12 mounted and
/// 2 cannons; the roster has them (with four commanders: the reserve is a
/// command), 24 units and 74 points, and breaks no rule of the list.
#[test]
fn the_shipped_roster_is_legal() {
    let mut b = tvbd();
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("rules/rosters/tvbd_cavalry_heavy.toml"))
            .unwrap();
    let r = muster::battle::army::check(&b.ruleset, "roster.toml", &text, &mut b.sources).unwrap();
    assert_eq!((r.units, r.points), (24, 74));
    assert_eq!(
        totals(&r),
        vec![
            ("Right wing".to_string(), 8, 26),
            ("Centre".to_string(), 7, 22),
            ("Left wing".to_string(), 6, 17),
            ("Reserve".to_string(), 3, 9)
        ]
    );
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    // The book's arithmetic, by the units' classes (dragoons are mounted).
    let roster: toml::Value = toml::from_str(&text).unwrap();
    let (mut foot, mut mounted, mut guns) = (0, 0, 0);
    for c in roster["command"].as_array().unwrap() {
        for u in c["units"].as_array().unwrap() {
            let n = u.get("count").map_or(1, |n| n.as_integer().unwrap());
            match u["type"].as_str().unwrap() {
                "Pike+Shot" | "Shot" | "Rabble" => foot += n,
                "Horse" | "Light horse" | "Dragoons" => mounted += n,
                "Cannons" => guns += n,
                _ => {}
            }
        }
    }
    assert_eq!((foot, mounted, guns), (9000 / 1500, 9000 / 750, 24 / 12));
}

#[test]
fn broken_limits_are_reported() {
    let mut b = tvbd();
    let text = r#"
army = "standard"
[[command]]
name = "Guns"
units = [
  { type = "Cannons", count = 5 },
  { type = "Horse", quality = "superior", count = 5 },
]
[[command]]
name = "Mob"
units = [
  { type = "Commander", count = 2 },
  { type = "Rabble", count = 3 },
]
"#;
    let r = muster::battle::army::check(&b.ruleset, "bad.toml", text, &mut b.sources).unwrap();
    // 15 units; 5*3 + 5*4 + 2*3 + 3*3 = 50 points.
    assert_eq!((r.units, r.points), (15, 50));
    let shown = muster::front::diagnostic::render_plain(&r.problems, &b.sources);
    insta::assert_snapshot!("tvbd_broken_roster", shown);
    let messages: Vec<&str> = r.problems.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Guns") && m.contains("0 Commander")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Mob") && m.contains("2 Commander")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("5 Cannons")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("3 Rabble")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("5 superior")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Guns") && m.contains("number of units is 10")),
        "{messages:?}"
    );
    assert_eq!(r.problems.len(), 6, "{messages:?}");
}

/// The text a diagnostic's span covers.
fn spanned<'a>(b: &'a muster::Build, d: &muster::front::diagnostic::Diag) -> &'a str {
    let sp = d.span.expect("a span");
    &b.sources.get(sp.file).text[sp.start as usize..sp.end as usize]
}

/// A roster of 15 units (6 horse, 6 pike+shot, two commanders, a cannons)
/// whose first commander and cannons have the qualities given.
fn roster_with(commander: &str, cannons: &str) -> String {
    format!(
        r#"
army = "standard"
name = "Test army"
[[command]]
name = "Wing"
units = [
  {{ type = "Commander"{commander} }},
  {{ type = "Horse", count = 6 }},
  {{ type = "Cannons"{cannons} }},
]
[[command]]
name = "Foot"
units = [
  {{ type = "Commander" }},
  {{ type = "Pike+Shot", count = 6 }},
]
"#
    )
}

/// §Optional Rule: Unit Quality: "Commanders and cannon are always
/// ordinary" (`Commander | Cannons always ordinary`). A superior commander
/// and an inferior cannons are each a problem pointing at its entry; the
/// same roster with them ordinary (or of no stated quality: the default is
/// ordinary) has none.
#[test]
fn commanders_and_cannons_are_always_ordinary() {
    let mut b = tvbd();
    let text = roster_with(r#", quality = "superior""#, r#", quality = "inferior""#);
    let r = muster::battle::army::check(&b.ruleset, "quality.toml", &text, &mut b.sources).unwrap();
    assert_eq!((r.units, r.points), (15, 3 * 13 + 4 + 2));
    let messages: Vec<&str> = r.problems.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "this Commander is superior, but army list `standard` says Commander | Cannons always ordinary",
            "this Cannons is inferior, but army list `standard` says Commander | Cannons always ordinary",
        ]
    );
    assert_eq!(
        spanned(&b, &r.problems[0]),
        r#"{ type = "Commander", quality = "superior" }"#
    );
    assert_eq!(
        spanned(&b, &r.problems[1]),
        r#"{ type = "Cannons", quality = "inferior" }"#
    );
    assert_eq!(r.problems[0].label, "superior Commander");
    let shown = muster::front::diagnostic::render_plain(&r.problems, &b.sources);
    assert!(
        shown.contains("make it ordinary, or leave its quality out (the default)"),
        "{shown}"
    );
    for ok in [
        roster_with("", ""),
        roster_with(r#", quality = "ordinary""#, r#", quality = "ordinary""#),
    ] {
        let r = muster::battle::army::check(&b.ruleset, "ok.toml", &ok, &mut b.sources).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }
}

/// §Army Lists: "Unless playing a scenario both sides get the same number
/// of units" (`same units for every side`). A roster holds one army, so
/// the rule is checked across the rosters of a match: 15 units against 16
/// is a problem pointing at the second roster's `army = ...`, with the
/// first roster noted; 15 against 15 is none. One roster alone is never
/// compared.
#[test]
fn both_sides_have_the_same_number_of_units() {
    let mut b = tvbd();
    let blue = roster_with("", "");
    let red = blue.replace(
        r#"{ type = "Pike+Shot", count = 6 }"#,
        r#"{ type = "Pike+Shot", count = 6 }, { type = "Shot" }"#,
    );
    let rb = muster::battle::army::check(&b.ruleset, "blue.toml", &blue, &mut b.sources).unwrap();
    let rr = muster::battle::army::check(&b.ruleset, "red.toml", &red, &mut b.sources).unwrap();
    assert_eq!((rb.units, rr.units), (15, 16));
    assert!(rb.problems.is_empty() && rr.problems.is_empty());
    assert!(muster::battle::army::compare_sides(&b.ruleset, std::slice::from_ref(&rb)).is_empty());
    let d = muster::battle::army::compare_sides(&b.ruleset, &[rb, rr]);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0].message,
        "the armies differ in units: 16 in this roster, 15 in the first"
    );
    assert_eq!(d[0].label, "16 units");
    assert_eq!(spanned(&b, &d[0]), r#""standard""#);
    assert_eq!(b.sources.get(d[0].span.unwrap().file).name, "red.toml");
    assert_eq!(
        d[0].help.as_deref(),
        Some("army list `standard` gives every side the same number of units; this roster has 1 more")
    );
    let shown = muster::front::diagnostic::render_plain(&d, &b.sources);
    assert!(
        shown.contains("the first roster: 15 units (see blue.toml:2)"),
        "{shown}"
    );
    let rb = muster::battle::army::check(&b.ruleset, "blue.toml", &blue, &mut b.sources).unwrap();
    let again =
        muster::battle::army::check(&b.ruleset, "blue2.toml", &blue, &mut b.sources).unwrap();
    assert!(muster::battle::army::compare_sides(&b.ruleset, &[rb, again]).is_empty());
}

/// `same points for every side` compares the armies' points: priced by
/// quality (superior 4, ordinary 3), 2 superior horse and 3 ordinary (17)
/// against 5 ordinary (15) is a problem 2 points over; the same number of
/// units is no problem here, as this list does not ask it.
#[test]
fn same_points_for_every_side() {
    let text = r#"ruleset t "t"
import core
stat resolve
units (resolve) { Horse: = 3 }
quality superior { resolve +1 points 4 }
quality ordinary default { points 3 }
army match {
  same points for every side
}
"#;
    let mut b = match muster::build_text("t.muster", text, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", muster::front::diagnostic::render_plain(&d, &s)),
    };
    let a = "[[command]]\nname = \"H\"\nunits = [\n  { type = \"Horse\", quality = \"superior\", count = 2 },\n  { type = \"Horse\", count = 3 },\n]\n";
    let a = muster::battle::army::check(&b.ruleset, "a.toml", a, &mut b.sources).unwrap();
    let z = muster::battle::army::check(
        &b.ruleset,
        "z.toml",
        "[[command]]\nname = \"H\"\nunits = [{ type = \"Horse\", count = 5 }]\n",
        &mut b.sources,
    )
    .unwrap();
    assert_eq!((a.units, a.points, z.units, z.points), (5, 17, 5, 15));
    let d = muster::battle::army::compare_sides(&b.ruleset, &[a, z]);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0].message,
        "the armies differ in points: 15 in this roster, 17 in the first"
    );
    assert_eq!(
        d[0].help.as_deref(),
        Some("army list `match` gives every side the same points; this roster has 2 fewer")
    );
}

/// `muster army` with a roster per side: each is totalled and checked, and
/// the match too; a problem exits non-zero.
#[test]
fn muster_army_checks_a_match_of_two_rosters() {
    let dir = std::env::temp_dir().join(format!("muster-army-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let blue = roster_with("", "");
    let red = blue.replace(r#"count = 6 }"#, r#"count = 5 }"#);
    std::fs::write(dir.join("blue.toml"), &blue).unwrap();
    std::fs::write(dir.join("red.toml"), &red).unwrap();
    let rules = Path::new(ROOT).join("rules/tillys_very_bad_day.muster");
    let rules = rules.to_str().unwrap();
    let army =
        |a: &str, b: &str| common::muster_in(&dir, &["army", rules, "--roster", a, "--roster", b]);
    let out = army("blue.toml", "red.toml");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("Test army (army list `standard`): 15 of 15-30 units"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Test army (army list `standard`): 13 of 15-30 units"),
        "{stdout}"
    );
    assert!(
        stderr.contains("the armies differ in units: 13 in this roster, 15 in the first"),
        "{stderr}"
    );
    let out = army("blue.toml", "blue.toml");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unknown_unit_type_in_a_roster() {
    let mut b = tvbd();
    let text =
        "army = \"standard\"\n[[command]]\nname = \"Wing\"\nunits = [{ type = \"Hrose\" }]\n";
    let err =
        muster::battle::army::check(&b.ruleset, "typo.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::front::diagnostic::render_plain(&err, &b.sources);
    assert!(shown.contains("did you mean \"Horse\"?"), "{shown}");
}

// ------------------------------------------------------------------ Matchlocks

fn matchlocks() -> muster::Build {
    common::ruleset("rules/never_mind_the_matchlocks.muster")
}

/// §IV priced per figure and by quality (`price unit_points`): the King's
/// army of the default scenario is 192 points, command by command (a
/// veteran squadron 20, a raw Battalia 18, the General free), and keeps
/// §III's quarter limit (`require quarter_limit`).
#[test]
fn a_matchlocks_roster_is_priced_per_figure() {
    let mut b = matchlocks();
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("rules/rosters/matchlocks_kings_army.toml"))
            .unwrap();
    let r = muster::battle::army::check(&b.ruleset, "roster.toml", &text, &mut b.sources).unwrap();
    assert_eq!((r.units, r.points), (15, 192));
    assert_eq!(
        totals(&r),
        vec![
            ("The King's lifeguard".to_string(), 2, 9),
            ("Rupert's horse".to_string(), 4, 5 + 20 + 16 + 16),
            ("Byron's foot".to_string(), 5, 5 + 24 + 24 + 18 + 6),
            ("Wilmot's horse".to_string(), 4, 5 + 16 + 16 + 12),
        ]
    );
    assert!(r.problems.is_empty(), "{:?}", r.problems);
}

/// §III Army Troop Restrictions: 2 Detachments (12), a Light Gun (6) and a
/// veteran Dragoon company (15) are 33 of 57 troop points, over the quarter.
#[test]
fn a_matchlocks_roster_over_the_quarter_is_reported() {
    let mut b = matchlocks();
    let text = r#"
[[command]]
name = "Skirmishers"
units = [
  { type = "Brigadier" },
  { type = "Battalia" },
  { type = "Musketeer Detachment", count = 2 },
  { type = "Light Gun" },
  { type = "Dragoons", quality = "veteran" },
]
"#;
    let r = muster::battle::army::check(&b.ruleset, "light.toml", text, &mut b.sources).unwrap();
    assert_eq!(r.points, 5 + 24 + 12 + 6 + 15);
    assert_eq!(r.problems.len(), 1);
    let shown = muster::front::diagnostic::render_plain(&r.problems, &b.sources);
    assert!(
        shown.contains("the army breaks a rule: §III Army Troop Restrictions"),
        "{shown}"
    );
    assert!(
        shown.contains("adjust the roster until `quarter_limit` holds"),
        "{shown}"
    );
}

/// §III Troop Quality and §IV Extra Points Cost in a roster: a raw gun and
/// a raw detachment are each a problem at their entry; a veteran detachment
/// and a seasoned gun (the default) are not.
#[test]
fn matchlocks_artillery_seasoned_and_detachments_never_raw() {
    let mut b = matchlocks();
    let text = r#"
[[command]]
name = "Foot"
units = [
  { type = "Brigadier" },
  { type = "Battalia", count = 6 },
  { type = "Light Gun", quality = "raw" },
  { type = "Field Gun" },
  { type = "Horse Detachment", quality = "raw" },
  { type = "Musketeer Detachment", quality = "veteran" },
]
"#;
    let r = muster::battle::army::check(&b.ruleset, "raw.toml", text, &mut b.sources).unwrap();
    let shown = muster::front::diagnostic::render_plain(&r.problems, &b.sources);
    assert_eq!(r.problems.len(), 2, "{shown}");
    let messages: Vec<&str> = r.problems.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "this Light Gun is raw, but army list `any_army` says artillery always seasoned",
            "this Horse Detachment is raw, but army list `any_army` says Musketeer Detachment | Horse Detachment always seasoned or veteran",
        ],
        "{shown}"
    );
}

/// `price` and `require` name defines of the right shape, or the compiler
/// says what they must be.
#[test]
fn an_army_list_price_must_be_a_define_of_a_unit() {
    let text = r#"ruleset t "t"
import core
stat cost
units (cost) { Horse: = 3 }
define wrong(s: side): int = 1
army standard {
  price wrong
}
"#;
    let (d, s) = match muster::build_text("t.muster", text, None) {
        Ok(_) => panic!("a price over a side was accepted"),
        Err(e) => e,
    };
    let shown = muster::front::diagnostic::render_plain(&d, &s);
    assert!(
        shown.contains("`price wrong` needs a define of one unit giving a number"),
        "{shown}"
    );
    assert!(
        shown.contains("define wrong(u: unit): int = ..."),
        "{shown}"
    );
}

/// A count too large to total, or a priced roster too large to read, is a
/// diagnostic on the roster, not an overflow.
#[test]
fn huge_rosters_are_refused() {
    let mut b = tvbd();
    let text = "[[command]]\nname = \"H\"\nunits = [ { type = \"Horse\", count = 9000000000000000000 } ]\n";
    let d = muster::battle::army::check(&b.ruleset, "huge.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::front::diagnostic::render_plain(&d, &b.sources);
    assert!(
        shown.contains("a count of 9000000000000000000 units"),
        "{shown}"
    );
    let mut b = matchlocks();
    let text = "[[command]]\nname = \"H\"\nunits = [\n  { type = \"Battalia\", count = 6000 },\n  { type = \"Battalia\", count = 6000 },\n]\n";
    let d = muster::battle::army::check(&b.ruleset, "huge.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::front::diagnostic::render_plain(&d, &b.sources);
    assert!(
        shown.contains("a roster of 12000 units is more than army list `any_army` can price"),
        "{shown}"
    );
}
