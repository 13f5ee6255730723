//! # The `bayes` strategy
//!
//! The ask/tell state machine that drives the models, the candidate pipeline and the round
//! modifiers (see the [module docs](super)). An ask takes, in order: the initial sample, a random
//! configuration while no valid result is known, the current round's picks, a random pick
//! (`tau`), a [fallback](super::fallback) pick while the predictive check distrusts the model or
//! every other pick of a stalled search, and else a new acquisition round. A round restricts
//! its candidates to a [coverage](super::coverage) or [polishing](super::polish) round's, scores
//! them ([`candidates`](super::candidates)), inside the [trust region](super::TrustRegion)
//! and the [trial scope](super::scope) where those apply, and queues each acquisition function's
//! best.

use super::candidates::{self, Buffers, RUNNERS_UP, Scored, Scoring};
use super::clipping::Clipping;
use super::coverage;
use super::fallback::{self, Fallback, Known};
use super::models::Models;
use super::options::{AcquisitionChoice, BatchFill, BayesOptions, Exploration, Transform};
use super::polish;
use super::pool::Pool;
use super::results::Results;
use super::scope::Scope;
use super::targets::standardization;
use super::{Acquisition, Pick, Portfolio, PortfolioKind, TrustRegion, contextual_variance};
use crate::Space;
use crate::strategy::{Memo, Strategy, Trial};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// Bayesian optimization over a [`Space`] (see the [module docs](super)).
pub struct Bayes {
    space: Arc<Space>,
    options: BayesOptions,
    rng: ChaCha8Rng,
    memo: Memo,
    /// Every position asked or told, in order: what a round marks among its candidates
    /// instead of looking each candidate up in the memo of the whole space.
    asked_rows: Vec<usize>,
    models: Models,
    /// The candidate pool of a large space.
    pool: Option<Pool>,
    /// The trust region (`trust > 0`).
    trust: Option<TrustRegion>,
    init_queue: VecDeque<usize>,
    init_asked: usize,
    bo_started: bool,
    /// Asked, not yet told, in order; the first `fantasized` are fantasies in the model.
    pending: Vec<usize>,
    fantasized: usize,
    /// Picks of the current round not yet asked.
    queue: VecDeque<usize>,
    /// The candidates the last round ranked right after its picks (up to [`RUNNERS_UP`], the
    /// functions' lists interleaved): what the next round is likely to pick, handed to a tuner
    /// that compiles ahead through [`Strategy::upcoming`]; never asked from.
    runners_up: Vec<usize>,
    /// Rounds whose results are not all told (portfolios only).
    rounds: VecDeque<Vec<Pick>>,
    portfolio: Option<Portfolio>,
    results: Results,
    /// The reference of the contextual variance: the initial sample's mean value and the mean
    /// posterior deviation after it.
    reference: Option<(f64, f64)>,
    /// Whether `reference` is final.
    reference_frozen: bool,
    clipping: Clipping,
    /// Acquisition rounds started (for `polish` and `cover`).
    round_count: usize,
    buffers: Buffers,
    /// Picks made while stalled (`stall`).
    stalled_picks: usize,
    /// Whether the run minimizes negative values (a maximized metric, negated): decided by the
    /// first valid value.
    negative: Option<bool>,
}

impl std::fmt::Debug for Bayes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bayes")
            .field("options", &self.options)
            .field("asked", &self.memo.asked_count())
            .field("valid", &self.results.len())
            .field("best", &self.results.best)
            .finish_non_exhaustive()
    }
}

impl Bayes {
    /// Bayesian optimization over `space` with `options`, seeded.
    pub fn new(space: Arc<Space>, options: BayesOptions, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (pool, candidates) = match Pool::sample(&space, options.pool, &mut rng) {
            Some((pool, rows)) => (Some(pool), Some(rows)),
            None => (None, None),
        };
        let models = Models::new(&space, &options, candidates, seed);
        let trust = (options.trust > 0.0).then(|| {
            TrustRegion::new(
                options.trust,
                models.points.dims(),
                TrustRegion::finest_spacing(&models.points),
            )
        });
        let init_queue = if space.is_empty() {
            VecDeque::new()
        } else {
            options.design.sample(&space, &mut rng, options.init).into()
        };
        let portfolio = match options.acquisition {
            AcquisitionChoice::Portfolio(kind) => Some(Portfolio::new(
                kind,
                options.portfolio(kind),
                &Acquisition::PORTFOLIO,
            )),
            AcquisitionChoice::Single(_) => None,
        };
        Bayes {
            memo: Memo::new(space.len()),
            asked_rows: Vec::new(),
            space,
            options,
            rng,
            models,
            pool,
            trust,
            init_queue,
            init_asked: 0,
            bo_started: false,
            pending: Vec::new(),
            fantasized: 0,
            queue: VecDeque::new(),
            runners_up: Vec::new(),
            rounds: VecDeque::new(),
            portfolio,
            results: Results::default(),
            reference: None,
            reference_frozen: false,
            clipping: Clipping::default(),
            round_count: 0,
            buffers: Buffers::default(),
            stalled_picks: 0,
            negative: None,
        }
    }

    /// Picks given to the predictive check's fallback so far (`guard`): for reports and tests.
    pub fn fallback_picks(&self) -> usize {
        self.models.guard.as_ref().map_or(0, |g| g.fallbacks())
    }

    /// Whether the model that picks now sees alignment coordinates (`align`, or `dual` once the
    /// second model has taken over).
    pub fn picks_with_alignment(&self) -> bool {
        self.models.points.dims() > self.space.varying_params().len()
    }

    /// The portfolio's currently active functions (`None` for a single function): for reports.
    pub fn active_functions(&self) -> Option<Vec<Acquisition>> {
        self.portfolio
            .as_ref()
            .map(|p| p.active().into_iter().map(|i| p.functions()[i]).collect())
    }

    fn next_position(&mut self) -> Option<usize> {
        if self.memo.exhausted() {
            return None;
        }
        while let Some(p) = self.init_queue.pop_front() {
            if !self.memo.is_asked(p) {
                self.init_asked += 1;
                return Some(p);
            }
        }
        let init = self.options.init;
        // Failed initial configurations are replaced by random ones, for at most `init` more
        // evaluations; nothing to model without a valid result.
        let filling = !self.bo_started
            && self.results.len() + self.pending.len() < init
            && self.init_asked < 2 * init;
        if self.results.is_empty() || filling {
            self.init_asked += 1;
            return self.memo.random_unasked(&mut self.rng);
        }
        if let Some(p) = self.queue.pop_front() {
            return Some(p);
        }
        self.bo_started = true;
        // The exploration rate: a random configuration with probability `1 - tau`.
        let tau = self.options.exploration_rate();
        if tau < 1.0 && self.rng.random::<f64>() >= tau {
            return self.memo.random_unasked(&mut self.rng);
        }
        // The predictive check: a model that does not predict does not pick.
        if let Some(guard) = &mut self.models.guard
            && self.options.guard > 0.0
            && guard.distrusts(self.options.guard)
        {
            let kind = guard.next_fallback(self.options.fallback);
            return self.fallback_pick(kind);
        }
        // A stalled search: every other pick goes to the fallback.
        let stall = self.options.stall;
        if stall > 0 && self.results.since_best >= stall {
            self.stalled_picks += 1;
            if self.stalled_picks % 2 == 1 {
                return self.fallback_pick(self.options.fallback);
            }
        }
        self.new_round();
        self.queue
            .pop_front()
            .or_else(|| self.memo.random_unasked(&mut self.rng))
    }

    /// The value the strategy minimizes for a measured `v`: `v` itself, except under the `log`
    /// transform in a run whose first valid value is negative (a maximized metric reaches the
    /// strategies negated): then `1 / -v`, positive and in the same order, so that the
    /// logarithm applies; a value of the other sign there counts as twice the worst told.
    fn cost(&mut self, v: f64) -> f64 {
        if self.options.transform != Transform::Log {
            return v;
        }
        if !*self.negative.get_or_insert(v < 0.0) {
            return v;
        }
        if v < 0.0 {
            (1.0 / -v).min(f64::MAX)
        } else {
            2.0 * self
                .results
                .values
                .iter()
                .copied()
                .fold(f64::MIN_POSITIVE, f64::max)
        }
    }

    fn fallback_pick(&mut self, kind: Fallback) -> Option<usize> {
        let known = Known {
            space: &self.space,
            memo: &self.memo,
            asked_rows: &self.asked_rows,
            results: &self.results,
        };
        fallback::pick(kind, &known, &mut self.rng)
    }

    /// Whether the next ask waits for results (see the `ramp` option): the initial sample is
    /// asked and as many configurations are outstanding as the valid results told support.
    fn waits(&self) -> bool {
        let ramp = self.options.ramp;
        ramp > 0
            && self.init_queue.is_empty()
            && !self.pending.is_empty()
            && self.pending.len() >= (self.results.len() / ramp).max(1)
    }

    /// Conditions the picking model on every pending configuration with a made-up result.
    fn sync_fantasies(&mut self) {
        let model = &mut self.models.surrogate;
        while self.fantasized < self.pending.len() {
            let p = self.pending[self.fantasized];
            let lie = match self.options.batch {
                BatchFill::KrigingBeliever => model.predict(p).mean,
                BatchFill::ConstantLiar => self.options.transform.apply(self.results.best_value()),
            };
            model.fantasize(p, lie);
            self.fantasized += 1;
        }
    }

    /// The candidates a coverage or polishing round restricts itself to, ascending; `None` in
    /// other rounds (and when the round has none left).
    fn restriction(&mut self) -> Option<Vec<usize>> {
        let round = self.round_count;
        let covered = if coverage::due(self.options.cover, round) {
            coverage::candidates(
                &self.space,
                self.models.surrogate.candidates(),
                &self.asked_rows,
                &self.memo,
                &mut self.rng,
            )
        } else {
            None
        };
        covered.or_else(|| {
            polish::due(self.options.polish, round)
                .then(|| polish::candidates(&self.space, &self.results.ranked(), &self.memo))
                .filter(|n| !n.is_empty())
        })
    }

    /// The exploration factor of a round whose unvisited candidates have a mean posterior
    /// deviation of `deviation`, updating the contextual variance's `reference` (with
    /// `frozen`) while it is open: the statistics of the first round (with `cv_ref`, of every
    /// round until one sees that many valid results).
    fn exploration(
        options: &BayesOptions,
        results: &Results,
        reference: &mut Option<(f64, f64)>,
        frozen: &mut bool,
        deviation: f64,
    ) -> f64 {
        let (reference_mean, reference_deviation) = match *reference {
            Some(stats) if *frozen => stats,
            _ => {
                *frozen = options.cv_ref.is_none_or(|r| results.len() >= r);
                *reference.insert((results.mean(), deviation))
            }
        };
        match options.exploration {
            Exploration::ContextualVariance(scale) => {
                let best = results.best_value();
                scale * contextual_variance(deviation, reference_deviation, reference_mean, best)
            }
            Exploration::Constant(c) => c,
        }
    }

    /// Scores the candidates and queues the round's picks.
    fn new_round(&mut self) {
        self.sync_fantasies();
        self.round_count += 1;
        let only = self.restriction();
        let mut extra = match &self.pool {
            Some(pool) => pool.neighbours(
                &self.space,
                &self.results.ranked(),
                self.options.local,
                &self.memo,
            ),
            None => Vec::new(),
        };
        if let (Some(pool), Some(only)) = (&self.pool, &only) {
            extra.extend(only.iter().filter(|&&p| !pool.contains(p)));
            extra.sort_unstable();
            extra.dedup();
        }
        let scored = Scored::new(
            &mut self.buffers,
            self.models.surrogate.as_ref(),
            self.models.feasibility.as_ref(),
            &extra,
            &self.asked_rows,
            &self.memo,
        );
        let Some((unvisited, deviation)) = scored.unvisited_deviation() else {
            return;
        };
        let lambda = Self::exploration(
            &self.options,
            &self.results,
            &mut self.reference,
            &mut self.reference_frozen,
            deviation,
        );
        let (mean, sd) = standardization(&self.results.targets);
        let best = self.options.transform.apply(self.results.best_value());
        let scoring = Scoring {
            mean,
            deviation: sd,
            best: (best - mean) / sd,
            lambda,
        };
        let (functions, active): (Vec<Acquisition>, Vec<usize>) = match &self.portfolio {
            Some(p) => {
                let active = p.active();
                (active.iter().map(|&i| p.functions()[i]).collect(), active)
            }
            None => match self.options.acquisition {
                AcquisitionChoice::Single(a) => (vec![a], vec![0]),
                AcquisitionChoice::Portfolio(_) => unreachable!("portfolio without state"),
            },
        };
        let k = functions.len();
        // Every list keeps the runners-up beyond its `k` picks.
        let keep = k + RUNNERS_UP;
        // The trust region's box (not in coverage and polishing rounds) is centred on the best.
        let centre: Option<Vec<f64>> = match (&self.trust, &only, self.results.best) {
            (Some(_), None, Some((b, _))) => Some(self.models.points.row(b).to_vec()),
            _ => None,
        };
        let on_trial = self.models.guard.as_ref().is_none_or(|g| !g.judged());
        let scope = Scope::new(
            self.options.trial_scope,
            on_trial,
            only.is_some(),
            unvisited,
            &mut self.rng,
        );
        let points = &self.models.points;
        let outside = |r: usize| only.as_ref().is_some_and(|o| o.binary_search(&r).is_err());
        let min_p = self.options.min_feasibility;
        let top = |min_p: f64, excluded: &(dyn Fn(usize) -> bool + Sync)| {
            scored.top(&functions, keep, scoring, min_p, excluded)
        };
        let empty = |lists: &Vec<Vec<(f64, usize)>>| lists.iter().all(Vec::is_empty);
        let mut lists = Vec::new();
        if let (Some(c), Some(t)) = (&centre, &self.trust) {
            lists = top(min_p, &|r| {
                outside(r) || !t.contains(c, points.row(r)) || !scope.contains(r)
            });
        }
        if empty(&lists) {
            if centre.is_some() {
                // Nothing likely valid left in the region: start it afresh, search globally.
                self.trust.as_mut().expect("trust region").restart();
            }
            lists = top(min_p, &|r| outside(r) || !scope.contains(r));
        }
        if empty(&lists) && !scope.is_whole() {
            lists = top(min_p, &outside);
        }
        if empty(&lists) {
            lists = top(0.0, &outside);
        }
        // The picks are each list's first `k`; the rest are the runners-up, a hint only.
        self.runners_up = candidates::runners_up(&mut lists, k);
        self.queue_picks(&active, &lists);
    }

    /// Queues the round's picks: each active function's best (`multi`: its best even when
    /// another function picked it too; else its best not picked yet).
    fn queue_picks(&mut self, active: &[usize], lists: &[Vec<(f64, usize)>]) {
        let multi = matches!(
            self.portfolio.as_ref().map(Portfolio::kind),
            Some(PortfolioKind::Multi)
        );
        let mut picks: Vec<Pick> = Vec::with_capacity(active.len());
        for (f, top) in active.iter().zip(lists) {
            let chosen = if multi {
                top.first().map(|&(_, r)| r)
            } else {
                top.iter()
                    .map(|&(_, r)| r)
                    .find(|r| !picks.iter().any(|p| p.position == *r))
            };
            if let Some(r) = chosen {
                let duplicate = picks.iter().any(|p| p.position == r);
                if !duplicate {
                    self.queue.push_back(r);
                }
                picks.push(Pick {
                    function: *f,
                    position: r,
                    duplicate,
                });
            }
        }
        if self.portfolio.is_some() && !picks.is_empty() {
            self.rounds.push_back(picks);
        }
    }

    /// Finishes the rounds whose results are all told, in order.
    fn finish_rounds(&mut self) {
        while let Some(round) = self.rounds.front() {
            if round.iter().any(|p| self.memo.get(p.position).is_none()) {
                return;
            }
            let round = self.rounds.pop_front().expect("front exists");
            let Some(portfolio) = &mut self.portfolio else {
                return;
            };
            let failed_as = match portfolio.kind() {
                PortfolioKind::Multi => self.reference.map_or(0.0, |(m, _)| m),
                PortfolioKind::AdvancedMulti => self.results.median(),
            };
            let memo = &self.memo;
            portfolio.finish_round(
                &round,
                |p| {
                    memo.get(p)
                        .and_then(|o| o.value())
                        .filter(|v| v.is_finite())
                },
                failed_as,
            );
        }
    }
}

impl Strategy for Bayes {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && !self.waits() {
            let Some(p) = self.next_position() else {
                break;
            };
            if self.memo.mark_asked(p) {
                self.asked_rows.push(p);
                self.pending.push(p);
                out.push(p);
            }
        }
        out
    }

    /// The initial design's next configurations, the current round's picks not asked yet
    /// (both what `ask` returns next unless a result told meanwhile changes the round), then the
    /// last round's runners-up (what the next round is likely to pick once the model has learnt
    /// the round's results).
    fn upcoming(&self, n: usize) -> Vec<usize> {
        let mut next = Vec::with_capacity(n);
        for &p in self
            .init_queue
            .iter()
            .chain(&self.queue)
            .chain(&self.runners_up)
        {
            if next.len() == n {
                break;
            }
            if !self.memo.is_asked(p) && !next.contains(&p) {
                next.push(p);
            }
        }
        next
    }

    fn tell(&mut self, trials: &[Trial]) {
        if trials.is_empty() {
            return;
        }
        self.models.clear_fantasies();
        self.fantasized = 0;
        for t in trials {
            if !self.memo.is_asked(t.position) {
                self.asked_rows.push(t.position);
            }
            self.memo.record(t);
            if let Some(i) = self.pending.iter().position(|&p| p == t.position) {
                self.pending.remove(i);
            }
            let value = t
                .outcome
                .value()
                .filter(|v| v.is_finite())
                .map(|v| self.cost(v))
                .filter(|v| v.is_finite());
            if let Some(trust) = &mut self.trust
                && self.bo_started
            {
                trust.record(value.is_some_and(|v| self.results.improves(v)));
            }
            match value {
                Some(v) => {
                    let y = self.options.transform.apply(v);
                    let check = self.bo_started;
                    self.models
                        .observe(t.position, y, &self.results.targets, check);
                    self.results.record(t.position, v, y);
                    self.models.observe_validity(t.position, true);
                }
                None => self.models.observe_validity(t.position, false),
            }
        }
        let best = self.results.best.map(|(_, b)| b);
        let asked = self.memo.asked_count();
        if let Some(seen) = self
            .clipping
            .seen(&self.options, &self.results.targets, best, asked)
        {
            self.models.retarget(&seen);
        }
        // Valid results told before anything was asked (a warm start, a baseline) count toward
        // the initial sample: the design only fills what they leave, keeping at least one
        // configuration of its own, so the model never knows only the neighbourhood of
        // configurations that were fast elsewhere.
        if !self.bo_started && self.init_asked == 0 && self.pending.is_empty() {
            let left = self.options.init.saturating_sub(self.results.len()).max(1);
            self.init_queue.truncate(left);
        }
        self.finish_rounds();
        self.models.choose();
        self.models.end_early_kernel(&self.options, asked);
        self.models.refit(&self.options, self.results.len());
    }
}

#[cfg(test)]
mod tests;
