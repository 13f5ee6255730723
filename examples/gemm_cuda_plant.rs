//! Plants a tuned entry for `gemm_cuda` without a GPU, so that a plain (shipped) build of
//! `gemm_cuda` made on a machine without one bakes it and embeds its CUBIN and PTX, ready to run
//! on the GPU named. `scripts/gpu-check build` uses it: the lent GPU machine has no Rust
//! toolchain, so the shipped binary it runs must be built beforehand, from an entry chosen here
//! rather than tuned there. The entry says so (`strategy` is `planted`, its time is not a
//! measurement: 0).
//!
//! ```text
//! cargo run --release --example gemm_cuda_plant --features cuda -- DIR ARCH KEYS DEVICE...
//! cargo run --release --example gemm_cuda_plant --features cuda -- /tmp/tuned sm_90 2048,4096 \
//!     "cuda: NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)"
//! ```
//!
//! Writes `DIR/gemm_cuda.bin` with one entry per (device, key), all with [`PLANTED`], and that
//! configuration's CUBIN and PTX for `ARCH` (compiled with NVRTC here) in
//! `DIR/gemm_cuda.artifacts/`. Build with `TUNABLE_DIR=DIR` to bake them.

#[allow(dead_code)]
#[path = "gemm_cuda.rs"]
mod gemm_cuda;

use gemm_cuda::{GEMM, GemmCudaParams, gemm_cuda_space};
use tunable::Params;
use tunable::backend::cuda::compile;
use tunable::tuned::artifact::{Kind, Recipe};
use tunable_runtime::store::{StoredValue, TunedEntry, store_with_artifacts};

/// The configuration planted: 16 x 16 threads, each computing 4 x 4 outputs with float4 loads,
/// staging 16-deep tiles in shared memory (8 KiB). A reasonable SGEMM tile, not a tuned one.
pub const PLANTED: GemmCudaParams = GemmCudaParams {
    block_size_x: 16,
    block_size_y: 16,
    tile_size_x: 4,
    tile_size_y: 4,
    KB: 16,
    VW: 4,
    use_shared: 1,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, arch, keys, devices @ ..] = &args[..] else {
        eprintln!("usage: gemm_cuda_plant DIR ARCH KEY[,KEY...] DEVICE...");
        std::process::exit(2);
    };
    if devices.is_empty() {
        eprintln!("usage: gemm_cuda_plant DIR ARCH KEY[,KEY...] DEVICE...");
        std::process::exit(2);
    }
    let keys: Vec<u64> = keys
        .split(',')
        .map(|k| {
            k.trim()
                .parse()
                .expect("KEYS: whole numbers separated by commas")
        })
        .collect();
    let space = gemm_cuda_space();
    let values = PLANTED.to_values();
    assert!(
        space.position_of_values(&values).is_some(),
        "the planted configuration must be in the space"
    );
    let compiled = compile(&GEMM, &PLANTED, arch).unwrap_or_else(|e| {
        eprintln!("gemm_cuda_plant: {e}");
        std::process::exit(1);
    });
    let definitions = tunable::backend::definitions(&PLANTED).expect("integer values");
    let recipe = |kind| Recipe {
        kind,
        entry: GEMM.kernel.to_owned(),
        target: arch.clone(),
        source_hash: Recipe::source_hash(GEMM.code),
        options: GEMM.options.iter().map(|o| (*o).to_owned()).collect(),
        definitions: definitions.clone(),
    };
    let mut binaries = vec![(recipe(Kind::Ptx), compiled.ptx.into_bytes())];
    if let Some(cubin) = compiled.cubin {
        binaries.push((recipe(Kind::Cubin), cubin));
    }
    let file = std::path::Path::new(dir).join("gemm_cuda.bin");
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for device in devices {
        for &key in &keys {
            let entry = TunedEntry {
                sources: Vec::new(),
                binaries: Vec::new(),
                front: None,
                kernel: "gemm_cuda".into(),
                device: device.clone(),
                key,
                space_hash: space.fingerprint(),
                params: GemmCudaParams::NAMES
                    .iter()
                    .zip(&values)
                    .map(|(n, v)| ((*n).to_owned(), StoredValue::from(v)))
                    .collect(),
                time_ms: 0.0,
                evaluations: 0,
                strategy: "planted".into(),
                timestamp,
                top: Vec::new(),
            };
            store_with_artifacts(&file, entry, binaries.clone()).unwrap_or_else(|e| {
                eprintln!("gemm_cuda_plant: {e}");
                std::process::exit(1);
            });
            println!("planted {PLANTED:?} for {device:?}, key {key}");
        }
    }
    println!(
        "wrote {} with {} binaries for {arch}",
        file.display(),
        binaries.len()
    );
}
