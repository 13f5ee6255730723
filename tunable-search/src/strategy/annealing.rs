//! # Simulated annealing
//!
//! A Metropolis chain over valid configurations, constraint-aware as in paper 001
//! (Section IV-A). Each step proposes a random neighbour of the current configuration that
//! changes one parameter: with probability `hamming` a Hamming move (any other value), otherwise
//! an adjacent move (the nearest previous or next value that gives a valid configuration), see
//! [`Neighbour`](super::local_search::Neighbour). A better proposal is always accepted; a worse
//! one with probability `exp(-((new - old) / |old|) / T)`: the change is relative to the current
//! value, as in Kernel Tuner, so the temperature does not depend on the objective's unit (at the
//! default `t_start = 0.01`, a move 1% worse is accepted with probability 1/e). A failed
//! configuration is never moved to; from a failed one any proposal is accepted.
//!
//! ## Schedule and restarts
//! The temperature falls geometrically with the evaluations spent in the current *cycle*:
//! `T = t_start * (t_min / t_start)^(e / cycle)` after `e` evaluations. This is Kernel Tuner's
//! schedule (`T_start * alpha^(max_iter / max_fevals * e)`, where `alpha` cancels out) with
//! `cycle` set to the budget. Kernel Tuner's annealing stops early (after 165 of 220 evaluations
//! in the shared runs); here a cycle that ends *reheats*: `T` returns to `t_start` and the chain
//! goes on from the best configuration found so far (`restart=best`) or from a new start
//! (`restart=random`), so any budget is spent, up to the whole space.
//!
//! Proposals whose results are already known cost nothing (they come from the [`Memo`]) and do
//! not cool the chain; after `stuck` such proposals in a row (the chain is caught in explored
//! territory) it restarts from a new start. A *start* is the best of `sample` random
//! unevaluated configurations (and of earlier sample members and batch fillers not used yet), as
//! in [`LocalSearch`](super::LocalSearch).
//!
//! ## Batches
//! `ask(n)` proposes `n` distinct unevaluated neighbours of the current configuration at once.
//! When they are told they are considered in the order they were proposed, each against the
//! current configuration; the first accepted one becomes current and the rest are dropped (their
//! results stay known, for free). While the chain waits for results it needs (its start), the
//! batch is filled with random unevaluated configurations, which become start candidates.
//!
//! ## Non-constraint-aware form
//! With `constraint_aware=false` (the ablation of paper 001) proposals range over the Cartesian
//! product (a Hamming move to any value, an adjacent move to the previous or next value) and
//! starts are drawn from it. An invalid proposal is never asked (it costs no evaluation) but gets
//! a static penalty, `f64::MAX`, so it is always rejected: a wasted move, which counts towards
//! `stuck`.
//!
//! ## Options
//! - `t_start` (0.01): the temperature at the start of each cycle;
//! - `t_min` (0.0001): the temperature at the end of a cycle, below `t_start`;
//! - `cycle` (100): evaluations per cooling cycle;
//! - `hamming` (0.35): probability that a proposal is a Hamming move rather than an adjacent one;
//! - `restart` (`best`): where a new cycle starts, `best` or `random`;
//! - `stuck` (100): free proposals in a row before a restart;
//! - `sample` (5): random configurations evaluated per start, the best of them is the start;
//! - `constraint_aware` (true): valid-only proposals and starts, see above.
//!
//! The defaults were chosen on the ten shared Kernel Tuner caches (budget 220, 35 seeded runs
//! each) by leave-one-kernel-out cross-validation over the four kernel families (convolution,
//! dedispersion, gemm, pnpoly). Every fold chose a cold chain (`t_start` 0.003 to 0.01: with a
//! few hundred evaluations, wandering uphill does not pay) and `sample` 5 to 8; cycle length and
//! `stuck` were within noise. Kernel Tuner's settings (`t_start=1`, `t_min=0.001`,
//! `hamming=0.2`, `sample=1`, one cycle) score about 0 on these caches.
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{self, Outcome, StrategySpec, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20).build().unwrap());
//! let spec: StrategySpec = "annealing:cycle=50:hamming=0.5".parse().unwrap();
//! let mut s = strategy::build(&spec, Arc::clone(&space), 1).unwrap();
//! let run = drive(s.as_mut(), 120, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(1.0 + f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 12).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 120);
//! ```
//!
//! ## References
//! - S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by Simulated Annealing",
//!   Science 220, 1983.
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section IV-A (paper 001 of this project): valid neighbours.
//! - Kernel Tuner's `simulated_annealing` strategy: relative acceptance, schedule over the budget.

use super::local_search::{Move, Neighbour, Point, Start, Starts, moves, random_point};
use super::options::{Configure, parse_bool, parse_checked};
use super::{Memo, Strategy, Trial};
use crate::Space;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Starts in a row that asked nothing, before a forced start on an unasked configuration.
const IDLE_LIMIT: usize = 64;

/// Where a new cooling cycle starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// From the best configuration found so far.
    Best,
    /// From a random unevaluated configuration.
    Random,
}

/// Options of [`Annealing`].
#[derive(Clone, Debug, PartialEq)]
pub struct AnnealingOptions {
    /// Temperature at the start of each cycle (default 1.0).
    pub t_start: f64,
    /// Temperature at the end of a cycle (default 0.001).
    pub t_min: f64,
    /// Evaluations per cooling cycle (default 220).
    pub cycle: usize,
    /// Probability of a Hamming rather than an adjacent move (default 0.2).
    pub hamming: f64,
    /// Where a new cycle starts (default [`Restart::Best`]).
    pub restart: Restart,
    /// Proposals in a row that ask nothing before a restart (default 100).
    pub stuck: usize,
    /// Random configurations evaluated per start; the best is the start (default 1).
    pub sample: usize,
    /// Valid-only proposals and starts (default true).
    pub constraint_aware: bool,
}

impl Default for AnnealingOptions {
    fn default() -> Self {
        AnnealingOptions {
            t_start: 0.01,
            t_min: 0.0001,
            cycle: 100,
            hamming: 0.35,
            restart: Restart::Best,
            stuck: 100,
            sample: 5,
            constraint_aware: true,
        }
    }
}

impl Configure for AnnealingOptions {
    const KEYS: &'static [&'static str] = &[
        "t_start",
        "t_min",
        "cycle",
        "hamming",
        "restart",
        "stuck",
        "sample",
        "constraint_aware",
    ];

    fn set(&mut self, key: &str, v: &str) -> Result<(), Option<String>> {
        let positive = |x: &f64| x.is_finite() && *x > 0.0;
        match key {
            "t_start" => {
                let t = parse_checked(v, "a positive number", positive)?;
                if t <= self.t_min {
                    return Err(Some(format!("must be above t_min = {}", self.t_min)));
                }
                self.t_start = t;
            }
            "t_min" => {
                let t = parse_checked(v, "a positive number", positive)?;
                if t >= self.t_start {
                    return Err(Some(format!("must be below t_start = {}", self.t_start)));
                }
                self.t_min = t;
            }
            "cycle" => self.cycle = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "hamming" => {
                self.hamming = parse_checked(v, "a probability in [0, 1]", |p: &f64| {
                    (0.0..=1.0).contains(p)
                })?
            }
            "restart" => {
                self.restart = match v {
                    "best" => Restart::Best,
                    "random" => Restart::Random,
                    _ => return Err(Some("expected best or random".into())),
                }
            }
            "stuck" => self.stuck = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "sample" => self.sample = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "constraint_aware" => self.constraint_aware = parse_bool(v)?,
            _ => return Err(None),
        }
        Ok(())
    }
}

/// Simulated annealing with reheating.
#[derive(Debug)]
pub struct Annealing {
    space: Arc<Space>,
    opts: AnnealingOptions,
    memo: Memo,
    rng: ChaCha8Rng,
    /// The chain's current configuration (`None`: a random start is due).
    cur: Option<Point>,
    /// Its Hamming and adjacent moves.
    hamming: Vec<Move>,
    adjacent: Vec<Move>,
    /// Asked proposals from the current configuration, in proposal order.
    proposals: Vec<Move>,
    /// Evaluations asked when the current cycle began.
    cycle_start: usize,
    /// Proposals in a row that asked nothing.
    free: usize,
    /// Proposals of configurations still pending, in this `ask`.
    redraws: usize,
    starts: Starts,
    /// Starts in a row that asked nothing.
    idle: usize,
}

impl Annealing {
    /// Simulated annealing over `space`.
    pub fn new(space: Arc<Space>, opts: AnnealingOptions, seed: u64) -> Self {
        Annealing {
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
            cur: None,
            hamming: Vec::new(),
            adjacent: Vec::new(),
            proposals: Vec::new(),
            cycle_start: 0,
            free: 0,
            redraws: 0,
            starts: Starts::new(opts.sample),
            idle: 0,
            space,
            opts,
        }
    }

    /// The temperature after `e` evaluations of the current cycle.
    fn temperature(&self) -> f64 {
        let e = self.memo.asked_count() - self.cycle_start;
        let f = (e as f64 / self.opts.cycle as f64).min(1.0);
        self.opts.t_start * (self.opts.t_min / self.opts.t_start).powf(f)
    }

    /// Whether to move from cost `old` to cost `new` (both penalized: failures are `f64::MAX`).
    fn accept(&mut self, old: f64, new: f64) -> bool {
        if old == f64::MAX || new < old {
            return true;
        }
        if new == f64::MAX {
            return false;
        }
        let rel = (new - old) / old.abs().max(f64::MIN_POSITIVE);
        let p = (-rel / self.temperature()).exp();
        self.rng.random::<f64>() < p
    }

    /// Makes `pt` current (asking for it if new) and lists its moves.
    fn stand(&mut self, pt: Point, out: &mut Vec<usize>) {
        if let Some(p) = pt.pos
            && self.memo.mark_asked(p)
        {
            out.push(p);
        }
        let ca = self.opts.constraint_aware;
        let (mut h, mut a) = (
            std::mem::take(&mut self.hamming),
            std::mem::take(&mut self.adjacent),
        );
        if self.opts.hamming > 0.0 {
            moves(&self.space, &pt.genes, Neighbour::Hamming, ca, &mut h);
        }
        if self.opts.hamming < 1.0 {
            moves(&self.space, &pt.genes, Neighbour::Adjacent, ca, &mut a);
        }
        (self.hamming, self.adjacent) = (h, a);
        self.proposals.clear();
        self.cur = Some(pt);
    }

    /// Stands on a new start; false when it must wait for results first.
    fn start(&mut self, n: usize, out: &mut Vec<usize>) -> bool {
        self.free = 0;
        self.idle += 1;
        if self.idle > IDLE_LIMIT {
            // Many starts in a row that asked nothing (non-constraint-aware starts on known or
            // invalid configurations): force progress with an unasked configuration.
            if let Some(pt) = random_point(&self.space, &self.memo, &mut self.rng, true) {
                self.stand(pt, out);
            }
            return true;
        }
        let next = self.starts.next(
            &self.space,
            &mut self.memo,
            &mut self.rng,
            self.opts.constraint_aware,
            n,
            out,
        );
        match next {
            Start::Ready(pt) => {
                self.stand(pt, out);
                true
            }
            Start::Wait | Start::Exhausted => false,
        }
    }

    fn cost(&self, m: &Move) -> Option<f64> {
        match m.pos {
            None => Some(f64::MAX),
            Some(p) => self.memo.cost(p).map(|c| c.min(f64::MAX)),
        }
    }

    /// One step of the chain; false when it must wait for results.
    fn step(&mut self, n: usize, out: &mut Vec<usize>) -> bool {
        let Some(cur) = &self.cur else {
            return self.start(n, out);
        };
        let Some(c) = cur.cost(&self.memo) else {
            return false;
        };
        // Told proposals, in order: the first accepted one becomes current.
        let proposals = std::mem::take(&mut self.proposals);
        let mut pending = Vec::with_capacity(proposals.len());
        for m in proposals {
            match self.cost(&m) {
                None => pending.push(m),
                Some(x) => {
                    if self.accept(c, x) {
                        let next = self.cur.as_ref().expect("standing").moved(m);
                        self.stand(next, out);
                        return true;
                    }
                }
            }
        }
        self.proposals = pending;
        if self.memo.asked_count() - self.cycle_start >= self.opts.cycle {
            // Reheat.
            self.cycle_start = self.memo.asked_count();
            match (self.opts.restart, self.memo.best()) {
                (Restart::Best, Some((p, _))) => self.stand(Point::at(&self.space, p), out),
                _ => self.cur = None,
            }
            return true;
        }
        if self.free >= self.opts.stuck {
            self.cur = None;
            return true;
        }
        let use_hamming = self.adjacent.is_empty()
            || (!self.hamming.is_empty() && self.rng.random_bool(self.opts.hamming));
        let list = if use_hamming {
            &self.hamming
        } else {
            &self.adjacent
        };
        if list.is_empty() {
            // No neighbour at all.
            self.cur = None;
            return true;
        }
        let m = list[self.rng.random_range(0..list.len())];
        match self.cost(&m) {
            Some(x) => {
                // Known (or invalid): decided for free.
                self.free += 1;
                if self.accept(c, x) {
                    let next = self.cur.as_ref().expect("standing").moved(m);
                    self.stand(next, out);
                }
                true
            }
            None => {
                let p = m.pos.expect("unknown cost means a valid position");
                if self.memo.mark_asked(p) {
                    out.push(p);
                    self.proposals.push(m);
                    self.free = 0;
                    self.idle = 0;
                    true
                } else {
                    // Pending (proposed already): draw again, up to a limit, then wait.
                    self.redraws += 1;
                    self.redraws < self.opts.stuck
                }
            }
        }
    }
}

impl Strategy for Annealing {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        self.redraws = 0;
        while out.len() < n && !self.memo.exhausted() {
            let before = out.len();
            let more = self.step(n, &mut out);
            if out.len() > before {
                self.idle = 0;
            }
            if !more {
                // Waiting for results: fill the batch with random configurations.
                while out.len() < n {
                    let Some(p) = self.memo.random_unasked(&mut self.rng) else {
                        break;
                    };
                    self.memo.mark_asked(p);
                    if self.opts.constraint_aware {
                        self.starts.add(p);
                    }
                    out.push(p);
                }
                break;
            }
        }
        out
    }

    fn tell(&mut self, trials: &[Trial]) {
        trials.iter().for_each(|t| self.memo.record(t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::strategy::{Outcome, drive};

    fn space() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("x", 0..16)
                .param("y", 0..16)
                .constraint("x + y <= 24")
                .build()
                .unwrap(),
        )
    }

    fn bowl(space: &Space, p: usize) -> Outcome {
        let i = space.indices(p);
        let d = |a: u16, b: i32| f64::from((i32::from(a) - b).pow(2));
        Outcome::Value(1.0 + d(i[0], 11) + d(i[1], 4))
    }

    #[test]
    fn temperature_falls_geometrically_then_reheats() {
        let s = space();
        let opts = AnnealingOptions {
            t_start: 1.0,
            t_min: 0.01,
            cycle: 20,
            ..AnnealingOptions::default()
        };
        let mut a = Annealing::new(Arc::clone(&s), opts, 1);
        assert_eq!(a.temperature(), 1.0);
        let mut temps = Vec::new();
        while a.memo.asked_count() < 45 {
            for p in a.ask(1) {
                a.tell(&[Trial {
                    position: p,
                    outcome: bowl(&s, p),
                }]);
            }
            temps.push((a.memo.asked_count(), a.cycle_start, a.temperature()));
        }
        // Half-way through a cycle T is the geometric mean of t_start and t_min.
        let mid = temps.iter().find(|t| t.0 - t.1 == 10).unwrap();
        assert!((mid.2 - 0.1).abs() < 1e-12, "{mid:?}");
        assert!(temps.iter().any(|t| t.1 >= 20), "a new cycle began");
        assert!(temps.iter().all(|t| t.2 >= 0.01 - 1e-15 && t.2 <= 1.0));
    }

    #[test]
    fn acceptance_is_relative_and_never_moves_to_a_failure() {
        let mut a = Annealing::new(space(), AnnealingOptions::default(), 1);
        assert!(a.accept(2.0, 1.0));
        assert!(!a.accept(1.0, f64::MAX));
        assert!(
            a.accept(f64::MAX, f64::MAX),
            "from a failure, move anywhere"
        );
        // At T = t_start = 0.01, a move 10x the temperature worse is almost never accepted, in
        // any unit.
        for scale in [1e-3, 1.0, 1e6] {
            let n = (0..1000).filter(|_| a.accept(scale, scale * 1.1)).count();
            assert!(n < 5, "{n}");
        }
        let n = (0..1000).filter(|_| a.accept(1.0, 1.005)).count();
        assert!((450..750).contains(&n), "exp(-0.5) = 0.61: {n}");
    }

    #[test]
    fn every_form_finds_the_optimum() {
        let s = space();
        let opt = (0..s.len())
            .min_by(|&a, &b| bowl(&s, a).cost().total_cmp(&bowl(&s, b).cost()))
            .unwrap();
        for opts in [
            AnnealingOptions::default(),
            AnnealingOptions {
                restart: Restart::Random,
                hamming: 1.0,
                ..AnnealingOptions::default()
            },
            AnnealingOptions {
                hamming: 0.0,
                sample: 1,
                ..AnnealingOptions::default()
            },
            AnnealingOptions {
                constraint_aware: false,
                ..AnnealingOptions::default()
            },
        ] {
            for seed in 0..5 {
                let mut a = Annealing::new(Arc::clone(&s), opts.clone(), seed);
                let run = drive(&mut a, 80, 1, |p| bowl(&s, p));
                assert!(
                    run.trials.iter().any(|t| t.position == opt),
                    "{opts:?} seed {seed}"
                );
            }
        }
    }

    #[test]
    fn options_are_validated() {
        let mut o = AnnealingOptions::default();
        assert!(o.set("t_start", "2").is_ok());
        assert!(o.set("t_min", "0.5").is_ok());
        assert_eq!((o.t_start, o.t_min), (2.0, 0.5));
        assert!(
            o.set("t_min", "3")
                .unwrap_err()
                .unwrap()
                .contains("below t_start")
        );
        assert!(
            o.set("t_start", "0.1")
                .unwrap_err()
                .unwrap()
                .contains("above t_min")
        );
        for (k, v) in [
            ("t_start", "-1"),
            ("t_min", "0"),
            ("cycle", "0"),
            ("hamming", "2"),
            ("restart", "never"),
            ("stuck", "0"),
            ("sample", "x"),
        ] {
            assert!(matches!(o.set(k, v), Err(Some(_))), "{k}={v}");
        }
        assert_eq!(o.set("alpha", "0.9"), Err(None));
    }
}
