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

/// Whether the device that `opened` describes is there (printing its description), else
/// `false` after [`skip`]ping for `what`.
pub fn found(what: &str, opened: Result<String, impl std::fmt::Display>) -> bool {
    match opened {
        Ok(device) => {
            println!("{device}");
            true
        }
        Err(e) => {
            skip(what, e);
            false
        }
    }
}
