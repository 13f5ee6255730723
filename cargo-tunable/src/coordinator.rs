//! # `cargo tunable coordinator`
//!
//! ```text
//! cargo tunable coordinator [--db CONNINFO] STUDY [--poll-ms 500] [--reconnect-timeout 300]
//! ```
//!
//! Runs the one coordinator of a study until every evaluation of its budget has a result (see
//! `tunable_distributed::coordinator`). Started again after a crash or a kill, it resumes from
//! the database without measuring anything again; a second one on a running study is refused.

use clap::Args;
use std::time::Duration;
use tunable_distributed::coordinator::{self, CoordinatorOptions};

/// Arguments of `coordinator`.
#[derive(Args)]
pub(crate) struct CoordinatorArgs {
    /// The database: a connection string as `psql` takes it (`postgres://user@host/db?sslmode=verify-full`
    /// or `host=... sslmode=...`); default: libpq's environment (`PGHOST`, `PGUSER`,
    /// `PGDATABASE`, `PGSSLMODE`, ...). Keep passwords out of it: `PGPASSWORD` or `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// The study to coordinate.
    study: String,
    /// Longest wait between looks at the database, in milliseconds.
    #[arg(long, default_value_t = 500)]
    poll_ms: u64,
    /// Seconds to keep reconnecting after losing the database.
    #[arg(long, default_value_t = 300.0)]
    reconnect_timeout: f64,
}

pub(crate) fn run(a: CoordinatorArgs) -> Result<(), Box<dyn std::error::Error>> {
    let opts = CoordinatorOptions {
        poll: Duration::from_millis(a.poll_ms.max(1)),
        reconnect: Duration::try_from_secs_f64(a.reconnect_timeout).map_err(|_| {
            format!(
                "--reconnect-timeout {} is not a duration",
                a.reconnect_timeout
            )
        })?,
    };
    let r = coordinator::run(a.db.as_deref().unwrap_or(""), &a.study, &opts)?;
    if r.already_done {
        println!("study {} is finished already", a.study);
        return Ok(());
    }
    let resumed = if r.resumed_events > 0 {
        format!(
            ", resumed after {} recorded asks and tells",
            r.resumed_events
        )
    } else {
        String::new()
    };
    println!(
        "study {} done: {} configurations asked in {} asks (largest batch {}){resumed}, {:.1} s",
        a.study, r.asked, r.asks, r.largest_batch, r.seconds
    );
    Ok(())
}
