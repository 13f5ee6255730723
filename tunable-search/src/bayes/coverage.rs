//! # Coverage rounds
//!
//! A young model fitted to a few results extends their trend over every value of a parameter;
//! where one value is a code path of its own (an unroll factor's 0, a switch) and holds the
//! optimum, the trend points away from it and the model never tries it. Every `cover`-th
//! acquisition round, while some value of a parameter of at most [`MAX_LEVELS`] values has not
//! been asked, only the configurations with one such value compete: each level is tried once,
//! in the company the model likes best.

use super::MAX_LEVELS;
use crate::Space;
use crate::strategy::Memo;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Whether round `round` (counted from 1) is a coverage round, with `cover` (0: never).
pub(super) fn due(cover: usize, round: usize) -> bool {
    cover > 0 && round.is_multiple_of(cover)
}

/// A coverage round's candidates: those of `candidates` (ascending rows) not asked that have a
/// value not yet asked (in `asked_rows`) of a parameter of at most [`MAX_LEVELS`] values, one
/// such value drawn at random; ascending. `None` once every such value has been asked or has
/// no candidate left.
pub(super) fn candidates(
    space: &Space,
    candidates: &[u32],
    asked_rows: &[usize],
    memo: &Memo,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<usize>> {
    let params: Vec<(usize, usize)> = space
        .varying_params()
        .into_iter()
        .map(|p| (p, space.params()[p].values().len()))
        .filter(|&(_, n)| n <= MAX_LEVELS)
        .collect();
    let mut open: Vec<(usize, u16)> = Vec::new();
    for &(p, n) in &params {
        let mut seen = vec![false; n];
        for &r in asked_rows {
            seen[usize::from(space.index_at(r, p))] = true;
        }
        let present = &space.marginals()[p];
        open.extend(
            (0..n)
                .filter(|&v| !seen[v] && present[v])
                .map(|v| (p, v as u16)),
        );
    }
    while !open.is_empty() {
        let (p, v) = open.swap_remove(rng.random_range(0..open.len()));
        let only: Vec<usize> = candidates
            .iter()
            .map(|&r| r as usize)
            .filter(|&r| space.index_at(r, p) == v && !memo.is_asked(r))
            .collect();
        if !only.is_empty() {
            return Some(only);
        }
    }
    None
}
