//! # OpenCL backend (feature `opencl`)
//!
//! Compiles, launches and times OpenCL C kernels through [opencl3], which loads the ICD loader
//! (`libOpenCL.so.1`) at run time: a machine without OpenCL gets
//! [`OpenClError::MissingLibrary`], not a link error. On a machine without a GPU, PoCL
//! (`apt-get install pocl-opencl-icd`) runs the same kernels on the CPU.
//!
//! ```no_run
//! # #![allow(unsafe_code)]
//! use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
//! use tunable::backend::{Dims, Source};
//! use tunable::tunable;
//!
//! static SCALE: Source = Source::new("scale", r#"
//!     __kernel void scale(__global float *x, float a, int n) {
//!         int i = get_global_id(0) * PER_THREAD;
//!         for (int k = 0; k < PER_THREAD; k++) if (i + k < n) x[i + k] *= a;
//!     }"#);
//!
//! #[tunable(block_size_x = [32, 64, 128, 256], PER_THREAD = [1, 2, 4],
//!           device = cl.device_id(), restore = x.write(&vec![1.0; n]).unwrap(),
//!           verify = x, key = tunable::key::next_power_of_two(n as u64))]
//! fn scale(cl: &OpenCl, x: &mut Buffer<f32>, a: f32, n: usize) -> Result<(), OpenClError> {
//!     let dims = Dims::divide(n, block_size_x, block_size_x * PER_THREAD);
//!     // SAFETY: the kernel takes (float*, float, int) and only touches x[0..n].
//!     unsafe { cl.kernel(&SCALE, params)?.launch(dims).arg(x).arg(&a).arg(&(n as i32)).run() }
//! }
//!
//! let cl = OpenCl::new()?;
//! let mut x = cl.upload(&vec![1.0f32; 1 << 20])?;
//! scale(&cl, &mut x, 2.0, 1 << 20)?;
//! # Ok::<(), OpenClError>(())
//! ```
//!
//! - **Device choice:** [`OpenCl::new`] takes `TUNABLE_OPENCL_DEVICE=<platform>:<device>` (indices
//!   as `clinfo -l` lists them) if set, else the first GPU of any platform, else the first device.
//! - **Compilation:** per configuration, with the source's options and one `-DNAME=value` per
//!   parameter ([`crate::backend::definitions`]); programs are cached per configuration in the
//!   [`OpenCl`] handle, build failures included (the build log is the reason).
//! - **Limits before launch:** each block dimension against `CL_DEVICE_MAX_WORK_ITEM_SIZES`, the
//!   work-group against the kernel's `CL_KERNEL_WORK_GROUP_SIZE` on this device (at most
//!   `CL_DEVICE_MAX_WORK_GROUP_SIZE`), local memory (`CL_KERNEL_LOCAL_MEM_SIZE` with the
//!   arguments set) against `CL_DEVICE_LOCAL_MEM_SIZE`: each violation is a typed failure of that
//!   configuration, as is any error of the launch itself (`CL_INVALID_WORK_GROUP_SIZE`,
//!   `CL_OUT_OF_RESOURCES`, ...).
//! - **Timing:** the queue is created with `CL_QUEUE_PROFILING_ENABLE`; each launch reports
//!   `CL_PROFILING_COMMAND_END - CL_PROFILING_COMMAND_START` as its device time.
//! - **Time limit:** [`OpenCl::with_timeout`] (default `TUNABLE_TIMEOUT`, else none).
//!
//! Launching is `unsafe`: the argument list must match the kernel's parameters, and the kernel
//! must stay inside its buffers for the launch's geometry (on a CPU device such as PoCL an
//! out-of-bounds write corrupts host memory). The backend checks the number of arguments and
//! OpenCL checks scalar sizes; it cannot check bounds.

#![allow(unsafe_code)]

mod buffer;
mod compile;
mod error;
mod launch;

pub use buffer::Buffer;
pub use compile::CompiledKernel;
pub use error::OpenClError;
pub use launch::{KernelArg, Launch, Local};

use compile::Cache;
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device};
use opencl3::error_codes::{CL_DEVICE_NOT_FOUND, ClError, DLOPEN_RUNTIME_LOAD_FAILED};
use opencl3::platform::{Platform, get_platforms};
use opencl3::types::cl_device_id;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The library opencl3 loads.
const LIBRARY: &str = "libOpenCL.so.1";

/// The name of an OpenCL error code.
pub(crate) fn code(e: ClError) -> String {
    e.to_string()
}

/// The limits of a device that decide whether a launch can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`, per dimension.
    pub max_work_item_sizes: Vec<usize>,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem_size: u64,
}

pub(crate) struct Inner {
    context: Context,
    queue: CommandQueue,
    device: Device,
    id: String,
    limits: Limits,
    /// Whether the device is the host's CPU (PoCL): builds are not overlapped with timings.
    host: bool,
    cache: Mutex<Cache>,
}

/// An OpenCL device with its context, profiling queue and compile cache. Cheap to clone (shared).
#[derive(Clone)]
pub struct OpenCl {
    inner: Arc<Inner>,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for OpenCl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCl")
            .field("device", &self.inner.id)
            .field("limits", &self.inner.limits)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl OpenCl {
    /// The device named by `TUNABLE_OPENCL_DEVICE=<platform>:<device>` if set, else the first GPU
    /// of any platform, else the first device of the first platform that has one.
    pub fn new() -> Result<OpenCl, OpenClError> {
        let _one_at_a_time = DISCOVERY.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(spec) = std::env::var("TUNABLE_OPENCL_DEVICE") {
            let parsed = spec
                .split_once(':')
                .and_then(|(p, d)| Some((p.trim().parse().ok()?, d.trim().parse().ok()?)));
            let Some((p, d)) = parsed else {
                return Err(OpenClError::NoDevice {
                    reason: format!(
                        "TUNABLE_OPENCL_DEVICE={spec:?} is not <platform index>:<device index>"
                    ),
                });
            };
            return open_indexed(p, d);
        }
        let platforms = platforms()?;
        let mut errors = Vec::new();
        for kind in [CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL] {
            for p in &platforms {
                match p.get_devices(kind) {
                    Ok(devices) if !devices.is_empty() => return OpenCl::open(p, devices[0]),
                    Ok(_) => {}
                    Err(e) if e.0 == CL_DEVICE_NOT_FOUND => {}
                    Err(e) => errors.push(format!("clGetDeviceIDs: {}", code(e))),
                }
            }
        }
        errors.dedup();
        Err(OpenClError::NoDevice {
            reason: format!(
                "{} platform(s), none with a device{}",
                platforms.len(),
                if errors.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", errors.join("; "))
                }
            ),
        })
    }

    /// Device `device` of platform `platform`, in the order `clinfo -l` lists them.
    pub fn with_device(platform: usize, device: usize) -> Result<OpenCl, OpenClError> {
        let _one_at_a_time = DISCOVERY.lock().unwrap_or_else(|e| e.into_inner());
        open_indexed(platform, device)
    }

    fn open(platform: &Platform, id: cl_device_id) -> Result<OpenCl, OpenClError> {
        let api = |call| {
            move |e| OpenClError::Api {
                call,
                code: code(e),
            }
        };
        let device = Device::new(id);
        let info = |r: Result<String, ClError>| r.map_err(api("clGetDeviceInfo"));
        let name = info(device.name())?;
        let driver = info(device.driver_version())?;
        let platform_name = platform.name().map_err(api("clGetPlatformInfo"))?;
        let limits = Limits {
            max_work_group_size: device
                .max_work_group_size()
                .map_err(api("clGetDeviceInfo"))?,
            max_work_item_sizes: device
                .max_work_item_sizes()
                .map_err(api("clGetDeviceInfo"))?,
            local_mem_size: device.local_mem_size().map_err(api("clGetDeviceInfo"))?,
        };
        let context = Context::from_device(&device).map_err(api("clCreateContext"))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(api("clCreateCommandQueueWithProperties"))?;
        let host = device.dev_type().unwrap_or(0) & CL_DEVICE_TYPE_CPU != 0;
        Ok(OpenCl {
            inner: Arc::new(Inner {
                context,
                queue,
                device,
                id: format!(
                    "opencl: {} / {} {}",
                    name.trim(),
                    platform_name.trim(),
                    driver.trim()
                ),
                limits,
                host,
                cache: Mutex::new(Cache::default()),
            }),
            timeout: crate::settings::launch_timeout()
                .map_err(|value| OpenClError::BadTimeout { value })?,
        })
    }

    /// The device's identity for the tuned-config store (`device = cl.device_id()` in
    /// `#[tunable]`): `opencl: <device name> / <platform name> <driver version>`.
    pub fn device_id(&self) -> &str {
        &self.inner.id
    }

    /// The device's launch limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The same device and cache with a time limit per launch (`None`: wait as long as it
    /// takes). A launch still running at the limit is a [`OpenClError::Timeout`].
    pub fn with_timeout(&self, limit: Option<Duration>) -> OpenCl {
        OpenCl {
            inner: Arc::clone(&self.inner),
            timeout: limit,
        }
    }

    /// The time limit per launch.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// Device discovery, one thread at a time: ICD loaders are not all safe to initialize from two
/// threads at once (two tests opening a device together saw no device in one of them).
static DISCOVERY: Mutex<()> = Mutex::new(());

fn open_indexed(platform: usize, device: usize) -> Result<OpenCl, OpenClError> {
    let platforms = platforms()?;
    let p = platforms
        .get(platform)
        .ok_or_else(|| OpenClError::NoDevice {
            reason: format!(
                "platform {platform} requested, {} available",
                platforms.len()
            ),
        })?;
    let devices = p
        .get_devices(CL_DEVICE_TYPE_ALL)
        .map_err(|e| OpenClError::NoDevice {
            reason: format!("clGetDeviceIDs: {}", code(e)),
        })?;
    let &d = devices.get(device).ok_or_else(|| OpenClError::NoDevice {
        reason: format!(
            "device {device} of platform {platform} requested, {} available",
            devices.len()
        ),
    })?;
    OpenCl::open(p, d)
}

fn platforms() -> Result<Vec<Platform>, OpenClError> {
    match get_platforms() {
        Ok(p) if !p.is_empty() => Ok(p),
        Ok(_) => Err(OpenClError::NoDevice {
            reason: "no OpenCL platform is installed (e.g. apt-get install pocl-opencl-icd)".into(),
        }),
        Err(e) if e.0 == DLOPEN_RUNTIME_LOAD_FAILED => {
            Err(OpenClError::MissingLibrary { library: LIBRARY })
        }
        Err(e) => Err(OpenClError::NoDevice {
            reason: format!("clGetPlatformIDs: {} (is an ICD installed?)", code(e)),
        }),
    }
}
