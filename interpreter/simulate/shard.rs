//! A run split over machines: `simulate --shard I/N` plays the I-th of N
//! equal slices of a run's games and writes a shard file (JSON: the exact
//! [`Tally`] of its games and what names them); `muster merge` checks that
//! a set of shard files is one whole run, each slice once, and adds them up
//! into the summary the unsplit run prints, to the last digit. Game `i`
//! plays on the same seed in whichever shard it falls, so the split changes
//! nothing but where the games are played.

use super::{Frame, Summary, Tally};
use crate::diagnostic::Diag;
use crate::source::Sources;
use crate::syntax::{FileId, Span};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What a shard file says it is (`format`), and the version of its layout.
pub const FORMAT: &str = "muster simulate shard";
pub const VERSION: u32 = 1;

/// Which slice of a run: the `index`-th (from 1) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    pub index: u64,
    pub count: u64,
}

impl Slice {
    /// `I/N` as the command line writes it: 1 <= I <= N.
    pub fn parse(s: &str) -> Result<Slice, String> {
        let bad = || format!("`{s}`: a shard is I/N, the I-th of N (1 <= I <= N), e.g. 3/8");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Slice { index, count })
    }

    /// The games of a run of `runs` games this slice plays: consecutive,
    /// the slices of one run covering each game once.
    pub fn games(self, runs: u64) -> Range<u64> {
        let at = |k: u64| (runs as u128 * k as u128 / self.count as u128) as u64;
        at(self.index - 1)..at(self.index)
    }
}

/// One shard file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Shard {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] for files this program writes.
    pub version: u32,
    /// The program that played the games (`muster` and its version): a
    /// different engine may play a seed differently.
    pub muster: String,
    /// A digest of every text the run was built from (the ruleset, what it
    /// extends and imports, the standard library, the scenario) and of its
    /// options: shards of one run have the same.
    pub fingerprint: String,
    /// The ruleset's title and the scenario's description, for the text summary.
    pub title: String,
    pub scenario: String,
    /// The whole run: its seed and number of games.
    pub seed: u64,
    pub runs: u64,
    /// Which slice of it this is, and the games it played.
    pub shard: Slice,
    pub first_game: u64,
    pub end_game: u64,
    pub frame: Frame,
    pub tally: Tally,
}

/// A digest (FNV-1a, 64 bits, hex) of the texts a run is built from and its
/// options, in order: the same on every machine for the same files.
pub fn fingerprint(sources: &Sources, options: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        // The length first, so that moving a byte from one text to the next
        // changes the digest.
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for i in 0..sources.len() {
        eat(sources.get(FileId(i as u32)).text.as_bytes());
    }
    for o in options {
        eat(o.as_bytes());
    }
    format!("{h:016x}")
}

/// The name and version of this program, as shard files record it.
pub fn program() -> String {
    format!("muster {}", env!("CARGO_PKG_VERSION"))
}

/// The merged run: its summary, with the title and scenario to print it under.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub title: String,
    pub scenario: String,
    pub summary: Summary,
}

/// Read shard files (name, text; the texts are added to `sources` for the
/// diagnostics) and add them up, after checking that they are the slices of
/// one run, each once.
pub fn merge(files: &[(String, String)], sources: &mut Sources) -> Result<Merged, Vec<Diag>> {
    let mut shards: Vec<(FileId, Shard)> = Vec::new();
    let mut diags = Vec::new();
    for (name, text) in files {
        let file = sources.add(name.clone(), text.as_str());
        match read(file, text) {
            Ok(s) => shards.push((file, s)),
            Err(d) => diags.push(d),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let Some((first_file, first)) = shards.first() else {
        return Err(vec![Diag::new("muster::merge", "no shard files to merge")
            .help(
                "give the files `muster simulate --shard I/N` wrote, one per slice",
            )]);
    };
    let whole = |f: FileId| Span::new(f, 0, sources.get(f).text.len().min(1));
    // Every shard of the same run.
    for (file, s) in &shards[1..] {
        let differs = [
            ("program", s.muster != first.muster),
            (
                "ruleset, scenario or options (fingerprint)",
                s.fingerprint != first.fingerprint,
            ),
            ("seed", s.seed != first.seed),
            ("number of games (--runs)", s.runs != first.runs),
            ("number of shards", s.shard.count != first.shard.count),
            ("armies or unit types", s.frame != first.frame),
        ];
        for (what, d) in differs {
            if d {
                diags.push(
                    Diag::new(
                        "muster::merge",
                        format!("this shard is of another run: its {what} differs"),
                    )
                    .at(whole(*file), "this shard")
                    .note(whole(*first_file), "the first shard given")
                    .help("the shards of one run come from the same command, ruleset, scenario and program, with only --shard changed"),
                );
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    // Each slice once.
    let count = first.shard.count;
    let mut seen: Vec<Option<FileId>> = vec![None; count as usize];
    for (file, s) in &shards {
        let i = (s.shard.index - 1) as usize;
        match seen[i] {
            Some(other) => diags.push(
                Diag::new(
                    "muster::merge",
                    format!("shard {}/{count} is given twice", s.shard.index),
                )
                .at(whole(*file), "given again here")
                .note(whole(other), "first given here")
                .help("give each shard file once"),
            ),
            None => seen[i] = Some(*file),
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| seen[*i as usize].is_none())
        .map(|i| format!("{}/{count}", i + 1))
        .collect();
    if !missing.is_empty() && diags.is_empty() {
        diags.push(
            Diag::new(
                "muster::merge",
                format!(
                    "the run is not whole: shard{} {} missing",
                    if missing.len() == 1 { "" } else { "s" },
                    if missing.len() > 6 {
                        format!("{} and {} more are", missing[..6].join(", "), missing.len() - 6)
                    } else {
                        format!("{} {}", missing.join(", "), if missing.len() == 1 { "is" } else { "are" })
                    }
                ),
            )
            .at(whole(*first_file), "a shard of the run")
            .help("play the missing slices with `muster simulate ... --shard I/N` and give every file"),
        );
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut tally = Tally::default();
    for (_, s) in &shards {
        tally.add(&s.tally);
    }
    Ok(Merged {
        title: first.title.clone(),
        scenario: first.scenario.clone(),
        summary: tally.summary(&first.frame, first.seed),
    })
}

/// One shard file, checked against itself: its format, its slice, its games.
fn read(file: FileId, text: &str) -> Result<Shard, Diag> {
    let whole = Span::new(file, 0, text.len().min(1));
    let s: Shard = serde_json::from_str(text).map_err(|e| {
        let at = offset(text, e.line(), e.column());
        Diag::new("muster::merge", format!("this is not a shard file: {e}"))
            .at(Span::new(file, at, (at + 1).min(text.len().max(1))), "here")
            .help("give the files `muster simulate --shard I/N` wrote, unchanged")
    })?;
    let bad = |why: String| {
        Diag::new(
            "muster::merge",
            format!("this shard file is inconsistent: {why}"),
        )
        .at(whole, "this shard")
        .help("give the files `muster simulate --shard I/N` wrote, unchanged")
    };
    if s.format != FORMAT || s.version != VERSION {
        return Err(bad(format!(
            "it is `{}` version {}, not `{FORMAT}` version {VERSION}",
            s.format, s.version
        )));
    }
    if s.shard.index == 0 || s.shard.index > s.shard.count {
        return Err(bad(format!(
            "shard {}/{} is not a slice",
            s.shard.index, s.shard.count
        )));
    }
    let games = s.shard.games(s.runs);
    if games != (s.first_game..s.end_game) || s.tally.games != games.end - games.start {
        return Err(bad(format!(
            "shard {}/{} of {} games plays games {}..{}, not {}..{} ({} tallied)",
            s.shard.index,
            s.shard.count,
            s.runs,
            games.start,
            games.end,
            s.first_game,
            s.end_game,
            s.tally.games
        )));
    }
    let t = &s.tally;
    let outcomes = t.wins[0] + t.wins[1] + t.draws + t.turn_limit;
    let lengths: u64 = t.length.iter().map(|(_, c)| c).sum();
    let shape = s.frame.armies.len() == 2
        && s.frame.fielded.len() == 2
        && t.lost.len() == 2
        && s.frame
            .fielded
            .iter()
            .all(|f| f.len() == s.frame.unit_types.len())
        && t.lost.iter().all(|l| l.len() == s.frame.unit_types.len());
    if outcomes != t.games || lengths != t.games || !shape {
        return Err(bad("its counts do not add up to its games".into()));
    }
    Ok(s)
}

/// The byte offset of a line and column (both from 1) in `text`.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slices of a run cover each game once, in order, whatever N.
    #[test]
    fn slices_cover_the_run() {
        for runs in [0u64, 1, 7, 1000, 1001] {
            for count in 1..=9u64 {
                let mut next = 0;
                for index in 1..=count {
                    let g = Slice { index, count }.games(runs);
                    assert_eq!(g.start, next, "{index}/{count} of {runs}");
                    next = g.end;
                }
                assert_eq!(next, runs);
            }
        }
    }

    #[test]
    fn slice_parse() {
        assert_eq!(Slice::parse("3/8"), Ok(Slice { index: 3, count: 8 }));
        for bad in ["0/8", "9/8", "3", "a/b", "1/0", "-1/2"] {
            assert!(Slice::parse(bad).is_err(), "{bad}");
        }
    }
}
