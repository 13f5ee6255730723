//! A warp-tiled CUDA SGEMM (`sgemm_cuda.cu`) whose space reaches for the vendor library:
//! block, warp and thread tiles, float4 loads, A transposed into padded shared memory,
//! double buffering or a `cp.async` pipeline, split-K and grouped block order. Compared with
//! cuBLAS in one run.
//!
//! ```text
//! cargo run --release --example sgemm_cuda --features cuda,autotune        # tune each shape, compare
//! cargo run --release --example sgemm_cuda --features cuda -- --ptx sm_90  # compile the space with NVRTC only
//! ```
//!
//! For each shape (`--shapes 2048,4096,4096x128x4096,128x4096x8192`, the default; a shape is
//! `N` for N x N x N or `MxNxK`) the first call of `sgemm_cuda` tunes it (with `--features
//! autotune`; each configuration's output checked against the default's, `verify = c`), the
//! result is checked against a CPU reference on 16 rows, then cuBLAS (FP32, TF32 off), the
//! default configuration and the tuned one are timed alike, interleaved (`tunable::compare`),
//! and printed in TFLOP/s and as ratios to cuBLAS. `--json FILE` writes the figures (what
//! `scripts/gpu-check` collects). Without a GPU it says why, and exits (status 2 with
//! `--require-gpu`).
//!
//! Shape rules: M a multiple of BM, N of BN, K of BK * SPLITK; a configuration whose tiles do
//! not divide the shape fails (a failed configuration, recorded with its reason).
//!
//! `--ptx ARCH` compiles every configuration valid on ARCH's reference device (sm_80: an A100's
//! limits, sm_90: an H100's) with NVRTC, no GPU needed, and reports how many compile and why the
//! others fail; `--every N` compiles every N-th of them only.

#![allow(unsafe_code)]

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, inputs, json_number, json_string};
use tunable::backend::cuda::{Buffer, Cuda, CudaError, PER_PROGRAM, compile_many};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, side_by_side};
use tunable::{Params, Space, tunable};
use tunable_search::space::DeviceProperties;

/// The kernel source (entry point `sgemm`).
pub static SGEMM: Source = Source::new("sgemm", include_str!("sgemm_cuda.cu"));

/// The most split-K slices of the space: the workspace holds this many partial tiles of C.
pub const MAX_SPLIT: usize = 8;

/// Why a configuration could not run: its tiles do not divide the shape, or CUDA failed.
#[derive(Debug)]
pub enum SgemmError {
    /// The shape is not a multiple of the configuration's tiles, or the workspace is too small.
    Shape(String),
    /// Compiling, loading or launching failed.
    Cuda(CudaError),
}

impl std::fmt::Display for SgemmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SgemmError::Shape(s) => f.write_str(s),
            SgemmError::Cuda(e) => e.fmt(f),
        }
    }
}

impl From<CudaError> for SgemmError {
    fn from(e: CudaError) -> Self {
        SgemmError::Cuda(e)
    }
}

/// What split-K needs besides C: `partials` holds up to `MAX_SPLIT` partial M x N products,
/// `flags` one counter per output tile (zero between launches: the kernel sets each back).
pub struct Workspace {
    /// The partial products (`SPLITK * M * N` floats used).
    pub partials: Buffer<f32>,
    /// Arrivals per output tile.
    pub flags: Buffer<u32>,
}

impl Workspace {
    /// A workspace for `m x n` outputs: as many partial products as fit in `max_bytes` (at most
    /// [`MAX_SPLIT`], at least one), one counter per 32 x 32 tile.
    pub fn new(gpu: &Cuda, m: usize, n: usize, max_bytes: usize) -> Result<Workspace, CudaError> {
        let split = (max_bytes / (m * n * 4)).clamp(1, MAX_SPLIT);
        Ok(Workspace {
            partials: gpu.alloc(split * m * n)?,
            flags: gpu.alloc((m / 32).max(1) * (n / 32).max(1))?,
        })
    }
}

#[tunable(
    BM = [64, 128, 256],
    BN = [64, 128, 256],
    BK = [8, 16, 32],
    WM = [32, 64, 128],
    WN = [32, 64, 128],
    TM = [4, 8],
    TN = [4, 8],
    WTN = [4, 8],
    PAD = [0, 4],
    ASYNC = [0, 1],
    STAGES = [1, 2, 3, 4],
    SPLITK = [1, 2, 4, 8],
    GROUP = [1, 8],
    // Warp tiles divide the block tile; 2 to 32 warps a block.
    constraint = "BM % WM == 0 and BN % WN == 0",
    constraint = "64 <= (BM // WM) * (BN // WN) * 32 <= min(1024, device.max_threads_per_block)",
    // A warp's lanes form a (32 / WTN) x WTN grid whose thread tiles cover the warp tile.
    constraint = "WM % ((32 // WTN) * TM) == 0 and WN % (WTN * TN) == 0",
    // At most 128 accumulators a thread (registers), at least 16; a block's accumulators and
    // about 32 more registers a thread fit in the 64 Ki registers a block may use.
    constraint = "16 * 32 <= WM * WN <= 128 * 32",
    constraint = "BM * BN + 32 * (BM // WM) * (BN // WN) * 32 <= 65536",
    // The float4 loads of the A and B tiles split evenly over the threads.
    constraint = "(BM * BK // 4) % ((BM // WM) * (BN // WN) * 32) == 0",
    constraint = "(BK * BN // 4) % ((BM // WM) * (BN // WN) * 32) == 0",
    // Plain loads buffer one or two tiles; cp.async (sm_80 and newer) two to four.
    constraint = "(ASYNC == 0 and STAGES <= 2) or (ASYNC == 1 and STAGES >= 2)",
    constraint = "ASYNC == 0 or device.compute_capability >= 80",
    // The shared memory of the stages: within the largest any device gives a block (227 KiB),
    // and within this device's.
    constraint = "STAGES * BK * (BM + PAD + BN) * 4 <= 232448",
    constraint = "STAGES * BK * (BM + PAD + BN) * 4 <= device.max_shared_memory_per_block",
    device = gpu.device_id(),
    device_properties = device_properties(gpu),
    key = (tunable::key::log2_bucket(shape.m as u64) << 16)
        | (tunable::key::log2_bucket(shape.n as u64) << 8)
        | tunable::key::log2_bucket(shape.k as u64),
    verify = c,
    tolerance = 1e-3,
    budget = 200,
    default = (BM = 64, BN = 64, BK = 16, WM = 32, WN = 32, TM = 4, TN = 4, WTN = 4, PAD = 4, ASYNC = 0, STAGES = 1, SPLITK = 1, GROUP = 1),
)]
/// `c = a * b` for row-major `a` (`m x k`), `b` (`k x n`) and `c` (`m x n`) on the GPU; `m`,
/// `n` and `k` are multiples of 256 for every configuration to apply (see the module docs).
pub fn sgemm_cuda(
    gpu: &Cuda,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    work: &mut Workspace,
    shape: Shape,
) -> Result<(), SgemmError> {
    let Shape { m, n, k } = shape;
    if !m.is_multiple_of(BM) || !n.is_multiple_of(BN) || !k.is_multiple_of(BK * SPLITK) {
        return Err(SgemmError::Shape(format!(
            "{m} x {n} x {k} is not a multiple of the tile {BM} x {BN} x {BK} * {SPLITK} (BK * SPLITK)"
        )));
    }
    if work.partials.len() < SPLITK * m * n || work.flags.len() < (m / BM) * (n / BN) {
        return Err(SgemmError::Shape(format!(
            "the workspace holds fewer than {SPLITK} partial products of {m} x {n}"
        )));
    }
    let threads = (BM / WM) * (BN / WN) * 32;
    let shared = STAGES * BK * (BM + PAD + BN) * 4;
    let dims = Dims::new([n / BN, m / BM, SPLITK], [threads, 1, 1]);
    let (m, n, k) = (m as i32, n as i32, k as i32);
    // SAFETY: sgemm(int M, int N, int K, const float *A, const float *B, float *C, float *W,
    // unsigned *FLAGS); the shape is a multiple of the tiles and the workspace holds SPLITK
    // partial products and a counter per tile, as checked above, so the kernel stays inside
    // the buffers.
    unsafe {
        gpu.kernel(&SGEMM, params)?
            .launch(dims)
            .shared_bytes(shared)
            .arg(&m)
            .arg(&n)
            .arg(&k)
            .arg(a)
            .arg(b)
            .arg(c)
            .arg(&work.partials)
            .arg(&work.flags)
            .run()?;
    }
    Ok(())
}

/// The limits of the reference device of `arch` for compiling without a GPU: sm_80 an A100's,
/// sm_90 an H100's (CUDA's documented per-architecture limits); other architectures bind only
/// the compute capability.
pub fn reference_device(arch: &str) -> DeviceProperties {
    let cc: i64 = arch.trim_start_matches("sm_").parse().unwrap_or(80);
    let d = DeviceProperties::new()
        .with("compute_capability", cc)
        .expect("known property");
    let shared = match cc {
        80 => Some(163 * 1024),
        90 => Some(227 * 1024),
        _ => None,
    };
    match shared {
        Some(s) => d
            .with("max_shared_memory_per_block", s)
            .and_then(|d| d.with("max_threads_per_block", 1024))
            .expect("known properties"),
        None => d,
    }
}

/// `gpu`'s properties, for binding the space's `device.` constraints.
pub fn device_properties(gpu: &Cuda) -> DeviceProperties {
    let limits = gpu.limits();
    let cc: i64 = gpu.arch().trim_start_matches("sm_").parse().unwrap_or(0);
    DeviceProperties::new()
        .with("compute_capability", cc)
        .and_then(|d| d.with("max_threads_per_block", limits.max_threads_per_block as i64))
        .and_then(|d| {
            d.with(
                "max_shared_memory_per_block",
                limits.max_shared_per_block as i64,
            )
        })
        .expect("known properties")
}

/// Every configuration of `space`.
pub fn configs(space: &Space) -> Vec<SgemmCudaParams> {
    (0..space.len())
        .map(|pos| SgemmCudaParams::from_values(&space.values(pos)).expect("fits"))
        .collect()
}

/// Compiles each of `configs` with NVRTC for `arch` on `threads` threads, [`PER_PROGRAM`] to an NVRTC
/// program: those that produced PTX, and those that failed with their error.
pub fn compile_each(
    configs: &[SgemmCudaParams],
    arch: &str,
    threads: usize,
) -> (Vec<SgemmCudaParams>, Vec<(SgemmCudaParams, CudaError)>) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(SgemmCudaParams, Result<(), CudaError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let start =
                            next.fetch_add(PER_PROGRAM, std::sync::atomic::Ordering::Relaxed);
                        if start >= configs.len() {
                            break done;
                        }
                        let part = &configs[start..(start + PER_PROGRAM).min(configs.len())];
                        let built = compile_many(&SGEMM, part, arch);
                        done.extend(
                            part.iter()
                                .copied()
                                .zip(built.into_iter().map(|r| r.map(drop))),
                        );
                    }
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

/// Compiles every `every`-th configuration valid on `arch`'s reference device (every one for
/// 1) and reports how many compiled and why the others failed.
fn ptx_report(arch: &str, every: usize) {
    let start = Instant::now();
    let space = sgemm_cuda_space()
        .on_device(&reference_device(arch))
        .expect("the space rebuilds");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let list: Vec<SgemmCudaParams> = configs(&space).into_iter().step_by(every.max(1)).collect();
    let (ok, failed) = compile_each(&list, arch, threads);
    println!(
        "NVRTC ({arch}): {} of {} configurations (every {every}th of the {} valid there) compiled to PTX in {:.1} s, {} failed ({} valid without a device, {} in the Cartesian product)",
        ok.len(),
        list.len(),
        space.len(),
        start.elapsed().as_secs_f64(),
        failed.len(),
        sgemm_cuda_space().len(),
        sgemm_cuda_space().cartesian_size()
    );
    for (p, e) in failed.iter().take(10) {
        println!("  {p:?}: {e}");
    }
}

/// A problem shape: `a` is `m x k`, `b` `k x n`, `c` `m x n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Columns of `a`, rows of `b`.
    pub k: usize,
}

impl Shape {
    /// `N` (N x N x N) or `MxNxK`.
    fn parse(text: &str) -> Option<Shape> {
        let parts: Vec<usize> = text
            .split('x')
            .map(|p| p.trim().parse().ok())
            .collect::<Option<_>>()?;
        match parts[..] {
            [n] => Some(Shape { m: n, n, k: n }),
            [m, n, k] => Some(Shape { m, n, k }),
            _ => None,
        }
    }

    fn name(&self) -> String {
        if self.m == self.n && self.n == self.k {
            self.m.to_string()
        } else {
            format!("{}x{}x{}", self.m, self.n, self.k)
        }
    }

    fn tflops(&self, ms: f64) -> f64 {
        2.0 * (self.m * self.n * self.k) as f64 / (ms * 1e-3) / 1e12
    }
}

/// cuBLAS on cudarc's own handle to the same device (its primary context), on buffers of its
/// own holding the same matrices, in FP32 (`CUBLAS_DEFAULT_MATH`: no TF32), timed with CUDA
/// events reported as device time, as the backend's launches are.
mod vendor {
    use cudarc::cublas::sys::cublasMath_t::CUBLAS_DEFAULT_MATH;
    use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
    use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
    use std::sync::Arc;

    /// cuBLAS with the operands of one shape.
    pub struct Cublas {
        blas: CudaBlas,
        stream: Arc<CudaStream>,
        a: CudaSlice<f32>,
        b: CudaSlice<f32>,
        c: CudaSlice<f32>,
        shape: (usize, usize, usize),
    }

    impl Cublas {
        /// cuBLAS on device 0 with `a` (m x k) and `b` (k x n), row-major; why not, if the
        /// library or device is missing.
        pub fn new(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Result<Cublas, String> {
            let made = std::panic::catch_unwind(|| -> Result<Cublas, String> {
                let ctx = CudaContext::new(0).map_err(|e| format!("{e:?}"))?;
                let stream = ctx.default_stream();
                let blas = CudaBlas::new(Arc::clone(&stream)).map_err(|e| format!("{e:?}"))?;
                // SAFETY: the handle is live; the mode is a valid enumerator.
                unsafe {
                    cudarc::cublas::sys::cublasSetMathMode(*blas.handle(), CUBLAS_DEFAULT_MATH)
                }
                .result()
                .map_err(|e| format!("cublasSetMathMode: {e:?}"))?;
                let up = |h: &[f32]| stream.clone_htod(h).map_err(|e| format!("{e:?}"));
                Ok(Cublas {
                    a: up(a)?,
                    b: up(b)?,
                    c: stream.alloc_zeros(m * n).map_err(|e| format!("{e:?}"))?,
                    blas,
                    stream: Arc::clone(&stream),
                    shape: (m, n, k),
                })
            });
            made.unwrap_or_else(|p| {
                Err(p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "cuBLAS did not load".to_owned()))
            })
        }

        /// One SGEMM, its device time reported to `tunable::measure`.
        pub fn run(&mut self) -> Result<(), String> {
            let (m, n, k) = self.shape;
            // Row-major C = A * B is column-major C^T = B^T * A^T: cuBLAS gets B as its first
            // operand.
            let cfg = GemmConfig {
                transa: CUBLAS_OP_N,
                transb: CUBLAS_OP_N,
                m: n as i32,
                n: m as i32,
                k: k as i32,
                alpha: 1.0f32,
                lda: n as i32,
                ldb: k as i32,
                beta: 0.0f32,
                ldc: n as i32,
            };
            let e = |e: cudarc::driver::DriverError| format!("{e:?}");
            let start = self.stream.record_event(None).map_err(e)?;
            // SAFETY: the operands hold k x n, m x k and m x n floats, as `cfg` says.
            unsafe { self.blas.gemm(cfg, &self.b, &self.a, &mut self.c) }
                .map_err(|e| format!("{e:?}"))?;
            let end = self.stream.record_event(None).map_err(e)?;
            end.synchronize().map_err(e)?;
            let ms = start.elapsed_ms(&end).map_err(e)?;
            tunable::measure::report_device_time(f64::from(ms));
            Ok(())
        }

        /// The result, row-major m x n.
        pub fn result(&self) -> Result<Vec<f32>, String> {
            self.stream
                .clone_dtoh(&self.c)
                .map_err(|e| format!("{e:?}"))
        }
    }
}

/// The largest relative error of `got` against a CPU reference on 16 rows.
fn worst_error(got: &[f32], a: &[f32], b: &[f32], s: Shape) -> f32 {
    (0..s.m)
        .step_by((s.m / 16).max(1))
        .flat_map(|i| (0..s.n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let r: f64 = (0..s.k)
                .map(|l| f64::from(a[i * s.k + l]) * f64::from(b[l * s.n + j]))
                .sum();
            ((f64::from(got[i * s.n + j]) - r).abs() / r.abs().max(1.0)) as f32
        })
        .fold(0.0, f32::max)
}

/// What one shape measured, as a JSON object.
fn measure(gpu: &Cuda, s: Shape) -> Result<String, String> {
    let (ha, hb) = inputs(s.m * s.k, s.k * s.n);
    let e = |e: CudaError| e.to_string();
    let (a, b) = (gpu.upload(&ha).map_err(e)?, gpu.upload(&hb).map_err(e)?);
    let mut c = gpu.alloc::<f32>(s.m * s.n).map_err(e)?;
    let mut work = Workspace::new(gpu, s.m, s.n, 1 << 27).map_err(e)?;
    let (m, n, k) = (s.m, s.n, s.k);
    let start = Instant::now();
    sgemm_cuda(gpu, &a, &b, &mut c, &mut work, s).map_err(|e| e.to_string())?;
    let first_call = start.elapsed().as_secs_f64();
    let tuned = sgemm_cuda_config(gpu, &a, &b, &mut c, &mut work, s);
    let worst = worst_error(&c.read().map_err(e)?, &ha, &hb, s);
    println!(
        "{}: first call {:.1} s ({:?}) {:?}; max relative error {worst:.1e} on 16 rows",
        s.name(),
        first_call,
        tuned.origin,
        tuned.params
    );
    if worst > 1e-3 {
        return Err(format!("wrong result: relative error {worst}"));
    }
    let mut blas = vendor::Cublas::new(&ha, &hb, m, n, k);
    if let Ok(cb) = &mut blas {
        cb.run()?;
        let w = worst_error(&cb.result()?, &ha, &hb, s);
        println!("  cuBLAS max relative error {w:.1e}");
    }
    // cuBLAS, the default and the tuned configuration timed alike, interleaved.
    let default = SgemmCudaParams::default();
    let timed = side_by_side(&[0, 1, 2], ROUNDS, |&which| -> Result<(), String> {
        match which {
            0 => blas.as_mut().map_err(|e| e.clone())?.run(),
            1 => sgemm_cuda_with(&default, gpu, &a, &b, &mut c, &mut work, s)
                .map_err(|e| e.to_string()),
            _ => sgemm_cuda_with(&tuned.params, gpu, &a, &b, &mut c, &mut work, s)
                .map_err(|e| e.to_string()),
        }
    });
    let ms: Vec<f64> = timed
        .iter()
        .map(|t| t.as_ref().map_or(f64::NAN, |t| t.ms))
        .collect();
    let ratio = |i: usize| ms[0] / ms[i];
    for (i, name) in ["cuBLAS", "default", "tuned"].iter().enumerate() {
        match &timed[i] {
            Ok(t) => println!(
                "  {name:>7}: {:.3} ms, {:.1} TFLOP/s, {:.2}x cuBLAS",
                t.ms,
                s.tflops(t.ms),
                ratio(i)
            ),
            Err(e) => println!("  {name:>7}: failed: {e}"),
        }
    }
    let mut fields = vec![
        ("shape", json_string(&s.name())),
        ("m", m.to_string()),
        ("n", n.to_string()),
        ("k", k.to_string()),
        ("origin", json_string(&format!("{:?}", tuned.origin))),
        ("config", json_string(&format!("{:?}", tuned.params))),
        ("first_call_s", json_number(first_call)),
        ("max_relative_error", json_number(f64::from(worst))),
    ];
    for (i, name) in ["cublas", "default", "tuned"].iter().enumerate() {
        let (ms_key, tf_key, ratio_key) = match *name {
            "cublas" => ("cublas_ms", "cublas_tflops", ""),
            "default" => ("default_ms", "default_tflops", "default_vs_cublas"),
            _ => ("tuned_ms", "tuned_tflops", "tuned_vs_cublas"),
        };
        fields.push((ms_key, json_number(ms[i])));
        fields.push((tf_key, json_number(s.tflops(ms[i]))));
        if !ratio_key.is_empty() {
            fields.push((ratio_key, json_number(ratio(i))));
        }
    }
    if let Err(e) = &blas {
        fields.push(("cublas_error", json_string(e)));
    }
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}: {v}", json_string(k)))
        .collect();
    Ok(format!("{{{}}}", body.join(", ")))
}

fn main() {
    let args = Args::from_env();
    let value = |flag: &str| args.optional(flag).map(str::to_owned);
    if args.has("--ptx") {
        let every = value("--every").and_then(|v| v.parse().ok()).unwrap_or(1);
        ptx_report(&value("--ptx").unwrap_or_else(|| "sm_80".into()), every);
        return;
    }
    let json = value("--json");
    let write = |body: String| {
        if let Some(path) = &json {
            std::fs::write(path, body + "\n").expect("write --json file");
        }
    };
    let shapes: Vec<Shape> = value("--shapes")
        .unwrap_or_else(|| "2048,4096,4096x128x4096,128x4096x8192".into())
        .split(',')
        .map(|t| Shape::parse(t).unwrap_or_else(|| panic!("bad shape {t:?}: N or MxNxK")))
        .collect();
    let gpu = match Cuda::new(0) {
        Ok(g) => g,
        Err(e) => {
            println!(
                "sgemm_cuda: {e}; nothing to compare here (`--ptx sm_90` compiles the space without a GPU)"
            );
            write(format!("{{\"error\": {}}}", json_string(&e.to_string())));
            if args.has("--require-gpu") {
                std::process::exit(2);
            }
            return;
        }
    };
    let on_device = sgemm_cuda_space()
        .on_device(&device_properties(&gpu))
        .expect("the space rebuilds");
    println!(
        "device: {}; sgemm_cuda: {} configurations valid on it ({} without a device); {METHOD}; {ROUNDS} rounds",
        gpu.device_id(),
        on_device.len(),
        sgemm_cuda_space().len()
    );
    let mut results = Vec::new();
    let mut failed = false;
    for s in shapes {
        match measure(&gpu, s) {
            Ok(r) => results.push(r),
            Err(e) => {
                println!("{}: {e}", s.name());
                results.push(format!(
                    "{{\"shape\": {}, \"error\": {}}}",
                    json_string(&s.name()),
                    json_string(&e)
                ));
                failed = true;
            }
        }
        write(format!(
            "{{\"device\": {}, \"autotune\": {}, \"valid_on_device\": {}, \"shapes\": [{}]}}",
            json_string(gpu.device_id()),
            cfg!(feature = "autotune"),
            on_device.len(),
            results.join(", ")
        ));
    }
    if failed {
        std::process::exit(1);
    }
}
