//! # Random search
//!
//! Uniform sampling of valid configurations without replacement: the baseline every other
//! strategy is scored against.

use super::{Memo, Strategy, Trial};
use crate::Space;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Uniform random sampling without replacement.
#[derive(Debug)]
pub struct RandomSearch {
    memo: Memo,
    rng: ChaCha8Rng,
}

impl RandomSearch {
    /// A random search over `space`, seeded.
    pub fn new(space: Arc<Space>, seed: u64) -> Self {
        RandomSearch {
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Strategy for RandomSearch {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let Some(p) = self.memo.random_unasked(&mut self.rng) else {
                break;
            };
            self.memo.mark_asked(p);
            out.push(p);
        }
        out
    }

    fn tell(&mut self, trials: &[Trial]) {
        trials.iter().for_each(|t| self.memo.record(t));
    }
}
