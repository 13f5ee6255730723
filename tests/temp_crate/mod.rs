//! # A temporary crate using `tunable`
//!
//! What a user's crate does, with real cargo builds: a crate in the temporary folder with one
//! binary, depending on this `tunable` and with an `autotune` feature, built in the target folder
//! the end-to-end tests share (`target/e2e`), so that the dependencies are built once.

#![allow(dead_code)] // Each test binary uses a part.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The repository's root (the facade's manifest folder).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An empty folder of this process under the temporary folder, named after `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tunable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The journals (Kernel Tuner cache files) written into `dir`, concatenated.
pub fn journals(dir: &std::path::Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".cache.json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// The crate: its folder, the shared target folder and the binary's name.
pub struct TempCrate {
    /// The crate's folder (its `tuned/` is where its tuned files go).
    pub dir: PathBuf,
    /// The target folder.
    pub target: PathBuf,
    name: String,
}

impl TempCrate {
    /// Writes the crate `name` (the folder `<name>-<pid>`, emptied first) with `main` as its
    /// `src/main.rs`.
    pub fn new(name: &str, main: &str) -> TempCrate {
        Self::with_features(name, main, &[])
    }

    /// [`new`](Self::new), with `tunable`'s `features` on (e.g. a backend).
    pub fn with_features(name: &str, main: &str, features: &[&str]) -> TempCrate {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = std::env::temp_dir().join(format!("tunable-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\ntunable = {{ package = \"tunable-kernels\", path = {root:?}, features = {features:?} }}\n\n[features]\nautotune = [\"tunable/autotune\"]\n\n[workspace]\n",
            ),
        )
        .unwrap();
        std::fs::write(dir.join("src/main.rs"), main).unwrap();
        TempCrate {
            dir,
            target: root.join("target/e2e"),
            name: name.to_owned(),
        }
    }

    /// The built binary.
    pub fn binary(&self) -> PathBuf {
        self.target.join("debug").join(&self.name)
    }

    /// Builds (with the `autotune` feature or not) and runs the binary, both with `env` (and
    /// without the caller's `TUNABLE_DIR` and `TUNABLE_MODE`), the run's stderr into a file;
    /// answers (stdout, build output + stderr of the run).
    pub fn run(&self, autotune: bool, env: &[(&str, &str)]) -> (String, String) {
        let built = self.build(autotune, env);
        let err_file = self.dir.join("stderr.txt");
        let mut r = Command::new(self.binary());
        r.current_dir(&self.dir)
            .env_remove("TUNABLE_DIR")
            .env_remove("TUNABLE_MODE")
            .stderr(Stdio::from(std::fs::File::create(&err_file).unwrap()))
            .envs(env.iter().copied());
        let out = ok(&mut r);
        let err = std::fs::read_to_string(&err_file).unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&built.stderr).into_owned() + &err,
        )
    }

    /// Builds the binary (with the `autotune` feature or not), with `env` and without the
    /// caller's `TUNABLE_DIR`; answers cargo's output.
    pub fn build(&self, autotune: bool, env: &[(&str, &str)]) -> Output {
        let mut b = Command::new(env!("CARGO"));
        b.args(["build", "--quiet"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target)
            .env_remove("TUNABLE_DIR");
        if autotune {
            b.args(["--features", "autotune"]);
        }
        b.envs(env.iter().copied());
        ok(&mut b)
    }
}

/// The line of a run's output `out` that starts with `label ` (without it).
pub fn line<'a>(out: &'a str, label: &str) -> &'a str {
    let prefix = format!("{label} ");
    out.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{out}"))
}

/// A run's standard output and standard error, as text.
pub fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The summary line a tuning printed on `stderr`, the one that starts with `start`
/// (`tunable: tuned vector_add_wgpu (key 262144) on wgpu: `).
pub fn summary<'a>(stderr: &'a str, start: &str) -> &'a str {
    stderr
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no summary:\n{stderr}"))
}

/// The winner a summary line names, as it prints it between its last brackets
/// (`block_size_x=64, per_thread=2`).
pub fn winner(summary: &str) -> String {
    summary
        .rsplit_once('[')
        .and_then(|(_, w)| w.split_once(']'))
        .map(|(w, _)| w.to_owned())
        .unwrap_or_else(|| panic!("no winner in {summary}"))
}

/// The `first call: ` line an example's `--first-call` printed on `stdout`.
pub fn first_call(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.trim_start().starts_with("first call: "))
        .unwrap_or_else(|| panic!("no first call line:\n{stdout}"))
}

/// Runs `cmd`, failing the test with its output if it fails.
pub fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
