//! # `cargo tunable worker`
//!
//! ```text
//! cargo tunable worker [--db CONNINFO] [--devices 0,1,...] [--study NAME]...
//!     [--harness-bin PATH]... [--allow DIR]... [--build-timeout 1800]
//!     [--exit-when-done] [--lease 30] [--poll-ms 1000] [--reconnect-timeout 300] [--verbose]
//! ```
//!
//! The database is reached as `psql` reaches it: `--db` (a URL or `key=value` string, no
//! password needed in it), else libpq's environment variables and `~/.pgpass`; TLS with
//! `sslmode` and `sslrootcert` (see `tunable_distributed::conninfo`).
//!
//! Evaluates the jobs of open studies on this machine, one slot per device (see
//! `tunable_distributed::worker`). Each evaluation runs in a child process, so a crash or hang
//! costs one evaluation, never the worker: for a study made with `study create --harness`, the
//! crate's tuning harness (built once per worker with `cargo build --features autotune`, using
//! the worker's `CARGO_TARGET_DIR` if set), measuring one configuration; for a replay, this same
//! binary's hidden `__evaluate` command. The child sees its slot's device in `TUNABLE_DEVICE`,
//! runs in its own process group (killed whole at the time-out) and gets none of the worker's
//! database credentials (`PG*`, `DATABASE_URL`, `TUNABLE_DB` are removed from its environment).
//!
//! **Trust.** A worker builds a study's crate only if it is inside a folder given with `--allow`
//! (building runs the crate's code, and the path comes from the database); otherwise a harness
//! study runs only on a `--harness-bin` that fits, and is refused with the reason.
//!
//! `--harness-bin` gives harness executables built elsewhere (`cargo build --release --features
//! autotune --example tune`, copied to this machine): a harness study uses the first of them
//! whose kernel has the study's space, and is built from its crate only if none does. A machine
//! that evaluates with prebuilt harnesses needs neither cargo nor the crate; a harness runs in
//! the crate's folder if this machine has it, else in the worker's.

use clap::Args;
use std::time::Duration;
use tunable_distributed::Launcher;
use tunable_distributed::worker::{self, WorkerOptions};

/// Arguments of `worker`.
#[derive(Args)]
pub(crate) struct WorkerArgs {
    /// The database: a connection string as `psql` takes it (`postgres://user@host/db?sslmode=verify-full`
    /// or `host=... sslmode=...`); default: libpq's environment (`PGHOST`, `PGUSER`,
    /// `PGDATABASE`, `PGSSLMODE`, ...). Keep passwords out of it: `PGPASSWORD` or `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// Devices to serve, comma-separated: one evaluation slot each.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    devices: Vec<String>,
    /// Serve only this study (repeat for several; default: every open study).
    #[arg(long = "study")]
    studies: Vec<String>,
    /// A harness executable built elsewhere, tried before building a study's harness (repeat
    /// for several; the first whose kernel has the study's space is used).
    #[arg(long = "harness-bin", value_name = "PATH")]
    harnesses: Vec<std::path::PathBuf>,
    /// A folder whose crates this worker may build and run for harness studies (repeat for
    /// several; default none: only `--harness-bin` harnesses run).
    #[arg(long = "allow", value_name = "DIR")]
    allow: Vec<std::path::PathBuf>,
    /// Seconds a harness build may take before it is killed.
    #[arg(long, default_value_t = 1800.0)]
    build_timeout: f64,
    /// Stop once no served study is open.
    #[arg(long)]
    exit_when_done: bool,
    /// Lease on a claimed job in seconds (renewed every third of it): a worker that dies delays
    /// its jobs by up to this much.
    #[arg(long, default_value_t = 30.0)]
    lease: f64,
    /// Longest wait between looks for jobs, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    poll_ms: u64,
    /// Seconds to keep reconnecting after losing the database.
    #[arg(long, default_value_t = 300.0)]
    reconnect_timeout: f64,
    /// Print a line per evaluation.
    #[arg(long)]
    verbose: bool,
}

pub(crate) fn run(a: WorkerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let seconds = |v: f64, what: &str| {
        Duration::try_from_secs_f64(v).map_err(|_| format!("--{what} {v} is not a duration"))
    };
    let launcher = Launcher {
        program: std::env::current_exe()?.into_os_string(),
        args: vec!["tunable".into(), "__evaluate".into()],
    };
    let opts = WorkerOptions {
        devices: a.devices,
        studies: a.studies,
        exit_when_done: a.exit_when_done,
        lease: seconds(a.lease, "lease")?,
        poll: Duration::from_millis(a.poll_ms.max(1)),
        reconnect: seconds(a.reconnect_timeout, "reconnect-timeout")?,
        launcher,
        harnesses: a.harnesses,
        allow: a.allow,
        build_timeout: seconds(a.build_timeout, "build-timeout")?,
        verbose: a.verbose,
    };
    let r = worker::run(a.db.as_deref().unwrap_or(""), &opts)?;
    println!(
        "worker done: {} results recorded ({} failed, {} dropped as recorded already), {:.1} s",
        r.recorded, r.failed, r.dropped, r.seconds
    );
    Ok(())
}

/// The hidden `__evaluate` command: performs one built-in task read from standard input.
pub(crate) fn evaluate() -> i32 {
    tunable_distributed::task::serve(&mut std::io::stdin().lock(), &mut std::io::stdout().lock())
}
