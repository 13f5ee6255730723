//! A tiled matrix product in WGSL (`matmul_wgpu.wgsl`) tuned on the wgpu device through three
//! `override` constants: the output tile of a workgroup (which also sizes its workgroup-memory
//! arrays) and the workgroup's two dimensions.
//!
//! ```text
//! cargo run --release --example matmul_wgpu --features wgpu,autotune   # tune, report
//! cargo run --release --example matmul_wgpu --features wgpu            # shipped: baked values
//! cargo run --release --example matmul_wgpu --features wgpu -- --first-call
//! ```
//!
//! As `vector_add_wgpu`: the first call tunes (with `--features autotune`) on its own device
//! buffers, verifying each variant against the default's output, and stores the winner per
//! device; a plain build creates the pipeline with the baked values. `tile = 64` needs 32 KiB of
//! workgroup memory: on a device with less (WebGPU's default limit is 16 KiB) those variants
//! are recorded as failed configurations. `--n N` sets the size (a multiple of 64; default 256).
//! On lavapipe (a CPU) the variants differ little; on a GPU the tile and workgroup shape matter.

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, cpu_matmul, matrices, max_error, or_exit};
use tunable::backend::wgpu::{Buffer, Wgpu, WgpuError};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, speedup};
use tunable::tunable;

static MATMUL: Source = Source::new("matmul", include_str!("matmul_wgpu.wgsl"));

#[tunable(
    tile = [16, 32, 64],
    block_size_x = [4, 8, 16],
    block_size_y = [4, 8, 16],
    // Each invocation accumulates (tile / block_size_y) x (tile / block_size_x) outputs, in an
    // array of MAX_OUTPUTS = 64.
    constraint = "tile % block_size_x == 0 and tile % block_size_y == 0",
    constraint = "(tile / block_size_x) * (tile / block_size_y) <= 64",
    device = gpu.device_id(),
    key = tunable::key::next_power_of_two(n as u64),
    verify = c,
    tolerance = 1e-4,
    budget = 24,
    repeats = 5,
    warmup = 1,
    default = (tile = 16, block_size_x = 16, block_size_y = 16),
)]
/// `c = a * b` for row-major `n x n` matrices on the device; `n` is a multiple of 64.
pub fn matmul_wgpu(
    gpu: &Wgpu,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    n: usize,
) -> Result<(), WgpuError> {
    let dims = Dims::divide([n, n], [block_size_x, block_size_y], [tile, tile]);
    gpu.kernel(&MATMUL, params)?
        .launch(dims)
        .arg(a)
        .arg(b)
        .arg(c)
        .arg(&(n as u32))
        .run()
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 256);
    if n == 0 || !n.is_multiple_of(64) {
        support::exit("--n must be a positive multiple of 64");
    }
    let gpu = or_exit("matmul_wgpu", Wgpu::new());
    println!("device: {}", gpu.device_id());
    let (ha, hb) = matrices(n);
    let (a, b) = (
        gpu.upload(&ha).expect("upload"),
        gpu.upload(&hb).expect("upload"),
    );
    let mut c = gpu.alloc::<f32>(n * n).expect("alloc");

    let start = Instant::now();
    matmul_wgpu(&gpu, &a, &b, &mut c, n).expect("the tuned configuration runs");
    let first_call = start.elapsed().as_secs_f64();
    let got = c.read().expect("read back");
    let ran = matmul_wgpu_config(&gpu, &a, &b, &mut c, n).params;
    let how = if cfg!(feature = "autotune") {
        "tuning, with --features autotune".to_owned()
    } else {
        let kernel = gpu.kernel(&MATMUL, &ran).expect("built by the first call");
        format!(
            "shipped, workgroup {:?}, {} bytes of workgroup memory, embedded pipeline cache {}",
            kernel.workgroup_size(),
            kernel.workgroup_storage(),
            if kernel.cache_used() {
                "used"
            } else {
                "not used"
            }
        )
    };
    println!("  first call: {:.1} ms ({how}); {ran:?}", first_call * 1e3);
    let worst = max_error(&got, &cpu_matmul(&ha, &hb, n));
    assert!(worst <= 1e-4, "wrong result: relative error {worst}");
    if args.has("--first-call") {
        println!("  result matches the CPU reference (max relative error {worst:.1e})");
        return;
    }
    let space = matmul_wgpu_space();
    let default = MatmulWgpuParams::default();
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same pipeline cache, same rounds, same
    // statistic.
    let s = speedup(&default, &ran, ROUNDS, |p| {
        matmul_wgpu_with(p, &gpu, &a, &b, &mut c, n)
    })
    .expect("both configurations run");
    let gflops = |ms: f64| 2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e9;
    println!(
        "matmul_wgpu n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    println!(
        "  default {default:?}: {:.3} ms ({:.2} GFLOP/s)",
        s.default.ms,
        gflops(s.default.ms)
    );
    println!(
        "  tuned {ran:?}: {:.3} ms ({:.2} GFLOP/s), speedup {:.2}x over the default",
        s.tuned.ms,
        gflops(s.tuned.ms),
        s.ratio()
    );
    println!("  ({METHOD}; {ROUNDS} rounds, {})", gpu.clock());
    println!("  result matches the CPU reference (max relative error {worst:.1e})");
}
