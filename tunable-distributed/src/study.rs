//! # Studies
//!
//! A study is one tuning: a kernel on a device model for a problem-size key, a space, a strategy
//! with its seed, a budget of evaluations and how configurations are evaluated. It is created
//! once ([`create`]), driven by one coordinator, evaluated by any number of workers, watched with
//! [`status`] and exported when done ([`crate::export`]).

use crate::db::Db;
use crate::error::DistError;
use crate::evaluator::EvaluatorSpec;
use crate::history::Event;
use postgres::Row;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tunable_search::Space;
use tunable_search::space::SpaceDef;
use tunable_search::strategy::{self, Outcome, StrategySpec};

pub use crate::status::{StudyStatus, status};

/// What a study is, as given when creating it.
#[derive(Clone, Debug, PartialEq)]
pub struct StudySpec {
    /// Its unique name.
    pub name: String,
    /// The kernel tuned (the tuned file is `<kernel>.bin`).
    pub kernel: String,
    /// The device model it is tuned for, as stored in the tuned file.
    pub device: String,
    /// The problem-size key.
    pub key: u64,
    /// The strategy spec, e.g. `auto` or `genetic:popsize=20`.
    pub strategy: String,
    /// The strategy's seed.
    pub seed: u64,
    /// Unique evaluations to spend (fewer if the space is smaller).
    pub budget: usize,
    /// How configurations are evaluated.
    pub evaluator: EvaluatorSpec,
    /// A child evaluation running longer than this is killed and recorded failed.
    pub timeout: Duration,
    /// How many times a job may be claimed (a worker that dies loses its claim); past this the
    /// job is recorded failed.
    pub max_attempts: u32,
}

/// Whether a study still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudyState {
    /// Its coordinator has not finished it.
    Open,
    /// Every evaluation of its budget has a result.
    Done,
}

/// A study as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    /// Its id in the database.
    pub id: i64,
    /// What it is (its space is loaded by [`load_space`]).
    pub spec: StudySpec,
    /// The fingerprint of its space.
    pub space_hash: u64,
    /// Open or done.
    pub state: StudyState,
    /// When it was created, in seconds since the Unix epoch.
    pub created: f64,
    /// When it was finished.
    pub finished: Option<f64>,
}

/// One recorded result, as exported.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedResult {
    /// The configuration's Kernel Tuner key.
    pub key: String,
    /// The configuration: each parameter's name and value, in the space's order.
    pub config: Vec<(String, tunable_search::Value)>,
    /// Its outcome.
    pub outcome: Outcome,
    /// The reason of a failure.
    pub failure: Option<String>,
    /// The worker that recorded it.
    pub worker: String,
    /// The device it ran on.
    pub device: String,
    /// Which claim of its job gave it (1 = first).
    pub attempt: i32,
}

/// The longest evaluation time-out a study may have (7 days); the schema checks it too.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// A stored time-out in seconds as a duration: finite, positive and at most [`MAX_TIMEOUT`];
/// `Err` says what is wrong (a row written around the schema's checks, say `'Infinity'`).
pub fn checked_timeout(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT.as_secs_f64() {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "its time-out ({seconds} s) is not a number of seconds above 0 and at most {}",
            MAX_TIMEOUT.as_secs()
        ))
    }
}

/// The outcome of a stored time: a time in ms that is finite and not negative, else a failure
/// (a row written around the schema's checks never wins nor reaches a strategy as a time).
pub fn outcome_of(time_ms: Option<f64>) -> Outcome {
    match time_ms {
        Some(t) if t.is_finite() && t >= 0.0 => Outcome::Value(t),
        _ => Outcome::Failed,
    }
}

/// Creates a study searching `space` after checking it: its strategy builds, its space builds
/// and is not empty.
pub fn create(db: &mut Db, spec: &StudySpec, space: &SpaceDef) -> Result<Study, DistError> {
    // The kernel's name becomes file names on export (see `tunable_search::name`).
    if let Err(e) = tunable_search::name::check(&spec.kernel) {
        return Err(DistError::BadStudy {
            reason: e.to_string(),
        });
    }
    if spec.budget == 0 {
        return Err(DistError::BadStudy {
            reason: "the budget must be at least 1".to_owned(),
        });
    }
    if spec.max_attempts == 0 || spec.timeout.is_zero() {
        return Err(DistError::BadStudy {
            reason: "the time-out and the attempts allowed must be positive".to_owned(),
        });
    }
    if spec.timeout > MAX_TIMEOUT {
        return Err(DistError::BadStudy {
            reason: format!(
                "the time-out ({} s) is longer than the longest allowed, {} s",
                spec.timeout.as_secs_f64(),
                MAX_TIMEOUT.as_secs()
            ),
        });
    }
    let parsed: StrategySpec = spec.strategy.parse()?;
    let def = space;
    let space = Arc::new(def.build()?);
    if space.is_empty() {
        return Err(DistError::BadStudy {
            reason: "the space has no valid configuration".to_owned(),
        });
    }
    strategy::build(&parsed, Arc::clone(&space), spec.seed)?;
    let space_text = serde_json::to_string(def).expect("spaces encode");
    let evaluator = serde_json::to_string(&spec.evaluator).expect("evaluators encode");
    let hash = space.fingerprint();
    let budget = spec.budget.min(space.len()) as i32;
    let row = db
        .retry("creating a study", |c| {
            c.query_opt(
                "INSERT INTO tunable.studies (name, kernel, device, problem_key, space, space_hash,
                     strategy, seed, budget, evaluator, timeout_s, max_attempts)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (name) DO NOTHING
                 RETURNING id",
                &[
                    &spec.name,
                    &spec.kernel,
                    &spec.device,
                    &(spec.key as i64),
                    &space_text,
                    &(hash as i64),
                    &spec.strategy,
                    &(spec.seed as i64),
                    &budget,
                    &evaluator,
                    &spec.timeout.as_secs_f64(),
                    &(spec.max_attempts as i32),
                ],
            )
        })?
        .ok_or_else(|| DistError::StudyExists {
            name: spec.name.clone(),
        })?;
    let id: i64 = row.get(0);
    load_by(db, "s.id = $1", &id)?.ok_or(DistError::UnknownStudy {
        name: spec.name.clone(),
    })
}

const COLUMNS: &str = "s.id, s.name, s.kernel, s.device, s.problem_key, s.space_hash, s.strategy,
    s.seed, s.budget, s.evaluator, s.timeout_s, s.max_attempts, s.state,
    EXTRACT(EPOCH FROM s.created_at)::float8, EXTRACT(EPOCH FROM s.finished_at)::float8";

fn from_row(row: &Row) -> Result<Study, DistError> {
    let evaluator: String = row.get(9);
    let state: String = row.get(12);
    let name: String = row.get(1);
    let timeout = checked_timeout(row.get(10)).map_err(|reason| DistError::BadStudy {
        reason: format!("study '{name}': {reason}"),
    })?;
    Ok(Study {
        id: row.get(0),
        spec: StudySpec {
            name: row.get(1),
            kernel: row.get(2),
            device: row.get(3),
            key: row.get::<_, i64>(4) as u64,
            strategy: row.get(6),
            seed: row.get::<_, i64>(7) as u64,
            budget: row.get::<_, i32>(8) as usize,
            evaluator: serde_json::from_str(&evaluator).map_err(|source| DistError::Json {
                what: "evaluator",
                source,
            })?,
            timeout,
            max_attempts: row.get::<_, i32>(11) as u32,
        },
        space_hash: row.get::<_, i64>(5) as u64,
        state: if state == "done" {
            StudyState::Done
        } else {
            StudyState::Open
        },
        created: row.get(13),
        finished: row.get(14),
    })
}

fn load_by(
    db: &mut Db,
    condition: &str,
    arg: &(dyn postgres::types::ToSql + Sync),
) -> Result<Option<Study>, DistError> {
    let sql = format!("SELECT {COLUMNS} FROM tunable.studies s WHERE {condition}");
    let row = db.retry("reading a study", |c| c.query_opt(&sql, &[arg]))?;
    row.as_ref().map(from_row).transpose()
}

/// The study of this name.
pub fn load(db: &mut Db, name: &str) -> Result<Study, DistError> {
    load_by(db, "s.name = $1", &name)?.ok_or_else(|| DistError::UnknownStudy {
        name: name.to_owned(),
    })
}

/// Every study, oldest first.
pub fn list(db: &mut Db) -> Result<Vec<Study>, DistError> {
    let sql = format!("SELECT {COLUMNS} FROM tunable.studies s ORDER BY s.id");
    let rows = db.retry("listing studies", |c| c.query(&sql, &[]))?;
    rows.iter().map(from_row).collect()
}

/// Rebuilds a study's space from its stored definition, checking its fingerprint.
pub fn load_space(db: &mut Db, study: &Study) -> Result<Arc<Space>, DistError> {
    let text: String = db
        .retry("reading a study's space", |c| {
            c.query_one(
                "SELECT space FROM tunable.studies WHERE id = $1",
                &[&study.id],
            )
        })?
        .get(0);
    let def: SpaceDef = serde_json::from_str(&text).map_err(|source| DistError::Json {
        what: "space",
        source,
    })?;
    let space = def.build()?;
    if space.fingerprint() != study.space_hash {
        return Err(DistError::SpaceMismatch {
            study: study.spec.name.clone(),
            stored: study.space_hash,
            rebuilt: space.fingerprint(),
        });
    }
    Ok(Arc::new(space))
}

/// The study's events in order (see [`crate::history`]).
pub fn history(db: &mut Db, study: &Study) -> Result<Vec<Event>, DistError> {
    let id = study.id;
    let (events, jobs, results) = db.retry("reading a study's history", |c| {
        let mut tx = c.build_transaction().read_only(true).start()?;
        let events = tx.query(
            "SELECT seq, kind, requested FROM tunable.events WHERE study_id = $1 ORDER BY seq",
            &[&id],
        )?;
        let jobs = tx.query(
            "SELECT ask_seq, config_key FROM tunable.jobs WHERE study_id = $1
             ORDER BY ask_seq, ask_rank",
            &[&id],
        )?;
        let results = tx.query(
            "SELECT r.tell_seq, j.config_key, r.time_ms FROM tunable.results r
             JOIN tunable.jobs j ON j.id = r.job_id
             WHERE r.study_id = $1 AND r.tell_seq IS NOT NULL ORDER BY r.tell_seq, r.tell_rank",
            &[&id],
        )?;
        tx.commit()?;
        Ok((events, jobs, results))
    })?;
    let mut asked: HashMap<i32, Vec<String>> = HashMap::new();
    for row in &jobs {
        asked.entry(row.get(0)).or_default().push(row.get(1));
    }
    let mut told: HashMap<i32, Vec<(String, Outcome)>> = HashMap::new();
    for row in &results {
        let time: Option<f64> = row.get(2);
        told.entry(row.get(0))
            .or_default()
            .push((row.get(1), outcome_of(time)));
    }
    let mut out = Vec::with_capacity(events.len());
    for (i, row) in events.iter().enumerate() {
        let seq: i32 = row.get(0);
        if seq != i as i32 + 1 {
            return Err(DistError::BadHistory {
                study: study.spec.name.clone(),
                reason: format!("event {} is missing", i + 1),
            });
        }
        let kind: String = row.get(1);
        out.push(if kind == "ask" {
            let requested: Option<i32> = row.get(2);
            Event::Ask {
                requested: requested.unwrap_or(0) as usize,
                keys: asked.remove(&seq).unwrap_or_default(),
            }
        } else {
            Event::Tell {
                results: told.remove(&seq).unwrap_or_default(),
            }
        });
    }
    Ok(out)
}

/// Every result, in the order the strategy was told them, then those not told yet in the order
/// they were recorded.
pub fn results(db: &mut Db, study: &Study) -> Result<Vec<RecordedResult>, DistError> {
    let rows = db.retry("reading results", |c| {
        c.query(
            "SELECT j.config_key, r.time_ms, r.failure, r.worker, r.device, r.attempt, j.config
             FROM tunable.results r JOIN tunable.jobs j ON j.id = r.job_id
             WHERE r.study_id = $1
             ORDER BY r.tell_seq NULLS LAST, r.tell_rank, r.recorded",
            &[&study.id],
        )
    })?;
    rows.iter()
        .map(|row| {
            let time: Option<f64> = row.get(1);
            Ok(RecordedResult {
                key: row.get(0),
                config: crate::queue::parse_config(row.get(6))?,
                outcome: outcome_of(time),
                failure: row.get(2),
                worker: row.get(3),
                device: row.get(4),
                attempt: row.get(5),
            })
        })
        .collect()
}

/// Marks a study done, waking the workers waiting for jobs (so they can stop).
pub(crate) fn finish(db: &mut Db, study: &Study) -> Result<(), DistError> {
    db.retry("finishing the study", |c| {
        let mut tx = c.transaction()?;
        tx.execute(
            "UPDATE tunable.studies SET state = 'done', finished_at = COALESCE(finished_at, now())
             WHERE id = $1",
            &[&study.id],
        )?;
        tx.execute("SELECT pg_notify($1, '')", &[&crate::queue::JOBS_CHANNEL])?;
        tx.commit()
    })
}

/// Deletes a study and everything recorded for it.
pub fn delete(db: &mut Db, study: &Study) -> Result<(), DistError> {
    db.retry("deleting the study", |c| {
        c.execute("DELETE FROM tunable.studies WHERE id = $1", &[&study.id])
    })
    .map(drop)
}
