//! # Launching
//!
//! `kernel.launch(dims).arg(..)...run()`: checks the launch against the function's and the
//! device's limits, launches between two timing events, waits (within the time limit) and
//! reports the events' elapsed time to the measurement. Every failure is a [`CudaError`] naming
//! the configuration.

use super::buffer::Buffer;
use super::error::CudaError;
use super::{Inner, Loaded, code};
use crate::backend::{Dims, Element};
use crate::measure::report_device_time;
use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute};
use cudarc::driver::{DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use std::time::Duration;

/// A kernel loaded for one configuration, ready to [`launch`](CompiledKernel::launch).
pub struct CompiledKernel {
    pub(super) loaded: Arc<Loaded>,
    pub(super) cuda: Arc<Inner>,
    pub(super) timeout: Option<Duration>,
    pub(super) config: String,
}

impl std::fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("config", &self.config)
            .field("max_threads", &self.loaded.max_threads)
            .field("static_shared", &self.loaded.static_shared)
            .finish()
    }
}

impl CompiledKernel {
    /// The configuration it was compiled for.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// Whether the module was loaded from an embedded image or compiled with NVRTC.
    pub fn provenance(&self) -> crate::backend::Provenance {
        self.loaded.provenance
    }

    /// The most threads per block this kernel can run with (its registers included).
    pub fn max_threads_per_block(&self) -> usize {
        self.loaded.max_threads
    }

    /// A launch of this kernel over `dims`.
    pub fn launch(&self, dims: Dims) -> Launch<'_> {
        Launch {
            kernel: self,
            args: self.cuda.stream.launch_builder(&self.loaded.function),
            dims,
            shared: 0,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A value that can be a kernel argument: a [`Buffer`] (passed as a device pointer) or a number
/// (match the kernel's C type exactly, e.g. `&(n as i32)` for `int n`).
pub trait KernelArg: sealed::Sealed {
    /// Appends itself to the launch's arguments.
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

impl<T: Element + DeviceRepr> sealed::Sealed for Buffer<T> {}

impl<T: Element + DeviceRepr> KernelArg for Buffer<T> {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.slice);
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelArg for $t {
            fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
                args.arg(self);
            }
        }
    )*};
}

scalar_arg!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

/// A launch being set up: [`CompiledKernel::launch`], then one [`arg`](Launch::arg) per kernel
/// parameter in order, optionally [`shared_bytes`](Launch::shared_bytes), then
/// [`run`](Launch::run).
#[derive(Debug)]
pub struct Launch<'a> {
    kernel: &'a CompiledKernel,
    args: LaunchArgs<'a>,
    dims: Dims,
    shared: usize,
}

impl<'a> Launch<'a> {
    /// Appends an argument; it stays borrowed until the launch has run.
    pub fn arg<A: KernelArg + ?Sized>(mut self, a: &'a A) -> Self {
        a.push(&mut self.args);
        self
    }

    /// Dynamic shared memory per block, in bytes (`extern __shared__` arrays; default 0).
    pub fn shared_bytes(mut self, bytes: usize) -> Self {
        self.shared = bytes;
        self
    }

    /// Launches the kernel between two timing events and waits for it; reports the events'
    /// elapsed time to the measurement ([`report_device_time`]).
    ///
    /// # Safety
    ///
    /// The arguments must match the kernel's parameters in order and type, and the kernel must
    /// only access its buffers within their bounds for this launch geometry.
    pub unsafe fn run(mut self) -> Result<(), CudaError> {
        let k = self.kernel;
        let config = || k.config.clone();
        let (dims, limits) = (self.dims, &k.cuda.limits);
        if let Some(reason) = dims.empty_reason() {
            return Err(CudaError::EmptyLaunch {
                config: config(),
                reason,
            });
        }
        let threads = dims.threads_per_block();
        let max = k.loaded.max_threads.min(limits.max_threads_per_block);
        if threads > max {
            return Err(CudaError::TooManyThreads {
                config: config(),
                block: dims.block[..dims.rank].to_vec(),
                threads,
                max,
            });
        }
        for (what, sizes, maxes) in [
            ("block", dims.block, limits.max_block),
            ("grid", dims.grid, limits.max_grid),
        ] {
            if let Some(d) = (0..3).find(|&d| sizes[d] > maxes[d]) {
                return Err(CudaError::Dimension {
                    config: config(),
                    what,
                    dim: d,
                    size: sizes[d],
                    max: maxes[d],
                });
            }
        }
        let used = k.loaded.static_shared + self.shared;
        if used > limits.max_shared_per_block {
            return Err(CudaError::SharedMemory {
                config: config(),
                used,
                available: limits.max_shared_per_block,
            });
        }
        let launch_err = |e| CudaError::Launch {
            config: config(),
            code: code(e),
        };
        if self.shared > 48 * 1024 {
            // Beyond 48 KiB, dynamic shared memory must be opted into per function.
            k.loaded
                .function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    self.shared as i32,
                )
                .map_err(launch_err)?;
        }
        let to_u32 = |v: [usize; 3]| -> (u32, u32, u32) {
            let c = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
            (c(v[0]), c(v[1]), c(v[2]))
        };
        let cfg = LaunchConfig {
            grid_dim: to_u32(dims.grid),
            block_dim: to_u32(dims.block),
            shared_mem_bytes: self.shared as u32,
        };
        // Events with timing enabled: cudarc's default flags disable it.
        self.args
            .record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
        // SAFETY: the caller guarantees that the arguments match the kernel and that it stays
        // in bounds; the dimensions and shared memory were checked against the device above.
        let events = unsafe { self.args.launch(cfg) }.map_err(launch_err)?;
        let Some((start, end)) = events else {
            return Err(CudaError::Launch {
                config: config(),
                code: "no timing events were recorded".into(),
            });
        };
        let failed = |e| CudaError::Execution {
            config: config(),
            code: code(e),
        };
        // Blocking in the driver, time limit or not: a running kernel cannot be cancelled, so a
        // launch past the limit is waited for all the same (the next variant starts on an idle
        // device), and polling would only add its naps to every launch. The limit is judged on
        // the events' time, the kernel's own.
        end.synchronize().map_err(failed)?;
        let ms = start.elapsed_ms(&end).map_err(failed)?;
        if let Some(limit) = k.timeout
            && f64::from(ms) > limit.as_secs_f64() * 1e3
        {
            return Err(CudaError::Timeout {
                config: config(),
                limit,
            });
        }
        report_device_time(f64::from(ms));
        Ok(())
    }
}
