//! # Annealing (placeholder being written; delegates to random search)

use super::options::Configure;
use super::{RandomSearch, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Options of [`Annealing`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnnealingOptions {}

impl Configure for AnnealingOptions {
    const KEYS: &'static [&'static str] = &[];
    fn set(&mut self, _key: &str, _value: &str) -> Result<(), Option<String>> {
        Err(None)
    }
}

/// Placeholder.
#[derive(Debug)]
pub struct Annealing(RandomSearch);

impl Annealing {
    /// Placeholder.
    pub fn new(space: Arc<Space>, _opts: AnnealingOptions, seed: u64) -> Self {
        Annealing(RandomSearch::new(space, seed))
    }
}

impl Strategy for Annealing {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.0.ask(n)
    }
    fn tell(&mut self, trials: &[Trial]) {
        self.0.tell(trials)
    }
}
