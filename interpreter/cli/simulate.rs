//! Many games: one scenario played N times over all cores, summarised as a
//! reader wants it (who wins, with 95% confidence intervals; how long games
//! last; what each army loses, by unit type). Game `i` of seed `s` always
//! gets the same generator stream, so the summary for a seed and N is the
//! same on any number of threads; and a run split into shards (machines,
//! jobs of a cluster) adds up to exactly the summary of the whole run
//! ([`Tally`], [`shard::merge`]).

use crate::base::rng::splitmix64;
use crate::battle::game::{GameSummary, Prepared, Result_};
use crate::front::diagnostic::Diag;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;

pub mod shard;

/// The seed of game `i` of a run seeded `seed`.
pub fn game_seed(seed: u64, i: u64) -> u64 {
    splitmix64(seed ^ splitmix64(i.wrapping_add(0x5EED)))
}

/// A proportion with its 95% Wilson score interval.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Rate {
    pub count: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    pub fn of(count: u64, n: u64) -> Rate {
        if n == 0 {
            return Rate {
                count,
                rate: 0.0,
                low: 0.0,
                high: 0.0,
            };
        }
        let p = count as f64 / n as f64;
        let (low, high) = wilson(p, n);
        Rate {
            count,
            rate: p,
            low,
            high,
        }
    }
}

/// Wilson's 95% score interval for a proportion `p` seen in `n` trials:
/// unlike the normal one it stays within 0 and 1 and is not empty at 0.
pub fn wilson(p: f64, n: u64) -> (f64, f64) {
    let n = n as f64;
    let z = 1.959_963_984_540_054_f64;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * ((p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()) / (1.0 + z2 / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Losses of one unit type in one army, over all games.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TypeLosses {
    pub unit_type: String,
    /// How many units of the type the army fields.
    pub fielded: u32,
    /// Units of the type that left the table, per game on average.
    pub mean_lost: f64,
    /// The share of fielded units lost.
    pub lost_share: f64,
}

/// The summary of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub games: u64,
    pub seed: u64,
    pub armies: Vec<String>,
    /// Per army: games won.
    pub wins: Vec<Rate>,
    pub draws: Rate,
    /// Games still undecided at the scenario's turn limit.
    pub turn_limit: Rate,
    /// The first of them by index ([`UNDECIDED_NAMED`] at most), each as
    /// (game, its seed), so a reader can replay one with `muster battle
    /// --seed`.
    pub undecided: Vec<(u64, u64)>,
    /// Games by length: (turns, games).
    pub length: Vec<(u32, u64)>,
    pub mean_turns: f64,
    pub median_turns: u32,
    /// Per army, per unit type fielded.
    pub losses: Vec<Vec<TypeLosses>>,
}

/// Play `n` games of a prepared scenario; `progress` is told after each game.
pub fn run(p: &Prepared, n: u64, seed: u64, progress: &(dyn Fn() + Sync)) -> Result<Summary, Diag> {
    let games = play(p, n, seed, progress)?;
    Ok(summarise(p, &games, seed))
}

/// The `n` games of a run seeded `seed`, each as it ended, game `i` at
/// index `i`; `progress` is told after each game.
pub fn play(
    p: &Prepared,
    n: u64,
    seed: u64,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<GameSummary>, Diag> {
    play_range(p, 0..n, seed, progress)
}

/// Games `range` of a run seeded `seed` (a shard of it), in order: each
/// game plays exactly as it does in the whole run. Should the rules stop
/// some games, every game is still played and the error is the first
/// stopped game's by its place in the run (whatever the thread count),
/// saying how many stopped and how to replay it.
pub fn play_range(
    p: &Prepared,
    range: Range<u64>,
    seed: u64,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<GameSummary>, Diag> {
    let total = range.end - range.start;
    let games: Vec<Result<GameSummary, Diag>> = range
        .into_par_iter()
        .map(|i| {
            let g = p.play(game_seed(seed, i), false).map_err(|mut d| {
                d.message = format!(
                    "{} (in game {i} of the run: replay it with `muster battle --seed {}`)",
                    d.message,
                    game_seed(seed, i)
                );
                d
            });
            progress();
            g.map(|g| g.summary())
        })
        .collect();
    let stopped = games.iter().filter(|g| g.is_err()).count();
    let mut first = match games.into_iter().collect::<Result<Vec<_>, Diag>>() {
        Ok(all) => return Ok(all),
        // The first error by place in the run (collect keeps the order).
        Err(d) => d,
    };
    if stopped > 1 {
        first.message = format!(
            "{} [{stopped} of the {total} games stopped; this is the first]",
            first.message
        );
    }
    Err(first)
}

/// The summary of the games of a run seeded `seed` ([`play`]).
pub fn summarise(p: &Prepared, games: &[GameSummary], seed: u64) -> Summary {
    let frame = Frame::of(p);
    Tally::of(games, 0, frame.unit_types.len()).summary(&frame, seed)
}

/// What a summary names besides the counts: the armies, the ruleset's unit
/// types, and how many units of each type each army fields.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Frame {
    pub armies: Vec<String>,
    /// Every unit type of the ruleset, in its order.
    pub unit_types: Vec<String>,
    /// Per army, per unit type: units fielded.
    pub fielded: Vec<Vec<u32>>,
}

impl Frame {
    /// The frame of a prepared scenario.
    pub fn of(p: &Prepared) -> Frame {
        let types = p.rs.unit_types.len();
        let mut fielded = vec![vec![0u32; types]; 2];
        for (u, a) in p.army_of.iter().enumerate() {
            fielded[*a][p.world.units[u].ty as usize] += 1;
        }
        Frame {
            armies: p.army_names.clone(),
            unit_types: p.rs.unit_types.iter().map(|t| t.name.clone()).collect(),
            fielded,
        }
    }
}

/// The exact counts of a set of games: whole numbers only, so that the
/// tallies of the shards of a run add up to the tally of the whole run and
/// give the same summary to the last digit.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Tally {
    pub games: u64,
    /// Per army: games won.
    pub wins: [u64; 2],
    pub draws: u64,
    pub turn_limit: u64,
    /// The indices of the first games (by index, [`UNDECIDED_NAMED`] at
    /// most) that reached the turn limit: the same for a run and for its
    /// shards added up, whatever the order.
    #[serde(default)]
    pub undecided: Vec<u64>,
    /// Games by length: (turns, games), shortest first.
    pub length: Vec<(u32, u64)>,
    /// Per army, per unit type: units that left the table, over all games.
    pub lost: Vec<Vec<u64>>,
}

/// How many games that reached the turn limit a summary names.
pub const UNDECIDED_NAMED: usize = 10;

impl Tally {
    /// The tally of `games`, in a ruleset of `types` unit types; `games[0]`
    /// is game `first` of the run.
    pub fn of(games: &[GameSummary], first: u64, types: usize) -> Tally {
        let mut t = Tally {
            lost: vec![vec![0u64; types]; 2],
            ..Tally::default()
        };
        let mut lengths: Vec<u32> = Vec::with_capacity(games.len());
        for (i, g) in (first..).zip(games) {
            t.games += 1;
            match g.result {
                Result_::Won(a) => t.wins[a] += 1,
                Result_::Draw => t.draws += 1,
                Result_::TurnLimit => {
                    t.turn_limit += 1;
                    if t.undecided.len() < UNDECIDED_NAMED {
                        t.undecided.push(i);
                    }
                }
            }
            lengths.push(g.turns);
            for (mine, theirs) in t.lost.iter_mut().zip(&g.lost) {
                for (m, l) in mine.iter_mut().zip(theirs) {
                    *m += *l as u64;
                }
            }
        }
        lengths.sort_unstable();
        for l in &lengths {
            match t.length.last_mut() {
                Some((turns, c)) if turns == l => *c += 1,
                _ => t.length.push((*l, 1)),
            }
        }
        t
    }

    /// Add the games of `other` (of the same ruleset and scenario).
    pub fn add(&mut self, other: &Tally) {
        self.games += other.games;
        for (w, o) in self.wins.iter_mut().zip(&other.wins) {
            *w += o;
        }
        self.draws += other.draws;
        self.turn_limit += other.turn_limit;
        self.undecided.extend(&other.undecided);
        self.undecided.sort_unstable();
        self.undecided.dedup();
        self.undecided.truncate(UNDECIDED_NAMED);
        let mut length = std::collections::BTreeMap::new();
        for (turns, c) in self.length.iter().chain(&other.length) {
            *length.entry(*turns).or_insert(0u64) += c;
        }
        self.length = length.into_iter().collect();
        if self.lost.is_empty() {
            self.lost = other.lost.clone();
        } else {
            for (mine, theirs) in self.lost.iter_mut().zip(&other.lost) {
                for (m, l) in mine.iter_mut().zip(theirs) {
                    *m += l;
                }
            }
        }
    }

    /// The counts fit together and fit `frame`: every game has one outcome
    /// and one length, and losses are counted for two armies and each of
    /// the frame's unit types (what a shard file read back must hold).
    pub fn consistent(&self, frame: &Frame) -> bool {
        // Counts read from a file may be anything: summed without overflow.
        let outcomes = [self.wins[0], self.wins[1], self.draws, self.turn_limit]
            .iter()
            .try_fold(0u64, |s, c| s.checked_add(*c));
        let lengths = self
            .length
            .iter()
            .try_fold(0u64, |s, (_, c)| s.checked_add(*c));
        let types = frame.unit_types.len();
        let shape = frame.armies.len() == 2
            && frame.fielded.len() == 2
            && self.lost.len() == 2
            && frame.fielded.iter().all(|f| f.len() == types)
            && self.lost.iter().all(|l| l.len() == types);
        let named = self.undecided.len() as u64 <= self.turn_limit.min(UNDECIDED_NAMED as u64)
            && self.undecided.windows(2).all(|w| w[0] < w[1]);
        outcomes == Some(self.games) && lengths == Some(self.games) && shape && named
    }

    /// The summary these games make, seeded `seed`.
    pub fn summary(&self, frame: &Frame, seed: u64) -> Summary {
        let n = self.games;
        let losses = (0..2)
            .map(|a| {
                (0..frame.unit_types.len())
                    .filter(|t| frame.fielded[a][*t] > 0)
                    .map(|t| {
                        let mean = if n == 0 {
                            0.0
                        } else {
                            self.lost[a][t] as f64 / n as f64
                        };
                        TypeLosses {
                            unit_type: frame.unit_types[t].clone(),
                            fielded: frame.fielded[a][t],
                            mean_lost: mean,
                            lost_share: mean / frame.fielded[a][t] as f64,
                        }
                    })
                    .collect()
            })
            .collect();
        // Whole turns summed exactly (below 2^53), whatever their order.
        let turns: u64 = self.length.iter().map(|(t, c)| *t as u64 * c).sum();
        Summary {
            games: n,
            seed,
            armies: frame.armies.clone(),
            wins: self.wins.iter().map(|w| Rate::of(*w, n)).collect(),
            draws: Rate::of(self.draws, n),
            turn_limit: Rate::of(self.turn_limit, n),
            undecided: self
                .undecided
                .iter()
                .map(|i| (*i, game_seed(seed, *i)))
                .collect(),
            length: self.length.clone(),
            mean_turns: if n == 0 { 0.0 } else { turns as f64 / n as f64 },
            median_turns: self.median_turns(),
            losses,
        }
    }

    /// The length of game `games / 2` in order of length (the upper median).
    fn median_turns(&self) -> u32 {
        let mut seen = 0;
        for (t, c) in &self.length {
            seen += c;
            if seen > self.games / 2 {
                return *t;
            }
        }
        0
    }
}

impl Summary {
    /// The summary as `simulate --json` and `merge --json` print it (see
    /// docs/json.md): the ruleset and scenario named, each army's wins and
    /// losses under its name, the lengths as (turns, games) pairs named.
    pub fn json(&self, ruleset: &str, scenario: &str) -> serde_json::Value {
        crate::cli::output::json_document("simulate", self.fields(ruleset, scenario))
    }

    /// The fields of [`Summary::json`] without the document's version and
    /// kind: each side of `compare --json` is one.
    pub fn fields(&self, ruleset: &str, scenario: &str) -> serde_json::Value {
        use serde_json::json;
        let wins: Vec<_> = self
            .armies
            .iter()
            .zip(&self.wins)
            .map(|(army, r)| json!({"army": army, "count": r.count, "rate": r.rate, "low": r.low, "high": r.high}))
            .collect();
        let losses: Vec<_> = self
            .armies
            .iter()
            .zip(&self.losses)
            .map(|(army, types)| json!({"army": army, "unit_types": types}))
            .collect();
        let length: Vec<_> = self
            .length
            .iter()
            .map(|(turns, games)| json!({"turns": turns, "games": games}))
            .collect();
        let undecided: Vec<_> = self
            .undecided
            .iter()
            .map(|(game, seed)| json!({"game": game, "seed": seed}))
            .collect();
        json!({
                "ruleset": ruleset,
                "scenario": scenario,
                "games": self.games,
                "seed": self.seed,
                "armies": self.armies,
                "wins": wins,
                "draws": self.draws,
                "turn_limit": self.turn_limit,
                "turn_limit_games": undecided,
                "length": length,
                "mean_turns": self.mean_turns,
                "median_turns": self.median_turns,
                "losses": losses,
        })
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |r: &Rate| {
            format!(
                "{:5.1}%  (95% CI {:.1}-{:.1}%, {} games)",
                100.0 * r.rate,
                100.0 * r.low,
                100.0 * r.high,
                r.count
            )
        };
        writeln!(f, "{} games, seed {}", self.games, self.seed)?;
        for (a, w) in self.armies.iter().zip(&self.wins) {
            writeln!(f, "  {a} wins: {}", pct(w))?;
        }
        writeln!(f, "  draws: {}", pct(&self.draws))?;
        writeln!(
            f,
            "  undecided at the turn limit: {}",
            pct(&self.turn_limit)
        )?;
        if !self.undecided.is_empty() {
            let more = if self.turn_limit.count > self.undecided.len() as u64 {
                format!(" (the first {})", self.undecided.len())
            } else {
                String::new()
            };
            writeln!(
                f,
                "    replay them{more} with `muster battle --seed S` (and this run's scenario and options):"
            )?;
            for (game, seed) in &self.undecided {
                writeln!(f, "      game {game}: --seed {seed}")?;
            }
        }
        writeln!(
            f,
            "game length: mean {:.2} turns, median {}",
            self.mean_turns, self.median_turns
        )?;
        let max = self.length.iter().map(|x| x.1).max().unwrap_or(1).max(1);
        for (t, c) in &self.length {
            let bar = "#".repeat(((*c as f64 / max as f64) * 40.0).round() as usize);
            writeln!(f, "  {t:3} turns {c:7}  {bar}")?;
        }
        for (a, l) in self.armies.iter().zip(&self.losses) {
            writeln!(f, "losses of {a} (units off the table per game):")?;
            for t in l {
                writeln!(
                    f,
                    "  {:<14} {:.2} of {} ({:.0}%)",
                    t.unit_type,
                    t.mean_lost,
                    t.fielded,
                    100.0 * t.lost_share
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Wilson interval against values computed by hand: 50 of 100 gives
    /// 0.4038-0.5962; 0 of 10 gives 0-0.2775.
    #[test]
    fn wilson_interval() {
        let r = Rate::of(50, 100);
        assert!(
            (r.low - 0.4038).abs() < 1e-4 && (r.high - 0.5962).abs() < 1e-4,
            "{r:?}"
        );
        let r = Rate::of(0, 10);
        assert!(r.low == 0.0 && (r.high - 0.2775).abs() < 1e-4, "{r:?}");
    }

    #[test]
    fn game_seeds_differ() {
        assert_ne!(game_seed(1, 0), game_seed(1, 1));
        assert_ne!(game_seed(1, 0), game_seed(2, 0));
    }
}
