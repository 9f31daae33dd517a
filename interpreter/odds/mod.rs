//! Odds: "how often", as `muster odds` asks it. A situation file's
//! facts and units ([`situation`]), the odds of two rulesets side by side
//! ([`pair`]). The engine that answers (specialise a procedure to the
//! situation, then exact or sampled) is [`crate::run::odds`]: a battle's
//! policies ask it too, so it runs with the other evaluators. Tables and
//! charts of odds are the command line's ([`crate::cli::odds_report`]).
//!
//! Uses the stages before it.

pub mod pair;
pub mod situation;
pub mod unset;
