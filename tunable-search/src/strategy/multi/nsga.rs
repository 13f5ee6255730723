//! # NSGA-II, steady state and constraint-aware
//!
//! The genetic algorithm of Deb et al., "A fast and elitist multiobjective genetic algorithm:
//! NSGA-II", on value-index vectors: the population is the best `popsize` configurations told
//! so far by non-dominated rank and, within a rank, by crowding distance (so the front's
//! extremes and its lonely points survive); parents win binary tournaments by the same order.
//! It breeds one child per position asked (steady state, so it never waits for a generation
//! to finish): uniform crossover, a child that violates the constraints is *repaired* to a
//! random valid neighbour as the constraint-aware GA of Willemsen et al., "Constraint-aware
//! Optimization in Auto-Tuning" does ([`Repair::Random`]), and a mutation moves it to a random
//! valid Hamming neighbour. A child asked before moves to an unasked Hamming neighbour; failing
//! that, a random unasked configuration is asked. The first `init` configurations are random.

use super::archive::{Archive, fill};
use super::{MultiStrategy, MultiTrial};
use crate::Space;
use crate::pareto;
use crate::space::Neighbourhood;
use crate::strategy::Repair;
use crate::strategy::options::{at_least, declare_options};
use rand::RngExt;
use std::sync::Arc;

declare_options! {
    /// Options of [`Nsga`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct NsgaOptions {
        /// The population: how many of the configurations told breed.
        popsize: usize = 20, "popsize" => at_least(2);
        /// Random configurations asked before breeding starts.
        init: usize = 10, "init" => at_least(2);
        /// A child mutates with probability `1 / mutation_chance`.
        mutation_chance: u32 = 3, "mutation_chance" => at_least(1);
    }
}

/// Steady-state constraint-aware NSGA-II; see the [module docs](self).
#[derive(Debug)]
pub struct Nsga {
    archive: Archive,
    opts: NsgaOptions,
    /// The breeding population: indices into the archive's points, best first.
    population: Vec<usize>,
    /// Each member's `(rank, crowding)`, the tournament's order.
    order: Vec<(usize, f64)>,
    /// Whether results came since the population was chosen.
    stale: bool,
}

impl Nsga {
    /// NSGA-II over `space` for `objectives` objectives, seeded.
    pub fn new(space: Arc<Space>, objectives: usize, opts: NsgaOptions, seed: u64) -> Self {
        Nsga {
            archive: Archive::new(space, objectives, seed),
            opts,
            population: Vec::new(),
            order: Vec::new(),
            stale: false,
        }
    }

    /// Chooses the population: by rank, then by crowding within the rank.
    fn choose(&mut self) {
        self.stale = false;
        let ranks = self.archive.ranks();
        let mut keyed: Vec<(usize, usize, f64)> = Vec::with_capacity(ranks.len());
        let top = ranks.iter().copied().max().unwrap_or(0);
        for r in 0..=top {
            let members: Vec<usize> = (0..ranks.len()).filter(|&i| ranks[i] == r).collect();
            let values: Vec<&[f64]> = members
                .iter()
                .map(|&i| self.archive.points[i].1.as_slice())
                .collect();
            let crowd = pareto::crowding(&values);
            keyed.extend(members.iter().zip(crowd).map(|(&i, c)| (i, r, c)));
            if keyed.len() >= self.opts.popsize {
                break;
            }
        }
        keyed.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)));
        keyed.truncate(self.opts.popsize);
        self.population = keyed.iter().map(|k| k.0).collect();
        self.order = keyed.iter().map(|k| (k.1, k.2)).collect();
    }

    /// A parent by binary tournament: the lower rank, then the larger crowding distance.
    fn tournament(&mut self) -> usize {
        let n = self.population.len();
        let (a, b) = (
            self.archive.rng.random_range(0..n),
            self.archive.rng.random_range(0..n),
        );
        let (oa, ob) = (self.order[a], self.order[b]);
        let winner = if oa.0 < ob.0 || (oa.0 == ob.0 && oa.1 >= ob.1) {
            a
        } else {
            b
        };
        self.archive.points[self.population[winner]].0
    }

    /// A new child's position, or `None` if no try gave an unasked one.
    fn child(&mut self) -> Option<usize> {
        let space = Arc::clone(&self.archive.space);
        for _ in 0..20 {
            let (a, b) = (
                space.indices(self.tournament()),
                space.indices(self.tournament()),
            );
            let rng = &mut self.archive.rng;
            let genes: Vec<u16> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| if rng.random_bool(0.5) { x } else { y })
                .collect();
            let Some(mut pos) = Repair::Random.apply(&space, &genes, rng) else {
                continue;
            };
            if rng.random_range(0..self.opts.mutation_chance) == 0 {
                let n = space.neighbours(&space.indices(pos), Neighbourhood::Hamming);
                if !n.is_empty() {
                    pos = n[rng.random_range(0..n.len())];
                }
            }
            if !self.archive.is_asked(pos) {
                return Some(pos);
            }
            let free: Vec<usize> = space
                .neighbours(&space.indices(pos), Neighbourhood::Hamming)
                .into_iter()
                .filter(|&p| !self.archive.is_asked(p))
                .collect();
            if !free.is_empty() {
                return Some(free[self.archive.rng.random_range(0..free.len())]);
            }
        }
        None
    }
}

impl MultiStrategy for Nsga {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        fill(
            self,
            n,
            |s| &mut s.archive,
            |s| {
                if s.stale {
                    s.choose();
                }
                let breed = s.archive.points.len() >= s.opts.init.max(2) && s.population.len() >= 2;
                if breed { s.child() } else { None }
            },
        )
    }

    fn tell(&mut self, trials: &[MultiTrial]) {
        self.archive.tell(trials);
        self.stale = true;
    }
}
