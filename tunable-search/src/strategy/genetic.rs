//! # Genetic algorithm
//!
//! A generational GA on value-index vectors, constraint-aware as in Willemsen et al.,
//! "Constraint-aware Optimization in Auto-Tuning" (Section IV-C, Algorithm 3): the initial
//! population is valid configurations; parents are chosen with probability proportional to their
//! rank; children come from crossover, invalid children are *repaired* to a random valid neighbour
//! (strictly-adjacent, then adjacent, then Hamming), and a mutation replaces a child by a random
//! valid Hamming neighbour. The non-constraint-aware form (`constraint_aware=false`) starts from
//! random Cartesian configurations, mutates one gene at random and gives invalid children a static
//! penalty instead of repairing them.
//!
//! Unlike Kernel Tuner's GA, which stops once its population has converged, this one keeps
//! spending the budget: the best `elitism` members survive each generation, and after `stall`
//! generations in a row that bring nothing new, or every `maxiter` generations, the population is
//! diversified by replacing all but the elite with fresh random valid configurations (the
//! [driver](super::Iterative) counts the generations, one iteration each).
//!
//! ## Options
//! The options, their keys and defaults are listed on [`GeneticOptions`].
//! `mutation_chance`, `method` and `maxiter` start from the paper's Table IV. `popsize` and
//! `pressure` were chosen by leave-one-kernel-out cross-validation on the shared Kernel Tuner
//! caches (the grid and scores are in `docs/notes/strategy-defaults.md`). Selection pressure
//! matters most: with uniform parents (pressure 1) the GA is no better than random search on
//! these spaces.
//!
//! ## References
//! - F.-J. Willemsen, R. Schoonhoven, J. Filipovič, J. Tørring, R. van Nieuwpoort, B. van
//!   Werkhoven, "A Methodology for Comparing Optimization Algorithms for Auto-Tuning" and the
//!   constraint-aware optimization algorithms of Kernel Tuner.

use super::config::Config;
use super::options::{at_least, boolean, checked, choice, declare_options};
use super::starts::fresh;
use super::{Algorithm, Iterative, Repair, Search, Stall, Step};
use crate::space::Neighbourhood;
use rand::RngExt;
use rand::seq::SliceRandom;
use std::sync::Arc;

/// Crossover methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossover {
    /// One cut point.
    SinglePoint,
    /// Two cut points.
    TwoPoint,
    /// Each gene from either parent with probability 1/2.
    Uniform,
}

declare_options! {
    /// Options of [`Genetic`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct GeneticOptions {
        /// Population size.
        popsize: usize = 14, "popsize" => at_least(2);
        /// A child mutates with probability `1 / mutation_chance`.
        mutation_chance: u32 = 5, "mutation_chance" => at_least(1);
        /// Crossover method: `single_point`, `two_point` or `uniform`.
        method: Crossover = Crossover::SinglePoint, "method" => choice(&[
            ("single_point", Crossover::SinglePoint),
            ("two_point", Crossover::TwoPoint),
            ("uniform", Crossover::Uniform),
        ]);
        /// Best members carried into the next generation unchanged.
        elitism: usize = 1, "elitism" => at_least(0);
        /// Generations between forced diversifications.
        maxiter: usize = 150, "maxiter" => at_least(1);
        /// Generations in a row without a new configuration before diversifying.
        stall: usize = 3, "stall" => at_least(1);
        /// Selection pressure: parents are ranks drawn from `Beta(1, pressure)`, at least 1.
        pressure: f64 = 16.0,
            "pressure" => checked("a number >= 1", |p: &f64| *p >= 1.0 && p.is_finite());
        /// Repair and valid-only operators; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
}

/// The genetic algorithm; see the [module docs](self).
pub type Genetic = Iterative<GeneticAlgorithm>;

/// The genetic algorithm's population, driven by [`Iterative`] as [`Genetic`].
#[derive(Debug)]
pub struct GeneticAlgorithm {
    opts: GeneticOptions,
    pop: Vec<Config>,
    /// Whether the current generation's end was reported to the driver.
    ended: bool,
}

impl Algorithm for GeneticAlgorithm {
    type Options = GeneticOptions;

    fn new(opts: GeneticOptions, search: &mut Search) -> Self {
        let pop = fresh(search, opts.popsize, &[], opts.constraint_aware);
        GeneticAlgorithm {
            opts,
            pop,
            ended: false,
        }
    }

    fn step(&mut self, search: &mut Search) -> Step {
        for m in &self.pop {
            if let Some(p) = m.position {
                search.ask(p);
            }
        }
        if search.room() == 0 {
            return Step::Continue;
        }
        if self.pop.iter().any(|m| m.cost(search.memo()).is_none()) {
            return Step::Wait;
        }
        if !std::mem::replace(&mut self.ended, true) {
            return Step::Iteration;
        }
        self.next_generation(search, false);
        Step::Continue
    }

    fn stall(&self) -> Stall {
        Stall::new(self.opts.stall, self.opts.maxiter)
    }

    fn diversify(&mut self, search: &mut Search) {
        self.next_generation(search, true);
    }
}

impl GeneticAlgorithm {
    fn crossover(&self, search: &mut Search, a: &[u16], b: &[u16]) -> [Vec<u16>; 2] {
        let d = a.len();
        let rng = search.rng();
        let mask: Vec<bool> = match self.opts.method {
            Crossover::SinglePoint => {
                let cut = rng.random_range(0..=d);
                (0..d).map(|i| i < cut).collect()
            }
            Crossover::TwoPoint => {
                let (mut x, mut y) = (rng.random_range(0..=d), rng.random_range(0..=d));
                if x > y {
                    std::mem::swap(&mut x, &mut y);
                }
                (0..d).map(|i| i < x || i >= y).collect()
            }
            Crossover::Uniform => (0..d).map(|_| rng.random_bool(0.5)).collect(),
        };
        let pick = |first: &[u16], second: &[u16]| -> Vec<u16> {
            mask.iter()
                .enumerate()
                .map(|(i, &m)| if m { first[i] } else { second[i] })
                .collect()
        };
        [pick(a, b), pick(b, a)]
    }

    /// Repairs (constraint-aware) and possibly mutates a child.
    fn finish_child(&self, search: &mut Search, genes: Vec<u16>) -> Config {
        let space = Arc::clone(search.space());
        let rng = search.rng();
        let mutate = rng.random_range(0..self.opts.mutation_chance) == 0;
        if !self.opts.constraint_aware {
            let mut genes = genes;
            if mutate {
                let g = rng.random_range(0..genes.len());
                genes[g] = rng.random_range(0..space.params()[g].values().len()) as u16;
            }
            return Config::new(&space, genes);
        }
        let Some(mut pos) = Repair::Random.apply(&space, &genes, rng) else {
            return Config::new(&space, genes);
        };
        if mutate {
            let n = space.neighbours(&space.indices(pos), Neighbourhood::Hamming);
            if !n.is_empty() {
                pos = n[rng.random_range(0..n.len())];
            }
        }
        Config::at(&space, pos)
    }

    /// Parent choice by rank: `floor(n * x)` with `x ~ Beta(1, pressure)`, drawn by inverting
    /// its distribution function `1 - (1 - x)^pressure`. Pressure 1 is uniform; Kernel Tuner
    /// uses 2.5; the default 16 makes most children descend from the best few members.
    fn select(&self, search: &mut Search, n: usize) -> usize {
        let u: f64 = search.rng().random();
        let x = 1.0 - (1.0 - u).powf(1.0 / self.opts.pressure);
        ((x * n as f64) as usize).min(n - 1)
    }

    /// Breeds the next generation from the evaluated one: the elite, then (when diversifying)
    /// fresh random configurations, then children of rank-selected parents.
    fn next_generation(&mut self, search: &mut Search, diversify: bool) {
        self.ended = false;
        let mut ranked = std::mem::take(&mut self.pop);
        let memo = search.memo();
        ranked.sort_by(|a, b| {
            let cost = |m: &Config| m.cost(memo).unwrap_or(super::PENALTY);
            cost(a).total_cmp(&cost(b))
        });
        let mut next: Vec<Config> = ranked.iter().take(self.opts.elitism).cloned().collect();
        let aware = self.opts.constraint_aware;
        if diversify {
            let want = self.opts.popsize.saturating_sub(next.len());
            let fresh = fresh(search, want, &next, aware);
            next.extend(fresh);
        }
        let mut tries = 0;
        while next.len() < self.opts.popsize && tries < 10 * self.opts.popsize && ranked.len() >= 2
        {
            tries += 1;
            let (i, j) = (
                self.select(search, ranked.len()),
                self.select(search, ranked.len()),
            );
            for c in self.crossover(search, &ranked[i].indices, &ranked[j].indices) {
                let child = self.finish_child(search, c);
                if next.len() < self.opts.popsize && !next.contains(&child) {
                    next.push(child);
                }
            }
        }
        if next.len() < 2 {
            let fresh = fresh(search, self.opts.popsize - next.len(), &next, aware);
            next.extend(fresh);
        }
        next.shuffle(search.rng());
        self.pop = next;
    }
}
