//! # DiffEvo (placeholder being written; delegates to random search)

use super::options::Configure;
use super::{RandomSearch, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Options of [`DiffEvo`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffEvoOptions {}

impl Configure for DiffEvoOptions {
    const KEYS: &'static [&'static str] = &[];
    fn set(&mut self, _key: &str, _value: &str) -> Result<(), Option<String>> {
        Err(None)
    }
}

/// Placeholder.
#[derive(Debug)]
pub struct DiffEvo(RandomSearch);

impl DiffEvo {
    /// Placeholder.
    pub fn new(space: Arc<Space>, _opts: DiffEvoOptions, seed: u64) -> Self {
        DiffEvo(RandomSearch::new(space, seed))
    }
}

impl Strategy for DiffEvo {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.0.ask(n)
    }
    fn tell(&mut self, trials: &[Trial]) {
        self.0.tell(trials)
    }
}
