//! # Acquisition functions
//!
//! How promising an unvisited configuration is, from the surrogate's posterior mean `μ` and
//! standard deviation `σ` there and the best value found so far `f⁺` (minimization; Willemsen,
//! van Nieuwpoort, van Werkhoven, "Bayesian Optimization for auto-tuning GPU kernels", PMBS
//! 2021, Section III-C):
//!
//! - **probability of improvement** `PI = Φ(z)`,
//! - **expected improvement** `EI = E[max(f⁺ - λ - Y, 0)] = σ (z Φ(z) + φ(z))`,
//! - **lower confidence bound** `LCB = μ - λ σ` (smaller is better),
//!
//! with `z = (f⁺ - λ - μ) / σ`, `Φ` and `φ` the standard normal distribution and density, and `λ`
//! the exploration factor. [`contextual_variance`] is that paper's dynamic `λ` (Section III-F).
//!
//! The strategy ranks candidates by [`Acquisition::score`]: `ln PI` and `ln EI`, computed without
//! underflow far in the tails (so candidates stay ordered when every improvement is
//! astronomically unlikely), and `f⁺ - LCB`. Weighing by a probability of feasibility `p`
//! ([`Acquisition::weighted_score`]) multiplies PI and EI by `p` (adds `ln p`), and scales the
//! LCB gain `g = f⁺ - LCB` to `g p` when positive and `g / p` when not, so an unlikely-valid
//! configuration always ranks lower, and `p = 1` changes nothing.
//!
//! ## References
//! - H. J. Kushner, "A new method of locating the maximum point of an arbitrary multipeak curve
//!   in the presence of noise", 1964 (PI).
//! - J. Mockus, "On Bayesian methods for seeking the extremum", 1974 (EI).
//! - N. Srinivas et al., "Gaussian process optimization in the bandit setting", 2010 (UCB/LCB).
//! - M. A. Gelbart, J. Snoek, R. P. Adams, "Bayesian optimization with unknown constraints",
//!   2014: acquisition weighted by the probability of feasibility.
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian Optimization for auto-tuning GPU kernels", Sections III-C and III-F.

use std::f64::consts::{FRAC_1_SQRT_2, PI as PI_F64};

/// ln(√(2π)).
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// The standard normal density φ(z).
pub fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * PI_F64).sqrt()
}

/// The standard normal distribution function Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * FRAC_1_SQRT_2)
}

/// ln Φ(z), accurate far into the lower tail (where Φ underflows).
pub fn log_normal_cdf(z: f64) -> f64 {
    if z > -30.0 {
        normal_cdf(z).ln()
    } else {
        // Φ(z) = φ(z)/|z| (1 - 1/z² + 3/z⁴ - 15/z⁶ + ...).
        let t = 1.0 / (z * z);
        -0.5 * z * z - LN_SQRT_2PI - (-z).ln() + (1.0 - t + 3.0 * t * t - 15.0 * t * t * t).ln()
    }
}

/// ln(z Φ(z) + φ(z)): the log of expected improvement per unit of σ.
pub fn log_ei_factor(z: f64) -> f64 {
    if z > -25.0 {
        (z * normal_cdf(z) + normal_pdf(z)).ln()
    } else {
        // z Φ(z) + φ(z) = φ(z)/z² (1 - 3/z² + 15/z⁴ - 105/z⁶ + ...).
        let t = 1.0 / (z * z);
        -0.5 * z * z - LN_SQRT_2PI
            + t.ln()
            + (1.0 - 3.0 * t + 15.0 * t * t - 105.0 * t * t * t).ln()
    }
}

/// Probability of improvement `Φ((best - xi - mu) / sigma)`; for `sigma = 0` it is 1 if `mu`
/// improves on `best - xi` and 0 otherwise.
pub fn probability_of_improvement(mu: f64, sigma: f64, best: f64, xi: f64) -> f64 {
    if sigma > 0.0 {
        normal_cdf((best - xi - mu) / sigma)
    } else if mu < best - xi {
        1.0
    } else {
        0.0
    }
}

/// Expected improvement `σ (z Φ(z) + φ(z))` with `z = (best - xi - mu) / sigma`; for
/// `sigma = 0`, `max(best - xi - mu, 0)`.
pub fn expected_improvement(mu: f64, sigma: f64, best: f64, xi: f64) -> f64 {
    if sigma > 0.0 {
        let z = (best - xi - mu) / sigma;
        sigma * (z * normal_cdf(z) + normal_pdf(z))
    } else {
        (best - xi - mu).max(0.0)
    }
}

/// Lower confidence bound `mu - beta sigma`.
pub fn lower_confidence_bound(mu: f64, sigma: f64, beta: f64) -> f64 {
    mu - beta * sigma
}

/// The contextual-variance exploration factor (Section III-F, as Kernel Tuner computes
/// it): `λ = (σ̄ / σ̄ₛ) · (f⁺ / μₛ)`, the mean posterior standard deviation over the unvisited
/// candidates relative to its value after the initial sample, times the best value found relative
/// to the initial sample's mean. Exploration fades as the model grows certain and as the search
/// improves on its initial sample. A non-positive `best` (objectives that are not times) gives
/// `|σ̄ / best|`, a zero `init_mean_std` leaves that factor out.
pub fn contextual_variance(mean_std: f64, init_mean_std: f64, init_mean: f64, best: f64) -> f64 {
    if best <= 0.0 || init_mean <= 0.0 {
        return (mean_std / best).abs().min(1e6);
    }
    let norm = if init_mean_std > 0.0 {
        init_mean_std
    } else {
        1.0
    };
    mean_std / norm * (best / init_mean)
}

/// A basic acquisition function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquisition {
    /// Expected improvement.
    Ei,
    /// Probability of improvement.
    Pi,
    /// Lower confidence bound.
    Lcb,
}

impl Acquisition {
    /// The portfolio of Table I of "Bayesian Optimization for auto-tuning GPU kernels", in
    /// its order.
    pub const PORTFOLIO: [Acquisition; 3] = [Acquisition::Ei, Acquisition::Pi, Acquisition::Lcb];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Acquisition::Ei => "ei",
            Acquisition::Pi => "pi",
            Acquisition::Lcb => "lcb",
        }
    }

    /// How promising a candidate is (higher is better): `ln EI`, `ln PI` or `best - LCB`, with
    /// `lambda` the exploration factor (`xi` of PI and EI, `beta` of LCB). All arguments are in the
    /// same units (the strategy uses standardized ones).
    pub fn score(self, mu: f64, sigma: f64, best: f64, lambda: f64) -> f64 {
        match self {
            Acquisition::Lcb => best - lower_confidence_bound(mu, sigma, lambda),
            _ if sigma.is_nan() || sigma <= 1e-12 => {
                let gain = best - lambda - mu;
                if gain > 0.0 {
                    gain.ln()
                } else {
                    // No uncertainty and no improvement: rank by how far off it is.
                    -1e6 + gain
                }
            }
            Acquisition::Ei => sigma.ln() + log_ei_factor((best - lambda - mu) / sigma),
            Acquisition::Pi => log_normal_cdf((best - lambda - mu) / sigma),
        }
    }

    /// [`score`](Self::score) weighed by the probability `p` that the candidate is valid.
    pub fn weighted_score(self, mu: f64, sigma: f64, best: f64, lambda: f64, p: f64) -> f64 {
        let s = self.score(mu, sigma, best, lambda);
        let p = p.clamp(1e-9, 1.0);
        match self {
            Acquisition::Lcb if s > 0.0 => s * p,
            Acquisition::Lcb => s / p,
            _ => s + p.ln(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// ∫ g(y) φ((y - mu)/sigma)/sigma dy by composite Simpson over mu ± 12 sigma.
    fn integrate(mu: f64, sigma: f64, g: impl Fn(f64) -> f64) -> f64 {
        let (a, b, n) = (mu - 12.0 * sigma, mu + 12.0 * sigma, 20_000);
        let h = (b - a) / n as f64;
        let f = |y: f64| g(y) * normal_pdf((y - mu) / sigma) / sigma;
        let mut s = f(a) + f(b);
        for i in 1..n {
            s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    }

    #[test]
    fn normal_functions() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-16);
        assert!((normal_cdf(1.959_963_984_540_054) - 0.975).abs() < 1e-14);
        assert!((normal_pdf(0.0) - 0.398_942_280_401_432_7).abs() < 1e-16);
        // The tail forms join the direct ones.
        for z in [-29.9_f64, -30.1] {
            let direct = normal_cdf(z).ln();
            assert!((log_normal_cdf(z) - direct).abs() < 1e-6 * direct.abs());
        }
        let near = |z: f64| (z * normal_cdf(z) + normal_pdf(z)).ln();
        for z in [-25.01_f64, -26.0, -24.9] {
            assert!(
                (log_ei_factor(z) - near(z)).abs() < 1e-8 * near(z).abs(),
                "{z}"
            );
        }
        assert!(log_ei_factor(-40.0) < log_ei_factor(-30.0));
        assert!(log_normal_cdf(-60.0).is_finite() && log_ei_factor(-60.0).is_finite());
    }

    proptest! {
        #[test]
        fn ei_pi_lcb_match_their_definitions(
            mu in -3.0f64..3.0, sigma in 0.05f64..3.0, best in -3.0f64..3.0, xi in 0.0f64..1.0,
        ) {
            let t = best - xi;
            let ei = integrate(mu, sigma, |y| (t - y).max(0.0));
            let pi = integrate(mu, sigma, |y| if y < t { 1.0 } else { 0.0 });
            prop_assert!((expected_improvement(mu, sigma, best, xi) - ei).abs() < 1e-6);
            prop_assert!((probability_of_improvement(mu, sigma, best, xi) - pi).abs() < 1e-3);
            prop_assert_eq!(lower_confidence_bound(mu, sigma, xi), mu - xi * sigma);
            // The ranking scores are the logs of the closed forms.
            // (Where the closed forms underflow, the logs stay finite and below.)
            for (a, closed) in [
                (Acquisition::Ei, expected_improvement(mu, sigma, best, xi)),
                (Acquisition::Pi, probability_of_improvement(mu, sigma, best, xi)),
            ] {
                let s = a.score(mu, sigma, best, xi);
                if closed > 1e-250 {
                    prop_assert!((s - closed.ln()).abs() < 1e-9 * closed.ln().abs().max(1.0));
                } else {
                    prop_assert!(s.is_finite() && s < -500.0);
                }
            }
            let s = Acquisition::Lcb.score(mu, sigma, best, xi);
            prop_assert!((s - (best - (mu - xi * sigma))).abs() < 1e-12);
        }

        #[test]
        fn weighing_by_feasibility_only_lowers(
            mu in -3.0f64..3.0, sigma in 0.0f64..3.0, best in -3.0f64..3.0, p in 0.01f64..1.0,
        ) {
            for a in Acquisition::PORTFOLIO {
                let s = a.score(mu, sigma, best, 0.1);
                prop_assert!(a.weighted_score(mu, sigma, best, 0.1, p) <= s);
                prop_assert_eq!(a.weighted_score(mu, sigma, best, 0.1, 1.0), s);
            }
        }
    }

    #[test]
    fn zero_sigma_and_contextual_variance() {
        assert_eq!(expected_improvement(1.0, 0.0, 2.0, 0.5), 0.5);
        assert_eq!(probability_of_improvement(1.0, 0.0, 2.0, 0.5), 1.0);
        assert_eq!(probability_of_improvement(3.0, 0.0, 2.0, 0.5), 0.0);
        assert!(
            Acquisition::Ei.score(1.0, 0.0, 2.0, 0.0) > Acquisition::Ei.score(3.0, 0.0, 2.0, 0.0)
        );
        // Kernel Tuner's formula: mean std relative to the initial one, times best / initial mean.
        assert!((contextual_variance(0.5, 1.0, 10.0, 5.0) - 0.25).abs() < 1e-15);
        assert!((contextual_variance(0.5, 1.0, 10.0, -2.0) - 0.25).abs() < 1e-15);
    }
}
