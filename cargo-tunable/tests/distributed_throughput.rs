//! Throughput of distributed tuning: 1, 2, 4 and 8 worker processes (one device each) replaying
//! a Kernel Tuner cache whose evaluations sleep the recorded times (scaled), with the real binary
//! as coordinator and workers. A benchmark, ignored by default:
//!
//! ```text
//! cargo test --release -p cargo-tunable --test distributed_throughput -- --ignored --nocapture
//! ```
//!
//! Settings (environment): `TUNABLE_BENCH_CACHE` (default the shared `pnpoly_RTX_3090` cache),
//! `TUNABLE_BENCH_SCALE` (sleep per recorded time, default 40: pnpoly's 15 ms kernels sleep
//! 0.6 s on average), `TUNABLE_BENCH_BUDGET` (default 96), `TUNABLE_BENCH_STRATEGY` (default
//! `random`). Prints evaluations per second (results
//! over the span from the first claim to the last result) and checks the issue's target: 8
//! workers at least 6 times as fast as 1.

mod dist;

use dist::{Proc, assert_complete, coordinator, database, output};
use std::time::{Duration, Instant};
use tunable_distributed::{Db, scratch};

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn evaluations_per_second_of_1_2_4_8_workers() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let manifest = env!("CARGO_MANIFEST_DIR");
    let cache = env_or(
        "TUNABLE_BENCH_CACHE",
        &format!("{manifest}/../../shared/data/cachefiles/pnpoly_RTX_3090.json.gz"),
    );
    let scale = env_or("TUNABLE_BENCH_SCALE", "40");
    let budget = env_or("TUNABLE_BENCH_BUDGET", "96");
    let strategy = env_or("TUNABLE_BENCH_STRATEGY", "random");
    println!("cache {cache}, scale {scale}, budget {budget}, strategy {strategy}");
    println!("| workers | evaluations/s | speed-up | wall s | mean sleep ms |");
    println!("| ---: | ---: | ---: | ---: | ---: |");
    let mut rates = Vec::new();
    for workers in [1usize, 2, 4, 8] {
        let url = database(&cluster);
        let out = output(&[
            "study",
            "create",
            "--db",
            &url,
            "bench",
            "--cache",
            &cache,
            "--strategy",
            &strategy,
            "--budget",
            &budget,
            "--scale",
            &scale,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let start = Instant::now();
        let coord = coordinator(&url, "bench");
        let pool: Vec<Proc> = (0..workers)
            .map(|i| {
                Proc::start(&[
                    "worker",
                    "--db",
                    &url,
                    "--study",
                    "bench",
                    "--devices",
                    &i.to_string(),
                    "--exit-when-done",
                    "--poll-ms",
                    "200",
                ])
            })
            .collect();
        let (ok, _, err) = coord.finish(Duration::from_secs(600));
        assert!(ok, "{err}");
        let wall = start.elapsed().as_secs_f64();
        for w in pool {
            let (ok, _, err) = w.finish(Duration::from_secs(60));
            assert!(ok, "{err}");
        }
        assert_complete(&url, budget.parse().unwrap());
        let mut db = Db::connect(&url, "bench").unwrap();
        let row = db
            .client()
            .query_one(
                "SELECT COUNT(*)::float8 / EXTRACT(EPOCH FROM MAX(finished_at) - MIN(started_at))::float8,
                        AVG(COALESCE(time_ms, 0))
                 FROM tunable.results",
                &[],
            )
            .unwrap();
        let rate: f64 = row.get(0);
        let mean_ms: f64 = row.get(1);
        rates.push(rate);
        println!(
            "| {workers} | {rate:.2} | {:.2} | {wall:.1} | {:.1} |",
            rate / rates[0],
            mean_ms * scale.parse::<f64>().unwrap()
        );
    }
    assert!(
        rates[3] >= 6.0 * rates[0],
        "8 workers: {:.2}/s, less than 6 x 1 worker's {:.2}/s",
        rates[3],
        rates[0]
    );
}
