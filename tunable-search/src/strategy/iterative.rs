//! # Iterative strategies
//!
//! The split of argmin (`Solver` / `State` / `Executor`) for ask/tell search: an [`Algorithm`]
//! holds what is particular to one strategy (a population, a swarm, a climber) and takes steps;
//! the [`Search`] holds what every strategy has (space, memo, random source, batch); and
//! [`Iterative`] drives the algorithm through `ask(n)` and is the [`Strategy`]. The driver owns,
//! once for every iterative strategy:
//!
//! - **Batch filling.** It steps the algorithm until the batch is full, every configuration is
//!   asked, or the algorithm must wait for results ([`Step::Wait`]); then it fills the rest of
//!   the batch with uniformly random unasked configurations and hands each to the algorithm
//!   ([`Algorithm::adopt`], e.g. as a start candidate). A batch is never empty while unasked
//!   configurations remain.
//! - **Stall detection and diversification.** The algorithm says where its iterations end
//!   ([`Step::Iteration`]: a generation, a sweep over the population, a particle's move, a
//!   proposal). An iteration is *barren* when nothing was asked since the previous one ended.
//!   After [`Stall::patience`] barren iterations in a row, and every [`Stall::period`]
//!   iterations, the driver calls [`Algorithm::diversify`].
//! - **The random fallback.** After [`FALLBACK`] barren iterations in a row (counted across
//!   diversifications), the driver asks a random unasked configuration itself, so no algorithm
//!   can spin without spending the budget.
//!
//! Results are told to the [`Memo`](super::Memo) only; the algorithm reads them from there in its
//! next step.

use super::{Search, Strategy, Trial};
use crate::Space;
use std::sync::Arc;

/// Barren iterations in a row after which the driver asks a random configuration itself.
pub const FALLBACK: usize = 1000;

/// What one [`Algorithm::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// It went on (asked configurations, or moved over known ones); step again.
    Continue,
    /// It ended an iteration, which the driver judges for stalls; step again.
    Iteration,
    /// It cannot go on before results arrive; the driver fills the rest of the batch.
    Wait,
}

/// When the driver diversifies an algorithm (in its iterations, see [`Step::Iteration`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stall {
    /// Barren iterations in a row before diversifying (`None`: never).
    pub patience: Option<usize>,
    /// Iterations since the last diversification before diversifying anyway (`None`: never).
    pub period: Option<usize>,
}

impl Stall {
    /// Diversify after `patience` barren iterations in a row, and every `period` iterations.
    pub fn new(patience: usize, period: usize) -> Self {
        Stall {
            patience: Some(patience),
            period: Some(period),
        }
    }
}

/// The algorithm of an iterative strategy (argmin's `Solver`): its own state and how it steps.
/// [`Iterative`] makes it a [`Strategy`].
pub trait Algorithm: Send {
    /// The options it is built from.
    type Options;

    /// The algorithm at the start of a run (e.g. its initial population, drawn with
    /// [`Search::rng`]). It must not ask anything yet.
    fn new(options: Self::Options, search: &mut Search) -> Self;

    /// One step: ask configurations with [`Search::ask`] (while [`Search::room`] allows), or move
    /// over known ones, and say what it did. An algorithm must end an iteration or wait within a
    /// bounded number of steps.
    fn step(&mut self, search: &mut Search) -> Step;

    /// When to diversify; by default never.
    fn stall(&self) -> Stall {
        Stall::default()
    }

    /// Diversifies after a stall: typically every member but the best restarts at a new
    /// configuration. By default nothing.
    fn diversify(&mut self, search: &mut Search) {
        let _ = search;
    }

    /// A configuration the driver asked on its own (a batch filler or the fallback), which the
    /// algorithm may use. By default ignored; its result is in the memo either way.
    fn adopt(&mut self, position: usize) {
        let _ = position;
    }

    /// Whether the algorithm never asks and never draws random numbers, so that every
    /// configuration of the run is the driver's random fill (random search): the driver can
    /// then say which configurations come next ([`Strategy::upcoming`]). By default false.
    fn samples_only(&self) -> bool {
        false
    }
}

/// Stall bookkeeping of the driver.
#[derive(Clone, Copy, Debug, Default)]
struct Stalls {
    /// Barren iterations in a row since the last diversification.
    stalled: usize,
    /// Barren iterations in a row, across diversifications.
    barren: usize,
    /// Iterations since the last diversification.
    iterations: usize,
    /// [`Search::asks`] when the last iteration ended.
    mark: usize,
}

/// An [`Algorithm`] driven as a [`Strategy`] (argmin's `Executor`); see the [module docs](self).
#[derive(Debug)]
pub struct Iterative<A> {
    search: Search,
    algorithm: A,
    stalls: Stalls,
}

impl<A: Algorithm> Iterative<A> {
    /// The strategy of algorithm `A` with `options` over `space`, seeded.
    pub fn new(space: Arc<Space>, options: A::Options, seed: u64) -> Self {
        let mut search = Search::new(space, seed);
        let algorithm = A::new(options, &mut search);
        Iterative {
            search,
            algorithm,
            stalls: Stalls::default(),
        }
    }

    /// The algorithm's state.
    pub fn algorithm(&self) -> &A {
        &self.algorithm
    }

    /// The search's state.
    pub fn search(&self) -> &Search {
        &self.search
    }

    /// Judges the iteration that just ended, and diversifies or falls back if it is due.
    fn end_iteration(&mut self) {
        let s = &mut self.stalls;
        let fresh = self.search.asks() > s.mark;
        s.mark = self.search.asks();
        s.iterations += 1;
        (s.stalled, s.barren) = if fresh {
            (0, 0)
        } else {
            (s.stalled + 1, s.barren + 1)
        };
        let stall = self.algorithm.stall();
        if stall.patience.is_some_and(|p| s.stalled >= p)
            || stall.period.is_some_and(|p| s.iterations >= p)
        {
            (s.stalled, s.iterations) = (0, 0);
            self.algorithm.diversify(&mut self.search);
        }
        if self.stalls.barren > FALLBACK {
            self.stalls.barren = 0;
            self.fill(1);
        }
    }

    /// Asks up to `n` random unasked configurations and hands them to the algorithm.
    fn fill(&mut self, n: usize) {
        for _ in 0..n.min(self.search.room()) {
            let Some(p) = self.search.random_unasked() else {
                break;
            };
            self.search.ask(p);
            self.algorithm.adopt(p);
        }
    }
}

impl<A: Algorithm> Strategy for Iterative<A> {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.search.open(n);
        while self.search.room() > 0 && !self.search.memo().exhausted() {
            match self.algorithm.step(&mut self.search) {
                Step::Continue => {}
                Step::Iteration => self.end_iteration(),
                Step::Wait => break,
            }
        }
        self.fill(n);
        self.search.close()
    }

    fn tell(&mut self, trials: &[Trial]) {
        self.search.tell(trials);
    }

    fn upcoming(&self, n: usize) -> Vec<usize> {
        if self.algorithm.samples_only() {
            self.search.peek_random(n)
        } else {
            Vec::new()
        }
    }
}
