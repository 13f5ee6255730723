//! # CUDA errors
//!
//! Every way a CUDA variant can fail, each naming the configuration at fault: returned from a
//! `#[tunable]` body it becomes a failed configuration with this message as its reason.
//! [`CudaError::MissingLibrary`], [`CudaError::NoDevice`] and the bad settings
//! ([`CudaError::BadTimeout`], [`CudaError::BadSetting`]) come from the constructor (or from
//! [`super::compile`]), before any configuration runs.

use std::time::Duration;

/// A failure of the CUDA backend.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// `TUNABLE_TIMEOUT` holds something other than a number of seconds (zero or more).
    #[error("TUNABLE_TIMEOUT={value:?} is not valid; expected a number of seconds, 0 or more")]
    BadTimeout {
        /// The variable's value.
        value: String,
    },
    /// A setting the backend reads (`TUNABLE_NVRTC_MINIMAL`; `TUNABLE_NVRTC_BATCH`, no longer read, set at all) holds a
    /// value it does not take.
    #[error("{name}={value:?} is not valid; expected {expected}")]
    BadSetting {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it takes (`on or off`, `a whole number from 1`).
        expected: &'static str,
    },
    /// The CUDA driver or NVRTC library could not be loaded.
    #[error("CUDA is not available: cannot load {library} ({hint})")]
    MissingLibrary {
        /// The library looked for.
        library: &'static str,
        /// Where it was looked for, and how to provide it.
        hint: String,
    },
    /// No device with that ordinal, or the driver has none.
    #[error("no CUDA device: {reason}")]
    NoDevice {
        /// The driver's answer.
        reason: String,
    },
    /// A driver call outside any configuration failed (allocation, copy, device query).
    #[error("CUDA {call} failed: {code}")]
    Api {
        /// The driver function.
        call: &'static str,
        /// The error code's name.
        code: String,
    },
    /// The build was handed over to the tuner's compile pool ([`crate::prebuild`]): the tuner is
    /// collecting a batch, nothing ran.
    #[error("[{config}] is being prebuilt")]
    Deferred {
        /// The configuration.
        config: String,
    },
    /// A parameter value cannot be passed as `-DNAME=value`.
    #[error("[{config}] cannot be compiled: {reason}")]
    Definition {
        /// The configuration.
        config: String,
        /// Which value, and why.
        reason: String,
    },
    /// NVRTC rejected the source in this configuration (including `ptxas` resource errors such
    /// as too much shared memory when compiling for a real architecture `sm_XY`).
    #[error("[{config}] does not compile: {log}")]
    Compile {
        /// The configuration.
        config: String,
        /// NVRTC's log (or its error code if the log is empty).
        log: String,
    },
    /// The compiled module has no kernel of that name (it must be `extern "C"`).
    #[error("[{config}] has no kernel `{kernel}` (is it `extern \"C\" __global__`?): {code}")]
    NoKernel {
        /// The configuration.
        config: String,
        /// The entry point looked for.
        kernel: String,
        /// The driver's error, or what the PTX holds.
        code: String,
    },
    /// The driver could not load the compiled module.
    #[error("[{config}] module load failed: {code}")]
    ModuleLoad {
        /// The configuration.
        config: String,
        /// The error code's name.
        code: String,
    },
    /// The grid or the block is empty.
    #[error("[{config}] {reason}")]
    EmptyLaunch {
        /// The configuration.
        config: String,
        /// The dimensions.
        reason: String,
    },
    /// The block has more threads than this kernel can run per block (its registers included).
    #[error(
        "[{config}] block of {threads} threads {block:?} exceeds this kernel's maximum of {max} \
         threads per block on this device"
    )]
    TooManyThreads {
        /// The configuration.
        config: String,
        /// The block dimensions.
        block: Vec<usize>,
        /// Their product.
        threads: usize,
        /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
        max: usize,
    },
    /// A block or grid dimension exceeds the device's maximum.
    #[error("[{config}] {what} dimension {dim} is {size}; the device allows at most {max}")]
    Dimension {
        /// The configuration.
        config: String,
        /// `block` or `grid`.
        what: &'static str,
        /// The dimension (0 = x).
        dim: usize,
        /// The requested size.
        size: usize,
        /// The device's maximum.
        max: usize,
    },
    /// Static plus dynamic shared memory exceeds what a block may use on this device.
    #[error(
        "[{config}] uses {used} bytes of shared memory per block; the device allows {available}"
    )]
    SharedMemory {
        /// The configuration.
        config: String,
        /// Static (from the kernel) plus dynamic (from the launch) bytes.
        used: usize,
        /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
        available: usize,
    },
    /// The launch was rejected (e.g. `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`).
    #[error("[{config}] launch failed: {code}")]
    Launch {
        /// The configuration.
        config: String,
        /// The error code's name.
        code: String,
    },
    /// The kernel started but failed (e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`, which leaves the
    /// context unusable: later variants fail too).
    #[error("[{config}] kernel execution failed: {code}")]
    Execution {
        /// The configuration.
        config: String,
        /// The error code's name.
        code: String,
    },
    /// The kernel ran longer than the time limit.
    #[error("[{config}] timed out: still running after {limit:?}")]
    Timeout {
        /// The configuration.
        config: String,
        /// The limit.
        limit: Duration,
    },
}
