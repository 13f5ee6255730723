//! Safe on a real network and against bad data, against real PostgreSQL servers: a
//! TLS-only one with a self-signed certificate made at test time, a plain one, roles with least
//! privilege, and rows written around the tools (poison jobs, infinite time-outs, NaN and
//! negative times). The worker binary's side is in `cargo-tunable/tests/distributed_security.rs`.
//!
//! Skips where PostgreSQL (or `openssl`, for the TLS cluster) is missing, unless
//! `TUNABLE_REQUIRE` names `postgres`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tunable_distributed::scratch::{self, Cluster};
use tunable_distributed::{
    Db, DistError, EvaluatorSpec, SpaceDef, StudySpec, coordinator, export, queue, roles, study,
};
use tunable_search::sim::{KernelTunerCache, Replay};

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// A fresh database on the shared test cluster (TLS-only with `TUNABLE_TEST_TLS=1`).
fn database() -> Option<(Arc<Cluster>, String, String)> {
    let cluster = scratch::for_tests()?;
    let name = unique("s");
    let url = cluster.create_database(&name).expect("create database");
    Some((cluster, url, name))
}

/// A cluster of its own that accepts only TLS.
fn tls_cluster() -> Option<Cluster> {
    match Cluster::start_tls() {
        Ok(c) => Some(c),
        Err(e) => {
            scratch::skip_or_fail(&e);
            None
        }
    }
}

fn cache_file() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tunable-sec-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("toy.json");
        let mut records = Vec::new();
        for a in 1..=4 {
            for b in 1..=3 {
                records.push(format!(
                    "\"{a},{b}\": {{\"a\": {a}, \"b\": {b}, \"time\": {}}}",
                    1.0 + f64::from(a * b)
                ));
            }
        }
        let text = format!(
            r#"{{"kernel_name": "toy", "device_name": "Toy GPU", "tune_params_keys": ["a", "b"],
                "tune_params": {{"a": [1, 2, 3, 4], "b": [1, 2, 3]}},
                "objective": "time", "cache": {{{}}}}}"#,
            records.join(",\n")
        );
        std::fs::write(&path, text).unwrap();
        path
    })
    .clone()
}

fn replay() -> Replay {
    Replay::new(&KernelTunerCache::load(cache_file()).unwrap(), None).unwrap()
}

fn spec(name: &str, budget: usize) -> StudySpec {
    StudySpec {
        name: name.to_owned(),
        kernel: "toy".to_owned(),
        device: "Toy GPU".to_owned(),
        key: 7,
        strategy: "random".to_owned(),
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

fn create(db: &mut Db, name: &str, budget: usize) -> tunable_distributed::Study {
    study::create(
        db,
        &spec(name, budget),
        &SpaceDef::of(replay().space(), true),
    )
    .unwrap()
}

/// `url` with its TLS parameters replaced by `query` (and the host by `host`).
fn with(url: &str, host: &str, query: &str) -> String {
    let base = url.split('?').next().unwrap().replace("127.0.0.1", host);
    format!("{base}{query}")
}

/// Whether the connection of `db` is encrypted, as the server sees it.
fn encrypted(db: &mut Db) -> bool {
    db.client()
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

#[test]
fn tls_only_server_refuses_plaintext_and_verifies_its_certificate() {
    let Some(c) = tls_cluster() else { return };
    let url = c.create_database("sec").unwrap();
    let root = c.root_cert().unwrap();
    let root = root.display();
    // verify-full with the server's certificate: encrypted.
    let mut db = Db::connect(&url, "test").unwrap();
    assert!(encrypted(&mut db));
    // Without TLS the server refuses, and the message says what to do.
    let e = Db::connect(&with(&url, "127.0.0.1", "?sslmode=disable"), "test")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no encryption") && e.contains("accepts only TLS") && !e.contains('\n'),
        "{e}"
    );
    assert!(!e.contains(c.password()), "{e}");
    // prefer (the default) and require without a root certificate: encrypted, unverified.
    for query in ["", "?sslmode=prefer", "?sslmode=require"] {
        let mut db = Db::connect(&with(&url, "127.0.0.1", query), "test")
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        assert!(encrypted(&mut db), "{query}");
    }
    // The certificate names 127.0.0.1, not localhost: verify-full refuses, verify-ca accepts.
    let e = Db::connect(
        &with(
            &url,
            "localhost",
            &format!("?sslmode=verify-full&sslrootcert={root}"),
        ),
        "test",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("certificate") || e.contains("hostname"), "{e}");
    let mut db = Db::connect(
        &with(
            &url,
            "localhost",
            &format!("?sslmode=verify-ca&sslrootcert={root}"),
        ),
        "test",
    )
    .unwrap();
    assert!(encrypted(&mut db));
    // A certificate from another authority is refused by verify-ca (and require, given a root).
    let other = std::env::temp_dir().join(format!("tunable-other-ca-{}", std::process::id()));
    std::fs::create_dir_all(&other).unwrap();
    let status = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=another authority"])
        .arg("-keyout")
        .arg(other.join("k.pem"))
        .arg("-out")
        .arg(other.join("c.pem"))
        .output()
        .unwrap();
    assert!(status.status.success());
    for mode in ["verify-ca", "require"] {
        let e = Db::connect(
            &with(
                &url,
                "127.0.0.1",
                &format!(
                    "?sslmode={mode}&sslrootcert={}",
                    other.join("c.pem").display()
                ),
            ),
            "test",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("certificate verify failed"), "{mode}: {e}");
    }
    let _ = std::fs::remove_dir_all(&other);
}

#[test]
fn tls_required_of_a_plain_server_is_refused() {
    let c = match Cluster::start() {
        Ok(c) => c,
        Err(e) => return scratch::skip_or_fail(&e),
    };
    let url = c.create_database("plain").unwrap();
    let e = Db::connect(&format!("{url}?sslmode=require"), "test")
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not offer it") && !e.contains('\n'), "{e}");
    // prefer falls back to plain TCP, as libpq does.
    let mut db = Db::connect(&format!("{url}?sslmode=prefer"), "test").unwrap();
    assert!(!encrypted(&mut db));
}

#[test]
fn passwords_never_show_in_connection_errors() {
    let Some((c, url, _)) = database() else {
        return;
    };
    let secret = "s3cret-Pass";
    let base = url.split('?').next().unwrap();
    let port = c.port();
    let forms = [
        format!(
            "{}?password={secret}&sslmode=bogus",
            base.replace(c.password(), "x")
        ),
        format!("host=127.0.0.1 port={port} user=tunable password = {secret} sslmode=bogus"),
        format!("host=127.0.0.1 port={port} user=tunable password='{secret}' sslmode=bogus"),
        format!("postgres://tunable:{secret}@127.0.0.1:notaport/x"),
        format!(
            "host=127.0.0.1 port={port} user=tunable password='{secret}' dbname=x sslmode=disable"
        ),
    ];
    for form in forms {
        let e = Db::connect(&form, "test").unwrap_err().to_string();
        assert!(!e.contains(secret) && !e.contains('\n'), "{form}: {e}");
    }
}

#[test]
fn roles_keep_workers_from_creating_or_altering_studies() {
    let Some((c, url, name)) = database() else {
        return;
    };
    let (worker, owner) = (format!("{name}_w"), format!("{name}_c"));
    let mut admin = Db::connect(&url, "test").unwrap();
    admin
        .client()
        .batch_execute(&format!(
            "CREATE ROLE {worker} LOGIN PASSWORD 'wpw'; CREATE ROLE {owner} LOGIN PASSWORD 'cpw';"
        ))
        .unwrap();
    roles::setup(
        &mut admin,
        std::slice::from_ref(&owner),
        std::slice::from_ref(&worker),
    )
    .unwrap();
    // Idempotent.
    roles::setup(&mut admin, &[], &[]).unwrap();
    let mut as_owner = Db::connect(&c.url_as(&owner, "cpw", &name), "test").unwrap();
    let s = create(&mut as_owner, "mine", 4);
    // The owner's coordinator asks the first jobs.
    let coordinating = {
        let url = c.url_as(&owner, "cpw", &name);
        std::thread::spawn(move || coordinator::run(&url, "mine", &Default::default()))
    };
    let mut as_worker = Db::connect(&c.url_as(&worker, "wpw", &name), "test").unwrap();
    let e = study::create(
        &mut as_worker,
        &spec("theirs", 4),
        &SpaceDef::of(replay().space(), true),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("permission denied"), "{e}");
    for sql in [
        "UPDATE tunable.studies SET evaluator = '{}'",
        "DELETE FROM tunable.studies",
        "UPDATE tunable.jobs SET config = '{}'",
        "INSERT INTO tunable.events (study_id, seq, kind) VALUES (1, 99, 'ask')",
        "CREATE TABLE tunable.x (a int)",
    ] {
        let e = as_worker.client().batch_execute(sql).unwrap_err();
        assert!(
            e.as_db_error()
                .is_some_and(|d| d.message().contains("permission denied")),
            "{sql}: {e}"
        );
    }
    // What a worker does, it may: claim, renew, record.
    let mut recorded = 0;
    while recorded < 4 {
        match queue::claim(&mut as_worker, &[s.id], "w", "0", Duration::from_secs(30)).unwrap() {
            Some(claim) => {
                assert!(
                    queue::renew(&mut as_worker, &claim, "w", Duration::from_secs(30)).unwrap()
                );
                assert!(queue::record(&mut as_worker, &claim, "w", "0", &Ok(1.0)).unwrap());
                recorded += 1;
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    coordinating.join().unwrap().unwrap();
}

#[test]
fn the_schema_refuses_infinite_timeouts_and_invalid_times() {
    let Some((_c, url, _)) = database() else {
        return;
    };
    let mut db = Db::connect(&url, "test").unwrap();
    let s = create(&mut db, "checked", 2);
    for bad in ["'Infinity'", "'NaN'", "0", "1e9"] {
        let e = db
            .client()
            .execute(
                &format!("UPDATE tunable.studies SET timeout_s = {bad} WHERE id = $1"),
                &[&s.id],
            )
            .unwrap_err();
        assert!(
            e.as_db_error()
                .is_some_and(|d| d.message().contains("check constraint")),
            "{bad}: {e}"
        );
    }
    // The API refuses a time-out above the bound before the schema does.
    let mut long = spec("long", 2);
    long.timeout = Duration::from_secs(8 * 24 * 3600);
    let e = study::create(&mut db, &long, &SpaceDef::of(replay().space(), true)).unwrap_err();
    assert!(
        e.to_string().contains("longer than the longest allowed"),
        "{e}"
    );
}

/// Drops the schema's checks, as a database written by an older tunable (or a superuser going
/// around them) may hold such rows.
fn drop_checks(db: &mut Db) {
    db.client()
        .batch_execute(
            "ALTER TABLE tunable.studies DROP CONSTRAINT studies_timeout_bounded;
             ALTER TABLE tunable.results DROP CONSTRAINT results_time_valid;",
        )
        .unwrap();
}

#[test]
fn an_infinite_timeout_is_an_error_naming_the_study_not_a_panic() {
    let Some((_c, url, _)) = database() else {
        return;
    };
    let mut db = Db::connect(&url, "test").unwrap();
    create(&mut db, "fine", 2);
    let s = create(&mut db, "forever", 2);
    drop_checks(&mut db);
    db.client()
        .execute(
            "UPDATE tunable.studies SET timeout_s = 'Infinity' WHERE id = $1",
            &[&s.id],
        )
        .unwrap();
    let e = study::load(&mut db, "forever").unwrap_err();
    assert!(
        matches!(&e, DistError::BadStudy { reason } if reason.contains("study 'forever': its time-out (inf s)")),
        "{e}"
    );
    assert!(study::list(&mut db).is_err());
    assert!(study::load(&mut db, "fine").is_ok());
}

#[test]
fn nan_and_negative_times_never_win_the_export() {
    let Some((_c, url, _)) = database() else {
        return;
    };
    let mut db = Db::connect(&url, "test").unwrap();
    let s = create(&mut db, "bad-times", 12);
    let coordinating = {
        let url = url.clone();
        std::thread::spawn(move || coordinator::run(&url, "bad-times", &Default::default()))
    };
    // Record every configuration 5 ms, but the first 2.5 ms.
    let mut recorded = 0;
    let mut first_key = None;
    while recorded < 12 {
        match queue::claim(&mut db, &[s.id], "w", "0", Duration::from_secs(30)).unwrap() {
            Some(claim) => {
                let t = if recorded == 0 { 2.5 } else { 5.0 };
                first_key.get_or_insert(claim.key.clone());
                // Recording an invalid time stores a failure instead.
                assert!(queue::record(&mut db, &claim, "w", "0", &Ok(t)).unwrap());
                recorded += 1;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    coordinating.join().unwrap().unwrap();
    // Rows written around the checks: one NaN, one negative.
    drop_checks(&mut db);
    db.client()
        .batch_execute(
            "UPDATE tunable.results SET time_ms = 'NaN'
               WHERE job_id = (SELECT MIN(job_id) FROM tunable.results WHERE time_ms = 5);
             UPDATE tunable.results SET time_ms = -1000
               WHERE job_id = (SELECT MAX(job_id) FROM tunable.results WHERE time_ms = 5);",
        )
        .unwrap();
    let dir = std::env::temp_dir().join(format!("tunable-sec-export-{}", std::process::id()));
    let r = export::export(&mut db, "bad-times", &dir, Some(1)).unwrap();
    let entry = r.entry.unwrap();
    assert_eq!(entry.time_ms, 2.5);
    assert!(
        entry
            .top
            .iter()
            .all(|t| t.time_ms.is_finite() && t.time_ms >= 0.0)
    );
    // `status` shows the same best as the export.
    let st = study::status(&mut db, &s).unwrap();
    assert_eq!(st.best, Some((first_key.unwrap(), 2.5)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_poison_job_is_claimed_with_its_reason() {
    let Some((_c, url, _)) = database() else {
        return;
    };
    let mut db = Db::connect(&url, "test").unwrap();
    let s = create(&mut db, "poison", 2);
    let coordinating = {
        let url = url.clone();
        std::thread::spawn(move || coordinator::run(&url, "poison", &Default::default()))
    };
    let mut poisoned = 0;
    let mut recorded = 0;
    while recorded < 2 {
        // Each job is poisoned before it is claimed.
        db.client()
            .batch_execute("UPDATE tunable.jobs SET config = '{\"a\": ' WHERE state = 'pending'")
            .unwrap();
        match queue::claim(&mut db, &[s.id], "w", "0", Duration::from_secs(30)).unwrap() {
            Some(claim) => {
                // (A job the coordinator made after the update is not poisoned.)
                let result = match claim.poison.clone() {
                    Some(why) => {
                        assert!(
                            why.starts_with("its configuration does not decode"),
                            "{why}"
                        );
                        assert!(claim.config.is_empty());
                        poisoned += 1;
                        Err(why)
                    }
                    None => Ok(1.0),
                };
                queue::record(&mut db, &claim, "w", "0", &result).unwrap();
                recorded += 1;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    coordinating.join().unwrap().unwrap();
    assert!(poisoned >= 1);
}

#[test]
fn coordinator_locks_of_ids_two_to_the_32_apart_do_not_collide() {
    let Some((_c, url, _)) = database() else {
        return;
    };
    let mut db = Db::connect(&url, "test").unwrap();
    let a = create(&mut db, "low", 2);
    db.client()
        .execute(
            "SELECT setval('tunable.studies_id_seq', $1)",
            &[&(a.id + (1_i64 << 32) - 1)],
        )
        .unwrap();
    let b = create(&mut db, "high", 2);
    assert_eq!(b.id, a.id + (1 << 32));
    let run = |name: &'static str| {
        let url = url.clone();
        std::thread::spawn(move || coordinator::run(&url, name, &Default::default()))
    };
    let first = run("low");
    while study::status(&mut db, &a).unwrap().coordinator.is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    // The second study's coordinator is not refused as "already has a running coordinator".
    assert_eq!(study::status(&mut db, &b).unwrap().coordinator, None);
    let second = run("high");
    while study::status(&mut db, &b).unwrap().coordinator.is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut recorded = 0;
    while recorded < 4 {
        match queue::claim(&mut db, &[a.id, b.id], "w", "0", Duration::from_secs(30)).unwrap() {
            Some(claim) => {
                queue::record(&mut db, &claim, "w", "0", &Ok(1.0)).unwrap();
                recorded += 1;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    first.join().unwrap().unwrap();
    second.join().unwrap().unwrap();
}
