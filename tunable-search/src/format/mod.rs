//! # File formats
//!
//! The files tunable reads and writes, each owned by one module that both the writing and the
//! reading side use.

pub mod tuned;
