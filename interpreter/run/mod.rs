//! Running compiled rules: the [`world::World`] of units, facts and
//! states, where units stand ([`field`], on the geometry of
//! [`battlefield`]), dice ([`dice`]: pools, faces, exact distributions),
//! the evaluator ([`eval`]) and its faster tiers ([`closures`], then
//! [`bytecode`]: typed, then machine code), whole procedures
//! ([`procedures`]) and rhai hooks ([`hooks`]); and the odds engine
//! ([`odds`]: a procedure specialised to a situation, then walked exactly
//! over the dice or sampled), which situations and policies both ask.
//!
//! Uses [`crate::base`], [`crate::front`] and [`crate::compile`].

pub mod battlefield;
pub mod bytecode;
pub mod chance;
pub mod closures;
pub mod dice;
pub mod eval;
pub mod field;
pub mod hooks;
pub mod nearness;
pub mod odds;
pub mod procedures;
pub mod rolling;
pub mod world;
