//! # Simulated annealing
//!
//! A Metropolis chain over valid configurations, constraint-aware as in Willemsen et al. (see
//! References; Section IV-A). Each step proposes a random neighbour of the current configuration
//! that changes one parameter: with probability `hamming` a Hamming move (any other value),
//! otherwise an adjacent move (the nearest previous or next value that gives a valid
//! configuration), see [`Neighbour`]. A better proposal is always accepted; a worse one with
//! probability `exp(-((new - old) / |old|) / T)`: the change is relative to the current value, as
//! in Kernel Tuner, so the temperature does not depend on the objective's unit (at the default
//! `t_start = 0.01`, a move 1% worse is accepted with probability 1/e). A failed configuration is
//! never moved to; from a failed one any proposal is accepted.
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
//! territory) it restarts from a new start (each proposal, and each start, is one iteration of
//! the [driver](super::Iterative), which counts them). A *start* is the best of `sample` random
//! unevaluated configurations (and of earlier sample members and batch fillers not used yet), as
//! in [`LocalSearch`](super::LocalSearch).
//!
//! ## Batches
//! `ask(n)` proposes `n` distinct unevaluated neighbours of the current configuration at once.
//! When they are told they are considered in the order they were proposed, each against the
//! current configuration; the first accepted one becomes current and the rest are dropped (their
//! results stay known, for free). While the chain waits for results it needs (its start), the
//! [driver](super::Iterative) fills the batch with random unevaluated configurations, which
//! become start candidates.
//!
//! ## Non-constraint-aware form
//! With `constraint_aware=false` (the paper's ablation) proposals range over the Cartesian
//! product (a Hamming move to any value, an adjacent move to the previous or next value) and
//! starts are drawn from it. An invalid proposal is never asked (it costs no evaluation) but gets
//! a static penalty, [`PENALTY`], so it is always rejected: a wasted move, which counts towards
//! `stuck`.
//!
//! ## Options
//! The options, their keys and defaults are listed on [`AnnealingOptions`].
//!
//! The defaults were chosen by leave-one-kernel-out cross-validation on the shared Kernel Tuner
//! caches: a cold chain and a start sampled from several configurations, because with a few
//! hundred evaluations wandering uphill does not pay. The grids and scores are in
//! `docs/notes/strategy-defaults.md`.
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
//!   Optimization in Auto-Tuning", Section IV-A: valid neighbours.
//! - Kernel Tuner's `simulated_annealing` strategy: relative acceptance, schedule over the budget.

use super::config::Config;
use super::moves::{Move, Neighbour, moves};
use super::options::{at_least, boolean, checked, choice, declare_options, probability};
use super::starts::{Starts, Walker, walk};
use super::{Algorithm, Iterative, Memo, PENALTY, Search, Stall, Step};
use rand::RngExt;

/// Where a new cooling cycle starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// From the best configuration found so far.
    Best,
    /// From a random unevaluated configuration.
    Random,
}

/// A positive temperature.
fn temperature<O>(o: &O, v: &str) -> Result<f64, String> {
    checked("a positive number", |x: &f64| x.is_finite() && *x > 0.0)(o, v)
}

declare_options! {
    /// Options of [`Annealing`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct AnnealingOptions {
        /// Temperature at the start of each cycle, above `t_min`.
        t_start: f64 = 0.01, "t_start" => |o: &AnnealingOptions, v: &str| {
            let t = temperature(o, v)?;
            if t <= o.t_min {
                return Err(format!("must be above t_min = {}", o.t_min));
            }
            Ok(t)
        };
        /// Temperature at the end of a cycle, below `t_start`.
        t_min: f64 = 0.0001, "t_min" => |o: &AnnealingOptions, v: &str| {
            let t = temperature(o, v)?;
            if t >= o.t_start {
                return Err(format!("must be below t_start = {}", o.t_start));
            }
            Ok(t)
        };
        /// Evaluations per cooling cycle.
        cycle: usize = 100, "cycle" => at_least(1);
        /// Probability that a proposal is a Hamming move rather than an adjacent one.
        hamming: f64 = 0.35, "hamming" => probability();
        /// Where a new cycle starts: `best` or `random`.
        restart: Restart = Restart::Best, "restart" => choice(&[
            ("best", Restart::Best),
            ("random", Restart::Random),
        ]);
        /// Proposals in a row that ask nothing before a restart.
        stuck: usize = 100, "stuck" => at_least(1);
        /// Random configurations evaluated per start; the best of them is the start.
        sample: usize = 5, "sample" => at_least(1);
        /// Valid-only proposals and starts; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
}

/// Simulated annealing with reheating; see the [module docs](self).
pub type Annealing = Iterative<AnnealingAlgorithm>;

/// The Metropolis chain, driven by [`Iterative`] as [`Annealing`].
#[derive(Debug)]
pub struct AnnealingAlgorithm {
    opts: AnnealingOptions,
    /// The chain's current configuration (`None`: a random start is due).
    cur: Option<Config>,
    /// Its Hamming and adjacent moves.
    hamming: Vec<Move>,
    adjacent: Vec<Move>,
    /// Asked proposals from the current configuration, in proposal order.
    proposals: Vec<Move>,
    /// Evaluations asked when the current cycle began.
    cycle_start: usize,
    starts: Starts,
}

impl Algorithm for AnnealingAlgorithm {
    type Options = AnnealingOptions;

    fn new(opts: AnnealingOptions, _search: &mut Search) -> Self {
        AnnealingAlgorithm {
            cur: None,
            hamming: Vec::new(),
            adjacent: Vec::new(),
            proposals: Vec::new(),
            cycle_start: 0,
            starts: Starts::new(opts.sample, opts.constraint_aware),
            opts,
        }
    }

    /// One step of the chain: each proposal, and each start, ends an iteration.
    fn step(&mut self, search: &mut Search) -> Step {
        let c = match walk(self, search, Step::Iteration) {
            Ok(c) => c,
            Err(step) => return step,
        };
        // Told proposals, in order: the first accepted one becomes current.
        let proposals = std::mem::take(&mut self.proposals);
        let mut pending = Vec::with_capacity(proposals.len());
        for m in proposals {
            match search.memo().rank(m.position) {
                None => pending.push(m),
                Some(x) => {
                    if self.accept(search, c, x) {
                        let next = self.cur.as_ref().expect("standing").moved(m);
                        self.stand(next, search);
                        return Step::Continue;
                    }
                }
            }
        }
        self.proposals = pending;
        let asked = search.memo().asked_count();
        if asked - self.cycle_start >= self.opts.cycle {
            // Reheat.
            self.cycle_start = asked;
            match (self.opts.restart, search.memo().best()) {
                (Restart::Best, Some((p, _))) => self.stand(Config::at(search.space(), p), search),
                _ => self.cur = None,
            }
            return Step::Continue;
        }
        // Propose; a proposal still pending (proposed already) is drawn again, up to `stuck`
        // times, then the chain waits.
        for _ in 0..self.opts.stuck {
            let rng = search.rng();
            let use_hamming = self.adjacent.is_empty()
                || (!self.hamming.is_empty() && rng.random_bool(self.opts.hamming));
            let list = if use_hamming {
                &self.hamming
            } else {
                &self.adjacent
            };
            if list.is_empty() {
                // No neighbour at all.
                self.cur = None;
                return Step::Continue;
            }
            let m = list[rng.random_range(0..list.len())];
            match search.memo().rank(m.position) {
                Some(x) => {
                    // Known (or invalid): decided for free.
                    if self.accept(search, c, x) {
                        let next = self.cur.as_ref().expect("standing").moved(m);
                        self.stand(next, search);
                    }
                    return Step::Iteration;
                }
                None => {
                    let p = m.position.expect("unknown cost means a valid position");
                    if search.ask(p) {
                        self.proposals.push(m);
                        return Step::Iteration;
                    }
                }
            }
        }
        Step::Wait
    }

    fn stall(&self) -> Stall {
        Stall {
            patience: Some(self.opts.stuck),
            period: None,
        }
    }

    /// Restarts from a new start.
    fn diversify(&mut self, _search: &mut Search) {
        self.cur = None;
    }

    /// A batch filler becomes a start candidate.
    fn adopt(&mut self, position: usize) {
        self.starts.add(position);
    }
}

impl Walker for AnnealingAlgorithm {
    fn whereabouts(&mut self) -> (&mut Option<Config>, &mut Starts) {
        (&mut self.cur, &mut self.starts)
    }

    /// Lists the moves from `c`.
    fn arrive(&mut self, c: &Config, search: &mut Search) {
        let ca = self.opts.constraint_aware;
        let space = search.space();
        if self.opts.hamming > 0.0 {
            moves(space, &c.indices, Neighbour::Hamming, ca, &mut self.hamming);
        }
        if self.opts.hamming < 1.0 {
            moves(
                space,
                &c.indices,
                Neighbour::Adjacent,
                ca,
                &mut self.adjacent,
            );
        }
        self.proposals.clear();
    }
}

impl AnnealingAlgorithm {
    /// The temperature after the evaluations of the current cycle.
    fn temperature(&self, memo: &Memo) -> f64 {
        let e = memo.asked_count() - self.cycle_start;
        let f = (e as f64 / self.opts.cycle as f64).min(1.0);
        self.opts.t_start * (self.opts.t_min / self.opts.t_start).powf(f)
    }

    /// Whether to move from cost `old` to cost `new` (a failure or an invalid configuration
    /// costs [`PENALTY`]: never moved to, and left for anything).
    fn accept(&self, search: &mut Search, old: f64, new: f64) -> bool {
        if old == PENALTY || new < old {
            return true;
        }
        if new == PENALTY {
            return false;
        }
        let rel = (new - old) / old.abs().max(f64::MIN_POSITIVE);
        let p = (-rel / self.temperature(search.memo())).exp();
        search.rng().random::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::fixtures::{bowl, space};
    use crate::strategy::{Strategy, Trial};
    use std::sync::Arc;

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
        let temp = |a: &Annealing| a.algorithm().temperature(a.search().memo());
        assert_eq!(temp(&a), 1.0);
        let mut temps = Vec::new();
        while a.search().memo().asked_count() < 45 {
            for p in a.ask(1) {
                a.tell(&[Trial {
                    position: p,
                    outcome: bowl(&s, p),
                }]);
            }
            let asked = a.search().memo().asked_count();
            temps.push((asked, a.algorithm().cycle_start, temp(&a)));
        }
        // Half-way through a cycle T is the geometric mean of t_start and t_min.
        let mid = temps.iter().find(|t| t.0 - t.1 == 10).unwrap();
        assert!((mid.2 - 0.1).abs() < 1e-12, "{mid:?}");
        assert!(temps.iter().any(|t| t.1 >= 20), "a new cycle began");
        assert!(temps.iter().all(|t| t.2 >= 0.01 - 1e-15 && t.2 <= 1.0));
    }

    #[test]
    fn acceptance_is_relative_and_never_moves_to_a_failure() {
        let mut s = Search::new(space(), 1);
        let a = AnnealingAlgorithm::new(AnnealingOptions::default(), &mut s);
        assert!(a.accept(&mut s, 2.0, 1.0));
        assert!(!a.accept(&mut s, 1.0, PENALTY));
        assert!(
            a.accept(&mut s, PENALTY, PENALTY),
            "from a failure, move anywhere"
        );
        // At T = t_start = 0.01, a move 10x the temperature worse is almost never accepted, in
        // any unit.
        for scale in [1e-3, 1.0, 1e6] {
            let n = (0..1000)
                .filter(|_| a.accept(&mut s, scale, scale * 1.1))
                .count();
            assert!(n < 5, "{n}");
        }
        let n = (0..1000).filter(|_| a.accept(&mut s, 1.0, 1.005)).count();
        assert!((450..750).contains(&n), "exp(-0.5) = 0.61: {n}");
    }
}
