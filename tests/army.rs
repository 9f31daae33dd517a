//! Army lists: TVBD's (§Army Lists, §Commands, §Optional Rule: Unit
//! Quality) and Matchlocks' (§III Army Troop Restrictions, §IV priced per
//! figure): rosters are totalled and every broken limit is reported.

use crate::common;

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tvbd() -> muster::Build {
    common::ruleset("rules/tillys_very_bad_day.muster")
}

#[test]
fn the_shipped_roster_is_legal() {
    let mut b = tvbd();
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("rules/rosters/tvbd_cavalry_heavy.toml"))
            .unwrap();
    let r = muster::army::check(&b.ruleset, "roster.toml", &text, &mut b.sources).unwrap();
    assert_eq!((r.units, r.points), (18, 56));
    assert_eq!(
        r.commands,
        vec![
            ("Right wing".to_string(), 7, 23),
            ("Centre".to_string(), 6, 19),
            ("Left wing".to_string(), 5, 14)
        ]
    );
    assert!(r.problems.is_empty(), "{:?}", r.problems);
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
    let r = muster::army::check(&b.ruleset, "bad.toml", text, &mut b.sources).unwrap();
    // 15 units; 5*3 + 5*4 + 2*3 + 3*3 = 50 points.
    assert_eq!((r.units, r.points), (15, 50));
    let shown = muster::diagnostic::render_plain(&r.problems, &b.sources);
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

#[test]
fn an_unknown_unit_type_in_a_roster() {
    let mut b = tvbd();
    let text =
        "army = \"standard\"\n[[command]]\nname = \"Wing\"\nunits = [{ type = \"Hrose\" }]\n";
    let err = muster::army::check(&b.ruleset, "typo.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::diagnostic::render_plain(&err, &b.sources);
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
    let r = muster::army::check(&b.ruleset, "roster.toml", &text, &mut b.sources).unwrap();
    assert_eq!((r.units, r.points), (15, 192));
    assert_eq!(
        r.commands,
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
    let r = muster::army::check(&b.ruleset, "light.toml", text, &mut b.sources).unwrap();
    assert_eq!(r.points, 5 + 24 + 12 + 6 + 15);
    assert_eq!(r.problems.len(), 1);
    let shown = muster::diagnostic::render_plain(&r.problems, &b.sources);
    assert!(
        shown.contains("the army breaks a rule: §III Army Troop Restrictions"),
        "{shown}"
    );
    assert!(
        shown.contains("adjust the roster until `quarter_limit` holds"),
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
    let shown = muster::diagnostic::render_plain(&d, &s);
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
    let d = muster::army::check(&b.ruleset, "huge.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::diagnostic::render_plain(&d, &b.sources);
    assert!(
        shown.contains("a count of 9000000000000000000 units"),
        "{shown}"
    );
    let mut b = matchlocks();
    let text = "[[command]]\nname = \"H\"\nunits = [\n  { type = \"Battalia\", count = 6000 },\n  { type = \"Battalia\", count = 6000 },\n]\n";
    let d = muster::army::check(&b.ruleset, "huge.toml", text, &mut b.sources).unwrap_err();
    let shown = muster::diagnostic::render_plain(&d, &b.sources);
    assert!(
        shown.contains("a roster of 12000 units is more than army list `any_army` can price"),
        "{shown}"
    );
}
