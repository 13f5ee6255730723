//! The database side of distributed tuning against a real PostgreSQL server: a throw-away cluster
//! (see `tunable_distributed::scratch`), one database per test. Workers here are in-process fakes
//! that claim and record through the public queue API without child processes; the real worker
//! binary and its faults are tested in `cargo-tunable/tests/distributed_*.rs`.
//!
//! Skips where PostgreSQL is missing, unless `TUNABLE_REQUIRE` names `postgres`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tunable_distributed::scratch::{self, Cluster};
use tunable_distributed::{
    Db, DistError, EvaluatorSpec, SpaceDef, StudySpec, StudyState, coordinator, export, queue,
    schema, study,
};
use tunable_search::sim::{KernelTunerCache, Observation, Replay};
use tunable_search::strategy::Outcome;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fresh database on the shared cluster: its URL (and the cluster, kept alive by the test).
fn database() -> Option<(Arc<Cluster>, String)> {
    let cluster = scratch::for_tests()?;
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let url = cluster.create_database(&name).expect("create database");
    Some((cluster, url))
}

/// A small Kernel Tuner cache: 6 x 5 x 2 configurations, a smooth objective, some failures.
fn cache_file() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(write_cache).clone()
}

fn write_cache() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tunable-dist-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("toy.json");
    let mut records = Vec::new();
    for a in [1, 2, 4, 8, 16, 32] {
        for b in 1..=5 {
            for m in ["x", "y"] {
                let key = format!("{a},{b},{m}");
                let time = if a * b == 32 {
                    "\"RuntimeFailedConfig\"".to_owned()
                } else {
                    let t = ((a as f64).ln() - 2.0).powi(2)
                        + (b as f64 - 3.5).abs()
                        + if m == "y" { 0.25 } else { 0.0 }
                        + 1.0;
                    format!("{t}")
                };
                records.push(format!(
                    "\"{key}\": {{\"a\": {a}, \"b\": {b}, \"m\": \"{m}\", \"time\": {time}}}"
                ));
            }
        }
    }
    let text = format!(
        r#"{{"kernel_name": "toy", "device_name": "Toy GPU", "tune_params_keys": ["a", "b", "m"],
            "tune_params": {{"a": [1, 2, 4, 8, 16, 32], "b": [1, 2, 3, 4, 5], "m": ["x", "y"]}},
            "objective": "time", "cache": {{{}}}}}"#,
        records.join(",\n")
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn replay() -> Replay {
    Replay::new(&KernelTunerCache::load(cache_file()).unwrap(), None).unwrap()
}

fn spec(name: &str, strategy: &str, budget: usize) -> StudySpec {
    StudySpec {
        name: name.to_owned(),
        kernel: "toy".to_owned(),
        device: "Toy GPU".to_owned(),
        key: 7,
        strategy: strategy.to_owned(),
        seed: 3,
        budget,
        evaluator: EvaluatorSpec::Replay {
            cache: cache_file(),
            scale: 0.0,
        },
        timeout: Duration::from_secs(10),
        max_attempts: 3,
    }
}

fn create(url: &str, spec: &StudySpec) -> tunable_distributed::Study {
    let mut db = Db::connect(url, "test").unwrap();
    study::create(&mut db, spec, &SpaceDef::of(replay().space(), true)).unwrap()
}

/// Registers a pool member with `slots` slots, as a worker does.
fn join_pool(db: &mut Db, id: &str, slots: i32) {
    db.client()
        .execute(
            "INSERT INTO tunable.workers (id, host, pid, devices, slots, lease_s)
             VALUES ($1, 'test', 0, '', $2, 60)",
            &[&id, &slots],
        )
        .unwrap();
}

/// Records `study`'s first ask as a coordinator would: one job per value of `a` (with `b` = 1,
/// `m` = "x"), in that order.
fn first_ask(db: &mut Db, study: i64, a: &[i64]) {
    let jobs: Vec<String> = a
        .iter()
        .enumerate()
        .map(|(rank, a)| {
            format!("({study}, 1, {rank}, '{{\"a\":{a},\"b\":1,\"m\":\"x\"}}', '{a},1,x')")
        })
        .collect();
    db.client()
        .batch_execute(&format!(
            "INSERT INTO tunable.events (study_id, seq, kind, requested) VALUES ({study}, 1, 'ask', {n});
             INSERT INTO tunable.jobs (study_id, ask_seq, ask_rank, config, config_key) VALUES {jobs};",
            n = a.len(),
            jobs = jobs.join(", ")
        ))
        .unwrap();
}

/// An in-process worker: claims jobs of `study` and records the cache's answer, until the study
/// is done or `stop` is set.
fn fake_worker(url: String, study_id: i64, id: String, stop: Arc<AtomicBool>) {
    gated_worker(url, study_id, id, stop, &Gate::open());
}

/// Holds the fake workers once `limit` results are recorded, until opened.
struct Gate {
    recorded: AtomicUsize,
    limit: usize,
    opened: AtomicBool,
}

impl Gate {
    fn open() -> Gate {
        Gate::closing_after(usize::MAX)
    }

    fn closing_after(limit: usize) -> Gate {
        Gate {
            recorded: AtomicUsize::new(0),
            limit,
            opened: AtomicBool::new(false),
        }
    }

    fn holds(&self) -> bool {
        self.recorded.load(Ordering::SeqCst) >= self.limit && !self.opened.load(Ordering::SeqCst)
    }
}

/// [`fake_worker`] that claims nothing while `gate` holds.
fn gated_worker(url: String, study_id: i64, id: String, stop: Arc<AtomicBool>, gate: &Gate) {
    let replay = replay();
    let mut db = Db::connect(&url, "fake worker").unwrap();
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if gate.holds() {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        let claim = queue::claim(&mut db, &[study_id], &id, "0", Duration::from_secs(30)).unwrap();
        let Some(claim) = claim else {
            let state: String = db
                .client()
                .query_one(
                    "SELECT state FROM tunable.studies WHERE id = $1",
                    &[&study_id],
                )
                .unwrap()
                .get(0);
            if state == "done" {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let values: Vec<_> = claim.config.iter().map(|(_, v)| v.clone()).collect();
        let result = match replay.evaluate_values(&values).unwrap() {
            Observation::Value(t) => Ok(*t),
            Observation::Failed(r) => Err(r.clone()),
        };
        queue::record(&mut db, &claim, &id, "0", &result).unwrap();
        gate.recorded.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn the_schema_is_versioned_and_migrations_run_once() {
    let Some((_c, url)) = database() else { return };
    let mut db = Db::connect(&url, "test").unwrap();
    assert_eq!(schema::version(db.client()).unwrap(), schema::LATEST);
    assert_eq!(schema::migrate(db.client()).unwrap(), schema::LATEST);
    let rows: i64 = db
        .client()
        .query_one("SELECT COUNT(*) FROM tunable.schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, i64::from(schema::LATEST));
    // A database migrated by a newer tunable is refused, in one line.
    db.client()
        .execute(
            "INSERT INTO tunable.schema_version (version) VALUES (99)",
            &[],
        )
        .unwrap();
    let e = Db::connect(&url, "test").unwrap_err();
    assert!(
        matches!(e, DistError::SchemaTooNew { found: 99, .. }),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn a_wrong_password_or_database_is_one_clear_line() {
    let Some((c, _url)) = database() else { return };
    let e = Db::connect(&c.url_with_wrong_password("postgres"), "test").unwrap_err();
    let text = e.to_string();
    assert_eq!(
        text,
        format!(
            "cannot connect to PostgreSQL at 127.0.0.1:{}/postgres as tunable: password authentication failed for user \"tunable\"",
            c.port()
        )
    );
    let e = Db::connect(&c.url("no_such_db"), "test")
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("database \"no_such_db\" does not exist"), "{e}");
}

#[test]
fn studies_are_created_once_and_checked() {
    let Some((_c, url)) = database() else { return };
    let s = create(&url, &spec("a", "random", 500));
    assert_eq!(
        s.spec.budget, 60,
        "the budget is capped at the space's size"
    );
    assert_eq!(s.state, StudyState::Open);
    let mut db = Db::connect(&url, "test").unwrap();
    let again = study::create(
        &mut db,
        &spec("a", "random", 5),
        &SpaceDef::of(replay().space(), true),
    );
    assert!(matches!(again, Err(DistError::StudyExists { .. })));
    let bad = study::create(
        &mut db,
        &spec("b", "nonsense", 5),
        &SpaceDef::of(replay().space(), true),
    );
    assert!(
        bad.unwrap_err()
            .to_string()
            .starts_with("unknown strategy 'nonsense'")
    );
    let space = study::load_space(&mut db, &s).unwrap();
    assert_eq!(space.fingerprint(), replay().space().fingerprint());
    assert!(matches!(
        study::load(&mut db, "zzz"),
        Err(DistError::UnknownStudy { .. })
    ));
}

#[test]
fn claims_never_collide_expired_leases_are_claimed_again_and_results_recorded_once() {
    let Some((_c, url)) = database() else { return };
    let s = create(&url, &spec("q", "random", 3));
    let mut db = Db::connect(&url, "test").unwrap();
    // Three jobs, as a coordinator would record them.
    first_ask(&mut db, s.id, &[1, 2, 4]);
    let lease = Duration::from_secs(30);
    let mut other = Db::connect(&url, "test").unwrap();
    let a = queue::claim(&mut db, &[s.id], "w1", "0", lease)
        .unwrap()
        .unwrap();
    let b = queue::claim(&mut other, &[s.id], "w2", "0", lease)
        .unwrap()
        .unwrap();
    let c = queue::claim(&mut other, &[s.id], "w2", "1", lease)
        .unwrap()
        .unwrap();
    assert_eq!(
        [&a.key, &b.key, &c.key]
            .into_iter()
            .collect::<HashSet<_>>()
            .len(),
        3
    );
    assert!(
        queue::claim(&mut db, &[s.id], "w1", "1", lease)
            .unwrap()
            .is_none()
    );
    // w2 dies: its jobs become claimable once their leases expire. Rather than wait for the
    // database's clock, the leases are moved into the past; w1 keeps its lease alive.
    let expired = db
        .client()
        .execute(
            "UPDATE tunable.jobs SET lease_until = now() - interval '1 second' WHERE worker = 'w2'",
            &[],
        )
        .unwrap();
    assert_eq!(expired, 2);
    assert!(queue::renew(&mut db, &a, "w1", lease).unwrap());
    let again = queue::claim(&mut db, &[s.id], "w3", "0", lease)
        .unwrap()
        .unwrap();
    assert!(again.key == b.key || again.key == c.key);
    assert_eq!(again.attempt, 2);
    // The other of w2's jobs is claimable too; w1's, under its lease, is not.
    let next = queue::claim(&mut db, &[s.id], "w3", "1", lease)
        .unwrap()
        .unwrap();
    assert!(next.key != again.key && (next.key == b.key || next.key == c.key));
    assert!(
        queue::claim(&mut db, &[s.id], "w3", "2", lease)
            .unwrap()
            .is_none()
    );
    // Both of w2's claims are lost: renewing either is refused.
    assert!(!queue::renew(&mut other, &b, "w2", lease).unwrap());
    assert!(!queue::renew(&mut other, &c, "w2", lease).unwrap());
    // The first result of a job stands; a late one from the dead worker is dropped.
    assert!(queue::record(&mut db, &again, "w3", "0", &Ok(1.0)).unwrap());
    let late = if again.key == b.key { &b } else { &c };
    assert!(!queue::record(&mut other, late, "w2", "0", &Ok(9.0)).unwrap());
    assert!(queue::record(&mut db, &a, "w1", "0", &Err("wrong output".into())).unwrap());
    let results = study::results(&mut db, &s).unwrap();
    assert_eq!(results.len(), 2);
    let late_result = results.iter().find(|r| r.key == late.key).unwrap();
    assert_eq!(
        (late_result.outcome, late_result.worker.as_str()),
        (Outcome::Value(1.0), "w3")
    );
    let failed = results.iter().find(|r| r.key == a.key).unwrap();
    assert_eq!(failed.failure.as_deref(), Some("wrong output"));
}

#[test]
fn a_result_not_yet_told_holds_its_slot_until_the_coordinator_tells_it() {
    let Some((_c, url)) = database() else { return };
    let s = create(&url, &spec("slots", "random", 3));
    let mut db = Db::connect(&url, "test").unwrap();
    join_pool(&mut db, "one", 1);
    assert_eq!(queue::idle_slots(&mut db, s.id).unwrap(), 1);
    first_ask(&mut db, s.id, &[1]);
    // Pending, then running: the slot is taken.
    assert_eq!(queue::idle_slots(&mut db, s.id).unwrap(), 0);
    let claim = queue::claim(&mut db, &[s.id], "one", "0", Duration::from_secs(30))
        .unwrap()
        .unwrap();
    assert_eq!(queue::idle_slots(&mut db, s.id).unwrap(), 0);
    // Recorded but not told: still taken, so the coordinator tells before it asks again.
    assert!(queue::record(&mut db, &claim, "one", "0", &Ok(1.0)).unwrap());
    assert_eq!(queue::idle_slots(&mut db, s.id).unwrap(), 0);
    // Told, as the coordinator records it: the slot is free.
    db.client()
        .batch_execute(&format!(
            "INSERT INTO tunable.events (study_id, seq, kind) VALUES ({id}, 2, 'tell');
             UPDATE tunable.results SET tell_seq = 2, tell_rank = 1 WHERE study_id = {id};",
            id = s.id
        ))
        .unwrap();
    assert_eq!(queue::idle_slots(&mut db, s.id).unwrap(), 1);
}

#[test]
fn a_coordinator_spends_the_budget_once_over_a_pool_in_batches() {
    let Some((_c, url)) = database() else { return };
    spend_over_a_pool(&url, "pool", "genetic:popsize=8");
    // Bayesian optimization's ramp answers fewer than the idle slots (none while its initial
    // sample is out): the coordinator waits for results instead of taking it for the end.
    spend_over_a_pool(&url, "pool-bayes", "auto");
}

/// Study `name` with `strategy`, budget 40, coordinated over 4 workers: every configuration asked
/// once, told once, in batches.
fn spend_over_a_pool(url: &str, name: &str, strategy: &str) {
    let url = url.to_owned();
    let s = create(&url, &spec(name, strategy, 40));
    let mut db = Db::connect(&url, "test").unwrap();
    join_pool(&mut db, &format!("{name}-of-4"), 4);
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let (url, stop) = (url.clone(), Arc::clone(&stop));
            std::thread::spawn(move || fake_worker(url, s.id, format!("w{i}"), stop))
        })
        .collect();
    let report = coordinator::run(&url, name, &Default::default()).unwrap();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(report.asked, 40);
    assert!(report.largest_batch > 1, "{report:?}");
    let s = study::load(&mut db, name).unwrap();
    assert_eq!(s.state, StudyState::Done);
    let results = study::results(&mut db, &s).unwrap();
    assert_eq!(results.len(), 40);
    assert_eq!(
        results.iter().map(|r| &r.key).collect::<HashSet<_>>().len(),
        40
    );
    // Every result was told, each once, and the history replays.
    let events = study::history(&mut db, &s).unwrap();
    let told: usize = events
        .iter()
        .map(|e| match e {
            tunable_distributed::history::Event::Tell { results } => results.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(told, 40);
    let status = study::status(&mut db, &s).unwrap();
    assert_eq!((status.results, status.pending, status.running), (40, 0, 0));
    let best = results
        .iter()
        .filter_map(|r| r.outcome.value())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(status.best.as_ref().map(|b| b.1), Some(best));
    assert_eq!(
        status.coordinator, None,
        "the lock went with the coordinator"
    );
    // A coordinator on a finished study has nothing to do.
    assert!(
        coordinator::run(&url, "pool", &Default::default())
            .unwrap()
            .already_done
    );
}

#[test]
fn a_second_coordinator_is_refused_naming_the_first() {
    let Some((_c, url)) = database() else { return };
    let s = create(&url, &spec("solo", "random", 6));
    let first = {
        let url = url.clone();
        std::thread::spawn(move || coordinator::run(&url, "solo", &Default::default()))
    };
    let mut db = Db::connect(&url, "test").unwrap();
    // Wait until the first holds the lock (it asks a first job once it does).
    while study::status(&mut db, &s).unwrap().coordinator.is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let e = coordinator::run(&url, "solo", &Default::default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("study 'solo' already has a running coordinator (tunable coordinator "),
        "{text}"
    );
    assert!(
        text.contains("connected from 127.0.0.1") && !text.contains('\n'),
        "{text}"
    );
    let stop = Arc::new(AtomicBool::new(false));
    fake_worker(url.clone(), s.id, "w".into(), stop);
    first.join().unwrap().unwrap();
}

#[test]
fn a_coordinator_cut_from_the_database_rebuilds_its_strategy_without_measuring_again() {
    let Some((_c, url)) = database() else { return };
    let s = create(&url, &spec("resume", "bayes", 24));
    let mut db = Db::connect(&url, "test").unwrap();
    join_pool(&mut db, "pool-of-3", 3);
    let stop = Arc::new(AtomicBool::new(false));
    // The workers stop after 10 results until the cut: the coordinator cannot finish first,
    // however late the cutting thread gets to it.
    let gate = Arc::new(Gate::closing_after(10));
    let workers: Vec<_> = (0..3)
        .map(|i| {
            let (url, stop, gate) = (url.clone(), Arc::clone(&stop), Arc::clone(&gate));
            std::thread::spawn(move || gated_worker(url, s.id, format!("w{i}"), stop, &gate))
        })
        .collect();
    // Cut the coordinator's connection once part of the budget is told: whether its last
    // transaction committed is unknown to it, so it rebuilds its strategy from the history.
    let cut = {
        let url = url.clone();
        let gate = Arc::clone(&gate);
        std::thread::spawn(move || {
            let mut db = Db::connect(&url, "killer").unwrap();
            loop {
                let n: i64 = db
                    .client()
                    .query_one(
                        "SELECT COUNT(*) FROM tunable.results WHERE tell_seq IS NOT NULL",
                        &[],
                    )
                    .unwrap()
                    .get(0);
                if n >= 10 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            let rows = db
                .client()
                .query(
                    "SELECT application_name, state, pg_terminate_backend(pid) FROM pg_stat_activity
                     WHERE application_name LIKE 'tunable coordinator %' AND datname = current_database()",
                    &[],
                )
                .unwrap();
            let seen: Vec<(String, Option<String>, bool)> = rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect();
            gate.opened.store(true, Ordering::SeqCst);
            format!("cut {seen:?}")
        })
    };
    let report = coordinator::run(&url, "resume", &Default::default()).unwrap();
    let cut = cut.join().unwrap();
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(report.rebuilds, 1, "{report:?}; {cut}");
    let results = study::results(&mut db, &s).unwrap();
    assert_eq!(results.len(), 24);
    // Nothing was measured twice: every job claimed once, every configuration once.
    let reclaimed: i64 = db
        .client()
        .query_one("SELECT COUNT(*) FROM tunable.jobs WHERE attempts > 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(reclaimed, 0);
    assert_eq!(
        results.iter().map(|r| &r.key).collect::<HashSet<_>>().len(),
        24
    );
}

#[test]
fn export_writes_what_local_tuning_writes_with_the_same_results() {
    let Some((_c, url)) = database() else { return };
    // One slot: the coordinator's calls are those of local tuning (ask one, tell one).
    let s = create(&url, &spec("export", "auto", 20));
    let mut db = Db::connect(&url, "test").unwrap();
    join_pool(&mut db, "one", 1);
    let worker = {
        let url = url.clone();
        std::thread::spawn(move || {
            fake_worker(url, s.id, "w".into(), Arc::new(AtomicBool::new(false)))
        })
    };
    coordinator::run(&url, "export", &Default::default()).unwrap();
    worker.join().unwrap();
    let base = std::env::temp_dir().join(format!("tunable-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let exported =
        export::export(&mut db, "export", &base.join("dist"), Some(1_700_000_000)).unwrap();
    assert_eq!(exported.results, 20);

    // Local tuning of the same kernel, key, space, strategy and seed on the same measurements.
    let replay = replay();
    let space = replay.shared_space();
    let opts = tunable_runtime::tuner::TuneOptions {
        budget: 20,
        strategy: "auto".into(),
        seed: 3,
        ..Default::default()
    };
    let mut measure = tunable_runtime::tuner::Closure(|p: usize| {
        replay.values()[p].ok_or_else(|| "failed".to_owned())
    });
    let report = tunable_runtime::tuner::tune(&space, &opts, &mut measure, &mut []).unwrap();
    let (pos, time_ms) = report.best.unwrap();
    let local = tunable_runtime::store::TunedEntry {
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
        kernel: "toy".into(),
        device: "Toy GPU".into(),
        key: 7,
        space_hash: space.fingerprint(),
        params: tunable_runtime::store::TunedEntry::named(&space, &space.values(pos)),
        time_ms,
        evaluations: report.evaluations as u32,
        strategy: opts.strategy.clone(),
        timestamp: 1_700_000_000,
        top: report
            .top
            .iter()
            .map(|&(p, t)| tunable_runtime::store::Ranked::at(&space, p, t))
            .collect(),
    };
    let local_path = tunable_runtime::store::tuned_file(&base.join("local"), "toy").unwrap();
    tunable_runtime::store::store(&local_path, local).unwrap();
    let dist_bytes = std::fs::read(exported.tuned.unwrap()).unwrap();
    assert_eq!(dist_bytes, std::fs::read(&local_path).unwrap());
    // The Kernel Tuner cache holds every result and loads.
    let kt = KernelTunerCache::load(&exported.cache).unwrap();
    assert_eq!(kt.entries.len(), 20);
    assert_eq!(
        exported.cache.file_name().unwrap().to_str().unwrap(),
        format!("toy-7-{:016x}.cache.json", space.fingerprint())
    );
    std::fs::remove_dir_all(&base).unwrap();
}
