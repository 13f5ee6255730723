//! # A tuning session
//!
//! `cargo tunable tune` runs the crate's tuning harness (its `examples/tune.rs`, built with the
//! `autotune` feature) and talks to the first-run hook through the environment:
//!
//! - `TUNABLE_KERNELS=a,b`: only these kernels tune; calls of the others run their baked or
//!   default configuration ([`selected`]);
//! - `TUNABLE_TIME=<seconds>`: the wall-time limit of each tuning ([`max_seconds`], Kernel
//!   Tuner's `time_limit`), checked between evaluations;
//! - `TUNABLE_REPORT=<file>`: each tuning appends one JSON line, a [`Record`], to the file
//!   ([`record`]), from which `cargo tunable tune` prints its summary table.
//!
//! Each is unset outside a session, and then changes nothing.

use super::Summary;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One tuning, as `TUNABLE_REPORT` records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The kernel.
    pub kernel: String,
    /// The problem-size key.
    pub key: u64,
    /// The device.
    pub device: String,
    /// The default configuration's time in milliseconds, if it was measured.
    pub default_ms: Option<f64>,
    /// The tuned configuration (`name=value, ...`) and its time in milliseconds.
    pub tuned: Option<(String, f64)>,
    /// Unique evaluations.
    pub evaluations: usize,
    /// Wall time of the tuning in seconds.
    pub seconds: f64,
    /// Why the tuning failed (no configuration chosen), if it did.
    pub failed: Option<String>,
    /// Where the wall time went, the kernels' own time included (none for a tuning that could
    /// not run, and in records written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// Where the wall time of a tuning went, in seconds, as its summary line says it: what
/// `scripts/gpu-check` reads for the measurement's overhead (`measure_s - kernels_s`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Compiling variants (what the measurement waited for; builds overlapped are not here).
    pub compile_s: f64,
    /// Running, checking and timing variants.
    pub measure_s: f64,
    /// Of `measure_s`, the kernels' own run time ([`TimeSplit::kernels`](super::TimeSplit::kernels)).
    pub kernels_s: f64,
    /// Inside the strategy.
    pub strategy_s: f64,
    /// The rest.
    pub other_s: f64,
    /// Configurations measured in this run.
    pub measured: usize,
}

impl Record {
    /// The record of a tuning that ended with `summary`: failed if no configuration worked.
    pub fn of(summary: &Summary<'_>) -> Record {
        Record {
            kernel: summary.kernel.to_owned(),
            key: summary.key,
            device: summary.device.to_owned(),
            default_ms: summary.default.as_ref().ok().copied(),
            tuned: summary.tuned.clone(),
            evaluations: summary.evaluations,
            seconds: summary.seconds,
            failed: summary
                .tuned
                .is_none()
                .then(|| "every configuration failed".to_owned()),
            cost: Some(Cost {
                compile_s: summary.spent.compile,
                measure_s: summary.spent.measure,
                kernels_s: summary.spent.kernels,
                strategy_s: summary.spent.strategy,
                other_s: summary.spent.other,
                measured: summary.measured,
            }),
        }
    }

    /// The record of a tuning that could not run, with the reason.
    pub fn failure(kernel: &str, key: u64, device: &str, reason: String) -> Record {
        Record {
            kernel: kernel.to_owned(),
            key,
            device: device.to_owned(),
            default_ms: None,
            tuned: None,
            evaluations: 0,
            seconds: 0.0,
            failed: Some(reason),
            cost: None,
        }
    }
}

/// Whether `kernel` may tune: `TUNABLE_KERNELS` (comma-separated names) lists it, or is unset.
pub fn selected(kernel: &str) -> bool {
    std::env::var("TUNABLE_KERNELS")
        .map_or(true, |names| names.split(',').any(|n| n.trim() == kernel))
}

/// The wall-time limit of a tuning: `TUNABLE_TIME` in seconds, if set to a positive number.
pub fn max_seconds() -> Option<f64> {
    std::env::var("TUNABLE_TIME")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
}

/// Appends `record` to the `TUNABLE_REPORT` file, if set; a failure to write is said on stderr.
pub fn record(record: &Record) {
    let Some(path) = std::env::var_os("TUNABLE_REPORT") else {
        return;
    };
    let line = serde_json::to_string(record).expect("a record always serializes");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!(
            "tunable: cannot write the session report {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_follows_its_summary() {
        let s = Summary {
            kernel: "k",
            key: 8,
            device: "dev",
            default: Ok(2.0),
            tuned: Some(("tile=4".into(), 1.0)),
            evaluations: 10,
            measured: 10,
            failures: 0,
            early: 0,
            seconds: 0.5,
            spent: crate::tuner::TimeSplit::default(),
            confirmed: 0,
            changed: false,
            warm: None,
        };
        let r = Record::of(&s);
        assert_eq!((r.default_ms, r.failed.as_deref()), (Some(2.0), None));
        assert_eq!(r.cost.map(|c| (c.measured, c.kernels_s)), Some((10, 0.0)));
        // A record written before the cost was kept still reads.
        let old = r#"{"kernel":"k","key":8,"device":"dev","default_ms":2.0,"tuned":null,"evaluations":1,"seconds":0.5,"failed":null}"#;
        assert_eq!(serde_json::from_str::<Record>(old).unwrap().cost, None);
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), r);
        let failed = Record::of(&Summary {
            tuned: None,
            default: Err("failed (boom)".into()),
            ..s
        });
        assert_eq!(failed.default_ms, None);
        assert_eq!(failed.failed.as_deref(), Some("every configuration failed"));
    }
}
