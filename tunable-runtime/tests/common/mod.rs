//! Helpers shared by the GPU tests of this crate.

#![allow(dead_code, unused_imports, unused_macros)] // Each test binary uses a part.

/// A configuration struct of integer parameters, as `#[tunable]` would generate it:
/// `params!(Vadd: "block_size_x", "per_thread")` declares `Vadd([i64; 2])`.
macro_rules! params {
    ($name:ident: $($p:literal),*) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct $name([i64; [$($p),*].len()]);
        impl ::tunable_runtime::params::Params for $name {
            const NAMES: &'static [&'static str] = &[$($p),*];
            fn from_values(v: &[::tunable_search::Value]) -> Option<Self> {
                let mut out = [0i64; [$($p),*].len()];
                for (o, v) in out.iter_mut().zip(v) {
                    *o = match v { ::tunable_search::Value::Int(i) => *i, _ => return None };
                }
                (v.len() == out.len()).then_some($name(out))
            }
            fn to_values(&self) -> Vec<::tunable_search::Value> {
                self.0.iter().map(|&i| ::tunable_search::Value::Int(i)).collect()
            }
        }
    };
}
pub(crate) use params;

/// The device of a test binary, opened once by `open` and kept in `cell` (lavapipe is slow to
/// open), printed with `describe`; or `None` after [`skip`]ping for `what`.
pub fn device<D: Clone>(
    cell: &std::sync::OnceLock<Result<D, String>>,
    what: &str,
    open: impl FnOnce() -> Result<D, String>,
    describe: impl Fn(&D) -> String,
) -> Option<D> {
    match cell.get_or_init(open) {
        Ok(gpu) => {
            println!("device: {}", describe(gpu));
            Some(gpu.clone())
        }
        Err(e) => {
            skip(what, e);
            None
        }
    }
}

/// The input of an `add_one` kernel over `n` elements (0, 1, ..., n - 1) and the output a
/// tuning checks each variant's against (each plus one).
pub fn add_one_data(n: usize) -> (Vec<f32>, tunable_runtime::tuner::Expected) {
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let expected = tunable_runtime::tuner::Expected {
        output: host.iter().map(|v| f64::from(*v) + 1.0).collect(),
        tolerance: 1e-6,
    };
    (host, expected)
}

/// A tuning of every configuration of `space` (exhaustive, its first position first, `batch`
/// at a time), each run by `run` (one warm-up, two timed runs) and checked against `expected`.
pub fn tune_every<P: tunable_runtime::params::Params>(
    space: &std::sync::Arc<tunable_search::Space>,
    run: &mut tunable_runtime::tuner::Run<'_, P>,
    expected: tunable_runtime::tuner::Expected,
    batch: usize,
) -> tunable_runtime::tuner::TuneReport {
    use tunable_runtime::tuner::{TuneOptions, Variants, tune};
    let repeats = tunable_runtime::measure::Repeats::new(1, 2);
    let mut variants = Variants::new(space, run, Some(expected), repeats);
    let opts = TuneOptions {
        budget: space.len(),
        batch,
        strategy: "exhaustive".into(),
        first: vec![0],
        ..TuneOptions::default()
    };
    tune(space, &opts, &mut variants, &mut []).unwrap()
}

/// How many of `report`'s failures give a reason that holds `what`.
pub fn failed(report: &tunable_runtime::tuner::TuneReport, what: &str) -> usize {
    report
        .failures
        .iter()
        .filter(|f| f.1.contains(what))
        .count()
}

/// A configuration of one integer parameter, `TILE`.
#[derive(Clone, Copy, Debug)]
pub struct Tile(pub i64);

impl tunable_runtime::params::Params for Tile {
    const NAMES: &'static [&'static str] = &["TILE"];
    fn from_values(v: &[tunable_search::Value]) -> Option<Self> {
        match v {
            [tunable_search::Value::Int(t)] => Some(Tile(*t)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<tunable_search::Value> {
        vec![tunable_search::Value::Int(self.0)]
    }
}

/// A CUDA kernel taking a texture object, which NVRTC's `-minimal` leaves out: it compiles only
/// with the full language.
pub static TEXTURED: tunable_runtime::backend::Source = tunable_runtime::backend::Source::new(
    "textured",
    r#"
extern "C" __global__ void textured(cudaTextureObject_t t, float *y) {
    y[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x) * TILE;
}
"#,
);

/// Skips a test whose library or device is missing, printing why; fails it instead when
/// `TUNABLE_REQUIRE` names `what` (`.ci/run` requires `opencl` and `nvrtc`, which it installs; `scripts/gpu-check` requires
/// `cuda`, a GPU, on the machine it runs on).
pub fn skip(what: &str, reason: impl std::fmt::Display) {
    let required = std::env::var("TUNABLE_REQUIRE").unwrap_or_default();
    assert!(
        !required.split([' ', ',']).any(|r| r == what),
        "{what} is required (TUNABLE_REQUIRE={required:?}) but unavailable: {reason}"
    );
    eprintln!("skipping: {reason}");
}

/// The OpenCL device, or `None` after [`skip`]ping.
#[cfg(feature = "opencl")]
pub fn opencl_device() -> Option<tunable_runtime::backend::opencl::OpenCl> {
    match tunable_runtime::backend::opencl::OpenCl::new() {
        Ok(cl) => Some(cl),
        Err(e) => {
            skip("opencl", e);
            None
        }
    }
}

/// Whether NVRTC loads (saying where from), else `false` after [`skip`]ping.
#[cfg(feature = "cuda")]
pub fn nvrtc_found() -> bool {
    match tunable_runtime::backend::cuda::nvrtc() {
        Ok(found) => {
            println!("{found}");
            true
        }
        Err(e) => {
            skip("nvrtc", e);
            false
        }
    }
}

/// Checks that the tuner's reads of a device buffer (`verify::read`, which reuses the buffer's
/// read-back memory) see every write: `upload` makes a buffer of 2^18 + 3 elements (enough to
/// be widened on several threads), `write` overwrites it.
pub fn reads_see_every_write<B: tunable_runtime::verify::Output>(
    upload: impl Fn(&[f32]) -> B,
    write: impl Fn(&mut B, &[f32]),
) {
    use tunable_runtime::verify;
    let n = (1 << 18) + 3;
    let mut y = upload(&(0..n).map(|i| i as f32).collect::<Vec<_>>());
    let first = verify::read(&y).unwrap();
    assert_eq!(first.len(), n);
    assert!(first.iter().enumerate().all(|(i, &v)| v == i as f64));
    verify::give_back(first);
    write(&mut y, &vec![-2.5; n]);
    let second = verify::read(&y).unwrap();
    assert!(
        second.iter().all(|&v| v == -2.5),
        "the reused memory saw the write"
    );
}
