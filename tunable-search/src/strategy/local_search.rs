//! # Local search: multi-start (`mls`) and iterated (`ils`)
//!
//! Greedy hill climbing over the neighbours of a configuration, constraint-aware as in Willemsen et
//! al. (see References; Section IV-A): the climber only ever stands on and looks at valid
//! configurations, so it never spends a move on a configuration that cannot be compiled.
//!
//! A *move* changes one parameter ([`Neighbour`], shared with simulated annealing): to any other
//! value (`hamming`, Kernel Tuner's choice for its hill climbers), to the nearest previous or next
//! value that gives a valid configuration (`adjacent`), or to any other value with the adjacent
//! moves tried first (`mixed`, the default: small steps first, but a local optimum is one for the
//! whole Hamming neighbourhood). With `diagonal` the adjacent moves come first, then moves of two
//! parameters at once, each to its previous or next value. Within those groups the order is
//! random. The climber tries the neighbours of the current configuration in that order and moves
//! to the first one that is better (`improvement=first`), or looks at all of them and moves to
//! the best (`improvement=best`).
//! Neighbours that are already known cost nothing: their results come from the strategy's
//! [`Memo`](super::Memo), so a known better neighbour is moved to at once. When no neighbour is
//! better, the climber stands on a *local optimum*:
//!
//! - **multi-start local search** (`mls`) restarts from a new start;
//! - **iterated local search** (`ils`) perturbs the accepted local optimum by `perturbation`
//!   random moves, each on a different parameter, and climbs again from there. The new local
//!   optimum is accepted if it is better (or, with probability `accept_worse`, anyway); after
//!   `no_improvement` iterations in a row that did not improve the accepted optimum, it restarts
//!   from a new start.
//!
//! A *start* is the best of `sample` random unevaluated configurations. The members of a sample
//! that were not chosen, and random configurations evaluated while the climber waited (see
//! Batches), stay candidates: a start is the best candidate not used yet. With `sample=1` every
//! start is a fresh uniformly random configuration, as in Kernel Tuner.
//!
//! Every run spends any budget, up to the whole space: a start evaluates new configurations, the
//! strategy never asks for a configuration twice, and a climb that only meets known
//! configurations ends (each move strictly improves), so the search cannot loop without asking.
//!
//! ## Batches
//! `ask(n)` returns the next `n` untried neighbours of the current configuration (and the `sample`
//! of a start at once), so a batch is evaluated in parallel. With `improvement=first` the climber
//! moves to the best improving neighbour among those told so far, as soon as there is one; with
//! `improvement=best` it waits for the whole neighbourhood. While the climber waits for results it
//! still needs, the [driver](super::Iterative) fills the batch with random unevaluated
//! configurations, which become start candidates. A batch is never empty unless every
//! configuration has been asked.
//!
//! ## Non-constraint-aware form
//! With `constraint_aware=false` (the paper's ablation) moves range over the Cartesian product
//! of the parameters' values (any value change, or the previous or next value) and starts are drawn
//! from it. An invalid configuration is never asked, so it costs no evaluation, but it gets a
//! static penalty, [`PENALTY`](super::PENALTY), like a failed one: the climber wastes its moves and
//! start draws on it (a sample with no valid draw starts from an invalid configuration, from which
//! any valid neighbour is an improvement).
//!
//! ## Options
//! The options, their keys and defaults are listed on [`LocalSearchOptions`].
//!
//! The defaults (`mixed` moves, first improvement, a start sampled from several configurations)
//! were chosen by leave-one-kernel-out cross-validation on the shared Kernel Tuner caches; the
//! scores are in `docs/notes/strategy-defaults.md`.
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{self, Outcome, StrategySpec, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20).build().unwrap());
//! let spec: StrategySpec = "ils:perturbation=3".parse().unwrap();
//! let mut s = strategy::build(&spec, Arc::clone(&space), 1).unwrap();
//! let run = drive(s.as_mut(), 60, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 12).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 60);
//! ```
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section IV-A: valid neighbours.
//! - H. R. Lourenço, O. C. Martin, T. Stützle, "Iterated Local Search", in *Handbook of
//!   Metaheuristics*, 2003.
//! - Kernel Tuner's `greedy_mls` and `greedy_ils` strategies (`hillclimbers.py`): first
//!   improvement over Hamming neighbours in a random order.

use super::config::Config;
use super::moves::{Move, Neighbour, adjacent_first, moves};
use super::options::{at_least, boolean, choice, declare_options, probability};
use super::starts::{Starts, Walker, walk};
use super::{Algorithm, Iterative, Search, Step};
use rand::RngExt;
use rand::seq::SliceRandom;

/// How a climber chooses among better neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Improvement {
    /// Move to the first better neighbour found (neighbours are tried in a random order).
    First,
    /// Evaluate the whole neighbourhood and move to the best neighbour if it is better.
    Best,
}

declare_options! {
    /// Options of [`LocalSearch`]; `Default` and [`multi_start`](Self::multi_start) give the
    /// defaults of `mls`, [`iterated`](Self::iterated) those of `ils`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LocalSearchOptions {
        /// Iterated local search (`ils`) if true, multi-start (`mls`) if false: set by the name.
        iterated: bool = false;
        /// The moves: `hamming`, `adjacent`, `mixed` or `diagonal`, see [`Neighbour`].
        neighbour: Neighbour = Neighbour::Mixed, "neighbour" => choice(&[
            ("hamming", Neighbour::Hamming),
            ("adjacent", Neighbour::Adjacent),
            ("mixed", Neighbour::Mixed),
            ("diagonal", Neighbour::Diagonal),
        ]);
        /// First or best improvement: `first` or `best`, see [`Improvement`].
        improvement: Improvement = Improvement::First, "improvement" => choice(&[
            ("first", Improvement::First),
            ("best", Improvement::Best),
        ]);
        /// Random configurations evaluated per start; the best of them is the start.
        sample: usize = 5, "sample" => at_least(1);
        /// `ils` only: random moves that perturb the accepted local optimum.
        perturbation: usize = 2, "perturbation" => at_least(1);
        /// `ils` only: iterations without improving the accepted optimum before a restart.
        no_improvement: usize = 5, "no_improvement" => at_least(1);
        /// `ils` only: probability of accepting a local optimum that is not better.
        accept_worse: f64 = 0.05, "accept_worse" => probability();
        /// Valid-only moves and starts; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
}

impl LocalSearchOptions {
    /// The defaults of multi-start local search, `mls`.
    pub fn multi_start() -> Self {
        Self::default()
    }

    /// The defaults of iterated local search, `ils`.
    pub fn iterated() -> Self {
        LocalSearchOptions {
            iterated: true,
            ..Self::default()
        }
    }
}

/// Multi-start or iterated local search; see the [module docs](self).
pub type LocalSearch = Iterative<LocalSearchAlgorithm>;

/// The climber, driven by [`Iterative`] as [`LocalSearch`].
#[derive(Debug)]
pub struct LocalSearchAlgorithm {
    opts: LocalSearchOptions,
    /// Where the climber stands (`None`: a start is due).
    cur: Option<Config>,
    /// The current configuration's neighbours not yet ruled out, in the order they are tried.
    nbrs: Vec<Move>,
    starts: Starts,
    /// `ils`: the accepted local optimum and its cost.
    home: Option<(Config, f64)>,
    /// `ils`: iterations since the accepted optimum last improved.
    stale: usize,
}

impl Algorithm for LocalSearchAlgorithm {
    type Options = LocalSearchOptions;

    fn new(opts: LocalSearchOptions, _search: &mut Search) -> Self {
        LocalSearchAlgorithm {
            cur: None,
            nbrs: Vec::new(),
            starts: Starts::new(opts.sample, opts.constraint_aware),
            home: None,
            stale: 0,
            opts,
        }
    }

    /// One step of the climb; a local optimum ends an iteration.
    fn step(&mut self, search: &mut Search) -> Step {
        let c = match walk(self, search, Step::Continue) {
            Ok(c) => c,
            Err(step) => return step,
        };
        let cur = self.cur.as_ref().expect("standing");
        let memo = search.memo();
        // Drop neighbours known to be no better; find the best known better one.
        self.nbrs
            .retain(|m| memo.rank(m.position).is_none_or(|x| x < c));
        let mut best: Option<(Move, f64)> = None;
        let mut unknown = 0;
        for m in &self.nbrs {
            match memo.rank(m.position) {
                Some(x) if best.is_none_or(|(_, b)| x < b) => best = Some((*m, x)),
                Some(_) => {}
                None => unknown += 1,
            }
        }
        if let Some((m, _)) = best
            && (self.opts.improvement == Improvement::First || unknown == 0)
        {
            let next = cur.moved(m);
            self.stand(next, search);
            return Step::Continue;
        }
        if unknown == 0 {
            self.local_optimum(search);
            return Step::Iteration;
        }
        // Ask the next untried neighbours.
        let asked = search.room();
        for m in &self.nbrs {
            if let Some(p) = m.position {
                search.ask(p);
            }
            if search.room() == 0 {
                break;
            }
        }
        if search.room() < asked {
            Step::Continue
        } else {
            Step::Wait
        }
    }

    /// A batch filler becomes a start candidate.
    fn adopt(&mut self, position: usize) {
        self.starts.add(position);
    }
}

impl Walker for LocalSearchAlgorithm {
    fn whereabouts(&mut self) -> (&mut Option<Config>, &mut Starts) {
        (&mut self.cur, &mut self.starts)
    }

    /// The neighbours of `c`, shuffled, become the moves to try.
    fn arrive(&mut self, c: &Config, search: &mut Search) {
        let mut nbrs = std::mem::take(&mut self.nbrs);
        moves(
            search.space(),
            &c.indices,
            self.opts.neighbour,
            self.opts.constraint_aware,
            &mut nbrs,
        );
        nbrs.shuffle(search.rng());
        match self.opts.neighbour {
            Neighbour::Mixed => adjacent_first(&c.indices, &mut nbrs),
            Neighbour::Diagonal => nbrs.sort_by_key(|m| m.also.is_some()),
            Neighbour::Hamming | Neighbour::Adjacent => {}
        }
        self.nbrs = nbrs;
    }
}

impl LocalSearchAlgorithm {
    /// At a local optimum: restart (mls) or perturb (ils).
    fn local_optimum(&mut self, search: &mut Search) {
        let c = self.cur.take().expect("standing somewhere");
        let cost = c.cost(search.memo()).expect("known");
        self.nbrs.clear();
        if !self.opts.iterated {
            return;
        }
        match &self.home {
            Some((_, h)) if cost >= *h => {
                self.stale += 1;
                if search.rng().random_bool(self.opts.accept_worse) {
                    self.home = Some((c, cost));
                }
            }
            _ => {
                self.stale = 0;
                self.home = Some((c, cost));
            }
        }
        if self.stale >= self.opts.no_improvement {
            self.home = None;
            self.stale = 0;
            return;
        }
        // Perturb: random moves, each on a parameter not moved yet (one parameter a move: the
        // diagonal rule perturbs by adjacent moves).
        let rule = match self.opts.neighbour {
            Neighbour::Diagonal => Neighbour::Adjacent,
            rule => rule,
        };
        let mut c = self.home.as_ref().expect("set above").0.clone();
        let mut moved: Vec<u16> = Vec::with_capacity(self.opts.perturbation);
        let mut m = Vec::new();
        for _ in 0..self.opts.perturbation {
            moves(
                search.space(),
                &c.indices,
                rule,
                self.opts.constraint_aware,
                &mut m,
            );
            m.retain(|x| !moved.contains(&x.param));
            if m.is_empty() {
                break;
            }
            let x = m[search.rng().random_range(0..m.len())];
            moved.push(x.param);
            c = c.moved(x);
        }
        self.stand(c, search);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::neighbours::hamming;
    use crate::strategy::fixtures::{bowl, space};
    use crate::strategy::{Strategy, Trial};
    use std::sync::Arc;

    #[test]
    fn batches_hold_distinct_neighbours() {
        let s = space();
        let mut ls = LocalSearch::new(Arc::clone(&s), LocalSearchOptions::multi_start(), 3);
        let first = ls.ask(5);
        assert_eq!(first.len(), 5, "the sample of the first start");
        let trials: Vec<Trial> = first
            .iter()
            .map(|&p| Trial {
                position: p,
                outcome: bowl(&s, p),
            })
            .collect();
        ls.tell(&trials);
        let next = ls.ask(4);
        assert_eq!(next.len(), 4);
        let start = ls.algorithm().cur.as_ref().unwrap().indices.clone();
        for p in next {
            let g = s.indices(p);
            assert_eq!(hamming(&g, &start), 1, "a neighbour of the start");
        }
    }

    /// A ridge along `a == b` that falls towards (11, 11): every point of the ridge is a local
    /// optimum of one-parameter steps, and only a step of both parameters at once follows it.
    #[test]
    fn diagonal_moves_follow_a_ridge_that_one_parameter_steps_cannot() {
        let space = Arc::new(
            crate::SpaceBuilder::new()
                .param("a", 0..12)
                .param("b", 0..12)
                .build()
                .unwrap(),
        );
        let cost = |p: usize| {
            let i = space.indices(p);
            let (a, b) = (f64::from(i[0]), f64::from(i[1]));
            100.0 * (a - b).abs() + 30.0 - a - b
        };
        let found = |neighbour: &str| {
            (0..20)
                .filter(|&seed| {
                    let spec = format!("mls:neighbour={neighbour}:sample=1")
                        .parse()
                        .unwrap();
                    let mut s = crate::strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                    let run = crate::strategy::drive(s.as_mut(), 50, 1, |p| {
                        crate::strategy::Outcome::Value(cost(p))
                    });
                    run.trials.iter().any(|t| cost(t.position) == 8.0)
                })
                .count()
        };
        let (diagonal, adjacent) = (found("diagonal"), found("adjacent"));
        assert_eq!(
            diagonal, 20,
            "every run climbs the ridge to its end in 50 evaluations"
        );
        assert!(
            adjacent < 10,
            "one-parameter steps stop on the ridge: {adjacent} of 20"
        );
    }
}
