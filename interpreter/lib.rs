//! Muster: a rules-DSL interpreter for pike-and-shot tabletop wargames.
//!
//! The pipeline, one module a stage:
//!
//! ```text
//! text --parse--> syntax --load (extends, import)--> compile --> ir::Ruleset + phase_graph
//!                                                        |
//!          situation (facts, units) --> odds: exact (dice distributions) or sampled (rng)
//! ```
//!
//! Where things happen: [`tables`] checks and compiles tables, [`modifiers`]
//! compiles and applies modifiers, [`dice`] holds pools and their exact
//! distributions, [`eval`] evaluates rules against a [`world::World`] of
//! units and facts, [`odds`] answers "how often".

pub mod compile;
pub mod diagnostic;
pub mod dice;
pub mod eval;
pub mod ir;
pub mod load;
pub mod modifiers;
pub mod odds;
pub mod parse;
pub mod phase_graph;
pub mod rng;
pub mod situation;
pub mod source;
pub mod syntax;
pub mod tables;
pub mod value;
pub mod world;

use diagnostic::Diag;
use source::Sources;
use std::path::Path;

/// A ruleset compiled from a file, with the texts its diagnostics point into.
pub struct Build {
    pub ruleset: ir::Ruleset,
    pub sources: Sources,
}

/// Load and compile a ruleset file (following `extends` and `import`).
pub fn build(path: &Path) -> Result<Build, (Vec<Diag>, Sources)> {
    let mut sources = Sources::default();
    let loaded = match load::load_path(path, &mut sources) {
        Ok(l) => l,
        Err(d) => return Err((d, sources)),
    };
    match compile::compile(&loaded) {
        Ok(ruleset) => Ok(Build { ruleset, sources }),
        Err(d) => Err((d, sources)),
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
        Err(d) => return Err((d, sources)),
    };
    match compile::compile(&loaded) {
        Ok(ruleset) => Ok(Build { ruleset, sources }),
        Err(d) => Err((d, sources)),
    }
}

impl Build {
    /// Read a situation file against this ruleset.
    pub fn situation(&mut self, name: &str, text: &str) -> Result<situation::Situation, Vec<Diag>> {
        situation::read(&self.ruleset, name, text, &mut self.sources)
    }

    /// Exact odds of a situation (falling back to nothing: the caller decides).
    pub fn exact(&self, s: &situation::Situation) -> Result<odds::Odds, Diag> {
        let prog = odds::specialise(&self.ruleset, s.world.clone(), s.procedure, &s.args)?;
        odds::exact(&self.ruleset, &prog).map_err(|e| match e {
            odds::ExactError::Fault(d) => d,
            odds::ExactError::TooManyBranches => Diag::new(
                "muster::exact",
                format!(
                    "more than {} branches: too many to compute exactly",
                    odds::MAX_BRANCHES
                ),
            )
            .help("sample it instead with `--samples N`"),
        })
    }

    /// Sampled odds of a situation.
    pub fn sampled(
        &self,
        s: &situation::Situation,
        samples: u64,
        seed: u64,
    ) -> Result<odds::Odds, Diag> {
        let prog = odds::specialise(&self.ruleset, s.world.clone(), s.procedure, &s.args)?;
        odds::sampled(&self.ruleset, &prog, samples, seed, None)
    }
}
