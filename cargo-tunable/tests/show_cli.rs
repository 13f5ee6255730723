//! `cargo tunable show` on a folder written by the store: UTC dates, and the mark of entries the
//! last build's annotation no longer fits.

use std::path::Path;
use std::process::Command;
use tunable_runtime::store::{StoredValue, TunedEntry, store, tuned_file};

#[test]
fn show_prints_stored_entries_and_skips_damaged_files() {
    let dir = std::env::temp_dir().join(format!("tunable-show-{}", std::process::id()));
    let entry = TunedEntry {
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
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
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
        kernel: "axpy".into(),
        ..entry
    };
    store(&tuned_file(&dir, "axpy").unwrap(), old).unwrap();
    std::fs::write(dir.join("axpy.space"), "00000000000000ff\n").unwrap();
    std::fs::write(dir.join("broken.bin"), b"nope").unwrap();
    // A damaged device binary of `saxpy`: listed in the table and in the JSON alike.
    std::fs::create_dir_all(dir.join("saxpy.artifacts")).unwrap();
    std::fs::write(
        dir.join("saxpy.artifacts/00000000000000aa.clbin"),
        b"TUNABIN\0 torn",
    )
    .unwrap();
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
    assert!(
        text.contains("| saxpy | | | | | | saxpy.artifacts/00000000000000aa.clbin | damaged: "),
        "{text}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "show", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[1]["kernel"], "saxpy");
    assert_eq!(v[1]["params"][0], serde_json::json!(["block", "64"]));
    assert_eq!(v[1]["tuned"], "2026-11-23 19:40");
    let damaged = &v[1]["damaged_artifacts"];
    assert_eq!(
        damaged[0]["file"], "saxpy.artifacts/00000000000000aa.clbin",
        "{v}"
    );
    assert!(
        damaged[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("truncated") || r.contains("header")),
        "{v}"
    );
    assert_eq!(v[0]["damaged_artifacts"], serde_json::json!([]), "{v}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("saxpy.artifacts/00000000000000aa.clbin: damaged: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The chain's portable set for the key: with one tuned device, its winner first.
    assert_eq!(v[1]["portable"][0], "block=64, mode=fast", "{v}");
    assert_eq!(
        (&v[0]["stale"], &v[1]["stale"]),
        (&serde_json::json!(true), &serde_json::json!(false))
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A tuned file with a valid frame and checksum around a string length of 2^62 is reported and
/// skipped like any damaged file, not an allocation failure that aborts `show`; and an entry whose
/// kernel name is not an identifier (written by hand) is shown escaped, its terminal control
/// characters too.
#[test]
fn show_survives_forged_files_and_escapes_names() {
    let dir = std::env::temp_dir().join(format!("tunable-show-forged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut payload = vec![1u8, 0xfd];
    payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
    payload.extend_from_slice(b"saxpy");
    let fnv = payload.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut file = b"TUNABLE\0".to_vec();
    file.extend_from_slice(&2u32.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&fnv.to_le_bytes());
    file.extend_from_slice(&payload);
    std::fs::write(dir.join("forged.bin"), file).unwrap();
    let hand = TunedEntry {
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
        kernel: "../x\u{1b}[2J".into(),
        device: "gpu\u{202e}evil".into(),
        key: 1,
        space_hash: 1,
        params: vec![("b".into(), StoredValue::Int(1))],
        time_ms: 1.0,
        evaluations: 1,
        strategy: "auto".into(),
        timestamp: 0,
        top: Vec::new(),
    };
    std::fs::write(
        dir.join("hand.bin"),
        tunable_runtime::store::encode(&[hand]),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "show"])
        .arg(&dir)
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{text}\n{err}");
    assert!(
        err.contains("forged.bin is unusable: a length in the 15-byte payload"),
        "{err}"
    );
    assert!(
        text.contains("| \"../x\\u{1b}[2J\" (invalid name) | gpu\\u{202e}evil |"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `cargo tunable show` of `dir` (with `--json` when `json`): its standard output, once it
/// succeeded.
fn show(dir: &Path, json: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"));
    cmd.args(["tunable", "show"]).arg(dir);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An entry of `gemm` with these parameters, as a tuning by `auto` of 30 evaluations stores it.
fn gemm(device: &str, key: u64, params: &[(&str, i64)], time_ms: f64) -> TunedEntry {
    TunedEntry {
        kernel: "gemm".into(),
        device: device.into(),
        key,
        space_hash: 1,
        params: params
            .iter()
            .map(|&(n, v)| (n.into(), StoredValue::Int(v)))
            .collect(),
        time_ms,
        evaluations: 30,
        strategy: "auto".into(),
        timestamp: 1_795_462_807,
        top: Vec::new(),
        sources: Vec::new(),
        binaries: Vec::new(),
        front: None,
    }
}

/// An entry tuned with clock parameters: the table shows them in its configuration, and below
/// it the settings and the `nvidia-smi` commands an operator applies them with.
#[test]
fn show_says_how_to_apply_the_clocks_an_entry_was_tuned_at() {
    let dir = std::env::temp_dir().join(format!("tunable-show-clocks-{}", std::process::id()));
    let params = [
        ("block", 64),
        ("nvml_gr_clock", 1410),
        ("nvml_pwr_limit", 450),
    ];
    let device = "cuda: NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)";
    store(
        &tuned_file(&dir, "gemm").unwrap(),
        gemm(device, 4096, &params, 1.5),
    )
    .unwrap();
    let text = show(&dir, false);
    assert!(
        text.contains("| block=64, nvml_gr_clock=1410, nvml_pwr_limit=450 |"),
        "{text}"
    );
    assert!(
        text.contains(
            "  gemm on cuda: NVIDIA H100 80GB HBM3 (sm_90, driver 13.0) (key 4096): \
             nvml_gr_clock=1410, nvml_pwr_limit=450\n    sudo nvidia-smi -i <gpu> -lgc 1410,1410\n    \
             sudo nvidia-smi -i <gpu> -pl 450\n"
        ),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&show(&dir, true)).unwrap();
    assert_eq!(
        v[0]["clocks"],
        serde_json::json!([["nvml_gr_clock", 1410], ["nvml_pwr_limit", 450]])
    );
    assert_eq!(v[0]["apply"][1], "sudo nvidia-smi -i <gpu> -pl 450");
    std::fs::remove_dir_all(&dir).ok();
}

/// An entry tuned for two objectives: `show` prints its front below the table, the shipped
/// point marked, and `--json` lists it under `front`.
#[test]
fn show_prints_the_front_of_an_entry_tuned_for_several_objectives() {
    use tunable_runtime::store::{Front, FrontPoint};
    let dir = std::env::temp_dir().join(format!("tunable-show-front-{}", std::process::id()));
    let point = |block: i64, time_ms: f64, joules: f64| FrontPoint {
        values: vec![StoredValue::Int(block)],
        time_ms,
        objectives: vec![time_ms, joules],
    };
    let entry = TunedEntry {
        front: Some(Front {
            objectives: vec!["time".into(), "energy".into()],
            prefer: "least_energy within 1.10 of fastest".into(),
            points: vec![
                point(64, 1.0, 0.5),
                point(32, 1.05, 0.4),
                point(8, 2.0, 0.3),
            ],
        }),
        ..gemm("cpu: test x2", 512, &[("block", 32)], 1.05)
    };
    store(&tuned_file(&dir, "gemm").unwrap(), entry).unwrap();
    let text = show(&dir, false);
    assert!(
        text.contains("front of gemm on cpu: test x2, key 512 (time, energy; ships least_energy within 1.10 of fastest):"),
        "{text}"
    );
    assert!(
        text.contains("| configuration | time (ms) | time | energy | ships |"),
        "{text}"
    );
    assert!(
        text.contains("| block=64 | 1.0000 | 1.000000 | 0.500000 |  |"),
        "{text}"
    );
    assert!(
        text.contains("| block=32 | 1.0500 | 1.050000 | 0.400000 | yes |"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&show(&dir, true)).unwrap();
    let front = &v[0]["front"];
    assert_eq!(front["objectives"], serde_json::json!(["time", "energy"]));
    assert_eq!(front["points"][1]["chosen"], true);
    assert_eq!(front["points"][2]["values"], serde_json::json!([2.0, 0.3]));
    std::fs::remove_dir_all(&dir).ok();
}
