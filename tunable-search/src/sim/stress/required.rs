//! # `required`: one level of a few-valued parameter is a code path of its own
//!
//! One parameter with few values (an unroll factor whose 0 means no unrolling, a switch, a
//! choice, a short tile or integer range; which one is seeded) has a *required level*: every
//! configuration near the optimum has it (the lowest value in most landscapes, another in the
//! rest), while it holds a minority of the space. Within that level a *partner* parameter must
//! be near one end of its range; at the other levels the same parameter is best elsewhere, and
//! the time follows a smooth trend in the key parameter's value that points away from the
//! required level, so a model fitted to the other levels is misled about it. The remaining
//! parameters add mild wells.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::Wells;
use super::{Model, Resource};

/// An unroll factor, an integer and a tile, then block sizes, switches, unroll factors,
/// integers, tiles and choices.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Unroll, Role::Int, Role::Pow2],
        &[
            Role::Block,
            Role::Switch,
            Role::Unroll,
            Role::Int,
            Role::Pow2,
            Role::Choice(3),
        ],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    // The key: a seeded parameter among those with at most eight values (an unroll factor
    // first in the order, so the first parameter is a candidate in every landscape).
    let few: Vec<usize> = (0..dims).filter(|&k| plan.counts[k] <= 8).collect();
    let key = if few.is_empty() {
        0
    } else {
        few[mix.below(few.len())]
    };
    let levels = plan.counts[key];
    let level = if mix.unit() < 0.6 {
        0
    } else {
        mix.below(levels) as u16
    };
    // The partner: another parameter with at least two values (none in one dimension).
    let partner = (dims > 1).then(|| {
        let k = mix.below(dims - 1);
        if k >= key { k + 1 } else { k }
    });
    let high = mix.unit() < 0.5;
    let inside = if high {
        mix.range(0.8, 1.0)
    } else {
        mix.range(0.0, 0.2)
    };
    let outside = mix.range(0.3, 0.7);
    let partner_weight = mix.range(0.6, 1.0);
    // The trend outside the required level: better the farther the key's value is from it.
    let trend = mix.range(0.2, 0.5);
    let gap = mix.range(0.7, 0.9);
    let wells = Wells::draw(plan, mix, (0.1, 0.3));
    let roughness = mix.range(0.02, 0.08);
    let span = (levels.max(2) - 1) as f64;
    let raw = move |p: &Point| {
        let mut r = wells.cost(p, 0.0, 0.5, |_, k, w, c| {
            if k == key || Some(k) == partner {
                0.0
            } else {
                w * (p.x[k] - c).powi(2)
            }
        });
        let at = p.i[key] == level;
        if let Some(q) = partner {
            let good = if at { inside } else { outside };
            r += partner_weight * (p.x[q] - good).abs();
        }
        if !at {
            let distance = (f64::from(p.i[key]) - f64::from(level)).abs() / span;
            r += gap + trend * (1.0 - distance);
        }
        r + roughness * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.03, 1.03),
            (0.12, 1.1),
            (0.3, 1.3),
            (0.6, 1.8),
            (1.0, 4.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
