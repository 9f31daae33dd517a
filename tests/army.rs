//! TVBD army lists (§Army Lists, §Commands, §Optional Rule: Unit Quality):
//! rosters are totalled and every broken limit is reported.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tvbd() -> muster::Build {
    muster::build(&Path::new(ROOT).join("rules/tillys_very_bad_day.muster"))
        .unwrap_or_else(|_| panic!("TVBD compiles"))
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
