//! # `cargo tunable space`
//!
//! `space build FILE` builds a space and prints its valid count, Cartesian size and construction
//! time; with `--json`, exactly one line
//! `{"name": ..., "valid": N, "cartesian": N, "seconds": S}`.

use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use tunable_search::space::load::load;

/// `cargo tunable space ...`
#[derive(Subcommand)]
pub(crate) enum SpaceCommand {
    /// Build a space from a spaces JSON or Kernel Tuner T1 file.
    Build(BuildArgs),
}

/// Arguments of `space build`.
#[derive(Args)]
pub(crate) struct BuildArgs {
    /// A spaces JSON (`tune_params`, `restrictions`, `max_threads`) or T1 file.
    file: PathBuf,
    /// Print one JSON line instead of text.
    #[arg(long)]
    json: bool,
    /// Build this many times and report the median time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Threads for construction (default: available cores, at most 8).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Serialize)]
struct Report<'a> {
    name: &'a str,
    valid: usize,
    cartesian: u128,
    seconds: f64,
}

pub(crate) fn run(cmd: SpaceCommand) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        SpaceCommand::Build(args) => build(args),
    }
}

fn build(args: BuildArgs) -> Result<(), Box<dyn std::error::Error>> {
    let file = load(&args.file)?;
    let mut times = Vec::with_capacity(args.repeat as usize);
    let mut space = None;
    for _ in 0..args.repeat {
        let mut builder = file.builder.clone();
        if let Some(t) = args.threads {
            builder = builder.threads(t);
        }
        let s = builder.build()?;
        times.push(s.build_seconds());
        space = Some(s);
    }
    let space = space.expect("repeat >= 1");
    times.sort_by(f64::total_cmp);
    let seconds = times[times.len() / 2];
    let report = Report {
        name: &file.name,
        valid: space.len(),
        cartesian: space.cartesian_size(),
        seconds,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    let pct = 100.0 * report.valid as f64 / report.cartesian as f64;
    println!(
        "{}: {} valid of {} configurations ({pct:.3}%), built in {:.4} s",
        report.name, report.valid, report.cartesian, seconds
    );
    match file.expected_valid {
        Some(e) if e == report.valid as u64 => println!("  matches the expected valid count {e}"),
        Some(e) => println!("  WARNING: the file expects {e} valid configurations"),
        None => {}
    }
    if space.is_empty()
        && let Some((i, span)) = space.unsatisfiable_part()
    {
        let text = &space.constraints()[i];
        println!(
            "  no configuration satisfies '{}' in constraint {i}: {text}",
            &text[span.start..span.end]
        );
    }
    Ok(())
}
