//! # Initial design
//!
//! The configurations `bayes` evaluates before its model steers (`init` of them, option
//! `design`):
//! - `random` (the default): uniformly random valid configurations. Their best is on average
//!   exactly random search's, so the design costs nothing against the baseline the score
//!   measures, whatever the kernel.
//! - `stratified`: valid configurations drawn uniformly, keeping, of [`STRATIFIED_DESIGNS`]
//!   random draws, the one that covers the most strata: each parameter's normalized range is cut
//!   into `init` equal strata and a draw scores one per (parameter, stratum) it hits. Spread over
//!   every parameter's value ranks like a Latin hypercube, but on configurations as they occur
//!   in the valid space.
//! - `maximin`: the maximin Latin hypercube of "Bayesian Optimization for auto-tuning GPU
//!   kernels" (the best of 1000 random designs by the distance of its closest pair, each point
//!   moved to the nearest untaken valid configuration).
//!   Maximizing the smallest distance pushes the points to the corners of the space, the
//!   extreme value of every parameter, and snapping to the nearest valid configuration pushes
//!   them onto the constraints' boundaries: on kernels whose extremes are slow its first
//!   evaluations are worse than random picks (see `docs/notes/choosing-auto.md` in the
//!   repository).

use crate::Space;
use rand::Rng;

/// Random Latin-hypercube designs the maximin design chooses from.
pub const MAXIMIN_DESIGNS: usize = 1000;
/// Random draws the stratified design chooses from.
pub const STRATIFIED_DESIGNS: usize = 200;

/// How the initial sample is chosen (option `design`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// Uniformly random valid configurations.
    Random,
    /// Random valid configurations spread over every parameter's value range.
    Stratified,
    /// The maximin Latin hypercube of Bayesian optimization for GPU kernels (Willemsen et al.).
    Maximin,
}

impl Design {
    /// `k` distinct valid positions of `space` (fewer if it is smaller).
    pub fn sample<R: Rng + ?Sized>(self, space: &Space, rng: &mut R, k: usize) -> Vec<usize> {
        match self {
            Design::Random => space.sample(rng, k),
            Design::Maximin => space.maximin_latin_hypercube(rng, k, MAXIMIN_DESIGNS),
            Design::Stratified => {
                let mut best: Option<(usize, Vec<usize>)> = None;
                for _ in 0..STRATIFIED_DESIGNS {
                    let draw = space.sample(rng, k);
                    let covered = strata_covered(space, &draw, k);
                    if best.as_ref().is_none_or(|(c, _)| covered > *c) {
                        best = Some((covered, draw));
                    }
                }
                best.map_or_else(Vec::new, |(_, d)| d)
            }
        }
    }
}

/// The (parameter, stratum) cells `positions` hit, with each varying parameter's normalized
/// range cut into `strata` equal parts.
fn strata_covered(space: &Space, positions: &[usize], strata: usize) -> usize {
    let coords: Vec<Vec<f64>> = positions.iter().map(|&p| space.normalized(p)).collect();
    let dims = coords.first().map_or(0, Vec::len);
    (0..dims)
        .map(|j| {
            let mut hit = vec![false; strata.max(1)];
            for c in &coords {
                let s = ((c[j] * strata as f64) as usize).min(strata.max(1) - 1);
                hit[s] = true;
            }
            hit.iter().filter(|&&h| h).count()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn designs_are_valid_distinct_and_seeded() {
        let space = SpaceBuilder::new()
            .param("a", 1..=16)
            .param("b", 1..=16)
            .param("c", [1, 2])
            .constraint("a * b <= 64")
            .build()
            .unwrap();
        for d in [Design::Random, Design::Stratified, Design::Maximin] {
            let design = format!("{d:?}");
            let a = d.sample(&space, &mut ChaCha8Rng::seed_from_u64(3), 6);
            assert_eq!(a.len(), 6, "{design}");
            let mut u = a.clone();
            u.sort_unstable();
            u.dedup();
            assert_eq!(u.len(), 6, "{design}");
            assert!(a.iter().all(|&p| space.satisfies(&space.indices(p))));
            assert_eq!(a, d.sample(&space, &mut ChaCha8Rng::seed_from_u64(3), 6));
        }
    }

    #[test]
    fn stratified_covers_more_strata_than_a_random_draw() {
        let space = SpaceBuilder::new()
            .param("a", 0..40)
            .param("b", 0..40)
            .build()
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut strat, mut rand) = (0, 0);
        for _ in 0..20 {
            strat += strata_covered(&space, &Design::Stratified.sample(&space, &mut rng, 8), 8);
            rand += strata_covered(&space, &Design::Random.sample(&space, &mut rng, 8), 8);
        }
        assert!(strat > rand, "{strat} vs {rand}");
        // 8 points in 8 strata per parameter cover at most 16 cells.
        assert!(strat <= 20 * 16);
    }
}
