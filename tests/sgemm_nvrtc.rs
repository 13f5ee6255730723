//! NVRTC compiles the variants of `examples/sgemm_cuda.rs` to PTX for sm_90 (an H100's limits
//! bound to the space's `device.` constraints; `ptxas` runs too), without a GPU, and reports
//! which fail and why. CI installs NVRTC from PyPI (`nvidia-cuda-nvrtc-cu12`); without it the
//! test skips with the reason (it fails instead with `TUNABLE_REQUIRE=nvrtc`).
//!
//! By default it compiles a deterministic sample: every configuration at an even stride through
//! the space, plus the corner cases (the default, the largest and smallest block tiles, every
//! stage count with and without `cp.async`, every split). `TUNABLE_NVRTC_ALL=1`, or the
//! ignored test, compiles every configuration (`cargo run --example sgemm_cuda -- --ptx sm_90`
//! does the same and prints the time).

#[allow(dead_code)]
#[path = "../examples/sgemm_cuda.rs"]
mod sgemm_cuda;

use sgemm_cuda::{SgemmCudaParams, compile_each, configs, reference_device, sgemm_cuda_space};
use tunable::backend::cuda::nvrtc;

mod common;
use common::skip;

const ARCH: &str = "sm_90";

/// How many configurations the default sample spreads over the space.
const SAMPLE: usize = 40;

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

/// The sample: `SAMPLE` configurations at an even stride, then the corner cases.
fn sample(all: &[SgemmCudaParams]) -> Vec<SgemmCudaParams> {
    let stride = (all.len() / SAMPLE).max(1);
    let mut picked: Vec<SgemmCudaParams> = all.iter().step_by(stride).copied().collect();
    let mut corner = |f: &dyn Fn(&SgemmCudaParams) -> bool| {
        if let Some(p) = all.iter().find(|p| f(p))
            && !picked.contains(p)
        {
            picked.push(*p);
        }
    };
    corner(&|p| *p == SgemmCudaParams::default());
    corner(&|p| p.BM == 256 && p.BN == 256);
    corner(&|p| p.BM == 64 && p.BN == 64 && p.WM == 32 && p.WN == 32 && p.TM == 8);
    corner(&|p| p.BM == 256 && p.BN == 64);
    for stages in 1..=4 {
        for asynchronous in 0..=1 {
            corner(&|p| p.STAGES == stages && p.ASYNC == asynchronous);
        }
    }
    for split in [2, 4, 8] {
        corner(&|p| p.SPLITK == split && p.GROUP == 8);
    }
    corner(&|p| p.TM == 8 && p.TN == 8 && p.WTN == 8 && p.PAD == 0);
    corner(&|p| p.BK == 32 && p.STAGES == 4);
    picked
}

/// Compiles `list`, printing the failures with their logs, and checks none failed.
fn compile(list: &[SgemmCudaParams], of: usize) {
    let start = std::time::Instant::now();
    let (ok, failed) = compile_each(list, ARCH, threads());
    println!(
        "NVRTC ({ARCH}): {} of {} configurations compiled ({} valid on the reference device) in {:.1} s",
        ok.len(),
        list.len(),
        of,
        start.elapsed().as_secs_f64()
    );
    let logs: Vec<String> = failed.iter().map(|(p, e)| format!("{p:?}: {e}")).collect();
    assert!(
        failed.is_empty(),
        "{} variants failed:\n{}",
        failed.len(),
        logs.join("\n")
    );
}

#[test]
fn the_space_is_large_and_the_device_prunes_it() {
    let space = sgemm_cuda_space();
    let h100 = space.on_device(&reference_device("sm_90")).unwrap();
    let a100 = space.on_device(&reference_device("sm_80")).unwrap();
    println!(
        "sgemm_cuda: {} configurations without a device, {} on sm_90, {} on sm_80, of {} in the Cartesian product",
        space.len(),
        h100.len(),
        a100.len(),
        space.cartesian_size()
    );
    assert!(
        h100.len() >= 10_000,
        "{} configurations on sm_90",
        h100.len()
    );
    // Every configuration is consistent: threads, warps and tiles agree.
    for p in configs(space) {
        let threads = (p.BM / p.WM) * (p.BN / p.WN) * 32;
        assert!((64..=1024).contains(&threads), "{p:?}");
        assert_eq!(
            p.WM % ((32 / p.WTN) * p.TM) + p.WN % (p.WTN * p.TN),
            0,
            "{p:?}"
        );
        assert_eq!(
            (p.BM * p.BK / 4) % threads + (p.BK * p.BN / 4) % threads,
            0,
            "{p:?}"
        );
    }
    // sm_80 gives a block less shared memory than sm_90: the device constraint prunes.
    assert!(a100.len() < h100.len() && h100.len() <= space.len());
    let smem = |p: &SgemmCudaParams| p.STAGES * p.BK * (p.BM + p.PAD + p.BN) * 4;
    let a100_configs = configs(&a100);
    assert!(a100_configs.iter().all(|p| smem(p) <= 163 * 1024));
    assert!(configs(&h100).iter().any(|p| smem(p) > 163 * 1024));
    // Without cp.async's architecture, no configuration uses it.
    let sm75 = space.on_device(&reference_device("sm_75")).unwrap();
    assert!(configs(&sm75).iter().all(|p| p.ASYNC == 0));
    // The non-square shapes: some configurations divide them (and the default does).
    for (m, n, k) in [(4096, 128, 4096), (128, 4096, 8192)] {
        let fits =
            |p: &SgemmCudaParams| m % p.BM == 0 && n % p.BN == 0 && k % (p.BK * p.SPLITK) == 0;
        assert!(fits(&SgemmCudaParams::default()));
        assert!(configs(&h100).iter().filter(|p| fits(p)).count() > 1000);
    }
}

/// Every configuration valid on the reference device of [`ARCH`].
fn on_reference_device() -> Vec<SgemmCudaParams> {
    configs(
        &sgemm_cuda_space()
            .on_device(&reference_device(ARCH))
            .unwrap(),
    )
}

#[test]
fn nvrtc_compiles_a_sample_of_the_space() {
    if !nvrtc_found() {
        return;
    }
    let all = on_reference_device();
    if std::env::var("TUNABLE_NVRTC_ALL").is_ok_and(|v| v == "1") {
        compile(&all, all.len());
    } else {
        compile(&sample(&all), all.len());
    }
}

#[test]
#[ignore = "compiles every configuration: long on two cores"]
fn nvrtc_compiles_every_configuration() {
    if nvrtc_found() {
        let all = on_reference_device();
        compile(&all, all.len());
    }
}
