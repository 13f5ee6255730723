//! The shared Kernel Tuner caches as replays, for the quality tests of this crate.
// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use tunable_search::Space;
use tunable_search::sim::{KernelTunerCache, Replay};

/// The ten shared caches, with their kernel family.
pub const CACHES: [(&str, &str); 10] = [
    ("convolution_milo_A100", "convolution"),
    ("convolution_milo_A4000", "convolution"),
    ("convolution_milo_A6000", "convolution"),
    ("convolution_RTX_3090", "convolution"),
    ("dedispersion_milo_A100", "dedispersion"),
    ("dedispersion_milo_A4000", "dedispersion"),
    ("dedispersion_milo_A6000", "dedispersion"),
    ("gemm_clblast_RTX_3090", "gemm"),
    ("gemm_clblast_RTX_2080_Ti", "gemm"),
    ("pnpoly_RTX_3090", "pnpoly"),
];

pub fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// The space Kernel Tuner's runs used: T1 conditions for the `_milo` caches, else the cache keys.
pub fn space_for(cache: &str) -> Option<Space> {
    let t1 = ["convolution_milo", "dedispersion_milo"]
        .into_iter()
        .find(|k| cache.starts_with(k))?;
    let file =
        tunable_search::space::load::load(shared().join(format!("spaces/{t1}.t1.json"))).unwrap();
    Some(file.builder.build().unwrap())
}

pub fn cache_path(cache: &str) -> PathBuf {
    shared().join(format!("cachefiles/{cache}.json.gz"))
}

pub fn replay(cache: &str) -> Replay {
    let kt = KernelTunerCache::load(cache_path(cache)).unwrap();
    Replay::new(&kt, space_for(cache)).unwrap()
}

/// `f(row, column)` for every cell of a `rows` × `columns` table, on `threads` workers taking
/// cells in turn.
pub fn table<T: Clone + Default + Send>(
    rows: usize,
    columns: usize,
    threads: usize,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Vec<Vec<T>> {
    let jobs: Vec<(usize, usize)> = (0..rows)
        .flat_map(|r| (0..columns).map(move |c| (r, c)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<(usize, usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(r, c)) = jobs.get(j) else { break };
                        out.push((r, c, f(r, c)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut table = vec![vec![T::default(); columns]; rows];
    for (r, c, v) in done {
        table[r][c] = v;
    }
    table
}
