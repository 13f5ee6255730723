//! # The tuned-configuration store
//!
//! Winners are kept in `tuned/<kernel>.bin` under the user's crate (`TUNABLE_DIR` overrides the
//! folder), one [`TunedEntry`] per (kernel, device, key). The file format (header, checksum,
//! bincode payload) and the path rules are [`tunable_search::format::tuned`], shared with the
//! `#[tunable]` macro, which reads the file at compile time; they are re-exported here. This
//! module writes: atomically (a temporary file renamed over the old one) under an exclusive lock
//! on `tuned/.lock`, merging with what is there, so two processes tuning different kernels,
//! devices or keys at once lose nothing.
//!
//! A GPU kernel's winner is stored with the device binaries built for it
//! ([`store_with_artifacts`]), one file each in `tuned/<kernel>.artifacts/` (format and layout:
//! [`tunable_search::format::artifact`]), written before the entry that uses them under the same
//! lock. Each store also removes the artifacts no entry's winner uses any more, and those a new
//! build of the same configuration replaces, so the folder holds what builds embed and nothing
//! else.

use crate::RuntimeError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use tunable_search::format::artifact::{self, Artifact, Owner, Recipe};
use tunable_search::format::tuned::ReadError;

pub use tunable_search::format::tuned::{
    DecodeError, FORMAT_VERSION, Front, FrontPoint, Ranked, StoredValue, TunedEntry, decode,
    encode, tuned_dir, tuned_file,
};

/// Reads a tuned file; a missing file is empty.
pub fn read(path: &Path) -> Result<Vec<TunedEntry>, RuntimeError> {
    tunable_search::format::tuned::read(path).map_err(|e| match e {
        ReadError::Io { path, source } => RuntimeError::Io { path, source },
        ReadError::Damaged { path, error } => RuntimeError::BadTunedFile {
            path,
            reason: error.to_string(),
        },
        other => RuntimeError::BadTunedFile {
            path: path.into(),
            reason: other.to_string(),
        },
    })
}

/// Stores `entry` into `path`, replacing the entry of the same slot, atomically and under the
/// folder's lock. A damaged existing file is kept aside as `<file>.damaged` rather than lost.
/// Artifacts of the kernel that no entry's winner uses any more are removed.
pub fn store(path: &Path, entry: TunedEntry) -> Result<(), RuntimeError> {
    store_with_artifacts(path, entry, Vec::new())
}

/// Stores `entry` like [`store`], with `binaries`, the device binaries built for its winner
/// (each with its recipe), as artifacts in the kernel's folder beside the tuned file, written
/// before the entry, which records their identities ([`TunedEntry::binaries`]; so do the
/// entries of other keys that share the files). An artifact of the same configuration, device, kind and entry point built
/// from another recipe (an edited source, say) is replaced.
pub fn store_with_artifacts(
    path: &Path,
    entry: TunedEntry,
    binaries: Vec<(Recipe, Vec<u8>)>,
) -> Result<(), RuntimeError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // The entry's kernel names the artifact folder: checked before anything is written.
    let artifacts = artifact::artifact_dir(dir, &entry.kernel)?;
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
    let owner = Owner {
        kernel: entry.kernel.clone(),
        device: entry.device.clone(),
        params: entry.params.clone(),
    };
    let mut written = Vec::new();
    let mut identities = Vec::new();
    for (recipe, bytes) in binaries {
        let name = recipe.file_name();
        let file = artifact::encode(&Artifact {
            owner: owner.clone(),
            recipe,
            bytes: bytes.into(),
        });
        write_atomically(&artifacts.join(&name), &file)?;
        identities.push(artifact::identity(&file));
        written.push(name);
    }
    let mut entry = entry;
    if !identities.is_empty() {
        entry.binaries.clone_from(&identities);
        // The entries of other keys with the same winner on the same device share its files,
        // rewritten now: they record the new identities too.
        for e in entries.iter_mut().filter(|e| {
            e.kernel == owner.kernel && e.device == owner.device && e.params == owner.params
        }) {
            e.binaries.clone_from(&identities);
        }
    }
    entries.retain(|e| !e.same_slot(&entry));
    entries.push(entry);
    entries.sort_by(|a, b| (&a.kernel, &a.device, a.key).cmp(&(&b.kernel, &b.device, b.key)));
    write_atomically(path, &encode(&entries))?;
    prune(&artifacts, &entries, &owner, &written)?;
    drop(lock);
    Ok(())
}

fn io(source: std::io::Error, path: &Path) -> RuntimeError {
    RuntimeError::Io {
        path: path.into(),
        source,
    }
}

/// Writes `bytes` to `path` through a temporary file renamed over it (creating the folder).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RuntimeError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let mut f = File::create(&tmp).map_err(|e| io(e, &tmp))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| io(e, &tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| io(e, path))
}

/// Removes from the kernel's artifact folder `dir` the artifacts no entry's winner uses, and
/// those of `owner` replaced by the files just `written` (same kind and entry point, another
/// recipe). Files that do not decode are left alone (`cargo tunable show` reports them).
fn prune(
    dir: &Path,
    entries: &[TunedEntry],
    owner: &Owner,
    written: &[String],
) -> Result<(), RuntimeError> {
    let listed = artifact::read_dir(dir).map_err(|e| io(e, dir))?;
    let new_builds: Vec<&Recipe> = listed
        .iter()
        .filter_map(|(p, a)| {
            let a = a.as_ref().ok()?;
            let name = p.file_name()?.to_string_lossy();
            written.iter().any(|w| *w == name).then_some(&a.recipe)
        })
        .collect();
    for (path, a) in &listed {
        let Ok(a) = a else { continue };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let used = entries.iter().any(|e| {
            e.kernel == a.owner.kernel && e.device == a.owner.device && e.params == a.owner.params
        });
        let superseded = a.owner == *owner
            && !written.contains(&name)
            && new_builds
                .iter()
                .any(|r| r.kind == a.recipe.kind && r.entry == a.recipe.entry);
        if !used || superseded {
            std::fs::remove_file(path).map_err(|e| io(e, path))?;
        }
    }
    // A folder left empty goes (`remove_dir` fails on one that is not).
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(kernel: &str, key: u64, t: f64) -> TunedEntry {
        TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
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
            top: Vec::new(),
        }
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = std::env::temp_dir().join(format!("tunable-store-conc-{}", std::process::id()));
        let path = tuned_file(&dir, "k").unwrap();
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
        let path = tuned_file(&dir, "k").unwrap();
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
        let path = tuned_file(&dir, "k").unwrap();
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

    fn recipe(def: &str, source: &str) -> Recipe {
        Recipe {
            kind: artifact::Kind::OpenClBinary,
            entry: "k".into(),
            target: "gpu".into(),
            source_hash: Recipe::source_hash(source),
            options: vec![],
            definitions: vec![def.into()],
        }
    }

    /// The artifact files of kernel `k` in `dir`: (file name, configuration's first value).
    fn artifacts(dir: &Path) -> Vec<(String, StoredValue)> {
        artifact::read_dir(&artifact::artifact_dir(dir, "k").unwrap())
            .unwrap()
            .into_iter()
            .map(|(p, a)| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, a.unwrap().owner.params[0].1.clone())
            })
            .collect()
    }

    #[test]
    fn artifacts_are_stored_with_their_entry_and_go_when_no_winner_uses_them() {
        let dir = std::env::temp_dir().join(format!("tunable-store-art-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = tuned_file(&dir, "k").unwrap();
        let with_tile = |key, tile| TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
            params: vec![("tile".into(), StoredValue::Int(tile))],
            ..entry("k", key, 1.0)
        };
        // Two keys share the winner tile=4: one file.
        let r4 = recipe("-Dtile=4", "v1");
        store_with_artifacts(&path, with_tile(1, 4), vec![(r4.clone(), b"bin4".to_vec())]).unwrap();
        store_with_artifacts(&path, with_tile(2, 4), vec![(r4.clone(), b"bin4".to_vec())]).unwrap();
        assert_eq!(artifacts(&dir), [(r4.file_name(), StoredValue::Int(4))]);
        let stored = artifact::read_dir(&artifact::artifact_dir(&dir, "k").unwrap()).unwrap();
        let a = stored[0].1.as_ref().unwrap();
        assert_eq!((&a.recipe, &*a.bytes), (&r4, &b"bin4"[..]));
        assert_eq!(a.owner.device, "cpu: test x2");
        // Key 1 moves to tile=8: tile 4's binary stays for key 2.
        let r8 = recipe("-Dtile=8", "v1");
        store_with_artifacts(&path, with_tile(1, 8), vec![(r8.clone(), b"bin8".to_vec())]).unwrap();
        assert_eq!(artifacts(&dir).len(), 2);
        // Key 2 is retuned from an edited source: the new build of tile=4 replaces the old.
        let r4b = recipe("-Dtile=4", "v2");
        store_with_artifacts(
            &path,
            with_tile(2, 4),
            vec![(r4b.clone(), b"new4".to_vec())],
        )
        .unwrap();
        let mut want = vec![
            (r4b.file_name(), StoredValue::Int(4)),
            (r8.file_name(), StoredValue::Int(8)),
        ];
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(artifacts(&dir), want);
        // Both keys end on tile=2, stored without binaries (a CPU kernel, say): the folder goes.
        store(&path, with_tile(1, 2)).unwrap();
        store(&path, with_tile(2, 2)).unwrap();
        assert!(!artifact::artifact_dir(&dir, "k").unwrap().exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
