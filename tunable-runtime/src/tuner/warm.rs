//! # Warm start on a new device
//!
//! When a kernel is tuned for a device while its tuned file already holds other devices, what
//! they found is the best guess for the new one. [`warm_start`] lists the configurations the
//! first-run hook evaluates first ([`TuneOptions::first`](super::TuneOptions::first), within
//! the budget, before the strategy asks for anything; the strategy is told of them as of its own
//! evaluations): the portable set of the other devices
//! ([`tunable_search::portable::shipped`], what a shipped binary would time on this device),
//! then each other device's winner. The entries used are those of the same kernel and space, for
//! the key nearest the one tuned (the same key when another device has it).
//!
//! Measured on replayed caches with `cargo tunable bench --warm-start-family` (`docs/results.md`
//! in the repository, "Warm start").

use super::lookup::key_distance;
use crate::store::TunedEntry;
use tunable_search::{Space, Value};

/// The positions of `space` to evaluate first when tuning `kernel` for `key` on `device`, from
/// the other devices' `entries` (see the [module docs](self)); deduplicated, in order. Empty when
/// no other device has an entry for this kernel in this space.
pub fn warm_start(
    entries: &[TunedEntry],
    kernel: &str,
    space: &Space,
    device: &str,
    key: u64,
) -> Vec<usize> {
    let others: Vec<&TunedEntry> = entries
        .iter()
        .filter(|e| e.kernel == kernel && e.device != device && e.space_hash == space.fingerprint())
        .collect();
    let Some(nearest) = others
        .iter()
        .map(|e| e.key)
        .min_by(|a, b| key_distance(*a, key).total_cmp(&key_distance(*b, key)))
    else {
        return Vec::new();
    };
    let slot: Vec<&TunedEntry> = others.into_iter().filter(|e| e.key == nearest).collect();
    let bests: Vec<Vec<(Vec<Value>, f64)>> = slot.iter().map(|e| e.ranked()).collect();
    let mut out = Vec::new();
    let configs = tunable_search::portable::shipped(&bests)
        .into_iter()
        .chain(slot.iter().map(|e| e.values()));
    for values in configs {
        if let Some(p) = space.position_of_values(&values)
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Ranked, StoredValue};
    use tunable_search::SpaceBuilder;

    fn entry(space: &Space, device: &str, key: u64, ranked: &[(i64, f64)]) -> TunedEntry {
        TunedEntry {
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
        // tile=4 serves both devices within 5%: the set's first; then the winners 8 and 2.
        assert_eq!(first[0], at(4));
        assert!(first.contains(&at(8)) && first.contains(&at(2)));
        assert!(
            !first.contains(&at(1)),
            "this device's own entry is not a seed"
        );
        assert!(
            !first.contains(&at(32)),
            "another key's entry is not a seed"
        );
        // Only another key known: its entries seed.
        assert_eq!(warm_start(&entries[2..], "k", &space, "me", 100), [at(32)]);
        // Another space (or kernel): nothing.
        let other = SpaceBuilder::new().param("tile", [1, 2]).build().unwrap();
        assert!(warm_start(&entries, "k", &other, "me", 64).is_empty());
        assert!(warm_start(&entries, "j", &space, "me", 64).is_empty());
    }
}
