//! # Evaluate mode
//!
//! How a distributed worker (the `tunable-distributed` crate) evaluates one configuration with
//! the user's own tuning harness: it runs the harness, built with the `autotune` feature, in a
//! child process with `TUNABLE_EVALUATE=<json Request>` set. The first-run hook then tunes
//! nothing and stores nothing:
//!
//! - the call of the requested kernel for the requested key is [answered](outcome): with a
//!   configuration, the hook measures exactly that one, as tuning measures each variant (the
//!   default's output as the reference when the kernel has `verify`, the kernel's warm-up and
//!   repeats, a panic, an error or a wrong output a failure with its reason), and prints an
//!   [`Answer`] (`{"time_ms": 1.25}` or `{"failed": "reason"}`) as the last line of standard
//!   output; without one, it prints the kernel's [`Description`] (its space and defaults), which
//!   is how a study over the kernel gets its space. Either way the process then exits with
//!   status 0: the rest of the harness has nothing to add, and nothing may print after the
//!   answer;
//! - every other call, of another kernel or for another key, runs the kernel's default
//!   configuration, untuned;
//! - a harness that ends without calling the requested kernel for the requested key prints no
//!   answer, which the worker records as the failure it is.
//!
//! ```text
//! TUNABLE_EVALUATE='{"kernel": "work", "key": 2, "space": 1234, "config": {"tile": 4}}' \
//!     target/release/examples/tune
//! {"time_ms":4.07}
//! ```
//!
//! The request names the fingerprint of the space the study was created with: a kernel edited
//! since (another space) answers failed rather than measure something else.
//!
//! A request with `binaries` (a folder) also keeps what the GPU backends built for the
//! configuration: after measuring it, the hook writes each device binary into that folder as an
//! artifact file, the format of the tuned folder's `<kernel>.artifacts/` (owner: the kernel, the
//! device as the call names it, the configuration). That is how `cargo tunable study export
//! --binaries` gets the winner's binaries for the exported entry. A CPU kernel writes none; a
//! binary that cannot be produced or written makes the answer a failure saying so.

use super::{Evaluator, Variants, spec::KernelSpec};
use crate::backend::definitions;
use crate::backend::record::{Recorded, record};
use crate::params::Params;
use crate::store::TunedEntry;
use crate::tuner::Run;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tunable_search::Space;
use tunable_search::Value;
use tunable_search::format::artifact::{self, Artifact, Owner};
use tunable_search::space::SpaceDef;

/// The environment variable that holds the [`Request`].
pub const VAR: &str = "TUNABLE_EVALUATE";

/// What a harness run in evaluate mode is asked, as JSON in `TUNABLE_EVALUATE`.
///
/// ```
/// use tunable_runtime::tuner::evaluate::Request;
/// let r: Request = serde_json::from_str(r#"{"kernel": "work", "key": 2, "config": {"tile": 4}}"#).unwrap();
/// assert_eq!((r.kernel.as_str(), r.key, r.space), ("work", 2, None));
/// assert_eq!(r.config.unwrap()["tile"], tunable_search::Value::Int(4));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The kernel's name.
    pub kernel: String,
    /// The problem-size key of the call to answer.
    pub key: u64,
    /// The fingerprint the kernel's space must have (none: not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<u64>,
    /// The configuration to measure, each parameter by name; none: describe the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, Value>>,
    /// A folder to write the configuration's device binaries into, as artifact files (see the
    /// [module docs](self)); none: binaries are not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binaries: Option<PathBuf>,
}

/// The answer to a request with a configuration: the last line of standard output.
///
/// ```
/// use tunable_runtime::tuner::evaluate::Answer;
/// let ok: Answer = serde_json::from_str(r#"{"time_ms": 1.5}"#).unwrap();
/// assert_eq!(ok, Answer::Time { time_ms: 1.5 });
/// let bad: Answer = serde_json::from_str(r#"{"failed": "wrong output"}"#).unwrap();
/// assert_eq!(bad.into_result(), Err("wrong output".to_owned()));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    /// The configuration's time in milliseconds.
    Time {
        /// Milliseconds.
        time_ms: f64,
    },
    /// The configuration failed.
    Failed {
        /// Why.
        failed: String,
    },
}

impl Answer {
    /// The answer of a result.
    pub fn of(result: Result<f64, String>) -> Self {
        match result {
            Ok(time_ms) => Answer::Time { time_ms },
            Err(failed) => Answer::Failed { failed },
        }
    }

    /// The time, or the failure's reason (a time that is not a finite number is a failure).
    pub fn into_result(self) -> Result<f64, String> {
        match self {
            Answer::Time { time_ms } if time_ms.is_finite() => Ok(time_ms),
            Answer::Time { time_ms } => Err(format!("non-finite time {time_ms}")),
            Answer::Failed { failed } => Err(failed),
        }
    }
}

/// The answer to a request without a configuration: what a study over the kernel needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// The kernel's name.
    pub kernel: String,
    /// The key of the call described.
    pub key: u64,
    /// The device the call runs on, as the harness sees it here.
    pub device: String,
    /// The kernel's space.
    pub space: SpaceDef,
    /// Its fingerprint (what a request's `space` must be).
    pub fingerprint: u64,
    /// The default configuration, by name.
    pub default: BTreeMap<String, Value>,
    /// The attribute's `budget`.
    pub budget: usize,
    /// The attribute's `strategy`.
    pub strategy: String,
}

/// What the hook prints in evaluate mode.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A measured configuration's answer.
    Answer(Answer),
    /// The kernel's description.
    Description(Box<Description>),
}

impl Reply {
    /// The line printed.
    pub fn line(&self) -> String {
        match self {
            Reply::Answer(a) => serde_json::to_string(a),
            Reply::Description(d) => serde_json::to_string(d),
        }
        .expect("replies encode")
    }
}

/// This process's request: `None` outside evaluate mode. Read once.
///
/// # Panics
/// If `TUNABLE_EVALUATE` is set but is not a request (the message quotes the error): a worker
/// set it, and guessing would measure the wrong thing.
pub fn request() -> Option<&'static Request> {
    static REQUEST: OnceLock<Option<Request>> = OnceLock::new();
    REQUEST
        .get_or_init(|| {
            let text = std::env::var_os(VAR)?;
            let text = text.to_string_lossy();
            Some(serde_json::from_str(&text).unwrap_or_else(|e| {
                panic!("tunable: {VAR}={text:?} is not an evaluation request: {e}")
            }))
        })
        .as_ref()
}

/// Whether `request` asks about this call of `kernel` with `key`.
pub fn asks(request: &Request, kernel: &str, key: u64) -> bool {
    request.kernel == kernel && request.key == key
}

/// What the call of `kernel` for the requested key replies: its description, or the requested
/// configuration measured on the call's arguments through `run` exactly as a tuning measures it
/// (a failure is an answer with its reason). Stores nothing.
pub fn outcome<P: Params>(
    request: &Request,
    kernel: &KernelSpec,
    space: &Space,
    device: &str,
    default: P,
    run: &mut Run<'_, P>,
) -> Reply {
    let fingerprint = space.fingerprint();
    let Some(config) = &request.config else {
        return Reply::Description(Box::new(Description {
            kernel: kernel.name.to_owned(),
            key: request.key,
            device: device.to_owned(),
            space: SpaceDef::of(space, false),
            fingerprint,
            default: by_name(space, &default.to_values()),
            budget: kernel.budget,
            strategy: kernel.strategy.to_owned(),
        }));
    };
    let Some(folder) = &request.binaries else {
        return Reply::Answer(Answer::of(
            measure(request, config, kernel, space, default, run).map(|(time, _)| time),
        ));
    };
    let (measured, recorded) = record(|| measure(request, config, kernel, space, default, run));
    let kept = measured.and_then(|(time, position)| {
        keep_binaries::<P>(folder, &recorded, kernel.name, space, device, position)
            .map_err(|why| format!("measured {time} ms, but {why}"))
            .map(|()| (time, position))
    });
    Reply::Answer(Answer::of(kept.map(|(time, _)| time)))
}

/// Writes the binaries `recorded` holds for the configuration at `position` into `folder` as
/// artifact files owned by (`kernel`, `device`, the configuration).
fn keep_binaries<P: Params>(
    folder: &Path,
    recorded: &Recorded,
    kernel: &str,
    space: &Space,
    device: &str,
    position: usize,
) -> Result<(), String> {
    let values = space.values(position);
    let Some(params) = P::from_values(&values) else {
        return Ok(());
    };
    // A configuration without definitions cannot have been compiled by a GPU backend.
    let Ok(defs) = definitions(&params) else {
        return Ok(());
    };
    let binaries = recorded
        .binaries(&defs)
        .map_err(|why| format!("its device binary cannot be produced ({why})"))?;
    if binaries.is_empty() {
        return Ok(());
    }
    let owner = Owner {
        kernel: kernel.to_owned(),
        device: device.to_owned(),
        params: TunedEntry::named(space, &values),
    };
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("{} cannot be created ({e})", folder.display()))?;
    for (recipe, bytes) in binaries {
        let path = folder.join(recipe.file_name());
        let file = artifact::encode(&Artifact {
            owner: owner.clone(),
            recipe,
            bytes: bytes.into(),
        });
        std::fs::write(&path, file)
            .map_err(|e| format!("{} cannot be written ({e})", path.display()))?;
    }
    Ok(())
}

/// The time of the requested configuration and its position, or why it failed.
fn measure<P: Params>(
    request: &Request,
    config: &BTreeMap<String, Value>,
    kernel: &KernelSpec,
    space: &Space,
    default: P,
    run: &mut Run<'_, P>,
) -> Result<(f64, usize), String> {
    let fingerprint = space.fingerprint();
    if let Some(wanted) = request.space.filter(|&w| w != fingerprint) {
        return Err(format!(
            "the space of {} in this harness (fingerprint {fingerprint:016x}) is not the study's ({wanted:016x}): the kernel changed since the study was created",
            kernel.name
        ));
    }
    // A worker does not hold the device's settings: it would measure every configuration at
    // the clocks in force, whatever its clock parameters say.
    if !super::clocking::knobs(space).is_empty() {
        return Err(format!(
            "{} has clock parameters, which distributed workers do not set: tune it with the \
             first-run hook or `cargo tunable tune`",
            kernel.name
        ));
    }
    let values = space
        .params()
        .iter()
        .map(|p| {
            config
                .get(p.name())
                .cloned()
                .ok_or_else(|| format!("the configuration has no parameter '{}'", p.name()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let position = space.position_of_values(&values).ok_or_else(|| {
        format!(
            "the configuration {} is not in the space of {}",
            describe_config(config),
            kernel.name
        )
    })?;
    let expected = kernel
        .verify
        .expected(default, run)
        .map_err(|reason| format!("the reference failed ({reason})"))?;
    let measurement = kernel.measurement(expected.is_some());
    let mut variants = Variants::new(space, run, expected, measurement);
    let Ok(mut evaluations) = variants.evaluate(&[position]);
    evaluations.remove(0).result.map(|time| (time, position))
}

/// Prints `reply` as the last line of standard output and ends the process.
pub fn reply_and_exit(reply: &Reply) -> ! {
    let mut out = std::io::stdout().lock();
    // Whatever the harness printed without a newline ends here: the reply is a line of its own.
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", reply.line());
    let _ = out.flush();
    drop(out);
    std::process::exit(0)
}

fn by_name(space: &Space, values: &[Value]) -> BTreeMap<String, Value> {
    space
        .params()
        .iter()
        .map(|p| p.name().to_owned())
        .zip(values.iter().cloned())
        .collect()
}

fn describe_config(config: &BTreeMap<String, Value>) -> String {
    config
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuner::testing::{Tile, fake_kernel};
    use crate::tuner::{Call, panic};

    fn request(config: Option<i64>, space: Option<u64>) -> Request {
        Request {
            kernel: "eval_fake".into(),
            key: 7,
            space,
            config: config.map(|t| BTreeMap::from([("tile".to_owned(), Value::Int(t))])),
            binaries: None,
        }
    }

    /// A fake kernel with planted faults: tile `t` takes `t` ms; tile 6 panics, tile 5 fails to
    /// launch, tile 4 computes a wrong output. Measured as tuning measures, stored nowhere.
    #[test]
    fn measures_the_requested_configuration_as_tuning_does_and_stores_nothing() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (kernel, space, dir) = fake_kernel("eval_fake", 3);
        let (mut out, runs) = (vec![0.0; 4], std::cell::RefCell::new(Vec::new()));
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(6)) => panic!("boom"),
            Call::Run(&Tile(5)) => Err("launch failed".to_owned()),
            Call::Run(&Tile(t)) => {
                runs.borrow_mut().push(t);
                // The injected clock: `t` ms of device time.
                crate::measure::report_device_time(t as f64);
                out.fill(if t == 4 { 1.0 } else { 0.0 });
                Ok(None)
            }
            Call::Output => Ok(Some(out.clone())),
            Call::Answer => Ok(None),
        };
        let fp = space.fingerprint();
        let answer = |c: Option<i64>, s: Option<u64>, run: &mut Run<'_, Tile>| match outcome(
            &request(c, s),
            &kernel,
            &space,
            "dev",
            Tile(1),
            run,
        ) {
            Reply::Answer(a) => a.into_result(),
            Reply::Description(d) => panic!("described: {d:?}"),
        };
        // Tile 3: the reference (the default, tile 1) once, tile 3 checked once, then warm-up
        // (one less: the check was one) and 3 timed runs of 3 ms.
        let t = answer(Some(3), Some(fp), &mut run).unwrap();
        assert_eq!(t, 3.0);
        assert_eq!(*runs.borrow(), [1, 3, 3, 3, 3]);
        assert_eq!(
            answer(Some(6), Some(fp), &mut run),
            Err("panicked: boom".to_owned())
        );
        assert_eq!(
            answer(Some(5), None, &mut run),
            Err("launch failed".to_owned())
        );
        let wrong = answer(Some(4), Some(fp), &mut run).unwrap_err();
        assert!(
            wrong.starts_with("wrong output: 4 of 4 elements differ"),
            "{wrong}"
        );
        let outside = answer(Some(9), Some(fp), &mut run).unwrap_err();
        assert_eq!(
            outside,
            "the configuration tile=9 is not in the space of eval_fake"
        );
        let changed = answer(Some(3), Some(fp ^ 1), &mut run).unwrap_err();
        assert!(
            changed.contains("the kernel changed since the study was created"),
            "{changed}"
        );
        // Asked for its binaries, a CPU kernel is measured the same and has none to write; a
        // failure stays the configuration's own.
        let folder = dir.join("binaries");
        let with_binaries = |c: i64, run: &mut Run<'_, Tile>| {
            let request = Request {
                binaries: Some(folder.clone()),
                ..request(Some(c), Some(fp))
            };
            match outcome(&request, &kernel, &space, "dev", Tile(1), run) {
                Reply::Answer(a) => a.into_result(),
                Reply::Description(d) => panic!("described: {d:?}"),
            }
        };
        assert_eq!(with_binaries(3, &mut run), Ok(3.0));
        assert_eq!(with_binaries(5, &mut run), Err("launch failed".to_owned()));
        assert!(!folder.exists(), "a CPU kernel wrote binaries");
        // Without a configuration: the description, whose space rebuilds to the same one.
        let Reply::Description(d) = outcome(
            &request(None, None),
            &kernel,
            &space,
            "dev",
            Tile(2),
            &mut run,
        ) else {
            panic!("not a description")
        };
        assert_eq!(d.space.build().unwrap().fingerprint(), fp);
        assert_eq!((d.fingerprint, d.key, d.device.as_str()), (fp, 7, "dev"));
        assert_eq!(d.default["tile"], Value::Int(2));
        assert_eq!((d.budget, d.strategy.as_str()), (20, "exhaustive"));
        // Nothing stored: no tuned file, no journal.
        assert!(!dir.exists());
        assert!(asks(&request(None, None), "eval_fake", 7));
        assert!(!asks(&request(None, None), "eval_fake", 8));
        assert!(!asks(&request(None, None), "other", 7));
    }

    #[test]
    fn replies_are_one_json_line() {
        let r = Reply::Answer(Answer::of(Err("wrong output".into())));
        assert_eq!(r.line(), r#"{"failed":"wrong output"}"#);
        assert_eq!(
            Reply::Answer(Answer::of(Ok(2.5))).line(),
            r#"{"time_ms":2.5}"#
        );
    }
}
