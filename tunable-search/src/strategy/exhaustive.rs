//! # Exhaustive search
//!
//! Every valid configuration in order of position (lexicographic in declared parameter order).

use super::{Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Evaluates every configuration in order.
#[derive(Debug)]
pub struct Exhaustive {
    next: usize,
    len: usize,
}

impl Exhaustive {
    /// An exhaustive search over `space`.
    pub fn new(space: Arc<Space>) -> Self {
        Exhaustive {
            next: 0,
            len: space.len(),
        }
    }
}

impl Strategy for Exhaustive {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let end = (self.next + n).min(self.len);
        let out = (self.next..end).collect();
        self.next = end;
        out
    }

    fn tell(&mut self, _trials: &[Trial]) {}

    fn upcoming(&self, n: usize) -> Vec<usize> {
        (self.next..(self.next + n).min(self.len)).collect()
    }
}
