//! # Settings from the environment
//!
//! - `TUNABLE_MODE=off|tune|retune` (with the `autotune` feature): `off` never tunes (baked or
//!   default configurations only), `tune` (the default) tunes what has no stored configuration,
//!   `retune` tunes again even where one is stored.
//! - `TUNABLE_DIR`: the folder of tuned files (default `tuned/` in the crate).
//! - `TUNABLE_LOG=1`: print every evaluation while tuning.
//! - `TUNABLE_BUDGET`, `TUNABLE_STRATEGY`: override the attribute's `budget` and `strategy`.
//! - `TUNABLE_TIMEOUT`: the default time limit of one GPU launch in seconds (default none); a
//!   launch that exceeds it is a failed configuration (see [`crate::backend`]).

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

/// The mode from `TUNABLE_MODE` (unknown values: `Tune`, with a warning).
pub fn mode() -> Mode {
    match std::env::var("TUNABLE_MODE").as_deref() {
        Ok("off") => Mode::Off,
        Ok("retune") => Mode::Retune,
        Ok("tune") | Err(_) => Mode::Tune,
        Ok(other) => {
            eprintln!("tunable: TUNABLE_MODE={other:?} is not off, tune or retune; using tune");
            Mode::Tune
        }
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
