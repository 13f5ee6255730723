//! What one NVRTC compilation of a configuration costs, with NVRTC's `-minimal` (the CUDA
//! backend's default) and without it (`TUNABLE_NVRTC_MINIMAL=off`), for a one-line kernel and
//! for a `gemm_cuda` configuration; and eight `gemm_cuda` configurations compiled one by one
//! against in one program (`compile_many`). No GPU is needed; without NVRTC it prints why and
//! measures nothing.
//!
//! ```text
//! cargo bench --bench nvrtc --features cuda
//! TUNABLE_NVRTC=/path/to/libnvrtc.so.13 cargo bench --bench nvrtc --features cuda
//! ```
//!
//! The build cache is off (every iteration compiles), and the architecture is `sm_90`, so that
//! NVRTC runs `ptxas` as the backend does for a device.
#![allow(unsafe_code)] // setting the environment before divan starts its threads

use tunable::backend::Source;
use tunable::backend::cuda::{compile, compile_many, nvrtc};
use tunable::{Params, Value};

fn main() {
    // SAFETY: set before any other thread exists.
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", "off") };
    match nvrtc() {
        Ok(found) => println!("compiling with {found}"),
        Err(e) => {
            println!("skipping: {e}");
            return;
        }
    }
    divan::main();
}

/// A configuration of `examples/gemm_cuda.cu`, its parameters in `NAMES`' order (the one-line
/// kernel reads one of them).
#[derive(Clone, Copy, Debug)]
struct Gemm([i64; 7]);

impl Params for Gemm {
    const NAMES: &'static [&'static str] = &[
        "block_size_x",
        "block_size_y",
        "tile_size_x",
        "tile_size_y",
        "KB",
        "VW",
        "use_shared",
    ];
    fn from_values(v: &[Value]) -> Option<Self> {
        let mut out = [0; 7];
        for (o, v) in out.iter_mut().zip(v) {
            let Value::Int(i) = v else { return None };
            *o = *i;
        }
        (v.len() == 7).then_some(Gemm(out))
    }
    fn to_values(&self) -> Vec<Value> {
        self.0.iter().map(|&v| Value::Int(v)).collect()
    }
}

static ONE_LINE: Source = Source::new(
    "scale",
    r#"extern "C" __global__ void scale(float *x) { x[threadIdx.x] *= tile_size_x; }"#,
);

static GEMM: Source = Source::new("gemm", include_str!("../examples/gemm_cuda.cu"));
/// `gemm_cuda`'s default configuration (its attribute's `default`).
const GEMM_DEFAULT: Gemm = Gemm([16, 16, 1, 1, 16, 1, 0]);

fn compile_with<P: Params>(b: divan::Bencher, minimal: &str, source: &Source, config: P) {
    // SAFETY: divan runs these benchmarks on the main thread, one at a time (no `threads`).
    unsafe { std::env::set_var("TUNABLE_NVRTC_MINIMAL", minimal) };
    b.bench_local(|| compile(source, &config, "sm_90").expect("compiles"));
}

/// A one-line kernel: the compilation's fixed part.
#[divan::bench(args = ["on", "off"], sample_count = 30)]
fn one_line(b: divan::Bencher, minimal: &str) {
    compile_with(b, minimal, &ONE_LINE, GEMM_DEFAULT);
}

/// `gemm_cuda`'s default configuration: a kernel of a few dozen lines.
#[divan::bench(args = ["on", "off"], sample_count = 20)]
fn gemm(b: divan::Bencher, minimal: &str) {
    compile_with(b, minimal, &GEMM, GEMM_DEFAULT);
}

/// Eight `gemm_cuda` configurations of a tuning's kind (tiles of 1 to 8, staged or not).
const EIGHT: [Gemm; 8] = [
    Gemm([16, 16, 1, 1, 16, 1, 0]),
    Gemm([32, 8, 2, 2, 16, 2, 1]),
    Gemm([16, 8, 4, 4, 32, 4, 1]),
    Gemm([64, 4, 2, 4, 16, 1, 0]),
    Gemm([32, 4, 4, 8, 16, 4, 1]),
    Gemm([16, 16, 8, 2, 32, 2, 0]),
    Gemm([32, 16, 1, 4, 16, 1, 1]),
    Gemm([16, 4, 8, 8, 16, 4, 0]),
];

/// The eight compiled one by one, or in one NVRTC program (`-minimal` on, the default).
#[divan::bench(args = ["alone", "together"], sample_count = 10)]
fn eight_gemm(b: divan::Bencher, how: &str) {
    // SAFETY: as in `compile_with`.
    unsafe { std::env::set_var("TUNABLE_NVRTC_MINIMAL", "on") };
    b.bench_local(|| {
        if how == "alone" {
            for c in &EIGHT {
                compile(&GEMM, c, "sm_90").expect("compiles");
            }
        } else {
            for r in compile_many(&GEMM, &EIGHT, "sm_90") {
                let c = r.expect("compiles");
                assert_ne!(c.entry, "gemm", "compiled alone");
            }
        }
    });
}
