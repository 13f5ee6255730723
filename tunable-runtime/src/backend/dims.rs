//! # Launch geometry
//!
//! Grid and block dimensions of a launch, computed from the problem size and the parameters by
//! Kernel Tuner's convention (see [the backend docs](super)).

use crate::params::Params;
use tunable_search::Value;

/// A problem, block or divisor extent in one to three dimensions: `n`, `[x]`, `[x, y]` or
/// `[x, y, z]`.
pub trait Extent: Copy {
    /// The extent padded with 1 to three dimensions, and how many were given.
    fn dims3(self) -> ([usize; 3], usize);
}

impl Extent for usize {
    fn dims3(self) -> ([usize; 3], usize) {
        ([self, 1, 1], 1)
    }
}

impl Extent for [usize; 1] {
    fn dims3(self) -> ([usize; 3], usize) {
        ([self[0], 1, 1], 1)
    }
}

impl Extent for [usize; 2] {
    fn dims3(self) -> ([usize; 3], usize) {
        ([self[0], self[1], 1], 2)
    }
}

impl Extent for [usize; 3] {
    fn dims3(self) -> ([usize; 3], usize) {
        (self, 3)
    }
}

/// The grid and block of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Blocks per dimension (OpenCL: work-groups per dimension).
    pub grid: [usize; 3],
    /// Threads per block per dimension (OpenCL: the local work size).
    pub block: [usize; 3],
    /// Dimensions in use, 1 to 3 (OpenCL's `work_dim`).
    pub rank: usize,
}

impl Dims {
    /// A grid of `grid` blocks of `block` threads.
    pub fn new(grid: impl Extent, block: impl Extent) -> Dims {
        let ((grid, r1), (block, r2)) = (grid.dims3(), block.dims3());
        Dims {
            grid,
            block,
            rank: r1.max(r2),
        }
    }

    /// Blocks of `block` threads, each covering `divisor` elements of the `problem`:
    /// `grid[d] = ceil(problem[d] / divisor[d])`. A zero divisor gives an empty grid, which the
    /// launch reports as a failure.
    pub fn divide(problem: impl Extent, block: impl Extent, divisor: impl Extent) -> Dims {
        let ((p, r1), (b, r2), (q, r3)) = (problem.dims3(), block.dims3(), divisor.dims3());
        let grid =
            std::array::from_fn(|d| p[d].checked_div(q[d]).map_or(0, |_| p[d].div_ceil(q[d])));
        Dims {
            grid,
            block: b,
            rank: r1.max(r2).max(r3),
        }
    }

    /// Blocks of `block` threads, one thread per element of the `problem` (the divisor is the
    /// block).
    pub fn cover<B: Extent>(problem: impl Extent, block: B) -> Dims {
        Dims::divide(problem, block, block)
    }

    /// Kernel Tuner's defaults: the block is (`block_size_x`, `block_size_y`, `block_size_z`)
    /// read from `params` (1 where a parameter is missing or not a positive integer), one thread
    /// per element of the `problem`.
    pub fn from_params<P: Params>(params: &P, problem: impl Extent) -> Dims {
        let size = |name: &str| match params.get(name) {
            Some(Value::Int(v)) if v > 0 => v as usize,
            _ => 1,
        };
        let block = [
            size("block_size_x"),
            size("block_size_y"),
            size("block_size_z"),
        ];
        let (p, r) = problem.dims3();
        let rank = if block[2] > 1 {
            3
        } else if block[1] > 1 {
            2
        } else {
            1
        };
        let mut d = Dims::cover(p, block);
        d.rank = r.max(rank);
        d
    }

    /// Threads per dimension in the whole launch: `grid * block` (OpenCL's global work size).
    pub fn global(&self) -> [usize; 3] {
        std::array::from_fn(|d| self.grid[d].saturating_mul(self.block[d]))
    }

    /// Threads in one block.
    pub fn threads_per_block(&self) -> usize {
        self.block.iter().product()
    }

    /// Why this launch is empty, if it is: a zero in the grid or the block.
    pub fn empty_reason(&self) -> Option<String> {
        (self.grid.contains(&0) || self.block.contains(&0)).then(|| {
            format!(
                "empty launch: grid {:?}, block {:?}",
                &self.grid[..self.rank],
                &self.block[..self.rank]
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    struct P(i64, i64);

    impl Params for P {
        const NAMES: &'static [&'static str] = &["block_size_x", "block_size_y", "tile"];
        fn from_values(_: &[Value]) -> Option<Self> {
            None
        }
        fn to_values(&self) -> Vec<Value> {
            vec![Value::Int(self.0), Value::Int(self.1), Value::Int(4)]
        }
    }

    #[test]
    fn grid_rounds_up_and_ranks_follow_the_widest_extent() {
        let d = Dims::cover(1000usize, 256usize);
        assert_eq!((d.grid, d.block, d.rank), ([4, 1, 1], [256, 1, 1], 1));
        let d = Dims::new([2, 3], [4, 5, 6]);
        assert_eq!((d.grid, d.rank, d.global()), ([2, 3, 1], 3, [8, 15, 6]));
        assert_eq!(d.empty_reason(), None);
    }

    #[test]
    fn zero_divisor_or_block_is_an_empty_launch() {
        let d = Dims::divide([64, 64], [8, 8], [0, 8]);
        assert_eq!(d.grid, [0, 8, 1]);
        assert!(d.empty_reason().unwrap().contains("grid [0, 8]"));
        assert!(Dims::new(4usize, 0usize).empty_reason().is_some());
    }

    #[test]
    fn kernel_tuner_block_size_names() {
        let d = Dims::from_params(&P(32, 4), [100, 10]);
        assert_eq!((d.block, d.grid, d.rank), ([32, 4, 1], [4, 3, 1], 2));
        let d = Dims::from_params(&P(16, 1), 64usize);
        assert_eq!((d.block, d.grid, d.rank), ([16, 1, 1], [4, 1, 1], 1));
    }
}
