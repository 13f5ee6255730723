//! # Bayesian optimization
//!
//! The `bayes` strategy: Bayesian optimization over the discrete, constrained spaces of GPU
//! kernels, after paper 000 (Willemsen, van Nieuwpoort, van Werkhoven, "Bayesian Optimization for
//! auto-tuning GPU kernels"), with failures learnt by a separate feasibility model instead of
//! being fed to the surrogate as invented values.
//!
//! ## The method
//! - **Space.** Every valid configuration is a point in `[0, 1]^k`, one coordinate per parameter
//!   with more than one value (single-valued parameters are pruned), value index `i` of `n` at
//!   `i / (n - 1)` ([`Points::from_space`]). The acquisition is maximized exactly, over every
//!   unvisited valid configuration: the discrete space of paper 000, Section III-D.
//! - **Initial sample.** `init` (5) configurations chosen by `design` ([`Design`]): by default
//!   `stratified`, uniformly random valid configurations, keeping of 200 draws the one that
//!   covers the most strata of every parameter's value range; or `random` picks, or paper 000's
//!   `maximin` Latin hypercube (the best of 1000 random designs, each point moved to the nearest
//!   untaken valid configuration). A configuration that fails is replaced by a random one, for at
//!   most `init` replacements (Section III-E).
//! - **Surrogate.** A Gaussian process ([`Gp`]) on standardized targets with a Matérn 3/2, Matérn
//!   5/2 or RBF covariance ([`Covariance`], optionally mixed with a first-order additive part,
//!   `additive`) and a fixed lengthscale (Table I), or lengthscale and noise fitted by marginal
//!   likelihood ([`likelihood`], `fit=true`). Only valid results are
//!   observed. New observations update the Cholesky factor by one row and every candidate's
//!   cached cross-covariances by one element, `O(n)` per candidate, in parallel over fixed chunks
//!   (deterministic for any number of threads). The surrogate sits behind the [`Surrogate`] trait.
//! - **Feasibility.** Failed configurations train a separate model of the probability that a
//!   configuration is valid ([`Feasibility`], a GP label regression) and the acquisition is
//!   weighed by it (`feasibility=false` turns it off; then failures are only never asked again).
//!   With `feas_min=P` (default 0.5), candidates less likely than `P` to be valid are only
//!   considered once no other unvisited candidate is left. Weighing alone can leave many
//!   evaluations on failures: a failure teaches the objective's GP nothing, so the region around
//!   it stays uncertain, and its expected improvement can exceed that of well-explored valid
//!   regions by more than any weight below 1 makes up for. On pnpoly (8% of the configurations
//!   fail, next to the fastest ones) weighing alone (`feas_min=0`) spends 49.1% of the
//!   evaluations on failures, the default 14.8%, at the same score (0.872 against 0.870). Over
//!   the ten caches the two tie (0.736 ± 0.008 each); the default takes the one that wastes fewer
//!   evaluations, since on a device a failure costs a compile and a launch that the score does
//!   not count.
//! - **Acquisition.** EI, PI or LCB ([`Acquisition`]) with paper 000's contextual-variance
//!   exploration factor ([`contextual_variance`], applied in standard deviations of the
//!   standardized targets), or the `multi` and `advanced_multi` portfolios ([`Portfolio`]) with
//!   Table I's skip threshold (5), discount factors (0.65, 0.75) and required improvement factor
//!   (0.1).
//! - **Batches.** `ask(n)` picks `n` configurations one after the other, each conditioned on the
//!   ones before it (and on every configuration asked but not yet told) with a made-up result:
//!   the model's mean (kriging believer, `batch=kb`) or the best value so far (constant liar,
//!   `batch=cl`). A portfolio round suggests one configuration per active function from one
//!   prediction, as in the paper. Once the initial sample is asked, at most `max(1, valid /
//!   ramp)` configurations are outstanding (`ramp`, default 2; `valid` = valid results told):
//!   a batch asked of a model fitted to five results would be eight guesses it cannot tell
//!   apart. With 8 workers replaying the fourteen caches this lifts batched `auto` from 0.682
//!   to 0.722 (sequential: 0.734), chosen over `ramp` 0 and 3 by leave-one-family-out
//!   (`docs/notes/batching.md` in the repository).
//! - **Polishing.** Every `polish`-th (5th) round only the unvisited Hamming neighbours of the
//!   best configuration found (of the next best once those are all visited) compete for the
//!   acquisition's choice. The GP is smooth at the scale of the whole space and cannot resolve
//!   the last fraction of a percent between neighbouring configurations; local search can, and
//!   the model still picks which neighbour to try.
//! - **Large spaces.** Spaces with more than `pool` (12,288) valid configurations keep the
//!   predictions of a random pool of that many up to date and also score, every round, the
//!   Hamming neighbours of the `local` (3) best configurations found. The pool bounds the
//!   strategy's own time: every result updates every candidate's prediction, so the time per
//!   ask grows with the candidates and the results, not with the space (a pool of 65,536 cost
//!   34 ms per ask over 220 evaluations of a 10^6 landscape, issue 36; the figures of 12,288
//!   are in `docs/results.md`). The pool's coordinates are copied contiguously, so the updates
//!   do not gather rows scattered over a matrix of the whole space.
//! - **Trust region** (optional, `trust=H`): TuRBO's box around the best configuration
//!   ([`TrustRegion`]) limits the candidates of the rounds that do not polish.
//! - **Alignment coordinates** (optional, `align=W`): integer parameters whose values are not
//!   ordered by alignment (a block size stepping by 16, a tile of 1 to 8) get one more
//!   coordinate, the value's trailing zero bits scaled to `[0, W]` ([`with_alignment`]), so the
//!   model can learn effects periodic in the value (multiples of 32 or 64, powers of two).
//! - **Two models** (optional, `dual=W`; on in `auto`): a second model with alignment
//!   coordinates of weight `W` is told every result; the one that predicts better (below)
//!   picks. Where alignment does not matter the first model keeps the picks.
//! - **The predictive check** (optional, `guard=C`; on in `auto`): before each result is told,
//!   the model's prediction for it is compared with the results already known ([`Guard`]: the
//!   share put on the right side; 0.5 is a coin). While the mean over the last `guard_window`
//!   (10) results is below `C`, the picks go to a `fallback` that needs no model ([`Fallback`]:
//!   random configurations by default), whose results are checked too.
//! - **Stalls** (optional, `stall=K`): once `K` valid results in a row have not improved the
//!   best, every other pick goes to the `fallback` until one does. On plateaus (wide regions of
//!   equal time) a model that predicts the plateau well can keep proposing configurations on it.
//!   `auto` uses `stall=60:fallback=far`: of 16 random unasked configurations, the one whose
//!   nearest asked configuration differs from it in the most parameters (see [`Fallback`]).
//! - **Coverage rounds** (optional, `cover=K`; `cover=2` in `auto`): every `K`-th round, while
//!   some value of a parameter of at most [`MAX_LEVELS`] values has not been asked, only the
//!   configurations with one such value compete, so a level that a young model's trend points
//!   away from (an unroll factor's 0, a switch) is tried once, in the company the model likes
//!   best.
//! - **Level coordinates** (optional, `levels=W`): parameters of [`MIN_LEVELS`] to
//!   [`MAX_LEVELS`] values also get a one-hot code ([`with_levels`]), two values `W` apart
//!   whatever their order.
//! - **Overlap part** (optional, `overlap=W`, `overlap_levels=K`, `overlap_rest`;
//!   `overlap=0.3:overlap_levels=6:early=25:overlap_rest=1` in `auto`): for the first `early`
//!   evaluations the covariance also counts the parameters of at most `K` values two
//!   configurations share ([`Covariance::with_overlap`]): a few results then tell that one value
//!   of a switch or a choice is good wherever its index lies. Measured in the results chapter
//!   ("The overlap kernel"): better on every generated kind and on the caches up to about 50
//!   evaluations, worse on convolution_milo later when kept throughout. With `overlap_rest`
//!   the part also averages in the parameters it does not compare, by their one-dimensional
//!   kernel ([`Covariance::with_overlap_rest`]): a parameter of many values (a block size of
//!   16 values) then keeps its share of that part instead of none.
//!
//! ## Defaults, and where they differ from paper 000
//! Paper 000's Table I default is the `advanced_multi` portfolio with contextual variance and a
//! Matérn 3/2 lengthscale of 1.5 on raw targets. On the ten shared Kernel Tuner caches (35 runs,
//! seed 1, budget 220; `cargo tunable bench`) that setting scores 0.404 ± 0.018: its LCB member
//! exploits too early and scores below random search on two of the convolution caches (LCB alone:
//! 0.073 on four caches). EI alone scores 0.555, EI with half the contextual variance on the
//! logarithm of the run time 0.622, and the same with lengthscale 1 0.630 ± 0.009. Run times
//! spread over orders of magnitude, and on their logarithm the slow tail stops dominating the
//! standardized targets. Three later changes make the default:
//! - an initial sample of 5 instead of paper 000's 20: the score counts every evaluation, and a
//!   larger space-filling sample spends them before the model can steer (`init=10` alone: 0.678);
//! - a polishing round every fifth round (see above): on dedispersion the plain GP stalls 0.3%
//!   above the optimum, while local search keeps finding the last tenths of a percent;
//! - `feas_min=0.5` (see Feasibility): the same mean score, and on pnpoly under a third of the
//!   evaluations spent on failures.
//!
//! With all three the mean is 0.736 ± 0.008 (`polish=0`: 0.699 ± 0.008, `polish=3`:
//! 0.723 ± 0.010, `feas_min=0`: 0.736 ± 0.008, `init=20:polish=0:feas_min=0`: 0.630 ± 0.009).
//! These figures are the fixed-window score on the ten caches the project had then.
//!
//! The initial sample became `design=stratified` on the fourteen caches of five kernel families
//! and the methodology's cut-off score (35 runs, seed 1; `docs/notes/choosing-auto.md` in the
//! repository has the command and the leave-one-family-out selection). Paper 000's maximin design scores 0.703 ±
//! 0.015 and only 0.061 on `convolution_milo_MI50`, where random search comes 95% of the way to
//! the optimum within 12 evaluations: maximizing the smallest distance between five points puts
//! them on the corners of the space, the extreme value of every parameter, and snapping to valid
//! configurations puts them on the constraints' boundaries, so the first evaluations, the only
//! ones that count there, are spent on extremes. Random picks score 0.720 ± 0.011 (0.348 on that
//! cache), the stratified draw 0.734 ± 0.009 (0.493; worst cache 0.460) and the best score at 25
//! evaluations (0.371 against 0.346 and 0.340); at 220 evaluations the three tie (0.737, 0.734,
//! 0.733). What did not help, on 10 runs per cache (mean cut-off score against 0.762 for the
//! stratified default on the same seeds): `fit=true` 0.659, `lengthscale=0.5` 0.657,
//! `lengthscale=1.5` 0.749, `kernel=matern52` 0.740, `explore=0` 0.696, `explore=cv*0.25` 0.716,
//! `explore=cv` 0.752, `acq=pi` 0.680, `init=3` 0.723, `init=7` 0.733, `additive=0.3 / 0.6 /
//! 0.9` 0.725 / 0.721 / 0.668, `trust=0.1 / 0.2 / 0.35` 0.724 / 0.637 / 0.558 (a box in normalized
//! coordinates never lets a two-valued parameter change until it spans the whole range). With 35
//! runs `lengthscale=2` (0.724, 0.363 at 25) and `polish=3` (0.729, 0.372 at 25) stay below the
//! default. Letting the model steer sooner did not lift the score at 25 evaluations either (35
//! runs; the default scores 0.371 there): a two-point sample with `lengthscale=2` 0.356 (cut-off
//! 0.722), the same with the lengthscale back to 1 after 100 evaluations (`early_lengthscale=2:
//! early=100`) 0.356 (0.720), and with the contextual variance's reference taken at five valid
//! results (`cv_ref=5`) 0.340 (0.736, but 0.722 at 220 against 0.737).
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
//!   auto-tuning GPU kernels", PMBS 2021 (paper 000 of this project; paper 003 is its twin).
//! - E. O. Hellsten et al., "BaCO: A Fast and Portable Bayesian Compiler Optimization
//!   Framework", ASPLOS 2023: feasibility models for hidden constraints.
//! - D. Ginsbourger, R. Le Riche, L. Carraro, "Kriging is well-suited to parallelize
//!   optimization", 2010: kriging believer and constant liar.
//! - Kernel Tuner's `bayes_opt` strategy (`kernel_tuner/strategies/bayes_opt.py`): the
//!   implementation of paper 000 this one is compared with.

mod acquisition;
mod cgp;
pub mod cluster;
mod covariance;
pub mod elite;
mod feasibility;
mod features;
mod gp;
mod guard;
mod hyperparameters;
mod init;
mod knn;
mod levels;
pub mod likelihood;
mod options;
mod points;
mod portfolio;
mod strategy;
mod surrogate;
mod targets;
mod trust;

pub use acquisition::{
    Acquisition, contextual_variance, expected_improvement, log_ei_factor, log_normal_cdf,
    lower_confidence_bound, normal_cdf, normal_pdf, probability_of_improvement,
};
pub use cgp::{ClusterOptions, ClusteredGp};
pub use cluster::ClusterCount;
pub use covariance::{Covariance, CovarianceKind, sq_dist};
pub use feasibility::Feasibility;
pub use features::{alignment_columns, with_alignment};
pub use gp::{Gp, exact_posterior};
pub use guard::{Fallback, Guard};
pub use hyperparameters::GpParams;
pub use init::{Design, MAXIMIN_DESIGNS, STRATIFIED_DESIGNS};
pub use knn::Neighbours;
pub use levels::{MAX_LEVELS, MIN_LEVELS, level_params, with_levels};
pub use options::{
    AcquisitionChoice, BatchFill, BayesOptions, Exploration, SurrogateChoice, Transform,
};
pub use points::Points;
pub use portfolio::{Pick, Portfolio, PortfolioKind, PortfolioOptions};
pub use strategy::{Bayes, DUAL_MARGIN};
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
