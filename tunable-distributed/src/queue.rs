//! # The job queue: claims, leases, results
//!
//! Jobs are rows of `tunable.jobs`. A worker slot [claims](claim) the oldest claimable job with
//! `SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent workers never wait on each other nor take
//! the same job, and holds it under a lease that it [renews](renew) while the evaluation runs. A
//! job is claimable when pending, or running under an expired lease: a worker killed mid-way
//! (or cut from the database) loses its job, which another claims again; each claim counts an
//! attempt. A job claimed more often than its study allows is recorded failed instead of run
//! again (a configuration that kills its worker every time must not stall a study).
//!
//! A job whose stored configuration does not decode (written around the tools) is a **poison
//! job**: its claim carries the reason ([`Claim::poison`]) and the worker records it failed,
//! naming the job and its study, without running anything, and goes on (a dead letter).
//!
//! A [result](record) is keyed by its job: `INSERT ... ON CONFLICT DO NOTHING` records the first
//! result of a job and ignores any later one (from a worker whose lease expired while it still
//! finished), so a configuration's result is recorded exactly once. Recording notifies the
//! coordinators.

use crate::db::Db;
use crate::error::DistError;
use std::time::Duration;
use tunable_search::{Space, Value};

/// Coordinators listen here: a result was recorded, or a worker came.
pub const EVENTS_CHANNEL: &str = "tunable_events";
/// Workers listen here: jobs were created.
pub const JOBS_CHANNEL: &str = "tunable_jobs";

/// A claimed job.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// The job's id.
    pub job: i64,
    /// Its study's id.
    pub study: i64,
    /// The configuration: each parameter's name and value, in the space's order (empty for a
    /// poison job).
    pub config: Vec<(String, Value)>,
    /// Why the job cannot be evaluated: its stored configuration does not decode. It is
    /// recorded failed, naming the job and study, never run.
    pub poison: Option<String>,
    /// Its Kernel Tuner key.
    pub key: String,
    /// Which claim this is (1 = first).
    pub attempt: i32,
    /// When it was claimed, in seconds since the Unix epoch (server time).
    pub claimed_at: f64,
}

/// The configuration of a job as stored: a JSON object, parameters in order.
pub(crate) fn config_json(config: &[(String, Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = config
        .iter()
        .map(|(n, v)| (n.clone(), serde_json::to_value(v).expect("values encode")))
        .collect();
    serde_json::Value::Object(map).to_string()
}

pub(crate) fn parse_config(text: &str) -> Result<Vec<(String, Value)>, DistError> {
    let json = |source| DistError::Json {
        what: "configuration",
        source,
    };
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(json)?;
    map.into_iter()
        .map(|(n, v)| serde_json::from_value(v).map(|v| (n, v)).map_err(json))
        .collect()
}

/// A configuration's values in the order of `space`'s parameters, matched by name; `Err` names
/// a parameter the configuration lacks.
pub fn ordered_values(space: &Space, config: &[(String, Value)]) -> Result<Vec<Value>, String> {
    space
        .params()
        .iter()
        .map(|p| {
            config
                .iter()
                .find(|(name, _)| name == p.name())
                .map(|(_, v)| v.clone())
                .ok_or_else(|| format!("the configuration has no parameter '{}'", p.name()))
        })
        .collect()
}

/// Claims the oldest claimable job of the studies `studies` for `worker` on `device`, under a
/// lease of `lease`.
pub fn claim(
    db: &mut Db,
    studies: &[i64],
    worker: &str,
    device: &str,
    lease: Duration,
) -> Result<Option<Claim>, DistError> {
    if studies.is_empty() {
        return Ok(None);
    }
    let lease_s = lease.as_secs_f64();
    let row = db.retry("claiming a job", |c| {
        c.query_opt(
            "UPDATE tunable.jobs j
             SET state = 'running', attempts = j.attempts + 1, worker = $2, device = $3,
                 claimed_at = now(), lease_until = now() + make_interval(secs => $4)
             WHERE j.id = (
                 SELECT id FROM tunable.jobs
                 WHERE study_id = ANY($1) AND state <> 'done'
                   AND (state = 'pending' OR lease_until < now())
                 ORDER BY id LIMIT 1
                 FOR UPDATE SKIP LOCKED)
             RETURNING j.id, j.study_id, j.config, j.config_key, j.attempts,
                 EXTRACT(EPOCH FROM j.claimed_at)::float8",
            &[&studies, &worker, &device, &lease_s],
        )
    })?;
    Ok(row.map(|row| {
        let job: i64 = row.get(0);
        let study: i64 = row.get(1);
        let (config, poison) = match parse_config(row.get(2)) {
            Ok(config) => (config, None),
            Err(e) => (
                Vec::new(),
                Some(format!("its configuration does not decode ({e})")),
            ),
        };
        Claim {
            job,
            study,
            config,
            poison,
            key: row.get(3),
            attempt: row.get(4),
            claimed_at: row.get(5),
        }
    }))
}

/// Extends the lease of a claimed job; `false` if the job is no longer this claim's (its lease
/// expired and another worker took it, or it has a result).
pub fn renew(db: &mut Db, claim: &Claim, worker: &str, lease: Duration) -> Result<bool, DistError> {
    let lease_s = lease.as_secs_f64();
    let n = db.retry("renewing a lease", |c| {
        c.execute(
            "UPDATE tunable.jobs SET lease_until = now() + make_interval(secs => $4)
             WHERE id = $1 AND worker = $2 AND attempts = $3 AND state = 'running'",
            &[&claim.job, &worker, &claim.attempt, &lease_s],
        )
    })?;
    Ok(n == 1)
}

/// Records the result of a claimed job (milliseconds, or the failure's reason); `false` if the
/// job already had one (the first result stands). A time that is not finite or negative is
/// recorded as a failure saying so, a long reason cut ([`crate::child::checked`]).
pub fn record(
    db: &mut Db,
    claim: &Claim,
    worker: &str,
    device: &str,
    result: &Result<f64, String>,
) -> Result<bool, DistError> {
    let result = crate::child::checked(result.clone());
    let (time, failure) = match &result {
        Ok(t) => (Some(*t), None),
        Err(reason) => (None, Some(reason.as_str())),
    };
    db.retry("recording a result", |c| {
        let mut tx = c.transaction()?;
        let n = tx.execute(
            "INSERT INTO tunable.results
                 (job_id, study_id, time_ms, failure, worker, device, attempt, started_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8))
             ON CONFLICT (job_id) DO NOTHING",
            &[
                &claim.job,
                &claim.study,
                &time,
                &failure,
                &worker,
                &device,
                &claim.attempt,
                &claim.claimed_at,
            ],
        )?;
        tx.execute(
            "UPDATE tunable.jobs SET state = 'done', lease_until = NULL WHERE id = $1",
            &[&claim.job],
        )?;
        tx.execute("SELECT pg_notify($1, '')", &[&EVENTS_CHANNEL])?;
        tx.commit()?;
        Ok(n == 1)
    })
}

/// Evaluation slots free in the pool for `study`: the slots of live workers (heartbeat within
/// their lease) less the jobs pending or running under a valid lease, over all studies, and less
/// `study`'s results not yet told. A result recorded but not told still holds its slot, so the
/// coordinator tells it before it asks again: with one slot the calls are ask one, tell one
/// whatever the timing (a result that landed between reading the untold results and counting
/// the slots once let the coordinator ask a second configuration first).
pub fn idle_slots(db: &mut Db, study: i64) -> Result<usize, DistError> {
    let n: i64 = db
        .retry("counting idle workers", |c| {
            c.query_one(
                "SELECT GREATEST(0,
                     COALESCE((SELECT SUM(slots) FROM tunable.workers
                               WHERE last_seen + make_interval(secs => lease_s) > now()), 0)
                   - (SELECT COUNT(*) FROM tunable.jobs
                      WHERE state = 'pending' OR (state = 'running' AND lease_until > now()))
                   - (SELECT COUNT(*) FROM tunable.results
                      WHERE study_id = $1 AND tell_seq IS NULL))::bigint",
                &[&study],
            )
        })?
        .get(0);
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_keep_their_order_and_kinds() {
        let cfg = vec![
            ("z".to_owned(), Value::Int(3)),
            ("a".to_owned(), Value::Float(1.0)),
            ("m".to_owned(), Value::Str("x".into())),
            ("b".to_owned(), Value::Bool(true)),
        ];
        let text = config_json(&cfg);
        assert_eq!(text, r#"{"z":3,"a":1.0,"m":"x","b":true}"#);
        assert_eq!(parse_config(&text).unwrap(), cfg);
    }
}
