//! # Hyperparameters by marginal likelihood
//!
//! The optional alternative to the fixed lengthscale of "Bayesian Optimization for auto-tuning
//! GPU kernels" (`fit=true`): the lengthscale and the noise variance that maximize the log
//! marginal likelihood of the standardized targets,
//!
//! `ln p(y | X) = -½ yᵀ (K + σₙ² I)⁻¹ y - Σᵢ ln Lᵢᵢ - (n / 2) ln 2π`,
//!
//! found by a grid over `ln l` and `ln σₙ²` followed by a golden-section refinement of `ln l` at
//! the best noise. Each evaluation is a dense Cholesky factorization (nalgebra), `O(n³)`. Paper
//! 000 fixes the lengthscale because the rough, discontinuous objectives of GPU kernels pull a
//! fitted lengthscale towards their least smooth part; this option lets that be measured.
//!
//! ## References
//! - C. E. Rasmussen, C. K. I. Williams, *Gaussian Processes for Machine Learning*, MIT Press,
//!   2006, Section 5.4 (Eq. 5.8).

use super::targets::standardization;
use super::{Covariance, GpParams, Points};
use nalgebra::{DMatrix, DVector};

/// Lengthscales tried by [`fit`]: 24 values log-spaced over `[0.05, 20]`.
const LENGTHSCALES: (f64, f64, usize) = (0.05, 20.0, 24);
/// Noise variances tried by [`fit`].
const NOISES: [f64; 6] = [1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 0.3];

/// The log marginal likelihood of targets `y` (standardized first) at `rows` under `params`
/// (`-inf` if the covariance matrix is not numerically positive definite).
pub fn log_marginal_likelihood(
    params: GpParams,
    points: &Points,
    rows: &[usize],
    y: &[f64],
) -> f64 {
    lml(points, rows, params, y)
}

fn lml(points: &Points, rows: &[usize], params: GpParams, y: &[f64]) -> f64 {
    let n = y.len();
    let (m, s) = standardization(y);
    let k = DMatrix::from_fn(n, n, |i, j| {
        params.kernel.eval(points.row(rows[i]), points.row(rows[j]))
            + if i == j { params.noise } else { 0.0 }
    });
    let Some(chol) = nalgebra::Cholesky::new(k) else {
        return f64::NEG_INFINITY;
    };
    let ys = DVector::from_iterator(n, y.iter().map(|v| (v - m) / s));
    let alpha = chol.solve(&ys);
    let log_det_half: f64 = chol.l_dirty().diagonal().iter().map(|d| d.ln()).sum();
    -0.5 * ys.dot(&alpha) - log_det_half - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
}

/// The lengthscale and noise of `kernel` (its shape, additive and overlap parts kept) that
/// maximize the log marginal likelihood of `y` at `rows` (see the module docs). Ties keep the
/// earlier grid point; the result is deterministic.
pub fn fit(kernel: Covariance, points: &Points, rows: &[usize], y: &[f64]) -> GpParams {
    let make = |ln_l: f64, noise: f64| {
        let kernel = kernel
            .with_lengthscale(ln_l.exp())
            .expect("finite lengthscale");
        GpParams::new(kernel, noise).expect("valid")
    };
    let (lo, hi, steps) = LENGTHSCALES;
    let (lo, hi) = (lo.ln(), hi.ln());
    let step = (hi - lo) / (steps - 1) as f64;
    let mut best = (f64::NEG_INFINITY, lo, NOISES[0]);
    for &noise in &NOISES {
        for i in 0..steps {
            let ln_l = lo + step * i as f64;
            let v = lml(points, rows, make(ln_l, noise), y);
            if v > best.0 {
                best = (v, ln_l, noise);
            }
        }
    }
    // Golden-section search of ln l within one grid step either side, at the best noise.
    let (_, mut ln_l, noise) = best;
    let f = |x: f64| lml(points, rows, make(x, noise), y);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = ((ln_l - step).max(lo), (ln_l + step).min(hi));
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..20 {
        if fc > fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    let (x, fx) = if fc > fd { (c, fc) } else { (d, fd) };
    if fx > best.0 {
        ln_l = x;
    }
    make(ln_l, noise)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bayes::CovarianceKind;

    #[test]
    fn recovers_a_lengthscale_of_the_right_order() {
        // A smooth function sampled on a 1-d grid: a long lengthscale explains it best; white
        // noise is explained by noise or a short lengthscale.
        let pts = Points::new((0..60).map(|i| f64::from(i) / 59.0).collect(), 1).unwrap();
        let rows: Vec<usize> = (0..60).step_by(2).collect();
        let smooth: Vec<f64> = rows.iter().map(|&r| (pts.row(r)[0] * 3.0).sin()).collect();
        let p = fit(
            Covariance::new(CovarianceKind::Rbf, 1.0).unwrap(),
            &pts,
            &rows,
            &smooth,
        );
        assert!(p.kernel.lengthscale() > 0.2, "{p:?}");
        let rough: Vec<f64> = rows
            .iter()
            .map(|&r| if (r / 2) % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let q = fit(
            Covariance::new(CovarianceKind::Rbf, 1.0).unwrap(),
            &pts,
            &rows,
            &rough,
        );
        assert!(q.kernel.lengthscale() < p.kernel.lengthscale() || q.noise > p.noise);
        let best = log_marginal_likelihood(p, &pts, &rows, &smooth);
        for l in [0.05, 0.3, 1.0, 5.0] {
            let other =
                GpParams::new(Covariance::new(CovarianceKind::Rbf, l).unwrap(), p.noise).unwrap();
            assert!(log_marginal_likelihood(other, &pts, &rows, &smooth) <= best + 1e-9);
        }
    }
}
