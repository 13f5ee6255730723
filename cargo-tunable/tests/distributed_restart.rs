//! The database restarted in the middle of a study: the workers and the coordinator (the real
//! binary) reconnect and finish it, losing and duplicating nothing. On a throw-away cluster of
//! its own, since the restart cuts every session. Skips where PostgreSQL is missing, unless
//! `TUNABLE_REQUIRE` names `postgres`.

mod dist;

use dist::{assert_complete, coordinator, count, create_study, database, wait_for, worker};
use std::time::Duration;
use tunable_distributed::scratch::{self, Cluster};

const LIMIT: Duration = Duration::from_secs(90);

#[test]
fn workers_and_coordinator_reconnect_after_the_database_restarts() {
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(e) => return scratch::skip_or_fail(&e),
    };
    let url = database(&cluster);
    create_study(&url, "restart", "auto", 16, 20.0, &[]);
    let coord = coordinator(&url, "restart");
    let a = worker(&url, "restart", "0,1", "3");
    let b = worker(&url, "restart", "0", "3");
    wait_for(&url, "SELECT COUNT(*) FROM tunable.results", 4, LIMIT);
    cluster.stop().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    cluster.start_again().unwrap();
    for p in [a, b] {
        let (ok, _, err) = p.finish(LIMIT);
        assert!(ok, "{err}");
        assert!(err.contains("reconnected to 127.0.0.1:"), "{err}");
    }
    let (ok, out, err) = coord.finish(LIMIT);
    assert!(ok, "{err}");
    assert!(err.contains("reconnected to 127.0.0.1:"), "{err}");
    assert!(
        out.contains("study restart done: 16 configurations asked"),
        "{out}"
    );
    assert_complete(&url, 16);
    // Evaluations in flight during the restart finished and were recorded after it: at most
    // those whose leases expired meanwhile ran twice, and each job has one result.
    assert!(count(&url, "SELECT COUNT(*) FROM tunable.jobs WHERE attempts > 2") == 0);
}
