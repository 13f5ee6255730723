//! # Writing a cache
//!
//! [`CacheWriter`] writes a cache the way Kernel Tuner does while it tunes: the header up to
//! `"cache": {`, then one record per line, each flushed as it is written, so the file is an
//! *unclosed* cache at every moment and a process killed at any point loses at most the record
//! it was writing. [`CacheWriter::close`] writes the closing `}` `}`; a file never closed is read
//! all the same, by [`KernelTunerCache`](super::KernelTunerCache) and by Kernel Tuner itself.
//! Kernel Tuner ends every record with a comma (`"key": {...},`); the writer puts the comma
//! before the next record instead, so the file always ends on a complete record and can be
//! closed by appending the braces alone. Both readers close either form.
//!
//! A measured record holds the parameters and `time`; a failed one holds the parameters,
//! `"time": "RuntimeFailedConfig"` (what readers before Kernel Tuner 1.4 and
//! `shared/tools/score.py` look at), the `reason` it failed, and
//! `"__error__": "RuntimeFailedConfig"` (what Kernel Tuner 1.4 looks at).

use super::key;
use crate::space::{Param, Value};
use serde_json::{Map, Value as Json, json};
use std::io::{self, Write};

/// The error name written for a failed configuration.
const FAILED: &str = "RuntimeFailedConfig";

/// The header of a cache: what was tuned, where, over which parameters.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    /// `kernel_name`.
    pub kernel_name: &'a str,
    /// `device_name`.
    pub device_name: &'a str,
    /// The parameters and their values (`tune_params_keys` and `tune_params`), in order.
    pub params: &'a [Param],
}

/// Writes a Kernel Tuner cache in its append-only, unclosed form: the header, then one record
/// per line, each flushed as it is written; [`close`](Self::close) ends the file. A failed
/// configuration's record holds `"time": "RuntimeFailedConfig"`, its `reason` and
/// `"__error__": "RuntimeFailedConfig"`, readable by Kernel Tuner before and after 1.4.
///
/// ```
/// use std::path::Path;
/// use tunable_search::SpaceBuilder;
/// use tunable_search::format::kernel_tuner::{CacheWriter, Header, KernelTunerCache, Observation};
///
/// let space = SpaceBuilder::new().param("block", [32, 64]).build().unwrap();
/// let header = Header { kernel_name: "k", device_name: "cpu", params: space.params() };
/// let mut w = CacheWriter::new(Vec::new(), &header).unwrap();
/// w.append(&space.values(0), Ok(1.5)).unwrap();
/// w.append(&space.values(1), Err("panicked: boom")).unwrap();
/// let text = String::from_utf8(w.into_inner()).unwrap(); // unclosed, as after a kill
/// let cache = KernelTunerCache::from_json_text(&text, Path::new("k.json")).unwrap();
/// assert_eq!(cache.entries[1].key, "64");
/// assert_eq!(cache.entries[1].observation, Observation::Failed("panicked: boom".into()));
/// ```
#[derive(Debug)]
pub struct CacheWriter<W: Write> {
    out: W,
    names: Vec<String>,
    records: usize,
}

impl<W: Write> CacheWriter<W> {
    /// Starts a cache on `out`: writes (and flushes) the header.
    pub fn new(mut out: W, header: &Header<'_>) -> io::Result<Self> {
        let names: Vec<String> = header.params.iter().map(|p| p.name().to_owned()).collect();
        let mut head = Map::new();
        head.insert("device_name".into(), json!(header.device_name));
        head.insert("kernel_name".into(), json!(header.kernel_name));
        head.insert("tune_params_keys".into(), json!(names));
        let params: Map<String, Json> = header
            .params
            .iter()
            .map(|p| (p.name().to_owned(), json!(p.values())))
            .collect();
        head.insert("tune_params".into(), Json::Object(params));
        head.insert("objective".into(), json!("time"));
        let text = Json::Object(head).to_string();
        // `{...}` without its closing brace, then the opened cache.
        write!(out, "{},\n\"cache\": {{", &text[..text.len() - 1])?;
        out.flush()?;
        Ok(CacheWriter {
            out,
            names,
            records: 0,
        })
    }

    /// Appends (and flushes) the record of one configuration, given by its values in the
    /// header's parameter order: its time in milliseconds, or the reason it failed.
    pub fn append(&mut self, values: &[Value], result: Result<f64, &str>) -> io::Result<()> {
        self.append_times(values, result, &[])
    }

    /// Appends (and flushes) a record like [`append`](Self::append), with the individual timed
    /// runs in Kernel Tuner's `times` field (left out when `times` is empty): how many runs the
    /// configuration got, and their spread.
    pub fn append_times(
        &mut self,
        values: &[Value],
        result: Result<f64, &str>,
        times: &[f64],
    ) -> io::Result<()> {
        self.append_fields(values, result, times, &[])
    }

    /// Appends (and flushes) a record like [`append_times`](Self::append_times), with further
    /// measured quantities by their Kernel Tuner names (`nvml_energy`, `nvml_power`, ...).
    pub fn append_fields(
        &mut self,
        values: &[Value],
        result: Result<f64, &str>,
        times: &[f64],
        fields: &[(String, f64)],
    ) -> io::Result<()> {
        let mut rec = Map::new();
        for (name, v) in self.names.iter().zip(values) {
            rec.insert(name.clone(), json!(v));
        }
        for (name, v) in fields {
            rec.insert(name.clone(), json!(v));
        }
        if !times.is_empty() {
            rec.insert("times".into(), json!(times));
        }
        match result {
            Ok(ms) => {
                rec.insert("time".into(), json!(ms));
            }
            Err(reason) => {
                rec.insert("time".into(), json!(FAILED));
                rec.insert("reason".into(), json!(reason));
                rec.insert("__error__".into(), json!(FAILED));
            }
        }
        let sep = if self.records == 0 { "\n" } else { ",\n" };
        let line = format!("{sep}{}: {}", json!(key(values)), Json::Object(rec));
        self.out.write_all(line.as_bytes())?;
        self.out.flush()?;
        self.records += 1;
        Ok(())
    }

    /// Number of records appended.
    pub fn records(&self) -> usize {
        self.records
    }

    /// The output, to sync it to disk, say.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The output, left unclosed (a valid cache for every reader of the format).
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Closes the cache (writes the closing `}` `}`) and returns the output.
    pub fn close(mut self) -> io::Result<W> {
        self.out.write_all(b"}\n}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::format::kernel_tuner::{KernelTunerCache, Observation};
    use std::path::Path;

    #[test]
    fn written_caches_read_back_closed_or_not() {
        let space = SpaceBuilder::new()
            .param("a", [1, 2])
            .param("m", ["x,y", "z"])
            .param("f", [0.5, 1.0])
            .build()
            .unwrap();
        let header = Header {
            kernel_name: "k",
            device_name: "cpu: test",
            params: space.params(),
        };
        let mut w = CacheWriter::new(Vec::new(), &header).unwrap();
        for p in 0..space.len() {
            let r = if p % 3 == 0 {
                Err("wrong output")
            } else {
                Ok(p as f64)
            };
            w.append(&space.values(p), r).unwrap();
        }
        assert_eq!(w.records(), space.len());
        let closed = String::from_utf8(w.close().unwrap()).unwrap();
        // Before the closing braces: the unclosed form, ending on a complete record.
        let open = closed.strip_suffix("}\n}\n").unwrap();
        assert!(open.ends_with('}') && !open.ends_with(","), "{closed}");
        let strict: Json = serde_json::from_str(&closed).unwrap();
        assert_eq!(strict["cache"].as_object().unwrap().len(), space.len());
        let cache = KernelTunerCache::from_json_text(open, Path::new("k.json")).unwrap();
        assert!(cache.repaired);
        assert_eq!(cache.len(), space.len());
        assert_eq!(cache.device_name.as_deref(), Some("cpu: test"));
        for (p, e) in cache.entries.iter().enumerate() {
            assert_eq!(e.values, space.values(p));
            assert_eq!(e.key, key(&space.values(p)));
            let want = if p % 3 == 0 {
                Observation::Failed("wrong output".into())
            } else {
                Observation::Value(p as f64)
            };
            assert_eq!(e.observation, want);
        }
    }
}
