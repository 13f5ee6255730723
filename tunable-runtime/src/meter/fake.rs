//! # The fake meter, for tests only
//!
//! A meter of planted values, so that what is built on meters can be tested without a device:
//! a steady power, the counter's resolution, clocks, a counter that never moves, a meter that
//! fails. Not public API: [`for_cpu`](super::for_cpu) and `for_cuda_device` never return it,
//! and its name says what it is.

use super::{Clocks, Meter, NotMeasurable, Resolution, Sample};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A meter of planted values, for tests only.
///
/// By default a continuous energy counter at the planted power, from its creation: exact at
/// every read, no quantum, no update period, no stated accuracy.
#[derive(Debug)]
pub struct Fake {
    watts: f64,
    resolution: Resolution,
    clocks: Option<Clocks>,
    kind: Kind,
    /// Samples that succeed before every later one fails with `failure`.
    good_samples: usize,
    failure: Option<NotMeasurable>,
    samples: AtomicUsize,
    origin: Instant,
}

/// What the fake samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Energy,
    Power,
    Stalled,
}

impl Fake {
    /// A fake drawing `watts`.
    pub fn new(watts: f64) -> Fake {
        Fake {
            watts,
            resolution: Resolution {
                quantum: 0.0,
                update: Duration::ZERO,
                accuracy: None,
            },
            clocks: None,
            kind: Kind::Energy,
            good_samples: usize::MAX,
            failure: None,
            samples: AtomicUsize::new(0),
            origin: Instant::now(),
        }
    }

    /// The same with a counter of this resolution: it changes only every `update`, in steps
    /// of `quantum`, and states `accuracy`.
    pub fn with_resolution(self, resolution: Resolution) -> Fake {
        Fake { resolution, ..self }
    }

    /// The same reporting these clocks.
    pub fn with_clocks(self, clocks: Clocks) -> Fake {
        Fake {
            clocks: Some(clocks),
            ..self
        }
    }

    /// The same sampling its power instead of an energy counter.
    pub fn reading_power(self) -> Fake {
        Fake {
            kind: Kind::Power,
            ..self
        }
    }

    /// The same with a counter that never moves.
    pub fn stalled(self) -> Fake {
        Fake {
            kind: Kind::Stalled,
            ..self
        }
    }

    /// The same failing with `failure` after `good` samples.
    pub fn failing_after(self, good: usize, failure: NotMeasurable) -> Fake {
        Fake {
            good_samples: good,
            failure: Some(failure),
            ..self
        }
    }
}

impl Meter for Fake {
    fn name(&self) -> String {
        format!("fake meter at {} W (planted, for tests only)", self.watts)
    }

    fn resolution(&self) -> Resolution {
        self.resolution
    }

    fn sample(&self) -> Result<Sample, NotMeasurable> {
        if self.samples.fetch_add(1, Ordering::Relaxed) >= self.good_samples
            && let Some(failure) = &self.failure
        {
            return Err(failure.clone());
        }
        let mut seconds = self.origin.elapsed().as_secs_f64();
        let update = self.resolution.update.as_secs_f64();
        if update > 0.0 {
            seconds = (seconds / update).floor() * update;
        }
        let mut joules = self.watts * seconds;
        if self.resolution.quantum > 0.0 {
            joules = (joules / self.resolution.quantum).floor() * self.resolution.quantum;
        }
        Ok(match self.kind {
            Kind::Energy => Sample::Energy(joules),
            Kind::Power => Sample::Power(self.watts),
            Kind::Stalled => Sample::Energy(0.0),
        })
    }

    fn clocks(&self) -> Option<Clocks> {
        self.clocks
    }
}
