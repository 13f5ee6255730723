//! # Covariance functions
//!
//! Stationary covariance functions of unit signal variance over the normalized coordinates of a
//! search space: the isotropic `k(x, x') = κ(r)` with `r = |x - x'| / l` for a lengthscale `l`,
//! optionally mixed with an *additive* part, the mean over the `d` coordinates of one-dimensional
//! kernels, `k(x, x') = (1 - w) κ(|x - x'| / l) + w (1/d) Σⱼ κ(|xⱼ - x'ⱼ| / l)` (Duvenaud et
//! al. 2011, first order). The additive part models each parameter's main effect: a few
//! observations already tell which value of a parameter is good, whatever the others are, where
//! the isotropic kernel only relates configurations close in every coordinate at once.
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
//! - D. Duvenaud, H. Nickisch, C. E. Rasmussen, "Additive Gaussian Processes", NeurIPS 2011.

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
    /// The weight `w` of the additive part (0: isotropic).
    additive: f64,
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
            additive: 0.0,
        })
    }

    /// The same kernel with weight `w` (in `[0, 1]`) on the additive part (see the module docs).
    ///
    /// ```
    /// use tunable_search::bayes::{Covariance, CovarianceKind};
    /// let k = Covariance::new(CovarianceKind::Matern32, 1.0).unwrap().with_additive(0.5).unwrap();
    /// assert_eq!(k.eval(&[0.2, 0.7], &[0.2, 0.7]), 1.0);
    /// // Sharing one coordinate's value keeps half of the additive part's covariance.
    /// let iso = Covariance::new(CovarianceKind::Matern32, 1.0).unwrap();
    /// assert!(k.eval(&[0.0, 0.0], &[0.0, 1.0]) > iso.eval(&[0.0, 0.0], &[0.0, 1.0]));
    /// ```
    pub fn with_additive(self, w: f64) -> Result<Self, BayesError> {
        if !(0.0..=1.0).contains(&w) {
            return Err(BayesError::Hyperparameter {
                name: "additive",
                value: w,
            });
        }
        Ok(Covariance {
            additive: w,
            ..self
        })
    }

    /// The weight of the additive part.
    pub fn additive(&self) -> f64 {
        self.additive
    }

    /// Its shape.
    pub fn kind(&self) -> CovarianceKind {
        self.kind
    }

    /// Its lengthscale.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// The isotropic covariance of two points at squared Euclidean distance `d2` (without the
    /// additive part).
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
        let iso = self.of_sq_dist(sq_dist(a, b));
        if self.additive == 0.0 || a.is_empty() {
            return iso;
        }
        let sum: f64 = a
            .iter()
            .zip(b)
            .map(|(x, y)| self.of_sq_dist((x - y) * (x - y)))
            .sum();
        (1.0 - self.additive) * iso + self.additive * sum / a.len() as f64
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
        // The additive part: the mean of the one-dimensional kernels.
        let add = m32.with_additive(1.0).unwrap();
        let (a, b) = ([0.1, 0.5, 0.9], [0.1, 0.0, 0.4]);
        let want = (1.0 + m32.of_sq_dist(0.25) + m32.of_sq_dist(0.25)) / 3.0;
        assert!((add.eval(&a, &b) - want).abs() < 1e-15);
        let half = m32.with_additive(0.5).unwrap();
        let mix = 0.5 * m32.eval(&a, &b) + 0.5 * want;
        assert!((half.eval(&a, &b) - mix).abs() < 1e-15);
        assert!(m32.with_additive(1.5).is_err() && m32.with_additive(-0.1).is_err());
        assert!(Covariance::new(CovarianceKind::Rbf, f64::NAN).is_err());
    }
}
