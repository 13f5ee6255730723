//! # The measurement journal
//!
//! Every measurement of a tuning run is appended to a Kernel Tuner cache file beside the tuned
//! file (`tuned/<kernel>-<key>-<space fingerprint>.cache.json`), left unclosed as Kernel Tuner
//! leaves its own caches while tuning. A run interrupted by Ctrl-C or `kill -9` therefore resumes
//! without measuring again, and Kernel Tuner's tooling (or `cargo tunable bench`) can read it.
//!
//! Records are `"v1,v2,...": {"p1": v1, ..., "time": ms}`, or `"time": "RuntimeFailedConfig"` with
//! a `"reason"` for a failed configuration. On opening, an existing journal is read (repairing a
//! record cut off by a kill) and rewritten cleanly before new records are appended.

use crate::RuntimeError;
use serde_json::{Map, Value as Json, json};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use tunable_search::Space;
use tunable_search::sim::{KernelTunerCache, Observation};
use tunable_search::strategy::Outcome;

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    known: HashMap<String, (Outcome, Option<String>)>,
    records: usize,
}

impl Journal {
    /// The journal's path for a kernel, key and space.
    pub fn path_for(dir: &Path, kernel: &str, key: u64, space: &Space) -> PathBuf {
        dir.join(format!(
            "{kernel}-{key}-{:016x}.cache.json",
            space.fingerprint()
        ))
    }

    /// Opens (or creates) the journal at `path` for `space`, keeping what it already holds.
    pub fn open(
        path: &Path,
        space: &Space,
        kernel: &str,
        device: &str,
    ) -> Result<Self, RuntimeError> {
        let io = |source| RuntimeError::Io {
            path: path.into(),
            source,
        };
        let mut known = HashMap::new();
        let old = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| KernelTunerCache::from_json_text(&t, path).ok());
        for e in old.map(|c| c.entries).unwrap_or_default() {
            let reason = match &e.observation {
                Observation::Failed(r) => Some(r.clone()),
                Observation::Value(_) => None,
            };
            let outcome = e
                .observation
                .value()
                .map_or(Outcome::Failed, Outcome::Value);
            known.insert(e.key, (outcome, reason));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut header = Map::new();
        header.insert("device_name".into(), json!(device));
        header.insert("kernel_name".into(), json!(kernel));
        header.insert(
            "tune_params_keys".into(),
            json!(space.params().iter().map(|p| p.name()).collect::<Vec<_>>()),
        );
        let params: Map<String, Json> = space
            .params()
            .iter()
            .map(|p| (p.name().to_owned(), json!(p.values())))
            .collect();
        header.insert("tune_params".into(), Json::Object(params));
        header.insert("objective".into(), json!("time"));
        let text = serde_json::to_string(&Json::Object(header)).expect("json");
        // Rewrite: header, then the records kept, all in a temporary file renamed into place.
        let tmp = path.with_extension("json.tmp");
        let mut f = File::create(&tmp).map_err(io)?;
        write!(f, "{},\n\"cache\": {{", &text[..text.len() - 1]).map_err(io)?;
        let mut j = Journal {
            path: path.into(),
            file: f,
            known: HashMap::new(),
            records: 0,
        };
        let mut old: Vec<(String, (Outcome, Option<String>))> = known.into_iter().collect();
        old.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, (outcome, reason)) in old {
            if let Some(values) = key_values(space, &key) {
                j.write_record(space, &key, &values, outcome, reason.as_deref())?;
            }
        }
        j.file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        j.file = OpenOptions::new().append(true).open(path).map_err(io)?;
        Ok(j)
    }

    /// The recorded outcome of the configuration at `position`, if any.
    pub fn lookup(&self, space: &Space, position: usize) -> Option<Outcome> {
        self.known
            .get(&space.kernel_tuner_key(position))
            .map(|(o, _)| *o)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records
    }

    /// Whether the journal holds no record.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one measurement.
    pub fn record(
        &mut self,
        space: &Space,
        position: usize,
        outcome: Outcome,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let key = space.kernel_tuner_key(position);
        let values = space.values(position);
        self.write_record(space, &key, &values, outcome, reason)?;
        self.file.flush().map_err(|source| RuntimeError::Io {
            path: self.path.clone(),
            source,
        })
    }

    fn write_record(
        &mut self,
        space: &Space,
        key: &str,
        values: &[tunable_search::Value],
        outcome: Outcome,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let mut rec = Map::new();
        for (p, v) in space.params().iter().zip(values) {
            rec.insert(p.name().to_owned(), json!(v));
        }
        match outcome {
            Outcome::Value(t) => {
                rec.insert("time".into(), json!(t));
            }
            Outcome::Failed => {
                rec.insert("time".into(), json!("RuntimeFailedConfig"));
                rec.insert("reason".into(), json!(reason.unwrap_or("failed")));
            }
        }
        let sep = if self.records == 0 { "\n" } else { ",\n" };
        let line = format!("{sep}{}: {}", json!(key), Json::Object(rec));
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| RuntimeError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.known
            .insert(key.to_owned(), (outcome, reason.map(str::to_owned)));
        self.records += 1;
        Ok(())
    }
}

fn key_values(space: &Space, key: &str) -> Option<Vec<tunable_search::Value>> {
    let parts: Vec<&str> = key.split(',').collect();
    if parts.len() != space.dims() {
        return None;
    }
    space
        .params()
        .iter()
        .zip(parts)
        .map(|(p, s)| p.values().iter().find(|v| v.to_string() == s).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;

    #[test]
    fn survives_a_kill_and_resumes() {
        let space = SpaceBuilder::new()
            .param("a", [1, 2, 3])
            .param("m", ["x", "y"])
            .build()
            .unwrap();
        let dir = std::env::temp_dir().join(format!("tunable-journal-{}", std::process::id()));
        let path = Journal::path_for(&dir, "k", 0, &space);
        {
            let mut j = Journal::open(&path, &space, "k", "cpu").unwrap();
            j.record(&space, 0, Outcome::Value(1.5), None).unwrap();
            j.record(&space, 3, Outcome::Failed, Some("panicked: boom"))
                .unwrap();
        }
        // A kill in the middle of a record leaves a partial line.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(",\n\"3,x\": {\"a\": 3, \"m\": \"x\", \"ti");
        std::fs::write(&path, text).unwrap();
        let mut j = Journal::open(&path, &space, "k", "cpu").unwrap();
        assert_eq!(j.len(), 2);
        assert_eq!(j.lookup(&space, 0), Some(Outcome::Value(1.5)));
        assert_eq!(j.lookup(&space, 3), Some(Outcome::Failed));
        assert_eq!(j.lookup(&space, 1), None);
        j.record(&space, 5, Outcome::Value(0.5), None).unwrap();
        // Kernel Tuner's reader (ours) loads it.
        let cache = KernelTunerCache::load(&path).unwrap();
        assert_eq!(cache.entries.len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
