//! Helpers shared by the GPU tests of this crate.

#![allow(dead_code)] // Each test binary uses a part.

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
