//! The newcomer's path: the guide's getting-started chapter (`docs/src/getting-started.md`),
//! followed as written in a new crate outside the workspace with a path dependency on this
//! checkout. The test takes the crate's `Cargo.toml`, its `src/main.rs` and the commands from the
//! chapter itself, so the chapter cannot drift from what works: `cargo new`, the tuning run
//! (which must tune and store `tuned/dot.bin`), then the shipped build (which must run the
//! stored winner, baked, without tuning).
//!
//! Two departures from the letter, both about where things are built, not what is done: the path
//! dependency `../tunable` points at this checkout, and the commands run without `--release`, in
//! the target folder the end-to-end tests share (`target/e2e`), so that the dependencies are the
//! ones those tests already built (a release build of them would add minutes to every CI run;
//! `--release` changes only the optimization, and the chapter's printed output comes from a
//! release run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CHAPTER: &str = include_str!("../docs/src/getting-started.md");

/// The code blocks of the chapter: (language, body).
fn blocks() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in CHAPTER.lines() {
        match (line.strip_prefix("```"), current.take()) {
            (Some(_), Some(block)) => out.push(block),
            (Some(lang), None) => current = Some((lang.to_owned(), String::new())),
            (None, Some((lang, mut body))) => {
                body.push_str(line);
                body.push('\n');
                current = Some((lang, body));
            }
            (None, None) => {}
        }
    }
    out
}

/// The block in `lang` whose first line is `first`.
fn block(lang: &str, first: &str) -> String {
    blocks()
        .into_iter()
        .find(|(l, b)| l == lang && b.lines().next() == Some(first))
        .unwrap_or_else(|| panic!("the chapter has no ```{lang} block starting with {first:?}"))
        .1
}

/// The shell commands of the chapter's ```sh blocks, in order, comments and blank lines removed.
fn commands() -> Vec<String> {
    blocks()
        .into_iter()
        .filter(|(l, _)| l == "sh")
        .flat_map(|(_, b)| {
            b.lines()
                .map(|l| l.split('#').next().unwrap().trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs one of the chapter's `cargo run` commands in `dir` (without `--release`, see the module
/// docs); answers (stdout, stderr).
fn cargo_run(command: &str, dir: &Path, target: &Path) -> (String, String) {
    let args: Vec<&str> = command
        .split_whitespace()
        .skip(1)
        .filter(|a| *a != "--release")
        .collect();
    let out = run(Command::new(env!("CARGO"))
        .args(&args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("TUNABLE_DIR")
        .env_remove("TUNABLE_MODE")
        .env_remove("TUNABLE_BUDGET")
        .env_remove("TUNABLE_STRATEGY"));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_getting_started_chapter_works_as_written() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target/e2e");
    let parent =
        std::env::temp_dir().join(format!("tunable-getting-started-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();

    let commands = commands();
    assert_eq!(
        commands,
        [
            "cargo new --bin dot-demo",
            "cd dot-demo",
            "cargo run --release --features autotune",
            "cargo run --release",
        ],
        "the chapter's commands changed: update this test to follow them"
    );

    // 1. The crate.
    run(Command::new(env!("CARGO"))
        .args(["new", "--bin", "dot-demo"])
        .current_dir(&parent));
    let dir = parent.join("dot-demo");
    let manifest = block("toml", "# Cargo.toml");
    assert!(manifest.contains("path = \"../tunable\""), "{manifest}");
    let manifest = manifest.replace("\"../tunable\"", &format!("{:?}", root.to_str().unwrap()));
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();

    // 2. The kernel.
    std::fs::write(dir.join("src/main.rs"), block("rust", "// src/main.rs")).unwrap();

    // 3. Tune.
    let (out, err) = cargo_run(&commands[2], &dir, &target);
    assert!(
        out.contains("running DotParams { chunk: 64, lanes: 1 } (Default)"),
        "before tuning the call would run the default:\n{out}"
    );
    assert!(out.contains("dot = 131072"), "{out}");
    let summary = err
        .lines()
        .find(|l| l.starts_with("tunable: tuned dot (key 65536)"))
        .unwrap_or_else(|| panic!("the tuning run printed no summary line:\n{err}"));
    assert!(dir.join("tuned/dot.bin").is_file(), "nothing stored");
    // The winner, as the summary names it: `[chunk=C, lanes=L]`.
    let winner = summary.rsplit_once('[').unwrap().1;
    let winner = winner.split(']').next().unwrap();
    let expected = format!(
        "running DotParams {{ {} }} (Baked)",
        winner.replace('=', ": ")
    );

    // 4. Ship.
    let (out, err) = cargo_run(&commands[3], &dir, &target);
    assert!(
        out.contains(&expected),
        "the shipped build must run the stored winner ({expected}):\n{out}"
    );
    assert!(out.contains("dot = 131072"), "{out}");
    assert!(
        !err.contains("tunable: tuned"),
        "the shipped build tuned:\n{err}"
    );

    let _ = std::fs::remove_dir_all(&parent);
}
