//! What every stage computes with: the values rules produce
//! ([`value::Value`]) and the one seeded, value-stable generator
//! ([`rng::Rng`]).
//!
//! Uses nothing else of the crate.

pub mod alloc;
pub mod rng;
pub mod value;
