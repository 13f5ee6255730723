//! # The fake meter, for tests only
//!
//! A meter of planted values, so that what is built on meters can be tested without a device:
//! a steady power, the counter's resolution, clocks, a counter that never moves, a meter that
//! fails. Not public API: [`for_cpu`](super::for_cpu) and `for_cuda_device` never return it,
//! and its name says what it is.

use super::{Clocks, Meter, NotMeasurable, Resolution, Sample};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A meter of planted values, for tests only.
///
/// By default a continuous energy counter at the planted power, from its creation: exact at
/// every read, no quantum, no update period, no stated accuracy. Like a real counter it runs
/// on the wall clock, so a window's power from it is as exact as the timing of the ticks the
/// window saw, which a loaded machine delays.
///
/// Read as a power instead ([`reading_power`](Fake::reading_power)), every sample answers the
/// planted power of the moment, whenever it is taken: a window open while one power is
/// planted reads that power exactly. Tests that assert exact figures of a tuning read it so,
/// the kernel planting its configuration's power ([`set_watts`](Fake::set_watts)) and its
/// device time (`report_device_time`), from which the tuner's energy follows.
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
    /// The power drawn from a moment on ([`set_watts`](Fake::set_watts)).
    level: Mutex<Level>,
    /// A failure every sample answers until it is lifted ([`set_failure`](Fake::set_failure)).
    planted_failure: Mutex<Option<NotMeasurable>>,
}

/// The fake's power since a moment, and its counter then.
#[derive(Clone, Copy, Debug)]
struct Level {
    watts: f64,
    /// Seconds after the origin.
    since: f64,
    /// The counter then, in joules.
    joules: f64,
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
            level: Mutex::new(Level {
                watts,
                since: 0.0,
                joules: 0.0,
            }),
            planted_failure: Mutex::new(None),
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

    /// Draws `watts` from now on: the counter goes on from where it is, at the new slope (a
    /// test whose planted power depends on the configuration sets it from the kernel's body).
    /// The power it draws already changes nothing.
    pub fn set_watts(&self, watts: f64) {
        let now = self.origin.elapsed().as_secs_f64();
        let mut level = self.level.lock().unwrap_or_else(|e| e.into_inner());
        if level.watts == watts {
            return;
        }
        *level = Level {
            watts,
            since: now,
            joules: level.joules + level.watts * (now - level.since).max(0.0),
        };
    }

    /// Every sample fails with `failure` from now on, until it is lifted with `None`.
    pub fn set_failure(&self, failure: Option<NotMeasurable>) {
        *self
            .planted_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = failure;
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
        if let Some(failure) = &*self
            .planted_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
        {
            return Err(failure.clone());
        }
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
        let level = *self.level.lock().unwrap_or_else(|e| e.into_inner());
        let mut joules = level.joules + level.watts * (seconds - level.since).max(0.0);
        if self.resolution.quantum > 0.0 {
            joules = (joules / self.resolution.quantum).floor() * self.resolution.quantum;
        }
        Ok(match self.kind {
            Kind::Energy => Sample::Energy(joules),
            Kind::Power => Sample::Power(level.watts),
            Kind::Stalled => Sample::Energy(0.0),
        })
    }

    fn clocks(&self) -> Option<Clocks> {
        self.clocks
    }
}
