//! # Export
//!
//! A study's results are its journal. [`export`] writes them as the two files local tuning
//! writes:
//!
//! - the tuned file `<dir>/<kernel>.bin` ([`tunable_runtime::store`]), merged with what it holds:
//!   the study's best configuration as a [`TunedEntry`] made exactly as local tuning makes it
//!   (the first of equally fast results in the order the strategy was told them, the number of
//!   evaluations, the strategy spec as given), so a plain build bakes it;
//! - a Kernel Tuner cache of every result (`<dir>/<kernel>-<key>-<space fingerprint>.cache.json`)
//!   for Kernel Tuner's tools and `cargo tunable bench --cache`. A local tuning does not resume
//!   from it: its journal is also keyed by the kernel's body, GPU programs and device, which a
//!   study does not know.
//!
//! [`export_with_binaries`] also stores the winner's device binaries with its entry, as local
//! tuning of a GPU kernel does (`<dir>/<kernel>.artifacts/`), so that a plain build embeds them
//! and its first call loads instead of compiling. The workers do not keep binaries: the export
//! runs the study's harness once more, here, for the winner, in evaluate mode with a binaries
//! folder (see [`tunable_runtime::tuner::evaluate`]), so it must run on a machine with the
//! study's device model (the harness must name the same device).

use crate::db::Db;
use crate::error::DistError;
use crate::evaluator::EvaluatorSpec;
use crate::harness::{HarnessEvaluator, Trust};
use crate::study::{self, RecordedResult, Study};
use std::path::{Path, PathBuf};
use tunable_runtime::journal::Journal;
use tunable_runtime::store::{self, Ranked, TunedEntry};
use tunable_search::Space;
use tunable_search::Value;
use tunable_search::format::artifact::Recipe;
use tunable_search::format::kernel_tuner::{CacheWriter, Header};
use tunable_search::strategy::Outcome;

/// What [`export`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// The tuned file, if a configuration succeeded (nothing is stored when all failed).
    pub tuned: Option<PathBuf>,
    /// The entry stored there.
    pub entry: Option<TunedEntry>,
    /// The Kernel Tuner cache.
    pub cache: PathBuf,
    /// Results exported.
    pub results: usize,
    /// The device binaries stored with the entry: each file's path relative to the folder, and
    /// its size in bytes (none without binaries).
    pub artifacts: Vec<(PathBuf, usize)>,
}

/// Exports study `name` into `dir` (usually the crate's `tuned/`). The entry's timestamp is
/// `timestamp` (seconds since the Unix epoch), else when the study finished (or now, for a study
/// still running: it exports what it has).
pub fn export(
    db: &mut Db,
    name: &str,
    dir: &Path,
    timestamp: Option<u64>,
) -> Result<ExportReport, DistError> {
    export_inner(db, name, dir, timestamp, None)
}

/// Exports study `name` like [`export`], with the winner's device binaries, built by running
/// the study's harness for the winner on this machine (the first of `trust`'s prebuilt harness
/// executables whose kernel has the study's space, else the harness built from the crate if
/// `trust` allows it: see [`Trust`]). Only
/// for studies made with a harness; a CPU kernel has no binaries and is exported as by
/// [`export`]. Nothing is written when the binaries cannot be produced, or were built on
/// another device than the study's.
pub fn export_with_binaries(
    db: &mut Db,
    name: &str,
    dir: &Path,
    timestamp: Option<u64>,
    trust: &Trust,
) -> Result<ExportReport, DistError> {
    export_inner(db, name, dir, timestamp, Some(trust))
}

fn export_inner(
    db: &mut Db,
    name: &str,
    dir: &Path,
    timestamp: Option<u64>,
    binaries: Option<&Trust>,
) -> Result<ExportReport, DistError> {
    let study = study::load(db, name)?;
    // The kernel's name makes the paths written: a row written by hand is checked here too.
    tunable_search::name::check(&study.spec.kernel).map_err(tunable_runtime::RuntimeError::from)?;
    if binaries.is_some() && !matches!(study.spec.evaluator, EvaluatorSpec::Harness(_)) {
        return Err(DistError::Binaries {
            study: study.spec.name.clone(),
            reason: "only a study made with a harness (study create --harness) can build them"
                .to_owned(),
        });
    }
    let space = study::load_space(db, &study)?;
    let results = study::results(db, &study)?;
    let timestamp = timestamp.unwrap_or_else(|| {
        study.finished.map_or_else(
            || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            },
            |f| f as u64,
        )
    });
    let entry = tuned_entry(&study, &space, &results, timestamp)?;
    let built = match (&entry, binaries) {
        (Some(e), Some(trust)) => winner_binaries(&study, e, trust)?,
        _ => Vec::new(),
    };
    let artifacts = built
        .iter()
        .map(|(recipe, bytes)| {
            let folder =
                tunable_search::format::artifact::artifact_dir(Path::new(""), &study.spec.kernel)
                    .map_err(tunable_runtime::RuntimeError::from)?;
            Ok((folder.join(recipe.file_name()), bytes.len()))
        })
        .collect::<Result<_, DistError>>()?;
    let cache = Journal::path_for(dir, &study.spec.kernel, study.spec.key, &space)
        .map_err(tunable_runtime::RuntimeError::from)?;
    write_kernel_tuner_cache(&cache, &space, &study, &results)?;
    let tuned = match &entry {
        Some(e) => {
            let path = store::tuned_file(dir, &study.spec.kernel)
                .map_err(tunable_runtime::RuntimeError::from)?;
            store::store_with_artifacts(&path, e.clone(), built)?;
            Some(path)
        }
        None => None,
    };
    Ok(ExportReport {
        tuned,
        entry,
        cache,
        results: results.len(),
        artifacts,
    })
}

/// The device binaries of `entry`'s winner, built by the study's harness on this machine, with
/// their recipes; each must be owned by the study's kernel, device and the winner.
fn winner_binaries(
    study: &Study,
    entry: &TunedEntry,
    trust: &Trust,
) -> Result<Vec<(Recipe, Vec<u8>)>, DistError> {
    let fail = |reason: String| DistError::Binaries {
        study: study.spec.name.clone(),
        reason,
    };
    let EvaluatorSpec::Harness(spec) = &study.spec.evaluator else {
        return Ok(Vec::new()); // refused by `export_inner` before anything was read
    };
    let harness = HarnessEvaluator::open(spec, trust).map_err(fail)?;
    let config: Vec<(String, Value)> = entry
        .params
        .iter()
        .map(|(n, v)| (n.clone(), Value::from(v)))
        .collect();
    // The device a worker would use: TUNABLE_DEVICE here, else a worker's default slot.
    let device = std::env::var("TUNABLE_DEVICE").unwrap_or_else(|_| "0".to_owned());
    let artifacts = harness
        .binaries(&config, &device, study.spec.timeout)
        .map_err(fail)?;
    artifacts
        .into_iter()
        .map(|a| {
            if a.owner.device != study.spec.device {
                return Err(fail(format!(
                    "the harness ran on {}, not on the study's device {}: export on a machine with that device (TUNABLE_DEVICE picks one)",
                    a.owner.device, study.spec.device
                )));
            }
            if a.owner.kernel != study.spec.kernel {
                return Err(fail(format!(
                    "the harness built a binary of kernel {}, not of {}",
                    a.owner.kernel, study.spec.kernel
                )));
            }
            if a.owner.params != entry.params {
                return Err(fail(format!(
                    "the harness built a binary of {} for another configuration than the winner",
                    a.owner.kernel
                )));
            }
            Ok((a.recipe, a.bytes.into_owned()))
        })
        .collect()
}

/// A result's time if it can win: finite and not negative (`NaN`, infinities and negative
/// times, which a row written around the schema's checks could hold, never do).
fn valid_time(r: &RecordedResult) -> Option<f64> {
    match r.outcome {
        Outcome::Value(t) if t.is_finite() && t >= 0.0 => Some(t),
        _ => None,
    }
}

/// The tuned-file entry of a study's results: the best configuration (the first of equal times
/// in result order), as local tuning stores it. `None` if every configuration failed. Only
/// finite, non-negative times compete: `NaN` is never exported.
pub fn tuned_entry(
    study: &Study,
    space: &Space,
    results: &[RecordedResult],
    timestamp: u64,
) -> Result<Option<TunedEntry>, DistError> {
    let mut best: Option<(&RecordedResult, f64)> = None;
    for r in results {
        if let Some(t) = valid_time(r)
            && best.is_none_or(|(_, b)| t < b)
        {
            best = Some((r, t));
        }
    }
    let Some((r, time_ms)) = best else {
        return Ok(None);
    };
    let position = position_of(study, space, r)?;
    let values = space.values(position);
    let mut measured: Vec<(&RecordedResult, f64)> = results
        .iter()
        .filter_map(|r| valid_time(r).map(|t| (r, t)))
        .collect();
    measured.sort_by(|a, b| a.1.total_cmp(&b.1));
    let top = measured
        .into_iter()
        .take(tunable_search::portable::KEPT)
        .map(|(r, time_ms)| Ok(Ranked::at(space, position_of(study, space, r)?, time_ms)))
        .collect::<Result<Vec<_>, DistError>>()?;
    Ok(Some(TunedEntry {
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
        kernel: study.spec.kernel.clone(),
        device: study.spec.device.clone(),
        key: study.spec.key,
        space_hash: space.fingerprint(),
        params: TunedEntry::named(space, &values),
        time_ms,
        evaluations: results.len() as u32,
        strategy: study.spec.strategy.clone(),
        timestamp,
        top,
    }))
}

/// Writes every result as a Kernel Tuner cache at `path` (replacing what is there). The one place
/// that knows the format used for it.
pub fn write_kernel_tuner_cache(
    path: &Path,
    space: &Space,
    study: &Study,
    results: &[RecordedResult],
) -> Result<(), DistError> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(DistError::Io {
                path: path.into(),
                source,
            });
        }
    }
    let io = |source| DistError::Io {
        path: path.into(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let file = std::fs::File::create(path).map_err(io)?;
    let header = Header {
        kernel_name: &study.spec.kernel,
        device_name: &study.spec.device,
        params: space.params(),
    };
    let mut writer = CacheWriter::new(std::io::BufWriter::new(file), &header).map_err(io)?;
    for r in results {
        let position = position_of(study, space, r)?;
        let result = match r.outcome {
            Outcome::Value(v) => Ok(v),
            Outcome::Failed => Err(r.failure.as_deref().unwrap_or("failed")),
        };
        writer.append(&space.values(position), result).map_err(io)?;
    }
    writer.close().map_err(io)?;
    Ok(())
}

/// The position of a result's configuration in the study's space.
fn position_of(study: &Study, space: &Space, r: &RecordedResult) -> Result<usize, DistError> {
    crate::queue::ordered_values(space, &r.config)
        .ok()
        .and_then(|values| space.position_of_values(&values))
        .ok_or_else(|| DistError::BadHistory {
            study: study.spec.name.clone(),
            reason: format!(
                "result for configuration {}, which is not in its space",
                r.key
            ),
        })
}
