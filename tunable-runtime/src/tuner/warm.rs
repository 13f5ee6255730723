//! # Warm start: what earlier tunings of the kernel found
//!
//! When a kernel is tuned while its tuned file already holds entries of it for other devices or
//! for other problem-size keys of this device, what they found is the best guess for this
//! tuning. [`plan`] lists the configurations the first-run hook evaluates first
//! ([`TuneOptions::first`](super::TuneOptions::first), within the budget, before the strategy
//! asks for anything; their results are told to the strategy before its first ask, and `auto`
//! counts them toward its initial sample), whatever the strategy, with no option to set:
//! 1. this device's entry for the nearest other key (by ratio): its [`OWN_SEEDS`] fastest
//!    configurations, measured on this hardware at a nearby size;
//! 2. the other devices' entries for the key nearest the one tuned (the same key when another
//!    device has it): their portable set ([`tunable_search::portable::shipped`], what a shipped
//!    binary would time on this device), then each one's winner.
//!
//! Only entries of the same kernel and space count. The tuning summary says how many
//! configurations the warm start gave and where they came from ([`WarmStart::describe`]).
//!
//! `cargo tunable bench --warm-start-family` measures what it buys on replayed caches (see the
//! user guide's strategies chapter).

use super::lookup::key_distance;
use crate::store::TunedEntry;
use tunable_search::{Space, Value};

/// How many of the fastest configurations of this device's entry for another key seed a tuning.
pub const OWN_SEEDS: usize = 3;

/// How many of each other device's fastest configurations seed a tuning (its winner and the
/// next ones, after the portable set).
pub const OTHER_SEEDS: usize = 3;

/// What a warm start evaluates first, and where it comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarmStart {
    /// The positions to evaluate first, deduplicated, in order.
    pub positions: Vec<usize>,
    /// The key of this device's entry that seeded it, if one did.
    pub own_key: Option<u64>,
    /// The other devices whose entries seeded it, and the key of those entries.
    pub devices: Vec<String>,
    /// The key of the other devices' entries used (meaningful when `devices` is not empty).
    pub devices_key: u64,
}

impl WarmStart {
    /// Where the configurations come from, for the tuning summary: e.g. `this device's key 512
    /// and 2 other devices (key 1024)`; `None` when nothing seeds the tuning.
    pub fn describe(&self) -> Option<String> {
        if self.positions.is_empty() {
            return None;
        }
        let own = self.own_key.map(|k| format!("this device's key {k}"));
        let others = (!self.devices.is_empty()).then(|| {
            let n = self.devices.len();
            let s = if n == 1 { "" } else { "s" };
            format!("{n} other device{s} (key {})", self.devices_key)
        });
        Some(match (own, others) {
            (Some(a), Some(b)) => format!("{a} and {b}"),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return None,
        })
    }
}

/// The warm start of tuning `kernel` for `key` on `device` from the tuned file's `entries` (see
/// the [module docs](self)). Empty when no entry of this kernel and space is for another device
/// or another key.
pub fn plan(
    entries: &[TunedEntry],
    kernel: &str,
    space: &Space,
    device: &str,
    key: u64,
) -> WarmStart {
    let same: Vec<&TunedEntry> = entries
        .iter()
        .filter(|e| e.kernel == kernel && e.space_hash == space.fingerprint())
        .collect();
    let nearest = |it: &mut dyn Iterator<Item = u64>| {
        it.min_by(|a, b| {
            key_distance(*a, key)
                .total_cmp(&key_distance(*b, key))
                .then(a.cmp(b))
        })
    };
    let mut out = WarmStart::default();
    // Adds a configuration (once); whether it is in the space.
    let push = |out: &mut WarmStart, values: &[Value]| {
        let Some(p) = space.position_of_values(values) else {
            return false;
        };
        if !out.positions.contains(&p) {
            out.positions.push(p);
        }
        true
    };
    // This device, the nearest other key: its fastest configurations.
    let own_key = nearest(
        &mut same
            .iter()
            .filter(|e| e.device == device && e.key != key)
            .map(|e| e.key),
    );
    if let Some(k) = own_key
        && let Some(e) = same.iter().find(|e| e.device == device && e.key == k)
    {
        let mut any = false;
        for (values, _) in e.ranked().into_iter().take(OWN_SEEDS) {
            any |= push(&mut out, &values);
        }
        if any {
            out.own_key = Some(k);
        }
    }
    // Other devices, the nearest key: the portable set, then each one's winner.
    let others: Vec<&TunedEntry> = same
        .iter()
        .copied()
        .filter(|e| e.device != device)
        .collect();
    if let Some(k) = nearest(&mut others.iter().map(|e| e.key)) {
        let slot: Vec<&TunedEntry> = others.into_iter().filter(|e| e.key == k).collect();
        let bests: Vec<Vec<(Vec<Value>, f64)>> = slot.iter().map(|e| e.ranked()).collect();
        let mut any = false;
        // Then each one's next fastest, round robin, up to OTHER_SEEDS of each.
        let runners_up: Vec<Vec<Value>> = (1..OTHER_SEEDS)
            .flat_map(|rank| bests.iter().filter_map(move |b| b.get(rank)))
            .map(|(values, _)| values.clone())
            .collect();
        let configs = tunable_search::portable::shipped(&bests)
            .into_iter()
            .chain(slot.iter().map(|e| e.values()))
            .chain(runners_up);
        for values in configs {
            any |= push(&mut out, &values);
        }
        if any {
            out.devices = slot.iter().map(|e| e.device.clone()).collect();
            out.devices.sort();
            out.devices.dedup();
            out.devices_key = k;
        }
    }
    out
}

/// The positions [`plan`] gives: what to evaluate first when tuning `kernel` for `key` on
/// `device` (see the [module docs](self)).
pub fn warm_start(
    entries: &[TunedEntry],
    kernel: &str,
    space: &Space,
    device: &str,
    key: u64,
) -> Vec<usize> {
    plan(entries, kernel, space, device, key).positions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Ranked, StoredValue};
    use tunable_search::SpaceBuilder;

    fn entry(space: &Space, device: &str, key: u64, ranked: &[(i64, f64)]) -> TunedEntry {
        TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
            kernel: "k".into(),
            device: device.into(),
            key,
            space_hash: space.fingerprint(),
            params: vec![("tile".into(), StoredValue::Int(ranked[0].0))],
            time_ms: ranked[0].1,
            evaluations: 10,
            strategy: "auto".into(),
            timestamp: 1,
            top: ranked
                .iter()
                .map(|&(t, time_ms)| Ranked {
                    values: vec![StoredValue::Int(t)],
                    time_ms,
                })
                .collect(),
        }
    }

    #[test]
    fn the_portable_set_then_the_other_devices_winners() {
        let space = SpaceBuilder::new()
            .param("tile", [1, 2, 4, 8, 16, 32])
            .build()
            .unwrap();
        let at = |t: i64| space.position_of_values(&[Value::Int(t)]).unwrap();
        let entries = [
            entry(&space, "a", 64, &[(8, 1.0), (4, 1.05), (2, 3.0)]),
            entry(&space, "b", 64, &[(2, 1.0), (4, 1.02), (8, 3.0)]),
            entry(&space, "b", 4096, &[(32, 1.0)]),
            entry(&space, "me", 64, &[(1, 1.0)]),
        ];
        let first = warm_start(&entries, "k", &space, "me", 100);
        // This device's entry for key 64 first (its only configuration, tile=1); then tile=4,
        // which serves both other devices within 5%: the set's first; then the winners 8 and 2.
        assert_eq!(first[..2], [at(1), at(4)]);
        assert!(first.contains(&at(8)) && first.contains(&at(2)));
        assert!(
            first.contains(&at(1)),
            "this device's entry for another key seeds it"
        );
        assert!(
            !first.contains(&at(32)),
            "another device's entry for a farther key is not a seed"
        );
        // Only another key known: its entries seed.
        assert_eq!(warm_start(&entries[2..3], "k", &space, "me", 100), [at(32)]);
        // Tuning this device's own key again: its entry for that key is not a seed.
        let again = plan(&entries[3..], "k", &space, "me", 64);
        assert_eq!(again, WarmStart::default());
        assert_eq!(again.describe(), None);
        // Another space (or kernel): nothing.
        let other = SpaceBuilder::new().param("tile", [1, 2]).build().unwrap();
        assert!(warm_start(&entries, "k", &other, "me", 64).is_empty());
        assert!(warm_start(&entries, "j", &space, "me", 64).is_empty());
    }

    #[test]
    fn this_devices_other_keys_seed_and_the_summary_says_where_from() {
        let space = SpaceBuilder::new()
            .param("tile", [1, 2, 4, 8, 16, 32])
            .build()
            .unwrap();
        let at = |t: i64| space.position_of_values(&[Value::Int(t)]).unwrap();
        // This device tuned keys 256 and 4096; another device key 1024.
        let entries = [
            entry(
                &space,
                "me",
                256,
                &[(8, 1.0), (16, 1.1), (4, 1.2), (2, 1.5)],
            ),
            entry(&space, "me", 4096, &[(32, 1.0)]),
            entry(&space, "gpu-b", 1024, &[(16, 1.0), (32, 1.3)]),
        ];
        let warm = plan(&entries, "k", &space, "me", 512);
        // The nearest own key is 256 (ratio 2, against 8): its three fastest, in order; then
        // the other device's set and winner (16, already listed), then its next fastest (32).
        assert_eq!(warm.positions, [at(8), at(16), at(4), at(32)]);
        assert_eq!(warm.own_key, Some(256));
        assert_eq!(warm.devices, ["gpu-b"]);
        assert_eq!(
            warm.describe().as_deref(),
            Some("this device's key 256 and 1 other device (key 1024)")
        );
        // Alone on this device: only its own other keys.
        let alone = plan(&entries[..2], "k", &space, "me", 512);
        assert_eq!(alone.describe().as_deref(), Some("this device's key 256"));
        assert_eq!(alone.positions.len(), OWN_SEEDS);
        // A new device: only the others.
        let new = plan(&entries, "k", &space, "new", 1024);
        assert_eq!(new.own_key, None);
        assert_eq!(new.describe().as_deref(), Some("1 other device (key 1024)"));
    }
}
