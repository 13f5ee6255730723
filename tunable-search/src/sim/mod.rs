//! # Simulation on recorded measurements
//!
//! Search strategies are compared on brute-forced Kernel Tuner caches instead of real GPUs: every
//! configuration of a space was measured once, so a "measurement" is a look-up and a run of a
//! strategy costs milliseconds.
//!
//! - [`KernelTunerCache`]: a Kernel Tuner cache file (also an unclosed one left by an interrupted
//!   run, or a T4 results file), read by [`crate::format::kernel_tuner`], whose types are
//!   re-exported here;
//! - [`Replay`]: an objective over a [`Space`](crate::Space) that answers from a cache;
//! - [`synthetic`]: the test functions of Luo et al., "Non-smooth Bayesian optimization in tuning scientific applications" (f3, f4, Bukin N.6) on grids, as replays;
//! - [`stress`]: generated landscapes of the kinds a new user brings (flat and periodic,
//!   heavy-tailed, plateaus, needles, near-optimal, noisy, failing), as replays;
//! - [`score`]: the methodology score (Section V-A of the paper below) against the exact expected
//!   best-so-far of random search, [`ScoreContext`].
//!
//! ```no_run
//! use tunable_search::sim::{KernelTunerCache, Replay, ScoreContext};
//!
//! let cache = KernelTunerCache::load("pnpoly_RTX_3090.json.gz")?;
//! let replay = Replay::new(&cache, None)?;
//! let ctx = ScoreContext::new(replay.values(), 220)?;
//! // A run is the objective values of the unique configurations a strategy evaluated, in order.
//! let run: Vec<Option<f64>> = (0..220).map(|p| replay.values()[p]).collect();
//! println!("score {:.3}", ctx.score_run(&run));
//! # Ok::<(), tunable_search::sim::SimError>(())
//! ```
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section V-A.
//! - F.-J. Willemsen, R. Schoonhoven, J. Filipovič, J. O. Tørring, R. van Nieuwpoort,
//!   B. van Werkhoven, "A methodology for comparing optimization algorithms for auto-tuning",
//!   FGCS 2024.

mod replay;
pub mod score;
pub mod stress;
pub mod synthetic;

pub use crate::format::kernel_tuner::{CacheEntry, KernelTunerCache, Observation};
pub use replay::Replay;
pub use score::{MedianOf, ScoreContext, ScoreOptions, random_baseline};
pub use synthetic::Synthetic;

use crate::SpaceError;
use crate::format::kernel_tuner::CacheError;

/// Why a cache could not be read, replayed or scored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A cache file could not be read.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The cache's parameters cannot form a space (or the space to replay over is unusable).
    /// Boxed: a [`SpaceError`] is large.
    #[error(transparent)]
    Space(Box<SpaceError>),
    /// The space to replay over and the cache have different parameters.
    #[error("the space's parameters {space:?} differ from the cache's {cache:?}")]
    ParamMismatch {
        /// The space's parameter names.
        space: Vec<String>,
        /// The cache's parameter names.
        cache: Vec<String>,
    },
    /// A valid configuration of the space has no record in the cache.
    #[error(
        "configuration {config} of the space is not in the cache ({missing} configurations missing)"
    )]
    MissingConfig {
        /// The first missing configuration, as `name=value` pairs.
        config: String,
        /// How many configurations are missing in all.
        missing: usize,
    },
    /// Scoring needs at least one valid (finite) objective value.
    #[error("no configuration has a valid objective value")]
    NoValidValue,
    /// The baseline never differs from the optimum over the scored range: no score is defined.
    #[error(
        "degenerate objective: the random-search baseline equals the optimum {optimum} over t = {t_start}..={budget}"
    )]
    Degenerate {
        /// The optimum.
        optimum: f64,
        /// First scored evaluation.
        t_start: usize,
        /// Last scored evaluation.
        budget: usize,
    },
    /// A stress landscape's spec is malformed or cannot be built.
    #[error("bad stress landscape '{spec}': {message}")]
    BadLandscape {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// A scoring option out of its range.
    #[error("bad score option: {message}")]
    BadOption {
        /// Which option and why.
        message: String,
    },
}

impl From<SpaceError> for SimError {
    fn from(e: SpaceError) -> Self {
        SimError::Space(Box::new(e))
    }
}
