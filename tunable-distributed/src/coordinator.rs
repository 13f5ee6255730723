//! # The coordinator
//!
//! One coordinator per study owns its strategy: it is the only writer of asks and tells. It
//!
//! 1. takes the study's lock, a session-level advisory lock in PostgreSQL: a second coordinator
//!    on the same study is refused ([`DistError::CoordinatorRunning`], naming the holder), and the
//!    lock goes away by itself when the holder's connection ends (process killed, machine gone
//!    once the server notices). The events' sequence numbers are a primary key besides, so even
//!    two coordinators that both believed they held the lock could not both record an event;
//! 2. rebuilds the strategy by replaying the study's history ([`crate::history`]): a coordinator
//!    killed and started again continues where the last committed event left it, without
//!    measuring anything again;
//! 3. loops: tells the strategy every result recorded since the last tell (one tell per batch of
//!    new results, in recording order), then asks it for as many configurations as the worker
//!    pool has idle slots ([`queue::idle_slots`]: a result not yet told holds its slot; at least
//!    one when nothing is in flight), each
//!    call recorded as an event in the same transaction as its jobs or results. It sleeps on a
//!    PostgreSQL notification (a result recorded, a worker arrived) or the poll interval;
//! 4. when the budget is asked and every result told (or the space is used up), marks the study
//!    done.
//!
//! If the connection is lost it reconnects ([`Db`]), takes the lock again (if another
//! coordinator took the study meanwhile: [`DistError::LostStudy`]) and rebuilds the strategy from
//! the database, since the last transaction may or may not have committed.
//!
//! Batches are the size of the idle pool: Bayesian optimization fills a batch with its constant
//! liar, the evolutionary strategies with a generation's members; with one worker slot the calls
//! are exactly those of local tuning (ask one, tell one).

use crate::db::Db;
use crate::error::DistError;
use crate::history::StrategyState;
use crate::queue::{self, EVENTS_CHANNEL, JOBS_CHANNEL};
use crate::study::{self, Study, StudyState};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tunable_search::Space;
use tunable_search::strategy::{self, Outcome, StrategySpec};

/// The key of a study's coordinator lock: its id, whole (a 64-bit advisory lock, so no two
/// studies share one; an id cut to 32 bits would make ids 2^32 apart collide).
fn lock_key(study: &Study) -> i64 {
    study.id
}

/// How a coordinator runs.
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinatorOptions {
    /// Longest sleep between looks at the database when no notification comes (default 0.5 s).
    pub poll: Duration,
    /// How long to try reconnecting after losing the database (default 300 s).
    pub reconnect: Duration,
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        CoordinatorOptions {
            poll: Duration::from_millis(500),
            reconnect: crate::db::DEFAULT_RECONNECT,
        }
    }
}

/// What a coordinator did.
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinatorReport {
    /// Whether the study was finished before this coordinator started.
    pub already_done: bool,
    /// Events replayed from the history when starting (0 for a new study).
    pub resumed_events: usize,
    /// Configurations asked (over the study's whole life).
    pub asked: usize,
    /// Asks made by this coordinator.
    pub asks: usize,
    /// The largest batch it asked for.
    pub largest_batch: usize,
    /// Times it rebuilt its strategy after a lost connection.
    pub rebuilds: usize,
    /// Wall time.
    pub seconds: f64,
}

/// Coordinates the study `name` until it is done.
pub fn run(
    url: &str,
    name: &str,
    opts: &CoordinatorOptions,
) -> Result<CoordinatorReport, DistError> {
    let start = Instant::now();
    let mut db = Db::connect(url, &format!("tunable coordinator {}", crate::ident::me()))?;
    db.set_reconnect_timeout(opts.reconnect);
    let study = study::load(&mut db, name)?;
    let mut report = CoordinatorReport {
        already_done: study.state == StudyState::Done,
        resumed_events: 0,
        asked: 0,
        asks: 0,
        largest_batch: 0,
        rebuilds: 0,
        seconds: 0.0,
    };
    if report.already_done {
        return Ok(report);
    }
    let space = study::load_space(&mut db, &study)?;
    let spec: StrategySpec = study.spec.strategy.parse()?;
    lock(&mut db, &study)?;
    db.listen(EVENTS_CHANNEL)?;
    let mut state = resume(&mut db, &study, &space, &spec)?;
    report.resumed_events = state.events();
    let budget = study.spec.budget.min(space.len());
    let mut generation = db.generation();
    loop {
        if db.generation() != generation {
            lock(&mut db, &study).map_err(|e| match e {
                DistError::CoordinatorRunning { study, .. } => DistError::LostStudy { study },
                other => other,
            })?;
            state = resume(&mut db, &study, &space, &spec)?;
            generation = db.generation();
            report.rebuilds += 1;
            continue;
        }
        let mut progressed = false;
        // Tell what came in.
        let untold = untold(&mut db, &study)?;
        if !untold.is_empty() {
            let results: Vec<(String, Outcome)> =
                untold.iter().map(|(_, key, o)| (key.clone(), *o)).collect();
            state
                .tell(&results)
                .map_err(|reason| DistError::BadHistory {
                    study: study.spec.name.clone(),
                    reason,
                })?;
            let seq = state.events() as i32;
            let ids: Vec<i64> = untold.iter().map(|(id, _, _)| *id).collect();
            let done = db.once("recording a tell", |c| {
                let mut tx = c.transaction()?;
                tx.execute(
                    "INSERT INTO tunable.events (study_id, seq, kind) VALUES ($1, $2, 'tell')",
                    &[&study.id, &seq],
                )?;
                tx.execute(
                    "UPDATE tunable.results r SET tell_seq = $2, tell_rank = u.rank::int
                     FROM unnest($3::bigint[]) WITH ORDINALITY AS u(job_id, rank)
                     WHERE r.job_id = u.job_id AND r.study_id = $1",
                    &[&study.id, &seq, &ids],
                )?;
                tx.commit()
            })?;
            if done.is_none() {
                continue;
            }
            progressed = true;
        }
        // Ask for as many as there are idle slots.
        if !state.exhausted() && state.asked() < budget {
            let mut n = queue::idle_slots(&mut db, study.id)?.min(budget - state.asked());
            if n == 0 && state.outstanding() == 0 {
                n = 1;
            }
            let positions = if n > 0 { state.ask(n) } else { Vec::new() };
            // Nothing asked: the strategy waits for outstanding results (no event to record).
            if !positions.is_empty() || state.exhausted() {
                let seq = state.events() as i32;
                let configs: Vec<String> = positions
                    .iter()
                    .map(|&p| {
                        let values = space.values(p);
                        let named: Vec<_> = space
                            .params()
                            .iter()
                            .zip(values)
                            .map(|(param, v)| (param.name().to_owned(), v))
                            .collect();
                        queue::config_json(&named)
                    })
                    .collect();
                let keys: Vec<String> = positions
                    .iter()
                    .map(|&p| tunable_search::format::kernel_tuner::key(&space.values(p)))
                    .collect();
                let requested = n as i32;
                let done = db.once("recording an ask", |c| {
                    let mut tx = c.transaction()?;
                    tx.execute(
                        "INSERT INTO tunable.events (study_id, seq, kind, requested)
                         VALUES ($1, $2, 'ask', $3)",
                        &[&study.id, &seq, &requested],
                    )?;
                    tx.execute(
                        "INSERT INTO tunable.jobs (study_id, ask_seq, ask_rank, config, config_key)
                         SELECT $1, $2, (u.rank - 1)::int, u.config, u.key
                         FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(config, key, rank)",
                        &[&study.id, &seq, &configs, &keys],
                    )?;
                    tx.execute("SELECT pg_notify($1, '')", &[&JOBS_CHANNEL])?;
                    tx.commit()
                })?;
                if done.is_none() {
                    continue;
                }
                report.asks += 1;
                report.largest_batch = report.largest_batch.max(positions.len());
                progressed = true;
            }
        }
        if (state.exhausted() || state.asked() >= budget) && state.outstanding() == 0 {
            study::finish(&mut db, &study)?;
            break;
        }
        if !progressed {
            db.wait(opts.poll)?;
        }
    }
    report.asked = state.asked();
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// The strategy of a study, in the state its history leaves it.
fn resume(
    db: &mut Db,
    study: &Study,
    space: &Arc<Space>,
    spec: &StrategySpec,
) -> Result<StrategyState, DistError> {
    let strategy = strategy::build(spec, Arc::clone(space), study.spec.seed)?;
    let mut state = StrategyState::new(strategy, Arc::clone(space));
    let events = study::history(db, study)?;
    state.replay(&study.spec.name, &events)?;
    Ok(state)
}

/// Results not told yet, in recording order: job id, configuration key, outcome.
fn untold(db: &mut Db, study: &Study) -> Result<Vec<(i64, String, Outcome)>, DistError> {
    let rows = db.retry("reading new results", |c| {
        c.query(
            "SELECT r.job_id, j.config_key, r.time_ms FROM tunable.results r
             JOIN tunable.jobs j ON j.id = r.job_id
             WHERE r.study_id = $1 AND r.tell_seq IS NULL ORDER BY r.recorded",
            &[&study.id],
        )
    })?;
    Ok(rows
        .iter()
        .map(|r| {
            let time: Option<f64> = r.get(2);
            (r.get(0), r.get(1), study::outcome_of(time))
        })
        .collect())
}

/// Takes the study's lock on this connection, or says who holds it.
fn lock(db: &mut Db, study: &Study) -> Result<(), DistError> {
    let key = lock_key(study);
    let got: bool = db
        .retry("locking the study", |c| {
            c.query_one("SELECT pg_try_advisory_lock($1::int8)", &[&key])
        })?
        .get(0);
    if got {
        return Ok(());
    }
    Err(DistError::CoordinatorRunning {
        study: study.spec.name.clone(),
        holder: holder(db, study)?.unwrap_or_else(|| "it has just stopped; try again".to_owned()),
    })
}

/// Who holds a study's coordinator lock: the connection's application name (which names the
/// coordinator's host and pid), its address and for how long it has been connected.
pub fn holder(db: &mut Db, study: &Study) -> Result<Option<String>, DistError> {
    // pg_locks shows a 64-bit key as its high (classid) and low (objid) halves, objsubid 1.
    let key = lock_key(study);
    let (high, low) = (key >> 32, key & 0xffff_ffff);
    let row = db.retry("looking up the study's coordinator", |c| {
        c.query_opt(
            "SELECT COALESCE(NULLIF(a.application_name, ''), 'unnamed connection'),
                    COALESCE(host(a.client_addr), 'a local socket'),
                    EXTRACT(EPOCH FROM now() - a.backend_start)::float8
             FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
               AND l.classid::int8 = $1 AND l.objid::int8 = $2
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[&high, &low],
        )
    })?;
    Ok(row.map(|r| {
        let name: String = r.get(0);
        let from: String = r.get(1);
        let age: Option<f64> = r.get(2);
        format!(
            "{name}, connected from {from} for {:.0} s",
            age.unwrap_or(0.0)
        )
    }))
}
