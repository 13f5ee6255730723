//! # CubeCL backend (feature `cubecl`)
//!
//! Tunes [CubeCL](https://github.com/tracel-ai/cubecl) `#[cube]` kernels, the Rust kernel
//! language of Burn, on CubeCL's wgpu runtime (Vulkan, Metal, DirectX 12; lavapipe on a CPU).
//! `#[tunable]` goes on the Rust function that launches the kernel: the tunable parameters are
//! ordinary Rust values there, and flow into the kernel's `#[comptime]` arguments, its
//! [`CubeDim`] and its [`CubeCount`]. CubeCL compiles one kernel per set of comptime values, so
//! each configuration is its own kernel, as a `-D` definition makes one in the CUDA backend.
//!
//! ```no_run
//! use cubecl::prelude::*;
//! use tunable::backend::cubecl::{Array, CubeCl, CubeclError};
//! use tunable::tunable;
//!
//! #[cube(launch)]
//! fn scale(x: &mut [f32], a: f32, #[comptime] per_thread: u32) {
//!     for k in 0..per_thread {
//!         let i = ABSOLUTE_POS * per_thread as usize + k as usize;
//!         if i < x.len() {
//!             x[i] = x[i] * a;
//!         }
//!     }
//! }
//!
//! #[tunable(block = [32, 64, 128, 256], per_thread = [1, 2, 4],
//!           device = gpu.device_id(), restore = x.write(&vec![1.0; n]),
//!           verify = x, key = tunable::key::next_power_of_two(n as u64))]
//! fn scale_tuned(gpu: &CubeCl, x: &mut Array<f32>, a: f32, n: usize) -> Result<(), CubeclError> {
//!     // Integer parameters are `usize` locals; CubeCL's counts and this comptime are `u32`.
//!     let cubes = n.div_ceil(block * per_thread) as u32;
//!     gpu.launch(params, CubeCount::Static(cubes, 1, 1), CubeDim::new_1d(block as u32),
//!                |client, count, dim| {
//!                    scale::launch(client, count, dim, x.arg(), a, per_thread as u32)
//!                })
//! }
//!
//! fn main() -> Result<(), CubeclError> {
//!     let gpu = CubeCl::new()?;
//!     let mut x = gpu.upload(&vec![1.0f32; 1 << 20]);
//!     scale_tuned(&gpu, &mut x, 2.0, 1 << 20)
//! }
//! ```
//!
//! - **One module owns CubeCL's API.** Its launch signature, client and argument types change
//!   between minor versions; every use of them in tunable is in this module, so that the next
//!   version is this module's change. The version is pinned exactly in `Cargo.toml`.
//! - **Device choice:** [`CubeCl::new`] chooses the adapter as the wgpu backend does
//!   (`TUNABLE_WGPU_ADAPTER`, else wgpu's high-performance adapter), opens it with the
//!   adapter's limits and features as CubeCL's own setup does, and hands it to CubeCL's wgpu
//!   runtime. The device identity is the adapter's, named as the wgpu backend names it.
//! - **Limits before the launch:** a `CubeDim` beyond the device's workgroup size per axis or
//!   invocations per workgroup, and a `CubeCount` beyond its workgroups per dimension, are a
//!   [`CubeclError::Limit`] of that configuration; nothing is launched.
//! - **Failures are values:** a kernel whose expansion panics, that the compiler or the driver
//!   refuses, or whose launch fails is a [`CubeclError::Launch`] of that configuration.
//!   CubeCL reports them on the buffers the launch did not write, so [`CubeCl::launch`] checks
//!   every buffer its closure passed to the kernel through [`Array::arg`]; a panic in the
//!   launching closure itself is caught too. With `verify`, a wrong answer is a failed
//!   configuration like in every backend ([`Array`] is a [`crate::verify::Output`]).
//! - **Timing:** CubeCL's own profiling of the launch (`ComputeClient::profile`): timestamp
//!   queries around the kernel's passes where the device has `TIMESTAMP_QUERY`, reported with
//!   [`crate::measure::report_device_time`]. A configuration's first launch compiles its
//!   kernel (CubeCL compiles at launch): that launch's wall time beyond the kernel's is reported
//!   as compile time, and the tuner's warm-up runs keep it out of the timings. CubeCL cannot
//!   stop a running kernel, so `TUNABLE_TIMEOUT` does not apply.
//! - **One cache, ours:** CubeCL is built without its `persistence` feature, so its own
//!   autotuner (if a kernel also uses it) keeps nothing on disk; the winner of a `#[tunable]`
//!   kernel is in the tuned file and baked into plain builds, which launch its comptime values
//!   with no search and no file read. CubeCL still compiles that kernel at its first launch.
//! - **No compiling ahead:** CubeCL compiles on its device thread when a kernel is first
//!   launched, so the tuner's compile pool ([`crate::ahead`]) does not build CubeCL kernels.

#![allow(unsafe_code)] // Only `BufferArg::from_raw_parts`, with the array's own length (array.rs).

mod array;
mod error;

pub use array::Array;
pub use error::CubeclError;

/// CubeCL's launch types, re-exported for code that names them without depending on CubeCL:
/// the client a kernel's `launch` takes, the counts and the buffer argument.
pub use cubecl::prelude::{BufferArg, Client, CubeCount, CubeDim};

use crate::backend::Element;
use crate::backend::wgpu::{Limits, adapter_name, choose_adapter};
use crate::params::Params;
use cubecl::CubeElement;
use cubecl::server::Handle;
use cubecl::wgpu::{RuntimeOptions, WgpuSetup, wgpu};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(crate) struct Inner {
    client: Client,
    id: String,
    limits: Limits,
    /// The buffers handed to the kernel ([`Array::arg`]) in the launch in progress.
    bound: Mutex<Vec<Handle>>,
    /// Held for the whole of a launch: one at a time, so that `bound` holds its buffers alone
    /// (CubeCL may run the launching closure on its device thread, so a thread's own list
    /// would not do).
    launching: Mutex<()>,
    /// The configurations launched at least once, by kernel (the type of its parameters) and
    /// values: a configuration's first launch compiles its kernel.
    launched: Mutex<HashSet<String>>,
}

/// A CubeCL client on CubeCL's wgpu runtime, with the device's limits. Cheap to clone (shared).
#[derive(Clone)]
pub struct CubeCl {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CubeCl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CubeCl")
            .field("device", &self.inner.id)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl CubeCl {
    /// The adapter the wgpu backend would choose (`TUNABLE_WGPU_ADAPTER`, else the
    /// high-performance one), opened with all its features but mappable primary buffers and
    /// with its own limits (CubeCL's own choice for its WGSL compiler), as a CubeCL device.
    pub fn new() -> Result<CubeCl, CubeclError> {
        let (instance, adapter) = choose_adapter()?;
        let info = adapter.get_info();
        let refused = |reason: String| CubeclError::Runtime {
            adapter: info.name.clone(),
            reason,
        };
        let (device, queue) = cubecl::future::block_on(
            adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("tunable cubecl"),
                required_features: adapter
                    .features()
                    .difference(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
                required_limits: adapter.limits(),
                memory_hints: wgpu::MemoryHints::MemoryUsage,
                ..Default::default()
            }),
        )
        .map_err(|e| refused(e.to_string()))?;
        let limits = Limits::of(&device.limits());
        let setup = WgpuSetup {
            backend: info.backend,
            instance,
            adapter,
            device,
            queue,
        };
        let options = RuntimeOptions::try_default().map_err(|e| refused(e.to_string()))?;
        let cube_device =
            cubecl::wgpu::try_init_device(setup, options).map_err(|e| refused(e.to_string()))?;
        let client = cubecl::Device::Wgpu(cube_device).client();
        Ok(CubeCl {
            inner: Arc::new(Inner {
                client,
                id: format!("cubecl: {}", adapter_name(&info)),
                limits,
                bound: Mutex::new(Vec::new()),
                launching: Mutex::new(()),
                launched: Mutex::new(HashSet::new()),
            }),
        })
    }

    /// The device's identity for the tuned-config store (`device = gpu.device_id()` in
    /// `#[tunable]`): `cubecl: <adapter name> (<backend>, <driver> <driver info>)`, the adapter
    /// named as the wgpu backend names it.
    pub fn device_id(&self) -> &str {
        &self.inner.id
    }

    /// The device's limits that each launch's `CubeDim` and `CubeCount` are checked against.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// How launches are timed, in words, for a program's output: CubeCL's profiling with
    /// timestamp queries where the device has them, else CubeCL's host clock around the
    /// launch.
    pub fn clock(&self) -> &'static str {
        match self.inner.client.properties().timing_method {
            cubecl::profile::TimingMethod::Device => "CubeCL's profiling, timestamp queries",
            cubecl::profile::TimingMethod::System => {
                "CubeCL's profiling; no timestamp queries on this device: host clock"
            }
        }
    }

    /// The CubeCL client, for work of the caller's own around the tuned kernels.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// A device array holding `data`.
    pub fn upload<T: Element + CubeElement>(&self, data: &[T]) -> Array<T> {
        Array::upload(Arc::clone(&self.inner), data)
    }

    /// A device array of `len` elements, zeroed.
    pub fn zeros<T: Element + CubeElement>(&self, len: usize) -> Array<T> {
        self.upload(&vec![T::default(); len])
    }

    /// Launches one configuration (`params`, the `params` of a `#[tunable]` body, which name it
    /// in errors) and waits for it: checks `dim` and `count` against the device's limits, runs
    /// `launch` (which calls the kernel's generated `launch` with the client, count and dim it
    /// is given) inside CubeCL's profiling, checks that every buffer the closure handed to the
    /// kernel ([`Array::arg`]) was written, and reports the launch's device time. Launches on
    /// one device run one at a time; `launch` must not launch through `self` again.
    pub fn launch<P: Params>(
        &self,
        params: &P,
        count: CubeCount,
        dim: CubeDim,
        launch: impl FnOnce(&Client, CubeCount, CubeDim) + Send,
    ) -> Result<(), CubeclError> {
        let config = params.describe();
        if let Err(reason) = self.check(&count, dim) {
            return Err(CubeclError::Limit { config, reason });
        }
        let _alone = self
            .inner
            .launching
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // The buffers this launch's closure binds, and only those.
        let bound =
            || std::mem::take(&mut *self.inner.bound.lock().unwrap_or_else(|e| e.into_inner()));
        bound();
        let first = self
            .inner
            .launched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(format!("{}: {config}", std::any::type_name::<P>()));
        let client = &self.inner.client;
        let launcher = client.clone();
        let start = Instant::now();
        let profiled = crate::tuner::capture(|| {
            client.profile(move || launch(&launcher, count, dim), &config)
        });
        let failed = |reason: String| CubeclError::Launch {
            config: config.clone(),
            reason,
        };
        let handles = bound();
        let written = cubecl::future::block_on(client.sync_buffers(handles.iter()));
        let (_, duration) = profiled
            .map_err(|panic| failed(format!("the launch panicked: {panic}")))?
            .map_err(|e| failed(message(&e)))?;
        written.map_err(|e| failed(message(&e)))?;
        let ticks = cubecl::future::block_on(duration.resolve())
            .ok_or_else(|| failed("CubeCL's profiling measured no device time".to_owned()))?;
        let device_ms = ticks.duration().as_secs_f64() * 1e3;
        crate::measure::report_device_time(device_ms);
        if first {
            // CubeCL compiled the kernel at this launch.
            let wall_ms = start.elapsed().as_secs_f64() * 1e3;
            crate::measure::report_compile_time(((wall_ms - device_ms) / 1e3).max(0.0));
        }
        Ok(())
    }

    /// Why `dim` and `count` cannot run on this device, if they cannot.
    fn check(&self, count: &CubeCount, dim: CubeDim) -> Result<(), String> {
        let l = &self.inner.limits;
        let sizes = [dim.x, dim.y, dim.z];
        for (axis, (&size, &max)) in ["x", "y", "z"]
            .iter()
            .zip(sizes.iter().zip(&l.max_workgroup_size))
        {
            if size == 0 || size > max {
                return Err(format!(
                    "CubeDim {axis} is {size}; the device allows 1 to {max}"
                ));
            }
        }
        let units = sizes.iter().map(|&s| u64::from(s)).product::<u64>();
        if units > u64::from(l.max_invocations) {
            return Err(format!(
                "CubeDim {sizes:?} has {units} units; the device allows at most {} per cube",
                l.max_invocations
            ));
        }
        if let CubeCount::Static(x, y, z) = *count {
            let max = l.max_workgroups_per_dimension;
            if let Some((axis, n)) = ["x", "y", "z"]
                .into_iter()
                .zip([x, y, z])
                .find(|&(_, n)| n > max)
            {
                return Err(format!(
                    "CubeCount {axis} is {n}; the device allows at most {max} cubes per dimension"
                ));
            }
        }
        Ok(())
    }
}

/// A CubeCL error as one line of text: its message without the backtrace CubeCL appends.
fn message(e: &impl std::fmt::Display) -> String {
    let text = e.to_string();
    let text = text.split("\nBacktrace:").next().unwrap_or(&text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
