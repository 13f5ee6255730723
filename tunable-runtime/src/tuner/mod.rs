//! # The tuner
//!
//! Owns the tuning of a kernel, from the call that finds no configuration to the stored winner.
//!
//! ```text
//!  call <kernel>(args) ──> hook::autotune        (the first-run hook, what generated code calls)
//!        │  lookup: Hit (tuned in this process / baked / stored) -> run it
//!        │          Pending (being tuned by another caller)     -> run the baked fallback
//!        │          Miss (claimed by this caller)               -> tune:
//!        v
//!  tune ── Driver (tunable_search::strategy::drive): the default first, then
//!   │        ask(batch) -> Evaluator -> tell, until the budget is spent
//!   │        Journaled: answers what the journal holds, records what is measured
//!   │          Variants: per variant, on the call's arguments: verify the output once,
//!   │                    then time it through a Measurement; a panic is a failure
//!   │        observers: Bar (progress on a terminal), Log (TUNABLE_LOG, panics)
//!   v
//!  best -> store (tuned/<kernel>.bin) -> summary on stderr -> settle the lookup
//! ```
//!
//! The tuner drives a strategy with batch asks and hands each batch to an [`Evaluator`]; it
//! does not care who runs the evaluations. [`Variants`] runs them one after the other on the
//! caller's thread; an evaluator that compiles a batch in parallel before timing it, re-times
//! the best few to confirm them, or hands the batch to remote workers plugs in at the same
//! place, under the same [`Journaled`] layer and the same observers.
//!
//! A variant that panics, returns an error, computes a wrong output or takes a non-finite time
//! is a failed configuration with its reason, recorded and told to the strategy like any result:
//! tuning never aborts because one variant failed.
//!
//! - [`tune`]: a strategy over a space, with any evaluator and observers;
//! - [`hook`]: the first-run hook, [`hook::autotune`], and the kernel's static description;
//! - [`lookup`]: where a call's configuration comes from ([`Lookup`]), and the baked table;
//! - [`portable`]: what a shipped binary runs on a device nobody tuned on (the portable set);
//! - [`fallback`]: a shipped call whose tuned configuration fails runs the default instead;
//! - [`warm`]: what a tuning on a new device evaluates first (other devices' findings);
//! - [`session`]: the settings and report of a `cargo tunable tune` session;
//! - [`clocking`]: the clock control of a tuning whose space has clock parameters;
//! - [`evaluate`]: evaluate mode, one configuration measured for a distributed worker;
//! - [`Variants`] and [`Call`]: measuring the variants of a `#[tunable]` kernel;
//! - [`Closure`]: measuring with a closure of the position;
//! - [`Journaled`]: the journal in front of any evaluator;
//! - [`Bar`], [`Log`]: the observers of a tuning; [`Summary`]: the line it ends with.

pub mod clocking;
mod closure;
mod confirm;
pub mod evaluate;
pub mod fallback;
pub mod hook;
mod journal_layer;
pub mod lookup;
pub mod metering;
mod multi;
mod observer;
mod panic;
mod planted;
pub mod portable;
mod report;
mod scoring;
pub mod session;
pub(crate) mod spec;
mod summary;
#[cfg(test)]
mod testing;
mod time_split;
mod variants;
pub mod warm;

pub use closure::Closure;
pub use confirm::{Retime, confirm};
pub use journal_layer::Journaled;
pub use lookup::{Lookup, Origin};
pub use observer::{Bar, Log};
pub use panic::{capture, panic_message};
pub use report::{Cost, EnergyUse, Evaluation, Point, ResultSource};
pub use summary::Summary;
pub use time_split::TimeSplit;
pub use tunable_search::strategy::{Evaluator, Observer, Progress, Stopped};
pub use variants::{Call, Expected, Run, Variants, Verify};

use crate::RuntimeError;
use crate::evaluation::{self, EvalContext};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tunable_search::Space;
use tunable_search::objective::{Goal, Objective};
use tunable_search::strategy::{self, Driver, Minimized, StrategySpec, Trial};

/// What to spend and how to search.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneOptions {
    /// Unique evaluations at most (default 100).
    pub budget: usize,
    /// Configurations asked of the strategy at a time (default 1; 0 is taken as 1). A batch of
    /// 2 or more of a GPU kernel is [prebuilt](crate::prebuild) on a pool of threads while it
    /// is timed. The first-run hook takes it from `TUNABLE_BATCH`.
    pub batch: usize,
    /// Whether the configurations the strategy expects to ask next are prebuilt speculatively
    /// on a pool of threads ([`crate::prebuild`]; default off): the evaluator is told them
    /// before each evaluation ([`Evaluator::prepare`], as many as
    /// [`prebuild::threads`](crate::prebuild::threads)). Never changes which configurations are
    /// evaluated, nor their order. The first-run hook takes it from `TUNABLE_PREBUILD`.
    pub prebuild: bool,
    /// Wall-time limit in seconds, checked between batches (default none).
    pub max_seconds: Option<f64>,
    /// The strategy spec, e.g. `genetic` or `random` (default `auto`, the strategy
    /// `tunable_search::strategy::AUTO` names). With several objectives, a multi-objective
    /// strategy (`tunable_search::strategy::MULTI_STRATEGY_NAMES`; `auto` is
    /// `tunable_search::strategy::AUTO_MULTI`).
    pub strategy: String,
    /// Seed of the strategy (default [`SEED`](tunable_search::defaults::SEED), 1): a strategy
    /// is deterministic for its seed, so two runs with the same seed and the same results ask
    /// for the same configurations in the same order. The first-run hook takes it from the
    /// attribute's `seed` or `TUNABLE_SEED` ([`crate::settings::seed`]).
    pub seed: u64,
    /// Positions evaluated before the strategy asks for anything, within the budget (default
    /// none): the first-run hook puts the kernel's default configuration here, as the
    /// baseline of its summary and the first incumbent of the measurement's early stop, then
    /// the [warm start](warm) from other devices' entries.
    pub first: Vec<usize>,
    /// What the tuning pursues (default time alone): one objective or several, and the
    /// metrics they name. The first-run hook takes it from the attribute's `objective`,
    /// `objectives`, `metric` and `prefer`, or `TUNABLE_OBJECTIVE` and `TUNABLE_PREFER`
    /// ([`crate::settings::objective`]).
    pub goal: Goal,
    /// The problem-size key of the tuning, which metrics may read (default 0).
    pub key: u64,
    /// The meter an objective that needs energy reads ([`metering::select`]; default none). A
    /// tuning for energy without one fails before any evaluation.
    pub meter: Option<metering::Metering>,
    /// The hold on the device's clocks when the space has clock parameters
    /// ([`clocking::select`], which checks the rights; default none): each configuration's
    /// clocks are applied before it is measured; the settings in force before are put back
    /// when the last clone of the hold is dropped.
    pub clocks: Option<clocking::Clocking>,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            budget: tunable_search::defaults::BUDGET,
            batch: 1,
            prebuild: false,
            max_seconds: None,
            strategy: tunable_search::defaults::STRATEGY.to_owned(),
            seed: tunable_search::defaults::SEED,
            first: Vec::new(),
            goal: Goal::default(),
            key: 0,
            meter: None,
            clocks: None,
        }
    }
}

/// What a tuning run found.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The best configuration by the goal: its position and time in milliseconds (`None` if
    /// all failed). With several objectives, the point of the front the goal's rule chooses.
    pub best: Option<(usize, f64)>,
    /// The best configurations evaluated by the objective the strategy is told, best first
    /// ([`best`](Self::best) first), at most [`KEPT`](tunable_search::portable::KEPT):
    /// positions and times in milliseconds. What the tuned file keeps beside the winner.
    pub top: Vec<(usize, f64)>,
    /// The value the strategy was told of the best configuration (milliseconds, joules,
    /// joule-seconds, a metric, negated when it is maximized; `None` if all failed).
    pub score: Option<f64>,
    /// The Pareto front of what was evaluated, in the goal's objectives, best first in the
    /// first ([`Goal::front`]): one point, the best, for a single objective.
    pub front: Vec<Point>,
    /// Unique evaluations spent, including those answered by the journal.
    pub evaluations: usize,
    /// Of those, how many were measured in this run.
    pub measured: usize,
    /// Failed configurations with their reasons.
    pub failures: Vec<(usize, String)>,
    /// The configurations timed in full (not stopped early) and their times, fastest first, at
    /// most [`CONTENDERS`]: the candidates of [`confirm`].
    pub contenders: Vec<(usize, f64)>,
    /// Configurations whose timing stopped early, behind the incumbent.
    pub early: usize,
    /// Wall time of the run in seconds.
    pub seconds: f64,
    /// Where the wall time went.
    pub spent: TimeSplit,
    /// Why the run stopped.
    pub stopped: Stopped,
}

/// How many of the fastest configurations a [`TuneReport`] keeps as contenders.
pub const CONTENDERS: usize = 8;

/// Tunes: drives the strategy `opts` names over `space`, asking `opts.batch` configurations at a
/// time and evaluating each batch with `evaluator`, every evaluation shown to `observers`.
/// Errors are the tuner's own (a bad strategy spec, the evaluator's failure), never a failed
/// configuration's.
///
/// ```
/// use std::sync::Arc;
/// use tunable_runtime::tuner::{Closure, TuneOptions, tune};
/// use tunable_search::SpaceBuilder;
///
/// let space = Arc::new(SpaceBuilder::new().param("x", 0..20).build().unwrap());
/// let opts = TuneOptions { budget: 20, batch: 4, strategy: "random".into(), ..TuneOptions::default() };
/// let mut measure = Closure(|p: usize| match p {
///     3 => Err("wrong output".to_owned()),
///     p => Ok(100.0 - p as f64),
/// });
/// let report = tune(&space, &opts, &mut measure, &mut []).unwrap();
/// assert_eq!(report.best, Some((19, 81.0)));
/// assert_eq!(report.failures, [(3, "wrong output".to_owned())]);
/// ```
pub fn tune<E>(
    space: &Arc<Space>,
    opts: &TuneOptions,
    evaluator: &mut E,
    observers: &mut [&mut dyn Observer<Evaluation>],
) -> Result<TuneReport, RuntimeError>
where
    E: Evaluator<Report = Evaluation> + ?Sized,
    RuntimeError: From<E::Error>,
{
    // (The errors are converted by name: `E::Error` converts into `RuntimeError` too, which
    // leaves `?` alone ambiguous.)
    let spec: StrategySpec = opts.strategy.parse().map_err(RuntimeError::Strategy)?;
    // Several objectives: a multi-objective strategy, told each configuration's objectives
    // through the table the scoring layer fills.
    let table = opts.goal.several().then(multi::Values::default);
    let mut strategy: Box<dyn strategy::Strategy> = match &table {
        None => {
            // For time, `auto` holds clocks and power limits at their highest level.
            let minimized = match opts.goal.single() {
                Some(Objective::Time) => Minimized::Time,
                _ => Minimized::Other,
            };
            strategy::build_for(&spec, Arc::clone(space), opts.seed, minimized)
        }
        Some(t) => multi::Multi::build(
            &spec,
            Arc::clone(space),
            opts.goal.aims().len(),
            opts.seed,
            Arc::clone(t),
        )
        .map(|m| Box::new(m) as Box<dyn strategy::Strategy>),
    }
    .map_err(RuntimeError::Strategy)?;
    if opts.goal.needs_energy() && opts.meter.is_none() {
        return Err(RuntimeError::NotMeasurable {
            objective: opts.goal.to_string(),
            reason: crate::meter::NotMeasurable::NoDevice {
                what: "no energy meter was selected for this tuning".to_owned(),
            },
        });
    }
    let mut times = std::collections::HashMap::new();
    let mut points = Vec::new();
    let start = Instant::now();
    let (mut measured, mut failures, mut early) = (0, Vec::new(), 0);
    let mut contenders = Vec::new();
    let mut count = |_: &Progress, t: &Trial, e: &Evaluation| {
        measured += usize::from(e.source == ResultSource::Measured);
        early += usize::from(e.early);
        if let Ok(ms) = e.result {
            times.insert(t.position, ms);
            if !e.values.is_empty() && !points.iter().any(|p: &Point| p.position == t.position) {
                points.push(Point {
                    position: t.position,
                    ms,
                    values: e.values.clone(),
                });
            }
        }
        match &e.result {
            Err(reason) => failures.push((t.position, reason.clone())),
            Ok(ms) if !e.early => contenders.push((t.position, *ms)),
            Ok(_) => {}
        }
    };
    let mut driver = Driver::new(strategy.as_mut(), opts.budget)
        .batch(opts.batch.max(1))
        .first(&opts.first)
        .observe(&mut count);
    if let Some(s) = opts.max_seconds {
        driver = driver.max_time(Duration::from_secs_f64(s.max(0.0)));
    }
    if opts.prebuild {
        // The evaluator is told what the strategy is about to ask and expects to ask next; what
        // it is asked to evaluate is the strategy's alone.
        driver = driver.ahead(crate::prebuild::threads());
    }
    for o in observers.iter_mut() {
        driver = driver.observe(&mut **o);
    }
    let mut scored = scoring::Scoring {
        inner: evaluator,
        goal: &opts.goal,
        space,
        key: opts.key,
        table,
    };
    let mut timed = time_split::Timed {
        inner: &mut scored,
        split: TimeSplit::default(),
    };
    TimeSplit::set_live(TimeSplit::default());
    // The tuning's own evaluation context: each evaluation's split adds up here, where `timed`
    // takes it after each batch.
    let context = EvalContext {
        meter: opts.meter.clone(),
        clocks: opts.clocks.clone(),
        ..EvalContext::default()
    };
    let (run, _) = evaluation::scope(context, || driver.run(&mut timed));
    let run = run.map_err(RuntimeError::from)?;
    let seconds = start.elapsed().as_secs_f64();
    let spent = TimeSplit {
        strategy: run.strategy_seconds,
        ..timed.split
    }
    .with_wall(seconds);
    contenders.sort_by(|a: &(usize, f64), b| a.1.total_cmp(&b.1));
    contenders.truncate(CONTENDERS);
    // Ranked by the objective's value (what the strategy was told), kept with their times.
    let mut ranked: Vec<(usize, f64)> = run
        .trials
        .iter()
        .filter_map(|t| Some((t.position, t.outcome.value()?)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    ranked.truncate(tunable_search::portable::KEPT);
    let mut top: Vec<(usize, f64)> = ranked
        .iter()
        .filter_map(|&(p, _)| Some((p, *times.get(&p)?)))
        .collect();
    // The front of what was measured; with several objectives, the rule's point ships, first
    // in the kept list.
    let values: Vec<Vec<f64>> = points.iter().map(|p| p.values.clone()).collect();
    let front: Vec<Point> = opts
        .goal
        .front(&values)
        .into_iter()
        .map(|i| points[i].clone())
        .collect();
    let chosen = opts.goal.choose(&values).map(|i| &points[i]);
    if let (true, Some(c)) = (opts.goal.several(), chosen) {
        top.retain(|t| t.0 != c.position);
        top.insert(0, (c.position, c.ms));
        top.truncate(tunable_search::portable::KEPT);
    }
    let told = |p: usize| {
        let values = &points.iter().find(|q| q.position == p)?.values;
        Some(opts.goal.told(values))
    };
    Ok(TuneReport {
        best: top.first().copied(),
        score: top.first().and_then(|t| told(t.0)),
        top,
        front,
        evaluations: run.trials.len(),
        measured,
        failures,
        contenders,
        early,
        seconds,
        spent,
        stopped: run.stopped,
    })
}

/// A configuration by name, as logs and summaries show it: `block=64, unroll=4`.
pub fn describe(space: &Space, position: usize) -> String {
    space
        .params()
        .iter()
        .zip(space.values(position))
        .map(|(p, v)| format!("{}={v}", p.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;

    #[test]
    fn failures_are_data_panics_included_and_the_best_wins() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = Arc::new(SpaceBuilder::new().param("a", 0..20).build().unwrap());
        let opts = TuneOptions {
            budget: 20,
            batch: 3,
            strategy: "random".into(),
            first: vec![7],
            ..TuneOptions::default()
        };
        let mut eval = Closure(|p: usize| match p {
            3 => panic!("boom"),
            4 => Err("wrong output".into()),
            5 => Ok(f64::NAN),
            p => Ok(100.0 - p as f64),
        });
        let mut panics = Vec::new();
        let mut seen = |_: &Progress, t: &Trial, e: &Evaluation| {
            if e.panicked {
                panics.push(t.position);
            }
        };
        let r = tune(&space, &opts, &mut eval, &mut [&mut seen]).unwrap();
        assert_eq!(r.evaluations, 20);
        assert_eq!(r.measured, 20);
        assert_eq!(r.best, Some((19, 81.0)));
        assert_eq!(r.top.len(), tunable_search::portable::KEPT);
        assert_eq!(r.top[..3], [(19, 81.0), (18, 82.0), (17, 83.0)]);
        assert_eq!(r.stopped, Stopped::Budget);
        assert_eq!(panics, [3]);
        let mut failures = r.failures.clone();
        failures.sort();
        assert_eq!(
            failures,
            [
                (3, "panicked: boom".to_owned()),
                (4, "wrong output".to_owned()),
                (5, "non-finite time NaN".to_owned())
            ]
        );
    }

    /// What a fed tuning evaluated (in order), what its fake kernel saw happen (collected or
    /// run, and the tile), the failures' reasons and the report.
    type FedTuning = (Vec<usize>, Vec<(bool, i64)>, Vec<String>, TuneReport);

    /// A fake GPU kernel over `tile`: collecting, it hands a build over (and notes the tile);
    /// running, it asks its "backend" and reports `tile` ms of device time; tile 13 fails.
    fn fed_tuning(space: &Arc<Space>, strategy: &str, prebuild: bool) -> FedTuning {
        use crate::measure::{Repeats, report_device_time};
        use crate::prebuild::{self, Build};
        use testing::Tile;
        // (collected, tile), (run, tile) in the order they happened.
        let events = std::cell::RefCell::new(Vec::new());
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(t)) if prebuild::collecting() => {
                events.borrow_mut().push((true, t));
                prebuild::defer(Build::new(false, || {}));
                Err("deferred".to_owned())
            }
            Call::Run(&Tile(t)) => {
                prebuild::note_request(false);
                events.borrow_mut().push((false, t));
                if t == 13 {
                    return Err("launch failed".to_owned());
                }
                report_device_time(1.0 + t as f64);
                Ok(None)
            }
            Call::Output => Ok(Some(vec![1.0])),
            Call::Answer => Ok(None),
        };
        let mut variants = Variants::new(space, &mut run, None, Repeats::new(1, 3));
        let opts = TuneOptions {
            budget: 25,
            prebuild,
            strategy: strategy.into(),
            first: vec![20],
            ..TuneOptions::default()
        };
        let mut order = Vec::new();
        let mut seen = |_: &Progress, t: &Trial, _: &Evaluation| order.push(t.position);
        let report = tune(space, &opts, &mut variants, &mut [&mut seen]).unwrap();
        drop(variants);
        let failures = report.failures.iter().map(|f| f.1.clone()).collect();
        (order, events.into_inner(), failures, report)
    }

    #[test]
    fn a_prebuild_pool_builds_guesses_and_the_strategy_alone_decides_what_is_evaluated() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = Arc::new(SpaceBuilder::new().param("tile", 0..40).build().unwrap());
        for strategy in ["exhaustive", "random", "auto"] {
            let (plain, events_plain, failed_plain, _) = fed_tuning(&space, strategy, false);
            let (fed, events, failed_fed, report) = fed_tuning(&space, strategy, true);
            let collected: Vec<i64> = events.iter().filter(|e| e.0).map(|e| e.1).collect();
            let nothing: Vec<&(bool, i64)> = events_plain.iter().filter(|e| e.0).collect();
            // The same configurations in the same order, failures included as data.
            assert_eq!(fed, plain, "{strategy}");
            assert_eq!(failed_fed, failed_plain, "{strategy}");
            assert_eq!(report.evaluations, 25);
            assert!(nothing.is_empty(), "{strategy}: prebuilt without prebuild");
            if crate::prebuild::threads() < 2 {
                continue;
            }
            // Configurations were handed to the pool once each, and only as guesses: a
            // configuration about to be measured is built by the caller's thread, so one that
            // was handed over was handed over before the evaluation before its own.
            let mut handed = collected.clone();
            handed.sort_unstable();
            handed.dedup();
            assert_eq!(handed.len(), collected.len(), "{strategy}: {collected:?}");
            assert!(!collected.is_empty(), "{strategy}: nothing prebuilt");
            let at = |e: (bool, i64)| events.iter().position(|x| *x == e);
            for w in fed.windows(2) {
                let (this, next) = (w[0] as i64, w[1] as i64);
                if let Some(handed) = at((true, next)) {
                    assert!(
                        handed < at((false, this)).unwrap(),
                        "{strategy}: {events:?}"
                    );
                }
            }
            if strategy == "exhaustive" {
                // Exact guesses: every configuration after the first two was handed over.
                for p in &fed[2..] {
                    assert!(collected.contains(&(*p as i64)), "{p} not prepared");
                }
            }
        }
    }

    #[test]
    fn the_kernels_own_time_is_inside_the_measurement_and_covers_every_timed_run() {
        use crate::measure::Repeats;
        use testing::Tile;
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = Arc::new(SpaceBuilder::new().param("tile", 1..7).build().unwrap());
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(t)) => {
                std::thread::sleep(std::time::Duration::from_millis(t as u64));
                Ok(None)
            }
            Call::Output => {
                // Reading the output takes 2 ms: the check's share of the measurement.
                std::thread::sleep(std::time::Duration::from_millis(2));
                Ok(Some(vec![1.0]))
            }
            Call::Answer => Ok(None),
        };
        let expected = Some(Expected {
            output: vec![1.0],
            tolerance: 0.0,
        });
        let mut variants = Variants::new(&space, &mut run, expected, Repeats::new(0, 3));
        let opts = TuneOptions {
            budget: 6,
            strategy: "exhaustive".into(),
            ..TuneOptions::default()
        };
        let (mut timed, mut costs) = (0.0, 0.0);
        let mut seen = |_: &Progress, _: &Trial, e: &Evaluation| {
            timed += e.runs.iter().sum::<f64>();
            let c = e.cost.expect("a variant's cost is known");
            assert!(c.kernel_ms <= c.measure_ms, "{c:?}");
            // The output's read and comparison are apart from the kernels' runs.
            assert!(c.check_ms >= 2.0, "{c:?}");
            assert!(c.kernel_ms + c.check_ms <= c.measure_ms, "{c:?}");
            // Every timed run is a kernel run (and so is the checked run, which is the one
            // run of a configuration stopped at its warm-up).
            assert!(c.kernel_ms >= e.runs.iter().sum::<f64>(), "{c:?} {e:?}");
            costs += c.kernel_ms;
        };
        let report = tune(&space, &opts, &mut variants, &mut [&mut seen]).unwrap();
        let spent = report.spent;
        assert!(spent.kernels * 1e3 >= timed, "{spent:?} against {timed} ms");
        assert!(spent.kernels <= spent.measure, "{spent:?}");
        assert!(
            (spent.kernels * 1e3 - costs).abs() < 1e-6,
            "{spent:?} {costs}"
        );
    }

    /// Two objectives, time and a metric over a parameter, searched by the default
    /// multi-objective strategy through the driver: every point is on the front, and the rule
    /// chooses among them.
    #[test]
    fn the_default_multi_objective_strategy_searches_through_the_driver() {
        let space = Arc::new(SpaceBuilder::new().param("a", 0..20).build().unwrap());
        let goal = Goal::new(
            &["size = a"],
            &["time", "min size"],
            Some("least_size within 1.05 of fastest"),
            &["a"],
        )
        .unwrap();
        let opts = TuneOptions {
            budget: 20,
            batch: 2,
            goal,
            ..TuneOptions::default()
        };
        let mut eval = Closure(|p: usize| Ok(100.0 - p as f64));
        let r = tune(&space, &opts, &mut eval, &mut []).unwrap();
        assert_eq!(r.evaluations, 20);
        assert_eq!(r.front.len(), 20, "{:?}", r.front);
        // The fastest is a = 19 (81 ms); within 5% of it (85.05 ms), the least a is 15.
        assert_eq!(r.best, Some((15, 85.0)));
        // A single-objective strategy is refused for several objectives.
        let opts = TuneOptions {
            strategy: "genetic".into(),
            ..opts
        };
        let e = tune(&space, &opts, &mut eval, &mut []).unwrap_err();
        assert!(e.to_string().contains("for several objectives"), "{e}");
    }

    #[test]
    fn a_bad_strategy_is_the_tuners_error() {
        let space = Arc::new(SpaceBuilder::new().param("a", 0..4).build().unwrap());
        let opts = TuneOptions {
            strategy: "nonsense".into(),
            ..TuneOptions::default()
        };
        let e = tune(&space, &opts, &mut Closure(|_| Ok(1.0)), &mut []).unwrap_err();
        assert!(matches!(e, RuntimeError::Strategy(_)), "{e}");
    }
}

#[cfg(test)]
pub(crate) mod energy_tests {
    use super::metering::Metering;
    use super::*;
    use crate::measure::{Repeats, report_device_time};
    use crate::meter::{Fake, Meter, NotMeasurable};
    use std::cell::Cell;
    use testing::Tile;
    use tunable_search::SpaceBuilder;
    use tunable_search::objective::Objective;

    /// The planted time (ms) and power (W) of `tile` in 1..=6: the fastest is 1, the least
    /// energy (power times time) is 4, the least energy-delay product is 2, each ahead of the
    /// next by 40% or more; no two tiles use the same energy, so that the ranking by energy
    /// is one order.
    ///
    /// | tile | 1 | 2 | 3 | 4 | 5 | 6 |
    /// |---|---|---|---|---|---|---|
    /// | mJ | 400 | 100 | 180 | 70 | 150 | 192 |
    /// | mJ·ms | 400 | 200 | 540 | 280 | 750 | 1152 |
    pub(super) fn planted(tile: i64) -> (f64, f64) {
        let watts = [400.0, 50.0, 60.0, 17.5, 30.0, 32.0];
        (tile as f64, watts[(tile - 1) as usize])
    }

    /// Whether `a` is `b` to rounding (a relative 1e-9).
    pub(super) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    /// A whole tuning of a CPU kernel over `tile` in 1..=6, exhaustive, with a planted meter
    /// whose power the kernel sets; tile `broken`'s reading fails. The report and every
    /// evaluation.
    ///
    /// The fake reads its power, which is the planted power of the configuration running
    /// whenever a sample is taken: each reading is that power exactly, and the energy the
    /// tuner derives from it and the planted device time is exact too, however the machine's
    /// load delays the sampling.
    fn tuning(objective: Objective, broken: Option<i64>) -> (TuneReport, Vec<(usize, Evaluation)>) {
        tuning_for(objective.into(), broken)
    }

    /// [`tuning`] for any goal, with key 2.
    fn tuning_for(goal: Goal, broken: Option<i64>) -> (TuneReport, Vec<(usize, Evaluation)>) {
        let space = Arc::new(SpaceBuilder::new().param("tile", 1..7).build().unwrap());
        let fake = Arc::new(Fake::new(0.0).reading_power());
        let meter: Arc<dyn Meter> = Arc::clone(&fake) as Arc<dyn Meter>;
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(t)) => {
                let (ms, watts) = planted(t);
                fake.set_watts(watts);
                fake.set_failure((broken == Some(t)).then(|| NotMeasurable::Failed {
                    meter: "fake".into(),
                    call: "read".into(),
                    reason: "planted".into(),
                }));
                report_device_time(ms);
                Ok(None)
            }
            Call::Output | Call::Answer => Ok(None),
        };
        let mut variants = Variants::new(&space, &mut run, None, Repeats::new(0, 3));
        let opts = TuneOptions {
            budget: 6,
            // Every configuration, by a strategy of the goal's kind.
            strategy: if goal.several() {
                "random"
            } else {
                "exhaustive"
            }
            .into(),
            meter: goal.needs_energy().then(|| Metering {
                meter,
                min: Duration::from_millis(20),
                prefix: "fake",
            }),
            goal,
            key: 2,
            ..TuneOptions::default()
        };
        let mut seen = Vec::new();
        let mut observe =
            |_: &Progress, t: &Trial, e: &Evaluation| seen.push((t.position, e.clone()));
        let report = tune(&space, &opts, &mut variants, &mut [&mut observe]).unwrap();
        (report, seen)
    }

    #[test]
    fn the_objective_chooses_the_winner_and_its_time_stays_recorded() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        // Positions are tiles minus one.
        let (time, _) = tuning(Objective::Time, None);
        assert_eq!(time.best, Some((0, 1.0)));
        assert_eq!(time.score, Some(1.0));
        let (energy, seen) = tuning(Objective::Energy, None);
        assert_eq!(energy.best, Some((3, 4.0)), "{:?}", energy.top);
        // 17.5 W for 4 ms, measured through the window: joules (0.07), not a time (4) nor an
        // EDP (0.00028), to rounding.
        let joules = energy.score.unwrap();
        assert!(close(joules, 0.07), "{joules}");
        assert_eq!(seen.len(), 6);
        for (position, e) in &seen {
            let (ms, watts) = planted(*position as i64 + 1);
            let used = e.energy.as_ref().expect("every configuration's energy");
            assert!(!e.early, "{e:?}");
            assert!(
                close(used.watts, watts) && close(used.joules, watts * ms / 1e3),
                "{e:?}"
            );
        }
        let (edp, _) = tuning(Objective::Edp, None);
        assert_eq!(edp.best, Some((1, 2.0)), "{:?}", edp.top);
        // The ranking is the objective's, with times: tile 4, then 2.
        let order: Vec<usize> = energy.top.iter().map(|t| t.0).collect();
        assert_eq!(order[..2], [3, 1]);
        assert_eq!(energy.top[1], (1, 2.0));
    }

    #[test]
    fn a_failed_reading_is_a_failed_configuration_with_its_reason() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (report, _) = tuning(Objective::Energy, Some(4));
        assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
        let (position, reason) = &report.failures[0];
        assert_eq!(*position, 3);
        assert!(
            reason.starts_with("energy: not measurable here"),
            "{reason}"
        );
        // The next least energy wins: tile 2.
        assert_eq!(report.best, Some((1, 2.0)));
    }

    #[test]
    fn an_energy_objective_without_a_meter_fails_before_any_evaluation() {
        let space = Arc::new(SpaceBuilder::new().param("a", 0..4).build().unwrap());
        let opts = TuneOptions {
            goal: Objective::Edp.into(),
            ..TuneOptions::default()
        };
        let calls = Cell::new(0);
        let mut eval = Closure(|_| {
            calls.set(calls.get() + 1);
            Ok(1.0)
        });
        let e = tune(&space, &opts, &mut eval, &mut []).unwrap_err();
        assert!(matches!(e, RuntimeError::NotMeasurable { .. }), "{e}");
        assert_eq!(calls.get(), 0);
    }

    #[test]
    fn a_metric_of_the_users_is_maximized_over_the_measured_energy() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        // key * tile^4 / energy: 5, 320, 900, 7314, 8333, 13500 per joule; tile 6 is ahead of
        // tile 5 by 62%.
        let goal = Goal::new(
            &["work_per_joule = key * tile**4 / energy"],
            &["max work_per_joule"],
            None,
            &["tile"],
        )
        .unwrap();
        let (report, seen) = tuning_for(goal, None);
        assert_eq!(report.best.map(|b| b.0), Some(5), "{:?}", report.top);
        // The strategy was told the metric negated; the front is the best point alone.
        let told = report.score.unwrap();
        assert!(close(told, -13500.0), "{told}");
        assert_eq!(report.front.len(), 1);
        assert_eq!(report.front[0].position, 5);
        assert!(
            seen.iter()
                .all(|(_, e)| e.values.len() == 1 && e.told == Some(-e.values[0]))
        );
    }

    #[test]
    fn two_objectives_keep_the_front_and_the_rule_chooses_the_winner() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        // (ms, mJ) of tiles 1..=6: (1, 400), (2, 100), (3, 180), (4, 70), (5, 150), (6, 192):
        // the front is tiles 1, 2 and 4.
        let two = |prefer: Option<&str>| {
            let goal = Goal::new(&[], &["time", "energy"], prefer, &["tile"]).unwrap();
            tuning_for(goal, None).0
        };
        let fastest = two(None);
        let front: Vec<usize> = fastest.front.iter().map(|p| p.position).collect();
        assert_eq!(front, [0, 1, 3], "{:?}", fastest.front);
        assert!(
            fastest
                .front
                .iter()
                .all(|p| p.values.len() == 2 && p.values[0] == p.ms)
        );
        assert_eq!(fastest.best, Some((0, 1.0)));
        assert_eq!(two(Some("least_energy")).best, Some((3, 4.0)));
        let within = two(Some("least_energy within 2.5 of fastest"));
        assert_eq!(within.best, Some((1, 2.0)));
        // The chosen point heads the kept list.
        assert_eq!(within.top[0], (1, 2.0));
    }
}
