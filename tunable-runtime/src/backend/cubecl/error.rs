//! # CubeCL errors
//!
//! Every way a CubeCL variant can fail, each naming the configuration at fault
//! ([`crate::params::Params::describe`]): returned from a `#[tunable]` body, it becomes a failed
//! configuration with this message as its reason. [`CubeclError::Adapter`] and
//! [`CubeclError::Runtime`] come from the constructor, before any configuration runs.

use crate::backend::wgpu::WgpuError;

/// A failure of the CubeCL backend.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CubeclError {
    /// No wgpu adapter, not the one `TUNABLE_WGPU_ADAPTER` asks for, or no device on it (the
    /// wgpu backend's choice of adapter, shared).
    #[error(transparent)]
    Adapter(#[from] WgpuError),
    /// CubeCL's wgpu runtime refused the device.
    #[error("CubeCL cannot run on {adapter}: {reason}")]
    Runtime {
        /// The adapter's name.
        adapter: String,
        /// What CubeCL said.
        reason: String,
    },
    /// The `CubeDim` or `CubeCount` of the configuration exceeds the device's limits: checked
    /// before the launch, so nothing reached the device.
    #[error("[{config}] {reason}")]
    Limit {
        /// The configuration.
        config: String,
        /// Which limit, the value asked for and the device's.
        reason: String,
    },
    /// The kernel did not compile or launch: its expansion panicked, the compiler or the driver
    /// refused it, or the launch failed on the device (CubeCL's message, which tells which).
    #[error("[{config}] {reason}")]
    Launch {
        /// The configuration.
        config: String,
        /// What CubeCL said.
        reason: String,
    },
    /// A read or write of a buffer failed (outside any configuration's launch).
    #[error("CubeCL {call} failed: {reason}")]
    Api {
        /// What was done.
        call: &'static str,
        /// What CubeCL said.
        reason: String,
    },
}
