//! # The candidate pipeline
//!
//! One acquisition round scores the candidates: the model's candidates (the whole space, or the
//! pool of a large space) with their predictions, probabilities of validity and surrogate
//! weights, then the extra rows the round adds (the pool's local neighbours, a coverage or
//! polishing round's rows outside the pool). [`Scored`] holds them; [`Scored::top`] keeps each
//! acquisition function's best, in parallel over fixed chunks, so the result does not depend on
//! the number of threads. Beyond its picks each list keeps the runners-up ([`RUNNERS_UP`]), what
//! the next round is likely to pick.

use super::gp::CHUNK;
use super::{Acquisition, Feasibility, Prediction, Surrogate};
use crate::strategy::Memo;
use rayon::prelude::*;

/// How many candidates beyond its picks a round remembers as likely next picks
/// ([`Strategy::upcoming`](crate::strategy::Strategy::upcoming)): enough to keep a pool of 16
/// compiling threads busy.
pub(super) const RUNNERS_UP: usize = 16;

/// The buffers a round fills, kept between rounds.
#[derive(Debug, Default)]
pub(super) struct Buffers {
    preds: Vec<Prediction>,
    probs: Vec<f64>,
    /// The surrogate's acquisition weights per candidate (clustered GP).
    weights: Vec<f64>,
    scratch: Vec<Prediction>,
}

/// How a round scores a candidate: the standardization of the targets, the best target and the
/// exploration factor.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scoring {
    /// The targets' mean.
    pub mean: f64,
    /// The targets' deviation.
    pub deviation: f64,
    /// The best target, standardized.
    pub best: f64,
    /// The exploration factor `λ`.
    pub lambda: f64,
}

/// A candidate's row, prediction, probability of validity and surrogate weight.
type Row = (usize, Prediction, f64, f64);

/// The candidates of one round, scored.
pub(super) struct Scored<'a> {
    cand: Vec<u32>,
    preds: &'a [Prediction],
    probs: &'a [f64],
    weights: &'a [f64],
    extra: Vec<Row>,
    /// Whether each of `cand` is asked.
    cand_asked: Vec<bool>,
    memo: &'a Memo,
}

impl<'a> Scored<'a> {
    /// Predicts `model`'s candidates and the `extra` rows (ascending, none of them a
    /// candidate), with the probability of validity of `feasibility` (1 without).
    pub fn new(
        buffers: &'a mut Buffers,
        model: &dyn Surrogate,
        feasibility: Option<&Feasibility>,
        extra: &[usize],
        asked_rows: &[usize],
        memo: &'a Memo,
    ) -> Scored<'a> {
        let cand: Vec<u32> = model.candidates().to_vec();
        let nc = cand.len();
        let b = buffers;
        b.preds.resize(nc, Prediction::default());
        model.predict_candidates(&mut b.preds);
        b.probs.resize(nc, 1.0);
        match feasibility {
            Some(f) => f.candidate_probabilities(&mut b.scratch, &mut b.probs),
            None => b.probs.iter_mut().for_each(|p| *p = 1.0),
        }
        b.weights.resize(nc, 1.0);
        if !model.candidate_weights(&mut b.weights) {
            b.weights.iter_mut().for_each(|w| *w = 1.0);
        }
        let extra: Vec<Row> = extra
            .par_iter()
            .map(|&r| {
                let p = feasibility.map_or(1.0, |f| f.probability(r));
                (r, model.predict(r), p, model.weight(r))
            })
            .collect();
        // The candidates asked so far (candidates are ascending rows), so that the scans read
        // one flag per candidate in order rather than the memo of the whole space.
        debug_assert!(cand.windows(2).all(|w| w[0] < w[1]), "ascending candidates");
        let mut cand_asked = vec![false; nc];
        for &r in asked_rows {
            if let Ok(i) = cand.binary_search(&(r as u32)) {
                cand_asked[i] = true;
            }
        }
        Scored {
            cand,
            preds: &b.preds,
            probs: &b.probs,
            weights: &b.weights,
            extra,
            cand_asked,
            memo,
        }
    }

    fn len(&self) -> usize {
        self.cand.len() + self.extra.len()
    }

    fn at(&self, i: usize) -> Row {
        let nc = self.cand.len();
        if i < nc {
            (
                self.cand[i] as usize,
                self.preds[i],
                self.probs[i],
                self.weights[i],
            )
        } else {
            self.extra[i - nc]
        }
    }

    fn asked(&self, i: usize, r: usize) -> bool {
        if i < self.cand.len() {
            self.cand_asked[i]
        } else {
            self.memo.is_asked(r)
        }
    }

    /// The unvisited candidates' count and mean posterior deviation (the contextual variance
    /// compares it with the reference's); `None` when none is unvisited.
    pub fn unvisited_deviation(&self) -> Option<(usize, f64)> {
        let total = self.len();
        let (sum_std, count) = (0..total.div_ceil(CHUNK))
            .into_par_iter()
            .map(|ci| {
                let mut acc = (0.0, 0usize);
                for i in ci * CHUNK..total.min((ci + 1) * CHUNK) {
                    let (r, pred, _, _) = self.at(i);
                    if !self.asked(i, r) {
                        acc.0 += pred.std();
                        acc.1 += 1;
                    }
                }
                acc
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (count > 0).then(|| (count, sum_std / count as f64))
    }

    /// The best `keep` unvisited candidates of each of `functions`, best first, among those
    /// valid with probability at least `min_p` that `excluded` does not rule out; all lists
    /// empty when no candidate qualifies.
    pub fn top(
        &self,
        functions: &[Acquisition],
        keep: usize,
        scoring: Scoring,
        min_p: f64,
        excluded: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<Vec<(f64, usize)>> {
        let k = functions.len();
        let total = self.len();
        let Scoring {
            mean: m,
            deviation: s,
            best: f_best,
            lambda,
        } = scoring;
        let chunks: Vec<Vec<Vec<(f64, usize)>>> = (0..total.div_ceil(CHUNK))
            .into_par_iter()
            .map(|ci| {
                let mut tops = vec![Vec::with_capacity(keep + 1); k];
                for i in ci * CHUNK..total.min((ci + 1) * CHUNK) {
                    let (r, pred, p, w) = self.at(i);
                    if p < min_p || excluded(r) || self.asked(i, r) {
                        continue;
                    }
                    let (mu, sd) = ((pred.mean - m) / s, pred.std() / s);
                    for (top, a) in tops.iter_mut().zip(functions) {
                        let score = a.weighted_score(mu, sd, f_best, lambda, p * w);
                        insert_top(top, keep, score, r);
                    }
                }
                tops
            })
            .collect();
        let mut merged = vec![Vec::with_capacity(keep + 1); k];
        for chunk in chunks {
            for (m, t) in merged.iter_mut().zip(chunk) {
                for (score, r) in t {
                    insert_top(m, keep, score, r);
                }
            }
        }
        merged
    }
}

/// Splits each of `lists` after its first `k` (the picks) and returns the rows after them, the
/// runners-up: up to [`RUNNERS_UP`] distinct rows, the lists interleaved. Each list is in a total
/// order (score, then row), so its first `k` are the `k` best whatever it keeps beyond them.
pub(super) fn runners_up(lists: &mut [Vec<(f64, usize)>], k: usize) -> Vec<usize> {
    let tails: Vec<Vec<(f64, usize)>> = lists
        .iter_mut()
        .map(|m| m.split_off(k.min(m.len())))
        .collect();
    let mut out = Vec::new();
    for i in 0..RUNNERS_UP {
        for t in &tails {
            if let Some(&(_, r)) = t.get(i)
                && out.len() < RUNNERS_UP
                && !out.contains(&r)
            {
                out.push(r);
            }
        }
    }
    out
}

/// Keeps the `k` best `(score, row)` pairs, best first; NaN scores rank last, ties go to the
/// lower row.
fn insert_top(top: &mut Vec<(f64, usize)>, k: usize, score: f64, row: usize) {
    let score = if score.is_nan() {
        f64::NEG_INFINITY
    } else {
        score
    };
    let better = |a: &(f64, usize)| score > a.0 || (score == a.0 && row < a.1);
    if top.len() == k && !top.last().is_some_and(better) {
        return;
    }
    let at = top.iter().position(better).unwrap_or(top.len());
    top.insert(at, (score, row));
    top.truncate(k);
}
