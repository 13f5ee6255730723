//! # The surrogate model interface
//!
//! A [`Surrogate`] models the objective over a fixed set of points (the normalized coordinates of
//! a space's valid configurations, [`Points`](super::Points)), predicting a mean and a variance at
//! any of them. It is told observations one at a time, and predicts in bulk for its *candidates*
//! (the rows whose predictions it keeps up to date as observations arrive, all rows or a pool of
//! them) and one at a time for any other row.
//!
//! *Fantasies* are observations made up for configurations that are being evaluated (batch
//! asks: constant liar, kriging believer); they condition the predictions like observations but
//! are dropped at once by [`Surrogate::clear_fantasies`], and do not move the model's target
//! standardization.
//!
//! [`Gp`](super::Gp) is the exact Gaussian process. A clustered GP
//! ([`ClusteredGp`](super::ClusteredGp)) implements the same trait by fitting one [`Gp`](super::Gp) per cluster on its subset of the observations and
//! predicting each candidate with its cluster's GP; with one cluster it is the GP itself, which
//! the trait's prediction methods let a test check exactly.

use super::GpParams;

/// A posterior prediction at one point, in the units of the observed targets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prediction {
    /// Posterior mean.
    pub mean: f64,
    /// Posterior variance of the latent function (without observation noise), `>= 0`.
    pub var: f64,
}

impl Prediction {
    /// The posterior standard deviation.
    pub fn std(&self) -> f64 {
        self.var.max(0.0).sqrt()
    }
}

/// A probabilistic model of the objective over the rows of a [`Points`](super::Points) matrix.
pub trait Surrogate: Send + Sync {
    /// Conditions the model on target `y` observed at `row` (clears fantasies first).
    fn observe(&mut self, row: usize, y: f64);
    /// Conditions the model on a made-up target `y` at `row` until
    /// [`clear_fantasies`](Self::clear_fantasies).
    fn fantasize(&mut self, row: usize, y: f64);
    /// Drops every fantasy.
    fn clear_fantasies(&mut self);
    /// Number of real observations.
    fn observations(&self) -> usize;
    /// The rows predicted in bulk by [`predict_candidates`](Self::predict_candidates).
    fn candidates(&self) -> &[u32];
    /// Predictions at every candidate, in the order of [`candidates`](Self::candidates).
    fn predict_candidates(&self, out: &mut [Prediction]);
    /// The prediction at any row.
    fn predict(&self, row: usize) -> Prediction;
    /// Sets the model's covariance and noise, conditioning on the same observations (clears
    /// fantasies).
    fn set_params(&mut self, params: GpParams);
    /// Replaces the targets of the real observations, one per observation in the order they
    /// were observed, conditioning on the same rows (clears fantasies).
    fn retarget(&mut self, y: &[f64]);
    /// Re-estimates the model's hyperparameters from its observations (e.g. by marginal
    /// likelihood); models with fixed hyperparameters do nothing. Clears fantasies.
    fn fit_hyperparameters(&mut self) {}
    /// Writes into `out`, one per candidate, the weights in `(0, 1]` the acquisition of each
    /// candidate is scaled by (the clustered GP's cluster-size weighting); returns `false`, with
    /// `out` untouched, when every weight is 1.
    fn candidate_weights(&self, _out: &mut [f64]) -> bool {
        false
    }
    /// The acquisition weight at any row (see [`candidate_weights`](Self::candidate_weights)).
    fn weight(&self, _row: usize) -> f64 {
        1.0
    }
}
