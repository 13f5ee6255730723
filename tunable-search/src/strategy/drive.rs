//! # Driving a strategy
//!
//! The one loop that runs a [`Strategy`]: ask for a batch of configurations, hand the batch to an
//! [`Evaluator`], tell the strategy every outcome, until the budget of unique evaluations is
//! spent, the space is exhausted or a stop condition holds. `cargo tunable bench` (replaying
//! Kernel Tuner caches) and the runtime's tuner (measuring on the device) both run it, so a
//! strategy behaves the same in a simulation and in a real tuning.
//!
//! - [`drive`] is the plain form: an objective of one position, batches of a fixed size.
//! - [`Driver`] is the builder (argmin's `Executor` is the model): a wall-time limit
//!   ([`Driver::max_time`]) or any stop condition ([`Driver::stop_when`]), [`Observer`]s that see
//!   every evaluation (progress bars, logs), configurations evaluated before the strategy asks
//!   ([`Driver::first`], a baseline), and an [`Evaluator`] that evaluates a whole batch.
//!
//! The evaluator decides how a batch is evaluated, which the driver does not care about: one
//! after the other on this thread, compiled in parallel first and then timed, or sent to remote
//! workers.
//!
//! ## Preparing ahead
//!
//! With [`Driver::ahead`], before each evaluation the driver hands the evaluator the positions
//! it is about to evaluate followed by those the strategy expects to ask next
//! ([`Strategy::upcoming`]), through [`Evaluator::prepare`]: a tuner compiles them on its pool
//! meanwhile, while the strategy still asks and learns one result at a time. What is evaluated,
//! and in which order, is decided by the strategy alone: preparing changes when a compilation
//! happens, never which configurations are evaluated, so a run with it asks exactly what a run
//! without it asks. What it returns for one configuration is any [`Evaluated`] type: an [`Outcome`], or
//! a richer record (the runtime's carries the reason a configuration failed and where the result
//! came from), which the observers receive as it is.

use super::{Outcome, Strategy, Trial};
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::time::{Duration, Instant};

/// Why a run stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stopped {
    /// The budget of unique evaluations is spent.
    #[default]
    Budget,
    /// The strategy had nothing left to ask: every configuration was evaluated.
    Exhausted,
    /// The wall-time limit ([`Driver::max_time`]) passed.
    Time,
    /// The stop condition ([`Driver::stop_when`]) held.
    Condition,
}

/// What a run returns: every unique evaluation in order, the time spent in the strategy, and why
/// it stopped.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    /// Evaluations in the order they were made.
    pub trials: Vec<Trial>,
    /// Seconds spent inside `ask` and `tell`.
    pub strategy_seconds: f64,
    /// Why the run stopped.
    pub stopped: Stopped,
}

/// Where a run stands, as observers and stop conditions see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Unique evaluations so far.
    pub evaluations: usize,
    /// The budget of unique evaluations.
    pub budget: usize,
    /// The best configuration so far and its value (`None` while every evaluation failed).
    pub best: Option<(usize, f64)>,
    /// Wall time since the run started.
    pub elapsed: Duration,
}

/// What an evaluator reports for one configuration: at least its [`Outcome`].
pub trait Evaluated {
    /// The outcome told to the strategy.
    fn outcome(&self) -> Outcome;
}

impl Evaluated for Outcome {
    fn outcome(&self) -> Outcome {
        *self
    }
}

/// Evaluates a batch of configurations (positions in the strategy's space).
///
/// A failing configuration is an [`Outcome::Failed`] in the report, never an `Err`: an error is
/// the evaluator's own failure (a lost connection to remote workers, say), and stops the run.
/// Any `FnMut(&[usize]) -> Vec<R>` is an evaluator that cannot fail.
pub trait Evaluator {
    /// What is reported per configuration.
    type Report: Evaluated;
    /// The evaluator's own failure.
    type Error;
    /// One report per position, in the order of `positions`.
    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Self::Report>, Self::Error>;

    /// A hint: `likely` will probably be evaluated soon, most likely first (the positions about
    /// to be evaluated come first). An evaluator may prepare them (compile them on a pool of
    /// threads, say) but must not evaluate them or let the hint change any report. Default:
    /// nothing.
    fn prepare(&mut self, likely: &[usize]) {
        let _ = likely;
    }
}

impl<R: Evaluated, F: FnMut(&[usize]) -> Vec<R>> Evaluator for F {
    type Report = R;
    type Error = Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<R>, Infallible> {
        Ok(self(positions))
    }
}

/// Sees every evaluation of a run, in the order they were made; any
/// `FnMut(&Progress, &Trial, &R)` is one.
pub trait Observer<R> {
    /// One evaluation, with the progress counting it.
    fn observe(&mut self, progress: &Progress, trial: &Trial, report: &R);
    /// The run stopped (default: nothing).
    fn finish(&mut self, _progress: &Progress, _stopped: Stopped) {}
}

impl<R, F: FnMut(&Progress, &Trial, &R)> Observer<R> for F {
    fn observe(&mut self, progress: &Progress, trial: &Trial, report: &R) {
        self(progress, trial, report);
    }
}

type StopCondition<'a> = Box<dyn FnMut(&Progress) -> bool + 'a>;
type BatchSizer<'a> = Box<dyn FnMut(&Progress) -> usize + 'a>;

/// Runs a strategy with limits and observers (the builder form of [`drive`]): asks for a batch,
/// hands it to an [`Evaluator`], shows every evaluation to the [`Observer`]s and tells the
/// strategy, until the budget is spent, the space is exhausted, the time limit passed or the
/// stop condition holds.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tunable_search::SpaceBuilder;
/// use tunable_search::strategy::{self, Driver, Outcome, Progress, Stopped};
///
/// let space = Arc::new(SpaceBuilder::new().param("x", 0..50).build().unwrap());
/// let mut s = strategy::build(&"random".parse().unwrap(), Arc::clone(&space), 1).unwrap();
/// let mut seen = 0;
/// let mut count = |p: &Progress, _: &strategy::Trial, _: &Outcome| seen = p.evaluations;
/// let run = Driver::new(s.as_mut(), 30)
///     .batch(4)
///     .max_time(Duration::from_secs(60))
///     .stop_when(|p| p.best.is_some_and(|b| b.1 == 0.0))
///     .observe(&mut count)
///     .run(&mut |batch: &[usize]| batch.iter().map(|&p| Outcome::Value(p as f64)).collect::<Vec<_>>())
///     .unwrap();
/// assert!(run.trials.len() <= 30);
/// assert_eq!(seen, run.trials.len());
/// assert!(matches!(run.stopped, Stopped::Budget | Stopped::Condition));
/// ```
pub struct Driver<'a, R> {
    strategy: &'a mut dyn Strategy,
    budget: usize,
    batch: usize,
    max_time: Option<Duration>,
    stop: Option<StopCondition<'a>>,
    observers: Vec<&'a mut dyn Observer<R>>,
    first: Vec<usize>,
    sizer: Option<BatchSizer<'a>>,
    ahead: usize,
}

impl<'a, R: Evaluated> Driver<'a, R> {
    /// A run of `strategy` under a budget of `budget` unique evaluations, asking one
    /// configuration at a time, without time limit or observers.
    pub fn new(strategy: &'a mut dyn Strategy, budget: usize) -> Self {
        Driver {
            strategy,
            budget,
            batch: 1,
            max_time: None,
            stop: None,
            observers: Vec::new(),
            first: Vec::new(),
            sizer: None,
            ahead: 0,
        }
    }

    /// Before each evaluation, hands the evaluator ([`Evaluator::prepare`]) the positions about
    /// to be evaluated and up to `n` more that the strategy expects to ask next
    /// ([`Strategy::upcoming`], timed as the strategy's); 0 (the default) hands nothing. Which
    /// positions are evaluated is unchanged by construction: the strategy alone decides them,
    /// one ask at a time as without hints, and a hint never reaches it.
    pub fn ahead(mut self, n: usize) -> Self {
        self.ahead = n;
        self
    }

    /// Evaluates `positions` first, before the strategy asks for anything (a baseline such as a
    /// kernel's default configuration, a warm start). They count against the budget; their
    /// outcomes are told to the strategy before its first ask, so a model-based strategy starts
    /// from them, and again, without a second evaluation, if it asks for one of them.
    pub fn first(mut self, positions: &[usize]) -> Self {
        for &p in positions {
            if !self.first.contains(&p) {
                self.first.push(p);
            }
        }
        self
    }

    /// Sizes each batch with `size` (at least 1), asked before every batch with the progress so
    /// far, in place of a fixed [`batch`](Self::batch): a tuner that compiles a batch ahead
    /// sizes it by the compile/measure ratio it observes.
    pub fn batch_by(mut self, size: impl FnMut(&Progress) -> usize + 'a) -> Self {
        self.sizer = Some(Box::new(size));
        self
    }

    /// Asks for `n` configurations at a time (at least 1; default 1). The last batch is cut to
    /// the budget left.
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = n.max(1);
        self
    }

    /// Stops once `limit` has passed, checked before each batch (a batch started is finished).
    pub fn max_time(mut self, limit: Duration) -> Self {
        self.max_time = Some(limit);
        self
    }

    /// Stops once `condition` holds, checked before each batch.
    pub fn stop_when(mut self, condition: impl FnMut(&Progress) -> bool + 'a) -> Self {
        self.stop = Some(Box::new(condition));
        self
    }

    /// Adds an observer of every evaluation.
    pub fn observe(mut self, observer: &'a mut dyn Observer<R>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Runs until the budget is spent, the space is exhausted, the time limit passed or the stop
    /// condition holds; stops at the evaluator's first error.
    ///
    /// # Panics
    /// If the strategy asks for a position twice, or the evaluator returns another number of
    /// reports than it was given positions: both break a contract.
    pub fn run<E>(mut self, evaluator: &mut E) -> Result<RunRecord, E::Error>
    where
        E: Evaluator<Report = R> + ?Sized,
    {
        let start = Instant::now();
        let mut rec = RunRecord::default();
        let mut progress = Progress {
            evaluations: 0,
            budget: self.budget,
            best: None,
            elapsed: Duration::ZERO,
        };
        let mut first = std::mem::take(&mut self.first);
        first.truncate(self.budget);
        if self.ahead > 0 && !first.is_empty() {
            evaluator.prepare(&first);
        }
        // Evaluated first and told to the strategy before it asks for anything; told again,
        // without a second evaluation, should it ask for one of them all the same.
        let first = self.evaluate(&first, evaluator, &mut progress, &mut rec, start)?;
        self.tell(&first, &mut rec);
        let mut untold: HashMap<usize, Outcome> =
            first.iter().map(|t| (t.position, t.outcome)).collect();
        let mut seen: HashSet<usize> = first.iter().map(|t| t.position).collect();
        rec.stopped = loop {
            progress.elapsed = start.elapsed();
            if progress.evaluations >= self.budget {
                break Stopped::Budget;
            }
            if self.max_time.is_some_and(|m| progress.elapsed >= m) {
                break Stopped::Time;
            }
            if self.stop.as_mut().is_some_and(|stop| stop(&progress)) {
                break Stopped::Condition;
            }
            let batch = match &mut self.sizer {
                Some(size) => size(&progress).max(1),
                None => self.batch,
            };
            let t = Instant::now();
            let mut asked = self
                .strategy
                .ask(batch.min(self.budget - progress.evaluations));
            if asked.is_empty() {
                rec.strategy_seconds += t.elapsed().as_secs_f64();
                break Stopped::Exhausted;
            }
            let known: Vec<Trial> = asked
                .iter()
                .filter_map(|&position| {
                    let outcome = untold.remove(&position)?;
                    Some(Trial { position, outcome })
                })
                .collect();
            if !known.is_empty() {
                asked.retain(|p| known.iter().all(|k| k.position != *p));
                self.strategy.tell(&known);
            }
            rec.strategy_seconds += t.elapsed().as_secs_f64();
            for &p in &asked {
                assert!(seen.insert(p), "strategy asked for position {p} twice");
            }
            if self.ahead > 0 && !asked.is_empty() {
                let t = Instant::now();
                let mut likely = asked.clone();
                let left = self.budget - progress.evaluations - asked.len();
                if left > 0 {
                    let next = self.strategy.upcoming(self.ahead.min(left));
                    likely.extend(next.into_iter().filter(|p| !seen.contains(p)));
                }
                rec.strategy_seconds += t.elapsed().as_secs_f64();
                evaluator.prepare(&likely);
            }
            let trials = self.evaluate(&asked, evaluator, &mut progress, &mut rec, start)?;
            self.tell(&trials, &mut rec);
        };
        for o in &mut self.observers {
            o.finish(&progress, rec.stopped);
        }
        Ok(rec)
    }

    /// Tells the strategy `trials` (nothing when there are none), timed as the strategy's.
    fn tell(&mut self, trials: &[Trial], rec: &mut RunRecord) {
        if trials.is_empty() {
            return;
        }
        let t = Instant::now();
        self.strategy.tell(trials);
        rec.strategy_seconds += t.elapsed().as_secs_f64();
    }

    /// Evaluates one batch: the evaluator's reports, counted in `progress`, shown to the
    /// observers and appended to `rec`; returns the batch's trials.
    fn evaluate<E>(
        &mut self,
        positions: &[usize],
        evaluator: &mut E,
        progress: &mut Progress,
        rec: &mut RunRecord,
        start: Instant,
    ) -> Result<Vec<Trial>, E::Error>
    where
        E: Evaluator<Report = R> + ?Sized,
    {
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let reports = evaluator.evaluate(positions)?;
        assert_eq!(
            reports.len(),
            positions.len(),
            "the evaluator must report every position it is given"
        );
        let trials: Vec<Trial> = positions
            .iter()
            .zip(&reports)
            .map(|(&position, r)| Trial {
                position,
                outcome: r.outcome(),
            })
            .collect();
        for (trial, report) in trials.iter().zip(&reports) {
            progress.evaluations += 1;
            if let Outcome::Value(v) = trial.outcome
                && progress.best.is_none_or(|(_, b)| v < b)
            {
                progress.best = Some((trial.position, v));
            }
            progress.elapsed = start.elapsed();
            for o in &mut self.observers {
                o.observe(progress, trial, report);
            }
        }
        rec.trials.extend_from_slice(&trials);
        Ok(trials)
    }
}

/// Runs `strategy` until `budget` unique evaluations are spent (or the space is exhausted),
/// asking for `batch` configurations at a time and evaluating them one by one with `objective`.
pub fn drive(
    strategy: &mut dyn Strategy,
    budget: usize,
    batch: usize,
    mut objective: impl FnMut(usize) -> Outcome,
) -> RunRecord {
    let mut each = |batch: &[usize]| batch.iter().map(|&p| objective(p)).collect::<Vec<_>>();
    match Driver::new(strategy, budget).batch(batch).run(&mut each) {
        Ok(rec) => rec,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::strategy::{Exhaustive, RandomSearch};
    use std::sync::Arc;

    fn space(n: i64) -> Arc<crate::Space> {
        Arc::new(SpaceBuilder::new().param("x", 0..n).build().unwrap())
    }

    #[test]
    fn batches_reach_the_evaluator_whole_and_the_budget_holds() {
        let s = space(20);
        let mut strat = RandomSearch::new(Arc::clone(&s), (), 3);
        let mut sizes = Vec::new();
        let mut eval = |b: &[usize]| {
            sizes.push(b.len());
            b.iter()
                .map(|&p| Outcome::Value(p as f64))
                .collect::<Vec<_>>()
        };
        let rec = Driver::new(&mut strat, 10).batch(4).run(&mut eval).unwrap();
        assert_eq!(sizes, [4, 4, 2]);
        assert_eq!(rec.trials.len(), 10);
        assert_eq!(rec.stopped, Stopped::Budget);
    }

    #[test]
    fn a_sizer_sizes_each_batch_from_the_progress() {
        let s = space(20);
        let mut strat = RandomSearch::new(Arc::clone(&s), (), 3);
        let mut sizes = Vec::new();
        let mut eval = |b: &[usize]| {
            sizes.push(b.len());
            b.iter()
                .map(|&p| Outcome::Value(p as f64))
                .collect::<Vec<_>>()
        };
        // One at first, then as many as evaluated so far, never 0.
        Driver::new(&mut strat, 12)
            .batch_by(|p| p.evaluations)
            .run(&mut eval)
            .unwrap();
        assert_eq!(sizes, [1, 1, 2, 4, 4]);
    }

    #[test]
    fn exhaustion_time_and_condition_stop_a_run() {
        let s = space(5);
        let value = |b: &[usize]| {
            b.iter()
                .map(|&p| Outcome::Value(p as f64))
                .collect::<Vec<_>>()
        };
        let rec = Driver::new(&mut Exhaustive::new(Arc::clone(&s)), 100)
            .run(&mut { value })
            .unwrap();
        assert_eq!((rec.trials.len(), rec.stopped), (5, Stopped::Exhausted));
        let rec = Driver::new(&mut Exhaustive::new(Arc::clone(&s)), 100)
            .max_time(Duration::ZERO)
            .run(&mut { value })
            .unwrap();
        assert_eq!((rec.trials.len(), rec.stopped), (0, Stopped::Time));
        // Exhaustive asks 0, 1, 2, ...: the best is 0 from the first evaluation on.
        let rec = Driver::new(&mut Exhaustive::new(Arc::clone(&s)), 100)
            .stop_when(|p| p.evaluations >= 3)
            .run(&mut { value })
            .unwrap();
        assert_eq!((rec.trials.len(), rec.stopped), (3, Stopped::Condition));
    }

    /// A report richer than an outcome: a label beside it.
    struct Labelled(Outcome, &'static str);

    impl Evaluated for Labelled {
        fn outcome(&self) -> Outcome {
            self.0
        }
    }

    #[test]
    fn observers_see_every_report_and_the_best_so_far() {
        /// Evaluations so far, the best then and the label; then why the run stopped.
        type Sighting = (usize, Option<(usize, f64)>, &'static str);
        struct Seen(Vec<Sighting>, Option<Stopped>);
        impl Observer<Labelled> for Seen {
            fn observe(&mut self, p: &Progress, t: &Trial, r: &Labelled) {
                assert_eq!(t.outcome, r.0);
                self.0.push((p.evaluations, p.best, r.1));
            }
            fn finish(&mut self, p: &Progress, stopped: Stopped) {
                assert_eq!(p.evaluations, self.0.len());
                self.1 = Some(stopped);
            }
        }
        let mut seen = Seen(Vec::new(), None);
        let mut eval = |b: &[usize]| {
            b.iter()
                .map(|&p| match p {
                    0 => Labelled(Outcome::Failed, "failed"),
                    p => Labelled(Outcome::Value(10.0 - p as f64), "ok"),
                })
                .collect::<Vec<_>>()
        };
        Driver::new(&mut Exhaustive::new(space(3)), 3)
            .batch(2)
            .observe(&mut seen)
            .run(&mut eval)
            .unwrap();
        assert_eq!(
            seen.0,
            [
                (1, None, "failed"),
                (2, Some((1, 9.0)), "ok"),
                (3, Some((2, 8.0)), "ok")
            ]
        );
        assert_eq!(seen.1, Some(Stopped::Budget));
    }

    #[test]
    fn hints_come_before_each_evaluation_and_change_nothing_evaluated() {
        /// Records the hints and the evaluations in the order they came.
        struct Hinted(Vec<(bool, Vec<usize>)>);
        impl Evaluator for Hinted {
            type Report = Outcome;
            type Error = Infallible;
            fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Outcome>, Infallible> {
                self.0.push((false, positions.to_vec()));
                Ok(positions
                    .iter()
                    .map(|&p| Outcome::Value((p * 7 % 11) as f64))
                    .collect())
            }
            fn prepare(&mut self, likely: &[usize]) {
                self.0.push((true, likely.to_vec()));
            }
        }
        let s = space(30);
        let mut hinted = Hinted(Vec::new());
        let rec = Driver::new(&mut Exhaustive::new(Arc::clone(&s)), 8)
            .first(&[4])
            .ahead(3)
            .run(&mut hinted)
            .unwrap();
        let order: Vec<usize> = rec.trials.iter().map(|t| t.position).collect();
        assert_eq!(order, [4, 0, 1, 2, 3, 5, 6, 7]);
        // The first position, then per ask: the position asked first, then the strategy's
        // next three, less those evaluated already (4), cut to the budget left.
        assert_eq!(hinted.0[0], (true, vec![4]));
        assert_eq!(hinted.0[2], (true, vec![0, 1, 2, 3]));
        assert_eq!(hinted.0[6], (true, vec![2, 3, 5]));
        assert_eq!(hinted.0[hinted.0.len() - 2], (true, vec![7]));
        for pair in hinted.0.chunks(2) {
            assert!(
                pair[0].0 && !pair[1].0 && pair[0].1[0] == pair[1].1[0],
                "{pair:?}"
            );
        }
        // Without hints, and with a strategy that gives none: the same evaluations.
        for name in ["exhaustive", "random", "genetic", "auto"] {
            let run = |ahead: usize| {
                let mut st =
                    crate::strategy::build(&name.parse().unwrap(), Arc::clone(&s), 5).unwrap();
                let mut hinted = Hinted(Vec::new());
                let rec = Driver::new(st.as_mut(), 12)
                    .ahead(ahead)
                    .run(&mut hinted)
                    .unwrap();
                rec.trials.iter().map(|t| t.position).collect::<Vec<_>>()
            };
            assert_eq!(run(0), run(16), "{name}");
        }
    }

    #[test]
    fn first_positions_count_and_are_told_when_asked_without_a_second_evaluation() {
        let s = space(6);
        let mut evaluated = Vec::new();
        let mut eval = |b: &[usize]| {
            evaluated.extend_from_slice(b);
            b.iter()
                .map(|&p| Outcome::Value(p as f64))
                .collect::<Vec<_>>()
        };
        // Exhaustive asks 0, 1, 2, ...: it asks for 2 and learns it without a new evaluation.
        let rec = Driver::new(&mut Exhaustive::new(Arc::clone(&s)), 4)
            .first(&[2, 2])
            .batch(2)
            .run(&mut eval)
            .unwrap();
        assert_eq!(evaluated, [2, 0, 1, 3]);
        let order: Vec<usize> = rec.trials.iter().map(|t| t.position).collect();
        assert_eq!(order, [2, 0, 1, 3]);
        assert_eq!(rec.stopped, Stopped::Budget);
        // The whole space: the first position is evaluated once, the space exhausted.
        let mut evaluated = Vec::new();
        let mut eval = |b: &[usize]| {
            evaluated.extend_from_slice(b);
            b.iter().map(|_| Outcome::Failed).collect::<Vec<_>>()
        };
        let rec = Driver::new(&mut Exhaustive::new(s), 100)
            .first(&[5])
            .run(&mut eval)
            .unwrap();
        assert_eq!(evaluated, [5, 0, 1, 2, 3, 4]);
        assert_eq!(rec.stopped, Stopped::Exhausted);
    }

    #[test]
    fn first_positions_are_told_before_the_first_ask() {
        /// Logs every ask and tell, asking like exhaustive search.
        struct Log(Exhaustive, Vec<String>);
        impl Strategy for Log {
            fn ask(&mut self, n: usize) -> Vec<usize> {
                let asked = self.0.ask(n);
                self.1.push(format!("ask {asked:?}"));
                asked
            }
            fn tell(&mut self, trials: &[Trial]) {
                let told: Vec<usize> = trials.iter().map(|t| t.position).collect();
                self.1.push(format!("tell {told:?}"));
            }
        }
        let mut log = Log(Exhaustive::new(space(6)), Vec::new());
        let mut eval = |b: &[usize]| b.iter().map(|&p| Outcome::Value(p as f64)).collect();
        Driver::new(&mut log, 4)
            .first(&[4, 1])
            .run(&mut eval)
            .unwrap();
        // Told at once; 1, asked anyway, is told again without a second evaluation.
        assert_eq!(
            log.1,
            [
                "tell [4, 1]",
                "ask [0]",
                "tell [0]",
                "ask [1]",
                "tell [1]",
                "ask [2]",
                "tell [2]"
            ]
        );
    }

    #[test]
    fn an_evaluator_error_stops_the_run() {
        struct Broken(usize);
        impl Evaluator for Broken {
            type Report = Outcome;
            type Error = String;
            fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Outcome>, String> {
                self.0 += 1;
                if self.0 == 2 {
                    return Err("workers gone".into());
                }
                Ok(positions.iter().map(|_| Outcome::Failed).collect())
            }
        }
        let r = Driver::new(&mut Exhaustive::new(space(10)), 10).run(&mut Broken(0));
        assert_eq!(r.unwrap_err(), "workers gone");
    }
}
