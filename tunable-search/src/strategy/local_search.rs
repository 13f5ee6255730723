//! # Local search: multi-start (`mls`) and iterated (`ils`)
//!
//! Greedy hill climbing over the neighbours of a configuration, constraint-aware as in paper 001
//! (Section IV-A): the climber only ever stands on and looks at valid configurations, so it never
//! spends a move on a configuration that cannot be compiled.
//!
//! A *move* changes one parameter ([`Neighbour`]): to any other value (`hamming`, Kernel Tuner's
//! choice for its hill climbers), to the nearest previous or next value that gives a valid
//! configuration (`adjacent`), or to any other value with the adjacent moves tried first (`mixed`,
//! the default: small steps first, but a local optimum is one for the whole Hamming
//! neighbourhood). Within those groups the order is random. The climber tries the neighbours of
//! the current configuration in that order and moves to the first one that is better
//! (`improvement=first`), or looks at all of them and moves to the best (`improvement=best`).
//! Neighbours that are already known cost nothing: their results come from the strategy's
//! [`Memo`], so a known better neighbour is moved to at once. When no neighbour is better, the
//! climber stands on a *local optimum*:
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
//! still needs, the batch is filled with random unevaluated configurations, which become start
//! candidates. A batch is never empty unless every configuration has been asked.
//!
//! ## Non-constraint-aware form
//! With `constraint_aware=false` (the ablation of paper 001) moves range over the Cartesian
//! product of the parameters' values (any value change, or the previous or next value) and starts
//! are drawn from it. An invalid configuration is never asked, so it costs no evaluation, but it
//! gets a static penalty, `f64::MAX`, like a failed one: the climber wastes its moves and start
//! draws on it (a sample with no valid draw starts from an invalid configuration, from which any
//! valid neighbour is an improvement).
//!
//! ## Options
//! - `neighbour` (`mixed`): `hamming`, `adjacent` or `mixed`, see [`Neighbour`];
//! - `improvement` (`first`): `first` or `best`, see [`Improvement`];
//! - `sample` (5): random configurations evaluated per start, the best of them is the start;
//! - `perturbation` (`ils` only, 2): random moves from the accepted local optimum;
//! - `no_improvement` (`ils` only, 5): non-improving iterations before a restart;
//! - `accept_worse` (`ils` only, 0.05): probability of accepting a local optimum that is not
//!   better;
//! - `constraint_aware` (true): valid-only moves and starts, see above.
//!
//! The defaults were chosen on the ten shared Kernel Tuner caches (budget 220, 35 seeded runs
//! each) by leave-one-kernel-out cross-validation over the four kernel families (convolution,
//! dedispersion, gemm, pnpoly): `mixed` moves, first improvement and `sample` 3 to 8 were chosen
//! in every fold; the `ils` settings were within noise of each other. Kernel Tuner's own
//! settings (`hamming`, `sample=1`) score about 0.15 lower.
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
//!   Optimization in Auto-Tuning", Section IV-A (paper 001 of this project): valid neighbours.
//! - H. R. Lourenço, O. C. Martin, T. Stützle, "Iterated Local Search", in *Handbook of
//!   Metaheuristics*, 2003.
//! - Kernel Tuner's `greedy_mls` and `greedy_ils` strategies (`hillclimbers.py`): first
//!   improvement over Hamming neighbours in a random order.

use super::options::{Configure, parse_bool, parse_checked};
use super::{Memo, Strategy, Trial};
use crate::Space;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Which configurations are one move away (always exactly one parameter changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbour {
    /// Any other value of one parameter (paper 001's Hamming neighbours).
    Hamming,
    /// The previous or next value of one parameter; constraint-aware, the nearest previous or
    /// next value that gives a valid configuration (paper 001's adjacent rule, per parameter).
    Adjacent,
    /// The Hamming moves, the adjacent ones tried first (local search; in simulated annealing
    /// the `hamming` option mixes the two kinds instead).
    Mixed,
}

impl Neighbour {
    pub(super) fn parse(v: &str) -> Result<Self, Option<String>> {
        match v {
            "hamming" => Ok(Neighbour::Hamming),
            "adjacent" => Ok(Neighbour::Adjacent),
            "mixed" => Ok(Neighbour::Mixed),
            _ => Err(Some("expected hamming, adjacent or mixed".into())),
        }
    }
}

/// How a climber chooses among better neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Improvement {
    /// Move to the first better neighbour found (neighbours are tried in a random order).
    First,
    /// Evaluate the whole neighbourhood and move to the best neighbour if it is better.
    Best,
}

/// Options of [`LocalSearch`]; [`multi_start`](Self::multi_start) and
/// [`iterated`](Self::iterated) give the defaults of `mls` and `ils`.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalSearchOptions {
    /// Iterated local search (`ils`) if true, multi-start (`mls`) if false.
    pub iterated: bool,
    /// The moves (default [`Neighbour::Mixed`]).
    pub neighbour: Neighbour,
    /// First or best improvement (default [`Improvement::First`]).
    pub improvement: Improvement,
    /// Random configurations evaluated per start; the best is the start (default 5).
    pub sample: usize,
    /// `ils`: random moves that perturb the accepted local optimum (default 2).
    pub perturbation: usize,
    /// `ils`: iterations without improving the accepted optimum before a restart (default 5).
    pub no_improvement: usize,
    /// `ils`: probability of accepting a local optimum that is not better (default 0.05).
    pub accept_worse: f64,
    /// Valid-only moves and starts (default true).
    pub constraint_aware: bool,
}

impl LocalSearchOptions {
    /// The defaults of multi-start local search, `mls`.
    pub fn multi_start() -> Self {
        LocalSearchOptions {
            iterated: false,
            neighbour: Neighbour::Mixed,
            improvement: Improvement::First,
            sample: 5,
            perturbation: 2,
            no_improvement: 5,
            accept_worse: 0.05,
            constraint_aware: true,
        }
    }

    /// The defaults of iterated local search, `ils`.
    pub fn iterated() -> Self {
        LocalSearchOptions {
            iterated: true,
            ..Self::multi_start()
        }
    }
}

impl Default for LocalSearchOptions {
    /// Multi-start local search.
    fn default() -> Self {
        Self::multi_start()
    }
}

impl Configure for LocalSearchOptions {
    const KEYS: &'static [&'static str] = &[
        "neighbour",
        "improvement",
        "sample",
        "perturbation",
        "no_improvement",
        "accept_worse",
        "constraint_aware",
    ];

    fn set(&mut self, key: &str, v: &str) -> Result<(), Option<String>> {
        match key {
            "neighbour" => self.neighbour = Neighbour::parse(v)?,
            "improvement" => {
                self.improvement = match v {
                    "first" => Improvement::First,
                    "best" => Improvement::Best,
                    _ => return Err(Some("expected first or best".into())),
                }
            }
            "sample" => self.sample = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "perturbation" => self.perturbation = parse_checked(v, "an integer >= 1", |&n| n >= 1)?,
            "no_improvement" => {
                self.no_improvement = parse_checked(v, "an integer >= 1", |&n| n >= 1)?
            }
            "accept_worse" => {
                self.accept_worse = parse_checked(v, "a probability in [0, 1]", |p: &f64| {
                    (0.0..=1.0).contains(p)
                })?
            }
            "constraint_aware" => self.constraint_aware = parse_bool(v)?,
            _ => return Err(None),
        }
        Ok(())
    }
}

/// A configuration a search stands on or looks at: its value indices and its position (`None`:
/// invalid, only in the non-constraint-aware form).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Point {
    pub(super) genes: Vec<u16>,
    pub(super) pos: Option<usize>,
}

impl Point {
    /// The valid configuration at `pos`.
    pub(super) fn at(space: &Space, pos: usize) -> Self {
        Point {
            genes: space.indices(pos),
            pos: Some(pos),
        }
    }

    /// This configuration after move `m`.
    pub(super) fn moved(&self, m: Move) -> Self {
        let mut genes = self.genes.clone();
        genes[m.param as usize] = m.value;
        Point { genes, pos: m.pos }
    }

    /// Its cost if known: the told cost, `f64::MAX` for an invalid or failed configuration.
    pub(super) fn cost(&self, memo: &Memo) -> Option<f64> {
        match self.pos {
            None => Some(f64::MAX),
            Some(p) => memo.cost(p).map(|c| c.min(f64::MAX)),
        }
    }
}

/// One move: parameter `param` takes value index `value`, which gives position `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Move {
    pub(super) param: u16,
    pub(super) value: u16,
    pub(super) pos: Option<usize>,
}

/// The moves from `genes` under `rule`, in parameter order, into `out` (cleared first).
/// Constraint-aware, only moves to valid configurations; otherwise every Cartesian move. One O(1)
/// position look-up per candidate: at most the total number of values of all parameters.
pub(super) fn moves(
    space: &Space,
    genes: &[u16],
    rule: Neighbour,
    constraint_aware: bool,
    out: &mut Vec<Move>,
) {
    out.clear();
    let mut cand = genes.to_vec();
    for (p, param) in space.params().iter().enumerate() {
        let n = param.values().len() as u16;
        let g = genes[p];
        let mut consider = |j: u16, cand: &mut Vec<u16>| {
            cand[p] = j;
            let pos = space.position(cand);
            let take = pos.is_some() || !constraint_aware;
            if take {
                out.push(Move {
                    param: p as u16,
                    value: j,
                    pos,
                });
            }
            take
        };
        match rule {
            Neighbour::Hamming | Neighbour::Mixed => {
                for j in (0..n).filter(|&j| j != g) {
                    consider(j, &mut cand);
                }
            }
            Neighbour::Adjacent => {
                for j in (0..g).rev() {
                    if consider(j, &mut cand) {
                        break;
                    }
                }
                for j in g + 1..n {
                    if consider(j, &mut cand) {
                        break;
                    }
                }
            }
        }
        cand[p] = g;
    }
}

/// A random configuration: constraint-aware, one not asked yet; otherwise a random Cartesian
/// configuration (possibly invalid or known). `None` when the space is exhausted.
pub(super) fn random_point<R: Rng + ?Sized>(
    space: &Space,
    memo: &Memo,
    rng: &mut R,
    constraint_aware: bool,
) -> Option<Point> {
    if constraint_aware {
        return memo.random_unasked(rng).map(|p| Point::at(space, p));
    }
    let genes: Vec<u16> = space
        .params()
        .iter()
        .map(|p| rng.random_range(0..p.values().len()) as u16)
        .collect();
    let pos = space.position(&genes);
    Some(Point { genes, pos })
}

/// What [`Starts::next`] gives.
pub(super) enum Start {
    /// Start here.
    Ready(Point),
    /// Results of the sample are still needed (or the batch is full).
    Wait,
    /// Nothing left to start from: every configuration was asked.
    Exhausted,
}

/// Starts of a local search: each is the best of `sample` random configurations, plus any random
/// fillers evaluated meanwhile and earlier sample members not used yet.
#[derive(Clone, Debug)]
pub(super) struct Starts {
    sample: usize,
    /// Configurations still to draw for the coming start.
    to_draw: usize,
    /// Asked candidates not used as a start yet.
    pool: Vec<usize>,
    /// An invalid draw (non-constraint-aware form), the start if no draw was valid.
    fallback: Option<Point>,
}

impl Starts {
    pub(super) fn new(sample: usize) -> Self {
        Starts {
            sample,
            to_draw: sample,
            pool: Vec::new(),
            fallback: None,
        }
    }

    /// Adds a configuration asked as a filler.
    pub(super) fn add(&mut self, pos: usize) {
        self.pool.push(pos);
    }

    /// Draws the coming start's sample (asking new configurations into `out`, up to `n` in all)
    /// and, once its results are known, gives the best candidate. Constraint-aware, draws are
    /// unasked valid configurations; otherwise random Cartesian ones (an invalid draw costs no
    /// evaluation and is only a start if no draw was valid).
    pub(super) fn next<R: Rng + ?Sized>(
        &mut self,
        space: &Space,
        memo: &mut Memo,
        rng: &mut R,
        constraint_aware: bool,
        n: usize,
        out: &mut Vec<usize>,
    ) -> Start {
        while self.to_draw > 0 && out.len() < n {
            let Some(pt) = random_point(space, memo, rng, constraint_aware) else {
                self.to_draw = 0;
                break;
            };
            self.to_draw -= 1;
            match pt.pos {
                Some(p) => {
                    if memo.mark_asked(p) {
                        out.push(p);
                    }
                    if !self.pool.contains(&p) {
                        self.pool.push(p);
                    }
                }
                None => self.fallback = Some(pt),
            }
        }
        if self.to_draw > 0 || self.pool.iter().any(|&p| memo.get(p).is_none()) {
            return Start::Wait;
        }
        self.to_draw = self.sample;
        let best = self
            .pool
            .iter()
            .enumerate()
            .map(|(i, &p)| (i, memo.cost(p).expect("told")))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match (best, self.fallback.take()) {
            (Some((i, _)), _) => Start::Ready(Point::at(space, self.pool.swap_remove(i))),
            (None, Some(pt)) => Start::Ready(pt),
            (None, None) => Start::Exhausted,
        }
    }
}

/// Local optima reached in a row without asking anything, before a forced random restart.
const IDLE_LIMIT: usize = 64;

/// Multi-start or iterated local search.
#[derive(Debug)]
pub struct LocalSearch {
    space: Arc<Space>,
    opts: LocalSearchOptions,
    memo: Memo,
    rng: ChaCha8Rng,
    /// Where the climber stands (`None`: a start is due).
    cur: Option<Point>,
    /// The current configuration's neighbours not yet ruled out, in the order they are tried.
    nbrs: Vec<Move>,
    starts: Starts,
    /// `ils`: the accepted local optimum and its cost.
    home: Option<(Point, f64)>,
    /// `ils`: iterations since the accepted optimum last improved.
    stale: usize,
    /// Local optima reached since something was last asked.
    idle: usize,
}

impl LocalSearch {
    /// A local search over `space`.
    pub fn new(space: Arc<Space>, opts: LocalSearchOptions, seed: u64) -> Self {
        LocalSearch {
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
            cur: None,
            nbrs: Vec::new(),
            starts: Starts::new(opts.sample),
            home: None,
            stale: 0,
            idle: 0,
            space,
            opts,
        }
    }

    /// Stands on `pt` (asking for it if new): its neighbours, shuffled, become the moves to try.
    fn stand(&mut self, pt: Point, out: &mut Vec<usize>) {
        if let Some(p) = pt.pos
            && self.memo.mark_asked(p)
        {
            out.push(p);
            self.idle = 0;
        }
        let mut nbrs = std::mem::take(&mut self.nbrs);
        moves(
            &self.space,
            &pt.genes,
            self.opts.neighbour,
            self.opts.constraint_aware,
            &mut nbrs,
        );
        nbrs.shuffle(&mut self.rng);
        if self.opts.neighbour == Neighbour::Mixed {
            adjacent_first(&pt.genes, &mut nbrs);
        }
        self.nbrs = nbrs;
        self.cur = Some(pt);
    }

    /// Stands on a new start; false when it must wait for results first.
    fn start(&mut self, n: usize, out: &mut Vec<usize>) -> bool {
        if self.idle >= IDLE_LIMIT {
            // Many local optima in a row that asked nothing (non-constraint-aware starts on
            // known or invalid configurations): force progress with an unasked configuration.
            self.idle = 0;
            if let Some(pt) = random_point(&self.space, &self.memo, &mut self.rng, true) {
                self.stand(pt, out);
            }
            return true;
        }
        let before = out.len();
        let next = self.starts.next(
            &self.space,
            &mut self.memo,
            &mut self.rng,
            self.opts.constraint_aware,
            n,
            out,
        );
        if out.len() > before {
            self.idle = 0;
        }
        match next {
            Start::Ready(pt) => {
                self.stand(pt, out);
                true
            }
            Start::Wait | Start::Exhausted => false,
        }
    }

    /// At a local optimum: restart (mls) or perturb (ils).
    fn local_optimum(&mut self, out: &mut Vec<usize>) {
        let pt = self.cur.take().expect("standing somewhere");
        let cost = pt.cost(&self.memo).expect("known");
        self.nbrs.clear();
        self.idle += 1;
        if !self.opts.iterated {
            return;
        }
        match &self.home {
            Some((_, h)) if cost >= *h => {
                self.stale += 1;
                if self.rng.random_bool(self.opts.accept_worse) {
                    self.home = Some((pt, cost));
                }
            }
            _ => {
                self.stale = 0;
                self.home = Some((pt, cost));
            }
        }
        if self.stale >= self.opts.no_improvement || self.idle >= IDLE_LIMIT {
            self.home = None;
            self.stale = 0;
            return;
        }
        // Perturb: random moves, each on a parameter not moved yet.
        let mut pt = self.home.as_ref().expect("set above").0.clone();
        let mut moved: Vec<u16> = Vec::with_capacity(self.opts.perturbation);
        let mut m = Vec::new();
        for _ in 0..self.opts.perturbation {
            moves(
                &self.space,
                &pt.genes,
                self.opts.neighbour,
                self.opts.constraint_aware,
                &mut m,
            );
            m.retain(|x| !moved.contains(&x.param));
            if m.is_empty() {
                break;
            }
            let x = m[self.rng.random_range(0..m.len())];
            moved.push(x.param);
            pt = pt.moved(x);
        }
        self.stand(pt, out);
    }

    /// One step of the climb; false when it must wait for results.
    fn step(&mut self, n: usize, out: &mut Vec<usize>) -> bool {
        let Some(cur) = &self.cur else {
            return self.start(n, out);
        };
        let Some(c) = cur.cost(&self.memo) else {
            return false;
        };
        // Drop neighbours known to be no better; find the best known better one.
        let memo = &self.memo;
        let cost = |m: &Move| match m.pos {
            None => Some(f64::MAX),
            Some(p) => memo.cost(p).map(|c| c.min(f64::MAX)),
        };
        self.nbrs.retain(|m| cost(m).is_none_or(|x| x < c));
        let mut best: Option<(Move, f64)> = None;
        let mut unknown = 0;
        for m in &self.nbrs {
            match cost(m) {
                Some(x) if best.is_none_or(|(_, b)| x < b) => best = Some((*m, x)),
                Some(_) => {}
                None => unknown += 1,
            }
        }
        if let Some((m, _)) = best
            && (self.opts.improvement == Improvement::First || unknown == 0)
        {
            let next = cur.moved(m);
            self.stand(next, out);
            return true;
        }
        if unknown == 0 {
            self.local_optimum(out);
            return true;
        }
        // Ask the next untried neighbours.
        let before = out.len();
        for m in &self.nbrs {
            if out.len() == n {
                break;
            }
            if let Some(p) = m.pos
                && self.memo.mark_asked(p)
            {
                out.push(p);
            }
        }
        if out.len() > before {
            self.idle = 0;
        }
        out.len() > before
    }
}

/// Reorders `moves` from `genes` (stably) so that the adjacent ones come first: on each
/// parameter, the nearest value below and the nearest above among the moves.
pub(super) fn adjacent_first(genes: &[u16], moves: &mut [Move]) {
    let mut near = vec![(u16::MAX, u16::MAX); genes.len()];
    let dist = |m: &Move| {
        let g = genes[m.param as usize];
        (m.value < g, m.value.abs_diff(g))
    };
    for m in moves.iter() {
        let (below, d) = dist(m);
        let n = &mut near[m.param as usize];
        let side = if below { &mut n.0 } else { &mut n.1 };
        *side = (*side).min(d);
    }
    moves.sort_by_key(|m| {
        let (below, d) = dist(m);
        let n = near[m.param as usize];
        d != if below { n.0 } else { n.1 }
    });
}

impl Strategy for LocalSearch {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && !self.memo.exhausted() {
            if !self.step(n, &mut out) {
                // Waiting for results: fill the batch with random configurations, kept as
                // starts.
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
    use crate::space::Neighbourhood;
    use crate::strategy::{Outcome, StrategySpec, build, drive};

    fn space() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("x", 0..12)
                .param("y", [1, 2, 4, 8, 16])
                .param("z", [0, 1, 2])
                .constraint("x * y <= 64 and (z == 0 or x % 2 == 0)")
                .build()
                .unwrap(),
        )
    }

    /// A smooth objective with its optimum at x = 5, y = 8 (index 3), z = 0.
    fn bowl(space: &Space, p: usize) -> Outcome {
        let i = space.indices(p);
        let d = |a: u16, b: i32| f64::from((i32::from(a) - b).pow(2));
        Outcome::Value(1.0 + d(i[0], 5) + d(i[1], 3) + d(i[2], 0))
    }

    #[test]
    fn moves_follow_their_rules() {
        let s = space();
        let mut m = Vec::new();
        for pos in 0..s.len() {
            let g = s.indices(pos);
            moves(&s, &g, Neighbour::Hamming, true, &mut m);
            let mut got: Vec<usize> = m.iter().map(|m| m.pos.unwrap()).collect();
            got.sort_unstable();
            assert_eq!(got, s.neighbours(&g, Neighbourhood::Hamming));
            for x in &m {
                assert_eq!(
                    Some(x.pos.unwrap()),
                    s.position(&Point::at(&s, pos).moved(*x).genes)
                );
            }
            // Adjacent: on each side of each parameter, the nearest value that is valid.
            moves(&s, &g, Neighbour::Adjacent, true, &mut m);
            for x in &m {
                let (p, v) = (x.param as usize, x.value);
                let between = if v < g[p] { v + 1..g[p] } else { g[p] + 1..v };
                for j in between {
                    let mut c = g.clone();
                    c[p] = j;
                    assert!(!s.contains(&c), "{g:?}: skipped a valid value");
                }
            }
            // Not constraint-aware: every value change of the Cartesian product.
            moves(&s, &g, Neighbour::Hamming, false, &mut m);
            assert_eq!(m.len(), 11 + 4 + 2);
            assert!(m.iter().all(|x| {
                x.pos
                    == s.position(
                        &Point {
                            genes: g.clone(),
                            pos: None,
                        }
                        .moved(*x)
                        .genes,
                    )
            }));
            // Mixed: the adjacent moves first.
            moves(&s, &g, Neighbour::Mixed, true, &mut m);
            let mut adj = Vec::new();
            moves(&s, &g, Neighbour::Adjacent, true, &mut adj);
            adjacent_first(&g, &mut m);
            let mut head: Vec<Move> = m[..adj.len()].to_vec();
            head.sort_by_key(|x| (x.param, x.value));
            assert_eq!(head, adj);
        }
    }

    #[test]
    fn every_form_climbs_to_the_optimum() {
        let s = space();
        let opt = (0..s.len())
            .min_by(|&a, &b| bowl(&s, a).cost().total_cmp(&bowl(&s, b).cost()))
            .unwrap();
        for spec in [
            "mls",
            "ils",
            "mls:improvement=best",
            "ils:neighbour=hamming:sample=1",
            "mls:neighbour=adjacent",
            "mls:constraint_aware=false",
            "ils:constraint_aware=false",
        ] {
            for seed in 0..5 {
                let mut st =
                    build(&spec.parse::<StrategySpec>().unwrap(), Arc::clone(&s), seed).unwrap();
                let run = drive(st.as_mut(), 40, 1, |p| bowl(&s, p));
                assert!(
                    run.trials.iter().any(|t| t.position == opt),
                    "{spec} seed {seed} missed the optimum in 40 of {} evaluations",
                    s.len()
                );
            }
        }
    }

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
        let start = ls.cur.as_ref().unwrap().genes.clone();
        for p in next {
            let g = s.indices(p);
            let differ = g.iter().zip(&start).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 1, "a neighbour of the start");
        }
    }

    #[test]
    fn options_are_validated() {
        let mut o = LocalSearchOptions::iterated();
        assert!(o.set("perturbation", "3").is_ok());
        assert_eq!(o.perturbation, 3);
        assert!(o.set("neighbour", "adjacent").is_ok());
        assert_eq!(o.neighbour, Neighbour::Adjacent);
        for (k, v) in [
            ("perturbation", "0"),
            ("sample", "0"),
            ("accept_worse", "1.5"),
            ("neighbour", "diagonal"),
            ("improvement", "some"),
            ("constraint_aware", "maybe"),
        ] {
            assert!(matches!(o.set(k, v), Err(Some(_))), "{k}={v}");
        }
        assert_eq!(o.set("popsize", "3"), Err(None));
        assert!(o.iterated && !LocalSearchOptions::multi_start().iterated);
    }
}
