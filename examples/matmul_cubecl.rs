//! A register-tiled matrix product written in CubeCL (`#[cube]`), tuned through `#[tunable]`:
//! the cube's two dimensions (`CubeDim`), the outputs each unit computes (two comptime
//! arguments, which size its accumulator array) and the unrolling of the inner loop (a third).
//! 1,740 valid configurations.
//!
//! ```text
//! cargo run --release --example matmul_cubecl --features cubecl,autotune   # tune, compare
//! cargo run --release --example matmul_cubecl --features cubecl            # shipped: baked values
//! cargo run --release --example matmul_cubecl --features cubecl -- --first-call
//! ```
//!
//! In one run, side by side: the default configuration (the textbook kernel, one output per
//! unit in 16 x 16 cubes); the configuration `#[tunable]` found (with `--features autotune`,
//! a search of `TUNABLE_BUDGET` evaluations, 60 by default, over the whole space); and the
//! fastest of ten hand-picked configurations tuned at run time by CubeCL's own tuner (a
//! `TunableSet` of ten `Tunable`s, the way a Burn author writes one), each with the time it
//! took to reach its answer. The three are then timed alike, interleaved (`compare::speedup`).
//! `--first-call` times only the first call (a shipped build: CubeCL compiles the baked
//! configuration's kernel there) and checks its result.
//!
//! `--n N` sets the matrices' size (a multiple of 8; default 256).

#[path = "support/mod.rs"]
mod support;

use cubecl::prelude::*;
use cubecl::tune::{LocalTuner, Tunable as CubeclTunable, TunableSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use support::{Args, cpu_matmul, matrices, max_error, or_exit};
use tunable::Origin;
use tunable::backend::cubecl::{Array as DeviceArray, CubeCl, CubeclError};
use tunable::compare::{METHOD, ROUNDS, side_by_side};
use tunable::tunable;

/// `c = a * b`, row-major, `a` is `m x k`, `b` is `k x n`, `k` a multiple of `unroll`. Each unit
/// computes a `wm x wn` block of `c`, accumulating in an array of registers; the loop over `k`
/// is unrolled `unroll` times.
#[cube(launch)]
fn matmul(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: u32,
    n: u32,
    k: u32,
    #[comptime] wm: usize,
    #[comptime] wn: usize,
    #[comptime] unroll: u32,
) {
    let row0 = (CUBE_POS_Y * CUBE_DIM_Y + UNIT_POS_Y) * wm as u32;
    let col0 = (CUBE_POS_X * CUBE_DIM_X + UNIT_POS_X) * wn as u32;
    let mut acc = Array::<f32>::new(wm * wn);
    #[unroll]
    for i in 0..wm * wn {
        acc[i] = 0.0;
    }
    for s in 0..k / unroll {
        #[unroll]
        for u in 0..unroll {
            let p = s * unroll + u;
            #[unroll]
            for i in 0..wm {
                let r = (row0 + i as u32).min(m - 1);
                let av = a[(r * k + p) as usize];
                #[unroll]
                for j in 0..wn {
                    let col = (col0 + j as u32).min(n - 1);
                    acc[i * wn + j] += av * b[(p * n + col) as usize];
                }
            }
        }
    }
    #[unroll]
    for i in 0..wm {
        let r = row0 + i as u32;
        #[unroll]
        for j in 0..wn {
            let col = col0 + j as u32;
            if r < m && col < n {
                c[(r * n + col) as usize] = acc[i * wn + j];
            }
        }
    }
}

/// The cube count that covers an `n x n` output with cubes of `bx x by` units of `wm x wn`
/// outputs each.
fn cubes(n: usize, bx: u32, by: u32, wm: u32, wn: u32) -> CubeCount {
    let n = n as u32;
    CubeCount::Static(n.div_ceil(bx * wn), n.div_ceil(by * wm), 1)
}

#[tunable(
    bx = [1, 2, 4, 8, 16, 32, 64],
    by = [1, 2, 4, 8, 16, 32, 64],
    wm = [1, 2, 4, 8],
    wn = [1, 2, 4, 8],
    unroll = [1, 2, 4, 8],
    constraint = "bx * by >= 16 and bx * by <= 256",
    constraint = "wm * wn <= 32",
    default = (bx = 16, by = 16, wm = 1, wn = 1, unroll = 1),
    device = gpu.device_id(),
    key = tunable::key::next_power_of_two(n as u64),
    verify = c,
    tolerance = 1e-4,
    budget = 60,
    repeats = 5,
    // Two: on lavapipe a kernel's first two launches run slower than the rest (the driver
    // compiles at the first dispatch; the second is still cold), and the early stop judges a
    // configuration by its last warm-up run.
    warmup = 2,
)]
/// `c = a * b` for row-major `n x n` matrices on the CubeCL device; `n` is a multiple of 8.
pub fn matmul_cubecl(
    gpu: &CubeCl,
    a: &DeviceArray<f32>,
    b: &DeviceArray<f32>,
    c: &mut DeviceArray<f32>,
    n: usize,
) -> Result<(), CubeclError> {
    let (bx, by, wm, wn, unroll) = (bx as u32, by as u32, wm as u32, wn as u32, unroll as u32);
    let (m, n32) = (n as u32, n as u32);
    gpu.launch(
        params,
        cubes(n, bx, by, wm, wn),
        CubeDim::new_2d(bx, by),
        |client, count, dim| {
            matmul::launch(
                client,
                count,
                dim,
                a.arg(),
                b.arg(),
                c.arg(),
                m,
                n32,
                n32,
                wm as usize,
                wn as usize,
                unroll,
            )
        },
    )
}

/// The ten configurations a CubeCL author would list by hand in a `TunableSet`: square and
/// oblong cubes of 64 to 256 units, one to sixteen outputs per unit, the loop unrolled four or
/// eight times.
const HAND_PICKED: [MatmulCubeclParams; 10] = {
    const fn p(bx: usize, by: usize, wm: usize, wn: usize, unroll: usize) -> MatmulCubeclParams {
        MatmulCubeclParams {
            bx,
            by,
            wm,
            wn,
            unroll,
        }
    }
    [
        p(16, 16, 1, 1, 4),
        p(16, 16, 2, 2, 4),
        p(16, 16, 4, 4, 4),
        p(8, 8, 2, 2, 4),
        p(8, 8, 4, 4, 4),
        p(16, 8, 4, 4, 4),
        p(32, 8, 1, 4, 4),
        p(8, 32, 4, 1, 4),
        p(32, 4, 2, 4, 4),
        p(16, 16, 4, 4, 8),
    ]
};

/// What CubeCL's tuner hands each candidate: the device arrays and the size.
#[derive(Clone)]
struct Inputs {
    a: Arc<DeviceArray<f32>>,
    b: Arc<DeviceArray<f32>>,
    c: Arc<DeviceArray<f32>>,
    n: usize,
}

/// The candidate CubeCL's tuner ran last (its answer is the one it runs on a cache hit).
static LAST: AtomicUsize = AtomicUsize::new(usize::MAX);

/// CubeCL's own tuner over [`HAND_PICKED`], as a Burn author writes it: a `TunableSet` keyed by
/// the size, one `Tunable` per configuration launching the kernel directly. Returns the
/// configuration it chose and the time its first call took (the tuning and one run).
fn cubecl_tunable_set(gpu: &CubeCl, inputs: &Inputs) -> (MatmulCubeclParams, f64) {
    static TUNER: LocalTuner<String, String> = LocalTuner::new("matmul_cubecl");
    let client = gpu.client().clone();
    let set = TUNER.init(&"matmul".to_owned(), move || {
        let mut set: TunableSet<String, Inputs, ()> =
            TunableSet::new_cloning_inputs(|i: &Inputs| format!("n={}", i.n.next_power_of_two()));
        for (index, p) in HAND_PICKED.into_iter().enumerate() {
            let client = client.clone();
            set = set.with(CubeclTunable::new(&format!("{p:?}"), move |i: Inputs| {
                LAST.store(index, Ordering::Relaxed);
                let n = i.n as u32;
                let [bx, by, wm, wn] = [p.bx, p.by, p.wm, p.wn].map(|v| v as u32);
                matmul::launch(
                    &client,
                    cubes(i.n, bx, by, wm, wn),
                    CubeDim::new_2d(bx, by),
                    i.a.arg(),
                    i.b.arg(),
                    i.c.arg(),
                    n,
                    n,
                    n,
                    p.wm,
                    p.wn,
                    p.unroll as u32,
                );
                Ok::<(), String>(())
            }));
        }
        set
    });
    let start = Instant::now();
    TUNER.execute(
        &"matmul".to_owned(),
        gpu.client(),
        set.clone(),
        inputs.clone(),
    );
    cubecl::future::block_on(gpu.client().sync()).expect("CubeCL's tuning ran");
    let took = start.elapsed().as_secs_f64();
    // A second call is a cache hit: it runs the fastest candidate.
    TUNER.execute(&"matmul".to_owned(), gpu.client(), set, inputs.clone());
    (HAND_PICKED[LAST.load(Ordering::Relaxed)], took)
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 256);
    if n == 0 || !n.is_multiple_of(8) {
        support::exit("--n must be a positive multiple of 8");
    }
    let gpu = or_exit("matmul_cubecl", CubeCl::new());
    println!("device: {}", gpu.device_id());
    let (ha, hb) = matrices(n);
    let (a, b) = (gpu.upload(&ha), gpu.upload(&hb));
    let mut c = gpu.zeros::<f32>(n * n);

    // The first call: a tuning with `--features autotune`; in a shipped build, the baked
    // configuration's launch, where CubeCL compiles its kernel.
    let start = Instant::now();
    matmul_cubecl(&gpu, &a, &b, &mut c, n).expect("the tuned configuration runs");
    let got = c.read().expect("read back");
    let first_call = start.elapsed().as_secs_f64();
    let config = matmul_cubecl_config(&gpu, &a, &b, &mut c, n);
    let tuned = config.params;
    let how = if cfg!(feature = "autotune") {
        "tuning, with --features autotune"
    } else {
        "shipped: the baked configuration, compiled by CubeCL at this launch"
    };
    println!(
        "  first call: {:.1} ms ({how}, {:?}); {tuned:?}",
        first_call * 1e3,
        config.origin
    );
    let worst = max_error(&got, &cpu_matmul(&ha, &hb, n));
    assert!(worst <= 1e-4, "wrong result: relative error {worst}");
    if args.has("--first-call") {
        println!("  result matches the CPU reference (max relative error {worst:.1e})");
        return;
    }

    // CubeCL's own tuner over ten hand-picked configurations, on arrays of its own.
    let inputs = Inputs {
        a: Arc::new(gpu.upload(&ha)),
        b: Arc::new(gpu.upload(&hb)),
        c: Arc::new(gpu.zeros(n * n)),
        n,
    };
    let (picked, picked_s) = cubecl_tunable_set(&gpu, &inputs);
    let picked_worst = max_error(
        &inputs.c.read().expect("read back"),
        &cpu_matmul(&ha, &hb, n),
    );
    assert!(
        picked_worst <= 1e-4,
        "CubeCL's pick is wrong: {picked_worst}"
    );

    let space = matmul_cubecl_space();
    let default = MatmulCubeclParams::default();
    let timed: Vec<f64> = side_by_side(&[default, tuned, picked], ROUNDS, |p| {
        matmul_cubecl_with(p, &gpu, &a, &b, &mut c, n)
    })
    .into_iter()
    .map(|t| t.expect("the three configurations run").ms)
    .collect();
    let gflops = |ms: f64| 2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e9;
    println!(
        "matmul_cubecl n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    println!(
        "  {:<32} {:>9} {:>9} {:>8} {:>16}",
        "", "ms", "GFLOP/s", "speedup", "time to answer"
    );
    let row = |name: &str, ms: f64, took: &str| {
        println!(
            "  {name:<32} {ms:>9.3} {:>9.2} {:>7.2}x {took:>16}",
            gflops(ms),
            timed[0] / ms
        )
    };
    row("default", timed[0], "-");
    let ours_took = if config.origin == Origin::Tuned {
        format!("{first_call:.1} s")
    } else {
        format!("{:?} (no search)", config.origin)
    };
    row("#[tunable], whole space", timed[1], &ours_took);
    row(
        "CubeCL TunableSet, 10 picked",
        timed[2],
        &format!("{picked_s:.1} s"),
    );
    println!("  #[tunable]: {tuned:?}");
    println!("  TunableSet: {picked:?}");
    println!("  ({METHOD}; {ROUNDS} rounds, {})", gpu.clock());
    println!("  result matches the CPU reference (max relative error {worst:.1e})");
}
