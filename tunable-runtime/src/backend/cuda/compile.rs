//! # Compiling with NVRTC
//!
//! Each configuration is compiled with `--gpu-architecture=<arch>`, the source's options and one
//! `-DNAME=value` per parameter. For a real architecture (`sm_80`) NVRTC also runs `ptxas`, so
//! resource errors (too much shared memory, too many registers for a bound) are compile errors
//! with `ptxas`'s message, and the result holds a CUBIN as well as the PTX; for a virtual one
//! (`compute_80`) it holds PTX only. A [`super::Cuda`] handle compiles for its device's
//! architecture and loads the CUBIN; [`compile`] works without a GPU or driver, which is how CI
//! checks that every variant of a kernel compiles.

use super::error::CudaError;
use super::library;
use crate::backend::{Source, definitions};
use crate::params::Params;
use cudarc::nvrtc::{result, sys};
use std::ffi::{CString, c_char};

/// A kernel compiled for one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX.
    pub ptx: String,
    /// The CUBIN, when compiled for a real architecture (`sm_XY`).
    pub cubin: Option<Vec<u8>>,
    /// NVRTC's log (warnings; empty when there are none).
    pub log: String,
}

/// Compiles `source` for `params` with NVRTC for `arch` (`sm_80`, `compute_90`, ...), without a
/// device. Fails with [`CudaError::MissingLibrary`] if NVRTC cannot be found, with
/// [`CudaError::Compile`] and NVRTC's log if this configuration does not compile, and with
/// [`CudaError::NoKernel`] if the PTX has no entry point named `source.kernel`.
pub fn compile<P: Params>(source: &Source, params: &P, arch: &str) -> Result<Compiled, CudaError> {
    library::nvrtc()?;
    let config = params.describe();
    let defs = definitions(params).map_err(|reason| CudaError::Definition {
        config: config.clone(),
        reason,
    })?;
    compile_with(source, &defs, arch, &config)
}

/// Destroys the program when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn text(chars: Vec<c_char>) -> String {
    let bytes: Vec<u8> = chars
        .into_iter()
        .map(|c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles with definitions already rendered (NVRTC must have been found: see
/// [`super::image::compile_images`]).
pub(crate) fn compile_with(
    source: &Source,
    defs: &[String],
    arch: &str,
    config: &str,
) -> Result<Compiled, CudaError> {
    let fail = |log: String| CudaError::Compile {
        config: config.to_owned(),
        log,
    };
    let mut options = vec![format!("--gpu-architecture={arch}")];
    options.extend(source.options.iter().map(|o| (*o).to_owned()));
    options.extend(defs.iter().cloned());
    if options.iter().any(|o| o.contains('\0')) {
        return Err(fail("an option contains a NUL byte".into()));
    }
    let code =
        CString::new(source.code).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let name = CString::new(format!("{}.cu", source.kernel))
        .map_err(|_| fail("the kernel name contains a NUL byte".into()))?;
    let prog = Program(
        result::create_program(&code, Some(&name))
            .map_err(|e| fail(format!("nvrtcCreateProgram: {:?}", e.0)))?,
    );
    // SAFETY: `prog` is a live program; the options hold no NUL byte (checked above).
    let compiled = unsafe { result::compile_program(prog.0, &options) };
    // SAFETY: as above.
    let log = unsafe { result::get_program_log(prog.0) }
        .map(text)
        .unwrap_or_default()
        .trim()
        .to_owned();
    if let Err(e) = compiled {
        return Err(fail(if log.is_empty() {
            format!("{:?}", e.0)
        } else {
            log
        }));
    }
    // SAFETY: as above, after a successful compilation.
    let ptx = text(
        unsafe { result::get_ptx(prog.0) }.map_err(|e| fail(format!("nvrtcGetPTX: {:?}", e.0)))?,
    );
    let cubin = if arch.starts_with("sm_") {
        Some(cubin_of(&prog).map_err(|e| fail(format!("nvrtcGetCUBIN: {:?}", e.0)))?)
    } else {
        None
    };
    if !ptx.contains(&format!(".entry {}(", source.kernel)) {
        return Err(CudaError::NoKernel {
            config: config.to_owned(),
            kernel: source.kernel.to_owned(),
            code: "the PTX has no entry point of that name".into(),
        });
    }
    Ok(Compiled { ptx, cubin, log })
}

fn cubin_of(prog: &Program) -> Result<Vec<u8>, result::NvrtcError> {
    let mut size = 0usize;
    // SAFETY: a live, compiled program; `size` is written by NVRTC.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }.result()?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the `size` bytes NVRTC asked for.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }.result()?;
    Ok(cubin)
}
