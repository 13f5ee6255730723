//! # Evaluators
//!
//! How a study's configurations are evaluated. A study stores an [`EvaluatorSpec`]; each worker
//! [opens](EvaluatorSpec::open) it once into an [`Evaluator`], which turns each configuration
//! into the child process that evaluates it ([`ChildSpec`]). The worker runs that process (see
//! [`crate::child`]): a configuration that crashes or hangs its process costs that evaluation,
//! recorded failed with the reason, never the worker.
//!
//! A child answers on the last line of its standard output with an [`Answer`]:
//! `{"time_ms": 1.25}` or `{"failed": "reason"}`. The device it runs on is in `TUNABLE_DEVICE`.
//!
//! Two evaluators exist:
//!
//! - [`EvaluatorSpec::Harness`], the user's own tuning harness (`examples/tune.rs`, the one
//!   `cargo tunable tune` runs), built once per worker and run per evaluation in the runtime's
//!   [evaluate mode](tunable_runtime::tuner::evaluate): the kernel's call for the study's key
//!   measures exactly the asked configuration, as local tuning would (see [`crate::harness`]);
//! - [`EvaluatorSpec::Replay`], a Kernel Tuner cache replayed with sleeps of the recorded times,
//!   for tests and benchmarks (see [`crate::replay`]).

use crate::harness::{HarnessEvaluator, HarnessSpec, Trust};
use crate::replay::ReplayEvaluator;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub use crate::process::{ChildSpec, Evaluator, Launcher};
pub use tunable_runtime::tuner::evaluate::Answer;

/// How a study's configurations are evaluated; stored with the study as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EvaluatorSpec {
    /// Replays a Kernel Tuner cache: an evaluation sleeps the recorded time multiplied by
    /// `scale` and answers the recorded outcome (see [`crate::replay`]).
    Replay {
        /// The cache file, as every worker sees it (an absolute path on a shared file system).
        cache: PathBuf,
        /// Seconds slept per recorded second (1.0: real time).
        scale: f64,
    },
    /// Runs the user's tuning harness, a Cargo example of the kernel's crate built with its
    /// `autotune` feature, once per evaluation, in evaluate mode for the kernel's call with the
    /// study's key (see [`crate::harness`]).
    Harness(HarnessSpec),
}

impl EvaluatorSpec {
    /// Sets the evaluator up on this machine (e.g. loads the cache once); `launcher` starts the
    /// built-in child processes, and a harness study runs what `trust` allows: its prebuilt
    /// harness executables, else its own crate if inside an allowed folder
    /// ([`HarnessEvaluator::open`]). `Err` says why this machine cannot evaluate the study.
    pub fn open(&self, launcher: &Launcher, trust: &Trust) -> Result<Box<dyn Evaluator>, String> {
        match self {
            EvaluatorSpec::Replay { cache, scale } => Ok(Box::new(ReplayEvaluator::open(
                cache,
                *scale,
                launcher.clone(),
            )?)),
            EvaluatorSpec::Harness(h) => Ok(Box::new(HarnessEvaluator::open(h, trust)?)),
        }
    }

    /// A short description for status output.
    pub fn describe(&self) -> String {
        match self {
            EvaluatorSpec::Replay { cache, scale } => {
                format!("replay of {} (sleeps x{scale})", cache.display())
            }
            EvaluatorSpec::Harness(h) => format!(
                "harness example {} of {} ({}, key {})",
                h.example,
                h.manifest.display(),
                h.kernel,
                h.key
            ),
        }
    }
}
