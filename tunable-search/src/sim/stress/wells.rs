//! # Wells: one good value per parameter
//!
//! The structure `heavy_tail`, `near_optimal`, `noisy` and `failing` share: every parameter has
//! a seeded weight and good value (a *well*). A switch or choice costs a fixed share of its
//! weight unless it is at its good value; a numeric parameter costs what its kind says of its
//! distance to its good position (absolute or squared). On top, each kind adds its own coupling
//! between parameters, its roughness ([`Point::roughness`]) and, for two of them, a bound on the
//! two tiles' product ([`tile_product_limit`]).
//!
//! The draws and the order of the floating-point operations are part of the generated
//! landscapes: changing them changes every published figure on them.

use super::shape::{Mix, Plan, Point, Role};

/// Per parameter: its role and well, `(weight, good position in [0, 1], good value index)`.
pub(crate) struct Wells {
    roles: Vec<Role>,
    wells: Vec<(f64, f64, u16)>,
}

impl Wells {
    /// Draws the wells of `plan`'s parameters in order: per parameter a weight in
    /// `[weights.0, weights.1)`, a good position, then a good value index.
    pub(crate) fn draw(plan: &Plan, mix: &mut Mix, weights: (f64, f64)) -> Wells {
        let wells = (0..plan.roles.len())
            .map(|k| {
                (
                    mix.range(weights.0, weights.1),
                    mix.unit(),
                    mix.below(plan.counts[k]) as u16,
                )
            })
            .collect();
        Wells {
            roles: plan.roles.clone(),
            wells,
        }
    }

    /// Parameter `k`'s good position.
    pub(crate) fn centre(&self, k: usize) -> f64 {
        self.wells[k].1
    }

    /// `start` plus every parameter's cost at `p`, added in parameter order: a switch or choice
    /// costs `switch` times its weight away from its good value, any other parameter
    /// `numeric(role, k, weight, good position)`.
    pub(crate) fn cost(
        &self,
        p: &Point,
        start: f64,
        switch: f64,
        numeric: impl Fn(Role, usize, f64, f64) -> f64,
    ) -> f64 {
        let mut r = start;
        for (k, &(w, c, good)) in self.wells.iter().enumerate() {
            r += match self.roles[k] {
                Role::Switch | Role::Choice(_) => switch * w * f64::from(u8::from(p.i[k] != good)),
                role => numeric(role, k, w, c),
            };
        }
        r
    }
}

/// The constraint that bounds the product of the first two parameters (two tiles) to
/// `2^((c0 - 1 + c1 - 1) * num / den)` (`c` their value counts), if both have at least four
/// values; none otherwise.
pub(crate) fn tile_product_limit(plan: &Plan, (num, den): (usize, usize)) -> Vec<String> {
    let mut constraints = vec![];
    if plan.roles.len() > 1 && plan.counts[0] >= 4 && plan.counts[1] >= 4 {
        let max = (plan.counts[0] - 1 + plan.counts[1] - 1) * num / den;
        constraints.push(format!(
            "{} * {} <= {}",
            plan.names[0],
            plan.names[1],
            1u64 << max
        ));
    }
    constraints
}
