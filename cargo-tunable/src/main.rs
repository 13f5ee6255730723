//! # cargo-tunable
//!
//! `cargo tunable <command>`: tools around the tunable auto-tuner. Cargo runs this binary as
//! `cargo-tunable tunable <command> ...`; it can also be run from the workspace with
//! `cargo run --release -p cargo-tunable -- tunable <command> ...`.
//!
//! Commands:
//! - `space build FILE [--json] [--repeat N] [--threads N]`: build a search space from a spaces
//!   JSON or Kernel Tuner T1 file and report its size and construction time.
//! - `bench --cache FILE ... --strategy NAME[,NAME...] --out DIR`: run strategies on replayed
//!   Kernel Tuner caches and score them (see [`bench`](mod@bench)).
//! - `show [DIR] [--json]`: print the tuned configurations stored in DIR (default `tuned/`),
//!   with UTC dates and a mark on entries the annotation no longer fits, and the chain a build
//!   runs per kernel and key (device entries, then the portable set; see [`show`](mod@show)),
//!   then the GPU kernels' device binaries stored beside them (kind, size, device or
//!   architecture; see [`artifacts`](mod@artifacts)).
//! - `tune [--manifest-path P] [--kernel K] [--budget N | --time 10m]`: tune a crate ahead of
//!   time through its tuning harness (see [`tune`](mod@tune)).
//! - `transfer --cache FILE ... [--k 4] [--json]`: leave one device out over the caches of one
//!   kernel (see [`transfer`](mod@transfer)).
//! - `study create|status|export|delete|setup-roles [--db CONNINFO] ...`,
//!   `coordinator [--db CONNINFO] STUDY`, `worker [--db CONNINFO] [--devices ...] [--allow DIR]`:
//!   distributed tuning with PostgreSQL as the shared state, reached as `psql` reaches it (libpq
//!   environment, `~/.pgpass`, TLS with `sslmode`; see [`study`](mod@study),
//!   [`coordinator`](mod@coordinator), [`worker`](mod@worker)).

mod anytime;
mod artifacts;
mod bench;
mod caches;
mod chain;
mod coordinator;
mod cost;
mod date;
mod family;
mod front;
mod gap;
mod loko;
mod plot;
mod show;
mod shown;
mod space;
mod study;
mod transfer;
mod tune;
mod warm;
mod worker;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

// `term_width = 0`: help is never wrapped, so it reads the same whichever features clap was built
// with (a workspace build turns on `wrap_help`, `cargo install` does not) and the generated
// reference `docs/src/reference/cli.md` matches every build.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo", term_width = 0)]
enum Cargo {
    /// Tools of the tunable auto-tuner.
    #[command(subcommand, version)]
    Tunable(Command),
}

/// The subcommands of `cargo tunable`.
#[derive(Subcommand)]
enum Command {
    /// Search spaces: build, count and time them.
    #[command(subcommand)]
    Space(space::SpaceCommand),
    /// Run strategies on replayed Kernel Tuner caches (or synthetic functions, or generated stress
    /// landscapes) and score them.
    Bench(Box<bench::BenchArgs>),
    /// Print the tuned configurations of a crate.
    Show(show::ShowArgs),
    /// Tune a crate ahead of time: run its tuning harness (`examples/tune.rs`) with the
    /// `autotune` feature and print a summary table.
    Tune(tune::TuneArgs),
    /// Leave one device out over the caches of one kernel: how well other devices' winners, one
    /// portable configuration and a re-timed portable set serve the held-out device.
    Transfer(transfer::TransferArgs),
    /// Distributed tuning: create, watch, export and delete studies in PostgreSQL.
    #[command(subcommand)]
    Study(study::StudyCommand),
    /// Distributed tuning: run the one coordinator of a study.
    Coordinator(coordinator::CoordinatorArgs),
    /// Distributed tuning: evaluate studies' jobs on this machine's devices.
    Worker(worker::WorkerArgs),
    /// Performs one evaluation task read from standard input (started by workers).
    #[command(name = "__evaluate", hide = true)]
    Evaluate,
}

fn main() -> ExitCode {
    let Cargo::Tunable(cmd) = Cargo::parse();
    let result = match cmd {
        Command::Space(c) => space::run(c),
        Command::Bench(a) => bench::run(*a),
        Command::Show(a) => show::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Transfer(a) => transfer::run(a),
        Command::Study(c) => study::run(c),
        Command::Coordinator(a) => coordinator::run(a),
        Command::Worker(a) => worker::run(a),
        Command::Evaluate => std::process::exit(worker::evaluate()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
