//! The shared Kernel Tuner caches as replays, for the quality tests of this crate.
// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use tunable_search::Space;
use tunable_search::sim::{KernelTunerCache, Replay};

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
