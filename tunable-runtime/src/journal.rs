//! # The measurement journal
//!
//! Every measurement of a tuning run is appended to a Kernel Tuner cache file beside the tuned
//! file, left unclosed as Kernel Tuner
//! leaves its own caches while tuning. A run interrupted by Ctrl-C or `kill -9` therefore resumes
//! without measuring again, and Kernel Tuner's tooling (or `cargo tunable bench --cache`) can
//! read it. The format itself (records, failures, keys, the unclosed form) lives in
//! [`tunable_search::format::kernel_tuner`]; this module keeps the file.
//!
//! The first-run hook's journal is named by [`Journal::path_for_run`]
//! (`tuned/<kernel>-<key>-<run fingerprint>.cache.json`): the fingerprint covers the space, the
//! kernel's body, the GPU programs it builds (their source text, entry point, options and target,
//! as the default configuration builds them) and the device, so an edited kernel, an edited
//! `.cl` or `.cu` file it includes, or another device starts a journal of its own and is never
//! answered with measurements of something else. Journals under other names
//! (older ones, an edited body's) stay readable as Kernel Tuner caches and are simply not used.
//! [`Journal::path_for`] (`<kernel>-<key>-<space fingerprint>.cache.json`) names the caches
//! exported from outside a build, which know no body (distributed studies).
//!
//! On opening, an existing journal is read (repairing a record cut off by a kill) and rewritten
//! cleanly, keeping the records of this space measured on this device, before new records are
//! appended.

use crate::RuntimeError;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tunable_search::Space;
use tunable_search::fingerprint::fnv1a;
use tunable_search::format::kernel_tuner::{CacheWriter, Header, KernelTunerCache, Observation};

/// What the journal holds for one configuration: its time in milliseconds, or why it failed.
pub type Recorded = Result<f64, String>;

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    space: Arc<Space>,
    writer: CacheWriter<File>,
    known: HashMap<usize, Recorded>,
}

impl Journal {
    /// The journal's path for a kernel, key and space.
    pub fn path_for(dir: &Path, kernel: &str, key: u64, space: &Space) -> PathBuf {
        dir.join(format!(
            "{kernel}-{key}-{:016x}.cache.json",
            space.fingerprint()
        ))
    }

    /// The first-run hook's journal for a kernel, key and space, when what the kernel runs (its
    /// body and GPU programs) has the fingerprint `build` and runs on `device`:
    /// `<kernel>-<key>-<fingerprint>.cache.json`, where the fingerprint covers all four, so that
    /// nothing measured on another body, program or device is ever read back (see the
    /// [module docs](self)).
    pub fn path_for_run(
        dir: &Path,
        kernel: &str,
        key: u64,
        space: &Space,
        build: u64,
        device: &str,
    ) -> PathBuf {
        let run = fnv1a(&[
            &space.fingerprint().to_le_bytes(),
            &build.to_le_bytes(),
            device.as_bytes(),
        ]);
        dir.join(format!("{kernel}-{key}-{run:016x}.cache.json"))
    }

    /// Creates the journal at `path` for `space`, empty: what was recorded there before is
    /// dropped, so that every configuration is measured again (`TUNABLE_MODE=retune`).
    pub fn restart(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
    ) -> Result<Self, RuntimeError> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RuntimeError::Io {
                path: path.into(),
                source: e,
            }),
            _ => Journal::open(path, space, kernel, device),
        }
    }

    /// Opens (or creates) the journal at `path` for `space`, keeping what it already holds for
    /// this space and `device`.
    pub fn open(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
    ) -> Result<Self, RuntimeError> {
        let io = |source| RuntimeError::Io {
            path: path.into(),
            source,
        };
        let mut old: Vec<(usize, Recorded)> = KernelTunerCache::load(path)
            .ok()
            .filter(|c| c.device_name.as_deref().is_none_or(|d| d == device))
            .map(|c| c.entries)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|e| {
                let recorded = match e.observation {
                    Observation::Value(t) => Ok(t),
                    Observation::Failed(reason) => Err(reason),
                };
                Some((space.position_of_values(&e.values)?, recorded))
            })
            .collect();
        old.sort_by_key(|(p, _)| *p);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        // Rewrite: the header, then the records kept, in a temporary file renamed into place;
        // the records that follow are appended through the same handle.
        let tmp = path.with_extension("json.tmp");
        let header = Header {
            kernel_name: kernel,
            device_name: device,
            params: space.params(),
        };
        let mut writer = CacheWriter::new(File::create(&tmp).map_err(io)?, &header).map_err(io)?;
        for (p, r) in &old {
            writer
                .append(
                    &space.values(*p),
                    r.as_ref().copied().map_err(String::as_str),
                )
                .map_err(io)?;
        }
        writer.get_ref().sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        Ok(Journal {
            path: path.into(),
            space,
            writer,
            known: old.into_iter().collect(),
        })
    }

    /// What the journal holds for the configuration at `position`, if anything.
    pub fn lookup(&self, position: usize) -> Option<&Recorded> {
        self.known.get(&position)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether the journal holds no record.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the result of the configuration at `position`: its time in milliseconds, or why
    /// it failed.
    pub fn record(
        &mut self,
        position: usize,
        result: Result<f64, &str>,
    ) -> Result<(), RuntimeError> {
        self.record_runs(position, result, &[])
    }

    /// Appends a result like [`record`](Self::record), with the timed runs it got (Kernel
    /// Tuner's `times`): a configuration stopped early has fewer than the full repeats.
    pub fn record_runs(
        &mut self,
        position: usize,
        result: Result<f64, &str>,
        runs: &[f64],
    ) -> Result<(), RuntimeError> {
        self.writer
            .append_times(&self.space.values(position), result, runs)
            .map_err(|source| RuntimeError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.known.insert(position, result.map_err(str::to_owned));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;

    #[test]
    fn survives_a_kill_and_resumes_on_the_same_device_only() {
        let space = Arc::new(
            SpaceBuilder::new()
                .param("a", [1, 2, 3])
                .param("m", ["x", "y"])
                .build()
                .unwrap(),
        );
        let dir = std::env::temp_dir().join(format!("tunable-journal-{}", std::process::id()));
        let path = Journal::path_for(&dir, "k", 0, &space);
        {
            let mut j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
            j.record(0, Ok(1.5)).unwrap();
            j.record(3, Err("panicked: boom")).unwrap();
        }
        // A kill in the middle of a record leaves a partial line.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(",\n\"3,x\": {\"a\": 3, \"m\": \"x\", \"ti");
        std::fs::write(&path, text).unwrap();
        let mut j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        assert_eq!(j.len(), 2);
        assert_eq!(j.lookup(0), Some(&Ok(1.5)));
        assert_eq!(j.lookup(3), Some(&Err("panicked: boom".to_owned())));
        assert_eq!(j.lookup(1), None);
        j.record(5, Ok(0.5)).unwrap();
        // Kernel Tuner's format (our reader) loads it.
        let cache = KernelTunerCache::load(&path).unwrap();
        assert_eq!(cache.entries.len(), 3);
        // Another device's measurements are not answers here.
        let j = Journal::open(&path, Arc::clone(&space), "k", "gpu").unwrap();
        assert!(j.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_journal_is_named_by_space_body_and_device_and_restarts_empty() {
        let space = Arc::new(SpaceBuilder::new().param("a", [1, 2]).build().unwrap());
        let dir = std::env::temp_dir().join(format!("tunable-journal-run-{}", std::process::id()));
        let path = |body, device| Journal::path_for_run(&dir, "k", 8, &space, body, device);
        assert_eq!(path(1, "cpu"), path(1, "cpu"));
        assert_ne!(path(1, "cpu"), path(2, "cpu"), "an edited body");
        assert_ne!(path(1, "cpu"), path(1, "gpu"), "another device");
        assert_ne!(path(1, "cpu"), Journal::path_for(&dir, "k", 8, &space));
        let mut j = Journal::open(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        j.record(1, Ok(2.0)).unwrap();
        drop(j);
        let j = Journal::restart(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        assert!(j.is_empty());
        let j = Journal::open(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        assert!(j.is_empty(), "the restart was written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
