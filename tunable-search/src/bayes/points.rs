//! # The points a surrogate models
//!
//! [`Points`]: the normalized coordinates of a space's valid configurations, one row each, over
//! which every surrogate ([`Gp`](super::Gp), the clustered GP, the feasibility model) predicts.

use super::BayesError;
use crate::Space;

/// A row-major matrix of points, one row per configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Points {
    data: Vec<f64>,
    dims: usize,
    len: usize,
}

impl Points {
    /// Points from row-major `data` with `dims` coordinates per row (`dims >= 1`, every
    /// coordinate finite).
    pub fn new(data: Vec<f64>, dims: usize) -> Result<Self, BayesError> {
        if dims == 0 || !data.len().is_multiple_of(dims) {
            return Err(BayesError::Points {
                reason: format!("{} numbers do not make rows of {dims}", data.len()),
            });
        }
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            return Err(BayesError::Points {
                reason: format!("coordinate {} of row {} is not finite", i % dims, i / dims),
            });
        }
        let len = data.len() / dims;
        Ok(Points { data, dims, len })
    }

    /// The normalized coordinates of every valid configuration of `space` (its varying
    /// parameters, see [`Space::normalized`]), in position order.
    pub fn from_space(space: &Space) -> Self {
        Points {
            data: space.normalized_matrix(),
            dims: space.varying_params().len(),
            len: space.len(),
        }
    }

    /// These points (one row per configuration of `space`, in position order) with `extra`
    /// more coordinates per row, which `fill` appends from the row's value indices.
    ///
    /// # Panics
    /// If `fill` appends other than `extra` finite numbers to a row.
    pub fn extended(
        &self,
        space: &Space,
        extra: usize,
        mut fill: impl FnMut(&[u16], &mut Vec<f64>),
    ) -> Points {
        let dims = self.dims + extra;
        let mut data = Vec::with_capacity(self.len * dims);
        for position in 0..self.len {
            data.extend_from_slice(self.row(position));
            fill(&space.indices(position), &mut data);
            assert_eq!(
                data.len(),
                (position + 1) * dims,
                "extra coordinates per row"
            );
        }
        Points::new(data, dims).expect("finite coordinates in rows of dims")
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Coordinates per row.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.dims..(i + 1) * self.dims]
    }
}
