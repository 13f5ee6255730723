//! # The predictive check: does the surrogate still predict?
//!
//! A Gaussian process fitted to a landscape it cannot represent (an alignment effect periodic in
//! a parameter's value, a tiny good region under a smooth decoy) keeps proposing configurations
//! it believes are fast, and on such landscapes Bayesian optimization can do worse than random
//! search. [`Guard`] measures, for every valid result told once the model steers, whether the
//! model ranked it right *before* it was told: the share of the earlier valid results that the
//! prediction and the measurement put on the same side (the *concordance*, ties counting
//! one half). A model no better than chance scores 0.5 in expectation; one that predicts scores
//! more. The *skill* is the mean concordance of the last `window` results.
//!
//! While the skill is below the threshold, the strategy hands its picks to a fallback that
//! needs no model ([`Fallback`]): uniformly random unasked configurations (random search's
//! guarantee) or a neighbour of the best found (local search's). The fallback's results are
//! checked too, so the model takes over again as soon as it predicts them.
//!
//! ```
//! use tunable_search::bayes::Guard;
//! let mut g = Guard::new(4);
//! let known = [1.0, 2.0, 3.0, 4.0];
//! // Predicted best, measured best: concordant with all four earlier results.
//! g.record(0.5, 0.9, &known);
//! assert_eq!(g.skill(), Some(1.0));
//! // Predicted best, measured worst: discordant with all four.
//! g.record(0.5, 5.0, &known);
//! assert_eq!(g.skill(), Some(0.5));
//! ```

use super::fallback::Fallback;
use std::collections::VecDeque;

/// The running predictive check of a surrogate (see the module docs of `bayes::guard`).
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    window: usize,
    recent: VecDeque<f64>,
    /// Picks given to the fallback so far.
    fallbacks: usize,
}

impl Guard {
    /// A check over the last `window` (at least 1) results.
    pub fn new(window: usize) -> Self {
        Guard {
            window: window.max(1),
            recent: VecDeque::new(),
            fallbacks: 0,
        }
    }

    /// Records a result: the model's prediction and the measured target (both in the model's
    /// target units) of a configuration, against the targets of the valid results told before
    /// it. Nothing is recorded when there are none.
    pub fn record(&mut self, predicted: f64, measured: f64, earlier: &[f64]) {
        if earlier.is_empty() {
            return;
        }
        let agree: f64 = earlier
            .iter()
            .map(|&y| {
                let (p, m) = (predicted.total_cmp(&y), measured.total_cmp(&y));
                if p == m {
                    1.0
                } else if p.is_eq() || m.is_eq() {
                    0.5
                } else {
                    0.0
                }
            })
            .sum();
        if self.recent.len() == self.window {
            self.recent.pop_front();
        }
        self.recent.push_back(agree / earlier.len() as f64);
    }

    /// The mean concordance of the last `window` results; `None` before the first.
    pub fn skill(&self) -> Option<f64> {
        (!self.recent.is_empty())
            .then(|| self.recent.iter().sum::<f64>() / self.recent.len() as f64)
    }

    /// Whether enough results are checked to judge the model: half the window, at least 2.
    pub fn judged(&self) -> bool {
        self.recent.len() >= (self.window / 2).max(2)
    }

    /// Whether the model should not pick now: it is [judged](Self::judged) and its skill is
    /// below `threshold`.
    pub fn distrusts(&self, threshold: f64) -> bool {
        self.judged() && self.skill().is_some_and(|s| s < threshold)
    }

    /// Counts a pick given to the fallback and says which kind it is (for [`Fallback::Mixed`]).
    pub fn next_fallback(&mut self, kind: Fallback) -> Fallback {
        self.fallbacks += 1;
        match kind {
            Fallback::Mixed if self.fallbacks % 2 == 1 => Fallback::Random,
            Fallback::Mixed => Fallback::Local,
            k => k,
        }
    }

    /// Picks given to the fallback so far.
    pub fn fallbacks(&self) -> usize {
        self.fallbacks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_is_the_mean_concordance_of_the_window() {
        let mut g = Guard::new(2);
        assert_eq!(g.skill(), None);
        g.record(1.0, 1.0, &[]);
        assert_eq!(g.skill(), None, "nothing to compare with");
        // Ties count one half: predicted equal to an earlier result, measured below it.
        g.record(2.0, 1.0, &[2.0, 3.0]);
        assert_eq!(g.skill(), Some(0.75));
        assert!(!g.distrusts(0.9), "one result is not enough to judge");
        g.record(3.5, 0.0, &[2.0, 3.0, 4.0]);
        assert_eq!(g.skill(), Some((0.75 + 1.0 / 3.0) / 2.0));
        assert!(g.distrusts(0.6) && !g.distrusts(0.5));
        g.record(0.0, 0.0, &[1.0]);
        assert_eq!(
            g.skill(),
            Some((1.0 / 3.0 + 1.0) / 2.0),
            "the window slides"
        );
    }

    #[test]
    fn mixed_fallback_alternates() {
        let mut g = Guard::new(3);
        let kinds: Vec<Fallback> = (0..4).map(|_| g.next_fallback(Fallback::Mixed)).collect();
        use Fallback::*;
        assert_eq!(kinds, [Random, Local, Random, Local]);
        assert_eq!(g.next_fallback(Local), Local);
        assert_eq!(g.fallbacks(), 5);
    }
}
