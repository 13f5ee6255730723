//! # Why energy cannot be measured
//!
//! A meter that cannot read says why, as data the caller can show: an objective that needs
//! energy fails before any evaluation with this reason, instead of tuning on zeros.

use std::path::PathBuf;
use std::time::Duration;

/// Why no energy reading can be taken here. Its message starts with `not measurable here:`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NotMeasurable {
    /// The library the meter reads through does not load.
    #[error("not measurable here: cannot load {library} ({hint})")]
    MissingLibrary {
        /// The library looked for (`libnvidia-ml.so.1`).
        library: &'static str,
        /// The loader's answer, and what provides the library.
        hint: String,
    },
    /// No such device, or the meter's library does not know it.
    #[error("not measurable here: {what}")]
    NoDevice {
        /// Which device, and the library's answer.
        what: String,
    },
    /// The device has no counter the meter can read, or its counter is not the device's alone.
    #[error("not measurable here: {meter} {what}")]
    Unsupported {
        /// The meter.
        meter: String,
        /// What is missing.
        what: String,
    },
    /// The counters are not there.
    #[error("not measurable here: {path} does not exist ({hint})")]
    Absent {
        /// Where they were looked for.
        path: PathBuf,
        /// Why they may be missing.
        hint: String,
    },
    /// The counters are there but this process may not read them.
    #[error("not measurable here: {path} is not readable ({hint})")]
    NoPermission {
        /// The file.
        path: PathBuf,
        /// Who may read it, and how to get the right.
        hint: String,
    },
    /// A read failed.
    #[error("not measurable here: {meter}: {call} failed: {reason}")]
    Failed {
        /// The meter.
        meter: String,
        /// The call or file.
        call: String,
        /// Its answer.
        reason: String,
    },
    /// The counter did not change during a whole window: a zero would be a guess.
    #[error("not measurable here: {meter} did not change in {waited:?}")]
    Stalled {
        /// The meter.
        meter: String,
        /// How long it was watched.
        waited: Duration,
    },
    /// The window was too short to hold two updates of the counter after its first update
    /// period.
    #[error(
        "not measurable here: {meter} updates about every {update:?}; a window of {window:?} \
         held {ticks} update(s) to measure between (2 needed)"
    )]
    TooShort {
        /// The meter.
        meter: String,
        /// Its update period.
        update: Duration,
        /// The window's length.
        window: Duration,
        /// The updates seen in the window, after its first update period.
        ticks: usize,
    },
}

/// Why [`measure`](super::measure) returned no energy: the meter, or the work.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// The meter could not read.
    #[error(transparent)]
    NotMeasurable(#[from] NotMeasurable),
    /// A run of the work failed, with its message.
    #[error("{0}")]
    Run(String),
}
