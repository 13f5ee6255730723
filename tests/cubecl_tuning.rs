//! `#[cube]` kernels tuned end to end through `#[tunable]` with the `cubecl` and `autotune`
//! features, on the machine's wgpu adapter (lavapipe in CI): the `matmul_cubecl` example tunes
//! with verified output and stores the winner, and a plain build of it launches the baked
//! comptime values and `CubeDim` with no tuning. A build without the feature has no CubeCL
//! crate in its dependency tree.
//!
//! The example builds with `--release` in this test's own target directory, whose CubeCL crates
//! the test build compiled already (a build of its own would compile CubeCL and wgpu again), and
//! runs as a user's program would. Skips, printing why, without a wgpu adapter, unless
//! `TUNABLE_REQUIRE` names `vulkan`.
#![cfg(feature = "cubecl")]

use std::process::Command;

mod common;
mod temp_crate;
use temp_crate::{first_call, journals, ok, root, summary, texts, winner};

fn adapter() -> bool {
    let gpu = tunable::backend::cubecl::CubeCl::new();
    common::found(
        "vulkan",
        gpu.map(|g| format!("CubeCL device: {}", g.device_id())),
    )
}

#[test]
fn matmul_cubecl_tunes_then_ships_the_baked_comptime_values() {
    if !adapter() {
        return;
    }
    // This test's own target directory (`<target>/release/deps/<this test>`): cargo holds its
    // lock only while it builds, not while the tests run.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    let tuned = std::env::temp_dir().join(format!("tunable-matmul-cubecl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tuned);
    std::fs::create_dir_all(&tuned).unwrap();
    let build = |features: &str| {
        ok(Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "--release",
                "--example",
                "matmul_cubecl",
            ])
            .args(["--features", features])
            .current_dir(root())
            .env("CARGO_TARGET_DIR", &target)
            .env("TUNABLE_DIR", &tuned));
    };
    let run = |env: &[(&str, &str)]| {
        let out = ok(Command::new(target.join("release/examples/matmul_cubecl"))
            .args(["--n", "64", "--first-call"])
            .env_remove("TUNABLE_MODE")
            .envs(env.iter().copied()));
        let (stdout, stderr) = texts(&out);
        println!("{stdout}{stderr}");
        (stdout, stderr)
    };

    // 1. Tuning: a budget of 12 evaluations, each verified against the default's output.
    build("cubecl,autotune");
    let dir = tuned.to_str().unwrap();
    let (stdout, stderr) = run(&[("TUNABLE_DIR", dir), ("TUNABLE_BUDGET", "12")]);
    assert!(
        stdout.contains("result matches the CPU"),
        "{stdout}{stderr}"
    );
    let summary = summary(&stderr, "tunable: tuned matmul_cubecl (key 64) on cubecl: ");
    assert!(summary.contains("12 evaluations"), "{summary}");
    let journal = journals(&tuned);
    assert!(journal.matches("\"time\":").count() >= 12, "{journal}");
    assert!(!journal.contains("wrong output"), "{journal}");
    // The winner, as the tuning printed it ("[bx=.., by=.., ...]").
    let winner = winner(summary);
    assert!(tuned.join("matmul_cubecl.bin").exists());

    // 2. A plain build bakes the winner: its first call launches the winner's comptime values
    // and CubeDim, with no tuning and no tuned file to read.
    build("cubecl");
    let (shipped, err) = run(&[]);
    assert!(
        !err.contains("tunable: tuned"),
        "the shipped build tuned: {err}"
    );
    let line = first_call(&shipped);
    assert!(line.contains("shipped") && line.contains("Baked"), "{line}");
    let fields = winner.replace('=', ": ");
    assert!(line.contains(&fields), "{line} (tuned {winner})");
    assert!(shipped.contains("result matches the CPU"), "{shipped}");
    std::fs::remove_dir_all(&tuned).ok();
}

/// The crates of this package's normal dependency tree with `features`.
fn tree(features: &str) -> String {
    let out = ok(Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "tunable-kernels",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--features", features])
        .current_dir(root()));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_build_without_the_feature_has_no_cubecl_crate() {
    let cubecl = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("cubecl"))
            .map(str::to_owned)
            .collect()
    };
    for features in ["", "autotune", "wgpu"] {
        let t = tree(features);
        assert!(t.contains("tunable-runtime "), "{t}");
        assert_eq!(cubecl(&t), Vec::<String>::new(), "features {features:?}");
    }
    assert!(
        !cubecl(&tree("cubecl")).is_empty(),
        "the feature adds CubeCL"
    );
}
