//! # CUDA backend (feature `cuda`)
//!
//! Compiles CUDA C kernels with NVRTC per configuration, launches them through the driver API and
//! times them with CUDA events, through [cudarc] 0.19 for the driver, with both libraries loaded
//! at run time: a build needs no CUDA toolkit, and a machine without a driver or NVRTC gets
//! [`CudaError::MissingLibrary`] naming the library (checked before any driver call, as cudarc
//! panics otherwise), so a program can fall back to its baked or default configurations. NVRTC
//! of CUDA 12 or 13, whichever is there ([`nvrtc`] says which, and where it was found).
//!
//! ```no_run
//! # #![allow(unsafe_code)]
//! use tunable::backend::cuda::{Buffer, Cuda, CudaError};
//! use tunable::backend::{Dims, Source};
//! use tunable::tunable;
//!
//! static SCALE: Source = Source::new("scale", r#"
//!     extern "C" __global__ void scale(float *x, float a, int n) {
//!         int i = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
//!         for (int k = 0; k < PER_THREAD; k++) if (i + k < n) x[i + k] *= a;
//!     }"#);
//!
//! #[tunable(block_size_x = [64, 128, 256, 512], PER_THREAD = [1, 2, 4],
//!           device = gpu.device_id(), restore = x.write(&vec![1.0; n]).unwrap(),
//!           verify = x, key = tunable::key::next_power_of_two(n as u64))]
//! fn scale(gpu: &Cuda, x: &mut Buffer<f32>, a: f32, n: usize) -> Result<(), CudaError> {
//!     let dims = Dims::divide(n, block_size_x, block_size_x * PER_THREAD);
//!     // SAFETY: the kernel takes (float*, float, int) and only touches x[0..n].
//!     unsafe { gpu.kernel(&SCALE, params)?.launch(dims).arg(x).arg(&a).arg(&(n as i32)).run() }
//! }
//!
//! let gpu = Cuda::new(0)?;
//! let mut x = gpu.upload(&vec![1.0f32; 1 << 20])?;
//! scale(&gpu, &mut x, 2.0, 1 << 20)?;
//! # Ok::<(), CudaError>(())
//! ```
//!
//! - **Compilation:** NVRTC with `--gpu-architecture=sm_XY` of the device's compute capability,
//!   the source's options and one `-DNAME=value` per parameter; entry points are `extern "C"`.
//!   With NVRTC 12.4 or later `-minimal` is tried first (the same build, sooner; a source that
//!   needs the full language is compiled again without it; `TUNABLE_NVRTC_MINIMAL=off` never
//!   tries it).
//!   Compiling for the real architecture runs `ptxas` inside NVRTC, so shared-memory and
//!   register limits show up as compile failures with its log. The CUBIN is loaded as a module;
//!   modules are cached per configuration in the [`Cuda`] handle, failures included.
//!   [`compile`] does the same without a device. While the tuner collects what to prebuild
//!   ([`crate::prebuild`]), the NVRTC compilation is handed over to its pool (NVRTC runs on any
//!   thread) and the module is loaded on the first launch; each configuration is compiled once,
//!   by whichever thread gets there first, and a thread that needs it meanwhile waits for it.
//!   Compile time is reported with [`crate::measure::report_compile_time`].
//! - **Several configurations in one program:** [`compile_many`] compiles up to
//!   [`PER_PROGRAM`] configurations of a source in one NVRTC program, sharing its fixed cost
//!   (each in a namespace of its own, its entry point renamed: [`Compiled::entry`]), for an
//!   offline sweep; the configurations of one program loaded from the build cache share its
//!   module.
//! - **Builds kept on disk:** every build (and every program NVRTC rejects, with its log) is
//!   also kept in a folder shared by every process ([`build_cache`]; `TUNABLE_BUILD_CACHE`
//!   names it or, `off`, turns it off), so that the next tuning of the same kernel, another
//!   problem size or a rerun, loads each configuration compiled before instead of compiling it
//!   again.
//! - **Embedded binaries:** a configuration whose CUBIN or PTX was embedded for this
//!   architecture (its tuned winner, see [`crate::backend::embedded`]) is loaded from it, without
//!   compiling; NVRTC is looked for only when something must be compiled, so a shipped binary
//!   whose baked configurations all have an embedded image needs the driver alone. [`image`]
//!   makes the choice without a device.
//! - **Limits before launch:** threads per block against the function's
//!   `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK` (which accounts for its registers), block and grid
//!   dimensions against the device's, static plus dynamic shared memory against
//!   `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`; then the launch itself
//!   (`CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`, ...). Each is a typed failure of the configuration.
//! - **Timing:** two events created with `CU_EVENT_DEFAULT` (cudarc's default flags disable
//!   timing) recorded around the launch; their elapsed time is the launch's device time.
//! - **Time limit:** [`Cuda::with_timeout`] (default `TUNABLE_TIMEOUT`, else none). A launch
//!   waits in the driver either way (a running kernel cannot be cancelled); one whose events'
//!   time exceeds the limit is a [`CudaError::Timeout`].
//! - **Identity:** `cuda: <name> (sm_XY, driver <version>)`.
//!
//! Launching is `unsafe`: the arguments must match the kernel's parameters and the kernel must
//! stay inside its buffers; neither can be checked from the host.

#![allow(unsafe_code)]

mod buffer;
mod compile;
mod disk;
mod error;
mod image;
mod launch;
mod library;
mod minimal;
mod nvrtc;
mod program;

pub use buffer::Buffer;
pub use compile::{Compiled, compile};
pub use disk::{BuildCacheUse, build_cache};
pub use error::CudaError;
pub use image::{Image, image};
pub use launch::{CompiledKernel, KernelArg, Launch};
pub use library::{Nvrtc, nvrtc};
pub use program::{PER_PROGRAM, compile_many};

use crate::backend::Source;
use crate::backend::embedded::{self, Provenance};
use crate::measure::report_compile_time;
use crate::params::Params;
use crate::prebuild;
use cudarc::driver::CudaModule;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The name of a driver error code.
pub(crate) fn code(e: DriverError) -> String {
    format!("{:?}", e.0)
}

/// The device limits that decide whether a launch can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub max_threads_per_block: usize,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z`.
    pub max_block: [usize; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z`.
    pub max_grid: [usize; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN` in bytes.
    pub max_shared_per_block: usize,
}

/// A module loaded for one configuration.
pub(crate) struct Loaded {
    pub(crate) function: CudaFunction,
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub(crate) max_threads: usize,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`.
    pub(crate) static_shared: usize,
    /// Loaded from an embedded image or compiled.
    pub(crate) provenance: Provenance,
    /// The images the module was made of or compiled with (for the tuner's recording).
    images: Vec<Image>,
}

/// What compiling a configuration gives: its images, CUBIN first.
type Built = Result<Vec<Image>, CudaError>;

/// A compile cache key ([`Source::cache_key`]).
type Key = (usize, usize, String);

/// A configuration's NVRTC build: done once, by whichever thread gets there first.
type BuildCell = Arc<OnceLock<Built>>;

/// A module loaded from an image of several configurations, by the image's bytes.
type SharedModule = (Weak<[u8]>, Weak<CudaModule>);

pub(crate) struct Inner {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    id: String,
    arch: String,
    pub(crate) limits: Limits,
    cache: Mutex<HashMap<Key, Result<Arc<Loaded>, CudaError>>>,
    /// Configurations handed to a prebuild pool ([`crate::prebuild`]), until their module is
    /// loaded.
    builds: Mutex<HashMap<Key, BuildCell>>,
    /// The modules of programs of several configurations, by their image's bytes, so that the
    /// configurations of one program share one module.
    shared_modules: Mutex<Vec<SharedModule>>,
}

/// A CUDA device with its context, stream and module cache. Cheap to clone (shared).
#[derive(Clone)]
pub struct Cuda {
    inner: Arc<Inner>,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda")
            .field("device", &self.inner.id)
            .field("limits", &self.inner.limits)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Cuda {
    /// Device `ordinal` (0 is the first GPU). Checks the backend's settings
    /// (`TUNABLE_NVRTC_MINIMAL`, `TUNABLE_TIMEOUT`, and `TUNABLE_NVRTC_BATCH`, which is no
    /// longer read, unset: [`CudaError::BadSetting`], [`CudaError::BadTimeout`]) and that the driver loads before any driver call; NVRTC is
    /// looked for when a kernel is first compiled (not for embedded binaries).
    pub fn new(ordinal: usize) -> Result<Cuda, CudaError> {
        minimal::setting()?;
        program::refuse_removed_setting()?;
        library::driver()?;
        let api = |call| {
            move |e| CudaError::Api {
                call,
                code: code(e),
            }
        };
        let ctx = CudaContext::new(ordinal).map_err(|e| CudaError::NoDevice {
            reason: format!("device {ordinal}: {}", code(e)),
        })?;
        let name = ctx.name().map_err(api("cuDeviceGetName"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(api("cuDeviceGetAttribute"))?;
        let mut version = 0;
        // SAFETY: the driver is loaded and initialized (by `CudaContext::new`); `version` is
        // written by the call.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(api("cuDriverGetVersion"))?;
        let attr = |a: CUdevice_attribute| {
            ctx.attribute(a)
                .map(|v| v.max(0) as usize)
                .map_err(api("cuDeviceGetAttribute"))
        };
        use CUdevice_attribute::*;
        let limits = Limits {
            max_threads_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        };
        let stream = ctx.default_stream();
        let arch = format!("sm_{major}{minor}");
        Ok(Cuda {
            inner: Arc::new(Inner {
                ctx,
                stream,
                id: format!(
                    "cuda: {} (sm_{major}{minor}, driver {}.{})",
                    name.trim(),
                    version / 1000,
                    version % 1000 / 10
                ),
                limits,
                cache: Mutex::new(HashMap::new()),
                builds: Mutex::new(HashMap::new()),
                arch,
                shared_modules: Mutex::new(Vec::new()),
            }),
            timeout: crate::settings::launch_timeout()
                .map_err(|value| CudaError::BadTimeout { value })?,
        })
    }

    /// The device's identity for the tuned-config store (`device = gpu.device_id()` in
    /// `#[tunable]`): `cuda: <name> (sm_XY, driver <major>.<minor>)`.
    pub fn device_id(&self) -> &str {
        &self.inner.id
    }

    /// The architecture kernels are compiled for: `sm_` and the compute capability.
    pub fn arch(&self) -> &str {
        &self.inner.arch
    }

    /// The device's launch limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The same device and cache with a time limit per launch (`None`: wait as long as it
    /// takes). A launch still running at the limit is a [`CudaError::Timeout`].
    pub fn with_timeout(&self, limit: Option<Duration>) -> Cuda {
        Cuda {
            inner: Arc::clone(&self.inner),
            timeout: limit,
        }
    }

    /// `source` compiled and loaded for `params` (from the cache after the first time): the
    /// kernel body of a `#[tunable]` function passes its `params`.
    pub fn kernel<P: Params>(
        &self,
        source: &Source,
        params: &P,
    ) -> Result<CompiledKernel, CudaError> {
        crate::backend::record::note_source(source, &self.inner.arch);
        let (config, defs) = compile::rendered(params)?;
        let key = source.cache_key(&defs);
        if prebuild::collecting() {
            let loaded = self
                .inner
                .cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&key);
            if !loaded && !image::has_embedded(source, &defs, &self.inner.arch, P::artifacts()) {
                let cell = self.inner.build_cell(&key);
                if cell.get().is_none() {
                    let (arch, source, config) = (self.inner.arch.clone(), *source, config.clone());
                    prebuild::defer(prebuild::Build::new(false, move || {
                        cell.get_or_init(|| {
                            image::compile_images(&source, &defs, &arch, &config, true)
                        });
                    }));
                }
            }
            return Err(CudaError::Deferred { config });
        }
        prebuild::note_request(false);
        let ordinal = self.inner.ctx.ordinal();
        crate::evaluation::with(|c| c.cuda = Some(ordinal));
        let start = Instant::now();
        let mut cache = self.inner.cache.lock().unwrap_or_else(|e| e.into_inner());
        let loaded = cache
            .entry(key.clone())
            .or_insert_with(|| {
                self.load(source, &defs, &config, &key, P::artifacts())
                    .map(Arc::new)
            })
            .clone();
        drop(cache);
        report_compile_time(start.elapsed().as_secs_f64());
        let loaded = loaded?;
        image::note(source, &defs, &self.inner.arch, &loaded.images);
        Ok(CompiledKernel {
            loaded,
            cuda: Arc::clone(&self.inner),
            timeout: self.timeout,
            config,
        })
    }

    /// The module of a configuration: from an embedded image that fits and that the driver
    /// takes, else compiled (prebuilt, or now) and loaded, saying why when an image was embedded.
    fn load(
        &self,
        source: &Source,
        defs: &[String],
        config: &str,
        key: &Key,
        files: &'static [&'static [u8]],
    ) -> Result<Loaded, CudaError> {
        let arch = &self.inner.arch;
        let (embedded, mut reasons) = image::embedded_images(source, defs, arch, files);
        for image in &embedded {
            match self.module(source, config, image) {
                Ok(mut loaded) => {
                    loaded.images = vec![image.clone()];
                    return Ok(loaded);
                }
                Err(e) => reasons.push(format!(
                    "the driver rejected the embedded {} ({e})",
                    image.kind
                )),
            }
        }
        embedded::say_compiling(source.kernel, config, &reasons);
        // Prebuilt (or being built: wait for it), else compiled now.
        let cell = self
            .inner
            .builds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key)
            .unwrap_or_default();
        let images = cell
            .get_or_init(|| image::compile_images(source, defs, &self.inner.arch, config, true))
            .clone()?;
        // Always a CUBIN first for an `sm_` architecture.
        let mut loaded = self.module(source, config, &images[0])?;
        loaded.images = images;
        Ok(loaded)
    }

    /// `image` loaded as a module (the one already loaded for another configuration of its
    /// program, if any), with its kernel function and limits.
    fn module(&self, source: &Source, config: &str, image: &Image) -> Result<Loaded, CudaError> {
        let module = self
            .inner
            .module(image, image.entry != source.kernel)
            .map_err(|e| CudaError::ModuleLoad {
                config: config.to_owned(),
                code: code(e),
            })?;
        let function = module
            .load_function(&image.entry)
            .map_err(|e| CudaError::NoKernel {
                config: config.to_owned(),
                kernel: source.kernel.to_owned(),
                code: code(e),
            })?;
        let attr = |r: Result<i32, DriverError>| {
            r.map(|v| v.max(0) as usize)
                .map_err(|e| CudaError::ModuleLoad {
                    config: config.to_owned(),
                    code: code(e),
                })
        };
        Ok(Loaded {
            max_threads: attr(function.max_threads_per_block())?,
            static_shared: attr(function.shared_size_bytes())?,
            function,
            provenance: image.provenance,
            images: Vec::new(),
        })
    }
}

impl Inner {
    /// The build cell of the configuration `key`, made if it has none.
    fn build_cell(&self, key: &Key) -> BuildCell {
        let mut builds = self.builds.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(builds.entry(key.clone()).or_default())
    }

    /// `image` loaded as a module; with `shared` (an image of several configurations), the module
    /// already loaded from the same bytes, if one is.
    fn module(&self, image: &Image, shared: bool) -> Result<Arc<CudaModule>, DriverError> {
        let load = || {
            self.ctx
                .load_module(cudarc::nvrtc::Ptx::from_binary(image.module_data()))
        };
        if !shared {
            return load();
        }
        let mut modules = self
            .shared_modules
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        modules.retain(|(bytes, module)| bytes.strong_count() > 0 && module.strong_count() > 0);
        let found = modules.iter().find_map(|(bytes, module)| {
            let bytes = bytes.upgrade()?;
            Arc::ptr_eq(&bytes, &image.bytes)
                .then(|| module.upgrade())
                .flatten()
        });
        if let Some(module) = found {
            return Ok(module);
        }
        let module = load()?;
        modules.push((Arc::downgrade(&image.bytes), Arc::downgrade(&module)));
        Ok(module)
    }
}
