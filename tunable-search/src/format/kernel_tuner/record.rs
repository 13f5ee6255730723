//! # Cache records
//!
//! A cache object's parameters and records: each record matched to a configuration (by its own
//! fields, else by its key) and read as an [`Observation`].

use super::{
    CacheEntry, CacheError, ERROR_NAMES, KernelTunerCache, Observation, Skipped, format_err,
};
use crate::space::{Param, Value};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::path::Path;

/// The cache of a cache object; with `salvage`, a record that matches no configuration is
/// listed in `skipped` instead of failing the file; `field`, if given, is the objective instead
/// of the file's.
pub(super) fn from_cache_object(
    obj: &Map<String, Json>,
    path: &Path,
    salvage: bool,
    field: Option<&str>,
) -> Result<KernelTunerCache, CacheError> {
    let params = read_params(obj, path)?;
    let objective = field
        .or_else(|| obj.get("objective").and_then(Json::as_str))
        .unwrap_or("time")
        .to_owned();
    let records = obj["cache"]
        .as_object()
        .ok_or_else(|| format_err(path, "'cache' is not an object"))?;
    let matcher = Matcher::new(&params)?;
    let mut entries = Vec::with_capacity(records.len());
    let mut skipped = Vec::new();
    for (key, record) in records {
        let Some(indices) = matcher
            .match_record(record)
            .or_else(|| matcher.match_key(key))
        else {
            if salvage {
                skipped.push(Skipped {
                    line: None,
                    text: key.clone(),
                    reason: matcher.explain(key),
                });
                continue;
            }
            return Err(CacheError::BadConfig {
                path: path.into(),
                key: key.clone(),
                message: matcher.explain(key),
            });
        };
        let observation = cache_observation(record, &objective, &matcher.params);
        entries.push(CacheEntry {
            key: key.clone(),
            values: matcher.values(&indices),
            indices,
            times: numbers_of_times(record),
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
        skipped,
    })
}

/// `tune_params` in `tune_params_keys` order (the object's own order if that list is absent).
fn read_params(
    obj: &Map<String, Json>,
    path: &Path,
) -> Result<Vec<(String, Vec<Value>)>, CacheError> {
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

/// What a cache record observed (see the module docs, "Failed configurations"): a failure if it
/// has `__error__`, or a field other than the parameters holding one of [`ERROR_NAMES`], or an
/// objective that is not a finite number; a failure's reason is the record's `reason` if any.
fn cache_observation(record: &Json, objective: &str, params: &[Param]) -> Observation {
    let fields = match record {
        Json::Object(fields) => fields,
        Json::String(reason) => return Observation::Failed(reason.clone()),
        _ => return Observation::Failed("the record is not an object".to_owned()),
    };
    let failed = |what: String| {
        Observation::Failed(
            fields
                .get("reason")
                .and_then(Json::as_str)
                .map_or(what, str::to_owned),
        )
    };
    let error_name = fields
        .get("__error__")
        .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
        .or_else(|| {
            fields
                .iter()
                .filter(|(name, _)| params.iter().all(|p| p.name() != name.as_str()))
                .find_map(|(_, v)| v.as_str().filter(|s| ERROR_NAMES.contains(s)))
                .map(str::to_owned)
        });
    if let Some(name) = error_name {
        return failed(name);
    }
    match fields.get(objective) {
        Some(Json::Number(n)) => match finite(n.as_f64()) {
            Observation::Failed(what) => failed(what),
            value => value,
        },
        Some(Json::String(what)) => failed(what.clone()),
        Some(Json::Null) => failed("null".to_owned()),
        Some(other) => failed(other.to_string()),
        None => failed(format!("no '{objective}' in the record")),
    }
}

/// A record's repeated measurements: `times`, or `times.runtimes`.
pub(super) fn times(record: &Json) -> Option<&Vec<Json>> {
    record.get("times").and_then(|t| {
        t.as_array()
            .or_else(|| t.get("runtimes").and_then(Json::as_array))
    })
}

/// A record's repeated measurements (see [`CacheEntry::times`]): empty unless `times` (or
/// `times.runtimes`) is a list of numbers.
pub(super) fn numbers_of_times(record: &Json) -> Vec<f64> {
    times(record)
        .and_then(|ts| ts.iter().map(Json::as_f64).collect::<Option<Vec<f64>>>())
        .unwrap_or_default()
}

pub(super) fn finite(v: Option<f64>) -> Observation {
    match v {
        Some(x) if x.is_finite() => Observation::Value(x),
        _ => Observation::Failed("not a finite number".to_owned()),
    }
}

/// Drops the records that repeat an earlier record's configuration, listing them in `skipped`.
pub(super) fn drop_duplicates(cache: &mut KernelTunerCache) {
    let mut seen: HashMap<Vec<u16>, String> = HashMap::with_capacity(cache.entries.len());
    let skipped = &mut cache.skipped;
    cache.entries.retain(|e| match seen.get(&e.indices) {
        Some(first) => {
            skipped.push(Skipped {
                line: None,
                text: e.key.clone(),
                reason: format!("the configuration of record {first:?} again"),
            });
            false
        }
        None => {
            seen.insert(e.indices.clone(), e.key.clone());
            true
        }
    });
}

pub(super) fn check_duplicates(entries: &[CacheEntry], path: &Path) -> Result<(), CacheError> {
    let mut seen: HashMap<&[u16], &str> = HashMap::with_capacity(entries.len());
    for e in entries {
        if let Some(first) = seen.insert(&e.indices, &e.key) {
            return Err(CacheError::DuplicateConfig {
                path: path.into(),
                first: first.to_owned(),
                second: e.key.clone(),
            });
        }
    }
    Ok(())
}

/// Matches records and keys to value indices.
pub(super) struct Matcher {
    params: Vec<Param>,
    /// Python `str()` of each value.
    strings: Vec<Vec<String>>,
}

impl Matcher {
    pub(super) fn new(params: &[(String, Vec<Value>)]) -> Result<Self, CacheError> {
        let params: Vec<Param> = params
            .iter()
            .map(|(n, v)| Param::new(n.clone(), v.clone()).map_err(CacheError::from))
            .collect::<Result<_, _>>()?;
        let strings = params
            .iter()
            .map(|p| p.values().iter().map(ToString::to_string).collect())
            .collect();
        Ok(Matcher { params, strings })
    }

    pub(super) fn values(&self, indices: &[u16]) -> Vec<Value> {
        self.params
            .iter()
            .zip(indices)
            .map(|(p, &i)| p.values()[usize::from(i)].clone())
            .collect()
    }

    /// From the record's own fields, if it has all of them and each is one of the values.
    pub(super) fn match_record(&self, record: &Json) -> Option<Vec<u16>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_repeated_measurements() {
        let spread_of = |times: &str| {
            let entry = CacheEntry {
                key: String::new(),
                values: Vec::new(),
                indices: Vec::new(),
                observation: Observation::Value(1.0),
                times: numbers_of_times(&serde_json::from_str(times).unwrap()),
            };
            entry.spread()
        };
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
}
