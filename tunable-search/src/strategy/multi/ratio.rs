//! # Objectives without units
//!
//! What the scalarizations and the models of a multi-objective search see of a value: its
//! *ratio* to the objective's first value told. A positive objective's ratio is the value over
//! the first (time, energy); a negative one's (a maximized objective, negated) is the first
//! over the value, so that smaller is better for both and a ratio's logarithm is the scale-free
//! quantity a model of log-time expects. A value of the other sign than the first one counts
//! as that sign's extreme: better than every value of the first's sign when the first is
//! positive, worse when it is negative.

/// The largest ratio (and the inverse of the smallest).
const EXTREME: f64 = 1e100;

/// The ratio of `v` to an objective whose first value told was `scale` (see the
/// [module docs](self)); always positive and finite.
pub(super) fn ratio(v: f64, scale: f64) -> f64 {
    let r = if scale > 0.0 {
        v / scale
    } else if scale < 0.0 {
        scale / v
    } else {
        v + 1.0
    };
    if r > 0.0 {
        r.clamp(1.0 / EXTREME, EXTREME)
    } else if scale >= 0.0 {
        1.0 / EXTREME
    } else {
        EXTREME
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_make_smaller_better_for_either_sign() {
        assert_eq!(ratio(2.0, 4.0), 0.5);
        // A maximized objective, negated: -8 (8 GFLOPS/W) beats -4.
        assert!(ratio(-8.0, -4.0) < ratio(-4.0, -4.0));
        assert_eq!(ratio(-8.0, -4.0), 0.5);
        // The other sign than the first value: that sign's extreme.
        assert!(ratio(-1.0, 4.0) < ratio(1e-9, 4.0));
        assert!(ratio(1.0, -4.0) > ratio(-1e-9, -4.0));
        assert!(ratio(0.0, -4.0) > ratio(-1e-9, -4.0));
    }
}
