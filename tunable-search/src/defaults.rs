//! # Defaults of the `#[tunable]` attribute
//!
//! What a kernel gets for an option it does not set. The macro writes these into the generated
//! code, and the runtime's own options start from them, so the two cannot disagree. The
//! attribute's reference (the documentation of `tunable::tunable`) states the same values, which a
//! test of `tunable-macros` checks.
//!
//! ```
//! use tunable_search::defaults;
//!
//! assert_eq!((defaults::BUDGET, defaults::STRATEGY), (100, "auto"));
//! assert_eq!((defaults::WARMUP, defaults::REPEATS), (1, 7));
//! assert_eq!(defaults::SEED, 1);
//! ```

/// Evaluations per tuning (`budget`).
pub const BUDGET: usize = 100;

/// The strategy spec (`strategy`): `auto` stands for [`crate::strategy::AUTO`].
pub const STRATEGY: &str = "auto";

/// Timed runs per configuration (`repeats`).
pub const REPEATS: u32 = 7;

/// Untimed runs of each configuration before the timed ones (`warmup`).
pub const WARMUP: u32 = 1;

/// The seed of the strategy (`seed`): two tunings of a kernel with the same seed ask for the
/// same configurations in the same order, apart from what timing noise changes in their results.
pub const SEED: u64 = 1;

/// The element-wise tolerance of `verify` (`tolerance`), relative to `max(1, |expected|)`.
pub const TOLERANCE: f64 = 1e-4;
