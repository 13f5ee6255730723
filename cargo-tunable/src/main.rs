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
//! - `show [DIR] [--json]`: print the tuned configurations stored in DIR (default `tuned/`).

mod anytime;
mod bench;
mod family;
mod gap;
mod loko;
mod plot;
mod show;
mod space;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
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
    /// Run strategies on replayed Kernel Tuner caches (or synthetic functions) and score them.
    Bench(Box<bench::BenchArgs>),
    /// Print the tuned configurations of a crate.
    Show(show::ShowArgs),
}

fn main() -> ExitCode {
    let Cargo::Tunable(cmd) = Cargo::parse();
    let result = match cmd {
        Command::Space(c) => space::run(c),
        Command::Bench(a) => bench::run(*a),
        Command::Show(a) => show::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
