//! # Launching
//!
//! `kernel.launch(dims).arg(..)...run()`: checks the launch against the device's limits, sets
//! the arguments, enqueues, waits (within the time limit) and reports the profiling-event time
//! to the measurement. Every failure is an [`OpenClError`] naming the configuration.

use super::buffer::Buffer;
use super::code;
use super::compile::CompiledKernel;
use super::error::OpenClError;
use crate::backend::{Dims, Element, Status, wait_until};
use crate::measure::{report_compile_time, report_device_time};
use opencl3::event::{CL_COMPLETE, CL_RUNNING};
use opencl3::kernel::set_kernel_arg;
use opencl3::types::cl_mem;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

mod sealed {
    pub trait Sealed {}
}

/// What one kernel argument passes.
#[derive(Clone, Copy, Debug)]
pub enum ArgValue {
    /// A buffer (its handle, and the address of the context it belongs to).
    Mem(cl_mem, usize),
    /// A scalar's bytes (the first `.1` of them).
    Scalar([u8; 8], usize),
    /// A `__local` buffer of that many bytes.
    Local(usize),
}

/// A value that can be a kernel argument: a [`Buffer`], a number (`i32`, `u32`, `f32`, ...;
/// match the kernel's C type exactly, e.g. `&(n as i32)` for `int n`) or a [`Local`] buffer.
pub trait KernelArg: sealed::Sealed {
    /// What it passes.
    fn value(&self) -> ArgValue;
}

impl<T: Element> sealed::Sealed for Buffer<T> {}

impl<T: Element> KernelArg for Buffer<T> {
    fn value(&self) -> ArgValue {
        ArgValue::Mem(self.handle(), Arc::as_ptr(self.context()) as usize)
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelArg for $t {
            fn value(&self) -> ArgValue {
                let b = self.to_ne_bytes();
                let mut bytes = [0u8; 8];
                bytes[..b.len()].copy_from_slice(&b);
                ArgValue::Scalar(bytes, b.len())
            }
        }
    )*};
}

scalar_arg!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

/// A `__local` buffer argument of `len` elements of `T` (dynamic local memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Local {
    bytes: usize,
}

impl Local {
    /// `len` elements of `T`.
    pub fn new<T>(len: usize) -> Local {
        Local {
            bytes: len.saturating_mul(std::mem::size_of::<T>()),
        }
    }
}

impl sealed::Sealed for Local {}

impl KernelArg for Local {
    fn value(&self) -> ArgValue {
        ArgValue::Local(self.bytes)
    }
}

/// A launch being set up: [`CompiledKernel::launch`], then one [`arg`](Launch::arg) per kernel
/// parameter in order, then [`run`](Launch::run).
#[derive(Debug)]
pub struct Launch<'a> {
    kernel: &'a CompiledKernel,
    dims: Dims,
    args: Vec<ArgValue>,
    foreign: Option<usize>,
    _borrows: PhantomData<&'a ()>,
}

impl CompiledKernel {
    /// A launch of this kernel over `dims`.
    pub fn launch(&self, dims: Dims) -> Launch<'_> {
        Launch {
            kernel: self,
            dims,
            args: Vec::new(),
            foreign: None,
            _borrows: PhantomData,
        }
    }
}

impl<'a> Launch<'a> {
    /// Appends an argument; a buffer stays borrowed until the launch has run.
    pub fn arg<A: KernelArg + ?Sized>(mut self, a: &'a A) -> Self {
        let v = a.value();
        if let ArgValue::Mem(_, ctx) = v
            && ctx != Arc::as_ptr(&self.kernel.cl) as usize
        {
            self.foreign.get_or_insert(self.args.len());
        }
        self.args.push(v);
        self
    }

    /// Runs the kernel and waits for it; reports its profiling-event time to the measurement
    /// ([`report_device_time`]).
    ///
    /// # Safety
    ///
    /// The arguments must match the kernel's parameters in order and type, and the kernel must
    /// only access its buffers within their bounds for this launch geometry: OpenCL checks
    /// neither (on a CPU device such as PoCL, an out-of-bounds write corrupts host memory).
    pub unsafe fn run(self) -> Result<(), OpenClError> {
        let k = self.kernel;
        let config = || k.config.clone();
        let dims = self.dims;
        let limits = &k.cl.limits;
        if let Some(i) = self.foreign {
            return Err(OpenClError::Launch {
                config: config(),
                call: "clSetKernelArg",
                code: format!("argument {i} is a buffer of another OpenCL context"),
            });
        }
        if let Some(reason) = dims.empty_reason() {
            return Err(OpenClError::EmptyLaunch {
                config: config(),
                reason,
            });
        }
        for d in 0..dims.rank {
            let max = limits.max_work_item_sizes.get(d).copied().unwrap_or(1);
            if dims.block[d] > max {
                return Err(OpenClError::WorkItemSize {
                    config: config(),
                    dim: d,
                    size: dims.block[d],
                    max,
                });
            }
        }
        let threads = dims.threads_per_block();
        let max = k.compiled.max_work_group.min(limits.max_work_group_size);
        if threads > max {
            return Err(OpenClError::WorkGroupTooLarge {
                config: config(),
                block: dims.block[..dims.rank].to_vec(),
                threads,
                max,
            });
        }
        if self.args.len() != k.compiled.num_args {
            return Err(OpenClError::Arguments {
                config: config(),
                kernel: k.name.to_owned(),
                expected: k.compiled.num_args,
                given: self.args.len(),
            });
        }
        let launch_err = |call| {
            move |e| OpenClError::Launch {
                config: config(),
                call,
                code: code(e),
            }
        };
        let launched = Instant::now();
        let event = {
            let kernel = k.compiled.kernel.lock().unwrap_or_else(|e| e.into_inner());
            for (i, a) in self.args.iter().enumerate() {
                let (size, ptr): (usize, *const c_void) = match a {
                    ArgValue::Mem(m, _) => (size_of::<cl_mem>(), (m as *const cl_mem).cast()),
                    ArgValue::Scalar(bytes, n) => (*n, bytes.as_ptr().cast()),
                    ArgValue::Local(n) => (*n, std::ptr::null()),
                };
                // SAFETY: `ptr` points at `size` readable bytes (a live `cl_mem` handle whose
                // buffer is borrowed for 'a, or a scalar's bytes), or is null for `__local`.
                unsafe { set_kernel_arg(kernel.get(), i as u32, size, ptr) }
                    .map_err(|e| launch_err("clSetKernelArg")(e.into()))?;
            }
            let used = kernel
                .get_local_mem_size(k.cl.device.id())
                .map_err(launch_err("clGetKernelWorkGroupInfo"))?;
            if used > limits.local_mem_size {
                return Err(OpenClError::LocalMemory {
                    config: config(),
                    used,
                    available: limits.local_mem_size,
                });
            }
            let global = dims.global();
            // SAFETY: every argument is set (count checked above); the caller guarantees they
            // match the kernel and that it stays in bounds. The sizes point at `rank` values.
            unsafe {
                k.cl.queue.enqueue_nd_range_kernel(
                    kernel.get(),
                    dims.rank as u32,
                    std::ptr::null(),
                    global.as_ptr(),
                    dims.block.as_ptr(),
                    &[],
                )
            }
            .map_err(launch_err("clEnqueueNDRangeKernel"))?
        };
        k.cl.queue.flush().map_err(launch_err("clFlush"))?;
        let failed = |code: String| OpenClError::Execution {
            config: config(),
            code,
        };
        let finished = wait_until(
            k.timeout,
            || match event.command_execution_status() {
                Ok(s) if s.0 == CL_COMPLETE => Ok(Status::Done),
                Ok(s) if s.0 < 0 => Err(failed(s.to_string())),
                Ok(s) if s.0 == CL_RUNNING => Ok(Status::Running),
                Ok(_) => Ok(Status::Waiting),
                Err(e) => Err(failed(code(e))),
            },
            || event.wait().map_err(|e| failed(code(e))),
        )?;
        if !finished {
            // Neither API can cancel a running kernel: drain the queue so that the next variant
            // starts on an idle device.
            let _ = k.cl.queue.finish();
            return Err(OpenClError::Timeout {
                config: config(),
                limit: k.timeout.unwrap_or_default(),
            });
        }
        let (start, end) = (
            event
                .profiling_command_start()
                .map_err(|e| failed(code(e)))?,
            event.profiling_command_end().map_err(|e| failed(code(e)))?,
        );
        let device_ms = end.saturating_sub(start) as f64 / 1e6;
        report_device_time(device_ms);
        if !k.compiled.launched.swap(true, Ordering::Relaxed) {
            // A CPU driver (PoCL) compiles the work-group function on the first launch.
            report_compile_time((launched.elapsed().as_secs_f64() - device_ms / 1e3).max(0.0));
        }
        Ok(())
    }
}
