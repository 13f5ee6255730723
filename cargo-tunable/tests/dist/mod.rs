//! Helpers of the distributed-tuning tests: the `cargo-tunable` binary as coordinator and
//! workers against a throw-away PostgreSQL cluster, a toy cache replayed with short sleeps, and
//! looks into the database.

#![allow(dead_code)] // Each test binary uses a part.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tunable_distributed::Db;

/// The binary, as `cargo tunable`.
pub fn tunable() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"));
    c.arg("tunable");
    c
}

/// Runs a command to its end.
pub fn output(args: &[&str]) -> Output {
    tunable().args(args).output().expect("run cargo-tunable")
}

/// A background process killed (SIGKILL) when dropped, so a failing test leaves nothing behind.
pub struct Proc(pub Child);

impl Proc {
    /// Starts `cargo tunable ARGS`, its output captured.
    pub fn start(args: &[&str]) -> Proc {
        Proc::start_with(args, &[])
    }

    /// Starts `cargo tunable ARGS` with the environment variables `env` set, its output
    /// captured.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Proc {
        Proc::start_in(args, env, None)
    }

    /// [`Proc::start_with`], in folder `dir` (`None`: this process's).
    pub fn start_in(args: &[&str], env: &[(&str, &str)], dir: Option<&Path>) -> Proc {
        let mut command = tunable();
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        Proc(
            command
                .args(args)
                .envs(env.iter().copied())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn cargo-tunable"),
        )
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Kills it with SIGKILL (`kill -9`).
    pub fn kill9(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Waits for it to end (at most `limit`); its exit success, stdout and stderr.
    pub fn finish(mut self, limit: Duration) -> (bool, String, String) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                let mut out = String::new();
                let mut err = String::new();
                use std::io::Read;
                self.0
                    .stdout
                    .take()
                    .unwrap()
                    .read_to_string(&mut out)
                    .unwrap();
                self.0
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                return (status.success(), out, err);
            }
            assert!(
                start.elapsed() < limit,
                "process {} still running after {limit:?}",
                self.pid()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs a coordinator of `study` and one worker serving it until the worker has spent the
/// budget (`--exit-when-done`; `worker_args` and `env` added to the worker's), both polling every
/// 200 ms, each within `limit`; asserts both succeeded and answers the worker's standard output
/// and error.
pub fn spend(
    url: &str,
    study: &str,
    worker_args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> String {
    spend_in(url, study, worker_args, env, limit, None)
}

/// [`spend`], with the worker running in folder `dir` (`None`: this process's).
pub fn spend_in(
    url: &str,
    study: &str,
    worker_args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
    dir: Option<&Path>,
) -> String {
    let coordinator = Proc::start(&["coordinator", "--db", url, study, "--poll-ms", "200"]);
    let mut args = vec![
        "worker",
        "--db",
        url,
        "--study",
        study,
        "--exit-when-done",
        "--poll-ms",
        "200",
    ];
    args.extend_from_slice(worker_args);
    let (ok, out, err) = Proc::start_in(&args, env, dir).finish(limit);
    assert!(ok, "worker: {out}{err}");
    let (ok, c_out, c_err) = coordinator.finish(limit);
    assert!(ok, "coordinator: {c_out}{c_err}");
    format!("{out}{err}")
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            self.kill9();
        }
    }
}

/// A toy Kernel Tuner cache of 6 x 5 configurations with times of 5 to 15 ms, two of them failed.
pub fn cache_file() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tunable-dist-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("toy_T1000.json");
        let mut records = Vec::new();
        for a in 1..=6 {
            for b in 1..=5 {
                let time = if a * b == 12 {
                    "\"CompilationFailedConfig\"".to_owned()
                } else {
                    format!("{}", 5.0 + f64::from((a * 7 + b * 3) % 11))
                };
                records.push(format!(
                    "\"{a},{b}\": {{\"a\": {a}, \"b\": {b}, \"time\": {time}}}"
                ));
            }
        }
        let text = format!(
            r#"{{"kernel_name": "toy", "device_name": "Toy T1000", "tune_params_keys": ["a", "b"],
                "tune_params": {{"a": [1, 2, 3, 4, 5, 6], "b": [1, 2, 3, 4, 5]}},
                "cache": {{{}}}}}"#,
            records.join(",\n")
        );
        std::fs::write(&path, text).unwrap();
        path
    })
    .clone()
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fresh database on `cluster`; its URL.
pub fn database(cluster: &tunable_distributed::scratch::Cluster) -> String {
    let name = format!(
        "cli{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    cluster.create_database(&name).expect("create database")
}

/// Creates a study replaying the toy cache, each evaluation sleeping `scale` times its recorded
/// time.
pub fn create_study(
    url: &str,
    name: &str,
    strategy: &str,
    budget: usize,
    scale: f64,
    extra: &[&str],
) {
    let cache = cache_file();
    let budget = budget.to_string();
    let scale = scale.to_string();
    let mut args = vec![
        "study",
        "create",
        "--db",
        url,
        name,
        "--cache",
        cache.to_str().unwrap(),
        "--strategy",
        strategy,
        "--budget",
        &budget,
        "--scale",
        &scale,
    ];
    args.extend_from_slice(extra);
    let out = output(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A worker serving one study on `devices`, with a short lease, stopping when the study is done.
pub fn worker(url: &str, study: &str, devices: &str, lease: &str) -> Proc {
    Proc::start(&[
        "worker",
        "--db",
        url,
        "--study",
        study,
        "--devices",
        devices,
        "--lease",
        lease,
        "--exit-when-done",
        "--poll-ms",
        "200",
    ])
}

/// The coordinator of a study.
pub fn coordinator(url: &str, study: &str) -> Proc {
    Proc::start(&["coordinator", "--db", url, study, "--poll-ms", "200"])
}

/// An integer the query answers (first column of its one row).
pub fn count(url: &str, sql: &str) -> i64 {
    let mut db = Db::connect(url, "test").unwrap();
    db.client().query_one(sql, &[]).unwrap().get(0)
}

/// Waits until `sql` answers at least `n` (at most `limit`).
pub fn wait_for(url: &str, sql: &str, n: i64, limit: Duration) {
    let start = Instant::now();
    let mut db = Db::connect(url, "test").unwrap();
    loop {
        let v: i64 = db.client().query_one(sql, &[]).unwrap().get(0);
        if v >= n {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "waited {limit:?} for `{sql}` to reach {n} (at {v})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Checks a finished study spent exactly its budget, one result per job and per configuration.
pub fn assert_complete(url: &str, budget: i64) {
    assert_eq!(count(url, "SELECT COUNT(*) FROM tunable.jobs"), budget);
    assert_eq!(count(url, "SELECT COUNT(*) FROM tunable.results"), budget);
    assert_eq!(
        count(url, "SELECT COUNT(DISTINCT config_key) FROM tunable.jobs"),
        budget
    );
    assert_eq!(
        count(
            url,
            "SELECT COUNT(*) FROM tunable.results WHERE tell_seq IS NULL"
        ),
        0,
        "every result was told to the strategy"
    );
    assert_eq!(
        count(
            url,
            "SELECT COUNT(*) FROM tunable.studies WHERE state = 'done'"
        ),
        count(url, "SELECT COUNT(*) FROM tunable.studies")
    );
}
