//! # Clock control
//!
//! A tuning whose space has clock parameters (`nvml_gr_clock`, `nvml_mem_clock`,
//! `nvml_pwr_limit`; see [`tunable_search::clock`]) changes the GPU's settings: before each
//! configuration is measured, its clocks and power limit are applied; when the tuning ends, the
//! settings in force before it are put back. Only tuning does this: a shipped build never
//! changes a clock, and exposes the tuned ones for an operator to apply (`<kernel>_config`,
//! [`crate::choice::Choice::clocks`], `cargo tunable show`).
//!
//! - [`ClockControl`] is what sets and reads a device's settings: `Nvml` on an NVIDIA GPU
//!   (feature `cuda`), `Fake` in tests. Nothing selects the fake for a real run.
//! - [`Guard`] holds a tuning's changes: opening it reads the settings in force ([`Previous`])
//!   and checks that this process may change them, so that a tuning without the rights fails
//!   before it evaluates anything ([`ClockError::NoPermission`], which says how to get them);
//!   dropping it restores them, also when a panic unwinds through the tuning. While a guard is
//!   open, Ctrl-C (SIGINT, on Unix) restores the settings before the process ends.
//!
//! ## Which NVML settings
//!
//! | parameter | NVML | nvidia-smi |
//! | --- | --- | --- |
//! | `nvml_gr_clock` (MHz) | locked graphics clock (Volta and newer), else application clocks | `-lgc MHz,MHz` / `-ac MEM,GR` |
//! | `nvml_mem_clock` (MHz) | locked memory clock (Ampere and newer), else application clocks | `-lmc MHz,MHz` / `-ac MEM,GR` |
//! | `nvml_pwr_limit` (W) | power-management limit | `-pl W` |
//!
//! Every one needs root (NVML answers `NVML_ERROR_NO_PERMISSION` to anyone else). Application
//! clocks alone can be opened to other users by an administrator on the GPUs and drivers that
//! still support it (`nvidia-smi -acp UNRESTRICTED`), and hold between processes only in
//! persistence mode (`nvidia-smi -pm 1`). NVML reports application clocks and the power limit
//! in force, which are restored as they were; it does not report locked clocks, so a tuning
//! that locks clocks unlocks them when it ends (`nvidia-smi -rgc` / `-rmc`).

mod error;
#[doc(hidden)]
pub mod fake;
mod guard;
#[cfg(unix)]
mod interrupt;
#[cfg(feature = "cuda")]
mod nvml;

pub use error::{ClockError, Rights};
#[doc(hidden)]
pub use fake::Fake;
pub use guard::Guard;
#[cfg(feature = "cuda")]
pub use nvml::Nvml;
pub use tunable_search::clock::{Knob, Setting};

use std::fmt;

/// What sets and reads one device's clocks and power limit.
///
/// A tuning reads the settings in force first ([`read`](Self::read)), checks its rights
/// ([`check`](Self::check)), applies each configuration's [`Setting`] before measuring it
/// ([`apply`](Self::apply)), and puts the settings read back when it ends
/// ([`restore`](Self::restore)); [`Guard`] does this in that order. Implementations are shared
/// with the Ctrl-C handler's thread, hence `Send + Sync` and `&self`.
pub trait ClockControl: Send + Sync + fmt::Debug {
    /// What it controls, for messages: `NVML clocks of NVIDIA H100 (0000:3b:00.0)`.
    fn name(&self) -> String;

    /// The settings of `knobs` in force now, before anything is changed: what
    /// [`restore`](Self::restore) puts back.
    fn read(&self, knobs: &[Knob]) -> Result<Previous, ClockError>;

    /// Whether this process may change what `previous` covers, checked without changing
    /// anything that restoring would not undo; [`ClockError::NoPermission`] if not.
    fn check(&self, previous: &Previous) -> Result<(), ClockError>;

    /// Applies `setting`; knobs it leaves out keep the values of `previous`. An error is the
    /// configuration's (a clock the device does not support, say), except
    /// [`ClockError::NoPermission`].
    fn apply(&self, setting: &Setting, previous: &Previous) -> Result<(), ClockError>;

    /// Puts `previous` back.
    fn restore(&self, previous: &Previous) -> Result<(), ClockError>;
}

/// The settings in force before a tuning changed any, as restoring them needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Previous {
    /// How the clocks are set and what was in force (`None`: no clock is tuned).
    pub clocks: Option<ClockMode>,
    /// The power limit in force, in milliwatts (`None`: the power limit is not tuned).
    pub power_limit_mw: Option<u32>,
}

/// How a device's clocks are set while tuning, and what restoring them means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMode {
    /// Application clocks: these were in force, and are set again at the end.
    Application {
        /// The graphics clock, in MHz.
        graphics_mhz: u32,
        /// The memory clock, in MHz.
        memory_mhz: u32,
    },
    /// Locked clocks, graphics and, where `memory` is true, memory: NVML does not report locks
    /// in force, so restoring resets them (unlocked).
    Locked {
        /// Whether the memory clock is locked too (Ampere and newer).
        memory: bool,
    },
}

/// The control of CUDA device `ordinal`'s clocks through NVML, the device at the CUDA device's
/// PCI bus id (as for its meter, [`crate::meter::for_cuda_device`]). Opening it changes nothing.
#[cfg(feature = "cuda")]
pub fn for_cuda_device(ordinal: usize) -> Result<std::sync::Arc<dyn ClockControl>, ClockError> {
    Ok(std::sync::Arc::new(Nvml::for_cuda_device(ordinal)?))
}
