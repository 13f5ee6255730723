//! Safe against bad data, with the real binary against a throw-away PostgreSQL cluster (TLS-only
//! with `TUNABLE_TEST_TLS=1`): a worker builds no crate a database row names unless allowed, the
//! libpq environment and `.pgpass` replace the URL, roles with least privilege run a study, bad
//! rows (a poison job, an infinite time-out) do not stop a worker, and `study status | head` ends
//! quietly. Skips where PostgreSQL is missing, unless `TUNABLE_REQUIRE` names `postgres`.

mod dist;

use dist::{Proc, assert_complete, count, create_study, database, output, wait_for};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tunable_distributed::harness::HarnessSpec;
use tunable_distributed::{Db, EvaluatorSpec, SpaceDef, StudySpec, scratch, study};
use tunable_search::sim::{KernelTunerCache, Replay};

const LIMIT: Duration = Duration::from_secs(120);

/// A crate whose build script leaves a mark: building it runs its code.
fn marking_crate(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("evil");
    let mark = root.join("built-by-a-worker");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"evil\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[features]\nautotune = []\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::write(dir.join("examples/tune.rs"), "fn main() {}\n").unwrap();
    std::fs::write(
        dir.join("build.rs"),
        format!(
            "fn main() {{ std::fs::write({:?}, \"pwned\").unwrap(); }}\n",
            mark.display().to_string()
        ),
    )
    .unwrap();
    (dir, mark)
}

fn toy_space() -> SpaceDef {
    let cache = KernelTunerCache::load(dist::cache_file()).unwrap();
    SpaceDef::of(Replay::new(&cache, None).unwrap().space(), true)
}

fn worker_once(url: &str, study: &str, extra: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut args = vec!["worker", "--db", url, "--study", study, "--exit-when-done"];
    args.extend_from_slice(extra);
    let (ok, out, err) = Proc::start_with(&args, env).finish(LIMIT);
    (ok, format!("{out}{err}"))
}

#[test]
fn a_worker_builds_no_crate_a_database_row_names_unless_allowed() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    let root = std::env::temp_dir().join(format!("tunable-evil-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (dir, mark) = marking_crate(&root);
    let elsewhere = root.join("trusted");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // A row written by whoever can write the database, naming that crate.
    let mut db = Db::connect(&url, "test").unwrap();
    let spec = StudySpec {
        name: "evil".into(),
        kernel: "work".into(),
        device: "cpu".into(),
        key: 0,
        strategy: "random".into(),
        seed: 1,
        budget: 2,
        evaluator: EvaluatorSpec::Harness(HarnessSpec {
            manifest: dir.join("Cargo.toml"),
            example: "tune".into(),
            release: false,
            kernel: "work".into(),
            key: 0,
            space: 0,
        }),
        timeout: Duration::from_secs(30),
        max_attempts: 1,
    };
    study::create(&mut db, &spec, &toy_space()).unwrap();
    let target = root.join("target");
    let env = [
        ("CARGO", env!("CARGO")),
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
    ];
    // A worker that built it would run its build.rs with the database password in its
    // environment: it refuses.
    let (ok, said) = worker_once(&url, "evil", &[], &env);
    assert!(ok, "{said}");
    assert!(
        said.contains("refusing to build") && said.contains("allowed to build no crate"),
        "{said}"
    );
    let (ok, said) = worker_once(
        &url,
        "evil",
        &["--allow", elsewhere.to_str().unwrap()],
        &env,
    );
    assert!(ok, "{said}");
    assert!(said.contains("is in none of the allowed folders"), "{said}");
    assert!(!mark.exists(), "a worker ran the crate's build script");
    // Allowed, it is built (the mark shows the gate is what stopped it), then refused because
    // its harness does not describe the kernel.
    let (ok, said) = worker_once(&url, "evil", &["--allow", dir.to_str().unwrap()], &env);
    assert!(ok, "{said}");
    assert!(mark.exists(), "{said}");
    assert!(said.contains("without calling work"), "{said}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_libpq_environment_and_pgpass_replace_the_url() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    let name = url.split('/').nth(3).unwrap().split('?').next().unwrap();
    create_study(&url, "env", "random", 2, 0.0, &[]);
    let dir = std::env::temp_dir().join(format!("tunable-pgpass-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let passfile = dir.join("pgpass");
    let port = cluster.port().to_string();
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{port}:{name}:tunable:{}\n", cluster.password()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let root = cluster.root_cert();
    let mut env = vec![
        ("PGHOST", "127.0.0.1".to_owned()),
        ("PGPORT", port.clone()),
        ("PGUSER", "tunable".to_owned()),
        ("PGDATABASE", name.to_owned()),
        ("PGPASSFILE", passfile.to_str().unwrap().to_owned()),
    ];
    if let Some(root) = &root {
        env.push(("PGSSLMODE", "verify-full".to_owned()));
        env.push(("PGSSLROOTCERT", root.to_str().unwrap().to_owned()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // No --db: psql's way.
    let (ok, out, err) = Proc::start_with(&["study", "status"], &env).finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert!(out.starts_with("env (open): 0/2 evaluations"), "{out}");
    // A wrong password in the file is refused in one line that does not show it.
    std::fs::write(
        &passfile,
        format!("*:*:*:*:not-the-{}\n", cluster.password()),
    )
    .unwrap();
    let (ok, _, err) = Proc::start_with(&["study", "status"], &env).finish(LIMIT);
    assert!(!ok);
    assert!(
        err.contains("password authentication failed") && !err.contains("not-the-"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn roles_with_least_privilege_run_a_study() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    let name = url.split('/').nth(3).unwrap().split('?').next().unwrap();
    let (w, c) = (format!("{name}_w"), format!("{name}_c"));
    let mut db = Db::connect(&url, "test").unwrap();
    db.client()
        .batch_execute(&format!(
            "CREATE ROLE {w} LOGIN PASSWORD 'wpw'; CREATE ROLE {c} LOGIN PASSWORD 'cpw';"
        ))
        .unwrap();
    let out = output(&[
        "study",
        "setup-roles",
        "--db",
        &url,
        "--grant-coordinator",
        &c,
        "--grant-worker",
        &w,
    ]);
    assert!(out.status.success(), "{out:?}");
    let as_c = cluster.url_as(&c, "cpw", name);
    let as_w = cluster.url_as(&w, "wpw", name);
    // A worker's role cannot create a study.
    let cache = dist::cache_file();
    let refused = output(&[
        "study",
        "create",
        "--db",
        &as_w,
        "nope",
        "--cache",
        cache.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("permission denied for table studies"),
        "{err}"
    );
    create_study(&as_c, "least", "random", 6, 0.0, &[]);
    let coordinator = Proc::start(&["coordinator", "--db", &as_c, "least", "--poll-ms", "200"]);
    let (ok, said) = worker_once(&as_w, "least", &["--poll-ms", "200"], &[]);
    assert!(
        ok && said.contains("worker done: 6 results recorded"),
        "{said}"
    );
    let (ok, out, err) = coordinator.finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert_complete(&url, 6);
}

#[test]
fn a_poison_job_and_an_infinite_timeout_do_not_stop_a_worker() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    create_study(&url, "p", "random", 4, 0.0, &[]);
    // The coordinator asks a first job; it is poisoned before any worker claims it.
    let coordinator = Proc::start(&["coordinator", "--db", &url, "p", "--poll-ms", "200"]);
    wait_for(&url, "SELECT COUNT(*) FROM tunable.jobs", 1, LIMIT);
    let mut db = Db::connect(&url, "test").unwrap();
    db.client()
        .batch_execute("UPDATE tunable.jobs SET config = '{\"a\": '")
        .unwrap();
    // A second study with an infinite time-out, written around the schema's check.
    create_study(&url, "inf", "random", 2, 0.0, &[]);
    db.client()
        .batch_execute(
            "ALTER TABLE tunable.studies DROP CONSTRAINT studies_timeout_bounded;
             UPDATE tunable.studies SET timeout_s = 'Infinity' WHERE name = 'inf';",
        )
        .unwrap();
    // A job whose configuration does not decode is recorded as failed after its claim commits;
    // the worker goes on, and so does every next worker.
    let (ok, said) = worker_once(&url, "p", &["--poll-ms", "200"], &[]);
    assert!(ok, "{said}");
    assert!(said.contains("worker done: 4 results recorded ("), "{said}");
    assert!(
        said.contains("poison job ")
            && said.contains(" of study 'p': its configuration does not decode"),
        "{said}"
    );
    let (ok, out, err) = coordinator.finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.results WHERE failure LIKE 'poison job %'"
        ),
        1
    );
    // The infinite time-out is refused with its reason, not a panic.
    let (ok, said) = worker_once(&url, "inf", &[], &[]);
    assert!(ok, "{said}");
    assert!(
        said.contains("study 'inf': cannot set up its evaluation here: its time-out (inf s)"),
        "{said}"
    );
    // `status` names the bad study in one line, not a panic.
    let out = output(&["study", "status", "--db", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("study 'inf': its time-out (inf s)")
            && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn study_status_into_a_closed_pipe_ends_quietly() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    for i in 0..3 {
        create_study(&url, &format!("s{i}"), "random", 2, 0.0, &[]);
    }
    let mut child = dist::tunable()
        .args(["study", "status", "--db", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the first line (as `| head -0` would).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{err}");
}

#[test]
fn a_hanging_harness_holds_up_neither_other_studies_nor_the_other_slot() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = database(&cluster);
    let root = std::env::temp_dir().join(format!("tunable-hang-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    // A prebuilt harness that never answers when asked to describe its kernel.
    let hang = root.join("hang.sh");
    let pidfile = root.join("hang.pid");
    std::fs::write(
        &hang,
        format!(
            "#!/bin/sh\necho $$ > {}\nexec sleep 1000\n",
            pidfile.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut db = Db::connect(&url, "test").unwrap();
    let stuck = StudySpec {
        name: "stuck".into(),
        kernel: "work".into(),
        device: "cpu".into(),
        key: 0,
        strategy: "random".into(),
        seed: 1,
        budget: 2,
        evaluator: EvaluatorSpec::Harness(HarnessSpec {
            manifest: root.join("absent/Cargo.toml"),
            example: "tune".into(),
            release: false,
            kernel: "work".into(),
            key: 0,
            space: 0,
        }),
        timeout: Duration::from_secs(30),
        max_attempts: 1,
    };
    study::create(&mut db, &stuck, &toy_space()).unwrap();
    create_study(&url, "free", "random", 4, 0.0, &[]);
    let coordinator = Proc::start(&["coordinator", "--db", &url, "free", "--poll-ms", "200"]);
    let worker = Proc::start(&[
        "worker",
        "--db",
        &url,
        "--devices",
        "0,1",
        "--harness-bin",
        hang.to_str().unwrap(),
        "--poll-ms",
        "200",
    ]);
    // The slot describing the harness holds no lock of the other studies, and describing has a
    // time-out: the other slot and the other study go on meanwhile.
    let (ok, out, err) = coordinator.finish(LIMIT);
    assert!(ok, "{out}{err}");
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM tunable.results r JOIN tunable.studies s ON s.id = r.study_id
             WHERE s.name = 'free'"
        ),
        4
    );
    // The describe still hangs: it was what held up one slot, not the pool.
    assert!(pidfile.exists());
    drop(worker);
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status();
    }
    let _ = std::fs::remove_dir_all(&root);
}
