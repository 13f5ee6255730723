//! # `plateau`: switches, some irrelevant, and steps
//!
//! Categorical and boolean switches each set a level from a seeded table, but about half of them
//! do nothing at all; integer and tile parameters act in steps (their distance to a good value,
//! rounded down to quarters), and the good tile value depends on the first choice. Many
//! configurations share exactly the same time: wide plateaus with no slope to follow.

use super::shape::{Mix, Plan, Point, Profile, Role, roles as cycle};
use super::{Model, Resource};

/// A choice, an integer, a switch and a tile, then switches, choices, integers and tiles.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[Role::Choice(4), Role::Int, Role::Switch, Role::Pow2],
        &[
            Role::Switch,
            Role::Choice(3),
            Role::Int,
            Role::Switch,
            Role::Pow2,
        ],
        dims,
    )
}

enum Term {
    None,
    Levels(Vec<f64>),
    /// Weight and good value per value of the first choice.
    Steps(f64, Vec<f64>),
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let dims = plan.roles.len();
    let levels_of = |mix: &mut Mix, n: usize, w: f64| -> Vec<f64> {
        (0..n).map(|_| w * (mix.below(4) as f64) / 3.0).collect()
    };
    let choices = plan.counts[0];
    let mut relevant_switch = false;
    let terms: Vec<Term> = (0..dims)
        .map(|k| match plan.roles[k] {
            Role::Switch | Role::Choice(_) => {
                // The first switch parameter always matters, later ones half the time.
                if k == 0 || !relevant_switch || mix.unit() < 0.5 {
                    relevant_switch = true;
                    let w = mix.range(0.5, 1.5);
                    Term::Levels(levels_of(mix, plan.counts[k], w))
                } else {
                    Term::None
                }
            }
            _ => Term::Steps(
                mix.range(0.5, 1.5),
                (0..choices).map(|_| mix.unit()).collect(),
            ),
        })
        .collect();
    let raw = move |p: &Point| {
        let mut r = 0.0;
        for (k, t) in terms.iter().enumerate() {
            r += match t {
                Term::None => 0.0,
                Term::Levels(l) => l[usize::from(p.i[k])],
                Term::Steps(w, good) => {
                    let c = good[usize::from(p.i[0]).min(good.len() - 1)];
                    w * ((p.x[k] - c).abs() * 4.0).floor() / 4.0
                }
            };
        }
        r
    };
    Model {
        power: None,
        constraints: vec![],
        raw: Box::new(raw),
        profile: Some(Profile(vec![
            (0.0, 1.0),
            (0.05, 1.1),
            (0.3, 1.5),
            (0.5, 2.0),
            (1.0, 6.0),
        ])),
        resource: Resource::seeded(plan, mix),
        fail: 0.0,
        noise: 0.0,
    }
}
