//! # Initial design
//!
//! The configurations `bayes` evaluates before its model steers (`init` of them, option
//! `design`):
//! - `random`: uniformly random valid configurations. Their best is on average
//!   exactly random search's, so the design costs nothing against the baseline the score
//!   measures, whatever the kernel.
//! - `stratified` (the default): valid configurations drawn uniformly, keeping, of [`STRATIFIED_DESIGNS`]
//!   random draws, the one that covers the most strata: each parameter's normalized range is cut
//!   into `init` equal strata and a draw scores one per (parameter, stratum) it hits. Spread over
//!   every parameter's value ranks like a Latin hypercube, but on configurations as they occur
//!   in the valid space.
//! - `proportional`: the first pick uniform, the rest chosen, of [`STRATIFIED_DESIGNS`]
//!   random draws, as the one that covers the most strata with it, where a parameter's strata
//!   hold equal numbers of valid configurations (its values in order, the configurations of one
//!   value spread over their share by a fixed hash). Each stratum is then as likely as any other
//!   under uniform sampling: the design spreads over every parameter like a Latin hypercube over
//!   the valid configurations and keeps their distribution of values, and its first evaluation
//!   is random search's. `stratified`'s equal widths do not keep it: under a constraint (a
//!   product of two parameters bounded) a parameter's extreme values are rare, and a design
//!   covering them evaluates them far more often than uniform picks do, which loses where they
//!   are slow and wins where they are fast.
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
    /// Random valid configurations spread over every parameter's values in proportion to the
    /// valid configurations that have them, the first one uniform.
    Proportional,
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
            Design::Proportional => {
                let strata = Strata::new(space, k);
                let first = space.sample(rng, 1);
                let mut best: Option<(usize, Vec<usize>)> = None;
                for _ in 0..STRATIFIED_DESIGNS {
                    let mut draw = first.clone();
                    draw.extend(
                        space
                            .sample(rng, k)
                            .into_iter()
                            .filter(|p| !first.contains(p)),
                    );
                    draw.truncate(k);
                    let covered = strata.covered(space, &draw);
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

/// Per varying parameter, strata of equal numbers of valid configurations: a configuration's
/// place is the share of valid configurations with a smaller value of the parameter, plus a
/// hashed fraction of the share with its value.
struct Strata {
    /// Per varying parameter: its index and, per value, the valid configurations with a smaller
    /// value and with this value.
    params: Vec<(usize, Vec<(usize, usize)>)>,
    valid: usize,
    strata: usize,
}

impl Strata {
    fn new(space: &Space, strata: usize) -> Self {
        let params = space
            .varying_params()
            .into_iter()
            .map(|j| {
                let mut count = vec![0usize; space.params()[j].values().len()];
                for p in 0..space.len() {
                    count[usize::from(space.index_at(p, j))] += 1;
                }
                let mut below = 0;
                let shares = count
                    .into_iter()
                    .map(|c| {
                        below += c;
                        (below - c, c)
                    })
                    .collect();
                (j, shares)
            })
            .collect();
        Strata {
            params,
            valid: space.len().max(1),
            strata: strata.max(1),
        }
    }

    /// The (parameter, stratum) cells `positions` hit.
    fn covered(&self, space: &Space, positions: &[usize]) -> usize {
        self.params
            .iter()
            .map(|(j, shares)| {
                let mut hit = vec![false; self.strata];
                for &p in positions {
                    let (below, count) = shares[usize::from(space.index_at(p, *j))];
                    let place = (below as f64 + fraction(p, *j) * count as f64) / self.valid as f64;
                    hit[((place * self.strata as f64) as usize).min(self.strata - 1)] = true;
                }
                hit.iter().filter(|&&h| h).count()
            })
            .sum()
    }
}

/// A fixed pseudo-random fraction in `[0, 1)` of a position and a parameter (SplitMix64's
/// finalizer).
fn fraction(position: usize, param: usize) -> f64 {
    let mut z = (position as u64) ^ ((param as u64) << 40);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
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
        for d in [
            Design::Random,
            Design::Stratified,
            Design::Proportional,
            Design::Maximin,
        ] {
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
        let strata = Strata::new(&space, 8);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut strat, mut prop, mut rand) = (0, 0, 0);
        for _ in 0..20 {
            strat += strata_covered(&space, &Design::Stratified.sample(&space, &mut rng, 8), 8);
            prop += strata.covered(&space, &Design::Proportional.sample(&space, &mut rng, 8));
            rand += strata_covered(&space, &Design::Random.sample(&space, &mut rng, 8), 8);
        }
        assert!(strat > rand, "{strat} vs {rand}");
        assert!(prop > rand, "{prop} vs {rand}");
        // 8 points in 8 strata per parameter cover at most 16 cells.
        assert!(strat <= 20 * 16 && prop <= 20 * 16);
    }

    #[test]
    fn proportional_keeps_the_valid_distribution_of_values_under_a_constraint() {
        // Large values of `a` occur only with small values of `b`: they are rare.
        let space = SpaceBuilder::new()
            .param("a", 1..=16)
            .param("b", 1..=16)
            .constraint("a * b <= 32")
            .build()
            .unwrap();
        let mean_a = |positions: &[usize]| {
            positions
                .iter()
                .map(|&p| f64::from(space.index_at(p, 0)))
                .sum::<f64>()
                / positions.len() as f64
        };
        let valid = mean_a(&(0..space.len()).collect::<Vec<_>>());
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mean_of = |d: Design, rng: &mut ChaCha8Rng| {
            mean_a(
                &(0..400)
                    .flat_map(|_| d.sample(&space, rng, 5))
                    .collect::<Vec<_>>(),
            )
        };
        let proportional = mean_of(Design::Proportional, &mut rng);
        let stratified = mean_of(Design::Stratified, &mut rng);
        assert!(
            (proportional - valid).abs() < 0.3,
            "{proportional} vs {valid}"
        );
        // Equal widths of the value range over-sample the rare large values.
        assert!(stratified - valid > 0.5, "{stratified} vs {valid}");
    }
}
