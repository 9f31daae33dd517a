//! Every integration test, in one binary: each file of tests/ is a module
//! of it (tests/NAME.rs is `NAME::`), so the suite is compiled and linked
//! once, not once a file. Run one file's tests with
//! `cargo test --release --test all NAME::`, one test by its name.

mod common;

mod alloc;
mod army;
mod battle;
mod battle_figures;
mod battle_groups;
mod battle_odds;
mod browser;
mod chance;
mod charts;
mod checked_record;
mod claims;
mod claims_battle;
mod cli;
mod compare;
mod decks;
mod diagnostics;
mod diagnostics_mislead;
mod dice;
mod diff;
mod files;
mod fuzz;
mod grammar;
mod guide;
mod highlight;
mod hooks;
mod json_schema;
mod layers;
mod load_cache;
mod lsp;
mod matchlocks;
mod matchlocks_battle;
mod matchlocks_fidelity;
mod matchlocks_guns;
mod matchlocks_melee;
mod memo;
mod nesting;
mod odds_report;
mod output;
mod quantifiers;
mod robustness;
mod rolls;
mod rulesets;
mod scenario;
mod search;
mod shard;
mod shard_compare;
mod thistle;
mod tvbd;
mod tvbd_v2;
mod untrusted;
