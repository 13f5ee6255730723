//! The genetic algorithm converges faster than random search on real GPU measurements: its mean
//! methodology score over seeded runs is above 0 (random search) by several standard errors.

use std::path::PathBuf;
use tunable_search::sim::{KernelTunerCache, Observation, Replay, ScoreContext};
use tunable_search::space::load::load;
use tunable_search::strategy::{self, Outcome, StrategySpec, drive};

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn mean_score(cache: &str, t1: Option<&str>, spec: &str, runs: u64) -> (f64, f64) {
    let cache = KernelTunerCache::load(shared(&format!("cachefiles/{cache}.json.gz"))).unwrap();
    let space = t1.map(|t| {
        load(shared(&format!("spaces/{t}.t1.json")))
            .unwrap()
            .builder
            .build()
            .unwrap()
    });
    let replay = Replay::new(&cache, space).unwrap();
    let ctx = ScoreContext::new(replay.values(), 220).unwrap();
    let spec: StrategySpec = spec.parse().unwrap();
    let all: Vec<Vec<Option<f64>>> = (1..=runs)
        .map(|seed| {
            let mut s = strategy::build(&spec, replay.shared_space(), seed).unwrap();
            let rec = drive(s.as_mut(), 220, 1, |p| match replay.evaluate(p) {
                Some(Observation::Value(v)) => Outcome::Value(*v),
                _ => Outcome::Failed,
            });
            rec.trials.iter().map(|t| t.outcome.value()).collect()
        })
        .collect();
    ctx.score_runs(&all)
}

#[test]
fn genetic_beats_random_search_on_real_caches() {
    for (cache, t1) in [
        ("gemm_clblast_RTX_3090", None),
        ("dedispersion_milo_A100", Some("dedispersion_milo")),
        ("pnpoly_RTX_3090", None),
    ] {
        let (mean, se) = mean_score(cache, t1, "genetic", 20);
        assert!(
            mean > 3.0 * se,
            "{cache}: genetic scores {mean:.3} ± {se:.3}"
        );
        let (rmean, rse) = mean_score(cache, t1, "random", 20);
        assert!(
            mean - rmean > 2.0 * (se * se + rse * rse).sqrt(),
            "{cache}: genetic {mean:.3} vs random {rmean:.3}"
        );
    }
}

#[test]
fn constraint_aware_genetic_beats_its_unaware_form() {
    // dedispersion: half of the Cartesian product is invalid.
    let (aware, se_a) = mean_score(
        "dedispersion_milo_A100",
        Some("dedispersion_milo"),
        "genetic",
        20,
    );
    let (unaware, se_u) = mean_score(
        "dedispersion_milo_A100",
        Some("dedispersion_milo"),
        "genetic:constraint_aware=false",
        20,
    );
    assert!(
        aware > unaware,
        "aware {aware:.3} ± {se_a:.3}, unaware {unaware:.3} ± {se_u:.3}"
    );
}
