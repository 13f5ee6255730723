//! # Continuous mapping
//!
//! PSO and the firefly algorithm move in a continuous space (Willemsen et al.,
//! "Constraint-aware Optimization in Auto-Tuning", Section IV-B): the values
//! of the parameter with the most values sit at equidistant points `0, eps, 2 eps, ..., 1`, and
//! every other parameter's `m` values at `0, eps, ..., (m - 1) eps`. A step of `eps` in any
//! dimension therefore always reaches a different discrete value. Positions snap back to the
//! nearest value index; when that configuration is invalid, the constraint-aware form evaluates
//! the repair candidate ([`super::repair_candidates`]) closest in continuous space instead.

use super::repair::repair_candidates;
use crate::Space;

/// The epsilon-scaled mapping between value indices and continuous coordinates.
#[derive(Clone, Debug)]
pub struct Continuous {
    eps: f64,
    counts: Vec<usize>,
}

impl Continuous {
    /// The mapping for a space's parameters.
    pub fn new(space: &Space) -> Self {
        let counts: Vec<usize> = space.params().iter().map(|p| p.values().len()).collect();
        let max = counts.iter().copied().max().unwrap_or(1);
        Continuous {
            eps: if max > 1 { 1.0 / (max - 1) as f64 } else { 1.0 },
            counts,
        }
    }

    /// The grid step.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// Upper bound of dimension `d` (its last value's coordinate).
    pub fn upper(&self, d: usize) -> f64 {
        (self.counts[d] - 1) as f64 * self.eps
    }

    /// Coordinates of value indices.
    pub fn coords(&self, indices: &[u16]) -> Vec<f64> {
        indices.iter().map(|&i| f64::from(i) * self.eps).collect()
    }

    /// The nearest value indices of coordinates (clamped into range).
    pub fn snap(&self, x: &[f64]) -> Vec<u16> {
        x.iter()
            .zip(&self.counts)
            .map(|(&v, &n)| ((v / self.eps).round().clamp(0.0, (n - 1) as f64)) as u16)
            .collect()
    }

    /// Squared distance between coordinates and value indices.
    pub fn dist2(&self, x: &[f64], indices: &[u16]) -> f64 {
        x.iter()
            .zip(indices)
            .map(|(&a, &i)| (a - f64::from(i) * self.eps).powi(2))
            .sum()
    }

    /// The position to evaluate for continuous point `x`: its snapped configuration if valid;
    /// otherwise, when `repair`, the closest repair candidate, else `None` (a penalty).
    pub fn evaluate_at(&self, space: &Space, x: &[f64], repair: bool) -> Option<usize> {
        let idx = self.snap(x);
        if let Some(p) = space.position(&idx) {
            return Some(p);
        }
        if !repair {
            return None;
        }
        self.closest(space, x, &repair_candidates(space, &idx))
    }

    /// The candidate position closest to `x` (the first of equally close ones).
    pub(super) fn closest(&self, space: &Space, x: &[f64], candidates: &[usize]) -> Option<usize> {
        let mut buf = vec![0u16; space.dims()];
        let mut best: Option<(f64, usize)> = None;
        for &c in candidates {
            space.write_indices(c, &mut buf);
            let d = self.dist2(x, &buf);
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, c));
            }
        }
        best.map(|(_, c)| c)
    }
}
