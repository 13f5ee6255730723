//! # `cargo tunable show`
//!
//! `show [DIR] [--json]` prints the tuned configurations of every `*.bin` file in DIR (default
//! `tuned/`): kernel, device, key, configuration, time, evaluations, strategy and when it was
//! tuned; then, per kernel and key, the [chain](crate::chain) a build runs (each tuned device's
//! entry, then the portable set for any other device). A damaged file is reported and skipped.

use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use tunable_runtime::store::read;

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
}

pub(crate) fn run(args: ShowArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .map_err(|e| format!("cannot read {}: {e}", args.dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    let (mut rows, mut all) = (Vec::new(), Vec::new());
    for f in &files {
        match read(f) {
            Ok(entries) => rows.extend(entries.into_iter().inspect(|e| all.push(e.clone())).map(
                |e| {
                    Row {
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
                        timestamp: e.timestamp,
                    }
                },
            )),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!("no tuned configurations in {}", args.dir.display());
        return Ok(());
    }
    println!(
        "| kernel | device | key | configuration | time (ms) | evaluations | strategy | tuned (unix time) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in rows {
        let cfg: Vec<String> = r.params.iter().map(|(n, v)| format!("{n}={v}")).collect();
        println!(
            "| {} | {} | {} | {} | {:.4} | {} | {} | {} |",
            r.kernel,
            r.device,
            r.key,
            cfg.join(", "),
            r.time_ms,
            r.evaluations,
            r.strategy,
            r.timestamp
        );
    }
    println!();
    crate::chain::print(&crate::chain::chains(&all));
    Ok(())
}
