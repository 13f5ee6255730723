//! WGSL kernels tuned end to end through `#[tunable]` with the `wgpu` and `autotune` features,
//! on the machine's wgpu adapter (lavapipe in CI): the `vector_add_wgpu` example tunes with
//! verified output and stores the winner with its pipeline cache blob, and a plain build of it
//! creates its pipeline with the baked override values and the embedded blob; a kernel with
//! planted faults (override values that do not compile, a workgroup beyond the device's limit, a
//! wrong answer) records each as a failed configuration with its reason while the tuning
//! completes, and a tuning killed midway resumes from its journal, measuring only what it had
//! not measured.
//!
//! Both build in `target/e2e` (shared with `end_to_end.rs`), so the tuning runs exactly as a
//! user's program would. Skips, printing why, without a wgpu adapter, unless `TUNABLE_REQUIRE`
//! names `vulkan`.
#![cfg(feature = "wgpu")]

use std::path::Path;
use std::process::Command;

mod common;
mod temp_crate;
use temp_crate::{TempCrate, first_call, journals, ok, root, scratch, summary, texts, winner};

fn adapter() -> bool {
    let gpu = tunable::backend::wgpu::Wgpu::new();
    common::found(
        "vulkan",
        gpu.map(|g| format!("wgpu device: {}", g.device_id())),
    )
}

#[test]
fn vector_add_wgpu_tunes_then_ships_the_baked_overrides() {
    if !adapter() {
        return;
    }
    let target = root().join("target/e2e");
    let build = |features: &str, tuned: &Path| {
        ok(Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", "vector_add_wgpu"])
            .args(["--features", features])
            .current_dir(root())
            .env("CARGO_TARGET_DIR", &target)
            .env("TUNABLE_DIR", tuned));
    };
    let tuned = scratch("vector-add-wgpu");
    build("wgpu,autotune", &tuned);
    let out = ok(Command::new(target.join("debug/examples/vector_add_wgpu"))
        .args(["--n", "262144"])
        .env("TUNABLE_DIR", &tuned));
    let (stdout, stderr) = texts(&out);
    println!("{stdout}{stderr}");
    assert!(
        stdout.contains("result matches the CPU"),
        "{stdout}{stderr}"
    );
    // The whole space was measured and journaled; every variant that ran computed the sum.
    let summary = summary(
        &stderr,
        "tunable: tuned vector_add_wgpu (key 262144) on wgpu: ",
    );
    assert!(summary.contains("24 evaluations (24 measured"), "{summary}");
    let journal = journals(&tuned);
    assert_eq!(journal.matches("\"time\":").count(), 24, "{journal}");
    assert!(!journal.contains("wrong output"), "{journal}");
    // The winner, as the tuning printed it ("[block_size_x=.., per_thread=..]").
    let winner = winner(summary);
    let block: u32 = winner
        .split(", ")
        .find_map(|kv| kv.strip_prefix("block_size_x="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{winner}"));
    assert!(tuned.join("vector_add_wgpu.bin").exists());
    // Where the driver has pipeline caches, the winner's blob is stored beside the tuned file.
    let gpu = tunable::backend::wgpu::Wgpu::new().unwrap();
    let artifacts: Vec<String> = std::fs::read_dir(tuned.join("vector_add_wgpu.artifacts"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if gpu.pipeline_cache() {
        assert!(
            artifacts.len() == 1 && artifacts[0].ends_with(".wgpucache"),
            "{artifacts:?}"
        );
    }

    // A plain build bakes the winner: its first call creates the pipeline with the winner's
    // overrides (the workgroup size naga resolved from them) and the embedded blob, no tuning.
    build("wgpu", &tuned);
    let run = |embedded: &str| {
        texts(&ok(Command::new(
            target.join("debug/examples/vector_add_wgpu"),
        )
        .args(["--n", "262144", "--first-call"])
        .env("TUNABLE_EMBEDDED", embedded)
        .env_remove("TUNABLE_DIR")))
    };
    let (shipped, err) = run("on");
    assert!(
        !err.contains("tunable: tuned"),
        "the shipped build tuned: {err}"
    );
    let line = first_call(&shipped);
    assert!(
        line.contains(&format!("shipped, workgroup [{block}, 1, 1]")),
        "{line} (tuned {winner})"
    );
    let fields = winner.replace('=', ": ");
    assert!(line.contains(&fields), "{line} (tuned {winner})");
    assert!(shipped.contains("result matches the CPU"), "{shipped}");
    if gpu.pipeline_cache() {
        // The blob is given back to the driver: used where the driver keeps pipelines in its
        // caches; where it keeps none (lavapipe's blobs are a header alone), not used, and the
        // program says what the driver did.
        assert!(
            line.contains("embedded pipeline cache used")
                || line.contains("embedded pipeline cache not used")
                    && err.contains("the driver kept nothing of the embedded pipeline cache"),
            "{line}\n{err}"
        );
        let (off, off_err) = run("off");
        assert!(off.contains("embedded pipeline cache not used"), "{off}");
        assert!(!off_err.contains("pipeline cache"), "{off_err}");
    }
    std::fs::remove_dir_all(&tuned).ok();
}

/// A kernel whose space holds every kind of failure: `per_thread = 3` sizes a workgroup array
/// with a division by zero (the overrides do not compile); `block_size_x = 2048` exceeds
/// lavapipe's 1,024 invocations (and most GPUs'); `wrong = 1` adds 0.5 to the answer. With
/// `KILL_AT=k`, the process aborts at the `k`-th call of the body.
const FAULTS: &str = r##"
use std::sync::atomic::{AtomicUsize, Ordering};
use tunable::backend::wgpu::{Buffer, Wgpu, WgpuError};
use tunable::backend::{Dims, Source};
use tunable::tunable;

static ADD_ONE: Source = Source::new("add_one", r#"
override block_size_x: u32 = 64;
override per_thread: u32 = 1;
override wrong: u32 = 0;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> scratch: array<f32, 4u / (3u - per_thread)>;
@compute @workgroup_size(block_size_x)
fn add_one(@builtin(global_invocation_id) id: vec3<u32>) {
    scratch[0] = 1.0;
    for (var k = 0u; k < per_thread; k++) {
        let i = id.x * per_thread + k;
        if (i < arrayLength(&y)) { y[i] = x[i] + scratch[0] + f32(wrong) * 0.5; }
    }
}
"#);

static CALLS: AtomicUsize = AtomicUsize::new(0);

#[tunable(block_size_x = [32, 64, 2048], per_thread = [1, 2, 3], wrong = [0, 1],
          device = gpu.device_id(), verify = y, answer = expected, tolerance = 1e-6,
          strategy = "exhaustive", budget = 100, repeats = 2, warmup = 1,
          key = tunable::key::next_power_of_two(n as u64))]
fn add_one(gpu: &Wgpu, x: &Buffer<f32>, y: &mut Buffer<f32>, expected: &[f32], n: usize)
    -> Result<(), WgpuError> {
    let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if std::env::var("KILL_AT").is_ok_and(|k| k.parse() == Ok(calls)) {
        eprintln!("killed at call {calls}");
        std::process::abort();
    }
    let dims = Dims::divide(n, block_size_x, block_size_x * per_thread);
    gpu.kernel(&ADD_ONE, params)?.launch(dims).arg(x).arg(y).run()
}

fn main() {
    let gpu = Wgpu::new().expect("a wgpu adapter");
    let n = 4096;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let expected: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    let x = gpu.upload(&host).unwrap();
    let mut y = gpu.alloc::<f32>(n).unwrap();
    add_one(&gpu, &x, &mut y, &expected, n).unwrap();
    println!("correct {}", y.read().unwrap() == expected);
}
"##;

#[test]
fn planted_faults_are_failed_configurations_and_a_killed_tuning_resumes() {
    if !adapter() {
        return;
    }
    let c = TempCrate::with_features("wgpu_faults", FAULTS, &["wgpu"]);
    let dir = &c.dir;
    // 1. Killed midway: the process aborts at the 12th call of the body, after the journal
    // holds some of the space.
    c.build(true, &[]);
    let killed = Command::new(c.binary())
        .current_dir(dir)
        .env_remove("TUNABLE_DIR")
        .env_remove("TUNABLE_MODE")
        .env("KILL_AT", "12")
        .output()
        .unwrap();
    let killed_err = String::from_utf8_lossy(&killed.stderr);
    assert!(!killed.status.success(), "{killed_err}");
    assert!(killed_err.contains("killed at call 12"), "{killed_err}");
    let before = journals(&dir.join("tuned")).matches("\"time\":").count();
    assert!(
        before > 0 && before < 18,
        "journaled before the kill: {before}"
    );
    let stored = || {
        tunable::tuned::read(&tunable::tuned::tuned_file(&dir.join("tuned"), "add_one").unwrap())
            .unwrap_or_default()
            .len()
    };
    assert_eq!(stored(), 0, "the killed tuning stored a winner");

    // 2. Run again: the tuning resumes, measures only the rest, and completes with a correct
    // variant for the caller.
    let (stdout, stderr) = c.run(true, &[]);
    assert!(stdout.contains("correct true"), "{stdout}{stderr}");
    let summary = summary(&stderr, "tunable: tuned add_one (key 4096) on wgpu: ");
    let measured: usize = summary
        .split_once(" evaluations (")
        .and_then(|(_, rest)| rest.split_once(" measured"))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no measured count: {summary}"));
    assert!(summary.contains("18 evaluations ("), "{summary}");
    assert_eq!(measured, 18 - before, "resumed from the journal: {summary}");

    // 3. Every failure is in the journal with its reason: of 18 configurations, 6 do not
    // compile (per_thread = 3), 4 more exceed the device's workgroup limit (block_size_x =
    // 2048), 4 compute a wrong answer (wrong = 1); 4 are valid.
    let journal = journals(&dir.join("tuned"));
    let failed = |reason: &[&str]| {
        journal
            .lines()
            .filter(|l| l.contains("RuntimeFailedConfig") && reason.iter().all(|r| l.contains(r)))
            .count()
    };
    assert_eq!(journal.matches("\"time\":").count(), 18, "{journal}");
    assert_eq!(failed(&[]), 14, "{journal}");
    assert_eq!(
        failed(&["per_thread=3", "does not compile", "Division by zero"]),
        6,
        "{journal}"
    );
    assert_eq!(
        failed(&[
            "block_size_x=2048",
            "workgroup size x is 2048; the device allows at most"
        ]),
        4,
        "{journal}"
    );
    assert_eq!(
        failed(&["wrong output: 4096 of 4096 elements differ"]),
        4,
        "{journal}"
    );
    assert_eq!(stored(), 1);
    std::fs::remove_dir_all(dir).ok();
}
