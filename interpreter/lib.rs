//! Muster: a rules-DSL interpreter for pike-and-shot tabletop wargames.
//!
//! The pipeline, one folder a stage; a stage uses only itself and the
//! stages before it (`tests/layers.rs` holds the tree to it):
//!
//! ```text
//! base     values and the seeded generator
//! front    text --parse--> syntax --load (extends, import)--> one merged ruleset
//! compile  --> ir::Ruleset + phase graph (tables, modifiers, rolls, decisions, decks)
//! run      ir on a world: eval, closures, bytecode (typed tier -> Cranelift), hooks, field
//! odds     situation --> specialise --> exact (convolved pools) | sampled
//! battle   scenario --> the game loop, policies deciding
//! cli      simulate, compare, pictures, diff, lsp, watch
//! ```
//!
//! Where things happen: [`compile::tables`] checks and compiles tables,
//! [`compile::modifiers`] compiles and applies modifiers, [`run::dice`]
//! holds pools and their exact distributions, [`run::eval`] evaluates rules
//! against a [`run::world::World`] of units and facts, [`run::odds`]
//! answers "how often", [`battle::game`] plays battles.

// Diagnostics travel only on cold paths (compiling, reading a situation, a
// failed run); the hot path's error type, eval::EvalError, boxes them.
#![allow(clippy::result_large_err)]

pub mod base;
pub mod battle;
pub mod cli;
pub mod compile;
pub mod front;
pub mod odds;
pub mod run;

use base::value;
use battle::scenario;
use compile::{compiler, ir};
use front::diagnostic::Diag;
use front::source::{self, Sources};
use front::{load, parse, syntax};
use odds::situation;
use run::odds as engine;
use run::{eval, world};
use std::path::Path;

/// A ruleset compiled from a file, with the texts its diagnostics point into.
pub struct Build {
    pub ruleset: ir::Ruleset,
    pub sources: Sources,
    /// The folder of the ruleset's file (its default scenario is found from here).
    pub dir: Option<std::path::PathBuf>,
}

/// The most diagnostics shown for one file: past them, one more says how
/// many were left out (a generated ruleset with 500,000 mistakes printed
/// for minutes).
pub const MAX_DIAGS_PER_FILE: usize = 100;

/// At most [`MAX_DIAGS_PER_FILE`] diagnostics of each file, in their
/// order, then for each file with more, one saying how many more.
pub fn capped(diags: Vec<Diag>, sources: &Sources) -> Vec<Diag> {
    let file = |d: &Diag| d.span.map(|s| s.file);
    let mut count: std::collections::HashMap<Option<syntax::FileId>, usize> = Default::default();
    let mut kept = Vec::new();
    let mut over = Vec::new();
    for d in diags {
        let n = count.entry(file(&d)).or_default();
        *n += 1;
        if *n <= MAX_DIAGS_PER_FILE {
            kept.push(d);
        } else if *n == MAX_DIAGS_PER_FILE + 1 {
            over.push(file(&d));
        }
    }
    for f in over {
        let more = count[&f] - MAX_DIAGS_PER_FILE;
        let place = f.map_or(String::new(), |f| format!(" in `{}`", sources.get(f).name));
        kept.push(
            Diag::new("muster::too_many", format!("and {more} more problems{place}"))
            .help(format!(
                "only the first {MAX_DIAGS_PER_FILE} problems of a file are shown; mend those and check again"
            )),
        );
    }
    kept
}

/// How many problems `diags` stand for: those shown, and those a
/// [`capped`] "and N more" line counts (warnings are not problems).
pub fn problems(diags: &[Diag]) -> usize {
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| match d.code {
            "muster::too_many" => d
                .message
                .strip_prefix("and ")
                .and_then(|m| m.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(1),
            _ => 1,
        })
        .sum()
}

/// Load and compile a ruleset file (following `extends` and `import`).
pub fn build(path: &Path) -> Result<Build, (Vec<Diag>, Sources)> {
    build_with(path, &[])
}

/// What `muster check` does to a ruleset file: [`build`] it, then find
/// the files it names that only a battle would otherwise read (its
/// `default_scenario`), so that a missing one is reported at its
/// declaration by `check`, not first by `simulate`.
pub fn check(path: &Path) -> Result<Build, (Vec<Diag>, Sources)> {
    let b = build(path)?;
    if b.ruleset.default_scenario.is_some() {
        if let Err(d) = b.default_scenario() {
            return Err((d, b.sources));
        }
    }
    Ok(b)
}

/// Load and compile a ruleset file with some of its number options set
/// (`--option NAME=N`: a face count the book leaves open), as a house rule
/// overriding each would.
pub fn build_with(path: &Path, numbers: &[(String, i64)]) -> Result<Build, (Vec<Diag>, Sources)> {
    build_loaded_with(path, numbers).map(|(b, _)| b)
}

/// Load and compile a ruleset file, keeping its merged items too (what
/// `muster diff` compares).
pub fn build_loaded(path: &Path) -> Result<(Build, load::Loaded), (Vec<Diag>, Sources)> {
    build_loaded_with(path, &[])
}

/// [`build_loaded`] with number options set, as [`build_with`].
pub fn build_loaded_with(
    path: &Path,
    numbers: &[(String, i64)],
) -> Result<(Build, load::Loaded), (Vec<Diag>, Sources)> {
    build_path(path, |loaded, _| compiler::compile_with(loaded, numbers))
}

/// [`build_loaded_with`] for `muster odds`: a ruleset that compiled clean
/// from the very same texts and numbers before (the parse cache's record
/// of it, [`front::cache::CheckedRecord`]) is compiled without the checks
/// that only find mistakes and without what odds never read
/// ([`compiler::compile_for_odds`]); one that did not is compiled whole,
/// its mistakes reported as before, and recorded when it compiles clean.
pub fn build_for_odds(
    path: &Path,
    numbers: &[(String, i64)],
) -> Result<(Build, load::Loaded), (Vec<Diag>, Sources)> {
    use front::cache;
    build_path(path, |loaded, sources| {
        let record = cache::checked_record();
        let name = path.display().to_string();
        let found = record.as_ref().map(|r| {
            let input = cache::compile_input(sources, numbers);
            let found = r.lookup(&name, input);
            if std::env::var_os("MUSTER_CACHE_TRACE").is_some() {
                eprintln!("checked record ({found:?}): {name}");
            }
            (r, input, found)
        });
        let known_clean = matches!(found, Some((_, _, cache::Lookup::Hit)));
        let ruleset = compiler::compile_for_odds(loaded, numbers, known_clean)?;
        if let Some((r, input, f)) = found {
            if f != cache::Lookup::Hit && f != cache::Lookup::Foreign {
                // A record that cannot be written is none: the next run checks.
                let _ = r.note(&name, input);
            }
        }
        Ok(ruleset)
    })
}

/// Load the ruleset at `path` and compile it with `compile` (given the
/// loaded items and the texts read).
fn build_path(
    path: &Path,
    compile: impl FnOnce(&load::Loaded, &Sources) -> Result<ir::Ruleset, Vec<Diag>>,
) -> Result<(Build, load::Loaded), (Vec<Diag>, Sources)> {
    let mut sources = Sources::default();
    let loaded = match load::load_path(path, &mut sources) {
        Ok(l) => l,
        Err(d) => return Err((capped(d, &sources), sources)),
    };
    match compile(&loaded, &sources) {
        Ok(ruleset) => Ok((
            Build {
                ruleset,
                sources,
                dir: path.parent().map(|p| p.to_path_buf()),
            },
            loaded,
        )),
        Err(d) => Err((capped(d, &sources), sources)),
    }
}

/// Compile a ruleset from text (as tests and embedded rulesets do).
pub fn build_text(
    name: &str,
    text: &str,
    dir: Option<&Path>,
) -> Result<Build, (Vec<Diag>, Sources)> {
    let mut sources = Sources::default();
    let loaded = match load::load_text(name, text, dir, &mut sources) {
        Ok(l) => l,
        Err(d) => return Err((capped(d, &sources), sources)),
    };
    match compiler::compile(&loaded) {
        Ok(ruleset) => Ok(Build {
            ruleset,
            sources,
            dir: dir.map(|p| p.to_path_buf()),
        }),
        Err(d) => Err((capped(d, &sources), sources)),
    }
}

impl Build {
    /// Read a scenario file, or (with `None`) the ruleset's default scenario.
    pub fn scenario(&mut self, path: Option<&Path>) -> Result<scenario::Scenario, Vec<Diag>> {
        let file = match path {
            Some(p) => p.to_path_buf(),
            None => self.default_scenario()?,
        };
        let shown = file.display().to_string();
        let text = source::read_text(&file).map_err(|e| {
            let d = e.diag("muster::io", &shown);
            vec![match e {
                source::ReadError::Io(_) => d.help("check the path of the scenario file"),
                _ => d,
            }]
        })?;
        scenario::read(&self.ruleset, &shown, &text, &mut self.sources)
            .map_err(|d| capped(d, &self.sources))
    }

    /// The file of the ruleset's default scenario (`default_scenario`),
    /// found from the file that declares it, else from the ruleset's
    /// folder: a .toml file inside the ruleset's folder tree.
    pub fn default_scenario(&self) -> Result<std::path::PathBuf, Vec<Diag>> {
        use source::{FileKind, Refused};
        let Some((rel, span)) = self.ruleset.default_scenario.clone() else {
            return Err(vec![Diag::new(
                "muster::scenario",
                "the ruleset names no default scenario",
            )
            .help(
                "give one with `--scenario FILE`, or declare `default_scenario \"FILE\"` in the ruleset",
            )]);
        };
        let tree = source::Tree::new(self.dir.as_deref());
        let root = source::folder_or_here(self.dir.as_deref()).to_path_buf();
        // Relative to the file that declares it (a house rule
        // extending a ruleset plays the ruleset's default).
        let declared = self.sources.get(span.file).folder.clone();
        let missing = |r: &Result<_, Refused>| matches!(r, Err(Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound);
        let (base, found) = match declared {
            Some(d) => {
                let found = tree.resolve(&d, &rel, FileKind::Scenario);
                if missing(&found) {
                    (root.clone(), tree.resolve(&root, &rel, FileKind::Scenario))
                } else {
                    (d, found)
                }
            }
            None => (root.clone(), tree.resolve(&root, &rel, FileKind::Scenario)),
        };
        let full = base.join(&rel);
        match found {
            Ok(_) => Ok(full),
            Err(Refused::Io(e)) => Err(vec![Diag::new(
                "muster::scenario",
                if e.kind() == std::io::ErrorKind::NotFound {
                    format!("the default scenario `{}` does not exist", full.display())
                } else {
                    format!("cannot read the default scenario `{}`: {e}", full.display())
                },
            )
            .at(span, "declared here")
            .help("the path is relative to the ruleset's folder")]),
            Err(r) => Err(r
                .diag("muster::scenario", &rel, FileKind::Scenario)
                .map(|d| d.at(span, "the ruleset's default scenario"))
                .into_iter()
                .collect()),
        }
    }

    /// Read a situation file against this ruleset.
    pub fn situation(&mut self, name: &str, text: &str) -> Result<situation::Situation, Vec<Diag>> {
        situation::read(&self.ruleset, name, text, &mut self.sources)
            .map_err(|d| capped(d, &self.sources))
    }

    /// Give a run-time problem the situation's procedure line as its
    /// place, or, when it has a place of its own in the ruleset (the
    /// statement or pool that failed), as a note.
    pub fn locate(&self, s: &situation::Situation, d: Diag) -> Diag {
        let label = "while running this situation's procedure";
        match d.span {
            Some(at) if at.file != s.span.file => d.note(s.span, label),
            Some(_) => d,
            None => d.at(s.span, label),
        }
    }

    /// Specialise the situation's procedure to it.
    pub fn program(&self, s: &situation::Situation) -> Result<engine::Program, Diag> {
        let Some(p) = s.procedure else {
            return Err(
                Diag::new("muster::situation", "the situation names no procedure")
                    .help("add `procedure = \"NAME\"` at the top of the situation file"),
            );
        };
        engine::specialise(&self.ruleset, s.world.clone(), p, &s.args)
            .map_err(|d| self.locate(s, d))
    }

    /// Exact odds of a situation.
    pub fn exact(&self, s: &situation::Situation) -> Result<engine::Odds, Diag> {
        let prog = self.program(s)?;
        engine::exact(&self.ruleset, &prog).map_err(|e| match e {
            engine::ExactError::Fault(d) => self.locate(s, d),
            engine::ExactError::TooMany(why) => Diag::new("muster::exact", why.to_string())
                .help("sample it instead with `--samples N`"),
        })
    }

    /// Evaluate an expression of the language in a situation, with the
    /// situation's units bound by name: `charges(french_horse, spanish_shot)`.
    pub fn query(
        &mut self,
        s: &situation::Situation,
        expr: &str,
    ) -> Result<(value::Value, String), Vec<Diag>> {
        self.query_world(&s.world, expr)
    }

    /// Evaluate an expression against a world (a situation's, or a battle's
    /// with its table), with the world's units bound by name.
    pub fn query_world(
        &mut self,
        world: &world::World,
        expr: &str,
    ) -> Result<(value::Value, String), Vec<Diag>> {
        let s = &world;
        let file = self.sources.add("query", expr);
        let e = parse::parse_expr(expr, file, 0).map_err(|d| vec![d])?;
        let locals: Vec<(String, ir::Ty)> = s
            .units
            .iter()
            .map(|u| (u.name.clone(), ir::Ty::Unit))
            .collect();
        let mut c = compiler::Compiler::from_ruleset(&self.ruleset);
        let (ex, _, slots) = c.query(&e, &locals)?;
        let mut frame: Vec<value::Value> =
            (0..s.units.len() as u16).map(value::Value::Unit).collect();
        frame.resize(frame.len().max(slots as usize), value::Value::None);
        let v = eval::Eval::new(&self.ruleset)
            .eval(eval::Ctx::new(s), &ex, &mut frame, &mut eval::NoDice)
            .map_err(|e| {
                vec![e.diag_or(|| Diag::new("muster::query", "the query cannot be evaluated"))]
            })?;
        Ok((v, s.show(&self.ruleset, v)))
    }

    /// Sampled odds of a situation.
    pub fn sampled(
        &self,
        s: &situation::Situation,
        samples: u64,
        seed: u64,
    ) -> Result<engine::Odds, Diag> {
        let prog = self.program(s)?;
        engine::sampled(&self.ruleset, &prog, samples, seed, None).map_err(|d| self.locate(s, d))
    }

    /// Run a situation with its scripted rolls (a worked example).
    pub fn scripted(&self, s: &situation::Situation) -> Result<engine::Odds, Diag> {
        let prog = self.program(s)?;
        let rolls = s.rolls.clone().unwrap_or_default();
        engine::scripted(&self.ruleset, &prog, &rolls).map_err(|d| self.locate(s, d))
    }
}
