//! # What a multi-objective search knows
//!
//! Every position's state (never asked, asked, told) through a [`Memo`], the told values in the
//! order they came, and the seeded random source every random choice of a strategy draws from.

use super::MultiTrial;
use crate::Space;
use crate::pareto;
use crate::strategy::ensemble::propose;
use crate::strategy::{Memo, Outcome, Strategy, Trial};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The space, what is known about it, and the random source of one multi-objective run.
#[derive(Debug)]
pub(super) struct Archive {
    pub(super) space: Arc<Space>,
    memo: Memo,
    /// The configurations told with values: position and one value per objective.
    pub(super) points: Vec<(usize, Vec<f64>)>,
    objectives: usize,
    pub(super) rng: ChaCha8Rng,
}

impl Archive {
    /// Nothing asked yet.
    pub(super) fn new(space: Arc<Space>, objectives: usize, seed: u64) -> Self {
        Archive {
            memo: Memo::new(space.len()),
            points: Vec::new(),
            objectives,
            rng: ChaCha8Rng::seed_from_u64(seed),
            space,
        }
    }

    /// Marks `position` asked; false if it was asked (or told) before.
    pub(super) fn ask(&mut self, position: usize) -> bool {
        position < self.memo.len() && self.memo.mark_asked(position)
    }

    /// Whether `position` was asked or told.
    pub(super) fn is_asked(&self, position: usize) -> bool {
        self.memo.is_asked(position)
    }

    /// Records results; values of the wrong count or not finite are a failure. A position told
    /// twice keeps its first result.
    pub(super) fn tell(&mut self, trials: &[MultiTrial]) {
        for t in trials {
            if t.position >= self.memo.len() || self.memo.get(t.position).is_some() {
                continue;
            }
            let values = t
                .values
                .as_ref()
                .filter(|v| v.len() == self.objectives && v.iter().all(|x| x.is_finite()));
            let outcome = match values {
                Some(v) => {
                    self.points.push((t.position, v.clone()));
                    Outcome::Value(0.0)
                }
                None => Outcome::Failed,
            };
            self.memo.record(&Trial {
                position: t.position,
                outcome,
            });
        }
    }

    /// A uniformly random position never asked (`None` when every one was).
    pub(super) fn random_unasked(&mut self) -> Option<usize> {
        self.memo.random_unasked(&mut self.rng)
    }

    /// The non-dominated rank of every told point, in the order of [`Archive::points`].
    pub(super) fn ranks(&self) -> Vec<usize> {
        let values: Vec<&[f64]> = self.points.iter().map(|p| p.1.as_slice()).collect();
        pareto::ranks(&values)
    }

    /// Up to `want` positions `member` proposes that were never asked, marked asked: a
    /// single-objective strategy sharing this search's budget.
    pub(super) fn propose(&mut self, member: &mut dyn Strategy, want: usize) -> Vec<usize> {
        propose(member, &mut self.memo, want)
    }

    /// The positions of the front of what was told: the points no other told point dominates.
    pub(super) fn front(&self) -> Vec<usize> {
        self.ranks()
            .iter()
            .zip(&self.points)
            .filter(|(r, _)| **r == 0)
            .map(|(_, p)| p.0)
            .collect()
    }
}

/// Up to `n` positions for `strategy` to ask, marked asked in its archive: each `pick`'s, or a
/// random unasked one where `pick` has none; fewer only when every position was asked.
pub(super) fn fill<S>(
    strategy: &mut S,
    n: usize,
    archive: impl Fn(&mut S) -> &mut Archive,
    mut pick: impl FnMut(&mut S) -> Option<usize>,
) -> Vec<usize> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let Some(p) = pick(strategy).or_else(|| archive(strategy).random_unasked()) else {
            break;
        };
        archive(strategy).ask(p);
        out.push(p);
    }
    out
}
