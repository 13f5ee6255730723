//! # Expected hypervolume improvement
//!
//! Bayesian optimization of two objectives (Emmerich, Giannakoglou, Naujoks, "Single- and
//! multiobjective evolutionary optimization assisted by Gaussian random field metamodels"): one
//! Gaussian process per objective ([`Gp`], over the logarithm of each objective's ratio, see
//! `ratio.rs`), and the next configuration is the unasked one whose predicted pair of values is
//! expected to add the most hypervolume to the front found so far. The expectation is a Monte
//! Carlo mean over `samples` draws of the two predictions (independent Gaussians), the same
//! standard normal draws for every candidate so that candidates are compared on equal terms;
//! the hypervolume is measured against the reference point of [`pareto::reference`] of the
//! points told. The first `init` configurations are random, the hyperparameters are refitted by
//! marginal likelihood every `refit` results, and when no candidate is expected to improve the
//! front the configuration asked is random.

use super::archive::{Archive, fill};
use super::ratio::ratio;
use super::{MultiStrategy, MultiTrial};
use crate::Space;
use crate::bayes::likelihood::fit;
use crate::bayes::{Covariance, CovarianceKind, Gp, GpParams, Points, Prediction, Surrogate};
use crate::pareto;
use crate::strategy::options::{at_least, declare_options};
use rand::RngExt;
use std::sync::Arc;

declare_options! {
    /// Options of [`Ehvi`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct EhviOptions {
        /// Random configurations asked before the models pick.
        init: usize = 10, "init" => at_least(2);
        /// Draws of the Monte Carlo expectation.
        samples: usize = 32, "samples" => at_least(1);
        /// Results between refits of the models' hyperparameters.
        refit: usize = 10, "refit" => at_least(1);
    }
}

/// Expected hypervolume improvement over two Gaussian processes; see the [module docs](self).
pub struct Ehvi {
    archive: Archive,
    opts: EhviOptions,
    points: Arc<Points>,
    models: [Gp; 2],
    /// Each objective's first value told: the unit of its ratios.
    scales: Option<[f64; 2]>,
    /// Results observed since the last refit.
    since_fit: usize,
    /// The standard normal draws of the expectation, one pair per sample.
    draws: Vec<[f64; 2]>,
}

impl std::fmt::Debug for Ehvi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ehvi")
            .field("opts", &self.opts)
            .field("told", &self.archive.points.len())
            .finish_non_exhaustive()
    }
}

/// The covariance the models start from (refitted by marginal likelihood).
fn kernel() -> Covariance {
    Covariance::new(CovarianceKind::Matern52, 0.5).expect("a positive lengthscale")
}

/// A standard normal draw (Box-Muller).
fn normal<R: rand::Rng + ?Sized>(rng: &mut R) -> f64 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The hypervolume `p` adds to `front` (sorted by the first objective, as
/// [`pareto::front`] returns it) within `reference`: the box `p` dominates less the part of it
/// the front already dominates, which is the hypervolume of the front's points moved into the
/// box.
fn improvement(front: &[[f64; 2]], p: [f64; 2], reference: [f64; 2]) -> f64 {
    if p[0] >= reference[0] || p[1] >= reference[1] {
        return 0.0;
    }
    let whole = (reference[0] - p[0]) * (reference[1] - p[1]);
    let mut covered = 0.0;
    let mut ceiling = reference[1];
    for q in front {
        let (x, y) = (q[0].max(p[0]), q[1].max(p[1]));
        if x >= reference[0] || y >= ceiling {
            continue;
        }
        covered += (reference[0] - x) * (ceiling - y);
        ceiling = y;
    }
    (whole - covered).max(0.0)
}

impl Ehvi {
    /// EHVI over `space` for two objectives, seeded.
    pub fn new(space: Arc<Space>, opts: EhviOptions, seed: u64) -> Self {
        let points = Arc::new(Points::from_space(&space));
        let params = GpParams::new(kernel(), 1e-4).expect("a valid noise");
        let models = [
            Gp::new(params, Arc::clone(&points), None),
            Gp::new(params, Arc::clone(&points), None),
        ];
        let mut archive = Archive::new(space, 2, seed);
        let draws = (0..opts.samples)
            .map(|_| [normal(&mut archive.rng), normal(&mut archive.rng)])
            .collect();
        Ehvi {
            archive,
            opts,
            points,
            models,
            scales: None,
            since_fit: 0,
            draws,
        }
    }

    /// The models' targets of told values.
    fn targets(&self, values: &[f64]) -> [f64; 2] {
        let s = self.scales.unwrap_or([values[0], values[1]]);
        [ratio(values[0], s[0]).ln(), ratio(values[1], s[1]).ln()]
    }

    /// The unasked position of the largest expected improvement, if any improves.
    fn pick(&mut self) -> Option<usize> {
        let told: Vec<[f64; 2]> = self
            .archive
            .points
            .iter()
            .map(|p| self.targets(&p.1))
            .collect();
        let reference = pareto::reference(&told)?;
        let front: Vec<[f64; 2]> = pareto::front(&told).into_iter().map(|i| told[i]).collect();
        let n = self.points.len();
        let mut predictions = [
            vec![Prediction::default(); n],
            vec![Prediction::default(); n],
        ];
        for (m, out) in self.models.iter().zip(predictions.iter_mut()) {
            m.predict_candidates(out);
        }
        let mut best: Option<(usize, f64)> = None;
        let [first, second] = &predictions;
        for (p, (&a, &b)) in first.iter().zip(second).enumerate() {
            if self.archive.is_asked(p) {
                continue;
            }
            let (sa, sb) = (a.std(), b.std());
            let gain: f64 = self
                .draws
                .iter()
                .map(|z| improvement(&front, [a.mean + sa * z[0], b.mean + sb * z[1]], reference))
                .sum();
            if gain > 0.0 && best.is_none_or(|(_, g)| gain > g) {
                best = Some((p, gain));
            }
        }
        best.map(|b| b.0)
    }

    /// Refits both models' hyperparameters to what they observed.
    fn refit(&mut self) {
        for m in &mut self.models {
            let rows = m.observed_rows().to_vec();
            let y = m.observed_targets().to_vec();
            let params = fit(kernel(), &self.points, &rows, &y);
            m.set_params(params);
        }
        self.since_fit = 0;
    }
}

impl MultiStrategy for Ehvi {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        fill(
            self,
            n,
            |s| &mut s.archive,
            |s| {
                if s.archive.points.len() >= s.opts.init {
                    s.pick()
                } else {
                    None
                }
            },
        )
    }

    fn tell(&mut self, trials: &[MultiTrial]) {
        let before = self.archive.points.len();
        self.archive.tell(trials);
        let new: Vec<(usize, Vec<f64>)> = self.archive.points[before..].to_vec();
        if self.scales.is_none()
            && let Some((_, v)) = new.first()
        {
            self.scales = Some([v[0], v[1]]);
        }
        for (p, v) in &new {
            let y = self.targets(v);
            self.models[0].observe(*p, y[0]);
            self.models[1].observe(*p, y[1]);
        }
        self.since_fit += new.len();
        if self.since_fit >= self.opts.refit && self.archive.points.len() >= self.opts.init {
            self.refit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn improvement_is_the_hypervolume_added() {
        let front = [[1.0, 4.0], [2.0, 2.0], [4.0, 1.0]];
        let r = [5.0, 5.0];
        let hv = |pts: &[[f64; 2]]| pareto::hypervolume(pts, r);
        for p in [
            [1.5, 3.0],
            [0.5, 4.5],
            [3.0, 0.5],
            [0.5, 0.5],
            [3.0, 3.0],
            [6.0, 0.1],
            [1.0, 4.0],
            [4.5, 0.2],
        ] {
            let mut with = front.to_vec();
            with.push(p);
            let want = hv(&with) - hv(&front);
            let got = improvement(&front, p, r);
            assert!((got - want).abs() < 1e-9, "{p:?}: {got} != {want}");
        }
    }
}
