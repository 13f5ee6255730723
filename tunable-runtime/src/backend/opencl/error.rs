//! # OpenCL errors
//!
//! Every way an OpenCL variant can fail, each naming the configuration at fault
//! ([`crate::params::Params::describe`]): returned from a `#[tunable]` body, it becomes a failed
//! configuration with this message as its reason. [`OpenClError::MissingLibrary`] and
//! [`OpenClError::NoDevice`] come from the constructor, before any configuration runs.

use std::time::Duration;

/// A failure of the OpenCL backend.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenClError {
    /// `TUNABLE_TIMEOUT` holds something other than a number of seconds (zero or more).
    #[error("TUNABLE_TIMEOUT={value:?} is not valid; expected a number of seconds, 0 or more")]
    BadTimeout {
        /// The variable's value.
        value: String,
    },
    /// The OpenCL ICD loader could not be loaded.
    #[error(
        "OpenCL is not available: cannot load {library} (install an ICD loader such as \
         ocl-icd-libopencl1 and a driver such as pocl-opencl-icd, or set OPENCL_DYLIB_PATH)"
    )]
    MissingLibrary {
        /// The library that was looked for.
        library: &'static str,
    },
    /// No platform or no device, or the requested one does not exist.
    #[error("no OpenCL device: {reason}")]
    NoDevice {
        /// What was found instead.
        reason: String,
    },
    /// An OpenCL call outside any configuration failed (allocation, copy, device query).
    #[error("OpenCL {call} failed: {code}")]
    Api {
        /// The OpenCL function.
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
    /// The kernel does not compile in this configuration.
    #[error("[{config}] does not compile: {log}")]
    Build {
        /// The configuration.
        config: String,
        /// The compiler's build log (or the error code if the log is empty).
        log: String,
    },
    /// The program has no kernel of that name.
    #[error("[{config}] has no kernel `{kernel}`: {code}")]
    NoKernel {
        /// The configuration.
        config: String,
        /// The entry point looked for.
        kernel: String,
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
    /// A block dimension exceeds the device's maximum work-item size in that dimension.
    #[error(
        "[{config}] work-group size {size} in dimension {dim} exceeds the device's maximum {max}"
    )]
    WorkItemSize {
        /// The configuration.
        config: String,
        /// The dimension (0 = x).
        dim: usize,
        /// The requested size.
        size: usize,
        /// The device's maximum.
        max: usize,
    },
    /// The block has more work-items than the kernel can run in one work-group on this device.
    #[error(
        "[{config}] work-group of {threads} work-items {block:?} exceeds the maximum work-group \
         size {max} of this kernel on this device"
    )]
    WorkGroupTooLarge {
        /// The configuration.
        config: String,
        /// The block dimensions.
        block: Vec<usize>,
        /// Their product.
        threads: usize,
        /// The kernel's `CL_KERNEL_WORK_GROUP_SIZE` (at most the device's maximum).
        max: usize,
    },
    /// The kernel needs more local memory than the device has.
    #[error("[{config}] uses {used} bytes of local memory; the device has {available}")]
    LocalMemory {
        /// The configuration.
        config: String,
        /// `CL_KERNEL_LOCAL_MEM_SIZE` with the arguments set.
        used: u64,
        /// `CL_DEVICE_LOCAL_MEM_SIZE`.
        available: u64,
    },
    /// The number of arguments given differs from the kernel's.
    #[error("[{config}] kernel `{kernel}` takes {expected} arguments, {given} given")]
    Arguments {
        /// The configuration.
        config: String,
        /// The entry point.
        kernel: String,
        /// `CL_KERNEL_NUM_ARGS`.
        expected: usize,
        /// Arguments given.
        given: usize,
    },
    /// Setting an argument or enqueueing the kernel failed.
    #[error("[{config}] launch failed: {call}: {code}")]
    Launch {
        /// The configuration.
        config: String,
        /// The OpenCL function.
        call: &'static str,
        /// The error code's name (e.g. `CL_INVALID_WORK_GROUP_SIZE`, `CL_OUT_OF_RESOURCES`).
        code: String,
    },
    /// The kernel started but ended abnormally.
    #[error("[{config}] kernel execution failed: {code}")]
    Execution {
        /// The configuration.
        config: String,
        /// The event status or error code.
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
