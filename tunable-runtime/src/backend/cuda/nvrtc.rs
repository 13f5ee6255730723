//! # The NVRTC library, called through its C API
//!
//! The handful of NVRTC functions the backend needs (create, compile, log, PTX, CUBIN, destroy,
//! version), resolved from one loaded library. They are resolved here rather than through
//! cudarc's bindings because cudarc 0.19 opens NVRTC by a fixed list of names that stops at
//! `libnvrtc.so.12`: it cannot use CUDA 13's `libnvrtc.so.13`, nor a library found in a folder
//! under a name it does not ask for. These functions have kept their C signatures from CUDA 11
//! to 13.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;

/// `nvrtcProgram`: an opaque handle.
type Program = *mut c_void;
/// `nvrtcResult`: 0 is `NVRTC_SUCCESS`.
type Status = c_int;

type Create = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> Status;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status;
type Destroy = unsafe extern "C" fn(*mut Program) -> Status;
type Size = unsafe extern "C" fn(Program, *mut usize) -> Status;
type Bytes = unsafe extern "C" fn(Program, *mut c_char) -> Status;
type ErrorString = unsafe extern "C" fn(Status) -> *const c_char;
type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status;

/// The functions of one loaded NVRTC library, kept loaded as long as this lives.
pub(crate) struct Api {
    create: Create,
    compile: CompileFn,
    destroy: Destroy,
    log_size: Size,
    log: Bytes,
    ptx_size: Size,
    ptx: Bytes,
    cubin_size: Size,
    cubin: Bytes,
    error_string: ErrorString,
    /// NVRTC's version (major, minor), as it reports it.
    pub(crate) version: (u32, u32),
    _library: libloading::Library,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Why a compilation produced nothing.
#[derive(Debug)]
pub(crate) struct Failure {
    /// NVRTC's log, or the status's name where the log is empty, prefixed by the call that
    /// failed when it is not the compilation itself.
    pub(crate) message: String,
    /// The compiler rejected the program (`NVRTC_ERROR_COMPILATION`): it fails the same way
    /// every time, unlike a failure to allocate, say.
    pub(crate) rejected: bool,
}

impl Failure {
    fn other(message: String) -> Self {
        Failure {
            message,
            rejected: false,
        }
    }
}

/// `NVRTC_ERROR_COMPILATION`.
const COMPILATION: Status = 6;

/// What one compilation produced.
#[derive(Clone)]
pub(crate) struct Output {
    pub(crate) ptx: Vec<u8>,
    pub(crate) cubin: Option<Vec<u8>>,
    pub(crate) log: String,
}

impl Api {
    /// Loads the library at `path` (a file path, or a soname for the loader to find) and
    /// resolves the functions, failing with the loader's message or the missing symbol.
    pub(crate) fn load(path: &Path) -> Result<Api, String> {
        // SAFETY: loading NVRTC runs its initializers, which have no preconditions.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        /// Resolves one symbol as a function pointer of type `T`.
        ///
        /// # Safety
        /// `T` must be the symbol's C signature.
        unsafe fn get<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
            // SAFETY: the caller names the signature; the pointer is used while `lib` lives (it
            // is moved into the same `Api`).
            unsafe { lib.get::<T>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("{name}: {e}"))
        }
        // SAFETY: each type is the function's signature in `nvrtc.h` (CUDA 11 to 13).
        let version: Version = unsafe { get(&library, "nvrtcVersion")? };
        // SAFETY: as above.
        let api = unsafe {
            Api {
                create: get(&library, "nvrtcCreateProgram")?,
                compile: get(&library, "nvrtcCompileProgram")?,
                destroy: get(&library, "nvrtcDestroyProgram")?,
                log_size: get(&library, "nvrtcGetProgramLogSize")?,
                log: get(&library, "nvrtcGetProgramLog")?,
                ptx_size: get(&library, "nvrtcGetPTXSize")?,
                ptx: get(&library, "nvrtcGetPTX")?,
                cubin_size: get(&library, "nvrtcGetCUBINSize")?,
                cubin: get(&library, "nvrtcGetCUBIN")?,
                error_string: get(&library, "nvrtcGetErrorString")?,
                version: (0, 0),
                _library: library,
            }
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are valid for writes.
        let status = unsafe { version(&mut major, &mut minor) };
        if status != 0 {
            return Err(format!("nvrtcVersion: {}", api.error(status)));
        }
        Ok(Api {
            version: (major.max(0) as u32, minor.max(0) as u32),
            ..api
        })
    }

    /// The name of a status code (`NVRTC_ERROR_COMPILATION`, ...).
    pub(crate) fn error(&self, status: Status) -> String {
        // SAFETY: nvrtcGetErrorString returns a static string for any code (or null).
        let text = unsafe { (self.error_string)(status) };
        if text.is_null() {
            format!("NVRTC error {status}")
        } else {
            // SAFETY: a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        }
    }

    /// Compiles `code` (named `name` in messages) with `options`. `cubin` asks for the CUBIN
    /// too (a real architecture).
    pub(crate) fn compile(
        &self,
        code: &CStr,
        name: &CStr,
        options: &[CString],
        cubin: bool,
    ) -> Result<Output, Failure> {
        let mut program: Program = std::ptr::null_mut();
        // SAFETY: valid NUL-terminated strings; no headers.
        let status = unsafe {
            (self.create)(
                &mut program,
                code.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if status != 0 {
            return Err(Failure::other(format!(
                "nvrtcCreateProgram: {}",
                self.error(status)
            )));
        }
        /// Destroys the program when dropped.
        struct Owned<'a>(&'a Api, Program);
        impl Drop for Owned<'_> {
            fn drop(&mut self) {
                // SAFETY: created above and destroyed only here.
                let _ = unsafe { (self.0.destroy)(&mut self.1) };
            }
        }
        let program = Owned(self, program);
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(pointers.len())
            .map_err(|_| Failure::other("too many options".to_owned()))?;
        // SAFETY: a live program; `pointers` holds `count` NUL-terminated strings that outlive
        // the call.
        let compiled = unsafe { (self.compile)(program.1, count, pointers.as_ptr()) };
        let log = self
            .read(program.1, self.log_size, self.log, "nvrtcGetProgramLog")
            .map(|bytes| text(&bytes))
            .unwrap_or_default()
            .trim()
            .to_owned();
        if compiled != 0 {
            return Err(Failure {
                message: if log.is_empty() {
                    self.error(compiled)
                } else {
                    log
                },
                rejected: compiled == COMPILATION,
            });
        }
        let mut ptx = self
            .read(program.1, self.ptx_size, self.ptx, "nvrtcGetPTX")
            .map_err(Failure::other)?;
        while ptx.last() == Some(&0) {
            ptx.pop();
        }
        let cubin = if cubin {
            Some(
                self.read(program.1, self.cubin_size, self.cubin, "nvrtcGetCUBIN")
                    .map_err(Failure::other)?,
            )
        } else {
            None
        };
        Ok(Output { ptx, cubin, log })
    }

    /// One of the program's outputs: its size, then its bytes.
    fn read(
        &self,
        program: Program,
        size: Size,
        bytes: Bytes,
        what: &str,
    ) -> Result<Vec<u8>, String> {
        let mut n = 0usize;
        // SAFETY: a live program; `n` is written by NVRTC.
        let status = unsafe { size(program, &mut n) };
        if status != 0 {
            return Err(format!("{what}Size: {}", self.error(status)));
        }
        let mut out = vec![0u8; n];
        if n > 0 {
            // SAFETY: `out` has the `n` bytes NVRTC asked for.
            let status = unsafe { bytes(program, out.as_mut_ptr().cast()) };
            if status != 0 {
                return Err(format!("{what}: {}", self.error(status)));
            }
        }
        Ok(out)
    }
}

/// Text up to the first NUL byte.
fn text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}
