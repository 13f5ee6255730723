//! # NVRTC's builds kept on disk
//!
//! NVRTC takes tens of milliseconds to compile one configuration of a small kernel, and the
//! tuner compiles every configuration it evaluates. The [`Cuda`](super::Cuda) handle keeps the builds of one process in memory; this
//! cache keeps them across processes, so that the next tuning of the same kernel (another
//! problem size, a rerun after a crash, `TUNABLE_MODE=retune`, the exhaustive pass of
//! `scripts/gpu-check`) loads every configuration compiled before instead of compiling it again.
//! What it saves is measured in `docs/notes/compile-path.md`.
//!
//! - **Where:** the folder `TUNABLE_BUILD_CACHE` names; by default `$XDG_CACHE_HOME/tunable/cuda`,
//!   else `$HOME/.cache/tunable/cuda`; `TUNABLE_BUILD_CACHE=off` (or no home folder) turns it off.
//! - **The key** is everything NVRTC's output depends on: the library (its version, and the
//!   path, size and modification time of its file when it was loaded from one), the entry point,
//!   every option (the architecture, the source's options, one `-DNAME=value` per parameter) and
//!   the whole source text. A file is named by the key's 64-bit [FNV-1a](tunable_search::fingerprint::fnv1a)
//!   and holds the key itself, compared on loading: a collision is a miss, never another build.
//! - **What is kept:** the PTX, the CUBIN and NVRTC's log of a build, or the log of a
//!   configuration that does not compile (it fails the same way next time). A program of several
//!   configurations ([`super::compile_many`]) is kept once, under its own key, and each of its
//!   configurations as a small entry naming that key, its entry point and its part of the log:
//!   a configuration whose program is gone is a miss.
//! - **Not kept:** a source NVRTC might complete from files, whose contents the key cannot see:
//!   one compiled with an include path or a pre-included header (`-I`, `--include-path`,
//!   `--pre-include`, `-include`), or one with a quoted `#include "..."`.
//! - **Nothing is lost on failure:** an entry is written to a file of its own and renamed into
//!   place, so a reader sees a whole entry or none, and processes tuning at once share the
//!   folder. A file that cannot be read, is cut short or holds another key is a miss (and is
//!   replaced); a folder that cannot be written only costs the next process the compilation.
//! - **Size:** at the first use in a process, if the folder holds more than [`LIMIT_BYTES`], the
//!   entries used least recently (a hit renews an entry's time) are removed until it holds 80%
//!   of that.

use super::nvrtc::{Failure, Output};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

/// The variable that names the folder, or turns the cache off.
pub(crate) const VAR: &str = "TUNABLE_BUILD_CACHE";

/// The most the folder holds before its least recently used entries are removed (1 GiB).
pub(crate) const LIMIT_BYTES: u64 = 1 << 30;

/// The first bytes of every entry, with the format's version.
const MAGIC: &[u8] = b"tunable NVRTC build 1\n";

/// The ending of an entry's file name.
const EXTENSION: &str = "nvrtc";

/// A configuration compiled in a program of several: the program's key, the configuration's
/// entry point and the messages of the log about it.
pub(crate) struct InProgram {
    pub(crate) program: String,
    pub(crate) entry: String,
    pub(crate) log: String,
}

/// What an entry holds.
enum Kept {
    /// A build, or the log of a program the compiler rejected.
    Build(Result<Output, String>),
    /// A configuration compiled in a program of several.
    InProgram(InProgram),
}

/// The builds kept in one folder.
#[derive(Debug)]
pub(crate) struct BuildCache {
    dir: PathBuf,
    loaded: AtomicUsize,
    stored: AtomicUsize,
}

/// Where NVRTC's builds are kept across processes, and what this process did with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildCacheUse {
    /// The folder.
    pub folder: &'static Path,
    /// Builds (and programs NVRTC rejected) this process loaded from it instead of compiling.
    pub loaded: usize,
    /// Builds (and programs NVRTC rejected) this process compiled and kept in it.
    pub stored: usize,
}

/// The folder where NVRTC's builds are kept across processes: `TUNABLE_BUILD_CACHE`, by default
/// `$XDG_CACHE_HOME/tunable/cuda`, else `$HOME/.cache/tunable/cuda`; `None` if
/// `TUNABLE_BUILD_CACHE=off`, or if no folder is named and there is no home folder. A build is
/// kept under everything its output depends on (NVRTC's version and file, the options, the
/// definitions, the whole source), and a source compiled with an include path or with a quoted
/// `#include` is never kept (the key cannot see the files it reads). The folder is trimmed to
/// 80% of 1 GiB, least recently used first, when it holds more.
///
/// ```no_run
/// if let Some(cache) = tunable::backend::cuda::build_cache() {
///     println!("{} builds loaded from {}", cache.loaded, cache.folder.display());
/// }
/// ```
pub fn build_cache() -> Option<BuildCacheUse> {
    shared().map(|c| {
        let (loaded, stored) = c.counts();
        BuildCacheUse {
            folder: c.dir(),
            loaded,
            stored,
        }
    })
}

/// The process's cache, from the environment at its first use (`None`: off).
pub(crate) fn shared() -> Option<&'static BuildCache> {
    static SHARED: OnceLock<Option<BuildCache>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let dir = folder(
                std::env::var_os(VAR).as_deref(),
                std::env::var_os("XDG_CACHE_HOME").as_deref(),
                std::env::var_os("HOME").as_deref(),
            )?;
            let cache = BuildCache::new(dir);
            cache.trim(LIMIT_BYTES);
            Some(cache)
        })
        .as_ref()
}

/// The folder from the values of `TUNABLE_BUILD_CACHE`, `XDG_CACHE_HOME` and `HOME`.
fn folder(
    var: Option<&std::ffi::OsStr>,
    xdg: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    fn non_empty(v: Option<&std::ffi::OsStr>) -> Option<&std::ffi::OsStr> {
        v.filter(|v| !v.is_empty())
    }
    match non_empty(var) {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => non_empty(xdg)
            .map(PathBuf::from)
            .or_else(|| non_empty(home).map(|h| Path::new(h).join(".cache")))
            .map(|c| c.join("tunable").join("cuda")),
    }
}

/// What identifies the NVRTC library in a key: its version and, when it was loaded from a file,
/// that file's path, size and modification time (read once per process, see [`library`]).
fn identity((major, minor): (u32, u32), file: Option<&Path>) -> String {
    let mut id = format!("nvrtc {major}.{minor}\n");
    if let Some(file) = file {
        let meta = fs::metadata(file).ok();
        let modified = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let size = meta.map_or(0, |m| m.len());
        id.push_str(&format!("{} {size} {modified}\n", file.display()));
    }
    id
}

/// The identity of the process's NVRTC ([`identity`]), made at the first compilation: the
/// process loads one NVRTC ([`super::nvrtc`]), so its file is looked at once, not per build.
pub(crate) fn library(nvrtc: &super::Nvrtc) -> &'static str {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY.get_or_init(|| identity(nvrtc.version(), nvrtc.path()))
}

/// The key of a compilation with the NVRTC `library` identifies ([`library`]), or `None` if its
/// output may depend on files the key cannot see.
pub(crate) fn key(library: &str, code: &str, name: &str, options: &[String]) -> Option<String> {
    let reads_files = options.iter().any(|o| {
        ["-I", "--include-path", "--pre-include", "-include"]
            .iter()
            .any(|p| o.starts_with(p))
    });
    let quoted_include = code.lines().any(|l| {
        let l = l.trim_start();
        l.strip_prefix('#')
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("include"))
            .is_some_and(|rest| rest.trim_start().starts_with('"'))
    });
    if reads_files || quoted_include {
        return None;
    }
    let mut key = library.to_owned();
    key.push_str(name);
    key.push('\n');
    for o in options {
        key.push_str(o);
        key.push('\n');
    }
    key.push('\x1d');
    key.push_str(code);
    Some(key)
}

impl BuildCache {
    /// A cache in `dir` (created when the first entry is stored).
    pub(crate) fn new(dir: PathBuf) -> Self {
        BuildCache {
            dir,
            loaded: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
        }
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Builds loaded and stored by this process so far.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (
            self.loaded.load(Ordering::Relaxed),
            self.stored.load(Ordering::Relaxed),
        )
    }

    fn path(&self, key: &str) -> PathBuf {
        let hash = tunable_search::fingerprint::fnv1a(&[key.as_bytes()]);
        self.dir.join(format!("{hash:016x}.{EXTENSION}"))
    }

    /// Whether a build is kept for `key` (its file exists; [`BuildCache::load`] reads it).
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.path(key).is_file()
    }

    /// The entry kept for `key`, if there is a whole one, its time renewed (for the trim).
    fn read(&self, key: &str) -> Option<Kept> {
        let path = self.path(key);
        let bytes = fs::read(&path).ok()?;
        let kept = decode(&bytes, key)?;
        // Best effort.
        if let Ok(f) = fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(kept)
    }

    /// The build kept for `key` (or the log of a program the compiler rejected), if there is a
    /// whole one: for a configuration compiled in a program of several (only if `shared`), the
    /// program's output with the configuration's part of the log, and its entry point.
    pub(crate) fn load(
        &self,
        key: &str,
        shared: bool,
    ) -> Option<Result<(Output, Option<String>), String>> {
        let build = match self.read(key)? {
            Kept::Build(build) => build.map(|o| (o, None)),
            Kept::InProgram(_) if !shared => return None,
            Kept::InProgram(p) => match self.read(&p.program)? {
                Kept::Build(Ok(out)) => Ok((Output { log: p.log, ..out }, Some(p.entry))),
                _ => return None,
            },
        };
        self.loaded.fetch_add(1, Ordering::Relaxed);
        Some(build)
    }

    /// The build kept for `key` ([`BuildCache::load`], with `shared`), else `build()`'s, kept
    /// for next time when it is a build or a program the compiler rejected (it fails the same
    /// way every time); a failure to run NVRTC (out of memory, say) is not kept. The error is
    /// NVRTC's message; the entry point is named when the build was one of a program of several.
    pub(crate) fn get_or_build(
        &self,
        key: &str,
        shared: bool,
        build: impl FnOnce() -> Result<Output, Failure>,
    ) -> Result<(Output, Option<String>), String> {
        if let Some(kept) = self.load(key, shared) {
            return kept;
        }
        let built = build();
        match &built {
            Ok(o) => self.store(key, Ok(o)),
            Err(f) if f.rejected => self.store(key, Err(&f.message)),
            Err(_) => {}
        }
        built.map(|o| (o, None)).map_err(|f| f.message)
    }

    /// Keeps that the configuration of `key` was compiled in a program of several (best effort).
    pub(crate) fn store_in_program(&self, key: &str, in_program: &InProgram) {
        self.write(key, &encode_in_program(key, in_program));
    }

    /// Keeps `build` for `key` (best effort: an error only means the next process compiles).
    pub(crate) fn store(&self, key: &str, build: Result<&Output, &str>) {
        self.write(key, &encode(key, build));
    }

    /// Writes `entry` for `key`: whole, or not at all.
    fn write(&self, key: &str, entry: &[u8]) {
        static UNIQUE: AtomicUsize = AtomicUsize::new(0);
        let path = self.path(key);
        let temporary = path.with_extension(format!(
            "{}.{}.tmp",
            std::process::id(),
            UNIQUE.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::create_dir_all(&self.dir)
            .and_then(|()| fs::File::create(&temporary))
            .and_then(|mut f| f.write_all(entry))
            .and_then(|()| fs::rename(&temporary, &path));
        match written {
            Ok(()) => {
                self.stored.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                let _ = fs::remove_file(&temporary);
            }
        }
    }

    /// Removes the entries used least recently while the folder holds more than `limit` bytes,
    /// down to 80% of it, and temporary files left by a process that died writing.
    pub(crate) fn trim(&self, limit: u64) {
        let Ok(read) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        for e in read.flatten() {
            let path = e.path();
            let Ok(meta) = e.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            match path.extension().and_then(|x| x.to_str()) {
                Some(EXTENSION) => entries.push((modified, meta.len(), path)),
                Some("tmp") if modified < hour_ago => {
                    let _ = fs::remove_file(&path);
                }
                _ => {}
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= limit {
            return;
        }
        entries.sort();
        for (_, len, path) in entries {
            if total <= limit - limit / 5 {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// An entry: the magic, the key, then a build (0) or a failure's log (1).
fn encode(key: &str, build: Result<&Output, &str>) -> Vec<u8> {
    match build {
        Ok(o) => {
            let cubin: &[&[u8]] = match &o.cubin {
                Some(c) => &[&[1], c],
                None => &[&[0]],
            };
            let mut parts: Vec<&[u8]> = vec![key.as_bytes(), &[0], &o.ptx];
            parts.extend_from_slice(cubin);
            parts.push(o.log.as_bytes());
            framed(&parts)
        }
        Err(log) => framed(&[key.as_bytes(), &[1], log.as_bytes()]),
    }
}

/// The entry of a configuration compiled in a program of several: the key, 2, the program's key,
/// the entry point and its part of the log.
fn encode_in_program(key: &str, p: &InProgram) -> Vec<u8> {
    framed(&[
        key.as_bytes(),
        &[2],
        p.program.as_bytes(),
        p.entry.as_bytes(),
        p.log.as_bytes(),
    ])
}

/// An entry: [`MAGIC`], then each part after its length (8 bytes, little-endian).
fn framed(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for part in parts {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
        out.extend_from_slice(part);
    }
    out
}

/// The entry in `bytes` if they are a whole entry for `key`.
fn decode(bytes: &[u8], key: &str) -> Option<Kept> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut take = || -> Option<&[u8]> {
        let (len, tail) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        let (part, tail) = (tail.get(..len)?, tail.get(len..)?);
        rest = tail;
        Some(part)
    };
    if take()? != key.as_bytes() {
        return None;
    }
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
    let build = match take()? {
        [0] => {
            let ptx = take()?.to_vec();
            let cubin = match take()? {
                [1] => Some(take()?.to_vec()),
                [0] => None,
                _ => return None,
            };
            let log = text(take()?)?;
            Ok(Output { ptx, cubin, log })
        }
        [1] => Err(text(take()?)?),
        [2] => {
            let program = text(take()?)?;
            let entry = text(take()?)?;
            let log = text(take()?)?;
            return rest.is_empty().then_some(Kept::InProgram(InProgram {
                program,
                entry,
                log,
            }));
        }
        _ => return None,
    };
    rest.is_empty().then_some(Kept::Build(build))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tunable-build-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn built(n: u8) -> Output {
        Output {
            ptx: vec![b'p', n],
            cubin: n.is_multiple_of(2).then(|| vec![0, n, 255]),
            log: format!("warning {n}"),
        }
    }

    fn same(a: &Result<(Output, Option<String>), String>, b: &Result<Output, String>) -> bool {
        match (a, b) {
            (Ok((a, None)), Ok(b)) => a.ptx == b.ptx && a.cubin == b.cubin && a.log == b.log,
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }

    #[test]
    fn the_folder_comes_from_the_variable_then_the_cache_home() {
        let (some, none) = (|s: &'static str| Some(OsStr::new(s)), None);
        assert_eq!(folder(some("off"), some("/x"), some("/h")), None);
        assert_eq!(
            folder(some("/mine"), some("/x"), some("/h")),
            Some(PathBuf::from("/mine"))
        );
        assert_eq!(
            folder(none, some("/x"), some("/h")),
            Some(PathBuf::from("/x/tunable/cuda"))
        );
        assert_eq!(
            folder(some(""), some(""), some("/h")),
            Some(PathBuf::from("/h/.cache/tunable/cuda"))
        );
        assert_eq!(folder(none, none, none), None);
    }

    #[test]
    fn keys_see_every_input_and_refuse_sources_that_read_files() {
        let opts = |d: &str| vec!["--gpu-architecture=sm_90".to_owned(), format!("-DT={d}")];
        let v12 = identity((12, 8), None);
        let k = |v, code, o: &[String]| key(&identity(v, None), code, "k.cu", o).unwrap();
        let base = k((12, 8), "code", &opts("1"));
        assert_ne!(base, k((13, 0), "code", &opts("1")));
        assert_ne!(base, k((12, 8), "code ", &opts("1")));
        assert_ne!(base, k((12, 8), "code", &opts("2")));
        assert_eq!(base, k((12, 8), "code", &opts("1")));
        // The library file's identity joins the key when it is known.
        let here = std::env::current_exe().unwrap();
        let with_file = key(&identity((12, 8), Some(&here)), "code", "k.cu", &opts("1")).unwrap();
        assert_ne!(base, with_file);
        assert!(with_file.contains(&here.display().to_string()));
        // Files the key cannot see.
        for o in [
            "-I/usr/include",
            "--include-path=x",
            "--pre-include=a.h",
            "-include",
        ] {
            let mut with = opts("1");
            with.push(o.to_owned());
            assert_eq!(key(&v12, "code", "k.cu", &with), None, "{o}");
        }
        let quoted = "  #  include \"mine.h\"\nextern \"C\" __global__ void k() {}";
        assert_eq!(key(&v12, quoted, "k.cu", &opts("1")), None);
        // NVRTC's own headers, by angle brackets and without an include path, are its version's.
        let angled = "#include <cuda_fp16.h>\nextern \"C\" __global__ void k() {}";
        assert!(key(&v12, angled, "k.cu", &opts("1")).is_some());
    }

    #[test]
    fn a_stored_build_or_failure_loads_whole_and_only_for_its_key() {
        let dir = scratch("roundtrip");
        let cache = BuildCache::new(dir.clone());
        assert!(cache.load("a", true).is_none(), "nothing stored yet");
        for (k, build) in [
            ("a", Ok(built(2))),
            ("b", Ok(built(3))),
            ("c", Err("error: expected a ';'".to_owned())),
        ] {
            cache.store(k, build.as_ref().map_err(String::as_str));
            assert!(same(&cache.load(k, true).expect("stored"), &build), "{k}");
        }
        assert_eq!(cache.counts(), (3, 3));
        // Another key under the same file name (a collision) is a miss.
        fs::copy(cache.path("a"), cache.path("z")).unwrap();
        assert!(cache.load("z", true).is_none());
        // A file cut short, or with bytes after the entry, is a miss; storing again mends it.
        let full = fs::read(cache.path("a")).unwrap();
        for bad in [
            &full[..full.len() - 1],
            &[full.as_slice(), b"x"].concat()[..],
        ] {
            fs::write(cache.path("a"), bad).unwrap();
            assert!(cache.load("a", true).is_none());
        }
        cache.store("a", Ok(&built(2)));
        assert!(same(&cache.load("a", true).unwrap(), &Ok(built(2))));
        // No temporary file is left behind.
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| n.ends_with(".nvrtc")), "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_configuration_of_a_program_of_several_loads_the_program_with_its_entry_and_log() {
        let dir = scratch("in-program");
        let cache = BuildCache::new(dir.clone());
        cache.store("program", Ok(&built(4)));
        let in_program = |entry: &str| InProgram {
            program: "program".into(),
            entry: entry.into(),
            log: format!("about {entry}"),
        };
        cache.store_in_program("a", &in_program("tunable_batch_0_k"));
        cache.store_in_program("b", &in_program("tunable_batch_1_k"));
        assert!(cache.contains("a") && cache.contains("b"));
        assert!(cache.load("b", false).is_none(), "not a build of its own");
        let (out, entry) = cache.load("b", true).expect("kept").expect("a build");
        assert_eq!(entry.as_deref(), Some("tunable_batch_1_k"));
        assert_eq!((out.ptx, out.cubin), (built(4).ptx, built(4).cubin));
        assert_eq!(out.log, "about tunable_batch_1_k");
        assert_eq!(
            cache.counts(),
            (1, 3),
            "one configuration loaded; three entries kept"
        );
        // A configuration whose program is gone (trimmed) is a miss.
        fs::remove_file(cache.path("program")).unwrap();
        assert!(cache.load("a", true).is_none());
        // A configuration entry cut short is a miss too.
        cache.store("program", Ok(&built(4)));
        let full = fs::read(cache.path("a")).unwrap();
        fs::write(cache.path("a"), &full[..full.len() - 2]).unwrap();
        assert!(cache.load("a", true).is_none());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_that_cannot_be_written_is_only_a_miss() {
        let dir = scratch("unwritable");
        fs::write(&dir, b"a file where the folder should be").unwrap();
        let cache = BuildCache::new(dir.join("sub"));
        cache.store("a", Ok(&built(1)));
        assert!(cache.load("a", true).is_none());
        assert_eq!(cache.counts(), (0, 0));
        fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn trimming_removes_the_least_recently_used_entries_first() {
        let dir = scratch("trim");
        let cache = BuildCache::new(dir.clone());
        let big = || Output {
            ptx: vec![b'x'; 1000],
            cubin: None,
            log: String::new(),
        };
        let t0 = SystemTime::now() - std::time::Duration::from_secs(1000);
        for (i, k) in ["old", "mid", "new"].iter().enumerate() {
            cache.store(k, Ok(&big()));
            let f = fs::File::options()
                .append(true)
                .open(cache.path(k))
                .unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(100 * i as u64))
                .unwrap();
        }
        // Loading the oldest renews it: `mid` is now the least recently used.
        assert!(cache.load("old", true).is_some());
        let stale = dir.join("0123.77.0.tmp");
        fs::write(&stale, b"half").unwrap();
        fs::File::options()
            .append(true)
            .open(&stale)
            .unwrap()
            .set_modified(SystemTime::now() - std::time::Duration::from_secs(7200))
            .unwrap();
        let one = fs::metadata(cache.path("new")).unwrap().len();
        let kept = |k: &str| cache.path(k).exists();
        cache.trim(3 * one);
        assert!(
            kept("old") && kept("mid") && kept("new"),
            "within the limit"
        );
        assert!(!stale.exists(), "a temporary file an hour old is removed");
        // Over the limit: down to 80% of it, two entries here.
        cache.trim(one * 5 / 2);
        assert!(!kept("mid"));
        assert!(kept("old") && kept("new"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
