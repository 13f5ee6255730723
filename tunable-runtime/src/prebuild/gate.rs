//! # How many builds the prebuild pool runs at once
//!
//! A compiler need not build faster on more threads (NVRTC may not), and where it does not, a
//! pool as wide as the machine only queues the build the tuner waits for behind speculative
//! ones, each slowed by the others.
//!
//! [`Gate`] finds the width that pays by measuring it: it lets one build run at a time, then
//! doubles the width while the builds' throughput at the new width (completed builds over the
//! time they took, counted while builds were waiting) is at least [`GAIN`] times that at the
//! last one; at the first width that does not pay it goes back to the last and stays there.

/// Completions timed at a width before it is judged.
const SAMPLES: usize = 4;

/// The throughput a doubled width must reach, relative to the last width's, to be kept.
const GAIN: f64 = 1.25;

/// The number of builds a pool lets run at once, found by measuring: one at first, doubled
/// while the builds' throughput at the doubled width is at least 1.25 times the last width's,
/// then kept. Public so that the simulation of the pool (`cargo tunable bench --cost-model`) runs
/// the tuner's own rule.
#[derive(Debug)]
pub struct Gate {
    /// Builds allowed to run at once.
    limit: usize,
    /// The pool's threads: the widest the gate opens.
    max: usize,
    /// Builds running now.
    running: usize,
    /// Whether the width is found.
    settled: bool,
    /// The completion that opened the current window (its time in seconds) and the completions
    /// since.
    window: Option<(f64, usize)>,
    /// The last width judged and its throughput (builds per second).
    last: Option<(usize, f64)>,
}

impl Gate {
    /// A gate for a pool of `max` threads, letting one build run at a time at first.
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Gate {
            limit: 1,
            max,
            running: 0,
            settled: max == 1,
            window: None,
            last: None,
        }
    }

    /// Whether another build may start now.
    pub fn open(&self) -> bool {
        self.running < self.limit
    }

    /// A build starts.
    pub fn enter(&mut self) {
        self.running += 1;
    }

    /// A build is done at `now` (seconds on any clock that only goes forward); `waiting` says
    /// whether builds are waiting to start. A window in which the pool ran out of builds says
    /// nothing about its width, and is started again.
    pub fn leave(&mut self, now: f64, waiting: bool) {
        self.running = self.running.saturating_sub(1);
        if self.settled {
            return;
        }
        if !waiting {
            self.window = None;
            return;
        }
        let Some((start, done)) = self.window else {
            self.window = Some((now, 0));
            return;
        };
        if done + 1 < SAMPLES {
            self.window = Some((start, done + 1));
            return;
        }
        self.window = None;
        let throughput = SAMPLES as f64 / (now - start).max(1e-9);
        match self.last {
            Some((width, last)) if throughput < GAIN * last => {
                self.limit = width;
                self.settled = true;
            }
            _ if self.limit >= self.max => self.settled = true,
            _ => {
                self.last = Some((self.limit, throughput));
                self.limit = (self.limit * 2).min(self.max);
            }
        }
    }

    /// Builds allowed to run at once now.
    pub fn width(&self) -> usize {
        self.limit
    }

    /// Whether the width is found.
    #[cfg(test)]
    pub(crate) fn settled(&self) -> bool {
        self.settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a saturated pool through `gate`, builds completing at `rate(width)` per second,
    /// until the gate settles; returns its width.
    fn settle(mut gate: Gate, rate: impl Fn(usize) -> f64) -> usize {
        let mut now = 0.0;
        for _ in 0..500 {
            if gate.settled() {
                return gate.width();
            }
            while gate.open() {
                gate.enter();
            }
            now += 1.0 / rate(gate.width());
            gate.leave(now, true);
        }
        panic!("the gate never settled: {gate:?}");
    }

    #[test]
    fn a_compiler_that_scales_gets_every_thread() {
        assert_eq!(settle(Gate::new(16), |w| 10.0 * w as f64), 16);
        assert_eq!(settle(Gate::new(12), |w| 10.0 * w as f64), 12);
        assert_eq!(settle(Gate::new(1), |w| 10.0 * w as f64), 1);
    }

    #[test]
    fn a_serialized_compiler_gets_one_build_at_a_time() {
        assert_eq!(settle(Gate::new(16), |_| 50.0), 1);
    }

    #[test]
    fn the_width_stops_where_throughput_stops_growing() {
        // Four cores' worth of throughput (a CPU quota of four, say) on a pool of 16.
        assert_eq!(settle(Gate::new(16), |w| 20.0 * w.min(4) as f64), 4);
        // A gain below GAIN does not pay: 1.2 times the throughput at twice the width.
        assert_eq!(
            settle(Gate::new(16), |w| if w >= 2 { 12.0 } else { 10.0 }),
            1
        );
    }

    #[test]
    fn a_pool_that_runs_dry_judges_nothing() {
        let mut gate = Gate::new(8);
        assert!(gate.open());
        gate.enter();
        assert!(!gate.open(), "one at a time at first");
        // Completions with nothing waiting (a slow tuning's guesses) never widen the pool.
        for i in 0..50 {
            gate.leave(f64::from(i) * 0.01, false);
            gate.enter();
        }
        assert_eq!(gate.width(), 1);
        // Saturated, a scaling compiler widens it.
        for i in 0..=SAMPLES {
            gate.leave(1.0 + i as f64 * 0.01, true);
            gate.enter();
        }
        assert_eq!(gate.width(), 2);
    }
}
