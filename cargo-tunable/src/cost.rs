//! # The bench's compile and launch cost model
//!
//! `cargo tunable bench --cost-model h100` replays every run a second and a third time against a
//! simulated clock, to say what a tuning driven the same way would cost in wall time on a GPU:
//! each configuration takes `compile` seconds on one core to compile (NVRTC), and measuring it
//! takes a fixed `overhead` plus the kernel's own runs (its checked run, then `repeats` timed
//! runs, or one for a configuration clearly behind the incumbent, as the tuner's early stop
//! does), at the time the cache recorded for it. Compilation runs on a pool of `threads` cores,
//! and the measuring thread waits for a build it needs: that wait is the compile time exposed
//! on the wall. The strategy's own time is left out (the bench reports it apart).
//!
//! Two batch policies are simulated:
//!
//! - **old** (the tuner before issue 36): the strategy is asked for a batch sized by the
//!   compile/measure ratio observed so far ([`Spent::batch`]); the batch is compiled on
//!   `min(batch, threads)` threads while the measuring thread times its variants in order; a
//!   batch of one is compiled on the measuring thread. Batches change what the strategy asks.
//! - **new** (speculation): the strategy is asked for one configuration at a time; before each
//!   evaluation the pool is handed the configuration about to be measured and up to `threads`
//!   that the strategy expects next ([`Strategy::upcoming`]), newest hints first, as
//!   [`tunable_runtime::ahead::Pool`] does; a configuration whose build has not started when
//!   it is needed is compiled by the measuring thread. The configurations evaluated are those of
//!   the plain replay (asked one at a time), which the bench checks run by run.
//!
//! The presets are figures measured on 2026-11-27 (`shared/gpu-results/2026-11-27`): `h100`
//! is NVRTC at 0.090 s per configuration per core (80 to 105 ms measured), 16 cores, and 31 ms
//! of measurement overhead per configuration (35 to 37 ms measured per configuration against
//! about 4 ms of kernels), with `gemm_cuda`'s 5 repeats. Any figure can be set:
//! `h100:overhead=0.001:threads=8`.
//!
//! [`Spent::batch`]: tunable_runtime::tuner::Spent::batch
//! [`Strategy::upcoming`]: tunable_search::strategy::Strategy::upcoming

use serde::Serialize;
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tunable_runtime::tuner::Spent;
use tunable_search::Space;
use tunable_search::strategy::{self, Driver, Evaluator, Outcome, Strategy, StrategySpec};

/// The cost of compiling and measuring, per configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostModel {
    /// Seconds to compile one configuration on one core.
    pub compile: f64,
    /// Cores of the compile pool.
    pub threads: usize,
    /// Seconds of measurement per configuration beyond the kernel's own runs.
    pub overhead: f64,
    /// Timed runs of a contender.
    pub repeats: u32,
    /// The early stop's margin: a configuration slower than the incumbent by more gets one
    /// timed run.
    pub margin: f64,
}

impl CostModel {
    /// The H100 of 2026-11-27 (see the [module docs](self)).
    pub const H100: CostModel = CostModel {
        compile: 0.090,
        threads: 16,
        overhead: 0.031,
        repeats: 5,
        margin: 0.05,
    };
}

impl std::str::FromStr for CostModel {
    type Err = String;

    /// `h100[:compile=S][:threads=N][:overhead=S][:repeats=N][:margin=F]`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(':');
        let mut model = match parts.next().unwrap_or_default() {
            "h100" => CostModel::H100,
            other => return Err(format!("unknown cost model '{other}' (known: h100)")),
        };
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is not key=value"))?;
            let number = || {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| format!("{key}={value} is not a number of zero or more"))
            };
            match key {
                "compile" => model.compile = number()?,
                "overhead" => model.overhead = number()?,
                "margin" => model.margin = number()?,
                "threads" => model.threads = (number()? as usize).max(1),
                "repeats" => model.repeats = (number()? as u32).max(1),
                _ => {
                    return Err(format!(
                        "unknown cost-model key '{key}' (known: compile, threads, overhead, repeats, margin)"
                    ));
                }
            }
        }
        Ok(model)
    }
}

/// Which batch policy a simulated run follows (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// Batches sized by the observed compile/measure ratio.
    Old,
    /// One at a time, the pool fed with the strategy's expected next asks.
    New,
}

/// What a simulated run cost, in seconds, and what it evaluated.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Simulated {
    /// Simulated wall time: compile exposed plus measurement.
    pub wall: f64,
    /// Compilation the measuring thread waited for.
    pub compile_exposed: f64,
    /// Compilations run in all, speculative ones included.
    pub compiled: usize,
    /// The positions evaluated, in order.
    pub positions: Vec<usize>,
}

/// The simulated compile pool and clock.
struct Clock<'v> {
    model: CostModel,
    /// Kernel time in milliseconds per position (`None`: the configuration fails).
    values: &'v [Option<f64>],
    /// Simulated time of the measuring thread.
    now: f64,
    /// When each pool thread is free.
    free: Vec<f64>,
    /// Builds handed to the pool and not started, the next first.
    queue: VecDeque<usize>,
    /// When each build started so far finishes.
    done: HashMap<usize, f64>,
    compile_exposed: f64,
    measure: f64,
    best: f64,
    policy: Policy,
    /// The old policy's view of where the time went, for its batch size.
    spent: Rc<Cell<Spent>>,
}

impl Clock<'_> {
    /// Lets the pool start every build it can before `to`.
    fn advance(&mut self, to: f64) {
        while !self.queue.is_empty() {
            let (i, &free) = self
                .free
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("at least one thread");
            if free > to {
                break;
            }
            let p = self.queue.pop_front().expect("not empty");
            if self.done.contains_key(&p) {
                continue;
            }
            let end = free + self.model.compile;
            self.done.insert(p, end);
            self.free[i] = end;
        }
        // Threads idle until now start what is handed over next from now on.
        for f in &mut self.free {
            *f = f.max(to);
        }
    }

    /// The measuring thread needs `p` built: waits for its build, or builds it.
    fn need(&mut self, p: usize) {
        self.advance(self.now);
        let ready = match self.done.get(&p) {
            Some(&end) => end,
            None => {
                self.queue.retain(|&q| q != p);
                let end = self.now + self.model.compile;
                self.done.insert(p, end);
                end
            }
        };
        if ready > self.now {
            self.compile_exposed += ready - self.now;
            self.now = ready;
        }
    }

    /// Measures `p` on the measuring thread (after its build).
    fn measure(&mut self, p: usize) -> Outcome {
        let m = self.model;
        let (seconds, outcome) = match self.values.get(p).copied().flatten() {
            Some(ms) => {
                let behind = self.best.is_finite() && ms > self.best * (1.0 + m.margin);
                let runs = if behind { 1 } else { m.repeats };
                if !behind {
                    self.best = self.best.min(ms);
                }
                (
                    m.overhead + f64::from(1 + runs) * ms / 1e3,
                    Outcome::Value(ms),
                )
            }
            None => (m.overhead, Outcome::Failed),
        };
        self.now += seconds;
        self.measure += seconds;
        outcome
    }

    fn publish(&self) {
        self.spent.set(Spent {
            compile: self.compile_exposed,
            measure: self.measure,
            ..Spent::default()
        });
    }
}

impl Evaluator for Clock<'_> {
    type Report = Outcome;
    type Error = Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Outcome>, Infallible> {
        if self.policy == Policy::Old && positions.len() > 1 {
            // The batch's builds on a pool of their own, started now, in order.
            self.advance(self.now);
            let mut free = vec![self.now; self.model.threads.min(positions.len())];
            for &p in positions {
                if self.done.contains_key(&p) {
                    continue;
                }
                let t = free
                    .iter_mut()
                    .min_by(|a, b| a.total_cmp(b))
                    .expect("at least one thread");
                *t += self.model.compile;
                self.done.insert(p, *t);
            }
        }
        let out = positions
            .iter()
            .map(|&p| {
                self.need(p);
                self.measure(p)
            })
            .collect();
        self.publish();
        Ok(out)
    }

    fn prepare(&mut self, likely: &[usize]) {
        if self.policy != Policy::New {
            return;
        }
        self.advance(self.now);
        let mut front: Vec<usize> = Vec::with_capacity(likely.len());
        for &p in likely {
            if self.done.contains_key(&p) || front.contains(&p) {
                continue;
            }
            self.queue.retain(|&q| q != p);
            front.push(p);
        }
        for p in front.into_iter().rev() {
            self.queue.push_front(p);
        }
    }
}

/// Runs `strategy` under `policy` against the simulated clock: what it evaluated and what it
/// would have cost. `values` are the kernel times in milliseconds by position (what the replay
/// tells the strategy, failures as `None`); `first` are evaluated before the strategy asks.
pub(crate) fn simulate(
    strategy: &mut dyn Strategy,
    budget: usize,
    first: &[usize],
    values: &[Option<f64>],
    model: CostModel,
    policy: Policy,
) -> Simulated {
    let spent = Rc::new(Cell::new(Spent::default()));
    let mut clock = Clock {
        model,
        values,
        now: 0.0,
        free: vec![0.0; model.threads.max(1)],
        queue: VecDeque::new(),
        done: HashMap::new(),
        compile_exposed: 0.0,
        measure: 0.0,
        best: f64::INFINITY,
        policy,
        spent: Rc::clone(&spent),
    };
    let driver = Driver::new(strategy, budget).first(first);
    let driver = match policy {
        Policy::Old => driver.batch_by(|_| spent.get().batch(model.threads)),
        Policy::New => driver.ahead(model.threads),
    };
    let rec = match driver.run(&mut clock) {
        Ok(rec) => rec,
        Err(never) => match never {},
    };
    Simulated {
        wall: clock.compile_exposed + clock.measure,
        compile_exposed: clock.compile_exposed,
        compiled: clock.done.len(),
        positions: rec.trials.iter().map(|t| t.position).collect(),
    }
}

/// The mean cost of one policy's runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Mean {
    /// Simulated wall time per run, seconds.
    pub wall: f64,
    /// Compile time exposed per run, seconds.
    pub compile_exposed: f64,
    /// Compilations per run, speculative ones included.
    pub compiled: f64,
}

/// One strategy on one objective under both policies.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CostRow {
    /// The objective's stem.
    pub stem: String,
    /// The strategy.
    pub strategy: String,
    /// Under the old batch policy.
    pub old: Mean,
    /// Under speculation.
    pub new: Mean,
    /// Runs whose new-policy sequence of values is the plain replay's.
    pub same: usize,
    /// Runs simulated.
    pub runs: usize,
}

/// Simulates the runs of `spec` (seeds `seed`, `seed + 1`, ...) under both policies on `jobs`
/// threads. `plain` are the replay's runs with the same seeds (the values of each evaluation in
/// order), against which the new policy's sequences are checked.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_runs(
    stem: &str,
    space: &Arc<Space>,
    values: &[Option<f64>],
    plain: &[Vec<Option<f64>>],
    spec: &StrategySpec,
    (budget, seed, jobs): (usize, u64, usize),
    first: &[usize],
    model: CostModel,
) -> CostRow {
    let next = AtomicUsize::new(0);
    let results: Vec<(Simulated, Simulated)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.clamp(1, plain.len().max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= plain.len() {
                            break;
                        }
                        let seed = seed.wrapping_add(i as u64);
                        let run = |policy| {
                            let mut s = strategy::build(spec, Arc::clone(space), seed)
                                .expect("validated spec");
                            simulate(s.as_mut(), budget, first, values, model, policy)
                        };
                        mine.push((i, (run(Policy::Old), run(Policy::New))));
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<(usize, (Simulated, Simulated))> = workers
            .into_iter()
            .flat_map(|w| w.join().expect("cost worker panicked"))
            .collect();
        all.sort_by_key(|r| r.0);
        all.into_iter().map(|r| r.1).collect()
    });
    let mean = |pick: fn(&(Simulated, Simulated)) -> &Simulated| {
        let n = results.len().max(1) as f64;
        Mean {
            wall: results.iter().map(|r| pick(r).wall).sum::<f64>() / n,
            compile_exposed: results.iter().map(|r| pick(r).compile_exposed).sum::<f64>() / n,
            compiled: results.iter().map(|r| pick(r).compiled as f64).sum::<f64>() / n,
        }
    };
    let same = results
        .iter()
        .zip(plain)
        .filter(|((_, new), plain)| {
            new.positions.iter().map(|&p| values[p]).collect::<Vec<_>>() == **plain
        })
        .count();
    CostRow {
        stem: stem.to_owned(),
        strategy: spec.to_string(),
        old: mean(|r| &r.0),
        new: mean(|r| &r.1),
        same,
        runs: results.len(),
    }
}

/// The table of simulated wall times.
pub(crate) fn markdown(model: CostModel, rows: &[CostRow]) -> String {
    let mut t = format!(
        "\n## Simulated wall time (cost model: compile {:.3} s per configuration per core, {} cores, overhead {:.3} s per configuration, {} repeats)\n\n",
        model.compile, model.threads, model.overhead, model.repeats
    );
    t += "| objective | strategy | old wall s | old compile exposed s | new wall s | new compile exposed s | compilations old / new | new = replay |\n";
    t += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for r in rows {
        t += &format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} / {:.0} | {}/{} |\n",
            r.stem,
            r.strategy,
            r.old.wall,
            r.old.compile_exposed,
            r.new.wall,
            r.new.compile_exposed,
            r.old.compiled,
            r.new.compiled,
            r.same,
            r.runs
        );
    }
    let mut strategies: Vec<&str> = rows.iter().map(|r| r.strategy.as_str()).collect();
    strategies.dedup();
    strategies.sort_unstable();
    strategies.dedup();
    for s in strategies {
        let mine: Vec<&CostRow> = rows.iter().filter(|r| r.strategy == s).collect();
        let n = mine.len() as f64;
        let sum = |f: fn(&CostRow) -> f64| mine.iter().map(|r| f(r)).sum::<f64>() / n;
        t += &format!(
            "| **mean** | {s} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} / {:.0} | {}/{} |\n",
            sum(|r| r.old.wall),
            sum(|r| r.old.compile_exposed),
            sum(|r| r.new.wall),
            sum(|r| r.new.compile_exposed),
            sum(|r| r.old.compiled),
            sum(|r| r.new.compiled),
            mine.iter().map(|r| r.same).sum::<usize>(),
            mine.iter().map(|r| r.runs).sum::<usize>()
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;
    use tunable_search::strategy::drive;

    fn values(n: usize) -> Vec<Option<f64>> {
        (0..n)
            .map(|p| (p % 7 != 3).then(|| 1.0 + ((p * 37) % 50) as f64 / 10.0))
            .collect()
    }

    #[test]
    fn the_new_policy_evaluates_what_a_plain_replay_does_and_hides_the_compilation() {
        let space = Arc::new(
            SpaceBuilder::new()
                .param("a", 0..20)
                .param("b", 0..10)
                .build()
                .unwrap(),
        );
        let v = values(space.len());
        let model = CostModel::H100;
        for name in ["exhaustive", "random", "auto"] {
            let spec = name.parse().unwrap();
            let plain = |seed| {
                let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                drive(s.as_mut(), 60, 1, |p| match v[p] {
                    Some(ms) => Outcome::Value(ms),
                    None => Outcome::Failed,
                })
                .trials
                .iter()
                .map(|t| t.position)
                .collect::<Vec<_>>()
            };
            let mut s = strategy::build(&spec, Arc::clone(&space), 3).unwrap();
            let new = simulate(s.as_mut(), 60, &[], &v, model, Policy::New);
            assert_eq!(new.positions, plain(3), "{name}");
            let mut s = strategy::build(&spec, Arc::clone(&space), 3).unwrap();
            let old = simulate(s.as_mut(), 60, &[], &v, model, Policy::Old);
            assert_eq!(old.positions.len(), 60, "{name}");
            // Every evaluation is measured at least once, with its overhead.
            assert!(new.wall >= 60.0 * model.overhead, "{name}: {new:?}");
            assert!(new.compiled >= 60, "{name}");
        }
        // Exhaustive: every guess is right, so only the first build is waited for in full.
        let mut s = strategy::build(&"exhaustive".parse().unwrap(), Arc::clone(&space), 1).unwrap();
        let new = simulate(s.as_mut(), 100, &[], &v, model, Policy::New);
        let mut s = strategy::build(&"exhaustive".parse().unwrap(), Arc::clone(&space), 1).unwrap();
        let old = simulate(s.as_mut(), 100, &[], &v, model, Policy::Old);
        assert!(
            new.compile_exposed < 2.0 * model.compile,
            "{new:?} against {old:?}"
        );
        assert!(old.compile_exposed > new.compile_exposed, "{old:?}");
        assert!(new.wall < old.wall);
    }

    #[test]
    fn parses_presets_and_overrides() {
        let m: CostModel = "h100:overhead=0.001:threads=8".parse().unwrap();
        assert_eq!((m.overhead, m.threads, m.compile), (0.001, 8, 0.090));
        assert!("a100".parse::<CostModel>().is_err());
        assert!("h100:speed=3".parse::<CostModel>().is_err());
        assert!("h100:compile=-1".parse::<CostModel>().is_err());
    }
}
