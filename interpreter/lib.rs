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
pub mod ir;
pub mod load;
pub mod modifiers;
pub mod parse;
pub mod phase_graph;
pub mod source;
pub mod syntax;
pub mod tables;
pub mod value;
