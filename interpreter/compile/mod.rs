//! Compiling: from the merged syntax of a ruleset to [`ir::Ruleset`],
//! checked. The compiler itself ([`compiler`]: names, types, expressions,
//! procedures), and one module for each kind of rule it compiles: tables
//! ([`tables`]), modifiers ([`modifiers`], where they are also applied),
//! rolls ([`rolls`]), decisions and policies ([`decisions`]), the phase
//! graph ([`phase_graph`]), decks and hands ([`decks`], [`hands`]), and the
//! call graph's checks ([`call_graph`]), and hook scripts, checked against
//! the script API's names ([`scripts`]).
//!
//! Uses [`crate::base`] and [`crate::front`] only (`tests/layers.rs`).

pub mod call_graph;
pub mod chance;
pub mod compiler;
pub mod decisions;
pub mod decks;
pub mod hands;
pub mod ir;
pub mod modifiers;
pub mod phase_graph;
pub mod rolls;
pub mod scripts;
pub mod tables;
