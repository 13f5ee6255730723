//! # The trial scope
//!
//! A model fitted to a handful of points sends its picks where it knows least, the corners of
//! the space; on landscapes where random search is nearly done after a dozen evaluations, those
//! picks lose the run. With `trial_scope=M`, until the picking model's predictive check has
//! judged it, an acquisition round scores only a random share of about `M` of the unvisited
//! candidates: the pick is the young model's best of `M` random configurations. The share is
//! drawn per row by a seeded hash, so the scan stays parallel and deterministic.

use crate::mix::{GOLDEN, mix64, unit_of};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The share of the unvisited candidates that compete in a round.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scope {
    share: f64,
    salt: u64,
}

impl Scope {
    /// The scope of a round with `unvisited` unvisited candidates: about `trial_scope` of them
    /// while the model is `on_trial` and the round is not `restricted` (coverage and polishing
    /// rounds choose their own candidates), else all. Draws the salt from `rng` only when the
    /// round is scoped.
    pub fn new(
        trial_scope: usize,
        on_trial: bool,
        restricted: bool,
        unvisited: usize,
        rng: &mut ChaCha8Rng,
    ) -> Scope {
        let m = trial_scope;
        let share = if m > 0 && on_trial && !restricted && m < unvisited {
            m as f64 / unvisited as f64
        } else {
            1.0
        };
        let salt: u64 = if share < 1.0 { rng.random() } else { 0 };
        Scope { share, salt }
    }

    /// Whether every candidate competes.
    pub fn is_whole(&self) -> bool {
        self.share >= 1.0
    }

    /// Whether the candidate at `row` competes.
    pub fn contains(&self, row: usize) -> bool {
        self.is_whole() || unit_hash(self.salt, row as u64) < self.share
    }
}

/// A hash of `(salt, row)` uniform in `[0, 1)`.
fn unit_hash(salt: u64, row: u64) -> f64 {
    unit_of(mix64(salt ^ row.wrapping_mul(GOLDEN)))
}
