//! # `failing`: many configurations fail at run time
//!
//! A hidden resource (registers, shared memory: weighted sizes of some numeric parameters, plus
//! a switch or choice value that adds to it) decides which configurations fail: the top 30% to
//! 60% by resource (seeded). The failures are clustered in regions of the space, not uniform,
//! and the constraints do not know them. As on real devices, using more of the resource is
//! faster: the best configurations lie just below the limit. A visible constraint also bounds
//! the two tiles' product.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::{Wells, tile_product_limit};
use super::{Model, Resource};

/// Two tiles, an integer and a block size, then switches, choices, integers and tiles.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Pow2, Role::Pow2, Role::Int, Role::Block],
        &[Role::Switch, Role::Choice(3), Role::Int, Role::Pow2],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let resource = Resource::seeded(plan, mix);
    let gain = mix.range(0.5, 1.0);
    let wells = Wells::draw(plan, mix, (0.2, 0.8));
    let used = resource.clone();
    let raw = move |p: &Point| {
        let start = -gain * used.eval(p);
        let r = wells.cost(p, start, 0.3, |_, k, w, c| 0.5 * w * (p.x[k] - c).powi(2));
        r + 0.1 * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: tile_product_limit(plan, (4, 5)),
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.02, 1.05),
            (0.1, 1.3),
            (0.5, 2.5),
            (1.0, 10.0),
        ])),
        fail: mix.range(0.3, 0.6),
        resource,
        noise: 0.0,
    }
}
