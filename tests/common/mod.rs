//! Helpers shared by the GPU tests of this crate.

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
