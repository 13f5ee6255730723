//! # Where a study stands
//!
//! [`status`] reads a study's progress for `cargo tunable study status`: its jobs by state, its
//! results, the best one, the throughput and who holds its coordinator lock
//! ([`crate::coordinator::holder`]). Reached as `study::status`.

use crate::db::Db;
use crate::error::DistError;
use crate::study::Study;

/// Where a study stands.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyStatus {
    /// The study.
    pub study: Study,
    /// Jobs waiting for a worker.
    pub pending: usize,
    /// Jobs being evaluated (under a valid lease).
    pub running: usize,
    /// Jobs whose lease expired, to be claimed again.
    pub expired: usize,
    /// Results recorded.
    pub results: usize,
    /// Of those, failed configurations.
    pub failed: usize,
    /// Jobs claimed more than once (a worker or its connection died while evaluating them).
    pub retried: usize,
    /// The best result: its configuration (Kernel Tuner key) and time in ms.
    pub best: Option<(String, f64)>,
    /// The connection holding the study's coordinator lock, if one runs.
    pub coordinator: Option<String>,
    /// Results per second between the first claim and the last result.
    pub throughput: Option<f64>,
}

/// Where a study stands.
pub fn status(db: &mut Db, study: &Study) -> Result<StudyStatus, DistError> {
    let id = study.id;
    let row = db.retry("reading a study's status", |c| {
        c.query_one(
            "SELECT
               (SELECT COUNT(*) FROM tunable.jobs WHERE study_id = $1 AND state = 'pending'),
               (SELECT COUNT(*) FROM tunable.jobs WHERE study_id = $1 AND state = 'running' AND lease_until >= now()),
               (SELECT COUNT(*) FROM tunable.jobs WHERE study_id = $1 AND state = 'running' AND lease_until < now()),
               (SELECT COUNT(*) FROM tunable.results WHERE study_id = $1),
               (SELECT COUNT(*) FROM tunable.results WHERE study_id = $1 AND failure IS NOT NULL),
               (SELECT COUNT(*) FROM tunable.jobs WHERE study_id = $1 AND attempts > 1),
               (SELECT EXTRACT(EPOCH FROM MAX(finished_at) - MIN(started_at))::float8
                  FROM tunable.results WHERE study_id = $1)",
            &[&id],
        )
    })?;
    let best = db.retry("reading the best result", |c| {
        c.query_opt(
            "SELECT j.config_key, r.time_ms FROM tunable.results r
             JOIN tunable.jobs j ON j.id = r.job_id
             WHERE r.study_id = $1 AND r.time_ms >= 0 AND r.time_ms < 'Infinity'::float8
             ORDER BY r.time_ms, r.tell_seq NULLS LAST, r.tell_rank, r.recorded LIMIT 1",
            &[&id],
        )
    })?;
    let count = |i: usize| row.get::<_, i64>(i) as usize;
    let results = count(3);
    let span: Option<f64> = row.get(6);
    Ok(StudyStatus {
        study: study.clone(),
        pending: count(0),
        running: count(1),
        expired: count(2),
        results,
        failed: count(4),
        retried: count(5),
        best: best.map(|r| (r.get(0), r.get(1))),
        coordinator: crate::coordinator::holder(db, study)?,
        throughput: span.filter(|s| *s > 0.0).map(|s| results as f64 / s),
    })
}
