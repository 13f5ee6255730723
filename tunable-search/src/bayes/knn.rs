//! # k-nearest-neighbour classification of candidates
//!
//! The clustered GP assigns every candidate configuration to a cluster by the labels of its `k`
//! nearest observations in normalized coordinates (Luo et al., "Non-smooth Bayesian
//! optimization in tuning problems", use `k = 3`): a majority vote, ties going to the label of the nearest. Observations only ever get appended, so each
//! candidate's `k` nearest are kept up to date incrementally, in `O(dims)` per candidate and
//! observation; labels may change freely between calls since they are looked up at
//! classification time.

use super::Points;
use super::gp::CHUNK;
use rayon::prelude::*;
use std::sync::Arc;

/// The `k` nearest observations of every candidate row, updated one observation at a time.
#[derive(Clone, Debug)]
pub struct Neighbours {
    k: usize,
    points: Arc<Points>,
    cand: Arc<[u32]>,
    /// Observed rows, in order.
    observed: Vec<usize>,
    /// Per candidate: up to `k` `(squared distance, observation index)`, nearest first.
    near: Vec<Vec<(f64, u32)>>,
}

impl Neighbours {
    /// No observations yet; `k >= 1` neighbours per candidate of `cand`.
    pub fn new(k: usize, points: Arc<Points>, cand: Arc<[u32]>) -> Self {
        Neighbours {
            k: k.max(1),
            near: vec![Vec::with_capacity(k.max(1) + 1); cand.len()],
            points,
            cand,
            observed: Vec::new(),
        }
    }

    /// Adds an observation at `row`.
    pub fn observe(&mut self, row: usize) {
        let index = self.observed.len() as u32;
        self.observed.push(row);
        let (k, points, cand) = (self.k, &*self.points, &*self.cand);
        let x = points.row(row);
        self.near
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, near)| {
                for (i, list) in near.iter_mut().enumerate() {
                    let d = sq(x, points.row(cand[ci * CHUNK + i] as usize));
                    insert(list, k, d, index);
                }
            });
    }

    /// Number of observations.
    pub fn len(&self) -> usize {
        self.observed.len()
    }

    /// Whether there are no observations.
    pub fn is_empty(&self) -> bool {
        self.observed.is_empty()
    }

    /// The class of candidate `i` (an index into the candidates) under `labels`, one label per
    /// observation (0 without observations).
    pub fn classify_candidate(&self, i: usize, labels: &[usize]) -> usize {
        vote(&self.near[i], labels)
    }

    /// The class of any row under `labels`, by a scan over the observations.
    pub fn classify_row(&self, row: usize, labels: &[usize]) -> usize {
        let x = self.points.row(row);
        let mut list = Vec::with_capacity(self.k + 1);
        for (j, &r) in self.observed.iter().enumerate() {
            insert(&mut list, self.k, sq(x, self.points.row(r)), j as u32);
        }
        vote(&list, labels)
    }

    /// The squared distance from candidate `i` to its nearest observation whose label differs
    /// from `class`, among its `k` nearest (`None` if all share `class`).
    pub fn nearest_other(&self, i: usize, class: usize, labels: &[usize]) -> Option<f64> {
        self.near[i]
            .iter()
            .find(|&&(_, j)| labels[j as usize] != class)
            .map(|&(d, _)| d)
    }
}

fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Inserts `(d, j)` into the sorted list of at most `k` nearest; ties keep the earlier
/// observation first.
fn insert(list: &mut Vec<(f64, u32)>, k: usize, d: f64, j: u32) {
    if list.len() == k && list.last().is_some_and(|&(worst, _)| d >= worst) {
        return;
    }
    let at = list.iter().position(|&(e, _)| d < e).unwrap_or(list.len());
    list.insert(at, (d, j));
    list.truncate(k);
}

/// The majority label among the neighbours; ties go to the label of the nearest among the tied.
fn vote(list: &[(f64, u32)], labels: &[usize]) -> usize {
    let mut best = (0usize, 0usize);
    for (pos, &(_, j)) in list.iter().enumerate() {
        let label = labels[j as usize];
        if list[..pos]
            .iter()
            .any(|&(_, e)| labels[e as usize] == label)
        {
            continue;
        }
        let count = list
            .iter()
            .filter(|&&(_, e)| labels[e as usize] == label)
            .count();
        if count > best.0 {
            best = (count, label);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_and_nearest_tie_break() {
        let pts = Arc::new(Points::new((0..10).map(f64::from).collect(), 1).unwrap());
        let cand: Arc<[u32]> = (0..10).collect();
        let mut nn = Neighbours::new(3, Arc::clone(&pts), cand);
        for r in [0, 2, 3, 9] {
            nn.observe(r);
        }
        // Labels of observations at rows 0, 2, 3, 9.
        let labels = [0, 1, 1, 2];
        // Row 1: nearest 0 (d 1), 2 (d 1), 3 (d 4): labels 0, 1, 1 -> 1.
        assert_eq!(nn.classify_candidate(1, &labels), 1);
        assert_eq!(nn.classify_row(1, &labels), 1);
        // Row 8: nearest 9, 3, 2: labels 2, 1, 1 -> 1.
        assert_eq!(nn.classify_candidate(8, &labels), 1);
        // Three different labels: the nearest's.
        let labels = [0, 1, 2, 3];
        assert_eq!(nn.classify_candidate(8, &labels), 3);
        assert_eq!(nn.nearest_other(8, 3, &labels), Some(25.0));
        for r in 0..10 {
            assert_eq!(
                nn.classify_candidate(r, &labels),
                nn.classify_row(r, &labels)
            );
        }
    }
}
