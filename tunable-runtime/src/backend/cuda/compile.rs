//! # Compiling with NVRTC
//!
//! Each configuration is compiled with `--gpu-architecture=<arch>`, the source's options and one
//! `-DNAME=value` per parameter, and `-minimal` first where NVRTC takes it (the same output in
//! less time; a source that needs the full language is compiled again without it: see
//! [`super::minimal`]). For a real architecture (`sm_80`) NVRTC also runs `ptxas`, so
//! resource errors (too much shared memory, too many registers for a bound) are compile errors
//! with `ptxas`'s message, and the result holds a CUBIN as well as the PTX; for a virtual one
//! (`compute_80`) it holds PTX only. A [`super::Cuda`] handle compiles for its device's
//! architecture and loads the CUBIN; [`compile`] works without a GPU or driver, which is how CI
//! checks that every variant of a kernel compiles.

use super::disk;
use super::error::CudaError;
use super::library;
use super::minimal;
use super::nvrtc::{Failure, Output};
use crate::backend::{Source, definitions};
use crate::params::Params;
use std::ffi::CString;

/// A kernel compiled for one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX.
    pub ptx: String,
    /// The CUBIN, when compiled for a real architecture (`sm_XY`).
    pub cubin: Option<Vec<u8>>,
    /// NVRTC's log (warnings; empty when there are none).
    pub log: String,
    /// The entry point's name in the PTX and CUBIN: the source's kernel, or a name of its own
    /// when several configurations were compiled in one program ([`super::compile_many`]).
    pub entry: String,
}

/// Compiles `source` for `params` with NVRTC for `arch` (`sm_80`, `compute_90`, ...), without a
/// device. Fails with [`CudaError::MissingLibrary`] if NVRTC cannot be found, with
/// [`CudaError::Compile`] and NVRTC's log if this configuration does not compile, and with
/// [`CudaError::NoKernel`] if the PTX has no entry point named `source.kernel`.
pub fn compile<P: Params>(source: &Source, params: &P, arch: &str) -> Result<Compiled, CudaError> {
    library::nvrtc()?;
    let (config, defs) = rendered(params)?;
    compile_with(source, &defs, arch, &config, false)
}

/// `params`' description and its definitions (`-DNAME=value`), or the error saying which value
/// cannot be written as one.
pub(crate) fn rendered<P: Params>(params: &P) -> Result<(String, Vec<String>), CudaError> {
    let config = params.describe();
    match definitions(params) {
        Ok(defs) => Ok((config, defs)),
        Err(reason) => Err(CudaError::Definition { config, reason }),
    }
}

/// The hash of `source`'s text (FNV-1a) that this process remembers sources by (the ones that
/// need NVRTC's full language, the ones compiled one configuration per program).
pub(crate) fn code_hash(source: &Source) -> u64 {
    tunable_search::fingerprint::fnv1a(&[source.code.as_bytes()])
}

/// The build cache and the key under which it keeps the compilation of `source` with `options`
/// (`None`: the cache is off, or the source reads files the key cannot see).
pub(crate) fn cache_key(
    nvrtc: &library::Nvrtc,
    source: &Source,
    options: &[String],
) -> Option<(&'static disk::BuildCache, String)> {
    let cache = disk::shared()?;
    let key = disk::key(disk::library(nvrtc), source.code, source.kernel, options)?;
    Some((cache, key))
}

/// Compiles with definitions already rendered (NVRTC must have been found: see
/// [`super::image::compile_images`]). With `shared`, the configuration may come from a program
/// of several kept in the build cache (its entry point renamed); without, it is a build of its
/// own (what [`compile`] returns, and what a shipped binary embeds).
pub(crate) fn compile_with(
    source: &Source,
    defs: &[String],
    arch: &str,
    config: &str,
    shared: bool,
) -> Result<Compiled, CudaError> {
    let fail = |log: String| CudaError::Compile {
        config: config.to_owned(),
        log,
    };
    let options = options(source, arch, defs).map_err(fail)?;
    let code =
        CString::new(source.code).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let name = CString::new(format!("{}.cu", source.kernel))
        .map_err(|_| fail("the kernel name contains a NUL byte".into()))?;
    let nvrtc = library::nvrtc()?;
    let kept = cache_key(nvrtc, source, &options);
    let on = minimal::setting()?;
    let run = || build(nvrtc, source, &code, &name, options.clone(), arch, on, true);
    let (out, entry) = match &kept {
        Some((cache, key)) => cache.get_or_build(key, shared, run),
        None => run().map(|o| (o, None)).map_err(|f| f.message),
    }
    .map_err(fail)?;
    finish(
        out,
        source.kernel,
        entry.as_deref().unwrap_or(source.kernel),
        config,
    )
}

/// The options of a compilation for `arch` with the definitions `defs` (before `-minimal`), or
/// why they cannot be passed.
pub(crate) fn options(source: &Source, arch: &str, defs: &[String]) -> Result<Vec<String>, String> {
    let mut options = vec![format!("--gpu-architecture={arch}")];
    options.extend(source.options.iter().map(|o| (*o).to_owned()));
    options.extend(defs.iter().cloned());
    if options.iter().any(|o| o.contains('\0')) {
        return Err("an option contains a NUL byte".into());
    }
    Ok(options)
}

/// One NVRTC compilation of `code` (named `name` in the log) with `options`, `-minimal` first
/// where it is wanted and `minimal_on` (the setting) lets it be tried. With `retry`,
/// [`minimal`]'s rules (keyed by `source`'s code) compile a failure again without the flag;
/// without (a program of several configurations, whose failures are blamed on them), the flag
/// is left out only for a source known to need the full language, and a failure is returned.
#[allow(clippy::too_many_arguments)] // one compilation's inputs, from two callers
pub(crate) fn build(
    nvrtc: &library::Nvrtc,
    source: &Source,
    code: &CString,
    name: &CString,
    options: Vec<String>,
    arch: &str,
    minimal_on: bool,
    retry: bool,
) -> Result<Output, Failure> {
    let api = nvrtc.api();
    let try_flag = minimal::wanted(api.version, &options, minimal_on);
    let mut options: Vec<CString> = options
        .into_iter()
        .map(|o| CString::new(o).expect("checked for NUL bytes"))
        .collect();
    let plain = options.len();
    options.push(CString::new(minimal::FLAG).expect("no NUL byte"));
    let compile = |flag: bool| {
        let used = if flag {
            &options[..]
        } else {
            &options[..plain]
        };
        api.compile(code, name, used, arch.starts_with("sm_"))
    };
    let hash = code_hash(source);
    if retry {
        minimal::compile(hash, try_flag, compile)
    } else {
        compile(try_flag && !minimal::needs_full(hash))
    }
}

/// The configuration's result from NVRTC's output: its PTX must hold the entry point `entry`
/// (the source's `kernel`, or the name it was given in a program of several configurations).
pub(crate) fn finish(
    out: Output,
    kernel: &str,
    entry: &str,
    config: &str,
) -> Result<Compiled, CudaError> {
    let ptx = String::from_utf8_lossy(&out.ptx).into_owned();
    if !ptx.contains(&format!(".entry {entry}(")) {
        return Err(CudaError::NoKernel {
            config: config.to_owned(),
            kernel: kernel.to_owned(),
            code: "the PTX has no entry point of that name".into(),
        });
    }
    Ok(Compiled {
        ptx,
        cubin: out.cubin,
        log: out.log,
        entry: entry.to_owned(),
    })
}
