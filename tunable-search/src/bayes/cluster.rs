//! # Clustering of observations for the clustered GP
//!
//! The clustered GP splits the observations `(x, y)` into groups that each look
//! smooth, by clustering the joint vectors `(x, ξ·z)`: the normalized coordinates `x` and the
//! standardized target `z = (y - mean) / sd` scaled by `ξ`. Two observations close in `x` whose
//! targets differ by a jump land in different clusters.
//!
//! [`KMeans`] is Lloyd's algorithm, seeded once by k-means++ and afterwards *warm-started* from
//! the previous labels, so that labels stay stable from one observation to the next (the
//! clustered GP then refits only the clusters whose members changed). Clusters with fewer than
//! `min_size` members are dissolved into the nearest remaining cluster, as the paper removes
//! clusters too small to fit. With `k = Auto(max)` the number of clusters is chosen among
//! `1..=max` by the Bayesian information criterion of the spherical Gaussian mixture that
//! k-means fits with hard assignments (the X-means criterion of Pelleg and Moore).
//!
//! Everything here is deterministic for a seed: ties go to the lower cluster index.
//!
//! ## References
//! - H. Luo, J. W. Demmel, Y. Cho, X. S. Li, Y. Liu, "Non-smooth Bayesian optimization in tuning
//!   problems", Section 2.3 and Algorithm 1.
//! - D. Arthur, S. Vassilvitskii, "k-means++: the advantages of careful seeding", SODA 2007.
//! - D. Pelleg, A. Moore, "X-means: extending k-means with efficient estimation of the number of
//!   clusters", ICML 2000 (the BIC of a hard-assignment spherical Gaussian mixture).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Lloyd iterations at most per clustering.
const MAX_ITERATIONS: usize = 100;

/// How many clusters to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterCount {
    /// Exactly this many (fewer when there are too few observations or a cluster is dissolved).
    Fixed(usize),
    /// Chosen among `1..=max` by the Bayesian information criterion.
    Auto(usize),
}

impl ClusterCount {
    /// The most clusters this allows.
    pub fn max(self) -> usize {
        match self {
            ClusterCount::Fixed(k) | ClusterCount::Auto(k) => k,
        }
    }
}

/// Warm-started k-means over rows of features (see the module docs).
#[derive(Clone, Debug)]
pub struct KMeans {
    count: ClusterCount,
    min_size: usize,
    labels: Vec<usize>,
    clusters: usize,
}

impl KMeans {
    /// A clusterer making `count` clusters of at least `min_size` members each.
    pub fn new(count: ClusterCount, min_size: usize) -> Self {
        KMeans {
            count,
            min_size: min_size.max(1),
            labels: Vec::new(),
            clusters: 0,
        }
    }

    /// The label of every row of the last [`fit`](Self::fit), in `0..clusters()`.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// The number of clusters of the last fit.
    pub fn clusters(&self) -> usize {
        self.clusters
    }

    /// Clusters the rows of `features` (`dims` numbers each). Rows that were present at the last
    /// fit keep their labels as the starting point (rows are only ever appended); the first fit,
    /// and any fit that needs more clusters than it has, seeds with k-means++ from `rng`.
    pub fn fit(&mut self, features: &[f64], dims: usize, rng: &mut ChaCha8Rng) -> &[usize] {
        let n = features.len() / dims;
        let rows: Vec<&[f64]> = features.chunks_exact(dims).collect();
        let most = self.count.max().min(n / self.min_size).max(1);
        let candidates: Vec<usize> = match self.count {
            ClusterCount::Fixed(_) => vec![most],
            ClusterCount::Auto(_) => (1..=most).collect(),
        };
        let mut best: Option<(f64, Vec<usize>, usize)> = None;
        for k in candidates {
            let start = self.warm_start(&rows, k, rng);
            let (labels, clusters) = self.lloyd(&rows, start, k);
            let score = match self.count {
                ClusterCount::Fixed(_) => 0.0,
                ClusterCount::Auto(_) => -bic(&rows, &labels, clusters),
            };
            if best.as_ref().is_none_or(|(s, _, _)| score < *s) {
                best = Some((score, labels, clusters));
            }
        }
        let (_, labels, clusters) = best.expect("at least one candidate count");
        self.labels = labels;
        self.clusters = clusters;
        &self.labels
    }

    /// Initial labels for `k` clusters: the previous labels (new rows joining the nearest
    /// previous centroid) when they had exactly `k` clusters, else k-means++ seeds.
    fn warm_start(&self, rows: &[&[f64]], k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
        if k == 1 {
            return vec![0; rows.len()];
        }
        if self.clusters == k && !self.labels.is_empty() {
            let old = self.labels.len();
            let centroids = centroids(&rows[..old], &self.labels, k);
            let mut labels = self.labels.clone();
            labels.extend(rows[old..].iter().map(|r| nearest(r, &centroids)));
            return labels;
        }
        let seeds = plus_plus(rows, k, rng);
        let centroids: Vec<Vec<f64>> = seeds.iter().map(|&i| rows[i].to_vec()).collect();
        rows.iter().map(|r| nearest(r, &centroids)).collect()
    }

    /// Lloyd iterations from `labels`, then dissolves clusters below the minimum size; returns
    /// labels renumbered `0..clusters` in order of first appearance, and the cluster count.
    fn lloyd(&self, rows: &[&[f64]], mut labels: Vec<usize>, k: usize) -> (Vec<usize>, usize) {
        let mut k = k;
        loop {
            for _ in 0..MAX_ITERATIONS {
                let centroids = centroids(rows, &labels, k);
                let next: Vec<usize> = rows.iter().map(|r| nearest(r, &centroids)).collect();
                if next == labels {
                    break;
                }
                labels = next;
            }
            let sizes = sizes(&labels, k);
            let Some(small) = (0..k).find(|&c| sizes[c] < self.min_size) else {
                break;
            };
            if k == 1 {
                break;
            }
            // Dissolve the smallest offending cluster into the others and iterate again.
            let small = (small..k)
                .filter(|&c| sizes[c] < self.min_size)
                .min_by_key(|&c| sizes[c])
                .unwrap_or(small);
            let kept: Vec<usize> = (0..k).filter(|&c| c != small).collect();
            let centroids = centroids(rows, &labels, k);
            let kept_centroids: Vec<Vec<f64>> =
                kept.iter().map(|&c| centroids[c].clone()).collect();
            labels = labels
                .iter()
                .zip(rows)
                .map(|(&l, r)| match kept.iter().position(|&c| c == l) {
                    Some(i) => i,
                    None => nearest(r, &kept_centroids),
                })
                .collect();
            k -= 1;
        }
        renumber(labels)
    }
}

/// Labels renumbered by first appearance, and their count.
fn renumber(labels: Vec<usize>) -> (Vec<usize>, usize) {
    let mut map: Vec<Option<usize>> = Vec::new();
    let mut next = 0;
    let labels = labels
        .into_iter()
        .map(|l| {
            if map.len() <= l {
                map.resize(l + 1, None);
            }
            *map[l].get_or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    (labels, next)
}

fn sizes(labels: &[usize], k: usize) -> Vec<usize> {
    let mut s = vec![0; k];
    labels.iter().for_each(|&l| s[l] += 1);
    s
}

/// The mean of each cluster's rows (a zero vector for an empty cluster).
fn centroids(rows: &[&[f64]], labels: &[usize], k: usize) -> Vec<Vec<f64>> {
    let dims = rows.first().map_or(0, |r| r.len());
    let mut sum = vec![vec![0.0; dims]; k];
    let mut count = vec![0usize; k];
    for (r, &l) in rows.iter().zip(labels) {
        count[l] += 1;
        sum[l].iter_mut().zip(*r).for_each(|(s, v)| *s += v);
    }
    for (s, &c) in sum.iter_mut().zip(&count) {
        if c > 0 {
            s.iter_mut().for_each(|v| *v /= c as f64);
        }
    }
    sum
}

fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// The index of the centroid nearest to `row` (ties to the lower index).
fn nearest(row: &[f64], centroids: &[Vec<f64>]) -> usize {
    let mut best = (f64::INFINITY, 0);
    for (i, c) in centroids.iter().enumerate() {
        let d = sq(row, c);
        if d < best.0 {
            best = (d, i);
        }
    }
    best.1
}

/// k-means++ seeding: the first seed uniformly, each next one with probability proportional to
/// the squared distance to the nearest seed so far.
fn plus_plus(rows: &[&[f64]], k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let n = rows.len();
    let mut seeds = vec![rng.random_range(0..n)];
    let mut d2: Vec<f64> = rows.iter().map(|r| sq(r, rows[seeds[0]])).collect();
    while seeds.len() < k {
        let total: f64 = d2.iter().sum();
        let pick = if total > 0.0 {
            let mut u = rng.random::<f64>() * total;
            let mut pick = n - 1;
            for (i, &d) in d2.iter().enumerate() {
                if u < d {
                    pick = i;
                    break;
                }
                u -= d;
            }
            pick
        } else {
            rng.random_range(0..n)
        };
        seeds.push(pick);
        for (d, r) in d2.iter_mut().zip(rows) {
            *d = d.min(sq(r, rows[pick]));
        }
    }
    seeds
}

/// The Bayesian information criterion (larger is better) of the spherical Gaussian mixture with
/// one shared variance that a hard clustering defines (Pelleg and Moore, Section 3.2).
pub fn bic(rows: &[&[f64]], labels: &[usize], k: usize) -> f64 {
    let n = rows.len();
    let d = rows.first().map_or(0, |r| r.len()) as f64;
    if n <= k {
        return f64::NEG_INFINITY;
    }
    let c = centroids(rows, labels, k);
    let sse: f64 = rows.iter().zip(labels).map(|(r, &l)| sq(r, &c[l])).sum();
    let variance = (sse / ((n - k) as f64 * d)).max(1e-12);
    let sizes = sizes(labels, k);
    let log_likelihood: f64 = sizes
        .iter()
        .filter(|&&s| s > 0)
        .map(|&s| {
            let s = s as f64;
            s * (s / n as f64).ln()
                - s * d / 2.0 * (2.0 * std::f64::consts::PI * variance).ln()
                - (s - 1.0) * d / 2.0
        })
        .sum();
    let parameters = (k - 1) as f64 + k as f64 * d + 1.0;
    log_likelihood - parameters / 2.0 * (n as f64).ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// An approximately standard normal number (Irwin–Hall sum of 12 uniforms).
    fn normal(rng: &mut ChaCha8Rng) -> f64 {
        (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0
    }

    /// Gaussian blobs (deviation 0.3) of `per` points each in 2-D around `centres`, interleaved.
    fn blobs_at(centres: &[(f64, f64)], per: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..per * centres.len())
            .flat_map(|i| {
                let (cx, cy) = centres[i % centres.len()];
                [cx + 0.3 * normal(&mut rng), cy + 0.3 * normal(&mut rng)]
            })
            .collect()
    }

    /// Three well-separated blobs.
    fn blobs(per: usize, seed: u64) -> Vec<f64> {
        blobs_at(&[(0.0, 0.0), (5.0, 0.0), (0.0, 5.0)], per, seed)
    }

    #[test]
    fn separates_blobs_and_is_deterministic_for_a_seed() {
        let data = blobs(10, 1);
        let run = |seed| {
            let mut km = KMeans::new(ClusterCount::Fixed(3), 2);
            km.fit(&data, 2, &mut ChaCha8Rng::seed_from_u64(seed))
                .to_vec()
        };
        let labels = run(7);
        assert_eq!(labels, run(7));
        // Points of the same blob share a label; the three blobs have different labels.
        for i in 0..30 {
            assert_eq!(labels[i], labels[i % 3], "point {i}");
        }
        let mut first = labels[..3].to_vec();
        first.sort_unstable();
        assert_eq!(first, [0, 1, 2]);
    }

    #[test]
    fn warm_start_keeps_labels_and_small_clusters_dissolve() {
        let data = blobs(10, 2);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut km = KMeans::new(ClusterCount::Fixed(3), 2);
        let before = km.fit(&data[..2 * 27], 2, &mut rng).to_vec();
        let after = km.fit(&data, 2, &mut rng).to_vec();
        assert_eq!(&after[..27], &before[..]);
        // With a minimum size above every blob, everything merges into one cluster.
        let mut big = KMeans::new(ClusterCount::Fixed(3), 11);
        big.fit(&data, 2, &mut rng);
        assert!(big.clusters() < 3);
        let mut one = KMeans::new(ClusterCount::Fixed(3), 31);
        assert!(one.fit(&data, 2, &mut rng).iter().all(|&l| l == 0));
    }

    #[test]
    fn bic_picks_the_number_of_blobs() {
        let data = blobs(12, 4);
        let mut km = KMeans::new(ClusterCount::Auto(5), 2);
        km.fit(&data, 2, &mut ChaCha8Rng::seed_from_u64(5));
        assert_eq!(km.clusters(), 3);
        // One blob: one cluster.
        let one = blobs_at(&[(1.0, 1.0)], 40, 6);
        let mut km = KMeans::new(ClusterCount::Auto(4), 2);
        km.fit(&one, 2, &mut ChaCha8Rng::seed_from_u64(5));
        assert_eq!(km.clusters(), 1);
    }
}
