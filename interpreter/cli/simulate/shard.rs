//! A run split over machines: `simulate --shard I/N` and `compare --shard
//! I/N` play the I-th of N equal slices of a run's games and write a shard
//! file (JSON: the exact counts of its games, [`Tally`] or
//! [`Paired`], and what names them); `muster merge` checks that a set of
//! shard files is one whole run, each slice once, and adds them up into
//! what the unsplit run prints, to the last digit. Game `i` plays on the
//! same seed in whichever shard it falls, so the split changes nothing but
//! where the games are played.

use super::{Frame, Summary, Tally};
use crate::cli::compare::{Comparison, Heading, Paired};
use crate::front::diagnostic::Diag;
use crate::front::source::Sources;
use crate::front::syntax::{FileId, Span};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What a shard file of `simulate` says it is (`format`), and the version
/// of its layout.
pub const FORMAT: &str = "muster simulate shard";
/// What a shard file of `compare` says it is.
pub const COMPARE_FORMAT: &str = "muster compare shard";
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

/// One shard file of `simulate`.
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

/// One shard file of `compare`: the same run fields as [`Shard`], with
/// what the comparison prints besides its numbers and the paired counts.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CompareShard {
    /// Always [`COMPARE_FORMAT`].
    pub format: String,
    pub version: u32,
    pub muster: String,
    /// A digest of every text both rulesets were built from (each with the
    /// scenario) and of the options of each: shards of one run have the same.
    pub fingerprint: String,
    /// The files, the scenario and the difference of the rules, as printed.
    pub heading: Heading,
    /// The rulesets' titles, A then B.
    pub titles: [String; 2],
    pub seed: u64,
    pub runs: u64,
    pub shard: Slice,
    pub first_game: u64,
    pub end_game: u64,
    /// What A and B field.
    pub frames: [Frame; 2],
    pub paired: Paired,
}

/// A shard file of either kind, as read.
enum Any {
    Simulate(Box<Shard>),
    Compare(Box<CompareShard>),
}

/// What every shard says of its run, whatever its kind.
struct Run<'a> {
    kind: &'static str,
    muster: &'a str,
    fingerprint: &'a str,
    seed: u64,
    runs: u64,
    shard: Slice,
    first_game: u64,
    end_game: u64,
}

impl Any {
    fn run(&self) -> Run<'_> {
        match self {
            Any::Simulate(s) => Run {
                kind: "simulate",
                muster: &s.muster,
                fingerprint: &s.fingerprint,
                seed: s.seed,
                runs: s.runs,
                shard: s.shard,
                first_game: s.first_game,
                end_game: s.end_game,
            },
            Any::Compare(s) => Run {
                kind: "compare",
                muster: &s.muster,
                fingerprint: &s.fingerprint,
                seed: s.seed,
                runs: s.runs,
                shard: s.shard,
                first_game: s.first_game,
                end_game: s.end_game,
            },
        }
    }

    /// What differs between this shard and `first` (of the same kind),
    /// named for a reader: empty when they are slices of one run.
    fn differs(&self, first: &Any) -> Vec<&'static str> {
        let (r, f) = (self.run(), first.run());
        let mut d: Vec<(&'static str, bool)> = vec![
            ("program", r.muster != f.muster),
            (
                "ruleset, scenario or options (fingerprint)",
                r.fingerprint != f.fingerprint,
            ),
            ("seed", r.seed != f.seed),
            ("number of games (--runs)", r.runs != f.runs),
            ("number of shards", r.shard.count != f.shard.count),
        ];
        match (self, first) {
            (Any::Simulate(s), Any::Simulate(f)) => {
                d.push(("armies or unit types", s.frame != f.frame));
            }
            (Any::Compare(s), Any::Compare(f)) => {
                d.push(("armies or unit types", s.frames != f.frames));
                d.push((
                    "rulesets or scenario as named (files, titles, difference of the rules)",
                    s.heading != f.heading || s.titles != f.titles,
                ));
            }
            _ => {}
        }
        d.into_iter().filter(|(_, x)| *x).map(|(w, _)| w).collect()
    }

    /// The games this shard counted, if its counts are whole.
    fn games(&self) -> Option<u64> {
        match self {
            Any::Simulate(s) => s.tally.consistent(&s.frame).then_some(s.tally.games),
            Any::Compare(s) => s
                .paired
                .consistent(&s.frames[0], &s.frames[1])
                .then_some(s.paired.games),
        }
    }
}

/// A digest (FNV-1a, 64 bits, hex) of the texts a run is built from and its
/// options, in order: the same on every machine for the same files.
pub fn fingerprint(sources: &Sources, options: &[String]) -> String {
    fingerprint_of(&[(sources, options)])
}

/// The digest of [`fingerprint`] over several builds (compare's two
/// rulesets, each with its options), in order.
pub fn fingerprint_of(parts: &[(&Sources, &[String])]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        // The length first, so that moving a byte from one text to the next
        // changes the digest.
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (sources, options) in parts {
        for i in 0..sources.len() {
            eat(sources.get(FileId(i as u32)).text.as_bytes());
        }
        for o in *options {
            eat(o.as_bytes());
        }
    }
    format!("{h:016x}")
}

/// The name and version of this program, as shard files record it.
pub fn program() -> String {
    format!("muster {}", env!("CARGO_PKG_VERSION"))
}

/// The merged run: what the unsplit run prints.
#[derive(Clone, Debug, PartialEq)]
pub enum Merged {
    /// A `simulate` run: its summary, with the title and scenario to print
    /// it under.
    Simulate {
        title: String,
        scenario: String,
        summary: Box<Summary>,
    },
    /// A `compare` run: the comparison, with what is printed above it.
    Compare {
        heading: Heading,
        comparison: Box<Comparison>,
    },
}

impl Merged {
    /// The games of the whole run (under each ruleset, for `compare`).
    pub fn games(&self) -> u64 {
        match self {
            Merged::Simulate { summary, .. } => summary.games,
            Merged::Compare { comparison, .. } => comparison.games,
        }
    }

    /// The text the unsplit run prints.
    pub fn text(&self) -> String {
        match self {
            Merged::Simulate {
                title,
                scenario,
                summary,
            } => format!("{title} — {scenario}\n{summary}"),
            Merged::Compare {
                heading,
                comparison,
            } => heading.text(comparison),
        }
    }

    /// The JSON document the unsplit run prints with `--json`.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Merged::Simulate {
                title,
                scenario,
                summary,
            } => summary.json(title, scenario),
            Merged::Compare {
                heading,
                comparison,
            } => heading.json(comparison),
        }
    }
}

/// What the help of a diagnostic about an input file asks for.
const GIVE: &str =
    "give the files `muster simulate --shard I/N` or `muster compare --shard I/N` wrote, unchanged";

/// Read shard files (name, text; the texts are added to `sources` for the
/// diagnostics) and add them up, after checking that they are the slices of
/// one run, each once.
pub fn merge(files: &[(String, String)], sources: &mut Sources) -> Result<Merged, Vec<Diag>> {
    let mut shards: Vec<(FileId, Any)> = Vec::new();
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
                "give the files `muster simulate --shard I/N` (or `muster compare --shard I/N`) wrote, one per slice",
            )]);
    };
    let whole = |f: FileId| Span::new(f, 0, sources.get(f).text.len().min(1));
    let kind = first.run().kind;
    // Every shard of the same run.
    for (file, s) in &shards[1..] {
        if s.run().kind != kind {
            diags.push(
                Diag::new(
                    "muster::merge",
                    format!(
                        "this is a shard of `muster {}`, but the first shard given is of `muster {kind}`",
                        s.run().kind
                    ),
                )
                .at(whole(*file), "this shard")
                .note(whole(*first_file), "the first shard given")
                .help("merge the shards of `simulate` and those of `compare` separately: one run at a time"),
            );
            continue;
        }
        for what in s.differs(first) {
            diags.push(
                Diag::new(
                    "muster::merge",
                    format!("this shard is of another run: its {what} differs"),
                )
                .at(whole(*file), "this shard")
                .note(whole(*first_file), "the first shard given")
                .help("the shards of one run come from the same command, rulesets, scenario and program, with only --shard changed"),
            );
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    // Each slice once (a map, not a table of `count` places: the count is
    // read from a file).
    let count = first.run().shard.count;
    let mut seen: std::collections::BTreeMap<u64, FileId> = Default::default();
    for (file, s) in &shards {
        let index = s.run().shard.index;
        match seen.get(&index) {
            Some(other) => diags.push(
                Diag::new(
                    "muster::merge",
                    format!("shard {index}/{count} is given twice"),
                )
                .at(whole(*file), "given again here")
                .note(whole(*other), "first given here")
                .help("give each shard file once"),
            ),
            None => {
                seen.insert(index, *file);
            }
        }
    }
    let absent = count - seen.len() as u64;
    if absent > 0 && diags.is_empty() {
        // The first few missing slices by name, the rest counted.
        let named: Vec<String> = (1..=count)
            .filter(|i| !seen.contains_key(i))
            .take(6)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let list = if absent > 6 {
            format!("{} and {} more are", named.join(", "), absent - 6)
        } else {
            format!(
                "{} {}",
                named.join(", "),
                if absent == 1 { "is" } else { "are" }
            )
        };
        diags.push(
            Diag::new(
                "muster::merge",
                format!(
                    "the run is not whole: shard{} {list} missing",
                    if absent == 1 { "" } else { "s" },
                ),
            )
            .at(whole(*first_file), "a shard of the run")
            .help(format!(
                "play the missing slices with `muster {kind} ... --shard I/N` and give every file"
            )),
        );
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(add_up(&shards))
}

/// The sum of the shards of one run (checked: one kind, each slice once).
fn add_up(shards: &[(FileId, Any)]) -> Merged {
    match &shards[0].1 {
        Any::Simulate(first) => {
            let mut tally = Tally::default();
            for (_, s) in shards {
                if let Any::Simulate(s) = s {
                    tally.add(&s.tally);
                }
            }
            Merged::Simulate {
                title: first.title.clone(),
                scenario: first.scenario.clone(),
                summary: Box::new(tally.summary(&first.frame, first.seed)),
            }
        }
        Any::Compare(first) => {
            let mut paired = Paired::default();
            for (_, s) in shards {
                if let Any::Compare(s) = s {
                    paired.add(&s.paired);
                }
            }
            let [fa, fb] = &first.frames;
            Merged::Compare {
                heading: first.heading.clone(),
                comparison: Box::new(paired.comparison(fa, fb, first.titles.clone(), first.seed)),
            }
        }
    }
}

/// What a shard file says it is, read before the rest.
#[derive(Deserialize)]
struct Head {
    format: String,
    version: u32,
}

/// One shard file, checked against itself: its format, its slice, its games.
fn read(file: FileId, text: &str) -> Result<Any, Diag> {
    let whole = Span::new(file, 0, text.len().min(1));
    let not_shard = |e: serde_json::Error| {
        let at = offset(text, e.line(), e.column());
        Diag::new("muster::merge", format!("this is not a shard file: {e}"))
            .at(Span::new(file, at, (at + 1).min(text.len().max(1))), "here")
            .help(GIVE)
    };
    let bad = |why: String| {
        Diag::new(
            "muster::merge",
            format!("this shard file is inconsistent: {why}"),
        )
        .at(whole, "this shard")
        .help(GIVE)
    };
    let head: Head = serde_json::from_str(text).map_err(not_shard)?;
    let s = match (head.format.as_str(), head.version) {
        (FORMAT, VERSION) => Any::Simulate(serde_json::from_str(text).map_err(not_shard)?),
        (COMPARE_FORMAT, VERSION) => Any::Compare(serde_json::from_str(text).map_err(not_shard)?),
        (format, version) => {
            return Err(bad(format!(
                "it is `{format}` version {version}, not `{FORMAT}` or `{COMPARE_FORMAT}` version {VERSION}"
            )))
        }
    };
    let r = s.run();
    if r.shard.index == 0 || r.shard.index > r.shard.count {
        return Err(bad(format!(
            "shard {}/{} is not a slice",
            r.shard.index, r.shard.count
        )));
    }
    let games = r.shard.games(r.runs);
    let Some(tallied) = s.games() else {
        return Err(bad("its counts do not add up to its games".into()));
    };
    if games != (r.first_game..r.end_game) || tallied != games.end - games.start {
        return Err(bad(format!(
            "shard {}/{} of {} games plays games {}..{}, not {}..{} ({} tallied)",
            r.shard.index,
            r.shard.count,
            r.runs,
            games.start,
            games.end,
            r.first_game,
            r.end_game,
            tallied
        )));
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
