//! # Feasibility model for hidden constraints
//!
//! Configurations that satisfy every known constraint can still fail (compile errors, too many
//! registers, launch failures): *hidden constraints*. A failed configuration has no objective
//! value, and inventing one distorts the surrogate (Willemsen et al., "Bayesian Optimization
//! for auto-tuning GPU kernels", Section III-D-2; Kernel Tuner's BO stores failures as a huge
//! finite number and, on kernels with many failures, walks from one failing configuration to
//! the next). So failures never reach the objective's surrogate.
//! Instead, as BaCO does for hidden constraints, a separate model learns where configurations
//! are valid, and the acquisition is weighed by the probability of validity.
//!
//! The model is a Gaussian-process *label regression* (the least-squares classifier of
//! Rasmussen & Williams, Section 6.5): a [`Gp`] over every evaluated configuration with target 1
//! for a valid one and 0 for a failed one, standardized like any target, so that far from any
//! evaluation the prediction is the observed fraction of valid configurations and near a
//! failure it drops towards 0. The probability of validity is the posterior mean clamped to
//! `[0, 1]`. It uses the same covariance function and candidate set as the objective's GP, and so
//! the same `O(n)` per candidate and observation updates. Until the first failure every
//! configuration is valid with probability 1 and the model costs nothing.
//!
//! ## References
//! - E. O. Hellsten et al., "BaCO: A Fast and Portable Bayesian Compiler Optimization
//!   Framework", ASPLOS 2023, Section 4.3 (feasibility model for hidden constraints).
//! - M. A. Gelbart, J. Snoek, R. P. Adams, "Bayesian optimization with unknown constraints",
//!   UAI 2014.
//! - C. E. Rasmussen, C. K. I. Williams, *Gaussian Processes for Machine Learning*, MIT Press,
//!   2006, Section 6.5 (least-squares classification).

use super::{Gp, GpParams, Points, Prediction, Surrogate};
use rayon::prelude::*;
use std::sync::Arc;

/// Probability that a configuration is valid, learnt from evaluated configurations.
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::bayes::{Feasibility, GpParams, Covariance, CovarianceKind, Points};
/// let pts = Arc::new(Points::new((0..11).map(|i| f64::from(i) / 10.0).collect(), 1).unwrap());
/// let params = GpParams::new(Covariance::new(CovarianceKind::Matern32, 0.3).unwrap(), 1e-6).unwrap();
/// let mut f = Feasibility::new(params, pts, None);
/// f.observe(0, true);
/// assert_eq!(f.probability(10), 1.0); // no failure seen yet
/// f.observe(10, false);
/// f.observe(5, true);
/// assert!(f.probability(9) < 0.5 && f.probability(1) > 0.5);
/// ```
#[derive(Clone, Debug)]
pub struct Feasibility {
    params: GpParams,
    points: Arc<Points>,
    candidates: Option<Arc<[u32]>>,
    /// Every evaluation so far, while no failure was seen.
    valid_rows: Vec<usize>,
    gp: Option<Gp>,
}

impl Feasibility {
    /// A model over `points` that predicts in bulk for `candidates` (every row if `None`).
    pub fn new(params: GpParams, points: Arc<Points>, candidates: Option<Arc<[u32]>>) -> Self {
        Feasibility {
            params,
            points,
            candidates,
            valid_rows: Vec::new(),
            gp: None,
        }
    }

    /// Records whether the configuration at `row` was valid.
    pub fn observe(&mut self, row: usize, valid: bool) {
        match &mut self.gp {
            Some(gp) => gp.observe(row, label(valid)),
            None if valid => self.valid_rows.push(row),
            None => {
                let mut gp = Gp::new(
                    self.params,
                    Arc::clone(&self.points),
                    self.candidates.clone(),
                );
                for &r in &self.valid_rows {
                    gp.observe(r, 1.0);
                }
                self.valid_rows = Vec::new();
                gp.observe(row, 0.0);
                self.gp = Some(gp);
            }
        }
    }

    /// Whether a failure was seen (before that every probability is 1).
    pub fn has_failures(&self) -> bool {
        self.gp.is_some()
    }

    /// The probability that each candidate is valid, in the order of the candidates.
    pub fn candidate_probabilities(&self, scratch: &mut Vec<Prediction>, out: &mut [f64]) {
        match &self.gp {
            None => out.iter_mut().for_each(|p| *p = 1.0),
            Some(gp) => {
                scratch.resize(out.len(), Prediction::default());
                gp.predict_candidates(scratch);
                out.par_iter_mut()
                    .zip(scratch.par_iter())
                    .for_each(|(p, pred)| *p = pred.mean.clamp(0.0, 1.0));
            }
        }
    }

    /// The probability that the configuration at `row` is valid.
    pub fn probability(&self, row: usize) -> f64 {
        self.gp
            .as_ref()
            .map_or(1.0, |gp| gp.predict(row).mean.clamp(0.0, 1.0))
    }
}

fn label(valid: bool) -> f64 {
    if valid { 1.0 } else { 0.0 }
}
