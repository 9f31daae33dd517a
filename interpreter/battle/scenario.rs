//! Scenario files: the TOML a battle starts from. A scenario gives the table's
//! size, the terrain on it (each feature a variant of the ruleset's
//! `enum terrain` with a rectangle, an ellipse or a band as its shape), and
//! exactly two armies, each divided into commands of units. A unit is either
//! placed (`at`, optionally `facing`) or, when no unit of its army is placed,
//! left for the ruleset's deployment procedure. A unit with `reserve = true`
//! starts off the table, held back until a rule brings it on (its
//! `off_table` set to false, then a `place` decision puts it down).
//!
//! ```toml
//! description = "Free text"
//! turn_limit = 20
//! [table]
//! width = 45
//! depth = 30
//!
//! [[terrain]]
//! kind = "woods"
//! name = "Hohenlohe wood"
//! rect = { centre = [10, 15], width = 6, depth = 4, angle = 0 }
//!
//! [[army]]
//! name = "Swedish army"
//! policy = "default"
//! search = "purposeful"   # optional: overrides the policy's `search`
//! [[army.command]]
//! name = "Right wing"
//! units = [
//!   { type = "Commander", at = [30, 5] },
//!   { type = "Horse", quality = "superior", at = [32, 5], name = "Smaland horse" },
//! ]
//! ```
//!
//! Coordinates are in the ruleset's measure, the table running from (0, 0)
//! to (width, depth); y grows from the first army's base edge toward the
//! second's, and a facing is a compass bearing in degrees (0 faces +y, 90
//! faces +x). Reading checks everything that can be checked without the
//! units' bases; [`Scenario::check_placement`] checks the rest once the
//! bases are known.

use crate::base::value::Value;
use crate::compile::ir::{Id, Ruleset, Search};
use crate::front::diagnostic::Diag;
use crate::front::source::Sources;
use crate::front::syntax::{FileId, Span};
use crate::odds::situation::{quality_named, span_of, unit_type_named};
use crate::run::battlefield::{Base, Pt, Shape};
use serde::Deserialize;
use std::collections::HashMap;
use toml::Spanned;

/// The code of every diagnostic about a scenario.
const CODE: &str = "muster::scenario";

/// The most units one entry's `count` may expand to.
const MAX_COUNT: i64 = 1000;

// The most units a scenario may have is the world's limit.
use crate::run::world::MAX_UNITS;

/// The most terrain features a scenario may have, and the most points of
/// one band's path: every move is checked against the terrain it passes.
pub const MAX_TERRAIN: usize = 1000;

/// The longest side a scenario's table may have, in the ruleset's measure:
/// fourteen times the longest shipped table (72 inches). Paths are laid a
/// base every half measure and deployment weighs a spot every measure, so
/// the work of a move and of a deployment grows with the table.
pub const MAX_TABLE: f64 = 1000.0;

/// Float comparisons on the table forgive this much rounding.
const EPS: f64 = 1e-9;

// ---------------------------------------------------------------- the file

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileToml {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    turn_limit: Option<Spanned<i64>>,
    #[serde(default)]
    options: std::collections::BTreeMap<String, Spanned<bool>>,
    #[serde(default)]
    table: Option<Spanned<TableToml>>,
    #[serde(default)]
    terrain: Vec<Spanned<TerrainToml>>,
    #[serde(default)]
    army: Vec<Spanned<ArmyToml>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TableToml {
    width: Spanned<f64>,
    depth: Spanned<f64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TerrainToml {
    kind: Spanned<String>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    rect: Option<Spanned<RectToml>>,
    #[serde(default)]
    ellipse: Option<Spanned<EllipseToml>>,
    #[serde(default)]
    band: Option<Spanned<BandToml>>,
    #[serde(default)]
    line: Option<Spanned<LineToml>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RectToml {
    centre: Spanned<[f64; 2]>,
    width: Spanned<f64>,
    depth: Spanned<f64>,
    #[serde(default)]
    angle: Option<Spanned<f64>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct EllipseToml {
    centre: Spanned<[f64; 2]>,
    rx: Spanned<f64>,
    ry: Spanned<f64>,
    #[serde(default)]
    angle: Option<Spanned<f64>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct BandToml {
    path: Spanned<Vec<[f64; 2]>>,
    width: Spanned<f64>,
}

/// A linear obstacle: a path with no width (a hedge, a wall, a stream).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct LineToml {
    path: Spanned<Vec<[f64; 2]>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ArmyToml {
    name: Spanned<String>,
    #[serde(default)]
    policy: Option<Spanned<String>>,
    #[serde(default)]
    search: Option<Spanned<String>>,
    #[serde(default)]
    command: Vec<Spanned<CommandToml>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct CommandToml {
    name: Spanned<String>,
    #[serde(default)]
    units: Vec<Spanned<UnitToml>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct UnitToml {
    #[serde(rename = "type")]
    ty: Spanned<String>,
    #[serde(default)]
    quality: Option<Spanned<String>>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    at: Option<Spanned<[f64; 2]>>,
    #[serde(default)]
    facing: Option<Spanned<f64>>,
    #[serde(default)]
    count: Option<Spanned<i64>>,
    #[serde(default)]
    reserve: Option<Spanned<bool>>,
}

// ---------------------------------------------------------- what is read

/// A scenario, resolved against a ruleset: the table, its terrain and the
/// two armies.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The scenario's free-text description.
    pub description: Option<String>,
    /// The table's width (along x), in the ruleset's measure.
    pub width: f64,
    /// The table's depth (along y, from the first army's base edge to the
    /// second's), in the ruleset's measure.
    pub depth: f64,
    /// A game still going after this many turns ends, reported as such.
    pub turn_limit: Option<u32>,
    /// Optional rules the scenario switches (`[options]`): (option, on).
    pub options: Vec<(Id, bool)>,
    /// The terrain features, in file order.
    pub terrain: Vec<TerrainSpec>,
    /// Exactly two armies: the first deploys from y = 0, the second from
    /// y = depth.
    pub armies: Vec<ArmySpec>,
    /// The scenario file.
    pub file: FileId,
    /// The file's first line (its first non-blank one): problems of the
    /// whole scenario are reported here.
    pub span: Span,
}

/// One terrain feature.
#[derive(Clone, Debug)]
pub struct TerrainSpec {
    /// Its `name`, or else its kind (numbered when the kind repeats).
    pub name: String,
    /// The variant of the ruleset's `enum terrain` (a [`Value::Sym`]).
    pub kind: Value,
    /// The variant's name, as the ruleset spells it.
    pub kind_name: String,
    /// Where it lies on the table.
    pub shape: Shape,
    /// The feature's `[[terrain]]` table.
    pub span: Span,
}

/// One army.
#[derive(Clone, Debug)]
pub struct ArmySpec {
    /// The army's name.
    pub name: String,
    /// The policy the scenario names for the army, with where it names it
    /// (resolved by whoever runs the battle).
    pub policy: Option<(String, Span)>,
    /// How the army's player looks for its moves (`search = "thorough"`,
    /// `"purposeful"` or `"stand_off"`), in place of its policy's `search`;
    /// None: the policy's.
    pub search: Option<Search>,
    /// The army's commands, at least one.
    pub commands: Vec<CommandSpec>,
    /// The army's `[[army]]` table.
    pub span: Span,
}

/// One command of an army.
#[derive(Clone, Debug)]
pub struct CommandSpec {
    /// The command's name.
    pub name: String,
    /// Its units, with `count` expanded, at least one.
    pub units: Vec<UnitSpec>,
    /// The command's `[[army.command]]` table.
    pub span: Span,
}

/// One unit of a command.
#[derive(Clone, Debug)]
pub struct UnitSpec {
    /// Its `name`, or else "<command> <type> <n>" (numbered within the
    /// command when the type repeats), or "<command> <type>". Unique across
    /// the scenario.
    pub name: String,
    /// Its unit type.
    pub ty: Id,
    /// Its quality, when the scenario gives one.
    pub quality: Option<Id>,
    /// The centre of its base, when the scenario places it; `None` when its
    /// army is deployed by the ruleset's procedure.
    pub at: Option<Pt>,
    /// The compass bearing it faces, in degrees in [0, 360): as given, or
    /// toward the enemy (0 for the first army, 180 for the second).
    pub facing: f64,
    /// Held back off the table when the battle starts (`reserve = true`).
    pub reserve: bool,
    /// The unit's inline table (shared by the units one `count` makes).
    pub span: Span,
}

/// One unit entry, resolved, before names are given.
struct Entry {
    ty: Id,
    quality: Option<Id>,
    name: Option<String>,
    at: Option<Pt>,
    facing: f64,
    count: usize,
    reserve: bool,
    span: Span,
}

/// Read a scenario. Problems are diagnostics pointing into the file.
pub fn read(
    rs: &Ruleset,
    name: &str,
    text: &str,
    sources: &mut Sources,
) -> Result<Scenario, Vec<Diag>> {
    let file = sources.add(name, text);
    let f: FileToml = toml::from_str(text).map_err(|e| {
        // toml's span, kept inside the text, on character boundaries, and
        // at least one character long where the text allows.
        let s = e.span().unwrap_or(0..0);
        let mut start = s.start.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = s.end.max(start + 1).min(text.len()).max(start);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        vec![Diag::new(
            CODE,
            format!("the scenario file is not valid: {}", e.message().trim_end()),
        )
        .at(Span::new(file, start, end), "here")
        .help(
            "a scenario has `[table] width = W  depth = D`, `[[terrain]]` tables with `kind` and \
             one of `rect`, `ellipse`, `band` or `line`, and two `[[army]]` tables, each with \
             `[[army.command]]` tables of `name` and `units = [{ type = \"...\", at = [X, Y] }]`",
        )]
    })?;
    let whole = first_line(file, text);
    let mut diags = Vec::new();

    // The table.
    let (width, depth) = match &f.table {
        None => {
            diags.push(
                Diag::new(CODE, "the scenario does not say how big the table is")
                    .at(whole, "no `[table]` in this file")
                    .help(format!(
                        "add `[table]` with `width = ...` and `depth = ...`{}",
                        measure(rs)
                    )),
            );
            (0.0, 0.0)
        }
        Some(t) => {
            let t = t.get_ref();
            (
                table_side(rs, file, &t.width, "the table's width", &mut diags),
                table_side(rs, file, &t.depth, "the table's depth", &mut diags),
            )
        }
    };

    // The turn limit.
    let turn_limit = match &f.turn_limit {
        None => None,
        Some(t) => match u32::try_from(*t.get_ref()) {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                let d = Diag::new(CODE, format!("a turn limit of {} turns", t.get_ref()))
                    .at(span_of(file, t), "not a number of turns")
                    .help("give a whole number of turns, at least 1; or leave it out");
                diags.push(d);
                None
            }
        },
    };

    // Optional rules.
    let mut options = Vec::new();
    for (name, on) in &f.options {
        match rs.option(name) {
            Some(i) if rs.options[i as usize].number.is_some() => diags.push(
                crate::odds::situation::number_option_fixed(name, span_of(file, on)),
            ),
            Some(i) => options.push((i, *on.get_ref())),
            None => diags.push(
                Diag::new(CODE, format!("unknown option `{name}`"))
                    .at(span_of(file, on), "not an option of this ruleset")
                    .help(format!(
                        "the options are: {}",
                        rs.options
                            .iter()
                            .map(|o| o.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
            ),
        }
    }

    // Terrain.
    let terrain = read_terrain(rs, file, &f.terrain, &mut diags);

    // Armies.
    let mut armies = Vec::new();
    // Whether each unit, in reading order, was named in the file.
    let mut named = Vec::new();
    // The units of the armies read so far.
    let mut units = 0;
    for (ai, a) in f.army.iter().enumerate() {
        if let Some((army, n)) = read_army(rs, file, ai, a, &mut units, &mut diags) {
            armies.push(army);
            named.extend(n);
        }
    }
    match f.army.len() {
        2 => {}
        0 | 1 => {
            let mut d = Diag::new(
                CODE,
                format!(
                    "a scenario needs two armies, but this one has {}",
                    if f.army.is_empty() {
                        "none"
                    } else {
                        "only one"
                    }
                ),
            )
            .at(whole, "in this scenario")
            .help(
                "add an `[[army]]` table (with `name` and its `[[army.command]]` tables) \
                 for each side",
            );
            if let Some(a) = f.army.first() {
                d = d.note(span_of(file, &a.get_ref().name), "the only army");
            }
            diags.push(d);
        }
        n => diags.push(
            Diag::new(
                CODE,
                format!("a scenario has two armies, but this one has {n}"),
            )
            .at(span_of(file, &f.army[2].get_ref().name), "a third army")
            .help(
                "a battle is fought between two armies: merge the extra ones into them as commands",
            ),
        ),
    }

    // Unit names are unique across the scenario.
    let mut seen: HashMap<&str, (Span, bool)> = HashMap::new();
    let all = armies
        .iter()
        .flat_map(|a| a.commands.iter().flat_map(|c| c.units.iter()));
    for (u, &explicit) in all.zip(&named) {
        let how = |explicit: bool, which: &str| {
            if explicit {
                format!("{which} \"{}\"", u.name)
            } else {
                format!("{which} \"{}\" (after its command and type)", u.name)
            }
        };
        match seen.get(u.name.as_str()) {
            None => {
                seen.insert(&u.name, (u.span, explicit));
            }
            Some(&(first, first_explicit)) => diags.push(
                Diag::new(CODE, format!("two units are called \"{}\"", u.name))
                    .at(u.span, how(explicit, "a second"))
                    .note(first, how(first_explicit, "the first"))
                    .help(
                        "give one of them another `name`: units are told apart by their names; \
                         a unit without a `name` is called after its command and type \
                         (\"Centre Shot\", or \"Centre Shot 2\" when the command has several)",
                    ),
            ),
        }
    }

    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Scenario {
        description: f.description,
        width,
        depth,
        turn_limit,
        options,
        terrain,
        armies,
        file,
        span: whole,
    })
}

impl Scenario {
    /// Every unit in reading order (army, command, unit), with the indices
    /// of its army and command.
    pub fn units(&self) -> impl Iterator<Item = (usize, usize, &UnitSpec)> {
        self.armies.iter().enumerate().flat_map(|(a, army)| {
            army.commands
                .iter()
                .enumerate()
                .flat_map(move |(c, cmd)| cmd.units.iter().map(move |u| (a, c, u)))
        })
    }

    /// Placement problems once bases are known: `bases[i]` is the base of
    /// the i-th unit in reading order (army, command, unit), `Some` for
    /// placed units. Reports every unit whose base is not wholly on the
    /// table and every unit whose base overlaps that of a unit before it
    /// (touching is not overlapping): once, naming the first it overlaps
    /// and how many more (a stack of a thousand bases is a thousand
    /// problems, not half a million).
    pub fn check_placement(&self, bases: &[Option<Base>]) -> Vec<Diag> {
        let mut diags = Vec::new();
        let placed: Vec<(&UnitSpec, &Base)> = self
            .units()
            .zip(bases)
            .filter_map(|((_, _, u), b)| b.as_ref().map(|b| (u, b)))
            .collect();
        for (u, b) in &placed {
            if let Some(help) = self.off_table(b) {
                diags.push(
                    Diag::new(CODE, format!("\"{}\" is off the table", u.name))
                        .at(u.span, "its base is not wholly on the table")
                        .help(help),
                );
            }
        }
        for (i, (u, b)) in placed.iter().enumerate() {
            let mut under = placed[..i].iter().filter(|(_, c)| b.overlaps(c));
            let Some((v, _)) = under.next() else {
                continue;
            };
            let more = match under.count() {
                0 => String::new(),
                n => format!(" (\"{}\" overlaps {n} more)", u.name),
            };
            diags.push(
                Diag::new(
                    CODE,
                    format!(
                        "the bases of \"{}\" and \"{}\" overlap{more}",
                        v.name, u.name
                    ),
                )
                .at(u.span, format!("\"{}\"", u.name))
                .note(v.span, format!("overlaps \"{}\"", v.name))
                .help(
                    "move one of them: bases may touch but not overlap \
                     (`at` is the centre of a unit's base)",
                ),
            );
        }
        diags
    }

    /// Why a base is not wholly on the table (`None` when it is).
    fn off_table(&self, b: &Base) -> Option<String> {
        let corners = b.corners();
        let lo_x = corners.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let hi_x = corners
            .iter()
            .map(|p| p.x)
            .fold(f64::NEG_INFINITY, f64::max);
        let lo_y = corners.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        let hi_y = corners
            .iter()
            .map(|p| p.y)
            .fold(f64::NEG_INFINITY, f64::max);
        let army = |i: usize| match self.armies.get(i) {
            Some(a) => format!(", the base edge of {}", a.name),
            None => String::new(),
        };
        let over = [
            (-lo_x, "side edge x = 0".to_string()),
            (
                hi_x - self.width,
                format!("side edge x = {}", num(self.width)),
            ),
            (-lo_y, format!("edge y = 0{}", army(0))),
            (
                hi_y - self.depth,
                format!("edge y = {}{}", num(self.depth), army(1)),
            ),
        ];
        // A base with no finite corner is as far off as can be.
        let (by, edge) = over
            .iter()
            .map(|(d, e)| (if d.is_nan() { f64::INFINITY } else { *d }, e))
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        if by <= EPS {
            return None;
        }
        Some(format!(
            "the table runs from (0, 0) to ({}, {}), and this base is {} over its {edge}: \
             move it that far back onto the table",
            num(self.width),
            num(self.depth),
            num(by)
        ))
    }
}

// ------------------------------------------------------------- helpers

/// The file's first non-blank line (or its start).
fn first_line(file: FileId, text: &str) -> Span {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !body.trim().is_empty() {
            return Span::new(file, start, start + body.len());
        }
        start += line.len();
    }
    Span::new(file, 0, 0)
}

/// " in TUM" when the ruleset names its measure.
fn measure(rs: &Ruleset) -> String {
    rs.measure
        .as_ref()
        .map(|m| format!(" in {m}"))
        .unwrap_or_default()
}

/// A number as a reader would write it: 45, 1.5, 0.33.
fn num(x: f64) -> String {
    if !x.is_finite() {
        return "an unbounded distance".to_string();
    }
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A finite number, or a diagnostic (and 0).
fn finite(file: FileId, v: &Spanned<f64>, what: &str, diags: &mut Vec<Diag>) -> f64 {
    let x = *v.get_ref();
    if x.is_finite() {
        x
    } else {
        diags.push(
            Diag::new(CODE, format!("{what} is not a number"))
                .at(span_of(file, v), "not a finite number")
                .help("write a plain number such as 2 or 1.5"),
        );
        0.0
    }
}

/// A positive number, or a diagnostic (and 1).
fn positive(file: FileId, v: &Spanned<f64>, what: &str, diags: &mut Vec<Diag>) -> f64 {
    let x = *v.get_ref();
    if x.is_finite() && x > 0.0 {
        x
    } else {
        diags.push(
            Diag::new(CODE, format!("{what} must be more than 0"))
                .at(
                    span_of(file, v),
                    if x.is_finite() {
                        format!("{} here", num(x))
                    } else {
                        "not a finite number".to_string()
                    },
                )
                .help("give a positive size, in the ruleset's measure"),
        );
        1.0
    }
}

/// A side of the table: a positive number no more than [`MAX_TABLE`], or
/// a diagnostic (and 1).
fn table_side(
    rs: &Ruleset,
    file: FileId,
    v: &Spanned<f64>,
    what: &str,
    diags: &mut Vec<Diag>,
) -> f64 {
    let x = positive(file, v, what, diags);
    if x <= MAX_TABLE {
        return x;
    }
    diags.push(
        Diag::new(
            CODE,
            format!(
                "{what} is {}, more than the {MAX_TABLE} a table may be",
                num(x)
            ),
        )
        .at(span_of(file, v), "too big a table")
        .help(format!(
            "a table is at most {MAX_TABLE} by {MAX_TABLE}{}: moves are checked a base every \
             half measure and deployment weighs every spot, so the work grows with the table",
            measure(rs)
        )),
    );
    1.0
}

/// A point `[x, y]` with finite coordinates, or a diagnostic (and the origin).
fn point(file: FileId, v: &Spanned<[f64; 2]>, what: &str, diags: &mut Vec<Diag>) -> Pt {
    let [x, y] = *v.get_ref();
    if x.is_finite() && y.is_finite() {
        Pt { x, y }
    } else {
        diags.push(
            Diag::new(CODE, format!("{what} is not a point on the table"))
                .at(span_of(file, v), "not two finite numbers")
                .help("write a point as `[x, y]`, e.g. `[22.5, 5]`"),
        );
        Pt { x: 0.0, y: 0.0 }
    }
}

fn angle(file: FileId, v: &Option<Spanned<f64>>, diags: &mut Vec<Diag>) -> f64 {
    v.as_ref()
        .map(|a| finite(file, a, "the angle", diags))
        .unwrap_or(0.0)
}

fn read_terrain(
    rs: &Ruleset,
    file: FileId,
    features: &[Spanned<TerrainToml>],
    diags: &mut Vec<Diag>,
) -> Vec<TerrainSpec> {
    let en = rs.enums.iter().find(|e| e.name == "terrain");
    let mut out = Vec::new();
    if let Some(t) = features.get(MAX_TERRAIN) {
        diags.push(
            Diag::new(
                CODE,
                format!(
                    "the scenario has {} terrain features, more than the {MAX_TERRAIN} it may have",
                    features.len()
                ),
            )
            .at(
                span_of(file, t),
                format!("feature {} of the scenario", MAX_TERRAIN + 1),
            )
            .help(format!(
                "a scenario has at most {MAX_TERRAIN} terrain features (every move is checked \
                 against those it passes): merge small ones into bigger shapes"
            )),
        );
        return out;
    }
    // Features without a name are called after their kind, numbered when
    // the kind repeats.
    let mut unnamed: HashMap<&str, usize> = HashMap::new();
    for t in features {
        if t.get_ref().name.is_none() {
            *unnamed
                .entry(t.get_ref().kind.get_ref().as_str())
                .or_default() += 1;
        }
    }
    let mut numbered: HashMap<&str, usize> = HashMap::new();
    for t in features {
        let tt = t.get_ref();
        let kind = tt.kind.get_ref();
        let sym = match en {
            None => {
                diags.push(
                    Diag::new(CODE, "the ruleset has no terrain")
                        .at(span_of(file, &tt.kind), "a terrain feature")
                        .help(
                            "the ruleset must declare `enum terrain = ...` (or `import battle`) \
                             for a scenario to place terrain; or leave the `[[terrain]]` tables out",
                        ),
                );
                None
            }
            Some(en) => {
                let names = en.variants.iter().map(|v| rs.symbols[*v as usize].as_str());
                match en
                    .variants
                    .iter()
                    .find(|v| rs.symbols[**v as usize] == *kind)
                {
                    Some(v) => Some(*v),
                    None => {
                        let all = names.clone().collect::<Vec<_>>().join(", ");
                        diags.push(
                            Diag::new(CODE, format!("unknown terrain `{kind}`"))
                                .at(
                                    span_of(file, &tt.kind),
                                    "not a kind of terrain of this ruleset",
                                )
                                .help(match crate::compile::compiler::suggest(kind, names) {
                                    Some(s) => format!("did you mean \"{s}\"?"),
                                    None => format!("the kinds of terrain are: {all}"),
                                }),
                        );
                        None
                    }
                }
            }
        };
        let shape = read_shape(file, t, diags);
        let name = match &tt.name {
            Some(n) => n.get_ref().clone(),
            None if unnamed.get(kind.as_str()).copied().unwrap_or(0) > 1 => {
                let n = numbered.entry(kind.as_str()).or_default();
                *n += 1;
                format!("{kind} {n}")
            }
            None => kind.clone(),
        };
        if let (Some(sym), Some(shape)) = (sym, shape) {
            out.push(TerrainSpec {
                name,
                kind: Value::Sym(sym),
                kind_name: rs.symbols[sym as usize].clone(),
                shape,
                span: span_of(file, t),
            });
        }
    }
    out
}

fn read_shape(file: FileId, t: &Spanned<TerrainToml>, diags: &mut Vec<Diag>) -> Option<Shape> {
    let tt = t.get_ref();
    let given: Vec<(&str, Span)> = [
        tt.rect.as_ref().map(|s| ("rect", span_of(file, s))),
        tt.ellipse.as_ref().map(|s| ("ellipse", span_of(file, s))),
        tt.band.as_ref().map(|s| ("band", span_of(file, s))),
        tt.line.as_ref().map(|s| ("line", span_of(file, s))),
    ]
    .into_iter()
    .flatten()
    .collect();
    match given.as_slice() {
        [] => {
            diags.push(
                Diag::new(CODE, "this terrain feature has no shape")
                    .at(span_of(file, &tt.kind), "where is it?")
                    .help(
                        "give it one of `rect = { centre = [X, Y], width = W, depth = D }`, \
                         `ellipse = { centre = [X, Y], rx = RX, ry = RY }`, \
                         `band = { path = [[X, Y], ...], width = W }` or \
                         `line = { path = [[X, Y], ...] }`",
                    ),
            );
            return None;
        }
        [_] => {}
        [(first, fs), (second, ss), ..] => {
            diags.push(
                Diag::new(
                    CODE,
                    format!("this terrain feature has both a {first} and a {second}"),
                )
                .at(*ss, format!("a second shape ({second})"))
                .note(*fs, format!("the first shape ({first})"))
                .help(
                    "a terrain feature has exactly one shape: `rect`, `ellipse`, `band` or `line`; \
                         make the other shape a feature of its own",
                ),
            );
            return None;
        }
    }
    let before = diags.len();
    let shape = if let Some(r) = &tt.rect {
        let r = r.get_ref();
        Shape::Rect {
            centre: point(file, &r.centre, "the centre", diags),
            width: positive(file, &r.width, "a rectangle's width", diags),
            depth: positive(file, &r.depth, "a rectangle's depth", diags),
            angle: angle(file, &r.angle, diags),
        }
    } else if let Some(e) = &tt.ellipse {
        let e = e.get_ref();
        Shape::Ellipse {
            centre: point(file, &e.centre, "the centre", diags),
            rx: positive(file, &e.rx, "an ellipse's rx", diags),
            ry: positive(file, &e.ry, "an ellipse's ry", diags),
            angle: angle(file, &e.angle, diags),
        }
    } else if let Some(b) = &tt.band {
        let bb = b.get_ref();
        Shape::Band {
            path: read_path(file, &bb.path, "band", diags),
            width: positive(file, &bb.width, "a band's width", diags),
        }
    } else if let Some(l) = &tt.line {
        // A line is a band of no width: crossed, never stood in.
        Shape::Band {
            path: read_path(file, &l.get_ref().path, "line", diags),
            width: 0.0,
        }
    } else {
        return None;
    };
    (diags.len() == before).then_some(shape)
}

/// The points of a band's or a line's path (`what` names it), each problem
/// reported against the path: a point not two finite numbers, fewer than
/// two points, more than [`MAX_TERRAIN`].
fn read_path(
    file: FileId,
    p: &Spanned<Vec<[f64; 2]>>,
    what: &str,
    diags: &mut Vec<Diag>,
) -> Vec<Pt> {
    let mut path = Vec::new();
    for &[x, y] in p.get_ref() {
        if x.is_finite() && y.is_finite() {
            path.push(Pt { x, y });
        } else {
            diags.push(
                Diag::new(
                    CODE,
                    format!("a {what}'s path has a point that is not on the table"),
                )
                .at(span_of(file, p), "not two finite numbers")
                .help("write each point as `[x, y]`, e.g. `[0, 12]`"),
            );
        }
    }
    let n = p.get_ref().len();
    if n > MAX_TERRAIN {
        diags.push(
            Diag::new(
                CODE,
                format!("a {what}'s path has {n} points, more than the {MAX_TERRAIN} it may have"),
            )
            .at(span_of(file, p), "too long a path")
            .help(format!(
                "a {what}'s path has at most {MAX_TERRAIN} points: a river, a road or a hedge \
                 needs a few, where it bends"
            )),
        );
    }
    if n < 2 {
        diags.push(
            Diag::new(
                CODE,
                format!("a {what} needs a path of at least two points"),
            )
            .at(
                span_of(file, p),
                if n == 0 {
                    "no points"
                } else {
                    "only one point"
                },
            )
            .help(
                "give the points it runs through, e.g. `path = [[0, 12], [45, 14]]` \
                     from one table edge to the other",
            ),
        );
    }
    path
}

/// Read army `ai`, its entries' counts expanded into units, `units`
/// counting the units of the scenario so far (none are made once they
/// would be more than [`MAX_UNITS`]).
fn read_army(
    rs: &Ruleset,
    file: FileId,
    ai: usize,
    a: &Spanned<ArmyToml>,
    units: &mut usize,
    diags: &mut Vec<Diag>,
) -> Option<(ArmySpec, Vec<bool>)> {
    let at = a.get_ref();
    let before = diags.len();
    if at.command.is_empty() {
        diags.push(
            Diag::new(
                CODE,
                format!("army \"{}\" has no commands", at.name.get_ref()),
            )
            .at(span_of(file, &at.name), "this army")
            .help("add `[[army.command]]` tables after it, each with `name` and `units = [...]`"),
        );
    }
    let search = at.search.as_ref().and_then(|s| {
        let found = Search::ALL.iter().find(|(_, n)| *n == s.get_ref());
        if found.is_none() {
            diags.push(
                Diag::new(CODE, format!("unknown search \"{}\"", s.get_ref()))
                    .at(span_of(file, s), "not a search")
                    .help(format!(
                        "the searches are {}; without `search` the army searches as its policy says",
                        Search::names("\"")
                    )),
            );
        }
        found.map(|(s, _)| *s)
    });
    let facing_default = if ai == 0 { 0.0 } else { 180.0 };
    // Resolve every entry first; names need the whole command.
    let mut commands: Vec<(String, Vec<Entry>, Span)> = Vec::new();
    let mut first_placed: Option<Span> = None;
    let mut first_unplaced: Option<Span> = None;
    for c in &at.command {
        let ct = c.get_ref();
        if ct.units.is_empty() {
            diags.push(
                Diag::new(
                    CODE,
                    format!("command \"{}\" has no units", ct.name.get_ref()),
                )
                .at(span_of(file, &ct.name), "this command")
                .help("give it `units = [{ type = \"...\" }, ...]`, or leave the command out"),
            );
        }
        let mut entries = Vec::new();
        for u in &ct.units {
            if let Some(e) = read_unit(rs, file, u, facing_default, diags) {
                if e.at.is_some() {
                    first_placed.get_or_insert(e.span);
                } else if !e.reserve {
                    first_unplaced.get_or_insert(e.span);
                }
                entries.push(e);
            }
        }
        commands.push((ct.name.get_ref().clone(), entries, span_of(file, c)));
    }
    if let (Some(placed), Some(unplaced)) = (first_placed, first_unplaced) {
        diags.push(
            Diag::new(
                CODE,
                format!(
                    "army \"{}\" places some of its units but not all",
                    at.name.get_ref()
                ),
            )
            .at(unplaced, "no `at`")
            .note(placed, "but this unit is placed")
            .help(
                "give every unit of the army an `at`, or none of them to let the ruleset's \
                 deployment place the army",
            ),
        );
    }
    // The units, counted before they are made: a file of many entries of
    // `count = 1000` would otherwise make millions.
    for e in commands.iter().flat_map(|(_, entries, _)| entries) {
        let was = *units;
        *units += e.count;
        if was <= MAX_UNITS && *units > MAX_UNITS {
            diags.push(too_many_units(e));
        }
    }
    if diags.len() > before {
        return None;
    }
    let mut named = Vec::new();
    let commands = commands
        .into_iter()
        .map(|(cname, entries, span)| {
            // Unnamed units of each type, to number those whose type repeats.
            let mut of_type: HashMap<Id, usize> = HashMap::new();
            for e in entries.iter().filter(|e| e.name.is_none()) {
                *of_type.entry(e.ty).or_default() += e.count;
            }
            let mut numbered: HashMap<Id, usize> = HashMap::new();
            let mut units = Vec::new();
            for e in &entries {
                for _ in 0..e.count {
                    named.push(e.name.is_some());
                    let tname = &rs.unit_types[e.ty as usize].name;
                    let name = match &e.name {
                        Some(n) => n.clone(),
                        None if of_type.get(&e.ty).is_some_and(|n| *n > 1) => {
                            let n = numbered.entry(e.ty).or_default();
                            *n += 1;
                            format!("{cname} {tname} {n}")
                        }
                        None => format!("{cname} {tname}"),
                    };
                    units.push(UnitSpec {
                        name,
                        ty: e.ty,
                        quality: e.quality,
                        at: e.at,
                        facing: e.facing,
                        reserve: e.reserve,
                        span: e.span,
                    });
                }
            }
            CommandSpec {
                name: cname,
                units,
                span,
            }
        })
        .collect();
    let army = ArmySpec {
        name: at.name.get_ref().clone(),
        policy: at
            .policy
            .as_ref()
            .map(|p| (p.get_ref().clone(), span_of(file, p))),
        search,
        commands,
        span: span_of(file, a),
    };
    Some((army, named))
}

/// The diagnostic at the entry that makes the scenario's unit one more
/// than [`MAX_UNITS`].
fn too_many_units(e: &Entry) -> Diag {
    Diag::new(
        CODE,
        format!("the scenario has more than {MAX_UNITS} units"),
    )
    .at(e.span, format!("unit {} of the scenario", MAX_UNITS + 1))
    .help(format!(
        "a scenario has at most {MAX_UNITS} units, both armies together (a battle's work \
         grows with the square of its units): give fewer units, or smaller `count`s"
    ))
}

fn read_unit(
    rs: &Ruleset,
    file: FileId,
    u: &Spanned<UnitToml>,
    facing_default: f64,
    diags: &mut Vec<Diag>,
) -> Option<Entry> {
    let ut = u.get_ref();
    let before = diags.len();
    let ty = unit_type_named(rs, CODE, &ut.ty, file)
        .map_err(|d| diags.push(d))
        .ok();
    let quality = match &ut.quality {
        None => None,
        Some(q) => quality_named(rs, CODE, q, file)
            .map_err(|d| diags.push(d))
            .ok(),
    };
    let at = ut.at.as_ref().map(|p| point(file, p, "`at`", diags));
    let facing = match &ut.facing {
        None => facing_default,
        Some(f) => finite(file, f, "the facing", diags).rem_euclid(360.0),
    };
    let count = match &ut.count {
        None => 1,
        Some(c) => {
            let n = *c.get_ref();
            if !(1..=MAX_COUNT).contains(&n) {
                diags.push(
                    Diag::new(CODE, format!("a count of {n} units"))
                        .at(span_of(file, c), "not a number of units")
                        .help(format!(
                            "a count is from 1 to {MAX_COUNT}; leave the entry out to have none"
                        )),
                );
            } else if let Some(p) = &ut.at {
                diags.push(
                    Diag::new(CODE, "one `at` for several units")
                        .at(span_of(file, p), format!("the place of all {n}"))
                        .note(span_of(file, c), "several units")
                        .help("give each placed unit an entry of its own with its own `at`"),
                );
            } else if let Some(nm) = &ut.name {
                diags.push(
                    Diag::new(CODE, "one name for several units")
                        .at(span_of(file, nm), format!("the name of all {n}"))
                        .note(span_of(file, c), "several units")
                        .help(
                            "leave the name out (the units are then numbered), or give each \
                             unit an entry of its own",
                        ),
                );
            }
            n.clamp(1, MAX_COUNT) as usize
        }
    };
    let reserve = ut.reserve.as_ref().is_some_and(|r| *r.get_ref());
    if let (true, Some(p)) = (reserve, &ut.at) {
        diags.push(
            Diag::new(CODE, "a reserve unit with a place on the table")
                .at(span_of(file, p), "placed")
                .note(
                    span_of(file, ut.reserve.as_ref().unwrap()),
                    "but held in reserve",
                )
                .help(
                    "a reserve starts off the table and the ruleset's `place` decision puts it \
                     down when it arrives: leave out its `at`, or `reserve`",
                ),
        );
    }
    if diags.len() > before {
        return None;
    }
    Some(Entry {
        ty: ty?,
        quality,
        name: ut.name.as_ref().map(|n| n.get_ref().clone()),
        at,
        facing,
        count,
        reserve,
        span: span_of(file, u),
    })
}
