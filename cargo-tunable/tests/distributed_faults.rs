//! Faults of distributed tuning, with the real binary as coordinator and workers against a
//! throw-away PostgreSQL cluster (the database restart is in `distributed_restart.rs`, on a
//! cluster of its own). Evaluations replay a toy cache with sleeps of a few hundred
//! milliseconds, or of minutes where a test kills a worker mid-evaluation, so that the
//! evaluation cannot end before the kill. Skips where PostgreSQL is missing, unless
//! `TUNABLE_REQUIRE` names `postgres`.

mod dist;

use dist::{
    Proc, assert_complete, coordinator, count, create_study, database, output, wait_for, worker,
};
use std::time::Duration;
use tunable_distributed::scratch;

const LIMIT: Duration = Duration::from_secs(60);

/// A replay's scale that makes the toy cache's evaluations sleep 50 to 150 s.
const SLEEPS_FOR_MINUTES: f64 = 10_000.0;

/// Kills a worker as a machine that dies would: the worker (SIGKILL) and its evaluations (each
/// its own process group), so that no evaluation outlives it.
fn kill_with_evaluations(worker: &mut Proc) {
    let evaluations = children(worker.pid());
    worker.kill9();
    for pid in evaluations {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[test]
fn a_wrong_url_or_password_is_one_error_line() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let port = cluster.port();
    let cases = [
        (
            cluster.url_with_wrong_password("postgres"),
            format!(
                "error: cannot connect to PostgreSQL at 127.0.0.1:{port}/postgres as tunable: password authentication failed for user \"tunable\""
            ),
        ),
        (
            "postgres://tunable:pw@127.0.0.1:notaport/x".to_owned(),
            "error: bad database URL 'postgres://tunable:***@127.0.0.1:notaport/x': invalid connection string: invalid value for option `port`".to_owned(),
        ),
        (
            cluster.url("no_such_database"),
            format!(
                "error: cannot connect to PostgreSQL at 127.0.0.1:{port}/no_such_database as tunable: database \"no_such_database\" does not exist"
            ),
        ),
    ];
    for (url, expected) in cases {
        for args in [
            vec!["study", "status", "--db", &url],
            vec!["coordinator", "--db", &url, "s"],
            vec!["worker", "--db", &url],
        ] {
            let out = output(&args);
            assert!(!out.status.success());
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err, format!("{expected}\n"), "{args:?}");
        }
    }
}

#[test]
fn a_worker_killed_mid_evaluation_loses_only_that_evaluation_which_runs_again_once() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    // Evaluations sleep 50 to 150 s while worker a runs: the one it is killed in cannot end first.
    create_study(&url, "k9", "random", 10, SLEEPS_FOR_MINUTES, &[]);
    let coord = coordinator(&url, "k9");
    let mut a = worker(&url, "k9", "0", "1");
    let mine = format!("'%:{}:%'", a.pid());
    // An evaluation running for 50 ms is a sleeping one (a configuration the cache records as
    // failed answers at once).
    let sleeping = format!(
        "FROM tunable.jobs WHERE state = 'running' AND worker LIKE {mine}
         AND claimed_at < now() - interval '50 milliseconds'"
    );
    // (Read in one query: a job seen sleeping by a count may have ended before a second look.)
    let victim = {
        let mut db = tunable_distributed::Db::connect(&url, "test").unwrap();
        let start = std::time::Instant::now();
        loop {
            let row = db
                .client()
                .query_opt(&format!("SELECT id {sleeping} LIMIT 1"), &[])
                .unwrap();
            if let Some(row) = row {
                break row.get::<_, i64>(0);
            }
            assert!(start.elapsed() < LIMIT, "no evaluation of worker a slept");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    kill_with_evaluations(&mut a);
    // Worker b replays at the usual speed.
    let scaled = count(
        &url,
        "WITH s AS (UPDATE tunable.studies
                    SET evaluator = jsonb_set(evaluator::jsonb, '{scale}', '40')::text
                    WHERE name = 'k9' RETURNING 1)
         SELECT COUNT(*) FROM s",
    );
    assert_eq!(scaled, 1);
    let b = worker(&url, "k9", "0", "1");
    let theirs = format!("'%:{}:%'", b.pid());
    let (ok, _, err) = b.finish(LIMIT);
    assert!(ok, "{err}");
    let (ok, _, err) = coord.finish(LIMIT);
    assert!(ok, "{err}");
    assert_complete(&url, 10);
    // The killed evaluation ran again once, on the other worker; nothing else ran twice.
    assert_eq!(
        count(
            &url,
            &format!("SELECT attempts::int8 FROM tunable.jobs WHERE id = {victim}")
        ),
        2
    );
    assert_eq!(
        count(
            &url,
            &format!(
                "SELECT COUNT(*) FROM tunable.results WHERE job_id = {victim} AND worker LIKE {theirs}"
            )
        ),
        1
    );
    assert_eq!(
        count(&url, "SELECT COUNT(*) FROM tunable.jobs WHERE attempts > 1"),
        1
    );
}

#[test]
fn a_job_whose_worker_dies_more_often_than_allowed_is_recorded_failed() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    // The evaluation sleeps a minute or more: it cannot end before the kill.
    create_study(
        &url,
        "poison",
        "random",
        1,
        SLEEPS_FOR_MINUTES,
        &["--max-attempts", "1"],
    );
    let coord = coordinator(&url, "poison");
    let mut a = worker(&url, "poison", "0", "0.5");
    let sleeping = "SELECT COUNT(*) FROM tunable.jobs WHERE state = 'running'
                    AND claimed_at < now() - interval '50 milliseconds'";
    wait_for(&url, sleeping, 1, LIMIT);
    kill_with_evaluations(&mut a);
    let (ok, _, err) = worker(&url, "poison", "0", "0.5").finish(LIMIT);
    assert!(ok, "{err}");
    let (ok, _, err) = coord.finish(LIMIT);
    assert!(ok, "{err}");
    assert_complete(&url, 1);
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.results WHERE failure = 'abandoned: its evaluation was lost 1 time (the worker died or lost the database before finishing)'"
        ),
        1
    );
}

#[test]
fn a_coordinator_killed_and_restarted_resumes_without_measuring_again() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    create_study(&url, "ck", "auto", 14, 10.0, &[]);
    let mut first = coordinator(&url, "ck");
    let w = worker(&url, "ck", "0,1", "2");
    wait_for(
        &url,
        "SELECT COUNT(*) FROM tunable.results WHERE tell_seq IS NOT NULL",
        5,
        LIMIT,
    );
    first.kill9();
    let events = count(&url, "SELECT COUNT(*) FROM tunable.events");
    let second = coordinator(&url, "ck");
    let (ok, out, err) = second.finish(LIMIT);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("resumed after {events} recorded asks and tells")),
        "{out}"
    );
    let (ok, _, err) = w.finish(LIMIT);
    assert!(ok, "{err}");
    assert_complete(&url, 14);
    assert_eq!(
        count(&url, "SELECT COUNT(*) FROM tunable.jobs WHERE attempts > 1"),
        0,
        "nothing was measured again"
    );
}

#[test]
fn a_second_coordinator_on_a_running_study_is_refused_clearly() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    create_study(&url, "two", "random", 4, 1.0, &[]);
    let first = coordinator(&url, "two");
    // Without workers it asks one job, then waits.
    wait_for(&url, "SELECT COUNT(*) FROM tunable.events", 1, LIMIT);
    let out = output(&["coordinator", "--db", &url, "two"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "error: study 'two' already has a running coordinator (tunable coordinator "
        ),
        "{err}"
    );
    assert!(
        err.ends_with("s); one coordinator per study: stop it first\n") && err.lines().count() == 1,
        "{err}"
    );
    let status = output(&["study", "status", "--db", &url, "two"]);
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(text.contains("coordinator: tunable coordinator "), "{text}");
    drop(first);
}

#[test]
fn a_crashing_or_hanging_evaluation_costs_that_evaluation_not_the_worker() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    // Evaluations would sleep 2 to 6 s, at least twice the time-out of 1 s: each one the cache
    // does not record as failed times out.
    create_study(&url, "bad", "random", 3, 400.0, &["--timeout", "1"]);
    let coord = coordinator(&url, "bad");
    let w: Proc = worker(&url, "bad", "0", "5");
    // Crash an evaluation process (the worker's child) that is sleeping, as an abort() in a
    // driver would. (Not with SIGSEGV: Rust's stack-overflow handler ignores a first SIGSEGV that
    // is not a real fault.)
    loop {
        let Some(pid) = children(w.pid()).into_iter().next() else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        std::thread::sleep(Duration::from_millis(100));
        let killed = std::process::Command::new("kill")
            .args(["-ABRT", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        if killed.success() {
            break;
        }
    }
    let (ok, _, err) = w.finish(LIMIT);
    assert!(ok, "the worker survives: {err}");
    let (ok, _, err) = coord.finish(LIMIT);
    assert!(ok, "{err}");
    assert_complete(&url, 3);
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.results WHERE failure = 'the evaluation process was killed by signal 6 (SIGABRT)'"
        ),
        1
    );
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.results WHERE failure IN
             ('timed out after 1.0 s (evaluation process and its process group killed)', 'CompilationFailedConfig')"
        ),
        2,
        "the others timed out (or are failures the cache recorded)"
    );
}

/// Child processes of `pid` (from `/proc/*/stat`).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid)
            && let Ok(child) = e.file_name().to_string_lossy().parse::<u32>()
        {
            out.push(child);
        }
    }
    out
}
