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
//!
//! ## Measured quantities besides the time
//!
//! A record may carry what was measured beside the time, by Kernel Tuner's names: the energy
//! and mean power of a run (`nvml_energy` in joules, `nvml_power` in watts, and the same
//! pattern for other meters) and the clocks read (`core_freq`, `mem_freq`, in MHz). A journal
//! opened with the [`Quantities`] a tuning measures ([`Journal::open_measuring`]) reads them
//! back ([`Journal::fields`]), so that a resumed tuning for energy goes on from the energy
//! measured before the interruption. A successful record without a quantity the tuning
//! *needs* (written by a tuning that did not measure it) is no answer: it is left out, so
//! measured again, and the original file kept as a copy, as for damage below. A record is
//! never taken for a time-only answer to a tuning that ranks by energy, nor given an energy
//! that was not measured.
//!
//! ## Damage and concurrent writers
//!
//! - **A bad line loses that line only.** The journal is read line by line
//!   ([`KernelTunerCache::load_salvaging`]): a line that does not parse (garbage from a disk
//!   error, say), a record of no configuration of the space or one repeating an earlier record's
//!   configuration is skipped, and every other record kept.
//! - **Nothing is dropped without a copy.** When the rewrite would keep fewer records than the
//!   file holds (lines skipped, another device's or another space's records, a file that does
//!   not read at all), the original is first copied to `<journal>.damaged-<unix seconds>` beside
//!   it, and a warning on standard error names the file, what was skipped and the copy.
//! - **One writer at a time.** An open journal holds an exclusive lock on `.<journal>.lock`
//!   beside it (an advisory `flock`, released by the system when its process ends, even by
//!   `kill -9`), taken before the file is read. A second process opening the same journal (the
//!   same kernel, key, space, body and device) says that it waits, then waits until the first
//!   one is done and resumes from everything it measured. The lock files stay (removing one
//!   another process waits on would let a third writer in).
//!
//! Journal paths are built from checked kernel names ([`tunable_search::name`]); the device is
//! hashed into the name, never written into it.

use crate::RuntimeError;
use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tunable_search::Space;
use tunable_search::fingerprint::fnv1a;
use tunable_search::format::kernel_tuner::{CacheWriter, Header, KernelTunerCache, Observation};
use tunable_search::name::{NameError, check};

/// What the journal holds for one configuration: its time in milliseconds, or why it failed.
pub type Recorded = Result<f64, String>;

/// The measured quantities a journal reads back beside each record's time, by their Kernel
/// Tuner names ([`Journal::open_measuring`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quantities {
    /// Those a successful record must hold to answer (`nvml_energy`, `nvml_power` for a
    /// tuning for energy on NVML): a record without one of them is measured again.
    pub needed: Vec<String>,
    /// Those read back where a record holds them (the clocks read: `core_freq`, `mem_freq`).
    pub optional: Vec<String>,
}

/// One record read back.
struct Old {
    /// Its configuration.
    position: usize,
    /// What it holds.
    recorded: Recorded,
    /// Its timed runs (Kernel Tuner's `times`).
    times: Vec<f64>,
    /// Its measured quantities.
    fields: Vec<(String, f64)>,
}

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    space: Arc<Space>,
    writer: CacheWriter<File>,
    known: HashMap<usize, Recorded>,
    /// The measured quantities of each record that has any.
    fields: HashMap<usize, Vec<(String, f64)>>,
    /// Holds the exclusive lock on `.<journal>.lock` while the journal is open.
    _lock: File,
}

impl Journal {
    /// The journal's path for a kernel, key and space; an error if `kernel` is not a valid
    /// kernel name ([`tunable_search::name`]).
    pub fn path_for(
        dir: &Path,
        kernel: &str,
        key: u64,
        space: &Space,
    ) -> Result<PathBuf, NameError> {
        check(kernel)?;
        Ok(dir.join(format!(
            "{kernel}-{key}-{:016x}.cache.json",
            space.fingerprint()
        )))
    }

    /// The first-run hook's journal for a kernel, key and space, when what the kernel runs (its
    /// body and GPU programs) has the fingerprint `build` and runs on `device`:
    /// `<kernel>-<key>-<fingerprint>.cache.json`, where the fingerprint covers all four, so that
    /// nothing measured on another body, program or device is ever read back (see the
    /// [module docs](self)). An error if `kernel` is not a valid kernel name.
    pub fn path_for_run(
        dir: &Path,
        kernel: &str,
        key: u64,
        space: &Space,
        build: u64,
        device: &str,
    ) -> Result<PathBuf, NameError> {
        check(kernel)?;
        let run = fnv1a(&[
            &space.fingerprint().to_le_bytes(),
            &build.to_le_bytes(),
            device.as_bytes(),
        ]);
        Ok(dir.join(format!("{kernel}-{key}-{run:016x}.cache.json")))
    }

    /// Creates the journal at `path` for `space`, empty: what was recorded there before is
    /// dropped, so that every configuration is measured again (`TUNABLE_MODE=retune`).
    pub fn restart(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
    ) -> Result<Self, RuntimeError> {
        Journal::open_with(path, space, kernel, device, true, &Quantities::default())
    }

    /// Opens (or creates) the journal at `path` for `space`, keeping what it already holds for
    /// this space and `device`; waits while another process has it open (see the
    /// [module docs](self)). It keeps each record's time or failure only: a tuning that
    /// measures more opens its journal with [`open_measuring`](Self::open_measuring).
    pub fn open(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
    ) -> Result<Self, RuntimeError> {
        Journal::open_with(path, space, kernel, device, false, &Quantities::default())
    }

    /// Opens the journal like [`open`](Self::open), keeping beside each record's time the
    /// `quantities` it holds ([`fields`](Self::fields)). A successful record without every
    /// quantity [`needed`](Quantities::needed) is left out, so that it is measured again; the
    /// original file is then kept as a copy beside the journal and a warning says how many
    /// records were left out and why.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tunable_runtime::journal::{Journal, Quantities};
    /// use tunable_search::SpaceBuilder;
    ///
    /// let space = Arc::new(SpaceBuilder::new().param("tile", [1, 2]).build()?);
    /// let dir = std::env::temp_dir().join(format!("tunable-doc-quantities-{}", std::process::id()));
    /// let path = Journal::path_for(&dir, "k", 0, &space)?;
    /// let energy = Quantities {
    ///     needed: vec!["nvml_energy".into(), "nvml_power".into()],
    ///     optional: vec![],
    /// };
    /// let mut j = Journal::open_measuring(&path, Arc::clone(&space), "k", "gpu", &energy)?;
    /// let used = [("nvml_energy".to_owned(), 0.25), ("nvml_power".to_owned(), 125.0)];
    /// j.record_fields(0, Ok(2.0), &[], &used)?;
    /// j.record(1, Ok(1.0))?; // a time without its energy
    /// drop(j);
    /// let j = Journal::open_measuring(&path, space, "k", "gpu", &energy)?;
    /// assert_eq!(j.lookup(0), Some(&Ok(2.0)));
    /// assert_eq!(j.fields(0), used);
    /// assert_eq!(j.lookup(1), None); // to be measured again
    /// # drop(j);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_measuring(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
        quantities: &Quantities,
    ) -> Result<Self, RuntimeError> {
        Journal::open_with(path, space, kernel, device, false, quantities)
    }

    fn open_with(
        path: &Path,
        space: Arc<Space>,
        kernel: &str,
        device: &str,
        fresh: bool,
        quantities: &Quantities,
    ) -> Result<Self, RuntimeError> {
        let io = |source| RuntimeError::Io {
            path: path.into(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let lock = lock(path)?;
        if fresh {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
        }
        let mut old = read_old(path, &space, device, quantities)?;
        old.sort_by_key(|o| o.position);
        // Rewrite: the header, then the records kept, in a temporary file renamed into place;
        // the records that follow are appended through the same handle.
        let tmp = path.with_extension("json.tmp");
        let header = Header {
            kernel_name: kernel,
            device_name: device,
            params: space.params(),
        };
        let mut writer = CacheWriter::new(File::create(&tmp).map_err(io)?, &header).map_err(io)?;
        for o in &old {
            writer
                .append_fields(
                    &space.values(o.position),
                    o.recorded.as_ref().copied().map_err(String::as_str),
                    &o.times,
                    &o.fields,
                )
                .map_err(io)?;
        }
        writer.get_ref().sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        let mut known = HashMap::new();
        let mut kept = HashMap::new();
        for o in old {
            known.insert(o.position, o.recorded);
            if !o.fields.is_empty() {
                kept.insert(o.position, o.fields);
            }
        }
        Ok(Journal {
            path: path.into(),
            space,
            writer,
            known,
            fields: kept,
            _lock: lock,
        })
    }

    /// What the journal holds for the configuration at `position`, if anything.
    pub fn lookup(&self, position: usize) -> Option<&Recorded> {
        self.known.get(&position)
    }

    /// The measured quantities besides the time that the record of the configuration at
    /// `position` holds, by name: those recorded in this run ([`record_fields`](Self::record_fields)),
    /// and those read back of the [`Quantities`] the journal was opened with. Empty for none.
    pub fn fields(&self, position: usize) -> &[(String, f64)] {
        self.fields.get(&position).map_or(&[], Vec::as_slice)
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
        self.record_fields(position, result, runs, &[])
    }

    /// Appends a result like [`record_runs`](Self::record_runs), with further measured
    /// quantities by their Kernel Tuner names (`nvml_energy` in joules, `nvml_power` in watts,
    /// `core_freq` and `mem_freq`, the clocks read, in MHz).
    pub fn record_fields(
        &mut self,
        position: usize,
        result: Result<f64, &str>,
        runs: &[f64],
        fields: &[(String, f64)],
    ) -> Result<(), RuntimeError> {
        self.writer
            .append_fields(&self.space.values(position), result, runs, fields)
            .map_err(|source| RuntimeError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.known.insert(position, result.map_err(str::to_owned));
        if fields.is_empty() {
            self.fields.remove(&position);
        } else {
            self.fields.insert(position, fields.to_vec());
        }
        Ok(())
    }
}

/// Takes the exclusive lock of the journal at `path` (`.<file name>.lock` beside it), saying on
/// standard error when it has to wait for another process.
fn lock(path: &Path) -> Result<File, RuntimeError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let lock_path = path.with_file_name(format!(".{name}.lock"));
    let io = |source| RuntimeError::Io {
        path: lock_path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            eprintln!(
                "tunable: waiting for another process that has the journal {} open",
                path.display()
            );
            file.lock().map_err(io)?;
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    Ok(file)
}

/// The records of the journal at `path` that are answers for `space` on `device`, with their
/// `quantities`. If the file holds anything else (lines that do not parse, other records,
/// successful records without a needed quantity) or does not read at all, the original is
/// copied beside it first and a warning says what was left out.
fn read_old(
    path: &Path,
    space: &Space,
    device: &str,
    quantities: &Quantities,
) -> Result<Vec<Old>, RuntimeError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let (kept, mut lost) = match KernelTunerCache::load_salvaging(path) {
        Ok(cache) => {
            let other_device = cache.device_name.as_deref().is_some_and(|d| d != device);
            let total = cache.entries.len();
            let kept: Vec<(usize, Recorded, Vec<f64>)> = if other_device {
                Vec::new()
            } else {
                cache
                    .entries
                    .into_iter()
                    .filter_map(|e| {
                        let recorded = match e.observation {
                            Observation::Value(t) => Ok(t),
                            Observation::Failed(reason) => Err(reason),
                        };
                        Some((space.position_of_values(&e.values)?, recorded, e.times))
                    })
                    .collect()
            };
            let mut lost: Vec<String> = cache.skipped.iter().map(ToString::to_string).collect();
            if kept.len() < total {
                lost.push(match other_device {
                    true => format!("{total} record(s) of another device"),
                    false => format!("{} record(s) of another space", total - kept.len()),
                });
            }
            (kept, lost)
        }
        Err(e) => (Vec::new(), vec![format!("the file does not read: {e}")]),
    };
    let mut fields = read_quantities(path, space, quantities);
    let (kept, unmeasured): (Vec<Old>, Vec<Old>) = kept
        .into_iter()
        .map(|(position, recorded, times)| Old {
            position,
            recorded,
            times,
            fields: fields.remove(&position).unwrap_or_default(),
        })
        .partition(|o| {
            o.recorded.is_err()
                || quantities
                    .needed
                    .iter()
                    .all(|n| o.fields.iter().any(|(m, _)| m == n))
        });
    if !unmeasured.is_empty() {
        lost.push(format!(
            "{} record(s) without {} (to be measured again)",
            unmeasured.len(),
            quantities.needed.join(" or ")
        ));
    }
    if !lost.is_empty() {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let copy = path.with_file_name(format!("{name}.damaged-{secs}"));
        std::fs::copy(path, &copy).map_err(|source| RuntimeError::Io {
            path: copy.clone(),
            source,
        })?;
        const SHOWN: usize = 5;
        let more = lost.len().saturating_sub(SHOWN);
        eprintln!(
            "tunable: journal {}: kept {} record(s), left out {}{}; the original is kept as {}",
            path.display(),
            kept.len(),
            lost[..lost.len().min(SHOWN)].join("; "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            copy.display()
        );
    }
    Ok(kept)
}

/// The `quantities` the records of the journal at `path` hold, by configuration, in the order
/// `quantities` names them. A quantity the file cannot be read for (a damaged file) is read as
/// held by no record.
fn read_quantities(
    path: &Path,
    space: &Space,
    quantities: &Quantities,
) -> HashMap<usize, Vec<(String, f64)>> {
    let mut fields: HashMap<usize, Vec<(String, f64)>> = HashMap::new();
    let names = quantities.needed.iter().chain(&quantities.optional);
    let Some(text) = names
        .clone()
        .next()
        .and_then(|_| std::fs::read_to_string(path).ok())
    else {
        return fields;
    };
    for name in names {
        let Ok(cache) = KernelTunerCache::from_json_text_field(&text, path, name) else {
            continue;
        };
        for e in cache.entries {
            if let (Observation::Value(v), Some(p)) =
                (e.observation, space.position_of_values(&e.values))
            {
                fields.entry(p).or_default().push((name.clone(), v));
            }
        }
    }
    fields
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
        let path = Journal::path_for(&dir, "k", 0, &space).unwrap();
        {
            let mut j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
            j.record_runs(0, Ok(1.5), &[1.4, 1.6]).unwrap();
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
        // Kernel Tuner's format (our reader) loads it, the timed runs of the records kept
        // through the rewrite included.
        let cache = KernelTunerCache::load(&path).unwrap();
        assert_eq!(cache.entries.len(), 3);
        let runs: Vec<&[f64]> = cache.entries.iter().map(|e| &e.times[..]).collect();
        assert_eq!(runs, [&[1.4, 1.6][..], &[], &[]]);
        // Another device's measurements are not answers here.
        drop(j);
        let j = Journal::open(&path, Arc::clone(&space), "k", "gpu").unwrap();
        assert!(j.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_journal_is_named_by_space_body_and_device_and_restarts_empty() {
        let space = Arc::new(SpaceBuilder::new().param("a", [1, 2]).build().unwrap());
        let dir = std::env::temp_dir().join(format!("tunable-journal-run-{}", std::process::id()));
        let path =
            |body, device| Journal::path_for_run(&dir, "k", 8, &space, body, device).unwrap();
        assert_eq!(path(1, "cpu"), path(1, "cpu"));
        assert_ne!(path(1, "cpu"), path(2, "cpu"), "an edited body");
        assert_ne!(path(1, "cpu"), path(1, "gpu"), "another device");
        assert_ne!(
            path(1, "cpu"),
            Journal::path_for(&dir, "k", 8, &space).unwrap()
        );
        let mut j = Journal::open(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        j.record(1, Ok(2.0)).unwrap();
        drop(j);
        let j = Journal::restart(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        assert!(j.is_empty());
        drop(j);
        let j = Journal::open(&path(1, "cpu"), Arc::clone(&space), "k", "cpu").unwrap();
        assert!(j.is_empty(), "the restart was written");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn space8() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("a", [1, 2, 3, 4, 5, 6, 7, 8])
                .build()
                .unwrap(),
        )
    }

    fn copies(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".damaged-"))
            .collect()
    }

    /// One garbage line in a journal of 8 records loses that line only, and the original is
    /// copied beside the journal.
    #[test]
    fn a_garbage_line_loses_nothing_after_it_and_the_original_is_kept() {
        let space = space8();
        let dir = std::env::temp_dir().join(format!("tunable-journal-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = Journal::path_for(&dir, "k", 0, &space).unwrap();
        {
            let mut j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
            for p in 0..8 {
                j.record(p, Ok(p as f64 + 0.5)).unwrap();
            }
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(5, "\u{0}\u{0}}}{{ garbage \"x\": [");
        let damaged = lines.join("\n");
        std::fs::write(&path, &damaged).unwrap();
        let j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        assert_eq!(j.len(), 8);
        for p in 0..8 {
            assert_eq!(j.lookup(p), Some(&Ok(p as f64 + 0.5)));
        }
        let kept = copies(&dir);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), damaged);
        drop(j);
        // The rewritten journal is clean: opening it again copies nothing more.
        let j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        assert_eq!(j.len(), 8);
        assert_eq!(copies(&dir).len(), 1);
        drop(j);
        // A file that does not read at all is kept too before the journal starts empty.
        std::fs::write(&path, "not a journal").unwrap();
        std::fs::remove_file(&kept[0]).unwrap();
        let j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        assert!(j.is_empty());
        let kept = copies(&dir);
        assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), "not a journal");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An open journal holds an exclusive lock: a second opener waits for the first to finish
    /// and resumes from everything it recorded, so that two writers never interleave records.
    #[test]
    fn a_journal_has_one_writer_at_a_time() {
        let space = space8();
        let dir = std::env::temp_dir().join(format!("tunable-journal-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = Journal::path_for(&dir, "k", 0, &space).unwrap();
        let lock_path = dir.join(format!(
            ".{}.lock",
            path.file_name().unwrap().to_string_lossy()
        ));
        let mut first = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        first.record(0, Ok(1.0)).unwrap();
        let probe = File::open(&lock_path).unwrap();
        assert!(matches!(probe.try_lock(), Err(TryLockError::WouldBlock)));
        let second = std::thread::spawn({
            let (path, space) = (path.clone(), Arc::clone(&space));
            move || {
                let j = Journal::open(&path, space, "k", "cpu").unwrap();
                (j.lookup(0).cloned(), j.lookup(1).cloned())
            }
        });
        first.record(1, Err("boom")).unwrap();
        drop(first);
        // The second opener ran after the first closed: it sees the record made after it
        // started waiting.
        assert_eq!(
            second.join().unwrap(),
            (Some(Ok(1.0)), Some(Err("boom".to_owned())))
        );
        assert!(probe.try_lock().is_ok(), "released when the journal closes");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Kernel names are checked where journal paths are built, and device names never reach
    /// a path (they are hashed).
    #[test]
    fn journal_paths_take_checked_names_and_hash_devices() {
        let space = space8();
        let dir = Path::new("tuned");
        assert!(Journal::path_for(dir, "../../x", 0, &space).is_err());
        assert!(Journal::path_for_run(dir, "/abs", 0, &space, 0, "cpu").is_err());
        let p = Journal::path_for_run(dir, "k", 0, &space, 0, "../../evil\n\u{202e}dev").unwrap();
        assert_eq!(p.parent(), Some(dir));
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
            "{name}"
        );
    }
}
