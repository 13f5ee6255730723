//! # tunable-search
//!
//! The search side of the tunable auto-tuner. Nothing here touches a device; everything is
//! deterministic for a seed. The runtime (`tunable-runtime`) measures on the device and drives
//! these strategies; `cargo tunable bench` replays recorded measurements through the same loop.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`space`] | search spaces: typed parameters, constraints solved into the valid configurations, neighbours, samples, T1 / spaces-JSON files |
//! | [`expr`] | the constraint expression language (Python's and Rust's operators, Python's semantics) |
//! | [`strategy`] | the [`Strategy`](strategy::Strategy) ask/tell trait, every search strategy, and [`drive`](strategy::drive), the loop that runs one |
//! | [`bayes`] | Bayesian optimization (the `bayes` strategy, the default `auto`): Gaussian processes, acquisitions, feasibility |
//! | [`sim`] | simulation on recorded measurements: replays of Kernel Tuner caches, synthetic functions, the methodology score |
//! | [`format`](mod@format) | file formats: Kernel Tuner caches and the tuned-configuration file, each read and written in one place |
//! | [`portable`] | configurations for devices nobody tuned on: the greedy cover of the tuned devices' best configurations |
//! | [`clock`] | clock parameters: Kernel Tuner's names for the GPU clocks and power limit tuned as parameters, and what a configuration asks of the device |
//! | [`defaults`] | the defaults of `#[tunable]`'s options, shared by the attribute and the runtime |
//! | [`fingerprint`] | the stable hash behind the body fingerprint and the journal's name |
//! | [`name`] | the rule for kernel names, which become file names |
//! | [`suggest`] | "did you mean" suggestions for misspelled names |
//! | [`error`] | [`SpaceError`], why a space could not be built or loaded |
//!
//! Feature `search` (on by default) holds the search engine: [`strategy`], [`bayes`], [`sim`],
//! the Kernel Tuner caches of [`format`](mod@format) and the random samples of [`space`], with
//! their dependencies (rand, rayon, nalgebra, flate2). Without it remain the spaces, the
//! constraint language, the tuned-file format and [`portable`] (std only: the macro computes the
//! portable sets it bakes): what a shipped build of a user's crate and the `#[tunable]`
//! attribute need, cheap to compile.
//!
//! ```
//! use tunable_search::space::SpaceBuilder;
//!
//! let space = SpaceBuilder::new()
//!     .param("block_size_x", [32, 64, 128, 256])
//!     .param("tile", [1, 2, 4])
//!     .constraint("block_size_x * tile <= 512")
//!     .build()
//!     .unwrap();
//! assert_eq!(space.len(), 11);
//! ```

#[cfg(feature = "search")]
pub mod bayes;
pub mod clock;
pub mod defaults;
pub mod error;
pub mod expr;
pub mod fingerprint;
pub mod format;
mod mix;
pub mod name;
pub mod objective;
pub mod pareto;
pub mod portable;
#[cfg(feature = "search")]
pub mod sim;
pub mod space;
#[cfg(feature = "search")]
pub mod strategy;
pub mod suggest;

pub use error::SpaceError;
pub use space::{Space, SpaceBuilder, Value};
