//! # `levels`: a small space of a few many-levelled parameters and a required level
//!
//! Two or three parameters of many levels (block sizes in steps of 16, integers: 6 to 12 values
//! each in a space of a few hundred configurations) and a few-valued parameter (a switch or a
//! choice) one of whose levels is required: every configuration near the optimum has it. Along
//! each many-levelled parameter the time has a seeded good window with steep walls on both sides
//! (both the smallest and the largest values are slow), block sizes are a little better at
//! multiples of 64, and the first two parameters act through their product (a diagonal valley:
//! the best value of the second moves with the first, as the items per thread move with the
//! block size), whose product is bounded by a constraint, so that the largest values of one
//! occur only with small values of the other; their good windows lie low in their ranges, where
//! most valid configurations are, and the rare large values are slow. At the other levels of the required parameter the valley lies elsewhere, so a
//! model fitted to them is misled about the required level.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::{Model, Resource};

/// A block size, an integer and a switch, then choices and block sizes.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Block, Role::Int, Role::Switch],
        &[Role::Choice(3), Role::Block],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    let many: Vec<usize> = (0..dims).filter(|&k| plan.counts[k] > 4).collect();
    let few: Vec<usize> = (0..dims).filter(|&k| plan.counts[k] <= 4).collect();
    // The required parameter and level (none in a space of many-levelled parameters only).
    let key = (!few.is_empty()).then(|| {
        let k = few[mix.below(few.len())];
        (k, mix.below(plan.counts[k]) as u16)
    });
    // Per many-levelled parameter: a weight, the window's centre at the required level and
    // elsewhere, and the wall's steepness.
    // The first two sit low in their ranges, where the product constraint leaves most
    // configurations: the rare large values are slow.
    let windows: Vec<(usize, f64, f64, f64)> = many
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            let (lo, hi) = if j < 2 { (0.05, 0.35) } else { (0.2, 0.8) };
            (k, mix.range(0.6, 1.2), mix.range(lo, hi), mix.range(lo, hi))
        })
        .collect();
    let walls = mix.range(1.5, 2.5);
    let valley = mix.range(0.4, 0.8);
    let gap = mix.range(0.5, 0.9);
    let few_costs: Vec<(usize, Vec<f64>)> = few
        .iter()
        .filter(|&&k| key.is_none_or(|(q, _)| q != k))
        .map(|&k| {
            let weight = mix.range(0.1, 0.4);
            (
                k,
                (0..plan.counts[k]).map(|_| weight * mix.unit()).collect(),
            )
        })
        .collect();
    let roughness = mix.range(0.05, 0.15);
    let block: Vec<bool> = plan.roles.iter().map(|r| *r == Role::Block).collect();
    let raw = move |p: &Point| {
        let at = key.is_none_or(|(k, level)| p.i[k] == level);
        let mut r = if at { 0.0 } else { gap };
        let mut shift = 0.0;
        for (j, &(k, w, inside, outside)) in windows.iter().enumerate() {
            let centre = (if at { inside } else { outside }) + shift;
            let d = (p.x[k] - centre).abs();
            r += w * (d.powf(walls) * 4.0 + d);
            if j == 0 {
                // The second parameter's best value moves against the first's.
                shift = -valley * (p.x[k] - centre);
            }
            if block[k] && (p.v[k] as u64).is_multiple_of(64) {
                r -= 0.1 * w;
            }
        }
        for (k, costs) in &few_costs {
            r += costs[usize::from(p.i[*k])];
        }
        r + roughness * p.roughness(seed)
    };
    // The first two parameters' product is bounded (threads per block, a tile's registers): the
    // largest values of one occur only with small values of the other.
    let constraints = match many.as_slice() {
        [a, b, ..] => {
            let top = |k: usize| plan.numbers[k][plan.counts[k] - 1];
            let limit = (top(*a) * top(*b) * mix.range(0.3, 0.45)).round();
            vec![format!(
                "{} * {} <= {limit}",
                plan.names[*a], plan.names[*b]
            )]
        }
        _ => vec![],
    };
    Model {
        power: None,
        constraints,
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.01, 1.08),
            (0.05, 1.3),
            (0.2, 1.8),
            (0.5, 3.0),
            (1.0, 15.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
