//! # Covariance functions
//!
//! Stationary covariance functions of unit signal variance over the normalized coordinates of a
//! search space: the isotropic `k(x, x') = κ(r)` with `r = |x - x'| / l` for a lengthscale `l`,
//! optionally mixed with an *additive* part, the mean over the `d` coordinates of one-dimensional
//! kernels, `k(x, x') = (1 - w) κ(|x - x'| / l) + w (1/d) Σⱼ κ(|xⱼ - x'ⱼ| / l)` (Duvenaud et
//! al. 2011, first order). The additive part models each parameter's main effect: a few
//! observations already tell which value of a parameter is good, whatever the others are, where
//! the isotropic kernel only relates configurations close in every coordinate at once.
//! An *overlap* part of weight `o` adds `o (1/m) Σⱼ [xⱼ = x'ⱼ]` over `m` chosen coordinates (the
//! isotropic part keeps `1 - w - o`): it sees those parameters' values as categories, so a few
//! results tell that *this* value of a switch, a choice or an unroll factor is good, however far
//! its index lies from the others' (the overlap kernel of categorical Bayesian optimization, as
//! in CoCaBO's mixture of kernels). With the *rest* ([`Covariance::with_overlap_rest`]) the
//! overlap part averages over every coordinate, the chosen ones by equality and the others by
//! their one-dimensional kernel, `o (1/d) (Σ_chosen [xⱼ = x'ⱼ] + Σ_others κ(|xⱼ - x'ⱼ| / l))`.
//! Willemsen et al., "Bayesian Optimization for auto-tuning GPU kernels" (Section III-B), recommend the rough Matérn ν = 3/2 with a lengthscale above 1
//! (Table I: 1.5 with the contextual-variance exploration factor, 2 without), or the smoother
//! ν = 5/2 with a lengthscale below 1; the squared exponential (RBF) is the common default of
//! other frameworks.
//!
//! ## References
//! - C. E. Rasmussen, C. K. I. Williams, *Gaussian Processes for Machine Learning*, MIT Press,
//!   2006, Section 4.2 (Eqs. 4.9, 4.17).
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian Optimization for
//!   auto-tuning GPU kernels", PMBS 2021, Section III-B and Table I.
//! - D. Duvenaud, H. Nickisch, C. E. Rasmussen, "Additive Gaussian Processes", NeurIPS 2011.
//! - B. Ru, A. Alvi, V. Nguyen, M. Osborne, S. Roberts, "Bayesian Optimisation over Multiple
//!   Continuous and Categorical Inputs", ICML 2020 (the overlap kernel).

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
    /// The weight of the overlap part (0: none).
    overlap: f64,
    /// The coordinates the overlap part compares (bit `j`: coordinate `j`; those past 63 never).
    overlap_dims: u64,
    /// Whether the overlap part also holds the other coordinates, by their one-dimensional kernel.
    overlap_rest: bool,
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
            overlap: 0.0,
            overlap_dims: u64::MAX,
            overlap_rest: false,
        })
    }

    /// The same kernel (shape, additive and overlap parts) with another lengthscale (finite and
    /// positive).
    pub fn with_lengthscale(self, lengthscale: f64) -> Result<Self, BayesError> {
        Covariance::new(self.kind, lengthscale).map(|k| Covariance {
            lengthscale: k.lengthscale,
            inv_l2: k.inv_l2,
            ..self
        })
    }

    /// The same kernel with weight `w` (in `[0, 1 - overlap]`) on the additive part (see the module docs).
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
        if !(0.0..=1.0 - self.overlap).contains(&w) {
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

    /// The same kernel with weight `w` on the *overlap* part: the share of coordinates two
    /// points have equal, `(1/d) Σⱼ [xⱼ = x'ⱼ]`, each parameter's values seen as categories
    /// (the overlap kernel of categorical Bayesian optimization). The isotropic part keeps
    /// `1 - additive - w`; `w` in `[0, 1 - additive]`.
    ///
    /// ```
    /// use tunable_search::bayes::{Covariance, CovarianceKind};
    /// let k = Covariance::new(CovarianceKind::Matern32, 1.0).unwrap().with_overlap(0.5).unwrap();
    /// let iso = Covariance::new(CovarianceKind::Matern32, 1.0).unwrap();
    /// // One coordinate of two equal: half of the overlap part.
    /// let want = 0.5 * iso.eval(&[0.0, 0.0], &[0.0, 1.0]) + 0.5 * 0.5;
    /// assert!((k.eval(&[0.0, 0.0], &[0.0, 1.0]) - want).abs() < 1e-15);
    /// ```
    pub fn with_overlap(self, w: f64) -> Result<Self, BayesError> {
        if !(0.0..=1.0 - self.additive).contains(&w) {
            return Err(BayesError::Hyperparameter {
                name: "overlap",
                value: w,
            });
        }
        Ok(Covariance { overlap: w, ..self })
    }

    /// The same kernel with the overlap part comparing only the coordinates whose bit is set in
    /// `mask` (bit `j` for coordinate `j`; all of them by default).
    pub fn with_overlap_dims(self, mask: u64) -> Self {
        Covariance {
            overlap_dims: mask,
            ..self
        }
    }

    /// The same kernel with the overlap part averaging over every coordinate: those its mask
    /// compares by equality, the others by their one-dimensional kernel (as the additive part
    /// does), so that a parameter of many values keeps its share of that part instead of none.
    pub fn with_overlap_rest(self, rest: bool) -> Self {
        Covariance {
            overlap_rest: rest,
            ..self
        }
    }

    /// The coordinates the overlap part compares (bit `j`: coordinate `j`).
    pub fn overlap_dims(&self) -> u64 {
        self.overlap_dims
    }

    /// The weight of the overlap part.
    pub fn overlap(&self) -> f64 {
        self.overlap
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
        if (self.additive == 0.0 && self.overlap == 0.0) || a.is_empty() {
            return iso;
        }
        let d = a.len() as f64;
        let mut k = (1.0 - self.additive - self.overlap) * iso;
        if self.additive > 0.0 {
            let sum: f64 = a
                .iter()
                .zip(b)
                .map(|(x, y)| self.of_sq_dist((x - y) * (x - y)))
                .sum();
            k += self.additive * sum / d;
        }
        if self.overlap > 0.0 {
            let mask = if a.len() >= 64 {
                self.overlap_dims
            } else {
                self.overlap_dims & ((1u64 << a.len()) - 1)
            };
            if self.overlap_rest {
                let sum: f64 = a
                    .iter()
                    .zip(b)
                    .enumerate()
                    .map(|(j, (x, y))| {
                        if j < 64 && mask & (1 << j) != 0 {
                            f64::from(u8::from(x == y))
                        } else {
                            self.of_sq_dist((x - y) * (x - y))
                        }
                    })
                    .sum();
                k += self.overlap * sum / d;
            } else if mask != 0 {
                // Only the compared coordinates: the mask's set bits, lowest first.
                let (mut rest, mut same) = (mask, 0u32);
                while rest != 0 {
                    let j = rest.trailing_zeros() as usize;
                    same += u32::from(a[j] == b[j]);
                    rest &= rest - 1;
                }
                k += self.overlap * f64::from(same) / f64::from(mask.count_ones());
            } else {
                k += self.overlap * iso;
            }
        }
        k
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
        // The overlap part: the share of equal coordinates, among those its mask compares.
        let over = m32.with_overlap(0.4).unwrap();
        let want = 0.6 * m32.eval(&a, &b) + 0.4 / 3.0;
        assert!((over.eval(&a, &b) - want).abs() < 1e-15);
        let first_two = over.with_overlap_dims(0b011);
        let want = 0.6 * m32.eval(&a, &b) + 0.4 / 2.0;
        assert!((first_two.eval(&a, &b) - want).abs() < 1e-15);
        let last = over.with_overlap_dims(0b100);
        assert!((last.eval(&a, &b) - 0.6 * m32.eval(&a, &b)).abs() < 1e-15);
        assert_eq!(last.eval(&a, &a), 1.0);
        // With the rest: the coordinates the mask leaves out by their one-dimensional kernel.
        let rest = first_two.with_overlap_rest(true);
        let want = 0.6 * m32.eval(&a, &b) + 0.4 * (1.0 + 0.0 + m32.of_sq_dist(0.25)) / 3.0;
        assert!((rest.eval(&a, &b) - want).abs() < 1e-15);
        assert_eq!(rest.eval(&b, &b), 1.0);
        let all_rest = over.with_overlap_dims(0).with_overlap_rest(true);
        let add = 0.6 * m32.eval(&a, &b) + 0.4 * (1.0 + 2.0 * m32.of_sq_dist(0.25)) / 3.0;
        assert!((all_rest.eval(&a, &b) - add).abs() < 1e-15);
        // Nothing to compare: the overlap part's weight goes to the isotropic kernel.
        let none = over.with_overlap_dims(0);
        assert!((none.eval(&a, &b) - m32.eval(&a, &b)).abs() < 1e-15);
        // With the additive part: the weights add up to 1 at most.
        let both = half.with_overlap(0.5).unwrap();
        assert_eq!(both.eval(&a, &a), 1.0);
        assert!(half.with_overlap(0.6).is_err() && m32.with_overlap(-0.1).is_err());
        assert!(over.with_additive(0.7).is_err() && over.with_additive(0.6).is_ok());
        // Another lengthscale keeps the parts.
        let longer = both.with_lengthscale(3.0).unwrap();
        assert_eq!((longer.additive(), longer.overlap()), (0.5, 0.5));
        assert_eq!(longer.lengthscale(), 3.0);
        assert!(both.with_lengthscale(0.0).is_err());
        assert!(Covariance::new(CovarianceKind::Rbf, f64::NAN).is_err());
    }
}
