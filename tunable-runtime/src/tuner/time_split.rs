//! # Where the time of a tuning goes
//!
//! [`TimeSplit`] splits the wall time of a tuning into compilation (what the backends report with
//! [`report_compile_time`](crate::measure::report_compile_time)), measurement (the rest of the
//! time inside the evaluator: the runs, their checks, the confirmation), the strategy (inside
//! `ask` and `tell`) and everything else (the journal, the store, the driver's bookkeeping), so
//! that the four add up to the wall time. Inside the measurement, [`TimeSplit::kernels`] is the
//! kernels' own run time: what the measurement costs beyond it is its overhead. Both come from
//! the evaluation context ([`crate::evaluation`]) installed around the work. The progress bar
//! shows the split while the tuning runs ([`TimeSplit::live`]), the
//! [`Summary`](super::Summary) line at the end.

use crate::evaluation;
use std::cell::Cell;
use std::fmt;
use std::time::Instant;
use tunable_search::strategy::Evaluator;

/// Seconds of a tuning's wall time by where they went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimeSplit {
    /// Compiling variants.
    pub compile: f64,
    /// Running, checking and timing variants.
    pub measure: f64,
    /// Inside the strategy's `ask` and `tell`.
    pub strategy: f64,
    /// The rest of the wall time.
    pub other: f64,
    /// Of `measure`, the kernels' own run time: every launch's device time (the verification
    /// run, warm-ups, timed runs, re-timings), or the wall time of a CPU kernel's timed runs.
    /// Not part of [`total`](Self::total): it is inside `measure`.
    pub kernels: f64,
}

thread_local! {
    /// The tuning running on this thread, so far.
    static LIVE: Cell<TimeSplit> = const { Cell::new(TimeSplit { compile: 0.0, measure: 0.0, strategy: 0.0, other: 0.0, kernels: 0.0 }) };
}

impl TimeSplit {
    /// The total: the wall time it splits.
    pub fn total(&self) -> f64 {
        self.compile + self.measure + self.strategy + self.other
    }

    /// Evaluations per minute of wall time, for `evaluations` in `total()` seconds.
    pub fn per_minute(&self, evaluations: usize) -> f64 {
        let t = self.total();
        if t > 0.0 {
            evaluations as f64 * 60.0 / t
        } else {
            0.0
        }
    }

    /// `self` with `other` set so that the total is `wall` seconds (never below zero).
    pub fn with_wall(mut self, wall: f64) -> Self {
        self.other = (wall - self.compile - self.measure - self.strategy).max(0.0);
        self
    }

    /// The split of the tuning running on this thread so far (as [`tune`](super::tune) keeps
    /// it after each batch; `other` holds what is not known yet).
    pub fn live() -> TimeSplit {
        LIVE.get()
    }

    pub(super) fn set_live(spent: TimeSplit) {
        LIVE.set(spent);
    }

    /// The time since `start` spent running variants on this thread: the compile time the
    /// backends reported to the evaluation context installed here since it was last taken, and
    /// the rest as measurement. Takes the context's compile and kernel time (none installed:
    /// all of it is measurement).
    pub fn since(start: Instant) -> TimeSplit {
        let (compile, kernel_ms) = evaluation::with(|c| {
            (
                std::mem::take(&mut c.compile_s),
                std::mem::take(&mut c.kernel_ms),
            )
        })
        .unwrap_or_default();
        let measure = (start.elapsed().as_secs_f64() - compile).max(0.0);
        TimeSplit {
            compile,
            measure,
            kernels: (kernel_ms / 1e3).min(measure),
            ..TimeSplit::default()
        }
    }

    /// The measurement's overhead: `measure` less the kernels' own time.
    pub fn overhead(&self) -> f64 {
        (self.measure - self.kernels).max(0.0)
    }

    /// `self` and `more` added bucket by bucket.
    pub fn plus(self, more: TimeSplit) -> TimeSplit {
        TimeSplit {
            compile: self.compile + more.compile,
            measure: self.measure + more.measure,
            strategy: self.strategy + more.strategy,
            other: self.other + more.other,
            kernels: self.kernels + more.kernels,
        }
    }
}

/// An evaluator with a stopwatch: the time of each batch goes to `compile` (as the backends
/// report it) and `measure` (the rest), kept in [`TimeSplit::live`] after each batch.
pub(super) struct Timed<'e, E: ?Sized> {
    pub(super) inner: &'e mut E,
    pub(super) split: TimeSplit,
}

impl<E: Evaluator + ?Sized> Evaluator for Timed<'_, E> {
    type Report = E::Report;
    type Error = E::Error;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<E::Report>, E::Error> {
        let start = Instant::now();
        let r = self.inner.evaluate(positions);
        self.split = self.split.plus(TimeSplit::since(start));
        TimeSplit::set_live(self.split);
        r
    }

    fn prepare(&mut self, likely: &[usize]) {
        let start = Instant::now();
        self.inner.prepare(likely);
        self.split = self.split.plus(TimeSplit::since(start));
    }
}

impl fmt::Display for TimeSplit {
    /// `compile 12.3 s, measure 4.0 s, strategy 0.1 s, other 0.4 s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "compile {:.1} s, measure {:.1} s, strategy {:.1} s, other {:.1} s",
            self.compile, self.measure, self.strategy, self.other
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_up_to_the_wall_time() {
        let s = TimeSplit {
            compile: 6.0,
            measure: 2.0,
            strategy: 0.5,
            other: 0.0,
            kernels: 0.5,
        }
        .with_wall(10.0);
        assert_eq!(s.overhead(), 1.5);
        assert_eq!(s.other, 1.5);
        assert_eq!(s.total(), 10.0);
        assert_eq!(s.per_minute(50), 300.0);
        assert_eq!(
            s.to_string(),
            "compile 6.0 s, measure 2.0 s, strategy 0.5 s, other 1.5 s"
        );
        assert_eq!(TimeSplit::default().per_minute(3), 0.0);
    }
}
