//! # The bench's compile and launch cost model
//!
//! `cargo tunable bench --cost-model h100` replays every run a second and a third time against a
//! simulated clock, to say what a tuning driven the same way would cost in wall time on a GPU:
//! each configuration takes `compile` seconds on one core to compile (NVRTC), and measuring it
//! takes a fixed `overhead` plus the kernel's own runs (its checked run, then `repeats` timed
//! runs, or one for a configuration clearly behind the incumbent, as the tuner's early stop
//! does), at the time the cache recorded for it. Compilation runs on a pool of `threads`
//! threads, and the measuring thread waits for a build it needs: that wait is the compile time
//! exposed on the wall. The strategy's own time is left out (the bench reports it apart).
//!
//! The machine's CPU is `cores` cores shared by the builds running at once: with more builds
//! than cores, each goes at `cores / builds` of a core's speed (a compiler that does not build
//! faster on more threads, as NVRTC on an H200 machine of 16 cores, is a machine of few
//! cores). A build the measuring thread runs itself shares them too; its measuring does not.
//!
//! Two policies are simulated, both asking the strategy for one configuration at a time, so
//! that both evaluate the configurations of the plain replay (the bench checks it run by run):
//!
//! - **plain** (the runtime's default): each configuration is compiled by the measuring thread
//!   when it is needed;
//! - **prebuild** (`TUNABLE_PREBUILD=on`): before each evaluation the pool is handed up to
//!   `depth` configurations that the strategy expects next ([`Strategy::upcoming`]), newest
//!   first, as [`tunable_runtime::prebuild::Pool`] does, the configuration about to be measured
//!   left to the measuring thread; a configuration whose build has not started when it is
//!   needed is compiled by the measuring thread. The pool lets `threads` builds run at once, or
//!   as many as the runtime's [`Gate`] finds worth it (`gate=1`).
//!
//! `depth=N` hands over N expected configurations per evaluation (default: `threads`).
//! `kernels=F` multiplies the kernel times the cache recorded.
//!
//! The presets are figures measured on real machines (their sources are in
//! `docs/notes/compile-path.md`):
//! - `h100`: NVRTC at 0.090 s per configuration per core, 16 threads on as many cores, 31 ms of
//!   measurement overhead per configuration, 5 repeats, a pool as wide as its threads;
//! - `h200`: NVRTC at 0.035 s per configuration, 16 threads but the throughput of 2 cores, 4.5
//!   ms of measurement overhead per configuration, and the runtime's gate.
//!
//! Any figure can be set: `h200:cores=4:depth=4`.
//!
//! [`Gate`]: tunable_runtime::prebuild::Gate
//! [`Strategy::upcoming`]: tunable_search::strategy::Strategy::upcoming

use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tunable_runtime::prebuild::Gate;
use tunable_search::Space;
use tunable_search::strategy::{self, Driver, Evaluator, Outcome, Strategy, StrategySpec};

/// The cost of compiling and measuring, per configuration, and the pool's rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostModel {
    /// Seconds to compile one configuration on one core.
    pub compile: f64,
    /// Threads of the compile pool.
    pub threads: usize,
    /// Cores the builds share (infinite: every build has a core of its own).
    pub cores: f64,
    /// Seconds of measurement per configuration beyond the kernel's own runs.
    pub overhead: f64,
    /// Timed runs of a contender.
    pub repeats: u32,
    /// The early stop's margin: a configuration slower than the incumbent by more gets one
    /// timed run.
    pub margin: f64,
    /// Whether the pool's width is the runtime's [`Gate`]'s (else `threads`).
    pub gate: bool,
    /// Expected configurations handed over per evaluation (`None`: `threads`).
    pub depth: Option<usize>,
    /// The factor on the kernel times recorded in the cache (a faster GPU, a smaller problem).
    pub kernels: f64,
}

impl CostModel {
    /// The H100 machine (see the [module docs](self)).
    pub const H100: CostModel = CostModel {
        compile: 0.090,
        threads: 16,
        cores: f64::INFINITY,
        overhead: 0.031,
        repeats: 5,
        margin: 0.05,
        gate: false,
        depth: None,
        kernels: 1.0,
    };

    /// The H200 machine (see the [module docs](self)), with the runtime's gate.
    pub const H200: CostModel = CostModel {
        compile: 0.035,
        threads: 16,
        cores: 2.0,
        overhead: 0.0045,
        repeats: 5,
        margin: 0.05,
        gate: true,
        depth: None,
        kernels: 1.0,
    };

    /// Expected configurations handed over per evaluation.
    fn depth(&self) -> usize {
        self.depth.unwrap_or(self.threads)
    }
}

impl std::fmt::Display for CostModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "compile {:.3} s per configuration per core, {} threads on {} cores, overhead {:.4} s per configuration, {} repeats, kernel times x {}; pool {}, {} expected configurations per evaluation",
            self.compile,
            self.threads,
            if self.cores.is_finite() {
                format!("{}", self.cores)
            } else {
                "as many".to_owned()
            },
            self.overhead,
            self.repeats,
            self.kernels,
            if self.gate {
                "width by the gate"
            } else {
                "as wide as its threads"
            },
            self.depth(),
        )
    }
}

impl std::str::FromStr for CostModel {
    type Err = String;

    /// `h100|h200[:compile=S][:threads=N][:cores=N|inf][:overhead=S][:repeats=N][:margin=F]
    /// [:gate=0|1][:depth=N][:kernels=F]`.
    fn from_str(s: &str) -> Result<Self, String> {
        const KEYS: &str =
            "compile, threads, cores, overhead, repeats, margin, gate, depth, kernels";
        let mut parts = s.split(':');
        let mut model = match parts.next().unwrap_or_default() {
            "h100" => CostModel::H100,
            "h200" => CostModel::H200,
            other => return Err(format!("unknown cost model '{other}' (known: h100, h200)")),
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
            let flag = || match value {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(format!("{key}={value} is not 0 or 1")),
            };
            match key {
                "compile" => model.compile = number()?,
                "overhead" => model.overhead = number()?,
                "margin" => model.margin = number()?,
                "threads" => model.threads = (number()? as usize).max(1),
                "cores" if value == "inf" => model.cores = f64::INFINITY,
                "cores" => model.cores = number()?.max(0.01),
                "repeats" => model.repeats = (number()? as u32).max(1),
                "gate" => model.gate = flag()?,
                "depth" => model.depth = Some(number()? as usize),
                "kernels" => model.kernels = number()?,
                _ => return Err(format!("unknown cost-model key '{key}' (known: {KEYS})")),
            }
        }
        Ok(model)
    }
}

/// Which policy a simulated run follows (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Policy {
    /// Each configuration built when it is needed.
    Plain,
    /// The pool fed with the strategy's expected next configurations.
    Prebuild,
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

/// A build on the simulated CPU.
#[derive(Debug)]
struct Running {
    position: usize,
    /// Core-seconds of work left.
    left: f64,
    /// Whether the pool runs it (else the measuring thread).
    pool: bool,
}

/// The simulated compile pool, CPU and clock.
struct Clock<'v> {
    model: CostModel,
    /// Kernel time in milliseconds per position (`None`: the configuration fails).
    values: &'v [Option<f64>],
    /// Simulated time, of the measuring thread and of the CPU alike.
    now: f64,
    /// Builds running now.
    running: Vec<Running>,
    /// Builds handed to the pool and not started, the next first.
    queue: VecDeque<usize>,
    /// When each build finished.
    done: HashMap<usize, f64>,
    /// Builds started in all.
    started: usize,
    gate: Gate,
    compile_exposed: f64,
    measure: f64,
    best: f64,
    policy: Policy,
}

impl<'v> Clock<'v> {
    /// A clock at time 0 with nothing built.
    fn new(model: CostModel, values: &'v [Option<f64>], policy: Policy) -> Self {
        Clock {
            model,
            values,
            now: 0.0,
            running: Vec::new(),
            queue: VecDeque::new(),
            done: HashMap::new(),
            started: 0,
            gate: Gate::new(model.threads),
            compile_exposed: 0.0,
            measure: 0.0,
            best: f64::INFINITY,
            policy,
        }
    }

    /// Builds the pool lets run at once now.
    fn width(&self) -> usize {
        if self.model.gate {
            self.gate.width()
        } else {
            self.model.threads
        }
    }

    fn building(&self, p: usize) -> bool {
        self.running.iter().any(|b| b.position == p)
    }

    /// Starts the queued builds the pool's width lets start now.
    fn start(&mut self) {
        loop {
            let pool = self.running.iter().filter(|b| b.pool).count();
            if pool >= self.width() {
                return;
            }
            let Some(p) = self.queue.pop_front() else {
                return;
            };
            if self.done.contains_key(&p) || self.building(p) {
                continue;
            }
            self.gate.enter();
            self.started += 1;
            self.running.push(Running {
                position: p,
                left: self.model.compile,
                pool: true,
            });
        }
    }

    /// Runs the CPU until `to`, or until the build of `until` is done.
    fn run(&mut self, to: f64, until: Option<usize>) {
        loop {
            self.start();
            if until.is_some_and(|p| self.done.contains_key(&p)) {
                return;
            }
            if self.running.is_empty() {
                assert!(to.is_finite(), "waiting for a build nobody runs");
                self.now = self.now.max(to);
                return;
            }
            // Every build at a core's speed, or an equal share of the cores.
            let rate = (self.model.cores / self.running.len() as f64).min(1.0);
            let dt = self
                .running
                .iter()
                .map(|b| b.left / rate)
                .fold(f64::INFINITY, f64::min);
            let at = self.now + dt;
            let step = (at.min(to) - self.now).max(0.0);
            for b in &mut self.running {
                b.left -= step * rate;
            }
            if at > to {
                self.now = self.now.max(to);
                return;
            }
            self.now = at;
            let waiting = !self.queue.is_empty();
            let mut i = 0;
            while i < self.running.len() {
                if self.running[i].left <= 1e-12 {
                    let b = self.running.swap_remove(i);
                    self.done.insert(b.position, at);
                    if b.pool {
                        self.gate.leave(at, waiting);
                    }
                } else {
                    i += 1;
                }
            }
        }
    }

    /// The measuring thread needs `p` built: waits for its build, or builds it.
    fn need(&mut self, p: usize) {
        self.run(self.now, None);
        if self.done.contains_key(&p) {
            return;
        }
        let from = self.now;
        if !self.building(p) {
            self.queue.retain(|&q| q != p);
            self.started += 1;
            self.running.push(Running {
                position: p,
                left: self.model.compile,
                pool: false,
            });
        }
        self.run(f64::INFINITY, Some(p));
        self.compile_exposed += self.now - from;
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
                    m.overhead + f64::from(1 + runs) * ms * m.kernels / 1e3,
                    Outcome::Value(ms),
                )
            }
            None => (m.overhead, Outcome::Failed),
        };
        self.measure += seconds;
        self.run(self.now + seconds, None);
        outcome
    }
}

impl Evaluator for Clock<'_> {
    type Report = Outcome;
    type Error = Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Outcome>, Infallible> {
        Ok(positions
            .iter()
            .map(|&p| {
                self.need(p);
                self.measure(p)
            })
            .collect())
    }

    fn prepare(&mut self, likely: &[usize]) {
        if self.policy != Policy::Prebuild {
            return;
        }
        // The measuring thread builds the configuration about to be measured itself.
        let likely = match likely.split_first() {
            Some((&next, rest)) => {
                self.queue.retain(|&q| q != next);
                rest
            }
            None => likely,
        };
        let mut front: Vec<usize> = Vec::with_capacity(likely.len());
        for &p in likely {
            if self.done.contains_key(&p) || self.building(p) || front.contains(&p) {
                continue;
            }
            self.queue.retain(|&q| q != p);
            front.push(p);
        }
        for p in front.into_iter().rev() {
            self.queue.push_front(p);
        }
        self.run(self.now, None);
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
    let mut clock = Clock::new(model, values, policy);
    let driver = Driver::new(strategy, budget).first(first);
    let driver = match policy {
        Policy::Plain => driver,
        Policy::Prebuild => driver.ahead(model.depth()),
    };
    let rec = match driver.run(&mut clock) {
        Ok(rec) => rec,
        Err(never) => match never {},
    };
    Simulated {
        wall: clock.compile_exposed + clock.measure,
        compile_exposed: clock.compile_exposed,
        compiled: clock.started,
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
    /// Each configuration built when needed.
    pub plain: Mean,
    /// Prebuilt speculatively.
    pub prebuild: Mean,
    /// Runs whose sequence of values under both policies is the plain replay's.
    pub same: usize,
    /// Runs simulated.
    pub runs: usize,
}

/// Simulates the runs of `spec` (seeds `seed`, `seed + 1`, ...) under both policies on `jobs`
/// threads. `plain` are the replay's runs with the same seeds (the values of each evaluation in
/// order), against which the simulated sequences are checked.
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
                        mine.push((i, (run(Policy::Plain), run(Policy::Prebuild))));
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
        .filter(|((plain_run, prebuilt), replay)| {
            [plain_run, prebuilt]
                .iter()
                .all(|r| r.positions.iter().map(|&p| values[p]).collect::<Vec<_>>() == **replay)
        })
        .count();
    CostRow {
        stem: stem.to_owned(),
        strategy: spec.to_string(),
        plain: mean(|r| &r.0),
        prebuild: mean(|r| &r.1),
        same,
        runs: results.len(),
    }
}

/// The table of simulated wall times.
pub(crate) fn markdown(model: CostModel, rows: &[CostRow]) -> String {
    let mut t = format!("\n## Simulated wall time (cost model: {model})\n\n");
    t += "| objective | strategy | plain wall s | plain compile exposed s | prebuild wall s | prebuild compile exposed s | compilations plain / prebuild | = replay |\n";
    t += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for r in rows {
        t += &format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} / {:.0} | {}/{} |\n",
            r.stem,
            r.strategy,
            r.plain.wall,
            r.plain.compile_exposed,
            r.prebuild.wall,
            r.prebuild.compile_exposed,
            r.plain.compiled,
            r.prebuild.compiled,
            r.same,
            r.runs
        );
    }
    let mut strategies: Vec<&str> = rows.iter().map(|r| r.strategy.as_str()).collect();
    strategies.sort_unstable();
    strategies.dedup();
    for s in strategies {
        let mine: Vec<&CostRow> = rows.iter().filter(|r| r.strategy == s).collect();
        let n = mine.len() as f64;
        let sum = |f: fn(&CostRow) -> f64| mine.iter().map(|r| f(r)).sum::<f64>() / n;
        t += &format!(
            "| **mean** | {s} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} / {:.0} | {}/{} |\n",
            sum(|r| r.plain.wall),
            sum(|r| r.plain.compile_exposed),
            sum(|r| r.prebuild.wall),
            sum(|r| r.prebuild.compile_exposed),
            sum(|r| r.plain.compiled),
            sum(|r| r.prebuild.compiled),
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

    /// A space of 200 configurations.
    fn space() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("a", 0..20)
                .param("b", 0..10)
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn both_policies_evaluate_what_a_plain_replay_does_and_prebuilding_hides_the_compilation() {
        let space = space();
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
            let new = simulate(s.as_mut(), 60, &[], &v, model, Policy::Prebuild);
            assert_eq!(new.positions, plain(3), "{name}");
            let mut s = strategy::build(&spec, Arc::clone(&space), 3).unwrap();
            let old = simulate(s.as_mut(), 60, &[], &v, model, Policy::Plain);
            assert_eq!(old.positions, plain(3), "{name}");
            assert_eq!(old.compiled, 60, "{name}: each built once, when needed");
            // Every evaluation is measured at least once, with its overhead.
            assert!(new.wall >= 60.0 * model.overhead, "{name}: {new:?}");
            assert!(new.compiled >= 60, "{name}");
        }
        // Exhaustive: every guess is right, so only the first build is waited for in full.
        let mut s = strategy::build(&"exhaustive".parse().unwrap(), Arc::clone(&space), 1).unwrap();
        let new = simulate(s.as_mut(), 100, &[], &v, model, Policy::Prebuild);
        let mut s = strategy::build(&"exhaustive".parse().unwrap(), Arc::clone(&space), 1).unwrap();
        let old = simulate(s.as_mut(), 100, &[], &v, model, Policy::Plain);
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
        let m: CostModel = "h200:cores=inf:gate=0:depth=3:kernels=0.5".parse().unwrap();
        assert_eq!(
            m,
            CostModel {
                cores: f64::INFINITY,
                gate: false,
                depth: Some(3),
                kernels: 0.5,
                ..CostModel::H200
            }
        );
        assert!("h200:gate=yes".parse::<CostModel>().is_err());
        assert!(CostModel::H200.to_string().contains("2 cores"));
    }

    /// A clock for `model` over `values`, prebuilding.
    fn clock(model: CostModel, values: &[Option<f64>]) -> Clock<'_> {
        Clock::new(model, values, Policy::Prebuild)
    }

    #[test]
    fn builds_beyond_the_cores_share_them() {
        let v = values(10);
        let model = CostModel {
            compile: 1.0,
            cores: 2.0,
            gate: false,
            threads: 4,
            ..CostModel::H200
        };
        // Four builds on two cores: each at half speed, all done at 2 s.
        let mut c = clock(model, &v);
        c.prepare(&[9, 0, 1, 2, 3]);
        assert!(
            c.queue.is_empty() && !c.building(9),
            "9 is the measuring thread's"
        );
        c.run(1.5, None);
        assert_eq!((c.running.len(), c.now), (4, 1.5));
        c.need(0);
        assert_eq!((c.now, c.compile_exposed), (2.0, 0.5));
        assert_eq!(c.done.len(), 4);
        // The measuring thread's own build beside two of the pool's: a third of the cores'
        // time each until the pool's are done, then a core of its own.
        let mut c = clock(
            CostModel {
                threads: 2,
                ..model
            },
            &v,
        );
        c.prepare(&[9, 0, 1]);
        c.need(9);
        // 0..1.5 s: three builds at 2/3 speed, each 1.0 done at 1.5 s.
        assert!((c.now - 1.5).abs() < 1e-9, "{}", c.now);
        assert_eq!(c.started, 3);
    }

    #[test]
    fn on_few_cores_the_gate_keeps_guesses_from_crowding_the_needed_build() {
        let space = space();
        let v = values(space.len());
        let run = |model: CostModel, name: &str| {
            let mut s = strategy::build(&name.parse().unwrap(), Arc::clone(&space), 3).unwrap();
            simulate(s.as_mut(), 60, &[], &v, model, Policy::Prebuild)
        };
        // Wrong guesses on a pool as wide as its threads crowd the two cores.
        let gated = run(CostModel::H200, "auto");
        let wide = run(
            CostModel {
                gate: false,
                ..CostModel::H200
            },
            "auto",
        );
        assert_eq!(gated.positions, wide.positions);
        assert!(
            gated.compile_exposed < wide.compile_exposed,
            "{gated:?} against {wide:?}"
        );
    }
}
