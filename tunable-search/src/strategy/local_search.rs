//! # LocalSearch (placeholder being written; delegates to random search)

use super::options::Configure;
use super::{RandomSearch, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Options of [`LocalSearch`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalSearchOptions {}

impl Configure for LocalSearchOptions {
    const KEYS: &'static [&'static str] = &[];
    fn set(&mut self, _key: &str, _value: &str) -> Result<(), Option<String>> {
        Err(None)
    }
}

/// Placeholder.
#[derive(Debug)]
pub struct LocalSearch(RandomSearch);

impl LocalSearch {
    /// Placeholder.
    pub fn new(space: Arc<Space>, _opts: LocalSearchOptions, seed: u64) -> Self {
        LocalSearch(RandomSearch::new(space, seed))
    }
}

impl Strategy for LocalSearch {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.0.ask(n)
    }
    fn tell(&mut self, trials: &[Trial]) {
        self.0.tell(trials)
    }
}

impl LocalSearchOptions {
    /// Placeholder.
    pub fn multi_start() -> Self {
        Self::default()
    }
    /// Placeholder.
    pub fn iterated() -> Self {
        Self::default()
    }
}
