//! Pictures of a played battle: the table as deployed and after each turn
//! (one SVG each, drawn by [`crate::cli::svg`]; `battle --svg DIR`), and the
//! whole battle as one self-contained HTML page (`battle --html FILE`): the
//! table turn by turn with a slider and step buttons, the narrative of the
//! turn beside it, the turn's moves and charges as arrows, and a key of
//! every unit by the name the narrative gives it.

use crate::battle::game::{Event, Game, Prepared};
use crate::battle::scenario::Scenario;
use crate::cli::svg::{self, esc, Arrow, Feature, UnitMark};
use crate::compile::ir::Ruleset;
use crate::run::battlefield::Pt;
use std::collections::HashMap;
use std::fmt::Write;

/// One picture of the table: the turn it ends (0: as deployed), its title,
/// and the SVG.
pub struct Picture {
    pub turn: u32,
    pub title: String,
    pub svg: String,
}

/// What every picture of a battle shares: the terrain, the units' short
/// names, and what the log says happened in each turn.
struct Battle<'a> {
    rs: &'a Ruleset,
    sc: &'a Scenario,
    prep: &'a Prepared<'a>,
    game: &'a Game<'a>,
    features: Vec<Feature<'a>>,
    /// Per unit: its type's short name, and what its base says.
    shorts: Vec<String>,
    tags: Vec<String>,
}

impl<'a> Battle<'a> {
    fn new(rs: &'a Ruleset, sc: &'a Scenario, prep: &'a Prepared<'a>, game: &'a Game<'a>) -> Self {
        let features = sc
            .terrain
            .iter()
            .map(|t| Feature {
                label: &t.name,
                kind: &t.kind_name,
                shape: &t.shape,
            })
            .collect();
        let shorts: Vec<String> = game
            .world
            .units
            .iter()
            .map(|u| short_name(&rs.unit_types[u.ty as usize].name))
            .collect();
        let tags = tags(rs, game, prep, &shorts);
        Battle {
            rs,
            sc,
            prep,
            game,
            features,
            shorts,
            tags,
        }
    }

    /// The table at snapshot `k`, with `arrows`, ids prefixed by `id`.
    fn picture(&self, k: usize, id: &str, arrows: &[Arrow]) -> Picture {
        let snap = &self.game.snapshots[k];
        let units: Vec<UnitMark> = self
            .game
            .world
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| UnitMark {
                label: &u.name,
                tag: &self.tags[i],
                short: &self.shorts[i],
                kind: &self.rs.unit_types[u.ty as usize].name,
                base: snap.bases[i],
                side: self.prep.army_of[i],
                side_name: &self.prep.army_names[self.prep.army_of[i]],
                faded: !snap.on_table[i],
                resolve: snap.resolve[i],
                files: snap.files.get(i).map_or(&[][..], |f| &f[..]),
            })
            .collect();
        let title = if snap.turn == 0 {
            format!("{} — deployed", self.rs.title)
        } else {
            format!("{} — end of turn {}", self.rs.title, snap.turn)
        };
        let svg = svg::render_as(
            id,
            &title,
            self.sc.width,
            self.sc.depth,
            &self.features,
            &units,
            arrows,
        );
        Picture {
            turn: snap.turn,
            title,
            svg,
        }
    }
}

/// The table as deployed and at the end of each turn (and where a game
/// that ended mid-turn stood), one picture each.
pub fn turn_pictures(rs: &Ruleset, sc: &Scenario, prep: &Prepared, game: &Game) -> Vec<Picture> {
    let b = Battle::new(rs, sc, prep, game);
    (0..game.snapshots.len())
        .map(|k| b.picture(k, "", &[]))
        .collect()
}

/// What the log says of one turn: its lines of narrative and its moves.
#[derive(Default)]
struct Turn {
    lines: Vec<String>,
    arrows: Vec<Arrow>,
}

/// The log split by turn (turn 0: deployment, before the first turn).
fn turns(game: &Game, prep: &Prepared) -> HashMap<u32, Turn> {
    let side: HashMap<&str, usize> = game
        .world
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| (u.name.as_str(), prep.army_of[i]))
        .collect();
    let mut by: HashMap<u32, Turn> = HashMap::new();
    let mut now = 0;
    for e in &game.log {
        if let Event::Turn { turn } = e {
            now = *turn;
        }
        let t = by.entry(now).or_default();
        let line = e.to_string();
        t.lines
            .extend(line.trim_start_matches('\n').lines().map(str::to_string));
        if let Event::Move {
            unit,
            how,
            from,
            to,
            with,
        } = e
        {
            let charge = how.contains("charge");
            let s = side.get(unit.as_str()).copied().unwrap_or(0);
            let pt = |p: &[f64; 3]| Pt::new(p[0], p[1]);
            t.arrows.push(Arrow {
                from: pt(from),
                to: pt(to),
                charge,
                side: s,
            });
            for w in with {
                t.arrows.push(Arrow {
                    from: pt(&w.from),
                    to: pt(&w.to),
                    charge,
                    side: s,
                });
            }
        }
    }
    by
}

/// What a page says wrote it (the `generator` of its head).
const GENERATOR: &str = "muster battle --html";

/// Whether a file (its first bytes) is a page this program wrote, which
/// `battle --html` may replace.
pub fn is_page(head: &str) -> bool {
    head.starts_with("<!doctype html>")
        && head.contains(&format!(
            "<meta name=\"generator\" content=\"{GENERATOR}\">"
        ))
}

/// The battle as one HTML page that needs nothing else (no network, no
/// other file): a frame per picture (the table with the turn's moves, the
/// turn's narrative beside it), a slider and buttons to step through them
/// (and the arrow keys; `#turn=N` in the address opens turn N), and a key
/// of the units: the label on each base, the unit as the narrative names
/// it, its army and type.
pub fn page(rs: &Ruleset, sc: &Scenario, prep: &Prepared, game: &Game, seed: u64) -> String {
    let b = Battle::new(rs, sc, prep, game);
    let mut by = turns(game, prep);
    let heading = format!(
        "{} — {} (seed {seed})",
        rs.title,
        sc.description.as_deref().unwrap_or("scenario")
    );
    let result = game
        .log
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::End { turns, result } => Some(format!("End after {turns} turns: {result}")),
            _ => None,
        })
        .unwrap_or_default();
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{GENERATOR}">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; color: #222; }}
h1 {{ font-size: 1.3em; margin: 0 0 .2em; }}
#result {{ margin: 0 0 .8em; font-weight: bold; }}
#controls {{ display: flex; gap: .6em; align-items: center; margin-bottom: .6em; }}
#controls input {{ flex: 1; max-width: 40em; }}
.frame {{ display: flex; gap: 1em; align-items: flex-start; }}
.frame[hidden] {{ display: none; }}
.picture svg {{ max-width: 100%; height: auto; }}
.picture {{ flex: 0 1 948px; }}
.narrative {{ flex: 1; max-height: 80vh; overflow: auto; font-size: .8em; margin: 0; white-space: pre-wrap; background: #f7f7f2; padding: .5em; }}
#key {{ border-collapse: collapse; margin-top: 1em; font-size: .9em; }}
#key td, #key th {{ border: 1px solid #ccc; padding: .15em .5em; text-align: left; }}
#key tr:hover {{ background: #ffe9a8; }}
.unit-mark.lit rect {{ stroke: #000; stroke-width: 3; }}
</style>
</head>
<body>
<h1>{h}</h1>
<p id="result">{result}</p>
<div id="controls">
<button id="prev" type="button" title="previous turn (left arrow)">&#9664;</button>
<input id="turn" type="range" min="0" max="{max}" value="0" step="1">
<button id="next" type="button" title="next turn (right arrow)">&#9654;</button>
<span id="shown"></span>
</div>
"#,
        title = esc(&heading),
        h = esc(&heading),
        result = esc(&result),
        max = game.snapshots.len().saturating_sub(1),
    );
    for k in 0..game.snapshots.len() {
        let turn = game.snapshots[k].turn;
        // A turn's moves and lines go with its last picture only.
        let last_of_turn = game.snapshots.get(k + 1).is_none_or(|n| n.turn != turn);
        let t = if last_of_turn {
            by.remove(&turn).unwrap_or_default()
        } else {
            Turn::default()
        };
        let pic = b.picture(k, &format!("f{k}-"), &t.arrows);
        let caption = if turn == 0 {
            "Deployment".to_string()
        } else {
            format!("Turn {turn}")
        };
        let _ = write!(
            o,
            "<section class=\"frame\" data-turn=\"{turn}\" data-caption=\"{cap}\" data-moves=\"{moves}\"{hidden}>\n<div class=\"picture\">\n{svg}</div>\n<pre class=\"narrative\">{lines}</pre>\n</section>\n",
            cap = esc(&caption),
            moves = t.arrows.len(),
            hidden = if k == 0 { "" } else { " hidden" },
            svg = pic.svg,
            lines = esc(&t.lines.join("\n")),
        );
    }
    let _ = writeln!(
        o,
        "<table id=\"key\">\n<caption>Key: what each base says (its resolve after it, in brackets), and the unit as the narrative names it</caption>\n<tr><th>label</th><th>unit</th><th>army</th><th>type</th></tr>"
    );
    for (i, u) in game.world.units.iter().enumerate() {
        let _ = writeln!(
            o,
            "<tr class=\"unit-row\" data-unit=\"{n}\"><td>{s}</td><td>{n}</td><td>{a}</td><td>{t}</td></tr>",
            n = esc(&u.name),
            s = esc(&b.tags[i]),
            a = esc(&prep.army_names[prep.army_of[i]]),
            t = esc(&rs.unit_types[u.ty as usize].name),
        );
    }
    o.push_str("</table>\n");
    o.push_str(SCRIPT);
    o.push_str("</body>\n</html>\n");
    o
}

/// The page's behaviour: show one frame at a time, step with the slider,
/// the buttons or the arrow keys, open `#turn=N`, and light a unit in the
/// pictures while its row of the key is under the pointer.
const SCRIPT: &str = r#"<script>
(function () {
  var frames = Array.prototype.slice.call(document.querySelectorAll("section.frame"));
  var slider = document.getElementById("turn");
  var shown = document.getElementById("shown");
  function show(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    frames.forEach(function (f, k) { f.hidden = k !== i; });
    slider.value = String(i);
    shown.textContent = frames[i].dataset.caption + " (" + (i + 1) + " of " + frames.length + ")";
    document.body.dataset.shown = String(i);
    document.body.dataset.turn = frames[i].dataset.turn;
  }
  function current() { return Number(slider.value); }
  slider.addEventListener("input", function () { show(current()); });
  document.getElementById("prev").addEventListener("click", function () { show(current() - 1); });
  document.getElementById("next").addEventListener("click", function () { show(current() + 1); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowLeft") { show(current() - 1); }
    if (e.key === "ArrowRight") { show(current() + 1); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("tr.unit-row"), function (row) {
    function light(on) {
      Array.prototype.forEach.call(document.querySelectorAll("g.unit-mark"), function (g) {
        if (g.dataset.unit === row.dataset.unit) { g.classList.toggle("lit", on); }
      });
    }
    row.addEventListener("mouseenter", function () { light(true); });
    row.addEventListener("mouseleave", function () { light(false); });
  });
  var m = /turn=(\d+)/.exec(location.hash);
  var start = 0;
  if (m) {
    frames.forEach(function (f, k) { if (f.dataset.turn === m[1]) { start = k; } });
  }
  show(start);
})();
</script>
"#;

/// Words left out of the initials that tell units apart.
const LITTLE_WORDS: [&str; 8] = ["of", "and", "the", "de", "la", "le", "du", "von"];

/// What each unit's base says: its type's short name and the number its
/// name ends with ("Blue centre Pike+Shot 3" -> "P+S3"); where two units of
/// a side would say the same, the initials of the words of their names
/// that tell them apart go first, for every unit of that type in that side
/// ("Blue right wing Horse 1" -> "rwHo1").
fn tags(rs: &Ruleset, game: &Game, prep: &Prepared, shorts: &[String]) -> Vec<String> {
    let units = &game.world.units;
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let number = |name: &str| -> String {
        let n: String = name
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        n.chars().rev().collect()
    };
    let first: Vec<String> = units
        .iter()
        .enumerate()
        .map(|(i, u)| format!("{}{}", shorts[i], number(&u.name)))
        .collect();
    let clash = |tags: &[String], i: usize| {
        (0..units.len()).any(|j| j != i && prep.army_of[j] == prep.army_of[i] && tags[j] == tags[i])
    };
    // Where two units of a type in a side clash, every unit of that type in
    // that side is told apart the same way.
    let clashing: Vec<(usize, &str)> = (0..units.len())
        .filter(|i| clash(&first, *i))
        .map(|i| (prep.army_of[i], shorts[i].as_str()))
        .collect();
    let mut tags = first.clone();
    for (i, u) in units.iter().enumerate() {
        if !clashing.contains(&(prep.army_of[i], shorts[i].as_str())) {
            continue;
        }
        // The words of the name, less the first (the army's: "Blue"), the
        // number, and the words of the type's name.
        let of_type: Vec<String> = words(&rs.unit_types[u.ty as usize].name)
            .iter()
            .map(|w| w.to_lowercase())
            .collect();
        let initials: String = words(&u.name)
            .iter()
            .skip(1)
            .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
            .filter(|w| !of_type.contains(&w.to_lowercase()))
            .filter(|w| !LITTLE_WORDS.contains(&w.as_str()))
            .filter_map(|w| w.chars().next())
            .collect();
        tags[i] = format!("{}{}", initials.to_lowercase(), first[i]);
    }
    // Still the same (names alike but for their army word): a number each.
    let again = tags.clone();
    let mut seen: HashMap<(usize, String), u32> = HashMap::new();
    for i in 0..units.len() {
        if clash(&again, i) {
            let k = seen.entry((prep.army_of[i], again[i].clone())).or_insert(0);
            *k += 1;
            tags[i] = format!("{}-{k}", again[i]);
        }
    }
    tags
}

/// A short label for a unit type: initials of a name of several words
/// ("Pike+Shot" -> "P+S", "Light horse" -> "LH"), the first two letters of
/// one word ("Commander" -> "Co", "Cannons" -> "Ca").
pub fn short_name(t: &str) -> String {
    let words: Vec<&str> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() == 1 {
        return words[0].chars().take(2).collect();
    }
    let sep = if t.contains('+') { "+" } else { "" };
    words
        .iter()
        .filter_map(|w| w.chars().next())
        .map(|c| c.to_ascii_uppercase().to_string())
        .collect::<Vec<_>>()
        .join(sep)
}
