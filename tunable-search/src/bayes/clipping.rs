//! # Clipping the targets
//!
//! Early in a run, the slow bulk of the results can lead a young model away from the fast
//! few: its trends are what a handful of points show most. With `clip=q` and `clip_ratio=F`,
//! the models see every target capped at the higher of the `q`-quantile of the targets told and
//! the target of `F` times the best result, so every configuration well behind the best looks
//! alike; with `clip_until=N` the caps hold for the first `N` evaluations, after which the
//! models see the targets themselves again, where the slow configurations' differences lead to
//! the fast ones. The strategy itself (its best, its ranking) always sees the raw results.

use super::options::BayesOptions;

/// Whether the caps still hold.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Clipping {
    /// Whether `clip_until` has passed and the models were given the uncapped targets back.
    released: bool,
}

impl Clipping {
    /// What the models should see now, after a tell: the capped `targets`, or the targets
    /// themselves once `clip_until` evaluations are asked (`asked`; once); `None` to leave the
    /// models as they are (no cap set, fewer than two targets, or the caps released).
    pub fn seen(
        &mut self,
        options: &BayesOptions,
        targets: &[f64],
        best: Option<f64>,
        asked: usize,
    ) -> Option<Vec<f64>> {
        let (q, ratio) = (options.clip, options.clip_ratio);
        if (q <= 0.0 && ratio <= 0.0) || targets.len() < 2 || self.released {
            return None;
        }
        let until = options.clip_until;
        if until > 0 && asked >= until {
            self.released = true;
            return Some(targets.to_vec());
        }
        let by_ratio = match best {
            Some(b) if ratio > 0.0 => Some(options.transform.apply(b * ratio)),
            _ => None,
        };
        capped(targets, q, by_ratio)
    }
}

/// `targets` capped at their `q`-quantile (if `q > 0`) or at `ratio_cap`, the higher of the two;
/// `None` when neither applies.
pub(super) fn capped(targets: &[f64], q: f64, ratio_cap: Option<f64>) -> Option<Vec<f64>> {
    let by_quantile = (q > 0.0 && !targets.is_empty()).then(|| {
        let mut sorted = targets.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        sorted[((sorted.len() - 1) as f64 * q).round() as usize]
    });
    let cap = by_quantile.into_iter().chain(ratio_cap).reduce(f64::max)?;
    Some(targets.iter().map(|&y| y.min(cap)).collect())
}

#[cfg(test)]
mod tests {
    use super::capped;

    #[test]
    fn the_higher_cap_holds() {
        let ln = |v: f64| v.ln();
        let targets: Vec<f64> = (1..=9).map(|v| ln(f64::from(v))).collect();
        assert_eq!(capped(&targets, 0.0, None), None);
        let at = |cap: f64| targets.iter().map(|&y| y.min(cap)).collect::<Vec<_>>();
        assert_eq!(capped(&targets, 0.5, None), Some(at(ln(5.0))));
        assert_eq!(capped(&targets, 0.0, Some(ln(1.5))), Some(at(ln(1.5))));
        assert_eq!(capped(&targets, 0.5, Some(ln(1.5))), Some(at(ln(5.0))));
        assert_eq!(capped(&targets, 0.25, Some(ln(7.0))), Some(at(ln(7.0))));
    }
}
