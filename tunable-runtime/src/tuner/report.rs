//! # Evaluations
//!
//! What the tuner's evaluators report for one configuration: the [`Evaluated`] report the
//! driver tells the strategy, with what the tuner's journal, logs and summary need beside the
//! outcome.

use crate::measure::Timing;
use crate::meter::Clocks;
use tunable_search::strategy::{Evaluated, Outcome};

/// Where an evaluation's result comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultSource {
    /// Measured now, in this run.
    Measured,
    /// Answered by the journal of an earlier run, or by an earlier evaluation of this run.
    Recorded,
}

/// The result of evaluating one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Its time in milliseconds, or why it failed.
    pub result: Result<f64, String>,
    /// Whether it failed by panicking (while measured in this run).
    pub panicked: bool,
    /// Where the result comes from.
    pub source: ResultSource,
    /// The timed runs it got in this run, in milliseconds (empty when it failed, was answered
    /// by a record, or was measured by a closure that reports one time).
    pub runs: Vec<f64>,
    /// Whether its timing stopped early, clearly behind the incumbent: it cannot win.
    pub early: bool,
    /// What measuring it cost on the measuring thread, when the evaluator knows (a `#[tunable]`
    /// kernel's variants do; a record or a closure does not).
    pub cost: Option<Cost>,
    /// What one run used, when the tuning's objective needs energy and it was measured.
    pub energy: Option<EnergyUse>,
    /// The values of the tuning's objectives ([`Goal::values`](tunable_search::objective::Goal::values),
    /// as stated), set by the tuner ([`super::tune`]); empty until then, and when it failed.
    pub values: Vec<f64>,
    /// The value the strategy is told ([`Goal::told`](tunable_search::objective::Goal::told)),
    /// set by the tuner with [`values`](Self::values); `None` until then: its time.
    pub told: Option<f64>,
}

/// One configuration evaluated with the values of the tuning's objectives: a point of its
/// front.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Its position in the space.
    pub position: usize,
    /// Its time in milliseconds.
    pub ms: f64,
    /// The values of the objectives, as stated ([`Evaluation::values`]).
    pub values: Vec<f64>,
}

/// The energy one run of a configuration used: the mean power its repeated runs drew
/// ([`crate::meter::measure`]) times its time, the one it is ranked by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyUse {
    /// Joules per run.
    pub joules: f64,
    /// The mean power, in watts.
    pub watts: f64,
    /// The clocks in force, where the device reports them.
    pub clocks: Option<Clocks>,
}

impl Evaluation {
    /// The value the strategy is told: the tuning's ([`told`](Self::told)), else its time;
    /// `None` when it failed.
    pub fn value(&self) -> Option<f64> {
        let ms = *self.result.as_ref().ok()?;
        Some(self.told.unwrap_or(ms))
    }
}

/// What measuring one configuration cost: the wall time on the measuring thread (its checked
/// run, warm-ups and timed runs, the output's read-back and comparison; compilation waited for
/// excluded) and, of it, the kernels' own run time (as the evaluation context holds it, [`crate::evaluation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Wall time of the measurement in milliseconds.
    pub measure_ms: f64,
    /// The kernels' own time inside it, in milliseconds.
    pub kernel_ms: f64,
    /// Of it, reading the output back and comparing it with the expected one (`verify`), in
    /// milliseconds; 0 without `verify`.
    pub check_ms: f64,
}

impl Evaluation {
    /// A result measured now; a time that is not finite is a failure.
    pub fn measured(result: Result<f64, String>) -> Self {
        Evaluation {
            result: result.and_then(|t| {
                if t.is_finite() {
                    Ok(t)
                } else {
                    Err(format!("non-finite time {t}"))
                }
            }),
            panicked: false,
            source: ResultSource::Measured,
            runs: Vec::new(),
            early: false,
            cost: None,
            energy: None,
            values: Vec::new(),
            told: None,
        }
    }

    /// A result timed now by a [`Measurement`](crate::measure::Measurement), with its runs.
    pub fn timed(timing: Timing) -> Self {
        Evaluation {
            runs: timing.runs,
            early: timing.early,
            ..Evaluation::measured(Ok(timing.ms))
        }
    }

    /// A variant that panicked now, with the panic's message.
    pub fn panicked(message: &str) -> Self {
        Evaluation {
            result: Err(format!("panicked: {message}")),
            panicked: true,
            source: ResultSource::Measured,
            runs: Vec::new(),
            early: false,
            cost: None,
            energy: None,
            values: Vec::new(),
            told: None,
        }
    }

    /// A result answered from a record.
    pub fn recorded(result: Result<f64, String>) -> Self {
        Evaluation {
            result,
            panicked: false,
            source: ResultSource::Recorded,
            runs: Vec::new(),
            early: false,
            cost: None,
            energy: None,
            values: Vec::new(),
            told: None,
        }
    }
}

impl Evaluated for Evaluation {
    fn outcome(&self) -> Outcome {
        self.value().map_or(Outcome::Failed, Outcome::Value)
    }
}
