//! # Harness evaluator
//!
//! Evaluates configurations with the user's own tuning harness: the Cargo example of the
//! kernel's crate that calls each kernel with representative arguments for each key
//! (`examples/tune.rs`, what `cargo tunable tune` runs; see the `cargo-tunable` docs).
//!
//! - **Once per worker and study** ([`HarnessEvaluator::open`]) the harness is built with the
//!   crate's `autotune` feature ([`build`]; cargo reports the executable's path, wherever the
//!   target folder is), and asked to [`describe`] the study's kernel: a worker whose build has
//!   another space than the study's (the kernel was edited since the study was created) refuses
//!   the study with that reason, rather than record a failure per configuration.
//! - **Prebuilt harnesses.** A worker can be given harness executables built elsewhere (`cargo
//!   tunable worker --harness-bin PATH`, for GPU machines without a Rust toolchain or a copy of
//!   the crate). They are tried first, in order, by the same description: the first whose call
//!   of the study's kernel for its key has the study's space evaluates it, and a study none of
//!   them fits is built from its crate as above. A harness runs in the crate's folder when this
//!   machine has it, else in the worker's own folder.
//! - **Per evaluation** the built executable runs in the crate's folder with
//!   `TUNABLE_EVALUATE` holding the [`Request`] (kernel, key, space fingerprint, the
//!   configuration), and `TUNABLE_DEVICE` the worker's device: the runtime's first-run hook
//!   measures exactly that configuration on the call for that key, as local tuning measures it
//!   (reference output, warm-up and repeats, failures with their reasons), prints the answer
//!   line and ends the process; every other kernel call runs its default (see
//!   [`tunable_runtime::tuner::evaluate`]). Nothing is stored in the crate's `tuned/`.
//!
//! **Trust.** A study's row names a crate path, and building a crate runs its code (`build.rs`,
//! procedural macros, then the harness itself): whoever can write the database could otherwise
//! run code on every worker. So a machine builds a harness only from a crate under one of the
//! folders it was allowed ([`Trust::allow`], `cargo tunable worker --allow DIR`); a prebuilt
//! harness ([`Trust::prebuilt`], `--harness-bin`) is chosen by the machine's operator, never by
//! the database. A study that neither fits is refused, with why and what would allow it. Building
//! and describing run under time-outs ([`Trust::build_timeout`], [`Trust::describe_timeout`]),
//! in process groups killed at the time-out, without the database credentials
//! (`child::run_command`).
//!
//! The study's space comes from the same [`describe`] run at creation: the space the compiled
//! kernel has, exactly (its fingerprint is what the runtime checks), with no second parser of
//! the attribute and no file that can fall out of date.

use crate::child;
use crate::process::{ChildSpec, Evaluator};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tunable_runtime::tuner::evaluate::{Description, Request, VAR};
use tunable_search::Value;
use tunable_search::format::artifact::{self, Artifact};

/// At most this much of a failing command's standard error is kept for the reason.
const STDERR_KEPT: usize = 800;

/// At most this much of the end of cargo's JSON messages is read (the executable's line is near
/// the end).
const BUILD_OUTPUT_KEPT: usize = 4 * 1024 * 1024;

/// The harness of a study: which crate, which example, which kernel call.
///
/// ```
/// use tunable_distributed::harness::HarnessSpec;
/// let h = HarnessSpec {
///     manifest: "/shared/gemm/Cargo.toml".into(),
///     example: "tune".into(),
///     release: true,
///     kernel: "gemm".into(),
///     key: 4096,
///     space: 0x1234,
/// };
/// assert_eq!(h.dir(), std::path::Path::new("/shared/gemm"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HarnessSpec {
    /// The crate's `Cargo.toml`, as every worker sees it (an absolute path on a shared file
    /// system, or the same checkout on each machine). The harness runs in its folder.
    pub manifest: PathBuf,
    /// The example that is the harness (`tune`).
    pub example: String,
    /// Built with `--release` (`false` only for tests of the tool itself).
    pub release: bool,
    /// The kernel.
    pub kernel: String,
    /// The problem-size key of the kernel's call that is measured.
    pub key: u64,
    /// The fingerprint of the kernel's space, as [`describe`] gave it when the study was
    /// created.
    pub space: u64,
}

impl HarnessSpec {
    /// The crate's folder, where the harness runs.
    pub fn dir(&self) -> PathBuf {
        crate_dir(&self.manifest)
    }
}

/// The folder of a crate's manifest.
fn crate_dir(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// What a machine lets a harness study run (see the module's docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Trust {
    /// Harness executables built elsewhere, chosen by this machine's operator, tried first in
    /// order (default none).
    pub prebuilt: Vec<PathBuf>,
    /// Folders whose crates may be built and run (default none: nothing is built from a path a
    /// study names). A crate is allowed when its manifest, all links resolved, is inside one.
    pub allow: Vec<PathBuf>,
    /// Longest time building a harness may take (default 30 min).
    pub build_timeout: Duration,
    /// Longest time a harness may take to describe its kernel (default 120 s).
    pub describe_timeout: Duration,
}

impl Default for Trust {
    fn default() -> Self {
        Trust {
            prebuilt: Vec::new(),
            allow: Vec::new(),
            build_timeout: Duration::from_secs(30 * 60),
            describe_timeout: Duration::from_secs(120),
        }
    }
}

impl Trust {
    /// Whether the crate of `manifest` may be built here; `Err` says why not.
    pub fn allows(&self, manifest: &Path) -> Result<(), String> {
        let refuse = |why: String| {
            Err(format!(
                "refusing to build {}: {why}; start the worker with --allow DIR for a folder of crates it may build, or give it a prebuilt harness with --harness-bin",
                manifest.display()
            ))
        };
        if self.allow.is_empty() {
            return refuse(
                "this machine was allowed to build no crate (a study's path is not trusted)"
                    .to_owned(),
            );
        }
        let real = match std::fs::canonicalize(manifest) {
            Ok(p) => p,
            Err(e) => return refuse(format!("it cannot be read here ({e})")),
        };
        let inside = self
            .allow
            .iter()
            .any(|dir| std::fs::canonicalize(dir).is_ok_and(|dir| real.starts_with(&dir)));
        if inside {
            Ok(())
        } else {
            let dirs: Vec<String> = self.allow.iter().map(|d| d.display().to_string()).collect();
            refuse(format!(
                "{} is in none of the allowed folders ({})",
                real.display(),
                dirs.join(", ")
            ))
        }
    }
}

/// A built harness, evaluating a study's configurations.
#[derive(Debug)]
pub struct HarnessEvaluator {
    program: PathBuf,
    spec: HarnessSpec,
    /// Where the harness runs: the crate's folder, or the worker's if this machine has no copy.
    dir: PathBuf,
}

impl HarnessEvaluator {
    /// The harness that evaluates the study on this machine: the first of the prebuilt
    /// executables whose kernel has the study's space, else the harness built from the crate
    /// (if `trust` allows it) and checked the same way; `Err` says why this machine cannot
    /// evaluate the study (with why each prebuilt harness did not fit).
    pub fn open(spec: &HarnessSpec, trust: &Trust) -> Result<Self, String> {
        let prebuilt = &trust.prebuilt;
        let crate_dir = spec.dir();
        let dir = if crate_dir.is_dir() {
            crate_dir
        } else {
            PathBuf::from(".")
        };
        let fits = |program: &Path| {
            let found = describe(
                program,
                &dir,
                &spec.kernel,
                spec.key,
                trust.describe_timeout,
            )?;
            if found.fingerprint != spec.space {
                return Err(format!(
                    "the harness's {} has another space (fingerprint {:016x}) than the study's ({:016x}): the kernel changed since the study was created",
                    spec.kernel, found.fingerprint, spec.space
                ));
            }
            Ok(())
        };
        let mut unfit = Vec::new();
        for program in prebuilt {
            match fits(program) {
                Ok(()) => {
                    return Ok(HarnessEvaluator {
                        program: program.clone(),
                        spec: spec.clone(),
                        dir,
                    });
                }
                Err(why) => unfit.push(format!("{}: {why}", program.display())),
            }
        }
        let built = trust
            .allows(&spec.manifest)
            .and_then(|()| {
                build(
                    &spec.manifest,
                    &spec.example,
                    spec.release,
                    trust.build_timeout,
                )
            })
            .and_then(|program| fits(&program).map(|()| program));
        match built {
            Ok(program) => Ok(HarnessEvaluator {
                program,
                spec: spec.clone(),
                dir,
            }),
            Err(why) if unfit.is_empty() => Err(why),
            Err(why) => Err(format!(
                "no prebuilt harness fits ({}), and {why}",
                unfit.join("; ")
            )),
        }
    }

    /// The request that evaluates `config`.
    pub fn request(&self, config: &[(String, Value)]) -> Request {
        Request {
            kernel: self.spec.kernel.clone(),
            key: self.spec.key,
            space: Some(self.spec.space),
            config: Some(config.iter().cloned().collect::<BTreeMap<_, _>>()),
            binaries: None,
        }
    }

    /// Runs the harness once for `config` (a study's winner) as a worker runs an evaluation, on
    /// `device` (its `TUNABLE_DEVICE`) and killed after `timeout`, keeping what the GPU backends
    /// built for it: its device binaries as artifacts, each naming the kernel, device and
    /// configuration it was built for (none for a CPU kernel). `Err` says why not: the
    /// configuration failed or hung, the harness gave no answer, or a binary could not be kept.
    pub fn binaries(
        &self,
        config: &[(String, Value)],
        device: &str,
        timeout: Duration,
    ) -> Result<Vec<Artifact<'static>>, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let folder =
            std::env::temp_dir().join(format!("tunable-binaries-{}-{nanos}", std::process::id()));
        let request = Request {
            binaries: Some(folder.clone()),
            ..self.request(config)
        };
        let kept = child::run(&self.child_for(&request), device, timeout, timeout, || {})
            .map_err(|why| format!("the winner failed when run again: {why}"))
            .and_then(|_| {
                artifact::read_dir(&folder)
                    .map_err(|e| format!("{}: {e}", folder.display()))?
                    .into_iter()
                    .map(|(path, read)| read.map_err(|e| format!("{}: {e}", path.display())))
                    .collect()
            });
        let _ = std::fs::remove_dir_all(&folder);
        kept
    }

    /// The process that answers `request`.
    fn child_for(&self, request: &Request) -> ChildSpec {
        let request = serde_json::to_string(request).expect("requests encode");
        ChildSpec {
            program: self.program.clone().into_os_string(),
            args: Vec::new(),
            stdin: Vec::new(),
            env: vec![(VAR.into(), request.into())],
            dir: Some(self.dir.clone()),
        }
    }
}

impl Evaluator for HarnessEvaluator {
    fn child(&self, config: &[(String, Value)]) -> Result<ChildSpec, String> {
        Ok(self.child_for(&self.request(config)))
    }
}

/// Builds example `example` of the crate at `manifest` with its `autotune` feature (with
/// `--release` if `release`), with the `cargo` of `CARGO` or the `PATH`, killing the build after
/// `timeout`; the executable's path. The caller decides whether the crate may be built
/// ([`Trust::allows`]).
pub fn build(
    manifest: &Path,
    example: &str,
    release: bool,
    timeout: Duration,
) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(manifest)
        .args(["--features", "autotune", "--example", example])
        .args(["--message-format", "json-render-diagnostics"]);
    if release {
        cmd.arg("--release");
    }
    let out = child::run_command(
        &mut cmd,
        Vec::new(),
        timeout,
        BUILD_OUTPUT_KEPT,
        4 * STDERR_KEPT,
        Duration::from_secs(1),
        || {},
    )
    .map_err(|e| {
        format!(
            "cannot run {} to build the harness: {e}",
            cargo.to_string_lossy()
        )
    })?;
    match out.ended {
        child::Ended::TimedOut => {
            return Err(format!(
                "building the harness (example {example} of {}) took longer than {:.0} s: killed",
                manifest.display(),
                timeout.as_secs_f64()
            ));
        }
        child::Ended::Exited(status) if !status.success() => {
            return Err(format!(
                "building the harness (example {example} of {}) failed: {}",
                manifest.display(),
                child::tail(&out.err, STDERR_KEPT)
            ));
        }
        child::Ended::Exited(_) => {}
    }
    String::from_utf8_lossy(&out.out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == example
                && m["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "example"))
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| {
            format!(
                "cargo built no executable for example {example} of {}",
                manifest.display()
            )
        })
}

/// Runs the built harness `program` in `dir` in evaluate mode without a configuration, killing
/// it after `timeout`: the description of `kernel`'s call for `key` (its space, device,
/// defaults).
pub fn describe(
    program: &Path,
    dir: &Path,
    kernel: &str,
    key: u64,
    timeout: Duration,
) -> Result<Description, String> {
    let request = Request {
        kernel: kernel.to_owned(),
        key,
        space: None,
        config: None,
        binaries: None,
    };
    let mut cmd = Command::new(program);
    cmd.current_dir(dir).env(
        VAR,
        serde_json::to_string(&request).expect("requests encode"),
    );
    let out = child::run_command(
        &mut cmd,
        Vec::new(),
        timeout,
        child::OUTPUT_KEPT * 16,
        4 * STDERR_KEPT,
        Duration::from_secs(1),
        || {},
    )
    .map_err(|e| format!("cannot run the harness {}: {e}", program.display()))?;
    let status = match out.ended {
        child::Ended::TimedOut => {
            return Err(format!(
                "the harness {} did not describe {kernel} within {:.1} s: killed",
                program.display(),
                timeout.as_secs_f64()
            ));
        }
        child::Ended::Exited(status) => status,
    };
    if let Some(d) = last_line::<Description>(&out.out) {
        return Ok(d);
    }
    let ended = if status.success() {
        "ran to its end".to_owned()
    } else {
        format!("failed ({status}: {})", child::tail(&out.err, STDERR_KEPT))
    };
    Err(format!(
        "the harness {} {ended} without calling {kernel} for key {key}: is that the kernel's name, does the harness call it with that key, and is `autotune` a feature of the crate that enables `tunable/autotune`?",
        program.display()
    ))
}

/// The last non-empty line of a harness's standard output, if it is a `T` in JSON: how evaluate
/// mode answers.
fn last_line<T: serde::de::DeserializeOwned>(stdout: &[u8]) -> Option<T> {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    serde_json::from_str(last.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_carries_the_study_and_the_configuration() {
        let ev = HarnessEvaluator {
            dir: "/crate".into(),
            program: "/crate/target/release/examples/tune".into(),
            spec: HarnessSpec {
                manifest: "/crate/Cargo.toml".into(),
                example: "tune".into(),
                release: true,
                kernel: "work".into(),
                key: 2,
                space: 99,
            },
        };
        let child = ev.child(&[("tile".to_owned(), Value::Int(4))]).unwrap();
        assert_eq!(child.program, "/crate/target/release/examples/tune");
        assert_eq!(child.dir.as_deref(), Some(Path::new("/crate")));
        assert_eq!(
            child.env,
            [(
                VAR.into(),
                r#"{"kernel":"work","key":2,"space":99,"config":{"tile":4}}"#.into()
            )]
        );
        assert!(child.stdin.is_empty());
    }

    #[test]
    fn a_program_that_never_answers_is_refused_with_the_reason() {
        let e = describe(
            Path::new("/bin/true"),
            Path::new("/"),
            "work",
            2,
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(
            e.starts_with("the harness /bin/true ran to its end without calling work for key 2"),
            "{e}"
        );
        let e = build(
            Path::new("/nonexistent/Cargo.toml"),
            "tune",
            false,
            Duration::from_secs(60),
        )
        .unwrap_err();
        assert!(e.starts_with("building the harness"), "{e}");
    }

    #[test]
    fn prebuilt_harnesses_that_do_not_fit_are_named_with_their_reasons() {
        let spec = HarnessSpec {
            manifest: "/nonexistent/Cargo.toml".into(),
            example: "tune".into(),
            release: false,
            kernel: "work".into(),
            key: 2,
            space: 99,
        };
        let trust = Trust {
            prebuilt: vec!["/bin/true".into(), "/nonexistent/tune".into()],
            allow: vec!["/".into()],
            ..Trust::default()
        };
        let e = HarnessEvaluator::open(&spec, &trust).unwrap_err();
        assert!(
            e.starts_with("no prebuilt harness fits (/bin/true: the harness /bin/true ran to its end without calling work for key 2")
                && e.contains("; /nonexistent/tune: cannot run the harness /nonexistent/tune")
                && e.contains("), and refusing to build /nonexistent/Cargo.toml: it cannot be read here"),
            "{e}"
        );
        // Without prebuilt harnesses and without --allow, nothing is built.
        let e = HarnessEvaluator::open(&spec, &Trust::default()).unwrap_err();
        assert!(
            e.starts_with("refusing to build /nonexistent/Cargo.toml: this machine was allowed to build no crate"),
            "{e}"
        );
    }

    #[test]
    fn only_crates_inside_an_allowed_folder_are_built() {
        let root = std::env::temp_dir().join(format!("tunable-trust-{}", std::process::id()));
        let inside = root.join("allowed/gemm");
        let outside = root.join("elsewhere/evil");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(inside.join("Cargo.toml"), "").unwrap();
        std::fs::write(outside.join("Cargo.toml"), "").unwrap();
        // A link inside the allowed folder to a crate outside it is outside.
        let link = root.join("allowed/link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let trust = Trust {
            allow: vec![root.join("allowed")],
            ..Trust::default()
        };
        assert_eq!(trust.allows(&inside.join("Cargo.toml")), Ok(()));
        for bad in [
            outside.join("Cargo.toml"),
            link.join("Cargo.toml"),
            root.join("allowed/../elsewhere/evil/Cargo.toml"),
        ] {
            let e = trust.allows(&bad).unwrap_err();
            assert!(e.contains("is in none of the allowed folders"), "{e}");
            assert!(e.contains("--allow DIR"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_hanging_describe_is_killed_at_its_timeout() {
        let dir = std::env::temp_dir().join(format!("tunable-hang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("hang");
        std::fs::write(&program, "#!/bin/sh\nsleep 30 &\nsleep 30\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = describe(&program, &dir, "work", 2, Duration::from_millis(300)).unwrap_err();
        assert!(
            e.contains("did not describe work within 0.3 s: killed"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
