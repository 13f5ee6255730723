//! # wgpu errors
//!
//! Every way a wgpu variant can fail, each naming the configuration at fault
//! ([`crate::params::Params::describe`]): returned from a `#[tunable]` body, it becomes a failed
//! configuration with this message as its reason. [`WgpuError::NoAdapter`] and
//! [`WgpuError::NoDevice`] come from the constructor, before any configuration runs.

use std::time::Duration;

/// A failure of the wgpu backend.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WgpuError {
    /// `TUNABLE_TIMEOUT` holds something other than a number of seconds (zero or more).
    #[error("TUNABLE_TIMEOUT={value:?} is not valid; expected a number of seconds, 0 or more")]
    BadTimeout {
        /// The variable's value.
        value: String,
    },
    /// No adapter (Vulkan, Metal or DirectX 12 device) was found, or not the one asked for.
    #[error(
        "no wgpu adapter: {reason} (on Linux without a GPU, `apt-get install mesa-vulkan-drivers` \
         gives lavapipe, a Vulkan device on the CPU)"
    )]
    NoAdapter {
        /// What was found instead.
        reason: String,
    },
    /// The adapter refused to open a device with its own limits and the features asked for.
    #[error("wgpu cannot open a device on {adapter}: {reason}")]
    NoDevice {
        /// The adapter's name.
        adapter: String,
        /// What `request_device` said.
        reason: String,
    },
    /// A wgpu call outside any configuration failed (allocation, copy, read-back).
    #[error("wgpu {call} failed: {reason}")]
    Api {
        /// What was done.
        call: &'static str,
        /// What wgpu said.
        reason: String,
    },
    /// The build was handed over to the tuner's compile pool ([`crate::prebuild`]): the tuner is
    /// collecting a batch, nothing ran.
    #[error("[{config}] is being prebuilt")]
    Deferred {
        /// The configuration.
        config: String,
    },
    /// A parameter has no `override` declaration of the same name in the WGSL source.
    #[error(
        "[{config}] the WGSL source of `{entry}` declares no `override {name}` (declared: {declared}); \
         every tunable parameter must be a pipeline-overridable constant of the same name"
    )]
    NoOverride {
        /// The configuration.
        config: String,
        /// The entry point.
        entry: String,
        /// The parameter.
        name: String,
        /// The overrides the source declares, comma-separated.
        declared: String,
    },
    /// A parameter value cannot be given to its override (a string, a fraction for an integer
    /// override, a negative value for a `u32`, ...).
    #[error("[{config}] {reason}")]
    OverrideValue {
        /// The configuration.
        config: String,
        /// Which value, and why.
        reason: String,
    },
    /// The WGSL source does not compile (parse or validation error, with the diagnostics), or
    /// does not with these override values.
    #[error("[{config}] does not compile: {log}")]
    Build {
        /// The configuration.
        config: String,
        /// What naga or wgpu said.
        log: String,
    },
    /// The source has no compute entry point of that name.
    #[error("[{config}] the WGSL source has no compute entry point `{entry}`")]
    NoEntryPoint {
        /// The configuration.
        config: String,
        /// The entry point looked for.
        entry: String,
    },
    /// The variant's workgroup exceeds a limit of the device: wgpu does not check workgroup
    /// sizes set by overrides against the limits, so the backend does, before creating the
    /// pipeline (on a real GPU such a dispatch is undefined behaviour).
    #[error("[{config}] {what} is {value}; the device allows at most {max}")]
    Limit {
        /// The configuration.
        config: String,
        /// What exceeds the limit (`workgroup size x`, `invocations per workgroup`,
        /// `workgroup storage (bytes)`, `workgroups in dimension x`).
        what: String,
        /// The variant's value.
        value: u64,
        /// The device's limit.
        max: u64,
    },
    /// The dispatch's block differs from the workgroup size the shader was compiled with.
    #[error(
        "[{config}] the launch's block {block:?} differs from the shader's @workgroup_size {workgroup:?}"
    )]
    Workgroup {
        /// The configuration.
        config: String,
        /// The block of the launch's [`crate::backend::Dims`].
        block: [u32; 3],
        /// The entry point's workgroup size with this configuration's overrides.
        workgroup: [u32; 3],
    },
    /// The grid or the block is empty.
    #[error("[{config}] {reason}")]
    EmptyLaunch {
        /// The configuration.
        config: String,
        /// The dimensions.
        reason: String,
    },
    /// wgpu rejected the dispatch (bindings that do not match the shader's, a buffer of
    /// another device, ...), or the device ran out of memory.
    #[error("[{config}] launch failed: {reason}")]
    Launch {
        /// The configuration.
        config: String,
        /// What wgpu said.
        reason: String,
    },
    /// The device was lost (driver reset, out of resources, destroyed).
    #[error("[{config}] the device was lost: {reason}")]
    DeviceLost {
        /// The configuration.
        config: String,
        /// wgpu's reason.
        reason: String,
    },
    /// The dispatch ran longer than the time limit.
    #[error("[{config}] timed out: still running after {limit:?}")]
    Timeout {
        /// The configuration.
        config: String,
        /// The limit.
        limit: Duration,
    },
}
