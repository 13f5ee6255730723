//! # Random search
//!
//! Uniform sampling of valid configurations without replacement: the baseline every other
//! strategy is scored against. Its algorithm only ever waits, so the
//! [driver](super::Iterative) fills every batch with random unasked configurations.

use super::{Algorithm, Iterative, Search, Step};

/// Uniform random sampling without replacement.
pub type RandomSearch = Iterative<RandomAlgorithm>;

/// Random search's algorithm: nothing to do but let the driver sample.
#[derive(Debug)]
pub struct RandomAlgorithm;

impl Algorithm for RandomAlgorithm {
    type Options = ();

    fn new((): (), _search: &mut Search) -> Self {
        RandomAlgorithm
    }

    fn step(&mut self, _search: &mut Search) -> Step {
        Step::Wait
    }
}
