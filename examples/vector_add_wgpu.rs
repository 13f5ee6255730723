//! A bandwidth-bound WGSL kernel (`vector_add_wgpu.wgsl`, `c = a + b`) tuned on the wgpu device
//! through its two `override` constants: the workgroup size and the elements per invocation.
//!
//! ```text
//! cargo run --release --example vector_add_wgpu --features wgpu,autotune   # tune, report
//! cargo run --release --example vector_add_wgpu --features wgpu            # shipped: baked values
//! cargo run --release --example vector_add_wgpu --features wgpu -- --first-call
//! ```
//!
//! The first call of `vector_add_wgpu` for a size bucket tunes it on its own device buffers,
//! timing each variant with timestamp queries and checking its output against the default
//! configuration's (`verify = c`); the winner is stored in `tuned/vector_add_wgpu.bin` per
//! device and key (and, where the driver has pipeline caches, the winner's cache blob in
//! `tuned/vector_add_wgpu.artifacts/`). A plain build creates its pipeline with the baked
//! override values, without tuning: its first call prints the configuration it ran and whether
//! an embedded pipeline cache was given to the driver. The program then prints the default
//! configuration's time, the tuned one's and the speedup, and checks the result on the CPU.
//! `--n N` sets the length (default 4,194,304). On a machine without a GPU, lavapipe
//! (`apt-get install mesa-vulkan-drivers`) runs the kernels on the CPU.
//!
//! Small workgroups with one element each need more than the 65,535 workgroups a dimension may
//! have at the default length: those variants are recorded as failed configurations.

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, or_exit};
use tunable::backend::wgpu::{Buffer, Wgpu, WgpuError};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, speedup};
use tunable::tunable;

static VECTOR_ADD: Source = Source::new("vector_add", include_str!("vector_add_wgpu.wgsl"));

#[tunable(
    block_size_x = [32, 64, 128, 256, 512, 1024],
    per_thread = [1, 2, 4, 8],
    device = gpu.device_id(),
    key = tunable::key::next_power_of_two(n as u64),
    verify = c,
    tolerance = 0.0,
    strategy = "exhaustive",
    budget = 24,
    repeats = 7,
    warmup = 2,
    default = (block_size_x = 256, per_thread = 1),
)]
/// `c = a + b` on the device for buffers of `n` elements.
pub fn vector_add_wgpu(
    gpu: &Wgpu,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    n: usize,
) -> Result<(), WgpuError> {
    let dims = Dims::divide(n, block_size_x, block_size_x * per_thread);
    gpu.kernel(&VECTOR_ADD, params)?
        .launch(dims)
        .arg(a)
        .arg(b)
        .arg(c)
        .run()
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 1 << 22);
    let gpu = or_exit("vector_add_wgpu", Wgpu::new());
    println!("device: {}", gpu.device_id());
    let ha: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let hb: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let a = gpu.upload(&ha).expect("upload");
    let b = gpu.upload(&hb).expect("upload");
    let mut c = gpu.alloc::<f32>(n).expect("alloc");

    // The tuned call, first of all (as in a shipped program): with `--features autotune` it
    // tunes (on these buffers); otherwise it runs the baked configuration, or the default if
    // nothing was tuned for this device yet.
    let start = Instant::now();
    vector_add_wgpu(&gpu, &a, &b, &mut c, n).expect("the tuned configuration runs");
    let first_call = start.elapsed().as_secs_f64();
    let got = c.read().expect("read back");
    let ran = vector_add_wgpu_config(&gpu, &a, &b, &mut c, n).params;
    let how = if cfg!(feature = "autotune") {
        "tuning, with --features autotune".to_owned()
    } else {
        let kernel = gpu
            .kernel(&VECTOR_ADD, &ran)
            .expect("built by the first call");
        format!(
            "shipped, workgroup {:?}, embedded pipeline cache {}",
            kernel.workgroup_size(),
            if kernel.cache_used() {
                "used"
            } else {
                "not used"
            }
        )
    };
    println!("  first call: {:.1} ms ({how}); {ran:?}", first_call * 1e3);
    let wrong = got
        .iter()
        .zip(ha.iter().zip(&hb))
        .filter(|(c, (a, b))| **c != **a + **b)
        .count();
    assert_eq!(wrong, 0, "wrong result: {wrong} of {n} elements differ");
    if args.has("--first-call") {
        println!("  result matches the CPU");
        return;
    }

    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same pipeline cache, same rounds, same
    // statistic.
    let default = VectorAddWgpuParams::default();
    let s = speedup(&default, &ran, ROUNDS, |p| {
        vector_add_wgpu_with(p, &gpu, &a, &b, &mut c, n)
    })
    .expect("both configurations run");
    let gbs = |ms: f64| 3.0 * 4.0 * n as f64 / (ms * 1e-3) / 1e9;
    println!("vector_add_wgpu n = {n}:");
    println!(
        "  default {default:?}: {:.3} ms ({:.1} GB/s)",
        s.default.ms,
        gbs(s.default.ms)
    );
    println!(
        "  tuned {ran:?}: {:.3} ms ({:.1} GB/s), speedup {:.2}x over the default",
        s.tuned.ms,
        gbs(s.tuned.ms),
        s.ratio()
    );
    println!("  ({METHOD}; {ROUNDS} rounds, {})", gpu.clock());
    println!("  result matches the CPU");
}
