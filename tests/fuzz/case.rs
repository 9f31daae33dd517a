//! One fuzzing case: what the generator makes for a seed, and running it
//! through everything a user can ask of Muster (check, render every
//! diagnostic, odds exact and sampled, a query, a battle), with a panic
//! caught and returned, and a watchdog that stops a case that hangs.

#![allow(dead_code)]

use super::gen::Gen;
use muster::battle::game::Prepared;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rules/");

/// The shipped rulesets, situations and scenarios cases start from.
const RULESETS: &[&str] = &[
    "tillys_very_bad_day.muster",
    "thistle_lily_and_rose.muster",
    "never_mind_the_matchlocks.muster",
];
const SITUATIONS: &[(&str, &str)] = &[
    (
        "tillys_very_bad_day.muster",
        "situations/tvbd_horse_charges_pike.toml",
    ),
    (
        "thistle_lily_and_rose.muster",
        "situations/thistle_gensdarmes_charge_two_pikes.toml",
    ),
    (
        "never_mind_the_matchlocks.muster",
        "situations/matchlocks_battalia_melee.toml",
    ),
    (
        "never_mind_the_matchlocks.muster",
        "situations/matchlocks_horse_meet_horse.toml",
    ),
];
const SCENARIOS: &[(&str, &str)] = &[
    ("tillys_very_bad_day.muster", "scenarios/tvbd_default.toml"),
    (
        "thistle_lily_and_rose.muster",
        "scenarios/thistle_default.toml",
    ),
    (
        "never_mind_the_matchlocks.muster",
        "scenarios/matchlocks_default.toml",
    ),
];

/// What a case is made of.
#[derive(Clone, Debug)]
pub enum Kind {
    /// A ruleset generated from the grammar, with a situation for one of
    /// its procedures.
    Fresh,
    /// A shipped ruleset, mutated; it plays its default scenario.
    Ruleset,
    /// A shipped situation, mutated (or generated).
    Situation,
    /// A shipped scenario, mutated.
    Scenario,
}

/// One generated case.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub kind: Kind,
    pub ruleset: String,
    pub situation: Option<String>,
    pub scenario: Option<String>,
    pub query: String,
}

/// What running a case did (every case must end in one of these, never a
/// panic or a hang).
#[derive(Clone, Debug, Default)]
pub struct Ran {
    pub built: bool,
    pub diagnostics: usize,
    pub odds: bool,
    pub played: bool,
    pub query: bool,
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!("{RULES}{rel}")).unwrap()
}

/// The case of a seed.
pub fn case(seed: u64) -> Case {
    let mut g = Gen::new(seed);
    let kind = match g.below(8) {
        0 | 1 => Kind::Fresh,
        2..=4 => Kind::Ruleset,
        5 | 6 => Kind::Situation,
        _ => Kind::Scenario,
    };
    let (ruleset, situation, scenario) = match kind {
        Kind::Fresh => {
            let r = g.ruleset();
            let procs: Vec<String> = r
                .lines()
                .filter_map(|l| l.strip_prefix("procedure "))
                .filter_map(|l| l.split('(').next())
                .map(str::to_string)
                .collect();
            let p = if procs.is_empty() {
                "none".to_string()
            } else {
                g.pick(&procs).clone()
            };
            let s = g.situation(&p, &["Horse", "Foot"]);
            (r, Some(s), None)
        }
        Kind::Ruleset => {
            let file: &str = g.pick::<&str>(RULESETS);
            let base = read(file);
            g.learn_names(&base);
            let r = if g.one_in(2) {
                g.mutate_mildly(&base)
            } else {
                g.mutate(&base)
            };
            (r, None, None)
        }
        Kind::Situation => {
            let (r, s) = *g.pick(SITUATIONS);
            let base = read(r);
            g.learn_names(&base);
            let s = if g.one_in(2) {
                g.mutate_mildly(&read(s))
            } else if g.one_in(2) {
                let proc = read(s)
                    .lines()
                    .find_map(|l| l.strip_prefix("procedure = "))
                    .map(|p| p.trim_matches('"').to_string())
                    .unwrap_or_default();
                g.situation(
                    &proc,
                    &["Horse", "Pike+Shot", "Gendarmes", "Pikes", "Battalia"],
                )
            } else {
                g.mutate(&read(s))
            };
            (base, Some(s), None)
        }
        Kind::Scenario => {
            let (r, s) = *g.pick(SCENARIOS);
            (read(r), None, Some(g.mutate(&read(s))))
        }
    };
    let query = g.expr(3);
    Case {
        seed,
        kind,
        ruleset,
        situation,
        scenario,
        query,
    }
}

/// Render every diagnostic as the command line does (this is where a
/// renderer's panic on a strange span would show), and count them.
fn render(d: &[muster::front::diagnostic::Diag], s: &muster::front::source::Sources) -> usize {
    let text = muster::front::diagnostic::render_plain(d, s);
    for x in d {
        let _ = format!("{:?}", miette::Report::new(x.report(s)));
    }
    assert!(d.is_empty() || !text.is_empty());
    d.len()
}

/// Run a case through check, odds, query and battle. A panic is returned
/// as Err with its message.
pub fn run(c: &Case, scratch: &Path) -> Result<Ran, String> {
    catch_unwind(AssertUnwindSafe(|| run_inner(c, scratch))).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())
    })
}

fn run_inner(c: &Case, scratch: &Path) -> Ran {
    let mut ran = Ran::default();
    let mut b = match muster::build_text("case.muster", &c.ruleset, Some(Path::new(RULES))) {
        Ok(b) => b,
        Err((d, s)) => {
            ran.diagnostics = render(&d, &s);
            return ran;
        }
    };
    ran.built = true;
    if let Some(text) = &c.situation {
        match b.situation("case.toml", text) {
            Err(d) => ran.diagnostics += render(&d, &b.sources),
            Ok(s) => {
                match b.exact(&s) {
                    Ok(_) => ran.odds = true,
                    Err(d) => ran.diagnostics += render(&[d], &b.sources),
                }
                match b.sampled(&s, 200, c.seed) {
                    Ok(_) => ran.odds = true,
                    Err(d) => ran.diagnostics += render(&[d], &b.sources),
                }
                match b.query(&s, &c.query) {
                    Ok(_) => ran.query = true,
                    Err(d) => ran.diagnostics += render(&d, &b.sources),
                }
            }
        }
    }
    if c.situation.is_none() {
        let file: Option<PathBuf> = c.scenario.as_ref().map(|text| {
            let f = scratch.join(format!("case-{}.toml", c.seed));
            std::fs::write(&f, text).unwrap();
            f
        });
        match b.scenario(file.as_deref()) {
            Err(d) => ran.diagnostics += render(&d, &b.sources),
            Ok(sc) => match Prepared::new(&b.ruleset, &sc) {
                Err(d) => ran.diagnostics += render(&d, &b.sources),
                Ok(prep) => match prep.play(c.seed, true) {
                    Ok(g) => {
                        let _ = g.narrative();
                        ran.played = true
                    }
                    Err(d) => ran.diagnostics += render(&[d], &b.sources),
                },
            },
        }
        if let Some(f) = file {
            let _ = std::fs::remove_file(f);
        }
    }
    ran
}

/// The seed of the case running now, and when it started (ms since the
/// watchdog started), for the watchdog.
static RUNNING: Mutex<Option<(u64, Instant)>> = Mutex::new(None);
static STARTED: AtomicU64 = AtomicU64::new(0);

/// Note that the case of `seed` starts (None: no case runs).
pub fn running(seed: Option<u64>) {
    *RUNNING.lock().unwrap() = seed.map(|s| (s, Instant::now()));
}

/// Start, once, a thread that ends the process when a case runs longer
/// than `limit`: a hang is a failure found, reported by its seed.
pub fn watchdog(limit: Duration) {
    if STARTED.swap(1, Ordering::SeqCst) == 1 {
        return;
    }
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        if let Some((seed, t)) = *RUNNING.lock().unwrap() {
            if t.elapsed() > limit {
                eprintln!(
                    "fuzz: case {seed} ran longer than {limit:?}: a hang (reproduce: cargo run --release --example soak -- --seed {seed} --cases 1 --save)"
                );
                std::process::abort();
            }
        }
    });
}
