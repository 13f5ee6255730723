//! # Firefly (placeholder being written; delegates to random search)

use super::options::Configure;
use super::{RandomSearch, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Options of [`Firefly`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FireflyOptions {}

impl Configure for FireflyOptions {
    const KEYS: &'static [&'static str] = &[];
    fn set(&mut self, _key: &str, _value: &str) -> Result<(), Option<String>> {
        Err(None)
    }
}

/// Placeholder.
#[derive(Debug)]
pub struct Firefly(RandomSearch);

impl Firefly {
    /// Placeholder.
    pub fn new(space: Arc<Space>, _opts: FireflyOptions, seed: u64) -> Self {
        Firefly(RandomSearch::new(space, seed))
    }
}

impl Strategy for Firefly {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.0.ask(n)
    }
    fn tell(&mut self, trials: &[Trial]) {
        self.0.tell(trials)
    }
}
