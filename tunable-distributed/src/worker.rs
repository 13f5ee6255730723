//! # Workers
//!
//! A worker is stateless: everything it needs is in the database, and everything it learns goes
//! there. It serves the devices it is given, one slot (thread, connection) per device; the same
//! binary serves a whole node. Each slot loops:
//!
//! 1. claim a job of a study it can serve ([`queue::claim`]); with none, sleep until a
//!    notification of new jobs or the poll interval;
//! 2. evaluate it in a child process ([`crate::child`]) made by the study's evaluator (opened once
//!    per study and worker), renewing the job's lease every third of its length meanwhile;
//! 3. record the result ([`queue::record`]): a time, or a failure with its reason.
//!
//! The worker's own row in `tunable.workers` (its slots, renewed by a heartbeat) tells the
//! coordinators how large the pool is. A worker killed at any point loses at most the
//! evaluations in flight: their leases expire and other workers run them again. A lost database
//! connection is made again ([`crate::db`]) while the child keeps running; its result is
//! recorded once the database is back.
//!
//! A study whose evaluator cannot be opened here (say its cache file is not on this machine, or
//! its harness is neither a prebuilt one nor in a folder this worker may build from: see
//! [`crate::harness::Trust`]) is reported once and not served by this worker. Opening one (which
//! may build a harness) holds no lock the other slots and studies wait on: a slot that meets a
//! study another slot is opening serves the others meanwhile. Studies no longer open are
//! forgotten.
//!
//! Bad data never stops a worker: a job whose configuration does not decode is recorded failed
//! naming the job and study ([`queue::Claim::poison`]); a study whose stored time-out is not a
//! finite, bounded number of seconds is refused with that reason.

use crate::Evaluator;
use crate::child;
use crate::db::Db;
use crate::error::DistError;
use crate::evaluator::{EvaluatorSpec, Launcher};
use crate::harness::Trust;
use crate::queue::{self, Claim, EVENTS_CHANNEL, JOBS_CHANNEL};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a worker runs.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerOptions {
    /// The devices served, one evaluation slot each (default `["0"]`). A child sees its device in
    /// `TUNABLE_DEVICE`.
    pub devices: Vec<String>,
    /// Serve only the studies of these names (default: every open study).
    pub studies: Vec<String>,
    /// Stop once no study it serves is open (default: keep waiting for new studies).
    pub exit_when_done: bool,
    /// Lease on a claimed job, renewed every third of it (default 30 s). A worker that dies
    /// delays its jobs by up to this much.
    pub lease: Duration,
    /// Longest sleep between looks for jobs when no notification comes (default 1 s).
    pub poll: Duration,
    /// How long to try reconnecting after losing the database (default 300 s).
    pub reconnect: Duration,
    /// How built-in evaluators start their child processes.
    pub launcher: Launcher,
    /// Harness executables built elsewhere, tried before building a harness study's own (see
    /// [`crate::harness`]; default none).
    pub harnesses: Vec<PathBuf>,
    /// Folders whose crates this worker may build and run (default none: a harness study runs
    /// only on a prebuilt harness; see [`crate::harness::Trust`]).
    pub allow: Vec<PathBuf>,
    /// Longest time building a harness may take (default 30 min).
    pub build_timeout: Duration,
    /// Print one line per evaluation on standard error.
    pub verbose: bool,
}

impl WorkerOptions {
    /// The defaults, with the launcher of built-in child tasks.
    pub fn new(launcher: Launcher) -> Self {
        WorkerOptions {
            devices: vec!["0".to_owned()],
            studies: Vec::new(),
            exit_when_done: false,
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            reconnect: crate::db::DEFAULT_RECONNECT,
            launcher,
            harnesses: Vec::new(),
            allow: Vec::new(),
            build_timeout: Trust::default().build_timeout,
            verbose: false,
        }
    }

    /// What this worker lets a harness study run.
    pub fn trust(&self) -> Trust {
        Trust {
            prebuilt: self.harnesses.clone(),
            allow: self.allow.clone(),
            build_timeout: self.build_timeout,
            ..Trust::default()
        }
    }
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerReport {
    /// Results recorded by this worker.
    pub recorded: usize,
    /// Of those, failures.
    pub failed: usize,
    /// Evaluations whose job had a result already (another worker ran it after this one's
    /// lease expired, and finished first): dropped.
    pub dropped: usize,
    /// Wall time.
    pub seconds: f64,
}

/// A study as a worker serves it.
struct Served {
    name: String,
    evaluator: Box<dyn Evaluator>,
    timeout: Duration,
    max_attempts: u32,
}

/// A study as this worker knows it.
enum Known {
    /// A slot is setting its evaluator up (maybe building a harness).
    Opening,
    /// Served, thus.
    Ready(Arc<Served>),
    /// This worker cannot serve it (reported once).
    Refused,
}

/// What the slots of one worker share.
struct Shared {
    id: String,
    opts: WorkerOptions,
    /// Per open study id: how this worker serves it.
    studies: Mutex<HashMap<i64, Known>>,
    stop: AtomicBool,
    recorded: AtomicUsize,
    failed: AtomicUsize,
    dropped: AtomicUsize,
}

/// Runs a worker until its studies are done (with [`WorkerOptions::exit_when_done`]) or an error.
pub fn run(url: &str, opts: &WorkerOptions) -> Result<WorkerReport, DistError> {
    let start = Instant::now();
    if opts.devices.is_empty() {
        return Err(DistError::BadStudy {
            reason: "a worker needs at least one device".to_owned(),
        });
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let id = format!("{}:{nanos:09}", crate::ident::me());
    let mut db = Db::connect(url, &format!("tunable worker {id}"))?;
    db.set_reconnect_timeout(opts.reconnect);
    register(&mut db, &id, opts)?;
    let shared = Arc::new(Shared {
        id,
        opts: opts.clone(),
        studies: Mutex::new(HashMap::new()),
        stop: AtomicBool::new(false),
        recorded: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        dropped: AtomicUsize::new(0),
    });
    let slots: Vec<_> = opts
        .devices
        .iter()
        .map(|device| {
            let shared = Arc::clone(&shared);
            let device = device.clone();
            let url = url.to_owned();
            std::thread::spawn(move || {
                let r = slot(&url, &shared, &device);
                if r.is_err() {
                    shared.stop.store(true, Ordering::SeqCst);
                }
                r
            })
        })
        .collect();
    // Heartbeat until every slot has stopped.
    let beat = opts.lease / 3;
    let mut last = Instant::now();
    while !slots.iter().all(|s| s.is_finished()) {
        std::thread::sleep(Duration::from_millis(50).min(beat));
        if last.elapsed() >= beat {
            heartbeat(&mut db, &shared.id, opts)?;
            last = Instant::now();
        }
    }
    let mut first_error = None;
    for s in slots {
        match s.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => {
                first_error.get_or_insert(DistError::Evaluator {
                    study: String::new(),
                    reason: "a worker slot panicked".to_owned(),
                });
            }
        }
    }
    let _ = db.retry("leaving the pool", |c| {
        c.execute("DELETE FROM tunable.workers WHERE id = $1", &[&shared.id])
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(WorkerReport {
        recorded: shared.recorded.load(Ordering::SeqCst),
        failed: shared.failed.load(Ordering::SeqCst),
        dropped: shared.dropped.load(Ordering::SeqCst),
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn register(db: &mut Db, id: &str, opts: &WorkerOptions) -> Result<(), DistError> {
    let host = crate::ident::host();
    let pid = std::process::id() as i32;
    let devices = opts.devices.join(",");
    let slots = opts.devices.len() as i32;
    let lease = opts.lease.as_secs_f64();
    db.retry("joining the pool", |c| {
        let mut tx = c.transaction()?;
        // Rows of workers gone for a day are only history.
        tx.execute(
            "DELETE FROM tunable.workers WHERE last_seen < now() - interval '1 day'",
            &[],
        )?;
        tx.execute(
            "INSERT INTO tunable.workers (id, host, pid, devices, slots, lease_s)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (id) DO UPDATE SET last_seen = now()",
            &[&id, &host, &pid, &devices, &slots, &lease],
        )?;
        tx.execute("SELECT pg_notify($1, '')", &[&EVENTS_CHANNEL])?;
        tx.commit()
    })
}

fn heartbeat(db: &mut Db, id: &str, opts: &WorkerOptions) -> Result<(), DistError> {
    let n = db.retry("sending a heartbeat", |c| {
        c.execute(
            "UPDATE tunable.workers SET last_seen = now() WHERE id = $1",
            &[&id],
        )
    })?;
    if n == 0 {
        register(db, id, opts)?;
    }
    Ok(())
}

/// One evaluation slot.
fn slot(url: &str, shared: &Shared, device: &str) -> Result<(), DistError> {
    let opts = &shared.opts;
    let mut db = Db::connect(
        url,
        &format!("tunable worker {} device {device}", shared.id),
    )?;
    db.set_reconnect_timeout(opts.reconnect);
    db.listen(JOBS_CHANNEL)?;
    // The open studies are looked up again when no job was found, or every few seconds.
    let mut open: Option<(Vec<i64>, Instant)> = None;
    while !shared.stop.load(Ordering::SeqCst) {
        let ids = match open.take() {
            Some((ids, at)) if at.elapsed() < Duration::from_secs(2) => (ids, at),
            _ => (served_studies(&mut db, shared)?, Instant::now()),
        };
        if ids.0.is_empty() && opts.exit_when_done {
            break;
        }
        match queue::claim(&mut db, &ids.0, &shared.id, device, opts.lease)? {
            None => {
                db.wait(opts.poll)?;
            }
            Some(claim) => {
                evaluate(&mut db, shared, device, &claim)?;
                open = Some(ids);
            }
        }
    }
    Ok(())
}

/// Ids of the open studies this worker serves (opening the evaluators of new ones, without
/// holding the lock of the studies meanwhile, and forgetting studies no longer open).
fn served_studies(db: &mut Db, shared: &Shared) -> Result<Vec<i64>, DistError> {
    let names = &shared.opts.studies;
    let rows = db.retry("listing open studies", |c| {
        c.query(
            "SELECT id, name, evaluator, timeout_s, max_attempts FROM tunable.studies
             WHERE state = 'open' AND (cardinality($1::text[]) = 0 OR name = ANY($1))
             ORDER BY id",
            &[names],
        )
    })?;
    let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    shared
        .studies
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|id, k| ids.contains(id) || matches!(k, Known::Opening));
    // One study at a time: while this slot opens one (maybe building a harness for minutes),
    // the other slots find the next ones unknown and open them, and serve the opened ones.
    for row in &rows {
        let id: i64 = row.get(0);
        {
            let mut known = shared.studies.lock().unwrap_or_else(|e| e.into_inner());
            if known.contains_key(&id) {
                continue;
            }
            known.insert(id, Known::Opening);
        }
        let name: String = row.get(1);
        let entry = match open_study(shared, row) {
            Ok(served) => Known::Ready(Arc::new(served)),
            Err(reason) => {
                eprintln!(
                    "tunable: worker {}: {}",
                    shared.id,
                    DistError::Evaluator {
                        study: name,
                        reason
                    }
                );
                Known::Refused
            }
        };
        shared
            .studies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, entry);
    }
    let known = shared.studies.lock().unwrap_or_else(|e| e.into_inner());
    Ok(ids
        .into_iter()
        .filter(|id| matches!(known.get(id), Some(Known::Ready(_))))
        .collect())
}

/// Sets a study up on this worker from its row; `Err` says why it cannot be served here.
fn open_study(shared: &Shared, row: &postgres::Row) -> Result<Served, String> {
    let name: String = row.get(1);
    let timeout = crate::study::checked_timeout(row.get(3))?;
    let max_attempts = u32::try_from(row.get::<_, i32>(4))
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| "its attempts allowed are not a positive number".to_owned())?;
    let spec: EvaluatorSpec = serde_json::from_str(row.get(2))
        .map_err(|e| format!("its evaluator does not decode: {e}"))?;
    let evaluator = spec.open(&shared.opts.launcher, &shared.opts.trust())?;
    Ok(Served {
        name,
        evaluator,
        timeout,
        max_attempts,
    })
}

/// Evaluates a claimed job and records its result.
fn evaluate(db: &mut Db, shared: &Shared, device: &str, claim: &Claim) -> Result<(), DistError> {
    let opts = &shared.opts;
    let served = match shared
        .studies
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&claim.study)
    {
        Some(Known::Ready(s)) => Arc::clone(s),
        // Forgotten between the claim and now (deleted or finished meanwhile): let the lease
        // expire, as if this worker had died.
        _ => return Ok(()),
    };
    let result = if claim.attempt > served.max_attempts as i32 {
        let lost = claim.attempt - 1;
        Err(format!(
            "abandoned: its evaluation was lost {lost} time{} (the worker died or lost the database before finishing)",
            if lost == 1 { "" } else { "s" }
        ))
    } else if let Some(poison) = &claim.poison {
        let reason = format!(
            "poison job {} of study '{}': {poison}; recorded failed without running",
            claim.job, served.name
        );
        eprintln!("tunable: worker {}: {reason}", shared.id);
        Err(reason)
    } else {
        match served.evaluator.child(&claim.config) {
            Err(reason) => Err(reason),
            Ok(spec) => {
                let renew_every = opts.lease / 3;
                let mut last = Instant::now();
                let mut lost: Option<DistError> = None;
                let r = child::run(&spec, device, served.timeout, renew_every / 2, || {
                    if lost.is_none() && last.elapsed() >= renew_every {
                        if let Err(e) = queue::renew(db, claim, &shared.id, opts.lease) {
                            lost = Some(e);
                        }
                        last = Instant::now();
                    }
                });
                if let Some(e) = lost {
                    return Err(e);
                }
                r
            }
        }
    };
    let first = queue::record(db, claim, &shared.id, device, &result)?;
    if first {
        shared.recorded.fetch_add(1, Ordering::SeqCst);
        if result.is_err() {
            shared.failed.fetch_add(1, Ordering::SeqCst);
        }
    } else {
        shared.dropped.fetch_add(1, Ordering::SeqCst);
    }
    if opts.verbose {
        let what = match &result {
            Ok(t) => format!("{t:.4} ms"),
            Err(r) => format!("failed: {r}"),
        };
        eprintln!(
            "tunable: {} [{}] device {device} attempt {}: {what}{}",
            served.name,
            claim.key,
            claim.attempt,
            if first {
                ""
            } else {
                " (dropped: recorded already)"
            }
        );
    }
    Ok(())
}

/// A worker of the pool, as its heartbeat row says.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerInfo {
    /// Its id (`host:pid:nonce`).
    pub id: String,
    /// Its devices, comma-separated.
    pub devices: String,
    /// Its evaluation slots.
    pub slots: usize,
    /// Seconds since its last heartbeat.
    pub silent_for: f64,
}

/// The live workers (heartbeat within their lease), oldest first.
pub fn live(db: &mut Db) -> Result<Vec<WorkerInfo>, DistError> {
    let rows = db.retry("listing workers", |c| {
        c.query(
            "SELECT id, devices, slots, EXTRACT(EPOCH FROM now() - last_seen)::float8
             FROM tunable.workers WHERE last_seen + make_interval(secs => lease_s) > now()
             ORDER BY started_at, id",
            &[],
        )
    })?;
    Ok(rows
        .iter()
        .map(|r| WorkerInfo {
            id: r.get(0),
            devices: r.get(1),
            slots: r.get::<_, i32>(2) as usize,
            silent_for: r.get(3),
        })
        .collect())
}
