//! # Measurement
//!
//! How one configuration is timed: a few warm-up runs, then repeated timed runs reduced to a
//! robust statistic, the median of the samples inside Tukey's fences (`[Q1 - 1.5 IQR,
//! Q3 + 1.5 IQR]`), so that a run disturbed by the OS does not decide a tuning. GPU backends bring
//! their own timers (events) through the same [`Measurement`] trait.

use std::time::Instant;

/// Times a re-runnable piece of work.
pub trait Measurement {
    /// Runs `work` as often as the measurement needs and returns its time in milliseconds, or the
    /// reason the work failed.
    fn measure(&mut self, work: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String>;
}

/// Wall-clock timing on the CPU: `warmup` untimed runs, then `repeats` timed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallClock {
    /// Untimed runs first (default 1).
    pub warmup: u32,
    /// Timed runs (default 7).
    pub repeats: u32,
}

impl Default for WallClock {
    fn default() -> Self {
        WallClock {
            warmup: 1,
            repeats: 7,
        }
    }
}

impl Measurement for WallClock {
    fn measure(&mut self, work: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
        for _ in 0..self.warmup {
            work()?;
        }
        let mut samples = Vec::with_capacity(self.repeats.max(1) as usize);
        for _ in 0..self.repeats.max(1) {
            let t = Instant::now();
            work()?;
            samples.push(t.elapsed().as_secs_f64() * 1e3);
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
    fn wall_clock_runs_warmup_and_repeats_and_propagates_failure() {
        let mut calls = 0;
        let t = WallClock {
            warmup: 2,
            repeats: 3,
        }
        .measure(&mut || {
            calls += 1;
            Ok(())
        });
        assert!(t.unwrap() >= 0.0);
        assert_eq!(calls, 5);
        let e = WallClock::default().measure(&mut || Err("wrong output".into()));
        assert_eq!(e, Err("wrong output".to_owned()));
    }
}
