//! The shared Kernel Tuner caches as replays, for the quality tests of this crate.

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

pub fn replay(cache: &str) -> Replay {
    let kt = KernelTunerCache::load(shared().join(format!("cachefiles/{cache}.json.gz"))).unwrap();
    Replay::new(&kt, space_for(cache)).unwrap()
}
