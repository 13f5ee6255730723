//! # Starts
//!
//! Where searches begin and begin again. Constraint-aware, a random start is a configuration
//! never asked; otherwise a random configuration of the Cartesian product, which may be known or
//! invalid ([`random_config`]). Populations draw several distinct ones at once ([`fresh`]), and
//! the local strategies start from the best of a small sample ([`Starts`]).

use super::Search;
use super::config::Config;
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

/// Where a single walker (local search, simulated annealing) stands, from [`Starts::walk`].
pub(super) enum Walk {
    /// It stands on a configuration of this cost.
    Here(f64),
    /// It stands nowhere: stand on this start.
    Start(Config),
    /// It must wait for results (of where it stands, or of the coming start's sample), or
    /// nothing is left to start from.
    Wait,
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

    /// Where a walker standing on `here` (if anywhere) is: the cost there once known, else the
    /// next start once it is ready ([`next`](Self::next)).
    pub(super) fn walk(&mut self, here: Option<&Config>, search: &mut Search) -> Walk {
        match here {
            Some(c) => c.cost(search.memo()).map_or(Walk::Wait, Walk::Here),
            None => self.next(search).map_or(Walk::Wait, Walk::Start),
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
