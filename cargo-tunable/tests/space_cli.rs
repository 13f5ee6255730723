//! `cargo tunable space build` as users run it.

use std::process::Command;

fn shared(rel: &str) -> String {
    format!("{}/../../shared/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .arg("tunable")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn json_is_exactly_one_line_with_the_counts() {
    let out = run(&["space", "build", &shared("spaces/gemm.json"), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["name"], "gemm");
    assert_eq!(v["valid"], 116_928);
    assert_eq!(v["cartesian"], 663_552);
    assert!(v["seconds"].as_f64().unwrap() > 0.0);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "valid", "cartesian", "seconds"]);
}

#[test]
fn text_report_names_the_expected_count_and_t1_files_work() {
    let out = run(&["space", "build", &shared("spaces/dedispersion.json")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("11130 valid of 22272"), "{text}");
    assert!(
        text.contains("matches the expected valid count 11130"),
        "{text}"
    );
    let out = run(&[
        "space",
        "build",
        &shared("spaces/hotspot_milo.t1.json"),
        "--json",
    ]);
    assert!(out.status.success());
}

#[test]
fn bad_files_fail_with_a_message() {
    let dir = std::env::temp_dir().join(format!("tunable-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"tune_params": {"a": [1, 2]}, "restrictions": ["a > b"]}"#,
    )
    .unwrap();
    let out = run(&["space", "build", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("unknown parameter 'b'") && err.contains('^'),
        "{err}"
    );
    let out = run(&["space", "build", dir.join("missing.json").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("cannot read")
    );
    std::fs::remove_dir_all(&dir).ok();
}
