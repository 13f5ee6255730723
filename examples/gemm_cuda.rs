//! A tiled CUDA SGEMM (`gemm_cuda.cu`) with tunable block sizes, tiling, vector width and
//! shared-memory staging, tuned on the GPU.
//!
//! ```text
//! cargo run --release --example gemm_cuda --features cuda,autotune                  # tune, report
//! cargo run --release --example gemm_cuda --features cuda,autotune -- --exhaustive  # and time every configuration
//! cargo run --release --example gemm_cuda --features cuda -- --ptx sm_80            # compile every variant with NVRTC only
//! cargo run --release --example gemm_cuda --features cuda -- --ptx sm_80 --alone    # the same, one program per variant
//! cargo run --release --example gemm_cuda --features cuda -- --first-call           # shipped: the first call only
//! cargo run --release --example gemm_cuda --features cuda -- --pool sm_90           # the prebuild pool, no GPU
//! cargo run --release --example gemm_cuda --features cuda,autotune -- --energy      # and their energy (NVML)
//! ```
//!
//! On a GPU the first call of `gemm_cuda` tunes it (NVRTC per configuration, CUDA-event timing,
//! output checked against the default configuration's) and stores the winner in
//! `tuned/gemm_cuda.bin`, with its PTX and CUBIN in `tuned/gemm_cuda.artifacts/`, which a plain
//! build embeds and loads without NVRTC. Without a driver or GPU the program says which library or device is
//! missing and what it falls back to, then compiles every variant of the space with NVRTC (no
//! GPU needed) and reports how many produce PTX and why the others fail; `--ptx ARCH` does only
//! that, for the architecture given (default `sm_80`), eight configurations to an NVRTC program
//! (`compile_many`; `--alone`: one each). `--n N` sets the matrix size (a multiple
//! of 256; default 1024). `--pool ARCH` times how long a tuning waits for NVRTC on this
//! machine's compile pool, the GPU's measurements replaced by a wait (see `gemm_cuda/pool.rs`).
//!
//! The tuned call is the program's first, as in a shipped program: its wall time, the
//! configuration it ran, where that came from (tuned, baked, portable set, default), whether its
//! module was embedded or compiled and whether NVRTC got loaded are printed first;
//! `--first-call` stops after timing it. Then the default configuration and the tuned one are
//! timed alike, interleaved (`tunable::compare`), for the speedup. `--json FILE` writes the same
//! figures as one JSON object (what `scripts/gpu-check` collects); `--require-gpu` exits with
//! status 2 where there is no GPU, instead of falling back. `--energy` then measures the energy
//! and mean power of the default and the tuned configuration with NVML, each run repeated for a
//! second while the meter reads, beside their times, with the counter's resolution and each
//! reading's uncertainty; it only reads (no clock or power limit is changed). Where NVML cannot
//! read, it says why.

#![allow(unsafe_code)]

#[path = "gemm_cuda/pool.rs"]
mod pool;
#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, json_number, json_string, matrices};
use tunable::backend::cuda::{Buffer, Cuda, CudaError, PER_PROGRAM, compile_many};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, side_by_side, speedup};
use tunable::{Params, meter, tunable};

/// The kernel source (entry point `gemm`).
pub static GEMM: Source = Source::new("gemm", include_str!("gemm_cuda.cu"));

#[tunable(
    block_size_x = [16, 32, 64],
    block_size_y = [4, 8, 16, 32],
    tile_size_x = [1, 2, 4, 8],
    tile_size_y = [1, 2, 4, 8],
    KB = [16, 32],
    VW = [1, 2, 4],
    use_shared = [0, 1],
    constraint = "tile_size_x % VW == 0",
    // Threads per block: at least two warps, at most CUDA's 1024.
    constraint = "64 <= block_size_x * block_size_y <= 1024",
    // The staged tiles fit in the 48 KiB of static shared memory a block may declare.
    constraint = "use_shared == 0 or KB * (block_size_y * tile_size_y + block_size_x * tile_size_x) * 4 <= 48 * 1024",
    device = gpu.device_id(),
    key = tunable::key::next_power_of_two(n as u64),
    verify = c,
    tolerance = 1e-3,
    budget = 100,
    repeats = 5,
    default = (block_size_x = 16, block_size_y = 16, tile_size_x = 1, tile_size_y = 1, KB = 16, VW = 1, use_shared = 0),
)]
/// `c = a * b` for row-major `n x n` matrices on the GPU; `n` is a multiple of 256.
pub fn gemm_cuda(
    gpu: &Cuda,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    n: usize,
) -> Result<(), CudaError> {
    // Kernel Tuner's convention: the block is (block_size_x, block_size_y); the grid divides the
    // problem by the tile a block computes.
    let dims = Dims::divide(
        [n, n],
        [block_size_x, block_size_y],
        [block_size_x * tile_size_x, block_size_y * tile_size_y],
    );
    let n = n as i32;
    // SAFETY: gemm(int n, const float*, const float*, float*); n is a multiple of every block
    // tile, so the kernel reads and writes only inside the n x n buffers.
    unsafe {
        gpu.kernel(&GEMM, params)?
            .launch(dims)
            .arg(&n)
            .arg(a)
            .arg(b)
            .arg(c)
            .run()
    }
}

/// Compiles every configuration of the space with NVRTC for `arch` on `threads` threads (see
/// [`compile_each`]): the configurations that produced PTX, and those that failed with their
/// error.
pub fn compile_all(
    arch: &str,
    threads: usize,
    alone: bool,
) -> (Vec<GemmCudaParams>, Vec<(GemmCudaParams, CudaError)>) {
    let space = gemm_cuda_space();
    let configs: Vec<GemmCudaParams> = (0..space.len())
        .map(|pos| GemmCudaParams::from_values(&space.values(pos)).expect("fits"))
        .collect();
    compile_each(&configs, arch, threads, alone)
}

/// Compiles each of `configs` with NVRTC for `arch` on `threads` threads, each taking the next
/// [`PER_PROGRAM`] configurations in turn and compiling them in one program (`compile_many`), or one
/// at a time with `alone`.
pub fn compile_each(
    configs: &[GemmCudaParams],
    arch: &str,
    threads: usize,
    alone: bool,
) -> (Vec<GemmCudaParams>, Vec<(GemmCudaParams, CudaError)>) {
    let group = if alone { 1 } else { PER_PROGRAM };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(GemmCudaParams, Result<(), CudaError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let start = next.fetch_add(group, std::sync::atomic::Ordering::Relaxed);
                        let Some(part) = configs.get(start..(start + group).min(configs.len()))
                        else {
                            break;
                        };
                        if part.is_empty() {
                            break;
                        }
                        let built = compile_many(&GEMM, part, arch);
                        done.extend(
                            part.iter()
                                .copied()
                                .zip(built.into_iter().map(|r| r.map(drop))),
                        );
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("compile thread"))
            .collect()
    });
    let (mut ok, mut failed) = (Vec::new(), Vec::new());
    for (p, r) in results {
        match r {
            Ok(()) => ok.push(p),
            Err(e) => failed.push((p, e)),
        }
    }
    (ok, failed)
}

fn ptx_report(arch: &str, alone: bool) {
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (ok, failed) = compile_all(arch, threads, alone);
    println!(
        "NVRTC ({arch}): {} of {} configurations compiled to PTX in {:.1} s, {} failed",
        ok.len(),
        ok.len() + failed.len(),
        start.elapsed().as_secs_f64(),
        failed.len()
    );
    if let Some(cache) = tunable::backend::cuda::build_cache() {
        println!(
            "  {} loaded from the build cache in {}, {} compiled and kept there",
            cache.loaded,
            cache.folder.display(),
            cache.stored
        );
    }
    for (p, e) in failed.iter().take(10) {
        println!("  {p:?}: {e}");
    }
}

/// The time of `call` in milliseconds, as [`speedup`] times each configuration
/// (`tunable::compare`: one untimed run, then [`ROUNDS`] timed runs, CUDA events, robust
/// median).
fn time_ms(call: &mut dyn FnMut() -> Result<(), CudaError>) -> Result<f64, String> {
    let t = side_by_side(&[()], ROUNDS, |()| call()).remove(0);
    t.map(|t| t.ms)
}

/// `--energy`: NVML's energy per run and mean power of `configs` (the default, then the tuned
/// one), each run repeated for [`meter::MIN_DURATION`] while the meter reads, beside the time
/// of its runs; read-only. Into `report` as `energy_*` fields, `default_*` and `tuned_*`.
fn energy(
    configs: &[GemmCudaParams; 2],
    run: &mut dyn FnMut(&GemmCudaParams) -> Result<(), CudaError>,
    report: &mut Report,
) {
    let meter = match meter::for_cuda_device(0) {
        Ok(m) => m,
        Err(why) => {
            println!("  energy: {why}");
            report.text("energy_error", &why.to_string());
            return;
        }
    };
    let r = meter.resolution();
    println!(
        "  energy: {}; quantum {} J, updates about every {:?}, accuracy {}",
        meter.name(),
        r.quantum,
        r.update,
        r.accuracy
            .map_or("none stated".to_owned(), |a| format!("±{:.0}%", a * 100.0))
    );
    report.text("energy_meter", &meter.name());
    report.number("energy_quantum_j", r.quantum);
    report.number("energy_update_ms", r.update.as_secs_f64() * 1e3);
    report.number("energy_accuracy", r.accuracy.unwrap_or(f64::NAN));
    let fields = [
        [
            "default_ms_metered",
            "default_energy_j",
            "default_energy_uncertainty_j",
            "default_power_w",
            "default_energy_runs",
            "default_core_mhz",
        ],
        [
            "tuned_ms_metered",
            "tuned_energy_j",
            "tuned_energy_uncertainty_j",
            "tuned_power_w",
            "tuned_energy_runs",
            "tuned_core_mhz",
        ],
    ];
    for (p, names) in configs.iter().zip(fields) {
        // Each run timed as the tuner times it (CUDA events), so the time is the kernel's.
        let mut times = Vec::new();
        let measured = meter::measure(&meter, meter::MIN_DURATION, &mut || {
            let ms = tunable::measure::time_once(&mut || run(p).map_err(|e| e.to_string()))?;
            times.push(ms);
            Ok(())
        });
        let label = if names[0].starts_with("default") {
            "default"
        } else {
            "tuned"
        };
        match measured {
            Ok(e) => {
                let ms = tunable::measure::robust_median(&mut times);
                let clocks = e.clocks.map_or(String::new(), |c| {
                    format!(
                        ", clocks {} MHz graphics, {} MHz memory",
                        c.graphics_mhz, c.memory_mhz
                    )
                });
                println!(
                    "  {label}: {ms:.3} ms, {:.4} J per run (± {:.4} J), {:.1} W over {} runs in {:.2} s{clocks}",
                    e.per_run,
                    e.uncertainty,
                    e.power,
                    e.runs,
                    e.time.as_secs_f64()
                );
                report.number(names[0], ms);
                report.number(names[1], e.per_run);
                report.number(names[2], e.uncertainty);
                report.number(names[3], e.power);
                report.number(names[4], f64::from(e.runs));
                report.number(
                    names[5],
                    e.clocks.map_or(f64::NAN, |c| f64::from(c.graphics_mhz)),
                );
            }
            Err(why) => {
                println!("  {label}: energy not measured: {why}");
                report.text("energy_error", &format!("{label}: {why}"));
            }
        }
    }
}

/// Whether this process has NVRTC loaded (a shipped binary whose configurations are all
/// embedded never loads it).
fn nvrtc_loaded() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains("libnvrtc"))
}

/// What one run measured, written as one JSON object by `--json FILE` (for `scripts/gpu-check`).
#[derive(Default)]
struct Report {
    fields: Vec<(&'static str, String)>,
}

impl Report {
    fn text(&mut self, name: &'static str, value: &str) {
        self.fields.push((name, json_string(value)));
    }

    fn number(&mut self, name: &'static str, value: f64) {
        self.fields.push((name, json_number(value)));
    }

    fn flag(&mut self, name: &'static str, value: bool) {
        self.fields.push((name, value.to_string()));
    }

    fn write(&self, path: Option<&String>) {
        let Some(path) = path else { return };
        let body: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        std::fs::write(path, format!("{{{}}}\n", body.join(", "))).expect("write --json file");
    }
}

fn main() {
    let args = Args::from_env();
    let value = |flag: &str| args.optional(flag).map(str::to_owned);
    if args.has("--ptx") {
        let alone = args.has("--alone");
        ptx_report(&value("--ptx").unwrap_or_else(|| "sm_80".into()), alone);
        return;
    }
    if args.has("--pool") {
        pool::report(&value("--pool").unwrap_or_else(|| "sm_80".into()), &args);
        return;
    }
    let json = value("--json");
    let mut report = Report::default();
    report.flag("autotune", cfg!(feature = "autotune"));
    let n = value("--n")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024usize);
    assert!(
        n % 256 == 0 && n > 0,
        "--n must be a positive multiple of 256"
    );
    report.number("n", n as f64);
    let gpu = match Cuda::new(0) {
        Ok(g) => g,
        Err(e) => {
            println!("gemm_cuda: {e}");
            report.text("error", &e.to_string());
            report.write(json.as_ref());
            if args.has("--require-gpu") {
                std::process::exit(2);
            }
            println!(
                "  nothing can run here; a program using gemm_cuda falls back to its baked or default configuration: {:?}",
                GemmCudaParams::default()
            );
            match tunable::backend::cuda::nvrtc() {
                Ok(found) => {
                    println!("  {found}");
                    ptx_report("sm_80", false)
                }
                Err(e) => println!("  {e}"),
            }
            return;
        }
    };
    println!("device: {}", gpu.device_id());
    report.text("device", gpu.device_id());
    let (ha, hb) = matrices(n);
    let (a, b) = (
        gpu.upload(&ha).expect("upload"),
        gpu.upload(&hb).expect("upload"),
    );
    let mut c = gpu.alloc::<f32>(n * n).expect("alloc");

    // The tuned call, first of all (as in a shipped program): with `--features autotune` it
    // tunes (on these buffers); otherwise it runs the baked configuration, loaded from its
    // embedded CUBIN or PTX if there is one (without NVRTC), else compiled.
    let start = Instant::now();
    gemm_cuda(&gpu, &a, &b, &mut c, n).expect("the tuned call runs");
    let first_call = start.elapsed().as_secs_f64();
    let loaded_after_first_call = nvrtc_loaded();
    let choice = gemm_cuda_config(&gpu, &a, &b, &mut c, n);
    let ran = choice.params;
    let provenance = gpu
        .kernel(&GEMM, &ran)
        .map(|k| k.provenance().to_string())
        .unwrap_or_else(|e| format!("not loaded: {e}"));
    let got = c.read().expect("read back");
    let worst = (0..n)
        .step_by(n / 16)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let s: f32 = (0..n).map(|k| ha[i * n + k] * hb[k * n + j]).sum();
            (got[i * n + j] - s).abs() / s.abs().max(1.0)
        })
        .fold(0.0f32, f32::max);
    println!(
        "  first call: {:.1} ms ({}, {:?}, {provenance}); {ran:?}; NVRTC loaded: {loaded_after_first_call}",
        first_call * 1e3,
        if cfg!(feature = "autotune") {
            "tuning, with --features autotune"
        } else {
            "shipped"
        },
        choice.origin,
    );
    report.number("first_call_ms", first_call * 1e3);
    report.text("origin", &format!("{:?}", choice.origin));
    report.text("provenance", &provenance);
    report.text("config", &format!("{ran:?}"));
    report.flag("nvrtc_loaded_by_first_call", loaded_after_first_call);
    report.number("max_relative_error", f64::from(worst));
    report.write(json.as_ref());
    assert!(worst <= 1e-3, "wrong result: relative error {worst}");
    println!("  result matches the CPU reference on 16 rows (max relative error {worst:.1e})");
    let t_tuned = time_ms(&mut || gemm_cuda(&gpu, &a, &b, &mut c, n)).expect("tuned runs");
    println!("  tuned call: {t_tuned:.3} ms");
    report.number("tuned_ms", t_tuned);
    report.write(json.as_ref());
    if args.has("--first-call") {
        return;
    }
    match tunable::backend::cuda::nvrtc() {
        Ok(found) => {
            println!("  compiling with {found}");
            report.text("nvrtc", &found.to_string());
        }
        Err(e) => println!("  {e}"),
    }
    let space = gemm_cuda_space();
    println!(
        "gemm_cuda n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    let default = GemmCudaParams::default();
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same module cache, same rounds, same
    // statistic.
    let mut run = |p: &GemmCudaParams| gemm_cuda_with(p, &gpu, &a, &b, &mut c, n);
    let s = speedup(&default, &ran, ROUNDS, &mut run).expect("both configurations run");
    println!("  default {default:?}: {:.3} ms", s.default.ms);
    println!(
        "  tuned {ran:?}: {:.3} ms, speedup {:.2}x over the default",
        s.tuned.ms,
        s.ratio()
    );
    println!("  ({METHOD}; {ROUNDS} rounds, CUDA events)");
    report.number("default_ms", s.default.ms);
    report.number("tuned_alike_ms", s.tuned.ms);
    report.number("speedup", s.ratio());
    report.write(json.as_ref());
    if args.has("--energy") {
        energy(&[default, ran], &mut run, &mut report);
        report.write(json.as_ref());
    }
    if args.has("--exhaustive") {
        let start = Instant::now();
        let (mut best, mut failed) = ((f64::INFINITY, default), 0);
        for pos in 0..space.len() {
            let p = GemmCudaParams::from_values(&space.values(pos)).expect("fits");
            match side_by_side(&[p], ROUNDS, &mut run).remove(0) {
                Ok(t) if t.ms < best.0 => best = (t.ms, p),
                Ok(_) => {}
                Err(_) => failed += 1,
            }
        }
        println!(
            "  exhaustive: best {:?}: {:.3} ms over {} configurations ({failed} failed) in {:.0} s; tuned / best = {:.3}",
            best.1,
            best.0,
            space.len(),
            start.elapsed().as_secs_f64(),
            s.tuned.ms / best.0
        );
    }
}
