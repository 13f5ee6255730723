//! # `flat_periodic`: alignment decides, size does not
//!
//! A block size that steps by 16 is good at multiples of 64 (a warp or wavefront effect:
//! periodic in the value, not smooth in it) and half as bad at odd multiples of 32; small
//! integers are good at powers of two (more trailing zero bits is better); one switch must be
//! on; another does nothing; power-of-two parameters add a weak smooth trend. The times are flat:
//! the median is ~1.4x the optimum and ~3% of configurations lie within 5% of it.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle, unit_of};
use super::{Model, Resource};

/// Block size, the must-be-on switch, the idle switch, then integers, tiles and switches.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Block, Role::Switch, Role::Switch],
        &[Role::Int, Role::Pow2, Role::Int, Role::Switch],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let dims = plan.roles.len();
    let block_weight = mix.range(0.8, 1.2);
    let block_trend = (mix.range(0.0, 1.0), mix.range(0.05, 0.2));
    let must_weight = mix.range(0.8, 1.2);
    // Per further parameter: its effect (0 for the idle switch at 2 and some later switches).
    let terms: Vec<(f64, f64)> = (0..dims)
        .map(|k| match (k, plan.roles[k]) {
            (0..=2, _) => (0.0, 0.0),
            (_, Role::Switch) if mix.unit() < 0.5 => (0.0, 0.0),
            _ => (mix.range(0.2, 0.5), mix.unit()),
        })
        .collect();
    let roles = plan.roles.clone();
    let raw = move |p: &Point| {
        let v = p.v[0] as i64;
        let period = if v % 64 == 0 {
            0.0
        } else if v % 32 == 0 {
            0.5
        } else {
            1.0
        };
        let mut r = block_weight * period + block_trend.1 * (p.x[0] - block_trend.0).powi(2);
        if dims > 1 && p.i[1] == 0 {
            r += must_weight;
        }
        for k in 3..dims {
            let (w, c) = terms[k];
            r += match roles[k] {
                Role::Int | Role::Block => w * (1.0 - f64::from(p.alignment(k).min(3)) / 3.0),
                Role::Pow2 => 0.5 * w * (p.x[k] - c).powi(2),
                _ => w * 0.5 * f64::from(u8::from(p.i[k] == u16::from(c < 0.5))),
            };
        }
        // Roughness that the idle switch (parameter 2) does not change.
        r + 0.05 * unit_of(p.key_without(seed, 2))
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.005, 1.01),
            (0.03, 1.05),
            (0.15, 1.2),
            (0.5, 1.4),
            (0.9, 1.7),
            (1.0, 2.2),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
