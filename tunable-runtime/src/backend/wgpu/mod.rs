//! # wgpu backend (feature `wgpu`)
//!
//! Tunes WGSL compute kernels through [wgpu](https://wgpu.rs): Vulkan on Linux, Windows and
//! Android, Metal on Apple platforms, DirectX 12 on Windows. A variant is the same WGSL source
//! with other values of its **pipeline-overridable constants** (`override block_size_x: u32 =
//! 64;`), given at pipeline creation (`PipelineCompilationOptions::constants`): the tunable
//! parameters are the overrides of the same names. Nothing rewrites the source, and a shipped
//! build creates its pipeline with the baked values.
//!
//! ```no_run
//! use tunable::backend::wgpu::{Buffer, Wgpu, WgpuError};
//! use tunable::backend::{Dims, Source};
//! use tunable::tunable;
//!
//! static SCALE: Source = Source::new("scale", r#"
//!     override block_size_x: u32 = 64;
//!     override per_thread: u32 = 1;
//!     @group(0) @binding(0) var<storage, read_write> x: array<f32>;
//!     @group(0) @binding(1) var<uniform> a: f32;
//!     @compute @workgroup_size(block_size_x)
//!     fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
//!         for (var k = 0u; k < per_thread; k++) {
//!             let i = id.x * per_thread + k;
//!             if (i < arrayLength(&x)) { x[i] *= a; }
//!         }
//!     }"#);
//!
//! #[tunable(block_size_x = [32, 64, 128, 256], per_thread = [1, 2, 4],
//!           device = gpu.device_id(), restore = x.write(&vec![1.0; n]).unwrap(),
//!           verify = x, key = tunable::key::next_power_of_two(n as u64))]
//! fn scale(gpu: &Wgpu, x: &mut Buffer<f32>, a: f32, n: usize) -> Result<(), WgpuError> {
//!     let dims = Dims::divide(n, block_size_x, block_size_x * per_thread);
//!     gpu.kernel(&SCALE, params)?.launch(dims).arg(x).arg(&a).run()
//! }
//!
//! let gpu = Wgpu::new()?;
//! let mut x = gpu.upload(&vec![1.0f32; 1 << 20])?;
//! scale(&gpu, &mut x, 2.0, 1 << 20)?;
//! # Ok::<(), WgpuError>(())
//! ```
//!
//! - **Safe:** unlike the OpenCL and CUDA backends, launching is not `unsafe`: wgpu validates
//!   the bindings against the shader and its shaders cannot access memory outside their buffers.
//! - **Device choice:** [`Wgpu::new`] takes the adapter whose name contains
//!   `TUNABLE_WGPU_ADAPTER` (case-insensitive) if set, else wgpu's high-performance adapter.
//!   The device is opened with the **adapter's** limits (wgpu's defaults cap workgroups at 256
//!   invocations) and, where the adapter has them, `TIMESTAMP_QUERY` and `PIPELINE_CACHE`.
//! - **Parameters are overrides:** each parameter is given to the `override` of the same name,
//!   as an `f64` (integers as themselves, booleans as 1 / 0); a parameter the source does not
//!   declare is [`WgpuError::NoOverride`] (and, where `#[tunable]` can read the source, a
//!   compile error: see the guide), a string parameter or a value the override's type cannot
//!   hold (a fraction or a negative number for a `u32`, which wgpu would silently convert) is
//!   [`WgpuError::OverrideValue`].
//! - **Limits before the pipeline:** wgpu checks workgroup sizes against the device's limits
//!   *before* applying overrides (gfx-rs/wgpu#8946, #7429), so an override-sized workgroup
//!   beyond them would reach the driver (undefined behaviour on a GPU). The backend applies the
//!   overrides itself with naga and checks each workgroup dimension, their product and the
//!   workgroup memory the entry point uses against the device's limits; a violation is a
//!   [`WgpuError::Limit`] of that configuration. So is a dispatch of more workgroups per
//!   dimension than the device allows.
//! - **Failures are values:** shader creation, pipeline creation and each dispatch run inside
//!   wgpu error scopes, so a WGSL error, an unknown override or a rejected dispatch is an error
//!   of that configuration, not a panic; so are a lost device, a time-out
//!   ([`Wgpu::with_timeout`], default `TUNABLE_TIMEOUT`) and, with `verify`, a wrong answer.
//! - **Timing:** a timestamp query around the compute pass where the device has
//!   `TIMESTAMP_QUERY`, else the wall-clock time from submission to completion; reported with
//!   [`crate::measure::report_device_time`]. Drivers may compile a pipeline at its first
//!   dispatch (lavapipe does): that launch's wall time beyond the kernel's is
//!   reported as compile time, and the tuner's warm-up runs keep it out of the timings.
//! - **Compilation:** one shader module per source, one pipeline per configuration, cached in
//!   the [`Wgpu`] handle, failures included. While the tuner collects what to prebuild,
//!   pipeline creation is handed to its pool ([`crate::prebuild`]).
//! - **Pipeline cache:** where the device has `PIPELINE_CACHE` (Vulkan), each pipeline is
//!   created with a pipeline cache of its own; the winner's cache blob is stored beside the
//!   tuned file (`tuned/<kernel>.artifacts/*.wgpucache`), a plain build embeds it and gives it
//!   back to the driver when it creates that pipeline ([`CompiledKernel::cache_used`]). The
//!   pipeline is still created from the WGSL source: the blob only saves the driver's work, and
//!   one from another adapter or driver is ignored.

#![allow(unsafe_code)] // Only `Device::create_pipeline_cache` (see compile.rs).

mod buffer;
mod compile;
mod error;
mod launch;

pub use buffer::Buffer;
pub use compile::{CompiledKernel, declared_overrides};
pub use error::WgpuError;
pub use launch::{KernelArg, Launch};

use compile::Cache;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The limits of a device that decide whether a variant can run (the device's, which are the
/// adapter's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `max_compute_workgroup_size_x`, `_y`, `_z`.
    pub max_workgroup_size: [u32; 3],
    /// `max_compute_invocations_per_workgroup`.
    pub max_invocations: u32,
    /// `max_compute_workgroup_storage_size`, in bytes.
    pub max_workgroup_storage: u32,
    /// `max_compute_workgroups_per_dimension`.
    pub max_workgroups_per_dimension: u32,
}

impl Limits {
    /// The limits of this name in wgpu's.
    pub(crate) fn of(l: &wgpu::Limits) -> Limits {
        Limits {
            max_workgroup_size: [
                l.max_compute_workgroup_size_x,
                l.max_compute_workgroup_size_y,
                l.max_compute_workgroup_size_z,
            ],
            max_invocations: l.max_compute_invocations_per_workgroup,
            max_workgroup_storage: l.max_compute_workgroup_storage_size,
            max_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
        }
    }
}

/// The adapter a wgpu device is opened on, with its instance: the one whose name contains
/// `TUNABLE_WGPU_ADAPTER` (case-insensitive) if set, else wgpu's high-performance adapter. The
/// wgpu and CubeCL backends both choose this way.
pub(crate) fn choose_adapter() -> Result<(wgpu::Instance, wgpu::Adapter), WgpuError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = match std::env::var("TUNABLE_WGPU_ADAPTER") {
        Ok(want) => {
            let all = block_on(instance.enumerate_adapters(wgpu::Backends::all()));
            let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
            let low = want.to_lowercase();
            all.into_iter()
                .find(|a| a.get_info().name.to_lowercase().contains(&low))
                .ok_or_else(|| WgpuError::NoAdapter {
                    reason: format!("TUNABLE_WGPU_ADAPTER={want:?} matches none of {names:?}"),
                })?
        }
        Err(_) => block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| WgpuError::NoAdapter {
            reason: e.to_string(),
        })?,
    };
    Ok((instance, adapter))
}

/// An adapter as device identities name it: `<name> (<backend>, <driver> <driver info>)`.
pub(crate) fn adapter_name(info: &wgpu::AdapterInfo) -> String {
    format!(
        "{} ({:?}, {} {})",
        info.name.trim(),
        info.backend,
        info.driver.trim(),
        info.driver_info.trim()
    )
}

/// Timestamp queries of one launch, where the device has them.
pub(crate) struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
}

pub(crate) struct Inner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    id: String,
    limits: Limits,
    /// Whether pipelines get a pipeline cache (the device has `PIPELINE_CACHE`).
    pipeline_cache: bool,
    /// Whether the device is the host's CPU (lavapipe): builds are not overlapped with timings.
    host: bool,
    /// Launches one at a time (they share the timestamp queries).
    timer: Mutex<Option<Timer>>,
    /// Why the device was lost, once it is.
    lost: Arc<Mutex<Option<String>>>,
    /// Errors raised outside any error scope (none are expected: every call runs in one).
    uncaptured: Arc<Mutex<Vec<String>>>,
    cache: Mutex<Cache>,
}

/// A wgpu device with its queue, timestamp queries and pipeline cache. Cheap to clone (shared).
#[derive(Clone)]
pub struct Wgpu {
    inner: Arc<Inner>,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for Wgpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wgpu")
            .field("device", &self.inner.id)
            .field("limits", &self.inner.limits)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Runs a wgpu future to completion on this thread. On native backends wgpu's futures
/// (adapter and device requests, error scopes) are ready at once or after `Device::poll`, so a
/// no-op waker and polling are enough: no executor crate is needed.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

impl Wgpu {
    /// The adapter whose name contains `TUNABLE_WGPU_ADAPTER` (case-insensitive) if set, else
    /// wgpu's high-performance adapter, opened with its own limits.
    pub fn new() -> Result<Wgpu, WgpuError> {
        let (_, adapter) = choose_adapter()?;
        Wgpu::open(&adapter)
    }

    fn open(adapter: &wgpu::Adapter) -> Result<Wgpu, WgpuError> {
        let info = adapter.get_info();
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::PIPELINE_CACHE;
        let features = adapter.features() & wanted;
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("tunable"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| WgpuError::NoDevice {
            adapter: info.name.clone(),
            reason: e.to_string(),
        })?;
        let lost = Arc::new(Mutex::new(None));
        let on_lost = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            *on_lost.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(format!("{reason:?}: {message}"));
        });
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let on_error = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            on_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(e.to_string());
        }));
        let limits = Limits::of(&device.limits());
        let timer = features
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Timer {
                queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("tunable timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                resolve: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("tunable timestamps resolved"),
                    size: 16,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("tunable timestamps read back"),
                    size: 16,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
                period: f64::from(queue.get_timestamp_period()),
            });
        let id = format!("wgpu: {}", adapter_name(&info));
        Ok(Wgpu {
            inner: Arc::new(Inner {
                host: info.device_type == wgpu::DeviceType::Cpu,
                pipeline_cache: features.contains(wgpu::Features::PIPELINE_CACHE),
                device,
                queue,
                info,
                id,
                limits,
                timer: Mutex::new(timer),
                lost,
                uncaptured,
                cache: Mutex::new(Cache::default()),
            }),
            timeout: crate::settings::launch_timeout()
                .map_err(|value| WgpuError::BadTimeout { value })?,
        })
    }

    /// The device's identity for the tuned-config store (`device = gpu.device_id()` in
    /// `#[tunable]`): `wgpu: <adapter name> (<backend>, <driver> <driver info>)`, e.g.
    /// `wgpu: llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, llvmpipe Mesa 22.3.6 (LLVM 15.0.6))`.
    pub fn device_id(&self) -> &str {
        &self.inner.id
    }

    /// The adapter's description (name, backend, driver, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.inner.info
    }

    /// The device's limits that variants are checked against.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Whether launches are timed with timestamp queries (else with the wall clock).
    pub fn timestamps(&self) -> bool {
        self.inner
            .timer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// How launches are timed, in words, for a program's output: `"timestamp queries"`, or
    /// that the device has none and the wall clock times them ([`timestamps`](Self::timestamps)).
    pub fn clock(&self) -> &'static str {
        if self.timestamps() {
            "timestamp queries"
        } else {
            "no timestamp queries on this device: wall clock"
        }
    }

    /// Whether pipelines are created with a pipeline cache (the device has `PIPELINE_CACHE`).
    pub fn pipeline_cache(&self) -> bool {
        self.inner.pipeline_cache
    }

    /// The wgpu device, for work of the caller's own around the tuned kernels.
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// The same device and cache with a time limit per launch (`None`: wait as long as it
    /// takes). A launch still running at the limit is a [`WgpuError::Timeout`]. A pipeline's
    /// first launch, where drivers may compile it, is not limited.
    pub fn with_timeout(&self, limit: Option<Duration>) -> Wgpu {
        Wgpu {
            inner: Arc::clone(&self.inner),
            timeout: limit,
        }
    }

    /// The time limit per launch.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

impl Inner {
    /// Why the device was lost, if it was.
    fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The errors raised outside error scopes since the last call, joined.
    fn uncaptured(&self) -> Option<String> {
        let mut all = self.uncaptured.lock().unwrap_or_else(|e| e.into_inner());
        (!all.is_empty()).then(|| std::mem::take(&mut *all).join("; "))
    }
}

/// Runs `f` inside validation, out-of-memory and internal error scopes of `device`, answering
/// its result and the first error captured, as text.
pub(crate) fn scoped<R>(device: &wgpu::Device, f: impl FnOnce() -> R) -> (R, Option<String>) {
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let r = f();
    let errors = [validation.pop(), memory.pop(), internal.pop()]
        .into_iter()
        .find_map(|e| block_on(e).map(|e| describe(&e)));
    (r, errors)
}

/// A wgpu error as text: a validation error's description (which carries naga's diagnostics)
/// with its sources.
fn describe(e: &wgpu::Error) -> String {
    let mut text = match e {
        wgpu::Error::Validation { description, .. } => description.clone(),
        other => other.to_string(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text.trim().to_owned()
}
