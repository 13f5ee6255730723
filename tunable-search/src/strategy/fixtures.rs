//! # Test fixtures of the strategies
//!
//! A small constrained space and a smooth objective on it, for the unit tests of the strategy
//! modules (the contract and quality tests across strategies are in `tests/`).

use super::Outcome;
use crate::{Space, SpaceBuilder};
use std::sync::Arc;

/// 576 Cartesian configurations of which 288 satisfy the constraints.
pub(super) fn space() -> Arc<Space> {
    Arc::new(
        SpaceBuilder::new()
            .param("a", 0..12)
            .param("b", 0..12)
            .param("c", 0..4)
            .constraint("a + b <= 14 and (a + c) % 3 != 1")
            .build()
            .unwrap(),
    )
}

/// A bowl with its minimum 1 at value indices (4, 7, 2), failing where `(7a + b) % 11 == 3`.
pub(super) fn bowl(space: &Space, position: usize) -> Outcome {
    let i = space.indices(position);
    if (i[0] * 7 + i[1]) % 11 == 3 {
        return Outcome::Failed;
    }
    let d = |a: u16, b: i32| f64::from((i32::from(a) - b).pow(2));
    Outcome::Value(1.0 + d(i[0], 4) + d(i[1], 7) + d(i[2], 2))
}

#[test]
fn the_space_is_as_documented() {
    let s = space();
    assert_eq!((s.len(), s.cartesian_size()), (288, 576));
}
