//! The journal a tuning run writes is a Kernel Tuner cache that `cargo tunable bench --cache`
//! replays as it is: tune a space with the runtime's tuner (failures included), then bench
//! strategies on the journal file and check that every replayed value is the measured one.

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use tunable_runtime::journal::Journal;
use tunable_runtime::tuner::{Closure, Journaled, TuneOptions, tune};
use tunable_search::SpaceBuilder;

#[test]
fn a_tuning_journal_replays_in_bench_unchanged() {
    let dir = std::env::temp_dir().join(format!("tunable-journal-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let space = Arc::new(
        SpaceBuilder::new()
            .name("saxpy")
            .param("block", [32, 64, 128, 256])
            .param("unroll", [1, 2, 4])
            .param("mode", ["plain", "vector"])
            .constraint("block * unroll <= 512")
            .build()
            .unwrap(),
    );
    let time = |p: usize| 1.0 + ((p * 7) % 11) as f64 / 4.0;
    let path = Journal::path_for(&dir, "saxpy", 1024, &space).unwrap();
    let journal = Journal::open(&path, Arc::clone(&space), "saxpy", "cpu: test").unwrap();
    let mut measure = Journaled::new(
        Some(journal),
        Closure(|p: usize| match p % 5 {
            0 => Err(format!("wrong output at {p}")),
            _ => Ok(time(p)),
        }),
    );
    let opts = TuneOptions {
        budget: space.len(),
        batch: 4,
        strategy: "random".into(),
        ..TuneOptions::default()
    };
    let report = tune(&space, &opts, &mut measure, &mut []).unwrap();
    assert_eq!(report.evaluations, space.len());
    assert!(!report.failures.is_empty());
    drop(measure);
    let journal = std::fs::read(&path).unwrap();

    let out = dir.join("bench");
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "bench", "--cache", path.to_str().unwrap()])
        .args(["--strategy", "random,exhaustive", "--budget", "12"])
        .args([
            "--repeats",
            "3",
            "--seed",
            "5",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        journal,
        "bench changed the journal"
    );

    // Every value a replayed run met is one the tuning measured; failures replay as null.
    let measured: HashMap<String, Option<f64>> = (0..space.len())
        .map(|p| {
            let v = (p % 5 != 0).then(|| time(p));
            (format!("{v:?}"), v)
        })
        .collect();
    let stem = path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .trim_end_matches(".json");
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join(stem).join("exhaustive.json")).unwrap(),
    )
    .unwrap();
    let runs = file["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let mut nulls = 0;
    for v in runs.iter().flat_map(|r| r.as_array().unwrap()) {
        let v = v.as_f64();
        nulls += usize::from(v.is_none());
        assert!(
            measured.contains_key(&format!("{v:?}")),
            "{v:?} was never measured"
        );
    }
    // Exhaustive replays the first 12 configurations in order: 0, 5 and 10 failed.
    let first: Vec<Option<f64>> = runs[0]
        .as_array()
        .unwrap()
        .iter()
        .map(serde_json::Value::as_f64)
        .collect();
    let expected: Vec<Option<f64>> = (0..12).map(|p| (p % 5 != 0).then(|| time(p))).collect();
    assert_eq!(first, expected);
    assert_eq!(nulls, 3 * 3);
    std::fs::remove_dir_all(&dir).ok();
}
