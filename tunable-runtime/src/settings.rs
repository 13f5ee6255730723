//! # Settings from the environment
//!
//! - `TUNABLE_MODE=off|tune|retune` (with the `autotune` feature): `off` never tunes (baked or
//!   default configurations only), `tune` (the default) tunes what has no stored configuration,
//!   `retune` tunes again even where one is stored. Any other value is an error
//!   ([`RuntimeError::BadSetting`]): a tuning build panics with it at its first tunable call
//!   rather than guess what was meant.
//! - `TUNABLE_DIR`: the folder of tuned files (default `tuned/` in the crate).
//! - `TUNABLE_LOG=1`: print every evaluation while tuning.
//! - `TUNABLE_BUDGET`, `TUNABLE_STRATEGY`: override the attribute's `budget` and `strategy`.
//! - `TUNABLE_BATCH`: configurations the strategy is asked for at a time (default: sized by the
//!   compile/measure ratio the tuner observes, up to one per core on a GPU, 1 for a kernel with
//!   nothing to compile and on a CPU device; the
//!   strategies' scores in the README were measured with 1).
//! - `TUNABLE_TIMEOUT`: the default time limit of one GPU launch in seconds (default none); a
//!   launch that exceeds it is a failed configuration (see [`crate::backend`]).

use crate::RuntimeError;

/// What to do with an untuned (or tuned) call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Never tune.
    Off,
    /// Tune what has no stored configuration.
    Tune,
    /// Tune even what has one.
    Retune,
}

impl Mode {
    /// The values `TUNABLE_MODE` accepts.
    pub const NAMES: [&str; 3] = ["off", "tune", "retune"];
}

impl std::str::FromStr for Mode {
    type Err = RuntimeError;

    fn from_str(s: &str) -> Result<Self, RuntimeError> {
        match s {
            "off" => Ok(Mode::Off),
            "tune" => Ok(Mode::Tune),
            "retune" => Ok(Mode::Retune),
            other => Err(RuntimeError::BadSetting {
                name: "TUNABLE_MODE",
                value: other.to_owned(),
                expected: Mode::NAMES.join(", "),
            }),
        }
    }
}

/// The mode from `TUNABLE_MODE` (`Tune` if unset); an unknown value is an error naming the valid
/// ones.
///
/// ```
/// use tunable_runtime::settings::Mode;
///
/// assert_eq!("retune".parse::<Mode>().unwrap(), Mode::Retune);
/// let e = "Off".parse::<Mode>().unwrap_err();
/// assert_eq!(e.to_string(), "TUNABLE_MODE=\"Off\" is not valid; expected one of: off, tune, retune");
/// ```
pub fn mode() -> Result<Mode, RuntimeError> {
    match std::env::var("TUNABLE_MODE") {
        Ok(v) => v.parse(),
        Err(std::env::VarError::NotPresent) => Ok(Mode::Tune),
        Err(std::env::VarError::NotUnicode(v)) => Err(RuntimeError::BadSetting {
            name: "TUNABLE_MODE",
            value: v.to_string_lossy().into_owned(),
            expected: Mode::NAMES.join(", "),
        }),
    }
}

/// A number from an environment variable, if set and valid.
pub fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The default time limit of one GPU launch: `TUNABLE_TIMEOUT` in seconds (none if unset, zero,
/// or not a positive number).
pub fn launch_timeout() -> Option<std::time::Duration> {
    std::env::var("TUNABLE_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(std::time::Duration::from_secs_f64)
}
