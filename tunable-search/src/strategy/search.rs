//! # The state of a search
//!
//! What every iterative strategy searches with (argmin's `State`): the space, the [`Memo`] of
//! everything asked and told, the seeded random source, and the batch being asked. An
//! [`Algorithm`](super::Algorithm) sees it in each step and asks configurations through
//! [`Search::ask`], which keeps the [`Strategy`](super::Strategy) contract: a position is asked at
//! most once and a batch never holds more than was asked for.

use super::Memo;
use crate::Space;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The space, what is known, the random source and the batch being filled.
#[derive(Debug)]
pub struct Search {
    space: Arc<Space>,
    memo: Memo,
    rng: ChaCha8Rng,
    batch: Vec<usize>,
    /// The size of the batch being filled.
    want: usize,
    /// Positions asked since the run began.
    asks: usize,
}

impl Search {
    /// A search over `space` with nothing asked, seeded.
    pub(super) fn new(space: Arc<Space>, seed: u64) -> Self {
        Search {
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
            batch: Vec::new(),
            want: 0,
            asks: 0,
            space,
        }
    }

    /// The space searched.
    pub fn space(&self) -> &Arc<Space> {
        &self.space
    }

    /// What is known about every position.
    pub fn memo(&self) -> &Memo {
        &self.memo
    }

    /// The run's random source: every random choice of a strategy comes from it, so a seed fixes
    /// the run.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// How many more positions the batch being asked can take.
    pub fn room(&self) -> usize {
        self.want - self.batch.len()
    }

    /// Asks for `position`: true if it joined the batch, false if it was asked before or the
    /// batch is full.
    pub fn ask(&mut self, position: usize) -> bool {
        if self.room() == 0 || !self.memo.mark_asked(position) {
            return false;
        }
        self.batch.push(position);
        self.asks += 1;
        true
    }

    /// A uniformly random position never asked (`None` when every position was asked).
    pub fn random_unasked(&mut self) -> Option<usize> {
        self.memo.random_unasked(&mut self.rng)
    }

    /// The next `n` positions [`random_unasked`](Self::random_unasked) will draw if each is
    /// asked before the next draw and nothing else draws from the random numbers meanwhile
    /// (fewer when the space runs out); changes nothing.
    pub fn peek_random(&self, n: usize) -> Vec<usize> {
        let mut rng = self.rng.clone();
        let mut drawn = Vec::with_capacity(n);
        while drawn.len() < n {
            let Some(p) = self.memo.random_unasked_beside(&mut rng, &drawn) else {
                break;
            };
            drawn.push(p);
        }
        drawn
    }

    /// Positions asked since the run began.
    pub(super) fn asks(&self) -> usize {
        self.asks
    }

    /// Starts a batch of up to `n` positions.
    pub(super) fn open(&mut self, n: usize) {
        self.batch.clear();
        self.want = n;
    }

    /// The batch asked since [`open`](Self::open).
    pub(super) fn close(&mut self) -> Vec<usize> {
        self.want = 0;
        std::mem::take(&mut self.batch)
    }

    /// Records told results.
    pub(super) fn tell(&mut self, trials: &[super::Trial]) {
        trials.iter().for_each(|t| self.memo.record(t));
    }
}
