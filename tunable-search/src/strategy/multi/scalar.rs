//! # A scalarization portfolio
//!
//! Several single-objective strategies share one budget and every result, each minimizing its
//! own weighted combination of the objectives, as ParEGO (Knowles, "ParEGO: a hybrid algorithm
//! with on-line landscape approximation for expensive multiobjective optimization problems")
//! scalarizes with weights; here the weights are fixed per member, so that each member's
//! landscape stays the same through the run. A share of the asks (`walk`) walks along the front
//! found so far instead (`frontier.rs`): the scalarizations find where the front lies,
//! the walk fills it in between them.
//!
//! A member is told the weighted geometric mean of the objectives' ratios (`ratio.rs`): positive
//! and free of the objectives' units, as a model of log-time expects.
//!
//! Member `i` of `m` weighs two objectives `(1 - i / (m - 1), i / (m - 1))`: the first member
//! minimizes the first objective and the last the second. With more objectives member `i`
//! weighs objective `i mod k` by one half and every objective by a further `1 / (2k)`; a single
//! member weighs every objective alike.

use super::archive::Archive;
use super::frontier::front_neighbour;
use super::ratio::ratio;
use super::{MultiStrategy, MultiTrial};
use crate::Space;
use crate::strategy::ensemble::{build_members, member_specs, specs};
use crate::strategy::options::{boolean, declare_options, probability};
use crate::strategy::{Outcome, Strategy, StrategyError, StrategySpec, Trial};
use rand::RngExt;
use std::sync::Arc;

declare_options! {
    /// Options of [`Scalar`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ScalarOptions {
        /// The single-objective strategies, one per weighting, separated by `+` (a member with
        /// options in brackets).
        members: Vec<StrategySpec> = specs(&["annealing", "annealing", "annealing"]),
            "members" => member_specs;
        /// The first objective's weight per member, separated by `+` (the others share one
        /// minus it equally); empty: spread evenly from 1 to 0.
        weights: Vec<f64> = Vec::new(), "weights" => first_weights;
        /// The share of asks that walk along the front before any walk is judged.
        walk: f64 = 0.3, "walk" => probability();
        /// Whether the share follows the walks' success: the share is then the walks that
        /// joined the front, with `walk` as a prior worth four walks.
        adapt: bool = false, "adapt" => boolean();
        /// Whether the walk moves only along trade-off parameters (see `frontier.rs`).
        strict: bool = false, "strict" => boolean();
    }
}

/// A scalarization portfolio; see the [module docs](self).
pub struct Scalar {
    archive: Archive,
    members: Vec<Box<dyn Strategy>>,
    weights: Vec<Vec<f64>>,
    walk: f64,
    adapt: bool,
    strict: bool,
    /// The walked positions not yet told.
    walking: Vec<usize>,
    /// Walks told, and those that joined the front.
    walks: (usize, usize),
    /// The member whose turn it is.
    turn: usize,
    /// Each objective's first value told: the unit of its ratios.
    scales: Option<Vec<f64>>,
}

impl std::fmt::Debug for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scalar")
            .field("members", &self.members.len())
            .field("weights", &self.weights)
            .field("walk", &self.walk)
            .finish_non_exhaustive()
    }
}

/// `weights`: numbers in `[0, 1]` separated by `+`.
fn first_weights(_: &ScalarOptions, value: &str) -> Result<Vec<f64>, String> {
    value
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split('+')
        .map(|w| match w.trim().parse::<f64>() {
            Ok(w) if (0.0..=1.0).contains(&w) => Ok(w),
            _ => Err(format!(
                "expected weights in [0, 1] separated by '+', got '{w}'"
            )),
        })
        .collect()
}

/// The weights of member `i` of `m` over `k` objectives (see the [module docs](self)).
fn weights(i: usize, m: usize, k: usize) -> Vec<f64> {
    if m == 1 {
        return vec![1.0 / k as f64; k];
    }
    if k == 2 {
        let t = i as f64 / (m - 1) as f64;
        return vec![1.0 - t, t];
    }
    (0..k)
        .map(|j| 0.5 / k as f64 + if j == i % k { 0.5 } else { 0.0 })
        .collect()
}

/// Weights over `k` objectives whose first is `w`, the others sharing `1 - w` equally.
pub(super) fn first_weighted(w: f64, k: usize) -> Vec<f64> {
    if k < 2 {
        return vec![1.0; k];
    }
    let rest = (1.0 - w) / (k - 1) as f64;
    std::iter::once(w)
        .chain(std::iter::repeat_n(rest, k - 1))
        .collect()
}

impl Scalar {
    /// The portfolio over `space` for `objectives` objectives, seeded; member `i` is seeded as
    /// an ensemble's.
    pub fn new(
        space: Arc<Space>,
        objectives: usize,
        opts: ScalarOptions,
        seed: u64,
    ) -> Result<Self, StrategyError> {
        let members = build_members(&opts.members, &space, seed)?;
        let m = members.len();
        let given = !opts.weights.is_empty();
        if given && opts.weights.len() != m {
            return Err(StrategyError::BadValue {
                strategy: "scalar".into(),
                key: "weights".into(),
                value: format!("{:?}", opts.weights),
                reason: format!("expected one weight per member ({m})"),
            });
        }
        let weights = (0..m)
            .map(|i| match opts.weights.get(i) {
                Some(&w) => first_weighted(w, objectives),
                None => weights(i, m, objectives),
            })
            .collect();
        Ok(Scalar {
            archive: Archive::new(space, objectives, seed),
            weights,
            members,
            walk: opts.walk,
            adapt: opts.adapt,
            strict: opts.strict,
            walking: Vec::new(),
            walks: (0, 0),
            turn: 0,
            scales: None,
        })
    }

    /// What member `i` is told for `values`.
    fn scalar(&self, i: usize, values: &[f64]) -> f64 {
        let scales = self.scales.as_deref().unwrap_or(values);
        let log: f64 = values
            .iter()
            .zip(scales)
            .zip(&self.weights[i])
            .map(|((&v, &s), &w)| w * ratio(v, s).ln())
            .sum();
        log.exp()
    }
}

impl MultiStrategy for Scalar {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let share = if self.adapt {
                (4.0 * self.walk + self.walks.1 as f64) / (4.0 + self.walks.0 as f64)
            } else {
                self.walk
            };
            let walk = self.archive.rng.random_bool(share.clamp(0.0, 1.0));
            if walk && let Some(p) = front_neighbour(&mut self.archive, self.strict) {
                self.archive.ask(p);
                self.walking.push(p);
                out.push(p);
                continue;
            }
            let m = self.members.len();
            let mut got = Vec::new();
            for _ in 0..m {
                let i = self.turn;
                self.turn = (self.turn + 1) % m;
                got = self.archive.propose(self.members[i].as_mut(), 1);
                if !got.is_empty() {
                    break;
                }
            }
            if got.is_empty()
                && let Some(p) = self.archive.random_unasked()
            {
                self.archive.ask(p);
                got.push(p);
            }
            if got.is_empty() {
                break;
            }
            out.extend(got);
        }
        out
    }

    fn tell(&mut self, trials: &[MultiTrial]) {
        self.archive.tell(trials);
        if trials.iter().any(|t| self.walking.contains(&t.position)) {
            let front = self.archive.front();
            for t in trials {
                if let Some(k) = self.walking.iter().position(|&p| p == t.position) {
                    self.walking.swap_remove(k);
                    self.walks.0 += 1;
                    self.walks.1 += usize::from(front.contains(&t.position));
                }
            }
        }
        let valid = |t: &MultiTrial| {
            t.values
                .as_ref()
                .filter(|v| v.len() == self.weights[0].len() && v.iter().all(|x| x.is_finite()))
                .cloned()
        };
        if self.scales.is_none() {
            self.scales = trials.iter().find_map(valid);
        }
        for i in 0..self.members.len() {
            let told: Vec<Trial> = trials
                .iter()
                .map(|t| Trial {
                    position: t.position,
                    outcome: valid(t)
                        .map_or(Outcome::Failed, |v| Outcome::Value(self.scalar(i, &v))),
                })
                .collect();
            self.members[i].tell(&told);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_weight_leaves_the_rest_to_the_other_objectives_alike() {
        assert_eq!(first_weighted(0.25, 2), [0.25, 0.75]);
        assert_eq!(first_weighted(1.0, 3), [1.0, 0.0, 0.0]);
        assert_eq!(first_weighted(0.5, 3), [0.5, 0.25, 0.25]);
    }

    #[test]
    fn weights_run_from_one_objective_to_the_other() {
        assert_eq!(weights(0, 3, 2), [1.0, 0.0]);
        assert_eq!(weights(1, 3, 2), [0.5, 0.5]);
        assert_eq!(weights(2, 3, 2), [0.0, 1.0]);
        assert_eq!(weights(0, 1, 4), [0.25; 4]);
        let w = weights(4, 5, 3);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12 && w[1] > w[0]);
    }
}
