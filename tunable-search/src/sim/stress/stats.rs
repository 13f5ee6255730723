//! # A landscape's statistics
//!
//! The figures the issue describes landscapes by, computed from the true times: how flat or
//! heavy-tailed the valid times are relative to the optimum, how many configurations fail, and
//! how many evaluations random search needs.

use super::Landscape;
use crate::sim::{MedianOf, ScoreContext, ScoreOptions};

/// Statistics of a landscape's true times (over the valid configurations unless said).
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Configurations in the space.
    pub size: usize,
    /// Parameters.
    pub dims: usize,
    /// The share of configurations that fail at run time.
    pub failed: f64,
    /// The best time.
    pub optimum: f64,
    /// Median / optimum.
    pub median_ratio: f64,
    /// 10th percentile / optimum.
    pub p10_ratio: f64,
    /// The share of valid configurations within 5% of the optimum.
    pub within_5pct: f64,
    /// The share of valid configurations within 1% of the optimum.
    pub within_1pct: f64,
    /// Evaluations random search needs (in expectation) to come 95% of the way from the median
    /// of the valid times to the optimum: the end of the bench's cut-off window.
    pub random_95: usize,
}

impl Stats {
    /// The statistics of `land`.
    pub fn of(land: &Landscape) -> Stats {
        let values = land.replay().values();
        let mut valid: Vec<f64> = values.iter().flatten().copied().collect();
        valid.sort_by(f64::total_cmp);
        let n = valid.len().max(1);
        let optimum = valid.first().copied().unwrap_or(f64::NAN);
        let at = |q: f64| {
            valid
                .get(((n - 1) as f64 * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let share = |r: f64| valid.iter().filter(|&&v| v <= optimum * r).count() as f64 / n as f64;
        let options = ScoreOptions {
            budget: values.len(),
            cutoff: Some(0.95),
            start: 0.01,
            median: MedianOf::Valid,
        };
        let random_95 = ScoreContext::with_options(values, &options).map_or(0, |c| c.budget());
        Stats {
            size: values.len(),
            dims: land.replay().space().dims(),
            failed: 1.0 - valid.len() as f64 / values.len().max(1) as f64,
            optimum,
            median_ratio: at(0.5) / optimum,
            p10_ratio: at(0.1) / optimum,
            within_5pct: share(1.05),
            within_1pct: share(1.01),
            random_95,
        }
    }
}
