//! Scenario files: a good one reads as written, each common mistake is
//! rejected with a diagnostic pointing into the file (snapshotted as plain
//! text under `tests/snapshots/`), and the shipped default scenario of
//! Tilly's Very Bad Day reads against its ruleset and is legally deployed.

use muster::base::value::Value;
use muster::battle::scenario::Scenario;
use muster::compile::ir::Search;
use muster::front::diagnostic::Diag;
use muster::front::source::Sources;
use muster::run::battlefield::{Base, Pt, Shape};
use muster::Build;
use std::path::Path;

/// The crate root as it appears in rendered paths; snapshots show paths
/// relative to it so that they do not depend on where the crate is checked out.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/");

const TVBD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/tillys_very_bad_day.muster"
);
const TVBD_DEFAULT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/rules/scenarios/tvbd_default.toml"
);

/// A small ruleset with what a scenario needs: unit types, qualities and an
/// `enum terrain`.
const RULESET: &str = "import core
sides a, b
class commander, cavalry, infantry
stat resolve
units (resolve) {
  Commander : commander = 1
  Horse     : cavalry   = 3
  Shot      : infantry  = 3
}
quality superior { resolve +1 }
quality ordinary default { }
enum terrain = open | woods | river | gentle_hill
";

/// A scenario with one mistake spliced into it: `$army0` is the first army's
/// units, `$rest` what follows the first army (the second army, unless the
/// mistake is to leave it out).
macro_rules! scenario {
    (units: $army0:literal, rest: $rest:literal) => {
        concat!(
            "[table]\nwidth = 45\ndepth = 30\n\n",
            "[[army]]\nname = \"Swedes\"\n[[army.command]]\nname = \"Right wing\"\nunits = [\n",
            $army0,
            "]\n\n",
            $rest
        )
    };
    (units: $army0:literal) => {
        scenario!(units: $army0, rest: "[[army]]
name = \"Imperialists\"
[[army.command]]
name = \"Centre\"
units = [
  { type = \"Commander\", at = [22, 25] },
  { type = \"Shot\", at = [22, 22] },
]
")
    };
}

fn render(diags: &[Diag], sources: &Sources) -> String {
    crate::common::render_here(diags, sources)
}

/// Every diagnostic points somewhere, says what is there, and says what to do;
/// and the rendered text shows both the label and the help line.
fn check_shape(diags: &[Diag], rendered: &str) {
    assert!(!diags.is_empty(), "rejected without any diagnostic");
    for d in diags {
        assert_eq!(d.code, "muster::scenario", "{rendered}");
        assert!(
            d.span.is_some(),
            "`{}` ({}) points at no span:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            !d.label.trim().is_empty(),
            "`{}` ({}) has an empty label:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            d.help.as_deref().is_some_and(|h| !h.trim().is_empty()),
            "`{}` ({}) has no help line:\n{rendered}",
            d.code,
            d.message
        );
        assert!(
            rendered.contains(d.label.as_str()),
            "the label {:?} is not in the rendered text:\n{rendered}",
            d.label
        );
    }
    assert!(
        rendered.contains("help:"),
        "no help line rendered:\n{rendered}"
    );
}

fn ruleset() -> Build {
    match muster::build_text("t.muster", RULESET, None) {
        Ok(b) => b,
        Err((d, s)) => panic!("the test ruleset should compile:\n{}", render(&d, &s)),
    }
}

/// Read a scenario that must be accepted.
fn good(b: &mut Build, text: &str) -> Scenario {
    match muster::battle::scenario::read(&b.ruleset, "scenario.toml", text, &mut b.sources) {
        Ok(s) => s,
        Err(d) => panic!("the scenario should read:\n{}", render(&d, &b.sources)),
    }
}

/// Read a scenario that must be rejected; its diagnostics, rendered.
fn rejected(text: &str) -> (Vec<Diag>, String) {
    let mut b = ruleset();
    match muster::battle::scenario::read(&b.ruleset, "bad.toml", text, &mut b.sources) {
        Ok(_) => panic!("the scenario was accepted, but it has a mistake:\n{text}"),
        Err(diags) => {
            let rendered = render(&diags, &b.sources);
            check_shape(&diags, &rendered);
            (diags, rendered)
        }
    }
}

/// Bases 2 wide and 1 deep around every placed unit, in reading order.
fn bases(s: &Scenario) -> Vec<Option<Base>> {
    s.units()
        .map(|(_, _, u)| u.at.map(|p| Base::new(p, u.facing, 2.0, 1.0)))
        .collect()
}

/// Read a scenario that must be accepted but badly placed; the placement
/// problems, rendered.
fn misplaced(text: &str) -> (Vec<Diag>, String) {
    let mut b = ruleset();
    let s = good(&mut b, text);
    let diags = s.check_placement(&bases(&s));
    let rendered = render(&diags, &b.sources);
    check_shape(&diags, &rendered);
    (diags, rendered)
}

// ================================================================ good files

const GOOD: &str = r#"description = "A test of everything a scenario can say"
turn_limit = 12
[table]
width = 45
depth = 30.5

[[terrain]]
kind = "woods"
rect = { centre = [10, 15], width = 6, depth = 4 }

[[terrain]]
kind = "river"
name = "The brook"
band = { path = [[0, 12], [45, 14.5]], width = 1 }

[[terrain]]
kind = "woods"
ellipse = { centre = [30.5, 15], rx = 4, ry = 3, angle = 30 }

[[army]]
name = "Swedes"
policy = "bold"
search = "thorough"
[[army.command]]
name = "Right wing"
units = [
  { type = "Commander", at = [30, 5] },
  { type = "Horse", quality = "superior", at = [33, 5], facing = -10, name = "Smaland horse" },
  { type = "Horse", at = [36, 5] },
  { type = "Horse", at = [39.5, 5] },
  { type = "Shot", at = [30, 8] },
]
[[army.command]]
name = "Left wing"
units = [
  { type = "Commander", at = [10, 5] },
  { type = "Horse", at = [13, 5] },
]

[[army]]
name = "Imperialists"
[[army.command]]
name = "Centre"
units = [
  { type = "commander" },
  { type = "Shot", count = 3 },
  { type = "Horse", quality = "Superior" },
]
"#;

#[test]
fn a_good_scenario_reads_as_written() {
    let mut b = ruleset();
    let s = good(&mut b, GOOD);
    assert_eq!(
        s.description.as_deref(),
        Some("A test of everything a scenario can say")
    );
    assert_eq!((s.width, s.depth), (45.0, 30.5));
    assert_eq!(s.turn_limit, Some(12));
    assert_eq!(
        b.sources.slice(s.span),
        "description = \"A test of everything a scenario can say\""
    );

    // Terrain: kinds from the ruleset's enum, names given or made up.
    let terrain: Vec<(&str, &str)> = s
        .terrain
        .iter()
        .map(|t| (t.name.as_str(), t.kind_name.as_str()))
        .collect();
    assert_eq!(
        terrain,
        [
            ("woods 1", "woods"),
            ("The brook", "river"),
            ("woods 2", "woods")
        ]
    );
    let woods = b
        .ruleset
        .enums
        .iter()
        .find(|e| e.name == "terrain")
        .unwrap();
    for t in &s.terrain {
        let Value::Sym(v) = t.kind else {
            panic!("{} is not a symbol: {:?}", t.name, t.kind)
        };
        assert!(woods.variants.contains(&v));
        assert_eq!(b.ruleset.symbols[v as usize], t.kind_name);
    }
    assert!(matches!(
        s.terrain[0].shape,
        Shape::Rect { width, depth, angle, .. } if width == 6.0 && depth == 4.0 && angle == 0.0
    ));
    match &s.terrain[1].shape {
        Shape::Band { path, width } => {
            assert_eq!(path.len(), 2);
            assert_eq!((path[1].x, path[1].y), (45.0, 14.5));
            assert_eq!(*width, 1.0);
        }
        other => panic!("the brook should be a band: {other:?}"),
    }
    assert!(matches!(
        s.terrain[2].shape,
        Shape::Ellipse { rx, ry, angle, .. } if rx == 4.0 && ry == 3.0 && angle == 30.0
    ));

    // Armies and commands.
    assert_eq!(s.armies.len(), 2);
    assert_eq!(s.armies[0].name, "Swedes");
    let (policy, at) = s.armies[0].policy.as_ref().unwrap();
    assert_eq!(policy, "bold");
    assert_eq!(b.sources.slice(*at), "\"bold\"");
    assert!(s.armies[1].policy.is_none());
    assert_eq!(s.armies[0].search, Some(Search::Thorough));
    assert_eq!(s.armies[1].search, None);
    assert_eq!(s.armies[0].commands.len(), 2);

    // Units in reading order: names generated per command, `count`
    // expanded, facings defaulted toward the enemy.
    // (army, command, name, at, facing)
    type Row<'a> = (usize, usize, &'a str, Option<(f64, f64)>, f64);
    let units: Vec<Row> = s
        .units()
        .map(|(a, c, u)| (a, c, u.name.as_str(), u.at.map(|p| (p.x, p.y)), u.facing))
        .collect();
    assert_eq!(
        units,
        [
            (0, 0, "Right wing Commander", Some((30.0, 5.0)), 0.0),
            (0, 0, "Smaland horse", Some((33.0, 5.0)), 350.0),
            (0, 0, "Right wing Horse 1", Some((36.0, 5.0)), 0.0),
            (0, 0, "Right wing Horse 2", Some((39.5, 5.0)), 0.0),
            (0, 0, "Right wing Shot", Some((30.0, 8.0)), 0.0),
            (0, 1, "Left wing Commander", Some((10.0, 5.0)), 0.0),
            (0, 1, "Left wing Horse", Some((13.0, 5.0)), 0.0),
            (1, 0, "Centre Commander", None, 180.0),
            (1, 0, "Centre Shot 1", None, 180.0),
            (1, 0, "Centre Shot 2", None, 180.0),
            (1, 0, "Centre Shot 3", None, 180.0),
            (1, 0, "Centre Horse", None, 180.0),
        ]
    );
    let types: Vec<&str> = s
        .units()
        .map(|(_, _, u)| b.ruleset.unit_types[u.ty as usize].name.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "Commander",
            "Horse",
            "Horse",
            "Horse",
            "Shot",
            "Commander",
            "Horse",
            "Commander",
            "Shot",
            "Shot",
            "Shot",
            "Horse"
        ]
    );
    let superior = b.ruleset.quality("superior");
    let qualities: Vec<bool> = s.units().map(|(_, _, u)| u.quality == superior).collect();
    assert_eq!(
        qualities,
        [false, true, false, false, false, false, false, false, false, false, false, true]
    );
    // A unit's span is its inline table; `count` shares one.
    let first = s.armies[0].commands[0].units[0].span;
    assert_eq!(
        b.sources.slice(first),
        "{ type = \"Commander\", at = [30, 5] }"
    );
    let shots = &s.armies[1].commands[0].units[1..4];
    assert!(shots.iter().all(|u| u.span == shots[0].span));

    // Placed well: no problems.
    assert!(s.check_placement(&bases(&s)).is_empty());
}

#[test]
fn touching_bases_and_bases_on_the_edge_are_fine() {
    let mut b = ruleset();
    let s = good(
        &mut b,
        scenario!(units: "  { type = \"Horse\", at = [1, 0.5] },
  { type = \"Horse\", at = [3, 0.5] },
  { type = \"Horse\", at = [44, 1.5], facing = 180 },
"),
    );
    assert!(s.check_placement(&bases(&s)).is_empty());
    // Fewer bases than units (or none known) is no problem either.
    assert!(s.check_placement(&[]).is_empty());
}

#[test]
fn no_input_makes_the_reader_panic() {
    // Every prefix of a good file, and every prefix with a line cut out:
    // each reads or is rejected with diagnostics, and never panics.
    let mut b = ruleset();
    let lines: Vec<&str> = GOOD.lines().collect();
    let mut texts: Vec<String> = GOOD
        .char_indices()
        .map(|(i, _)| GOOD[..i].to_string())
        .collect();
    for skip in 0..lines.len() {
        let mut t = lines.clone();
        t.remove(skip);
        texts.push(t.join("\n"));
    }
    for t in &texts {
        if let Err(diags) =
            muster::battle::scenario::read(&b.ruleset, "cut.toml", t, &mut b.sources)
        {
            assert!(!diags.is_empty());
            for d in &diags {
                assert!(d.span.is_some(), "{}: no span for\n{t}", d.message);
            }
        }
    }
}

// ================================================================= mistakes

#[test]
fn unknown_unit_type() {
    let (d, r) = rejected(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Hrose\", at = [33, 5] },
"));
    assert_eq!(d.len(), 1);
    assert!(r.contains("did you mean \"Horse\"?"), "{r}");
    insta::assert_snapshot!("unknown_unit_type", r);
}

#[test]
fn unknown_quality() {
    let (d, r) = rejected(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Horse\", quality = \"veteran\", at = [33, 5] },
"));
    assert_eq!(d.len(), 1);
    assert!(r.contains("superior, ordinary"), "{r}");
    insta::assert_snapshot!("unknown_quality", r);
}

/// A search that is not one: the three there are, and what leaving the key
/// out does.
#[test]
fn unknown_search() {
    let (d, r) = rejected(concat!(
        "[table]\nwidth = 45\ndepth = 30\n\n",
        "[[army]]\nname = \"Swedes\"\nsearch = \"quick\"\n",
        "[[army.command]]\nname = \"Right wing\"\nunits = [\n",
        "  { type = \"Commander\", at = [30, 5] },\n]\n",
        "[[army]]\nname = \"Imperialists\"\nsearch = \"purposeful\"\n",
        "[[army.command]]\nname = \"Centre\"\nunits = [\n",
        "  { type = \"Commander\", at = [22, 25] },\n]\n",
    ));
    assert_eq!(d.len(), 1, "{r}");
    assert!(r.contains("unknown search \"quick\""), "{r}");
    assert!(
        r.contains("\"thorough\", \"purposeful\" or \"stand_off\""),
        "{r}"
    );
    assert_eq!(d[0].label, "not a search");
    insta::assert_snapshot!("unknown_search", r);
}

#[test]
fn unknown_terrain_kind() {
    let (d, r) = rejected(concat!(
        "[[terrain]]\nkind = \"wood\"\nrect = { centre = [10, 15], width = 6, depth = 4 }\n\n",
        scenario!(units: "  { type = \"Horse\", at = [33, 5] },\n")
    ));
    assert_eq!(d.len(), 1);
    assert!(r.contains("did you mean \"woods\"?"), "{r}");
    insta::assert_snapshot!("unknown_terrain_kind", r);
}

#[test]
fn unit_off_the_table() {
    let (d, r) = misplaced(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Horse\", at = [0.5, 5] },
  { type = \"Horse\", at = [33, 30], facing = 90 },
"));
    assert_eq!(d.len(), 2);
    let words = r.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("0.5 over its side edge x = 0"), "{r}");
    assert!(
        words.contains("1 over its edge y = 30, the base edge of Imperialists"),
        "{r}"
    );
    insta::assert_snapshot!("unit_off_the_table", r);
}

#[test]
fn overlapping_bases() {
    let (d, r) = misplaced(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Horse\", name = \"Smaland horse\", at = [33, 5] },
  { type = \"Horse\", name = \"Ostgota horse\", at = [34.5, 5.5] },
"));
    assert_eq!(d.len(), 1);
    // Both places are shown.
    assert!(r.contains("\"Ostgota horse\""), "{r}");
    assert!(r.contains("overlaps \"Smaland horse\""), "{r}");
    insta::assert_snapshot!("overlapping_bases", r);
}

#[test]
fn terrain_with_two_shapes() {
    let (d, r) = rejected(concat!(
        "[[terrain]]\nkind = \"river\"\n",
        "rect = { centre = [10, 15], width = 6, depth = 1 }\n",
        "band = { path = [[0, 15], [45, 15]], width = 1 }\n\n",
        scenario!(units: "  { type = \"Horse\", at = [33, 5] },\n")
    ));
    assert_eq!(d.len(), 1);
    insta::assert_snapshot!("terrain_with_two_shapes", r);
}

#[test]
fn one_army_only() {
    let (d, r) = rejected(scenario!(
        units: "  { type = \"Commander\", at = [30, 5] },\n",
        rest: ""
    ));
    assert_eq!(d.len(), 1);
    assert!(r.contains("only one"), "{r}");
    insta::assert_snapshot!("one_army_only", r);
}

#[test]
fn placed_and_unplaced_units_mixed() {
    let (d, r) = rejected(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Horse\", count = 2 },
  { type = \"Horse\", at = [36, 5] },
"));
    assert_eq!(d.len(), 1);
    insta::assert_snapshot!("placed_and_unplaced_units_mixed", r);
}

#[test]
fn duplicate_unit_names() {
    let (d, r) = rejected(scenario!(units: "  { type = \"Commander\", at = [30, 5] },
  { type = \"Horse\", at = [33, 5], name = \"Centre Shot\" },
"));
    assert_eq!(d.len(), 1);
    assert!(r.contains("two units are called \"Centre Shot\""), "{r}");
    insta::assert_snapshot!("duplicate_unit_names", r);
}

#[test]
fn toml_syntax_error() {
    let (d, r) = rejected("[table]\nwidth = 45 TUM\ndepth = 30\n");
    assert_eq!(d.len(), 1);
    insta::assert_snapshot!("toml_syntax_error", r);
}

#[test]
fn misspelt_field() {
    let (d, r) = rejected(scenario!(units: "  { type = \"Horse\", at = [33, 5], facign = 90 },\n"));
    assert_eq!(d.len(), 1);
    assert!(r.contains("facign"), "{r}");
    insta::assert_snapshot!("misspelt_field", r);
}

#[test]
fn a_reserve_with_a_place() {
    let (d, r) =
        rejected(scenario!(units: "  { type = \"Horse\", at = [33, 5], reserve = true },\n"));
    assert_eq!(d.len(), 1);
    assert!(
        r.contains("a reserve unit with a place on the table"),
        "{r}"
    );
    assert!(r.contains("held in reserve"), "{r}");
}

/// A reserve needs a `place` decision to arrive: Thistle has none, so
/// battle set-up refuses the scenario at the unit.
#[test]
fn a_reserve_that_could_never_arrive() {
    let mut b = match muster::build(&Path::new(ROOT).join("rules/thistle_lily_and_rose.muster")) {
        Ok(b) => b,
        Err((d, s)) => panic!("{}", render(&d, &s)),
    };
    let text = std::fs::read_to_string(Path::new(ROOT).join("tests/scenarios/thistle_pike_group.toml"))
    .unwrap()
    .replace(
        "{ type = \"Pikes\", name = \"Pikes 3\", at = [34.8, 10] },",
        "{ type = \"Pikes\", name = \"Pikes 3\", at = [34.8, 10] },\n  { type = \"Pikes\", name = \"Late pikes\", reserve = true },",
    );
    assert!(text.contains("Late pikes"));
    let sc = good(&mut b, &text);
    let rs = b.ruleset.clone();
    let d = match muster::battle::game::Prepared::new(&rs, &sc) {
        Ok(_) => panic!("a reserve with no way to arrive was accepted"),
        Err(d) => d,
    };
    let r = render(&d, &b.sources);
    check_shape(&d, &r);
    assert!(r.contains("reserve `Late pikes` could never arrive"), "{r}");
}

#[test]
fn impossible_sizes() {
    let (d, r) = rejected(
        "[table]
width = 45
depth = 0

[[terrain]]
kind = \"woods\"
rect = { centre = [10, 15], width = -2, depth = 4 }

[[terrain]]
kind = \"river\"
band = { path = [[0, 15]], width = 1 }

[[army]]
name = \"Swedes\"

[[army]]
name = \"Imperialists\"
[[army.command]]
name = \"Centre\"
units = [{ type = \"Shot\", count = 0 }]
",
    );
    let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "the table's depth must be more than 0",
            "a rectangle's width must be more than 0",
            "a band needs a path of at least two points",
            "army \"Swedes\" has no commands",
            "a count of 0 units",
        ]
    );
    insta::assert_snapshot!("impossible_sizes", r);
}

// ====================================================== the default scenario

/// Commanders and cannons stand on 1 x 1 TUM bases, every other unit on
/// 2 x 1 (§Base Width and Tilly Unit of Measure).
fn tvbd_base(
    rs: &muster::compile::ir::Ruleset,
    ty: muster::compile::ir::Id,
    at: Pt,
    facing: f64,
) -> Base {
    match rs.unit_types[ty as usize].name.as_str() {
        "Commander" | "Cannons" => Base::new(at, facing, 1.0, 1.0),
        _ => Base::new(at, facing, 2.0, 1.0),
    }
}

#[test]
fn tvbd_default_scenario_reads_and_is_deployed_legally() {
    let b = match muster::build(Path::new(TVBD)) {
        Ok(b) => b,
        Err((d, s)) => panic!("the TVBD ruleset should compile:\n{}", render(&d, &s)),
    };
    check_default(b);
}

fn check_default(mut b: Build) {
    let text = std::fs::read_to_string(TVBD_DEFAULT).unwrap();
    let s = match muster::battle::scenario::read(&b.ruleset, TVBD_DEFAULT, &text, &mut b.sources) {
        Ok(s) => s,
        Err(d) => panic!(
            "the default scenario should read:\n{}",
            render(&d, &b.sources)
        ),
    };
    let rs = &b.ruleset;
    assert_eq!((s.width, s.depth), (45.0, 30.0));
    assert_eq!(s.turn_limit, Some(20));
    assert_eq!(s.terrain.len(), 3);
    let per_army: Vec<usize> = (0..2)
        .map(|a| s.units().filter(|u| u.0 == a).count())
        .collect();
    assert_eq!(per_army, [18, 18]);

    let bases: Vec<Option<Base>> = s
        .units()
        .map(|(_, _, u)| u.at.map(|p| tvbd_base(rs, u.ty, p, u.facing)))
        .collect();
    let problems = s.check_placement(&bases);
    assert!(problems.is_empty(), "{}", render(&problems, &b.sources));

    for ((a, _, u), base) in s.units().zip(&bases) {
        let base = base
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not placed", u.name));
        assert_eq!(u.facing, if a == 0 { 0.0 } else { 180.0 }, "{}", u.name);
        let ys = base.corners().map(|p| p.y);
        let (lo, hi) = if a == 0 { (0.0, 11.0) } else { (19.0, 30.0) };
        assert!(
            ys.iter().all(|y| (lo..=hi).contains(y)),
            "{} is outside its deployment zone",
            u.name
        );
        if rs.unit_types[u.ty as usize].name == "Pike+Shot" {
            let xs = base.corners().map(|p| p.x);
            assert!(
                xs.iter().all(|x| (10.5..=34.5).contains(x)),
                "{} is outside the centre zone",
                u.name
            );
        }
    }
    // Neighbours stand at least 0.5 TUM apart: bases grown by 0.25 all
    // round still do not overlap.
    let grown: Vec<(&str, Base)> = s
        .units()
        .map(|(_, _, u)| {
            let at = u.at.unwrap();
            let b = tvbd_base(rs, u.ty, at, u.facing);
            (
                u.name.as_str(),
                Base::new(at, u.facing, b.width + 0.5, b.depth + 0.5),
            )
        })
        .collect();
    for (i, (n, b)) in grown.iter().enumerate() {
        for (m, c) in &grown[..i] {
            assert!(!b.overlaps(c), "{m} and {n} stand closer than 0.5 TUM");
        }
    }
    // No terrain under a deployed base: no base edge enters a feature and
    // no feature holds a base's centre.
    for t in &s.terrain {
        for ((_, _, u), base) in s.units().zip(&bases) {
            let c = base.as_ref().unwrap().corners();
            let edges = (0..4).map(|i| (c[i], c[(i + 1) % 4]));
            assert!(
                !t.shape.contains(u.at.unwrap())
                    && !edges.into_iter().any(|(p, q)| t.shape.hits_segment(p, q)),
                "{} stands in {}",
                u.name,
                t.name
            );
        }
    }
    // Army lists: each command 3-8 units with exactly one commander.
    for army in &s.armies {
        for c in &army.commands {
            let commanders = c
                .units
                .iter()
                .filter(|u| rs.unit_types[u.ty as usize].name == "Commander")
                .count();
            assert_eq!(commanders, 1, "{}", c.name);
            assert!((3..=8).contains(&c.units.len()), "{}", c.name);
        }
        // §Army Lists: limits per type and on superior units; the same
        // points (56) on both sides.
        let units: Vec<&muster::battle::scenario::UnitSpec> =
            army.commands.iter().flat_map(|c| &c.units).collect();
        let of = |ty: &str| {
            units
                .iter()
                .filter(|u| rs.unit_types[u.ty as usize].name == ty)
                .count()
        };
        assert!(of("Cannons") <= 4, "{}", army.name);
        for ty in ["Dragoons", "Shot", "Rabble", "Light horse"] {
            assert!(of(ty) <= 2, "{}: {ty}", army.name);
        }
        let superior = rs.quality("superior");
        assert!(units.iter().filter(|u| u.quality == superior).count() <= 4);
        let points: i64 = units
            .iter()
            .map(|u| muster::battle::army::unit_points(rs, u.quality))
            .sum();
        assert_eq!(points, 56, "{}", army.name);
    }
}

/// A `line` (a linear obstacle: a path of no width) is read as a band of
/// width 0; a line of one point and a misspelt kind are each reported
/// against the file, with the closest kind.
#[test]
fn a_bad_line() {
    let mut b = ruleset();
    let s = good(
        &mut b,
        concat!(
            "[[terrain]]\nkind = \"river\"\nline = { path = [[0, 15], [45, 16]] }\n\n",
            scenario!(units: "  { type = \"Horse\", at = [33, 5] },\n")
        ),
    );
    match &s.terrain[0].shape {
        Shape::Band { path, width } => {
            assert_eq!((path.len(), *width), (2, 0.0));
        }
        other => panic!("a line is a band of no width: {other:?}"),
    }
    let (d, r) = rejected(concat!(
        "[[terrain]]\nkind = \"rivers\"\nline = { path = [[0, 15]] }\n\n",
        scenario!(units: "  { type = \"Horse\", at = [33, 5] },\n")
    ));
    let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.contains(&"a line needs a path of at least two points"),
        "{r}"
    );
    assert!(r.contains("did you mean \"river\"?"), "{r}");
    assert!(r.contains("only one point"), "{r}");
    insta::assert_snapshot!("a_bad_line", r);
}
