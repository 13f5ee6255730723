//! # `heavy_tail`: a tiny good region
//!
//! Every parameter has a seeded good value (a well: the time grows with the distance to it, a
//! switch or choice is good at one value) and the two tiles interact (their ratio matters); the
//! times are heavy-tailed: the median is ~30x the optimum, the 10th percentile ~9x, so random
//! search comes 95% of the way in about a dozen evaluations and only the first evaluations
//! count. Large tiles together are excluded by a constraint.

use super::shape::{Mix, Plan, Point, Profile, Role, hash, roles as cycle, unit_of};
use super::{Model, Resource};

/// Two tiles and an integer, then switches, choices, tiles, integers and block sizes.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Pow2, Role::Pow2, Role::Int],
        &[
            Role::Switch,
            Role::Choice(3),
            Role::Pow2,
            Role::Int,
            Role::Block,
        ],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    let wells: Vec<(f64, f64, u16)> = (0..dims)
        .map(|k| {
            (
                mix.range(0.5, 1.5),
                mix.unit(),
                mix.below(plan.counts[k]) as u16,
            )
        })
        .collect();
    let coupling = mix.range(0.5, 1.0);
    let roles = plan.roles.clone();
    let raw = move |p: &Point| {
        let mut r = 0.0;
        for (k, &(w, c, good)) in wells.iter().enumerate() {
            r += match roles[k] {
                Role::Switch | Role::Choice(_) => 0.5 * w * f64::from(u8::from(p.i[k] != good)),
                _ => w * (p.x[k] - c).abs(),
            };
        }
        if dims > 1 {
            r += coupling * ((p.x[0] - p.x[1]) - (wells[0].1 - wells[1].1)).abs();
        }
        r + 0.05 * unit_of(hash(seed, p.position as u64, 0))
    };
    let mut constraints = vec![];
    if dims > 1 && plan.counts[0] >= 4 && plan.counts[1] >= 4 {
        let max = (plan.counts[0] - 1 + plan.counts[1] - 1) * 3 / 4;
        constraints.push(format!(
            "{} * {} <= {}",
            plan.names[0],
            plan.names[1],
            1u64 << max
        ));
    }
    Model {
        constraints,
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.002, 1.1),
            (0.01, 1.4),
            (0.03, 2.2),
            (0.1, 9.0),
            (0.5, 30.0),
            (0.9, 80.0),
            (1.0, 300.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
