//! # Measurement
//!
//! How one configuration is timed: a few warm-up runs, then repeated timed runs reduced to a
//! robust statistic, the median of the samples inside Tukey's fences (`[Q1 - 1.5 IQR,
//! Q3 + 1.5 IQR]`), so that a run disturbed by the OS does not decide a tuning.
//!
//! ## Device time
//!
//! A GPU kernel's time is the time between two events on the device, not the wall-clock time of
//! the host code that launched it (which adds compilation on a cache miss, argument setup, the
//! launch latency and the wait). The backends ([`crate::backend`]) report the event-measured
//! duration of every launch with [`report_device_time`]; [`time_once`], which every measurement
//! goes through, prefers the device time reported during a run over the wall clock. A run that
//! launches several kernels is timed as the sum of their device times; a run that reports
//! nothing (a CPU kernel) is timed by the wall clock.
//!
//! ## The tuner's measurement
//!
//! The tuner times every variant through the [`Measurement`] trait; [`Repeats`] is the one it
//! uses, with the `warmup` and `repeats` of `#[tunable]` and a cutoff for hopeless variants.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    /// Device time reported on this thread since the current run started, in milliseconds.
    static DEVICE_MS: Cell<Option<f64>> = const { Cell::new(None) };
}

/// Reports `ms` milliseconds of device time for the work running on this thread (added to what
/// the run reported before). GPU backends call it once per launch with the time between the
/// launch's start and end events; user code normally never does.
pub fn report_device_time(ms: f64) {
    DEVICE_MS.with(|d| d.set(Some(d.get().unwrap_or(0.0) + ms)));
}

/// Runs `work` once and returns its time in milliseconds: the device time it reported through
/// [`report_device_time`] if it reported any, else its wall-clock time.
pub fn time_once(work: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
    DEVICE_MS.with(|d| d.set(None));
    let t = Instant::now();
    let r = work();
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let device = DEVICE_MS.with(Cell::take);
    r.map(|()| device.unwrap_or(wall))
}

/// Times a re-runnable piece of work: the tuner measures every variant through one.
///
/// `best` is the best time measured so far in this tuning (`f64::INFINITY` before the first):
/// a measurement may stop timing work that cannot beat it, which is how very slow variants cost
/// one run instead of many ([`Repeats::cutoff`]).
pub trait Measurement {
    /// Runs `work` as often as the measurement needs and returns its time in milliseconds, or the
    /// reason the work failed.
    fn measure(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
    ) -> Result<f64, String>;
}

/// The tuner's measurement: `warmup` untimed runs, then up to `repeats` timed ones, each timed by
/// [`time_once`] (the device time a GPU backend reports, else the wall clock), reduced with
/// [`robust_median`]. A variant whose first timed run is more than `cutoff` times the best time
/// so far is not timed again: it cannot win.
///
/// ```
/// use tunable_runtime::measure::{Measurement, Repeats};
///
/// let mut runs = 0;
/// let mut m = Repeats { warmup: 1, repeats: 5, cutoff: 20.0 };
/// let t = m.measure(&mut || { runs += 1; Ok(()) }, f64::INFINITY).unwrap();
/// assert!(t >= 0.0);
/// assert_eq!(runs, 6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Repeats {
    /// Untimed runs first (default 1).
    pub warmup: u32,
    /// Timed runs (at least 1; default 7).
    pub repeats: u32,
    /// How many times slower than the best so far a first timed run may be and still be timed
    /// again (default 20; `f64::INFINITY` times every run).
    pub cutoff: f64,
}

impl Default for Repeats {
    fn default() -> Self {
        Repeats {
            warmup: tunable_search::defaults::WARMUP,
            repeats: tunable_search::defaults::REPEATS,
            cutoff: 20.0,
        }
    }
}

impl Measurement for Repeats {
    fn measure(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
    ) -> Result<f64, String> {
        for _ in 0..self.warmup {
            work()?;
        }
        let mut samples = Vec::with_capacity(self.repeats.max(1) as usize);
        for i in 0..self.repeats.max(1) {
            samples.push(time_once(work)?);
            if i == 0 && samples[0] > self.cutoff * best {
                break;
            }
        }
        Ok(robust_median(&mut samples))
    }
}

/// The median of the samples inside Tukey's fences (all samples if fewer than 4).
pub fn robust_median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n == 0 {
        return f64::NAN;
    }
    if n < 4 {
        return median_sorted(samples);
    }
    let (q1, q3) = (
        quantile_sorted(samples, 0.25),
        quantile_sorted(samples, 0.75),
    );
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let kept: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|&x| x >= lo && x <= hi)
        .collect();
    median_sorted(&kept)
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    let pos = q * (s.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < s.len() {
        s[i] * (1.0 - f) + s[i + 1] * f
    } else {
        s[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outliers_do_not_move_the_median() {
        let mut s = vec![10.0, 10.2, 9.9, 10.1, 10.0, 95.0, 10.05];
        assert!((robust_median(&mut s) - 10.025).abs() < 1e-9);
        assert_eq!(robust_median(&mut [3.0, 1.0]), 2.0);
        assert!(robust_median(&mut []).is_nan());
    }

    #[test]
    fn repeats_run_warmup_and_repeats_cut_losers_and_propagate_failure() {
        let mut calls = 0;
        let mut m = Repeats {
            warmup: 2,
            repeats: 3,
            cutoff: 20.0,
        };
        let mut work = || {
            calls += 1;
            Ok(())
        };
        assert!(m.measure(&mut work, f64::INFINITY).unwrap() >= 0.0);
        assert_eq!(calls, 5);
        // 2 ms against a best of 0.01 ms: one timed run, not three.
        let mut calls = 0;
        let mut slow = || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
            Ok(())
        };
        assert!(m.measure(&mut slow, 0.01).unwrap() >= 2.0);
        assert_eq!(calls, 3);
        let e = Repeats::default().measure(&mut || Err("wrong output".into()), 1.0);
        assert_eq!(e, Err("wrong output".to_owned()));
    }

    #[test]
    fn reported_device_time_wins_over_the_wall_clock_and_adds_up() {
        let t = time_once(&mut || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            report_device_time(0.25);
            report_device_time(0.5);
            Ok(())
        });
        assert_eq!(t, Ok(0.75));
        // The next run starts from nothing: a run that reports nothing is wall-clock timed.
        let t = time_once(&mut || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(())
        })
        .unwrap();
        assert!(t >= 5.0, "{t}");
        // A failing run reports its reason, not a time, and leaves nothing behind.
        let e = time_once(&mut || {
            report_device_time(1.0);
            Err("launch failed".into())
        });
        assert_eq!(e, Err("launch failed".to_owned()));
        assert_eq!(time_once(&mut || Ok(())).map(|t| t < 1.0), Ok(true));
    }
}
