//! `cargo tunable show` on a folder written by the store: UTC dates, and the mark of entries the
//! last build's annotation no longer fits.

use std::process::Command;
use tunable_runtime::store::{StoredValue, TunedEntry, store, tuned_file};

#[test]
fn show_prints_stored_entries_and_skips_damaged_files() {
    let dir = std::env::temp_dir().join(format!("tunable-show-{}", std::process::id()));
    let entry = TunedEntry {
        kernel: "saxpy".into(),
        device: "cpu: test x2".into(),
        key: 1024,
        space_hash: 1,
        params: vec![
            ("block".into(), StoredValue::Int(64)),
            ("mode".into(), StoredValue::Str("fast".into())),
        ],
        time_ms: 0.25,
        evaluations: 40,
        strategy: "genetic".into(),
        timestamp: 1_795_462_807,
        top: Vec::new(),
    };
    store(&tuned_file(&dir, "saxpy").unwrap(), entry.clone()).unwrap();
    // The last build's record of the annotation: `saxpy` still fits, `axpy` changed since.
    std::fs::write(dir.join("saxpy.space"), "0000000000000001\n").unwrap();
    let old = TunedEntry {
        kernel: "axpy".into(),
        ..entry
    };
    store(&tuned_file(&dir, "axpy").unwrap(), old).unwrap();
    std::fs::write(dir.join("axpy.space"), "00000000000000ff\n").unwrap();
    std::fs::write(dir.join("broken.bin"), b"nope").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "show"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "| saxpy | cpu: test x2 | 1024 | block=64, mode=fast | 0.2500 | 40 | genetic | 2026-11-23 19:40 | yes |"
        ),
        "{text}"
    );
    assert!(
        text.contains("| axpy |") && text.contains("| 2026-11-23 19:40 | stale |"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.bin"));
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "show", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[1]["kernel"], "saxpy");
    assert_eq!(v[1]["params"][0], serde_json::json!(["block", "64"]));
    assert_eq!(v[1]["tuned"], "2026-11-23 19:40");
    // The chain's portable set for the key: with one tuned device, its winner first.
    assert_eq!(v[1]["portable"][0], "block=64, mode=fast", "{v}");
    assert_eq!(
        (&v[0]["stale"], &v[1]["stale"]),
        (&serde_json::json!(true), &serde_json::json!(false))
    );
    std::fs::remove_dir_all(&dir).ok();
}
