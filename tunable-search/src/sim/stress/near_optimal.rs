//! # `near_optimal`: many configurations within 1% of the optimum
//!
//! Small spaces where the top 8% lie within ~1% of the optimum and the median is ~1.35x: random
//! search comes 95% of the way from the median in about ten evaluations, so a strategy's first
//! few evaluations are its whole useful budget. The structure is mild: smooth wells per
//! parameter, one interaction and some roughness.

use super::shape::{Mix, Plan, Point, Profile, Role, hash, roles as cycle, unit_of};
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
    let wells: Vec<(f64, f64, u16)> = (0..dims)
        .map(|k| {
            (
                mix.range(0.3, 1.0),
                mix.unit(),
                mix.below(plan.counts[k]) as u16,
            )
        })
        .collect();
    let coupling = mix.range(0.2, 0.6);
    let roughness = mix.range(0.1, 0.3);
    let roles = plan.roles.clone();
    let raw = move |p: &Point| {
        let mut r = 0.0;
        for (k, &(w, c, good)) in wells.iter().enumerate() {
            r += match roles[k] {
                Role::Switch | Role::Choice(_) => 0.3 * w * f64::from(u8::from(p.i[k] != good)),
                _ => w * (p.x[k] - c).powi(2),
            };
        }
        if dims > 1 {
            r += coupling * (p.x[0] * p.x[1] - wells[0].1 * wells[1].1).abs();
        }
        r + roughness * unit_of(hash(seed, p.position as u64, 0))
    };
    Model {
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
