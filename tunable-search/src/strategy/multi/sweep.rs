//! # Holding the clock, then sweeping it
//!
//! A *trade-off parameter* is one that trades one objective for another in every configuration
//! alike: a graphics or memory clock, a power limit ([`Knob::NAMES`](crate::clock::Knob::NAMES), Kernel Tuner's names). On
//! such a space the front is typically a few configurations of the other parameters, each across
//! many levels of the trade-off parameters, so a search for the front has two parts: find the
//! best configurations of the other parameters, then evaluate them at the other levels.
//!
//! [`Sweep`] does both. It holds every trade-off parameter at its highest level (the fastest one)
//! and runs one single-objective strategy (`member`) over the other parameters there, a space as
//! many times smaller as there are levels, told a weighted geometric mean of the objectives' ratios
//! (`ratio.rs`; `weight` is the first objective's). A share of the asks (`share`) sweeps instead:
//! it evaluates the best configuration found at the held level at its other levels, spread-out
//! levels first (the lowest, then the middle, ...), so the front's extent comes early. A best is
//! swept once it has stood for `settle` results at the held level, so that the first, quickly
//! beaten bests cost no sweeps; when the best changes, the sweep moves to the new one. A
//! configuration that is invalid at a level skips that level.
//!
//! Without trade-off parameters, or with no other parameter of more than one value, the member
//! searches the whole space alone. Once the member has nothing to propose, every ask sweeps, and
//! then any unasked position is drawn at random, so the whole budget is spent.

use super::archive::Archive;
use super::ratio::ratio;
use super::scalar::first_weighted;
use super::{MultiStrategy, MultiTrial};
use crate::Space;
use crate::strategy::ensemble::member_seed;
use crate::strategy::held::Held;
use crate::strategy::options::{checked, declare_options, probability};
use crate::strategy::spec::member_spec;
use crate::strategy::{ADJACENT_ILS, Outcome, Strategy, StrategyError, StrategySpec, Trial, build};
use std::sync::Arc;

declare_options! {
    /// Options of [`Sweep`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SweepOptions {
        /// The single-objective strategy over the other parameters (options in brackets). By
        /// default [`ADJACENT_ILS`]: the front's configuration of the other parameters lies
        /// among the few fastest, whose neighbours are fast too, and a restart or a jump to a
        /// far value of a tile leaves that neighbourhood.
        member: StrategySpec = ADJACENT_ILS.parse().expect("valid default member"),
            "member" => |_: &SweepOptions, v: &str| member_spec(v);
        /// The share of asks that sweep the best configuration's levels.
        share: f64 = 0.3, "share" => probability();
        /// How many results at the held level the best must have stood before it is swept.
        settle: usize = 6, "settle" => checked("a count", |_| true);
        /// The first objective's weight in what the member is told; the others share the rest.
        weight: f64 = 1.0, "weight" => probability();
    }
}

/// Holds the trade-off parameters while a member searches the rest, and sweeps the best; see
/// the [module docs](self).
pub struct Sweep {
    archive: Archive,
    member: Box<dyn Strategy>,
    held: Option<Held>,
    share: f64,
    weights: Vec<f64>,
    /// Each objective's first value told: the unit of its ratios.
    scales: Option<Vec<f64>>,
    /// The best value the member was told, and the whole space's position it is of.
    best: Option<(f64, usize)>,
    /// Results at the held level told since the best last changed.
    stood: usize,
    settle: usize,
    /// Asks so far, and those that swept.
    asks: (usize, usize),
}

impl std::fmt::Debug for Sweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweep")
            .field("held", &self.held.as_ref().map(|h| &h.dims))
            .field("share", &self.share)
            .field("weights", &self.weights)
            .finish_non_exhaustive()
    }
}

impl Sweep {
    /// The strategy over `space` for `objectives` objectives, seeded; fails if the member
    /// cannot be built.
    pub fn new(
        space: Arc<Space>,
        objectives: usize,
        opts: SweepOptions,
        seed: u64,
    ) -> Result<Self, StrategyError> {
        let held = Held::of(&space);
        let searched = held
            .as_ref()
            .map_or(Arc::clone(&space), |h| Arc::clone(&h.sub));
        let member = build(&opts.member, searched, member_seed(seed, 0))?;
        let weights = first_weighted(opts.weight, objectives);
        Ok(Sweep {
            archive: Archive::new(space, objectives, seed),
            member,
            held,
            share: opts.share,
            weights,
            scales: None,
            best: None,
            stood: 0,
            settle: opts.settle,
            asks: (0, 0),
        })
    }

    /// The weighted geometric mean of `values`' ratios to the first values told.
    fn scalar(&self, values: &[f64]) -> f64 {
        let scales = self.scales.as_deref().unwrap_or(values);
        let log: f64 = values
            .iter()
            .zip(scales)
            .zip(&self.weights)
            .map(|((&v, &s), &w)| w * ratio(v, s).ln())
            .sum();
        log.exp()
    }

    /// The next unasked level of the best configuration, marked asked; unless `now`, only once
    /// the best has settled.
    fn sweep(&mut self, now: bool) -> Option<usize> {
        let (held, (_, best)) = (self.held.as_ref()?, self.best?);
        if !now && self.stood < self.settle {
            return None;
        }
        let space = &self.archive.space;
        let p = held
            .sweep
            .iter()
            .filter_map(|l| held.at(space, best, l))
            .find(|&p| !self.archive.is_asked(p))?;
        self.archive.ask(p);
        Some(p)
    }

    /// The member's next proposal in the whole space, marked asked.
    fn propose(&mut self) -> Option<usize> {
        loop {
            let got = self.member.ask(1);
            let &q = got.first()?;
            let p = self.held.as_ref().map_or(q, |h| h.whole[q]);
            if self.archive.ask(p) {
                return Some(p);
            }
        }
    }
}

impl MultiStrategy for Sweep {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let due = (self.asks.1 as f64) < self.share * (self.asks.0 + 1) as f64;
            let mut swept = false;
            let mut got = None;
            if due {
                got = self.sweep(false);
                swept = got.is_some();
            }
            if got.is_none() {
                got = self.propose();
            }
            if got.is_none() {
                got = self.sweep(true);
                swept = got.is_some();
            }
            if got.is_none() {
                got = self.archive.random_unasked();
                if let Some(p) = got {
                    self.archive.ask(p);
                }
            }
            let Some(p) = got else { break };
            self.asks.0 += 1;
            self.asks.1 += usize::from(swept);
            out.push(p);
        }
        out
    }

    fn tell(&mut self, trials: &[MultiTrial]) {
        self.archive.tell(trials);
        let k = self.weights.len();
        let valid = |t: &MultiTrial| {
            t.values
                .as_ref()
                .filter(|v| v.len() == k && v.iter().all(|x| x.is_finite()))
                .cloned()
        };
        if self.scales.is_none() {
            self.scales = trials.iter().find_map(valid);
        }
        let mut told = Vec::new();
        for t in trials {
            let q = match &self.held {
                Some(h) => match h.part.get(&t.position) {
                    Some(&q) => q,
                    None => continue,
                },
                None => t.position,
            };
            let outcome = valid(t).map_or(Outcome::Failed, |v| Outcome::Value(self.scalar(&v)));
            if let Outcome::Value(v) = outcome
                && self.best.is_none_or(|(b, _)| v < b)
            {
                self.best = Some((v, t.position));
                self.stood = 0;
            } else {
                self.stood += 1;
            }
            told.push(Trial {
                position: q,
                outcome,
            });
        }
        if !told.is_empty() {
            self.member.tell(&told);
        }
    }
}
