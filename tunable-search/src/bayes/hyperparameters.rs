//! # The hyperparameters of a Gaussian process
//!
//! [`GpParams`]: the covariance function and the noise variance, checked once so that an invalid
//! pair cannot reach the model; fixed by the options or fitted by marginal likelihood
//! ([`super::likelihood`]).

use super::{BayesError, Covariance};

/// The hyperparameters of a [`Gp`](super::Gp): covariance function and noise variance
/// (relative to the unit signal variance of standardized targets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpParams {
    /// The covariance function.
    pub kernel: Covariance,
    /// Observation noise variance, `>= 1e-12` (a nugget that also keeps `L` well conditioned).
    pub noise: f64,
}

impl GpParams {
    /// Checked hyperparameters.
    pub fn new(kernel: Covariance, noise: f64) -> Result<Self, BayesError> {
        if !(noise.is_finite() && noise >= 1e-12) {
            return Err(BayesError::Hyperparameter {
                name: "noise",
                value: noise,
            });
        }
        Ok(GpParams { kernel, noise })
    }
}
