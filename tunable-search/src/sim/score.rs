//! # Methodology score
//!
//! The performance score of Willemsen et al., "Constraint-aware Optimization in Auto-Tuning", Section V-A (after Willemsen et al., "A methodology for
//! comparing optimization algorithms for auto-tuning", FGCS 2024), on an axis of function
//! evaluations: how much better than random search a strategy's best-so-far is, relative to the
//! distance from random search to the optimum. 0 is random search, 1 is finding the optimum at
//! the first evaluation, negative is worse than random search.
//!
//! With `N` configurations, values sorted `v(1) <= ... <= v(N)` (a failed configuration counts as
//! the worst valid value: it costs an evaluation and finds nothing):
//! - **baseline** `b(t)`: the exact expected best-so-far of `t` uniform draws without
//!   replacement, `E[min] = v(1) + sum_{i>=2} (v(i) - v(i-1)) S_t(i)` with
//!   `S_t(i) = C(N-i+1, t) / C(N, t)` = P(every draw has rank >= i), computed by the product
//!   recurrence `S_t(i+1) = S_t(i) (N-i+1-t) / (N-i+1)` ([`random_baseline`]);
//! - **best(t)**: a run's best value among its first `t` evaluations (failed = worst valid value,
//!   also before anything valid was found); a run shorter than the budget keeps its last value;
//! - **t_start**: the first `t` with `b(t) <= median - 0.01 (median - optimum)`;
//! - **score** of a run: the mean over `t = t_start..=B` of `(b(t) - best(t)) / (b(t) - optimum)`
//!   (points where `b(t) - optimum <= 1e-12 max(1, |optimum|)` are skipped); the score of a set of
//!   runs is the mean of theirs.
//!
//! [`ScoreOptions`] sets `B` and how the median is taken. The default follows the definition
//! above with `B` = the budget (220) and the median over all `N` values (failed counted as the
//! worst). [`ScoreOptions::peer_results`] reproduces the scores of
//! `shared/data/peer-results/scores.json`, computed by `shared/tools/score.py --invalid all
//! --max-fevals 220`: there `B` is also capped by the paper's budget rule (the first `t` at which
//! the baseline is 95% of the way from the median to the optimum) and the median is over the
//! valid values only.
//!
//! ```
//! use tunable_search::sim::ScoreContext;
//!
//! let values: Vec<Option<f64>> = (1..=100).map(|i| Some(f64::from(i))).collect();
//! let ctx = ScoreContext::new(&values, 20).unwrap();
//! assert_eq!(ctx.score_run(&[Some(1.0)]), 1.0); // optimum first
//! assert!(ctx.score_run(&[Some(100.0)]) < 0.0); // stuck at the worst
//! ```

use super::SimError;
use std::ops::RangeInclusive;

/// Default number of evaluations scored (as in Kernel Tuner's published comparisons).
pub const DEFAULT_BUDGET: usize = 220;

/// How the median of the search space is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MedianOf {
    /// All configurations, a failed one counted as the worst valid value (the default).
    #[default]
    FailedAsWorst,
    /// The valid configurations only (as `score.py` does).
    Valid,
}

/// Options of the score. `Default`: budget 220, no cutoff, start 0.01, [`MedianOf::FailedAsWorst`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreOptions {
    /// Evaluations scored, `B` (capped at the number of configurations). Default 220.
    pub budget: usize,
    /// If set to `p`, `B` is also capped at the first `t` where the baseline has come `p` of the
    /// way from the median to the optimum (the paper's budget rule, `p = 0.95`). Default `None`.
    pub cutoff: Option<f64>,
    /// Scoring starts at the first `t` where the baseline has come this fraction of the way from
    /// the median to the optimum. Default 0.01.
    pub start: f64,
    /// How the median is taken. Default [`MedianOf::FailedAsWorst`].
    pub median: MedianOf,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            budget: DEFAULT_BUDGET,
            cutoff: None,
            start: 0.01,
            median: MedianOf::FailedAsWorst,
        }
    }
}

impl ScoreOptions {
    /// The default options with another budget.
    pub fn new(budget: usize) -> Self {
        ScoreOptions {
            budget,
            ..Self::default()
        }
    }

    /// The options behind `shared/data/peer-results/scores.json` (`score.py --invalid all
    /// --max-fevals 220`): budget 220 capped by the 95% cutoff, median over valid values.
    pub fn peer_results() -> Self {
        ScoreOptions {
            budget: DEFAULT_BUDGET,
            cutoff: Some(0.95),
            start: 0.01,
            median: MedianOf::Valid,
        }
    }

    fn check(&self) -> Result<(), SimError> {
        let fraction = |x: f64| (0.0..=1.0).contains(&x);
        let message = if self.budget == 0 {
            "budget must be at least 1"
        } else if !fraction(self.start) {
            "start must be in [0, 1]"
        } else if self.cutoff.is_some_and(|c| !fraction(c)) {
            "cutoff must be in [0, 1]"
        } else {
            return Ok(());
        };
        Err(SimError::BadOption {
            message: message.to_owned(),
        })
    }
}

/// The exact expected best-so-far (minimum) of random search without replacement after
/// `t = 1..=budget` evaluations (index `t - 1`); failed configurations (`None`, or a non-finite
/// value) count as the worst valid value. For `t >= N` it is the optimum. Empty if no value is
/// valid.
///
/// ```
/// use tunable_search::sim::random_baseline;
/// let b = random_baseline(&[Some(1.0), Some(2.0), Some(3.0), None], 4);
/// assert_eq!(b[0], 2.25); // the mean, the failed one counted as 3.0
/// assert!((b[1] - 10.0 / 6.0).abs() < 1e-15); // minima of the 6 pairs: 1, 1, 1, 2, 2, 3
/// assert_eq!(b[3], 1.0);
/// ```
pub fn random_baseline(values: &[Option<f64>], budget: usize) -> Vec<f64> {
    match Sorted::new(values) {
        Some(s) => (1..=budget).map(|t| s.expected_min(t)).collect(),
        None => Vec::new(),
    }
}

/// The values ascending, failed ones as copies of the worst valid value at the end.
struct Sorted {
    all: Vec<f64>,
    valid: usize,
}

impl Sorted {
    fn new(values: &[Option<f64>]) -> Option<Self> {
        let mut all: Vec<f64> = values
            .iter()
            .filter_map(|v| v.filter(|x| x.is_finite()))
            .collect();
        all.sort_by(f64::total_cmp);
        let (valid, worst) = (all.len(), *all.last()?);
        all.resize(values.len(), worst);
        Some(Sorted { all, valid })
    }

    fn optimum(&self) -> f64 {
        self.all[0]
    }

    fn worst(&self) -> f64 {
        self.all[self.valid - 1]
    }

    /// E[min of t draws without replacement]. The sum stops once its remainder, at most
    /// `S_t(i) (v(N) - v(i-1))`, is below 1e-18 of the sum: exact to floating-point precision.
    fn expected_min(&self, t: usize) -> f64 {
        let v = &self.all;
        let n = v.len();
        if t >= n {
            return v[0];
        }
        let top = v[n - 1];
        let (mut s, mut sum) = (1.0_f64, v[0]);
        for i in 1..=n - t {
            // S(i) = S(i-1) * C(n-i, t) / C(n-i+1, t), ranks 0-based
            s *= (n - i + 1 - t) as f64 / (n - i + 1) as f64;
            if s * (top - v[i - 1]) <= 1e-18 * sum.abs() {
                break;
            }
            sum += (v[i] - v[i - 1]) * s;
        }
        sum
    }

    /// The smallest `t` in `1..=N` with `E[min of t] <= target` (binary search: it decreases).
    fn evaluations_to_reach(&self, target: f64) -> usize {
        let (mut lo, mut hi) = (1, self.all.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.expected_min(mid) <= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    fn median(&self, of: MedianOf) -> f64 {
        let v = match of {
            MedianOf::FailedAsWorst => &self.all[..],
            MedianOf::Valid => &self.all[..self.valid],
        };
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
}

/// Everything needed to score runs on one search space: the baseline, optimum, median, worst
/// valid value and the scored range `t_start..=B`.
#[derive(Clone, Debug)]
pub struct ScoreContext {
    baseline: Vec<f64>,
    optimum: f64,
    median: f64,
    worst: f64,
    t_start: usize,
    budget: usize,
    /// Scored `t` with `b(t)` and `b(t) - optimum` (points with a zero denominator left out).
    points: Vec<(usize, f64, f64)>,
}

impl ScoreContext {
    /// The score over `values` (one per configuration, `None` = failed) with the default options
    /// and the given budget.
    pub fn new(values: &[Option<f64>], budget: usize) -> Result<Self, SimError> {
        Self::with_options(values, &ScoreOptions::new(budget))
    }

    /// The score over `values` with the given options.
    ///
    /// Errors: no valid value, an option out of range, or a degenerate space whose baseline
    /// equals the optimum over the whole scored range.
    pub fn with_options(values: &[Option<f64>], options: &ScoreOptions) -> Result<Self, SimError> {
        options.check()?;
        let sorted = Sorted::new(values).ok_or(SimError::NoValidValue)?;
        let (optimum, median) = (sorted.optimum(), sorted.median(options.median));
        let target = |p: f64| optimum + (1.0 - p) * (median - optimum);
        let mut budget = options.budget.min(sorted.all.len());
        if let Some(p) = options.cutoff {
            budget = budget.min(sorted.evaluations_to_reach(target(p)));
        }
        let t_start = sorted
            .evaluations_to_reach(target(options.start))
            .min(budget);
        let baseline: Vec<f64> = (1..=budget).map(|t| sorted.expected_min(t)).collect();
        let floor = 1e-12 * optimum.abs().max(1.0);
        let points: Vec<(usize, f64, f64)> = (t_start..=budget)
            .map(|t| (t, baseline[t - 1], baseline[t - 1] - optimum))
            .filter(|&(_, _, denom)| denom > floor)
            .collect();
        if points.is_empty() {
            return Err(SimError::Degenerate {
                optimum,
                t_start,
                budget,
            });
        }
        Ok(ScoreContext {
            baseline,
            optimum,
            median,
            worst: sorted.worst(),
            t_start,
            budget,
            points,
        })
    }

    /// The baseline at `t = 1..=B` (index `t - 1`).
    pub fn baseline(&self) -> &[f64] {
        &self.baseline
    }

    /// The best valid value.
    pub fn optimum(&self) -> f64 {
        self.optimum
    }

    /// The median (as [`ScoreOptions::median`] says).
    pub fn median(&self) -> f64 {
        self.median
    }

    /// The worst valid value (what a failed evaluation counts as).
    pub fn worst(&self) -> f64 {
        self.worst
    }

    /// The first scored evaluation.
    pub fn t_start(&self) -> usize {
        self.t_start
    }

    /// The last scored evaluation, `B`.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The scored evaluations, `t_start..=B`.
    pub fn scored_range(&self) -> RangeInclusive<usize> {
        self.t_start..=self.budget
    }

    /// A run's best-so-far at `t = 1..=B`: failed or non-finite values count as the worst valid
    /// value, as does the time before the first evaluation of an empty run; a run shorter than
    /// `B` keeps its last value, a longer one is cut at `B`.
    pub fn best_so_far(&self, run: &[Option<f64>]) -> Vec<f64> {
        let mut best = f64::INFINITY;
        let mut out = Vec::with_capacity(self.budget);
        for t in 0..self.budget {
            if let Some(v) = run.get(t) {
                best = best.min(v.filter(|x| x.is_finite()).unwrap_or(self.worst));
            }
            out.push(if run.is_empty() { self.worst } else { best });
        }
        out
    }

    /// The score of one run: the objective values of its unique evaluations in order (`None` =
    /// failed).
    pub fn score_run(&self, run: &[Option<f64>]) -> f64 {
        let best = self.best_so_far(run);
        let total: f64 = self
            .points
            .iter()
            .map(|&(t, base, denom)| (base - best[t - 1]) / denom)
            .sum();
        total / self.points.len() as f64
    }

    /// The mean score of several runs and its standard error (sample standard deviation over
    /// `sqrt(runs)`; 0 for one run). `(NaN, NaN)` for no run.
    pub fn score_runs(&self, runs: &[Vec<Option<f64>>]) -> (f64, f64) {
        let scores: Vec<f64> = runs.iter().map(|r| self.score_run(r)).collect();
        mean_and_standard_error(&scores)
    }
}

/// Mean and standard error of the mean (`(NaN, NaN)` for no sample, SE 0 for one).
fn mean_and_standard_error(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() == 1 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// E[min] by enumerating every ordered draw of t distinct items (small N only).
    fn brute_force(values: &[f64], t: usize) -> f64 {
        fn rec(values: &[f64], used: &mut Vec<bool>, left: usize, best: f64, acc: &mut (f64, f64)) {
            if left == 0 {
                *acc = (acc.0 + best, acc.1 + 1.0);
                return;
            }
            for i in 0..values.len() {
                if !used[i] {
                    used[i] = true;
                    rec(values, used, left - 1, best.min(values[i]), acc);
                    used[i] = false;
                }
            }
        }
        let mut acc = (0.0, 0.0);
        rec(
            values,
            &mut vec![false; values.len()],
            t,
            f64::INFINITY,
            &mut acc,
        );
        acc.0 / acc.1
    }

    #[test]
    fn baseline_ends_at_mean_and_optimum() {
        let vals: Vec<Option<f64>> = [5.0, 1.0, 3.0, 3.0, 9.0]
            .into_iter()
            .map(Some)
            .chain([None, None])
            .collect();
        let b = random_baseline(&vals, 9);
        assert_eq!(b.len(), 9);
        assert!((b[0] - (5.0 + 1.0 + 3.0 + 3.0 + 9.0 + 18.0) / 7.0).abs() < 1e-12);
        assert_eq!(b[6], 1.0);
        assert_eq!(b[8], 1.0);
        assert!(random_baseline(&[None, Some(f64::NAN)], 3).is_empty());
    }

    #[test]
    fn context_finds_start_and_budget() {
        let values: Vec<Option<f64>> = (1..=1000).map(|i| Some(f64::from(i))).collect();
        let ctx = ScoreContext::new(&values, 220).unwrap();
        assert_eq!(
            (ctx.optimum(), ctx.median(), ctx.worst()),
            (1.0, 500.5, 1000.0)
        );
        assert_eq!(ctx.budget(), 220);
        assert_eq!(ctx.t_start(), 2); // b(1) = 500.5 > 495.5, b(2) ~ 334
        let cut = ScoreContext::with_options(
            &values,
            &ScoreOptions {
                cutoff: Some(0.95),
                ..ScoreOptions::default()
            },
        )
        .unwrap();
        let b = cut.baseline();
        assert!(
            b[cut.budget() - 1] <= 1.0 + 0.05 * 499.5 && b[cut.budget() - 2] > 1.0 + 0.05 * 499.5
        );
        assert!(ScoreContext::new(&values, 0).is_err());
        assert!(matches!(
            ScoreContext::new(&[None], 5),
            Err(SimError::NoValidValue)
        ));
        assert!(matches!(
            ScoreContext::new(&[Some(2.0); 4], 5),
            Err(SimError::Degenerate { .. })
        ));
    }

    #[test]
    fn runs_are_scored_against_the_baseline() {
        let values: Vec<Option<f64>> = (1..=50)
            .map(|i| Some(f64::from(i)))
            .chain([None; 10])
            .collect();
        let ctx = ScoreContext::new(&values, 30).unwrap();
        assert_eq!(ctx.score_run(&[Some(1.0)]), 1.0);
        // Nothing found (or only failures) is the worst value at every t: below random search.
        assert!(ctx.score_run(&[]) < 0.0 && ctx.score_run(&[None, None]) == ctx.score_run(&[]));
        let (mean, se) = ctx.score_runs(&[vec![Some(1.0)], vec![Some(1.0)]]);
        assert_eq!((mean, se), (1.0, 0.0));
        assert!(ctx.score_runs(&[]).0.is_nan());
        let best = ctx.best_so_far(&[Some(7.0), None, Some(3.0), Some(f64::NAN)]);
        assert_eq!(&best[..5], &[7.0, 7.0, 3.0, 3.0, 3.0]);
        assert_eq!(ctx.best_so_far(&[None])[0], 50.0);
    }

    #[test]
    fn standard_error() {
        let (m, se) = mean_and_standard_error(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((se - (5.0_f64 / 3.0 / 4.0).sqrt()).abs() < 1e-15);
    }

    proptest! {
        #[test]
        fn baseline_is_exact_and_decreasing(
            vals in proptest::collection::vec(prop_oneof![3 => (0u8..20).prop_map(|x| Some(f64::from(x))), 1 => Just(None)], 1..7)
        ) {
            let b = random_baseline(&vals, vals.len() + 1);
            if vals.iter().all(Option::is_none) {
                prop_assert!(b.is_empty());
            } else {
                let worst = vals.iter().flatten().copied().fold(f64::MIN, f64::max);
                let filled: Vec<f64> = vals.iter().map(|v| v.unwrap_or(worst)).collect();
                for t in 1..=vals.len() {
                    prop_assert!((b[t - 1] - brute_force(&filled, t)).abs() < 1e-9, "t={} {:?}", t, vals);
                }
                prop_assert!(b.windows(2).all(|w| w[1] <= w[0] + 1e-12));
            }
        }
    }
}
