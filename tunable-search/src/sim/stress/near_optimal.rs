//! # `near_optimal`: many configurations within 1% of the optimum
//!
//! Small spaces where the top 8% lie within ~1% of the optimum and the median is ~1.35x: random
//! search comes 95% of the way from the median in about ten evaluations, so a strategy's first
//! few evaluations are its whole useful budget. The structure is mild: smooth wells per
//! parameter, one interaction and some roughness.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::Wells;
use super::{Model, Resource};

/// A tile, an integer and a switch, then choices, integers, tiles and switches.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Pow2, Role::Int, Role::Switch],
        &[Role::Choice(3), Role::Int, Role::Pow2, Role::Switch],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    let wells = Wells::draw(plan, mix, (0.3, 1.0));
    let coupling = mix.range(0.2, 0.6);
    let roughness = mix.range(0.1, 0.3);
    let raw = move |p: &Point| {
        let mut r = wells.cost(p, 0.0, 0.3, |_, k, w, c| w * (p.x[k] - c).powi(2));
        if dims > 1 {
            r += coupling * (p.x[0] * p.x[1] - wells.centre(0) * wells.centre(1)).abs();
        }
        r + roughness * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.03, 1.004),
            (0.08, 1.012),
            (0.2, 1.06),
            (0.5, 1.35),
            (1.0, 2.5),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
