//! # Covariance functions
//!
//! Stationary, isotropic covariance functions of unit signal variance over the normalized
//! coordinates of a search space: `k(x, x') = κ(r)` with `r = |x - x'| / l` for a lengthscale `l`.
//! Paper 000 (Section III-B) recommends the rough Matérn ν = 3/2 with a lengthscale above 1
//! (Table I: 1.5 with the contextual-variance exploration factor, 2 without), or the smoother
//! ν = 5/2 with a lengthscale below 1; the squared exponential (RBF) is the common default of
//! other frameworks.
//!
//! ## References
//! - C. E. Rasmussen, C. K. I. Williams, *Gaussian Processes for Machine Learning*, MIT Press,
//!   2006, Section 4.2 (Eqs. 4.9, 4.17).
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian Optimization for
//!   auto-tuning GPU kernels" (paper 000 of this project), Section III-B and Table I.

use super::BayesError;

/// The shape of a covariance function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CovarianceKind {
    /// Matérn ν = 3/2: `(1 + √3 r) exp(-√3 r)`, once differentiable (the default).
    Matern32,
    /// Matérn ν = 5/2: `(1 + √5 r + 5 r² / 3) exp(-√5 r)`, twice differentiable.
    Matern52,
    /// Squared exponential (radial basis function): `exp(-r² / 2)`, infinitely differentiable.
    Rbf,
}

impl CovarianceKind {
    /// Parses `matern32`, `matern52` or `rbf`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "matern32" => Some(CovarianceKind::Matern32),
            "matern52" => Some(CovarianceKind::Matern52),
            "rbf" => Some(CovarianceKind::Rbf),
            _ => None,
        }
    }

    /// The name [`parse`](Self::parse) accepts.
    pub fn name(self) -> &'static str {
        match self {
            CovarianceKind::Matern32 => "matern32",
            CovarianceKind::Matern52 => "matern52",
            CovarianceKind::Rbf => "rbf",
        }
    }
}

/// A covariance function with its lengthscale; unit signal variance (`k(x, x) = 1`), as the
/// targets it models are standardized.
///
/// ```
/// use tunable_search::bayes::{Covariance, CovarianceKind};
/// let k = Covariance::new(CovarianceKind::Matern32, 1.5).unwrap();
/// assert_eq!(k.of_sq_dist(0.0), 1.0);
/// assert!(k.of_sq_dist(1.0) < 1.0 && k.of_sq_dist(1.0) > k.of_sq_dist(4.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Covariance {
    kind: CovarianceKind,
    lengthscale: f64,
    inv_l2: f64,
}

impl Covariance {
    /// A kernel of `kind` with `lengthscale` (finite and positive).
    pub fn new(kind: CovarianceKind, lengthscale: f64) -> Result<Self, BayesError> {
        if !(lengthscale.is_finite() && lengthscale > 0.0) {
            return Err(BayesError::Hyperparameter {
                name: "lengthscale",
                value: lengthscale,
            });
        }
        Ok(Covariance {
            kind,
            lengthscale,
            inv_l2: 1.0 / (lengthscale * lengthscale),
        })
    }

    /// Its shape.
    pub fn kind(&self) -> CovarianceKind {
        self.kind
    }

    /// Its lengthscale.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// The covariance of two points at squared Euclidean distance `d2`.
    #[inline]
    pub fn of_sq_dist(&self, d2: f64) -> f64 {
        let r2 = d2 * self.inv_l2;
        match self.kind {
            CovarianceKind::Matern32 => {
                let s = (3.0 * r2).sqrt();
                (1.0 + s) * (-s).exp()
            }
            CovarianceKind::Matern52 => {
                let s = (5.0 * r2).sqrt();
                (1.0 + s + 5.0 / 3.0 * r2) * (-s).exp()
            }
            CovarianceKind::Rbf => (-0.5 * r2).exp(),
        }
    }

    /// The covariance of two points.
    #[inline]
    pub fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        self.of_sq_dist(sq_dist(a, b))
    }
}

/// Squared Euclidean distance.
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms() {
        let r = 0.7_f64;
        let m32 = Covariance::new(CovarianceKind::Matern32, 2.0).unwrap();
        let s = 3f64.sqrt() * r / 2.0;
        assert!((m32.of_sq_dist(r * r) - (1.0 + s) * (-s).exp()).abs() < 1e-15);
        let m52 = Covariance::new(CovarianceKind::Matern52, 0.5).unwrap();
        let s = 5f64.sqrt() * r / 0.5;
        let want = (1.0 + s + 5.0 * r * r / (3.0 * 0.25)) * (-s).exp();
        assert!((m52.of_sq_dist(r * r) - want).abs() < 1e-15);
        let rbf = Covariance::new(CovarianceKind::Rbf, 1.0).unwrap();
        assert!((rbf.of_sq_dist(r * r) - (-r * r / 2.0).exp()).abs() < 1e-15);
        for k in [m32, m52, rbf] {
            assert_eq!(k.eval(&[0.3, 0.1], &[0.3, 0.1]), 1.0);
            assert_eq!(CovarianceKind::parse(k.kind().name()), Some(k.kind()));
        }
        assert!(Covariance::new(CovarianceKind::Rbf, 0.0).is_err());
        assert!(Covariance::new(CovarianceKind::Rbf, f64::NAN).is_err());
    }
}
