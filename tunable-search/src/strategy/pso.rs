//! # Pso (placeholder being written; delegates to random search)

use super::options::Configure;
use super::{RandomSearch, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Options of [`Pso`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PsoOptions {}

impl Configure for PsoOptions {
    const KEYS: &'static [&'static str] = &[];
    fn set(&mut self, _key: &str, _value: &str) -> Result<(), Option<String>> {
        Err(None)
    }
}

/// Placeholder.
#[derive(Debug)]
pub struct Pso(RandomSearch);

impl Pso {
    /// Placeholder.
    pub fn new(space: Arc<Space>, _opts: PsoOptions, seed: u64) -> Self {
        Pso(RandomSearch::new(space, seed))
    }
}

impl Strategy for Pso {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.0.ask(n)
    }
    fn tell(&mut self, trials: &[Trial]) {
        self.0.tell(trials)
    }
}
