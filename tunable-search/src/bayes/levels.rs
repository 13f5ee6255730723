//! # Level coordinates
//!
//! A parameter with a handful of values is often a switch between code paths rather than a
//! quantity: an unroll factor whose 0 means "no unrolling", a choice of algorithm, a tile of 1
//! or of 2. In index coordinates ([`Points::from_space`]) neighbouring values are alike, so a
//! smooth model that has seen value 1 slow predicts value 0 slow too, and never tries it.
//!
//! [`with_levels`] adds, for every parameter of [`MIN_LEVELS`] to [`MAX_LEVELS`] values, one
//! coordinate per value (a one-hot code) scaled so that two configurations that differ in the
//! parameter's value are `weight` apart in those coordinates, however near the values are. The
//! model then sees the parameter both as an ordered quantity (the index coordinate) and as a
//! category, and a result at one value says less about the other values than the index distance
//! alone would claim.
//!
//! ```
//! use tunable_search::SpaceBuilder;
//! use tunable_search::bayes::{Points, with_levels};
//! let space = SpaceBuilder::new()
//!     .param("unroll", [0i64, 1, 2, 4, 8, 16])
//!     .param("flag", [false, true])
//!     .build()
//!     .unwrap();
//! let points = with_levels(Points::from_space(&space), &space, 1.0);
//! // unroll (six values) gains six coordinates; flag (two values) none.
//! assert_eq!(points.dims(), 2 + 6);
//! let at = |u: i64| space.position_of_values(&[u.into(), false.into()]).unwrap();
//! let dist = |a: usize, b: usize| -> f64 {
//!     let (a, b) = (points.row(a), points.row(b));
//!     a[2..].iter().zip(&b[2..]).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt()
//! };
//! // Any two values of unroll are 1.0 apart in the level coordinates.
//! assert!((dist(at(0), at(1)) - 1.0).abs() < 1e-12);
//! assert!((dist(at(0), at(16)) - 1.0).abs() < 1e-12);
//! ```

use super::Points;
use crate::Space;

/// The fewest values a parameter needs to get level coordinates (with two, the index coordinate
/// already separates them as far as they can be).
pub const MIN_LEVELS: usize = 3;
/// The most values a parameter may have to get level coordinates.
pub const MAX_LEVELS: usize = 8;

/// The parameters that get level coordinates, with their number of values.
pub fn level_params(space: &Space) -> Vec<(usize, usize)> {
    space
        .varying_params()
        .into_iter()
        .map(|p| (p, space.params()[p].values().len()))
        .filter(|&(_, n)| (MIN_LEVELS..=MAX_LEVELS).contains(&n))
        .collect()
}

/// `points` (rows in position order of `space`) followed by the level coordinates of every
/// [parameter that gets them](level_params), two different values `weight` apart. With no such
/// parameter, or `weight` 0, it is `points` unchanged.
pub fn with_levels(points: Points, space: &Space, weight: f64) -> Points {
    let params = if weight > 0.0 {
        level_params(space)
    } else {
        Vec::new()
    };
    if params.is_empty() || points.len() != space.len() {
        return points;
    }
    let extra: usize = params.iter().map(|&(_, n)| n).sum();
    // One-hot codes scaled by weight / sqrt(2): two codes differ in two coordinates.
    let hot = weight / std::f64::consts::SQRT_2;
    points.extended(space, extra, |indices, out| {
        for &(p, n) in &params {
            let v = usize::from(indices[p]);
            out.extend((0..n).map(|i| if i == v { hot } else { 0.0 }));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;

    #[test]
    fn only_parameters_of_a_few_values_get_level_coordinates() {
        let space = SpaceBuilder::new()
            .param("two", [1i64, 2])
            .param("three", [1i64, 2, 3])
            .param("eight", 0i64..8)
            .param("nine", 0i64..9)
            .param("one", [5i64])
            .build()
            .unwrap();
        assert_eq!(level_params(&space), [(1, 3), (2, 8)]);
        let base = Points::from_space(&space);
        let dims = base.dims();
        assert_eq!(with_levels(base.clone(), &space, 0.5).dims(), dims + 11);
        assert_eq!(with_levels(base, &space, 0.0).dims(), dims);
    }
}
