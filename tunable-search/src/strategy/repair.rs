//! # Repair of invalid configurations
//!
//! Paper 001's NEIGHBORS procedure (Algorithms 2 and 3): for a configuration that violates the
//! constraints, try its strictly-adjacent, then adjacent, then Hamming neighbours, and take the
//! first non-empty set; if all three are empty, the valid configurations nearest by index
//! distance (never empty in a non-empty space).

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
            Repair::Nearest => {
                let c = space.neighbours(indices, Neighbourhood::IndexDistance);
                (!c.is_empty()).then(|| c[rng.random_range(0..c.len())])
            }
        }
    }
}
