//! The command line's library side (interpreter/main.rs is the thin
//! binary): many games ([`simulate`], sharded), two rulesets played against
//! each other ([`compare`]), charts and pictures ([`charts`], [`svg`],
//! [`pictures`]), `muster diff` ([`diff`]), the language server ([`lsp`])
//! and `check --watch` ([`watch`]), what `muster odds` prints
//! ([`odds_report`]), and output helpers ([`output`],
//! [`check_json`]).
//!
//! Uses every stage; nothing uses it.

pub mod charts;
pub mod check_json;
pub mod compare;
pub mod diff;
pub mod lsp;
pub mod odds_report;
pub mod output;
pub mod pictures;
pub mod simulate;
pub mod svg;
pub mod watch;
