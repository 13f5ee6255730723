//! # Power: a power–frequency model of the "Going green" kind
//!
//! A GPU's power at a graphics clock `f` is a static part plus a dynamic part that grows with
//! `f V(f)^2`, scaled by how busy the kernel keeps the chip (its *activity*, 0 to 1). The
//! voltage `V` is flat up to a *ridge* clock and rises linearly after it, so that above the ridge
//! the dynamic power grows faster than the clock. A compute-bound kernel's time falls as `1 / f`
//! and its energy (power times time) is lowest near the ridge; a memory-bound kernel's time
//! hardly moves with the clock, so its energy is lowest at the lowest clock.
//!
//! ## References
//! - R. Schoonhoven, B. Veenboer, B. van Werkhoven, K. J. Batenburg, "Going green: optimizing
//!   GPUs for energy efficiency through model-steered auto-tuning", PMBS 2022.

use super::shape::{CLOCK_LEVELS, CLOCK_LOW, CLOCK_STEP, Mix};

/// A seeded power–frequency model over the clocks of [`Role::Clock`](super::shape::Role::Clock).
#[derive(Clone, Debug)]
pub(crate) struct PowerModel {
    /// Power drawn at any clock, in W.
    static_watts: f64,
    /// The dynamic power at the top clock and full activity, in W.
    dynamic_watts: f64,
    /// The clock up to which the voltage is flat, in MHz.
    ridge: f64,
    /// How much the voltage rises from the ridge to the top clock (0.2: by 20%).
    rise: f64,
}

impl PowerModel {
    /// A model drawn from `mix`: static power 35-60 W, dynamic power 140-220 W at the top clock,
    /// the ridge in the lowest third of the clocks, the voltage 15-30% higher at the top clock
    /// than at the ridge.
    pub(crate) fn draw(mix: &mut Mix) -> PowerModel {
        PowerModel {
            static_watts: mix.range(35.0, 60.0),
            dynamic_watts: mix.range(140.0, 220.0),
            ridge: CLOCK_LOW + mix.range(0.0, 3.0) * CLOCK_STEP,
            rise: mix.range(0.15, 0.3),
        }
    }

    /// The top clock, in MHz.
    pub(crate) fn top() -> f64 {
        CLOCK_LOW + CLOCK_STEP * (CLOCK_LEVELS - 1) as f64
    }

    /// The voltage at clock `f` relative to the voltage at the ridge.
    fn voltage(&self, f: f64) -> f64 {
        let top = Self::top();
        if f <= self.ridge || top <= self.ridge {
            1.0
        } else {
            1.0 + self.rise * (f - self.ridge) / (top - self.ridge)
        }
    }

    /// The power in W at clock `f` (MHz) of a kernel of `activity` in `[0, 1]`.
    pub(crate) fn watts(&self, f: f64, activity: f64) -> f64 {
        let top = Self::top();
        let v = self.voltage(f) / self.voltage(top);
        self.static_watts + self.dynamic_watts * activity * (f / top) * v * v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_grows_with_the_clock_and_faster_above_the_ridge() {
        let model = PowerModel {
            static_watts: 50.0,
            dynamic_watts: 150.0,
            ridge: 1505.0,
            rise: 0.2,
        };
        let top = PowerModel::top();
        assert_eq!(top, 1890.0);
        assert_eq!(model.watts(top, 1.0), 200.0);
        assert_eq!(model.watts(top, 0.0), 50.0);
        // Below the ridge the dynamic part is linear in the clock.
        let low = model.watts(CLOCK_LOW, 1.0);
        let v = 1.0 / 1.2;
        assert!((low - (50.0 + 150.0 * CLOCK_LOW / top * v * v)).abs() < 1e-9);
        // Above it, the energy of a compute-bound kernel (time ~ 1 / f) rises with the clock.
        let energy = |f: f64| model.watts(f, 1.0) / f;
        assert!(energy(top) > energy(1505.0));
        // A memory-bound kernel (time flat) spends least at the lowest clock.
        assert!(model.watts(CLOCK_LOW, 0.5) < model.watts(1505.0, 0.5));
    }
}
