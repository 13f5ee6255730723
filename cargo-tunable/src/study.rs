//! # `cargo tunable study`
//!
//! Studies of distributed tuning in PostgreSQL (see the `tunable-distributed` crate):
//!
//! ```text
//! cargo tunable study create [--db CONNINFO] NAME --harness CRATE --kernel K [--example tune] [--key N]
//!     [--device D] [--strategy S] [--seed 1] [--budget N] [--timeout 300] [--max-attempts 3]
//! cargo tunable study create [--db CONNINFO] NAME --cache FILE [--space FILE | --t1 FILE] [--kernel K]
//!     [--device D] [--key N] [--strategy auto] [--seed 1] [--budget 100] [--scale 1.0]
//!     [--timeout 300] [--max-attempts 3]
//! cargo tunable study status [--db CONNINFO] [NAME] [--json]
//! cargo tunable study export [--db CONNINFO] NAME [--out tuned]
//!     [--binaries [--harness-bin PATH]... [--allow DIR]...]
//! cargo tunable study delete [--db CONNINFO] NAME
//! cargo tunable study setup-roles [--db CONNINFO] [--grant-coordinator ROLE]...
//!     [--grant-worker ROLE]...
//! ```
//!
//! Every command reaches the database as `psql` does: `--db` (a URL or `key=value` string,
//! with `sslmode` and `sslrootcert`), else libpq's environment and `~/.pgpass`; no password is
//! needed on the command line. `setup-roles` (run by the schema's owner) creates the roles
//! `tunable_coordinator` and `tunable_worker` with their privileges (see
//! `tunable_distributed::roles`).
//!
//! `create --harness` makes a study whose workers evaluate with the crate's own tuning harness
//! (`examples/tune.rs`, the one `cargo tunable tune` runs; `--harness` names the crate's folder or
//! `Cargo.toml`, as every worker sees it): each evaluation runs the harness with the `autotune`
//! feature, measuring one configuration of `--kernel`'s call for `--key` (see
//! `tunable_distributed::harness`). The command builds the harness here and asks it to describe
//! that call: the study's space is the compiled kernel's space, and the device, budget and
//! strategy default to the device the harness sees here and the kernel's attribute.
//!
//! `create --cache` makes a study that replays a Kernel Tuner cache (each evaluation sleeps the
//! recorded time times `--scale`), for tests and benchmarks: over the cache's own
//! configurations, or over the space of `--space` / `--t1` (every one of whose configurations
//! must be in the cache). The kernel and device default to the cache's `kernel_name` and
//! `device_name`. `status` lists every study, or one in detail.
//! `export` writes `<out>/<kernel>.bin` (merged, as local tuning writes it) and the Kernel Tuner
//! cache of all results beside it. With `--binaries` (studies made with `--harness`), it also
//! stores the winner's device binaries in `<out>/<kernel>.artifacts/`, as local tuning of a GPU
//! kernel does, so that a plain build loads them at its first call instead of compiling: the
//! harness (the first fitting `--harness-bin`, else built here from the study's crate if it is in
//! a folder given with `--allow`: the crate's path comes from the database) runs the winner once
//! on this machine, which must have the study's device (`TUNABLE_DEVICE` picks one).

use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tunable_distributed::harness::{self, HarnessSpec, Trust};
use tunable_distributed::{
    Db, EvaluatorSpec, SpaceDef, StudySpec, StudyState, StudyStatus, export, roles, study, worker,
};
use tunable_search::sim::{KernelTunerCache, Replay};
use tunable_search::space::load::load;

/// The subcommands of `study`.
#[derive(Subcommand)]
pub(crate) enum StudyCommand {
    /// Create a study: evaluated by the crate's tuning harness, or replaying a Kernel Tuner cache.
    Create(Box<CreateArgs>),
    /// Show every study, or one in detail.
    Status(StatusArgs),
    /// Write a study's tuned file and Kernel Tuner cache.
    Export(ExportArgs),
    /// Delete a study and all its results.
    Delete(DeleteArgs),
    /// Create the database roles tunable_coordinator and tunable_worker with their privileges
    /// (run as the owner of the tunable schema).
    SetupRoles(RolesArgs),
}

/// Arguments of `study setup-roles`.
#[derive(Args)]
pub(crate) struct RolesArgs {
    /// The database: a connection string as `psql` takes it; default: libpq's environment
    /// (`PGHOST`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, ...). Passwords: `PGPASSWORD` or
    /// `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// An existing role made a member of tunable_coordinator (repeat for several).
    #[arg(long = "grant-coordinator", value_name = "ROLE")]
    coordinators: Vec<String>,
    /// An existing role made a member of tunable_worker (repeat for several).
    #[arg(long = "grant-worker", value_name = "ROLE")]
    workers: Vec<String>,
}

/// Arguments of `study create`.
#[derive(Args)]
pub(crate) struct CreateArgs {
    /// The database: a connection string as `psql` takes it; default: libpq's environment
    /// (`PGHOST`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, ...). Passwords: `PGPASSWORD` or
    /// `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// The study's name.
    name: String,
    /// The crate whose tuning harness evaluates (its folder or `Cargo.toml`), as workers will
    /// find it.
    #[arg(long, required_unless_present = "cache", conflicts_with_all = ["cache", "space", "t1", "scale"], requires = "kernel")]
    harness: Option<PathBuf>,
    /// The example that is the crate's tuning harness.
    #[arg(long, default_value = "tune", requires = "harness")]
    example: String,
    /// Build the harness without `--release` (for tests of the command itself).
    #[arg(long, hide = true, requires = "harness")]
    debug: bool,
    /// The Kernel Tuner cache to replay (`.json` or `.json.gz`), as workers will find it.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// A spaces JSON or Kernel Tuner T1 file giving the space (default: the cache's own keys).
    #[arg(long, conflicts_with = "t1")]
    space: Option<PathBuf>,
    /// A Kernel Tuner T1 file giving the space.
    #[arg(long)]
    t1: Option<PathBuf>,
    /// The kernel's name (with `--cache`, default: the cache's `kernel_name`, else the file's
    /// stem).
    #[arg(long)]
    kernel: Option<String>,
    /// The device model (default: what the harness sees here; the cache's `device_name`, else
    /// the file's stem).
    #[arg(long)]
    device: Option<String>,
    /// The problem-size key.
    #[arg(long, default_value_t = 0)]
    key: u64,
    /// The strategy, `name[:key=value]...` (default: the kernel's `strategy`; `auto` for a
    /// replay).
    #[arg(long)]
    strategy: Option<String>,
    /// The strategy's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Unique evaluations to spend (default: the kernel's `budget`; 100 for a replay).
    #[arg(long)]
    budget: Option<usize>,
    /// Seconds slept per recorded second of kernel time.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Seconds after which an evaluation is killed and recorded failed.
    #[arg(long, default_value_t = 300.0)]
    timeout: f64,
    /// Claims of a job allowed before it is recorded failed (its worker died each time).
    #[arg(long, default_value_t = 3)]
    max_attempts: u32,
}

/// Arguments of `study status`.
#[derive(Args)]
pub(crate) struct StatusArgs {
    /// The database: a connection string as `psql` takes it; default: libpq's environment
    /// (`PGHOST`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, ...). Passwords: `PGPASSWORD` or
    /// `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// One study (default: a line per study).
    name: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `study export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    /// The database: a connection string as `psql` takes it; default: libpq's environment
    /// (`PGHOST`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, ...). Passwords: `PGPASSWORD` or
    /// `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// The study.
    name: String,
    /// The folder of tuned files.
    #[arg(long, default_value = "tuned")]
    out: PathBuf,
    /// Also store the winner's device binaries, built by running the study's harness for it on
    /// this machine (which must have the study's device).
    #[arg(long)]
    binaries: bool,
    /// A harness executable built elsewhere, tried before building the study's (repeat for
    /// several; with `--binaries`).
    #[arg(long = "harness-bin", value_name = "PATH", requires = "binaries")]
    harnesses: Vec<PathBuf>,
    /// A folder whose crates may be built here to make the binaries (repeat for several;
    /// default none: only `--harness-bin`; with `--binaries`).
    #[arg(long = "allow", value_name = "DIR", requires = "binaries")]
    allow: Vec<PathBuf>,
}

/// Arguments of `study delete`.
#[derive(Args)]
pub(crate) struct DeleteArgs {
    /// The database: a connection string as `psql` takes it; default: libpq's environment
    /// (`PGHOST`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, ...). Passwords: `PGPASSWORD` or
    /// `~/.pgpass`.
    #[arg(long)]
    db: Option<String>,
    /// The study.
    name: String,
}

pub(crate) fn run(cmd: StudyCommand) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        StudyCommand::Create(a) => create(*a),
        StudyCommand::Status(a) => status(a),
        StudyCommand::Export(a) => {
            let mut db = Db::connect(a.db.as_deref().unwrap_or(""), "tunable study export")?;
            let r = if a.binaries {
                let trust = Trust {
                    prebuilt: a.harnesses.clone(),
                    allow: a.allow.clone(),
                    ..Trust::default()
                };
                export::export_with_binaries(&mut db, &a.name, &a.out, None, &trust)?
            } else {
                export::export(&mut db, &a.name, &a.out, None)?
            };
            match (&r.tuned, &r.entry) {
                (Some(path), Some(e)) => println!(
                    "{}: {} on {} key {}: {:.4} ms after {} evaluations",
                    path.display(),
                    e.kernel,
                    e.device,
                    e.key,
                    e.time_ms,
                    e.evaluations
                ),
                _ => println!("every configuration failed: no tuned file written"),
            }
            for (name, size) in &r.artifacts {
                println!("{}: {size} bytes", a.out.join(name).display());
            }
            if a.binaries && r.artifacts.is_empty() && r.entry.is_some() {
                println!(
                    "no device binaries: the kernel built none (a CPU kernel), or the harness predates --binaries"
                );
            }
            println!("{}: {} results", r.cache.display(), r.results);
            Ok(())
        }
        StudyCommand::Delete(a) => {
            let mut db = Db::connect(a.db.as_deref().unwrap_or(""), "tunable study delete")?;
            let s = study::load(&mut db, &a.name)?;
            study::delete(&mut db, &s)?;
            println!("deleted study {}", a.name);
            Ok(())
        }
        StudyCommand::SetupRoles(a) => {
            let mut db = Db::connect(a.db.as_deref().unwrap_or(""), "tunable study setup-roles")?;
            roles::setup(&mut db, &a.coordinators, &a.workers)?;
            println!(
                "roles {} and {} set up{}{}",
                roles::COORDINATOR,
                roles::WORKER,
                if a.coordinators.is_empty() {
                    String::new()
                } else {
                    format!("; coordinators: {}", a.coordinators.join(", "))
                },
                if a.workers.is_empty() {
                    String::new()
                } else {
                    format!("; workers: {}", a.workers.join(", "))
                }
            );
            Ok(())
        }
    }
}

/// What a study is made of, from its harness or its cache.
struct Made {
    kernel: String,
    device: String,
    evaluator: EvaluatorSpec,
    space: SpaceDef,
    size: usize,
    budget: usize,
    strategy: String,
}

fn create(a: CreateArgs) -> Result<(), Box<dyn std::error::Error>> {
    let made = match (&a.harness, &a.cache) {
        (Some(harness), _) => from_harness(&a, harness)?,
        (None, Some(cache)) => from_cache(&a, cache)?,
        (None, None) => return Err("give --harness CRATE or --cache FILE".into()),
    };
    let spec = StudySpec {
        name: a.name.clone(),
        kernel: made.kernel,
        device: made.device,
        key: a.key,
        strategy: made.strategy,
        seed: a.seed,
        budget: made.budget,
        evaluator: made.evaluator,
        timeout: Duration::try_from_secs_f64(a.timeout)
            .map_err(|_| format!("--timeout {} is not a duration", a.timeout))?,
        max_attempts: a.max_attempts,
    };
    let mut db = Db::connect(a.db.as_deref().unwrap_or(""), "tunable study create")?;
    let s = study::create(&mut db, &spec, &made.space)?;
    println!(
        "created study {} (id {}): kernel {}, device {}, key {}, {} configurations, budget {}, strategy {} seed {}, {}",
        s.spec.name,
        s.id,
        s.spec.kernel,
        s.spec.device,
        s.spec.key,
        made.size,
        s.spec.budget,
        s.spec.strategy,
        s.spec.seed,
        s.spec.evaluator.describe()
    );
    Ok(())
}

/// A study evaluated by the crate's harness: built here, and asked for the kernel's space.
fn from_harness(a: &CreateArgs, harness: &Path) -> Result<Made, Box<dyn std::error::Error>> {
    let manifest = if harness.is_dir() {
        harness.join("Cargo.toml")
    } else {
        harness.to_owned()
    };
    let manifest = std::fs::canonicalize(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let kernel = a.kernel.clone().ok_or("--harness needs --kernel")?;
    eprintln!(
        "tunable: building the harness (example {} of {})",
        a.example,
        manifest.display()
    );
    // The crate is the one given on this command line: building it is this user's choice.
    let trust = Trust::default();
    let program = harness::build(&manifest, &a.example, !a.debug, trust.build_timeout)?;
    let mut spec = HarnessSpec {
        manifest,
        example: a.example.clone(),
        release: !a.debug,
        kernel,
        key: a.key,
        space: 0,
    };
    let found = harness::describe(
        &program,
        &spec.dir(),
        &spec.kernel,
        a.key,
        trust.describe_timeout,
    )?;
    let space = found.space.build()?;
    spec.space = found.fingerprint;
    Ok(Made {
        kernel: spec.kernel.clone(),
        device: a.device.clone().unwrap_or(found.device),
        evaluator: EvaluatorSpec::Harness(spec),
        size: space.len(),
        space: found.space,
        budget: a.budget.unwrap_or(found.budget),
        strategy: a.strategy.clone().unwrap_or(found.strategy),
    })
}

/// A study replaying a Kernel Tuner cache.
fn from_cache(a: &CreateArgs, cache: &Path) -> Result<Made, Box<dyn std::error::Error>> {
    let cache_path = std::fs::canonicalize(cache)
        .map_err(|e| format!("cannot read {}: {e}", cache.display()))?;
    let loaded = KernelTunerCache::load(&cache_path)?;
    let given = a.space.as_ref().or(a.t1.as_ref());
    let (space, listed) = match given {
        Some(path) => (Some(load(path)?.builder.build()?), false),
        None => (None, true),
    };
    // Every configuration of the space must be replayable.
    let replay = Replay::new(&loaded, space)?;
    let stem = cache_path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| {
            n.trim_end_matches(".gz")
                .trim_end_matches(".json")
                .to_owned()
        })
        .unwrap_or_default();
    Ok(Made {
        kernel: a
            .kernel
            .clone()
            .or(loaded.kernel_name.clone())
            .unwrap_or_else(|| stem.clone()),
        device: a
            .device
            .clone()
            .or(loaded.device_name.clone())
            .unwrap_or(stem),
        evaluator: EvaluatorSpec::Replay {
            cache: cache_path,
            scale: a.scale,
        },
        space: SpaceDef::of(replay.space(), listed),
        size: replay.space().len(),
        budget: a.budget.unwrap_or(100),
        strategy: a.strategy.clone().unwrap_or_else(|| "auto".to_owned()),
    })
}

fn status(a: StatusArgs) -> Result<(), Box<dyn std::error::Error>> {
    use std::fmt::Write as _;
    let mut db = Db::connect(a.db.as_deref().unwrap_or(""), "tunable study status")?;
    let studies = match &a.name {
        Some(n) => vec![study::load(&mut db, n)?],
        None => study::list(&mut db)?,
    };
    let statuses = studies
        .iter()
        .map(|s| study::status(&mut db, s))
        .collect::<Result<Vec<_>, _>>()?;
    let workers = worker::live(&mut db)?;
    let mut text = String::new();
    if a.json {
        let items: Vec<_> = statuses.iter().map(status_json).collect();
        let out = json!({
            "studies": items,
            "workers": workers.iter().map(|w| json!({
                "id": w.id, "devices": w.devices, "slots": w.slots, "silent_for": w.silent_for,
            })).collect::<Vec<_>>(),
        });
        writeln!(text, "{}", serde_json::to_string_pretty(&out)?)?;
        return print_all(&text);
    }
    if statuses.is_empty() {
        writeln!(text, "no study")?;
    }
    for st in &statuses {
        print_status(&mut text, st, a.name.is_some())?;
    }
    let slots: usize = workers.iter().map(|w| w.slots).sum();
    writeln!(text, "workers: {} live, {slots} slots", workers.len())?;
    if a.name.is_some() {
        for w in &workers {
            writeln!(
                text,
                "  {} devices {} (heartbeat {:.1} s ago)",
                w.id, w.devices, w.silent_for
            )?;
        }
    }
    print_all(&text)
}

/// Writes `text` to standard output; a reader that went away (`study status | head`) is not an
/// error.
fn print_all(text: &str) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn state_name(s: StudyState) -> &'static str {
    match s {
        StudyState::Open => "open",
        StudyState::Done => "done",
    }
}

fn status_json(st: &StudyStatus) -> serde_json::Value {
    let s = &st.study;
    json!({
        "name": s.spec.name, "id": s.id, "state": state_name(s.state),
        "kernel": s.spec.kernel, "device": s.spec.device, "key": s.spec.key,
        "strategy": s.spec.strategy, "seed": s.spec.seed, "budget": s.spec.budget,
        "evaluator": s.spec.evaluator.describe(),
        "results": st.results, "failed": st.failed, "pending": st.pending,
        "running": st.running, "expired": st.expired, "retried": st.retried,
        "best": st.best.as_ref().map(|(k, t)| json!({"config": k, "time_ms": t})),
        "coordinator": st.coordinator, "throughput": st.throughput,
    })
}

fn print_status(text: &mut String, st: &StudyStatus, detail: bool) -> Result<(), std::fmt::Error> {
    use std::fmt::Write as _;
    let s = &st.study;
    let best = st.best.as_ref().map_or_else(
        || "none yet".to_owned(),
        |(k, t)| format!("{t:.4} ms at [{k}]"),
    );
    writeln!(
        text,
        "{} ({}): {}/{} evaluations, {} failed, {} running, {} pending; best {best}",
        s.spec.name,
        state_name(s.state),
        st.results,
        s.spec.budget,
        st.failed,
        st.running,
        st.pending
    )?;
    if detail {
        writeln!(
            text,
            "  kernel {}, device {}, key {}, strategy {} seed {}, {}",
            s.spec.kernel,
            s.spec.device,
            s.spec.key,
            s.spec.strategy,
            s.spec.seed,
            s.spec.evaluator.describe()
        )?;
        writeln!(
            text,
            "  jobs claimed again: {}, leases expired now: {}",
            st.retried, st.expired
        )?;
        if let Some(t) = st.throughput {
            writeln!(text, "  throughput {t:.2} evaluations/s")?;
        }
        writeln!(
            text,
            "  coordinator: {}",
            st.coordinator.as_deref().unwrap_or("none running")
        )?;
    }
    Ok(())
}
