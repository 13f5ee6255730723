//! # Configurations inside a strategy
//!
//! One configuration as the iterative strategies hold it: its value index per parameter and, when
//! it satisfies the constraints, its position in the space. The non-constraint-aware forms also
//! hold configurations outside the space (`position: None`); they are never asked, and rank at
//! [`PENALTY`](super::PENALTY) ([`Memo::rank`]).

use super::Memo;
use super::moves::Move;
use crate::Space;
use rand::{Rng, RngExt};

/// A configuration: value indices and, if valid, position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Config {
    /// The value index of every parameter.
    pub(super) indices: Vec<u16>,
    /// Its position, `None` if it violates the constraints.
    pub(super) position: Option<usize>,
}

impl Config {
    /// The valid configuration at `position`.
    pub(super) fn at(space: &Space, position: usize) -> Self {
        Config {
            indices: space.indices(position),
            position: Some(position),
        }
    }

    /// The configuration of `indices`, valid or not.
    pub(super) fn new(space: &Space, indices: Vec<u16>) -> Self {
        let position = space.position(&indices);
        Config { indices, position }
    }

    /// A uniformly random configuration of the Cartesian product (possibly invalid).
    pub(super) fn random<R: Rng + ?Sized>(space: &Space, rng: &mut R) -> Self {
        let indices = space
            .params()
            .iter()
            .map(|p| rng.random_range(0..p.values().len()) as u16)
            .collect();
        Self::new(space, indices)
    }

    /// This configuration after move `m`.
    pub(super) fn moved(&self, m: Move) -> Self {
        let mut indices = self.indices.clone();
        indices[usize::from(m.param)] = m.value;
        if let Some((p, v)) = m.also {
            indices[usize::from(p)] = v;
        }
        Config {
            indices,
            position: m.position,
        }
    }

    /// Its cost if known ([`Memo::rank`]).
    pub(super) fn cost(&self, memo: &Memo) -> Option<f64> {
        memo.rank(self.position)
    }
}
