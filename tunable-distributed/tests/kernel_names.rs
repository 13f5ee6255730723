//! Kernel names become paths on export, so a name must not reach outside `tuned/`: a relative
//! path (`study create --kernel ../../../x`) or an absolute one would make `study export` write,
//! and first delete, files elsewhere; empty names, names with line breaks or U+202E, and names of
//! 100 kB are refused too. `study::create` refuses them, and `export` refuses a study whose row
//! was written by hand with such a name, before writing anything.
//!
//! Skips where PostgreSQL is missing, unless `TUNABLE_REQUIRE` names `postgres`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tunable_distributed::scratch;
use tunable_distributed::{Db, DistError, EvaluatorSpec, SpaceDef, StudySpec, export, study};
use tunable_search::sim::{KernelTunerCache, Replay};

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn folder() -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("tunable-names-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A cache of 4 configurations, all measured.
fn cache(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("k.json");
    std::fs::write(
        &path,
        r#"{"kernel_name": "k", "device_name": "Toy", "tune_params_keys": ["a"],
            "tune_params": {"a": [1, 2, 3, 4]}, "objective": "time", "cache": {
            "1": {"a": 1, "time": 4.0}, "2": {"a": 2, "time": 3.0},
            "3": {"a": 3, "time": 1.0}, "4": {"a": 4, "time": 2.0}}}"#,
    )
    .unwrap();
    path
}

fn spec(name: &str, kernel: &str, cache: PathBuf) -> StudySpec {
    StudySpec {
        name: name.to_owned(),
        kernel: kernel.to_owned(),
        device: "Toy".to_owned(),
        key: 1,
        strategy: "random".to_owned(),
        seed: 1,
        budget: 4,
        evaluator: EvaluatorSpec::Replay { cache, scale: 0.0 },
        timeout: Duration::from_secs(10),
        max_attempts: 3,
    }
}

#[test]
fn bad_kernel_names_are_refused_at_create_and_export() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let url = cluster
        .create_database(&format!("names_{}", std::process::id()))
        .expect("create database");
    let mut db = Db::connect(&url, "test").unwrap();
    let base = folder();
    let cache = cache(&base);
    let replay = Replay::new(&KernelTunerCache::load(&cache).unwrap(), None).unwrap();
    let space = SpaceDef::of(replay.space(), true);
    let outside = base.join("outside");
    let long = "a".repeat(100_000);
    let absolute = outside.join("x").to_string_lossy().into_owned();
    for (i, bad) in [
        "../../../x",
        absolute.as_str(),
        "",
        "a\nb",
        "evil\u{202e}nib",
        long.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        let err = study::create(&mut db, &spec(&format!("s{i}"), bad, cache.clone()), &space)
            .unwrap_err();
        assert!(
            matches!(&err, DistError::BadStudy { reason } if reason.contains("invalid kernel name")),
            "{bad:?}: {err}"
        );
    }
    assert!(study::list(&mut db).unwrap().is_empty());
    // A row written by hand (anyone who can write the database) is refused at export.
    study::create(&mut db, &spec("ok", "k", cache.clone()), &space).unwrap();
    db.client()
        .execute(
            "UPDATE tunable.studies SET kernel = $1 WHERE name = 'ok'",
            &[&"../outside/x"],
        )
        .unwrap();
    let tuned = base.join("tuned");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x.bin"), b"keep me").unwrap();
    let err = export::export(&mut db, "ok", &tuned, Some(0)).unwrap_err();
    assert!(err.to_string().contains("invalid kernel name"), "{err}");
    assert_eq!(std::fs::read(outside.join("x.bin")).unwrap(), b"keep me");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    assert!(!tuned.exists() || std::fs::read_dir(&tuned).unwrap().count() == 0);
    std::fs::remove_dir_all(&base).unwrap();
}
