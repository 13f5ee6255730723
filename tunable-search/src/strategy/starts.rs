//! # Starts
//!
//! Where searches begin and begin again. Constraint-aware, a random start is a configuration
//! never asked; otherwise a random configuration of the Cartesian product, which may be known or
//! invalid ([`random_config`]). Populations draw several distinct ones at once ([`fresh`]), and
//! the local strategies start from the best of a small sample ([`Starts`]).

use super::config::Config;
use super::{Search, Step};
use std::sync::Arc;

/// A random configuration: constraint-aware, one never asked; otherwise a random Cartesian
/// configuration (possibly invalid or known). `None` when every configuration was asked.
pub(super) fn random_config(search: &mut Search, constraint_aware: bool) -> Option<Config> {
    let space = Arc::clone(search.space());
    if constraint_aware {
        return search.random_unasked().map(|p| Config::at(&space, p));
    }
    Some(Config::random(&space, search.rng()))
}

/// Up to `k` distinct new random configurations ([`random_config`]), none of them in `keep`.
pub(super) fn fresh(
    search: &mut Search,
    k: usize,
    keep: &[Config],
    constraint_aware: bool,
) -> Vec<Config> {
    let mut out: Vec<Config> = Vec::with_capacity(k);
    let mut tries = 0;
    while out.len() < k && tries < 20 * k.max(1) {
        tries += 1;
        let Some(c) = random_config(search, constraint_aware) else {
            break;
        };
        if !out.contains(&c) && !keep.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// A search that stands on one configuration at a time and begins again from [`Starts`] (local
/// search, simulated annealing).
pub(super) trait Walker {
    /// Where it stands (`None`: a start is due) and its starts.
    fn whereabouts(&mut self) -> (&mut Option<Config>, &mut Starts);

    /// Gets ready to stand on `c`, e.g. lists its moves.
    fn arrive(&mut self, c: &Config, search: &mut Search);

    /// Stands on `c`: asks for it if new, and arrives there.
    fn stand(&mut self, c: Config, search: &mut Search) {
        if let Some(p) = c.position {
            search.ask(p);
        }
        self.arrive(&c, search);
        *self.whereabouts().0 = Some(c);
    }
}

/// The cost where `walker` stands; otherwise the step to return: `started` after standing on a
/// new start, [`Step::Wait`] while results are needed (of where it stands, or of the coming
/// start's sample) or when nothing is left to start from.
pub(super) fn walk(
    walker: &mut impl Walker,
    search: &mut Search,
    started: Step,
) -> Result<f64, Step> {
    let start = match walker.whereabouts() {
        (Some(c), _) => return c.cost(search.memo()).ok_or(Step::Wait),
        (None, starts) => starts.next(search).ok_or(Step::Wait)?,
    };
    walker.stand(start, search);
    Err(started)
}

/// Starts of a local search: each is the best of `sample` random configurations, plus any random
/// fillers evaluated meanwhile and earlier sample members not used yet.
#[derive(Clone, Debug)]
pub(super) struct Starts {
    sample: usize,
    constraint_aware: bool,
    /// Configurations still to draw for the coming start.
    to_draw: usize,
    /// Asked candidates not used as a start yet.
    pool: Vec<usize>,
    /// An invalid draw (non-constraint-aware form), the start if no draw was valid.
    fallback: Option<Config>,
}

impl Starts {
    pub(super) fn new(sample: usize, constraint_aware: bool) -> Self {
        Starts {
            sample,
            constraint_aware,
            to_draw: sample,
            pool: Vec::new(),
            fallback: None,
        }
    }

    /// Adds a configuration asked as a filler (constraint-aware only: the non-constraint-aware
    /// form starts from the Cartesian product alone).
    pub(super) fn add(&mut self, position: usize) {
        if self.constraint_aware {
            self.pool.push(position);
        }
    }

    /// Draws the coming start's sample (asking new configurations while the batch has room) and,
    /// once its results are known, gives the best candidate (`None` until then, or when nothing
    /// is left to start from). Constraint-aware, draws are unasked valid configurations;
    /// otherwise random Cartesian ones (an invalid draw costs no evaluation and is only a start
    /// if no draw was valid).
    fn next(&mut self, search: &mut Search) -> Option<Config> {
        while self.to_draw > 0 && search.room() > 0 {
            let Some(c) = random_config(search, self.constraint_aware) else {
                self.to_draw = 0;
                break;
            };
            self.to_draw -= 1;
            match c.position {
                Some(p) => {
                    search.ask(p);
                    if !self.pool.contains(&p) {
                        self.pool.push(p);
                    }
                }
                None => self.fallback = Some(c),
            }
        }
        let memo = search.memo();
        if self.to_draw > 0 || self.pool.iter().any(|&p| memo.get(p).is_none()) {
            return None;
        }
        self.to_draw = self.sample;
        let best = self
            .pool
            .iter()
            .enumerate()
            .map(|(i, &p)| (i, memo.cost(p).expect("told")))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match (best, self.fallback.take()) {
            (Some((i, _)), _) => Some(Config::at(search.space(), self.pool.swap_remove(i))),
            (None, fallback) => fallback,
        }
    }
}
