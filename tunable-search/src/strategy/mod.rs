//! # Search strategies
//!
//! A strategy is a pure ask/tell state machine over a [`Space`]: it proposes positions to
//! evaluate ([`Strategy::ask`]) and learns their [`Outcome`]s ([`Strategy::tell`]). It never
//! launches anything, and for a given seed it is deterministic.
//!
//! The contract every strategy keeps:
//! - `ask(n)` returns at most `n` distinct positions that were never asked before, and returns
//!   none only when every configuration has been asked: a strategy spends any budget it is given
//!   and never evaluates a configuration twice. Revisiting a configuration it already knows is
//!   free: strategies look it up in their [`Memo`] instead of asking for it.
//! - `tell` accepts results in any grouping and order, only for asked positions.
//! - A failed configuration (compile error, launch failure, wrong result: a hidden constraint) is
//!   [`Outcome::Failed`], data like any other. Strategies rank it at [`PENALTY`], below every
//!   valid result and alike with a configuration that violates the constraints (which the
//!   non-constraint-aware forms hold but never evaluate); [`Memo::rank`] is where that rule
//!   lives.
//!
//! [`drive`] (and its builder [`Driver`], with batch [`Evaluator`]s, [`Observer`]s and stop
//! conditions) runs a strategy against an objective under a budget; `cargo tunable bench` and
//! the runtime's tuner are built on it.
//!
//! Strategies are named on the command line as `name[:key=value]...`; see [`StrategySpec`] and
//! [`build`] ([`build_for`] when the objective is known: on a space with clocks, `auto` is a
//! local search, with the clocks held for time).
//!
//! ## How the strategies are built
//! The iterative strategies (random search, the genetic algorithm, differential evolution, PSO,
//! the firefly algorithm, simulated annealing, multi-start and iterated local search) split as
//! argmin does: an [`Algorithm`] (the solver: a population, a swarm, a chain, a climber) takes
//! steps over a [`Search`] (the state: space, memo, random source, the batch being asked), and
//! [`Iterative`] (the executor) drives it as a [`Strategy`]. The driver fills batches while the
//! algorithm waits for results, detects stalls, asks the algorithm to diversify and falls back to
//! random configurations; see the [`iterative`] module. What several algorithms share
//! lives once beside them: the configuration type (`config.rs`), the one-parameter moves
//! (`moves.rs`), random and sampled starts (`starts.rs`), landing in the continuous space
//! (`landing.rs`, [`Continuous`]) and repair ([`Repair`]). A strategy file holds its algorithm
//! and its options, declared once (`options.rs`: field, default, doc, key and parser in one
//! entry). [`Bayes`], [`Ensemble`] and [`Exhaustive`] implement
//! [`Strategy`] directly.
//!
//! ## Adding a strategy
//! Write its algorithm: the state it keeps between steps and one [`Algorithm::step`], asking
//! through [`Search::ask`]; return [`Step::Wait`] when it needs results, and [`Step::Iteration`]
//! where an iteration ends if it wants the driver to diversify it on a stall
//! ([`Algorithm::stall`], [`Algorithm::diversify`]). [`Iterative`] then makes it a [`Strategy`];
//! add its name to [`build`] and [`STRATEGY_NAMES`] (the contract tests in
//! `tests/strategy_contract.rs` then cover it). A greedy search that always asks the unasked
//! neighbours of the best configuration so far:
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::space::Neighbourhood;
//! use tunable_search::strategy::{Algorithm, Iterative, Outcome, Search, Step, drive};
//!
//! struct Greedy;
//!
//! impl Algorithm for Greedy {
//!     type Options = ();
//!     fn new((): (), _search: &mut Search) -> Self {
//!         Greedy
//!     }
//!     fn step(&mut self, search: &mut Search) -> Step {
//!         // Until something is known, the driver fills the batch with random configurations.
//!         let Some((best, _)) = search.memo().best() else {
//!             return Step::Wait;
//!         };
//!         let space = Arc::clone(search.space());
//!         for p in space.neighbours(&space.indices(best), Neighbourhood::Hamming) {
//!             search.ask(p); // false when asked before or when the batch is full
//!         }
//!         Step::Wait // for the results; the rest of the batch is random
//!     }
//! }
//!
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20).build().unwrap());
//! let mut greedy = Iterative::<Greedy>::new(Arc::clone(&space), (), 1);
//! let run = drive(&mut greedy, 100, 4, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 12).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 100);
//! assert!(run.trials.iter().any(|t| space.indices(t.position) == [7, 12]));
//! ```

pub mod annealing;
mod ask_tell;
mod config;
mod continuous;
pub mod diff_evo;
mod drive;
pub mod ensemble;
mod exhaustive;
pub mod firefly;
#[cfg(test)]
mod fixtures;
pub mod genetic;
mod held;
pub mod hold;
pub mod iterative;
mod landing;
pub mod local_search;
mod memo;
mod moves;
pub mod multi;
pub(crate) mod options;
pub mod portfolio;
pub mod pso;
pub mod random;
mod repair;
mod search;
mod spec;
mod starts;

pub use annealing::{Annealing, AnnealingAlgorithm, AnnealingOptions, Restart};
pub use ask_tell::{Outcome, PENALTY, Strategy, Trial};
pub use continuous::Continuous;
pub use diff_evo::{DeCrossover, DiffEvo, DiffEvoAlgorithm, DiffEvoOptions, Mutation};
pub use drive::{Driver, Evaluated, Evaluator, Observer, Progress, RunRecord, Stopped, drive};
pub use ensemble::{Ensemble, EnsembleOptions};
pub use exhaustive::Exhaustive;
pub use firefly::{Firefly, FireflyAlgorithm, FireflyOptions};
pub use genetic::{Crossover, Genetic, GeneticAlgorithm, GeneticOptions};
pub use hold::{Hold, HoldOptions};
pub use iterative::{Algorithm, FALLBACK, Iterative, Stall, Step};
pub use local_search::{Improvement, LocalSearch, LocalSearchAlgorithm, LocalSearchOptions};
pub use memo::Memo;
pub use moves::{Neighbour, neighbours};
pub use multi::{AUTO_MULTI, MULTI_STRATEGY_NAMES, MultiStrategy, MultiTrial, build_multi};
pub use portfolio::{OnlinePortfolio, OnlinePortfolioOptions};
pub use pso::{Pso, PsoAlgorithm, PsoOptions};
pub use random::{RandomAlgorithm, RandomSearch};
pub use repair::{Repair, repair_candidates};
pub use search::Search;
pub use spec::{StrategyError, StrategySpec};

use crate::Space;
use crate::bayes::{Bayes, BayesOptions, Design, Fallback};
use std::sync::Arc;

/// The options of `bayes` that `auto` sets: one field per option, named as the option (and
/// its key); every other option keeps its default ([`BayesOptions`]). Each field says what the
/// option does and why `auto` sets it; the evidence (the selection runs, their commands and
/// figures) is in `docs/notes/choosing-auto.md`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoPreset {
    /// `dual`: a second model, whose points also have alignment coordinates of this weight, is
    /// told every result, and whichever of the two predicts better picks. A smooth model over
    /// value indices reads an effect periodic in a parameter's value (a block size fast at
    /// multiples of the warp size, a tile at powers of two) as noise; the second model sees it.
    pub dual: f64,
    /// `guard`: while the picking model's mean concordance over its last results is below this
    /// (a coin scores 0.5), its picks go to the `fallback`: a model that does not predict does
    /// not pick, and random search's guarantee holds on landscapes it cannot represent.
    pub guard: f64,
    /// `stall`: once this many valid results in a row have not improved the best, every other
    /// pick goes to the `fallback` until one does. On plateaus and needles a model can predict
    /// well and still propose configurations that improve nothing.
    pub stall: usize,
    /// `trial_scope`: until the predictive check has judged the picking model, it picks its best
    /// of about this many random unvisited configurations. A model fitted to five points sends
    /// its picks where it knows least, the corners of the space; on landscapes where random
    /// search is nearly done after a dozen evaluations those picks lose the run.
    pub trial_scope: usize,
    /// `design`: the initial sample keeps the distribution of every parameter's values over the
    /// valid configurations, its first configuration uniform: its first evaluation is random
    /// search's, and the others pick each value about as often as random picks do, where an
    /// equal-width design's extra picks of a constrained parameter's rare extreme values lose
    /// on kernels whose extremes are slow.
    pub design: Design,
    /// `cover`: every this-many acquisition rounds, while a value of a parameter of at most
    /// eight values is untried, the model picks its best configuration with such a value. A
    /// young model extends its trend over every value of a parameter and never tries a value
    /// that is a code path of its own (an unroll factor's 0, a switch) when the trend points
    /// away from it; the initial sample, drawn in proportion, leaves the rare values to these
    /// rounds.
    pub cover: usize,
    /// `overlap`: the weight of the covariance part that counts the parameters two
    /// configurations have at the same value. A model of index distances relates a tile of 1 to
    /// a tile of 2 and a switch's two settings as neighbours; seen as categories, a few results
    /// tell that one value of a switch or a choice is good wherever its index lies.
    pub overlap: f64,
    /// `overlap_levels`: the overlap part compares the parameters of at most this many values,
    /// the switches and short choices. It holds for `bayes`'s first `early` (50) evaluations:
    /// it lets a few results tell more, and later it costs the search the precision of the
    /// index distances.
    pub overlap_levels: usize,
    /// `fallback`: the picks the check or a stall hands over are far ones: of a few random
    /// unasked configurations, the one whose nearest asked configuration differs from it in the
    /// most parameters, so that a stalled search's random picks do not land beside the
    /// configurations already asked.
    pub fallback: Fallback,
    /// `clip`: for the first `clip_until` evaluations the models see every result capped at the
    /// higher of this quantile of the results told and `clip_ratio` times the best, so that the
    /// slow bulk's trends cannot lead a young model away from the fast few.
    pub clip: f64,
    /// `clip_ratio`: the cap relative to the best result (see `clip`).
    pub clip_ratio: f64,
    /// `clip_until`: the evaluations the caps hold for; afterwards the models see the results
    /// themselves, where the slow configurations' differences lead to the fast ones (cliffs,
    /// decoys).
    pub clip_until: usize,
}

impl AutoPreset {
    /// The options of `bayes` the preset stands for: its fields, and the defaults elsewhere.
    pub fn options(&self) -> BayesOptions {
        BayesOptions {
            dual: self.dual,
            guard: self.guard,
            stall: self.stall,
            trial_scope: self.trial_scope,
            design: self.design,
            cover: self.cover,
            overlap: self.overlap,
            overlap_levels: self.overlap_levels,
            fallback: self.fallback,
            clip: self.clip,
            clip_ratio: self.clip_ratio,
            clip_until: self.clip_until,
            ..BayesOptions::default()
        }
    }
}

/// The strategy `auto` (the default of `#[tunable]`) stands for: Bayesian optimization
/// ([`Bayes`]) with `bayes`'s defaults (an initial sample of five, expected improvement on a
/// Gaussian process of the logarithm of the run time, polishing rounds, a feasibility model),
/// an initial sample drawn in proportion and the safeguards of [`AutoPreset`], for kernels whose
/// landscape is unlike anything it was chosen on. On a space with clock or power-limit
/// parameters it is [`DIAGONAL_ILS`] instead ([`build_for`]): with the clocks held at their
/// highest level for time ([`Hold`]), over every parameter for anything else.
///
/// It was chosen on the shared Kernel Tuner caches and the generated stress landscapes of
/// [`crate::sim::stress`], at every budget, by leave-one-family-out selection; the procedure,
/// its commands and its figures are in `docs/notes/choosing-auto.md`. Re-run the selection when
/// strategies change.
///
/// The same strategy can be written as an option string of `bayes`:
///
/// ```
/// use tunable_search::bayes::BayesOptions;
/// use tunable_search::strategy::{AUTO, StrategySpec};
/// let spec: StrategySpec = "bayes:dual=1:guard=0.55:stall=60:trial_scope=64:\
///     design=proportional:cover=1:overlap=0.3:overlap_levels=6:fallback=far:clip=0.5:\
///     clip_ratio=1.5:clip_until=25"
///     .parse()
///     .unwrap();
/// assert_eq!(spec.apply(BayesOptions::default()).unwrap(), AUTO.options());
/// ```
pub const AUTO: AutoPreset = AutoPreset {
    dual: 1.0,
    guard: 0.55,
    stall: 60,
    trial_scope: 64,
    design: Design::Proportional,
    cover: 1,
    overlap: 0.3,
    overlap_levels: 6,
    fallback: Fallback::Far,
    clip: 0.5,
    clip_ratio: 1.5,
    clip_until: 25,
};

/// The names [`build`] accepts.
pub const STRATEGY_NAMES: [&str; 14] = [
    "auto",
    "random",
    "exhaustive",
    "genetic",
    "diff_evo",
    "pso",
    "firefly",
    "annealing",
    "mls",
    "ils",
    "ensemble",
    "portfolio",
    "bayes",
    "hold",
];

/// Iterated local search by adjacent moves (the next or previous value of one parameter) that
/// does not restart within a tuning's budget (after 1,000 perturbations in a row without
/// improvement): the member of the multi-objective `auto` ([`multi::sweep`]). The front's
/// configuration of the other parameters lies among the few fastest, whose one-value neighbours
/// are fast too, and a restart or a jump to a far value leaves them.
pub const ADJACENT_ILS: &str = "ils:neighbour=adjacent:no_improvement=1000";

/// [`ADJACENT_ILS`] with diagonal moves ([`Neighbour::Diagonal`]):
/// where no one-parameter step is better, two parameters move at once, each by one value. It is
/// `auto` on a space of clocks and other parameters ([`build_for`]: over the other parameters
/// with the clocks held for time, over every parameter for anything else). Tiles' extents and
/// warps interact, so a local optimum of one-parameter steps is often not one of two-parameter
/// steps (on the generated clock landscapes, 5 to 17 optima of the first kind against 1 to 3 of
/// the second).
pub const DIAGONAL_ILS: &str = "ils:neighbour=diagonal:no_improvement=1000";

/// What a strategy minimizes, as far as choosing the strategy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Minimized {
    /// Run time: raising a clock or power limit never makes it worse, so `auto` holds those at
    /// their highest level ([`Hold`]) while [`DIAGONAL_ILS`] searches the rest.
    Time,
    /// Anything else (energy, power, a metric): its best clock is often a middle one, and `auto`
    /// searches every parameter, clocks included ([`DIAGONAL_ILS`] where there are clocks).
    Other,
}

/// [`build`], for a run that minimizes `minimized`. `auto` on a space with clock or power-limit
/// parameters and others to search is [`DIAGONAL_ILS`]: for [`Minimized::Time`] inside [`Hold`]
/// (the clocks held at their highest level), for [`Minimized::Other`] over every parameter. On
/// generated clock landscapes it scores above one-parameter moves ([`ADJACENT_ILS`]) and well
/// above the model-based search `auto` is elsewhere, for time and for energy; the figures and
/// their commands are in `docs/results.md`, "Clock spaces: time and energy".
/// Every other spec is built as [`build`] builds it.
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::SpaceBuilder;
/// use tunable_search::strategy::{self, Minimized};
/// let space = Arc::new(
///     SpaceBuilder::new()
///         .param("tile", [1, 2, 4, 8])
///         .param("nvml_gr_clock", [1200, 1500, 1800])
///         .build()
///         .unwrap(),
/// );
/// let auto = "auto".parse().unwrap();
/// let mut s = strategy::build_for(&auto, Arc::clone(&space), 1, Minimized::Time).unwrap();
/// // The first configurations asked are at the highest clock.
/// for p in s.ask(1) {
///     assert_eq!(space.values(p)[1].as_f64(), Some(1800.0));
/// }
/// ```
pub fn build_for(
    spec: &StrategySpec,
    space: Arc<Space>,
    seed: u64,
    minimized: Minimized,
) -> Result<Box<dyn Strategy>, StrategyError> {
    if spec.name == "auto" && held::Held::dims(&space).is_some() {
        spec.expect_no_options()?;
        return match minimized {
            Minimized::Time => Ok(Box::new(Hold::new(space, HoldOptions::default(), seed)?)),
            Minimized::Other => build(&DIAGONAL_ILS.parse()?, space, seed),
        };
    }
    build(spec, space, seed)
}

/// Builds the strategy a spec names, for a space and a seed.
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::{SpaceBuilder, strategy::{self, StrategySpec}};
/// let space = Arc::new(SpaceBuilder::new().param("a", 0..10).param("b", 0..10).build().unwrap());
/// let spec: StrategySpec = "genetic:popsize=10".parse().unwrap();
/// let mut s = strategy::build(&spec, space, 1).unwrap();
/// assert_eq!(s.ask(3).len(), 3);
/// ```
pub fn build(
    spec: &StrategySpec,
    space: Arc<Space>,
    seed: u64,
) -> Result<Box<dyn Strategy>, StrategyError> {
    Ok(match spec.name.as_str() {
        "auto" => {
            spec.expect_no_options()?;
            Box::new(Bayes::new(space, AUTO.options(), seed))
        }
        "random" => {
            spec.expect_no_options()?;
            Box::new(RandomSearch::new(space, (), seed))
        }
        "exhaustive" => {
            spec.expect_no_options()?;
            Box::new(Exhaustive::new(space))
        }
        "genetic" => Box::new(Genetic::new(
            space,
            spec.apply(GeneticOptions::default())?,
            seed,
        )),
        "diff_evo" => Box::new(DiffEvo::new(
            space,
            spec.apply(DiffEvoOptions::default())?,
            seed,
        )),
        "pso" => Box::new(Pso::new(space, spec.apply(PsoOptions::default())?, seed)),
        "firefly" => Box::new(Firefly::new(
            space,
            spec.apply(FireflyOptions::default())?,
            seed,
        )),
        "annealing" => Box::new(Annealing::new(
            space,
            spec.apply(AnnealingOptions::default())?,
            seed,
        )),
        "mls" => Box::new(LocalSearch::new(
            space,
            spec.apply(LocalSearchOptions::multi_start())?,
            seed,
        )),
        "ils" => Box::new(LocalSearch::new(
            space,
            spec.apply(LocalSearchOptions::iterated())?,
            seed,
        )),
        "ensemble" => Box::new(Ensemble::new(
            space,
            spec.apply(EnsembleOptions::default())?,
            seed,
        )?),
        "hold" => Box::new(Hold::new(space, spec.apply(HoldOptions::default())?, seed)?),
        "portfolio" => Box::new(OnlinePortfolio::new(
            space,
            spec.apply(OnlinePortfolioOptions::default())?,
            seed,
        )?),
        "bayes" => Box::new(Bayes::new(
            space,
            spec.apply(BayesOptions::default())?,
            seed,
        )),
        other => {
            return Err(StrategyError::UnknownStrategy {
                name: other.to_owned(),
                known: STRATEGY_NAMES.join(", "),
            });
        }
    })
}
