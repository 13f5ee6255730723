//! # The chain of a kernel and key
//!
//! What a build of the crate runs for each kernel and key, in order: on a tuned device, that
//! device's entry; on any other device, the fastest of the portable set timed once (the set the
//! `#[tunable]` macro computes from the same entries, [`tunable_search::portable::shipped`]).
//! `cargo tunable show` prints it below the table of entries. Only entries of a kernel's latest
//! space (the space fingerprint of its most recent entry) count, as a build drops the others.

use std::collections::BTreeMap;
use tunable_runtime::store::TunedEntry;
use tunable_search::Value;

/// The chain of one kernel and key.
#[derive(Debug, PartialEq)]
pub(crate) struct Chain {
    /// The kernel.
    pub(crate) kernel: String,
    /// The problem-size key.
    pub(crate) key: u64,
    /// Each tuned device with its winner, by device name.
    pub(crate) devices: Vec<(String, String)>,
    /// The portable set, best compromise first.
    pub(crate) portable: Vec<String>,
}

/// The chains of `entries`, by kernel and key.
pub(crate) fn chains(entries: &[TunedEntry]) -> Vec<Chain> {
    let mut latest: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for e in entries {
        let l = latest
            .entry(&e.kernel)
            .or_insert((e.timestamp, e.space_hash));
        if e.timestamp > l.0 {
            *l = (e.timestamp, e.space_hash);
        }
    }
    let mut slots: BTreeMap<(&str, u64), Vec<&TunedEntry>> = BTreeMap::new();
    for e in entries
        .iter()
        .filter(|e| latest[e.kernel.as_str()].1 == e.space_hash)
    {
        slots.entry((&e.kernel, e.key)).or_default().push(e);
    }
    slots
        .into_iter()
        .map(|((kernel, key), mut slot)| {
            slot.sort_by(|a, b| a.device.cmp(&b.device));
            let names: Vec<&str> = slot[0].params.iter().map(|(n, _)| n.as_str()).collect();
            let describe = |values: &[Value]| {
                names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let bests: Vec<Vec<(Vec<Value>, f64)>> = slot.iter().map(|e| e.ranked()).collect();
            Chain {
                kernel: kernel.to_owned(),
                key,
                devices: slot
                    .iter()
                    .map(|e| (e.device.clone(), describe(&e.values())))
                    .collect(),
                portable: tunable_search::portable::shipped(&bests)
                    .iter()
                    .map(|c| describe(c))
                    .collect(),
            }
        })
        .collect()
}

/// Prints the chains as a list, one block per kernel and key.
pub(crate) fn print(chains: &[Chain]) {
    for c in chains {
        let shown = crate::shown::shown;
        println!("{} (key {}):", shown(&c.kernel), c.key);
        for (device, config) in &c.devices {
            println!("  on {}: {}", shown(device), shown(config));
        }
        println!(
            "  on any other device: the fastest of {} portable configuration(s), timed once:",
            c.portable.len()
        );
        for (i, config) in c.portable.iter().enumerate() {
            println!("    {}. {}", i + 1, crate::shown::shown(config));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_runtime::store::{Ranked, StoredValue};

    fn entry(device: &str, key: u64, hash: u64, ranked: &[(i64, f64)]) -> TunedEntry {
        TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
            kernel: "k".into(),
            device: device.into(),
            key,
            space_hash: hash,
            params: vec![("tile".into(), StoredValue::Int(ranked[0].0))],
            time_ms: ranked[0].1,
            evaluations: 10,
            strategy: "auto".into(),
            timestamp: hash,
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
    fn devices_then_the_portable_set_of_the_latest_space() {
        let entries = [
            entry("b", 64, 2, &[(8, 1.0), (4, 1.1)]),
            entry("a", 64, 2, &[(4, 2.0), (8, 2.6)]),
            entry("a", 1024, 2, &[(16, 5.0)]),
            entry("old", 64, 1, &[(2, 1.0)]),
        ];
        let c = chains(&entries);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].devices,
            [("a".into(), "tile=4".into()), ("b".into(), "tile=8".into())]
        );
        // tile=4 reaches 100% and 91% of the optima, tile=8 77% and 100%.
        assert_eq!(c[0].portable[0], "tile=4");
        assert_eq!(c[1].key, 1024);
        assert_eq!(c[1].portable, ["tile=16"]);
    }
}
