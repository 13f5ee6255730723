//! # Differential evolution
//!
//! Differential evolution (DE) on value-index vectors, constraint-aware as in Willemsen et al. (see
//! References; Section IV-B, Algorithm 1). The initial population is a maximin Latin-hypercube
//! sample of valid configurations. For each member `x_i` a mutant is built on value indices from
//! other members `x_r1, x_r2, ...` and the best configuration evaluated so far, e.g. `randtobest1`
//! (the default) `v = x_r1 + F (best - x_r1 + x_r2 - x_r3)` or `best1` `v = best + F (x_r1 -
//! x_r2)`, rounded and clipped; binomial (`bin`) or exponential (`exp`) crossover with rate `CR`
//! mixes it with `x_i` into a trial vector `u_i`; an invalid trial is *repaired* to a valid
//! configuration nearest by index distance (ties at random); and `u_i` replaces `x_i` if it is at
//! least as good and not already in the population.
//!
//! The non-constraint-aware form (`constraint_aware=false`, the paper's ablation) starts from
//! random configurations of the Cartesian product and does not repair: an invalid trial gets a
//! static penalty ([`PENALTY`](super::PENALTY)) without being evaluated.
//!
//! As an ask/tell state machine the evolution is *steady-state*: members are visited in turn, a
//! trial is selected as soon as its result is known, and while a trial is being evaluated the
//! following members produce theirs, so any batch size keeps the population busy (with batches of
//! one this is exactly the sequential loop of Algorithm 1). A trial that is already known (or
//! invalid, without repair) is selected at once for free, so a generation only spends evaluations
//! on new configurations.
//!
//! Kernel Tuner's DE stops after `maxiter` generations; this one spends any budget. When
//! `stall` generations in a row bring no new configuration, or every `maxiter` generations (a
//! sweep over the population is one iteration of the [driver](super::Iterative)), the
//! population is diversified: the best configuration so far stays, every other member is replaced
//! by a random configuration never evaluated (a random Cartesian one in the non-constraint-aware
//! form).
//!
//! ## Options
//! The options, their keys and defaults are listed on [`DiffEvoOptions`].
//!
//! The paper's Table IV settings are `popsize=16:F=0.7:CR=0.6:method=best1bin`. The defaults
//! were chosen by leave-one-kernel-out cross-validation on the shared Kernel Tuner caches (the
//! grids and scores are in `docs/notes/strategy-defaults.md`): small populations win at budgets
//! of a few hundred evaluations, because fewer evaluations go to the initial sample.
//! With batches larger than `popsize` most of each batch is random samples: raise `popsize`.
//!
//! ```
//! use std::sync::Arc;
//! use tunable_search::SpaceBuilder;
//! use tunable_search::strategy::{DiffEvo, DiffEvoOptions, Outcome, drive};
//! let space = Arc::new(SpaceBuilder::new().param("a", 0..20).param("b", 0..20)
//!     .constraint("a + b <= 30").build().unwrap());
//! let mut de = DiffEvo::new(Arc::clone(&space), DiffEvoOptions::default(), 1);
//! let run = drive(&mut de, 50, 1, |p| {
//!     let i = space.indices(p);
//!     Outcome::Value(f64::from((i[0] as i32 - 7).pow(2) + (i[1] as i32 - 3).pow(2)))
//! });
//! assert_eq!(run.trials.len(), 50);
//! ```
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", Section IV-B and Table IV.
//! - R. Storn, K. Price, "Differential Evolution – A Simple and Efficient Heuristic for Global
//!   Optimization over Continuous Spaces", J. Global Optimization 11, 1997.

use super::config::Config;
use super::options::{at_least, boolean, checked, declare_options};
use super::starts::fresh;
use super::{Algorithm, Iterative, Memo, Repair, Search, Stall, Step};
use rand::RngExt;
use std::sync::Arc;

/// How the mutant vector is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// `best + F (r1 - r2)`.
    Best1,
    /// `r1 + F (r2 - r3)`.
    Rand1,
    /// `best + F (r1 + r2 - r3 - r4)`.
    Best2,
    /// `r1 + F (r2 + r3 - r4 - r5)`.
    Rand2,
    /// `x_i + F (best - x_i + r1 - r2)`.
    CurrentToBest1,
    /// `r1 + F (best - r1 + r2 - r3)`.
    RandToBest1,
}

/// How the trial vector mixes the mutant into the member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeCrossover {
    /// Each parameter from the mutant with probability `CR`, at least one.
    Binomial,
    /// A run of consecutive parameters (cyclically) from the mutant, continued with probability
    /// `CR`, at least one.
    Exponential,
}

declare_options! {
    /// Options of [`DiffEvo`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct DiffEvoOptions {
        /// Population size, at least 4. (The paper multiplies its popsize by the number of
        /// parameters: 16 x 15 = 240 members on the GEMM space would not finish one generation
        /// within a budget of 220; here `popsize` is the population size itself.)
        popsize: usize = 6, "popsize" => at_least(4);
        /// Differential weight `F`, in `[0, 2]`.
        f: f64 = 1.3, "F" | "f" => checked("a number in [0, 2]", |x: &f64| (0.0..=2.0).contains(x));
        /// Crossover rate `CR`, in `[0, 1]`.
        cr: f64 = 0.3,
            "CR" | "cr" => checked("a number in [0, 1]", |x: &f64| (0.0..=1.0).contains(x));
        /// The mutation of `method`.
        mutation: Mutation = Mutation::RandToBest1;
        /// The crossover of `method`.
        crossover: DeCrossover = DeCrossover::Binomial;
        /// Generations between forced diversifications.
        maxiter: usize = 100, "maxiter" => at_least(1);
        /// Generations without a new configuration before diversifying (the paper reinitializes
        /// a population that has not changed over two consecutive generations).
        stall: usize = 2, "stall" => at_least(1);
        /// Valid initial population and repair; `false` is the penalty form.
        constraint_aware: bool = true, "constraint_aware" => boolean();
    }
    more keys {
        /// sets `mutation` and `crossover`: `best1`, `rand1`, `best2`, `rand2`,
        /// `currenttobest1` or `randtobest1`, followed by `bin` or `exp`, as in Kernel Tuner
        /// (default `randtobest1bin`).
        "method" => |o: &mut DiffEvoOptions, v: &str| -> Result<(), String> {
            (o.mutation, o.crossover) = parse_method(v)?;
            Ok(())
        };
    }
}

const METHOD_HELP: &str = "expected best1, rand1, best2, rand2, currenttobest1 or randtobest1 \
                           followed by bin or exp, e.g. best1bin";

fn parse_method(v: &str) -> Result<(Mutation, DeCrossover), String> {
    let (m, c) = if let Some(m) = v.strip_suffix("bin") {
        (m, DeCrossover::Binomial)
    } else if let Some(m) = v.strip_suffix("exp") {
        (m, DeCrossover::Exponential)
    } else {
        return Err(METHOD_HELP.into());
    };
    let m = match m {
        "best1" => Mutation::Best1,
        "rand1" => Mutation::Rand1,
        "best2" => Mutation::Best2,
        "rand2" => Mutation::Rand2,
        "currenttobest1" => Mutation::CurrentToBest1,
        "randtobest1" => Mutation::RandToBest1,
        _ => return Err(METHOD_HELP.into()),
    };
    Ok((m, c))
}

/// Differential evolution; see the [module docs](self).
pub type DiffEvo = Iterative<DiffEvoAlgorithm>;

/// One population slot: its member and the trial being evaluated for it, if any.
#[derive(Clone, Debug)]
struct Slot {
    member: Config,
    trial: Option<Config>,
}

/// The population of differential evolution, driven by [`Iterative`] as [`DiffEvo`].
#[derive(Debug)]
pub struct DiffEvoAlgorithm {
    opts: DiffEvoOptions,
    slots: Vec<Slot>,
    /// The slot visited next.
    cursor: usize,
    /// Whether some member produced a trial in the current sweep.
    acted: bool,
}

impl Algorithm for DiffEvoAlgorithm {
    type Options = DiffEvoOptions;

    fn new(opts: DiffEvoOptions, search: &mut Search) -> Self {
        let space = Arc::clone(search.space());
        let members: Vec<Config> = if opts.constraint_aware {
            space
                .maximin_latin_hypercube(search.rng(), opts.popsize, 20)
                .into_iter()
                .map(|p| Config::at(&space, p))
                .collect()
        } else {
            fresh(search, opts.popsize, &[], false)
        };
        DiffEvoAlgorithm {
            opts,
            slots: members
                .into_iter()
                .map(|member| Slot {
                    member,
                    trial: None,
                })
                .collect(),
            cursor: 0,
            acted: false,
        }
    }

    /// Asks the members never asked (the initial population, or fresh ones after diversifying),
    /// then visits the members in turn until one produces a trial; a sweep that produced any
    /// ends an iteration.
    fn step(&mut self, search: &mut Search) -> Step {
        self.resolve(search.memo());
        for slot in &self.slots {
            if let Some(p) = slot.member.position {
                search.ask(p);
            }
        }
        if search.room() == 0 {
            return Step::Continue;
        }
        let len = self.slots.len();
        let mut idle = 0; // consecutive slots waiting for a result
        while idle <= len {
            if self.cursor >= len {
                self.cursor = 0;
                if std::mem::take(&mut self.acted) {
                    return Step::Iteration;
                }
                continue;
            }
            let i = self.cursor;
            self.cursor += 1;
            let slot = &self.slots[i];
            if slot.trial.is_some() || slot.member.cost(search.memo()).is_none() {
                idle += 1;
                continue;
            }
            self.acted = true;
            let trial = self.trial(i, search);
            if !self.select(i, &trial, search.memo()) {
                if let Some(p) = trial.position {
                    search.ask(p);
                }
                self.slots[i].trial = Some(trial);
            }
            return Step::Continue;
        }
        Step::Wait
    }

    fn stall(&self) -> Stall {
        Stall::new(self.opts.stall, self.opts.maxiter)
    }

    /// Keeps the best configuration so far and replaces every other member by a fresh one.
    fn diversify(&mut self, search: &mut Search) {
        let best = match search.memo().best() {
            Some((p, _)) => Config::at(search.space(), p),
            None => self.slots[0].member.clone(),
        };
        let keep = [best];
        let mut fresh = fresh(
            search,
            self.slots.len() - 1,
            &keep,
            self.opts.constraint_aware,
        );
        let [best] = keep;
        fresh.insert(0, best);
        // Too few unasked configurations left: keep some old members.
        for (slot, m) in self.slots.iter_mut().zip(fresh) {
            slot.member = m;
            slot.trial = None;
        }
        self.cursor = 0;
    }
}

impl DiffEvoAlgorithm {
    /// The value indices of the best configuration known: the best evaluated so far, else the
    /// best member with a known cost.
    fn best_indices(&self, search: &Search) -> Vec<u16> {
        let memo = search.memo();
        if let Some((p, _)) = memo.best() {
            return search.space().indices(p);
        }
        self.slots
            .iter()
            .filter_map(|s| s.member.cost(memo).map(|c| (c, &s.member)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or_else(
                || self.slots[0].member.indices.clone(),
                |(_, m)| m.indices.clone(),
            )
    }

    /// `k` distinct member indices other than `i` (with repetition if the population is small).
    fn pick_others(&self, search: &mut Search, i: usize, k: usize) -> Vec<usize> {
        let n = self.slots.len();
        let mut out: Vec<usize> = Vec::with_capacity(k);
        while out.len() < k {
            let r = search.rng().random_range(0..n);
            if (r != i && !out.contains(&r)) || n <= k {
                out.push(r);
            }
        }
        out
    }

    /// The (repaired) trial vector for slot `i`.
    fn trial(&self, i: usize, search: &mut Search) -> Config {
        let f = self.opts.f;
        let g = |j: usize| -> Vec<f64> {
            self.slots[j]
                .member
                .indices
                .iter()
                .map(|&v| f64::from(v))
                .collect()
        };
        let bv: Vec<f64> = self
            .best_indices(search)
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let xi = g(i);
        let mut others = |k| self.pick_others(search, i, k);
        let mutant: Vec<f64> = match self.opts.mutation {
            Mutation::Best1 => {
                let r = others(2);
                let (a, b) = (g(r[0]), g(r[1]));
                (0..xi.len()).map(|d| bv[d] + f * (a[d] - b[d])).collect()
            }
            Mutation::Rand1 => {
                let r = others(3);
                let (a, b, c) = (g(r[0]), g(r[1]), g(r[2]));
                (0..xi.len()).map(|d| a[d] + f * (b[d] - c[d])).collect()
            }
            Mutation::Best2 => {
                let v: Vec<Vec<f64>> = others(4).into_iter().map(g).collect();
                (0..xi.len())
                    .map(|d| bv[d] + f * (v[0][d] + v[1][d] - v[2][d] - v[3][d]))
                    .collect()
            }
            Mutation::Rand2 => {
                let v: Vec<Vec<f64>> = others(5).into_iter().map(g).collect();
                (0..xi.len())
                    .map(|d| v[0][d] + f * (v[1][d] + v[2][d] - v[3][d] - v[4][d]))
                    .collect()
            }
            Mutation::CurrentToBest1 => {
                let r = others(2);
                let (a, b) = (g(r[0]), g(r[1]));
                (0..xi.len())
                    .map(|d| xi[d] + f * (bv[d] - xi[d] + a[d] - b[d]))
                    .collect()
            }
            Mutation::RandToBest1 => {
                let r = others(3);
                let (a, b, c) = (g(r[0]), g(r[1]), g(r[2]));
                (0..xi.len())
                    .map(|d| a[d] + f * (bv[d] - a[d] + b[d] - c[d]))
                    .collect()
            }
        };
        let space = Arc::clone(search.space());
        let mutant: Vec<u16> = mutant
            .iter()
            .zip(space.params())
            .map(|(&m, p)| m.round().clamp(0.0, (p.values().len() - 1) as f64) as u16)
            .collect();
        let mut genes = self.slots[i].member.indices.clone();
        let d = genes.len();
        let rng = search.rng();
        match self.opts.crossover {
            DeCrossover::Binomial => {
                let j_rand = rng.random_range(0..d);
                for (j, gene) in genes.iter_mut().enumerate() {
                    if j == j_rand || rng.random::<f64>() < self.opts.cr {
                        *gene = mutant[j];
                    }
                }
            }
            DeCrossover::Exponential => {
                let start = rng.random_range(0..d);
                let mut l = 0;
                loop {
                    let j = (start + l) % d;
                    genes[j] = mutant[j];
                    l += 1;
                    if l >= d || rng.random::<f64>() >= self.opts.cr {
                        break;
                    }
                }
            }
        }
        if !self.opts.constraint_aware {
            return Config::new(&space, genes);
        }
        match Repair::Nearest.apply(&space, &genes, rng) {
            Some(p) => Config::at(&space, p),
            None => Config::new(&space, genes),
        }
    }

    /// Selection for slot `i` once its trial's cost is known: the trial replaces the member if it
    /// is at least as good and not in the population already. Returns false if still unknown.
    fn select(&mut self, i: usize, trial: &Config, memo: &Memo) -> bool {
        let (Some(ct), Some(cx)) = (trial.cost(memo), self.slots[i].member.cost(memo)) else {
            return false;
        };
        if ct <= cx && !self.slots.iter().any(|s| s.member == *trial) {
            self.slots[i].member = trial.clone();
        }
        true
    }

    /// Selects every trial whose result has arrived.
    fn resolve(&mut self, memo: &Memo) {
        for i in 0..self.slots.len() {
            if let Some(t) = self.slots[i].trial.take()
                && !self.select(i, &t, memo)
            {
                self.slots[i].trial = Some(t);
            }
        }
    }
}
