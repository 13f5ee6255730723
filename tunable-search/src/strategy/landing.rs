//! # Landing swarm members
//!
//! PSO and the firefly algorithm move in the continuous space of [`Continuous`]; a member
//! *lands* where it is evaluated: its snapped configuration if valid, otherwise, constraint-aware,
//! the closest repair candidate (Willemsen et al., "Constraint-aware Optimization in
//! Auto-Tuning", Section IV-C), and without constraint awareness
//! nowhere (the configuration costs [`PENALTY`](super::PENALTY) and is not evaluated). Members
//! start at the coordinates of random never-asked valid configurations, or anywhere in the box
//! without constraint awareness.

use super::starts::fresh;
use super::{Continuous, Search, repair_candidates};
use crate::Space;
use rand::RngExt;
use std::collections::HashMap;

/// Most invalid snapped configurations whose repair candidates are remembered.
const REPAIR_CACHE_LIMIT: usize = 4096;

/// Where a swarm member's evaluation stands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Eval {
    /// Its position has not been looked at yet.
    Fresh,
    /// Waiting for the result of this position.
    Pending(usize),
    /// The cost of its position ([`Memo::rank`](super::Memo::rank)).
    Known(f64),
}

/// What landing did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Landed {
    /// It asked for a new configuration.
    Asked,
    /// On a known configuration (or, without constraint awareness, outside the space).
    Free,
    /// On a configuration whose result is awaited.
    Waiting,
}

/// The continuous mapping, evaluation positions with repair, and starting points.
#[derive(Debug)]
pub(super) struct Landing {
    map: Continuous,
    aware: bool,
    /// Repair candidates of invalid snapped configurations (finding them may scan the space).
    cache: HashMap<Vec<u16>, Vec<usize>>,
}

impl Landing {
    pub(super) fn new(space: &Space, aware: bool) -> Self {
        Landing {
            map: Continuous::new(space),
            aware,
            cache: HashMap::new(),
        }
    }

    pub(super) fn map(&self) -> &Continuous {
        &self.map
    }

    /// The position evaluated for continuous point `x`, or `None` for the penalty: exactly
    /// [`Continuous::evaluate_at`] (repairing when constraint-aware), with repair candidates
    /// cached per snapped configuration.
    pub(super) fn at(&mut self, space: &Space, x: &[f64]) -> Option<usize> {
        let idx = self.map.snap(x);
        if let Some(p) = space.position(&idx) {
            return Some(p);
        }
        if !self.aware {
            return None;
        }
        if self.cache.len() >= REPAIR_CACHE_LIMIT {
            self.cache.clear();
        }
        let cands = self
            .cache
            .entry(idx)
            .or_insert_with_key(|k| repair_candidates(space, k));
        self.map.closest(space, x, cands)
    }

    /// Lands at `x`: its evaluation state, asking for the position if it is new. The batch must
    /// have room.
    pub(super) fn land(&mut self, search: &mut Search, x: &[f64]) -> (Eval, Landed) {
        debug_assert!(search.room() > 0, "landing needs room in the batch");
        let position = self.at(search.space(), x);
        match (search.memo().rank(position), position) {
            (Some(c), _) => (Eval::Known(c), Landed::Free),
            (None, Some(p)) if search.ask(p) => (Eval::Pending(p), Landed::Asked),
            (None, Some(p)) => (Eval::Pending(p), Landed::Waiting),
            (None, None) => unreachable!("a configuration outside the space has a cost"),
        }
    }

    /// A random starting point: the coordinates of a random never-asked valid configuration
    /// (constraint-aware), else a uniform point of the Cartesian box. `None` when every
    /// configuration was asked.
    pub(super) fn random_point(&self, search: &mut Search) -> Option<Vec<f64>> {
        if self.aware {
            let p = search.random_unasked()?;
            return Some(self.map.coords(&search.space().indices(p)));
        }
        let dims = search.space().dims();
        let rng = search.rng();
        Some(
            (0..dims)
                .map(|d| rng.random::<f64>() * self.map.upper(d))
                .collect(),
        )
    }

    /// `k` starting points: distinct valid configurations (as many as the space has) when
    /// constraint-aware, else uniform points of the box.
    pub(super) fn starting_points(&self, search: &mut Search, k: usize) -> Vec<Vec<f64>> {
        if self.aware {
            return fresh(search, k, &[], true)
                .iter()
                .map(|c| self.map.coords(&c.indices))
                .collect();
        }
        (0..k).filter_map(|_| self.random_point(search)).collect()
    }

    /// Clamps `x` into the bounds.
    pub(super) fn clamp(&self, x: &mut [f64]) {
        for (d, v) in x.iter_mut().enumerate() {
            *v = v.clamp(0.0, self.map.upper(d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::fixtures::space;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn landing_is_continuous_evaluate_at() {
        let s = space();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for aware in [true, false] {
            let mut l = Landing::new(&s, aware);
            let map = Continuous::new(&s);
            for _ in 0..300 {
                let x: Vec<f64> = (0..3).map(|d| rng.random::<f64>() * map.upper(d)).collect();
                assert_eq!(l.at(&s, &x), map.evaluate_at(&s, &x, aware), "{x:?}");
            }
        }
    }
}
