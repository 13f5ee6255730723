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
//! Today's evaluator is [`EvaluatorSpec::Replay`], a Kernel Tuner cache replayed with sleeps of the
//! recorded times, for tests and benchmarks. The user's own tuning harness is another variant of
//! the same enum (with its [`Evaluator`] implementation), added without touching the worker.

use crate::replay::ReplayEvaluator;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;
use tunable_search::Value;

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
}

impl EvaluatorSpec {
    /// Sets the evaluator up on this machine (e.g. loads the cache once); `launcher` starts the
    /// built-in child processes. `Err` says why this machine cannot evaluate the study.
    pub fn open(&self, launcher: &Launcher) -> Result<Box<dyn Evaluator>, String> {
        match self {
            EvaluatorSpec::Replay { cache, scale } => Ok(Box::new(ReplayEvaluator::open(
                cache,
                *scale,
                launcher.clone(),
            )?)),
        }
    }

    /// A short description for status output.
    pub fn describe(&self) -> String {
        match self {
            EvaluatorSpec::Replay { cache, scale } => {
                format!("replay of {} (sleeps x{scale})", cache.display())
            }
        }
    }
}

/// Turns configurations into the processes that evaluate them, on a worker.
pub trait Evaluator: Send + Sync {
    /// The process evaluating `config` (each parameter's name and value, in the space's order).
    /// `Err(reason)`: the configuration fails without running (recorded failed).
    fn child(&self, config: &[(String, Value)]) -> Result<ChildSpec, String>;
}

/// A process to run for one evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildSpec {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// What to write to its standard input.
    pub stdin: Vec<u8>,
}

/// How the worker's own binary runs a built-in task in a child process: the program and the
/// leading arguments of the hidden command that calls [`crate::task::serve`] (for
/// `cargo-tunable`: itself, `tunable __evaluate`).
#[derive(Clone, Debug, PartialEq)]
pub struct Launcher {
    /// The program (usually `std::env::current_exe()`).
    pub program: OsString,
    /// Arguments before the task, e.g. `["tunable", "__evaluate"]`.
    pub args: Vec<OsString>,
}

/// What a child process answers on its last line of standard output.
///
/// ```
/// use tunable_distributed::Answer;
/// let ok: Answer = serde_json::from_str(r#"{"time_ms": 1.5}"#).unwrap();
/// assert_eq!(ok, Answer::Time { time_ms: 1.5 });
/// let bad: Answer = serde_json::from_str(r#"{"failed": "wrong output"}"#).unwrap();
/// assert_eq!(bad.into_result(), Err("wrong output".to_owned()));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    /// The configuration's time in milliseconds.
    Time {
        /// Milliseconds.
        time_ms: f64,
    },
    /// The configuration failed.
    Failed {
        /// Why.
        failed: String,
    },
}

impl Answer {
    /// The time, or the failure's reason (a time that is not a finite number is a failure).
    pub fn into_result(self) -> Result<f64, String> {
        match self {
            Answer::Time { time_ms } if time_ms.is_finite() => Ok(time_ms),
            Answer::Time { time_ms } => Err(format!("non-finite time {time_ms}")),
            Answer::Failed { failed } => Err(failed),
        }
    }
}
