//! # Fallback picks
//!
//! A pick made without the model: while the predictive check distrusts the picking model
//! (`guard`), and every other pick of a stalled search (`stall`). [`Fallback`] names the kinds;
//! [`pick`] makes one.

use super::elite;
use super::polish;
use super::results::Results;
use crate::Space;
use crate::space::neighbours::hamming;
use crate::strategy::Memo;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// What takes a pick while the model does not predict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// A uniformly random unasked configuration.
    Random,
    /// A random unasked Hamming neighbour (one parameter changed) of the best configuration
    /// found that has one; a random configuration when none has.
    Local,
    /// Random and local picks in turn, random first.
    Mixed,
    /// A child of the best results found ([`child`](super::elite::child)); a random
    /// configuration when no child is found.
    Elite,
    /// Of a few random unasked configurations, the one whose nearest asked configuration
    /// differs from it in the most parameters: a random pick that keeps off the explored
    /// neighbourhoods.
    Far,
}

/// The random draws a `far` pick chooses among.
pub(super) const FAR_DRAWS: usize = 16;

/// What a fallback pick sees: the space, what is asked (`asked_rows` in order) and the results.
pub(super) struct Known<'a> {
    /// The space.
    pub space: &'a Space,
    /// Every position asked or told.
    pub memo: &'a Memo,
    /// The same positions, in order.
    pub asked_rows: &'a [usize],
    /// The valid results.
    pub results: &'a Results,
}

/// A pick of `kind` ([`Fallback::Mixed`] is resolved by the caller into random or local);
/// `None` only when every configuration is asked.
pub(super) fn pick(kind: Fallback, known: &Known<'_>, rng: &mut ChaCha8Rng) -> Option<usize> {
    let Known {
        space,
        memo,
        results,
        ..
    } = *known;
    if kind == Fallback::Elite {
        let parents: Vec<Vec<u16>> = results
            .ranked()
            .iter()
            .take(elite::PARENTS)
            .map(|&(_, r)| space.indices(r))
            .collect();
        if let Some(p) = elite::child(space, &parents, rng, |p| memo.is_asked(p)) {
            return Some(p);
        }
        return memo.random_unasked(rng);
    }
    if kind == Fallback::Far {
        return far(known, rng);
    }
    if kind != Fallback::Random {
        let near = polish::candidates(space, &results.ranked(), memo);
        if !near.is_empty() {
            let i = rng.random_range(0..near.len());
            return Some(near[i]);
        }
    }
    memo.random_unasked(rng)
}

/// Of [`FAR_DRAWS`] random unasked configurations, the one whose nearest asked configuration
/// differs from it in the most parameters (the first drawn on ties).
pub(super) fn far(known: &Known<'_>, rng: &mut ChaCha8Rng) -> Option<usize> {
    let space = known.space;
    let dims = space.dims();
    let asked: Vec<Vec<u16>> = known.asked_rows.iter().map(|&r| space.indices(r)).collect();
    let mut best: Option<(usize, usize)> = None;
    for _ in 0..FAR_DRAWS {
        let Some(p) = known.memo.random_unasked(rng) else {
            break;
        };
        let x = space.indices(p);
        let nearest = asked.iter().map(|a| hamming(a, &x)).min().unwrap_or(dims);
        if best.is_none_or(|(d, _)| nearest > d) {
            best = Some((nearest, p));
        }
    }
    best.map(|(_, p)| p)
}
