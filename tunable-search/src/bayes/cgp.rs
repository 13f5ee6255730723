//! # The clustered Gaussian process
//!
//! GPU run times have cliffs: a configuration that runs out of registers or shared memory, or
//! loses occupancy, is suddenly much slower than its neighbour. One smooth GP averages across a
//! cliff and mispredicts both sides. The clustered GP ([`ClusteredGp`]) instead:
//!
//! 1. **clusters** the real observations by `(x, ξ·z)`, normalized coordinates and the
//!    standardized target scaled by `ξ` ([`KMeans`], `k = 3` by default, or chosen by BIC),
//!    after every observation, warm-started so labels stay stable;
//! 2. **classifies** every candidate by the labels of its `k = 3` nearest observations in `x`
//!    ([`Neighbours`]);
//! 3. fits **one independent [`Gp`] per cluster** on that cluster's observations and predicts
//!    each candidate with the GP of its class.
//!
//! The acquisition of a candidate is then **weighted by the size of its cluster**: the paper's
//! Algorithm 1 takes the maximum of EI within each cluster divided by the cluster's size, which
//! is the same as maximizing `EI(x) · n_min / n_class(x)` over all candidates
//! ([`Surrogate::candidate_weights`]); small clusters get explored, which is what the paper's
//! convergence argument needs. An optional **boundary penalty** multiplies the weight by
//! `exp(-β d² / dims)`, with `d` the distance from the candidate to the nearest observation of
//! another cluster among its neighbours (`dims` when there is none): a bias towards the edges of
//! the partition, off by default as the paper recommends. The **exploration rate** τ (a random
//! valid configuration with probability `1 - τ`) lives in the strategy ([`BayesOptions`]).
//!
//! Cluster GPs are kept up to date incrementally: a cluster whose members are unchanged except
//! for the new observation gets one [`Gp`] row update; only clusters whose members changed are
//! rebuilt. With one cluster every observation is such an update, so the model *is* the plain
//! GP, prediction for prediction (tested). Fantasies (batch asks) go to the GP of the class of
//! their configuration.
//!
//! [`BayesOptions`]: super::BayesOptions
//!
//! ## References
//! - H. Luo, J. W. Demmel, Y. Cho, X. S. Li, Y. Liu, "Non-smooth Bayesian optimization in tuning
//!   problems": Section 2.3, Algorithm 1 (Appendix A), Appendix E.

use super::cluster::{ClusterCount, KMeans};
use super::gp::CHUNK;
use super::knn::Neighbours;
use super::targets::standardization;
use super::{Gp, GpParams, Points, Prediction, Surrogate, likelihood};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::Arc;

/// Settings of a [`ClusteredGp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterOptions {
    /// How many clusters (the paper: k-means with `k = 3`).
    pub count: ClusterCount,
    /// The weight `ξ` of the standardized target against the coordinates in clustering.
    pub xi: f64,
    /// Clusters with fewer real observations are dissolved into the others.
    pub min_size: usize,
    /// Neighbours in the k-NN classification (the paper: 3).
    pub neighbours: usize,
    /// The boundary penalty's strength `β` (0: none).
    pub boundary: f64,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            count: ClusterCount::Fixed(3),
            xi: 1.0,
            min_size: 3,
            neighbours: 3,
            boundary: 0.0,
        }
    }
}

/// One cluster: the indices of its real observations (ascending) and its GP.
#[derive(Clone, Debug)]
struct Component {
    members: Vec<usize>,
    gp: Gp,
}

/// A clustered Gaussian process over the rows of a [`Points`] matrix (see the module docs).
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::bayes::{ClusterCount, ClusterOptions, ClusteredGp, GpParams, Covariance,
///     CovarianceKind, Points, Surrogate};
/// // A step: 1 on the left half, 10 on the right.
/// let pts = Arc::new(Points::new((0..40).map(|i| f64::from(i) / 39.0).collect(), 1).unwrap());
/// let params = GpParams::new(Covariance::new(CovarianceKind::Matern32, 0.5).unwrap(), 1e-6).unwrap();
/// let options = ClusterOptions { count: ClusterCount::Fixed(2), ..ClusterOptions::default() };
/// let mut cgp = ClusteredGp::new(params, Arc::clone(&pts), None, options, 1);
/// for r in (0..40).step_by(3) {
///     cgp.observe(r, if r < 20 { 1.0 } else { 10.0 });
/// }
/// assert_eq!(cgp.clusters(), 2);
/// assert!((cgp.predict(17).mean - 1.0).abs() < 0.05);
/// assert!((cgp.predict(22).mean - 10.0).abs() < 0.05);
/// ```
#[derive(Clone, Debug)]
pub struct ClusteredGp {
    params: GpParams,
    points: Arc<Points>,
    cand: Arc<[u32]>,
    options: ClusterOptions,
    rng: ChaCha8Rng,
    kmeans: KMeans,
    knn: Neighbours,
    rows: Vec<usize>,
    y: Vec<f64>,
    labels: Vec<usize>,
    components: Vec<Component>,
    /// Class of every candidate under the current labels.
    class: Vec<u32>,
    /// Clusters that hold fantasies.
    fantasized: Vec<bool>,
}

impl ClusteredGp {
    /// A clustered GP with no observations over `points`, predicting in bulk for the rows
    /// `candidates` (every row if `None`); `seed` seeds the k-means++ initialization.
    pub fn new(
        params: GpParams,
        points: Arc<Points>,
        candidates: Option<Arc<[u32]>>,
        options: ClusterOptions,
        seed: u64,
    ) -> Self {
        let cand: Arc<[u32]> = candidates.unwrap_or_else(|| (0..points.len() as u32).collect());
        let gp = Gp::new(params, Arc::clone(&points), Some(Arc::clone(&cand)));
        ClusteredGp {
            kmeans: KMeans::new(options.count, options.min_size),
            knn: Neighbours::new(options.neighbours, Arc::clone(&points), Arc::clone(&cand)),
            class: vec![0; cand.len()],
            params,
            points,
            cand,
            options,
            rng: ChaCha8Rng::seed_from_u64(seed),
            rows: Vec::new(),
            y: Vec::new(),
            labels: Vec::new(),
            components: vec![Component {
                members: Vec::new(),
                gp,
            }],
            fantasized: vec![false],
        }
    }

    /// The number of clusters now.
    pub fn clusters(&self) -> usize {
        self.components.len()
    }

    /// The cluster label of every real observation, in the order observed.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// The cluster of any row: the k-NN vote of its nearest observations.
    pub fn class_of(&self, row: usize) -> usize {
        if self.components.len() == 1 {
            return 0;
        }
        self.knn.classify_row(row, &self.labels)
    }

    /// The clustering features `(x, ξ z)` of every real observation.
    fn features(&self) -> (Vec<f64>, usize) {
        let dims = self.points.dims() + 1;
        let (m, s) = standardization(&self.y);
        let mut f = Vec::with_capacity(self.rows.len() * dims);
        for (&r, &y) in self.rows.iter().zip(&self.y) {
            f.extend_from_slice(self.points.row(r));
            f.push(self.options.xi * (y - m) / s);
        }
        (f, dims)
    }

    fn fresh_gp(&self) -> Gp {
        Gp::new(
            self.params,
            Arc::clone(&self.points),
            Some(Arc::clone(&self.cand)),
        )
    }

    /// Re-clusters after an observation and brings the cluster GPs up to date.
    fn recluster(&mut self) {
        let n = self.rows.len();
        let newest = n - 1;
        let (features, dims) = self.features();
        let labels = self.kmeans.fit(&features, dims, &mut self.rng).to_vec();
        let k = self.kmeans.clusters();
        let mut members = vec![Vec::new(); k];
        for (i, &l) in labels.iter().enumerate() {
            members[l].push(i);
        }
        let mut old: Vec<Option<Component>> = std::mem::take(&mut self.components)
            .into_iter()
            .map(Some)
            .collect();
        let mut components = Vec::with_capacity(k);
        for m in members {
            let reuse = old.iter().position(|c| {
                c.as_ref().is_some_and(|c| {
                    c.members.as_slice() == m.as_slice()
                        || (m.last() == Some(&newest) && c.members.as_slice() == &m[..m.len() - 1])
                })
            });
            let component = match reuse.and_then(|i| old[i].take()) {
                Some(mut c) => {
                    if c.members.len() < m.len() {
                        c.gp.observe(self.rows[newest], self.y[newest]);
                        c.members = m;
                    }
                    c
                }
                None => {
                    let mut gp = self.fresh_gp();
                    for &i in &m {
                        gp.observe(self.rows[i], self.y[i]);
                    }
                    Component { members: m, gp }
                }
            };
            components.push(component);
        }
        self.components = components;
        self.fantasized = vec![false; k];
        self.labels = labels;
        let (knn, labels) = (&self.knn, &self.labels);
        if k == 1 {
            self.class.iter_mut().for_each(|c| *c = 0);
        } else {
            self.class
                .par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(ci, class)| {
                    for (i, c) in class.iter_mut().enumerate() {
                        *c = knn.classify_candidate(ci * CHUNK + i, labels) as u32;
                    }
                });
        }
    }

    /// The acquisition weight of a candidate of class `class`: cluster size and boundary penalty.
    fn class_weight(&self, class: usize, boundary_sq: impl FnOnce() -> Option<f64>) -> f64 {
        let sizes = self.components.iter().map(|c| c.members.len().max(1));
        let smallest = sizes.min().unwrap_or(1) as f64;
        let mut w = smallest / self.components[class].members.len().max(1) as f64;
        if self.options.boundary > 0.0 && self.components.len() > 1 {
            let dims = self.points.dims() as f64;
            let d2 = boundary_sq().unwrap_or(dims).min(dims);
            w *= (-self.options.boundary * d2 / dims).exp();
        }
        w
    }
}

impl Surrogate for ClusteredGp {
    fn observe(&mut self, row: usize, y: f64) {
        assert!(y.is_finite(), "cGP target at row {row} is not finite: {y}");
        self.clear_fantasies();
        self.rows.push(row);
        self.y.push(y);
        self.knn.observe(row);
        self.recluster();
    }

    fn fantasize(&mut self, row: usize, y: f64) {
        let c = self.class_of(row);
        self.components[c].gp.fantasize(row, y);
        self.fantasized[c] = true;
    }

    fn clear_fantasies(&mut self) {
        for (c, f) in self.components.iter_mut().zip(&mut self.fantasized) {
            if std::mem::take(f) {
                c.gp.clear_fantasies();
            }
        }
    }

    fn observations(&self) -> usize {
        self.rows.len()
    }

    fn candidates(&self) -> &[u32] {
        &self.cand
    }

    fn predict_candidates(&self, out: &mut [Prediction]) {
        if self.components.len() == 1 {
            return self.components[0].gp.predict_candidates(out);
        }
        assert_eq!(out.len(), self.cand.len(), "one prediction per candidate");
        let stand: Vec<(f64, f64)> = self
            .components
            .iter()
            .map(|c| c.gp.standardization())
            .collect();
        let (components, class) = (&self.components, &self.class);
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(ci, out)| {
            for (i, o) in out.iter_mut().enumerate() {
                let c = class[ci * CHUNK + i] as usize;
                *o = components[c]
                    .gp
                    .candidate_prediction(ci * CHUNK + i, stand[c]);
            }
        });
    }

    fn predict(&self, row: usize) -> Prediction {
        self.components[self.class_of(row)].gp.predict(row)
    }

    fn candidate_weights(&self, out: &mut [f64]) -> bool {
        if self.components.len() == 1 {
            return false;
        }
        let (knn, labels, class) = (&self.knn, &self.labels, &self.class);
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(ci, out)| {
            for (i, o) in out.iter_mut().enumerate() {
                let j = ci * CHUNK + i;
                let c = class[j] as usize;
                *o = self.class_weight(c, || knn.nearest_other(j, c, labels));
            }
        });
        true
    }

    fn weight(&self, row: usize) -> f64 {
        if self.components.len() == 1 {
            return 1.0;
        }
        let c = self.class_of(row);
        let x = self.points.row(row);
        self.class_weight(c, || {
            self.rows
                .iter()
                .zip(&self.labels)
                .filter(|&(_, &l)| l != c)
                .map(|(&r, _)| {
                    let p = self.points.row(r);
                    x.iter().zip(p).map(|(a, b)| (a - b) * (a - b)).sum::<f64>()
                })
                .min_by(f64::total_cmp)
        })
    }

    fn retarget(&mut self, y: &[f64]) {
        self.clear_fantasies();
        assert_eq!(y.len(), self.rows.len(), "one target per real observation");
        self.y.copy_from_slice(y);
        if !self.rows.is_empty() {
            // The clusters depend on the targets: cluster again, every cluster's GP afresh.
            self.components.clear();
            self.recluster();
        }
    }

    fn set_params(&mut self, params: GpParams) {
        self.clear_fantasies();
        self.params = params;
        for c in &mut self.components {
            c.gp.set_params(params);
        }
    }

    fn fit_hyperparameters(&mut self) {
        self.clear_fantasies();
        if self.rows.len() < 3 {
            return;
        }
        let fitted = likelihood::fit(self.params.kernel, &self.points, &self.rows, &self.y);
        if fitted != self.params {
            Surrogate::set_params(self, fitted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bayes::{Covariance, CovarianceKind};
    use rand::RngExt;

    fn points(seed: u64, len: usize, dims: usize) -> Arc<Points> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Arc::new(Points::new((0..len * dims).map(|_| rng.random::<f64>()).collect(), dims).unwrap())
    }

    fn params() -> GpParams {
        GpParams::new(
            Covariance::new(CovarianceKind::Matern32, 0.8).unwrap(),
            1e-6,
        )
        .unwrap()
    }

    /// A function with a jump: `x0 + x1` on one side of `x0 = 0.5`, plus 5 on the other.
    fn jump(p: &Points, r: usize) -> f64 {
        let x = p.row(r);
        x[0] + x[1] + if x[0] > 0.5 { 5.0 } else { 0.0 }
    }

    #[test]
    fn one_cluster_is_the_plain_gp() {
        let pts = points(1, 300, 3);
        let cand: Arc<[u32]> = (0..300).step_by(2).collect();
        let one = ClusterOptions {
            count: ClusterCount::Fixed(1),
            ..ClusterOptions::default()
        };
        let mut cgp = ClusteredGp::new(params(), Arc::clone(&pts), Some(cand.clone()), one, 9);
        let mut gp = Gp::new(params(), Arc::clone(&pts), Some(cand.clone()));
        let mut a = vec![Prediction::default(); cand.len()];
        let mut b = a.clone();
        for r in (0..300).step_by(7) {
            cgp.observe(r, jump(&pts, r));
            gp.observe(r, jump(&pts, r));
            for f in [3, 5] {
                cgp.fantasize(f, 1.0);
                gp.fantasize(f, 1.0);
            }
            cgp.predict_candidates(&mut a);
            gp.predict_candidates(&mut b);
            assert_eq!(a, b);
            for q in [1, 2, 299] {
                assert_eq!(cgp.predict(q), gp.predict(q));
            }
            let mut w = vec![0.5; cand.len()];
            assert!(!cgp.candidate_weights(&mut w));
            assert_eq!(cgp.weight(1), 1.0);
        }
    }

    #[test]
    fn deterministic_for_a_seed_and_splits_a_jump() {
        let pts = points(2, 400, 2);
        let run = |seed| {
            let mut cgp = ClusteredGp::new(
                params(),
                Arc::clone(&pts),
                None,
                ClusterOptions::default(),
                seed,
            );
            for r in 0..60 {
                cgp.observe(r, jump(&pts, r));
            }
            let mut out = vec![Prediction::default(); 400];
            cgp.predict_candidates(&mut out);
            (cgp.labels().to_vec(), cgp.class.clone(), out)
        };
        let (labels, class, preds) = run(4);
        assert_eq!((labels.clone(), class.clone(), preds.clone()), run(4));
        // No cluster mixes both sides of the jump.
        for (i, &l) in labels.iter().enumerate() {
            for (j, &m) in labels.iter().enumerate() {
                if l == m {
                    assert_eq!(pts.row(i)[0] > 0.5, pts.row(j)[0] > 0.5, "{i} {j}");
                }
            }
        }
        // The clustered model predicts unobserved points on both sides better than one GP.
        let mut gp = Gp::new(params(), Arc::clone(&pts), None);
        (0..60).for_each(|r| gp.observe(r, jump(&pts, r)));
        let err = |pred: &dyn Fn(usize) -> f64| {
            (60..400)
                .map(|r| (pred(r) - jump(&pts, r)).abs())
                .sum::<f64>()
        };
        let (e_cgp, e_gp) = (err(&|r| preds[r].mean), err(&|r| gp.predict(r).mean));
        assert!(e_cgp < e_gp, "cGP error {e_cgp}, GP error {e_gp}");
    }

    #[test]
    fn weights_follow_cluster_sizes_and_incremental_equals_rebuild() {
        let pts = points(3, 200, 2);
        let mut cgp = ClusteredGp::new(
            params(),
            Arc::clone(&pts),
            None,
            ClusterOptions::default(),
            1,
        );
        for r in 0..40 {
            cgp.observe(r, jump(&pts, r));
        }
        let k = cgp.clusters();
        assert!(k >= 2);
        let mut w = vec![0.0; 200];
        assert!(cgp.candidate_weights(&mut w));
        let sizes: Vec<usize> = cgp.components.iter().map(|c| c.members.len()).collect();
        let smallest = *sizes.iter().min().unwrap() as f64;
        for (i, &wi) in w.iter().enumerate() {
            let c = cgp.class[i] as usize;
            assert!((wi - smallest / sizes[c] as f64).abs() < 1e-15);
            assert_eq!(wi, cgp.weight(i));
        }
        // Each cluster's GP equals a GP fitted from scratch on the cluster's observations.
        for c in &cgp.components {
            let rows: Vec<usize> = c.members.iter().map(|&i| cgp.rows[i]).collect();
            let y: Vec<f64> = c.members.iter().map(|&i| cgp.y[i]).collect();
            let exact = crate::bayes::exact_posterior(params(), &pts, &rows, &y, &[150, 199]);
            for (q, e) in [150, 199].into_iter().zip(exact) {
                let p = c.gp.predict(q);
                assert!((p.mean - e.mean).abs() < 1e-9 && (p.var - e.var).abs() < 1e-9);
            }
        }
        // With a boundary penalty, weights shrink away from the partition's edges.
        let opts = ClusterOptions {
            boundary: 2.0,
            ..ClusterOptions::default()
        };
        let mut pen = ClusteredGp::new(params(), Arc::clone(&pts), None, opts, 1);
        (0..40).for_each(|r| pen.observe(r, jump(&pts, r)));
        let mut wp = vec![0.0; 200];
        assert!(pen.candidate_weights(&mut wp));
        assert!(wp.iter().zip(&w).all(|(p, w)| p <= w));
        assert!(wp.iter().zip(&w).any(|(p, w)| p < w));
    }
}
