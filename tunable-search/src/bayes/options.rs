//! # Options of the `bayes` strategy
//!
//! Parsed from `bayes[:key=value]...`; every value is checked here, so an invalid setting never
//! reaches the model. Each option is declared once (field, default, doc, key and parser; see
//! `strategy/options.rs`); how the defaults were chosen is in the [module docs](super).

use super::{
    Acquisition, ClusterCount, ClusterOptions, CovarianceKind, Design, Fallback, PortfolioKind,
    PortfolioOptions,
};
use crate::strategy::options::{at_least, boolean, checked, choice, declare_options, probability};

/// What picks the next configuration: one acquisition function or a portfolio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquisitionChoice {
    /// One function throughout (`ei`, `pi`, `lcb`).
    Single(Acquisition),
    /// A portfolio of EI, PI and LCB (`multi`, `advanced_multi`).
    Portfolio(PortfolioKind),
}

/// The exploration factor `λ` of the acquisition functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exploration {
    /// The contextual variance of Willemsen et al.'s Bayesian optimization, recomputed every round, times a scale (`cv` is scale 1,
    /// `cv*0.5` halves it).
    ContextualVariance(f64),
    /// A constant, in standard deviations of the observed targets.
    Constant(f64),
}

/// How a batch (`ask(n)` with `n > 1`, or asks before results are told) is filled: each pick is
/// conditioned on the configurations still being evaluated, with a made-up result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchFill {
    /// Kriging believer: the made-up result is the model's mean (variances shrink, the mean
    /// stays).
    KrigingBeliever,
    /// Constant liar: the made-up result is the best value found so far (CL-min), which also
    /// pushes later picks away from earlier ones.
    ConstantLiar,
}

/// How targets are transformed before the surrogate sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// The measured values themselves (then standardized).
    None,
    /// Their natural logarithm (then standardized): run times spread over orders of magnitude,
    /// and the log keeps the slowest configurations from dominating the fit. The strategy hands
    /// it positive values (negative ones as the reciprocal of their magnitude); smaller ones
    /// count as the smallest positive double.
    Log,
}

impl Transform {
    /// The target of a value `v`.
    pub fn apply(self, v: f64) -> f64 {
        match self {
            Transform::None => v,
            Transform::Log => v.max(f64::MIN_POSITIVE).ln(),
        }
    }
}

/// The model of the objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SurrogateChoice {
    /// One Gaussian process over the whole space ([`Gp`](super::Gp)).
    Gp,
    /// The clustered GP ([`ClusteredGp`](super::ClusteredGp)).
    Clustered(ClusterOptions),
}

declare_options! {
    /// Options of [`Bayes`](super::Bayes); `Default` gives the defaults of the
    /// [module docs](super).
    #[derive(Clone, Debug, PartialEq)]
    pub struct BayesOptions {
        /// The acquisition function or portfolio: `ei`, `pi` (or `poi`), `lcb`, `multi` or
        /// `advanced_multi`.
        acquisition: AcquisitionChoice = AcquisitionChoice::Single(Acquisition::Ei),
            "acq" => choice(&[
            ("ei", AcquisitionChoice::Single(Acquisition::Ei)),
            ("pi", AcquisitionChoice::Single(Acquisition::Pi)),
            ("poi", AcquisitionChoice::Single(Acquisition::Pi)),
            ("lcb", AcquisitionChoice::Single(Acquisition::Lcb)),
            ("multi", AcquisitionChoice::Portfolio(PortfolioKind::Multi)),
            ("advanced_multi", AcquisitionChoice::Portfolio(PortfolioKind::AdvancedMulti)),
        ]);
        /// The covariance function: `matern32`, `matern52` or `rbf`.
        kernel: CovarianceKind = CovarianceKind::Matern32, "kernel" => |_: &BayesOptions, v: &str| {
            CovarianceKind::parse(v).ok_or_else(|| "expected matern32, matern52 or rbf".to_owned())
        };
        /// The covariance function's lengthscale (in normalized coordinates).
        lengthscale: f64 = 1.0, "lengthscale" => positive;
        /// The lengthscale of the first `early` evaluations (0: `lengthscale` throughout). A
        /// longer lengthscale makes a model of a few points follow the broad trend the initial
        /// sample shows rather than the differences between its points.
        early_lengthscale: f64 = 0.0, "early_lengthscale" => non_negative;
        /// The evaluations `early_lengthscale` and `overlap` apply to; afterwards the model
        /// switches to `lengthscale` and drops the overlap part (0: `overlap` throughout).
        early: usize = 50, "early" => at_least(0);
        /// The weight of the covariance's first-order additive part, in `[0, 1 - overlap]` (0:
        /// isotropic; see [`Covariance`](super::Covariance)).
        additive: f64 = 0.0, "additive" => |o: &BayesOptions, v: &str| {
            checked("a number in [0, 1 - overlap]", |x: &f64| (0.0..=1.0 - o.overlap).contains(x))(o, v)
        };
        /// The weight of the covariance's overlap part, in `[0, 1 - additive]`: the share of
        /// parameters two configurations have at the same value (each parameter's values seen
        /// as categories; see [`Covariance::with_overlap`](super::Covariance::with_overlap)),
        /// for the first `early` evaluations.
        overlap: f64 = 0.0, "overlap" => |o: &BayesOptions, v: &str| {
            checked("a number in [0, 1 - additive]", |x: &f64| (0.0..=1.0 - o.additive).contains(x))(o, v)
        };
        /// The parameters the overlap part compares: those of at most this many values (0: every
        /// coordinate, the extra ones of `align`, `dual` and `levels` included).
        overlap_levels: usize = 0, "overlap_levels" => at_least(0);
        /// Whether the overlap part also averages in the parameters it does not compare, by
        /// their one-dimensional kernel (see
        /// [`Covariance::with_overlap_rest`](super::Covariance::with_overlap_rest)).
        overlap_rest: bool = false, "overlap_rest" => boolean();
        /// The noise variance relative to the standardized signal variance, in `[1e-12, 10]`.
        noise: f64 = 1e-6,
            "noise" => checked("a number in [1e-12, 10]", |x: &f64| (1e-12..=10.0).contains(x));
        /// Re-estimate lengthscale and noise by marginal likelihood after the initial sample and
        /// whenever the number of valid observations has doubled.
        fit: bool = false, "fit" => boolean();
        /// The exploration factor of the acquisition functions: `cv` (contextual variance),
        /// `cv*SCALE`, or a constant.
        exploration: Exploration = Exploration::ContextualVariance(0.5),
            "explore" => |o: &BayesOptions, v: &str| {
            if v == "cv" {
                Ok(Exploration::ContextualVariance(1.0))
            } else if let Some(scale) = v.strip_prefix("cv*") {
                positive(o, scale).map(Exploration::ContextualVariance)
            } else {
                checked("cv, cv*SCALE or a number >= 0", |x: &f64| *x >= 0.0 && x.is_finite())(o, v)
                    .map(Exploration::Constant)
            }
        };
        /// Size of the initial sample.
        init: usize = 5, "init" => at_least(1);
        /// How the initial sample is chosen: `stratified`, `proportional`, `random` or `maximin`
        /// ([`Design`]).
        design: Design = Design::Stratified, "design" => choice(&[
            ("stratified", Design::Stratified),
            ("proportional", Design::Proportional),
            ("random", Design::Random),
            ("maximin", Design::Maximin),
        ]);
        /// The valid results the contextual variance's reference (the mean value and the mean
        /// posterior deviation it compares with) is taken with: every acquisition round until
        /// there are this many updates it (`None`: the first round's, after the initial sample,
        /// as in the paper the [module docs](super) cite).
        cv_ref: Option<usize> = None, "cv_ref" => |o: &BayesOptions, v: &str| {
            at_least(1)(o, v).map(Some)
        };
        /// Weigh the acquisition by a learnt probability of validity.
        feasibility: bool = true, "feasibility" => boolean();
        /// Candidates less likely than this to be valid are only considered when no other
        /// unvisited candidate is left (0 only weighs the acquisition); in `[0, 1)`.
        min_feasibility: f64 = 0.5,
            "feas_min" => checked("a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x));
        /// The portfolios' skip threshold.
        skip_threshold: usize = 5, "skip" => at_least(1);
        /// The portfolios' discount factor, in `(0, 1]` (`None`: Table I's for the portfolio,
        /// 0.65 for multi and 0.75 for advanced multi).
        discount: Option<f64> = None, "discount" => |o: &BayesOptions, v: &str| {
            checked("a number in (0, 1]", |x: &f64| *x > 0.0 && *x <= 1.0)(o, v).map(Some)
        };
        /// Advanced multi's required improvement factor, in `[0, 1)`.
        improvement: f64 = 0.1,
            "improvement" => checked("a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x));
        /// How a batch is filled: `kb` (kriging believer) or `cl` (constant liar).
        batch: BatchFill = BatchFill::KrigingBeliever, "batch" => choice(&[
            ("kb", BatchFill::KrigingBeliever),
            ("cl", BatchFill::ConstantLiar),
        ]);
        /// The most candidates whose predictions are kept up to date, at least 100; larger
        /// spaces score a random pool of this size plus the neighbours of the best
        /// configurations found. The strategy's time per ask grows with it (each result
        /// updates every candidate's prediction, `O(results)` each), and not with the space.
        pool: usize = 12_288, "pool" => at_least(100);
        /// In pool mode, how many of the best configurations found add their neighbours to the
        /// candidates.
        local: usize = 3, "local" => at_least(0);
        /// If `K > 0`, every `K`-th acquisition round only considers the unvisited Hamming
        /// neighbours (one parameter changed) of the best configuration found (of the next best
        /// when those are all visited), so the end of a run refines the incumbent as a local
        /// search would; 0 turns it off.
        polish: usize = 5, "polish" => at_least(0);
        /// How targets are transformed: `none` or `log` (of the run time; a run whose first
        /// valid value is negative, a maximized metric negated, is searched on the reciprocal of
        /// the values' magnitude, which orders them the same way and is positive).
        transform: Transform = Transform::Log, "transform" => choice(&[
            ("none", Transform::None),
            ("log", Transform::Log),
        ]);
        /// The initial half-width of the trust region in normalized coordinates, in `[0, 1]`
        /// ([`TrustRegion`](super::TrustRegion)); 0 turns it off.
        trust: f64 = 0.0, "trust" => probability();
        /// The model: `gp`, or `cgp`, the clustered GP, whose settings are the keys
        /// `clusters`, `xi`, `min_cluster`, `knn` and `boundary` (setting any of them selects
        /// `cgp`).
        surrogate: SurrogateChoice = SurrogateChoice::Gp,
            "surrogate" => |o: &BayesOptions, v: &str| match v {
            "gp" => Ok(SurrogateChoice::Gp),
            "cgp" => Ok(SurrogateChoice::Clustered(o.cluster_options())),
            _ => Err("expected gp or cgp".to_owned()),
        };
        /// The exploration rate, in `(0, 1]`: with probability `1 - tau` a round takes a random
        /// unvisited configuration instead of the acquisition's choice (`None`: 1 for `gp`,
        /// 0.8 for `cgp`, as the clustered GP's paper sets it).
        tau: Option<f64> = None, "tau" => |o: &BayesOptions, v: &str| {
            checked("a number in (0, 1]", |x: &f64| *x > 0.0 && *x <= 1.0)(o, v).map(Some)
        };
        /// If `R > 0`, a batch ask (or asks made before earlier results are told) keeps at most
        /// `max(1, valid / R)` configurations outstanding once the initial sample is asked, where
        /// `valid` is the number of valid results told: a young model is not asked for more
        /// guesses than it can tell apart, and the caller gets fewer positions than it asked for
        /// (at least one when none is outstanding). 0 turns it off. Asking one at a time and
        /// telling each result before the next ask is unaffected.
        ramp: usize = 2, "ramp" => at_least(0);
        /// The predictive check ([`Guard`](super::Guard)): while the mean concordance of the
        /// model's predictions with the last `guard_window` results is below this, picks go to
        /// the `fallback`; in `[0, 1)`, 0 turns the check off.
        guard: f64 = 0.0,
            "guard" => checked("a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x));
        /// The weight of the alignment coordinates ([`with_alignment`](super::with_alignment)):
        /// integer parameters not ordered by alignment get one more coordinate, their trailing
        /// zero bits, scaled to `[0, align]`; 0 turns them off.
        align: f64 = 0.0, "align" => non_negative;
        /// The weight of the level coordinates ([`with_levels`](super::with_levels)): every
        /// parameter of 3 to 8 values is also seen as a category, two of its values `levels`
        /// apart whatever their order; 0 turns them off. Both models see them.
        levels: f64 = 0.0, "levels" => non_negative;
        /// If `W > 0`, a second model is kept beside the first, with alignment coordinates of
        /// weight `W` ([`with_alignment`](super::with_alignment)), told the same results; it
        /// picks instead of the first while its predictive check ([`Guard`](super::Guard)) is
        /// better by a margin. 0 (or `align > 0`, or a trust region) turns it off.
        dual: f64 = 0.0, "dual" => non_negative;
        /// If `K > 0`, once `K` valid results in a row have not improved the best, every other
        /// pick goes to the `fallback` until one does; 0 turns it off.
        stall: usize = 0, "stall" => at_least(0);
        /// If `M > 0`, until the picking model's predictive check has judged it (half its
        /// window of results), an acquisition round scores only a uniformly random subset of
        /// about `M` unvisited candidates: the pick is the young model's best of `M` random
        /// configurations, a random pick if the model does not predict, never one of the
        /// corners an unfitted model's variance points at. Without a predictive check (neither
        /// `guard` nor `dual`) every round is scoped. 0 scores every candidate.
        trial_scope: usize = 0, "trial_scope" => at_least(0);
        /// The results the predictive check averages over, at least 2.
        guard_window: usize = 10, "guard_window" => at_least(2);
        /// If `K > 0`, every `K`-th acquisition round, while some value of a parameter of at most
        /// 8 values has not been asked, only considers the configurations with such a value (one
        /// drawn at random): the model's best guess at each untried level, so that a level a
        /// young model's trend points away from is tried once in its most promising company; 0
        /// turns it off.
        cover: usize = 0, "cover" => at_least(0);
        /// If `q > 0`, the models see every valid result's target capped at the `q`-quantile of
        /// the targets told so far (with `transform=log`: run times beyond it all look alike),
        /// so that they learn where the fast configurations lie rather than the shape of the
        /// slow bulk, whose trends may point away from them; in `[0, 1)`, 0 turns it off.
        clip: f64 = 0.0,
            "clip" => checked("a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x));
        /// If `F > 1`, the models see every valid result's target capped at that of `F` times
        /// the best result so far (a configuration `F` times slower than the best looks like any
        /// slower one); with `clip` as well, the higher of the two caps holds. 0 turns it off.
        clip_ratio: f64 = 0.0,
            "clip_ratio" => checked("0 or a number > 1", |x: &f64| *x == 0.0 || (*x > 1.0 && x.is_finite()));
        /// If `N > 0`, `clip` and `clip_ratio` hold for the first `N` evaluations only; the
        /// models then see every target uncapped. 0: throughout.
        clip_until: usize = 0, "clip_until" => at_least(0);
        /// What picks while the model does not predict: `random`, `local` (a neighbour of the
        /// best found), `mixed` (the two in turn), `elite` (a child of the best results) or
        /// `far` (of a few random configurations, the one farthest from those asked).
        fallback: Fallback = Fallback::Random, "fallback" => choice(&[
            ("random", Fallback::Random),
            ("local", Fallback::Local),
            ("mixed", Fallback::Mixed),
            ("elite", Fallback::Elite),
            ("far", Fallback::Far),
        ]);
    }
    more keys {
        /// the clustered GP's number of clusters: an integer >= 1, or `auto` (1 to 3 by BIC);
        /// default 3.
        "clusters" => |o: &mut BayesOptions, v: &str| -> Result<(), String> {
            o.clustered().count = if v == "auto" {
                ClusterCount::Auto(3)
            } else {
                let n = checked("auto or an integer >= 1", |&n: &usize| n >= 1)(&*o, v)?;
                ClusterCount::Fixed(n)
            };
            Ok(())
        };
        /// the clustered GP's weight `ξ` of the target in clustering, >= 0; default 1.
        "xi" => |o: &mut BayesOptions, v: &str| -> Result<(), String> {
            o.clustered().xi = non_negative(&*o, v)?;
            Ok(())
        };
        /// the clustered GP's smallest cluster, an integer >= 1; default 3.
        "min_cluster" => |o: &mut BayesOptions, v: &str| -> Result<(), String> {
            o.clustered().min_size = at_least(1)(&*o, v)?;
            Ok(())
        };
        /// the clustered GP's neighbours in the k-NN classification, an integer >= 1; default 3.
        "knn" => |o: &mut BayesOptions, v: &str| -> Result<(), String> {
            o.clustered().neighbours = at_least(1)(&*o, v)?;
            Ok(())
        };
        /// the clustered GP's boundary penalty `β`, >= 0; default 0.
        "boundary" => |o: &mut BayesOptions, v: &str| -> Result<(), String> {
            o.clustered().boundary = non_negative(&*o, v)?;
            Ok(())
        };
    }
}

/// A positive finite number.
fn positive(o: &BayesOptions, v: &str) -> Result<f64, String> {
    checked("a positive number", |x: &f64| *x > 0.0 && x.is_finite())(o, v)
}

/// A finite number >= 0.
fn non_negative(o: &BayesOptions, v: &str) -> Result<f64, String> {
    checked("a number >= 0", |x: &f64| *x >= 0.0 && x.is_finite())(o, v)
}

impl BayesOptions {
    /// The portfolio settings these options give for `kind`.
    pub fn portfolio(&self, kind: PortfolioKind) -> PortfolioOptions {
        let table = PortfolioOptions::table_i(kind);
        PortfolioOptions {
            skip_threshold: self.skip_threshold,
            discount: self.discount.unwrap_or(table.discount),
            improvement: self.improvement,
        }
    }

    /// The exploration rate in effect.
    pub fn exploration_rate(&self) -> f64 {
        self.tau.unwrap_or(match self.surrogate {
            SurrogateChoice::Gp => 1.0,
            SurrogateChoice::Clustered(_) => 0.8,
        })
    }

    /// The clustered GP's settings: the current ones with `cgp`, else the defaults.
    fn cluster_options(&self) -> ClusterOptions {
        match self.surrogate {
            SurrogateChoice::Clustered(c) => c,
            SurrogateChoice::Gp => ClusterOptions::default(),
        }
    }

    /// The clustered GP's settings, switching the surrogate to `cgp` if it was not.
    fn clustered(&mut self) -> &mut ClusterOptions {
        if self.surrogate == SurrogateChoice::Gp {
            self.surrogate = SurrogateChoice::Clustered(ClusterOptions::default());
        }
        match &mut self.surrogate {
            SurrogateChoice::Clustered(c) => c,
            SurrogateChoice::Gp => unreachable!("set above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{StrategyError, StrategySpec};

    fn apply(spec: &str) -> Result<BayesOptions, StrategyError> {
        spec.parse::<StrategySpec>()?.apply(BayesOptions::default())
    }

    #[test]
    fn values_are_checked() {
        let o = apply("bayes:feas_min=0.25:acq=pi:clusters=auto:tau=0.5:polish=0").unwrap();
        assert_eq!(o.min_feasibility, 0.25);
        assert_eq!(o.polish, 0);
        assert_eq!(o.acquisition, AcquisitionChoice::Single(Acquisition::Pi));
        assert!(
            matches!(o.surrogate, SurrogateChoice::Clustered(c) if c.count == ClusterCount::Auto(3))
        );
        assert_eq!(o.tau, Some(0.5));
        for bad in [
            "bayes:feas_min=1",
            "bayes:feas_min=-0.1",
            "bayes:lengthscale=0",
            "bayes:acq=ucb",
            "bayes:clusters=0",
            "bayes:tau=0",
            "bayes:noise=100",
            "bayes:transform=sqrt",
            "bayes:polish=-1",
            "bayes:init=0",
            "bayes:design=lhs",
            "bayes:trust=1.5",
            "bayes:additive=2",
            "bayes:early_lengthscale=-1",
            "bayes:cv_ref=0",
            "bayes:overlap=1.5",
            "bayes:additive=0.6:overlap=0.5",
            "bayes:overlap=0.5:additive=0.6",
            "bayes:overlap_levels=-1",
            "bayes:overlap_rest=maybe",
            "bayes:clip=1",
            "bayes:clip=-0.5",
            "bayes:clip_ratio=1",
        ] {
            match apply(bad) {
                Err(StrategyError::BadValue { key, reason, .. }) => {
                    assert!(
                        bad.contains(&key) && !reason.is_empty(),
                        "{bad}: {key} {reason}"
                    )
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        let o = apply("bayes:additive=0.2:overlap=0.8:overlap_levels=6:overlap_rest=1").unwrap();
        assert_eq!((o.additive, o.overlap, o.overlap_levels), (0.2, 0.8, 6));
        assert!(o.overlap_rest && !apply("bayes").unwrap().overlap_rest);
        assert!(matches!(
            apply("bayes:feas_minimum=0.5"),
            Err(StrategyError::UnknownOption { .. })
        ));
    }
}
