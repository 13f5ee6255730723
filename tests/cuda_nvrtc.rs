//! NVRTC compiles the variants of `examples/gemm_cuda.rs` to PTX for a real architecture
//! (sm_80, so `ptxas` runs too), without a GPU; configurations outside the constraints fail for
//! the reason their constraint states, with NVRTC's log. CI installs NVRTC from PyPI
//! (`nvidia-cuda-nvrtc-cu12`); without it the test skips with the reason.
//!
//! By default every [`STRIDE`]-th configuration of each sweep is compiled (a sample that must
//! hold every value of every parameter), so that CI's few cores are not spent on the 2,304
//! compilations of both sweeps whole (`docs/notes/evidence.md` has their cost).
//! `TUNABLE_NVRTC_ALL=1` compiles every configuration (`scripts/gpu-check` does, on the device
//! machine's cores).

#[allow(dead_code)]
#[path = "../examples/gemm_cuda.rs"]
mod gemm_cuda;

use gemm_cuda::{GemmCudaParams, compile_each, gemm_cuda_space};
use tunable::backend::cuda::{CudaError, nvrtc};
use tunable::{Params, Value};

mod common;
use common::skip;

const ARCH: &str = "sm_80";

/// Every how many configurations of a sweep the default sample compiles: prime to the two,
/// three and four values of the parameters, so the sample does not step in time with them.
const STRIDE: usize = 7;

/// Whether `TUNABLE_NVRTC_ALL=1` asks for every configuration.
fn whole() -> bool {
    std::env::var("TUNABLE_NVRTC_ALL").is_ok_and(|v| v == "1")
}

/// Every configuration with `whole()`, else every [`STRIDE`]-th, checked to hold every value
/// of every parameter that `configs` holds.
fn sample(configs: Vec<GemmCudaParams>) -> Vec<GemmCudaParams> {
    if whole() {
        return configs;
    }
    let picked: Vec<GemmCudaParams> = configs.iter().step_by(STRIDE).copied().collect();
    let values = |list: &[GemmCudaParams], k: usize| {
        let mut v: Vec<Value> = list.iter().map(|p| p.to_values()[k].clone()).collect();
        v.sort_by_key(|x| format!("{x:?}"));
        v.dedup();
        v
    };
    for k in 0..gemm_cuda_space().dims() {
        assert_eq!(
            values(&picked, k),
            values(&configs, k),
            "the sample misses a value of parameter {k}"
        );
    }
    picked
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn nvrtc_found() -> bool {
    match nvrtc() {
        Ok(_) => true,
        Err(e) => {
            skip("nvrtc", e);
            false
        }
    }
}

/// One test, so that the two sweeps do not compete for the cores.
#[test]
fn nvrtc_compiles_the_space_and_rejects_what_the_constraints_exclude() {
    if !nvrtc_found() {
        return;
    }
    every_valid_variant_compiles_to_ptx();
    excluded_variants_fail_for_the_reason_their_constraint_states();
}

fn every_valid_variant_compiles_to_ptx() {
    let start = std::time::Instant::now();
    let space = gemm_cuda_space();
    let configs: Vec<GemmCudaParams> = (0..space.len())
        .map(|pos| GemmCudaParams::from_values(&space.values(pos)).expect("fits"))
        .collect();
    let configs = sample(configs);
    let (ok, failed) = compile_each(&configs, ARCH, threads(), false);
    println!(
        "NVRTC ({ARCH}): {} of {} configurations compiled ({} of the space) in {:.1} s",
        ok.len(),
        configs.len(),
        space.len(),
        start.elapsed().as_secs_f64()
    );
    let logs: Vec<String> = failed.iter().map(|(p, e)| format!("{p:?}: {e}")).collect();
    assert!(
        failed.is_empty(),
        "{} variants failed:\n{}",
        failed.len(),
        logs.join("\n")
    );
    assert_eq!(ok.len(), configs.len());
}

/// Every configuration of the Cartesian product that the constraints exclude, with the
/// constraints it breaks.
fn excluded() -> Vec<(GemmCudaParams, Vec<&'static str>)> {
    let space = gemm_cuda_space();
    let lists: Vec<Vec<Value>> = space.params().iter().map(|p| p.values().to_vec()).collect();
    let mut all = vec![vec![]];
    for list in &lists {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<Value>| {
                list.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push(v.clone());
                    c
                })
            })
            .collect();
    }
    all.into_iter()
        .filter(|v| space.position_of_values(v).is_none())
        .map(|v| {
            let p = GemmCudaParams::from_values(&v).expect("fits");
            let mut broken = Vec::new();
            if p.tile_size_x % p.VW != 0 {
                broken.push("vector");
            }
            if !(64..=1024).contains(&(p.block_size_x * p.block_size_y)) {
                broken.push("threads");
            }
            let staged =
                p.KB * (p.block_size_y * p.tile_size_y + p.block_size_x * p.tile_size_x) * 4;
            if p.use_shared == 1 && staged > 48 * 1024 {
                broken.push("shared");
            }
            (p, broken)
        })
        .collect()
}

fn excluded_variants_fail_for_the_reason_their_constraint_states() {
    let start = std::time::Instant::now();
    let excluded = excluded();
    assert!(
        excluded.iter().all(|(_, b)| !b.is_empty()),
        "a constraint the test does not know"
    );
    let configs = sample(excluded.iter().map(|(p, _)| *p).collect());
    let (ok, failed) = compile_each(&configs, ARCH, threads(), false);
    let reason = |p: &GemmCudaParams| &excluded.iter().find(|(q, _)| q == p).expect("known").1;
    let (mut vector, mut shared, mut threads_only) = (0, 0, 0);
    for (p, e) in &failed {
        let CudaError::Compile { log, .. } = e else {
            panic!("{p:?}: not a compile failure: {e}");
        };
        let broken = reason(p);
        if log.contains("tile_size_x must be a multiple of VW") {
            assert!(broken.contains(&"vector"), "{p:?}: {log}");
            vector += 1;
        } else if log.contains("too much shared data") {
            assert!(broken.contains(&"shared"), "{p:?}: {log}");
            shared += 1;
        } else if broken == &["threads"] {
            // More than 1024 threads: __launch_bounds__ beyond what a block may have.
            threads_only += 1;
        } else {
            panic!("{p:?} ({broken:?}) failed for an unexpected reason: {log}");
        }
    }
    // What compiles anyway can only break the thread limit, which the launch checks.
    for p in &ok {
        assert_eq!(reason(p), &["threads"], "{p:?} compiled");
    }
    println!(
        "{} of {} excluded configurations in {:.1} s: {vector} rejected by the vector-width static_assert, {shared} by ptxas (shared memory), {threads_only} by the thread bound at compile time, {} compile and would fail at launch (threads per block)",
        configs.len(),
        excluded.len(),
        start.elapsed().as_secs_f64(),
        ok.len()
    );
    assert!(vector > 0 && shared > 0, "the constraints must bite");
}
