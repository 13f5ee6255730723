//! # GPU backends
//!
//! A GPU kernel is tuned like a CPU kernel: a `#[tunable]` function whose body launches one
//! variant. The backends do what differs on a GPU:
//!
//! - **Compile per configuration.** The kernel [`Source`] is compiled once per configuration with
//!   one `-DNAME=value` definition per parameter ([`definitions`]), plus the source's own options
//!   and, for CUDA, the device's architecture. Compiled kernels are cached per configuration (per
//!   device handle, for the life of the process), failed compilations included, so a variant is
//!   compiled once however often it is run.
//! - **Load what tuning built.** When a winner is stored, the binaries the backend built for it
//!   are stored beside the tuned file (the `record` module, in builds with `autotune`), a plain
//!   build embeds those of its baked
//!   entries, and the backend loads one instead of compiling when it was built from the same
//!   source, options and definitions for the same device ([`embedded`]); a stale or rejected
//!   binary means compiling, never running it. A shipped CUDA binary whose baked configurations
//!   all have their PTX or CUBIN embedded does not need NVRTC.
//! - **Launch geometry from parameters** ([`Dims`], below).
//! - **Time on the device.** Every launch is timed with device events (OpenCL profiling events,
//!   CUDA events created with timing enabled) and reports its duration through
//!   [`crate::measure::report_device_time`]; while tuning, a variant's time is that device time,
//!   not the host's wall clock around the launch.
//! - **Failures are data.** A variant that does not compile (the compiler's log is the reason),
//!   does not load, exceeds a device limit (threads per block, local or shared memory), fails to
//!   launch, times out or (with `verify`) computes a wrong answer makes the body return an error
//!   naming the configuration; `#[tunable]` records it as a failed configuration with that reason
//!   and tuning goes on. Only a missing runtime library or device is an error of the backend's
//!   constructor, and it names what is missing.
//! - **Device identity** for the tuned-config store: `device = gpu.device_id()` in the attribute
//!   (name, architecture or compute capability, driver version).
//!
//! The wgpu backend (`backend::wgpu`, feature `wgpu`, for WGSL kernels) differs in one point: a
//! configuration reaches the kernel as the values of its WGSL `override` constants, given when
//! the pipeline is created, not as definitions; what it stores beside the tuned file is the
//! driver's pipeline cache blob, which speeds up creating the pipeline from its source.
//!
//! The CubeCL backend (`backend::cubecl`, feature `cubecl`, for `#[cube]` kernels) differs in
//! another: a configuration reaches the kernel as Rust values, its comptime arguments, `CubeDim`
//! and `CubeCount`, and CubeCL compiles it at its first launch.
//!
//! Inputs are uploaded by the caller, before the kernel is called: the body receives device
//! buffers, so every variant runs on the same device data and a tuning uploads its inputs once.
//! Launches are synchronous: `run` returns when the kernel has finished.
//!
//! ## Definitions
//!
//! Every parameter becomes `-DNAME=value`: integers as written (`-DTILE=16`), floats in Rust's
//! round-trip form with a decimal point (`-DALPHA=0.5`, `-DBETA=1.0`), booleans as `1` / `0`
//! (`#if USE_LOCAL`), strings verbatim, so a string parameter can name a type or a token
//! (`-DREAL=float`). A string that is empty or contains whitespace cannot be one definition and
//! fails that configuration.
//!
//! ## Launch geometry
//!
//! [`Dims`] holds the grid (blocks per dimension; OpenCL: work-groups) and the block (threads per
//! block; OpenCL: work-items per work-group). The convention is Kernel Tuner's:
//!
//! - the block sizes are parameters; by default the parameters named `block_size_x`,
//!   `block_size_y` and `block_size_z` (Kernel Tuner's `block_size_names`; a missing one is 1),
//!   read by [`Dims::from_params`];
//! - the grid divides the problem size: `grid[d] = ceil(problem[d] / divisor[d])`, where the
//!   divisor defaults to the block size (Kernel Tuner's default `grid_div_x = ["block_size_x"]`)
//!   and is the work per block when each thread computes several outputs
//!   ([`Dims::divide`]: a GEMM whose block of `MDIMC x NDIMC` threads computes a tile of
//!   `MWG x NWG` outputs divides the `M x N` problem by `[MWG, NWG]`);
//! - OpenCL's global size is `grid * block` per dimension; CUDA's grid is `grid`.
//!
//! ```
//! use tunable_runtime::backend::Dims;
//!
//! // 1000 x 500 outputs, 16 x 8 threads per block, each block computing 64 x 32 outputs.
//! let d = Dims::divide([1000, 500], [16, 8], [64, 32]);
//! assert_eq!(d.grid, [16, 16, 1]);
//! assert_eq!(d.block, [16, 8, 1]);
//! assert_eq!(d.global(), [256, 128, 1]);
//! assert_eq!(d.threads_per_block(), 128);
//! ```

mod dims;
mod element;
pub mod embedded;
#[cfg(feature = "autotune")]
pub mod record;
mod source;
#[cfg(feature = "opencl")]
mod wait;

#[cfg(feature = "cubecl")]
pub mod cubecl;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "opencl")]
pub mod opencl;
#[cfg(feature = "wgpu")]
pub mod wgpu;

pub use dims::{Dims, Extent};
pub use element::Element;
pub use embedded::Provenance;
pub use source::{Source, definitions};
#[cfg(feature = "opencl")]
pub(crate) use wait::{Status, wait_until};
