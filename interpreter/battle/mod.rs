//! Battles: a scenario read from TOML ([`scenario`]), army lists
//! ([`army`]), and the game loop ([`game`]: the phase graph played turn
//! by turn, with decisions taken by policies).
//!
//! Uses the stages before it.

pub mod army;
pub mod game;
pub mod scenario;
