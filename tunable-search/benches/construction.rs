//! Construction time of the eight spaces of "Efficient Construction of Large Search Spaces for
//! Auto-Tuning" (shared/data/spaces), and of all eight together.
//!
//! `cargo bench -p tunable-search --bench construction`

use std::path::PathBuf;
use tunable_search::SpaceBuilder;
use tunable_search::space::load::load;

const SPACES: [&str; 8] = [
    "dedispersion",
    "expdist",
    "hotspot",
    "gemm",
    "microhh",
    "atf_prl_2x2",
    "atf_prl_4x4",
    "atf_prl_8x8",
];

fn main() {
    divan::main();
}

fn builder(name: &str) -> SpaceBuilder {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../shared/data/spaces/{name}.json"));
    load(&path).unwrap_or_else(|e| panic!("{e}")).builder
}

/// One space.
#[divan::bench(args = SPACES, sample_count = 20)]
fn build(bencher: divan::Bencher, name: &str) {
    let b = builder(name);
    bencher
        .with_inputs(|| b.clone())
        .bench_values(|b| b.build().unwrap().len());
}

/// All eight, one after the other.
#[divan::bench(sample_count = 20)]
fn all_eight(bencher: divan::Bencher) {
    let bs: Vec<SpaceBuilder> = SPACES.iter().map(|n| builder(n)).collect();
    bencher.with_inputs(|| bs.clone()).bench_values(|bs| {
        bs.into_iter()
            .map(|b| b.build().unwrap().len())
            .sum::<usize>()
    });
}
