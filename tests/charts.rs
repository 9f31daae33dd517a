//! Charts (issue 35, "Pictures"): `odds --svg`, `simulate --svg` and
//! `compare --svg` draw what the command prints, read back from the SVG:
//! each bar's height is its chance (the exact 184/729 of TVBD's horse
//! charge), each numeric outcome has its at-least line, sampled odds have
//! their 95% whiskers, a simulation's games add up, a comparison marks the
//! measures its JSON says moved; and a user's file is never replaced.

use crate::common;

use std::path::Path;

const TVBD: &str = "rules/tillys_very_bad_day.muster";
const CHARGE: &str = "rules/situations/tvbd_horse_charges_pike.toml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run muster, asserting success; the chart it wrote, read back.
fn chart(args: &[&str], file: &Path) -> (String, String) {
    let mut all: Vec<&str> = args.to_vec();
    let f = file.to_str().unwrap();
    all.extend(["--svg", f]);
    let out = common::succeeded(common::muster_in(root(), &all));
    (out, std::fs::read_to_string(file).unwrap())
}

/// What the command prints with `--json`.
fn json_of(args: &[&str]) -> serde_json::Value {
    let all = [args, &["--json"]].concat();
    serde_json::from_str(&common::succeeded(common::muster_in(root(), &all))).unwrap()
}

fn attr(n: &roxmltree::Node, a: &str) -> f64 {
    n.attribute(a).unwrap().parse().unwrap()
}

/// The elements of a class, in document order.
fn class<'a>(doc: &'a roxmltree::Document, c: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(c))
        .collect()
}

#[test]
fn odds_chart_bars_are_the_exact_chances() {
    let dir = common::scratch("charts-odds");
    let file = dir.join("charge.svg");
    let (_, svg) = chart(&["odds", TVBD, "--situation", CHARGE], &file);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(muster::cli::charts::is_chart(&svg));
    // The JSON says which outcomes and values there are.
    let json = json_of(&["odds", TVBD, "--situation", CHARGE]);
    let outcomes = json["details"].as_array().unwrap();
    let values_of = |name: &str| {
        outcomes.iter().find(|o| o["name"] == name).unwrap()["values"]
            .as_array()
            .unwrap()
            .len()
    };
    let values: usize = outcomes
        .iter()
        .map(|o| o["values"].as_array().unwrap().len())
        .sum();
    let bars = class(&doc, "bar");
    assert_eq!(bars.len(), values);
    // winner: attacker 184/729, defender 971/2187, draw 664/2187; the bars'
    // heights stand in the same ratios as the chances.
    let want = [184.0 / 729.0, 971.0 / 2187.0, 664.0 / 2187.0];
    for (b, w) in bars.iter().zip(want) {
        assert!((attr(b, "data-value") - w).abs() < 1e-12);
    }
    let h: Vec<f64> = bars[..3].iter().map(|b| attr(b, "height")).collect();
    assert!((h[0] / h[1] - want[0] / want[1]).abs() < 1e-3, "{h:?}");
    assert!((h[2] / h[1] - want[2] / want[1]).abs() < 1e-3, "{h:?}");
    // The tip of a bar gives the fraction.
    assert!(svg.contains("winner attacker: 25.2% = 184/729"), "{svg}");
    // One at-least line per numeric outcome (attacker_hits, defender_hits),
    // through one point per value; it starts at 100% (at least the least).
    let numeric = outcomes.iter().filter(|o| o.get("mean").is_some()).count();
    let lines = class(&doc, "at-least");
    assert_eq!(lines.len(), numeric);
    assert_eq!(numeric, 2);
    let first = lines[0].attribute("points").unwrap();
    let points: Vec<&str> = first.split(' ').collect();
    assert_eq!(points.len(), values_of("attacker_hits"));
    // The top of the right axis is the 100% tick.
    let top = class(&doc, "tick right")
        .into_iter()
        .find(|t| t.text() == Some("100%"))
        .map(|t| attr(&t, "y") - 3.0)
        .unwrap();
    let y0: f64 = points[0].split(',').nth(1).unwrap().parse().unwrap();
    assert!((y0 - top).abs() < 0.01, "{y0} {top}");
    // Exact odds: no whiskers.
    assert!(class(&doc, "whisker").is_empty());
}

#[test]
fn sampled_odds_have_their_whiskers() {
    let dir = common::scratch("charts-sampled");
    let file = dir.join("sampled.svg");
    let (_, svg) = chart(
        &["odds", TVBD, "--situation", CHARGE, "--samples", "4000"],
        &file,
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(class(&doc, "whisker").len(), class(&doc, "bar").len());
    assert!(svg.contains("sampled: 4000 samples"));
}

#[test]
fn simulate_chart_counts_every_game() {
    let dir = common::scratch("charts-simulate");
    let file = dir.join("sim.svg");
    let args = ["simulate", TVBD, "--runs", "60", "--seed", "3", "-q"];
    let (_, svg) = chart(&args, &file);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let json = json_of(&args);
    // Wins of each army, draws and the turn limit, as the JSON counts them.
    let values: Vec<String> = class(&doc, "value")
        .iter()
        .map(|t| t.text().unwrap().to_string())
        .collect();
    for w in json["wins"].as_array().unwrap() {
        let n = w["count"].as_u64().unwrap();
        let want = format!("{:.1}% ({n} games)", n as f64 / 60.0 * 100.0);
        assert!(values.contains(&want), "{want} not in {values:?}");
    }
    // Game length: the bars add up to every game, one bar per length.
    let lengths = json["length"].as_array().unwrap();
    let bars: Vec<f64> = class(&doc, "bar")
        .iter()
        .filter(|b| {
            b.children()
                .any(|c| c.text().is_some_and(|t| t.contains(" turns: ")))
        })
        .map(|b| attr(b, "data-value"))
        .collect();
    assert_eq!(bars.len(), lengths.len());
    assert_eq!(bars.iter().sum::<f64>(), 60.0);
    // A panel of losses per army.
    let headings: Vec<&str> = class(&doc, "heading")
        .iter()
        .filter_map(|h| h.text())
        .collect();
    assert_eq!(
        headings
            .iter()
            .filter(|h| h.starts_with("Losses of "))
            .count(),
        json["armies"].as_array().unwrap().len(),
        "{headings:?}"
    );
}

#[test]
fn compare_chart_marks_what_moved() {
    let dir = common::scratch("charts-compare");
    let file = dir.join("cmp.svg");
    let args = [
        "compare",
        TVBD,
        "rules/tvbd_steady_pike.muster",
        "--runs",
        "150",
        "-q",
    ];
    let (_, svg) = chart(&args, &file);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let json = json_of(&args);
    let shifts = json["comparison"]["shifts"].as_array().unwrap();
    let dots = class(&doc, "dot");
    assert_eq!(dots.len(), shifts.len());
    let moved = shifts.iter().filter(|s| s["moved"] == true).count();
    assert!(moved > 0, "steady pike moves something in 150 games");
    let red = dots
        .iter()
        .filter(|d| d.attribute("fill") == Some("#c0392b"))
        .count();
    assert_eq!(red, moved);
    assert!(svg.contains(&format!("{moved} of {} measures moved", shifts.len())));
    // Each dot sits at its difference: further right for a larger B - A,
    // within a panel.
    for (d, s) in dots.iter().zip(shifts) {
        assert!((attr(d, "data-value") - s["diff"].as_f64().unwrap()).abs() < 1e-12);
    }
}

#[test]
fn a_chart_never_replaces_a_users_file() {
    let dir = common::scratch("charts-safety");
    let file = dir.join("notes.svg");
    std::fs::write(&file, "<svg><!-- my own drawing --></svg>").unwrap();
    let f = file.to_str().unwrap();
    let out = common::muster_in(root(), &["odds", TVBD, "--situation", CHARGE, "--svg", f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "<svg><!-- my own drawing --></svg>"
    );
    // Its own chart it replaces.
    let mine = dir.join("mine.svg");
    chart(&["odds", TVBD, "--situation", CHARGE], &mine);
    chart(&["odds", TVBD, "--situation", CHARGE], &mine);
    // A shard is not a whole run: no chart of it.
    let shard = common::muster_in(
        root(),
        &[
            "simulate", TVBD, "--runs", "4", "--shard", "1/2", "--svg", f,
        ],
    );
    assert_eq!(shard.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "<svg><!-- my own drawing --></svg>"
    );
}

/// The pictures the README shows are what `docs/images/make.sh` makes
/// today, byte for byte (the battle page's screenshot depends on fonts and
/// is not compared).
#[test]
fn the_readme_charts_are_what_the_commands_write_today() {
    let dir = common::scratch("charts-readme");
    let odds = dir.join("odds.svg");
    chart(&["odds", TVBD, "--situation", CHARGE], &odds);
    let compare = dir.join("compare.svg");
    chart(
        &[
            "compare",
            TVBD,
            "rules/tvbd_steady_pike.muster",
            "--runs",
            "1000",
            "--quiet",
        ],
        &compare,
    );
    for (made, committed) in [(odds, "odds.svg"), (compare, "compare.svg")] {
        let want = std::fs::read_to_string(root().join("docs/images").join(committed)).unwrap();
        assert!(
            std::fs::read_to_string(&made).unwrap() == want,
            "docs/images/{committed} is stale: run `sh docs/images/make.sh`"
        );
    }
    // The script names the same commands.
    let script = std::fs::read_to_string(root().join("docs/images/make.sh")).unwrap();
    assert!(script.contains("--situation rules/situations/tvbd_horse_charges_pike.toml"));
    assert!(script.contains("--runs 1000 --quiet --svg docs/images/compare.svg"));
}
