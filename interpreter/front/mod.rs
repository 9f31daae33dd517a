//! The front: from text to syntax trees. Reading files
//! ([`source`]: the files a ruleset may read, and only those), the nesting
//! scan that refuses too-deep texts before the grammar runs ([`nesting`]),
//! the pest grammar and the tree builder ([`parse`]), the trees
//! ([`syntax`]), following `extends` and `import` into one merged ruleset
//! ([`load`]), and the diagnostics every stage reports with
//! ([`diagnostic`]); the parse cache on disk that lets a ruleset read
//! before skip the grammar ([`cache`]).
//!
//! Uses [`crate::base`] only.

pub mod cache;
pub mod diagnostic;
pub mod load;
pub mod nesting;
pub mod parse;
pub mod source;
pub mod syntax;
