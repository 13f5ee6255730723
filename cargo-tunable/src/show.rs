//! # `cargo tunable show`
//!
//! `show [DIR] [--json]` prints the tuned configurations of every `*.bin` file in DIR (default
//! `tuned/`): kernel, device, key, configuration, time, evaluations, strategy and when it was
//! tuned (UTC); then, per kernel and key, the [chain](crate::chain) a build runs (each tuned
//! device's entry, then the portable set for any other device; with `--json`, each entry's
//! `portable`). A damaged file is reported and skipped.
//!
//! **Stale entries.** `show` cannot read the `#[tunable]` annotation itself; the last build that
//! expanded it did, and recorded its space fingerprint in `<kernel>.space` beside the tuned file.
//! An entry whose space fingerprint differs is marked `stale`: the annotation (parameters, values
//! or constraints) changed since it was tuned, and builds no longer bake it. Without that record
//! (no build since, or a read-only folder) the mark is `?`. The record reflects the last build
//! on this machine, not the sources as they are now: build first for an exact answer.
//!
//! **Fronts.** An entry tuned for several objectives (`objectives = ["time", "energy"]`)
//! stores the Pareto front of what was measured: below the table, each such entry's front, one
//! row per point with its configuration and its value of each objective, the shipped point (the
//! one its `prefer` rule chose, the entry's configuration) marked; with `--json`, under `front`.
//! An entry tuned for one other objective than time shows its value the same way.
//!
//! **Device binaries.** Below the chains, the [artifacts](crate::artifacts) of GPU kernels'
//! winners in `<kernel>.artifacts/` (kind, size, device or architecture); with `--json`, each
//! entry lists its own under `artifacts`. A damaged artifact file is listed as such in the table;
//! with `--json`, under `damaged_artifacts` of each entry of its kernel, and on stderr.
//!
//! **Clocks.** An entry whose space has clock parameters (`nvml_gr_clock`, `nvml_mem_clock`,
//! `nvml_pwr_limit`) was tuned at those settings; a build never applies them. Below the table,
//! each such entry's settings and the `nvidia-smi` commands with which an operator applies them
//! (with `--json`, `clocks` and `apply`; `<gpu>` stands for the GPU's index or PCI bus id).
//!
//! **Untrusted text.** Names and devices come from the files: a kernel name that breaks the rule
//! of [`tunable_search::name`] is shown escaped and marked `(invalid name)` (its `.space` record
//! is not looked up), and control or bidirectional-override characters in any shown text are
//! escaped, so that a file cannot rewrite the terminal.

use crate::date::utc;
use crate::shown::shown;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use tunable_runtime::store::read;
use tunable_search::clock::Setting;

/// Arguments of `show`.
#[derive(Args)]
pub(crate) struct ShowArgs {
    /// The folder of tuned files.
    #[arg(default_value = "tuned")]
    dir: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    kernel: String,
    device: String,
    key: u64,
    params: Vec<(String, String)>,
    time_ms: f64,
    evaluations: u32,
    strategy: String,
    timestamp: u64,
    /// The timestamp as a UTC date, `YYYY-MM-DD HH:MM`.
    tuned: String,
    /// Whether the annotation no longer fits the entry (`None`: unknown, no build recorded it).
    stale: Option<bool>,
    /// The device binaries stored for the entry's winner.
    artifacts: Vec<Brief>,
    /// The damaged files in the kernel's artifact folder (which cannot say whose they are), as
    /// the table lists them.
    damaged_artifacts: Vec<Damaged>,
    /// The clock parameters of the configuration, by name, in MHz or W (empty for a space
    /// without them).
    clocks: Vec<(String, u32)>,
    /// The `nvidia-smi` commands that apply them (`<gpu>`: the GPU's index or PCI bus id).
    apply: Vec<String>,
    /// The portable set of the entry's kernel and key (what a build runs, timed once, on a
    /// device with no entry), best compromise first; the [chain](crate::chain) of the key is the
    /// tuned devices' entries, then this. Empty for an entry a build drops (an older space).
    portable: Vec<String>,
    /// The objectives of a tuning for other objectives than time alone, the rule that chose
    /// the configuration and the front of what it measured.
    front: Option<ShownFront>,
}

/// The front of an entry, in `--json` and below the table.
#[derive(Serialize)]
struct ShownFront {
    /// The objectives as written: `time`, `max gflops_per_watt`.
    objectives: Vec<String>,
    /// The rule that chose the entry's configuration.
    prefer: String,
    points: Vec<ShownPoint>,
}

/// One point of a front.
#[derive(Serialize)]
struct ShownPoint {
    params: Vec<(String, String)>,
    time_ms: f64,
    /// Its value of each objective, in order.
    values: Vec<f64>,
    /// Whether it is the entry's configuration, the one that ships.
    chosen: bool,
}

/// The front of `e` as shown.
fn shown_front(e: &tunable_runtime::store::TunedEntry) -> Option<ShownFront> {
    let front = e.front.as_ref()?;
    let chosen: Vec<_> = e.params.iter().map(|(_, v)| v.clone()).collect();
    Some(ShownFront {
        objectives: front.objectives.clone(),
        prefer: front.prefer.clone(),
        points: front
            .points
            .iter()
            .map(|p| ShownPoint {
                params: e
                    .params
                    .iter()
                    .zip(&p.values)
                    .map(|((n, _), v)| (n.clone(), tunable_search::Value::from(v).to_string()))
                    .collect(),
                time_ms: p.time_ms,
                values: p.objectives.clone(),
                chosen: p.values == chosen,
            })
            .collect(),
    })
}

/// Prints the front of each row that has one.
fn print_fronts(rows: &[Row]) {
    for r in rows {
        let Some(f) = &r.front else { continue };
        let objectives: Vec<String> = f.objectives.iter().map(|o| shown(o)).collect();
        println!(
            "front of {} on {}, key {} ({}; ships {}):",
            shown(&r.kernel),
            shown(&r.device),
            r.key,
            objectives.join(", "),
            shown(&f.prefer)
        );
        println!(
            "| configuration | time (ms) | {} | ships |",
            objectives.join(" | ")
        );
        println!("|---|---|{}---|", "---|".repeat(objectives.len()));
        for p in &f.points {
            let cfg: Vec<String> = p
                .params
                .iter()
                .map(|(n, v)| format!("{}={}", shown(n), shown(v)))
                .collect();
            let values: Vec<String> = p.values.iter().map(|v| format!("{v:.6}")).collect();
            println!(
                "| {} | {:.4} | {} | {} |",
                cfg.join(", "),
                p.time_ms,
                values.join(" | "),
                if p.chosen { "yes" } else { "" }
            );
        }
        println!();
    }
}

/// A device binary of an entry, in `--json`.
#[derive(Serialize)]
struct Brief {
    kind: String,
    bytes: usize,
    target: String,
    file: String,
}

/// A damaged artifact file, in `--json`.
#[derive(Serialize)]
struct Damaged {
    file: String,
    /// What is wrong with it.
    reason: String,
}

/// The space fingerprint the last build recorded for `kernel` in `dir`, if any (none for a name
/// that could point outside `dir`).
fn recorded_space(dir: &Path, kernel: &str) -> Option<u64> {
    tunable_search::name::check(kernel).ok()?;
    let text = std::fs::read_to_string(dir.join(format!("{kernel}.space"))).ok()?;
    u64::from_str_radix(text.trim(), 16).ok()
}

pub(crate) fn run(args: ShowArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .map_err(|e| format!("cannot read {}: {e}", args.dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for f in &files {
        match read(f) {
            Ok(entries) => all.extend(entries),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
    let listed = crate::artifacts::list(&args.dir, &all);
    let chains = crate::chain::chains(&all);
    let portable = |kernel: &str, key: u64, device: &str| {
        chains
            .iter()
            .find(|c| {
                c.kernel == kernel && c.key == key && c.devices.iter().any(|(d, _)| d == device)
            })
            .map(|c| c.portable.clone())
            .unwrap_or_default()
    };
    let rows: Vec<Row> = all
        .iter()
        .cloned()
        .map(|e| {
            let stale = recorded_space(&args.dir, &e.kernel).map(|s| s != e.space_hash);
            let values = e.values();
            let clocks = Setting::of(e.params.iter().map(|(n, _)| n.as_str()).zip(&values));
            Row {
                clocks: clocks
                    .knobs()
                    .into_iter()
                    .map(|k| (k.name().to_owned(), clocks.get(k).unwrap_or_default()))
                    .collect(),
                apply: clocks.commands("<gpu>"),
                front: shown_front(&e),
                stale,
                damaged_artifacts: listed
                    .iter()
                    .filter(|l| l.kernel == e.kernel)
                    .filter_map(|l| {
                        Some(Damaged {
                            file: l.file.clone(),
                            reason: l.damaged.clone()?,
                        })
                    })
                    .collect(),
                portable: portable(&e.kernel, e.key, &e.device),
                artifacts: crate::artifacts::of_entry(&listed, &e)
                    .into_iter()
                    .map(|l| Brief {
                        kind: l.kind.clone(),
                        bytes: l.bytes,
                        target: l.target.clone(),
                        file: l.file.clone(),
                    })
                    .collect(),
                params: e
                    .params
                    .iter()
                    .zip(e.values())
                    .map(|((n, _), v)| (n.clone(), v.to_string()))
                    .collect(),
                kernel: e.kernel,
                device: e.device,
                key: e.key,
                time_ms: e.time_ms,
                evaluations: e.evaluations,
                strategy: e.strategy,
                tuned: utc(e.timestamp),
                timestamp: e.timestamp,
            }
        })
        .collect();
    if args.json {
        // As for a damaged tuned file: a damaged artifact is said on stderr too (the rows of its
        // kernel list it, but a kernel may have no readable entry).
        for l in &listed {
            if let Some(why) = &l.damaged {
                eprintln!("warning: {}: damaged: {why}", shown(&l.file));
            }
        }
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!("no tuned configurations in {}", args.dir.display());
        return Ok(());
    }
    println!(
        "| kernel | device | key | configuration | time (ms) | evaluations | strategy | tuned (UTC) | fits |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let cfg: Vec<String> = r
            .params
            .iter()
            .map(|(n, v)| format!("{}={}", shown(n), shown(v)))
            .collect();
        let kernel = match tunable_search::name::check(&r.kernel) {
            Ok(()) => r.kernel.clone(),
            Err(_) => format!("{:?} (invalid name)", cut(&r.kernel)),
        };
        println!(
            "| {} | {} | {} | {} | {:.4} | {} | {} | {} | {} |",
            kernel,
            shown(&r.device),
            r.key,
            cfg.join(", "),
            r.time_ms,
            r.evaluations,
            shown(&r.strategy),
            r.tuned,
            match r.stale {
                Some(false) => "yes",
                Some(true) => "stale",
                None => "?",
            }
        );
    }
    print_clocks(&rows);
    println!();
    print_fronts(&rows);
    crate::chain::print(&chains);
    crate::artifacts::print(&listed);
    Ok(())
}

/// The clocks the entries with clock parameters were tuned at, and how to apply them.
fn print_clocks(rows: &[Row]) {
    let clocked: Vec<&Row> = rows.iter().filter(|r| !r.clocks.is_empty()).collect();
    if clocked.is_empty() {
        return;
    }
    println!();
    println!(
        "Tuned at these clocks (a build never sets them; an operator applies them, as root, \
         <gpu> being the GPU's index or PCI bus id):"
    );
    for r in clocked {
        let settings: Vec<String> = r.clocks.iter().map(|(n, v)| format!("{n}={v}")).collect();
        println!(
            "  {} on {} (key {}): {}",
            shown(&r.kernel),
            shown(&r.device),
            r.key,
            settings.join(", ")
        );
        for c in &r.apply {
            println!("    {c}");
        }
    }
}

/// `text` cut to 200 characters.
fn cut(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_text_cannot_rewrite_the_terminal() {
        assert_eq!(shown("NVIDIA A100"), "NVIDIA A100");
        assert_eq!(shown("a\u{1b}[2Jb\u{202e}c"), "a\\u{1b}[2Jb\\u{202e}c");
        assert_eq!(cut(&"x".repeat(1000)).len(), 200);
        assert_eq!(recorded_space(Path::new("."), "../../etc/passwd"), None);
    }
}
