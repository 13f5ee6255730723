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

use std::time::Instant;
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, side_by_side, speedup};
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
    let args: Vec<String> = std::env::args().collect();
    let n = args
        .iter()
        .skip_while(|a| *a != "--n")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(256usize);
    assert!(
        n % 64 == 0 && n > 0,
        "--n must be a positive multiple of 64"
    );
    let exhaustive = args.iter().any(|a| a == "--exhaustive");
    let cl = match OpenCl::new() {
        Ok(cl) => cl,
        Err(e) => {
            eprintln!("gemm_opencl: {e}");
            std::process::exit(1);
        }
    };
    println!("device: {}", cl.device_id());
    let ha: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7) % 13) as f32 / 6.0 - 1.0)
        .collect();
    let hb: Vec<f32> = (0..n * n)
        .map(|i| ((i * 5) % 11) as f32 / 5.0 - 1.0)
        .collect();
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
    if args.iter().any(|a| a == "--first-call") {
        return;
    }

    let space = gemm_opencl_space();
    println!(
        "gemm_opencl n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    let default = GemmOpenclParams::default();
    let reference = cpu_gemm(&ha, &hb, n);
    let worst = got
        .iter()
        .zip(&reference)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0f32, f32::max);
    assert!(worst <= 1e-3, "wrong result: relative error {worst}");
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same program cache, same rounds, same
    // statistic.
    let mut run = |p: &GemmOpenclParams| gemm_opencl_with(p, &cl, &a, &b, &mut c, n);
    let s = speedup(&default, &ran, ROUNDS, &mut run).expect("both configurations run");
    let t_tuned = s.tuned.ms;
    let stored = tunable::tuned::read(
        &tunable::tuned::tuned_file(
            &tunable::tuned::tuned_dir(env!("CARGO_MANIFEST_DIR")),
            "gemm_opencl",
        )
        .expect("a valid kernel name"),
    )
    .unwrap_or_default()
    .into_iter()
    .find(|e| e.device == cl.device_id() && e.key == tunable::key::next_power_of_two(n as u64));
    println!("  default {default:?}: {:.3} ms", s.default.ms);
    let tuned_from = stored.as_ref().map_or_else(
        || "nothing stored for this device".to_owned(),
        |e| format!("{} evaluations, {}", e.evaluations, e.strategy),
    );
    println!(
        "  tuned {}: {t_tuned:.3} ms, speedup {:.2}x over the default ({tuned_from})",
        ran.describe(),
        s.ratio()
    );
    println!("  ({METHOD}; {ROUNDS} rounds, OpenCL events)");
    println!("  result matches the CPU reference (max relative error {worst:.1e})");

    // The configuration to compare the tuned one with: the best of an exhaustive sweep, or one
    // named with `--against` (values in declaration order, e.g. the best of an earlier sweep).
    let against = args
        .iter()
        .skip_while(|a| *a != "--against")
        .nth(1)
        .map(|v| {
            let values: Vec<tunable::Value> = v
                .split(',')
                .map(|x| tunable::Value::Int(x.trim().parse().expect("--against: integers")))
                .collect();
            GemmOpenclParams::from_values(&values).expect("--against: one value per parameter")
        });
    let reference = if exhaustive {
        let start = Instant::now();
        let (mut best, mut failed) = ((f64::INFINITY, default), Vec::new());
        for pos in 0..space.len() {
            let p = GemmOpenclParams::from_values(&space.values(pos)).expect("fits");
            match side_by_side(&[p], ROUNDS, &mut run).remove(0) {
                Ok(t) if t.ms < best.0 => best = (t.ms, p),
                Ok(_) => {}
                Err(e) => failed.push(e),
            }
        }
        println!(
            "  exhaustive: best {:?}: {:.3} ms over {} configurations ({} failed) in {:.0} s",
            best.1,
            best.0,
            space.len(),
            failed.len(),
            start.elapsed().as_secs_f64(),
        );
        for e in failed.iter().take(5) {
            println!("    failed: {e}");
        }
        Some(best.1)
    } else {
        against
    };
    if let Some(best) = reference {
        // The sweep's minimum is biased low (the best of many noisy timings): time the sweep's
        // winner and the tuned configuration again, interleaved, and compare those.
        let t = side_by_side(&[best, ran], ROUNDS, &mut run);
        let [Ok(t_best), Ok(t_tuned)] = [&t[0], &t[1]] else {
            panic!("the reference or the tuned configuration failed: {t:?}");
        };
        println!(
            "  re-timed, interleaved: reference {best:?} {:.3} ms, tuned {:.3} ms; tuned / best = {:.3}",
            t_best.ms,
            t_tuned.ms,
            t_tuned.ms / t_best.ms
        );
    }
}

/// FNV-1a of the result's bits: equal checksums, identical results.
fn checksum(c: &[f32]) -> u64 {
    c.iter()
        .flat_map(|x| x.to_bits().to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

fn cpu_gemm(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            for j in 0..n {
                c[i * n + j] += aik * b[k * n + j];
            }
        }
    }
    c
}
