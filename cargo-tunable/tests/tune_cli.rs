//! Tuning ahead of time, end to end: a crate whose tuning harness (`examples/tune.rs`) calls a
//! kernel for three keys is tuned by `cargo tunable tune` on this machine, then as a second
//! (fake) device; built without the feature, the binary runs its baked entries without tuning,
//! and on a device with no entry times the portable set once and keeps the fastest (with
//! `TUNABLE_MODE=off`, runs the set's first without timing).
//!
//! The kernel reads `TUNABLE_DEVICE` itself to play a different device: its fastest tile is `n`
//! here and on `gpu-new` (which nobody tunes on), and `16 / n` on `gpu-b`, where the other tiles
//! are also slower than here: so the portable set of key 2 is (8, 2), gpu-b's winner first, and
//! gpu-new finds tile 2 the faster of the two. Every run of a
//! variant appends its tile to `calls.log`, which counts the runs. The build is a debug one in
//! `target/e2e`, shared with `tests/end_to_end.rs` of the facade (`--debug`: timing a debug
//! build is meaningless, but the costs here are planted).

mod temp_crate;
use temp_crate::ok;

use std::path::Path;
use std::process::Command;

const LIB: &str = r#"
use std::io::Write;
use tunable::tunable;

/// Costs 1 ms at the device's best tile, 15 ms (30 on gpu-b) more per factor of two away. The
/// kernel reports its cost as its time, as a GPU backend reports a launch's device time, which
/// the tuner ranks by, so tuning does not depend on this machine's load. It also sleeps its
/// cost: a shipped build on a device with no entry times the portable set by the wall clock, and
/// the costs are far apart so that scheduling delays do not reorder the two tiles there.
#[tunable(tile = [1, 2, 4, 8, 16], key = n as u64, budget = 5, strategy = "exhaustive",
          repeats = 5, warmup = 0)]
pub fn work(n: usize) -> usize {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open("calls.log").unwrap();
    writeln!(log, "{tile}").unwrap();
    let (best, step) = match std::env::var("TUNABLE_DEVICE").as_deref() {
        Ok("gpu-b") => (16 / n, 30),
        _ => (n, 15),
    };
    let steps = (tile as f64 / best as f64).log2().abs() as u64;
    let ms = 1 + step * steps;
    tunable::measure::report_device_time(ms as f64);
    std::thread::sleep(std::time::Duration::from_millis(ms));
    tile
}
"#;

const HARNESS: &str = r#"
fn main() {
    for n in [1, 2, 8] {
        aot::work(n);
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let first = aot::work(n);
    let second = aot::work(n);
    println!("ran tile {first} then {second}");
}
"#;

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls.log")).map_or(0, |t| t.lines().count())
}

/// `cargo tunable tune` in `dir`, as `device` (`None`: this machine).
fn tune(dir: &Path, target: &Path, device: Option<&str>) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"));
    cmd.args(["tunable", "tune", "--debug", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .current_dir(dir)
        .env("CARGO", env!("CARGO"))
        .env("CARGO_TARGET_DIR", target)
        .env_remove("TUNABLE_DEVICE");
    if let Some(d) = device {
        cmd.env("TUNABLE_DEVICE", d);
    }
    let out = ok(&mut cmd);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the shipped binary for key `n`: (stdout, stderr).
fn ship(dir: &Path, target: &Path, n: usize, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(target.join("debug/aot"));
    cmd.arg(n.to_string())
        .current_dir(dir)
        .env_remove("TUNABLE_DEVICE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = ok(&mut cmd);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tune_ahead_then_ship_to_tuned_and_unseen_devices() {
    let dir = temp_crate::write("aot", LIB, MAIN, HARNESS);
    let target = temp_crate::target();

    // 1. Tune the three keys on this machine: one row per key, each measuring the 5 tiles.
    let (table, err) = tune(&dir, &target, None);
    for key in [1, 2, 8] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("| work | {key} | cpu: ")) && l.contains(" | 5 | ")),
            "key {key}:\n{table}\n{err}"
        );
        assert!(
            err.contains(&format!("tunable: tuned work (key {key}) on cpu: ")),
            "{err}"
        );
    }
    // Per key: the 5 tiles measured (up to 5 runs each: a variant far slower than the best so
    // far is cut short), then the harness's own call.
    let tuned = calls(&dir);
    assert!((3 * 6..=3 * 26).contains(&tuned), "{tuned}");
    // 2. The same as a second device: warm-started from this machine's entries.
    let (table, err) = tune(&dir, &target, Some("gpu-b"));
    assert_eq!(table.matches("| work | ").count(), 3, "{table}");
    assert!(table.contains("| gpu-b |"), "{table}");
    assert!(
        err.contains(
            "tunable: work (key 2): warm start from this device's key 1 and 1 other device (key 2)"
        ),
        "{err}"
    );
    // Tuned already: nothing to do.
    let (table, _) = tune(&dir, &target, None);
    assert!(table.starts_with("nothing tuned"), "{table}");

    // `show` prints each key's chain: the two devices, then the portable set.
    let out = ok(Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "show"])
        .arg(dir.join("tuned")));
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.contains("work (key 2):\n  on cpu: "), "{shown}");
    assert!(
        shown.contains("  on gpu-b: tile=8\n  on any other device: the fastest of 2 portable configuration(s), timed once:\n    1. tile=8\n    2. tile=2\n"),
        "{shown}"
    );

    // 3. Built without the feature: each tuned key runs its baked entry, without tuning.
    ok(Command::new(env!("CARGO"))
        .args(["build", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target));
    for (n, tile) in [(1, 1), (2, 2), (8, 8)] {
        let before = calls(&dir);
        let (out, err) = ship(&dir, &target, n, &[]);
        assert!(
            out.contains(&format!("ran tile {tile} then {tile}")),
            "{out}{err}"
        );
        assert_eq!(calls(&dir), before + 2, "no tuning: {err}");
    }
    let (out, err) = ship(&dir, &target, 2, &[("TUNABLE_DEVICE", "gpu-b")]);
    assert!(out.contains("ran tile 8 then 8"), "{out}{err}");

    // 4. A device with no entry: the set (tile 8, tile 2) is timed once, the fastest (2) kept.
    let before = calls(&dir);
    let (out, err) = ship(&dir, &target, 2, &[("TUNABLE_DEVICE", "gpu-new")]);
    assert!(out.contains("ran tile 2 then 2"), "{out}{err}");
    assert_eq!(calls(&dir), before + 2 + 2, "timed once, then the calls");
    assert_eq!(
        err.matches("tunable: work has no tuned configuration for device \"gpu-new\": timed the 2 portable configurations once on key 2; running tile=2 (").count(),
        1,
        "{err}"
    );

    // 5. TUNABLE_MODE=off: the set's first (gpu-b's winner), nothing timed.
    let before = calls(&dir);
    let (out, err) = ship(
        &dir,
        &target,
        2,
        &[("TUNABLE_DEVICE", "gpu-new"), ("TUNABLE_MODE", "off")],
    );
    assert!(out.contains("ran tile 8 then 8"), "{out}{err}");
    assert_eq!(calls(&dir), before + 2, "{err}");
    assert!(!err.contains("timed"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
