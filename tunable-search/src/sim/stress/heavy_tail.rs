//! # `heavy_tail`: a tiny good region
//!
//! Every parameter has a seeded good value (a well: the time grows with the distance to it, a
//! switch or choice is good at one value) and the two tiles interact (their ratio matters); the
//! times are heavy-tailed: the median is ~30x the optimum, the 10th percentile ~9x, so random
//! search comes 95% of the way in about a dozen evaluations and only the first evaluations
//! count. Large tiles together are excluded by a constraint.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::{Wells, tile_product_limit};
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
    let wells = Wells::draw(plan, mix, (0.5, 1.5));
    let coupling = mix.range(0.5, 1.0);
    let raw = move |p: &Point| {
        let mut r = wells.cost(p, 0.0, 0.5, |_, k, w, c| w * (p.x[k] - c).abs());
        if dims > 1 {
            r += coupling * ((p.x[0] - p.x[1]) - (wells.centre(0) - wells.centre(1))).abs();
        }
        r + 0.05 * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: tile_product_limit(plan, (3, 4)),
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
