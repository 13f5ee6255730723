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
//! - `TUNABLE_SEED`: the strategy's seed, a whole number; overrides the attribute's `seed`
//!   (default 1, [`tunable_search::defaults::SEED`]). Two tunings of a kernel with the same seed
//!   ask for the same configurations in the same order, apart from what timing noise changes in
//!   the results the strategy learns from ([`seed`]).
//! - `TUNABLE_BATCH`: configurations the strategy is asked for at a time (default 1); a batch
//!   of `N` of a GPU kernel is prebuilt on a pool of threads while it is timed (the strategies'
//!   scores in `docs/results.md` were measured one at a time).
//! - `TUNABLE_PREBUILD=on|off`: whether the configurations the strategy expects to ask next are
//!   prebuilt speculatively on a pool of threads (default `off`; a GPU kernel, never on a CPU
//!   device); it never changes which configurations are evaluated ([`prebuild`]).
//! - `TUNABLE_OBJECTIVE`: what tuning pursues, one objective or several separated by commas
//!   (`time`, `energy`, `edp`, or a metric of the kernel's with its direction, `max
//!   gflops_per_watt`; `time,energy` keeps their front); overrides the attribute's
//!   `objective` or `objectives` (default `time`). An objective that needs energy fails before
//!   any evaluation where no meter can read ([`objective`]).
//! - `TUNABLE_PREFER`: the rule that chooses the shipped point of a front, `fastest`,
//!   `least_energy within 1.10 of fastest`; overrides the attribute's `prefer` ([`prefer`]).
//! - `TUNABLE_ENERGY_SECONDS`: how long, in seconds, the repeated runs of one configuration's
//!   energy measurement last at least (default 1, [`crate::meter::MIN_DURATION`];
//!   [`energy_seconds`]).
//! - `TUNABLE_TIMEOUT`: the default time limit of one GPU launch in seconds (default none); a
//!   launch that exceeds it is a failed configuration (see [`crate::backend`]). Any other value
//!   than a number of seconds makes the backends' constructors fail (`BadTimeout`).
//! - `TUNABLE_EMBEDDED=on|off`: whether the GPU backends load the device binaries embedded for
//!   the baked configurations (default `on`); `off` compiles every kernel from its source (see
//!   [`crate::backend::embedded`]).
//! - `TUNABLE_NVRTC_MINIMAL=on|off`: whether the CUDA backend compiles with NVRTC's `-minimal`
//!   first (default `on`; a source that needs the full language is compiled again without it;
//!   see `backend::cuda`, with the feature `cuda`). Another value makes the CUDA backend's
//!   constructor and compilation fail (`BadSetting`).
//! - `TUNABLE_BUILD_CACHE=FOLDER|off`: where the CUDA backend keeps NVRTC's builds across
//!   processes (default `$XDG_CACHE_HOME/tunable/cuda`, else `$HOME/.cache/tunable/cuda`); `off`
//!   compiles every configuration each process evaluates (see `backend::cuda::build_cache`, with
//!   the feature `cuda`).
//! - `TUNABLE_DEVICE`: the identity the CPU device takes (see [`crate::device`]).
//! - `TUNABLE_EVALUATE`: set by a distributed worker, measure one configuration of one call and
//!   tune nothing (see [`crate::tuner::evaluate`]).
//! - `TUNABLE_KERNELS`, `TUNABLE_TIME`, `TUNABLE_REPORT`: set by `cargo tunable tune` (see
//!   [`crate::tuner::session`]).
//!
//! A number setting that does not parse is an error naming the variable
//! ([`RuntimeError::BadNumber`]), never silently ignored: a tuning build panics with it at its
//! first tunable call, as for an unknown mode.

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

/// A whole number from the environment variable `name`: `None` if unset, an error naming the
/// variable if set to anything but a whole number (surrounding spaces allowed).
///
/// ```
/// use tunable_runtime::settings::env_usize;
///
/// assert_eq!(env_usize("TUNABLE_DOC_UNSET").unwrap(), None);
/// // SAFETY of the example: no other thread reads the environment.
/// unsafe { std::env::set_var("TUNABLE_DOC_BUDGET", "ten") };
/// let e = env_usize("TUNABLE_DOC_BUDGET").unwrap_err();
/// assert_eq!(e.to_string(), "TUNABLE_DOC_BUDGET=\"ten\" is not valid; expected a whole number");
/// ```
pub fn env_usize(name: &'static str) -> Result<Option<usize>, RuntimeError> {
    whole_number(name, std::env::var_os(name).as_deref())
}

/// The variable [`seed`] reads.
pub const SEED_VAR: &str = "TUNABLE_SEED";

/// The strategy's seed from `TUNABLE_SEED`: `None` if unset (the attribute's `seed` applies,
/// default [`tunable_search::defaults::SEED`]), an error naming the variable if set to anything
/// but a whole number.
///
/// A strategy is deterministic for its seed: two tunings of a kernel with the same seed ask for
/// the same configurations in the same order, as long as they measure the same results. Timing
/// noise can still change a result, and a strategy that learns from results (`auto`, `bayes`,
/// the population strategies) then asks for something else from there on; `random` and
/// `exhaustive` never do. The strategy must also be asked for the same number of
/// configurations at a time (`TUNABLE_BATCH`). A stored journal answers what it holds in
/// either run, so it changes nothing in the choices.
///
/// ```
/// use tunable_runtime::settings::{SEED_VAR, seed};
///
/// // SAFETY of the example: no other thread reads the environment.
/// unsafe { std::env::set_var(SEED_VAR, " 42 ") };
/// assert_eq!(seed().unwrap(), Some(42));
/// unsafe { std::env::set_var(SEED_VAR, "-1") };
/// let e = seed().unwrap_err();
/// assert_eq!(e.to_string(), "TUNABLE_SEED=\"-1\" is not valid; expected a whole number");
/// ```
pub fn seed() -> Result<Option<u64>, RuntimeError> {
    whole_number(SEED_VAR, std::env::var_os(SEED_VAR).as_deref())
}

/// `raw`, the value of the variable `name`, as a whole number (surrounding spaces allowed):
/// `None` if unset, an error naming the variable otherwise.
fn whole_number<T: std::str::FromStr>(
    name: &'static str,
    raw: Option<&std::ffi::OsStr>,
) -> Result<Option<T>, RuntimeError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let bad = || RuntimeError::BadNumber {
        name,
        value: raw.to_string_lossy().into_owned(),
        expected: "a whole number",
    };
    let text = raw.to_str().ok_or_else(bad)?;
    text.trim().parse().map(Some).map_err(|_| bad())
}

/// The default time limit of one GPU launch: `TUNABLE_TIMEOUT` in seconds (none if unset or
/// zero). `Err` holds the value when it is anything but a number of seconds (zero or more):
/// the backends' constructors refuse it rather than run without the limit that was asked for.
pub fn launch_timeout() -> Result<Option<std::time::Duration>, String> {
    std::env::var_os(TIMEOUT_VAR).map_or(Ok(None), |raw| timeout_of(&raw))
}

/// The time limit `raw` (seconds) stands for; `Err` with the value if it is not a number of
/// seconds, zero or more.
fn timeout_of(raw: &std::ffi::OsStr) -> Result<Option<std::time::Duration>, String> {
    let seconds = raw
        .to_str()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| raw.to_string_lossy().into_owned())?;
    Ok((seconds > 0.0).then(|| std::time::Duration::from_secs_f64(seconds)))
}

/// The variable [`launch_timeout`] reads.
pub const TIMEOUT_VAR: &str = "TUNABLE_TIMEOUT";

/// Whether the GPU backends load embedded device binaries: `TUNABLE_EMBEDDED` is `on` (the
/// default when unset) or `off` (compile every kernel from its source).
///
/// # Panics
/// If `TUNABLE_EMBEDDED` holds another value: the message names the valid ones, rather than
/// guess whether binaries were wanted.
pub fn embedded_binaries() -> bool {
    switch("TUNABLE_EMBEDDED")
}

/// Whether the CUDA backend tries NVRTC's `-minimal` first: `TUNABLE_NVRTC_MINIMAL` is `on`
/// (the default when unset) or `off` (see `backend::cuda`'s compilation, with the feature
/// `cuda`); another value is returned as the error. The CUDA backend's constructor and its
/// compilation refuse it (`CudaError::BadSetting`) rather than guess.
pub fn nvrtc_minimal() -> Result<bool, String> {
    switch_of("TUNABLE_NVRTC_MINIMAL")
}

/// The variable [`prebuild`] reads.
pub const PREBUILD_VAR: &str = "TUNABLE_PREBUILD";

/// Whether the tuner prebuilds speculatively (see [`crate::prebuild`]): `TUNABLE_PREBUILD` is
/// `on` or `off` (the default when unset); another value is an error naming the valid ones.
///
/// ```
/// use tunable_runtime::settings::{PREBUILD_VAR, prebuild};
///
/// // SAFETY of the example: no other thread reads the environment.
/// unsafe { std::env::remove_var(PREBUILD_VAR) };
/// assert!(!prebuild().unwrap());
/// unsafe { std::env::set_var(PREBUILD_VAR, "on") };
/// assert!(prebuild().unwrap());
/// unsafe { std::env::set_var(PREBUILD_VAR, "yes") };
/// assert!(prebuild().is_err());
/// ```
pub fn prebuild() -> Result<bool, RuntimeError> {
    let raw = std::env::var_os(PREBUILD_VAR);
    match raw.as_deref().map(std::ffi::OsStr::to_str) {
        None | Some(Some("off")) => Ok(false),
        Some(Some("on")) => Ok(true),
        _ => Err(RuntimeError::BadSetting {
            name: PREBUILD_VAR,
            value: raw.unwrap_or_default().to_string_lossy().into_owned(),
            expected: "on, off".into(),
        }),
    }
}

/// The variable [`objective`] reads.
pub const OBJECTIVE_VAR: &str = "TUNABLE_OBJECTIVE";

/// The variable [`prefer`] reads.
pub const PREFER_VAR: &str = "TUNABLE_PREFER";

/// The objectives from `TUNABLE_OBJECTIVE`, separated by commas (`energy`, `time,energy`,
/// `max gflops_per_watt`): `None` if unset or blank (the attribute's `objective` or
/// `objectives` apply, default `time`). They are the attribute's words, measured objectives or
/// the kernel's metrics with a direction, and are checked against each kernel's goal when it
/// is tuned ([`Goal::with_objectives`](tunable_search::objective::Goal::with_objectives)):
/// a name the kernel does not know fails that tuning before any evaluation.
///
/// ```
/// use tunable_runtime::settings::{OBJECTIVE_VAR, objective};
///
/// // SAFETY of the example: no other thread reads the environment.
/// unsafe { std::env::set_var(OBJECTIVE_VAR, " time, energy ") };
/// assert_eq!(objective(), Some(vec!["time".to_owned(), "energy".to_owned()]));
/// unsafe { std::env::remove_var(OBJECTIVE_VAR) };
/// assert_eq!(objective(), None);
/// ```
pub fn objective() -> Option<Vec<String>> {
    let raw = std::env::var(OBJECTIVE_VAR).ok()?;
    let list: Vec<String> = tunable_search::objective::Goal::split(&raw)
        .into_iter()
        .map(str::to_owned)
        .collect();
    (!list.is_empty()).then_some(list)
}

/// The rule from `TUNABLE_PREFER` that chooses the shipped point of a front
/// ([`Prefer`](tunable_search::objective::Prefer): `fastest`, `least_energy within 1.10 of
/// fastest`): `None` if unset or blank (the attribute's `prefer` applies).
pub fn prefer() -> Option<String> {
    let raw = std::env::var(PREFER_VAR).ok()?;
    let raw = raw.trim();
    (!raw.is_empty()).then(|| raw.to_owned())
}

/// The variable [`energy_seconds`] reads.
pub const ENERGY_SECONDS_VAR: &str = "TUNABLE_ENERGY_SECONDS";

/// How long the repeated runs of one configuration's energy measurement last at least:
/// `TUNABLE_ENERGY_SECONDS` in seconds (a positive number), [`crate::meter::MIN_DURATION`] if
/// unset; an error naming the variable otherwise. Shorter windows hold fewer updates of a
/// coarse counter (NVML's: every 100 ms or so), and their readings are less certain.
pub fn energy_seconds() -> Result<std::time::Duration, RuntimeError> {
    let Some(raw) = std::env::var_os(ENERGY_SECONDS_VAR) else {
        return Ok(crate::meter::MIN_DURATION);
    };
    raw.to_str()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| RuntimeError::BadNumber {
            name: ENERGY_SECONDS_VAR,
            value: raw.to_string_lossy().into_owned(),
            expected: "a positive number of seconds",
        })
}

/// An `on`/`off` setting that is on when unset; panics naming the valid values otherwise.
fn switch(name: &'static str) -> bool {
    switch_of(name).unwrap_or_else(|value| {
        panic!(
            "tunable: {}",
            RuntimeError::BadSetting {
                name,
                value,
                expected: "on, off".into(),
            }
        )
    })
}

/// An `on`/`off` setting that is on when unset, or the value it holds otherwise.
fn switch_of(name: &'static str) -> Result<bool, String> {
    switch_value(std::env::var_os(name).as_deref())
}

/// [`switch_of`] on the variable's value (`None`: unset).
fn switch_value(raw: Option<&std::ffi::OsStr>) -> Result<bool, String> {
    match raw.map(|v| v.to_str()) {
        None | Some(Some("on")) => Ok(true),
        Some(Some("off")) => Ok(false),
        Some(_) => Err(raw.unwrap_or_default().to_string_lossy().into_owned()),
    }
}

#[cfg(test)]
mod switch_tests {
    use super::switch_value;
    use std::ffi::OsStr;

    #[test]
    fn a_switch_is_on_unset_or_on_off_when_off_and_refused_otherwise() {
        let of = |v: Option<&str>| switch_value(v.map(OsStr::new));
        assert_eq!(of(None), Ok(true));
        assert_eq!(of(Some("on")), Ok(true));
        assert_eq!(of(Some("off")), Ok(false));
        assert_eq!(of(Some("Off")), Err("Off".to_owned()));
        assert_eq!(of(Some("")), Err(String::new()));
    }
}

#[cfg(test)]
mod timeout_tests {
    use super::timeout_of;
    use std::ffi::OsStr;
    use std::time::Duration;

    #[test]
    fn a_timeout_is_seconds_zero_is_none_and_anything_else_is_refused() {
        assert_eq!(
            timeout_of(OsStr::new(" 0.25 ")),
            Ok(Some(Duration::from_millis(250)))
        );
        assert_eq!(timeout_of(OsStr::new("0")), Ok(None));
        for bad in ["ten", "-1", "inf", ""] {
            assert_eq!(timeout_of(OsStr::new(bad)), Err(bad.to_owned()), "{bad}");
        }
    }
}
