//! Time per evaluation of Bayesian optimization (`bayes`, its Table I portfolio and the clustered GP) after `n` = 20, 100 and 220
//! observations: one `ask(1)` (predict, score every unvisited candidate, pick) plus the `tell`
//! of its result (the model update), on the 17,956-configuration GEMM cache
//! (`gemm_clblast_RTX_3090`) and on the 349,853-configuration hotspot space
//! (`shared/data/spaces/hotspot.json`, a synthetic objective where 10% of the configurations
//! fail, so the feasibility model is at work; the space is above the default pool size, so a
//! pool of 65,536 candidates plus local neighbours is scored).
//!
//! `cargo bench -p tunable-search --bench bayes`
//!
//! Each sample is one ask and one tell, so the state moves on by one observation per sample (30
//! samples: from `n` to `n + 30`); portfolios predict once per round of up to three picks, so
//! the mean over samples is the cost per evaluation.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tunable_search::Space;
use tunable_search::sim::{KernelTunerCache, Replay};
use tunable_search::space::load::load;
use tunable_search::strategy::{self, Outcome, Strategy, StrategySpec, Trial};

fn main() {
    divan::main();
}

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn gemm() -> &'static (Arc<Space>, Vec<Option<f64>>) {
    static GEMM: OnceLock<(Arc<Space>, Vec<Option<f64>>)> = OnceLock::new();
    GEMM.get_or_init(|| {
        let kt =
            KernelTunerCache::load(shared("cachefiles/gemm_clblast_RTX_3090.json.gz")).unwrap();
        let replay = Replay::new(&kt, None).unwrap();
        (replay.shared_space(), replay.values().to_vec())
    })
}

fn hotspot() -> &'static (Arc<Space>, Vec<Option<f64>>) {
    static HOTSPOT: OnceLock<(Arc<Space>, Vec<Option<f64>>)> = OnceLock::new();
    HOTSPOT.get_or_init(|| {
        let space = load(shared("spaces/hotspot.json"))
            .unwrap()
            .builder
            .build()
            .unwrap();
        assert_eq!(space.len(), 349_853);
        // A bumpy bowl over the normalized coordinates; one configuration in ten fails.
        let values = (0..space.len())
            .map(|p| {
                let x = space.normalized(p);
                let fails = x.iter().map(|v| (v * 1000.0) as u64).sum::<u64>() % 10 == 3;
                (!fails).then(|| {
                    1.0 + x
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (v - 0.3 - 0.05 * i as f64).powi(2) + 0.05 * (9.0 * v).sin())
                        .sum::<f64>()
                })
            })
            .collect();
        (Arc::new(space), values)
    })
}

fn outcome(values: &[Option<f64>], p: usize) -> Outcome {
    values[p].map_or(Outcome::Failed, Outcome::Value)
}

/// A strategy that has been told `n` results.
fn at(spec: &str, data: &(Arc<Space>, Vec<Option<f64>>), n: usize) -> Box<dyn Strategy> {
    let spec: StrategySpec = spec.parse().unwrap();
    let mut s = strategy::build(&spec, Arc::clone(&data.0), 1).unwrap();
    for _ in 0..n {
        let p = s.ask(1)[0];
        s.tell(&[Trial {
            position: p,
            outcome: outcome(&data.1, p),
        }]);
    }
    s
}

fn bench(bencher: divan::Bencher, spec: &str, data: &(Arc<Space>, Vec<Option<f64>>), n: usize) {
    let mut s = at(spec, data, n);
    bencher.bench_local(|| {
        let p = s.ask(1)[0];
        s.tell(&[Trial {
            position: p,
            outcome: outcome(&data.1, p),
        }]);
    });
}

const N: [usize; 3] = [20, 100, 220];

/// Default BO (EI on the log of the run time) on GEMM.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn gemm_default(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes", gemm(), n);
}

/// The Table I setting (advanced multi portfolio) of Willemsen et al., "Bayesian Optimization
/// for auto-tuning GPU kernels", on GEMM.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn gemm_advanced_multi(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes:acq=advanced_multi", gemm(), n);
}

/// The clustered GP of Luo et al., "Non-smooth Bayesian optimization in tuning scientific
/// applications", on GEMM.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn gemm_cgp(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes:surrogate=cgp", gemm(), n);
}

/// Default BO on hotspot.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn hotspot_default(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes", hotspot(), n);
}

/// The same paper's Table I setting on hotspot.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn hotspot_advanced_multi(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes:acq=advanced_multi", hotspot(), n);
}

/// The clustered GP on hotspot.
#[divan::bench(args = N, sample_count = 30, sample_size = 1)]
fn hotspot_cgp(bencher: divan::Bencher, n: usize) {
    bench(bencher, "bayes:surrogate=cgp", hotspot(), n);
}
