//! # Bayesian optimization
//!
//! The `bayes` strategy: Bayesian optimization over the discrete, constrained spaces of GPU
//! kernels, after "Bayesian Optimization for auto-tuning GPU kernels" (Willemsen, van
//! Nieuwpoort, van Werkhoven; see the references), with failures learnt by a separate
//! feasibility model instead of being fed to the surrogate as invented values.
//!
//! ## The method
//! - **Space.** Every valid configuration is a point in `[0, 1]^k`, one coordinate per parameter
//!   with more than one value (single-valued parameters are pruned), value index `i` of `n` at
//!   `i / (n - 1)` ([`Points::from_space`]). The acquisition is maximized exactly, over every
//!   unvisited valid configuration: the paper's discrete space (Section III-D).
//! - **Initial sample.** `init` (5) configurations chosen by `design` ([`Design`]): by default
//!   `stratified`, uniformly random valid configurations, keeping of 200 draws the one that
//!   covers the most strata of every parameter's value range; or `proportional` (strata of equal
//!   numbers of valid configurations, the first pick uniform), or `random` picks, or the paper's
//!   `maximin` Latin hypercube (the best of 1000 random designs, each point moved to the nearest
//!   untaken valid configuration). A configuration that fails is replaced by a random one, for at
//!   most `init` replacements (Section III-E).
//! - **Surrogate.** A Gaussian process ([`Gp`]) on standardized targets with a Matérn 3/2, Matérn
//!   5/2 or RBF covariance ([`Covariance`], optionally mixed with a first-order additive part,
//!   `additive`) and a fixed lengthscale (Table I), or lengthscale and noise fitted by marginal
//!   likelihood ([`likelihood`], `fit=true`). Only valid results are observed. New observations
//!   update the Cholesky factor by one row and every candidate's cached cross-covariances by one
//!   element, `O(n)` per candidate, in parallel over fixed chunks (deterministic for any number
//!   of threads). The surrogate sits behind the [`Surrogate`] trait; the strategy's models (the
//!   one that picks, a second one, the feasibility model) are built in `models.rs`.
//! - **Feasibility.** Failed configurations train a separate model of the probability that a
//!   configuration is valid ([`Feasibility`], a GP label regression) and the acquisition is
//!   weighed by it (`feasibility=false` turns it off; then failures are only never asked again).
//!   With `feas_min=P` (default 0.5), candidates less likely than `P` to be valid are only
//!   considered once no other unvisited candidate is left. Weighing alone is not enough: a
//!   failure teaches the objective's GP nothing, so the region around it stays uncertain, and
//!   its expected improvement can exceed that of well-explored valid regions by more than any
//!   weight below 1 makes up for; on a device each failure costs a compile and a launch.
//! - **Acquisition.** EI, PI or LCB ([`Acquisition`]) with the paper's contextual-variance
//!   exploration factor ([`contextual_variance`], applied in standard deviations of the
//!   standardized targets), or the `multi` and `advanced_multi` portfolios ([`Portfolio`]) with
//!   Table I's skip threshold (5), discount factors (0.65, 0.75) and required improvement factor
//!   (0.1). A round scores the candidates in `candidates.rs` (the candidate pipeline).
//! - **Batches.** `ask(n)` picks `n` configurations one after the other, each conditioned on the
//!   ones before it (and on every configuration asked but not yet told) with a made-up result:
//!   the model's mean (kriging believer, `batch=kb`) or the best value so far (constant liar,
//!   `batch=cl`). A portfolio round suggests one configuration per active function from one
//!   prediction, as in the paper. Once the initial sample is asked, at most `max(1, valid /
//!   ramp)` configurations are outstanding (`ramp`, default 2; `valid` = valid results told):
//!   a batch asked of a model fitted to five results would be eight guesses it cannot tell
//!   apart.
//! - **Polishing** (`polish.rs`). Every `polish`-th (5th) round only the unvisited Hamming
//!   neighbours of the best configuration found (of the next best once those are all visited)
//!   compete for the acquisition's choice. The GP is smooth at the scale of the whole space and
//!   cannot resolve the last fraction of a percent between neighbouring configurations; local
//!   search can, and the model still picks which neighbour to try.
//! - **Large spaces** (`pool.rs`). Spaces with more than `pool` (12,288) valid configurations
//!   keep the predictions of a random pool of that many up to date and also score, every round,
//!   the Hamming neighbours of the `local` (3) best configurations found. The pool bounds the
//!   strategy's own time: every result updates every candidate's prediction, so the time per
//!   ask grows with the candidates and the results, not with the space. The pool's coordinates
//!   are copied contiguously, so the updates do not gather rows scattered over a matrix of the
//!   whole space.
//! - **Trust region** (optional, `trust=H`): TuRBO's box around the best configuration
//!   ([`TrustRegion`]) limits the candidates of the rounds that do not polish.
//! - **Alignment coordinates** (optional, `align=W`): integer parameters whose values are not
//!   ordered by alignment (a block size stepping by 16, a tile of 1 to 8) get one more
//!   coordinate, the value's trailing zero bits scaled to `[0, W]` ([`with_alignment`]), so the
//!   model can learn effects periodic in the value (multiples of 32 or 64, powers of two).
//! - **Two models** (optional, `dual=W`; `challenger.rs`): a second model with alignment
//!   coordinates of weight `W` is told every result; the one that predicts better (below)
//!   picks. Where alignment does not matter the first model keeps the picks.
//! - **The predictive check** (optional, `guard=C`): before each result is told, the model's
//!   prediction for it is compared with the results already known ([`Guard`]: the share put on
//!   the right side; 0.5 is a coin). While the mean over the last `guard_window` (10) results is
//!   below `C`, the picks go to a `fallback` that needs no model ([`Fallback`]: random
//!   configurations by default), whose results are checked too.
//! - **Stalls** (optional, `stall=K`): once `K` valid results in a row have not improved the
//!   best, every other pick goes to the `fallback` until one does. On plateaus (wide regions of
//!   equal time) a model that predicts the plateau well can keep proposing configurations on it.
//! - **Trial scope** (optional, `trial_scope=M`; `scope.rs`): until the predictive check has
//!   judged the picking model, a round scores only a random share of about `M` unvisited
//!   candidates, so that a young model's picks are its best of `M` random configurations, not
//!   the corners of the space where its variance points.
//! - **Coverage rounds** (optional, `cover=K`; `coverage.rs`): every `K`-th round, while some
//!   value of a parameter of at most [`MAX_LEVELS`] values has not been asked, only the
//!   configurations with one such value compete, so a level that a young model's trend points
//!   away from (an unroll factor's 0, a switch) is tried once, in the company the model likes
//!   best.
//! - **Clipping** (optional, `clip=q`, `clip_ratio=F`, `clip_until=N`; `clipping.rs`): the
//!   models see every target capped at the higher of the `q`-quantile of the targets and the
//!   target of `F` times the best, for the first `N` evaluations, so that the slow bulk's trends
//!   cannot lead a young model away from the fast few.
//! - **Level coordinates** (optional, `levels=W`): parameters of [`MIN_LEVELS`] to
//!   [`MAX_LEVELS`] values also get a one-hot code ([`with_levels`]), two values `W` apart
//!   whatever their order.
//! - **Overlap part** (optional, `overlap=W`, `overlap_levels=K`, `overlap_rest`): for the first
//!   `early` evaluations the covariance also counts the parameters of at most `K` values two
//!   configurations share ([`Covariance::with_overlap`]): a few results then tell that one value
//!   of a switch or a choice is good wherever its index lies. Kept throughout, it costs the late
//!   search. With `overlap_rest` the part also averages in the parameters it does not compare,
//!   by their one-dimensional kernel ([`Covariance::with_overlap_rest`]): a parameter of many
//!   values (a block size of 16 values) then keeps its share of that part instead of none.
//!
//! `auto` is `bayes` with several of these safeguards on: see
//! [`AutoPreset`](crate::strategy::AutoPreset).
//!
//! ## Defaults, and where they differ from the paper
//! The paper's Table I default is the `advanced_multi` portfolio with contextual variance and a
//! Matérn 3/2 lengthscale of 1.5 on raw targets. Here the default is EI with half the contextual
//! variance, on the logarithm of the run time, with lengthscale 1: the portfolio's LCB member
//! exploits too early, and run times spread over orders of magnitude, so on their logarithm the
//! slow tail stops dominating the standardized targets. Further:
//! - an initial sample of 5 instead of 20, drawn `stratified` rather than by maximin: the score
//!   counts every evaluation, a larger space-filling sample spends them before the model can
//!   steer, and maximin puts its points on the corners of the space (the extreme value of every
//!   parameter), which on some kernels are the only evaluations that count;
//! - a polishing round every fifth round (see above);
//! - `feas_min=0.5` (see Feasibility): fewer evaluations spent on failures at the same score.
//!
//! The evidence for these choices (the runs, their commands and figures, and what was tried and
//! not kept) is in `docs/notes/bayesian-optimization.md` and `docs/notes/choosing-auto.md`.
//! Every Table I setting stays available by option
//! (`bayes:acq=advanced_multi:explore=cv:lengthscale=1.5:transform=none:init=20:polish=0:feas_min=0`).
//!
//! ## Options
//! `bayes[:key=value]...`: the options, their keys and defaults are listed on [`BayesOptions`]
//! (each declared once, with its parser).
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{self, Outcome, StrategySpec, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20).build().unwrap());
//! let spec: StrategySpec = "bayes:acq=ei".parse().unwrap();
//! let mut s = strategy::build(&spec, Arc::clone(&space), 1).unwrap();
//! let run = drive(s.as_mut(), 40, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 12).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 40);
//! ```
//!
//! ## References
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian Optimization for
//!   auto-tuning GPU kernels", PMBS 2021: the method, its contextual variance and Table I.
//! - H. Luo, J. W. Demmel, Y. Cho, X. S. Li, Y. Liu, "Non-smooth Bayesian optimization in
//!   tuning problems": the clustered GP ([`ClusteredGp`], `surrogate=cgp`) and the exploration
//!   rate `tau`.
//! - E. O. Hellsten et al., "BaCO: A Fast and Portable Bayesian Compiler Optimization
//!   Framework", ASPLOS 2023: feasibility models for hidden constraints.
//! - D. Ginsbourger, R. Le Riche, L. Carraro, "Kriging is well-suited to parallelize
//!   optimization", 2010: kriging believer and constant liar.
//! - D. Eriksson et al., "Scalable Global Optimization via Local Bayesian Optimization"
//!   (TuRBO), NeurIPS 2019: the trust region.
//! - Kernel Tuner's `bayes_opt` strategy (`kernel_tuner/strategies/bayes_opt.py`): the
//!   implementation of the paper this one is compared with.

mod acquisition;
mod candidates;
mod cgp;
mod challenger;
mod clipping;
pub mod cluster;
mod covariance;
mod coverage;
pub mod elite;
mod fallback;
mod feasibility;
mod features;
mod gp;
mod guard;
mod hyperparameters;
mod init;
mod knn;
mod levels;
pub mod likelihood;
mod models;
mod options;
mod points;
mod polish;
mod pool;
mod portfolio;
mod results;
mod scope;
mod strategy;
mod surrogate;
mod targets;
mod trust;

pub use acquisition::{
    Acquisition, contextual_variance, expected_improvement, log_ei_factor, log_normal_cdf,
    lower_confidence_bound, normal_cdf, normal_pdf, probability_of_improvement,
};
pub use cgp::{ClusterOptions, ClusteredGp};
pub use challenger::DUAL_MARGIN;
pub use cluster::ClusterCount;
pub use covariance::{Covariance, CovarianceKind, sq_dist};
pub use fallback::Fallback;
pub use feasibility::Feasibility;
pub use features::{alignment_columns, with_alignment};
pub use gp::{Gp, exact_posterior};
pub use guard::Guard;
pub use hyperparameters::GpParams;
pub use init::{Design, MAXIMIN_DESIGNS, STRATIFIED_DESIGNS};
pub use knn::Neighbours;
pub use levels::{MAX_LEVELS, MIN_LEVELS, level_params, with_levels};
pub use options::{
    AcquisitionChoice, BatchFill, BayesOptions, Exploration, SurrogateChoice, Transform,
};
pub use points::Points;
pub use portfolio::{Pick, Portfolio, PortfolioKind, PortfolioOptions};
pub use strategy::Bayes;
pub use surrogate::{Prediction, Surrogate};
pub use trust::TrustRegion;

/// Why a Bayesian-optimization model could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BayesError {
    /// A hyperparameter is out of range.
    #[error("hyperparameter {name} = {value} is out of range")]
    Hyperparameter {
        /// The hyperparameter.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A points matrix is malformed.
    #[error("bad points matrix: {reason}")]
    Points {
        /// What is wrong.
        reason: String,
    },
}
