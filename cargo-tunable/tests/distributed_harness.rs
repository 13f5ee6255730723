//! Distributed tuning with the user's own tuning harness, end to end on this machine: a
//! temporary crate with a CPU kernel and its `examples/tune.rs`; `cargo tunable study create
//! --harness` builds the harness and takes the study's space from it; a coordinator and one
//! worker (the real binary) against a throw-away PostgreSQL cluster spend the budget, each
//! evaluation a run of the harness measuring one configuration; the export is baked by a plain
//! build. Skips where PostgreSQL is missing, unless `TUNABLE_REQUIRE` names `postgres`.
//!
//! The kernel's times are planted: configuration `x` reports `15 * (7 - x)` ms as its time (as a
//! GPU backend reports a launch's device time), so each recorded time is known exactly; `x = 5`
//! panics and `x = 6`, the fastest, computes a wrong output, so both must be recorded failed with
//! their reasons and the winner is `x = 4`. Every run of a variant appends `key x` to `calls.log`
//! in the crate's folder (the harness runs there), which shows what each evaluation ran. The build
//! is a debug one in `target/e2e`, shared with `tune_cli.rs` (timing a debug build is meaningless,
//! but the costs here are planted).

mod dist;
mod temp_crate;

use dist::{Proc, count, database, output, spend, spend_in};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tunable_distributed::{Db, scratch};

const LIB: &str = r#"
use std::io::Write;
use tunable::tunable;

#[tunable(x = [1, 2, 3, 4, 5, 6], key = n as u64, budget = 6, strategy = "exhaustive",
          repeats = 3, warmup = 0, verify = out)]
pub fn work(n: usize, out: &mut [f64]) -> usize {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open("calls.log").unwrap();
    writeln!(log, "{n} {x}").unwrap();
    if x == 5 {
        panic!("x=5 explodes");
    }
    tunable::measure::report_device_time(15.0 * (7 - x) as f64);
    out.fill(n as f64 + if x == 6 { 1.0 } else { 0.0 });
    x
}
"#;

const HARNESS: &str = r#"
fn main() {
    let mut out = [0.0; 4];
    println!("harness: key 1 first");
    distharness::work(1, &mut out);
    distharness::work(2, &mut out);
    println!("harness: the end");
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut out = [0.0; 4];
    println!("ran x {}", distharness::work(2, &mut out));
}
"#;

const LIMIT: Duration = Duration::from_secs(300);

/// The lines of `calls.log` (`key x`), emptied.
fn take_calls(dir: &Path) -> Vec<String> {
    let path = dir.join("calls.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    text.lines().map(str::to_owned).collect()
}

#[test]
fn a_study_evaluated_by_the_crates_harness_records_its_measurements_and_exports_a_baked_winner() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    let dir = temp_crate::write("distharness", LIB, MAIN, HARNESS);
    let target = temp_crate::target();
    let target = target.to_str().unwrap();
    let env = [("CARGO", env!("CARGO")), ("CARGO_TARGET_DIR", target)];

    // The study takes its space, budget and strategy from the harness's kernel.
    let crate_dir = dir.to_str().unwrap();
    let create = [
        "study",
        "create",
        "--db",
        &url,
        "h",
        "--harness",
        crate_dir,
        "--kernel",
        "work",
        "--key",
        "2",
        "--debug",
        "--timeout",
        "60",
    ];
    let (ok, out, err) = Proc::start_with(&create, &env).finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("kernel work, device cpu: ")
            && out.contains("key 2, 6 configurations, budget 6, strategy exhaustive seed 1, harness example tune of "),
        "{out}"
    );
    // Describing ran the harness up to the call for key 2: key 1's default, nothing of key 2.
    assert_eq!(take_calls(&dir), ["1 1"]);

    // A study naming a kernel the harness never calls for that key is refused, saying so.
    let mut wrong = create.to_vec();
    wrong[4] = "h2";
    wrong[10] = "3";
    let (ok, _, err) = Proc::start_with(&wrong, &env).finish(LIMIT);
    assert!(!ok);
    assert!(err.contains("without calling work for key 3"), "{err}");
    take_calls(&dir);

    // A worker not allowed to build the crate refuses the study, saying why, and builds
    // nothing (a path from the database is not trusted).
    let (ok, out, err) = Proc::start_with(
        &["worker", "--db", &url, "--study", "h", "--exit-when-done"],
        &env,
    )
    .finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("study 'h': cannot set up its evaluation here: refusing to build ")
            && err.contains("this machine was allowed to build no crate")
            && out.contains("worker done: 0 results recorded"),
        "{out}{err}"
    );
    let said = spend(&url, "h", &["--verbose", "--allow", crate_dir], &env, LIMIT);
    assert!(
        said.contains("worker done: 6 results recorded (2 failed"),
        "{said}"
    );

    // Each result is the harness's measurement of that configuration.
    let mut db = Db::connect(&url, "test").unwrap();
    let rows = db
        .client()
        .query(
            "SELECT (j.config::jsonb->>'x')::int8, r.time_ms, r.failure FROM tunable.results r
             JOIN tunable.jobs j ON j.id = r.job_id ORDER BY 1",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let x: i64 = row.get(0);
        let time: Option<f64> = row.get(1);
        let failure: Option<String> = row.get(2);
        match x {
            5 => assert_eq!(failure.as_deref(), Some("panicked: x=5 explodes")),
            6 => assert!(
                failure
                    .as_deref()
                    .is_some_and(|f| f.starts_with("wrong output: 4 of 4 elements differ")),
                "{failure:?}"
            ),
            x => {
                let t = time.unwrap_or_else(|| panic!("x={x} failed: {failure:?}"));
                let planted = 15.0 * (7 - x) as f64;
                assert_eq!(t, planted, "x={x}: {t} ms, planted {planted} ms");
            }
        }
    }
    // What the evaluations ran: per evaluation, key 1's default once; for key 2 the default as
    // the reference, the configuration's check and its 3 timed runs (x=5 panics at its check,
    // x=6 fails its check). The worker's check of the harness's space ran key 1 once more.
    // Nothing was tuned or stored in the crate.
    let calls = take_calls(&dir);
    assert_eq!(
        calls.iter().filter(|c| *c == "1 1").count(),
        1 + 6,
        "{calls:?}"
    );
    assert!(
        calls.iter().all(|c| c == "1 1" || c.starts_with("2 ")),
        "{calls:?}"
    );
    for x in 1..=6 {
        let runs = calls.iter().filter(|c| **c == format!("2 {x}")).count();
        let expected = match x {
            1 => 6 + 1 + 3,
            5 | 6 => 1,
            _ => 4,
        };
        assert_eq!(runs, expected, "x={x}: {calls:?}");
    }
    // (The build's placeholder is all the tuned folder holds: no entry, no journal.)
    let mut files: Vec<String> = std::fs::read_dir(dir.join("tuned"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["work.bin", "work.space"]);
    assert_eq!(
        tunable_runtime::store::read(&dir.join("tuned/work.bin")).unwrap(),
        []
    );
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.studies WHERE state = 'done'"
        ),
        1
    );

    // A worker given the harness prebuilt (a copy elsewhere) evaluates a study with it, never
    // building: its cargo is `false`, so a build would refuse the study.
    let prebuilt = dir.with_file_name(format!("distharness-prebuilt-{}", std::process::id()));
    std::fs::copy(Path::new(target).join("debug/examples/tune"), &prebuilt).unwrap();
    let mut again = create.to_vec();
    again[4] = "hp";
    let (ok, out, err) = Proc::start_with(&again, &env).finish(LIMIT);
    assert!(ok, "{out}{err}");
    take_calls(&dir);
    let said = spend(
        &url,
        "hp",
        &[
            "--harness-bin",
            "/bin/true",
            "--harness-bin",
            prebuilt.to_str().unwrap(),
        ],
        &[("CARGO", "false"), ("CARGO_TARGET_DIR", target)],
        LIMIT,
    );
    assert!(
        said.contains("worker done: 6 results recorded (2 failed"),
        "{said}"
    );
    // The prebuilt harness ran in the crate's folder: key 2's configurations are in its log.
    let calls = take_calls(&dir);
    assert_eq!(calls.iter().filter(|c| *c == "2 4").count(), 4, "{calls:?}");

    // A machine without the crate: a study made from a copy of the crate is evaluated after the
    // copy is gone, by the prebuilt harness, in the worker's own folder.
    let copy = dir.with_file_name(format!("distharness-copy-{}", std::process::id()));
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "src/main.rs",
        "examples/tune.rs",
    ] {
        std::fs::create_dir_all(copy.join(file).parent().unwrap()).unwrap();
        std::fs::copy(dir.join(file), copy.join(file)).unwrap();
    }
    let mut away = create.to_vec();
    away[4] = "ha";
    away[6] = copy.to_str().unwrap();
    let (ok, out, err) = Proc::start_with(&away, &env).finish(LIMIT);
    assert!(ok, "{out}{err}");
    std::fs::remove_dir_all(&copy).unwrap();
    let here = dir.with_file_name(format!("distharness-worker-{}", std::process::id()));
    std::fs::create_dir_all(&here).unwrap();
    let said = spend_in(
        &url,
        "ha",
        &["--harness-bin", prebuilt.to_str().unwrap()],
        &[("CARGO", "false"), ("CARGO_TARGET_DIR", target)],
        LIMIT,
        Some(&here),
    );
    assert!(
        said.contains("worker done: 6 results recorded (2 failed"),
        "{said}"
    );
    let calls = take_calls(&here);
    assert_eq!(calls.iter().filter(|c| *c == "2 4").count(), 4, "{calls:?}");
    std::fs::remove_dir_all(&here).ok();
    std::fs::remove_file(&prebuilt).ok();

    // The export is baked by a plain build: it runs x=4 without tuning.
    let tuned = dir.join("tuned");
    let out = output(&[
        "study",
        "export",
        "--db",
        &url,
        "h",
        "--out",
        tuned.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("work.bin: work on cpu: ") && said.contains("key 2"),
        "{said}"
    );
    let built = Command::new(env!("CARGO"))
        .args(["build", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target)
        .status()
        .unwrap();
    assert!(built.success());
    let shipped = Command::new(Path::new(target).join("debug/distharness"))
        .current_dir(&dir)
        .env_remove("TUNABLE_DEVICE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&shipped.stdout);
    assert!(
        said.contains("ran x 4"),
        "{said}{}",
        String::from_utf8_lossy(&shipped.stderr)
    );
    assert_eq!(take_calls(&dir), ["2 4"]);
    std::fs::remove_dir_all(&dir).ok();
}
