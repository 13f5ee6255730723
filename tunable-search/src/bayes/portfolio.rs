//! # Portfolios of acquisition functions: `multi` and `advanced multi`
//!
//! Willemsen et al., "Bayesian Optimization for auto-tuning GPU kernels" (Section III-G), propose two portfolios over the basic acquisition functions, in
//! Table I's order (EI, PI, LCB). Both work in *rounds*: one prediction of the surrogate, then
//! one suggestion per active acquisition function, evaluated together.
//!
//! - **multi**: each acquisition function suggests its best candidate; a suggestion already made
//!   in the round is a *duplicate* and is not evaluated (both functions are charged with it).
//!   Once several functions have suggested duplicates in each of the last `skip threshold` rounds,
//!   the one with the lowest *discounted observation score* `Σᵢ oᵢ γ^(t-i)` (the values its
//!   suggestions found, recent ones weighing more; a failed one counts as the initial sample's
//!   mean) stays and the others are skipped from then on.
//! - **advanced multi**: each function suggests its best candidate not yet suggested in the
//!   round. After each round, a function whose discounted score is more than the *required
//!   improvement factor* above the mean of the active functions' scores is counted worse, one
//!   more than that factor below it better (a failed suggestion counts as the median of the
//!   valid observations). A function counted worse `skip threshold` times is skipped (the counts
//!   start again); otherwise one counted better that often becomes the only function for the
//!   rest of the run.
//!
//! Table I's defaults: skip threshold 5, discount factor 0.65 (multi) and 0.75 (advanced
//! multi), required improvement factor 0.1. The portfolio logic follows Kernel Tuner's
//! implementation of the paper (`bayes_opt.py`), including its tie-breaking.
//!
//! ## References
//! - The same paper, Section III-G and Table I.
//! - E. Brochu, M. W. Hoffman, N. de Freitas, "Portfolio allocation for Bayesian optimization",
//!   2010 (GP-Hedge, the approach these portfolios improve on).

use super::Acquisition;
use std::collections::VecDeque;

/// Which portfolio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortfolioKind {
    /// Skips functions that keep suggesting duplicates.
    Multi,
    /// Skips functions that keep doing worse than the others, promotes one that keeps doing
    /// better.
    AdvancedMulti,
}

/// The portfolio's settings (Table I's defaults from [`PortfolioOptions::table_i`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortfolioOptions {
    /// Rounds of duplicates (multi) or of worse / better scores (advanced multi) before a
    /// function is skipped or promoted.
    pub skip_threshold: usize,
    /// Discount factor `γ` of the discounted observation score.
    pub discount: f64,
    /// Required improvement factor (advanced multi).
    pub improvement: f64,
}

impl PortfolioOptions {
    /// The paper's Table I: skip threshold 5, discount 0.65 for multi and 0.75 for advanced
    /// multi, required improvement factor 0.1.
    pub fn table_i(kind: PortfolioKind) -> Self {
        PortfolioOptions {
            skip_threshold: 5,
            discount: match kind {
                PortfolioKind::Multi => 0.65,
                PortfolioKind::AdvancedMulti => 0.75,
            },
            improvement: 0.1,
        }
    }
}

/// One suggestion of a round: which function made it, for which position, and whether another
/// function of the same round had already suggested that position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    /// Index of the function in [`Portfolio::functions`].
    pub function: usize,
    /// The suggested position.
    pub position: usize,
    /// The position was suggested earlier in the round (multi only; not evaluated again).
    pub duplicate: bool,
}

/// The state of a portfolio over a run.
#[derive(Clone, Debug)]
pub struct Portfolio {
    kind: PortfolioKind,
    options: PortfolioOptions,
    functions: Vec<Acquisition>,
    skipped: Vec<bool>,
    single: Option<usize>,
    /// Registered observation per function and round.
    observed: Vec<Vec<f64>>,
    /// multi: duplicate flags of the last `skip_threshold` rounds per function.
    duplicates: Vec<VecDeque<bool>>,
    /// advanced multi: rounds counted worse / better.
    worse: Vec<usize>,
    better: Vec<usize>,
}

impl Portfolio {
    /// A portfolio of `functions` (in order of preference).
    pub fn new(kind: PortfolioKind, options: PortfolioOptions, functions: &[Acquisition]) -> Self {
        let k = functions.len();
        Portfolio {
            kind,
            options,
            functions: functions.to_vec(),
            skipped: vec![false; k],
            single: (k == 1).then_some(0),
            observed: vec![Vec::new(); k],
            duplicates: vec![VecDeque::new(); k],
            worse: vec![0; k],
            better: vec![0; k],
        }
    }

    /// Which portfolio this is.
    pub fn kind(&self) -> PortfolioKind {
        self.kind
    }

    /// The functions, in order.
    pub fn functions(&self) -> &[Acquisition] {
        &self.functions
    }

    /// Indices of the functions that make suggestions in the next round.
    pub fn active(&self) -> Vec<usize> {
        match self.single {
            Some(i) => vec![i],
            None => (0..self.functions.len())
                .filter(|&i| !self.skipped[i])
                .collect(),
        }
    }

    /// Learns from a finished round: `value(position)` is the observed value (`None` if the
    /// configuration failed), `failed_as` what a failure counts as (multi: the initial sample's
    /// mean; advanced multi: the median of the valid observations).
    pub fn finish_round(
        &mut self,
        picks: &[Pick],
        value: impl Fn(usize) -> Option<f64>,
        failed_as: f64,
    ) {
        if self.single.is_some() && self.kind == PortfolioKind::AdvancedMulti {
            return;
        }
        let obs = |p: &Pick| value(p.position).unwrap_or(failed_as);
        match self.kind {
            PortfolioKind::Multi => self.finish_multi(picks, obs),
            PortfolioKind::AdvancedMulti => self.finish_advanced(picks, obs),
        }
    }

    fn discounted(&self, f: usize) -> f64 {
        let o = &self.observed[f];
        let g = self.options.discount;
        o.iter()
            .enumerate()
            .map(|(i, v)| v * g.powi((o.len() - 1 - i) as i32))
            .sum()
    }

    fn finish_multi(&mut self, picks: &[Pick], obs: impl Fn(&Pick) -> f64) {
        let t = self.options.skip_threshold;
        for p in picks {
            self.observed[p.function].push(obs(p));
            let w = &mut self.duplicates[p.function];
            w.push_back(p.duplicate);
            if w.len() > t {
                w.pop_front();
            }
            if p.duplicate {
                // The function that made the suggestion first is charged with it too.
                if let Some(first) = picks
                    .iter()
                    .find(|q| q.position == p.position && !q.duplicate)
                    && let Some(last) = self.duplicates[first.function].back_mut()
                {
                    *last = true;
                }
            }
        }
        let candidates: Vec<usize> = (0..self.functions.len())
            .filter(|&f| !self.skipped[f])
            .filter(|&f| self.duplicates[f].iter().filter(|&&d| d).count() >= t)
            .collect();
        if candidates.len() > 1 {
            let keep = *candidates
                .iter()
                .min_by(|&&a, &&b| self.discounted(a).total_cmp(&self.discounted(b)))
                .expect("non-empty");
            for f in candidates {
                if f == keep {
                    self.duplicates[f].clear();
                } else {
                    self.skipped[f] = true;
                }
            }
            let left: Vec<usize> = self.active();
            if left.len() == 1 {
                self.single = Some(left[0]);
            }
        }
    }

    fn finish_advanced(&mut self, picks: &[Pick], obs: impl Fn(&Pick) -> f64) {
        for p in picks {
            self.observed[p.function].push(obs(p));
        }
        let k = self.functions.len();
        let disc: Vec<f64> = (0..k).map(|f| self.discounted(f)).collect();
        let active = self.active();
        let mean = active.iter().map(|&f| disc[f]).sum::<f64>() / active.len() as f64;
        let f = self.options.improvement;
        for &a in &active {
            if disc[a] > mean * (1.0 + f) {
                self.worse[a] += 1;
            } else if disc[a] < mean * (1.0 - f) {
                self.better[a] += 1;
            }
        }
        let t = self.options.skip_threshold;
        // The worst: most often worse, the higher discounted score on a tie.
        let pick = |counts: &[usize], worse: bool| {
            let top = active.iter().map(|&a| counts[a]).max().unwrap_or(0);
            (top >= t).then(|| {
                active
                    .iter()
                    .copied()
                    .filter(|&a| counts[a] == top)
                    .reduce(|x, y| {
                        let y_wins = if worse {
                            disc[y] > disc[x]
                        } else {
                            disc[y] < disc[x]
                        };
                        if y_wins { y } else { x }
                    })
                    .expect("non-empty")
            })
        };
        if let Some(w) = pick(&self.worse, true) {
            self.skipped[w] = true;
            self.worse.iter_mut().for_each(|c| *c = 0);
            self.better.iter_mut().for_each(|c| *c = 0);
            let left = self.active();
            if left.len() == 1 {
                self.single = Some(left[0]);
            }
        } else if let Some(b) = pick(&self.better, false) {
            self.single = Some(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Acquisition::*;

    fn picks(positions: [usize; 3], dup: [bool; 3]) -> Vec<Pick> {
        (0..3)
            .map(|f| Pick {
                function: f,
                position: positions[f],
                duplicate: dup[f],
            })
            .collect()
    }

    #[test]
    fn multi_skips_duplicating_functions_keeping_the_best_scored() {
        let kind = PortfolioKind::Multi;
        let mut p = Portfolio::new(kind, PortfolioOptions::table_i(kind), &[Ei, Pi, Lcb]);
        // PI always duplicates EI's suggestion; EI finds better values than LCB.
        for round in 0..5 {
            assert_eq!(p.active(), vec![0, 1, 2], "round {round}");
            let r = picks([10 + round, 10 + round, 100 + round], [false, true, false]);
            p.finish_round(&r, |pos| Some(if pos >= 100 { 5.0 } else { 1.0 }), 3.0);
        }
        // EI and PI are both charged with the duplicates; PI's score equals EI's (same values),
        // the first of equals stays.
        assert_eq!(p.active(), vec![0, 2]);
    }

    #[test]
    fn advanced_multi_skips_the_worse_and_promotes_the_better() {
        let kind = PortfolioKind::AdvancedMulti;
        let mut p = Portfolio::new(kind, PortfolioOptions::table_i(kind), &[Ei, Pi, Lcb]);
        // LCB's suggestions are much worse: skipped after 5 rounds.
        let value = |pos: usize| {
            Some(if pos >= 200 {
                10.0
            } else {
                1.0 + (pos % 2) as f64
            })
        };
        for round in 0..5 {
            assert_eq!(p.active(), vec![0, 1, 2]);
            p.finish_round(
                &picks([2 * round, 2 * round + 1, 200 + round], [false; 3]),
                value,
                1.5,
            );
        }
        assert_eq!(p.active(), vec![0, 1]);
        // Now PI (odd positions, value 2) does worse than EI (even, value 1): skipped after 5 more,
        // which leaves EI alone.
        for round in 5..10 {
            assert_eq!(p.active(), vec![0, 1]);
            let r = [
                Pick {
                    function: 0,
                    position: 2 * round,
                    duplicate: false,
                },
                Pick {
                    function: 1,
                    position: 2 * round + 1,
                    duplicate: false,
                },
            ];
            p.finish_round(&r, value, 1.5);
        }
        assert_eq!(p.active(), vec![0]);
        // Failures count as `failed_as` and a single function stays single.
        p.finish_round(
            &[Pick {
                function: 0,
                position: 1,
                duplicate: false,
            }],
            |_| None,
            1.5,
        );
        assert_eq!(p.active(), vec![0]);
    }
}
