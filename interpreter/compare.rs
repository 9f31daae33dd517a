//! Two drafts side by side (`muster compare`): one scenario played N times
//! under ruleset A and N times under ruleset B, game `i` on the same seed
//! under both, and what moved between them. Each measure of a
//! [`Summary`] (each army's wins, draws, games left at the turn limit, game
//! length, each army's losses by unit type) gets its difference B - A over
//! the paired games, with a 95% interval; a measure whose interval leaves
//! out 0 has moved.
//!
//! The interval is the normal one for a mean of paired differences: game
//! `i` under A and game `i` under B share a seed, so they start from the
//! same dice and their outcomes are compared game by game (the paired
//! differences vary less than two independent runs would, while the games
//! still agree). With fewer than a hundred games, take it as rough.

use crate::battle::{GameSummary, Prepared, Result_};
use crate::diagnostic::Diag;
use crate::ir::Ruleset;
use crate::simulate::{summarise, Summary};
use serde::Serialize;

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

/// The mean of the paired differences `y[i] - x[i]` and its 95% interval
/// (the mean plus or minus 1.96 standard errors, the standard error from
/// the differences' sample variance): (mean, low, high). Fewer than two
/// pairs give no spread: the interval is the mean itself.
pub fn paired(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let n = x.len().min(y.len());
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let d: Vec<f64> = x.iter().zip(y).map(|(a, b)| b - a).collect();
    let mean = d.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, mean, mean);
    }
    let var = d.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    let half = Z95 * (var / n as f64).sqrt();
    (mean, mean - half, mean + half)
}

/// A measure's value in one game played under one of the two rulesets.
type PerGame<'a> = Box<dyn Fn(&GameSummary, Which) -> f64 + 'a>;

/// One measure, as a value per game.
struct Measure<'a> {
    name: String,
    kind: Kind,
    of: PerGame<'a>,
}

/// Which of the two rulesets a game was played under.
#[derive(Clone, Copy)]
enum Which {
    A,
    B,
}

/// Compare the games `ga` of scenario `pa` (ruleset A) with the games `gb`
/// of the same scenario prepared for ruleset B (`pb`), both runs seeded
/// `seed` ([`crate::simulate::play`]): game `i` of each at index `i`. An
/// error when the two do not play the same armies or the same number of
/// games.
pub fn compare(
    pa: &Prepared,
    ga: &[GameSummary],
    pb: &Prepared,
    gb: &[GameSummary],
    seed: u64,
) -> Result<Comparison, Diag> {
    if pa.army_names != pb.army_names {
        return Err(Diag::new(
            "muster::compare",
            format!(
                "the two rulesets play different armies ({} against {})",
                pa.army_names.join(" and "),
                pb.army_names.join(" and ")
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
    let (a, b) = (summarise(pa, ga, seed), summarise(pb, gb, seed));
    let mut measures: Vec<Measure> = Vec::new();
    for (i, army) in pa.army_names.iter().enumerate() {
        measures.push(Measure {
            name: format!("{army} wins"),
            kind: Kind::Share,
            of: Box::new(move |g, _| f64::from(u8::from(g.result == Result_::Won(i)))),
        });
    }
    measures.push(Measure {
        name: "draws".into(),
        kind: Kind::Share,
        of: Box::new(|g, _| f64::from(u8::from(g.result == Result_::Draw))),
    });
    measures.push(Measure {
        name: "undecided at the turn limit".into(),
        kind: Kind::Share,
        of: Box::new(|g, _| f64::from(u8::from(g.result == Result_::TurnLimit))),
    });
    measures.push(Measure {
        name: "game length".into(),
        kind: Kind::Turns,
        of: Box::new(|g, _| f64::from(g.turns)),
    });
    // Losses by unit type, matched by the type's name: those either
    // summary lists (the types an army fields), A's first.
    for (army, name) in pa.army_names.iter().enumerate() {
        let mut types: Vec<&str> = Vec::new();
        for l in a.losses[army].iter().chain(&b.losses[army]) {
            if !types.contains(&l.unit_type.as_str()) {
                types.push(&l.unit_type);
            }
        }
        for ty in types {
            let index = |p: &Prepared| p.rs.unit_types.iter().position(|t| t.name == ty);
            let (ta, tb) = (index(pa), index(pb));
            measures.push(Measure {
                name: format!("{name} loses {ty}"),
                kind: Kind::Units,
                of: Box::new(move |g, which| {
                    let t = match which {
                        Which::A => ta,
                        Which::B => tb,
                    };
                    t.and_then(|t| g.lost.get(army)?.get(t))
                        .map_or(0.0, |l| f64::from(*l))
                }),
            });
        }
    }
    let shifts = measures
        .iter()
        .map(|m| {
            let x: Vec<f64> = ga.iter().map(|g| (m.of)(g, Which::A)).collect();
            let y: Vec<f64> = gb.iter().map(|g| (m.of)(g, Which::B)).collect();
            let (diff, low, high) = paired(&x, &y);
            let mean = |v: &[f64]| {
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            };
            Shift {
                measure: m.name.clone(),
                kind: m.kind,
                a: mean(&x),
                b: mean(&y),
                diff,
                low,
                high,
                moved: low > 0.0 || high < 0.0,
            }
        })
        .collect();
    Ok(Comparison {
        rulesets: [pa.rs.title.clone(), pb.rs.title.clone()],
        games: ga.len() as u64,
        seed,
        a,
        b,
        shifts,
    })
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
    use super::paired;

    /// The paired interval against one worked by hand: differences 0, 1,
    /// 0, 1 have mean 1/2 and sample variance 1/3, so the interval is
    /// 1/2 -+ 1.96 * sqrt(1/12) = -0.0658 to 1.0658.
    #[test]
    fn paired_interval_by_hand() {
        let (m, lo, hi) = paired(&[1.0, 0.0, 1.0, 0.0], &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(m, 0.5);
        assert!((lo + 0.065_79).abs() < 1e-5, "{lo}");
        assert!((hi - 1.065_79).abs() < 1e-5, "{hi}");
        // No spread: the interval is the mean.
        assert_eq!(paired(&[2.0, 3.0], &[4.0, 5.0]), (2.0, 2.0, 2.0));
        assert_eq!(paired(&[2.0], &[7.0]), (5.0, 5.0, 5.0));
        assert_eq!(paired(&[], &[]), (0.0, 0.0, 0.0));
    }
}
