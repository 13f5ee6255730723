//! # The process of one evaluation
//!
//! What every evaluator shares with the worker that runs it: an [`Evaluator`] turns a
//! configuration into the [`ChildSpec`] of the process that evaluates it, and a [`Launcher`] says
//! how the worker's own binary runs a built-in task in such a process. Which evaluators exist
//! and how a study names them is in [`crate::evaluator`]; running the process is
//! [`crate::child`].

use std::ffi::OsString;
use std::path::PathBuf;
use tunable_search::Value;

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
    /// Environment variables set for it, beside `TUNABLE_DEVICE`.
    pub env: Vec<(OsString, OsString)>,
    /// Its working folder (default: the worker's).
    pub dir: Option<PathBuf>,
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
