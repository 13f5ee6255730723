//! # Alignment features
//!
//! The surrogate sees every configuration as its value indices scaled to `[0, 1]`
//! ([`Points::from_space`]), a smooth distance in which neighbouring values are alike. Many GPU
//! effects are not smooth in the value but periodic in it: a block size is fast at multiples of
//! the warp or wavefront size (32, 64), a tile at powers of two. In index coordinates such an
//! effect alternates from one value to the next and a smooth model reads it as noise.
//!
//! [`with_alignment`] adds, for every integer parameter whose values are not already ordered by
//! their alignment, one coordinate: the number of trailing zero bits of the value (how many times
//! two divides it), scaled to `[0, 1]` over the parameter's values and multiplied by a weight.
//! Values aligned alike are then close in that coordinate however far apart they are in value, so
//! the model can learn "multiples of 64 are fast". A parameter whose trailing-zero count never
//! decreases along its values (powers of two, `1, 2, 4, 8`) gains nothing: its index coordinate
//! already orders it so, and it gets no extra coordinate.
//!
//! ```
//! use tunable_search::SpaceBuilder;
//! use tunable_search::bayes::with_alignment;
//! let space = SpaceBuilder::new()
//!     .param("block", (1..=8).map(|i| i * 16).collect::<Vec<i64>>())
//!     .param("tile", [1i64, 2, 4, 8])
//!     .build()
//!     .unwrap();
//! let points = with_alignment(&space, 1.0);
//! // block (16..=128 in steps of 16) gains a coordinate; tile (powers of two) does not.
//! assert_eq!(points.dims(), 3);
//! let at = |b: i64| space.position_of_values(&[b.into(), 1i64.into()]).unwrap();
//! // 16 (2^4) and 128 (2^7) are the extremes of the alignment coordinate; 64 (2^6) is at 2/3.
//! assert_eq!(points.row(at(16))[2], 0.0);
//! assert_eq!(points.row(at(128))[2], 1.0);
//! assert!((points.row(at(64))[2] - 2.0 / 3.0).abs() < 1e-12);
//! ```

use super::Points;
use crate::{Space, Value};

/// Trailing zero bits of an integer value, capped at 16 (0 has as many as the cap).
fn alignment(v: &Value) -> Option<u32> {
    match v {
        Value::Int(i) => Some(i.unsigned_abs().trailing_zeros().min(16)),
        _ => None,
    }
}

/// The alignment coordinate of each value of every parameter that gets one: `(parameter,
/// coordinate per value index)`. A parameter gets one when its values are integers, at least
/// three, and their trailing-zero counts are not non-decreasing along the values.
pub fn alignment_columns(space: &Space) -> Vec<(usize, Vec<f64>)> {
    space
        .params()
        .iter()
        .enumerate()
        .filter_map(|(p, param)| {
            let tz: Vec<u32> = param
                .values()
                .iter()
                .map(alignment)
                .collect::<Option<_>>()?;
            if tz.len() < 3 || tz.windows(2).all(|w| w[0] <= w[1]) {
                return None;
            }
            let (lo, hi) = (*tz.iter().min()?, *tz.iter().max()?);
            let span = f64::from(hi - lo);
            Some((p, tz.iter().map(|&t| f64::from(t - lo) / span).collect()))
        })
        .collect()
}

/// The model's coordinates of `space`: the normalized value indices
/// ([`Points::from_space`]) followed by the [alignment columns](alignment_columns), each scaled
/// by `weight`. Without such a column (or with `weight` 0) it is [`Points::from_space`].
pub fn with_alignment(space: &Space, weight: f64) -> Points {
    let columns = if weight > 0.0 {
        alignment_columns(space)
    } else {
        Vec::new()
    };
    let base = Points::from_space(space);
    if columns.is_empty() {
        return base;
    }
    base.extended(space, columns.len(), |indices, out| {
        out.extend(
            columns
                .iter()
                .map(|(p, col)| weight * col[usize::from(indices[*p])]),
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;

    #[test]
    fn only_integer_parameters_not_ordered_by_alignment_get_a_column() {
        let space = SpaceBuilder::new()
            .param("tile", 1i64..=4) // 0 1 0 2: a column
            .param("pow", [1i64, 2, 4]) // 0 1 2: none
            .param("flag", [false, true]) // not an integer: none
            .param("two", [3i64, 6]) // two values: none
            .param("f", [0.5, 1.5, 2.5]) // floats: none
            .build()
            .unwrap();
        let cols = alignment_columns(&space);
        assert_eq!(cols, [(0, vec![0.0, 0.5, 0.0, 1.0])]);
        let points = with_alignment(&space, 0.5);
        assert_eq!(points.dims(), Points::from_space(&space).dims() + 1);
        let none = with_alignment(&space, 0.0);
        assert_eq!(none.dims(), Points::from_space(&space).dims());
    }
}
