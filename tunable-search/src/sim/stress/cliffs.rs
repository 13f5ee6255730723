//! # `cliffs`: a small heavy-tailed space decided value by value
//!
//! Each parameter's values cost a seeded amount each, unordered (a table, not a distance: the
//! second-best value can sit next to the worst), most of them much; two numeric parameters share
//! a resource whose combined use above a seeded limit falls off a cliff (an occupancy limit);
//! the times are heavy-tailed, as on the AMD convolutions of the shared caches: the median is ~30x the
//! optimum, the 10th percentile ~9x, so only the first dozen evaluations count. Small spaces
//! of few parameters.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::{Model, Resource};

/// A block size, a tile and an integer, then tiles, switches, choices and integers.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Block, Role::Pow2, Role::Int],
        &[Role::Pow2, Role::Switch, Role::Choice(3), Role::Int],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    // Per parameter: a cost per value, one of them free, the others a seeded heavy-tailed
    // amount (the square of a uniform number: a few values nearly as good, most far worse).
    let tables: Vec<Vec<f64>> = (0..dims)
        .map(|k| {
            let n = plan.counts[k];
            let weight = mix.range(0.5, 1.5);
            let free = mix.below(n);
            (0..n)
                .map(|v| {
                    let u = mix.unit();
                    if v == free { 0.0 } else { weight * u * u }
                })
                .collect()
        })
        .collect();
    // The cliff: the first two parameters' positions, weighted, above a limit.
    let (wa, wb) = (mix.range(0.5, 1.5), mix.range(0.5, 1.5));
    let limit = mix.range(0.6, 1.2);
    let cliff = mix.range(1.0, 2.0);
    let raw = move |p: &Point| {
        let mut r: f64 = tables
            .iter()
            .enumerate()
            .map(|(k, t)| t[usize::from(p.i[k])])
            .sum();
        if dims > 1 && wa * p.x[0] + wb * p.x[1] > limit {
            r += cliff;
        }
        r + 0.05 * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.005, 1.1),
            (0.02, 1.5),
            (0.1, 9.0),
            (0.5, 30.0),
            (0.9, 70.0),
            (1.0, 200.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
