//! Helpers shared by the GPU tests of this crate.

#![allow(dead_code)] // Each test binary uses a part.

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
