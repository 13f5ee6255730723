//! # Random search over several objectives
//!
//! Uniform sampling of valid configurations without replacement, blind to the values: the
//! baseline every multi-objective strategy is scored against.

use super::archive::{Archive, fill};
use super::{MultiStrategy, MultiTrial};
use crate::Space;
use std::sync::Arc;

/// Uniform random sampling without replacement.
#[derive(Debug)]
pub struct MultiRandom {
    archive: Archive,
}

impl MultiRandom {
    /// Random search over `space` for `objectives` objectives, seeded.
    pub fn new(space: Arc<Space>, objectives: usize, seed: u64) -> Self {
        MultiRandom {
            archive: Archive::new(space, objectives, seed),
        }
    }
}

impl MultiStrategy for MultiRandom {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        fill(self, n, |s| &mut s.archive, |_| None)
    }

    fn tell(&mut self, trials: &[MultiTrial]) {
        self.archive.tell(trials);
    }
}
