//! # Gaussian process with incremental updates
//!
//! An exact Gaussian-process regression over the rows of a [`Points`] matrix (the normalized
//! coordinates of a space's valid configurations), kept up to date one observation at a time:
//!
//! - the Cholesky factor `L` of `K + σₙ² I` over the `n` observations grows by one row per
//!   observation (a forward substitution, `O(n²)`);
//! - for every *candidate* row `c` the model caches `v_c = L⁻¹ k(X, c)` (the cross-covariances
//!   whitened by `L`) as one column per observation, and three running sums per candidate:
//!   `v_c · L⁻¹y`, `v_c · L⁻¹1` and `|v_c|²`. A new observation appends one element to every `v_c`
//!   (`O(n)` per candidate, in parallel over fixed chunks of candidates) and updates the sums, so
//!   the posterior mean and variance of every candidate follow in `O(1)` each.
//!
//! Targets are standardized (mean 0, standard deviation 1 over the real observations) without
//! refactoring anything: the standardized prediction is `(v·L⁻¹y - m v·L⁻¹1) / s`, so a new mean
//! `m` or scale `s` costs nothing. The kernel has unit variance in standardized units and the noise
//! `σₙ²` (a small nugget by default) is relative to it. Predictions are returned in the units of
//! the targets.
//!
//! [`exact_posterior`] computes the same posterior from scratch with a dense Cholesky
//! factorization (nalgebra): the reference the incremental updates are tested against.
//!
//! ## References
//! - C. E. Rasmussen, C. K. I. Williams, *Gaussian Processes for Machine Learning*, MIT Press,
//!   2006, Algorithm 2.1.
//! - M. A. Osborne, *Bayesian Gaussian Processes for Sequential Prediction, Optimisation and
//!   Quadrature*, PhD thesis, Oxford, 2010, Section 2.5 (updating a Cholesky factor by a row).

use super::targets::standardization;
use super::{GpParams, Points, Prediction, Surrogate, likelihood};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use std::sync::Arc;

/// Candidates per parallel work item: the unit of the fixed-order parallel loops (results do not
/// depend on the number of threads).
pub(crate) const CHUNK: usize = 2048;

/// An exact Gaussian process whose candidates' predictions are updated in `O(n)` per candidate
/// and observation (see the module docs).
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::bayes::{Gp, GpParams, Covariance, CovarianceKind, Points, Surrogate};
/// let pts = Arc::new(Points::new(vec![0.0, 0.25, 0.5, 0.75, 1.0], 1).unwrap());
/// let params = GpParams::new(Covariance::new(CovarianceKind::Matern52, 0.5).unwrap(), 1e-8).unwrap();
/// let mut gp = Gp::new(params, Arc::clone(&pts), None);
/// gp.observe(0, 3.0);
/// gp.observe(4, 1.0);
/// let p = gp.predict(4);
/// assert!((p.mean - 1.0).abs() < 1e-6 && p.var < 1e-6);
/// assert!(gp.predict(2).var > 0.1);
/// ```
#[derive(Clone, Debug)]
pub struct Gp {
    params: GpParams,
    points: Arc<Points>,
    cand: Arc<[u32]>,
    /// The candidates' coordinates, contiguous in candidate order, when the candidates are a
    /// subset of the rows (a pool): the per-observation update reads them in order instead of
    /// gathering rows scattered over a matrix of the whole space (the same numbers either way).
    cand_points: Option<Points>,
    /// Row -> index in `cand`, `u32::MAX` for rows that are not candidates.
    slot: Arc<[u32]>,
    rows: Vec<usize>,
    y: Vec<f64>,
    committed: usize,
    /// Lower-triangular factor; the leading `n x n` block is in use, the rest is capacity.
    l: DMatrix<f64>,
    /// `L⁻¹ y` and `L⁻¹ 1`.
    w: Vec<f64>,
    u: Vec<f64>,
    /// `v_c[j]` for observation `j` and candidate `c` at `cols[j * ncand + c]`.
    cols: Vec<f64>,
    /// Per candidate: `v_c · w`, `v_c · u`, `|v_c|²`.
    acc: Vec<[f64; 3]>,
}

impl Gp {
    /// A GP with no observations over `points`, predicting in bulk for the rows `candidates`
    /// (every row if `None`).
    pub fn new(params: GpParams, points: Arc<Points>, candidates: Option<Arc<[u32]>>) -> Self {
        let cand_points = candidates.as_ref().map(|rows| {
            let data = rows
                .iter()
                .flat_map(|&r| points.row(r as usize).iter().copied())
                .collect();
            Points::new(data, points.dims()).expect("rows of finite points")
        });
        let cand: Arc<[u32]> = candidates.unwrap_or_else(|| (0..points.len() as u32).collect());
        let mut slot = vec![u32::MAX; points.len()];
        for (i, &r) in cand.iter().enumerate() {
            slot[r as usize] = i as u32;
        }
        Gp {
            params,
            points,
            acc: vec![[0.0; 3]; cand.len()],
            cand,
            cand_points,
            slot: slot.into(),
            rows: Vec::new(),
            y: Vec::new(),
            committed: 0,
            l: DMatrix::zeros(0, 0),
            w: Vec::new(),
            u: Vec::new(),
            cols: Vec::new(),
        }
    }

    /// Its hyperparameters.
    pub fn params(&self) -> GpParams {
        self.params
    }

    /// The points it models.
    pub fn points(&self) -> &Arc<Points> {
        &self.points
    }

    /// The rows observed so far (real observations, then fantasies), in order.
    pub fn observed_rows(&self) -> &[usize] {
        &self.rows
    }

    /// The targets observed so far, in the order of [`observed_rows`](Self::observed_rows).
    pub fn observed_targets(&self) -> &[f64] {
        &self.y
    }

    /// The standardization `(mean, standard deviation)` of the real observations' targets
    /// (`(0, 1)` with none; the deviation is 1 while it is zero).
    pub fn standardization(&self) -> (f64, f64) {
        standardization(&self.y[..self.committed])
    }

    fn ensure_capacity(&mut self, n: usize) {
        if self.l.nrows() >= n {
            return;
        }
        let cap = n.max(2 * self.l.nrows()).max(32);
        let old = std::mem::replace(&mut self.l, DMatrix::zeros(0, 0));
        self.l = old.resize(cap, cap, 0.0);
        self.cols.reserve((cap - self.rows.len()) * self.cand.len());
    }

    /// Appends an observation (real or fantasy) to the factor and the candidate caches.
    fn push(&mut self, row: usize, y: f64) {
        assert!(y.is_finite(), "GP target at row {row} is not finite: {y}");
        let n = self.rows.len();
        self.ensure_capacity(n + 1);
        let x = self.points.row(row);
        let kernel = self.params.kernel;
        let mut k = DVector::from_fn(n, |j, _| kernel.eval(x, self.points.row(self.rows[j])));
        if n > 0 {
            self.l
                .view((0, 0), (n, n))
                .solve_lower_triangular_mut(&mut k);
        }
        let noise = self.params.noise;
        let d = (1.0 + noise - k.norm_squared()).max(0.5 * noise).sqrt();
        for j in 0..n {
            self.l[(n, j)] = k[j];
        }
        self.l[(n, n)] = d;
        let ks = k.as_slice();
        let w_new = (y - dot(ks, &self.w)) / d;
        let u_new = (1.0 - dot(ks, &self.u)) / d;

        let nc = self.cand.len();
        let old = self.cols.len();
        self.cols.resize(old + nc, 0.0);
        let (prev, col) = self.cols.split_at_mut(old);
        let prev: &[f64] = prev;
        let (points, cand, local) = (&*self.points, &*self.cand, self.cand_points.as_ref());
        col.par_chunks_mut(CHUNK)
            .zip(self.acc.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(ci, (col, acc))| {
                let off = ci * CHUNK;
                match local {
                    Some(local) => {
                        for (i, v) in col.iter_mut().enumerate() {
                            *v = kernel.eval(x, local.row(off + i));
                        }
                    }
                    None => {
                        for (i, v) in col.iter_mut().enumerate() {
                            *v = kernel.eval(x, points.row(cand[off + i] as usize));
                        }
                    }
                }
                for (j, &lj) in ks.iter().enumerate() {
                    let src = &prev[j * nc + off..j * nc + off + col.len()];
                    for (v, s) in col.iter_mut().zip(src) {
                        *v -= lj * s;
                    }
                }
                for (v, a) in col.iter_mut().zip(acc) {
                    *v /= d;
                    a[0] += *v * w_new;
                    a[1] += *v * u_new;
                    a[2] += *v * *v;
                }
            });
        self.rows.push(row);
        self.y.push(y);
        self.w.push(w_new);
        self.u.push(u_new);
    }

    /// Forgets every observation after the first `n`.
    fn truncate(&mut self, n: usize) {
        let total = self.rows.len();
        if n >= total {
            return;
        }
        let nc = self.cand.len();
        let (cols, w, u) = (&self.cols, &self.w, &self.u);
        self.acc
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, acc)| {
                let off = ci * CHUNK;
                for j in (n..total).rev() {
                    let src = &cols[j * nc + off..j * nc + off + acc.len()];
                    for (a, &v) in acc.iter_mut().zip(src) {
                        a[0] -= v * w[j];
                        a[1] -= v * u[j];
                        a[2] -= v * v;
                    }
                }
            });
        self.cols.truncate(n * nc);
        self.rows.truncate(n);
        self.y.truncate(n);
        self.w.truncate(n);
        self.u.truncate(n);
        self.committed = self.committed.min(n);
    }

    /// Drops every observation and fantasy and uses `params` from now on.
    fn reset(&mut self, params: GpParams) {
        self.params = params;
        self.rows.clear();
        self.y.clear();
        self.w.clear();
        self.u.clear();
        self.cols.clear();
        self.committed = 0;
        self.acc.iter_mut().for_each(|a| *a = [0.0; 3]);
    }

    /// Replaces the hyperparameters and conditions again on the same real observations.
    pub fn set_params(&mut self, params: GpParams) {
        let rows = self.rows[..self.committed].to_vec();
        let y = self.y[..self.committed].to_vec();
        self.reset(params);
        for (r, v) in rows.into_iter().zip(y) {
            self.observe(r, v);
        }
    }

    /// Replaces the targets of the real observations (in the order observed) and drops the
    /// fantasies: `O(n² + n · candidates)`, the factor is kept (the covariance depends on the
    /// points only).
    fn replace_targets(&mut self, y: &[f64]) {
        self.truncate(self.committed);
        let n = self.committed;
        assert_eq!(y.len(), n, "one target per real observation");
        if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            panic!("GP target at row {} is not finite: {v}", self.rows[i]);
        }
        self.y.copy_from_slice(y);
        let mut w = DVector::from_column_slice(y);
        if n > 0 {
            self.l
                .view((0, 0), (n, n))
                .solve_lower_triangular_mut(&mut w);
        }
        self.w.copy_from_slice(w.as_slice());
        let nc = self.cand.len();
        let (cols, w) = (&self.cols, &self.w);
        self.acc
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, acc)| {
                let off = ci * CHUNK;
                acc.iter_mut().for_each(|a| a[0] = 0.0);
                for (j, &wj) in w.iter().enumerate() {
                    let src = &cols[j * nc + off..j * nc + off + acc.len()];
                    for (a, &v) in acc.iter_mut().zip(src) {
                        a[0] += v * wj;
                    }
                }
            });
    }

    /// The prediction at candidate `i` (an index into the candidates) under the standardization
    /// `(mean, sd)` of [`standardization`](Self::standardization), computed once by the caller.
    #[inline]
    pub(crate) fn candidate_prediction(&self, i: usize, (m, s): (f64, f64)) -> Prediction {
        Self::prediction_of_sums(m, s, self.acc[i])
    }

    #[inline]
    fn prediction_of_sums(m: f64, s: f64, a: [f64; 3]) -> Prediction {
        Prediction {
            mean: m + a[0] - m * a[1],
            var: s * s * (1.0 - a[2]).max(0.0),
        }
    }
}

impl Surrogate for Gp {
    fn observe(&mut self, row: usize, y: f64) {
        self.clear_fantasies();
        self.push(row, y);
        self.committed += 1;
    }

    fn fantasize(&mut self, row: usize, y: f64) {
        self.push(row, y);
    }

    fn clear_fantasies(&mut self) {
        self.truncate(self.committed);
    }

    fn observations(&self) -> usize {
        self.committed
    }

    fn candidates(&self) -> &[u32] {
        &self.cand
    }

    fn predict_candidates(&self, out: &mut [Prediction]) {
        assert_eq!(out.len(), self.cand.len(), "one prediction per candidate");
        let (m, s) = self.standardization();
        out.par_chunks_mut(CHUNK)
            .zip(self.acc.par_chunks(CHUNK))
            .for_each(|(out, acc)| {
                for (o, &a) in out.iter_mut().zip(acc) {
                    *o = Self::prediction_of_sums(m, s, a);
                }
            });
    }

    fn predict(&self, row: usize) -> Prediction {
        let (m, s) = self.standardization();
        let slot = self.slot[row];
        if slot != u32::MAX {
            return Self::prediction_of_sums(m, s, self.acc[slot as usize]);
        }
        let n = self.rows.len();
        let x = self.points.row(row);
        let mut k = DVector::from_fn(n, |j, _| {
            self.params.kernel.eval(x, self.points.row(self.rows[j]))
        });
        if n > 0 {
            self.l
                .view((0, 0), (n, n))
                .solve_lower_triangular_mut(&mut k);
        }
        let k = k.as_slice();
        Self::prediction_of_sums(m, s, [dot(k, &self.w), dot(k, &self.u), dot(k, k)])
    }

    fn set_params(&mut self, params: GpParams) {
        Gp::set_params(self, params);
    }

    fn retarget(&mut self, y: &[f64]) {
        self.replace_targets(y);
    }

    fn fit_hyperparameters(&mut self) {
        let rows = &self.rows[..self.committed];
        let y = &self.y[..self.committed];
        if rows.len() < 3 {
            return;
        }
        let fitted = likelihood::fit(self.params.kernel, &self.points, rows, y);
        if fitted != self.params {
            self.set_params(fitted);
        } else {
            self.clear_fantasies();
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The posterior at rows `query` given targets `y` at rows `rows`, computed from scratch: a dense
/// Cholesky factorization of `K + σₙ² I` (nalgebra) and one triangular solve per query, with the
/// same standardization as [`Gp`]. `O(n³ + q n²)`: the reference for the incremental updates.
pub fn exact_posterior(
    params: GpParams,
    points: &Points,
    rows: &[usize],
    y: &[f64],
    query: &[usize],
) -> Vec<Prediction> {
    let n = rows.len();
    let (m, s) = standardization(y);
    let kernel = params.kernel;
    let k = DMatrix::from_fn(n, n, |i, j| {
        kernel.eval(points.row(rows[i]), points.row(rows[j]))
            + if i == j { params.noise } else { 0.0 }
    });
    let chol = nalgebra::Cholesky::new(k).expect("K + noise I is positive definite");
    let ys = DVector::from_iterator(n, y.iter().map(|v| (v - m) / s));
    let alpha = chol.solve(&ys);
    query
        .iter()
        .map(|&q| {
            let kq = DVector::from_fn(n, |j, _| kernel.eval(points.row(q), points.row(rows[j])));
            let v = chol.l().solve_lower_triangular(&kq).expect("non-singular");
            Prediction {
                mean: m + s * kq.dot(&alpha),
                var: s * s * (1.0 - v.norm_squared()).max(0.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bayes::{Covariance, CovarianceKind};
    use proptest::prelude::*;

    fn random_points(seed: u64, len: usize, dims: usize) -> Arc<Points> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // A grid-like discrete space: coordinates are multiples of 1/4, as normalized indices are.
        let data = (0..len * dims)
            .map(|_| f64::from(rng.random_range(0..5u8)) / 4.0)
            .collect();
        Arc::new(Points::new(data, dims).unwrap())
    }

    fn params(kind: CovarianceKind, l: f64, noise: f64) -> GpParams {
        GpParams::new(Covariance::new(kind, l).unwrap(), noise).unwrap()
    }

    fn kinds() -> impl Strategy<Value = CovarianceKind> {
        prop_oneof![
            Just(CovarianceKind::Matern32),
            Just(CovarianceKind::Matern52),
            Just(CovarianceKind::Rbf)
        ]
    }

    /// `n` rows out of `len` spread by `seed`, if they are distinct (their coordinates may
    /// repeat: the noise keeps the covariance matrix regular).
    fn spread_rows(seed: u64, n: usize, len: usize) -> Option<Vec<usize>> {
        let rows: Vec<usize> = (0..n).map(|i| (i * 7 + seed as usize) % len).collect();
        let mut distinct = rows.clone();
        distinct.sort_unstable();
        distinct.dedup();
        (distinct.len() == rows.len()).then_some(rows)
    }

    /// The posterior tests' setting: random points, rows of them to observe, the candidates and
    /// a GP over them that has observed nothing yet.
    struct Fixture {
        pts: Arc<Points>,
        rows: Vec<usize>,
        cand: Arc<[u32]>,
        gp: Gp,
    }

    /// `len` random points spread by `seed`, `n` rows of them (`None` unless distinct, see
    /// [`spread_rows`]), the candidates every row but those congruent to `skip` modulo 3.
    fn fixture(
        seed: u64,
        len: usize,
        dims: usize,
        n: usize,
        params: GpParams,
        skip: u32,
    ) -> Option<Fixture> {
        let rows = spread_rows(seed, n, len)?;
        let pts = random_points(seed, len, dims);
        let cand: Arc<[u32]> = (0..len as u32).filter(|r| r % 3 != skip).collect();
        let gp = Gp::new(params, Arc::clone(&pts), Some(Arc::clone(&cand)));
        Some(Fixture {
            pts,
            rows,
            cand,
            gp,
        })
    }

    /// Checks `gp`'s predictions, in bulk at its candidates `cand` and one at a time at every
    /// row of `pts`, against the exact posterior of `ys` observed at `rows`.
    fn matches_the_exact_posterior(
        gp: &Gp,
        pts: &Points,
        cand: &[u32],
        rows: &[usize],
        ys: &[f64],
    ) -> Result<(), TestCaseError> {
        let query: Vec<usize> = (0..pts.len()).collect();
        let exact = exact_posterior(gp.params(), pts, rows, ys, &query);
        let mut bulk = vec![Prediction::default(); cand.len()];
        gp.predict_candidates(&mut bulk);
        let scale = exact.iter().map(|e| e.mean.abs()).fold(1.0, f64::max);
        for (&r, b) in cand.iter().zip(&bulk) {
            let e = exact[r as usize];
            prop_assert!(
                (b.mean - e.mean).abs() < 1e-9 * scale,
                "mean at {}: {} vs {}",
                r,
                b.mean,
                e.mean
            );
            prop_assert!(
                (b.var - e.var).abs() < 1e-9 * scale * scale,
                "var at {}: {} vs {}",
                r,
                b.var,
                e.var
            );
        }
        for q in query {
            let (a, e) = (gp.predict(q), exact[q]);
            prop_assert!((a.mean - e.mean).abs() < 1e-9 * scale);
            prop_assert!((a.var - e.var).abs() < 1e-9 * scale * scale);
            prop_assert!(a.var >= 0.0);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Observing one point at a time (with fantasies added and dropped on the way) gives the
        /// posterior of a full refit, at every candidate and at rows outside the candidates.
        #[test]
        fn incremental_updates_equal_a_full_refit(
            seed in 0u64..1000, dims in 1usize..5, n in 1usize..40,
            kind in kinds(), l in 0.3f64..3.0, noise in 1e-4f64..1e-1,
            ys in proptest::collection::vec(-5.0f64..50.0, 40),
        ) {
            let setting = fixture(seed, 300, dims, n, params(kind, l, noise), 0);
            prop_assume!(setting.is_some());
            let Fixture { pts, rows, cand, mut gp } = setting.unwrap();
            for (i, &r) in rows.iter().enumerate() {
                gp.observe(r, ys[i]);
                if i % 4 == 1 {
                    gp.fantasize((r + 11) % 300, ys[(i + 5) % 40]);
                    gp.fantasize((r + 13) % 300, ys[(i + 6) % 40]);
                }
            }
            gp.fantasize(5, 1.0);
            gp.clear_fantasies();
            matches_the_exact_posterior(&gp, &pts, &cand, &rows, &ys[..n])?;
        }

        /// Replacing the targets of its observations (after fantasies, which it drops) gives the
        /// posterior of a refit on the new targets, at the candidates and elsewhere.
        #[test]
        fn retargeting_equals_a_refit_on_the_new_targets(
            seed in 0u64..1000, dims in 1usize..5, n in 1usize..30,
            kind in kinds(), l in 0.3f64..3.0, noise in 1e-4f64..1e-1,
            ys in proptest::collection::vec(-5.0f64..50.0, 30),
            zs in proptest::collection::vec(-5.0f64..50.0, 30),
        ) {
            let setting = fixture(seed, 200, dims, n, params(kind, l, noise), 1);
            prop_assume!(setting.is_some());
            let Fixture { pts, rows, cand, mut gp } = setting.unwrap();
            for (i, &r) in rows.iter().enumerate() {
                gp.observe(r, ys[i]);
            }
            gp.fantasize((rows[0] + 1) % 200, 3.0);
            gp.retarget(&zs[..n]);
            prop_assert_eq!(gp.observed_targets(), &zs[..n]);
            matches_the_exact_posterior(&gp, &pts, &cand, &rows, &zs[..n])?;
        }

        /// With a tiny nugget the GP interpolates its data: the mean at an observed point is the
        /// observation and the variance there is near zero; variances are never negative.
        #[test]
        fn interpolates_its_data(
            seed in 0u64..1000, n in 1usize..25, kind in kinds(),
            ys in proptest::collection::vec(0.5f64..100.0, 25),
        ) {
            // Distinct points on a fine 3-d grid.
            let data: Vec<f64> = (0..512).flat_map(|i| [
                f64::from(i % 8) / 7.0, f64::from((i / 8) % 8) / 7.0, f64::from(i / 64) / 7.0,
            ]).collect();
            let pts = Arc::new(Points::new(data, 3).unwrap());
            let mut gp = Gp::new(params(kind, 0.4, 1e-10), Arc::clone(&pts), None);
            let rows: Vec<usize> = (0..n).map(|i| (i * 37 + seed as usize * 13) % 512).collect();
            let mut d = rows.clone();
            d.sort_unstable();
            d.dedup();
            prop_assume!(d.len() == n);
            for (i, &r) in rows.iter().enumerate() {
                gp.observe(r, ys[i]);
            }
            let (_, s) = gp.standardization();
            let mut all = vec![Prediction::default(); 512];
            gp.predict_candidates(&mut all);
            for (i, &r) in rows.iter().enumerate() {
                prop_assert!((all[r].mean - ys[i]).abs() < 1e-5 * s, "{} vs {}", all[r].mean, ys[i]);
                prop_assert!(all[r].var < 1e-6 * s * s);
            }
            prop_assert!(all.iter().all(|p| p.var >= 0.0));
        }
    }

    #[test]
    fn no_observations_is_the_prior_and_bad_inputs_are_errors() {
        let pts = random_points(1, 10, 2);
        let gp = Gp::new(params(CovarianceKind::Matern32, 1.5, 1e-6), pts, None);
        assert_eq!(
            gp.predict(3),
            Prediction {
                mean: 0.0,
                var: 1.0
            }
        );
        assert!(Points::new(vec![0.0; 5], 2).is_err());
        assert!(Points::new(vec![f64::NAN, 0.0], 2).is_err());
        assert!(GpParams::new(Covariance::new(CovarianceKind::Rbf, 1.0).unwrap(), 0.0).is_err());
    }
}
