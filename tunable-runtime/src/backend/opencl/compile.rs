//! # Compiling per configuration
//!
//! One program per (source, options, definitions), built for the handle's device and kept for
//! the life of the [`OpenCl`] handle, failed builds included: a variant is compiled once however
//! often it is run, and a variant that does not compile fails again at once with the same log.
//!
//! Builds run outside the cache's lock, one cell per program: several threads build different
//! programs at once, and a thread asking for a program being built waits for that build. While
//! the tuner collects a batch ([`crate::prebuild`]), a request hands the build over to the tuner's
//! compile pool and fails with [`OpenClError::Deferred`]. Build time, and the first launch's
//! time beyond the kernel's own (a CPU driver such as PoCL compiles the work-group function
//! then), are reported with [`crate::measure::report_compile_time`].

use super::error::OpenClError;
use super::{Inner, OpenCl, code};
use crate::backend::embedded::{self, Provenance};
use crate::backend::{Source, definitions, record};
use crate::measure::report_compile_time;
use crate::params::Params;
use crate::prebuild::{self, Build};
use opencl3::kernel::Kernel as ClKernel;
use opencl3::program::Program;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tunable_search::format::artifact::Kind;

type Key = (usize, usize, String);

/// A program's build: done once, by whichever thread gets there first.
type Cell = Arc<OnceLock<Result<Arc<Compiled>, OpenClError>>>;

/// Compiled kernels by source and options.
#[derive(Default)]
pub(crate) struct Cache(HashMap<Key, Cell>);

/// A built program and its kernel object.
pub(crate) struct Compiled {
    /// The kernel object; its arguments are state, so launches take the lock.
    pub(super) kernel: Mutex<ClKernel>,
    program: Program,
    /// Loaded from an embedded binary or compiled.
    pub(super) provenance: Provenance,
    /// `CL_KERNEL_WORK_GROUP_SIZE` on this device.
    pub(super) max_work_group: usize,
    /// `CL_KERNEL_NUM_ARGS`.
    pub(super) num_args: usize,
    /// Whether it was launched already (its first launch may compile on a CPU driver).
    pub(super) launched: AtomicBool,
}

/// A kernel compiled for one configuration, ready to [`launch`](CompiledKernel::launch).
pub struct CompiledKernel {
    pub(super) compiled: Arc<Compiled>,
    pub(super) cl: Arc<Inner>,
    pub(super) timeout: Option<std::time::Duration>,
    pub(super) config: String,
    pub(super) name: &'static str,
}

impl std::fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("max_work_group", &self.compiled.max_work_group)
            .finish()
    }
}

impl CompiledKernel {
    /// The configuration it was compiled for.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// The largest work-group this kernel can run on this device (`CL_KERNEL_WORK_GROUP_SIZE`).
    pub fn max_work_group_size(&self) -> usize {
        self.compiled.max_work_group
    }

    /// Whether the program was loaded from an embedded binary or compiled from its source.
    pub fn provenance(&self) -> Provenance {
        self.compiled.provenance
    }
}

impl OpenCl {
    /// `source` compiled for `params` (from the cache after the first time): the kernel body of
    /// a `#[tunable]` function passes its `params`. A failed build is an
    /// [`OpenClError::Build`] with the compiler's log; while the tuner collects a batch
    /// ([`crate::prebuild`]) the build is handed over and the call fails with
    /// [`OpenClError::Deferred`].
    pub fn kernel<P: Params>(
        &self,
        source: &Source,
        params: &P,
    ) -> Result<CompiledKernel, OpenClError> {
        record::note_source(source, &self.inner.id);
        let config = params.describe();
        let defs = definitions(params).map_err(|reason| OpenClError::Definition {
            config: config.clone(),
            reason,
        })?;
        let key = source.cache_key(&defs);
        let cell = Arc::clone(
            self.inner
                .cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .entry(key)
                .or_default(),
        );
        let host = self.inner.host;
        let embedded = P::artifacts();
        if prebuild::collecting() {
            if cell.get().is_none() {
                let (cl, source) = (Arc::clone(&self.inner), *source);
                let config = config.clone();
                prebuild::defer(Build::new(host, move || {
                    cell.get_or_init(|| {
                        build(&cl, &source, &defs, &config, embedded).map(Arc::new)
                    });
                }));
            }
            return Err(OpenClError::Deferred { config });
        }
        prebuild::note_request(host);
        let start = Instant::now();
        let compiled = cell
            .get_or_init(|| build(&self.inner, source, &defs, &config, embedded).map(Arc::new))
            .clone();
        report_compile_time(start.elapsed().as_secs_f64());
        let compiled = compiled?;
        self.note(source, &defs, &compiled);
        Ok(CompiledKernel {
            compiled,
            cl: Arc::clone(&self.inner),
            timeout: self.timeout,
            config,
            name: source.kernel,
        })
    }

    /// Notes the program for the tuner's recording, if one is in progress on this thread.
    fn note(&self, source: &Source, defs: &[String], compiled: &Arc<Compiled>) {
        let target = &self.inner.id;
        let key = || record::key(source.code, source.kernel, source.options, defs, target);
        record::note(key, defs, || {
            let recipe = embedded::wanted(source, defs, target, &[Kind::OpenClBinary]).remove(0);
            let compiled = Arc::clone(compiled);
            Box::new(move || {
                let binaries = compiled
                    .program
                    .get_binaries()
                    .map_err(|e| format!("clGetProgramInfo(CL_PROGRAM_BINARIES): {}", code(e)))?;
                match binaries.into_iter().next() {
                    Some(b) if !b.is_empty() => Ok(vec![(recipe.clone(), b)]),
                    _ => Err("the driver gave no program binary".to_owned()),
                }
            })
        });
    }
}

/// Builds the program: from a binary embedded for this configuration and device if one fits and
/// the driver takes it, else from the source (saying why, when a binary was there).
fn build(
    cl: &Inner,
    source: &Source,
    defs: &[String],
    config: &str,
    embedded: &'static [&'static [u8]],
) -> Result<Compiled, OpenClError> {
    let options: Vec<&str> = source
        .options
        .iter()
        .copied()
        .chain(defs.iter().map(String::as_str))
        .collect();
    let options = options.join(" ");
    let fail = |log: String| OpenClError::Build {
        config: config.to_owned(),
        log,
    };
    if options.contains('\0') || source.code.contains('\0') {
        return Err(fail("the source or an option contains a NUL byte".into()));
    }
    let wanted = embedded::wanted(source, defs, &cl.id, &[Kind::OpenClBinary]);
    let found = embedded::find(embedded, &wanted);
    let mut reasons = found.refused;
    for (kind, bytes) in found.usable {
        let loaded = from_binary(cl, bytes, &options).and_then(|program| {
            finish(cl, program, source, config, Provenance::Embedded).map_err(|e| e.to_string())
        });
        match loaded {
            Ok(compiled) => return Ok(compiled),
            Err(why) => reasons.push(format!("the driver rejected the embedded {kind} ({why})")),
        }
    }
    embedded::say_compiling(source.kernel, config, &reasons);
    let mut program = Program::create_from_source(&cl.context, source.code)
        .map_err(|e| fail(format!("clCreateProgramWithSource: {}", code(e))))?;
    program
        .build(&[cl.device.id()], &options)
        .map_err(|e| fail(with_log(&program, cl, code(e))))?;
    finish(cl, program, source, config, Provenance::Compiled)
}

/// `error`, followed by the program's build log if it has one.
fn with_log(program: &Program, cl: &Inner, error: String) -> String {
    let log = program.get_build_log(cl.device.id()).unwrap_or_default();
    let log = log.trim();
    if log.is_empty() {
        error
    } else {
        format!("{error}\n{log}")
    }
}

/// A program created from `binary` for the handle's device and built with `options`, or what
/// the driver said against it.
fn from_binary(cl: &Inner, binary: &[u8], options: &str) -> Result<Program, String> {
    // SAFETY: the device is the one the context was created from.
    let mut program =
        unsafe { Program::create_from_binary(&cl.context, &[cl.device.id()], &[binary]) }
            .map_err(|e| format!("clCreateProgramWithBinary: {}", code(e)))?;
    program
        .build(&[cl.device.id()], options)
        .map_err(|e| with_log(&program, cl, format!("clBuildProgram: {}", code(e))))?;
    Ok(program)
}

/// The kernel object of a built program, with its limits on this device.
fn finish(
    cl: &Inner,
    program: Program,
    source: &Source,
    config: &str,
    provenance: Provenance,
) -> Result<Compiled, OpenClError> {
    let kernel = ClKernel::create(&program, source.kernel).map_err(|e| OpenClError::NoKernel {
        config: config.to_owned(),
        kernel: source.kernel.to_owned(),
        code: code(e),
    })?;
    let api = |call| {
        move |e| OpenClError::Launch {
            config: config.to_owned(),
            call,
            code: code(e),
        }
    };
    let max_work_group = kernel
        .get_work_group_size(cl.device.id())
        .map_err(api("clGetKernelWorkGroupInfo"))?;
    let num_args = kernel.num_args().map_err(api("clGetKernelInfo"))? as usize;
    Ok(Compiled {
        kernel: Mutex::new(kernel),
        program,
        provenance,
        max_work_group,
        num_args,
        launched: AtomicBool::new(false),
    })
}
