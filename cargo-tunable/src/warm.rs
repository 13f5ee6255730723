//! # Warm-started runs in the bench
//!
//! `cargo tunable bench ... --warm-start-from CACHE ...` scores strategies warm-started as the
//! first-run hook warm-starts a tuning on a new device ([`tunable_runtime::tuner::warm`]): each
//! run first evaluates the portable set of the other devices and each other device's winner
//! (within its budget), then lets the strategy ask. What is known of another device is what a
//! tuned file keeps of it: its [`KEPT`] fastest configurations with their times, here read from
//! its cache.
//!
//! - `--warm-start-from CACHE ...`: the other devices, for every cache benched (a cache is never
//!   its own source);
//! - `--warm-start-family`: for each cache benched, the other benched caches of its kernel family
//!   (the stem's name before the first `_`, as in [`crate::loko`]), leave one device out.
//!
//! Configurations are matched by parameter name and value; those of a source that do not exist
//! in the target's space are left out. A cache without sources runs cold.

use crate::caches::{SpaceArgs, stem_of};
use crate::family::family;
use clap::Args;
use std::path::{Path, PathBuf};
use tunable_runtime::store::{Ranked, StoredValue, TunedEntry};
use tunable_runtime::tuner::warm::warm_start;
use tunable_search::Space;
use tunable_search::portable::KEPT;
use tunable_search::sim::{KernelTunerCache, Replay};
use tunable_search::strategy::{Driver, Outcome, RunRecord, Strategy};

/// How the bench warm-starts its runs.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct WarmArgs {
    /// Warm-start every run from these devices' caches (their fastest configurations).
    #[arg(long = "warm-start-from", num_args = 1.., value_name = "CACHE")]
    from: Vec<PathBuf>,
    /// Warm-start each cache's runs from the other benched caches of its kernel family.
    #[arg(long = "warm-start-family")]
    family: bool,
}

impl WarmArgs {
    /// Whether runs are warm-started at all.
    pub(crate) fn is_on(&self) -> bool {
        self.family || !self.from.is_empty()
    }

    /// The positions of `target`'s space (`replay`) each run evaluates first; `benched` are the
    /// caches of the bench. Empty when warm start is off or no source applies.
    pub(crate) fn first(
        &self,
        target: &Path,
        benched: &[PathBuf],
        replay: &Replay,
        spaces: &SpaceArgs,
    ) -> Result<Vec<usize>, Box<dyn std::error::Error>> {
        let stem = stem_of(target);
        let mut sources: Vec<&PathBuf> = self.from.iter().collect();
        if self.family {
            sources.extend(
                benched
                    .iter()
                    .filter(|c| family(&stem_of(c)) == family(&stem)),
            );
        }
        sources.retain(|c| stem_of(c) != stem);
        sources.dedup();
        let space = replay.space();
        let mut entries = Vec::new();
        for source in sources {
            if let Some(e) = kept(source, space, spaces)? {
                entries.push(e);
            }
        }
        Ok(warm_start(&entries, "bench", space, &stem, 0))
    }
}

/// What a tuned file would keep of the device of `cache`, over the target's `space`: its fastest
/// [`KEPT`] configurations that exist in `space`. `None` if none does.
fn kept(
    cache: &Path,
    space: &Space,
    spaces: &SpaceArgs,
) -> Result<Option<TunedEntry>, Box<dyn std::error::Error>> {
    let stem = stem_of(cache);
    let loaded = KernelTunerCache::load(cache)?;
    let replay = Replay::new(&loaded, spaces.space_for(&stem, &loaded)?)?;
    let own = replay.space();
    // The target's parameters in the source's order of values, by name.
    let order: Option<Vec<usize>> = space
        .params()
        .iter()
        .map(|p| own.params().iter().position(|q| q.name() == p.name()))
        .collect();
    let Some(order) = order else {
        return Ok(None);
    };
    let mut timed: Vec<(usize, f64)> = replay
        .values()
        .iter()
        .enumerate()
        .filter_map(|(p, v)| Some((p, (*v)?)))
        .collect();
    timed.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let top: Vec<Ranked> = timed
        .into_iter()
        .filter_map(|(p, time_ms)| {
            let values = own.values(p);
            let mapped: Vec<_> = order.iter().map(|&i| values[i].clone()).collect();
            space.position_of_values(&mapped).map(|_| Ranked {
                values: mapped.iter().map(StoredValue::from).collect(),
                time_ms,
            })
        })
        .take(KEPT)
        .collect();
    let Some(best) = top.first() else {
        return Ok(None);
    };
    Ok(Some(TunedEntry {
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
        kernel: "bench".into(),
        device: stem,
        key: 0,
        space_hash: space.fingerprint(),
        params: space
            .params()
            .iter()
            .zip(&best.values)
            .map(|(p, v)| (p.name().to_owned(), v.clone()))
            .collect(),
        time_ms: best.time_ms,
        evaluations: replay.values().len() as u32,
        strategy: "brute force".into(),
        timestamp: 0,
        top,
    }))
}

/// One run of `strategy` as [`tunable_search::strategy::drive`] makes it, `first` evaluated
/// before the strategy asks for anything (within `budget`).
pub(crate) fn drive_from(
    strategy: &mut dyn Strategy,
    budget: usize,
    batch: usize,
    first: &[usize],
    mut objective: impl FnMut(usize) -> Outcome,
) -> RunRecord {
    let mut each = |batch: &[usize]| batch.iter().map(|&p| objective(p)).collect::<Vec<_>>();
    match Driver::new(strategy, budget)
        .batch(batch)
        .first(first)
        .run(&mut each)
    {
        Ok(rec) => rec,
        Err(never) => match never {},
    }
}
