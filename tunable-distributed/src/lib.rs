//! # tunable-distributed
//!
//! Tuning across many GPUs and machines, with PostgreSQL as the shared state. Local tuning (one
//! process, one device) needs none of this; this crate is for a team that tunes many kernels,
//! sizes and GPU models at once.
//!
//! - A **study** ([`study`]) is one tuning: kernel, device model, problem-size key, space,
//!   strategy and seed, budget, and how configurations are evaluated ([`EvaluatorSpec`]).
//! - One **coordinator** per study ([`coordinator`]) owns the strategy: the single writer of asks
//!   and tells, asking batches the size of the idle worker pool. Every call is recorded
//!   ([`history`]), so a coordinator killed and started again resumes without measuring again.
//! - **Jobs and results are rows** ([`queue`]): workers claim jobs with
//!   `SELECT ... FOR UPDATE SKIP LOCKED` under a lease renewed by heartbeats; an expired lease
//!   makes a job claimable again; a result is recorded once.
//! - **Workers are stateless** ([`worker`]): one slot per device, each evaluation in a child
//!   process ([`child`]) so a crash or hang costs that evaluation, recorded failed with its
//!   reason, never the worker. The child is the user's own tuning harness ([`harness`]),
//!   measuring one configuration as local tuning would, or a cache replay for tests and
//!   benchmarks ([`replay`]).
//! - The results are the journal: [`export`] writes the tuned file a plain build bakes and a
//!   Kernel Tuner cache; with the winner's device binaries too
//!   ([`export::export_with_binaries`]), built by running the harness once more for it.
//!
//! Connections are made as every PostgreSQL client makes them: connection string, libpq
//! environment, `.pgpass`, TLS with `sslmode` and `sslrootcert` ([`conninfo`]); they report bad
//! URLs and passwords in one line, never showing a password, and reconnect after losing the
//! server ([`db`]); the schema is versioned and migrated in code ([`schema`]); [`roles`] gives
//! coordinators and workers only the privileges they need. A worker runs only the harnesses its
//! operator allowed ([`harness::Trust`]), each evaluation in a process group of its own without
//! the database credentials ([`child`]). [`scratch`] starts throw-away clusters (plain or
//! TLS-only) for tests and benchmarks.
//!
//! ```no_run
//! use std::time::Duration;
//! use tunable_distributed::{coordinator, study, Db, EvaluatorSpec, SpaceDef, StudySpec};
//! use tunable_search::sim::{KernelTunerCache, Replay};
//!
//! // The password comes from ~/.pgpass or PGPASSWORD, never the command line.
//! let url = "postgres://tuner@db.lab:5432/tuning?sslmode=verify-full&sslrootcert=/etc/tunable/ca.pem";
//! let cache = KernelTunerCache::load("/shared/gemm_A100.json.gz")?;
//! let replay = Replay::new(&cache, None)?;
//! let mut db = Db::connect(url, "example")?;
//! let spec = StudySpec {
//!     name: "gemm-a100".into(),
//!     kernel: "gemm".into(),
//!     device: "NVIDIA A100".into(),
//!     key: 0,
//!     strategy: "auto".into(),
//!     seed: 1,
//!     budget: 220,
//!     evaluator: EvaluatorSpec::Replay { cache: "/shared/gemm_A100.json.gz".into(), scale: 1.0 },
//!     timeout: Duration::from_secs(60),
//!     max_attempts: 3,
//! };
//! study::create(&mut db, &spec, &SpaceDef::of(replay.space(), true))?;
//! coordinator::run(url, "gemm-a100", &Default::default())?; // workers run elsewhere
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod child;
pub mod conninfo;
pub mod coordinator;
pub mod db;
mod error;
pub mod evaluator;
pub mod export;
pub mod harness;
pub mod history;
pub mod ident;
mod process;
pub mod queue;
pub mod replay;
pub mod roles;
pub mod schema;
pub mod scratch;
mod status;
pub mod study;
pub mod task;
pub mod worker;

pub use db::Db;
pub use error::DistError;
pub use evaluator::{Answer, ChildSpec, Evaluator, EvaluatorSpec, Launcher};
pub use study::{Study, StudySpec, StudyState, StudyStatus};
pub use tunable_search::space::SpaceDef;
