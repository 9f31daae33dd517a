//! Two drafts side by side (`muster compare`): one scenario played N times
//! under ruleset A and N times under ruleset B, game `i` on the same seed
//! under both, and what moved between them. Each measure of a
//! [`Summary`] (each army's wins, draws, games left at the turn limit, game
//! length, each army's losses by unit type) gets its difference B - A over
//! the paired games, with a 95% interval; a measure whose interval leaves
//! out 0 has moved.
//!
//! The interval is Student's t interval for a mean of paired differences:
//! game `i` under A and game `i` under B share a seed, so they start from
//! the same dice and their outcomes are compared game by game (the paired
//! differences vary less than two independent runs would, while the games
//! still agree). With few games t is wider than the normal point (4.30 at
//! 3 games against 1.96), and `compare` asks for at least [`MIN_GAMES`];
//! with many the two agree.

use crate::battle::game::{GameSummary, Prepared, Result_};
use crate::cli::simulate::{Frame, Summary, Tally};
use crate::compile::ir::Ruleset;
use crate::front::diagnostic::Diag;
use serde::{Deserialize, Serialize};

/// How a measure is counted and shown.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A share of the games (a win, a draw): shown in percent, its
    /// difference in percentage points.
    Share,
    /// Turns a game lasts, on average.
    Turns,
    /// Units of a type an army loses (off the table) per game, on average.
    Units,
}

/// How one measure moved from A to B.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Shift {
    /// What is measured: "Blue wins", "game length", "Blue loses Horse".
    pub measure: String,
    pub kind: Kind,
    /// Its mean per game under A and under B.
    pub a: f64,
    pub b: f64,
    /// B - A, with its 95% interval over the paired games.
    pub diff: f64,
    pub low: f64,
    pub high: f64,
    /// The interval leaves out 0.
    pub moved: bool,
}

/// A comparison of two rulesets on one scenario.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Comparison {
    /// The rulesets' titles, A then B.
    pub rulesets: [String; 2],
    pub games: u64,
    pub seed: u64,
    /// Each ruleset's own summary, as `muster simulate` gives it.
    pub a: Summary,
    pub b: Summary,
    pub shifts: Vec<Shift>,
}

/// Why rulesets A and B cannot be compared, if they cannot: B knows fewer
/// than half of A's unit types, so a scenario of A's game cannot field its
/// armies under B (two different games, not two drafts of one). One
/// diagnostic, instead of one for every unit of the scenario that B does
/// not know.
pub fn unrelated(a: &Ruleset, b: &Ruleset) -> Option<Diag> {
    let names =
        |r: &Ruleset| -> Vec<String> { r.unit_types.iter().map(|u| u.name.clone()).collect() };
    let (na, nb) = (names(a), names(b));
    let shared: Vec<String> = na.iter().filter(|n| nb.contains(n)).cloned().collect();
    if na.is_empty() || 2 * shared.len() >= na.len() {
        return None;
    }
    let few = |v: &[String]| {
        let shown: Vec<&str> = v.iter().take(5).map(String::as_str).collect();
        let more = v.len().saturating_sub(5);
        match (shown.is_empty(), more) {
            (true, _) => "none".to_string(),
            (false, 0) => shown.join(", "),
            (false, m) => format!("{} and {m} more", shown.join(", ")),
        }
    };
    Some(
        Diag::new(
            "muster::compare",
            format!(
                "{} and {} look like two different games, not two drafts of one: they share {} of A's {} unit types ({}); B has {}",
                a.title,
                b.title,
                shared.len(),
                na.len(),
                few(&shared),
                few(&nb)
            ),
        )
        .help("compare plays one scenario under both rulesets: compare a ruleset with a draft or house rule of it (one that `extends` it, or an edited copy), or use `muster diff` to list how two rulesets differ"),
    )
}

/// The two-sided 95% point of the normal distribution.
const Z95: f64 = 1.959_963_984_540_054;

/// The two-sided 95% points of Student's t for 1 to 30 degrees of freedom
/// (checked in the tests: 1 and 2 have closed forms).
const T95: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// The fewest paired games `compare` accepts: below it the t interval is
/// so wide (and a run of equal differences so likely) that "moved" says
/// little.
pub const MIN_GAMES: u64 = 10;

/// The two-sided 95% point of Student's t with `df` degrees of freedom:
/// the table up to 30, then the Cornish-Fisher expansion about the normal
/// point (within 2e-6 of the exact quantile at 30 and closer beyond). The
/// interval of a mean of a few paired differences is wider than the
/// normal one; with many it is the same.
pub fn t95(df: u64) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(t) = T95.get(df as usize - 1) {
        return *t;
    }
    let (z, n) = (Z95, df as f64);
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    z + g1 / n + g2 / (n * n) + g3 / (n * n * n)
}

/// The exact sums one measure needs over a set of paired games: its total
/// under A and under B and the total of the squared differences. Whole
/// numbers, so the sums of the shards of a run add up to the sums of the
/// whole run in any order, and the interval made from them is the same to
/// the last digit.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Sums {
    pub a: i64,
    pub b: i64,
    /// The sum over the games of (B - A) squared.
    pub d2: u64,
}

impl Sums {
    /// The sums of the paired values `x[i]` (under A) and `y[i]` (under B).
    pub fn of(x: &[i64], y: &[i64]) -> Sums {
        let mut s = Sums::default();
        for (a, b) in x.iter().zip(y) {
            s.pair(*a, *b);
        }
        s
    }

    /// Count one game's pair of values.
    fn pair(&mut self, a: i64, b: i64) {
        self.a += a;
        self.b += b;
        self.d2 += (b - a).unsigned_abs().pow(2);
    }

    fn add(&mut self, o: &Sums) {
        self.a += o.a;
        self.b += o.b;
        self.d2 += o.d2;
    }

    /// Over `n` games: the mean of the differences B - A and its 95%
    /// interval (the mean plus or minus t95(n - 1) standard errors, the standard
    /// error from the differences' sample variance, worked out exactly as
    /// (n Σd² - (Σd)²) / (n (n - 1)) before the one division): (mean, low,
    /// high). Fewer than two pairs give no spread: the interval is the mean.
    pub fn interval(&self, n: u64) -> (f64, f64, f64) {
        if n == 0 {
            return (0.0, 0.0, 0.0);
        }
        let d = self.b - self.a;
        let mean = d as f64 / n as f64;
        if n < 2 {
            return (mean, mean, mean);
        }
        let spread = n as i128 * self.d2 as i128 - (d as i128) * (d as i128);
        let var = spread as f64 / (n as f64 * (n - 1) as f64);
        let half = t95(n - 1) * (var / n as f64).sqrt();
        (mean, mean - half, mean + half)
    }
}

/// A measure's value in one game played under one of the two rulesets.
type PerGame = Box<dyn Fn(&GameSummary, Which) -> i64>;

/// One measure, as a whole number per game.
struct Measure {
    name: String,
    kind: Kind,
    of: PerGame,
}

/// Which of the two rulesets a game was played under.
#[derive(Clone, Copy)]
enum Which {
    A,
    B,
}

/// The measures of a comparison, from what the two runs field (their
/// [`Frame`]s; the armies are A's): each army's wins, draws, games left at
/// the turn limit, game length, and each army's losses of each unit type
/// either ruleset fields for it, matched by the type's name, A's first.
fn measures(fa: &Frame, fb: &Frame) -> Vec<Measure> {
    let mut measures: Vec<Measure> = Vec::new();
    let yes = |b: bool| i64::from(u8::from(b));
    for (i, army) in fa.armies.iter().enumerate() {
        measures.push(Measure {
            name: format!("{army} wins"),
            kind: Kind::Share,
            of: Box::new(move |g, _| yes(g.result == Result_::Won(i))),
        });
    }
    measures.push(Measure {
        name: "draws".into(),
        kind: Kind::Share,
        of: Box::new(move |g, _| yes(g.result == Result_::Draw)),
    });
    measures.push(Measure {
        name: "undecided at the turn limit".into(),
        kind: Kind::Share,
        of: Box::new(move |g, _| yes(g.result == Result_::TurnLimit)),
    });
    measures.push(Measure {
        name: "game length".into(),
        kind: Kind::Turns,
        of: Box::new(|g, _| i64::from(g.turns)),
    });
    for (army, name) in fa.armies.iter().enumerate() {
        let fielded = |f: &Frame| -> Vec<String> {
            (0..f.unit_types.len())
                .filter(|t| {
                    f.fielded
                        .get(army)
                        .and_then(|a| a.get(*t))
                        .is_some_and(|n| *n > 0)
                })
                .map(|t| f.unit_types[t].clone())
                .collect()
        };
        let mut types: Vec<String> = Vec::new();
        for ty in fielded(fa).into_iter().chain(fielded(fb)) {
            if !types.contains(&ty) {
                types.push(ty);
            }
        }
        for ty in types {
            let index = |f: &Frame| f.unit_types.iter().position(|t| *t == ty);
            let (ta, tb) = (index(fa), index(fb));
            measures.push(Measure {
                name: format!("{name} loses {ty}"),
                kind: Kind::Units,
                of: Box::new(move |g, which| {
                    let t = match which {
                        Which::A => ta,
                        Which::B => tb,
                    };
                    t.and_then(|t| g.lost.get(army)?.get(t))
                        .map_or(0, |l| i64::from(*l))
                }),
            });
        }
    }
    measures
}

/// The exact counts of a set of paired games (a whole run, or a shard of
/// one): each side's [`Tally`] and each measure's [`Sums`], in the order of
/// the comparison's measures. Whole numbers only: the counts of the shards
/// of a run add up to those of the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Paired {
    pub games: u64,
    pub a: Tally,
    pub b: Tally,
    pub sums: Vec<Sums>,
}

impl Paired {
    /// The counts of games `ga` (under A, fielding `fa`) and `gb` (under B,
    /// fielding `fb`), game `first + i` of the run at index `i` of each. An
    /// error when the two do not play the same armies or the same number of
    /// games.
    pub fn of(
        fa: &Frame,
        ga: &[GameSummary],
        fb: &Frame,
        gb: &[GameSummary],
        first: u64,
    ) -> Result<Paired, Diag> {
        if fa.armies != fb.armies {
            return Err(Diag::new(
                "muster::compare",
                format!(
                    "the two rulesets play different armies ({} against {})",
                    fa.armies.join(" and "),
                    fb.armies.join(" and ")
                ),
            )
            .help("compare two rulesets on one scenario file (`--scenario FILE`)"));
        }
        if ga.len() != gb.len() {
            return Err(Diag::new(
                "muster::compare",
                format!("{} games under A but {} under B", ga.len(), gb.len()),
            )
            .help("play the same number of games, on the same seed, under both"));
        }
        let sums = measures(fa, fb)
            .iter()
            .map(|m| {
                let mut s = Sums::default();
                for (x, y) in ga.iter().zip(gb) {
                    s.pair((m.of)(x, Which::A), (m.of)(y, Which::B));
                }
                s
            })
            .collect();
        Ok(Paired {
            games: ga.len() as u64,
            a: Tally::of(ga, first, fa.unit_types.len()),
            b: Tally::of(gb, first, fb.unit_types.len()),
            sums,
        })
    }

    /// Add the games of `other` (of the same two rulesets and scenario).
    pub fn add(&mut self, other: &Paired) {
        self.games += other.games;
        self.a.add(&other.a);
        self.b.add(&other.b);
        if self.sums.is_empty() {
            self.sums = other.sums.clone();
        } else {
            for (s, o) in self.sums.iter_mut().zip(&other.sums) {
                s.add(o);
            }
        }
    }

    /// The counts are whole: as many games under each side as paired, each
    /// side's counts adding up to them, one set of sums per measure, and
    /// the sums of the results and of game length those of the tallies
    /// (what a shard file read back must hold).
    pub fn consistent(&self, fa: &Frame, fb: &Frame) -> bool {
        let shape = self.a.games == self.games
            && self.b.games == self.games
            && self.a.consistent(fa)
            && self.b.consistent(fb)
            && self.sums.len() == measures(fa, fb).len();
        // The measures begin with each army's wins, the draws, the games at
        // the turn limit and game length (see `measures`).
        let head = |t: &Tally| -> Option<[i64; 5]> {
            let turns = t.length.iter().try_fold(0u64, |s, (l, c)| {
                s.checked_add(u64::from(*l).checked_mul(*c)?)
            })?;
            let whole = |x: u64| i64::try_from(x).ok();
            Some([
                whole(t.wins[0])?,
                whole(t.wins[1])?,
                whole(t.draws)?,
                whole(t.turn_limit)?,
                whole(turns)?,
            ])
        };
        shape
            && match (head(&self.a), head(&self.b)) {
                (Some(a), Some(b)) => {
                    (0..5).all(|i| self.sums[i].a == a[i] && self.sums[i].b == b[i])
                }
                _ => false,
            }
    }

    /// The comparison these games make: `titles` the rulesets' (A, B),
    /// `seed` the run's.
    pub fn comparison(&self, fa: &Frame, fb: &Frame, titles: [String; 2], seed: u64) -> Comparison {
        let n = self.games;
        let shifts = measures(fa, fb)
            .iter()
            .zip(&self.sums)
            .map(|(m, s)| {
                let (diff, low, high) = s.interval(n);
                let mean = |t: i64| if n == 0 { 0.0 } else { t as f64 / n as f64 };
                Shift {
                    measure: m.name.clone(),
                    kind: m.kind,
                    a: mean(s.a),
                    b: mean(s.b),
                    diff,
                    low,
                    high,
                    moved: low > 0.0 || high < 0.0,
                }
            })
            .collect();
        Comparison {
            rulesets: titles,
            games: n,
            seed,
            a: self.a.summary(fa, seed),
            b: self.b.summary(fb, seed),
            shifts,
        }
    }
}

/// Compare the games `ga` of scenario `pa` (ruleset A) with the games `gb`
/// of the same scenario prepared for ruleset B (`pb`), both runs seeded
/// `seed` ([`crate::cli::simulate::play`]): game `i` of each at index `i`. An
/// error when the two do not play the same armies or the same number of
/// games.
pub fn compare(
    pa: &Prepared,
    ga: &[GameSummary],
    pb: &Prepared,
    gb: &[GameSummary],
    seed: u64,
) -> Result<Comparison, Diag> {
    let (fa, fb) = (Frame::of(pa), Frame::of(pb));
    let paired = Paired::of(&fa, ga, &fb, gb, 0)?;
    Ok(paired.comparison(&fa, &fb, [pa.rs.title.clone(), pb.rs.title.clone()], seed))
}

/// What `compare` prints, as text and as JSON, besides the comparison:
/// the rulesets' files, the scenario's file and description, and what
/// differs in the rules (`diff`'s text and JSON).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Heading {
    /// Rulesets A and B as given on the command line.
    pub a: String,
    pub b: String,
    /// The scenario file both play, and its description.
    pub scenario_file: String,
    pub scenario: String,
    /// The difference of the rules: as text, and as `diff --json` gives it.
    pub rules_text: String,
    pub rules_json: serde_json::Value,
}

impl Heading {
    /// `compare`'s text: what differs in the rules, then what it does to
    /// the games.
    pub fn text(&self, cmp: &Comparison) -> String {
        format!(
            "{}\n{} — {}\n{cmp}",
            self.rules_text, self.scenario_file, self.scenario
        )
    }

    /// `compare --json`'s document (docs/json.md): each side's summary
    /// named as `simulate --json` names it (wins and losses by army).
    pub fn json(&self, cmp: &Comparison) -> serde_json::Value {
        let mut c = serde_json::to_value(cmp).unwrap_or_default();
        c["a"] = cmp.a.fields(&cmp.rulesets[0], &self.scenario_file);
        c["b"] = cmp.b.fields(&cmp.rulesets[1], &self.scenario_file);
        crate::cli::output::json_document(
            "compare",
            serde_json::json!({
                "a": self.a,
                "b": self.b,
                "scenario": self.scenario_file,
                "diff": self.rules_json,
                "comparison": c,
            }),
        )
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "A: {}", self.rulesets[0])?;
        writeln!(f, "B: {}", self.rulesets[1])?;
        writeln!(
            f,
            "{} games under each, seed {}: game i is played on the same seed under both",
            self.games, self.seed
        )?;
        let width = self
            .shifts
            .iter()
            .map(|s| s.measure.chars().count())
            .max()
            .unwrap_or(0)
            .max(7);
        writeln!(
            f,
            "  {:width$}  {:>8}  {:>8}  {:>9}  95% interval of B - A",
            "measure", "A", "B", "B - A"
        )?;
        let mut last = None;
        for s in &self.shifts {
            if last != Some(s.kind) {
                match s.kind {
                    Kind::Share => writeln!(f, "results (share of games; B - A in points):")?,
                    Kind::Turns => writeln!(f, "game length (turns, mean):")?,
                    Kind::Units => writeln!(f, "losses (units off the table per game):")?,
                }
                last = Some(s.kind);
            }
            let (a, b, d, lo, hi) = match s.kind {
                Kind::Share => (
                    format!("{:.1}%", 100.0 * s.a),
                    format!("{:.1}%", 100.0 * s.b),
                    format!("{:+.1}", 100.0 * s.diff),
                    format!("{:+.1}", 100.0 * s.low),
                    format!("{:+.1}", 100.0 * s.high),
                ),
                Kind::Turns | Kind::Units => (
                    format!("{:.2}", s.a),
                    format!("{:.2}", s.b),
                    format!("{:+.2}", s.diff),
                    format!("{:+.2}", s.low),
                    format!("{:+.2}", s.high),
                ),
            };
            writeln!(
                f,
                "  {:width$}  {a:>8}  {b:>8}  {d:>9}  {lo} to {hi}{}",
                s.measure,
                if s.moved { "  moved" } else { "" }
            )?;
        }
        let moved = self.shifts.iter().filter(|s| s.moved).count();
        writeln!(
            f,
            "{moved} of {} measures moved (their 95% interval leaves out 0); \
             by chance alone, about one measure in twenty would.",
            self.shifts.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{t95, Sums, Z95};

    /// The paired interval from exact sums, for `x` under A and `y` under B.
    fn paired(x: &[i64], y: &[i64]) -> (f64, f64, f64) {
        Sums::of(x, y).interval(x.len() as u64)
    }

    /// The paired interval against one worked by hand: differences 0, 1,
    /// 0, 1 have mean 1/2 and sample variance 1/3, so on 3 degrees of
    /// freedom the interval is 1/2 -+ 3.182446 * sqrt(1/12) = -0.41869 to
    /// 1.41869.
    #[test]
    fn paired_interval_by_hand() {
        let (m, lo, hi) = paired(&[1, 0, 1, 0], &[1, 1, 1, 1]);
        assert_eq!(m, 0.5);
        assert!((lo + 0.418_69).abs() < 1e-5, "{lo}");
        assert!((hi - 1.418_69).abs() < 1e-5, "{hi}");
        // No spread: the interval is the mean.
        assert_eq!(paired(&[2, 3], &[4, 5]), (2.0, 2.0, 2.0));
        assert_eq!(paired(&[2], &[7]), (5.0, 5.0, 5.0));
        assert_eq!(paired(&[], &[]), (0.0, 0.0, 0.0));
        // Negative differences: -3 and -1 have mean -2 and variance 2,
        // so a standard error of 1 on 1 degree of freedom.
        let (m, lo, hi) = paired(&[5, 2], &[2, 1]);
        assert_eq!(m, -2.0);
        assert!((hi - lo - 2.0 * 12.706_205).abs() < 1e-12, "{lo} {hi}");
    }

    /// Student's t against its closed forms (1 degree of freedom: the
    /// Cauchy quantile tan(0.475 pi); 2: (2p - 1) / sqrt(2 p (1 - p)) at p
    /// = 0.975), the expansion continuing the table at 30 and meeting the
    /// normal point far out.
    #[test]
    fn t_points() {
        let cauchy = (0.475 * std::f64::consts::PI).tan();
        assert!((t95(1) - cauchy).abs() < 1e-6, "{cauchy}");
        let p: f64 = 0.975;
        let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        assert!((t95(2) - two).abs() < 1e-6, "{two}");
        // 2.039513 is the exact point at 31 (incomplete beta, by bisection).
        assert!((t95(31) - 2.039_513).abs() < 3e-6, "{}", t95(31));
        assert!(t95(31) < t95(30));
        assert!((t95(100_000) - Z95).abs() < 1e-4);
        assert!(t95(0).is_infinite());
        for df in 1..200 {
            assert!(t95(df + 1) < t95(df), "t falls with df: {df}");
        }
    }

    /// Sums split anywhere add up to the sums of the whole.
    #[test]
    fn sums_add_up() {
        let (x, y) = ([3, 0, 7, 2, 2], [1, 4, 7, 0, 9]);
        let mut s = Sums::of(&x[..2], &y[..2]);
        s.add(&Sums::of(&x[2..], &y[2..]));
        assert_eq!(s, Sums::of(&x, &y));
        assert_eq!(
            s,
            Sums {
                a: 14,
                b: 21,
                d2: 4 + 16 + 4 + 49
            }
        );
    }
}
