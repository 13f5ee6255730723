//! # The challenger: a second model (`dual`)
//!
//! A smooth model over value indices reads an effect periodic in a parameter's value (a block
//! size fast at multiples of 32, a tile at powers of two) as noise. With `dual=W` a second model
//! whose points also have alignment coordinates of weight `W`
//! ([`with_alignment`](super::with_alignment)) is told every result beside the first, and each
//! keeps its own predictive check ([`Guard`]). Whichever predicts better picks: the
//! [`Challenger`], the model that does not pick now, takes over when its check is judged and its skill exceeds the first's by [`DUAL_MARGIN`]; where
//! alignment does not matter the first keeps the picks. After a takeover the first model is
//! the challenger.

use super::guard::Guard;
use super::points::Points;
use super::surrogate::Surrogate;
use std::sync::Arc;

/// How much better (in mean concordance) the second model must predict to take over (`dual`).
pub const DUAL_MARGIN: f64 = 0.02;

/// The model that does not pick now, with its points and its predictive check.
pub(super) struct Challenger {
    /// The model.
    pub surrogate: Box<dyn Surrogate>,
    /// Its coordinates.
    pub points: Arc<Points>,
    /// Its predictive check.
    pub guard: Guard,
}

impl Challenger {
    /// Whether this model should pick instead of the one whose check is `first`: both checks
    /// have a skill, this one is judged, and its skill is higher by [`DUAL_MARGIN`].
    pub fn takes_over(&self, first: &Guard) -> bool {
        let (Some(a), Some(b)) = (first.skill(), self.guard.skill()) else {
            return false;
        };
        self.guard.judged() && b > a + DUAL_MARGIN
    }
}
