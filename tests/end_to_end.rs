//! The whole product on a real crate: build a temporary crate that uses `#[tunable]`, run it with
//! the `autotune` feature (it tunes and writes `tuned/kernel.bin`), rebuild without the feature and
//! check that the binary runs the tuned configuration without tuning; then a re-tuning that
//! measures everything again, an unknown `TUNABLE_MODE`, and a corrupted tuned file.
//!
//! Variants that panic, return an error or are very slow are part of the space. Stderr is a pipe
//! here, not a terminal: the summary of every tuning must appear all the same, and a variant's
//! panic must show as one line, not as Rust's panic message.

use std::path::Path;
use std::process::Command;

mod temp_crate;
use temp_crate::{TempCrate, ok};

const MAIN: &str = r#"
use std::io::Write;
use tunable::tunable;

/// Cost grows with the distance from (block, tile) = (32, 2); (64, 4) panics, (16, 4) returns an
/// error, block 128 is very slow. The kernel reports its cost as its time, as a GPU backend
/// reports a launch's device time, so the ranking does not depend on this machine's load. Every
/// call is logged to calls.log to count measurements.
#[tunable(block = [16, 32, 64, 128], tile = [1, 2, 4], constraint = "block * tile <= 256",
          key = tunable::key::next_power_of_two(n as u64), budget = 100, strategy = "exhaustive",
          repeats = 3, warmup = 0)]
fn kernel(n: usize) -> Result<(usize, usize), String> {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open("calls.log").unwrap();
    writeln!(log, "{block} {tile}").unwrap();
    if block == 64 && tile == 4 {
        panic!("boom");
    }
    if block == 16 && tile == 4 {
        return Err("wrong output".into());
    }
    let cost = block.abs_diff(32) / 16 + tile.abs_diff(2) + if block == 128 { 100 } else { 0 };
    tunable::measure::report_device_time((1 + 3 * cost) as f64);
    Ok((block + n - n, tile))
}

/// In place: doubles `x`; `restore` resets the input before every measured run.
#[tunable(step = [1, 2, 4], restore = x.fill(1.0), budget = 3, strategy = "exhaustive", repeats = 2, warmup = 1)]
fn double_in_place(x: &mut [f32]) {
    for c in x.chunks_mut(step) {
        for v in c {
            *v *= 2.0;
        }
    }
}

/// Checked against the default configuration's output: `step = 3`, the fastest, computes a wrong
/// answer and must be recorded as such, never chosen.
#[tunable(step = [1, 2, 3], verify = out, strategy = "exhaustive", budget = 3, repeats = 1, warmup = 0)]
fn squares(out: &mut [f32]) {
    for (i, v) in out.iter_mut().enumerate() {
        *v = (i * i) as f32 + if step == 3 { 1.0 } else { 0.0 };
    }
    tunable::measure::report_device_time(10.0 / step as f64);
}

fn main() {
    let mut sq = vec![0.0f32; 5];
    squares(&mut sq);
    println!("squares {:?}", sq);
    let mut x = vec![1.0f32; 8];
    double_in_place(&mut x);
    println!("in place {:?}", x[0]);
    println!("result {:?}", kernel(1000));
}
"#;

fn build_and_run(
    dir: &Path,
    target: &Path,
    autotune: bool,
    env: &[(&str, &str)],
) -> (String, String) {
    let mut b = Command::new(env!("CARGO"));
    b.args(["build", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target);
    if autotune {
        b.args(["--features", "autotune"]);
    }
    let built = ok(&mut b);
    let mut r = Command::new(target.join("debug/e2e"));
    r.current_dir(dir);
    for (k, v) in env {
        r.env(k, v);
    }
    let out = ok(&mut r);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&built.stderr).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls.log")).map_or(0, |t| t.lines().count())
}

#[test]
fn tune_persist_bake_and_resume() {
    // Built and run here, not by `TempCrate::run`: its stderr must be a pipe.
    let c = TempCrate::new("e2e", MAIN);
    let (dir, target) = (c.dir.clone(), c.target.clone());

    // 1. Tune: the first call measures every configuration, failures included.
    let (out, err) = build_and_run(&dir, &target, true, &[]);
    assert!(out.contains("result Ok((32, 2))"), "{out}{err}");
    // Restored before every measured run, then run once more for the caller: doubled once.
    assert!(out.contains("in place 2.0"), "{out}{err}");
    assert!(dir.join("tuned/kernel.bin").exists());
    // The fastest variant of `squares` is wrong: verification rejects it, with its reason.
    assert!(
        out.contains("squares [0.0, 1.0, 4.0, 9.0, 16.0]"),
        "{out}{err}"
    );
    let squares_journal: String = std::fs::read_dir(dir.join("tuned"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains("squares-"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        squares_journal.contains("\"3\": {\"step\":3,\"time\":\"RuntimeFailedConfig\",\"reason\":\"wrong output: 5 of 5 elements differ; first at index 0: 1, expected 0"),
        "{squares_journal}"
    );
    let measured = calls(&dir);
    assert!(measured >= 10, "{measured}");
    // One summary line per tuning, though stderr is not a terminal.
    let summary = err
        .lines()
        .find(|l| l.starts_with("tunable: tuned kernel (key 1024) on cpu: "))
        .unwrap_or_else(|| panic!("no summary:\n{err}"));
    assert!(
        summary.contains(" -> tuned ") && summary.contains("[block=32, tile=2]"),
        "{summary}"
    );
    assert!(summary.contains("evaluations ("), "{summary}");
    assert!(
        summary.contains(", 2 failed, ") && summary.contains(" stopped early) in "),
        "a panic and an error; {summary}"
    );
    assert!(
        err.contains("tunable: tuned squares (key 0) on cpu: "),
        "{err}"
    );
    assert!(
        err.contains("tunable: tuned double_in_place (key 0) on cpu: "),
        "{err}"
    );
    // The panicking variant: one line, and none of Rust's panic output.
    assert!(
        err.contains("tunable: kernel (key 1024): variant block=64, tile=4 panicked: boom (recorded as failed)"),
        "{err}"
    );
    assert!(!err.contains("panicked at"), "{err}");

    // 2. A plain build bakes the winner: same result, no call beyond the one asked for.
    let (out, err) = build_and_run(&dir, &target, false, &[]);
    assert!(out.contains("result Ok((32, 2))"), "{out}{err}");
    assert_eq!(calls(&dir), measured + 1, "the shipped build must not tune");

    // 3. Re-tuning measures every configuration again: the journal does not answer it.
    let before = calls(&dir);
    let (out, err) = build_and_run(&dir, &target, true, &[("TUNABLE_MODE", "retune")]);
    assert!(out.contains("result Ok((32, 2))"), "{out}{err}");
    assert!(
        calls(&dir) >= before + 11,
        "a retune must measure again: {err}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("tunable: tuned kernel (key 1024)")
                && l.contains("11 evaluations (11 measured, 2 failed, ")),
        "{err}"
    );
    let before = calls(&dir);

    // 4. An unknown mode is an error naming the valid ones, not a silent `tune`.
    let bad = Command::new(target.join("debug/e2e"))
        .current_dir(&dir)
        .env("TUNABLE_MODE", "Off")
        .output()
        .unwrap();
    let bad_err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "{bad_err}");
    assert!(
        bad_err.contains("TUNABLE_MODE=\"Off\" is not valid; expected one of: off, tune, retune"),
        "{bad_err}"
    );
    assert_eq!(calls(&dir), before, "nothing may run under an unknown mode");

    // 5. A corrupted tuned file: the build succeeds with a diagnostic, the default runs.
    std::fs::write(dir.join("tuned/kernel.bin"), b"TUNABLE\0\x01\0\0\0garbage").unwrap();
    let (out, err) = build_and_run(&dir, &target, false, &[]);
    assert!(
        out.contains("result Ok((16, 1))"),
        "default expected: {out}{err}"
    );
    assert!(err.contains("unusable"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
