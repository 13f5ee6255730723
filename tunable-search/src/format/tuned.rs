//! # The tuned file
//!
//! Winners of tuning are kept in `tuned/<kernel>.bin` under the user's crate ([`tuned_dir`],
//! `TUNABLE_DIR` overrides the folder), one [`TunedEntry`] per (kernel, device, key): the winner,
//! and the best few configurations measured with their times ([`TunedEntry::top`], at most
//! [`KEPT`](crate::portable::KEPT)), so that a build can reason across devices. The
//! `#[tunable]` macro reads it at compile time to bake the entries in; the runtime's store writes
//! it (atomically, under a lock, merging with what is there). This module is the only place that
//! knows the codec, bincode 2 in the frame (`frame.rs`) of tunable's files (magic
//! `b"TUNABLE\0"`, version, length, checksum), so a truncated, corrupted or future-version file
//! is recognized as such and never decoded into garbage. Older versions still decode: a version
//! 1 file (before [`TunedEntry::top`]) reads as entries whose list of best configurations holds
//! the winner alone; a version 2 file (before [`TunedEntry::sources`]) as entries that recorded
//! no kernel source and no binary's identity; a version 3 file (before [`TunedEntry::front`]) as
//! entries of a tuning for time alone, with no front. Besides [`Value`] (plain data) it depends on serde, bincode and std only, so
//! that a shipped build can read tuned files without the search engine.
//!
//! Reading is bounded (see `frame.rs`, "Size limits"): a file over [`MAX_SIZE`] is refused
//! before it is read, and no length inside the payload makes the decoder allocate more than
//! about eight times the payload's size, so a damaged or forged file is an error, never an
//! abort. Paths are built from kernel names checked by [`crate::name::check`].
//!
//! The compiled device binaries of GPU kernels live beside the file, in `<kernel>.artifacts/`
//! ([`super::artifact`]).
//!
//! ```
//! use tunable_search::format::tuned::{Ranked, StoredValue, TunedEntry, decode, encode};
//!
//! let entry = TunedEntry {
//!     kernel: "matmul".into(),
//!     device: "cpu: example x8".into(),
//!     key: 1024,
//!     space_hash: 0x5eed,
//!     params: vec![("tile".into(), StoredValue::Int(32))],
//!     time_ms: 1.5,
//!     evaluations: 60,
//!     strategy: "auto".into(),
//!     timestamp: 1_700_000_000,
//!     top: vec![Ranked { values: vec![StoredValue::Int(32)], time_ms: 1.5 }],
//!     sources: vec![],
//!     binaries: vec![],
//!     front: None,
//! };
//! let bytes = encode(std::slice::from_ref(&entry));
//! assert_eq!(decode(&bytes).unwrap(), [entry]);
//! assert_eq!(decode(&bytes[..10]).unwrap_err().to_string(), "not a tunable file (bad header)");
//! ```

use super::frame::{decode_bounded, frame, read_capped, unframe};
use crate::name::{NameError, check};
use crate::space::{Space, Value};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use super::frame::DecodeError;
use std::path::{Path, PathBuf};

/// The format version written; files with a larger one are refused. Version 2 added
/// [`TunedEntry::top`], version 3 [`TunedEntry::sources`] and [`TunedEntry::binaries`],
/// version 4 [`TunedEntry::front`]; files of versions 1 to 3 still decode.
pub const FORMAT_VERSION: u32 = 4;
const MAGIC: &[u8; 8] = b"TUNABLE\0";

/// The largest payload a tuned file may have: 64 MiB (some hundred thousand entries). A larger
/// file is refused unread ([`DecodeError::TooLarge`]).
pub const MAX_SIZE: u64 = 64 << 20;

/// A parameter value as stored (bincode needs a tagged enum).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StoredValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
}

impl From<&Value> for StoredValue {
    fn from(v: &Value) -> Self {
        match v {
            Value::Int(i) => StoredValue::Int(*i),
            Value::Float(f) => StoredValue::Float(*f),
            Value::Bool(b) => StoredValue::Bool(*b),
            Value::Str(s) => StoredValue::Str(s.clone()),
        }
    }
}

impl From<&StoredValue> for Value {
    fn from(v: &StoredValue) -> Self {
        match v {
            StoredValue::Int(i) => Value::Int(*i),
            StoredValue::Float(f) => Value::Float(*f),
            StoredValue::Bool(b) => Value::Bool(*b),
            StoredValue::Str(s) => Value::Str(s.clone()),
        }
    }
}

/// One tuned configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunedEntry {
    /// The kernel's name.
    pub kernel: String,
    /// The identity of the device it was tuned on (`tunable_runtime::device`).
    pub device: String,
    /// The problem-size key.
    pub key: u64,
    /// The fingerprint of the space it was tuned in ([`crate::Space::fingerprint`]).
    pub space_hash: u64,
    /// The configuration, by parameter name, in declared order.
    pub params: Vec<(String, StoredValue)>,
    /// Its measured time in milliseconds.
    pub time_ms: f64,
    /// Evaluations the tuning spent.
    pub evaluations: u32,
    /// The strategy that found it.
    pub strategy: String,
    /// When, in seconds since the Unix epoch.
    pub timestamp: u64,
    /// The best configurations measured, fastest first (the first is the winner), at most
    /// [`KEPT`](crate::portable::KEPT), values in the order of [`params`](Self::params). Empty
    /// when only the winner is known; see [`ranked`](Self::ranked).
    pub top: Vec<Ranked>,
    /// The hashes ([`source_hash`]) of the kernel source files the `source` option of
    /// `#[tunable]` named when it was tuned, in declared order; empty when it named none. A
    /// build whose files hash otherwise does not bake the entry ([`is_current`](Self::is_current)).
    pub sources: Vec<u64>,
    /// The identities ([`artifact::identity`](super::artifact::identity), SHA-256) of the
    /// device binary files stored with the winner beside the tuned file, so that a build embeds
    /// only those: a file replaced without its entry is refused. Empty for a kernel without
    /// device binaries (and for entries of files before version 3, whose binaries are taken as
    /// they are).
    pub binaries: Vec<[u8; 32]>,
    /// What a tuning for other objectives than time alone found: its objectives, the rule
    /// that chose the configuration and the Pareto front of what it measured. `None` for a
    /// tuning for time alone (and for entries of files before version 4).
    pub front: Option<Front>,
}

/// The objectives of a tuning and the front of what it measured: the configurations no other
/// one measured beats in every objective. The entry's configuration is the point its rule
/// chose (`tunable_search::objective::Prefer`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Front {
    /// The objectives as written, in order: `time`, `energy`, `max gflops_per_watt`.
    pub objectives: Vec<String>,
    /// The rule that chose the entry's configuration: `least_energy within 1.10 of fastest`.
    pub prefer: String,
    /// The points of the front, best first in the first objective.
    pub points: Vec<FrontPoint>,
}

/// One point of a [`Front`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrontPoint {
    /// The configuration's values, in the order of the entry's parameters.
    pub values: Vec<StoredValue>,
    /// Its measured time in milliseconds.
    pub time_ms: f64,
    /// Its value of each objective, in the order of [`Front::objectives`], as stated (a
    /// maximized one not negated; time in milliseconds, energy in joules).
    pub objectives: Vec<f64>,
}

/// The hash of a kernel source text that tuned entries record: FNV-1a 64 of its bytes, the hash
/// device binaries' recipes carry too (`artifact::Recipe::source_hash`).
pub fn source_hash(text: &str) -> u64 {
    crate::fingerprint::fnv1a(&[text.as_bytes()])
}

/// One of the best configurations of a tuning, with its time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// The configuration's values, in the order of the entry's parameters.
    pub values: Vec<StoredValue>,
    /// Its measured time in milliseconds.
    pub time_ms: f64,
}

impl Ranked {
    /// The configuration at `position` of `space` with its time.
    pub fn at(space: &Space, position: usize, time_ms: f64) -> Ranked {
        Ranked {
            values: space
                .values(position)
                .iter()
                .map(StoredValue::from)
                .collect(),
            time_ms,
        }
    }
}

/// An entry as format version 1 wrote it (no list of best configurations).
#[derive(Deserialize)]
struct EntryV1 {
    kernel: String,
    device: String,
    key: u64,
    space_hash: u64,
    params: Vec<(String, StoredValue)>,
    time_ms: f64,
    evaluations: u32,
    strategy: String,
    timestamp: u64,
}

impl From<EntryV1> for TunedEntry {
    fn from(e: EntryV1) -> Self {
        TunedEntry {
            front: None,
            top: Vec::new(),
            sources: Vec::new(),
            binaries: Vec::new(),
            kernel: e.kernel,
            device: e.device,
            key: e.key,
            space_hash: e.space_hash,
            params: e.params,
            time_ms: e.time_ms,
            evaluations: e.evaluations,
            strategy: e.strategy,
            timestamp: e.timestamp,
        }
    }
}

/// An entry as format version 2 wrote it (no kernel source hashes): version 1's fields, then the
/// best configurations (bincode writes a nested struct's fields inline, so the layouts match).
#[derive(Deserialize)]
struct EntryV2 {
    v1: EntryV1,
    top: Vec<Ranked>,
}

impl From<EntryV2> for TunedEntry {
    fn from(e: EntryV2) -> Self {
        TunedEntry {
            top: e.top,
            ..TunedEntry::from(e.v1)
        }
    }
}

/// An entry as format version 3 wrote it (no front): version 2's fields, then the source
/// hashes and the binaries' identities.
#[derive(Deserialize)]
struct EntryV3 {
    v2: EntryV2,
    sources: Vec<u64>,
    binaries: Vec<[u8; 32]>,
}

impl From<EntryV3> for TunedEntry {
    fn from(e: EntryV3) -> Self {
        TunedEntry {
            sources: e.sources,
            binaries: e.binaries,
            ..TunedEntry::from(e.v2)
        }
    }
}

impl TunedEntry {
    /// Whether `other` is stored in the same slot (kernel, device and key).
    pub fn same_slot(&self, other: &TunedEntry) -> bool {
        self.kernel == other.kernel && self.device == other.device && self.key == other.key
    }

    /// Whether the entry was tuned with the kernel source files that hash to `current` now
    /// (the `source` option's files, [`source_hash`]): every one of them is among the entry's
    /// [`sources`](Self::sources). An entry that recorded none, or a kernel that names none,
    /// cannot tell, and counts as current.
    ///
    /// ```
    /// # use tunable_search::format::tuned::{TunedEntry, source_hash};
    /// # let mut entry = TunedEntry { kernel: "k".into(), device: "d".into(), key: 0, space_hash: 0,
    /// #     params: vec![], time_ms: 1.0, evaluations: 1, strategy: "auto".into(), timestamp: 0,
    /// #     top: vec![], sources: vec![], binaries: vec![], front: None };
    /// entry.sources = vec![source_hash("__kernel void k() {}")];
    /// assert!(entry.is_current(&[source_hash("__kernel void k() {}")]));
    /// assert!(!entry.is_current(&[source_hash("__kernel void k() { edited(); }")]));
    /// assert!(entry.is_current(&[]));
    /// ```
    pub fn is_current(&self, current: &[u64]) -> bool {
        self.sources.is_empty() || current.iter().all(|h| self.sources.contains(h))
    }

    /// The configuration's values, in stored order.
    pub fn values(&self) -> Vec<Value> {
        self.params.iter().map(|(_, v)| Value::from(v)).collect()
    }

    /// The best configurations known with their times, fastest first: [`top`](Self::top), or
    /// the winner alone where it is empty.
    pub fn ranked(&self) -> Vec<(Vec<Value>, f64)> {
        if self.top.is_empty() {
            return vec![(self.values(), self.time_ms)];
        }
        self.top
            .iter()
            .map(|r| (r.values.iter().map(Value::from).collect(), r.time_ms))
            .collect()
    }

    /// The stored form of a configuration of `space`: each parameter's name with its value, in
    /// declared order. Every writer of entries (the tuner, distributed export) names the values
    /// this way.
    pub fn named(space: &Space, values: &[Value]) -> Vec<(String, StoredValue)> {
        space
            .params()
            .iter()
            .zip(values)
            .map(|(p, v)| (p.name().to_owned(), StoredValue::from(v)))
            .collect()
    }
}

/// Why a tuned file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The file exists but could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is damaged or from a newer version.
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        error: DecodeError,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ReadError::Damaged { path, error } => {
                write!(f, "tuned file {} is unusable: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io { source, .. } => Some(source),
            ReadError::Damaged { error, .. } => Some(error),
        }
    }
}

/// Encodes entries into the file format.
pub fn encode(entries: &[TunedEntry]) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(entries, bincode::config::standard())
        .expect("entries always encode");
    frame(MAGIC, FORMAT_VERSION, &payload)
}

/// Decodes the file format; says precisely what is wrong with a damaged file.
pub fn decode(bytes: &[u8]) -> Result<Vec<TunedEntry>, DecodeError> {
    let (version, payload) = unframe(MAGIC, FORMAT_VERSION, MAX_SIZE, bytes)?;
    let (entries, used) = if version == 1 {
        let (old, used): (Vec<EntryV1>, usize) = decode_bounded(payload)?;
        (old.into_iter().map(TunedEntry::from).collect(), used)
    } else if version == 2 {
        let (old, used): (Vec<EntryV2>, usize) = decode_bounded(payload)?;
        (old.into_iter().map(TunedEntry::from).collect(), used)
    } else if version == 3 {
        let (old, used): (Vec<EntryV3>, usize) = decode_bounded(payload)?;
        (old.into_iter().map(TunedEntry::from).collect(), used)
    } else {
        decode_bounded(payload)?
    };
    if used != payload.len() {
        return Err(DecodeError::TrailingBytes);
    }
    Ok(entries)
}

/// The folder tuned files live in: `$TUNABLE_DIR` (relative to `manifest_dir` if relative), or
/// `manifest_dir/tuned`.
pub fn tuned_dir(manifest_dir: &str) -> PathBuf {
    match std::env::var_os("TUNABLE_DIR") {
        Some(d) => Path::new(manifest_dir).join(d),
        None => Path::new(manifest_dir).join("tuned"),
    }
}

/// The tuned file of a kernel, `dir/<kernel>.bin`; an error if `kernel` is not a valid kernel
/// name ([`crate::name`]), so that the file is always in `dir`.
///
/// ```
/// use std::path::Path;
/// use tunable_search::format::tuned::tuned_file;
///
/// assert_eq!(tuned_file(Path::new("tuned"), "gemm").unwrap(), Path::new("tuned/gemm.bin"));
/// assert!(tuned_file(Path::new("tuned"), "../../x").is_err());
/// ```
pub fn tuned_file(dir: &Path, kernel: &str) -> Result<PathBuf, NameError> {
    check(kernel)?;
    Ok(dir.join(format!("{kernel}.bin")))
}

/// Reads a tuned file; a missing file is empty. A file over [`MAX_SIZE`] is refused unread.
pub fn read(path: &Path) -> Result<Vec<TunedEntry>, ReadError> {
    let damaged = |error| ReadError::Damaged {
        path: path.into(),
        error,
    };
    match read_capped(path, MAX_SIZE) {
        Ok(Ok(bytes)) => decode(&bytes).map_err(damaged),
        Ok(Err(error)) => Err(damaged(error)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(ReadError::Io {
            path: path.into(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kernel: &str, key: u64) -> TunedEntry {
        let winner = vec![
            StoredValue::Int(4),
            StoredValue::Float(0.5),
            StoredValue::Bool(true),
            StoredValue::Str("fast".into()),
        ];
        TunedEntry {
            kernel: kernel.into(),
            device: "cpu: test x2".into(),
            key,
            space_hash: 7,
            params: vec![
                ("tile".into(), StoredValue::Int(4)),
                ("scale".into(), StoredValue::Float(0.5)),
                ("fused".into(), StoredValue::Bool(true)),
                ("mode".into(), StoredValue::Str("fast".into())),
            ],
            time_ms: 2.0,
            evaluations: 20,
            strategy: "genetic".into(),
            timestamp: 1,
            top: vec![
                Ranked {
                    values: winner.clone(),
                    time_ms: 2.0,
                },
                Ranked {
                    values: vec![
                        StoredValue::Int(8),
                        StoredValue::Float(0.5),
                        StoredValue::Bool(false),
                        StoredValue::Str("slow".into()),
                    ],
                    time_ms: 2.5,
                },
            ],
            sources: vec![source_hash("__kernel void a() {}")],
            binaries: vec![[7; 32]],
            front: Some(Front {
                objectives: vec!["time".into(), "max gflops_per_watt".into()],
                prefer: "most_gflops_per_watt within 1.10 of fastest".into(),
                points: vec![FrontPoint {
                    values: winner.clone(),
                    time_ms: 2.0,
                    objectives: vec![2.0, 41.5],
                }],
            }),
        }
    }

    /// The payload of a file of format version 2 holding `e` alone, written here as its
    /// encoder did (version 1's fields, then the best configurations); version 3 appended the
    /// source hashes and the binaries' identities (bincode writes fields inline).
    fn old_payload(e: &TunedEntry, version: u32) -> Vec<u8> {
        #[derive(Serialize)]
        struct V2<'a>(
            &'a str,
            &'a str,
            u64,
            u64,
            &'a [(String, StoredValue)],
            f64,
            u32,
            &'a str,
            u64,
            &'a [Ranked],
        );
        let old = vec![V2(
            &e.kernel,
            &e.device,
            e.key,
            e.space_hash,
            &e.params,
            e.time_ms,
            e.evaluations,
            &e.strategy,
            e.timestamp,
            &e.top,
        )];
        let config = bincode::config::standard();
        let mut payload = bincode::serde::encode_to_vec(&old, config).unwrap();
        if version == 3 {
            payload.extend(bincode::serde::encode_to_vec(&e.sources, config).unwrap());
            payload.extend(bincode::serde::encode_to_vec(&e.binaries, config).unwrap());
        }
        payload
    }

    /// A version 2 file (before the source hashes) decodes, each entry recording no source,
    /// so that every build still bakes it.
    #[test]
    fn version_2_files_still_load() {
        let e = entry("a", 1);
        let decoded = decode(&frame(MAGIC, 2, &old_payload(&e, 2))).unwrap();
        assert_eq!(
            decoded,
            [TunedEntry {
                sources: vec![],
                binaries: vec![],
                front: None,
                ..e
            }]
        );
        assert!(decoded[0].is_current(&[source_hash("anything")]));
    }

    /// A version 3 file (before the front) decodes, each entry a tuning for time alone.
    #[test]
    fn version_3_files_still_load() {
        let e = entry("a", 1);
        let decoded = decode(&frame(MAGIC, 3, &old_payload(&e, 3))).unwrap();
        assert_eq!(decoded, [TunedEntry { front: None, ..e }]);
    }

    /// `tests/fixtures/tuned-v1.bin` was written by the encoder of format version 1 (before
    /// the list of best configurations): it still decodes, each entry ranking its winner alone.
    #[test]
    fn version_1_files_still_load() {
        let bytes = include_bytes!("../../tests/fixtures/tuned-v1.bin");
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
        let entries = decode(bytes).unwrap();
        assert_eq!(entries.len(), 2);
        let e = &entries[1];
        assert_eq!(
            (e.kernel.as_str(), e.device.as_str()),
            ("matmul", "cpu: b x4")
        );
        assert_eq!((e.key, e.space_hash, e.time_ms), (1024, 0x5eed_1234, 12.25));
        assert_eq!(
            (e.evaluations, e.strategy.as_str(), e.timestamp),
            (60, "auto", 1_700_000_000)
        );
        assert_eq!(e.params[0], ("tile".to_owned(), StoredValue::Int(32)));
        assert_eq!(
            e.params[3],
            ("mode".to_owned(), StoredValue::Str("fast".into()))
        );
        assert!(e.top.is_empty());
        assert_eq!(e.ranked(), [(e.values(), 12.25)]);
        // Written again, it is a current-version file with the same entries.
        let again = encode(&entries);
        assert_eq!(
            u32::from_le_bytes(again[8..12].try_into().unwrap()),
            FORMAT_VERSION
        );
        assert_eq!(decode(&again).unwrap(), entries);
    }

    #[test]
    fn ranked_lists_the_kept_configurations_fastest_first() {
        let e = entry("a", 1);
        let ranked = e.ranked();
        assert_eq!(ranked.len(), 2);
        assert_eq!(ranked[0], (e.values(), 2.0));
        assert_eq!(ranked[1].0[2], Value::Bool(false));
    }

    #[test]
    fn roundtrip_and_damage_is_detected() {
        let e = vec![entry("a", 1), entry("b", 2)];
        let bytes = encode(&e);
        assert_eq!(decode(&bytes).unwrap(), e);
        let msg = |b: &[u8]| decode(b).unwrap_err().to_string();
        assert!(msg(&bytes[..bytes.len() - 3]).contains("truncated"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(msg(&longer).contains("where the header announces"));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(msg(&flipped), "checksum mismatch (corrupted)");
        let mut future = bytes.clone();
        future[8] = 99;
        assert!(msg(&future).contains("newer tunable (format 99"));
        assert!(msg(b"garbage").contains("header"));
    }

    /// A tuned file in a valid frame with a valid checksum around a string length of 2^62: a
    /// damaged file, named, not an allocation failure that aborts `cargo tunable show` or rustc.
    pub(crate) fn forged() -> Vec<u8> {
        let mut payload = vec![1u8]; // one entry
        payload.push(0xfd); // its kernel name's length: varint u64
        payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
        payload.extend_from_slice(b"matmul");
        frame(MAGIC, FORMAT_VERSION, &payload)
    }

    #[test]
    fn a_forged_length_is_refused_not_an_abort() {
        let err = decode(&forged()).unwrap_err();
        assert!(matches!(err, DecodeError::LimitExceeded { .. }), "{err}");
        let dir = std::env::temp_dir().join(format!("tunable-forged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = tuned_file(&dir, "matmul").unwrap();
        std::fs::write(&path, forged()).unwrap();
        let msg = read(&path).unwrap_err().to_string();
        assert!(
            msg.contains("is unusable: a length in the 16-byte payload"),
            "{msg}"
        );
        // A payload over the maximum is refused from its header, and a file over it unread.
        let mut big = forged();
        big[12..20].copy_from_slice(&(MAX_SIZE + 1).to_le_bytes());
        assert!(matches!(decode(&big), Err(DecodeError::TooLarge { .. })));
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_SIZE + 1000).unwrap(); // sparse: nothing is written
        let err = read(&path).unwrap_err();
        assert!(
            matches!(
                &err,
                ReadError::Damaged {
                    error: DecodeError::TooLarge { .. },
                    ..
                }
            ),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The limit never refuses an honest file, small or large.
    #[test]
    fn honest_files_of_any_size_decode() {
        for n in [0, 1, 17, 28, 100, 3000] {
            let entries: Vec<TunedEntry> = (0..n).map(|k| entry("k", k)).collect();
            let bytes = encode(&entries);
            assert_eq!(decode(&bytes).unwrap(), entries, "{n} entries");
        }
    }

    #[test]
    fn values_convert_both_ways() {
        let e = entry("a", 1);
        let values = e.values();
        assert_eq!(
            values,
            [
                Value::Int(4),
                Value::Float(0.5),
                Value::Bool(true),
                Value::Str("fast".into())
            ]
        );
        let back: Vec<StoredValue> = values.iter().map(StoredValue::from).collect();
        assert_eq!(
            back,
            e.params.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn read_missing_is_empty_and_damage_names_the_file() {
        let dir = std::env::temp_dir().join(format!("tunable-format-{}", std::process::id()));
        let path = tuned_file(&dir, "k").unwrap();
        assert!(read(&path).unwrap().is_empty());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, b"TUNABLE\0junk").unwrap();
        let err = read(&path).unwrap_err();
        assert!(matches!(
            err,
            ReadError::Damaged {
                error: DecodeError::BadHeader,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!(
                "tuned file {} is unusable: not a tunable file (bad header)",
                path.display()
            )
        );
        std::fs::write(&path, encode(&[entry("k", 3)])).unwrap();
        assert_eq!(read(&path).unwrap(), [entry("k", 3)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
