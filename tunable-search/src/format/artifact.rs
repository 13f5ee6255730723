//! # Device binaries beside the tuned file
//!
//! When tuning stores the winner of a GPU kernel, it also stores what the backend compiled for
//! it: the OpenCL program binary for that device (`CL_PROGRAM_BINARIES`), or for CUDA the PTX
//! and the CUBIN for that `sm_` architecture. A plain build embeds the artifacts of its baked
//! entries, and the backend loads one instead of compiling the source, if it was built from the
//! same source, options and definitions for the same device or architecture.
//!
//! ## Layout
//!
//! ```text
//! tuned/
//!   gemm.bin                      the tuned file (super::tuned)
//!   gemm.artifacts/               the device binaries of gemm's winners
//!     5c0f3a9e12d4b6e7.clbin      an OpenCL program binary
//!     a1b2c3d4e5f60718.ptx        CUDA PTX
//!     a1b2c3d4e5f60718.cubin      the CUBIN of the same compilation
//!     3826fb11fe197ec4.wgpucache  a wgpu pipeline cache blob (the driver's, for one pipeline)
//! ```
//!
//! One file per artifact, named by the [fingerprint](Recipe::fingerprint) of its [`Recipe`] (16
//! hex digits; a PTX and a CUBIN from one compilation share it) and its [kind's
//! extension](Kind::extension), so that the same program always lands in the same file and a
//! changed one in another: deterministic, and friendly to version control (only changed binaries
//! change). The store writes the files under the tuned folder's lock with the entry they belong
//! to and removes those no entry's winner uses any more.
//!
//! Each file is self-describing, in the frame of tunable's files (`frame.rs`):
//!
//! ```text
//! b"TUNABIN\0" | version: u32 LE | payload length: u64 LE | FNV-1a 64 of payload: u64 LE | payload
//! payload = metadata length: u64 LE | metadata (bincode: Owner, Recipe) | the binary, raw
//! ```
//!
//! - the [`Owner`]: the tuned entry it was stored for (kernel, device as the entry names it,
//!   configuration), by which `#[tunable]` picks the artifacts of its baked entries;
//! - the [`Recipe`]: what it was built from (kind, entry point, device identity or architecture,
//!   a hash of the source text, the compiler options and the definitions), by which the backend
//!   decides at run time whether it may stand in for compiling: a mismatch means compiling,
//!   never running a stale binary.
//!
//! Reading is bounded like the tuned file's (`frame.rs`, "Size limits"): a file over
//! [`MAX_SIZE`] is refused unread, and the metadata decode claims at most about eight times its
//! length. The folder's name is built from a checked kernel name ([`crate::name`]).
//!
//! ```
//! use std::borrow::Cow;
//! use tunable_search::format::artifact::{Artifact, Kind, Owner, Recipe, decode, encode};
//! use tunable_search::format::tuned::StoredValue;
//!
//! let recipe = Recipe {
//!     kind: Kind::Ptx,
//!     entry: "saxpy".into(),
//!     target: "sm_80".into(),
//!     source_hash: Recipe::source_hash("extern \"C\" __global__ void saxpy() {}"),
//!     options: vec![],
//!     definitions: vec!["-DBLOCK=128".into()],
//! };
//! let artifact = Artifact {
//!     owner: Owner {
//!         kernel: "saxpy".into(),
//!         device: "cuda: A100 (sm_80, driver 12.4)".into(),
//!         params: vec![("BLOCK".into(), StoredValue::Int(128))],
//!     },
//!     recipe,
//!     bytes: Cow::Borrowed(b".version 8.0"),
//! };
//! let file = encode(&artifact);
//! assert_eq!(decode(&file).unwrap(), artifact);
//! assert!(artifact.recipe.file_name().ends_with(".ptx"));
//! ```

use super::frame::{DecodeError, decode_bounded, frame, read_capped, unframe};
use super::tuned::StoredValue;
use crate::fingerprint::fnv1a;
use crate::name::{NameError, check};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

/// The format version written; files with a larger one are refused.
pub const ARTIFACT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"TUNABIN\0";

/// The largest payload an artifact file may have: 512 MiB (a device binary and its metadata).
/// A larger file is refused unread ([`DecodeError::TooLarge`]).
pub const MAX_SIZE: u64 = 512 << 20;

/// What a device binary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// An OpenCL program binary for one device (`CL_PROGRAM_BINARIES`), loaded with
    /// `clCreateProgramWithBinary`.
    OpenClBinary,
    /// CUDA PTX for a virtual or real architecture, loaded (and compiled by the driver) with
    /// `cuModuleLoadData`.
    Ptx,
    /// A CUDA CUBIN for one `sm_` architecture, loaded with `cuModuleLoadData`.
    Cubin,
    /// A wgpu pipeline cache blob (`PipelineCache::get_data`) for one adapter and driver, given
    /// back to the driver with `create_pipeline_cache` when the pipeline is created from its
    /// WGSL source (it speeds the driver's compilation up; it never replaces the source).
    WgpuPipelineCache,
}

impl Kind {
    /// The file extension of its artifacts: `clbin`, `ptx`, `cubin`, `wgpucache`.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::OpenClBinary => "clbin",
            Kind::Ptx => "ptx",
            Kind::Cubin => "cubin",
            Kind::WgpuPipelineCache => "wgpucache",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::OpenClBinary => "OpenCL binary",
            Kind::Ptx => "PTX",
            Kind::Cubin => "CUBIN",
            Kind::WgpuPipelineCache => "wgpu pipeline cache",
        })
    }
}

/// The tuned entry an artifact was stored for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Owner {
    /// The kernel's name (the tuned file's).
    pub kernel: String,
    /// The device as the tuned entry names it (the `device` expression of `#[tunable]`).
    pub device: String,
    /// The configuration, by parameter name, in declared order.
    pub params: Vec<(String, StoredValue)>,
}

/// What a device binary was built from: everything that decides whether it may stand in for
/// compiling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipe {
    /// What the binary is.
    pub kind: Kind,
    /// The kernel function in the source.
    pub entry: String,
    /// What it was built for: the OpenCL device's identity (name, platform, driver), or the CUDA
    /// architecture (`sm_80`).
    pub target: String,
    /// [`Recipe::source_hash`] of the source text.
    pub source_hash: u64,
    /// The source's own compiler options, in order.
    pub options: Vec<String>,
    /// The configuration's definitions (`-DNAME=value`), in declared order.
    pub definitions: Vec<String>,
}

/// How an artifact's recipe relates to the build a backend wants ([`Recipe::fit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Built from the same source, options and definitions for the same target: it may be
    /// loaded instead of compiling.
    Same,
    /// Built for this configuration (same kind, entry point and definitions) and target, but from
    /// another source or other options: it must not run; the reason says what changed.
    Stale(String),
    /// Another configuration, entry point, kind or target: nothing to do with this build.
    Other,
}

impl Recipe {
    /// The hash of a source text that recipes carry (FNV-1a 64).
    pub fn source_hash(code: &str) -> u64 {
        super::tuned::source_hash(code)
    }

    /// The fingerprint of everything in the recipe but the kind's PTX/CUBIN distinction: equal
    /// fingerprints mean one compilation, so the PTX and CUBIN of one NVRTC run share it.
    pub fn fingerprint(&self) -> u64 {
        let family: &[u8] = match self.kind {
            Kind::OpenClBinary => b"opencl",
            Kind::Ptx | Kind::Cubin => b"cuda",
            Kind::WgpuPipelineCache => b"wgpu",
        };
        let hash = self.source_hash.to_le_bytes();
        let (n_opts, n_defs) = (
            self.options.len().to_le_bytes(),
            self.definitions.len().to_le_bytes(),
        );
        let mut parts: Vec<&[u8]> = vec![
            family,
            self.entry.as_bytes(),
            self.target.as_bytes(),
            &hash,
            &n_opts,
            &n_defs,
        ];
        parts.extend(self.options.iter().map(String::as_bytes));
        parts.extend(self.definitions.iter().map(String::as_bytes));
        fnv1a(&parts)
    }

    /// The artifact's file name in the kernel's [`artifact_dir`]: fingerprint and extension.
    pub fn file_name(&self) -> String {
        format!("{:016x}.{}", self.fingerprint(), self.kind.extension())
    }

    /// How an artifact built from `self` relates to the build `wanted`.
    ///
    /// ```
    /// use tunable_search::format::artifact::{Fit, Kind, Recipe};
    ///
    /// let built = Recipe {
    ///     kind: Kind::OpenClBinary,
    ///     entry: "gemm".into(),
    ///     target: "opencl: cpu / Portable Computing Language 3.1".into(),
    ///     source_hash: Recipe::source_hash("__kernel void gemm() {}"),
    ///     options: vec![],
    ///     definitions: vec!["-DTILE=16".into()],
    /// };
    /// assert_eq!(built.fit(&built), Fit::Same);
    /// let edited = Recipe { source_hash: Recipe::source_hash("__kernel void gemm() { }"), ..built.clone() };
    /// assert!(matches!(built.fit(&edited), Fit::Stale(why) if why.contains("source")));
    /// let other = Recipe { definitions: vec!["-DTILE=32".into()], ..built.clone() };
    /// assert_eq!(built.fit(&other), Fit::Other);
    /// ```
    pub fn fit(&self, wanted: &Recipe) -> Fit {
        if self.kind != wanted.kind
            || self.entry != wanted.entry
            || self.definitions != wanted.definitions
            || self.target != wanted.target
        {
            return Fit::Other;
        }
        match (
            self.source_hash == wanted.source_hash,
            self.options == wanted.options,
        ) {
            (true, true) => Fit::Same,
            (false, true) => Fit::Stale("the kernel source changed since it was built".into()),
            (true, false) => Fit::Stale(format!(
                "the compiler options changed since it was built ({:?}, now {:?})",
                self.options, wanted.options
            )),
            (false, false) => Fit::Stale(
                "the kernel source and compiler options changed since it was built".into(),
            ),
        }
    }
}

/// A device binary with what it was built from and for whom.
#[derive(Clone, Debug, PartialEq)]
pub struct Artifact<'a> {
    /// The tuned entry it was stored for.
    pub owner: Owner,
    /// What it was built from.
    pub recipe: Recipe,
    /// The binary (PTX text without a trailing NUL).
    pub bytes: Cow<'a, [u8]>,
}

impl Artifact<'_> {
    /// The same artifact owning its bytes.
    pub fn into_owned(self) -> Artifact<'static> {
        Artifact {
            owner: self.owner,
            recipe: self.recipe,
            bytes: Cow::Owned(self.bytes.into_owned()),
        }
    }
}

/// Encodes an artifact into its file format.
pub fn encode(artifact: &Artifact<'_>) -> Vec<u8> {
    let meta = bincode::serde::encode_to_vec(
        (&artifact.owner, &artifact.recipe),
        bincode::config::standard(),
    )
    .expect("metadata always encodes");
    let mut payload = Vec::with_capacity(8 + meta.len() + artifact.bytes.len());
    payload.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    payload.extend_from_slice(&meta);
    payload.extend_from_slice(&artifact.bytes);
    frame(MAGIC, ARTIFACT_VERSION, &payload)
}

/// Decodes an artifact file, borrowing the binary from `bytes`; says precisely what is wrong
/// with a damaged one.
pub fn decode(bytes: &[u8]) -> Result<Artifact<'_>, DecodeError> {
    let (_, payload) = unframe(MAGIC, ARTIFACT_VERSION, MAX_SIZE, bytes)?;
    let Some((len, rest)) = payload.split_first_chunk::<8>() else {
        return Err(DecodeError::Length {
            got: payload.len(),
            expected: 8,
        });
    };
    let len = u64::from_le_bytes(*len);
    if (rest.len() as u64) < len {
        return Err(DecodeError::Length {
            got: rest.len(),
            expected: usize::try_from(len).unwrap_or(usize::MAX),
        });
    }
    let len = len as usize;
    let (meta, binary) = rest.split_at(len);
    let ((owner, recipe), used): ((Owner, Recipe), usize) = decode_bounded(meta)?;
    if used != len {
        return Err(DecodeError::TrailingBytes);
    }
    Ok(Artifact {
        owner,
        recipe,
        bytes: Cow::Borrowed(binary),
    })
}

/// The folder of a kernel's artifacts beside its tuned file: `<tuned dir>/<kernel>.artifacts`;
/// an error if `kernel` is not a valid kernel name ([`crate::name`]), so that the folder is
/// always in `tuned_dir`.
pub fn artifact_dir(tuned_dir: &Path, kernel: &str) -> Result<PathBuf, NameError> {
    check(kernel)?;
    Ok(tuned_dir.join(format!("{kernel}.artifacts")))
}

/// Reads and decodes the artifact file at `path`; what is wrong with it as text. A file over
/// [`MAX_SIZE`] is refused unread.
pub fn read(path: &Path) -> Result<Artifact<'static>, String> {
    match read_capped(path, MAX_SIZE) {
        Ok(Ok(bytes)) => decode(&bytes)
            .map(Artifact::into_owned)
            .map_err(|e| e.to_string()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The identity of an artifact file, as its tuned entry records it
/// ([`TunedEntry::binaries`](super::tuned::TunedEntry::binaries)): the SHA-256 digest of the
/// whole file. Unlike the frame's checksum, which catches accidents, it cannot be matched by a
/// file made on purpose, so a build that embeds only the files its entries name cannot be handed
/// another binary by replacing the file alone.
///
/// ```
/// use tunable_search::format::artifact::identity;
///
/// assert_eq!(identity(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
/// assert_ne!(identity(b"abc"), identity(b"abd"));
/// ```
pub fn identity(file: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    let mut out = [0; 32];
    out.copy_from_slice(&sha2::Sha256::digest(file));
    out
}

/// The artifact files of `dir` (a kernel's [`artifact_dir`]) in file-name order, each decoded
/// or with what is wrong with it; a missing folder has none. Temporary files of a store in
/// progress (names starting with a dot) are not listed.
pub fn read_dir(dir: &Path) -> std::io::Result<Vec<(PathBuf, Result<Artifact<'static>, String>)>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut paths: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|p| {
            let read = read(&p);
            (p, read)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(kind: Kind) -> Recipe {
        Recipe {
            kind,
            entry: "gemm".into(),
            target: "sm_80".into(),
            source_hash: Recipe::source_hash("code"),
            options: vec!["-O3".into()],
            definitions: vec!["-DA=1".into(), "-DB=2".into()],
        }
    }

    fn artifact(kind: Kind, bytes: &[u8]) -> Artifact<'_> {
        Artifact {
            owner: Owner {
                kernel: "gemm".into(),
                device: "gpu".into(),
                params: vec![
                    ("A".into(), StoredValue::Int(1)),
                    ("B".into(), StoredValue::Int(2)),
                ],
            },
            recipe: recipe(kind),
            bytes: Cow::Borrowed(bytes),
        }
    }

    #[test]
    fn round_trip_borrows_the_binary_and_damage_is_named() {
        let a = artifact(Kind::Cubin, &[0, 1, 2, 255]);
        let file = encode(&a);
        let back = decode(&file).unwrap();
        assert_eq!(back, a);
        assert!(matches!(back.bytes, Cow::Borrowed(_)));
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(
            decode(&flipped).unwrap_err().to_string(),
            "checksum mismatch (corrupted)"
        );
        assert!(decode(crate::format::tuned::encode(&[]).as_slice()).is_err());
    }

    /// Metadata in a valid frame and checksum whose first string claims 2^62 bytes: an error
    /// naming the limit, not an abort.
    #[test]
    fn a_forged_metadata_length_is_refused_not_an_abort() {
        let mut meta = vec![0xfd];
        meta.extend_from_slice(&(1u64 << 62).to_le_bytes());
        meta.extend_from_slice(b"gemm");
        let mut payload = (meta.len() as u64).to_le_bytes().to_vec();
        payload.extend_from_slice(&meta);
        payload.extend_from_slice(b"binary");
        let file = frame(MAGIC, ARTIFACT_VERSION, &payload);
        let err = decode(&file).unwrap_err();
        assert!(matches!(err, DecodeError::LimitExceeded { .. }), "{err}");
        // A metadata length past the payload is named as such.
        let mut payload = u64::MAX.to_le_bytes().to_vec();
        payload.extend_from_slice(b"x");
        let file = frame(MAGIC, ARTIFACT_VERSION, &payload);
        assert!(matches!(
            decode(&file),
            Err(DecodeError::Length { got: 1, .. })
        ));
        assert!(artifact_dir(Path::new("tuned"), "../x").is_err());
    }

    #[test]
    fn ptx_and_cubin_of_one_compilation_share_the_fingerprint_and_nothing_else_does() {
        let (ptx, cubin) = (recipe(Kind::Ptx), recipe(Kind::Cubin));
        assert_eq!(ptx.fingerprint(), cubin.fingerprint());
        assert_ne!(ptx.file_name(), cubin.file_name());
        let base = ptx.fingerprint();
        let changed = [
            Recipe {
                kind: Kind::OpenClBinary,
                ..ptx.clone()
            },
            Recipe {
                entry: "gemm2".into(),
                ..ptx.clone()
            },
            Recipe {
                target: "sm_90".into(),
                ..ptx.clone()
            },
            Recipe {
                source_hash: Recipe::source_hash("code "),
                ..ptx.clone()
            },
            Recipe {
                options: vec![],
                ..ptx.clone()
            },
            Recipe {
                definitions: vec!["-DA=1".into(), "-DB=3".into()],
                ..ptx.clone()
            },
            // An option moved into the definitions is another build.
            Recipe {
                options: vec![],
                definitions: vec!["-O3".into(), "-DA=1".into(), "-DB=2".into()],
                ..ptx.clone()
            },
        ];
        for c in &changed {
            assert_ne!(c.fingerprint(), base, "{c:?}");
        }
    }

    #[test]
    fn fit_separates_stale_builds_from_other_configurations() {
        let built = recipe(Kind::OpenClBinary);
        assert_eq!(built.fit(&built), Fit::Same);
        let opts = Recipe {
            options: vec!["-O2".into()],
            ..built.clone()
        };
        assert!(matches!(built.fit(&opts), Fit::Stale(w) if w.contains("options")));
        let both = Recipe {
            source_hash: 1,
            ..opts
        };
        assert!(matches!(built.fit(&both), Fit::Stale(w) if w.contains("source and")));
        for other in [
            Recipe {
                target: "another device".into(),
                ..built.clone()
            },
            Recipe {
                kind: Kind::Ptx,
                ..built.clone()
            },
            Recipe {
                definitions: vec![],
                ..built.clone()
            },
        ] {
            assert_eq!(built.fit(&other), Fit::Other);
        }
    }

    #[test]
    fn read_dir_lists_in_order_with_damaged_files_named() {
        let dir = std::env::temp_dir().join(format!("tunable-artifacts-{}", std::process::id()));
        assert!(read_dir(&dir).unwrap().is_empty());
        std::fs::create_dir_all(&dir).unwrap();
        let a = artifact(Kind::Ptx, b"ptx");
        std::fs::write(dir.join(a.recipe.file_name()), encode(&a)).unwrap();
        std::fs::write(dir.join("0000000000000000.clbin"), b"junk").unwrap();
        std::fs::write(dir.join(".tmp-1"), b"in progress").unwrap();
        let listed = read_dir(&dir).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed[0].1.as_ref().unwrap_err().contains("bad header"));
        assert_eq!(listed[1].1.as_ref().unwrap(), &a.clone().into_owned());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
