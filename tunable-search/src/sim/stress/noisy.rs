//! # `noisy`: a typical landscape, measured with noise
//!
//! A block size with a smooth trend and a weaker multiple-of-64 effect, two tiles whose product
//! has a good size, integers with wells, switches and a choice; times from a moderate profile
//! (median ~1.8x, 1% within 3%). Every measurement is the true time times `1 + sigma z` with a
//! seeded `sigma` of 1% to 5% ([`Landscape::measure`](super::Landscape::measure)): near the
//! optimum the noise is as large as the differences a strategy must tell apart.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::Wells;
use super::{Model, Resource};

/// A block size and two tiles, then integers, switches, choices and tiles.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Block, Role::Pow2, Role::Pow2],
        &[Role::Int, Role::Switch, Role::Choice(3), Role::Pow2],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    let wells = Wells::draw(plan, mix, (0.3, 1.2));
    let tile_target = mix.unit();
    let raw = move |p: &Point| {
        let mut r = wells.cost(p, 0.0, 0.4, |role, k, w, c| match role {
            Role::Block => {
                w * (p.x[k] - c).powi(2) + 0.2 * f64::from(u8::from(p.v[k] as i64 % 64 != 0))
            }
            _ => w * (p.x[k] - c).powi(2),
        });
        if dims > 2 {
            r += 0.8 * ((p.x[1] + p.x[2]) / 2.0 - tile_target).abs();
        }
        r + 0.05 * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.01, 1.03),
            (0.05, 1.1),
            (0.5, 1.8),
            (1.0, 5.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: mix.range(0.01, 0.05),
    }
}
