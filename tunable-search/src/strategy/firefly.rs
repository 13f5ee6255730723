//! # Firefly algorithm
//!
//! The firefly algorithm (FA) in the epsilon-scaled continuous space of
//! [`Continuous`](super::Continuous), a variant of PSO with the same constraint-aware starting
//! positions and repaired evaluation (Willemsen et al., Section IV-C). A firefly's brightness is
//! its cost (lower is brighter). In each iteration every firefly `i`, for every brighter firefly
//! `j` in turn, moves towards it and is evaluated at its new position:
//!
//! `x_i <- x_i + B0 exp(-gamma |x_j - x_i|^2) (x_j - x_i) + alpha u`, `u` uniform in
//! `[-1/2, 1/2)` per dimension,
//!
//! clamped to the bounds; after the iteration the swarm is sorted by brightness. A position is
//! evaluated at its snapped configuration; when that is invalid, the constraint-aware form
//! evaluates the closest of its strictly-adjacent, else adjacent, else Hamming neighbours
//! without moving the firefly. The swarm starts at random valid configurations. The
//! non-constraint-aware form (`constraint_aware=false`) starts at random points of the Cartesian
//! box and gives an invalid position a static penalty ([`PENALTY`]) without evaluating anything.
//!
//! As an ask/tell state machine each firefly keeps its own place in the iteration: with batches
//! of one the fireflies move in the sequential order of the algorithm; with larger batches the
//! next fireflies move while earlier ones wait for their results (comparing with the last known
//! brightness of the others). Positions whose configuration is already known cost nothing.
//!
//! Kernel Tuner's firefly algorithm stops after `maxiter` iterations; this one spends any budget:
//! when `stall` iterations in a row bring no new configuration, or every `maxiter` iterations
//! (counted by the [driver](super::Iterative)), every firefly except the brightest restarts at a
//! random never-evaluated configuration.
//!
//! ## Options
//! The options, their keys and defaults are listed on [`FireflyOptions`].
//!
//! The paper's Table IV settings are `popsize=20:maxiter=100:B0=1:gamma=1`; it gives no `alpha`,
//! for which Kernel Tuner's default is 0.2. `alpha` sets how far a firefly explores around the
//! one it moves to: a step of up to `alpha / 2` per coordinate, i.e. `alpha / (2 eps)` values of
//! a parameter when the largest parameter's values are `eps` apart (0.3: one or two values of a
//! parameter with ten values, about four on the 29-value dedispersion parameter, half a value on
//! the GEMM space, whose largest parameter has four).
//!
//! The defaults were chosen by leave-one-kernel-out cross-validation on the shared Kernel Tuner
//! caches (the grids and scores are in `docs/notes/strategy-defaults.md`).
//! Weak light absorption matters because distances grow with the number of parameters: with
//! `gamma` 1 a firefly moves only about a quarter of the way to a typical brighter one on the
//! 15-parameter GEMM space.
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{Firefly, FireflyOptions, Outcome, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20)
//!     .constraint("a + b <= 30").build().unwrap());
//! let mut fa = Firefly::new(Arc::clone(&space), FireflyOptions::default(), 1);
//! let run = drive(&mut fa, 50, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 3).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 50);
//! ```
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section IV-C and Table IV.
//! - X.-S. Yang, "Firefly algorithms for multimodal optimization", Stochastic Algorithms:
//!   Foundations and Applications (SAGA), 2009.

use super::landing::{Eval, Landed, Landing};
use super::options::{at_least, boolean, checked, declare_options, non_negative};
use super::{Algorithm, Iterative, PENALTY, Search, Stall, Step};
use rand::RngExt;

declare_options! {
    /// Options of [`Firefly`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct FireflyOptions {
        /// Number of fireflies, at least 2.
        popsize: usize = 6, "popsize" => at_least(2);
        /// Iterations between forced restarts.
        maxiter: usize = 100, "maxiter" => at_least(1);
        /// Attractiveness at distance 0, in `[0, 1]`.
        b0: f64 = 1.0,
            "B0" | "b0" => checked("a number in [0, 1]", |x: &f64| (0.0..=1.0).contains(x));
        /// Light absorption: attractiveness falls as `exp(-gamma r^2)`, at least 0.
        gamma: f64 = 0.1, "gamma" => non_negative();
        /// Size of the random step, in continuous coordinates (the parameter with the most values
        /// spans `[0, 1]`), at least 0.
        alpha: f64 = 0.3, "alpha" => non_negative();
        /// Iterations without a new configuration before restarting.
        stall: usize = 2, "stall" => at_least(1);
        /// Valid starting positions and repaired evaluation; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
}

/// The firefly algorithm; see the [module docs](self).
pub type Firefly = Iterative<FireflyAlgorithm>;

#[derive(Clone, Debug)]
struct Fly {
    x: Vec<f64>,
    /// The last known cost of its position ([`PENALTY`] before the first result).
    cost: f64,
    eval: Eval,
    /// The next firefly to compare with in this iteration (`popsize`: done).
    next: usize,
}

/// The fireflies, driven by [`Iterative`] as [`Firefly`].
#[derive(Debug)]
pub struct FireflyAlgorithm {
    opts: FireflyOptions,
    landing: Landing,
    flies: Vec<Fly>,
}

impl Algorithm for FireflyAlgorithm {
    type Options = FireflyOptions;

    fn new(opts: FireflyOptions, search: &mut Search) -> Self {
        let landing = Landing::new(search.space(), opts.constraint_aware);
        let flies = landing
            .starting_points(search, opts.popsize)
            .into_iter()
            .map(|x| Fly {
                x,
                cost: PENALTY,
                eval: Eval::Fresh,
                next: usize::MAX, // the first iteration only evaluates the starting positions
            })
            .collect();
        FireflyAlgorithm {
            opts,
            landing,
            flies,
        }
    }

    /// Each fly in order advances until it asks or waits; once every fly has compared with
    /// every other, the iteration ends: the swarm is sorted by brightness.
    fn step(&mut self, search: &mut Search) -> Step {
        let n = self.flies.len();
        let done = (0..n).all(|i| self.resolve(i, search) && self.flies[i].next >= n)
            && self.flies.iter().all(|f| f.eval != Eval::Fresh);
        if done {
            self.flies.sort_by(|a, b| a.cost.total_cmp(&b.cost));
            for f in &mut self.flies {
                f.next = 0;
            }
            return Step::Iteration;
        }
        let mut moved = false;
        for i in 0..n {
            if search.room() == 0 {
                break;
            }
            let f = &self.flies[i];
            let pending = matches!(f.eval, Eval::Pending(p) if search.memo().cost(p).is_none());
            let finished = f.next >= n && f.eval != Eval::Fresh;
            if pending || finished {
                continue;
            }
            self.advance(i, search);
            moved = true;
        }
        if moved { Step::Continue } else { Step::Wait }
    }

    fn stall(&self) -> Stall {
        Stall::new(self.opts.stall, self.opts.maxiter)
    }

    /// Every fly but the brightest (the first after sorting) restarts.
    fn diversify(&mut self, search: &mut Search) {
        for i in 1..self.flies.len() {
            if let Some(x) = self.landing.random_point(search) {
                let f = &mut self.flies[i];
                f.x = x;
                f.eval = Eval::Fresh;
                f.cost = PENALTY;
            }
        }
    }
}

impl FireflyAlgorithm {
    /// Takes in the result of fly `i` if it has arrived; false while it is still awaited.
    fn resolve(&mut self, i: usize, search: &Search) -> bool {
        let f = &mut self.flies[i];
        if let Eval::Pending(p) = f.eval {
            match search.memo().cost(p) {
                Some(c) => f.eval = Eval::Known(c),
                None => return false,
            }
        }
        if let Eval::Known(c) = f.eval {
            f.cost = c;
        }
        true
    }

    /// Lands fly `i` at its position.
    fn land(&mut self, i: usize, search: &mut Search) -> Landed {
        let f = &mut self.flies[i];
        let (eval, landed) = self.landing.land(search, &f.x);
        f.eval = eval;
        if let Eval::Known(c) = eval {
            f.cost = c;
        }
        landed
    }

    /// Advances fly `i` through its comparisons until it asks or waits for a result, or has
    /// compared with every other fly in this iteration.
    fn advance(&mut self, i: usize, search: &mut Search) {
        if !self.resolve(i, search) {
            return;
        }
        if self.flies[i].eval == Eval::Fresh && self.land(i, search) != Landed::Free {
            return;
        }
        let n = self.flies.len();
        while self.flies[i].next < n {
            let j = self.flies[i].next;
            self.flies[i].next += 1;
            if self.flies[j].cost >= self.flies[i].cost {
                continue;
            }
            let (xi, xj) = (&self.flies[i].x, &self.flies[j].x);
            let r2: f64 = xi.iter().zip(xj).map(|(a, b)| (a - b).powi(2)).sum();
            let beta = self.opts.b0 * (-self.opts.gamma * r2).exp();
            let rng = search.rng();
            let moved: Vec<f64> = xi
                .iter()
                .zip(xj)
                .map(|(a, b)| {
                    let u = rng.random::<f64>() - 0.5;
                    a + beta * (b - a) + self.opts.alpha * u
                })
                .collect();
            self.flies[i].x = moved;
            self.landing.clamp(&mut self.flies[i].x);
            if self.land(i, search) != Landed::Free {
                return;
            }
        }
    }
}
