//! # Synthetic objectives
//!
//! Test functions of Luo et al., "Non-smooth Bayesian optimization in tuning
//! problems", Section 3.1), discretized on a grid so that they are spaces like any kernel's.
//! All three are minimized here: the paper maximizes `f3` and `f4`, so their values are negated.
//!
//! - `f3(x) = 1 / (1 + (x1 - 1/4)² + (x2 - 1/4)²)` on `[-1, 1]²`: smooth, one maximum at
//!   `(1/4, 1/4)`.
//! - `f4`: `f3` where `x2 > 0`, and `0.25 / (1 + x1² + x2²)` where `x2 <= 0`. It has the same
//!   maximum as `f3` and a jump along `x2 = 0`.
//! - Bukin N.6, `100 sqrt(|x2 - 0.01 x1²|) + 0.01 |x1 + 10|` on `[-15, 5] × [-3, 3]`: a
//!   non-smooth ridge, with its minimum 0 at `(-10, 1)`.
//!
//! The grid has `n` equally spaced values per axis, endpoints included (default 101). The
//! optimum of the discretized function is its best grid point.

use super::Replay;
use crate::{SpaceBuilder, SpaceError};

/// One of the synthetic test functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synthetic {
    /// The paper's smooth `f3`, negated.
    F3,
    /// The paper's `f4` with a jump along `x2 = 0`, negated.
    F4,
    /// The Bukin N.6 function.
    Bukin6,
}

impl Synthetic {
    /// Every function, in the order the paper presents them.
    pub const ALL: [Synthetic; 3] = [Synthetic::F3, Synthetic::F4, Synthetic::Bukin6];

    /// The function's name on the command line: `f3`, `f4` or `bukin6`.
    pub fn name(self) -> &'static str {
        match self {
            Synthetic::F3 => "f3",
            Synthetic::F4 => "f4",
            Synthetic::Bukin6 => "bukin6",
        }
    }

    /// The function named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The domain: `((x1 low, x1 high), (x2 low, x2 high))`.
    pub fn domain(self) -> ((f64, f64), (f64, f64)) {
        match self {
            Synthetic::F3 | Synthetic::F4 => ((-1.0, 1.0), (-1.0, 1.0)),
            Synthetic::Bukin6 => ((-15.0, 5.0), (-3.0, 3.0)),
        }
    }

    /// The value at `(x1, x2)`, to be minimized.
    pub fn eval(self, x1: f64, x2: f64) -> f64 {
        let f3 = |x1: f64, x2: f64| 1.0 / (1.0 + (x1 - 0.25).powi(2) + (x2 - 0.25).powi(2));
        match self {
            Synthetic::F3 => -f3(x1, x2),
            Synthetic::F4 if x2 > 0.0 => -f3(x1, x2),
            Synthetic::F4 => -0.25 / (1.0 + x1 * x1 + x2 * x2),
            Synthetic::Bukin6 => {
                100.0 * (x2 - 0.01 * x1 * x1).abs().sqrt() + 0.01 * (x1 + 10.0).abs()
            }
        }
    }

    /// The function on an `n × n` grid as a replay: parameters `x1` and `x2` hold the grid's
    /// coordinates, and every configuration is valid.
    pub fn replay(self, n: usize) -> Result<Replay, SpaceError> {
        let n = n.max(2);
        let ((a1, b1), (a2, b2)) = self.domain();
        let axis = |a: f64, b: f64| -> Vec<f64> {
            (0..n)
                .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
                .collect()
        };
        let (xs, ys) = (axis(a1, b1), axis(a2, b2));
        let space = SpaceBuilder::new()
            .name(self.name())
            .param("x1", xs.clone())
            .param("x2", ys.clone())
            .build()?;
        let values = (0..space.len())
            .map(|p| {
                let i = space.indices(p);
                Some(self.eval(xs[usize::from(i[0])], ys[usize::from(i[1])]))
            })
            .collect();
        Ok(Replay::from_values(space, values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optima_are_where_the_paper_puts_them() {
        assert_eq!(Synthetic::F3.eval(0.25, 0.25), -1.0);
        assert_eq!(Synthetic::F4.eval(0.25, 0.25), -1.0);
        assert_eq!(Synthetic::Bukin6.eval(-10.0, 1.0), 0.0);
        // f4 jumps at x2 = 0: just above is f3, at and below the other branch.
        let above = Synthetic::F4.eval(0.25, 1e-9);
        let below = Synthetic::F4.eval(0.25, 0.0);
        assert!((above - Synthetic::F3.eval(0.25, 0.0)).abs() < 1e-6);
        assert!((below + 0.25 / 1.0625).abs() < 1e-12);
        for f in Synthetic::ALL {
            assert_eq!(Synthetic::from_name(f.name()), Some(f));
        }
        assert_eq!(Synthetic::from_name("f5"), None);
    }

    #[test]
    fn grids_hold_the_function() {
        let r = Synthetic::F3.replay(81).unwrap();
        assert_eq!(r.space().len(), 81 * 81);
        // 81 points on [-1, 1] step 0.025: (0.25, 0.25) is on the grid.
        let (_, best) = r.optimum().unwrap();
        assert_eq!(best, -1.0);
        let b = Synthetic::Bukin6.replay(101).unwrap();
        assert!(b.optimum().unwrap().1 >= 0.0 && b.optimum().unwrap().1 < 1.0);
    }
}
