//! # Trust region
//!
//! TuRBO's trust region (Eriksson et al. 2019) on a discrete space: the acquisition is maximized
//! only over the unvisited configurations inside a box around the best configuration found, of
//! half-width `h` in normalized coordinates (every varying parameter's values at
//! `0, 1/(n-1), ..., 1`). The box follows the search's luck:
//! - `success` (3) improvements of the best in a row double `h` (up to 1: the whole space);
//! - `failure` rounds in a row without improvement (default: the number of varying parameters,
//!   at least 4) halve it;
//! - when `h` falls below half the finest value spacing, or the box holds no unvisited
//!   configuration, the region restarts at its initial size `trust` (option; 0 turns the region
//!   off).
//!
//! The model stays global: every observation conditions it, only the candidates are limited.
//! A small box early keeps the first model-guided evaluations near the best configurations seen,
//! where a model of a few observations is trustworthy, instead of the corners and constraint
//! boundaries its variance points to.
//!
//! ## References
//! - D. Eriksson, M. Pearce, J. Gardner, R. D. Turner, M. Poloczek, "Scalable Global
//!   Optimization via Local Bayesian Optimization", NeurIPS 2019 (TuRBO).

use super::Points;

/// Improvements in a row that double the region.
pub const SUCCESS: usize = 3;
/// The fewest rounds without improvement that halve it.
pub const MIN_FAILURE: usize = 4;

/// The state of a trust region: TuRBO's box around the best configuration found, of half-width
/// `h` in normalized coordinates, doubled after `SUCCESS` (3) improvements in a row, halved after
/// `max(varying parameters, 4)` rounds without one, restarted when it falls below half
/// the finest value spacing or holds no unvisited configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct TrustRegion {
    initial: f64,
    half_width: f64,
    /// Below this the box holds only its centre: restart.
    floor: f64,
    failure: usize,
    successes: usize,
    failures: usize,
    restarts: usize,
}

impl TrustRegion {
    /// A region of initial half-width `initial` (in `(0, 1]`) over points with `dims` varying
    /// coordinates whose finest value spacing is `spacing`.
    pub fn new(initial: f64, dims: usize, spacing: f64) -> Self {
        TrustRegion {
            initial,
            half_width: initial,
            floor: 0.5 * spacing,
            failure: dims.max(MIN_FAILURE),
            successes: 0,
            failures: 0,
            restarts: 0,
        }
    }

    /// The finest spacing between neighbouring values of any coordinate of `points` (1 if every
    /// coordinate takes one value).
    pub fn finest_spacing(points: &Points) -> f64 {
        let mut finest: f64 = 1.0;
        for j in 0..points.dims() {
            let mut v: Vec<f64> = (0..points.len()).map(|i| points.row(i)[j]).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            for w in v.windows(2) {
                finest = finest.min(w[1] - w[0]);
            }
        }
        finest
    }

    /// The current half-width.
    pub fn half_width(&self) -> f64 {
        self.half_width
    }

    /// How many times the region restarted.
    pub fn restarts(&self) -> usize {
        self.restarts
    }

    /// Whether `x` lies in the box around `centre`.
    #[inline]
    pub fn contains(&self, centre: &[f64], x: &[f64]) -> bool {
        let h = self.half_width + 1e-9;
        centre.iter().zip(x).all(|(c, v)| (c - v).abs() <= h)
    }

    /// Records one model-guided evaluation: whether it improved the best configuration found.
    pub fn record(&mut self, improved: bool) {
        if improved {
            self.successes += 1;
            self.failures = 0;
            if self.successes >= SUCCESS {
                self.half_width = (2.0 * self.half_width).min(1.0);
                self.successes = 0;
            }
        } else {
            self.failures += 1;
            self.successes = 0;
            if self.failures >= self.failure {
                self.half_width *= 0.5;
                self.failures = 0;
            }
        }
        if self.half_width < self.floor {
            self.restart();
        }
    }

    /// Back to the initial size (also when the box holds nothing left to evaluate).
    pub fn restart(&mut self) {
        self.half_width = self.initial;
        self.successes = 0;
        self.failures = 0;
        self.restarts += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_on_success_shrinks_on_failure_and_restarts() {
        let mut t = TrustRegion::new(0.2, 2, 0.1);
        assert!(t.contains(&[0.5, 0.5], &[0.7, 0.3]));
        assert!(!t.contains(&[0.5, 0.5], &[0.75, 0.5]));
        for _ in 0..3 {
            t.record(true);
        }
        assert_eq!(t.half_width(), 0.4);
        // Failures: at least four in a row halve it; a success in between resets the count.
        for _ in 0..3 {
            t.record(false);
        }
        t.record(true);
        for _ in 0..3 {
            t.record(false);
        }
        assert_eq!(t.half_width(), 0.4);
        t.record(false);
        assert_eq!(t.half_width(), 0.2);
        // 0.2 -> 0.1 -> 0.05 (still >= 0.05 floor) -> 0.025 restarts at 0.2.
        for _ in 0..12 {
            t.record(false);
        }
        assert_eq!((t.half_width(), t.restarts()), (0.2, 1));
        for _ in 0..10 {
            for _ in 0..3 {
                t.record(true);
            }
        }
        assert_eq!(t.half_width(), 1.0, "capped at the whole space");
    }

    #[test]
    fn finest_spacing_of_points() {
        let p = Points::new(vec![0.0, 0.0, 0.5, 1.0, 1.0, 0.25], 2).unwrap();
        assert_eq!(TrustRegion::finest_spacing(&p), 0.25);
    }
}
