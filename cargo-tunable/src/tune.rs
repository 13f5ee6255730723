//! # `cargo tunable tune`
//!
//! Tunes a crate on purpose, ahead of time: every kernel, for every problem size its tuning
//! harness calls it with, on this machine's device, in one command.
//!
//! ```text
//! cargo tunable tune [--manifest-path P] [--example tune] [--kernel K ...] [--budget N | --time 10m] [--seed S] [--objective time|energy|edp] [--retune]
//! ```
//!
//! **The harness** is an ordinary Cargo example of the crate, `examples/tune.rs` by default: a
//! `main` that calls each `#[tunable]` kernel with representative arguments for each key it
//! should cover. An example, because it is the Cargo target meant for programs that use a crate
//! without being shipped with it: it builds against the library with the crate's features,
//! `cargo test` compiles it (so it does not rot), it runs in one process on one thread (so that
//! no test runs beside a measurement, as `cargo test` would), and it needs no attribute, no
//! registry of functions and no build script.
//!
//! The command runs `cargo run --release --features autotune --example tune` in the crate; each
//! call of a kernel for a key that has no tuned configuration on this device tunes it there (the
//! first-run hook), with a progress bar and a summary line per (kernel, key) on stderr, and
//! stores the winner in `tuned/<kernel>.bin`; a later build without the feature bakes it. It
//! passes the options through the environment of a [tuning
//! session](tunable_runtime::tuner::session): `--kernel` (`TUNABLE_KERNELS`), `--budget`
//! (`TUNABLE_BUDGET`), `--time` (`TUNABLE_TIME`, a wall-time limit per tuning), `--seed`
//! (`TUNABLE_SEED`, the strategy's seed: the same seed asks for the same configurations in the
//! same order, given the same results), `--objective` (`TUNABLE_OBJECTIVE`: `time`, `energy`,
//! `edp` or a kernel's metric with its direction, `max gflops_per_watt`; several separated by
//! commas keep their front), `--prefer` (`TUNABLE_PREFER`: the rule that chooses the shipped
//! point of a front, `least_energy within 1.10 of fastest`), `--retune`
//! (`TUNABLE_MODE=retune`, else what is tuned already is kept), and reads back one record per
//! tuning (`TUNABLE_REPORT`), which it prints as a table: kernel, key, device, default time,
//! tuned time, speedup, evaluations, wall time. It exits with an error if the harness failed or
//! any tuning found no working configuration.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;
use tunable_runtime::tuner::session::Record;

/// Arguments of `tune`.
#[derive(Args)]
pub(crate) struct TuneArgs {
    /// The crate's manifest (default: `Cargo.toml` in the current folder).
    #[arg(long)]
    manifest_path: Option<PathBuf>,
    /// The example that calls the kernels to tune.
    #[arg(long, default_value = "tune")]
    example: String,
    /// Tune only these kernels (repeat or comma-separate); the others run as built.
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Evaluations per tuning (default: each kernel's `budget`).
    #[arg(long, conflicts_with = "time")]
    budget: Option<usize>,
    /// Wall-time limit per tuning: `90s`, `10m`, `1h` or seconds.
    #[arg(long, value_parser = parse_duration)]
    time: Option<f64>,
    /// The strategy's seed (default: each kernel's `seed`, 1): the same seed asks for the same configurations in the same order, given the same results
    #[arg(long)]
    seed: Option<u64>,
    /// What tuning pursues (default: each kernel's `objective` or `objectives`, time): `time`, `energy` (joules per run, read from the device's energy meter), `edp` (energy times time) or a kernel's metric with its direction (`max gflops_per_watt`); several separated by commas (`time,energy`) keep their Pareto front
    #[arg(long)]
    objective: Option<String>,
    /// The rule that chooses the shipped point of a front (default: each kernel's `prefer`, the first objective's best): `fastest`, `least_energy`, `most_<metric>`, or `least_energy within 1.10 of fastest`
    #[arg(long)]
    prefer: Option<String>,
    /// Tune again what is tuned already on this device.
    #[arg(long)]
    retune: bool,
    /// Build without `--release` (faster to build, meaningless to time: for tests of the
    /// command itself).
    #[arg(long, hide = true)]
    debug: bool,
}

/// A duration in seconds from `90s`, `10m`, `1h` or a plain number of seconds.
fn parse_duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * unit),
        _ => Err(format!(
            "'{text}' is not a duration (e.g. 90s, 10m, 1h or a number of seconds)"
        )),
    }
}

pub(crate) fn run(args: TuneArgs) -> Result<(), Box<dyn std::error::Error>> {
    let manifest = args
        .manifest_path
        .clone()
        .unwrap_or_else(|| PathBuf::from("Cargo.toml"));
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    for k in &args.kernel {
        tunable_search::name::check(k)?;
    }
    let harness = dir.join("examples").join(format!("{}.rs", args.example));
    if !harness.exists() {
        return Err(format!(
            "no tuning harness: {} does not exist; write a `main` there that calls each kernel with representative arguments for each key to tune",
            harness.display()
        )
        .into());
    }
    let report = std::env::temp_dir().join(format!("tunable-tune-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("run")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--features", "autotune", "--example", &args.example])
        .env("TUNABLE_REPORT", &report);
    if !args.debug {
        cmd.arg("--release");
    }
    if !args.kernel.is_empty() {
        cmd.env("TUNABLE_KERNELS", args.kernel.join(","));
    }
    if let Some(b) = args.budget {
        cmd.env("TUNABLE_BUDGET", b.to_string());
    }
    if let Some(t) = args.time {
        cmd.env("TUNABLE_TIME", t.to_string());
    }
    if let Some(s) = args.seed {
        cmd.env(tunable_runtime::settings::SEED_VAR, s.to_string());
    }
    if let Some(o) = &args.objective {
        cmd.env(tunable_runtime::settings::OBJECTIVE_VAR, o);
    }
    if let Some(p) = &args.prefer {
        cmd.env(tunable_runtime::settings::PREFER_VAR, p);
    }
    if args.retune {
        cmd.env("TUNABLE_MODE", "retune");
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    let records = read_records(&report)?;
    let _ = std::fs::remove_file(&report);
    print!("{}", table(&records));
    if !status.success() {
        return Err(format!("the tuning harness failed ({status})").into());
    }
    let failed: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let why = r.failed.as_ref()?;
            Some(format!("{} (key {}): {why}", r.kernel, r.key))
        })
        .collect();
    if !failed.is_empty() {
        return Err(format!("{} tuning(s) failed: {}", failed.len(), failed.join("; ")).into());
    }
    Ok(())
}

/// The records the session's tunings appended (none if nothing was tuned).
fn read_records(path: &Path) -> Result<Vec<Record>, Box<dyn std::error::Error>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display()).into()),
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .map_err(|e| format!("bad record in {}: {e}", path.display()).into())
        })
        .collect()
}

/// The summary table of a session.
fn table(records: &[Record]) -> String {
    if records.is_empty() {
        return "nothing tuned: every (kernel, key) the harness calls is tuned on this device already (--retune tunes again)\n".to_owned();
    }
    let ms = |t: Option<f64>| t.map_or_else(|| "-".to_owned(), |t| format!("{t:.4}"));
    let mut t = String::from(
        "| kernel | key | device | default (ms) | tuned (ms) | speedup | evaluations | wall time (s) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in records {
        let tuned = r.tuned.as_ref().map(|(_, t)| *t);
        let speedup = match (r.default_ms, tuned) {
            (Some(d), Some(t)) if t > 0.0 => format!("{:.2}x", d / t),
            _ if r.failed.is_some() => "failed".to_owned(),
            _ => "-".to_owned(),
        };
        t += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} |\n",
            r.kernel,
            r.key,
            r.device,
            ms(r.default_ms),
            ms(tuned),
            speedup,
            r.evaluations,
            r.seconds
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("90s"), Ok(90.0));
        assert_eq!(parse_duration("10m"), Ok(600.0));
        assert_eq!(parse_duration("1h"), Ok(3600.0));
        assert_eq!(parse_duration("2.5"), Ok(2.5));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn the_table_shows_speedups_and_failures() {
        let ok = Record {
            kernel: "k".into(),
            key: 64,
            device: "dev".into(),
            default_ms: Some(3.0),
            tuned: Some(("tile=4".into(), 1.5)),
            evaluations: 20,
            seconds: 1.25,
            failed: None,
            cost: None,
        };
        let bad = Record::failure("j", 8, "dev", "every configuration failed".into());
        let t = table(&[ok, bad]);
        assert!(
            t.contains("| k | 64 | dev | 3.0000 | 1.5000 | 2.00x | 20 | 1.2 |"),
            "{t}"
        );
        assert!(
            t.contains("| j | 8 | dev | - | - | failed | 0 | 0.0 |"),
            "{t}"
        );
    }
}
