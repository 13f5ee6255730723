//! # Kernel Tuner cache files
//!
//! Kernel Tuner records every measured configuration in a JSON *cache file*, and this module is
//! the one place that knows the format: [`KernelTunerCache`] reads it (the replays of
//! [`crate::sim`] and the runtime's journal both load through it), [`CacheWriter`] writes it in
//! the append-only form Kernel Tuner itself writes while tuning (the runtime's journal), and
//! [`key`] names a configuration the way both do.
//!
//! ```json
//! {"kernel_name": "pnpoly_kernel", "device_name": "NVIDIA GeForce RTX 3090",
//!  "tune_params_keys": ["block_size_x", "tile_size"],
//!  "tune_params": {"block_size_x": [32, 64], "tile_size": [1, 2]},
//!  "objective": "time",
//!  "cache": {
//!  "32,1": {"block_size_x": 32, "tile_size": 1, "time": 1.25, "times": [1.2, 1.3]},
//!  "32,2": {"block_size_x": 32, "tile_size": 2, "time": "CompilationFailedConfig"},
//!  "64,1": {"block_size_x": 64, "tile_size": 1, "__error__": "RuntimeFailedConfig"}}
//! }
//! ```
//!
//! A key is the configuration's values in `tune_params_keys` order, each written with Python's
//! `str()`, joined by `,` ([`key`]). Without `objective` the objective is `time`.
//!
//! ## Failed configurations
//!
//! A record is a failure ([`Observation::Failed`]) when
//! - it has an `__error__` field, the form of Kernel Tuner 1.4 and later;
//! - or any of its fields (other than the parameters) holds one of the error names
//!   [`ERROR_NAMES`] (`ErrorConfig`, `InvalidConfig`, `CompilationFailedConfig`,
//!   `RuntimeFailedConfig`), the older form, where the objective field held the name;
//! - or its objective is missing or not a finite number (as in `shared/tools/score.py`).
//!
//! The failure's reason is the record's `reason` string if it has one (the runtime's journal
//! writes it), else the error name, else what the objective held.
//!
//! What Kernel Tuner 1.4.0 does, read in its source (`kernel_tuner/util.py` and
//! `kernel_tuner/core.py` at release 1.4.0): a configuration that fails to compile, to launch,
//! or violates a restriction gets `result["__error__"]` set to an instance of `ErrorConfig`'s
//! subclasses `InvalidConfig`, `CompilationFailedConfig` or `RuntimeFailedConfig`, and such a
//! result carries no objective value (`compile_and_benchmark` never reaches the benchmark).
//! `store_cache` writes every `ErrorConfig` value as its class name, so the file holds
//! `"__error__": "CompilationFailedConfig"`. `read_cache` turns any field whose string is one
//! of the four names back into `__error__`, "so the old cache file format can still be used".
//! The T4 export maps the three to `compile`, `runtime` and `constraints`.
//!
//! ## Unclosed caches and other forms
//!
//! Kernel Tuner writes the header up to `"cache": {`, appends one record per line as
//! `"key": {...},` and writes the closing `}` `}` only when tuning ends (`close_cache`); reading
//! a file that does not end in `}\n}` or `}}}` (`correct_open_cache`), it drops a trailing comma
//! and closes it. [`KernelTunerCache::load`] reads:
//! - closed and *unclosed* caches, also cut inside a record: the text is cut back to the last
//!   complete record and closed ([`KernelTunerCache::repaired`] tells);
//! - gzip-compressed files (recognised by their magic bytes, whatever the name), also cut short;
//! - Python's non-standard `NaN` / `Infinity` tokens (read as `null`, so a failed value);
//! - Kernel Tuner **T4 results files** (`{"results": [...]}`, see [`KernelTunerCache::from_json_text`]).
//!
//! Configurations are matched to the parameters' values from the record's own fields
//! (`record[name]`, numbers compared by value) and otherwise from the key, piece by piece through
//! the values' Python `str()` form ([`Value`]'s `Display`); a string value that contains `,` is
//! handled too.

mod non_finite;
mod record;
mod salvage;
mod t4;
mod text;
mod write;

pub use write::{CacheWriter, Header};

use crate::SpaceError;
use crate::space::{SpaceBuilder, Value};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The names Kernel Tuner gives a failed configuration (`ErrorConfig` and its subclasses), as
/// its files hold them.
pub const ERROR_NAMES: [&str; 4] = [
    "ErrorConfig",
    "InvalidConfig",
    "CompilationFailedConfig",
    "RuntimeFailedConfig",
];

/// The most bytes a cache file may hold, or expand to when it is gzip-compressed: 512 MiB (the
/// largest cache of the shared data set is 17 MB). A larger one is refused
/// ([`CacheError::Format`]) without reading further.
pub const MAX_TEXT: u64 = 512 << 20;

/// A line or record of a cache that was skipped because it does not parse (or, read with
/// [`KernelTunerCache::load_salvaging`], does not match the parameters or repeats a
/// configuration).
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// Its line in the file (1-based), if it was skipped as a line.
    pub line: Option<usize>,
    /// The line (cut to 120 characters), or the record's key.
    pub text: String,
    /// Why it was skipped.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(n) => write!(f, "line {n} ({:?}): {}", self.text, self.reason),
            None => write!(f, "record {:?}: {}", self.text, self.reason),
        }
    }
}

/// Why a cache file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Reading the file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid JSON, even after repairing an unclosed cache.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause (of parsing the file as it is).
        source: serde_json::Error,
    },
    /// The file is JSON but not of the expected shape.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        message: String,
    },
    /// A record whose configuration does not match the parameters' values.
    #[error("{path}: configuration {key:?}: {message}")]
    BadConfig {
        /// The file.
        path: PathBuf,
        /// The record's cache key.
        key: String,
        /// What does not match.
        message: String,
    },
    /// Two records name the same configuration.
    #[error("{path}: keys {first:?} and {second:?} name the same configuration")]
    DuplicateConfig {
        /// The file.
        path: PathBuf,
        /// The first key.
        first: String,
        /// The later key.
        second: String,
    },
    /// The file's parameters are unusable (a value list that is empty or mixes kinds, say).
    /// Boxed: a [`SpaceError`] is large.
    #[error(transparent)]
    Space(Box<SpaceError>),
}

impl From<SpaceError> for CacheError {
    fn from(e: SpaceError) -> Self {
        CacheError::Space(Box::new(e))
    }
}

/// The outcome recorded for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Observation {
    /// The objective value (lower is better, e.g. time in milliseconds).
    Value(f64),
    /// The configuration failed; the reason as recorded, e.g. `CompilationFailedConfig`.
    Failed(String),
}

impl Observation {
    /// The objective value, or `None` if the configuration failed.
    pub fn value(&self) -> Option<f64> {
        match self {
            Observation::Value(v) => Some(*v),
            Observation::Failed(_) => None,
        }
    }

    /// Whether the configuration failed.
    pub fn is_failed(&self) -> bool {
        matches!(self, Observation::Failed(_))
    }
}

/// One configuration of a cache and what was observed for it.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheEntry {
    /// The key as written in the file (for T4 files: the values joined by `,`).
    pub key: String,
    /// The configuration's values, one per parameter of [`KernelTunerCache::params`].
    pub values: Vec<Value>,
    /// The same configuration as value indices into [`KernelTunerCache::params`].
    pub indices: Vec<u16>,
    /// The objective value or the failure.
    pub observation: Observation,
    /// The record's repeated measurements (`times`, or `times.runtimes`), when it holds a list
    /// of numbers only; empty otherwise.
    pub times: Vec<f64>,
}

impl CacheEntry {
    /// The relative sample standard deviation (standard deviation over mean) of
    /// [`times`](Self::times), when it holds two or more numbers, all positive and finite: how
    /// much the measurement itself varies.
    ///
    /// ```
    /// use std::path::Path;
    /// use tunable_search::format::kernel_tuner::KernelTunerCache;
    ///
    /// let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {
    ///   "1": {"x": 1, "time": 1.5, "times": [1.0, 2.0]},
    ///   "2": {"x": 2, "time": 2.0, "times": [2.0]}}}"#;
    /// let cache = KernelTunerCache::from_json_text(text, Path::new("x.json")).unwrap();
    /// assert_eq!(cache.entries[0].times, [1.0, 2.0]);
    /// assert!((cache.entries[0].spread().unwrap() - 0.5_f64.sqrt() / 1.5).abs() < 1e-12);
    /// assert_eq!(cache.entries[1].spread(), None);
    /// ```
    pub fn spread(&self) -> Option<f64> {
        let ts = &self.times;
        if ts.len() < 2 || ts.iter().any(|&t| !t.is_finite() || t <= 0.0) {
            return None;
        }
        let n = ts.len() as f64;
        let mean = ts.iter().sum::<f64>() / n;
        let var = ts.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some(var.sqrt() / mean)
    }
}

/// A loaded Kernel Tuner cache (or T4 results file).
///
/// ```
/// use std::path::Path;
/// use tunable_search::format::kernel_tuner::{KernelTunerCache, Observation};
///
/// let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]}, "cache": {
///   "1": {"x": 1, "time": 0.5},
///   "2": {"x": 2, "time": "RuntimeFailedConfig"},
///   "3": {"x": 3, "__error__": "CompilationFailedConfig"},"#; // unclosed: tuning was interrupted
/// let cache = KernelTunerCache::from_json_text(text, Path::new("x.json")).unwrap();
/// assert!(cache.repaired);
/// assert_eq!(cache.objective, "time");
/// assert_eq!(cache.entries[0].observation, Observation::Value(0.5));
/// assert_eq!(cache.entries[2].observation, Observation::Failed("CompilationFailedConfig".into()));
/// assert_eq!(cache.failed_count(), 2);
/// assert_eq!(cache.builder().build().unwrap().len(), 3);
/// ```
#[derive(Clone, Debug)]
pub struct KernelTunerCache {
    /// `kernel_name`, if the file states it.
    pub kernel_name: Option<String>,
    /// `device_name`, if the file states it.
    pub device_name: Option<String>,
    /// The objective's name (`objective`; default `time`).
    pub objective: String,
    /// The parameters and their values, in `tune_params_keys` order.
    pub params: Vec<(String, Vec<Value>)>,
    /// Every record, in file order.
    pub entries: Vec<CacheEntry>,
    /// Whether the file was unclosed (or cut short, or had lines skipped) and was repaired to
    /// load.
    pub repaired: bool,
    /// The lines (and, with [`load_salvaging`](Self::load_salvaging), the records) that were
    /// skipped, in file order: a file written one record per line that holds a line of garbage
    /// loses that line only.
    pub skipped: Vec<Skipped>,
}

impl KernelTunerCache {
    /// Reads a cache or T4 file, plain or gzip-compressed.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CacheError> {
        let path = path.as_ref();
        let text = text::read_text(path)?;
        Self::from_json_text(&text, path)
    }

    /// Reads a cache like [`load`](Self::load), but a record whose configuration does not
    /// match the parameters, or repeats an earlier record's, is skipped and listed in
    /// [`skipped`](Self::skipped) rather than failing the file: how the runtime's journal reads
    /// its own file, so that one bad record loses that record only.
    pub fn load_salvaging(path: impl AsRef<Path>) -> Result<Self, CacheError> {
        let path = path.as_ref();
        let text = text::read_text(path)?;
        Self::parse(&text, path, true, None)
    }

    /// [`load_salvaging`](Self::load_salvaging) from the text; `origin` names the file in
    /// errors only.
    pub fn from_json_text_salvaging(text: &str, origin: &Path) -> Result<Self, CacheError> {
        Self::parse(text, origin, true, None)
    }

    /// Parses a cache from its text; `origin` names the file in errors only.
    ///
    /// A top level with `cache` is a Kernel Tuner cache. One with a `results` list is a T4 results
    /// file: each result has a `configuration` object (name to value), an `invalidity`
    /// (`"correct"`, else the failure reason: `compile`, `runtime`, `constraints`), and its
    /// objective value in `measurements` (`[{"name": "time", "value": 1.5, ...}]`, the name being
    /// `objectives[0]`, default `time`). Simpler records are accepted too: a number as
    /// `objectives[0]`, or a `times` list (or `times.runtimes`) whose mean is taken. A T4 file has
    /// no `tune_params`: each parameter's values are those that occur, numbers ascending and
    /// strings in order of appearance.
    pub fn from_json_text(text: &str, origin: &Path) -> Result<Self, CacheError> {
        Self::parse(text, origin, false, None)
    }

    /// Reads a cache like [`load`](Self::load), with `field` as the objective whatever the file
    /// names: any numeric field of the records, e.g. `ps_energy`, `nvml_energy` or `GFLOPS/W`
    /// (for a T4 file, the name of a measurement). A record without the field is a failure.
    ///
    /// ```
    /// use std::path::Path;
    /// use tunable_search::format::kernel_tuner::{KernelTunerCache, Observation};
    ///
    /// let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {
    ///   "1": {"time": 0.5, "energy": 2.0}, "2": {"time": 0.4}}}"#;
    /// let cache = KernelTunerCache::from_json_text_field(text, Path::new("x.json"), "energy").unwrap();
    /// assert_eq!(cache.objective, "energy");
    /// assert_eq!(cache.entries[0].observation, Observation::Value(2.0));
    /// assert!(cache.entries[1].observation.is_failed());
    /// ```
    pub fn load_field(path: impl AsRef<Path>, field: &str) -> Result<Self, CacheError> {
        let path = path.as_ref();
        let text = text::read_text(path)?;
        Self::parse(&text, path, false, Some(field))
    }

    /// [`load_field`](Self::load_field) from the text; `origin` names the file in errors only.
    pub fn from_json_text_field(
        text: &str,
        origin: &Path,
        field: &str,
    ) -> Result<Self, CacheError> {
        Self::parse(text, origin, false, Some(field))
    }

    /// [`from_json_text`](Self::from_json_text), skipping bad records if `salvage`, with
    /// `field` as the objective if given.
    fn parse(
        text: &str,
        origin: &Path,
        salvage: bool,
        field: Option<&str>,
    ) -> Result<Self, CacheError> {
        let (json, repaired, skipped) = text::parse_json(text, origin)?;
        let obj = json
            .as_object()
            .ok_or_else(|| format_err(origin, "the top level is not an object"))?;
        let mut cache = if obj.contains_key("cache") {
            record::from_cache_object(obj, origin, salvage, field)?
        } else if obj.get("results").is_some_and(Json::is_array) {
            t4::from_t4(obj, origin, field)?
        } else {
            return Err(format_err(
                origin,
                "neither a Kernel Tuner cache ('cache') nor a T4 results file ('results')",
            ));
        };
        cache.repaired = repaired;
        let mut skipped = skipped;
        skipped.append(&mut cache.skipped);
        cache.skipped = skipped;
        if salvage {
            record::drop_duplicates(&mut cache);
        } else {
            record::check_duplicates(&cache.entries, origin)?;
        }
        Ok(cache)
    }

    /// A [`SpaceBuilder`] with the cache's parameters in `tune_params_keys` order (and no
    /// constraints), named after the kernel if the file names it. Build the cache's own space
    /// with `cache.builder().build_from_indices(cache.entries.iter().map(|e| &e.indices))`, or
    /// use [`Replay::new`](crate::sim::Replay::new).
    pub fn builder(&self) -> SpaceBuilder {
        let mut b = SpaceBuilder::new();
        if let Some(name) = &self.kernel_name {
            b = b.name(name);
        }
        for (name, values) in &self.params {
            b = b.param(name.clone(), values.clone());
        }
        b
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache holds no record.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of records whose configuration failed.
    pub fn failed_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.observation.is_failed())
            .count()
    }
}

/// Kernel Tuner's key of a configuration: its values (in `tune_params_keys` order) in Python's
/// `str()` form, joined by `,`.
///
/// ```
/// use tunable_search::Value;
/// use tunable_search::format::kernel_tuner::key;
///
/// assert_eq!(key(&[Value::Int(32), Value::Float(1.0), Value::Bool(true), "x".into()]), "32,1.0,True,x");
/// ```
pub fn key(values: &[Value]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn format_err(path: &Path, message: impl Into<String>) -> CacheError {
    CacheError::Format {
        path: path.into(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<KernelTunerCache, CacheError> {
        KernelTunerCache::from_json_text(text, Path::new("test.json"))
    }

    const HEAD: &str = r#"{"kernel_name": "k", "tune_params_keys": ["b", "m", "f"],
        "tune_params": {"m": ["a,b", "c"], "b": [32, 64], "f": [0.5, 1.0]}, "objective": "time", "cache": {"#;

    #[test]
    fn keys_and_records_are_matched() {
        let text = format!(
            "{HEAD}\n\"32,a,b,0.5\": {{\"time\": 1.5}},\n\"64,c,1.0\": {{\"b\": 64, \"m\": \"c\", \"f\": 1, \"time\": \"CompilationFailedConfig\"}},\n\"32,c,1\": {{\"time\": NaN}}}}}}"
        );
        let c = parse(&text).unwrap();
        assert!(!c.repaired);
        assert_eq!(c.kernel_name.as_deref(), Some("k"));
        assert_eq!(
            c.params.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            ["b", "m", "f"]
        );
        assert_eq!(c.entries[0].indices, vec![0, 0, 0]);
        assert_eq!(
            c.entries[0].values,
            vec![Value::Int(32), Value::from("a,b"), Value::Float(0.5)]
        );
        assert_eq!(c.entries[1].indices, vec![1, 1, 1]);
        assert_eq!(
            c.entries[1].observation,
            Observation::Failed("CompilationFailedConfig".into())
        );
        assert_eq!(c.entries[2].indices, vec![0, 1, 1]);
        assert!(c.entries[2].observation.is_failed());
        assert_eq!(c.failed_count(), 2);
    }

    /// Records as Kernel Tuner 1.4 writes them: a failure has `__error__` and no objective.
    #[test]
    fn kernel_tuner_1_4_error_records_are_failures() {
        let text = r#"{"device_name": "NVIDIA A100", "kernel_name": "k", "problem_size": [4096],
          "tune_params_keys": ["block_size_x", "tile"], "tune_params": {"block_size_x": [32, 64], "tile": [1, 2]},
          "objective": "time", "cache": {
          "32,1": {"block_size_x": 32, "tile": 1, "time": 0.25, "times": [0.25, 0.26], "compile_time": 101.5, "timestamp": "2025-01-01 10:00:00+00:00"},
          "32,2": {"block_size_x": 32, "tile": 2, "compile_time": 98.0, "verification_time": 0, "benchmark_time": 0, "__error__": "CompilationFailedConfig", "timestamp": "2025-01-01 10:00:01+00:00"},
          "64,1": {"block_size_x": 64, "tile": 1, "__error__": "RuntimeFailedConfig", "time": 0.1},
          "64,2": {"block_size_x": 64, "tile": 2, "time": 0.5, "energy": "InvalidConfig"}},"#;
        let c = parse(text).unwrap();
        let obs: Vec<_> = c.entries.iter().map(|e| e.observation.clone()).collect();
        assert_eq!(
            obs,
            [
                Observation::Value(0.25),
                Observation::Failed("CompilationFailedConfig".into()),
                Observation::Failed("RuntimeFailedConfig".into()),
                Observation::Failed("InvalidConfig".into()),
            ]
        );
        // The older form, the objective holding the name, and the journal's own reason.
        let old = format!(
            "{HEAD}\"32,c,0.5\": {{\"time\": \"InvalidConfig\"}},\n\"64,c,0.5\": {{\"time\": \"RuntimeFailedConfig\", \"reason\": \"panicked: boom\", \"__error__\": \"RuntimeFailedConfig\"}}}}}}"
        );
        let c = parse(&old).unwrap();
        assert_eq!(
            c.entries[0].observation,
            Observation::Failed("InvalidConfig".into())
        );
        assert_eq!(
            c.entries[1].observation,
            Observation::Failed("panicked: boom".into())
        );
        // A string parameter value that happens to be an error name is a value, not a failure.
        let named = r#"{"tune_params_keys": ["m"], "tune_params": {"m": ["InvalidConfig"]},
          "cache": {"InvalidConfig": {"m": "InvalidConfig", "time": 1.0}}}"#;
        assert_eq!(
            parse(named).unwrap().entries[0].observation,
            Observation::Value(1.0)
        );
    }

    #[test]
    fn unclosed_caches_are_repaired() {
        let full = format!(
            "{HEAD}\n\"32,c,0.5\": {{\"time\": 1.0}},\n\"64,c,0.5\": {{\"time\": 2.0, \"times\": [1.9, 2.1]}},"
        );
        for cut in [full.len(), full.len() - 1, full.len() - 5, full.len() - 20] {
            let c = parse(&full[..cut]).unwrap();
            assert!(c.repaired);
            let n = if cut >= full.len() - 1 { 2 } else { 1 };
            assert_eq!(c.len(), n, "cut at {cut}");
        }
        let empty = parse(HEAD).unwrap();
        assert!(empty.is_empty() && empty.repaired);
        assert!(matches!(
            parse("{\"tune_params\": {\"a\": [1, 2]"),
            Err(CacheError::Json { .. })
        ));
    }

    /// One line of garbage in the middle of a cache written one record per line: the line is
    /// skipped and listed, and every other record kept (not cut back to the last complete
    /// record before it).
    #[test]
    fn a_garbage_line_loses_that_line_only() {
        let head = r#"{"kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 3, 4, 5, 6, 7, 8]},
"cache": {"#;
        let mut lines: Vec<String> = (1..=8)
            .map(|a| format!("\"{a}\": {{\"a\": {a}, \"time\": {a}.5}}"))
            .collect();
        lines.insert(3, "#$%^ not json".to_owned());
        let text = format!("{head}\n{}\n}}\n}}\n", lines.join(",\n"));
        let c = parse(&text).unwrap();
        assert_eq!(c.len(), 8);
        assert!(c.repaired);
        assert_eq!(c.skipped.len(), 1);
        assert_eq!(c.skipped[0].line, Some(6));
        assert!(
            c.skipped[0]
                .to_string()
                .starts_with("line 6 (\"#$%^ not json\")")
        );
        // Salvaging, a record of no configuration and a repeated one are skipped too.
        let text = format!(
            "{head}\n{},\n\"99\": {{\"a\": 99, \"time\": 1}},\n\"again\": {{\"a\": 1, \"time\": 9}}",
            lines.join(",\n")
        );
        assert!(parse(&text).is_err());
        let c = KernelTunerCache::parse(&text, Path::new("j.json"), true, None).unwrap();
        assert_eq!(c.len(), 8);
        let why: Vec<String> = c.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(why[1].starts_with("record \"99\""), "{why:?}");
        assert!(why[2].contains("again"), "{why:?}");
    }

    #[test]
    fn bad_files_are_errors() {
        let bad_key = format!("{HEAD}\"32,zz,0.5\": {{\"time\": 1}}}}}}");
        let e = parse(&bad_key).unwrap_err();
        assert!(
            e.to_string()
                .contains("\"zz\" is not among the values of 'm'"),
            "{e}"
        );
        let dup =
            format!("{HEAD}\"32,c,0.5\": {{\"time\": 1}}, \"32,c,0.50\": {{\"time\": 2}}}}}}");
        assert!(matches!(
            parse(&dup),
            Err(CacheError::DuplicateConfig { .. })
        ));
        assert!(matches!(parse("[1]"), Err(CacheError::Format { .. })));
        assert!(matches!(
            parse("{\"x\": 1}"),
            Err(CacheError::Format { .. })
        ));
        let missing = r#"{"tune_params_keys": ["a", "b"], "tune_params": {"a": [1]}, "cache": {}}"#;
        assert!(matches!(parse(missing), Err(CacheError::Format { .. })));
        assert!(matches!(
            KernelTunerCache::load("/nonexistent/cache.json"),
            Err(CacheError::Io { .. })
        ));
    }
}
