//! # The candidate pool of a large space
//!
//! Every result updates every candidate's prediction, so the strategy's time per ask grows with
//! the candidates, not with the space. A space of more than `pool` configurations keeps the
//! predictions of a random pool of that many up to date, and every round also scores the
//! Hamming neighbours of the `local` best configurations found, so the search can still
//! refine the best outside the pool.

use crate::Space;
use crate::space::Neighbourhood;
use crate::strategy::Memo;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The rows of a large space whose predictions are kept up to date.
#[derive(Clone, Debug)]
pub(super) struct Pool {
    /// Whether each row of the space is in the pool.
    contains: Vec<bool>,
}

impl Pool {
    /// A random pool of `size` rows of `space` and its rows, ascending; `None` when the space
    /// has at most `size` configurations (every one is a candidate).
    pub fn sample(space: &Space, size: usize, rng: &mut ChaCha8Rng) -> Option<(Pool, Arc<[u32]>)> {
        if space.len() <= size {
            return None;
        }
        let mut pool = space.sample(rng, size);
        pool.sort_unstable();
        let mut contains = vec![false; space.len()];
        pool.iter().for_each(|&p| contains[p] = true);
        let rows: Arc<[u32]> = pool.into_iter().map(|p| p as u32).collect();
        Some((Pool { contains }, rows))
    }

    /// Whether `row` is in the pool.
    pub fn contains(&self, row: usize) -> bool {
        self.contains[row]
    }

    /// The rows outside the pool a round scores: the unasked Hamming neighbours of the first
    /// `local` of `ranked` (positions, best first), ascending.
    pub fn neighbours(
        &self,
        space: &Space,
        ranked: &[(f64, usize)],
        local: usize,
        memo: &Memo,
    ) -> Vec<usize> {
        let mut out: Vec<usize> = ranked
            .iter()
            .take(local)
            .flat_map(|&(_, r)| space.neighbours(&space.indices(r), Neighbourhood::Hamming))
            .filter(|&p| !self.contains(p) && !memo.is_asked(p))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
