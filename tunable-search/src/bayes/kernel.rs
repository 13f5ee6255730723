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
pub enum KernelKind {
    /// Matérn ν = 3/2: `(1 + √3 r) exp(-√3 r)`, once differentiable (the default).
    Matern32,
    /// Matérn ν = 5/2: `(1 + √5 r + 5 r² / 3) exp(-√5 r)`, twice differentiable.
    Matern52,
    /// Squared exponential (radial basis function): `exp(-r² / 2)`, infinitely differentiable.
    Rbf,
}

impl KernelKind {
    /// Parses `matern32`, `matern52` or `rbf`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "matern32" => Some(KernelKind::Matern32),
            "matern52" => Some(KernelKind::Matern52),
            "rbf" => Some(KernelKind::Rbf),
            _ => None,
        }
    }

    /// The name [`parse`](Self::parse) accepts.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Matern32 => "matern32",
            KernelKind::Matern52 => "matern52",
            KernelKind::Rbf => "rbf",
        }
    }
}

/// A covariance function with its lengthscale; unit signal variance (`k(x, x) = 1`), as the
/// targets it models are standardized.
///
/// ```
/// use tunable_search::bayes::{Kernel, KernelKind};
/// let k = Kernel::new(KernelKind::Matern32, 1.5).unwrap();
/// assert_eq!(k.of_sq_dist(0.0), 1.0);
/// assert!(k.of_sq_dist(1.0) < 1.0 && k.of_sq_dist(1.0) > k.of_sq_dist(4.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kernel {
    kind: KernelKind,
    lengthscale: f64,
    inv_l2: f64,
}

impl Kernel {
    /// A kernel of `kind` with `lengthscale` (finite and positive).
    pub fn new(kind: KernelKind, lengthscale: f64) -> Result<Self, BayesError> {
        if !(lengthscale.is_finite() && lengthscale > 0.0) {
            return Err(BayesError::Hyperparameter {
                name: "lengthscale",
                value: lengthscale,
            });
        }
        Ok(Kernel {
            kind,
            lengthscale,
            inv_l2: 1.0 / (lengthscale * lengthscale),
        })
    }

    /// Its shape.
    pub fn kind(&self) -> KernelKind {
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
            KernelKind::Matern32 => {
                let s = (3.0 * r2).sqrt();
                (1.0 + s) * (-s).exp()
            }
            KernelKind::Matern52 => {
                let s = (5.0 * r2).sqrt();
                (1.0 + s + 5.0 / 3.0 * r2) * (-s).exp()
            }
            KernelKind::Rbf => (-0.5 * r2).exp(),
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
        let m32 = Kernel::new(KernelKind::Matern32, 2.0).unwrap();
        let s = 3f64.sqrt() * r / 2.0;
        assert!((m32.of_sq_dist(r * r) - (1.0 + s) * (-s).exp()).abs() < 1e-15);
        let m52 = Kernel::new(KernelKind::Matern52, 0.5).unwrap();
        let s = 5f64.sqrt() * r / 0.5;
        let want = (1.0 + s + 5.0 * r * r / (3.0 * 0.25)) * (-s).exp();
        assert!((m52.of_sq_dist(r * r) - want).abs() < 1e-15);
        let rbf = Kernel::new(KernelKind::Rbf, 1.0).unwrap();
        assert!((rbf.of_sq_dist(r * r) - (-r * r / 2.0).exp()).abs() < 1e-15);
        for k in [m32, m52, rbf] {
            assert_eq!(k.eval(&[0.3, 0.1], &[0.3, 0.1]), 1.0);
            assert_eq!(KernelKind::parse(k.kind().name()), Some(k.kind()));
        }
        assert!(Kernel::new(KernelKind::Rbf, 0.0).is_err());
        assert!(Kernel::new(KernelKind::Rbf, f64::NAN).is_err());
    }
}
