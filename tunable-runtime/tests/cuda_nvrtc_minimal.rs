//! NVRTC's `-minimal`, tried first (`backend::cuda`'s compilation): with real NVRTC, a kernel
//! compiles to the same PTX, CUBIN and log with and without it; a source that needs the full
//! language compiles anyway; a configuration `ptxas` or the source itself rejects fails with the
//! same log either way; the flag is really passed (a source that compiles only under it); and a
//! value of the variable other than `on` or `off` is refused.
//! One test in a binary of its own, as it switches `TUNABLE_NVRTC_MINIMAL` in the environment.
//! Skips, printing why, without NVRTC.
#![cfg(feature = "cuda")]
#![allow(unsafe_code)] // setting the environment

use tunable_runtime::backend::Source;
use tunable_runtime::backend::cuda::{Compiled, Cuda, CudaError, compile, nvrtc};

mod common;
use common::{TEXTURED, Tile, nvrtc_found};

/// A kernel of the common kind; TILE = 0 is rejected by the source, a large TILE by `ptxas`.
static TILED: Source = Source::new(
    "tiled",
    r#"
static_assert(TILE != 0, "TILE must not be 0");
extern "C" __global__ void tiled(const float *x, float *y, int n) {
    __shared__ float stage[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x % TILE] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = stage[(threadIdx.x + 1) % TILE] * 2.0f;
}
"#,
);

/// Declares a name the full language declares otherwise: compiles only under `-minimal`.
static OWN_STREAM: Source = Source::new(
    "own_stream",
    r#"
typedef int cudaStream_t;
extern "C" __global__ void own_stream(cudaStream_t *y) { y[threadIdx.x] = TILE; }
"#,
);

fn with_flag(on: bool, source: &Source, tile: i64) -> Result<Compiled, CudaError> {
    // SAFETY: the only test of this binary; no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("TUNABLE_NVRTC_MINIMAL", if on { "on" } else { "off" }) };
    compile(source, &Tile(tile), "sm_80")
}

fn log(e: CudaError) -> String {
    match e {
        CudaError::Compile { log, .. } => log,
        e => panic!("expected a compile failure, got {e}"),
    }
}

#[test]
fn minimal_builds_match_full_ones_and_sources_needing_more_still_compile() {
    // SAFETY: as in `with_flag`.
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", "off") };
    // A value the backend does not take fails its constructor first, with or without a GPU.
    // SAFETY: as in `with_flag`.
    unsafe { std::env::set_var("TUNABLE_NVRTC_MINIMAL", "yes") };
    let refused = CudaError::BadSetting {
        name: "TUNABLE_NVRTC_MINIMAL",
        value: "yes".into(),
        expected: "on or off",
    };
    assert_eq!(Cuda::new(0).unwrap_err(), refused);
    if !nvrtc_found() {
        return;
    }
    let version = nvrtc().unwrap().version();

    for tile in [32, 256] {
        let minimal = with_flag(true, &TILED, tile).unwrap();
        let full = with_flag(false, &TILED, tile).unwrap();
        assert_eq!(minimal, full, "TILE={tile}");
    }

    let source_rejects = log(with_flag(true, &TILED, 0).unwrap_err());
    assert!(
        source_rejects.contains("TILE must not be 0"),
        "{source_rejects}"
    );
    assert_eq!(
        source_rejects,
        log(with_flag(false, &TILED, 0).unwrap_err())
    );

    let ptxas_rejects = log(with_flag(true, &TILED, 1 << 20).unwrap_err());
    assert!(ptxas_rejects.contains("ptxas"), "{ptxas_rejects}");
    assert_eq!(
        ptxas_rejects,
        log(with_flag(false, &TILED, 1 << 20).unwrap_err())
    );

    // Needs the full language: compiled again without the flag, the same build as without it.
    let textured = with_flag(true, &TEXTURED, 2).unwrap();
    assert_eq!(textured, with_flag(false, &TEXTURED, 2).unwrap());
    assert!(with_flag(true, &TEXTURED, 3).is_ok());

    // And the compilation.
    // SAFETY: as in `with_flag`.
    unsafe { std::env::set_var("TUNABLE_NVRTC_MINIMAL", "yes") };
    let error = compile(&TILED, &Tile(32), "sm_80").unwrap_err();
    assert_eq!(error, refused);
    assert!(error.to_string().contains("expected on or off"), "{error}");

    if version >= (12, 4) {
        assert!(
            with_flag(true, &OWN_STREAM, 1).is_ok(),
            "the flag is passed"
        );
        assert!(with_flag(false, &OWN_STREAM, 1).is_err());
    } else {
        println!("NVRTC {version:?} predates -minimal: it is never passed");
        assert!(with_flag(true, &OWN_STREAM, 1).is_err());
    }
}
