//! # The tuned-configuration store
//!
//! Winners are kept in `tuned/<kernel>.bin` under the user's crate (`TUNABLE_DIR` overrides the
//! folder), one [`TunedEntry`] per (kernel, device, key). This module is the only place that knows
//! the codec (bincode 2, behind a small header):
//!
//! ```text
//! b"TUNABLE\0" | format version: u32 LE | payload length: u64 LE | FNV-1a 64 of payload: u64 LE | payload
//! ```
//!
//! so a truncated, corrupted or future-version file is recognized as such and never decoded into
//! garbage. Writes are atomic (a temporary file renamed over the old one) under an exclusive lock
//! on `tuned/.lock`, and merge with what is there: two processes tuning different kernels,
//! devices or keys at once lose nothing.

use crate::RuntimeError;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use tunable_search::Value;

/// The format version written; files with a larger one are refused.
pub const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"TUNABLE\0";
const HEADER: usize = 8 + 4 + 8 + 8;

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
    /// The device it was tuned on (see [`crate::device`]).
    pub device: String,
    /// The problem-size key.
    pub key: u64,
    /// The fingerprint of the space it was tuned in ([`tunable_search::Space::fingerprint`]).
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
}

impl TunedEntry {
    /// Whether `other` is stored in the same slot (kernel, device and key).
    pub fn same_slot(&self, other: &TunedEntry) -> bool {
        self.kernel == other.kernel && self.device == other.device && self.key == other.key
    }

    /// The configuration's values, in stored order.
    pub fn values(&self) -> Vec<Value> {
        self.params.iter().map(|(_, v)| Value::from(v)).collect()
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Encodes entries into the file format.
pub fn encode(entries: &[TunedEntry]) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(entries, bincode::config::standard())
        .expect("entries always encode");
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Decodes the file format; says precisely what is wrong with a damaged file.
pub fn decode(bytes: &[u8]) -> Result<Vec<TunedEntry>, String> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("not a tunable file (bad header)".to_owned());
    }
    let word = |at: usize, n: usize| {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b))
    };
    let version = word(8, 4) as u32;
    if version > FORMAT_VERSION {
        return Err(format!(
            "written by a newer tunable (format {version}, this build reads up to {FORMAT_VERSION})"
        ));
    }
    let len = word(12, 8) as usize;
    let payload = &bytes[HEADER..];
    if payload.len() != len {
        return Err(format!(
            "truncated ({} of {len} payload bytes)",
            payload.len()
        ));
    }
    if fnv1a(payload) != word(20, 8) {
        return Err("checksum mismatch (corrupted)".to_owned());
    }
    let (entries, used) = bincode::serde::decode_from_slice(payload, bincode::config::standard())
        .map_err(|e| format!("undecodable payload: {e}"))?;
    if used != len {
        return Err("trailing bytes after the payload".to_owned());
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

/// The tuned file of a kernel.
pub fn tuned_file(dir: &Path, kernel: &str) -> PathBuf {
    dir.join(format!("{kernel}.bin"))
}

/// Reads a tuned file; a missing file is empty.
pub fn read(path: &Path) -> Result<Vec<TunedEntry>, RuntimeError> {
    match std::fs::read(path) {
        Ok(bytes) => decode(&bytes).map_err(|reason| RuntimeError::BadTunedFile {
            path: path.into(),
            reason,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(RuntimeError::Io {
            path: path.into(),
            source,
        }),
    }
}

/// Stores `entry` into `path`, replacing the entry of the same slot, atomically and under the
/// folder's lock. A damaged existing file is kept aside as `<file>.damaged` rather than lost.
pub fn store(path: &Path, entry: TunedEntry) -> Result<(), RuntimeError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let io = |source, p: &Path| RuntimeError::Io {
        path: p.into(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
    let lock_path = dir.join(".lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io(e, &lock_path))?;
    lock.lock().map_err(|e| io(e, &lock_path))?;
    let mut entries = match read(path) {
        Ok(e) => e,
        Err(RuntimeError::BadTunedFile { .. }) => {
            let aside = path.with_extension("bin.damaged");
            std::fs::rename(path, &aside).map_err(|e| io(e, &aside))?;
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    entries.retain(|e| !e.same_slot(&entry));
    entries.push(entry);
    entries.sort_by(|a, b| (&a.kernel, &a.device, a.key).cmp(&(&b.kernel, &b.device, b.key)));
    let tmp = path.with_extension(format!("bin.tmp{}", std::process::id()));
    let mut f = File::create(&tmp).map_err(|e| io(e, &tmp))?;
    f.write_all(&encode(&entries))
        .and_then(|()| f.sync_all())
        .map_err(|e| io(e, &tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| io(e, path))?;
    drop(lock);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(kernel: &str, key: u64, t: f64) -> TunedEntry {
        TunedEntry {
            kernel: kernel.into(),
            device: "cpu: test x2".into(),
            key,
            space_hash: 7,
            params: vec![
                ("tile".into(), StoredValue::Int(4)),
                ("mode".into(), StoredValue::Str("fast".into())),
            ],
            time_ms: t,
            evaluations: 20,
            strategy: "genetic".into(),
            timestamp: 1,
        }
    }

    #[test]
    fn roundtrip_and_damage_is_detected() {
        let e = vec![entry("a", 1, 2.0), entry("b", 2, 3.0)];
        let bytes = encode(&e);
        assert_eq!(decode(&bytes).unwrap(), e);
        assert!(
            decode(&bytes[..bytes.len() - 3])
                .unwrap_err()
                .contains("truncated")
        );
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode(&flipped).unwrap_err().contains("checksum"));
        let mut future = bytes.clone();
        future[8] = 99;
        assert!(decode(&future).unwrap_err().contains("newer"));
        assert!(decode(b"garbage").unwrap_err().contains("header"));
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = std::env::temp_dir().join(format!("tunable-store-conc-{}", std::process::id()));
        let path = tuned_file(&dir, "k");
        std::thread::scope(|s| {
            for w in 0..4u64 {
                let path = &path;
                s.spawn(move || {
                    for k in 0..25 {
                        store(path, entry("k", w * 100 + k, 1.0)).unwrap();
                    }
                });
            }
        });
        assert_eq!(read(&path).unwrap().len(), 100);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Two processes (this test binary started twice, running `writer_process`) store 50
    /// entries each into one file at once: the file lock and merge keep all 100.
    #[test]
    fn concurrent_processes_lose_nothing() {
        let dir = std::env::temp_dir().join(format!("tunable-store-proc-{}", std::process::id()));
        let path = tuned_file(&dir, "k");
        let exe = std::env::current_exe().unwrap();
        let children: Vec<_> = (0..2u64)
            .map(|w| {
                std::process::Command::new(&exe)
                    .args(["--exact", "store::tests::writer_process", "--ignored"])
                    .env("TUNABLE_TEST_STORE", &path)
                    .env("TUNABLE_TEST_WRITER", w.to_string())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let mut keys: Vec<u64> = read(&path).unwrap().iter().map(|e| e.key).collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..50).chain(1000..1050).collect::<Vec<_>>());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// One writer of `concurrent_processes_lose_nothing`; does nothing when run on its own.
    #[test]
    #[ignore = "run by concurrent_processes_lose_nothing in a child process"]
    fn writer_process() {
        let (Ok(path), Ok(w)) = (
            std::env::var("TUNABLE_TEST_STORE"),
            std::env::var("TUNABLE_TEST_WRITER"),
        ) else {
            return;
        };
        let w: u64 = w.parse().unwrap();
        for k in 0..50 {
            store(Path::new(&path), entry("k", w * 1000 + k, 1.0)).unwrap();
        }
    }

    #[test]
    fn store_merges_and_keeps_damaged_files_aside() {
        let dir = std::env::temp_dir().join(format!("tunable-store-{}", std::process::id()));
        let path = tuned_file(&dir, "k");
        store(&path, entry("k", 1, 2.0)).unwrap();
        store(&path, entry("k", 2, 3.0)).unwrap();
        store(&path, entry("k", 1, 1.5)).unwrap();
        let got = read(&path).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].time_ms, 1.5);
        std::fs::write(&path, b"TUNABLE\0junk").unwrap();
        assert!(matches!(
            read(&path),
            Err(RuntimeError::BadTunedFile { .. })
        ));
        store(&path, entry("k", 3, 1.0)).unwrap();
        assert_eq!(read(&path).unwrap().len(), 1);
        assert!(path.with_extension("bin.damaged").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
