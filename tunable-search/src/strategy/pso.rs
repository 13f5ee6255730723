//! # Particle swarm optimization
//!
//! Particle swarm optimization (PSO) in the epsilon-scaled continuous space of
//! [`Continuous`](super::Continuous), constraint-aware as in Willemsen et al. (see References;
//! Section IV-C, Algorithm 2). Each particle has a position `x`, a velocity `v` and the best
//! position it has seen; after its position is evaluated it moves:
//!
//! `v <- w v + c1 r1 (best_own - x) + c2 r2 (best_swarm - x)`, `x <- x + v`,
//!
//! with `r1`, `r2` uniform in `[0, 1)` per dimension, `v` clamped to each dimension's range and
//! `x` to the bounds. A position is evaluated at its snapped configuration; when that is invalid,
//! the constraint-aware form evaluates the closest (in continuous space) of its strictly-adjacent,
//! else adjacent, else Hamming neighbours, without moving the particle (see `landing.rs`, shared
//! with the firefly algorithm). The swarm starts at rest (`v = 0`) at random distinct valid
//! configurations. The non-constraint-aware form (`constraint_aware=false`) starts at random
//! points of the Cartesian box and gives an invalid position a static penalty
//! ([`PENALTY`]) without evaluating anything.
//!
//! As an ask/tell state machine the swarm is *asynchronous*: particles move in turn, each as soon
//! as its own result is known, with the swarm's best as it is at that moment (with batches of one
//! this is the sequential loop; a batch of `popsize` asks for one position per particle). A
//! position whose configuration is already known costs nothing, so the swarm only spends
//! evaluations on new configurations.
//!
//! Kernel Tuner's PSO stops after `maxiter` iterations; this one spends any budget: when
//! `stall` iterations' worth of particle steps (`stall * popsize`, each one iteration of the
//! [driver](super::Iterative)) bring no new configuration, or every `maxiter * popsize` steps,
//! every particle except the one holding the swarm's best restarts at a
//! random never-evaluated configuration, at rest and with no memory. The swarm's best stays, so
//! restarted particles are drawn back towards it while they explore.
//!
//! ## Options
//! The options, their keys and defaults are listed on [`PsoOptions`].
//!
//! The paper's Table IV settings are `popsize=30:w=0.5:c1=3:c2=0.5`. The defaults were chosen by
//! leave-one-kernel-out cross-validation on the shared Kernel Tuner caches (the grids and scores
//! are in `docs/notes/strategy-defaults.md`). The social coefficient matters most: with `c2` 0.5
//! the swarm hardly converges within a few hundred evaluations. Particles start at rest rather
//! than with Kernel Tuner's random velocity, which scored better.
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{Outcome, Pso, PsoOptions, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20)
//!     .constraint("a + b <= 30").build().unwrap());
//! let mut pso = Pso::new(Arc::clone(&space), PsoOptions::default(), 1);
//! let run = drive(&mut pso, 50, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 3).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 50);
//! ```
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section IV-C and Table IV.
//! - J. Kennedy, R. Eberhart, "Particle swarm optimization", Proc. ICNN 1995; Y. Shi,
//!   R. Eberhart, "A modified particle swarm optimizer", Proc. IEEE CEC 1998 (inertia weight).

use super::landing::{Eval, Landed, Landing};
use super::options::{at_least, boolean, checked, declare_options, non_negative};
use super::{Algorithm, Iterative, PENALTY, Search, Stall, Step};
use rand::RngExt;

declare_options! {
    /// Options of [`Pso`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct PsoOptions {
        /// Number of particles, at least 2.
        popsize: usize = 15, "popsize" => at_least(2);
        /// Iterations (moves of every particle) between forced restarts.
        maxiter: usize = 100, "maxiter" => at_least(1);
        /// Inertia weight, in `[0, 2]`.
        w: f64 = 0.5, "w" => checked("a number in [0, 2]", |x: &f64| (0.0..=2.0).contains(x));
        /// Cognitive coefficient (towards the particle's own best), at least 0.
        c1: f64 = 2.0, "c1" => non_negative();
        /// Social coefficient (towards the swarm's best), at least 0.
        c2: f64 = 1.5, "c2" => non_negative();
        /// Iterations without a new configuration before restarting.
        stall: usize = 3, "stall" => at_least(1);
        /// Valid starting positions and repaired evaluation; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
}

/// Particle swarm optimization; see the [module docs](self).
pub type Pso = Iterative<PsoAlgorithm>;

#[derive(Clone, Debug)]
struct Particle {
    x: Vec<f64>,
    v: Vec<f64>,
    best_x: Vec<f64>,
    best_cost: f64,
    eval: Eval,
}

impl Particle {
    /// A particle at rest at `x`, with no memory yet.
    fn at(x: Vec<f64>) -> Self {
        let v = vec![0.0; x.len()];
        Particle {
            best_x: x.clone(),
            x,
            v,
            best_cost: PENALTY,
            eval: Eval::Fresh,
        }
    }
}

/// The swarm, driven by [`Iterative`] as [`Pso`].
#[derive(Debug)]
pub struct PsoAlgorithm {
    opts: PsoOptions,
    landing: Landing,
    swarm: Vec<Particle>,
    best_x: Vec<f64>,
    best_cost: f64,
    /// The particle that moves next.
    turn: usize,
}

impl Algorithm for PsoAlgorithm {
    type Options = PsoOptions;

    fn new(opts: PsoOptions, search: &mut Search) -> Self {
        let landing = Landing::new(search.space(), opts.constraint_aware);
        let swarm: Vec<Particle> = landing
            .starting_points(search, opts.popsize)
            .into_iter()
            .map(Particle::at)
            .collect();
        PsoAlgorithm {
            best_x: swarm.first().map(|p| p.x.clone()).unwrap_or_default(),
            best_cost: PENALTY,
            turn: 0,
            opts,
            landing,
            swarm,
        }
    }

    /// The next particle in turn that is not waiting for its result moves; each particle step
    /// is one iteration.
    fn step(&mut self, search: &mut Search) -> Step {
        for _ in 0..self.swarm.len() {
            if let Some((p, c)) = search.memo().best()
                && c < self.best_cost
            {
                // A better configuration than the swarm's (e.g. a batch filler).
                self.best_cost = c;
                self.best_x = self.landing.map().coords(&search.space().indices(p));
            }
            let k = self.turn;
            self.turn = (self.turn + 1) % self.swarm.len();
            if self.move_particle(k, search) != Landed::Waiting {
                return Step::Iteration;
            }
        }
        Step::Wait
    }

    fn stall(&self) -> Stall {
        let n = self.swarm.len();
        Stall::new(self.opts.stall * n, self.opts.maxiter * n)
    }

    /// Every particle but the one holding the swarm's best restarts at a random point.
    fn diversify(&mut self, search: &mut Search) {
        let keep = (0..self.swarm.len())
            .min_by(|&a, &b| self.swarm[a].best_cost.total_cmp(&self.swarm[b].best_cost));
        for k in 0..self.swarm.len() {
            if Some(k) == keep || matches!(self.swarm[k].eval, Eval::Pending(_)) {
                continue; // a particle waiting for a result restarts at its next move
            }
            if let Some(x) = self.landing.random_point(search) {
                self.swarm[k] = Particle::at(x);
            }
        }
    }
}

impl PsoAlgorithm {
    /// One step of particle `k`: take in its result, move, and land at the new position.
    fn move_particle(&mut self, k: usize, search: &mut Search) -> Landed {
        let PsoAlgorithm {
            opts,
            landing,
            swarm,
            best_x,
            best_cost,
            ..
        } = self;
        let p = &mut swarm[k];
        if let Eval::Pending(pos) = p.eval {
            match search.memo().cost(pos) {
                Some(c) => p.eval = Eval::Known(c),
                None => return Landed::Waiting,
            }
        }
        if let Eval::Known(c) = p.eval {
            if c < p.best_cost {
                p.best_cost = c;
                p.best_x.clone_from(&p.x);
            }
            if c < *best_cost {
                *best_cost = c;
                best_x.clone_from(&p.x);
            }
            let rng = search.rng();
            for (d, &g) in best_x.iter().enumerate() {
                let range = landing.map().upper(d);
                let (r1, r2): (f64, f64) = (rng.random(), rng.random());
                let v = opts.w * p.v[d]
                    + opts.c1 * r1 * (p.best_x[d] - p.x[d])
                    + opts.c2 * r2 * (g - p.x[d]);
                p.v[d] = v.clamp(-range, range);
                p.x[d] += p.v[d];
            }
            landing.clamp(&mut p.x);
        }
        let (eval, landed) = landing.land(search, &p.x);
        p.eval = eval;
        landed
    }
}
