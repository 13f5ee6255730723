//! # Finding the CUDA libraries
//!
//! cudarc loads `libcuda` and `libnvrtc` at their first use, from the dynamic loader's search
//! path, and panics if they are missing. The backend asks first, so a missing library is a
//! [`CudaError::MissingLibrary`] naming it:
//!
//! - **The driver** (`libcuda.so.1`) comes with the NVIDIA driver and is on the loader's path
//!   wherever a GPU is usable; it is only looked up there.
//! - **NVRTC** (`libnvrtc.so.12`) is looked up on the loader's path (`LD_LIBRARY_PATH`,
//!   `ldconfig`), then in `TUNABLE_NVRTC` (the library file or its folder), `$CUDA_HOME/lib64`,
//!   `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`, and in the `nvidia/cuda_nvrtc/lib` folder of
//!   the site-packages of `python3` (where `pip install nvidia-cuda-nvrtc-cu12` puts it, asked of
//!   `python3` once). A library found in a folder is loaded by its full path; the loader then
//!   hands the same library to cudarc, which asks for it by its soname.

use super::error::CudaError;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The NVRTC soname the CUDA 12 bindings ask for.
pub(crate) const NVRTC: &str = "libnvrtc.so.12";
/// The driver library.
pub(crate) const DRIVER: &str = "libcuda.so.1";

/// Whether the driver library loads.
pub(crate) fn driver() -> Result<(), CudaError> {
    static FOUND: OnceLock<bool> = OnceLock::new();
    // SAFETY: tries `dlopen` on the driver's candidate names; loading the driver runs no code
    // with preconditions.
    let found = *FOUND.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() });
    if found {
        Ok(())
    } else {
        Err(CudaError::MissingLibrary {
            library: DRIVER,
            hint: "the NVIDIA driver is not installed, or this machine has no NVIDIA GPU".into(),
        })
    }
}

/// Where NVRTC was found (`None`: by the loader itself), or why it was not.
pub fn nvrtc() -> Result<Option<PathBuf>, CudaError> {
    static FOUND: OnceLock<Result<Option<PathBuf>, CudaError>> = OnceLock::new();
    FOUND.get_or_init(locate_nvrtc).clone()
}

fn locate_nvrtc() -> Result<Option<PathBuf>, CudaError> {
    // SAFETY: tries `dlopen` on NVRTC's candidate names; loading NVRTC runs no code with
    // preconditions.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Ok(None);
    }
    let searched = candidates();
    for path in searched.iter().filter(|p| p.is_file()) {
        // SAFETY: as above, by full path. The library is kept loaded for the whole process.
        if let Ok(lib) = unsafe { libloading::Library::new(path) } {
            static KEEP: OnceLock<libloading::Library> = OnceLock::new();
            let _ = KEEP.set(lib);
            // SAFETY: as above; now the loader finds the library loaded under its soname.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(Some(path.clone()));
            }
        }
    }
    Err(CudaError::MissingLibrary {
        library: NVRTC,
        hint: format!(
            "not on the loader's path nor in {}; install it with `pip install nvidia-cuda-nvrtc-cu12` \
             or the CUDA toolkit, or set TUNABLE_NVRTC to the library",
            searched
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The files to try, in order.
fn candidates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("TUNABLE_NVRTC").map(PathBuf::from) {
        if p.is_dir() {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(root).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.extend(
        python_site_packages()
            .into_iter()
            .map(|s| s.join("nvidia/cuda_nvrtc/lib")),
    );
    files.extend(dirs.into_iter().map(|d| d.join(NVRTC)));
    files
}

/// The site-packages folders of `python3`, if there is one.
fn python_site_packages() -> Vec<PathBuf> {
    const SCRIPT: &str = "import site, sysconfig\n\
        p = sysconfig.get_paths()\n\
        dirs = [p['purelib'], p['platlib']] + site.getsitepackages() + [site.getusersitepackages()]\n\
        print('\\n'.join(dict.fromkeys(dirs)))";
    std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}
