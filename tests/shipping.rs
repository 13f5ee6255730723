//! What a user's plain (shipped) build runs, with real cargo builds of a temporary crate: a build
//! made before any tuning is rebuilt after it and bakes the winner; changing `TUNABLE_DIR`
//! rebuilds; `TUNABLE_MODE=retune` measures the whole budget again; an edited kernel body is not
//! answered from the old journal; `<kernel>_config` says what runs and where it comes from; the
//! tuning summary reaches stderr when it is a file; a bad `TUNABLE_BUDGET` is an error naming it;
//! a shipped build depends on neither the search engine nor the journal's compression.
//!
//! One test, steps in order, sharing the target folder of `end_to_end.rs` (`target/e2e`) so that
//! the dependencies are built once.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Fastest at tile 4, by far; every run of a variant is logged to calls.log.
const MAIN: &str = r#"
use std::io::Write;
use tunable::tunable;

#[tunable(tile = [1, 2, 4, 8], key = tunable::key::next_power_of_two(n as u64),
          budget = 4, strategy = "exhaustive", repeats = 1, warmup = 0)]
fn kernel(n: usize) -> usize {
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open("calls.log").unwrap();
    writeln!(log, "{tile}").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2 + 8 * tile.abs_diff(4) as u64));
    n - n + tile
}

fn main() {
    let c = kernel_config(1000);
    println!("config tile={} origin={:?} tunes={}", c.params.tile, c.origin, c.tunes);
    println!("result {}", kernel(1000));
}
"#;

/// The crate under test: its folder, and the shared target folder.
struct Crate {
    dir: PathBuf,
    target: PathBuf,
}

impl Crate {
    /// Builds (with the `autotune` feature or not) and runs the binary with `env`, stderr into
    /// a file; answers (stdout, build output + stderr of the run).
    fn run(&self, autotune: bool, env: &[(&str, &str)]) -> (String, String) {
        let mut b = Command::new(env!("CARGO"));
        b.args(["build", "--quiet"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            .env_remove("TUNABLE_DIR");
        if autotune {
            b.args(["--features", "autotune"]);
        }
        for (k, v) in env {
            b.env(k, v);
        }
        let built = ok(&mut b);
        let err_file = self.dir.join("stderr.txt");
        let mut r = Command::new(self.target.join("debug/ship"));
        r.current_dir(&self.dir)
            .env_remove("TUNABLE_DIR")
            .env_remove("TUNABLE_MODE")
            .stderr(Stdio::from(std::fs::File::create(&err_file).unwrap()));
        for (k, v) in env {
            r.env(k, v);
        }
        let out = ok(&mut r);
        let err = std::fs::read_to_string(&err_file).unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&built.stderr).into_owned() + &err,
        )
    }

    /// Variant runs logged so far.
    fn calls(&self) -> usize {
        std::fs::read_to_string(self.dir.join("calls.log")).map_or(0, |t| t.lines().count())
    }
}

fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("tunable-ship-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"ship\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\ntunable = {{ path = {root:?} }}\n\n[features]\nautotune = [\"tunable/autotune\"]\n\n[workspace]\n",
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    let c = Crate {
        dir: dir.clone(),
        target: root.join("target/e2e"),
    };

    // 1. A plain build before any tuning: the default, and a placeholder tuned file to track.
    let (out, err) = c.run(false, &[]);
    assert!(
        out.contains("config tile=1 origin=Default tunes=false"),
        "{out}{err}"
    );
    assert!(out.contains("result 1"), "{out}{err}");
    assert!(dir.join("tuned/kernel.bin").exists(), "no placeholder");
    assert_eq!(c.calls(), 1);
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
    let before = c.calls();
    let (out, err) = c.run(false, &[]);
    assert!(
        out.contains("config tile=4 origin=Baked tunes=false"),
        "the plain build did not bake the tuned file: {out}{err}"
    );
    assert!(out.contains("result 4"), "{out}{err}");
    assert_eq!(c.calls(), before + 1, "a shipped build never tunes");

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
    let before = c.calls();
    let (out, err) = c.run(true, &[("TUNABLE_MODE", "retune")]);
    assert!(out.contains("tunes=true"), "{out}{err}");
    assert_eq!(measured(&err), 4, "retune must measure again: {err}");
    // The reference and the 4 configurations (then the best 3 re-timed to confirm the winner).
    assert!(c.calls() > before + 4, "{err}");

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
    let bad = Command::new(c.target.join("debug/ship"))
        .current_dir(&dir)
        .env("TUNABLE_BUDGET", "ten")
        .output()
        .unwrap();
    let bad_err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "{bad_err}");
    assert!(bad_err.contains("TUNABLE_BUDGET=\"ten\""), "{bad_err}");
    std::fs::remove_dir_all(&dir).ok();
}
