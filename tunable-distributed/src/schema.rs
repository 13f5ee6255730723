//! # Schema and migrations
//!
//! Everything lives in the PostgreSQL schema `tunable`, so the tables can share a database with
//! others. `tunable.schema_version` lists the migrations applied; [`migrate`] (run on every
//! connection, a single query when up to date) applies the missing ones in order, in one
//! transaction under an advisory lock, so concurrent first connections do not race. A database
//! with a newer version than this build knows is refused ([`DistError::SchemaTooNew`]).
//!
//! Version 1:
//!
//! | table | one row per | what it holds |
//! | --- | --- | --- |
//! | `studies` | study | kernel, device, problem key, space definition and fingerprint, strategy, seed, budget, evaluator, evaluation time-out, attempts allowed, state (`open`/`done`) |
//! | `events` | ask or tell of the coordinator | sequence number (per study), kind, how many configurations an ask requested |
//! | `jobs` | configuration asked | the ask it came from and its rank there, the configuration (JSON and Kernel Tuner key, unique per study), state (`pending`/`running`/`done`), attempts, lease holder and expiry |
//! | `results` | evaluated job (primary key: the job, so recorded once) | time in ms or the failure's reason, worker, device, attempt, start and end, and the tell that gave it to the strategy |
//! | `workers` | running worker | host, pid, devices, lease, last heartbeat |
//!
//! Version 2 adds checks against bad data written around the tools: a study's time-out is above
//! 0 s and at most 7 days (`'Infinity'` and `'NaN'` refused), a result's time is finite and not
//! negative, a failure's reason at most 10,000 characters. The checks are added `NOT VALID`:
//! rows already there are not checked (a database holding one still migrates), new and updated
//! rows are; the code checks what it reads as well ([`crate::study::checked_timeout`],
//! [`crate::study::outcome_of`]).
//!
//! Unsigned 64-bit values (problem key, space fingerprint) are stored as `BIGINT` with the same
//! bits.

use crate::conninfo::describe;
use crate::error::DistError;
use postgres::Client;

/// The schema version this build writes.
pub const LATEST: i32 = 2;

/// The advisory lock taken while migrating (`'tunable'` in ASCII).
const MIGRATION_LOCK: i64 = 0x0074_756e_6162_6c65;

const V1: &str = r"
CREATE TABLE tunable.studies (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    kernel TEXT NOT NULL,
    device TEXT NOT NULL,
    problem_key BIGINT NOT NULL,
    space TEXT NOT NULL,
    space_hash BIGINT NOT NULL,
    strategy TEXT NOT NULL,
    seed BIGINT NOT NULL,
    budget INTEGER NOT NULL CHECK (budget > 0),
    evaluator TEXT NOT NULL,
    timeout_s DOUBLE PRECISION NOT NULL CHECK (timeout_s > 0),
    max_attempts INTEGER NOT NULL CHECK (max_attempts > 0),
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done')),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ
);
CREATE TABLE tunable.events (
    study_id BIGINT NOT NULL REFERENCES tunable.studies (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('ask', 'tell')),
    requested INTEGER,
    at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (study_id, seq)
);
CREATE TABLE tunable.jobs (
    id BIGSERIAL PRIMARY KEY,
    study_id BIGINT NOT NULL,
    ask_seq INTEGER NOT NULL,
    ask_rank INTEGER NOT NULL,
    config TEXT NOT NULL,
    config_key TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    device TEXT,
    claimed_at TIMESTAMPTZ,
    lease_until TIMESTAMPTZ,
    FOREIGN KEY (study_id, ask_seq) REFERENCES tunable.events (study_id, seq) ON DELETE CASCADE,
    UNIQUE (study_id, config_key),
    UNIQUE (study_id, ask_seq, ask_rank)
);
CREATE INDEX jobs_open ON tunable.jobs (id) WHERE state <> 'done';
CREATE TABLE tunable.results (
    job_id BIGINT PRIMARY KEY REFERENCES tunable.jobs (id) ON DELETE CASCADE,
    study_id BIGINT NOT NULL REFERENCES tunable.studies (id) ON DELETE CASCADE,
    recorded BIGSERIAL NOT NULL UNIQUE,
    time_ms DOUBLE PRECISION,
    failure TEXT,
    worker TEXT NOT NULL,
    device TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    tell_seq INTEGER,
    tell_rank INTEGER,
    CHECK ((time_ms IS NULL) <> (failure IS NULL)),
    FOREIGN KEY (study_id, tell_seq) REFERENCES tunable.events (study_id, seq) ON DELETE CASCADE
);
CREATE INDEX results_untold ON tunable.results (study_id, recorded) WHERE tell_seq IS NULL;
CREATE TABLE tunable.workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    devices TEXT NOT NULL,
    slots INTEGER NOT NULL,
    lease_s DOUBLE PRECISION NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen TIMESTAMPTZ NOT NULL DEFAULT now()
);
";

const V2: &str = r"
ALTER TABLE tunable.studies ADD CONSTRAINT studies_timeout_bounded
    CHECK (timeout_s > 0 AND timeout_s <= 604800) NOT VALID;
ALTER TABLE tunable.results ADD CONSTRAINT results_time_valid
    CHECK (time_ms IS NULL OR (time_ms >= 0 AND time_ms < 'Infinity'::float8)) NOT VALID;
ALTER TABLE tunable.results ADD CONSTRAINT results_failure_bounded
    CHECK (failure IS NULL OR length(failure) <= 10000) NOT VALID;
";

/// Each migration: the version it brings the schema to, and its statements.
const MIGRATIONS: &[(i32, &str)] = &[(1, V1), (2, V2)];

/// The schema version of the database (0 if it has no tunable schema).
pub fn version(client: &mut Client) -> Result<i32, DistError> {
    let doing = |e: postgres::Error| DistError::Database {
        doing: "reading the schema version".to_owned(),
        reason: describe(&e),
    };
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('tunable.schema_version') IS NOT NULL",
            &[],
        )
        .map_err(doing)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tunable.schema_version",
            &[],
        )
        .map_err(doing)?
        .get(0))
}

/// Brings the schema up to date; answers the version it is at.
pub fn migrate(client: &mut Client) -> Result<i32, DistError> {
    let current = version(client)?;
    if current > LATEST {
        return Err(DistError::SchemaTooNew {
            found: current,
            known: LATEST,
        });
    }
    if current == LATEST {
        return Ok(current);
    }
    let err = |e: postgres::Error| DistError::Database {
        doing: "migrating the schema".to_owned(),
        reason: describe(&e),
    };
    let mut tx = client.transaction().map_err(err)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(err)?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS tunable;
         CREATE TABLE IF NOT EXISTS tunable.schema_version (
             version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now());",
    )
    .map_err(err)?;
    // Read again under the lock: another process may have migrated meanwhile.
    let current: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tunable.schema_version",
            &[],
        )
        .map_err(err)?
        .get(0);
    if current > LATEST {
        return Err(DistError::SchemaTooNew {
            found: current,
            known: LATEST,
        });
    }
    for (v, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        tx.batch_execute(sql).map_err(err)?;
        tx.execute(
            "INSERT INTO tunable.schema_version (version) VALUES ($1)",
            &[v],
        )
        .map_err(err)?;
    }
    tx.commit().map_err(err)?;
    Ok(LATEST)
}

#[cfg(test)]
mod tests {
    #[test]
    fn migrations_are_in_order_and_end_at_latest() {
        let versions: Vec<i32> = super::MIGRATIONS.iter().map(|(v, _)| *v).collect();
        assert!(
            versions.windows(2).all(|w| w[0] + 1 == w[1]),
            "{versions:?}"
        );
        assert_eq!(versions.first(), Some(&1));
        assert_eq!(versions.last(), Some(&super::LATEST));
    }
}
