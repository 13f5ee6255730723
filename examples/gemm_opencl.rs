//! A tiled OpenCL SGEMM (`gemm_opencl.cl`, CLBlast-style parameters) tuned on the OpenCL device.
//!
//! ```text
//! cargo run --release --example gemm_opencl --features opencl,autotune                  # tune, report
//! cargo run --release --example gemm_opencl --features opencl,autotune -- --exhaustive  # and time every configuration
//! cargo run --release --example gemm_opencl --features opencl                           # shipped: baked configuration
//! cargo run --release --example gemm_opencl --features opencl -- --first-call           # shipped: the first call only
//! ```
//!
//! The first call of `gemm_opencl` for a problem-size bucket tunes it on its own device buffers
//! (uploaded once), timing each variant with OpenCL profiling events and checking its output
//! against the default configuration's (`verify = c`); the winner is stored in
//! `tuned/gemm_opencl.bin` per device and key, and the winner's program binary for the device in
//! `tuned/gemm_opencl.artifacts/`. A plain build embeds that binary: its first call prints
//! `first call: X ms (embedded binary)` when the program was loaded from it, `(compiled)` when it
//! was compiled from the source (no binary, a stale one, or `TUNABLE_EMBEDDED=off`), with a
//! checksum of the result, which must not depend on the way; `--first-call` stops there.
//! The program then prints the default configuration's
//! time, the tuned one's (both timed alike and interleaved, `tunable::compare`), the speedup,
//! the evaluations the tuning used, and checks the result against a CPU reference. `--exhaustive` also times every configuration of the space, and
//! `--against 16,64,32,8,8,8,0,0` (values in declaration order) compares with one configuration;
//! either re-times the reference and the tuned configuration interleaved.
//! `--n N` sets the matrix size (a multiple of 64; default 256). On a machine without a GPU,
//! PoCL (`apt-get install pocl-opencl-icd`) runs the kernels on the CPU.

#![allow(unsafe_code)]

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, checksum, compare, cpu_matmul, matrices, max_error, or_exit, tuned_from};
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, speedup};
use tunable::{Params, tunable};

static GEMM: Source = Source::new("gemm", include_str!("gemm_opencl.cl"));

#[tunable(
    MWG = [16, 32, 64],
    NWG = [16, 32, 64],
    KWG = [16, 32],
    MDIMC = [4, 8, 16],
    NDIMC = [4, 8, 16],
    VWN = [1, 2, 4, 8],
    SA = [0, 1],
    SB = [0, 1],
    constraint = "MWG % MDIMC == 0 and NWG % (NDIMC * VWN) == 0",
    // Local memory a GPU work-group can count on (32 KiB), and at most 256 work-items.
    constraint = "(SA * KWG * MWG + SB * KWG * NWG) * 4 <= 32768",
    constraint = "MDIMC * NDIMC <= 256",
    device = cl.device_id(),
    key = tunable::key::next_power_of_two(n as u64),
    verify = c,
    tolerance = 1e-3,
    budget = 200,
    repeats = 15,
    warmup = 2,
    default = (MWG = 16, NWG = 16, KWG = 16, MDIMC = 16, NDIMC = 16, VWN = 1, SA = 0, SB = 0),
)]
/// `c = a * b` for row-major `n x n` matrices on the device; `n` is a multiple of 64.
pub fn gemm_opencl(
    cl: &OpenCl,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    n: usize,
) -> Result<(), OpenClError> {
    // Work-groups of NDIMC x MDIMC work-items, each covering an NWG x MWG tile of C.
    let dims = Dims::divide([n, n], [NDIMC, MDIMC], [NWG, MWG]);
    let n = n as i32;
    // SAFETY: gemm(int M, int N, int K, const float*, const float*, float*); with M = N = K = n
    // a multiple of every tile size, the kernel reads and writes only inside the n x n buffers.
    unsafe {
        cl.kernel(&GEMM, params)?
            .launch(dims)
            .arg(&n)
            .arg(&n)
            .arg(&n)
            .arg(a)
            .arg(b)
            .arg(c)
            .run()
    }
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 256);
    if n == 0 || !n.is_multiple_of(64) {
        support::exit("--n must be a positive multiple of 64");
    }
    let cl = or_exit("gemm_opencl", OpenCl::new());
    println!("device: {}", cl.device_id());
    let (ha, hb) = matrices(n);
    let upload = |h: &[f32]| cl.upload(h).expect("upload");
    let (a, b) = (upload(&ha), upload(&hb));
    let mut c = cl.alloc::<f32>(n * n).expect("alloc");

    // The tuned call, first of all (as in a shipped program): with `--features autotune` it
    // tunes (on these buffers); otherwise it runs the baked configuration, loaded from its
    // embedded binary if there is one, or the default if nothing was tuned yet.
    let start = Instant::now();
    gemm_opencl(&cl, &a, &b, &mut c, n).expect("the tuned configuration runs");
    let first_call = start.elapsed().as_secs_f64();
    let got = c.read().expect("read back");
    let ran = gemm_opencl_config(&cl, &a, &b, &mut c, n).params;
    let how = if cfg!(feature = "autotune") {
        "tuning, with --features autotune".to_owned()
    } else {
        let kernel = cl.kernel(&GEMM, &ran).expect("built by the first call");
        kernel.provenance().to_string()
    };
    println!(
        "  first call: {:.1} ms ({how}); {ran:?}, result checksum {:016x}",
        first_call * 1e3,
        checksum(&got)
    );
    if args.has("--first-call") {
        return;
    }

    let space = gemm_opencl_space();
    println!(
        "gemm_opencl n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    let default = GemmOpenclParams::default();
    let worst = max_error(&got, &cpu_matmul(&ha, &hb, n));
    assert!(worst <= 1e-3, "wrong result: relative error {worst}");
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same program cache, same rounds, same
    // statistic.
    let mut run = |p: &GemmOpenclParams| gemm_opencl_with(p, &cl, &a, &b, &mut c, n);
    let s = speedup(&default, &ran, ROUNDS, &mut run).expect("both configurations run");
    let key = tunable::key::next_power_of_two(n as u64);
    println!("  default {default:?}: {:.3} ms", s.default.ms);
    println!(
        "  tuned {}: {:.3} ms, speedup {:.2}x over the default ({})",
        ran.describe(),
        s.tuned.ms,
        s.ratio(),
        tuned_from("gemm_opencl", cl.device_id(), key)
    );
    println!("  ({METHOD}; {ROUNDS} rounds, OpenCL events)");
    println!("  result matches the CPU reference (max relative error {worst:.1e})");

    // `--exhaustive` or `--against`: the tuned configuration beside the best of a sweep or a
    // named one.
    compare(&args, space, ran, &mut run);
}
