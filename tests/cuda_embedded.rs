//! A CUDA crate end to end without a GPU, with real cargo builds of a temporary crate: tuning
//! (NVRTC available) stores the winner's PTX and CUBIN beside the tuned file; a plain build bakes
//! the entry and embeds its PTX; run with NVRTC hidden, the baked configuration's image is the
//! embedded PTX and NVRTC is never loaded, while a configuration without an embedded image
//! cannot compile (NVRTC really is out of reach). Loading the module needs a GPU; the kernel here
//! stops at choosing its image (`tunable::backend::cuda::image`), which is what a shipped
//! binary's first call does before `cuModuleLoadData`.
//!
//! Skips where NVRTC is missing (CI installs it and requires it). Shares the target folder of
//! `end_to_end.rs` (`target/e2e`).

use std::process::Command;
use tunable::backend::cuda::nvrtc;
use tunable::tuned::artifact::{Kind, Recipe, artifact_dir, read_dir};

mod common;
mod temp_crate;
use common::skip;
use temp_crate::{TempCrate, ok};

/// The kernel, scaling by its parameter.
const KERNEL: &str = r#"
extern "C" __global__ void scale(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= FACTOR;
}
"#;

/// The crate's `main.rs`; `KERNEL_TEXT` is replaced by [`KERNEL`] as a literal.
const MAIN: &str = r#"
use tunable::backend::Source;
use tunable::backend::cuda::image;
use tunable::tunable;

static SCALE: Source = Source::new("scale", KERNEL_TEXT);

#[tunable(FACTOR = [1, 2, 3], device = device, budget = 3, strategy = "exhaustive",
          repeats = 1, warmup = 0)]
fn pick(device: &str, arch: &str) -> String {
    match image(&SCALE, params, arch) {
        Ok(i) => format!("{} {} {} bytes", i.kind, i.provenance, i.bytes.len()),
        Err(e) => format!("error: {e}"),
    }
}

fn main() {
    let device = "cuda: test (sm_80)";
    let baked = pick_config(device, "sm_80").params;
    println!("baked FACTOR={} origin={:?}", baked.FACTOR, pick_config(device, "sm_80").origin);
    println!("image {}", pick(device, "sm_80"));
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    println!("nvrtc loaded: {}", maps.contains("libnvrtc"));
    let other = PickParams { FACTOR: if baked.FACTOR == 1 { 2 } else { 1 } };
    println!("other {}", pick_with(&other, device, "sm_80"));
}
"#;

#[test]
fn a_shipped_cuda_crate_runs_its_embedded_ptx_without_nvrtc() {
    if let Err(e) = nvrtc() {
        skip("nvrtc", e);
        return;
    }
    let main = MAIN.replace("KERNEL_TEXT", &format!("{KERNEL:?}"));
    let krate = TempCrate::with_features("cudaship", &main, &["cuda"]);
    let (dir, exe) = (krate.dir.clone(), krate.binary());

    // 1. Tune with NVRTC: every configuration compiles; the winner's images are stored.
    krate.build(true, &[]);
    let out = ok(Command::new(&exe).current_dir(&dir));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("image CUBIN compiled"), "{text}");
    let stored = read_dir(&artifact_dir(&dir.join("tuned"), "pick").unwrap()).unwrap();
    let kinds: Vec<Kind> = stored
        .iter()
        .map(|(_, a)| a.as_ref().unwrap().recipe.kind)
        .collect();
    assert_eq!(kinds.len(), 2, "{stored:?}");
    assert!(kinds.contains(&Kind::Ptx) && kinds.contains(&Kind::Cubin));
    let (ptx_path, ptx) = stored
        .iter()
        .find(|(_, a)| a.as_ref().unwrap().recipe.kind == Kind::Ptx)
        .map(|(p, a)| (p.clone(), a.clone().unwrap()))
        .unwrap();
    let factor = match &ptx.owner.params[..] {
        [(name, v)] if name == "FACTOR" => tunable::Value::from(v).to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(ptx.owner.device, "cuda: test (sm_80)");
    assert_eq!(ptx.recipe.target, "sm_80");
    assert_eq!(ptx.recipe.definitions, [format!("-DFACTOR={factor}")]);
    assert_eq!(ptx.recipe.source_hash, Recipe::source_hash(KERNEL));
    assert_eq!(
        ptx_path.file_name().unwrap().to_string_lossy(),
        ptx.recipe.file_name()
    );
    assert!(String::from_utf8_lossy(&ptx.bytes).contains(".entry scale("));

    // 2. Keep the PTX alone, build plain, and run with NVRTC hidden.
    for (p, a) in &stored {
        if a.as_ref().unwrap().recipe.kind == Kind::Cubin {
            std::fs::remove_file(p).unwrap();
        }
    }
    krate.build(false, &[]);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = ok(Command::new(&exe)
        .current_dir(&dir)
        .env("PATH", &empty)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("TUNABLE_NVRTC")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("baked FACTOR={factor} origin=Baked")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "image PTX embedded binary {} bytes",
            ptx.bytes.len()
        )),
        "{text}"
    );
    assert!(text.contains("nvrtc loaded: false"), "{text}");
    assert!(
        text.contains(
            "other error: CUDA is not available: cannot load libnvrtc.so.13 or libnvrtc.so.12"
        ),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
