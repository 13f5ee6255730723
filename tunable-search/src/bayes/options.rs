//! # Options of the `bayes` strategy
//!
//! Parsed from `bayes[:key=value]...` through [`Configure`]; every value is checked here, so an
//! invalid setting never reaches the model (the defaults and how they were chosen are in the
//! [module docs](super)).

use super::{
    Acquisition, ClusterCount, ClusterOptions, CovarianceKind, Design, PortfolioKind,
    PortfolioOptions,
};
use crate::strategy::options::{Configure, parse_bool, parse_checked};

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
    /// Paper 000's contextual variance, recomputed every round, times a scale (`cv` is scale 1,
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
    /// and the log keeps the slowest configurations from dominating the fit. Values must be
    /// positive; smaller ones count as the smallest positive double.
    Log,
}

/// The model of the objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SurrogateChoice {
    /// One Gaussian process over the whole space ([`Gp`](super::Gp)).
    Gp,
    /// The clustered GP of paper 004 ([`ClusteredGp`](super::ClusteredGp)).
    Clustered(ClusterOptions),
}

/// Options of [`Bayes`](super::Bayes); `Default` gives the defaults of the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct BayesOptions {
    /// `acq`: the acquisition function or portfolio.
    pub acquisition: AcquisitionChoice,
    /// `kernel`: the covariance function.
    pub kernel: CovarianceKind,
    /// `lengthscale`: the covariance function's lengthscale (in normalized coordinates).
    pub lengthscale: f64,
    /// `additive`: the weight of the covariance's additive part, in `[0, 1]` (0: isotropic; see
    /// [`Covariance`](super::Covariance)).
    pub additive: f64,
    /// `noise`: the noise variance relative to the standardized signal variance.
    pub noise: f64,
    /// `fit`: re-estimate lengthscale and noise by marginal likelihood after the initial sample
    /// and whenever the number of valid observations has doubled.
    pub fit: bool,
    /// `explore`: `cv`, `cv*SCALE` or a constant.
    pub exploration: Exploration,
    /// `init`: size of the initial sample.
    pub init: usize,
    /// `design`: how the initial sample is chosen, `random`, `stratified` or `maximin`
    /// ([`Design`]).
    pub design: Design,
    /// `feasibility`: weigh the acquisition by a learnt probability of validity.
    pub feasibility: bool,
    /// `feas_min`: candidates less likely than this to be valid are only considered when no
    /// other unvisited candidate is left (default 0.5; 0 only weighs the acquisition).
    pub min_feasibility: f64,
    /// `skip`: the portfolios' skip threshold.
    pub skip_threshold: usize,
    /// `discount`: the portfolios' discount factor (`None`: Table I's for the portfolio).
    pub discount: Option<f64>,
    /// `improvement`: advanced multi's required improvement factor.
    pub improvement: f64,
    /// `batch`: `kb` (kriging believer) or `cl` (constant liar).
    pub batch: BatchFill,
    /// `pool`: the most candidates whose predictions are kept up to date; larger spaces score a
    /// random pool of this size plus the neighbours of the best configurations found.
    pub pool: usize,
    /// `local`: in pool mode, how many of the best configurations found add their neighbours to
    /// the candidates.
    pub local: usize,
    /// `polish`: if `K > 0`, every `K`-th acquisition round only considers the unvisited Hamming
    /// neighbours (one parameter changed) of the best configuration found (of the next best when
    /// those are all visited), so the end of a run refines the incumbent as a local search
    /// would; 0 turns it off.
    pub polish: usize,
    /// `transform`: `none` or `log`.
    pub transform: Transform,
    /// `trust`: the initial half-width of the trust region in normalized coordinates, in
    /// `[0, 1]` ([`TrustRegion`](super::TrustRegion)); 0 turns it off.
    pub trust: f64,
    /// `surrogate`: `gp` or `cgp`; the clustered GP's settings are `clusters` (3, or `auto`: 1 to
    /// 3 by BIC), `xi` (1), `min_cluster` (3), `knn` (3) and `boundary` (0).
    pub surrogate: SurrogateChoice,
    /// `tau`: the exploration rate, the probability of following the acquisition rather than
    /// taking a random unvisited configuration (`None`: 1 for `gp`, paper 004's 0.8 for `cgp`).
    pub tau: Option<f64>,
}

impl Default for BayesOptions {
    fn default() -> Self {
        BayesOptions {
            acquisition: AcquisitionChoice::Single(Acquisition::Ei),
            kernel: CovarianceKind::Matern32,
            lengthscale: 1.0,
            additive: 0.0,
            noise: 1e-6,
            fit: false,
            exploration: Exploration::ContextualVariance(0.5),
            init: 5,
            design: Design::Stratified,
            feasibility: true,
            min_feasibility: 0.5,
            skip_threshold: 5,
            discount: None,
            improvement: 0.1,
            batch: BatchFill::KrigingBeliever,
            pool: 65_536,
            local: 3,
            polish: 5,
            transform: Transform::Log,
            trust: 0.0,
            surrogate: SurrogateChoice::Gp,
            tau: None,
        }
    }
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

impl Configure for BayesOptions {
    const KEYS: &'static [&'static str] = &[
        "acq",
        "kernel",
        "lengthscale",
        "additive",
        "noise",
        "fit",
        "explore",
        "init",
        "design",
        "feasibility",
        "feas_min",
        "skip",
        "discount",
        "improvement",
        "batch",
        "pool",
        "local",
        "polish",
        "transform",
        "trust",
        "surrogate",
        "clusters",
        "xi",
        "min_cluster",
        "knn",
        "boundary",
        "tau",
    ];

    fn set(&mut self, key: &str, v: &str) -> Result<(), Option<String>> {
        let positive =
            |v: &str| parse_checked(v, "a positive number", |x: &f64| *x > 0.0 && x.is_finite());
        match key {
            "acq" => {
                self.acquisition = match v {
                    "ei" => AcquisitionChoice::Single(Acquisition::Ei),
                    "pi" | "poi" => AcquisitionChoice::Single(Acquisition::Pi),
                    "lcb" => AcquisitionChoice::Single(Acquisition::Lcb),
                    "multi" => AcquisitionChoice::Portfolio(PortfolioKind::Multi),
                    "advanced_multi" => AcquisitionChoice::Portfolio(PortfolioKind::AdvancedMulti),
                    _ => return Err(Some("expected ei, pi, lcb, multi or advanced_multi".into())),
                }
            }
            "kernel" => {
                self.kernel = CovarianceKind::parse(v)
                    .ok_or_else(|| Some("expected matern32, matern52 or rbf".to_owned()))?
            }
            "lengthscale" => self.lengthscale = positive(v)?,
            "additive" => {
                self.additive =
                    parse_checked(v, "a number in [0, 1]", |x: &f64| (0.0..=1.0).contains(x))?
            }
            "noise" => {
                self.noise = parse_checked(v, "a number in [1e-12, 10]", |x: &f64| {
                    (1e-12..=10.0).contains(x)
                })?
            }
            "fit" => self.fit = parse_bool(v)?,
            "explore" => {
                self.exploration = if v == "cv" {
                    Exploration::ContextualVariance(1.0)
                } else if let Some(scale) = v.strip_prefix("cv*") {
                    Exploration::ContextualVariance(positive(scale)?)
                } else {
                    Exploration::Constant(parse_checked(
                        v,
                        "cv, cv*SCALE or a number >= 0",
                        |x: &f64| *x >= 0.0 && x.is_finite(),
                    )?)
                }
            }
            "init" => self.init = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "design" => {
                self.design = Design::parse(v)
                    .ok_or_else(|| Some("expected random, stratified or maximin".to_owned()))?
            }
            "feasibility" => self.feasibility = parse_bool(v)?,
            "feas_min" => {
                self.min_feasibility =
                    parse_checked(v, "a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x))?
            }
            "skip" => self.skip_threshold = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "discount" => {
                self.discount = Some(parse_checked(v, "a number in (0, 1]", |x: &f64| {
                    *x > 0.0 && *x <= 1.0
                })?)
            }
            "improvement" => {
                self.improvement =
                    parse_checked(v, "a number in [0, 1)", |x: &f64| (0.0..1.0).contains(x))?
            }
            "batch" => {
                self.batch = match v {
                    "kb" => BatchFill::KrigingBeliever,
                    "cl" => BatchFill::ConstantLiar,
                    _ => return Err(Some("expected kb or cl".into())),
                }
            }
            "pool" => self.pool = parse_checked(v, "an integer >= 100", |&n| n >= 100)?,
            "local" => self.local = parse_checked(v, "an integer >= 0", |_: &usize| true)?,
            "polish" => self.polish = parse_checked(v, "an integer >= 0", |_: &usize| true)?,
            "transform" => {
                self.transform = match v {
                    "none" => Transform::None,
                    "log" => Transform::Log,
                    _ => return Err(Some("expected none or log".into())),
                }
            }
            "trust" => {
                self.trust =
                    parse_checked(v, "a number in [0, 1]", |x: &f64| (0.0..=1.0).contains(x))?
            }
            "surrogate" => match v {
                "gp" => self.surrogate = SurrogateChoice::Gp,
                "cgp" => {
                    self.clustered();
                }
                _ => return Err(Some("expected gp or cgp".into())),
            },
            "clusters" => {
                self.clustered().count = if v == "auto" {
                    ClusterCount::Auto(3)
                } else {
                    ClusterCount::Fixed(parse_checked(v, "auto or an integer >= 1", |&n| n >= 1)?)
                }
            }
            "xi" => {
                self.clustered().xi =
                    parse_checked(v, "a number >= 0", |x: &f64| *x >= 0.0 && x.is_finite())?
            }
            "min_cluster" => {
                self.clustered().min_size = parse_checked(v, "an integer >= 1", |&n| n >= 1)?
            }
            "knn" => {
                self.clustered().neighbours = parse_checked(v, "an integer >= 1", |&n| n >= 1)?
            }
            "boundary" => {
                self.clustered().boundary =
                    parse_checked(v, "a number >= 0", |x: &f64| *x >= 0.0 && x.is_finite())?
            }
            "tau" => {
                self.tau = Some(parse_checked(v, "a number in (0, 1]", |x: &f64| {
                    *x > 0.0 && *x <= 1.0
                })?)
            }
            _ => return Err(None),
        }
        Ok(())
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
        assert!(matches!(
            apply("bayes:feas_minimum=0.5"),
            Err(StrategyError::UnknownOption { .. })
        ));
    }
}
