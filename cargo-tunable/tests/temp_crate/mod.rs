//! A temporary crate depending on this workspace's `tunable`, with an `autotune` feature, for
//! the tests that build and run a user's crate.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Writes crate `name` into a fresh folder of the temporary directory (`src/lib.rs`,
/// `src/main.rs`, `examples/tune.rs`); its folder.
#[allow(dead_code)] // Not every test crate uses both.
pub fn write(name: &str, lib: &str, main: &str, harness: &str) -> PathBuf {
    write_with(name, lib, main, harness, &[])
}

/// [`write`], with these features of `tunable` (e.g. `opencl`).
#[allow(dead_code)]
pub fn write_with(name: &str, lib: &str, main: &str, harness: &str, features: &[&str]) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("tunable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\ntunable = {{ package = \"tunable-kernels\", path = {:?}, features = {features:?} }}\n\n[features]\nautotune = [\"tunable/autotune\"]\n\n[workspace]\n",
            root.canonicalize().unwrap()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    std::fs::write(dir.join("examples/tune.rs"), harness).unwrap();
    dir
}

/// The target folder of these builds, `target/e2e` of the workspace (debug builds, shared with
/// the facade's `tests/end_to_end.rs`).
pub fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/e2e")
}

/// Runs `cmd`, failing the test with its output if it fails.
#[allow(dead_code)]
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
