//! # Finding the CUDA libraries
//!
//! cudarc loads `libcuda` at its first use, from the dynamic loader's search path, and panics if
//! it is missing; the backend asks first, so a missing library is a
//! [`CudaError::MissingLibrary`] naming it. NVRTC the backend loads itself ([`nvrtc`]):
//!
//! - **The driver** (`libcuda.so.1`) comes with the NVIDIA driver and is on the loader's path
//!   wherever a GPU is usable; it is only looked up there.
//! - **NVRTC** of CUDA 13 (`libnvrtc.so.13`) or CUDA 12 (`libnvrtc.so.12`), whichever is there.
//!   Looked for, in this order: the file `TUNABLE_NVRTC` names (or, for a folder, the libraries
//!   in it), whatever their version; the loader's path (`LD_LIBRARY_PATH`, `ldconfig`); `$CUDA_HOME/lib64`,
//!   `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`; the site-packages of `python3` (asked once):
//!   `nvidia/cu13/lib`, where `pip install nvidia-cuda-nvrtc` (CUDA 13) puts it, and
//!   `nvidia/cuda_nvrtc/lib`, where `pip install nvidia-cuda-nvrtc-cu12` does.
//! - **Which version:** where both are there, the newest whose major version the driver
//!   supports comes first (a driver runs PTX and CUBIN of its own CUDA version and older ones),
//!   then the others; without a driver (compiling only, as CI does), the newest first. The one
//!   used is [`Nvrtc`], which says its version and where it came from.
//! - **`TUNABLE_NVRTC=off`** hides NVRTC from the process, whatever is installed: only
//!   embedded binaries load, as on a machine without NVRTC (how a shipped binary is checked on a
//!   machine that has one).

use super::error::CudaError;
use super::nvrtc::Api;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What a missing NVRTC is called in [`CudaError::MissingLibrary`].
pub(crate) const NVRTC: &str = "libnvrtc.so.13 or libnvrtc.so.12 (NVRTC)";
/// The driver library.
pub(crate) const DRIVER: &str = "libcuda.so.1";
/// The NVRTC major versions the backend knows, newest first.
const MAJORS: [u32; 2] = [13, 12];

/// The soname of NVRTC of CUDA `major`.
fn soname(major: u32) -> String {
    format!("libnvrtc.so.{major}")
}

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

/// The CUDA major version the driver supports (`cuDriverGetVersion`), if the driver loads.
fn driver_major() -> Option<u32> {
    driver().ok()?;
    let mut version = 0;
    // SAFETY: the driver library loads (checked above); cuDriverGetVersion needs no cuInit and
    // writes `version`.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    (status == cudarc::driver::sys::CUresult::CUDA_SUCCESS && version > 0)
        .then_some(version as u32 / 1000)
}

/// The NVRTC library the backend compiles with: its version and where it was loaded from.
#[derive(Debug)]
pub struct Nvrtc {
    api: Api,
    found: Candidate,
    /// NVRTC's builtins library, loaded from the folder NVRTC was loaded from (see
    /// [`builtins_beside`]); kept loaded as long as NVRTC.
    _builtins: Option<libloading::Library>,
}

impl Nvrtc {
    /// NVRTC's version, (major, minor), as it reports it (`nvrtcVersion`).
    pub fn version(&self) -> (u32, u32) {
        self.api.version
    }

    /// The file it was loaded from, or `None` when the loader found it by its soname.
    pub fn path(&self) -> Option<&Path> {
        match &self.found {
            Candidate::File(p) => Some(p),
            Candidate::Soname(_) => None,
        }
    }

    pub(crate) fn api(&self) -> &Api {
        &self.api
    }
}

/// `NVRTC 13.0 (/path/libnvrtc.so.13)` or `NVRTC 12.8 (libnvrtc.so.12 on the loader's path)`.
impl fmt::Display for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.version();
        write!(f, "NVRTC {major}.{minor} ({})", self.found)
    }
}

/// The NVRTC library, found and loaded at the first call (see the module docs for where it is
/// looked for and which version is preferred), or why none could be loaded: the places searched
/// and how to install one.
///
/// ```no_run
/// match tunable::backend::cuda::nvrtc() {
///     Ok(found) => println!("compiling with {found}"), // NVRTC 13.0 (/usr/local/cuda/lib64/...)
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn nvrtc() -> Result<&'static Nvrtc, CudaError> {
    static FOUND: OnceLock<Result<Nvrtc, CudaError>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            if switched_off(std::env::var_os("TUNABLE_NVRTC").as_deref()) {
                return Err(CudaError::MissingLibrary {
                    library: NVRTC,
                    hint: "TUNABLE_NVRTC=off hides it".into(),
                });
            }
            let search = Search::from_environment();
            load_first(&search.candidates(&preferred_majors(driver_major())))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether `TUNABLE_NVRTC` (its value) hides NVRTC.
fn switched_off(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| v == "off")
}

/// One place to load NVRTC from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Candidate {
    /// A library file, loaded by its path.
    File(PathBuf),
    /// A soname, for the loader to find on its path.
    Soname(String),
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Candidate::File(p) => write!(f, "{}", p.display()),
            Candidate::Soname(s) => write!(f, "{s} on the loader's path"),
        }
    }
}

/// The NVRTC majors to try, in order: with a driver of CUDA `driver`, those it supports newest
/// first, then the newer ones oldest first; without one, newest first.
fn preferred_majors(driver: Option<u32>) -> Vec<u32> {
    let supported = |m: &u32| driver.is_none_or(|d| *m <= d);
    let (mut first, rest): (Vec<u32>, Vec<u32>) = MAJORS.iter().partition(|m| supported(m));
    first.extend(rest.into_iter().rev());
    first
}

/// Where to look: the settings and folders that decide the candidates.
#[derive(Clone, Debug, Default)]
struct Search {
    /// `TUNABLE_NVRTC`: a library file or a folder.
    explicit: Option<PathBuf>,
    /// Toolkit folders holding the libraries (`lib64` of `CUDA_HOME`, ...).
    toolkits: Vec<PathBuf>,
    /// python3's site-packages folders.
    site_packages: Vec<PathBuf>,
}

impl Search {
    fn from_environment() -> Search {
        let toolkits = ["CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(std::env::var_os)
            .map(|root| PathBuf::from(root).join("lib64"))
            .chain([PathBuf::from("/usr/local/cuda/lib64")])
            .collect();
        Search {
            explicit: std::env::var_os("TUNABLE_NVRTC").map(PathBuf::from),
            toolkits,
            site_packages: python_site_packages(),
        }
    }

    /// The folders that may hold the libraries, in order.
    fn folders(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.toolkits.clone();
        for site in &self.site_packages {
            dirs.push(site.join("nvidia/cu13/lib"));
            dirs.push(site.join("nvidia/cuda_nvrtc/lib"));
        }
        dirs
    }

    /// The candidates, in the order they are tried, for the majors in `majors`' order: what
    /// `TUNABLE_NVRTC` names first (the file, whatever its version, or the libraries in the
    /// folder); then per major, the loader's path and the folders of [`Search::folders`] (those
    /// that hold the file).
    fn candidates(&self, majors: &[u32]) -> Vec<Candidate> {
        let mut out = Vec::new();
        match &self.explicit {
            Some(dir) if dir.is_dir() => out.extend(
                majors
                    .iter()
                    .map(|&m| dir.join(soname(m)))
                    .filter(|p| p.is_file())
                    .map(Candidate::File),
            ),
            Some(file) => out.push(Candidate::File(file.clone())),
            None => {}
        }
        let folders = self.folders();
        for &major in majors {
            let name = soname(major);
            out.push(Candidate::Soname(name.clone()));
            out.extend(
                folders
                    .iter()
                    .map(|d| d.join(&name))
                    .filter(|p| p.is_file())
                    .map(Candidate::File),
            );
        }
        out
    }
}

/// The first candidate that loads as NVRTC, or an error listing what was tried.
fn load_first(candidates: &[Candidate]) -> Result<Nvrtc, CudaError> {
    let mut tried = Vec::new();
    for c in candidates {
        let path: &Path = match c {
            Candidate::File(p) => p,
            Candidate::Soname(s) => Path::new(s),
        };
        match Api::load(path) {
            Ok(api) => {
                let builtins = match c {
                    Candidate::File(p) => builtins_beside(p, api.version),
                    Candidate::Soname(_) => None,
                };
                return Ok(Nvrtc {
                    api,
                    found: c.clone(),
                    _builtins: builtins,
                });
            }
            Err(why) => tried.push(match c {
                // A soname not on the loader's path is the common case: not worth its message.
                Candidate::Soname(_) => c.to_string(),
                Candidate::File(_) => format!("{c} ({why})"),
            }),
        }
    }
    Err(CudaError::MissingLibrary {
        library: NVRTC,
        hint: format!(
            "tried {}; install it with `pip install nvidia-cuda-nvrtc` (CUDA 13) or \
             `pip install nvidia-cuda-nvrtc-cu12` (CUDA 12), or the CUDA toolkit, or set \
             TUNABLE_NVRTC to the library",
            tried.join(", ")
        ),
    })
}

/// NVRTC loads its builtins (`libnvrtc-builtins.so.MAJOR.MINOR`) by name when it first
/// compiles. CUDA 12's wheels and toolkits find it beside NVRTC (its run path is `$ORIGIN`), but
/// CUDA 13's wheel (`nvidia/cu13/lib`) has no run path: there every compilation failed with
/// "failed to open libnvrtc-builtins.so.13.0" unless the folder was on `LD_LIBRARY_PATH`. So the
/// builtins beside the file NVRTC was loaded from are loaded first: the dynamic loader then
/// finds them loaded by that name.
fn builtins_beside(nvrtc: &Path, (major, minor): (u32, u32)) -> Option<libloading::Library> {
    let file = nvrtc
        .parent()?
        .join(format!("libnvrtc-builtins.so.{major}.{minor}"));
    if !file.is_file() {
        return None;
    }
    // SAFETY: loading NVRTC's builtins runs their initializers, which have no preconditions.
    unsafe { libloading::Library::new(&file) }.ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch folder with empty files at `files` (relative paths).
    fn layout(name: &str, files: &[&str]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("tunable-nvrtc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"not a library").unwrap();
        }
        root
    }

    fn file(p: PathBuf) -> Candidate {
        Candidate::File(p)
    }

    fn so(major: u32) -> Candidate {
        Candidate::Soname(soname(major))
    }

    #[test]
    fn off_hides_nvrtc_and_anything_else_is_a_path() {
        use std::ffi::OsStr;
        assert!(switched_off(Some(OsStr::new("off"))));
        assert!(!switched_off(None));
        assert!(!switched_off(Some(OsStr::new("/opt/off"))));
    }

    #[test]
    fn the_driver_decides_which_major_comes_first() {
        assert_eq!(preferred_majors(None), [13, 12]);
        assert_eq!(preferred_majors(Some(13)), [13, 12]);
        assert_eq!(preferred_majors(Some(14)), [13, 12]);
        // A CUDA 12 driver cannot run CUDA 13's PTX: 12 first, 13 only as a last resort.
        assert_eq!(preferred_majors(Some(12)), [12, 13]);
        // A driver older than both: the closest first.
        assert_eq!(preferred_majors(Some(11)), [12, 13]);
    }

    #[test]
    fn pip_wheels_of_cuda_12_and_13_and_a_toolkit_are_found_in_order() {
        let root = layout(
            "wheels",
            &[
                "site/nvidia/cu13/lib/libnvrtc.so.13",
                "site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                "cuda/lib64/libnvrtc.so.12",
                // Another library of the wheel, and another version: never candidates.
                "site/nvidia/cu13/lib/libnvrtc-builtins.so.13.0",
                "cuda/lib64/libnvrtc.so.11.2",
            ],
        );
        let search = Search {
            explicit: None,
            toolkits: vec![root.join("cuda/lib64"), root.join("missing/lib64")],
            site_packages: vec![root.join("site"), root.join("empty-site")],
        };
        assert_eq!(
            search.candidates(&[13, 12]),
            [
                so(13),
                file(root.join("site/nvidia/cu13/lib/libnvrtc.so.13")),
                so(12),
                file(root.join("cuda/lib64/libnvrtc.so.12")),
                file(root.join("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")),
            ]
        );
        // With a CUDA 12 driver, CUDA 12's come first.
        assert_eq!(
            search.candidates(&preferred_majors(Some(12)))[..3],
            [
                so(12),
                file(root.join("cuda/lib64/libnvrtc.so.12")),
                file(root.join("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")),
            ]
        );
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn tunable_nvrtc_names_a_file_or_a_folder() {
        let root = layout(
            "explicit",
            &[
                "mine/libnvrtc.so.12",
                "mine/libnvrtc.so.13",
                "cuda/libnvrtc.so.13",
            ],
        );
        let as_file = Search {
            explicit: Some(root.join("mine/libnvrtc.so.12")),
            ..Search::default()
        };
        // A file comes first, whatever its version.
        assert_eq!(
            as_file.candidates(&[13, 12]),
            [file(root.join("mine/libnvrtc.so.12")), so(13), so(12)]
        );
        // A folder's libraries come first, before those of the loader and the other folders.
        let as_folder = Search {
            explicit: Some(root.join("mine")),
            toolkits: vec![root.join("cuda")],
            ..Search::default()
        };
        assert_eq!(
            as_folder.candidates(&[12, 13]),
            [
                file(root.join("mine/libnvrtc.so.12")),
                file(root.join("mine/libnvrtc.so.13")),
                so(12),
                so(13),
                file(root.join("cuda/libnvrtc.so.13")),
            ]
        );
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn files_that_do_not_load_are_skipped_and_listed_in_the_error() {
        let root = layout("broken", &["site/nvidia/cu13/lib/libnvrtc.so.13"]);
        let fake = root.join("site/nvidia/cu13/lib/libnvrtc.so.13");
        let e = load_first(&[file(fake.clone()), file(root.join("absent.so"))]).unwrap_err();
        let CudaError::MissingLibrary { library, hint } = &e else {
            panic!("{e}")
        };
        assert_eq!(*library, NVRTC);
        assert!(hint.contains(&fake.display().to_string()), "{hint}");
        assert!(hint.contains("absent.so"), "{hint}");
        assert!(hint.contains("nvidia-cuda-nvrtc-cu12"), "{hint}");
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn the_builtins_beside_a_loaded_nvrtc_file_are_loaded_with_it() {
        // Beside a file that is not there, or a fake library: nothing.
        let root = layout(
            "builtins",
            &["lib/libnvrtc.so.13", "lib/libnvrtc-builtins.so.13.0"],
        );
        assert!(builtins_beside(&root.join("lib/libnvrtc.so.13"), (13, 1)).is_none());
        assert!(builtins_beside(&root.join("lib/libnvrtc.so.13"), (13, 0)).is_none());
        std::fs::remove_dir_all(root).ok();
        // The real one, where NVRTC was found in a folder holding its builtins (the wheels).
        let Ok(found) = nvrtc() else {
            eprintln!("skipping the real builtins: no NVRTC");
            return;
        };
        let (major, minor) = found.version();
        match found.path() {
            Some(p)
                if p.with_file_name(format!("libnvrtc-builtins.so.{major}.{minor}"))
                    .is_file() =>
            {
                assert!(builtins_beside(p, (major, minor)).is_some(), "{found}");
                assert!(found._builtins.is_some(), "{found}");
            }
            _ => eprintln!("skipping the real builtins: {found} has none beside it"),
        }
    }
}
