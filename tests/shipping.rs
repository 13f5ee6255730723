//! What a user's plain (shipped) build runs, with real cargo builds of a temporary crate: a build
//! made before any tuning is rebuilt after it and bakes the winner; changing `TUNABLE_DIR`
//! rebuilds; `TUNABLE_MODE=retune` measures the whole budget again; an edited kernel body is not
//! answered from the old journal; `<kernel>_config` says what runs and where it comes from; the
//! tuning summary reaches stderr when it is a file; a bad `TUNABLE_BUDGET` is an error naming it;
//! a shipped build depends on neither the search engine nor the journal's compression.
//!
//! One test, steps in order, sharing the target folder of `end_to_end.rs` (`target/e2e`) so that
//! the dependencies are built once.

mod temp_crate;

use std::process::Command;
use temp_crate::{TempCrate, ok};

/// Fastest at tile 4, by far (the kernel reports its cost as its time, as a GPU backend reports
/// a launch's device time); every run of a variant is logged to calls.log.
const MAIN: &str = r#"
use std::io::Write;
use tunable::tunable;

#[tunable(tile = [1, 2, 4, 8], key = tunable::key::next_power_of_two(n as u64),
          budget = 4, strategy = "exhaustive", repeats = 1, warmup = 0)]
fn kernel(n: usize) -> usize {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open("calls.log").unwrap();
    writeln!(log, "{tile}").unwrap();
    tunable::measure::report_device_time((2 + 8 * tile.abs_diff(4)) as f64);
    n - n + tile
}

fn main() {
    let c = kernel_config(1000);
    println!("config tile={} origin={:?} tunes={}", c.params.tile, c.origin, c.tunes);
    println!("result {}", kernel(1000));
}
"#;

/// Variant runs logged so far.
fn calls(c: &TempCrate) -> usize {
    std::fs::read_to_string(c.dir.join("calls.log")).map_or(0, |t| t.lines().count())
}

/// The summary line of the tuning of `kernel`, and its measured count.
fn measured(err: &str) -> usize {
    let line = err
        .lines()
        .find(|l| l.starts_with("tunable: tuned kernel (key 1024) on cpu: "))
        .unwrap_or_else(|| panic!("no summary:\n{err}"));
    let (_, rest) = line.split_once(" evaluations (").unwrap();
    rest.split_once(" measured").unwrap().0.parse().unwrap()
}

#[test]
fn plain_builds_bake_what_was_tuned_and_retune_measures_again() {
    let c = TempCrate::new("ship", MAIN);
    let dir = c.dir.clone();

    // 1. A plain build before any tuning: the default, and a placeholder tuned file to track.
    let (out, err) = c.run(false, &[]);
    assert!(
        out.contains("config tile=1 origin=Default tunes=false"),
        "{out}{err}"
    );
    assert!(out.contains("result 1"), "{out}{err}");
    assert!(dir.join("tuned/kernel.bin").exists(), "no placeholder");
    assert_eq!(calls(&c), 1);
    // That build compiled neither the search engine nor the journal's compression.
    let tree = ok(Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
        .current_dir(&dir));
    let tree = String::from_utf8(tree.stdout).unwrap();
    for heavy in ["nalgebra ", "rayon ", "flate2 ", "rand ", "indicatif "] {
        assert!(
            !tree.contains(heavy),
            "a shipped build depends on {heavy}:\n{tree}"
        );
    }
    assert!(tree.contains("tunable-runtime "), "{tree}");

    // 2. Tune, stderr a file: the query says the call will tune; the summary is in the file.
    let (out, err) = c.run(true, &[]);
    assert!(out.contains("tunes=true"), "{out}{err}");
    assert!(out.contains("result 4"), "{out}{err}");
    assert_eq!(measured(&err), 4, "{err}");
    assert!(err.contains("[tile=4]"), "{err}");

    // 3. The plain build made before tuning is rebuilt and bakes the winner, without tuning.
    let before = calls(&c);
    let (out, err) = c.run(false, &[]);
    assert!(
        out.contains("config tile=4 origin=Baked tunes=false"),
        "the plain build did not bake the tuned file: {out}{err}"
    );
    assert!(out.contains("result 4"), "{out}{err}");
    assert_eq!(calls(&c), before + 1, "a shipped build never tunes");

    // 4. TUNABLE_DIR names another folder: rebuilt, nothing tuned there; unset: rebuilt again.
    let (out, err) = c.run(false, &[("TUNABLE_DIR", "elsewhere")]);
    assert!(
        out.contains("config tile=1 origin=Default"),
        "TUNABLE_DIR was not tracked: {out}{err}"
    );
    let (out, err) = c.run(false, &[]);
    assert!(out.contains("config tile=4 origin=Baked"), "{out}{err}");

    // 5. With the feature, a stored entry answers; retune measures the whole budget again.
    let (out, err) = c.run(true, &[]);
    assert!(
        out.contains("config tile=4 origin=Baked tunes=false"),
        "{out}{err}"
    );
    let before = calls(&c);
    let (out, err) = c.run(true, &[("TUNABLE_MODE", "retune")]);
    assert!(out.contains("tunes=true"), "{out}{err}");
    assert_eq!(measured(&err), 4, "retune must measure again: {err}");
    // The reference and the 4 configurations (then the best 3 re-timed to confirm the winner).
    assert!(calls(&c) > before + 4, "{err}");

    // 6. The journal answers a tuning of the same body (the tuned file deleted)...
    std::fs::remove_file(dir.join("tuned/kernel.bin")).unwrap();
    let (out, err) = c.run(true, &[]);
    assert!(out.contains("result 4"), "{out}{err}");
    assert_eq!(measured(&err), 0, "the journal should answer: {err}");
    // ...but not one of an edited body (a comment alone is not an edit: tokens are hashed).
    std::fs::remove_file(dir.join("tuned/kernel.bin")).unwrap();
    let edited = MAIN.replace("n - n + tile", "tile + n - n");
    std::fs::write(dir.join("src/main.rs"), &edited).unwrap();
    let (out, err) = c.run(true, &[]);
    assert!(out.contains("result 4"), "{out}{err}");
    assert_eq!(
        measured(&err),
        4,
        "an edited body was answered from the journal: {err}"
    );

    // 7. A bad number in a setting is an error naming the variable, not silently ignored.
    std::fs::remove_file(dir.join("tuned/kernel.bin")).unwrap();
    let bad = Command::new(c.binary())
        .current_dir(&dir)
        .env("TUNABLE_BUDGET", "ten")
        .output()
        .unwrap();
    let bad_err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "{bad_err}");
    assert!(bad_err.contains("TUNABLE_BUDGET=\"ten\""), "{bad_err}");
    std::fs::remove_dir_all(&dir).ok();
}
