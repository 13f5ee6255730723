//! # Kernel Tuner cache files
//!
//! Kernel Tuner records every measured configuration in a JSON *cache file*:
//!
//! ```json
//! {"kernel_name": "pnpoly_kernel", "device_name": "NVIDIA GeForce RTX 3090",
//!  "tune_params_keys": ["block_size_x", "tile_size"],
//!  "tune_params": {"block_size_x": [32, 64], "tile_size": [1, 2]},
//!  "objective": "time",
//!  "cache": {
//!  "32,1": {"block_size_x": 32, "tile_size": 1, "time": 1.25, "times": [1.2, 1.3]},
//!  "32,2": {"block_size_x": 32, "tile_size": 2, "time": "CompilationFailedConfig"}}
//! }
//! ```
//!
//! A key is the configuration's values in `tune_params_keys` order, each written with Python's
//! `str()`, joined by `,`. The record holds the objective value, or a failure string such as
//! `CompilationFailedConfig`, `RuntimeFailedConfig` or `InvalidConfig`; any objective that is not
//! a finite number counts as failed (as in `shared/tools/score.py`). Without `objective` the
//! objective is `time`.
//!
//! [`KernelTunerCache::load`] also reads:
//! - gzip-compressed files (recognised by their magic bytes, whatever the name), also cut short;
//! - *unclosed* caches: Kernel Tuner appends one record per line, `"key": {...},`, and writes
//!   the closing `}` `}` only when tuning ends. The text is cut back to the last complete record
//!   and closed ([`KernelTunerCache::repaired`] tells);
//! - Python's non-standard `NaN` / `Infinity` tokens (read as `null`, so a failed value);
//! - Kernel Tuner **T4 results files** (`{"results": [...]}`, see [`KernelTunerCache::from_json_text`]).
//!
//! Configurations are matched to the parameters' values from the record's own fields
//! (`record[name]`, numbers compared by value) and otherwise from the key, piece by piece through
//! the values' Python `str()` form ([`Value`]'s `Display`); a string value that contains `,` is
//! handled too.

use super::SimError;
use crate::space::{Param, SpaceBuilder, Value};
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

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
    /// The relative sample standard deviation (standard deviation over mean) of the record's
    /// repeated measurements (`times`, or `times.runtimes`), when it holds two or more positive
    /// numbers: how much the measurement itself varies.
    pub spread: Option<f64>,
}

/// A loaded Kernel Tuner cache (or T4 results file).
///
/// ```
/// use std::path::Path;
/// use tunable_search::sim::{KernelTunerCache, Observation};
///
/// let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {
///   "1": {"x": 1, "time": 0.5},
///   "2": {"x": 2, "time": "RuntimeFailedConfig"},"#; // unclosed: tuning was interrupted
/// let cache = KernelTunerCache::from_json_text(text, Path::new("x.json")).unwrap();
/// assert!(cache.repaired);
/// assert_eq!(cache.objective, "time");
/// assert_eq!(cache.entries[0].observation, Observation::Value(0.5));
/// assert_eq!(cache.failed_count(), 1);
/// assert_eq!(cache.builder().build().unwrap().len(), 2);
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
    /// Whether the file was unclosed (or cut short) and was repaired to load.
    pub repaired: bool,
}

impl KernelTunerCache {
    /// Reads a cache or T4 file, plain or gzip-compressed.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SimError> {
        let path = path.as_ref();
        let text = read_text(path)?;
        Self::from_json_text(&text, path)
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
    pub fn from_json_text(text: &str, origin: &Path) -> Result<Self, SimError> {
        let (json, repaired) = parse_json(text, origin)?;
        let obj = json
            .as_object()
            .ok_or_else(|| format_err(origin, "the top level is not an object"))?;
        let mut cache = if obj.contains_key("cache") {
            from_cache_object(obj, origin)?
        } else if obj.get("results").is_some_and(Json::is_array) {
            from_t4(obj, origin)?
        } else {
            return Err(format_err(
                origin,
                "neither a Kernel Tuner cache ('cache') nor a T4 results file ('results')",
            ));
        };
        cache.repaired = repaired;
        check_duplicates(&cache.entries, origin)?;
        Ok(cache)
    }

    /// A [`SpaceBuilder`] with the cache's parameters in `tune_params_keys` order (and no
    /// constraints), named after the kernel if the file names it. Build the cache's own space
    /// with `cache.builder().build_from_indices(cache.entries.iter().map(|e| &e.indices))`, or
    /// use [`Replay::new`](super::Replay::new).
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

fn format_err(path: &Path, message: impl Into<String>) -> SimError {
    SimError::Format {
        path: path.into(),
        message: message.into(),
    }
}

/// Reads a file as text, decompressing gzip; a gzip stream cut short keeps what it decoded.
fn read_text(path: &Path) -> Result<String, SimError> {
    let io_err = |source| SimError::Io {
        path: path.into(),
        source,
    };
    let mut bytes = std::fs::read(path).map_err(io_err)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        match flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut out) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => {}
            Err(e) => return Err(io_err(e)),
        }
        bytes = out;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        // Cut inside a multi-byte character: keep the complete prefix.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| format_err(path, "the file is not UTF-8"))
        }
        Err(_) => Err(format_err(path, "the file is not UTF-8")),
    }
}

/// Parses JSON, accepting Python's `NaN`/`Infinity` and repairing an unclosed cache. Returns the
/// document and whether it had to be repaired.
fn parse_json(text: &str, path: &Path) -> Result<(Json, bool), SimError> {
    let first = match serde_json::from_str(text) {
        Ok(json) => return Ok((json, false)),
        Err(e) => e,
    };
    let text = replace_non_finite(text);
    if let Cow::Owned(fixed) = &text
        && let Ok(json) = serde_json::from_str(fixed)
    {
        return Ok((json, false));
    }
    repair_unclosed(&text)
        .map(|json| (json, true))
        .ok_or(SimError::Json {
            path: path.into(),
            source: first,
        })
}

/// Replaces the bare tokens `NaN`, `Infinity` and `-Infinity` (outside strings) by `null`.
fn replace_non_finite(text: &str) -> Cow<'_, str> {
    const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let (mut out, mut copied) = (String::new(), 0);
    let (mut in_string, mut escaped) = (false, false);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            (in_string, escaped) = match (escaped, b) {
                (true, _) => (true, false),
                (false, b'\\') => (true, true),
                (false, b'"') => (false, false),
                _ => (true, false),
            };
        } else if b == b'"' {
            in_string = true;
        } else if let Some(tok) = TOKENS.iter().find(|t| text[i..].starts_with(**t)) {
            out.push_str(&text[copied..i]);
            out.push_str("null");
            i += tok.len();
            copied = i;
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Closes a cache that Kernel Tuner left open: tries the text as it is, then cut back to each
/// earlier brace, dropping a trailing comma and adding the missing `}` `}`. Two closing braces
/// complete the document only where the cut is between records (after a record's `}` or the
/// `{` opening the cache), so a partial record is never taken; a document without a `cache`
/// object does not count as repaired.
fn repair_unclosed(text: &str) -> Option<Json> {
    const TRIES: usize = 64;
    let mut head = text;
    for _ in 0..TRIES {
        let body = head.trim_end().trim_end_matches(',').trim_end();
        for tail in ["}}", "}"] {
            if let Ok(json) = serde_json::from_str::<Json>(&format!("{body}{tail}"))
                && json.get("cache").is_some_and(Json::is_object)
            {
                return Some(json);
            }
        }
        let (last, _) = head.char_indices().next_back()?;
        let cut = head[..last].rfind(['}', '{'])?;
        head = &text[..=cut];
    }
    None
}

fn from_cache_object(obj: &Map<String, Json>, path: &Path) -> Result<KernelTunerCache, SimError> {
    let params = read_params(obj, path)?;
    let objective = obj
        .get("objective")
        .and_then(Json::as_str)
        .unwrap_or("time")
        .to_owned();
    let records = obj["cache"]
        .as_object()
        .ok_or_else(|| format_err(path, "'cache' is not an object"))?;
    let matcher = Matcher::new(&params)?;
    let mut entries = Vec::with_capacity(records.len());
    for (key, record) in records {
        let indices = matcher
            .match_record(record)
            .or_else(|| matcher.match_key(key))
            .ok_or_else(|| SimError::BadConfig {
                path: path.into(),
                key: key.clone(),
                message: matcher.explain(key),
            })?;
        let observation = cache_observation(record, &objective);
        entries.push(CacheEntry {
            key: key.clone(),
            values: matcher.values(&indices),
            indices,
            spread: spread(record),
            observation,
        });
    }
    Ok(KernelTunerCache {
        kernel_name: obj
            .get("kernel_name")
            .and_then(Json::as_str)
            .map(str::to_owned),
        device_name: obj
            .get("device_name")
            .and_then(Json::as_str)
            .map(str::to_owned),
        objective,
        params,
        entries,
        repaired: false,
    })
}

/// `tune_params` in `tune_params_keys` order (the object's own order if that list is absent).
fn read_params(
    obj: &Map<String, Json>,
    path: &Path,
) -> Result<Vec<(String, Vec<Value>)>, SimError> {
    let tune_params = obj
        .get("tune_params")
        .and_then(Json::as_object)
        .ok_or_else(|| format_err(path, "missing object 'tune_params'"))?;
    let order: Vec<String> = match obj.get("tune_params_keys") {
        None => tune_params.keys().cloned().collect(),
        Some(Json::Array(keys)) => keys
            .iter()
            .map(|k| {
                k.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format_err(path, "'tune_params_keys' holds a non-string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format_err(path, "'tune_params_keys' is not a list")),
    };
    if let Some(extra) = tune_params.keys().find(|k| !order.contains(k)) {
        return Err(format_err(
            path,
            format!("tune_params.{extra} is not in 'tune_params_keys'"),
        ));
    }
    order
        .into_iter()
        .map(|name| {
            let list = tune_params
                .get(&name)
                .and_then(Json::as_array)
                .ok_or_else(|| {
                    format_err(path, format!("tune_params.{name} is missing or not a list"))
                })?;
            let values = list
                .iter()
                .map(|v| {
                    Value::from_json(v).ok_or_else(|| {
                        format_err(path, format!("tune_params.{name}: unsupported value {v}"))
                    })
                })
                .collect::<Result<_, _>>()?;
            Ok((name, values))
        })
        .collect()
}

/// The objective of a cache record; anything but a finite number is a failure.
fn cache_observation(record: &Json, objective: &str) -> Observation {
    match record {
        Json::Object(fields) => match fields.get(objective) {
            Some(Json::Number(n)) => finite(n.as_f64()),
            Some(Json::String(reason)) => Observation::Failed(reason.clone()),
            Some(Json::Null) => Observation::Failed("null".to_owned()),
            Some(other) => Observation::Failed(other.to_string()),
            None => Observation::Failed(format!("no '{objective}' in the record")),
        },
        Json::String(reason) => Observation::Failed(reason.clone()),
        _ => Observation::Failed("the record is not an object".to_owned()),
    }
}

/// A record's repeated measurements: `times`, or `times.runtimes`.
fn times(record: &Json) -> Option<&Vec<Json>> {
    record.get("times").and_then(|t| {
        t.as_array()
            .or_else(|| t.get("runtimes").and_then(Json::as_array))
    })
}

/// The relative sample standard deviation of a record's `times` (see [`CacheEntry::spread`]).
fn spread(record: &Json) -> Option<f64> {
    let ts: Vec<f64> = times(record)?
        .iter()
        .map(Json::as_f64)
        .collect::<Option<_>>()?;
    if ts.len() < 2 || ts.iter().any(|&t| !t.is_finite() || t <= 0.0) {
        return None;
    }
    let n = ts.len() as f64;
    let mean = ts.iter().sum::<f64>() / n;
    let var = ts.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

fn finite(v: Option<f64>) -> Observation {
    match v {
        Some(x) if x.is_finite() => Observation::Value(x),
        _ => Observation::Failed("not a finite number".to_owned()),
    }
}

fn check_duplicates(entries: &[CacheEntry], path: &Path) -> Result<(), SimError> {
    let mut seen: HashMap<&[u16], &str> = HashMap::with_capacity(entries.len());
    for e in entries {
        if let Some(first) = seen.insert(&e.indices, &e.key) {
            return Err(SimError::DuplicateConfig {
                path: path.into(),
                first: first.to_owned(),
                second: e.key.clone(),
            });
        }
    }
    Ok(())
}

/// Matches records and keys to value indices.
struct Matcher {
    params: Vec<Param>,
    /// Python `str()` of each value.
    strings: Vec<Vec<String>>,
}

impl Matcher {
    fn new(params: &[(String, Vec<Value>)]) -> Result<Self, SimError> {
        let params: Vec<Param> = params
            .iter()
            .map(|(n, v)| Param::new(n.clone(), v.clone()).map_err(SimError::from))
            .collect::<Result<_, _>>()?;
        let strings = params
            .iter()
            .map(|p| p.values().iter().map(ToString::to_string).collect())
            .collect();
        Ok(Matcher { params, strings })
    }

    fn values(&self, indices: &[u16]) -> Vec<Value> {
        self.params
            .iter()
            .zip(indices)
            .map(|(p, &i)| p.values()[usize::from(i)].clone())
            .collect()
    }

    /// From the record's own fields, if it has all of them and each is one of the values.
    fn match_record(&self, record: &Json) -> Option<Vec<u16>> {
        let fields = record.as_object()?;
        self.params
            .iter()
            .map(|p| p.index_of(&Value::from_json(fields.get(p.name())?)?))
            .collect()
    }

    /// From the key: split on `,` if that gives one piece per parameter, else by matching the
    /// values' strings from the left (values that contain `,`).
    fn match_key(&self, key: &str) -> Option<Vec<u16>> {
        let pieces: Vec<&str> = key.split(',').collect();
        if pieces.len() == self.params.len() {
            let direct: Option<Vec<u16>> = pieces
                .iter()
                .enumerate()
                .map(|(p, s)| self.piece(p, s))
                .collect();
            if direct.is_some() {
                return direct;
            }
        }
        let mut out = Vec::with_capacity(self.params.len());
        self.match_from(key, 0, &mut out).then_some(out)
    }

    /// One piece of a key: by its string, else read as a number or boolean.
    fn piece(&self, p: usize, s: &str) -> Option<u16> {
        if let Some(i) = self.strings[p].iter().position(|v| v == s) {
            return Some(i as u16);
        }
        let s = s.trim();
        let v = match s {
            "True" | "true" => Value::Bool(true),
            "False" | "false" => Value::Bool(false),
            _ => s
                .parse::<i64>()
                .map(Value::Int)
                .or_else(|_| s.parse::<f64>().map(Value::Float))
                .ok()?,
        };
        self.params[p].index_of(&v)
    }

    fn match_from(&self, rest: &str, p: usize, out: &mut Vec<u16>) -> bool {
        if p == self.params.len() {
            return rest.is_empty();
        }
        for (i, s) in self.strings[p].iter().enumerate() {
            let Some(after) = rest.strip_prefix(s.as_str()) else {
                continue;
            };
            let next = if p + 1 == self.params.len() {
                Some(after)
            } else {
                after.strip_prefix(',')
            };
            let Some(next) = next else { continue };
            out.push(i as u16);
            if self.match_from(next, p + 1, out) {
                return true;
            }
            out.pop();
        }
        false
    }

    /// Why a key does not match, for the error message.
    fn explain(&self, key: &str) -> String {
        let pieces: Vec<&str> = key.split(',').collect();
        if pieces.len() != self.params.len() {
            return format!(
                "{} comma-separated values for {} parameters",
                pieces.len(),
                self.params.len()
            );
        }
        let bad = pieces
            .iter()
            .enumerate()
            .find(|(p, s)| self.piece(*p, s).is_none());
        match bad {
            Some((p, s)) => format!(
                "{s:?} is not among the values of '{}'",
                self.params[p].name()
            ),
            None => "no match".to_owned(),
        }
    }
}

fn from_t4(obj: &Map<String, Json>, path: &Path) -> Result<KernelTunerCache, SimError> {
    let results = obj["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut configs = Vec::with_capacity(results.len());
    for (i, r) in results.iter().enumerate() {
        let conf = r
            .get("configuration")
            .and_then(Json::as_object)
            .ok_or_else(|| {
                format_err(path, format!("results[{i}] has no object 'configuration'"))
            })?;
        configs.push(conf);
    }
    let params = t4_params(&configs, path)?;
    let objective = results
        .first()
        .and_then(|r| r.get("objectives"))
        .and_then(|o| o.get(0))
        .and_then(Json::as_str)
        .unwrap_or("time")
        .to_owned();
    let matcher = Matcher::new(&params)?;
    let mut entries = Vec::with_capacity(results.len());
    for (conf, result) in configs.iter().zip(results) {
        let conf_json = Json::Object((*conf).clone());
        let key = t4_key(&params, conf);
        let indices = matcher
            .match_record(&conf_json)
            .ok_or_else(|| SimError::BadConfig {
                path: path.into(),
                key: key.clone(),
                message: "a value is not a number, boolean or string".to_owned(),
            })?;
        let observation = t4_observation(result, &objective);
        entries.push(CacheEntry {
            key,
            values: matcher.values(&indices),
            indices,
            spread: spread(result),
            observation,
        });
    }
    Ok(KernelTunerCache {
        kernel_name: None,
        device_name: None,
        objective,
        params,
        entries,
        repaired: false,
    })
}

/// Parameter names in the order of the first configuration; values as they occur, sorted.
fn t4_params(
    configs: &[&Map<String, Json>],
    path: &Path,
) -> Result<Vec<(String, Vec<Value>)>, SimError> {
    let names: Vec<String> = configs
        .first()
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default();
    let mut params: Vec<(String, Vec<Value>)> =
        names.into_iter().map(|n| (n, Vec::new())).collect();
    for (i, conf) in configs.iter().enumerate() {
        if conf.len() != params.len() {
            return Err(format_err(
                path,
                format!("results[{i}] has other parameters than results[0]"),
            ));
        }
        for (name, values) in &mut params {
            let raw = conf.get(name).ok_or_else(|| {
                format_err(path, format!("results[{i}] has no parameter '{name}'"))
            })?;
            let v = Value::from_json(raw).ok_or_else(|| {
                format_err(
                    path,
                    format!("results[{i}].{name}: unsupported value {raw}"),
                )
            })?;
            if !values.iter().any(|w| same_value(w, &v)) {
                values.push(v);
            }
        }
    }
    for (_, values) in &mut params {
        if values
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Float(_)))
        {
            values.sort_by(|a, b| {
                a.as_f64()
                    .partial_cmp(&b.as_f64())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        } else if values.iter().all(|v| matches!(v, Value::Bool(_))) {
            values.sort_by_key(|v| matches!(v, Value::Bool(true)));
        }
    }
    Ok(params)
}

/// Numbers compare by value (`2 == 2.0`), everything else exactly.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            a.as_f64() == b.as_f64()
        }
        _ => a == b,
    }
}

/// Kernel Tuner's key for a T4 configuration (values' Python `str()` joined by `,`).
fn t4_key(params: &[(String, Vec<Value>)], conf: &Map<String, Json>) -> String {
    let piece = |name: &String| {
        conf.get(name)
            .and_then(Value::from_json)
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    params
        .iter()
        .map(|(name, _)| piece(name))
        .collect::<Vec<_>>()
        .join(",")
}

/// The objective of a T4 result: failed unless `invalidity` is `correct` (or absent).
fn t4_observation(result: &Json, objective: &str) -> Observation {
    if let Some(reason) = result
        .get("invalidity")
        .and_then(Json::as_str)
        .filter(|r| *r != "correct")
    {
        return Observation::Failed(reason.to_owned());
    }
    let measured = result
        .get("measurements")
        .and_then(Json::as_array)
        .and_then(|ms| {
            ms.iter()
                .find(|m| m.get("name").and_then(Json::as_str) == Some(objective))
        })
        .and_then(|m| m.get("value"));
    match measured {
        Some(Json::Number(n)) => return finite(n.as_f64()),
        Some(Json::String(reason)) => return Observation::Failed(reason.clone()),
        _ => {}
    }
    if let Some(Json::Number(n)) = result.get("objectives").and_then(|o| o.get(0)) {
        return finite(n.as_f64());
    }
    match times(result).map(|ts| ts.iter().map(Json::as_f64).collect::<Option<Vec<f64>>>()) {
        Some(Some(ts)) if !ts.is_empty() => finite(Some(ts.iter().sum::<f64>() / ts.len() as f64)),
        _ => Observation::Failed(format!("no value for '{objective}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<KernelTunerCache, SimError> {
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
            Err(SimError::Json { .. })
        ));
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
        assert!(matches!(parse(&dup), Err(SimError::DuplicateConfig { .. })));
        assert!(matches!(parse("[1]"), Err(SimError::Format { .. })));
        assert!(matches!(parse("{\"x\": 1}"), Err(SimError::Format { .. })));
        let missing = r#"{"tune_params_keys": ["a", "b"], "tune_params": {"a": [1]}, "cache": {}}"#;
        assert!(matches!(parse(missing), Err(SimError::Format { .. })));
        assert!(matches!(
            KernelTunerCache::load("/nonexistent/cache.json"),
            Err(SimError::Io { .. })
        ));
    }

    #[test]
    fn t4_results_are_read() {
        let text = r#"{"results": [
          {"configuration": {"x": 64, "s": "b"}, "invalidity": "correct",
           "measurements": [{"name": "time", "value": 2.5, "unit": "ms"}], "objectives": ["time"]},
          {"configuration": {"x": 32, "s": "a"}, "invalidity": "compile", "objectives": ["time"]},
          {"configuration": {"x": 16, "s": "b"}, "times": [1.0, 2.0]},
          {"configuration": {"x": 64, "s": "a"}, "objectives": [4.0]}
        ], "schema_version": "1.0.0"}"#;
        let c = parse(text).unwrap();
        assert_eq!(
            c.params[0],
            (
                "x".to_owned(),
                vec![Value::Int(16), Value::Int(32), Value::Int(64)]
            )
        );
        assert_eq!(
            c.params[1],
            ("s".to_owned(), vec![Value::from("b"), Value::from("a")])
        );
        let obs: Vec<_> = c.entries.iter().map(|e| e.observation.clone()).collect();
        assert_eq!(
            obs,
            [
                Observation::Value(2.5),
                Observation::Failed("compile".into()),
                Observation::Value(1.5),
                Observation::Value(4.0)
            ]
        );
        assert_eq!(c.entries[0].key, "64,b");
        assert_eq!(c.entries[0].indices, vec![2, 0]);
        // times [1, 2]: sample standard deviation 0.7071 over the mean 1.5.
        let spreads: Vec<_> = c.entries.iter().map(|e| e.spread).collect();
        assert_eq!(spreads[..2], [None, None]);
        assert!((spreads[2].unwrap() - 0.5_f64.sqrt() / 1.5).abs() < 1e-12);
        assert_eq!(spreads[3], None);
    }

    #[test]
    fn spread_of_repeated_measurements() {
        let spread_of = |times: &str| spread(&serde_json::from_str(times).unwrap());
        assert_eq!(spread_of(r#"{"times": [2.0, 2.0, 2.0]}"#), Some(0.0));
        let s = spread_of(r#"{"times": {"runtimes": [1.9, 2.1]}}"#).unwrap();
        assert!((s - 0.02_f64.sqrt() / 2.0).abs() < 1e-12, "{s}");
        for none in [
            r#"{"times": [2.0]}"#,
            r#"{"times": [2.0, "x"]}"#,
            r#"{"times": [2.0, 0.0]}"#,
            r#"{"time": 2.0}"#,
        ] {
            assert_eq!(spread_of(none), None, "{none}");
        }
    }

    #[test]
    fn non_finite_tokens_outside_strings_only() {
        let s = r#"{"a": NaN, "b": "NaN Infinity", "c": [-Infinity, Infinity], "d": "\"NaN"}"#;
        let fixed = replace_non_finite(s);
        assert_eq!(
            fixed,
            r#"{"a": null, "b": "NaN Infinity", "c": [null, null], "d": "\"NaN"}"#
        );
        assert!(matches!(replace_non_finite("{\"a\": 1}"), Cow::Borrowed(_)));
    }
}
