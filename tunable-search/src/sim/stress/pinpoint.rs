//! # `pinpoint`: a needle in a small noisy space of few-valued parameters
//!
//! Every parameter has two to four values (a few hundred to a few thousand configurations), the
//! measurements are noisy (1-3%), and only a configuration or two lie within 10% of the
//! optimum: a seeded *target* configuration and, a little behind, some of its neighbours (one
//! parameter changed). The rest of the space follows a weak smooth trend whose best lies
//! elsewhere, so the marginal effects a model learns first do not point at the target.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::wells::Wells;
use super::{Model, Resource};

/// Small integers of at most four values, then choices of three, small integers and switches.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Few, Role::Few, Role::Few],
        &[Role::Choice(3), Role::Few, Role::Switch, Role::Few],
        dims,
    )
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let seed = mix.next();
    let target: Vec<u16> = plan.counts.iter().map(|&n| mix.below(n) as u16).collect();
    let wells = Wells::draw(plan, mix, (0.3, 1.0));
    let depth = mix.range(0.6, 1.0);
    let roughness = mix.range(0.2, 0.4);
    // The target and about one configuration more within ~10% of the optimum, whatever the size.
    let size: f64 = plan.counts.iter().map(|&n| n as f64).product();
    let near = (2.5 / size).min(0.01);
    let raw = move |p: &Point| {
        let trend = wells.cost(p, 0.0, 0.5, |_, k, w, c| w * (p.x[k] - c).powi(2));
        let off = p.i.iter().zip(&target).filter(|(a, b)| a != b).count();
        let pull = match off {
            0 => depth * 3.0,
            1 => depth,
            _ => 0.0,
        };
        trend - pull + roughness * p.roughness(seed)
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (near, 1.15),
            (0.03, 1.25),
            (0.15, 1.4),
            (0.5, 1.8),
            (1.0, 3.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.02 + 0.01 * (mix.unit() - 0.5) * 2.0,
    }
}
