//! The `bayes` strategy: the ask/tell state machine around the surrogate, the feasibility model,
//! the acquisition functions and the portfolios (see the [module docs](super)).

use super::elite;
use super::gp::CHUNK;
use super::options::{
    AcquisitionChoice, BatchFill, BayesOptions, Exploration, SurrogateChoice, Transform,
};
use super::targets::standardization;
use super::{
    Acquisition, ClusteredGp, Covariance, Fallback, Feasibility, Gp, GpParams, Guard, MAX_LEVELS,
    Pick, Points, Portfolio, PortfolioKind, Prediction, Surrogate, TrustRegion,
    contextual_variance, with_alignment, with_levels,
};
use crate::Space;
use crate::mix::{GOLDEN, mix64, unit_of};
use crate::space::Neighbourhood;
use crate::space::neighbours::hamming;
use crate::strategy::{Memo, Strategy, Trial};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;

/// How much better (in mean concordance) the second model must predict to take over (`dual`).
pub const DUAL_MARGIN: f64 = 0.02;

/// Bayesian optimization over a [`Space`] (see the [module docs](super)).
pub struct Bayes {
    space: Arc<Space>,
    options: BayesOptions,
    rng: ChaCha8Rng,
    memo: Memo,
    /// Every position asked or told, in order: what a round marks among its candidates
    /// instead of looking each candidate up in the memo of the whole space.
    asked_rows: Vec<usize>,
    model: Box<dyn Surrogate>,
    feasibility: Option<Feasibility>,
    points: Arc<Points>,
    /// The trust region (`trust > 0`).
    trust: Option<TrustRegion>,
    /// Rows in the candidate pool (pool mode only).
    in_pool: Option<Vec<bool>>,
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
    /// Raw valid values told, in order; positions of the valid ones.
    valid: Vec<f64>,
    valid_rows: Vec<usize>,
    /// Model targets of the valid values.
    targets: Vec<f64>,
    best: Option<(usize, f64)>,
    /// The initial sample's mean value and the mean posterior deviation after it (contextual
    /// variance).
    init_stats: Option<(f64, f64)>,
    /// Whether `init_stats` is final.
    init_frozen: bool,
    next_fit: usize,
    /// The model's parameters while the early lengthscale is in effect (`early_lengthscale`).
    early_params: Option<GpParams>,
    /// Whether `clip_until` has passed and the models were given the uncapped targets back.
    clip_released: bool,
    /// Acquisition rounds started (for `polish`).
    round_count: usize,
    preds: Vec<Prediction>,
    probs: Vec<f64>,
    /// The surrogate's acquisition weights per candidate (clustered GP).
    weights: Vec<f64>,
    scratch: Vec<Prediction>,
    /// The predictive check of `model` (with `guard > 0` or a second model).
    guard: Option<Guard>,
    /// Results told since the best improved last (`stall`), and picks made while stalled.
    since_best: usize,
    stalled_picks: usize,
    /// The second model (`dual`): the other coordinates (with alignment coordinates when `model`
    /// has none, and the reverse), its points and its predictive check. Whichever of the two
    /// predicts better is `model`.
    alt: Option<(Box<dyn Surrogate>, Arc<Points>, Guard)>,
}

impl std::fmt::Debug for Bayes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bayes")
            .field("options", &self.options)
            .field("asked", &self.memo.asked_count())
            .field("valid", &self.valid.len())
            .field("best", &self.best)
            .finish_non_exhaustive()
    }
}

impl Bayes {
    /// Bayesian optimization over `space` with `options`, seeded.
    pub fn new(space: Arc<Space>, options: BayesOptions, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let points = Arc::new(with_levels(
            with_alignment(&space, options.align),
            &space,
            options.levels,
        ));
        // The early kernel (the first `early` evaluations): its own lengthscale, the overlap part.
        let early_lengthscale = options.early_lengthscale > 0.0 && options.early > 0;
        let early = (early_lengthscale || options.overlap > 0.0) && options.early > 0;
        let lengthscale = if early_lengthscale {
            options.early_lengthscale
        } else {
            options.lengthscale
        };
        let kernel = Covariance::new(options.kernel, lengthscale)
            .and_then(|k| k.with_additive(options.additive))
            .and_then(|k| k.with_overlap(options.overlap))
            .map(|k| {
                k.with_overlap_dims(overlap_dims(&space, options.overlap_levels))
                    .with_overlap_rest(options.overlap_rest)
            })
            .expect("checked option");
        let params = GpParams::new(kernel, options.noise).expect("checked option");
        let (candidates, in_pool) = if space.len() > options.pool {
            let mut pool = space.sample(&mut rng, options.pool);
            pool.sort_unstable();
            let mut in_pool = vec![false; space.len()];
            pool.iter().for_each(|&p| in_pool[p] = true);
            let rows: Arc<[u32]> = pool.into_iter().map(|p| p as u32).collect();
            (Some(rows), Some(in_pool))
        } else {
            (None, None)
        };
        let surrogate = |points: &Arc<Points>| -> Box<dyn Surrogate> {
            match options.surrogate {
                SurrogateChoice::Gp => {
                    Box::new(Gp::new(params, Arc::clone(points), candidates.clone()))
                }
                SurrogateChoice::Clustered(c) => Box::new(ClusteredGp::new(
                    params,
                    Arc::clone(points),
                    candidates.clone(),
                    c,
                    seed ^ 0x9e37_79b9_7f4a_7c15,
                )),
            }
        };
        let model = surrogate(&points);
        // The second model sees the space with alignment coordinates of weight `dual` (none if
        // the space has no parameter that gets one); not with a trust region, whose box is in
        // the first model's coordinates.
        let alt = (options.dual > 0.0 && options.trust == 0.0 && options.align == 0.0)
            .then(|| {
                Arc::new(with_levels(
                    with_alignment(&space, options.dual),
                    &space,
                    options.levels,
                ))
            })
            .filter(|p| p.dims() > points.dims())
            .map(|p| (surrogate(&p), p, Guard::new(options.guard_window)));
        let feasibility = options
            .feasibility
            .then(|| Feasibility::new(params, Arc::clone(&points), candidates));
        let trust = (options.trust > 0.0).then(|| {
            TrustRegion::new(
                options.trust,
                points.dims(),
                TrustRegion::finest_spacing(&points),
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
        let guard =
            (options.guard > 0.0 || alt.is_some()).then(|| Guard::new(options.guard_window));
        Bayes {
            memo: Memo::new(space.len()),
            asked_rows: Vec::new(),
            space,
            next_fit: options.init.max(3),
            early_params: early.then_some(params),
            clip_released: false,
            options,
            rng,
            model,
            feasibility,
            points,
            trust,
            in_pool,
            init_queue,
            init_asked: 0,
            bo_started: false,
            pending: Vec::new(),
            fantasized: 0,
            queue: VecDeque::new(),
            runners_up: Vec::new(),
            rounds: VecDeque::new(),
            portfolio,
            valid: Vec::new(),
            valid_rows: Vec::new(),
            targets: Vec::new(),
            best: None,
            init_stats: None,
            init_frozen: false,
            round_count: 0,
            preds: Vec::new(),
            probs: Vec::new(),
            weights: Vec::new(),
            scratch: Vec::new(),
            guard,
            since_best: 0,
            stalled_picks: 0,
            alt,
        }
    }

    /// Picks given to the predictive check's fallback so far (`guard`): for reports and tests.
    pub fn fallback_picks(&self) -> usize {
        self.guard.as_ref().map_or(0, Guard::fallbacks)
    }

    /// Whether the model that picks now sees alignment coordinates (`align`, or `dual` once the
    /// second model has taken over).
    pub fn picks_with_alignment(&self) -> bool {
        self.points.dims() > self.space.varying_params().len()
    }

    /// The portfolio's currently active functions (`None` for a single function): for reports.
    pub fn active_functions(&self) -> Option<Vec<Acquisition>> {
        self.portfolio
            .as_ref()
            .map(|p| p.active().into_iter().map(|i| p.functions()[i]).collect())
    }

    fn target(&self, v: f64) -> f64 {
        match self.options.transform {
            Transform::None => v,
            Transform::Log => v.max(f64::MIN_POSITIVE).ln(),
        }
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
        // Failed initial configurations are replaced by random ones (paper 000, Section III-E),
        // for at most `init` more evaluations; nothing to model without a valid result.
        let filling = !self.bo_started
            && self.valid.len() + self.pending.len() < init
            && self.init_asked < 2 * init;
        if self.valid.is_empty() || filling {
            self.init_asked += 1;
            return self.memo.random_unasked(&mut self.rng);
        }
        if let Some(p) = self.queue.pop_front() {
            return Some(p);
        }
        self.bo_started = true;
        // The exploration rate (paper 004): a random configuration with probability `1 - tau`.
        let tau = self.options.exploration_rate();
        if tau < 1.0 && self.rng.random::<f64>() >= tau {
            return self.memo.random_unasked(&mut self.rng);
        }
        // The predictive check: a model that does not predict does not pick.
        if let Some(guard) = &mut self.guard
            && self.options.guard > 0.0
            && guard.distrusts(self.options.guard)
        {
            let kind = guard.next_fallback(self.options.fallback);
            return self.fallback_pick(kind);
        }
        // A stalled search: every other pick goes to the fallback.
        let stall = self.options.stall;
        if stall > 0 && self.since_best >= stall {
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

    /// Caps the models' targets at the `clip` quantile of those told so far, or at the target of
    /// `clip_ratio` times the best result, the higher of the two (options `clip`, `clip_ratio`).
    fn clip_targets(&mut self) {
        let (q, ratio) = (self.options.clip, self.options.clip_ratio);
        if (q <= 0.0 && ratio <= 0.0) || self.targets.len() < 2 || self.clip_released {
            return;
        }
        let until = self.options.clip_until;
        let seen = if until > 0 && self.memo.asked_count() >= until {
            // The caps end: the models see the targets themselves from now on.
            self.clip_released = true;
            self.targets.clone()
        } else {
            let by_ratio = match self.best {
                Some((_, b)) if ratio > 0.0 => Some(self.target(b * ratio)),
                _ => None,
            };
            let Some(capped) = capped(&self.targets, q, by_ratio) else {
                return;
            };
            capped
        };
        self.model.retarget(&seen);
        if let Some((alt, _, _)) = &mut self.alt {
            alt.retarget(&seen);
        }
    }

    /// Makes the better predicting of the two models (`dual`) the one that picks: the second
    /// takes over when its skill exceeds the first's by [`DUAL_MARGIN`], both judged on at least
    /// half their window. Both have no fantasies when this runs (at the end of a tell).
    fn choose_model(&mut self) {
        let (Some(mine), Some((_, _, theirs))) = (&self.guard, &self.alt) else {
            return;
        };
        let (Some(a), Some(b)) = (mine.skill(), theirs.skill()) else {
            return;
        };
        if theirs.judged() && b > a + DUAL_MARGIN {
            let (model, points, check) = self.alt.as_mut().expect("checked above");
            std::mem::swap(&mut self.model, model);
            std::mem::swap(&mut self.points, points);
            std::mem::swap(self.guard.as_mut().expect("checked above"), check);
        }
    }

    /// A pick without the model: a random unasked configuration, or a random unasked Hamming
    /// neighbour of the best configuration found that has one.
    fn fallback_pick(&mut self, kind: Fallback) -> Option<usize> {
        if kind == Fallback::Elite {
            let parents: Vec<Vec<u16>> = self
                .ranked_results()
                .iter()
                .take(elite::PARENTS)
                .map(|&(_, r)| self.space.indices(r))
                .collect();
            let memo = &self.memo;
            if let Some(p) =
                elite::child(&self.space, &parents, &mut self.rng, |p| memo.is_asked(p))
            {
                return Some(p);
            }
            return self.memo.random_unasked(&mut self.rng);
        }
        if kind == Fallback::Far {
            return self.far_pick();
        }
        if kind != Fallback::Random {
            let near = self.polish_candidates();
            if !near.is_empty() {
                let i = self.rng.random_range(0..near.len());
                return Some(near[i]);
            }
        }
        self.memo.random_unasked(&mut self.rng)
    }

    /// Of [`FAR_DRAWS`] random unasked configurations, the one whose nearest asked
    /// configuration differs from it in the most parameters (the first drawn on ties).
    fn far_pick(&mut self) -> Option<usize> {
        let dims = self.space.dims();
        let asked: Vec<Vec<u16>> = self
            .asked_rows
            .iter()
            .map(|&r| self.space.indices(r))
            .collect();
        let mut best: Option<(usize, usize)> = None;
        for _ in 0..FAR_DRAWS {
            let Some(p) = self.memo.random_unasked(&mut self.rng) else {
                break;
            };
            let x = self.space.indices(p);
            let nearest = asked.iter().map(|a| hamming(a, &x)).min().unwrap_or(dims);
            if best.is_none_or(|(d, _)| nearest > d) {
                best = Some((nearest, p));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Whether the next ask waits for results (see the `ramp` option): the initial sample is
    /// asked and as many configurations are outstanding as the valid results told support.
    fn waits(&self) -> bool {
        let ramp = self.options.ramp;
        ramp > 0
            && self.init_queue.is_empty()
            && !self.pending.is_empty()
            && self.pending.len() >= (self.valid.len() / ramp).max(1)
    }

    /// Conditions the model on every pending configuration with a made-up result.
    fn sync_fantasies(&mut self) {
        while self.fantasized < self.pending.len() {
            let p = self.pending[self.fantasized];
            let lie = match self.options.batch {
                BatchFill::KrigingBeliever => self.model.predict(p).mean,
                BatchFill::ConstantLiar => self.target(self.best.map_or(0.0, |(_, b)| b)),
            };
            self.model.fantasize(p, lie);
            self.fantasized += 1;
        }
    }

    /// The valid results told, `(value, position)`, best first (ties to the lower position).
    fn ranked_results(&self) -> Vec<(f64, usize)> {
        let mut found: Vec<(f64, usize)> = self
            .valid
            .iter()
            .zip(&self.valid_rows)
            .map(|(&v, &r)| (v, r))
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found
    }

    /// Positions outside the pool scored this round: the neighbours of the best results.
    fn local_candidates(&self) -> Vec<usize> {
        let Some(in_pool) = &self.in_pool else {
            return Vec::new();
        };
        let mut out: Vec<usize> = self
            .ranked_results()
            .iter()
            .take(self.options.local)
            .flat_map(|&(_, r)| {
                self.space
                    .neighbours(&self.space.indices(r), Neighbourhood::Hamming)
            })
            .filter(|&p| !in_pool[p] && !self.memo.is_asked(p))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A coverage round's candidates (`cover`): the unvisited candidates that have a value not
    /// yet asked of a parameter of at most [`MAX_LEVELS`] values (a value drawn at random among
    /// those), ascending; `None` once every such value has been asked or has no candidate left.
    fn coverage_candidates(&mut self) -> Option<Vec<usize>> {
        let params: Vec<(usize, usize)> = self
            .space
            .varying_params()
            .into_iter()
            .map(|p| (p, self.space.params()[p].values().len()))
            .filter(|&(_, n)| n <= MAX_LEVELS)
            .collect();
        let mut open: Vec<(usize, u16)> = Vec::new();
        for &(p, n) in &params {
            let mut seen = vec![false; n];
            for &r in &self.asked_rows {
                seen[usize::from(self.space.index_at(r, p))] = true;
            }
            let present = &self.space.marginals()[p];
            open.extend(
                (0..n)
                    .filter(|&v| !seen[v] && present[v])
                    .map(|v| (p, v as u16)),
            );
        }
        while !open.is_empty() {
            let (p, v) = open.swap_remove(self.rng.random_range(0..open.len()));
            let only: Vec<usize> = self
                .model
                .candidates()
                .iter()
                .map(|&r| r as usize)
                .filter(|&r| self.space.index_at(r, p) == v && !self.memo.is_asked(r))
                .collect();
            if !only.is_empty() {
                return Some(only);
            }
        }
        None
    }

    /// The unvisited Hamming neighbours of the best valid configuration that has any, ascending.
    fn polish_candidates(&self) -> Vec<usize> {
        self.ranked_results()
            .iter()
            .map(|&(_, r)| {
                let mut n = self
                    .space
                    .neighbours(&self.space.indices(r), Neighbourhood::Hamming);
                n.retain(|&p| !self.memo.is_asked(p));
                n
            })
            .find(|n| !n.is_empty())
            .unwrap_or_default()
    }

    /// The number of unvisited candidates a round scores while the picking model is on trial
    /// (`trial_scope`, until its predictive check has judged it); `None`: all of them.
    fn trial_scope(&self) -> Option<usize> {
        let m = self.options.trial_scope;
        let on_trial = self.guard.as_ref().is_none_or(|g| !g.judged());
        (m > 0 && on_trial).then_some(m)
    }

    /// Predicts every candidate, scores them and queues the round's picks.
    fn new_round(&mut self) {
        self.sync_fantasies();
        self.round_count += 1;
        let polish = self.options.polish;
        // A polishing round: only the neighbours of the best configuration found compete.
        let cover = self.options.cover;
        let only: Option<Vec<usize>> = if cover > 0 && self.round_count.is_multiple_of(cover) {
            self.coverage_candidates()
        } else {
            None
        };
        let only = only.or_else(|| {
            (polish > 0 && self.round_count.is_multiple_of(polish))
                .then(|| self.polish_candidates())
                .filter(|n| !n.is_empty())
        });
        let cand: Vec<u32> = self.model.candidates().to_vec();
        let nc = cand.len();
        self.preds.resize(nc, Prediction::default());
        self.model.predict_candidates(&mut self.preds);
        self.probs.resize(nc, 1.0);
        match &self.feasibility {
            Some(f) => f.candidate_probabilities(&mut self.scratch, &mut self.probs),
            None => self.probs.iter_mut().for_each(|p| *p = 1.0),
        }
        self.weights.resize(nc, 1.0);
        if !self.model.candidate_weights(&mut self.weights) {
            self.weights.iter_mut().for_each(|w| *w = 1.0);
        }
        let mut extra = self.local_candidates();
        if let (Some(in_pool), Some(only)) = (&self.in_pool, &only) {
            extra.extend(only.iter().filter(|&&p| !in_pool[p]));
            extra.sort_unstable();
            extra.dedup();
        }
        let extra_scored: Vec<(usize, Prediction, f64, f64)> = extra
            .par_iter()
            .map(|&r| {
                let p = self.feasibility.as_ref().map_or(1.0, |f| f.probability(r));
                (r, self.model.predict(r), p, self.model.weight(r))
            })
            .collect();
        let total = nc + extra_scored.len();
        // The candidates asked so far (candidates are ascending rows), so that the loops below
        // read one flag per candidate in order rather than the memo of the whole space.
        debug_assert!(cand.windows(2).all(|w| w[0] < w[1]), "ascending candidates");
        let mut cand_asked = vec![false; nc];
        for &r in &self.asked_rows {
            if let Ok(i) = cand.binary_search(&(r as u32)) {
                cand_asked[i] = true;
            }
        }
        let (preds, probs, weights, memo) = (&self.preds, &self.probs, &self.weights, &self.memo);
        let asked = |i: usize, r: usize| {
            if i < nc {
                cand_asked[i]
            } else {
                memo.is_asked(r)
            }
        };
        // Row, prediction, probability of validity, surrogate weight.
        let at = |i: usize| -> (usize, Prediction, f64, f64) {
            if i < nc {
                (cand[i] as usize, preds[i], probs[i], weights[i])
            } else {
                extra_scored[i - nc]
            }
        };
        let chunks = total.div_ceil(CHUNK);

        // Mean posterior deviation over the unvisited candidates (contextual variance).
        let (sum_std, count) = (0..chunks)
            .into_par_iter()
            .map(|ci| {
                let mut acc = (0.0, 0usize);
                for i in ci * CHUNK..total.min((ci + 1) * CHUNK) {
                    let (r, pred, _, _) = at(i);
                    if !asked(i, r) {
                        acc.0 += pred.std();
                        acc.1 += 1;
                    }
                }
                acc
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        if count == 0 {
            return;
        }
        let mean_std = sum_std / count as f64;
        // The reference of the contextual variance: the statistics of the first round (with
        // `cv_ref`, of every round until one sees that many valid results).
        let (init_mean, init_std) = match self.init_stats {
            Some(stats) if self.init_frozen => stats,
            _ => {
                self.init_frozen = self.options.cv_ref.is_none_or(|r| self.valid.len() >= r);
                *self.init_stats.insert((
                    self.valid.iter().sum::<f64>() / self.valid.len() as f64,
                    mean_std,
                ))
            }
        };
        let best_raw = self.best.map_or(0.0, |(_, b)| b);
        let lambda = match self.options.exploration {
            Exploration::ContextualVariance(scale) => {
                scale * contextual_variance(mean_std, init_std, init_mean, best_raw)
            }
            Exploration::Constant(c) => c,
        };
        let (m, s) = standardization(&self.targets);
        let f_best = (self.target(best_raw) - m) / s;

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
        // The trust region's box (not in polishing rounds): its centre and the region.
        let centre: Option<Vec<f64>> = match (&self.trust, &only, self.best) {
            (Some(_), None, Some((b, _))) => Some(self.points.row(b).to_vec()),
            _ => None,
        };
        let points = &self.points;
        // The round's scope (`trial_scope`, polishing rounds excepted): the share of the
        // unvisited candidates that compete, drawn per row by a seeded hash.
        let share = match (self.trial_scope(), &only) {
            (Some(m), None) if m < count => m as f64 / count as f64,
            _ => 1.0,
        };
        let salt: u64 = if share < 1.0 { self.rng.random() } else { 0 };
        let in_scope = |r: usize| share >= 1.0 || unit_hash(salt, r as u64) < share;
        // The `k` best candidates of every function among those valid with probability at least
        // `min_p` (inside the trust region if `region`, within the round's scope if `scoped`).
        let scan = |min_p: f64,
                    region: Option<(&[f64], &TrustRegion)>,
                    scoped: bool|
         -> Vec<Vec<Vec<(f64, usize)>>> {
            (0..chunks)
                .into_par_iter()
                .map(|ci| {
                    let mut tops = vec![Vec::with_capacity(keep + 1); k];
                    for i in ci * CHUNK..total.min((ci + 1) * CHUNK) {
                        let (r, pred, p, w) = at(i);
                        let excluded = only.as_ref().is_some_and(|o| o.binary_search(&r).is_err())
                            || region.is_some_and(|(c, t)| !t.contains(c, points.row(r)))
                            || (scoped && !in_scope(r));
                        if p < min_p || excluded || asked(i, r) {
                            continue;
                        }
                        let (mu, sd) = ((pred.mean - m) / s, pred.std() / s);
                        for (top, a) in tops.iter_mut().zip(&functions) {
                            let score = a.weighted_score(mu, sd, f_best, lambda, p * w);
                            insert_top(top, keep, score, r);
                        }
                    }
                    tops
                })
                .collect()
        };
        let empty = |tops: &Vec<Vec<Vec<(f64, usize)>>>| {
            tops.iter().all(|chunk| chunk.iter().all(Vec::is_empty))
        };
        let mut tops = Vec::new();
        if let (Some(c), Some(t)) = (&centre, &self.trust) {
            tops = scan(self.options.min_feasibility, Some((c, t)), true);
        }
        if empty(&tops) {
            if centre.is_some() {
                // Nothing likely valid left in the region: start it afresh, search globally.
                self.trust.as_mut().expect("trust region").restart();
            }
            tops = scan(self.options.min_feasibility, None, true);
        }
        if empty(&tops) && share < 1.0 {
            tops = scan(self.options.min_feasibility, None, false);
        }
        if empty(&tops) {
            tops = scan(0.0, None, false);
        }
        let mut merged = vec![Vec::with_capacity(keep + 1); k];
        for chunk in tops {
            for (m, t) in merged.iter_mut().zip(chunk) {
                for (score, r) in t {
                    insert_top(m, keep, score, r);
                }
            }
        }
        // Each list is in a total order (score, then row), so its first `k` are the `k` best
        // whatever it keeps beyond them: the picks below are those of lists of `k`; the rest
        // are the runners-up, a hint only.
        let tails: Vec<Vec<(f64, usize)>> = merged
            .iter_mut()
            .map(|m| m.split_off(k.min(m.len())))
            .collect();
        self.runners_up.clear();
        for i in 0..RUNNERS_UP {
            for t in &tails {
                if let Some(&(_, r)) = t.get(i)
                    && self.runners_up.len() < RUNNERS_UP
                    && !self.runners_up.contains(&r)
                {
                    self.runners_up.push(r);
                }
            }
        }

        let multi = matches!(
            self.portfolio.as_ref().map(Portfolio::kind),
            Some(PortfolioKind::Multi)
        );
        let mut picks: Vec<Pick> = Vec::with_capacity(k);
        for (f, top) in active.iter().zip(&merged) {
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
                PortfolioKind::Multi => self.init_stats.map_or(0.0, |(m, _)| m),
                PortfolioKind::AdvancedMulti => median(&self.valid),
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

/// The coordinates the overlap part compares: those of the varying parameters of at most
/// `levels` values (every coordinate if `levels` is 0).
fn overlap_dims(space: &Space, levels: usize) -> u64 {
    if levels == 0 {
        return u64::MAX;
    }
    space
        .varying_params()
        .into_iter()
        .enumerate()
        .filter(|&(j, p)| j < 64 && space.params()[p].values().len() <= levels)
        .fold(0, |m, (j, _)| m | 1 << j)
}

/// A hash of `(salt, row)` uniform in `[0, 1)`.
fn unit_hash(salt: u64, row: u64) -> f64 {
    unit_of(mix64(salt ^ row.wrapping_mul(GOLDEN)))
}

/// How many candidates beyond its picks a round remembers as likely next picks
/// ([`Strategy::upcoming`]): enough to keep a pool of 16 compiling threads busy.
const RUNNERS_UP: usize = 16;

/// The random draws a `far` fallback pick chooses among.
const FAR_DRAWS: usize = 16;

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

/// `targets` capped at their `q`-quantile (if `q > 0`) or at `ratio_cap`, the higher of the two;
/// `None` when neither applies.
fn capped(targets: &[f64], q: f64, ratio_cap: Option<f64>) -> Option<Vec<f64>> {
    let by_quantile = (q > 0.0 && !targets.is_empty()).then(|| {
        let mut sorted = targets.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        sorted[((sorted.len() - 1) as f64 * q).round() as usize]
    });
    let cap = by_quantile.into_iter().chain(ratio_cap).reduce(f64::max)?;
    Some(targets.iter().map(|&y| y.min(cap)).collect())
}

fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
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
        self.model.clear_fantasies();
        if let Some((alt, _, _)) = &mut self.alt {
            alt.clear_fantasies();
        }
        self.fantasized = 0;
        for t in trials {
            if !self.memo.is_asked(t.position) {
                self.asked_rows.push(t.position);
            }
            self.memo.record(t);
            if let Some(i) = self.pending.iter().position(|&p| p == t.position) {
                self.pending.remove(i);
            }
            let value = t.outcome.value().filter(|v| v.is_finite());
            if let Some(trust) = &mut self.trust
                && self.bo_started
            {
                trust.record(value.is_some_and(|v| self.best.is_none_or(|(_, b)| v < b)));
            }
            match value {
                Some(v) => {
                    let y = self.target(v);
                    if let Some(guard) = &mut self.guard
                        && self.bo_started
                    {
                        guard.record(self.model.predict(t.position).mean, y, &self.targets);
                    }
                    self.model.observe(t.position, y);
                    if let Some((alt, _, check)) = &mut self.alt {
                        if self.bo_started {
                            check.record(alt.predict(t.position).mean, y, &self.targets);
                        }
                        alt.observe(t.position, y);
                    }
                    self.targets.push(y);
                    self.valid.push(v);
                    self.valid_rows.push(t.position);
                    if self.best.is_none_or(|(_, b)| v < b) {
                        self.best = Some((t.position, v));
                        self.since_best = 0;
                    } else {
                        self.since_best += 1;
                    }
                    if let Some(f) = &mut self.feasibility {
                        f.observe(t.position, true);
                    }
                }
                None => {
                    if let Some(f) = &mut self.feasibility {
                        f.observe(t.position, false);
                    }
                }
            }
        }
        self.clip_targets();
        // Valid results told before anything was asked (a warm start, a baseline) count toward
        // the initial sample: the design only fills what they leave, keeping at least one
        // configuration of its own, so the model never knows only the neighbourhood of
        // configurations that were fast elsewhere.
        if !self.bo_started && self.init_asked == 0 && self.pending.is_empty() {
            let left = self.options.init.saturating_sub(self.valid.len()).max(1);
            self.init_queue.truncate(left);
        }
        self.finish_rounds();
        self.choose_model();
        if let Some(early) = self.early_params
            && self.memo.asked_count() >= self.options.early
        {
            let kernel = early
                .kernel
                .with_lengthscale(self.options.lengthscale)
                .and_then(|k| k.with_overlap(0.0))
                .expect("checked option");
            self.model.set_params(GpParams { kernel, ..early });
            if let Some((alt, _, _)) = &mut self.alt {
                alt.set_params(GpParams { kernel, ..early });
            }
            self.early_params = None;
        }
        if self.options.fit && self.valid.len() >= self.next_fit {
            self.model.fit_hyperparameters();
            if let Some((alt, _, _)) = &mut self.alt {
                alt.fit_hyperparameters();
            }
            self.next_fit = 2 * self.valid.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::SpaceBuilder;
    use crate::strategy::{self, Outcome, StrategySpec, drive};
    use std::collections::HashSet;
    use std::sync::Arc;

    fn space() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("a", 0..24)
                .param("b", 0..24)
                .param("c", [1, 2, 4, 8])
                .constraint("a + b <= 40")
                .build()
                .unwrap(),
        )
    }

    use super::Space;

    /// A bowl with a hidden constraint: `a * c > 60` fails.
    fn objective(space: &Space, p: usize) -> Outcome {
        let i = space.indices(p);
        let (a, b, c) = (f64::from(i[0]), f64::from(i[1]), f64::from(i[2]));
        if a * (c + 1.0) > 60.0 {
            return Outcome::Failed;
        }
        Outcome::Value(1.0 + (a - 9.0).powi(2) + (b - 15.0).powi(2) + 3.0 * c)
    }

    #[test]
    fn every_option_keeps_the_contract_and_is_deterministic() {
        let space = space();
        for spec in [
            "bayes",
            "bayes:acq=multi",
            "bayes:acq=ei:batch=cl",
            "bayes:acq=pi:pool=100:local=2:feas_min=0.9",
            "bayes:polish=2:pool=100",
            "bayes:acq=lcb:feasibility=false:transform=log",
            "bayes:fit=true:kernel=rbf:explore=0.1",
            "bayes:kernel=matern52:lengthscale=0.5:explore=cv*0.5:init=5",
            "bayes:acq=advanced_multi:pool=200:skip=2:discount=0.9:improvement=0.05",
            "bayes:surrogate=cgp",
            "bayes:surrogate=cgp:acq=ei:clusters=auto:pool=150:boundary=1",
            "bayes:clusters=2:xi=2:min_cluster=5:knn=5:tau=0.5:batch=cl",
            "bayes:design=stratified:trust=0.3",
            "bayes:design=random:trust=0.1:pool=100:polish=0",
            "bayes:design=maximin:trust=1",
            "bayes:additive=0.5:fit=true:design=stratified",
            "bayes:init=2:early_lengthscale=3:early=20",
            "bayes:surrogate=cgp:early_lengthscale=2:early=30:pool=150",
            "bayes:init=2:cv_ref=5:batch=cl",
            "bayes:guard=0.7:fallback=mixed:guard_window=4",
            "bayes:guard=0.9:fallback=local:pool=100",
            "bayes:align=0.5:batch=cl",
            "bayes:dual=1:guard=0.6",
            "bayes:dual=0.5:pool=100:fit=true",
            "bayes:stall=5:guard=0.55:dual=1",
            "bayes:stall=3:fallback=mixed:batch=cl",
            "bayes:stall=2:fallback=far:guard=0.8",
            "bayes:dual=1:guard=0.55:trial_scope=16",
            "bayes:cover=2:levels=0.5:guard=0.99:fallback=elite:pool=100",
            "bayes:trial_scope=4:batch=cl:pool=100",
            "bayes:clip=0.5:dual=1:guard=0.55",
            "bayes:clip=0.3:surrogate=cgp:pool=100",
            "bayes:clip_ratio=2:clip=0.5",
            "bayes:clip_ratio=1.5:clip=0.5:clip_until=30:dual=1",
        ] {
            let spec: StrategySpec = spec.parse().unwrap();
            for batch in [1, 3] {
                let run = |seed| {
                    let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                    drive(s.as_mut(), 90, batch, |p| objective(&space, p)).trials
                };
                let a = run(5);
                assert_eq!(a.len(), 90, "{spec}");
                let distinct: HashSet<usize> = a.iter().map(|t| t.position).collect();
                assert_eq!(distinct.len(), 90, "{spec}");
                assert_eq!(a, run(5), "{spec} is not deterministic");
            }
        }
    }

    #[test]
    fn results_told_before_the_first_ask_count_toward_the_initial_sample() {
        use super::{Bayes, BayesOptions};
        use crate::strategy::{Strategy, Trial};
        let space = space();
        // Valid results of positions spread over the space, none of them asked.
        let valid: Vec<Trial> = (0..space.len())
            .step_by(37)
            .map(|position| Trial {
                position,
                outcome: objective(&space, position),
            })
            .filter(|t| t.outcome.value().is_some())
            .take(5)
            .collect();
        let bayes = || {
            let options = "bayes:init=5"
                .parse::<StrategySpec>()
                .unwrap()
                .apply(BayesOptions::default())
                .unwrap();
            Bayes::new(Arc::clone(&space), options, 7)
        };
        // Two told first: the design of five asks three.
        let mut two = bayes();
        two.tell(&valid[..2]);
        assert_eq!(two.init_queue.len(), 3);
        // Five: one design point, then the model, never one of the told positions.
        let mut five = bayes();
        five.tell(&valid);
        assert_eq!(five.init_queue.len(), 1);
        let asked = five.ask(2);
        assert!(five.bo_started);
        assert!(asked.len() == 2 && valid.iter().all(|t| !asked.contains(&t.position)));
        // Told after the first ask (an ensemble's shared results): the design stays whole.
        let mut late = bayes();
        assert_eq!(late.ask(1).len(), 1);
        late.tell(&valid);
        assert_eq!(late.init_queue.len(), 4);
    }

    #[test]
    fn clipping_caps_the_targets_the_models_see() {
        use super::{Bayes, BayesOptions, capped};
        use crate::strategy::{Strategy, Trial};
        let ln = |v: f64| v.ln();
        let targets: Vec<f64> = (1..=9).map(|v| ln(f64::from(v))).collect();
        assert_eq!(capped(&targets, 0.0, None), None);
        let at = |cap: f64| targets.iter().map(|&y| y.min(cap)).collect::<Vec<_>>();
        assert_eq!(capped(&targets, 0.5, None), Some(at(ln(5.0))));
        assert_eq!(capped(&targets, 0.0, Some(ln(1.5))), Some(at(ln(1.5))));
        // Both: the higher cap holds.
        assert_eq!(capped(&targets, 0.5, Some(ln(1.5))), Some(at(ln(5.0))));
        assert_eq!(capped(&targets, 0.25, Some(ln(7.0))), Some(at(ln(7.0))));

        // In the strategy, both models are conditioned on the capped targets: run times
        // 1, 2, ..., 9 told at once, a cap of 1.5 times the best; with the default nugget the
        // models interpolate what they were told.
        let space = space();
        let trials: Vec<Trial> = (0..9)
            .map(|i| Trial {
                position: i * 41,
                outcome: Outcome::Value(f64::from(i as u8 + 1)),
            })
            .collect();
        let bayes = |spec: &str| {
            let options = spec.parse::<StrategySpec>().unwrap();
            Bayes::new(
                Arc::clone(&space),
                options.apply(BayesOptions::default()).unwrap(),
                1,
            )
        };
        // Both models predict `expected(i)` at the `i`-th result's position.
        let both_predict = |b: &Bayes, expected: &dyn Fn(f64) -> f64| {
            let (alt, _, _) = b.alt.as_ref().expect("dual=1 keeps a second model");
            for (i, t) in trials.iter().enumerate() {
                let expected = expected(i as f64 + 1.0);
                for model in [&b.model, alt] {
                    let mean = model.predict(t.position).mean;
                    assert!((mean - expected).abs() < 1e-3, "{i}: {mean} vs {expected}");
                }
            }
        };
        let mut b = bayes("bayes:clip_ratio=1.5:dual=1");
        b.tell(&trials);
        both_predict(&b, &|v| ln(v.min(1.5)));
        // What the strategy reports is unchanged: the best is the fastest result.
        assert_eq!(b.best.map(|(_, v)| v), Some(1.0));
        // With `clip_until=9`, the ninth result ends the caps: the models see the run times' logs.
        let mut b = bayes("bayes:clip_ratio=1.5:dual=1:clip_until=9");
        b.tell(&trials[..8]);
        let capped_mean = b.model.predict(trials[7].position).mean;
        assert!((capped_mean - ln(1.5)).abs() < 1e-3, "{capped_mean}");
        b.ask(1);
        b.tell(&trials[8..]);
        both_predict(&b, &ln);
    }

    #[test]
    fn the_predictive_check_hands_picks_to_the_fallback() {
        let space = space();
        let run = |spec: &str| {
            let options = spec.parse::<StrategySpec>().unwrap();
            let options = options.apply(super::BayesOptions::default()).unwrap();
            let mut s = super::Bayes::new(Arc::clone(&space), options, 3);
            drive(&mut s, 60, 1, |p| objective(&space, p));
            s.fallback_picks()
        };
        assert_eq!(run("bayes"), 0);
        // No model ranks 99% of pairs right: once judged (5 results), every pick falls back.
        let distrusted = run("bayes:guard=0.99:guard_window=10");
        assert!(distrusted >= 40, "{distrusted} fallback picks");
        // The bowl is easy to predict: a modest threshold rarely distrusts the model.
        let trusted = run("bayes:guard=0.5");
        assert!(trusted < distrusted / 4, "{trusted} fallback picks");
    }

    #[test]
    fn far_fallback_picks_keep_off_the_asked_neighbourhoods() {
        // Four parameters of four values; every configuration of values 0 and 1 only is asked,
        // so an unasked configuration's nearest asked one differs in its count of values 2 and 3.
        let space = Arc::new(
            (0..4)
                .fold(SpaceBuilder::new(), |b, k| b.param(format!("p{k}"), 0..4))
                .build()
                .unwrap(),
        );
        let options = "bayes:fallback=far".parse::<StrategySpec>().unwrap();
        let options = options.apply(super::BayesOptions::default()).unwrap();
        let mut s = super::Bayes::new(Arc::clone(&space), options, 5);
        for p in 0..space.len() {
            if space.indices(p).iter().all(|&i| i < 2) {
                s.memo.mark_asked(p);
                s.asked_rows.push(p);
            }
        }
        let distance = |p: usize| space.indices(p).iter().filter(|&&i| i >= 2).count();
        let picks = 200;
        let mean = |total: usize| total as f64 / f64::from(picks);
        let far: usize = (0..picks).map(|_| distance(s.far_pick().unwrap())).sum();
        let random: usize = (0..picks)
            .map(|_| distance(s.memo.random_unasked(&mut s.rng).unwrap()))
            .sum();
        // Random unasked picks average 32/15 (about 2.1); the best of 16 draws nearly always 3 or 4.
        assert!(mean(far) > 3.0, "far picks: mean distance {}", mean(far));
        assert!(
            mean(random) < 2.5,
            "random picks: mean distance {}",
            mean(random)
        );
    }

    #[test]
    fn coverage_rounds_try_every_level_a_trend_points_away_from() {
        // An unroll factor whose 0 is a code path of its own and the fastest; among the other
        // values more unrolling is faster, so a smooth model fitted to them points away from 0.
        let space = Arc::new(
            SpaceBuilder::new()
                .param("unroll", [0i64, 1, 2, 4, 8, 16])
                .param("x", 0..12)
                .param("y", 0..12)
                .build()
                .unwrap(),
        );
        let f = |p: usize| {
            let i = space.indices(p);
            let x = (f64::from(i[1]) - 6.0).powi(2) + (f64::from(i[2]) - 6.0).powi(2);
            let u = if i[0] == 0 {
                0.0
            } else {
                40.0 - 5.0 * f64::from(i[0])
            };
            Outcome::Value(1.0 + u + x)
        };
        let first_zero = |spec: &str, seed: u64| -> Option<usize> {
            let options: StrategySpec = spec.parse().unwrap();
            let options = options.apply(super::BayesOptions::default()).unwrap();
            let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
            let rec = drive(&mut s, 20, 1, f);
            rec.trials
                .iter()
                .position(|t| space.indices(t.position)[0] == 0)
        };
        // Each unroll value is 1/6 of the space: random picks miss 0 in 3 draws about 58% of
        // the time. With `cover=1` every round after the initial sample tries an untried value
        // until all six are tried: 0 by the 3 + 5 = 8th evaluation, in every run.
        for seed in 1..=10 {
            let covered = first_zero("bayes:init=3:design=random:cover=1:polish=0", seed);
            assert!(covered.is_some_and(|k| k < 8), "seed {seed}: {covered:?}");
        }
        let plain: Vec<Option<usize>> = (1..=10)
            .map(|seed| first_zero("bayes:init=3:design=random:polish=0", seed))
            .collect();
        assert!(
            plain.iter().any(|k| k.is_none_or(|k| k >= 8)),
            "without coverage some run tries 0 late or never: {plain:?}"
        );
    }

    #[test]
    fn a_model_on_trial_picks_among_a_random_few_not_where_its_variance_points() {
        let space = space();
        let valid: Vec<f64> = (0..space.len())
            .filter_map(|p| objective(&space, p).value())
            .collect();
        let typical = valid.iter().sum::<f64>() / valid.len() as f64;
        // A model that only explores (a huge exploration factor) sends its first picks to
        // where it knows least: the corners of the space, far slower than typical here. While
        // it is on trial (its first 5 checked results) `trial_scope` makes each pick its best
        // of a few random configurations instead.
        let trial_picks = |spec: &str| -> f64 {
            let mut sum = 0.0;
            let mut n = 0;
            for seed in 1..=8 {
                let options: StrategySpec = spec.parse().unwrap();
                let options = options.apply(super::BayesOptions::default()).unwrap();
                let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
                let rec = drive(&mut s, 10, 1, |p| objective(&space, p));
                for t in &rec.trials[5..] {
                    if let Some(v) = objective(&space, t.position).value() {
                        sum += v;
                        n += 1;
                    }
                }
            }
            sum / n as f64
        };
        let free = trial_picks("bayes:explore=1000:guard=0.55:polish=0");
        let scoped = trial_picks("bayes:explore=1000:guard=0.55:polish=0:trial_scope=4");
        println!("free {free}, scoped {scoped}, typical {typical}");
        assert!(free > 1.5 * typical, "free {free} vs typical {typical}");
        assert!(
            scoped < 1.25 * typical,
            "scoped {scoped} vs typical {typical}"
        );
    }

    #[test]
    fn the_second_model_takes_over_where_alignment_decides() {
        let space = space();
        // Fast only where a is a multiple of 4: periodic in a's value, noise to a smooth model.
        let periodic = |p: usize| {
            let i = space.indices(p);
            let aligned = i[0].is_multiple_of(4);
            Outcome::Value(1.0 + if aligned { 0.0 } else { 1.0 } + 0.01 * f64::from(i[1]))
        };
        let bowl = |p: usize| objective(&space, p);
        let takes_over = |f: &dyn Fn(usize) -> Outcome| {
            (1..=5)
                .filter(|&seed| {
                    let options: StrategySpec = "bayes:dual=1".parse().unwrap();
                    let options = options.apply(super::BayesOptions::default()).unwrap();
                    let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
                    drive(&mut s, 60, 1, f);
                    s.picks_with_alignment()
                })
                .count()
        };
        assert!(takes_over(&periodic) >= 4, "aligned model kept out");
        assert!(
            takes_over(&bowl) <= 3,
            "aligned model took over a smooth bowl"
        );
    }

    #[test]
    fn clustered_gp_with_one_cluster_is_plain_bo() {
        let space = space();
        for (gp, cgp) in [
            ("bayes", "bayes:surrogate=cgp:clusters=1:tau=1"),
            (
                "bayes:acq=ei:batch=cl",
                "bayes:acq=ei:batch=cl:clusters=1:tau=1",
            ),
        ] {
            for batch in [1, 4] {
                let run = |spec: &str| {
                    let spec: StrategySpec = spec.parse().unwrap();
                    let mut s = strategy::build(&spec, Arc::clone(&space), 11).unwrap();
                    drive(s.as_mut(), 80, batch, |p| objective(&space, p)).trials
                };
                assert_eq!(run(gp), run(cgp), "{cgp}, batch {batch}");
            }
        }
    }

    #[test]
    fn polishing_rounds_ask_neighbours_of_the_best() {
        use crate::space::Neighbourhood;
        let space = space();
        // With `polish=1` every round after the initial sample (at most 2 * init asks) polishes:
        // it asks a Hamming neighbour of the best result that still has unasked neighbours.
        for spec in ["bayes:polish=1:init=10", "bayes:polish=1:init=10:pool=100"] {
            let mut s = strategy::build(&spec.parse().unwrap(), Arc::clone(&space), 7).unwrap();
            let mut found: Vec<(f64, usize)> = Vec::new();
            let mut asked = HashSet::new();
            for i in 0..80 {
                let p = s.ask(1)[0];
                if i >= 20 {
                    found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    let expected = found
                        .iter()
                        .map(|&(_, r)| {
                            let mut n = space.neighbours(&space.indices(r), Neighbourhood::Hamming);
                            n.retain(|q| !asked.contains(q));
                            n
                        })
                        .find(|n| !n.is_empty())
                        .unwrap();
                    assert!(
                        expected.contains(&p),
                        "{spec}: ask {i} ({p}) is not polishing"
                    );
                }
                asked.insert(p);
                let outcome = objective(&space, p);
                if let Some(v) = outcome.value() {
                    found.push((v, p));
                }
                s.tell(&[crate::strategy::Trial {
                    position: p,
                    outcome,
                }]);
            }
        }
    }

    #[test]
    fn asks_before_tells_and_exhaustion() {
        // Asking again before telling (an asynchronous tuner) conditions on fantasies; a run can
        // spend the whole space.
        let space = space();
        let mut s = strategy::build(
            &"bayes:init=4:ramp=0".parse().unwrap(),
            Arc::clone(&space),
            3,
        )
        .unwrap();
        let mut seen = HashSet::new();
        let mut pending = Vec::new();
        while seen.len() < space.len() {
            let asked = s.ask(7);
            assert!(!asked.is_empty());
            for p in asked {
                assert!(seen.insert(p));
                pending.push(p);
            }
            // Tell all but the two most recent.
            let keep = pending.split_off(pending.len().saturating_sub(2));
            let trials: Vec<_> = pending
                .drain(..)
                .map(|p| crate::strategy::Trial {
                    position: p,
                    outcome: objective(&space, p),
                })
                .collect();
            s.tell(&trials);
            pending = keep;
        }
        assert!(s.ask(1).is_empty());
    }

    #[test]
    fn ramp_keeps_as_many_outstanding_as_the_results_support() {
        // `ramp=2`: after the initial sample of 4, at most max(1, valid / 2) outstanding; never
        // an empty answer when nothing is outstanding; asking one at a time is unchanged.
        let space = space();
        let spec = |s: &str| s.parse::<StrategySpec>().unwrap();
        let mut s = strategy::build(&spec("bayes:init=4:ramp=2"), Arc::clone(&space), 5).unwrap();
        let tell = |s: &mut Box<dyn crate::strategy::Strategy>, asked: &[usize]| {
            let trials: Vec<_> = asked
                .iter()
                .map(|&p| crate::strategy::Trial {
                    position: p,
                    outcome: objective(&space, p),
                })
                .collect();
            s.tell(&trials);
        };
        let first = s.ask(8);
        assert_eq!(first.len(), 4, "the initial sample, then a wait");
        assert!(s.ask(8).is_empty(), "waits while the initial sample is out");
        tell(&mut s, &first);
        let valid = first
            .iter()
            .filter(|&&p| objective(&space, p) != Outcome::Failed)
            .count();
        let second = s.ask(8);
        assert_eq!(second.len(), (valid / 2).max(1));
        tell(&mut s, &second);
        let mut sizes = Vec::new();
        for _ in 0..12 {
            let asked = s.ask(8);
            assert!(!asked.is_empty());
            sizes.push(asked.len());
            tell(&mut s, &asked);
        }
        assert_eq!(
            sizes.last(),
            Some(&8),
            "the batch grows to the full ask: {sizes:?}"
        );
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");
        let run = |spec_text: &str| {
            let mut s = strategy::build(&spec(spec_text), Arc::clone(&space), 9).unwrap();
            drive(s.as_mut(), 60, 1, |p| objective(&space, p)).trials
        };
        assert_eq!(run("bayes:init=4"), run("bayes:init=4:ramp=0"));
    }

    #[test]
    fn feasibility_model_avoids_failures() {
        let space = space();
        let failed = |spec: &str| {
            let spec: StrategySpec = spec.parse().unwrap();
            (1..=4)
                .map(|seed| {
                    let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                    let run = drive(s.as_mut(), 120, 1, |p| objective(&space, p));
                    run.trials
                        .iter()
                        .filter(|t| t.outcome == Outcome::Failed)
                        .count()
                })
                .sum::<usize>()
        };
        let (threshold, weighed, without) = (
            failed("bayes:feas_min=0.5"),
            failed("bayes:feas_min=0"),
            failed("bayes:feasibility=false"),
        );
        assert!(
            threshold < weighed && weighed < without,
            "{threshold} failures with the model and feas_min=0.5, {weighed} with the model only, \
             {without} without"
        );
    }
}
