//! # NVRTC's `-minimal`, tried first
//!
//! NVRTC 12.4 and later accept `-minimal`: the program is compiled without the declarations of
//! texture and surface functions, of the runtime functions and launches callable from device
//! code, and of the runtime's types (`cudaStream_t`, `cudaError_t`, ...). A kernel that uses none
//! of them compiles to the same PTX and CUBIN, in less time: the front end's fixed part is
//! shorter, which matters most for small kernels (`benches/nvrtc.rs`; the figures are in
//! `docs/notes/compile-path.md`). So each compilation tries it first:
//! - **Compiled:** that is the build.
//! - **Rejected by `ptxas`** (its log names `ptxas`): the front end accepted the program, and
//!   `ptxas` sees the same PTX with or without the flag, so the failure is the configuration's
//!   own (too much shared memory, say). Returned as it is, not compiled again.
//! - **Any other failure:** compiled again without the flag. If that compiles, the source is
//!   remembered as needing the full language and this process compiles it without the flag
//!   from then on; if it fails too, the second failure is the configuration's.
//!
//! It is not tried with an older NVRTC, when the source's options already hold `-minimal` or
//! `--minimal`, or with `TUNABLE_NVRTC_MINIMAL=off` (read at each compilation; another value
//! than `on` or `off` fails the compilation and the backend's constructor with
//! [`CudaError::BadSetting`]). Builds kept on
//! disk ([`super::build_cache`]) are keyed without the flag: the output is the same.

use super::error::CudaError;
use super::nvrtc::{Failure, Output};
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

/// The flag.
pub(crate) const FLAG: &str = "-minimal";
/// The variable that turns it off.
pub(crate) const VAR: &str = "TUNABLE_NVRTC_MINIMAL";
/// The first NVRTC version that accepts it.
pub(crate) const SINCE: (u32, u32) = (12, 4);

/// Sources (by a hash of their code) that compiled only without the flag in this process.
static FULL: LazyLock<Mutex<HashSet<u64>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// Whether the source whose code hashes to `source` compiled only without the flag in this
/// process.
pub(crate) fn needs_full(source: u64) -> bool {
    FULL.lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&source)
}

/// Whether the setting ([`VAR`]) lets the flag be tried, or the backend's error for a value it
/// does not take.
pub(crate) fn setting() -> Result<bool, CudaError> {
    crate::settings::nvrtc_minimal().map_err(|value| CudaError::BadSetting {
        name: VAR,
        value,
        expected: "on or off",
    })
}

/// Whether a compilation with `options` by NVRTC `version` tries the flag, given the setting
/// (`TUNABLE_NVRTC_MINIMAL` on or off).
pub(crate) fn wanted(version: (u32, u32), options: &[String], on: bool) -> bool {
    on && version >= SINCE && !options.iter().any(|o| o == FLAG || o == "--minimal")
}

/// Whether a failure under the flag calls for a compilation without it: anything but a
/// rejection by `ptxas`, whose input the flag does not change.
pub(crate) fn retry(failure: &Failure) -> bool {
    !(failure.rejected && failure.message.contains("ptxas"))
}

/// Compiles a source whose code hashes to `source` (its FNV-1a) with `build`, which compiles
/// with the flag (`true`) or without it, following the rules of the module docs; `try_flag` is
/// [`wanted`]'s answer before the source's history is known.
pub(crate) fn compile(
    source: u64,
    try_flag: bool,
    build: impl Fn(bool) -> Result<Output, Failure>,
) -> Result<Output, Failure> {
    let full = || FULL.lock().unwrap_or_else(|e| e.into_inner());
    if !try_flag || full().contains(&source) {
        return build(false);
    }
    match build(true) {
        Ok(out) => Ok(out),
        Err(failure) if !retry(&failure) => Err(failure),
        Err(_) => {
            let out = build(false)?;
            full().insert(source);
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn ok(tag: &str) -> Result<Output, Failure> {
        Ok(Output {
            ptx: tag.as_bytes().to_vec(),
            cubin: None,
            log: String::new(),
        })
    }

    fn failed(message: &str) -> Result<Output, Failure> {
        Err(Failure {
            message: message.to_owned(),
            rejected: true,
        })
    }

    /// Runs [`compile`] with a build that answers `with` under the flag and `without` without
    /// it, returning the result's PTX (or failure message) and the flags asked for, in order.
    fn run(
        source: u64,
        try_flag: bool,
        with: fn() -> Result<Output, Failure>,
        without: fn() -> Result<Output, Failure>,
    ) -> (String, Vec<bool>) {
        let asked = RefCell::new(Vec::new());
        let out = compile(source, try_flag, |flag| {
            asked.borrow_mut().push(flag);
            if flag { with() } else { without() }
        });
        let out = match out {
            Ok(o) => String::from_utf8(o.ptx).unwrap(),
            Err(f) => f.message,
        };
        (out, asked.into_inner())
    }

    #[test]
    fn the_flag_is_wanted_from_nvrtc_12_4_unless_off_or_given() {
        let none: &[String] = &[];
        assert!(wanted((12, 4), none, true));
        assert!(wanted((13, 0), &["-DTILE=4".into()], true));
        assert!(!wanted((12, 3), none, true));
        assert!(!wanted((11, 8), none, true));
        assert!(!wanted((12, 9), none, false));
        for given in [FLAG, "--minimal"] {
            assert!(!wanted((12, 9), &[given.to_owned()], true));
        }
    }

    #[test]
    fn a_build_under_the_flag_is_the_build() {
        let (out, asked) = run(1, true, || ok("minimal"), || ok("full"));
        assert_eq!((out.as_str(), asked), ("minimal", vec![true]));
        let (out, asked) = run(2, false, || ok("minimal"), || ok("full"));
        assert_eq!((out.as_str(), asked), ("full", vec![false]));
    }

    #[test]
    fn a_ptxas_rejection_is_the_configurations_own_and_not_compiled_again() {
        let (out, asked) = run(
            3,
            true,
            || failed("ptxas error   : Entry function 'k' uses too much shared data"),
            || ok("full"),
        );
        assert_eq!(asked, vec![true]);
        assert!(out.contains("too much shared data"), "{out}");
    }

    #[test]
    fn a_source_that_needs_the_full_language_is_compiled_without_the_flag_from_then_on() {
        let source = 4;
        let needs_full = || failed("error: identifier \"cudaTextureObject_t\" is undefined");
        let (out, asked) = run(source, true, needs_full, || ok("full"));
        assert_eq!((out.as_str(), asked), ("full", vec![true, false]));
        // Remembered: the next configuration of the source goes straight to the full language.
        let (out, asked) = run(source, true, || ok("minimal"), || ok("full"));
        assert_eq!((out.as_str(), asked), ("full", vec![false]));
    }

    #[test]
    fn a_failure_both_ways_is_the_full_languages_and_teaches_nothing() {
        let source = 5;
        let (out, asked) = run(
            source,
            true,
            || failed("static assertion failed (minimal)"),
            || failed("static assertion failed (full)"),
        );
        assert_eq!(
            (out.as_str(), asked),
            ("static assertion failed (full)", vec![true, false])
        );
        // Not remembered: the source's next configuration tries the flag again.
        let (_, asked) = run(source, true, || ok("minimal"), || ok("full"));
        assert_eq!(asked, vec![true]);
    }

    #[test]
    fn a_failure_other_than_a_rejection_is_compiled_again() {
        let unknown_option = || {
            Err(Failure {
                message: "NVRTC_ERROR_INVALID_OPTION".into(),
                rejected: false,
            })
        };
        let (out, asked) = run(6, true, unknown_option, || ok("full"));
        assert_eq!((out.as_str(), asked), ("full", vec![true, false]));
    }
}
