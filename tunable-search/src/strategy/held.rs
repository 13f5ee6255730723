//! # The held part of a space: its trade-off parameters at their highest level
//!
//! A *trade-off parameter* is one that trades one objective for another in every configuration
//! alike: a graphics or memory clock, a power limit ([`Knob::NAMES`], Kernel Tuner's names).
//! Raising one makes no configuration slower, so the fastest configurations lie at their highest
//! level. [`Held`] is that level and the space of the other parameters there, which a member
//! strategy searches: as many times smaller as there are levels. [`Hold`](super::hold::Hold)
//! (one objective, time) and [`Sweep`](super::multi::sweep::Sweep) (a front) both search it.

use crate::clock::Knob;
use crate::{Space, SpaceBuilder};
use std::collections::HashMap;
use std::sync::Arc;

/// The held part of the space: which parameters are held, at which levels, and the space of the
/// other parameters the member searches.
pub(crate) struct Held {
    /// The trade-off parameters' indices in the space.
    pub(crate) dims: Vec<usize>,
    /// The other levels (one value index per held parameter), in the order a sweep asks them.
    pub(crate) sweep: Vec<Vec<u16>>,
    /// The space of the other parameters, restricted to the configurations valid at the level.
    pub(crate) sub: Arc<Space>,
    /// The whole space's position of each of `sub`'s positions.
    pub(crate) whole: Vec<usize>,
    /// `sub`'s position of each of the whole space's positions at the held level.
    pub(crate) part: HashMap<usize, usize>,
}

impl Held {
    /// The held part of `space`, or `None` if it has no trade-off parameter or no other parameter
    /// of more than one value.
    pub(crate) fn of(space: &Space) -> Option<Held> {
        let params = space.params();
        let dims = Held::dims(space)?;
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

    /// The trade-off parameters of `space` to hold (those of more than one value), without
    /// building the held part: `None` where [`of`](Self::of) gives `None` for want of them or of
    /// another parameter of more than one value.
    pub(crate) fn dims(space: &Space) -> Option<Vec<usize>> {
        let params = space.params();
        let dims: Vec<usize> = (0..space.dims())
            .filter(|&d| Knob::of_name(params[d].name()).is_some() && params[d].values().len() > 1)
            .collect();
        let searched =
            (0..space.dims()).any(|d| !dims.contains(&d) && params[d].values().len() > 1);
        (!dims.is_empty() && searched).then_some(dims)
    }

    /// The whole space's position of configuration `p` with its trade-off parameters at `levels`.
    pub(crate) fn at(&self, space: &Space, p: usize, levels: &[u16]) -> Option<usize> {
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
