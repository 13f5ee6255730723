//! # Pipelines per configuration
//!
//! One shader module per source (parsed and validated by wgpu once per [`Wgpu`] handle, and by
//! naga for the backend's own checks), one compute pipeline per configuration, created with the
//! configuration's values for the source's `override` constants and kept for the life of the
//! handle, failures included: a variant is built once however often it is run.
//!
//! Before the pipeline, the backend applies the overrides to the module with naga
//! (`process_overrides`, what wgpu does later itself) to learn the entry point's workgroup size
//! and the workgroup memory it uses, and checks both against the device's limits, which wgpu
//! does not do for override-sized workgroups.

use super::error::WgpuError;
use super::{Inner, Wgpu, scoped};
use crate::backend::embedded::{self, Provenance};
use crate::backend::{Source, definitions, record};
use crate::measure::report_compile_time;
use crate::params::Params;
use crate::prebuild::{self, Build};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tunable_search::Value;
use tunable_search::format::artifact::Kind;
use wgpu::naga;

type Key = (usize, usize, String);

/// A build done once, by whichever thread gets there first.
type Cell<T> = Arc<OnceLock<Result<Arc<T>, WgpuError>>>;

/// Shader modules by source, pipelines by source and configuration.
#[derive(Default)]
pub(crate) struct Cache {
    modules: HashMap<Key, Cell<Module>>,
    pipelines: HashMap<Key, Cell<Compiled>>,
}

/// A source's shader module, and naga's view of it.
pub(crate) struct Module {
    shader: wgpu::ShaderModule,
    ir: naga::Module,
    info: naga::valid::ModuleInfo,
}

/// A pipeline built for one configuration.
pub(crate) struct Compiled {
    pub(super) pipeline: wgpu::ComputePipeline,
    /// The entry point's workgroup size with the configuration's overrides.
    pub(super) workgroup: [u32; 3],
    /// The workgroup memory the entry point uses, in bytes.
    pub(super) storage: u32,
    /// The pipeline's own cache (where the device has `PIPELINE_CACHE`).
    cache: Option<wgpu::PipelineCache>,
    /// Whether `cache` was created from an embedded blob.
    cache_used: bool,
    /// Why the embedded blobs for this configuration were not used, if there were any.
    cache_refused: Option<String>,
    /// Whether it was launched already (drivers may compile it at its first dispatch).
    pub(super) launched: AtomicBool,
}

/// A compute pipeline built for one configuration, ready to [`launch`](CompiledKernel::launch).
pub struct CompiledKernel {
    pub(super) compiled: Arc<Compiled>,
    pub(super) gpu: Arc<Inner>,
    pub(super) timeout: Option<std::time::Duration>,
    pub(super) config: String,
    pub(super) name: &'static str,
}

impl std::fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("workgroup", &self.compiled.workgroup)
            .finish()
    }
}

impl CompiledKernel {
    /// The configuration it was built for.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// The entry point's `@workgroup_size` with this configuration's overrides.
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.compiled.workgroup
    }

    /// The workgroup memory (`var<workgroup>`) the entry point uses with these overrides, in
    /// bytes.
    pub fn workgroup_storage(&self) -> u32 {
        self.compiled.storage
    }

    /// Always [`Provenance::Compiled`]: a wgpu pipeline is created from its WGSL source (an
    /// embedded pipeline cache only speeds the driver up: [`cache_used`](Self::cache_used)).
    pub fn provenance(&self) -> Provenance {
        Provenance::Compiled
    }

    /// Whether the pipeline was created with a pipeline cache blob embedded in the build (the
    /// one stored with this configuration when it was tuned on this device and driver) that
    /// wgpu accepted and the driver kept. A blob refused by wgpu (another adapter, driver or
    /// wgpu version, a wrong length or checksum) or ignored by the driver is not used, and the
    /// backend says once on stderr what happened to it.
    pub fn cache_used(&self) -> bool {
        self.compiled.cache_used
    }

    /// Why the pipeline cache blob embedded for this configuration was not used, where one was
    /// embedded: wgpu's refusal (`wgpu refused the embedded pipeline cache (...)`), the driver
    /// keeping nothing of it, or the artifact being stale or damaged. `None` when a blob was
    /// used or none was embedded. The backend prints the same reason once on stderr.
    pub fn cache_refused(&self) -> Option<&str> {
        self.compiled.cache_refused.as_deref()
    }

    /// The pipeline's cache data (`PipelineCache::get_data`), where the device has
    /// `PIPELINE_CACHE`: what is stored beside the tuned file for the winner.
    pub fn cache_data(&self) -> Option<Vec<u8>> {
        self.compiled.cache.as_ref().and_then(|c| c.get_data())
    }
}

/// A pipeline cache created from an embedded blob, if wgpu accepted the blob and the driver
/// kept something of it; else what happened to it, for the line the backend prints.
///
/// wgpu checks the blob's own header (its adapter, driver, wgpu version, length and checksum)
/// when it is created without `fallback`: a refusal is its validation error. The driver then
/// takes the data or silently ignores it (Vulkan drivers ignore data of another driver or
/// version); the cache's data read back at once tells which: a cache the driver kept nothing of
/// is no larger than a cache created empty.
fn given_back(gpu: &Inner, label: &str, blob: &[u8]) -> Result<wgpu::PipelineCache, String> {
    // SAFETY: `blob` was returned by `PipelineCache::get_data` on a device with this identity
    // (adapter, backend, driver and its version: the artifact's recipe says so), and it is
    // checked by its checksum in the artifact file; wgpu checks its own header again.
    let (c, error) = scoped(&gpu.device, || unsafe {
        gpu.device
            .create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some(label),
                data: Some(blob),
                fallback: false,
            })
    });
    if let Some(e) = error {
        return Err(format!("wgpu refused the embedded pipeline cache ({e})"));
    }
    // SAFETY: no data is given.
    let (empty, _) = scoped(&gpu.device, || unsafe {
        gpu.device
            .create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some(label),
                data: None,
                fallback: true,
            })
    });
    let size = |c: &wgpu::PipelineCache| c.get_data().map_or(0, |d| d.len());
    if size(&c) <= size(&empty) {
        return Err(format!(
            "the driver kept nothing of the embedded pipeline cache ({} bytes)",
            blob.len()
        ));
    }
    Ok(c)
}

/// The names of the `override` constants that `code` declares, in order, or naga's parse error.
///
/// ```
/// # #[cfg(feature = "wgpu")] {
/// use tunable_runtime::backend::wgpu::declared_overrides;
///
/// let code = "override block_size_x: u32 = 64;\n@id(3) override scale: f32;\n\
///             @compute @workgroup_size(block_size_x) fn main() {}";
/// assert_eq!(declared_overrides(code).unwrap(), ["block_size_x", "scale"]);
/// # }
/// ```
pub fn declared_overrides(code: &str) -> Result<Vec<String>, String> {
    let module = naga::front::wgsl::parse_str(code).map_err(|e| e.emit_to_string(code))?;
    Ok(module
        .overrides
        .iter()
        .filter_map(|(_, o)| o.name.clone())
        .collect())
}

/// The configuration's override constants: one per parameter, keyed as wgpu wants (the
/// override's `@id` if it has one, else its name), each checked against the override's type.
fn constants<P: Params>(
    params: &P,
    module: &naga::Module,
    entry: &str,
    config: &str,
) -> Result<Vec<(String, f64)>, WgpuError> {
    let bad = |reason: String| WgpuError::OverrideValue {
        config: config.to_owned(),
        reason,
    };
    let mut out = Vec::new();
    for (name, value) in P::NAMES.iter().zip(params.to_values()) {
        let Some((_, o)) = module
            .overrides
            .iter()
            .find(|(_, o)| o.name.as_deref() == Some(*name))
        else {
            let declared: Vec<&str> = module
                .overrides
                .iter()
                .filter_map(|(_, o)| o.name.as_deref())
                .collect();
            return Err(WgpuError::NoOverride {
                config: config.to_owned(),
                entry: entry.to_owned(),
                name: (*name).to_owned(),
                declared: if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                },
            });
        };
        let v = match value {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
            Value::Bool(b) => f64::from(u8::from(b)),
            Value::Str(s) => {
                return Err(bad(format!(
                    "{name}={s:?} is a string; a WGSL override takes a number or a bool"
                )));
            }
        };
        let kind = match module.types[o.ty].inner {
            naga::TypeInner::Scalar(s) => s.kind,
            _ => naga::ScalarKind::Float,
        };
        let fits = match kind {
            naga::ScalarKind::Uint => v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v),
            naga::ScalarKind::Sint => {
                v.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&v)
            }
            naga::ScalarKind::Bool => v == 0.0 || v == 1.0,
            _ => v.is_finite(),
        };
        if !fits {
            let ty = match kind {
                naga::ScalarKind::Uint => "u32",
                naga::ScalarKind::Sint => "i32",
                naga::ScalarKind::Bool => "bool",
                _ => "f32",
            };
            return Err(bad(format!(
                "{name}={v} does not fit `override {name}: {ty}` (wgpu would convert it silently)"
            )));
        }
        let key = o.id.map_or_else(|| (*name).to_owned(), |id| id.to_string());
        out.push((key, v));
    }
    Ok(out)
}

impl Wgpu {
    /// The pipeline of `source`'s entry point (`source.kernel`) with `params` as its override
    /// constants (from the cache after the first time): the kernel body of a `#[tunable]`
    /// function passes its `params`. A source that does not compile is a [`WgpuError::Build`]
    /// with naga's diagnostics; a parameter without an override, a [`WgpuError::NoOverride`]; a
    /// workgroup beyond the device's limits, a [`WgpuError::Limit`]. While the tuner collects a
    /// batch ([`crate::prebuild`]) the pipeline is handed over and the call fails with
    /// [`WgpuError::Deferred`].
    pub fn kernel<P: Params>(
        &self,
        source: &Source,
        params: &P,
    ) -> Result<CompiledKernel, WgpuError> {
        record::note_source(source, &self.inner.id);
        let config = params.describe();
        let module = self.module(source, &config)?;
        let consts = constants(params, &module.ir, source.kernel, &config)?;
        // The recording and the embedded artifacts know configurations by their definitions.
        let defs = definitions(params).map_err(|reason| WgpuError::OverrideValue {
            config: config.clone(),
            reason,
        })?;
        let cell = Arc::clone(
            self.inner
                .cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pipelines
                .entry(source.cache_key(&defs))
                .or_default(),
        );
        let host = self.inner.host;
        let embedded = P::artifacts();
        if prebuild::collecting() {
            if cell.get().is_none() {
                let (gpu, source, config, defs) =
                    (Arc::clone(&self.inner), *source, config.clone(), defs);
                prebuild::defer(Build::new(host, move || {
                    cell.get_or_init(|| {
                        build(&gpu, &module, &source, &consts, &defs, &config, embedded)
                            .map(Arc::new)
                    });
                }));
            }
            return Err(WgpuError::Deferred { config });
        }
        prebuild::note_request(host);
        let start = Instant::now();
        let compiled = cell
            .get_or_init(|| {
                build(
                    &self.inner,
                    &module,
                    source,
                    &consts,
                    &defs,
                    &config,
                    embedded,
                )
                .map(Arc::new)
            })
            .clone();
        report_compile_time(start.elapsed().as_secs_f64());
        let compiled = compiled?;
        self.note(source, &defs, &compiled);
        Ok(CompiledKernel {
            compiled,
            gpu: Arc::clone(&self.inner),
            timeout: self.timeout,
            config,
            name: source.kernel,
        })
    }

    /// The shader module of `source`, created (and checked by naga) the first time.
    fn module(&self, source: &Source, config: &str) -> Result<Arc<Module>, WgpuError> {
        let cell = Arc::clone(
            self.inner
                .cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .modules
                .entry(source.cache_key(&[]))
                .or_default(),
        );
        let start = Instant::now();
        let module = cell
            .get_or_init(|| create_module(&self.inner, source).map(Arc::new))
            .clone();
        report_compile_time(start.elapsed().as_secs_f64());
        // The failure is the source's, whichever configuration asked first: name this one.
        module.map_err(|e| match e {
            WgpuError::Build { log, .. } => WgpuError::Build {
                config: config.to_owned(),
                log,
            },
            other => other,
        })
    }

    /// Notes the pipeline for the tuner's recording, if one is in progress on this thread: its
    /// pipeline cache blob is what is stored beside the tuned file.
    fn note(&self, source: &Source, defs: &[String], compiled: &Arc<Compiled>) {
        if compiled.cache.is_none() {
            return;
        }
        let target = &self.inner.id;
        let key = || record::key(source.code, source.kernel, source.options, defs, target);
        record::note(key, defs, || {
            let recipe =
                embedded::wanted(source, defs, target, &[Kind::WgpuPipelineCache]).remove(0);
            let compiled = Arc::clone(compiled);
            Box::new(move || {
                match compiled
                    .cache
                    .as_ref()
                    .and_then(wgpu::PipelineCache::get_data)
                {
                    Some(b) if !b.is_empty() => Ok(vec![(recipe.clone(), b)]),
                    _ => Err("the driver gave no pipeline cache data".to_owned()),
                }
            })
        });
    }
}

/// The shader module of `source`, validated by wgpu (inside an error scope) and parsed and
/// validated by naga for the backend's own checks.
fn create_module(gpu: &Inner, source: &Source) -> Result<Module, WgpuError> {
    let fail = |log: String| WgpuError::Build {
        config: String::new(),
        log,
    };
    let (shader, error) = scoped(&gpu.device, || {
        gpu.device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(source.kernel),
                source: wgpu::ShaderSource::Wgsl(source.code.into()),
            })
    });
    if let Some(log) = error {
        return Err(fail(log));
    }
    let ir = naga::front::wgsl::parse_str(source.code)
        .map_err(|e| fail(e.emit_to_string(source.code)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&ir)
    .map_err(|e| fail(e.emit_to_string(source.code)))?;
    Ok(Module { shader, ir, info })
}

/// The entry point's workgroup size and workgroup memory with the overrides applied, or why
/// they cannot be applied.
fn resolve(
    module: &Module,
    entry: &str,
    consts: &[(String, f64)],
    config: &str,
) -> Result<([u32; 3], u32), WgpuError> {
    let mut map = naga::back::PipelineConstants::default();
    for (k, v) in consts {
        map.insert(k.clone(), *v);
    }
    let stage = naga::ShaderStage::Compute;
    let Some(index) = module
        .ir
        .entry_points
        .iter()
        .position(|e| e.name == entry && e.stage == stage)
    else {
        return Err(WgpuError::NoEntryPoint {
            config: config.to_owned(),
            entry: entry.to_owned(),
        });
    };
    let (resolved, _) = naga::back::pipeline_constants::process_overrides(
        &module.ir,
        &module.info,
        Some((stage, entry)),
        &map,
    )
    .map_err(|e| WgpuError::Build {
        config: config.to_owned(),
        log: format!("the overrides cannot be applied: {e}"),
    })?;
    let ep = resolved
        .entry_points
        .iter()
        .find(|e| e.name == entry && e.stage == stage)
        .ok_or_else(|| WgpuError::NoEntryPoint {
            config: config.to_owned(),
            entry: entry.to_owned(),
        })?;
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(resolved.to_ctx())
        .map_err(|e| WgpuError::Build {
            config: config.to_owned(),
            log: format!("type layout: {e}"),
        })?;
    // The globals the entry point uses, from the analysis of the module before the overrides
    // (which does not change which globals exist or are used).
    let used = module.info.get_entry_point(index);
    let storage: u64 = resolved
        .global_variables
        .iter()
        .filter(|(h, g)| g.space == naga::AddressSpace::WorkGroup && !used[*h].is_empty())
        .map(|(_, g)| u64::from(layouter[g.ty].size))
        .sum();
    Ok((ep.workgroup_size, storage.min(u64::from(u32::MAX)) as u32))
}

/// Checks the variant against the device's limits.
fn check_limits(
    gpu: &Inner,
    workgroup: [u32; 3],
    storage: u32,
    config: &str,
) -> Result<(), WgpuError> {
    let limits = &gpu.limits;
    let over = |what: String, value: u64, max: u64| {
        (value > max).then(|| WgpuError::Limit {
            config: config.to_owned(),
            what,
            value,
            max,
        })
    };
    for (d, axis) in ["x", "y", "z"].iter().enumerate() {
        if let Some(e) = over(
            format!("workgroup size {axis}"),
            workgroup[d].into(),
            limits.max_workgroup_size[d].into(),
        ) {
            return Err(e);
        }
    }
    let invocations = workgroup.iter().map(|&w| u64::from(w)).product();
    if let Some(e) = over(
        "invocations per workgroup".into(),
        invocations,
        limits.max_invocations.into(),
    ) {
        return Err(e);
    }
    if let Some(e) = over(
        "workgroup storage (bytes)".into(),
        storage.into(),
        limits.max_workgroup_storage.into(),
    ) {
        return Err(e);
    }
    Ok(())
}

/// Builds the pipeline for one configuration: overrides resolved and checked against the
/// limits, then created inside an error scope, with a pipeline cache (from an embedded blob
/// for this configuration and device if there is one).
fn build(
    gpu: &Inner,
    module: &Module,
    source: &Source,
    consts: &[(String, f64)],
    defs: &[String],
    config: &str,
    embedded: &'static [&'static [u8]],
) -> Result<Compiled, WgpuError> {
    let (workgroup, storage) = resolve(module, source.kernel, consts, config)?;
    check_limits(gpu, workgroup, storage, config)?;
    let (mut cache, mut cache_used, mut cache_refused) = (None, false, None);
    if gpu.pipeline_cache {
        let wanted = embedded::wanted(source, defs, &gpu.id, &[Kind::WgpuPipelineCache]);
        let mut found = embedded::find(embedded, &wanted);
        if let Some(&(_, blob)) = found.usable.first() {
            match given_back(gpu, source.kernel, blob) {
                Ok(c) => (cache, cache_used) = (Some(c), true),
                Err(why) => found.refused.push(why),
            }
        }
        embedded::say_compiling(source.kernel, config, &found.refused);
        if !cache_used && !found.refused.is_empty() {
            cache_refused = Some(found.refused.join("; "));
        }
        if cache.is_none() {
            // SAFETY: no data is given, so there is nothing for the driver to trust.
            let (c, error) = scoped(&gpu.device, || unsafe {
                gpu.device
                    .create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                        label: Some(source.kernel),
                        data: None,
                        fallback: true,
                    })
            });
            cache = error.is_none().then_some(c);
        }
    }
    let refs: Vec<(&str, f64)> = consts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let (pipeline, error) = scoped(&gpu.device, || {
        gpu.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(source.kernel),
                layout: None,
                module: &module.shader,
                entry_point: Some(source.kernel),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &refs,
                    zero_initialize_workgroup_memory: true,
                },
                cache: cache.as_ref(),
            })
    });
    if let Some(log) = error {
        return Err(WgpuError::Build {
            config: config.to_owned(),
            log,
        });
    }
    Ok(Compiled {
        pipeline,
        workgroup,
        storage,
        cache,
        cache_used,
        cache_refused,
        launched: AtomicBool::new(false),
    })
}
