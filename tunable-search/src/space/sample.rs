//! # Sampling valid configurations
//!
//! Uniform samples, Latin-hypercube samples and maximin Latin-hypercube samples (the initial design
//! of Willemsen et al., "Bayesian Optimization for auto-tuning GPU kernels"), all landing on valid
//! configurations. Latin-hypercube points are drawn in the normalized coordinates of
//! [`Space::normalized`] and each is moved to the nearest valid configuration not already taken,
//! which keeps the design's spread where the constraints allow.

use super::Space;
use rand::{Rng, RngExt};

impl Space {
    /// A uniformly random valid configuration's position (`None` for an empty space).
    pub fn random_position<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<usize> {
        (!self.is_empty()).then(|| rng.random_range(0..self.len()))
    }

    /// `k` distinct uniformly random positions (fewer if the space is smaller).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, k: usize) -> Vec<usize> {
        rand::seq::index::sample(rng, self.len(), k.min(self.len())).into_vec()
    }

    /// `k` distinct positions from a Latin-hypercube design over the varying parameters, each
    /// point moved to the nearest untaken valid configuration.
    pub fn latin_hypercube<R: Rng + ?Sized>(&self, rng: &mut R, k: usize) -> Vec<usize> {
        let pts = lhs_points(rng, k.min(self.len()), self.varying_params().len());
        self.snap(&pts)
    }

    /// Like [`latin_hypercube`](Self::latin_hypercube), choosing among `designs` random designs
    /// the one whose closest pair of points is farthest apart (maximin), before snapping.
    pub fn maximin_latin_hypercube<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        k: usize,
        designs: usize,
    ) -> Vec<usize> {
        let (k, d) = (k.min(self.len()), self.varying_params().len());
        let mut best: Option<(f64, Vec<Vec<f64>>)> = None;
        for _ in 0..designs.max(1) {
            let pts = lhs_points(rng, k, d);
            let score = min_pairwise(&pts);
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, pts));
            }
        }
        best.map_or_else(Vec::new, |(_, pts)| self.snap(&pts))
    }

    /// The position of the valid configuration nearest to `target` (normalized coordinates of
    /// the varying parameters), skipping positions for which `taken` is true.
    pub fn nearest(&self, target: &[f64], taken: &dyn Fn(usize) -> bool) -> Option<usize> {
        let vary = self.varying_params();
        assert_eq!(
            target.len(),
            vary.len(),
            "one coordinate per varying parameter"
        );
        let layout = self.layout();
        // Squared distance contribution per (dimension, value index).
        let table: Vec<Vec<f64>> = vary
            .iter()
            .zip(target)
            .map(|(&p, &t)| {
                let n = self.params()[p].values().len();
                (0..n)
                    .map(|i| (i as f64 / (n - 1) as f64 - t).powi(2))
                    .collect()
            })
            .collect();
        let mut best = (f64::INFINITY, None);
        for (pos, &key) in self.keys().iter().enumerate() {
            let mut d = 0.0;
            for (j, &p) in vary.iter().enumerate() {
                d += table[j][layout.get(key, p) as usize];
            }
            if d < best.0 && !taken(pos) {
                best = (d, Some(pos));
            }
        }
        best.1
    }

    fn snap(&self, pts: &[Vec<f64>]) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::with_capacity(pts.len());
        for p in pts {
            let taken = |i: usize| chosen.contains(&i);
            if let Some(i) = self.nearest(p, &taken) {
                chosen.push(i);
            }
        }
        chosen
    }
}

/// `k` points of a random Latin hypercube in `[0, 1]^d`.
fn lhs_points<R: Rng + ?Sized>(rng: &mut R, k: usize, d: usize) -> Vec<Vec<f64>> {
    let mut pts = vec![vec![0.0; d]; k];
    for j in 0..d {
        let mut strata: Vec<usize> = (0..k).collect();
        rand::seq::SliceRandom::shuffle(strata.as_mut_slice(), rng);
        for (pt, s) in pts.iter_mut().zip(strata) {
            pt[j] = (s as f64 + rng.random::<f64>()) / k as f64;
        }
    }
    pts
}

fn min_pairwise(pts: &[Vec<f64>]) -> f64 {
    let mut m = f64::INFINITY;
    for i in 0..pts.len() {
        for j in i + 1..pts.len() {
            m = m.min(
                pts[i]
                    .iter()
                    .zip(&pts[j])
                    .map(|(a, b)| (a - b).powi(2))
                    .sum(),
            );
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use crate::SpaceBuilder;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn samples_are_valid_distinct_and_deterministic() {
        let s = SpaceBuilder::new()
            .param("a", 1..=16)
            .param("b", 1..=16)
            .constraint("a * b <= 64")
            .build()
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for pos in [
            s.sample(&mut rng, 30),
            s.latin_hypercube(&mut rng, 20),
            s.maximin_latin_hypercube(&mut rng, 20, 10),
        ] {
            let mut d = pos.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), pos.len());
            assert!(pos.iter().all(|&i| s.satisfies(&s.indices(i))));
        }
        let a = s.maximin_latin_hypercube(&mut ChaCha8Rng::seed_from_u64(7), 10, 5);
        let b = s.maximin_latin_hypercube(&mut ChaCha8Rng::seed_from_u64(7), 10, 5);
        assert_eq!(a, b);
        assert_eq!(s.sample(&mut rng, 10_000).len(), s.len());
    }
}
