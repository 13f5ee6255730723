//! The local-search strategies (simulated annealing, multi-start and iterated local search)
//! converge faster than random search on real GPU measurements: on brute-forced Kernel Tuner
//! caches their mean methodology score over seeded runs is above 0, the exact random-search
//! baseline, by several standard errors, one configuration at a time and in batches.
//!
//! Per-cache score tables over all the shared caches are a `cargo tunable bench` run, not a
//! test: see `docs/notes/quality-recipes.md`.

use std::path::PathBuf;
use tunable_search::sim::{KernelTunerCache, Replay, ScoreContext};
use tunable_search::space::load::load;
use tunable_search::strategy::{self, Outcome, StrategySpec, drive};

const LOCAL: [&str; 3] = ["annealing", "mls", "ils"];

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// The replay of a shared cache over the space Kernel Tuner's published runs used: the T1
/// conditions for the `_milo` caches, the cache's own configurations otherwise.
fn replay(cache: &str) -> Replay {
    let kt = KernelTunerCache::load(shared(&format!("cachefiles/{cache}.json.gz"))).unwrap();
    let space = ["convolution_milo", "dedispersion_milo"]
        .into_iter()
        .find(|k| cache.starts_with(k))
        .map(|t1| {
            load(shared(&format!("spaces/{t1}.t1.json")))
                .unwrap()
                .builder
                .build()
                .unwrap()
        });
    Replay::new(&kt, space).unwrap()
}

/// Runs of `spec` with seeds `seeds`: the objective of each unique evaluation in order.
fn runs(
    replay: &Replay,
    spec: &str,
    seeds: impl Iterator<Item = u64>,
    batch: usize,
) -> Vec<Vec<Option<f64>>> {
    let spec: StrategySpec = spec.parse().unwrap();
    seeds
        .map(|seed| {
            let mut s = strategy::build(&spec, replay.shared_space(), seed).unwrap();
            let rec = drive(s.as_mut(), 220, batch, |p| match replay.values()[p] {
                Some(v) => Outcome::Value(v),
                None => Outcome::Failed,
            });
            rec.trials.iter().map(|t| t.outcome.value()).collect()
        })
        .collect()
}

#[test]
fn local_search_beats_random_search_on_real_caches() {
    // gemm: a small part of the Cartesian product is valid; dedispersion: T1 constraints;
    // pnpoly: some configurations fail.
    for cache in [
        "gemm_clblast_RTX_3090",
        "dedispersion_milo_A100",
        "pnpoly_RTX_3090",
    ] {
        let replay = replay(cache);
        let ctx = ScoreContext::new(replay.values(), 220).unwrap();
        for spec in LOCAL {
            for batch in [1, 4] {
                let all = runs(&replay, spec, 1..=10, batch);
                assert!(all.iter().all(|r| r.len() == 220));
                let (mean, se) = ctx.score_runs(&all);
                assert!(
                    mean > 3.0 * se && se > 0.0,
                    "{cache}: {spec} (batch {batch}) scores {mean:.3} ± {se:.3}"
                );
            }
        }
    }
}
