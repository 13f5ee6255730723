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
//! uses, with the `warmup` and `repeats` of `#[tunable]`; it stops timing a configuration early
//! once its fastest run is clearly behind the incumbent (the rule is on [`Repeats`]).
//!
//! ## Compilation time and the kernels' own time
//!
//! Backends report the time they spend compiling with [`report_compile_time`], so that the
//! tuner's summary shows where the time of a tuning goes: compilation, measurement, strategy.
//! Every run's kernel time is also summed: the device time a GPU backend reports for every
//! launch (the verification run, warm-ups, timed runs and re-timings alike), and the wall-clock
//! time of a run timed by [`time_once`] that reports none. The tuner shows it beside the
//! measurement time, so that the measurement's overhead (measurement minus the kernels' own
//! time) is visible. Both go to the evaluation's context ([`crate::evaluation`]); outside an
//! evaluation they go nowhere.

use crate::evaluation::{self, EvalContext};
use std::time::Instant;

/// Reports `ms` milliseconds of device time for the work running on this thread (added to what
/// the run reported before). GPU backends call it once per launch with the time between the
/// launch's start and end events; user code normally never does.
pub fn report_device_time(ms: f64) {
    evaluation::with(|c| {
        c.device_ms = Some(c.device_ms.unwrap_or(0.0) + ms);
        c.kernel_ms += ms;
    });
}

/// Runs `work` once and returns its time in milliseconds: the device time it reported through
/// [`report_device_time`] if it reported any, else its wall-clock time. The run is an
/// evaluation context of its own, nested in the one installed (see [`crate::evaluation`]).
pub fn time_once(work: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
    let t = Instant::now();
    let (r, run) = evaluation::scope(EvalContext::default(), work);
    let wall = t.elapsed().as_secs_f64() * 1e3;
    if run.device_ms.is_none() {
        evaluation::with(|c| c.kernel_ms += wall);
    }
    r.map(|()| run.device_ms.unwrap_or(wall))
}

/// Reports `seconds` of compilation done on this thread (a GPU backend building a program, or
/// the first launch of a kernel that a driver compiles on launch): the tuner's summary shows
/// it apart from the measurement. User code normally never calls it.
pub fn report_compile_time(seconds: f64) {
    evaluation::with(|c| c.compile_s += seconds);
}

/// How one configuration was timed: the time it is ranked by, every timed run, and whether the
/// timing stopped early because the configuration was clearly behind the incumbent.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// The time in milliseconds: the robust median of `runs`.
    pub ms: f64,
    /// Every timed run, in milliseconds, in the order they ran.
    pub runs: Vec<f64>,
    /// Whether the timing stopped before the full repeats ([`Repeats`]' rule).
    pub early: bool,
}

/// Times a re-runnable piece of work: the tuner measures every variant through one.
///
/// `best` is the best time measured so far in this tuning (`f64::INFINITY` before the first):
/// a measurement may stop timing work that is clearly slower ([`Repeats`]' early stop), which
/// is how losers cost a run or two instead of the full repeats.
pub trait Measurement {
    /// Runs `work` as often as the measurement needs and returns how it was timed, or the reason
    /// the work failed.
    fn measure(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
    ) -> Result<Timing, String>;

    /// Like [`measure`](Self::measure), after a run the caller made and timed itself (the
    /// checked run of a verified kernel, `warm` milliseconds): a measurement may count it as
    /// its last warm-up run. Default: [`measure`](Self::measure), the run ignored.
    fn measure_after(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
        warm: f64,
    ) -> Result<Timing, String> {
        let _ = warm;
        self.measure(work, best)
    }
}

/// How many times the early-stop bound a warm-up run must take for [`Repeats`] to stop the
/// configuration before its timed runs.
pub const WARM_FACTOR: f64 = 2.0;

/// The tuner's measurement: `warmup` untimed runs, then up to `repeats` timed ones, each timed by
/// [`time_once`] (the device time a GPU backend reports, else the wall clock), reduced with
/// [`robust_median`].
///
/// ## Stopping losers early
///
/// After each timed run but the last, a configuration whose *fastest* run so far is slower than
/// the incumbent (`best`) by more than the margin stops there:
///
/// ```text
/// stop  if  min(runs) > bound,   bound = best * (1 + margin),   margin = max(min_margin, 3 * noise)
/// ```
///
/// where `noise` is the median relative spread (`(Q3 - Q1) / median`) of the configurations
/// timed in full so far (the first of a tuning, the default configuration, always is). Before
/// that, a configuration whose last warm-up run (timed too; with
/// [`measure_after`](Measurement::measure_after), the caller's checked run when there is no
/// warm-up left) takes more than [`WARM_FACTOR`] times the bound stops without a timed run: a warm-up may run on cold caches, hence the
/// factor. The fastest run is the most optimistic estimate of a configuration, so a stopped
/// configuration is slower than the incumbent in every run it got: it never wins, and it is
/// recorded with the runs it got. Contenders, and every configuration while there is no
/// incumbent, get the full `repeats`.
///
/// ```
/// use tunable_runtime::measure::{Measurement, Repeats};
///
/// let mut runs = 0;
/// let mut m = Repeats::new(1, 5);
/// let t = m.measure(&mut || { runs += 1; Ok(()) }, f64::INFINITY).unwrap();
/// assert!(t.ms >= 0.0 && !t.early);
/// assert_eq!((runs, t.runs.len()), (6, 5));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Repeats {
    /// Untimed runs first (default 1).
    pub warmup: u32,
    /// Timed runs (at least 1; default 7).
    pub repeats: u32,
    /// The least relative margin of the early stop (default 0.05; `f64::INFINITY` times every
    /// configuration in full).
    pub min_margin: f64,
    /// Relative spreads of the configurations timed in full so far.
    spreads: Vec<f64>,
}

impl Default for Repeats {
    fn default() -> Self {
        Repeats::new(
            tunable_search::defaults::WARMUP,
            tunable_search::defaults::REPEATS,
        )
    }
}

impl Repeats {
    /// `warmup` untimed runs and up to `repeats` timed ones, with the default margin.
    pub fn new(warmup: u32, repeats: u32) -> Self {
        Repeats {
            warmup,
            repeats,
            min_margin: 0.05,
            spreads: Vec::new(),
        }
    }

    /// The margin of the early stop now: `max(min_margin, 3 * noise)`.
    pub fn margin(&self) -> f64 {
        let mut s = self.spreads.clone();
        let noise = if s.is_empty() {
            0.0
        } else {
            robust_median(&mut s)
        };
        self.min_margin.max(3.0 * noise)
    }
}

impl Measurement for Repeats {
    fn measure(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
    ) -> Result<Timing, String> {
        self.timed(work, best, None)
    }

    fn measure_after(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
        warm: f64,
    ) -> Result<Timing, String> {
        self.timed(work, best, Some(warm))
    }
}

impl Repeats {
    /// The measurement, `before` the time of a run the caller made (its last warm-up when the
    /// configuration has none left).
    fn timed(
        &mut self,
        work: &mut dyn FnMut() -> Result<(), String>,
        best: f64,
        before: Option<f64>,
    ) -> Result<Timing, String> {
        let repeats = self.repeats.max(1) as usize;
        let bound = best * (1.0 + self.margin());
        let mut warm = before.unwrap_or(f64::INFINITY);
        for _ in 0..self.warmup {
            warm = time_once(work)?;
        }
        if (self.warmup > 0 || before.is_some()) && warm > WARM_FACTOR * bound {
            return Ok(Timing {
                ms: warm,
                runs: vec![warm],
                early: true,
            });
        }
        let mut runs = Vec::with_capacity(repeats);
        let mut fastest = f64::INFINITY;
        while runs.len() < repeats {
            let t = time_once(work)?;
            runs.push(t);
            fastest = fastest.min(t);
            if runs.len() < repeats && fastest > bound {
                let ms = robust_median(&mut runs.clone());
                return Ok(Timing {
                    ms,
                    runs,
                    early: true,
                });
            }
        }
        let mut sorted = runs.clone();
        let ms = robust_median(&mut sorted);
        if sorted.len() >= 3 && ms > 0.0 {
            let spread = quantile_sorted(&sorted, 0.75) - quantile_sorted(&sorted, 0.25);
            self.spreads.push(spread / ms);
        }
        Ok(Timing {
            ms,
            runs,
            early: false,
        })
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
    fn repeats_run_warmup_and_repeats_stop_losers_early_and_propagate_failure() {
        let mut calls = 0;
        let mut m = Repeats::new(2, 3);
        let mut work = || {
            calls += 1;
            Ok(())
        };
        let t = m.measure(&mut work, f64::INFINITY).unwrap();
        assert!(t.ms >= 0.0 && !t.early && t.runs.len() == 3);
        assert_eq!(calls, 5);
        // Fast warm-ups, then 2 ms against a best of 0.01 ms: one timed run, not three,
        // recorded as measured.
        let mut calls = 0;
        let mut slow = || {
            calls += 1;
            if calls > 2 {
                report_device_time(2.0);
            }
            Ok(())
        };
        let t = m.measure(&mut slow, 0.01).unwrap();
        assert!(t.early && t.ms == 2.0 && t.runs.len() == 1, "{t:?}");
        assert_eq!(calls, 3);
        // A warm-up far beyond the bound stops before any timed run.
        let mut calls = 0;
        let mut slow = || {
            calls += 1;
            report_device_time(2.0);
            Ok(())
        };
        let t = Repeats::new(1, 3).measure(&mut slow, 0.01).unwrap();
        assert!(t.early && t.runs.len() == 1, "{t:?}");
        assert_eq!(calls, 1);
        // A contender (as fast as the best) gets the full repeats.
        let t = m.measure(&mut || Ok(()), 1000.0).unwrap();
        assert!(!t.early && t.runs.len() == 3);
        let e = Repeats::default().measure(&mut || Err("wrong output".into()), 1.0);
        assert_eq!(e, Err("wrong output".to_owned()));
    }

    #[test]
    fn the_margin_follows_the_measured_noise() {
        let mut m = Repeats::new(0, 4);
        assert_eq!(m.margin(), 0.05);
        // Runs of 1, 2, 3, 4 units of device time: a relative spread of 0.6, a margin of 1.8.
        let mut n = 0.0;
        let mut work = || {
            n += 1.0;
            report_device_time(20.0 * n);
            Ok(())
        };
        m.measure(&mut work, f64::INFINITY).unwrap();
        assert!((m.margin() - 1.8).abs() < 1e-9, "{}", m.margin());
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
        assert_eq!(
            time_once(&mut || {
                report_device_time(2.0);
                Ok(())
            }),
            Ok(2.0)
        );
    }
}
