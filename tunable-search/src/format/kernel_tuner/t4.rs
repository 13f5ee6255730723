//! # T4 results files
//!
//! Kernel Tuner's T4 export: `{"results": [{"configuration": {...}, "invalidity": ...,
//! "measurements": [...]}, ...]}`, read as a cache (see
//! [`KernelTunerCache::from_json_text`]).

use super::record::{Matcher, finite, numbers_of_times, times};
use super::{CacheEntry, CacheError, KernelTunerCache, Observation, format_err};
use crate::space::Value;
use serde_json::{Map, Value as Json};
use std::path::Path;

/// The cache of a T4 results object; `field`, if given, is the objective (a measurement's
/// name) instead of the file's first.
pub(super) fn from_t4(
    obj: &Map<String, Json>,
    path: &Path,
    field: Option<&str>,
) -> Result<KernelTunerCache, CacheError> {
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
    let objective = field
        .map(str::to_owned)
        .or_else(|| {
            results
                .first()
                .and_then(|r| r.get("objectives"))
                .and_then(|o| o.get(0))
                .and_then(Json::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "time".to_owned());
    let matcher = Matcher::new(&params)?;
    let mut entries = Vec::with_capacity(results.len());
    for (conf, result) in configs.iter().zip(results) {
        let conf_json = Json::Object((*conf).clone());
        let key = t4_key(&params, conf);
        let indices = matcher
            .match_record(&conf_json)
            .ok_or_else(|| CacheError::BadConfig {
                path: path.into(),
                key: key.clone(),
                message: "a value is not a number, boolean or string".to_owned(),
            })?;
        let observation = t4_observation(result, &objective);
        entries.push(CacheEntry {
            key,
            values: matcher.values(&indices),
            indices,
            times: numbers_of_times(result),
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
        skipped: Vec::new(),
    })
}

/// Parameter names in the order of the first configuration; values as they occur, sorted.
fn t4_params(
    configs: &[&Map<String, Json>],
    path: &Path,
) -> Result<Vec<(String, Vec<Value>)>, CacheError> {
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

    #[test]
    fn t4_results_are_read() {
        let text = r#"{"results": [
          {"configuration": {"x": 64, "s": "b"}, "invalidity": "correct",
           "measurements": [{"name": "time", "value": 2.5, "unit": "ms"}], "objectives": ["time"]},
          {"configuration": {"x": 32, "s": "a"}, "invalidity": "compile", "objectives": ["time"]},
          {"configuration": {"x": 16, "s": "b"}, "times": [1.0, 2.0]},
          {"configuration": {"x": 64, "s": "a"}, "objectives": [4.0]}
        ], "schema_version": "1.0.0"}"#;
        let c = KernelTunerCache::from_json_text(text, Path::new("t4.json")).unwrap();
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
        let spreads: Vec<_> = c.entries.iter().map(CacheEntry::spread).collect();
        assert_eq!(spreads[..2], [None, None]);
        assert!((spreads[2].unwrap() - 0.5_f64.sqrt() / 1.5).abs() < 1e-12);
        assert_eq!(spreads[3], None);
    }
}
