//! # Polishing rounds
//!
//! Every `polish`-th acquisition round only the unvisited Hamming neighbours (one parameter
//! changed) of the best configuration found compete for the acquisition's choice, of the next
//! best once those are all visited. The model is smooth at the scale of the whole space and
//! cannot resolve the last fraction of a percent between neighbouring configurations; a local
//! search can, and the model still picks which neighbour to try. The `local` and `mixed`
//! fallbacks draw from the same neighbours.

use crate::Space;
use crate::space::Neighbourhood;
use crate::strategy::Memo;

/// Whether round `round` (counted from 1) polishes, with `polish` (0: never).
pub(super) fn due(polish: usize, round: usize) -> bool {
    polish > 0 && round.is_multiple_of(polish)
}

/// The unvisited Hamming neighbours of the first of `ranked` (positions, best first) that has
/// any, ascending; empty when none has.
pub(super) fn candidates(space: &Space, ranked: &[(f64, usize)], memo: &Memo) -> Vec<usize> {
    ranked
        .iter()
        .map(|&(_, r)| {
            let mut n = space.neighbours(&space.indices(r), Neighbourhood::Hamming);
            n.retain(|&p| !memo.is_asked(p));
            n
        })
        .find(|n| !n.is_empty())
        .unwrap_or_default()
}
