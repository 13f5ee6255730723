//! # Repair of invalid configurations
//!
//! The NEIGHBORS procedure of Willemsen et al., "Constraint-aware Optimization in Auto-Tuning"
//! (Algorithms 2 and 3): for a configuration that violates the
//! constraints, try its strictly-adjacent, then adjacent, then Hamming neighbours, and take the
//! first non-empty set; if all three are empty, the valid configurations nearest by index
//! distance (never empty in a non-empty space). Differential evolution repairs to the nearest
//! valid configuration by index distance instead ([`Repair::Nearest`]).

use crate::Space;
use crate::space::Neighbourhood;
use rand::{Rng, RngExt};

/// How to pick among the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repair {
    /// A uniformly random candidate (the genetic algorithm's repair).
    Random,
    /// The candidate nearest by index distance (differential evolution's repair).
    Nearest,
}

/// The repair candidates of `indices` (positions), in the order of the rules above.
pub fn repair_candidates(space: &Space, indices: &[u16]) -> Vec<usize> {
    for rule in [
        Neighbourhood::StrictlyAdjacent,
        Neighbourhood::Adjacent,
        Neighbourhood::Hamming,
    ] {
        let n = space.neighbours(indices, rule);
        if !n.is_empty() {
            return n;
        }
    }
    space.neighbours(indices, Neighbourhood::IndexDistance)
}

impl Repair {
    /// The position of `indices` if valid, else a repaired valid position (`None` only for an
    /// empty space).
    pub fn apply<R: Rng + ?Sized>(
        self,
        space: &Space,
        indices: &[u16],
        rng: &mut R,
    ) -> Option<usize> {
        if let Some(p) = space.position(indices) {
            return Some(p);
        }
        match self {
            Repair::Random => {
                let c = repair_candidates(space, indices);
                (!c.is_empty()).then(|| c[rng.random_range(0..c.len())])
            }
            Repair::Nearest => nearest_valid(space, indices, rng),
        }
    }
}

/// The valid configurations nearest to invalid `indices` by index distance (the sum of absolute
/// value-index differences), one at random. Configurations at distance 1 and 2 are enumerated and
/// looked up in O(1); only beyond that is the space scanned.
fn nearest_valid<R: Rng + ?Sized>(space: &Space, indices: &[u16], rng: &mut R) -> Option<usize> {
    let counts: Vec<u16> = space
        .params()
        .iter()
        .map(|p| p.values().len() as u16)
        .collect();
    let shift = |x: &mut Vec<u16>, d: usize, by: i32| -> bool {
        let v = i32::from(indices[d]) + by;
        if v < 0 || v >= i32::from(counts[d]) {
            return false;
        }
        x[d] = v as u16;
        true
    };
    let mut found = Vec::new();
    let mut x = indices.to_vec();
    for d in 0..indices.len() {
        for by in [-1, 1] {
            if shift(&mut x, d, by) {
                found.extend(space.position(&x));
            }
            x[d] = indices[d];
        }
    }
    if found.is_empty() {
        for d in 0..indices.len() {
            for by in [-2, 2] {
                if shift(&mut x, d, by) {
                    found.extend(space.position(&x));
                }
                x[d] = indices[d];
            }
            for e in d + 1..indices.len() {
                for (a, b) in [(-1, -1), (-1, 1), (1, -1), (1, 1)] {
                    if shift(&mut x, d, a) && shift(&mut x, e, b) {
                        found.extend(space.position(&x));
                    }
                    x[d] = indices[d];
                    x[e] = indices[e];
                }
            }
        }
    }
    if found.is_empty() {
        found = space.neighbours(indices, Neighbourhood::IndexDistance);
    }
    found.sort_unstable();
    (!found.is_empty()).then(|| found[rng.random_range(0..found.len())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::config::Config;
    use crate::strategy::fixtures::space;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn nearest_repair_agrees_with_index_distance() {
        let s = space();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let g = Config::random(&s, &mut rng).indices;
            if s.contains(&g) {
                continue;
            }
            let all = s.neighbours(&g, Neighbourhood::IndexDistance);
            let p = Repair::Nearest.apply(&s, &g, &mut rng).unwrap();
            assert!(all.contains(&p), "{g:?}: {p} not in {all:?}");
        }
    }
}
