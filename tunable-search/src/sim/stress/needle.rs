//! # `needle`: a smooth decoy and a narrow basin
//!
//! Two or three *key* parameters hold two basins: a wide smooth bowl around a seeded centre
//! that bottoms out 25% above the optimum (the decoy a model-based search finds first), and a
//! narrow V-shaped basin around a point on the other side (each key parameter's needle value
//! is in the quarter of its range away from the decoy's centre) that holds the optimum; the
//! time there is the lower of the two. The other parameters add smooth wells of their own.
//! Times are the structure itself (no profile): the optimum is 1.0 times the base time.

use super::shape::{Mix, Plan, Point, Role, roles as cycle};
use super::{Model, Resource};

/// Two tiles and two integers, then tiles, integers, switches and block sizes.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Pow2, Role::Int, Role::Pow2, Role::Int],
        &[Role::Pow2, Role::Int, Role::Switch, Role::Block],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let dims = plan.roles.len();
    let keys = if dims >= 6 { 3 } else { dims.min(2) };
    let snap = |x: f64, n: usize| {
        if n > 1 {
            (x * (n - 1) as f64).round() / (n - 1) as f64
        } else {
            0.0
        }
    };
    let params: Vec<(f64, f64, f64)> = (0..dims)
        .map(|k| {
            let decoy = mix.unit();
            let needle = if decoy < 0.5 {
                mix.range(0.75, 1.0)
            } else {
                mix.range(0.0, 0.25)
            };
            let good = if plan.roles[k] == Role::Switch {
                decoy.round()
            } else {
                snap(decoy, plan.counts[k])
            };
            (mix.range(0.5, 1.5), good, snap(needle, plan.counts[k]))
        })
        .collect();
    let slope = mix.range(1.5, 2.5);
    let raw = move |p: &Point| {
        let (mut decoy, mut needle, mut rest) = (0.25, 0.0, 0.0);
        for (k, &(w, c, n)) in params.iter().enumerate() {
            if k < keys {
                decoy += 3.0 * w * (p.x[k] - c).powi(2);
                needle += slope * (p.x[k] - n).abs();
            } else {
                rest += 0.5 * w * (p.x[k] - c).powi(2);
            }
        }
        1.0 + f64::min(decoy, needle) + rest
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: None,
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
