//! # Portable configurations
//!
//! A shipped binary meets devices nobody tuned on. What it can carry for them is a short list of
//! configurations chosen from the devices that were tuned, timed once on the new device so that
//! the fastest of them runs from then on.
//!
//! What is known of each tuned device is its best few configurations with their times (what the
//! tuned file keeps). [`Candidates::from_device_bests`] turns those lists into a table of
//! *fractions of the optimum*: for each configuration kept by any device and each device, the
//! device's best time divided by the configuration's time there (1 = the device's best, 0.5 =
//! twice as slow). A configuration a device did not keep is at most as fast as the slowest one
//! it kept, and is counted at that bound.
//!
//! [`portable_set`] then picks up to `k` configurations:
//! 1. **Cover.** One at a time, each pick maximizes the summed logarithm of every device's best
//!    fraction over the picks so far: the first pick has the best geometric mean over the
//!    devices, later ones serve the devices the earlier picks serve worst. A logarithm (rather
//!    than a sum of fractions) makes halving one device's speed cost as much as doubling
//!    another's gains, so no device is given up for a small gain on the others. Fractions below
//!    [`FLOOR`] count as [`FLOOR`].
//! 2. **Hedge.** Once no pick improves the cover (every known device is served as well as it can
//!    be), the remaining places go to configurations whose geometric mean is within the factor
//!    `hedge` of the best one's, each the one that differs in the most parameters from every
//!    configuration picked so far (ties: the better geometric mean). A new device is most likely
//!    to differ from the known ones where they agree, so the set spreads over the near-best
//!    configurations instead of repeating one of them. `hedge = 1` turns this off.
//!
//! ```
//! use tunable_search::portable::{Candidates, portable_set};
//! // Two devices' best configurations (parameter values, time in ms).
//! let a = vec![(vec![64, 1], 1.0), (vec![128, 1], 1.1), (vec![64, 2], 1.5)];
//! let b = vec![(vec![128, 1], 2.0), (vec![64, 1], 2.4), (vec![256, 4], 2.6)];
//! let c = Candidates::from_device_bests(&[a, b]);
//! let set = portable_set(&c, 2, 0.8);
//! assert_eq!(c.config(set[0]), &[128, 1]); // 91% and 100% of the two optima
//! assert_eq!(set.len(), 2);
//! ```
//!
//! ## References
//! - Kernel Tuner's integration module picks the configuration most often among each device's
//!   fastest 3%; CLBlast ships a database ordered device, architecture, vendor, default. Both
//!   ship one configuration per device class, where the set here is re-timed on the new device.

/// The smallest fraction of the optimum an entry counts as (`1e-3`): a configuration that failed
/// on a device scores as one 1000 times slower than the device's best.
pub const FLOOR: f64 = 1e-3;

/// The default `hedge` of [`portable_set`]: a configuration whose geometric mean fraction over
/// the known devices is within 0.9 of the best one's may fill a place the cover leaves free.
/// Chosen by leave-one-family-out over the shared caches with `cargo tunable transfer` (see
/// `docs/notes/portable-sets.md` in the repository).
pub const HEDGE: f64 = 0.9;

/// How many of its best configurations the tuned file keeps per (kernel, device, key), and so
/// what a build knows of each device: 16.
pub const KEPT: usize = 16;

/// How many configurations a build ships per kernel and key for devices nobody tuned on, to be
/// timed once on such a device: 4 (eight reach no more on the shared caches; `docs/results.md`
/// in the repository, "Portable sets").
pub const SHIPPED: usize = 4;

/// The configurations a build ships for devices nobody tuned on, from each tuned device's best
/// configurations with their times (what the tuned file keeps for one kernel and key):
/// [`portable_set`] of [`SHIPPED`] with [`HEDGE`], best first. Empty if no device has a usable
/// time.
///
/// ```
/// let a = vec![(vec![64, 1], 1.0), (vec![128, 1], 1.1)];
/// let b = vec![(vec![128, 1], 2.0), (vec![64, 1], 2.4)];
/// let set = tunable_search::portable::shipped(&[a, b]);
/// assert_eq!(set[0], [128, 1]);
/// ```
pub fn shipped<V: Clone + PartialEq>(devices: &[Vec<(Vec<V>, f64)>]) -> Vec<Vec<V>> {
    let c = Candidates::from_device_bests(devices);
    portable_set(&c, SHIPPED, HEDGE)
        .into_iter()
        .map(|i| c.config(i).to_vec())
        .collect()
}

/// Configurations and the fraction of each known device's optimum they reach.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidates<V> {
    configs: Vec<Vec<V>>,
    /// `table[c][d]`: the fraction of device `d`'s optimum configuration `c` reaches.
    table: Vec<Vec<f64>>,
}

impl<V: Clone + PartialEq> Candidates<V> {
    /// From a full table: `table[c][d]` is the fraction of device `d`'s optimum (in `[0, 1]`, 0
    /// where it failed) that `configs[c]` reaches.
    ///
    /// # Panics
    /// If the lengths disagree.
    pub fn from_table(configs: Vec<Vec<V>>, table: Vec<Vec<f64>>) -> Self {
        assert_eq!(configs.len(), table.len(), "one row per configuration");
        Candidates { configs, table }
    }

    /// From each device's best configurations with their times (any order; non-positive or
    /// non-finite times are ignored). A configuration a device did not list counts at the
    /// fraction of that device's slowest listed one. Devices with no usable entry are left out.
    /// Candidates are the listed configurations, in order of first appearance.
    pub fn from_device_bests(devices: &[Vec<(Vec<V>, f64)>]) -> Self {
        let devices: Vec<Vec<&(Vec<V>, f64)>> = devices
            .iter()
            .map(|d| {
                d.iter()
                    .filter(|(_, t)| t.is_finite() && *t > 0.0)
                    .collect()
            })
            .filter(|d: &Vec<_>| !d.is_empty())
            .collect();
        let mut configs: Vec<Vec<V>> = Vec::new();
        for (c, _) in devices.iter().flatten() {
            if !configs.contains(c) {
                configs.push(c.clone());
            }
        }
        let bounds: Vec<(f64, f64)> = devices
            .iter()
            .map(|d| {
                let best = d.iter().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
                let worst = d.iter().map(|(_, t)| *t).fold(0.0, f64::max);
                (best, worst)
            })
            .collect();
        let table = configs
            .iter()
            .map(|c| {
                devices
                    .iter()
                    .zip(&bounds)
                    .map(|(d, &(best, worst))| {
                        let t = d.iter().find(|(x, _)| x == c).map_or(worst, |(_, t)| *t);
                        best / t
                    })
                    .collect()
            })
            .collect();
        Candidates { configs, table }
    }

    /// Number of candidate configurations.
    pub fn len(&self) -> usize {
        self.configs.len()
    }

    /// Whether there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    /// The configuration of candidate `c`.
    pub fn config(&self, c: usize) -> &[V] {
        &self.configs[c]
    }

    /// The fraction of device `d`'s optimum candidate `c` reaches.
    pub fn fraction(&self, c: usize, d: usize) -> f64 {
        self.table[c][d]
    }

    /// The geometric mean of candidate `c`'s fractions (each at least [`FLOOR`]).
    pub fn geometric_mean(&self, c: usize) -> f64 {
        let row = &self.table[c];
        (row.iter().map(|&f| f.max(FLOOR).ln()).sum::<f64>() / row.len().max(1) as f64).exp()
    }
}

/// Up to `k` candidates: the greedy cover, then places it leaves free filled by hedging (see
/// the [module docs](self)); `hedge` in `(0, 1]`, [`HEDGE`] by default. Deterministic: ties go to
/// the lower candidate index. Empty for no candidates or `k = 0`.
pub fn portable_set<V: Clone + PartialEq>(c: &Candidates<V>, k: usize, hedge: f64) -> Vec<usize> {
    let mut picked = cover(&c.table, k);
    if picked.is_empty() {
        return picked;
    }
    let means: Vec<f64> = (0..c.len()).map(|i| c.geometric_mean(i)).collect();
    let best = means.iter().copied().fold(0.0, f64::max);
    while picked.len() < k {
        let distance = |i: usize| {
            picked
                .iter()
                .map(|&j| crate::space::neighbours::hamming(&c.configs[i], &c.configs[j]))
                .min()
                .unwrap_or(0)
        };
        let next = (0..c.len())
            .filter(|i| !picked.contains(i) && means[*i] >= hedge * best)
            .map(|i| (distance(i), means[i], i))
            .filter(|&(d, _, _)| d > 0)
            .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(b.2.cmp(&a.2)));
        match next {
            Some((_, _, i)) => picked.push(i),
            None => break,
        }
    }
    picked
}

/// The greedy cover of `table` (candidates × devices): up to `k` rows, each maximizing
/// `Σ_d ln(max(FLOOR, best fraction of device d among the picks))`; stops when no row improves
/// that sum.
fn cover(table: &[Vec<f64>], k: usize) -> Vec<usize> {
    let devices = table.first().map_or(0, Vec::len);
    let mut best = vec![0.0_f64; devices];
    let mut picked: Vec<usize> = Vec::with_capacity(k);
    let mut current = f64::NEG_INFINITY;
    while picked.len() < k {
        let mut choice: Option<(usize, f64)> = None;
        for (row, fractions) in table.iter().enumerate() {
            if picked.contains(&row) {
                continue;
            }
            let s: f64 = best
                .iter()
                .zip(fractions)
                .map(|(&b, &f)| b.max(f).max(FLOOR).ln())
                .sum();
            if choice.is_none_or(|(_, c)| s > c) {
                choice = Some((row, s));
            }
        }
        match choice {
            Some((row, s)) if s > current => {
                for (b, &f) in best.iter_mut().zip(&table[row]) {
                    *b = b.max(f);
                }
                current = s;
                picked.push(row);
            }
            _ => break,
        }
    }
    picked
}

/// The fraction of device `d`'s optimum that the fastest of `set` reaches on it: what timing the
/// set once on that device and keeping its fastest gives (0 for an empty set).
pub fn set_fraction<V: Clone + PartialEq>(c: &Candidates<V>, set: &[usize], d: usize) -> f64 {
    set.iter().map(|&i| c.fraction(i, d)).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: Vec<Vec<f64>>) -> Candidates<usize> {
        let configs = (0..rows.len()).map(|i| vec![i]).collect();
        Candidates::from_table(configs, rows)
    }

    #[test]
    fn first_pick_is_the_best_geometric_mean() {
        // Row 0 has the best arithmetic mean but ruins device 1; row 1 has the best geometric
        // mean.
        let c = table(vec![
            vec![1.0, 0.01, 1.0],
            vec![0.6, 0.6, 0.6],
            vec![0.5, 0.5, 0.5],
        ]);
        assert_eq!(portable_set(&c, 1, 1.0), vec![1]);
    }

    #[test]
    fn the_cover_serves_the_worst_served_devices_and_stops_when_nothing_helps() {
        let c = table(vec![
            vec![0.9, 0.9, 0.2],
            vec![0.9, 0.9, 0.25],
            vec![0.1, 0.1, 1.0],
            vec![0.5, 0.5, 0.5],
        ]);
        // Row 1 has the best geometric mean; row 2 lifts device 2 to 1.0; rows 0 and 3 add
        // nothing and hedging is off, so the set stops at two.
        let set = portable_set(&c, 4, 1.0);
        assert_eq!(set, vec![1, 2]);
        for d in 0..3 {
            assert!(set_fraction(&c, &set, d) >= 0.9);
        }
    }

    #[test]
    fn hedging_fills_free_places_with_the_most_different_near_best_configurations() {
        // One device; its best is (1, 1, 1). Among the near-best, (2, 2, 1) differs in two
        // parameters, (1, 1, 2) in one; (3, 3, 3) differs most but is too slow.
        let d = vec![
            (vec![1, 1, 1], 1.0),
            (vec![1, 1, 2], 1.01),
            (vec![2, 2, 1], 1.05),
            (vec![3, 3, 3], 3.0),
        ];
        let c = Candidates::from_device_bests(&[d]);
        let set = portable_set(&c, 2, 0.9);
        assert_eq!(c.config(set[0]), &[1, 1, 1]);
        assert_eq!(c.config(set[1]), &[2, 2, 1]);
        assert_eq!(portable_set(&c, 3, 0.9).len(), 3);
        assert_eq!(
            portable_set(&c, 4, 0.9).len(),
            3,
            "the slow one never hedges"
        );
        assert_eq!(portable_set(&c, 4, 1.0).len(), 1);
    }

    #[test]
    fn unlisted_configurations_count_at_the_slowest_listed_time() {
        let a = vec![(vec!['x'], 1.0), (vec!['y'], 2.0)];
        let b = vec![(vec!['z'], 4.0), (vec!['x'], 5.0), (vec!['w'], f64::NAN)];
        let c = Candidates::from_device_bests(&[a, b, vec![]]);
        assert_eq!(c.len(), 3);
        assert_eq!(c.config(2), &['z']);
        // 'y' is not listed on device 1: counted at its slowest listed time, 5.0.
        assert_eq!(c.fraction(1, 1), 4.0 / 5.0);
        assert_eq!(c.fraction(2, 0), 1.0 / 2.0);
    }

    #[test]
    fn failed_entries_count_at_the_floor_and_empty_inputs_give_empty_sets() {
        let c = table(vec![vec![1.0, 0.0], vec![0.2, 0.2]]);
        // ln(1) + ln(1e-3) < 2 ln(0.2): the configuration that fails somewhere loses.
        assert_eq!(portable_set(&c, 1, 1.0), vec![1]);
        assert!(portable_set(&table(vec![]), 3, 0.9).is_empty());
        assert!(portable_set(&c, 0, 0.9).is_empty());
        assert_eq!(set_fraction(&c, &[], 0), 0.0);
    }
}
