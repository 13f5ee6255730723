//! A CUDA kernel whose space plants every kind of failure the tuner must record rather than
//! stop on, for a real driver and GPU (`scripts/gpu-check` runs it on a lent GPU). Without a GPU
//! it says so and exits with status 2.
//!
//! ```text
//! TUNABLE_DIR=/tmp/faults TUNABLE_TIMEOUT=0.5 TUNABLE_LOG=1 \
//!     cargo run --release --example cuda_faults --features cuda,autotune
//! ```
//!
//! Each thread computes `y = x + 1` through a loop of `WORK` dependent steps (which converges to
//! the same exact value however long it runs). `FAULT` picks the variant:
//!
//! | `FAULT` | variant | expected record |
//! | --- | --- | --- |
//! | 0 | correct | measured |
//! | 1 | adds 1.5 instead of 1 | failed: wrong output |
//! | 2 | `__launch_bounds__(64)`, launched with 128 or 256 threads | failed: exceeds the kernel's maximum threads per block |
//! | 3 | twenty times the loop: correct, about 20x slower | measured (or stopped early), far behind |
//! | 4 | one thread spins for about a second | failed: timed out (with `TUNABLE_TIMEOUT` under a second) |
//! | 5 | asks for 300 KiB of dynamic shared memory | failed: more shared memory than the device allows |
//!
//! The tuning must complete and pick a correct `FAULT=0` variant; the journal in `TUNABLE_DIR`
//! holds each failure with its reason.

#![allow(unsafe_code)]

use tunable::backend::cuda::{Buffer, Cuda, CudaError};
use tunable::backend::{Dims, Source};
use tunable::tunable;

/// The kernel (entry point `add_one`).
static ADD_ONE: Source = Source::new(
    "add_one",
    r#"
#define WORK 256
#if FAULT == 2
#define BOUND 64
#else
#define BOUND 1024
#endif
extern "C" __global__ void __launch_bounds__(BOUND)
add_one(const float *x, float *y, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // s converges to exactly 2 from any small start; the start depends on the data so that the
    // compiler cannot fold the loop.
    float s = x[i] * 1e-30f;
#if FAULT == 3
    for (int r = 0; r < 20 * WORK; r++) s = fmaf(s, 0.5f, 1.0f);
#else
    for (int r = 0; r < WORK; r++) s = fmaf(s, 0.5f, 1.0f);
#endif
    float v = x[i] + 0.5f * s;
#if FAULT == 1
    v += 0.5f;
#endif
#if FAULT == 4
    if (i == 0) {
        float t = v;
        for (int j = 0; j < 400000000; j++) t = t * 1.0000001f + 1e-9f;
        if (t == 1234.5f) v = t;
    }
#endif
    y[i] = v;
}
"#,
);

#[tunable(block = [128, 256], FAULT = [0, 1, 2, 3, 4, 5],
          device = gpu.device_id(), verify = y, answer = expected, tolerance = 1e-6,
          strategy = "exhaustive", budget = 100, repeats = 3, warmup = 1,
          default = (block = 128, FAULT = 0),
          key = tunable::key::next_power_of_two(n as u64))]
fn add_one(
    gpu: &Cuda,
    x: &Buffer<f32>,
    y: &mut Buffer<f32>,
    expected: &[f32],
    n: usize,
) -> Result<(), CudaError> {
    let _ = expected; // read by the tuner only (`answer = expected`)
    let dims = Dims::divide(n, block, block);
    let shared = if FAULT == 5 { 300 * 1024 } else { 0 };
    // SAFETY: add_one(const float*, float*, int); every index is checked against n.
    unsafe {
        gpu.kernel(&ADD_ONE, params)?
            .launch(dims)
            .shared_bytes(shared)
            .arg(x)
            .arg(y)
            .arg(&(n as i32))
            .run()
    }
}

fn main() {
    let gpu = match Cuda::new(0) {
        Ok(g) => g,
        Err(e) => {
            println!("cuda_faults: no GPU here: {e}");
            std::process::exit(2);
        }
    };
    println!("device: {}", gpu.device_id());
    let n = 1 << 22;
    let host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let expected: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    let x = gpu.upload(&host).expect("upload");
    let mut y = gpu.alloc::<f32>(n).expect("alloc");
    add_one(&gpu, &x, &mut y, &expected, n).expect("a correct variant runs");
    let chosen = add_one_config(&gpu, &x, &mut y, &expected, n).params;
    println!("chosen {chosen:?}");
    println!("correct {}", y.read().expect("read back") == expected);
}
