//! # Holding the clock, then sweeping it
//!
//! A *trade-off parameter* is one that trades one objective for another in every configuration
//! alike: a graphics or memory clock, a power limit ([`Knob::NAMES`], Kernel Tuner's names). On
//! such a space the front is typically a few configurations of the other parameters, each across
//! many levels of the trade-off parameters, so a search for the front has two parts: find the
//! best configurations of the other parameters, then evaluate them at the other levels.
//!
//! [`Sweep`] does both. It holds every trade-off parameter at its highest level (the fastest one)
//! and runs one single-objective strategy (`member`, iterated local search) over the other
//! parameters there, a space as many times smaller as there are levels, told a weighted
//! geometric mean of the objectives' ratios (`ratio.rs`; `weight` is the first objective's). A
//! share of the asks (`share`) sweeps instead: it evaluates the best configuration found at the
//! held level at its other levels, spread-out levels first (the lowest, then the middle, ...),
//! so the front's extent comes early. A best is swept once it has stood for `settle` results at
//! the held level, so that the first, quickly beaten bests cost no sweeps; when the best changes,
//! the sweep moves to the new one. A configuration that is invalid at a level skips that level.
//!
//! Without trade-off parameters, or with no other parameter of more than one value, the member
//! searches the whole space alone. Once the member has nothing to propose, every ask sweeps, and
//! then any unasked position is drawn at random, so the whole budget is spent.

use super::archive::Archive;
use super::ratio::ratio;
use super::scalar::first_weighted;
use super::{MultiStrategy, MultiTrial};
use crate::clock::Knob;
use crate::strategy::ensemble::member_seed;
use crate::strategy::options::{checked, declare_options, probability};
use crate::strategy::{Outcome, Strategy, StrategyError, StrategySpec, Trial, build};
use crate::{Space, SpaceBuilder};
use std::collections::HashMap;
use std::sync::Arc;

declare_options! {
    /// Options of [`Sweep`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SweepOptions {
        /// The single-objective strategy over the other parameters (options in brackets).
        member: StrategySpec = "ils".parse().expect("valid default member"),
            "member" => member_spec;
        /// The share of asks that sweep the best configuration's levels.
        share: f64 = 0.3, "share" => probability();
        /// How many results at the held level the best must have stood before it is swept.
        settle: usize = 6, "settle" => checked("a count", |_| true);
        /// The first objective's weight in what the member is told; the others share the rest.
        weight: f64 = 1.0, "weight" => probability();
    }
}

/// `member`: one spec, in brackets if it has options.
fn member_spec(_: &SweepOptions, value: &str) -> Result<StrategySpec, String> {
    let inner = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    inner.parse().map_err(|e: StrategyError| e.to_string())
}

/// The held part of the space: which parameters are held, at which levels, and the space of the
/// other parameters the member searches.
struct Held {
    /// The trade-off parameters' indices in the space.
    dims: Vec<usize>,
    /// The other levels (one value index per held parameter), in the order a sweep asks them.
    sweep: Vec<Vec<u16>>,
    /// The space of the other parameters, restricted to the configurations valid at the level.
    sub: Arc<Space>,
    /// The whole space's position of each of `sub`'s positions.
    whole: Vec<usize>,
    /// `sub`'s position of each of the whole space's positions at the held level.
    part: HashMap<usize, usize>,
}

impl Held {
    /// The held part of `space`, or `None` if it has no trade-off parameter or no other parameter
    /// of more than one value.
    fn of(space: &Space) -> Option<Held> {
        let params = space.params();
        let dims: Vec<usize> = (0..space.dims())
            .filter(|&d| Knob::of_name(params[d].name()).is_some() && params[d].values().len() > 1)
            .collect();
        let searched =
            (0..space.dims()).any(|d| !dims.contains(&d) && params[d].values().len() > 1);
        if dims.is_empty() || !searched {
            return None;
        }
        let level: Vec<u16> = dims.iter().map(|&d| highest(params[d].values())).collect();
        let free: Vec<usize> = (0..space.dims()).filter(|d| !dims.contains(d)).collect();
        let mut whole = Vec::new();
        let mut listed = Vec::new();
        for p in 0..space.len() {
            let idx = space.indices(p);
            if dims.iter().zip(&level).all(|(&d, &l)| idx[d] == l) {
                whole.push(p);
                listed.push(free.iter().map(|&d| idx[d]).collect::<Vec<u16>>());
            }
        }
        let builder = free.iter().fold(SpaceBuilder::new(), |b, &d| {
            b.param(params[d].name(), params[d].values().iter().cloned())
        });
        let sub = builder.build_from_indices(&listed).ok()?;
        if sub.len() != whole.len() {
            return None;
        }
        // `build_from_indices` orders the configurations its own way: map them back.
        let at: HashMap<Vec<u16>, usize> = listed.into_iter().zip(whole).collect();
        let whole: Vec<usize> = (0..sub.len()).map(|q| at[&sub.indices(q)]).collect();
        let part = whole.iter().enumerate().map(|(q, &p)| (p, q)).collect();
        let sizes: Vec<u16> = dims
            .iter()
            .map(|&d| params[d].values().len() as u16)
            .collect();
        Some(Held {
            sweep: spread_order(&sizes, &level),
            dims,
            sub: Arc::new(sub),
            whole,
            part,
        })
    }

    /// The whole space's position of configuration `p` with its trade-off parameters at `levels`.
    fn at(&self, space: &Space, p: usize, levels: &[u16]) -> Option<usize> {
        let mut idx = space.indices(p);
        for (&d, &l) in self.dims.iter().zip(levels) {
            idx[d] = l;
        }
        space.position(&idx)
    }
}

/// The value index of the largest value (the last one if none is a number).
fn highest(values: &[crate::Value]) -> u16 {
    let mut best = values.len() - 1;
    for (i, v) in values.iter().enumerate() {
        if let (Some(x), Some(b)) = (v.as_f64(), values[best].as_f64())
            && x > b
        {
            best = i;
        }
    }
    best as u16
}

/// Every combination of levels (value indices below `sizes`) but `start`, each the farthest (in
/// the sum of index distances) from those before it and `start`; ties go to the earlier one.
fn spread_order(sizes: &[u16], start: &[u16]) -> Vec<Vec<u16>> {
    let mut all: Vec<Vec<u16>> = vec![Vec::new()];
    for &n in sizes {
        all = all
            .into_iter()
            .flat_map(|c| {
                (0..n).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    let distance = |a: &[u16], b: &[u16]| -> u32 {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| u32::from(x.abs_diff(y)))
            .sum()
    };
    let mut nearest: Vec<u32> = all.iter().map(|c| distance(c, start)).collect();
    let mut out = Vec::with_capacity(all.len().saturating_sub(1));
    // The farthest remaining combination, the earlier one on a tie.
    let farthest = |nearest: &[u32]| {
        nearest
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 0)
            .fold(None, |best: Option<(usize, u32)>, (k, &d)| match best {
                Some((_, b)) if b >= d => best,
                _ => Some((k, d)),
            })
            .map(|(k, _)| k)
    };
    while let Some(k) = farthest(&nearest) {
        let chosen = all[k].clone();
        for (c, n) in all.iter().zip(nearest.iter_mut()) {
            *n = (*n).min(distance(c, &chosen));
        }
        out.push(chosen);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_spreads_from_the_held_level() {
        let order = spread_order(&[5], &[4]);
        assert_eq!(order, [vec![0], vec![2], vec![1], vec![3]]);
        let two = spread_order(&[2, 3], &[1, 2]);
        assert_eq!(two.len(), 5);
        assert_eq!(two[0], [0, 0]);
    }

    #[test]
    fn the_clock_is_held_at_its_highest_level_and_nothing_else_is() {
        let space = SpaceBuilder::new()
            .param("tile", [1, 2, 4])
            .param("nvml_gr_clock", [1400, 1600, 1800])
            .constraint("tile < 4 or nvml_gr_clock < 1800")
            .build()
            .unwrap();
        let held = Held::of(&space).unwrap();
        assert_eq!(held.dims, [1]);
        assert_eq!(held.sub.len(), 2);
        for (q, &p) in held.whole.iter().enumerate() {
            assert_eq!(space.indices(p), [held.sub.indices(q)[0], 2]);
        }
        let plain = SpaceBuilder::new().param("tile", [1, 2]).build().unwrap();
        assert!(Held::of(&plain).is_none());
    }
}
