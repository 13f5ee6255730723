//! `cargo tunable transfer` end to end: on planted caches (figures checked by hand) and on the
//! shared gemm caches (invariants of the method).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared(rel: &str) -> String {
    format!("{}/../../shared/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn transfer(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "transfer", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A cache of one parameter `b` with the given times (`None`: failed).
fn cache(dir: &Path, device: &str, times: &[(i64, Option<f64>)]) -> PathBuf {
    let records: Vec<String> = times
        .iter()
        .map(|(b, t)| {
            let time = t.map_or_else(|| "\"RuntimeFailedConfig\"".to_owned(), |t| t.to_string());
            format!("\"{b}\": {{\"b\": {b}, \"time\": {time}}}")
        })
        .collect();
    let values: Vec<String> = times.iter().map(|(b, _)| b.to_string()).collect();
    let text = format!(
        "{{\"device_name\": \"{device}\", \"tune_params_keys\": [\"b\"], \"tune_params\": {{\"b\": [{}]}}, \"cache\": {{{}}}}}",
        values.join(", "),
        records.join(", ")
    );
    let path = dir.join(format!("k_{device}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn planted_devices_give_the_fractions_worked_out_by_hand() {
    let dir = std::env::temp_dir().join(format!("tunable-transfer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // x and y agree: b=1 is their best; z prefers b=3, where x and y are slow.
    let x = cache(
        &dir,
        "x",
        &[(1, Some(1.0)), (2, Some(1.25)), (3, Some(4.0))],
    );
    let y = cache(&dir, "y", &[(1, Some(2.0)), (2, Some(2.5)), (3, Some(8.0))]);
    let z = cache(&dir, "z", &[(1, Some(4.0)), (2, None), (3, Some(1.0))]);
    let lines = transfer(&[
        "--cache",
        x.to_str().unwrap(),
        "--cache",
        y.to_str().unwrap(),
        "--cache",
        z.to_str().unwrap(),
        "--k",
        "2",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let z_line = &lines[2];
    assert_eq!(z_line["target"], "k_z");
    // Both other devices' winner is b=1: a quarter of z's optimum.
    assert_eq!(z_line["singles"]["k_x"], 0.25);
    assert_eq!(z_line["singles"]["k_y"], 0.25);
    assert_eq!(z_line["portable"], 0.25);
    // b=2 reaches 0.8 of x's and y's optima, below the hedge of 0.9: the set stays b=1.
    assert_eq!(z_line["set"], 0.25);
    // Stored of x and y: b=1 and b=2 (b=3 too, the three configurations); z's best is b=3.
    assert_eq!(z_line["ceiling"], 1.0);
    // Held out x: y's winner b=1 is x's optimum; z's winner b=3 is a quarter of it.
    assert_eq!(lines[0]["singles"]["k_y"], 1.0);
    assert_eq!(lines[0]["singles"]["k_z"], 0.25);
    let summary = &lines[3];
    assert_eq!(summary["summary"], true);
    assert_eq!(summary["single_min"], 0.25);
    assert_eq!(summary["set_min"], 0.25);
}

#[test]
fn on_the_gemm_caches_the_set_is_never_below_the_portable_configuration() {
    let caches = [
        "gemm_clblast_RTX_2080_Ti",
        "gemm_clblast_RTX_3060_laptop",
        "gemm_clblast_RTX_3090",
    ];
    let paths: Vec<String> = caches
        .iter()
        .map(|c| shared(&format!("cachefiles/{c}.json.gz")))
        .collect();
    let mut args: Vec<&str> = paths.iter().flat_map(|p| ["--cache", p.as_str()]).collect();
    args.extend(["--k", "4"]);
    let lines = transfer(&args);
    assert_eq!(lines.len(), caches.len() + 1);
    for line in &lines[..caches.len()] {
        let (set, portable) = (
            line["set"].as_f64().unwrap(),
            line["portable"].as_f64().unwrap(),
        );
        // The set's first pick is the portable configuration, and re-timing keeps the fastest.
        assert!(set >= portable && set <= 1.0, "{line}");
        // No set drawn from the stored configurations beats all of them.
        assert!(line["ceiling"].as_f64().unwrap() >= set, "{line}");
        assert!(line["set_configs"].as_array().unwrap().len() <= 4);
    }
    let s = &lines[caches.len()];
    for key in ["single", "portable", "set", "ceiling"] {
        let (mean, min) = (
            s[format!("{key}_mean")].as_f64().unwrap(),
            s[format!("{key}_min")].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= mean && mean <= 1.0, "{s}");
    }
}

#[test]
fn caches_of_different_kernels_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "transfer", "--cache"])
        .arg(shared("cachefiles/pnpoly_RTX_3090.json.gz"))
        .arg("--cache")
        .arg(shared("cachefiles/convolution_RTX_3090.json.gz"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give the caches of one kernel"), "{err}");
}
