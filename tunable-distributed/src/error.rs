//! # Errors
//!
//! One enum for the crate, [`DistError`]. Every message is one line: a command that fails prints
//! exactly one `error: ...` line. A configuration that fails to evaluate is never an error: it is
//! a result (recorded failed, with its reason).

use std::path::PathBuf;

/// Why a distributed-tuning operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// The database URL does not parse.
    #[error("bad database URL '{url}': {reason}")]
    BadUrl {
        /// The URL, its password replaced by `***`.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The first connection to the database failed (wrong address, password, database, ...).
    #[error("cannot connect to PostgreSQL at {target}: {reason}")]
    Connect {
        /// Where: `host:port/database as user`.
        target: String,
        /// The server's or the network's answer.
        reason: String,
    },
    /// The connection was lost and could not be made again in time.
    #[error(
        "lost the connection to PostgreSQL at {target} and could not reconnect within {seconds} s: {reason}"
    )]
    Disconnected {
        /// Where: `host:port/database as user`.
        target: String,
        /// How long reconnecting was tried.
        seconds: f64,
        /// The last error.
        reason: String,
    },
    /// A statement failed for another reason than a lost connection.
    #[error("database error while {doing}: {reason}")]
    Database {
        /// What was being done, e.g. `claiming a job`.
        doing: String,
        /// The server's answer.
        reason: String,
    },
    /// The database holds a schema newer than this build knows.
    #[error(
        "the database's tunable schema is version {found}, newer than this build's {known}: upgrade tunable"
    )]
    SchemaTooNew {
        /// The version found.
        found: i32,
        /// The latest version this build knows.
        known: i32,
    },
    /// No study has this name.
    #[error("no study named '{name}' in this database")]
    UnknownStudy {
        /// The name asked for.
        name: String,
    },
    /// A study of this name exists already.
    #[error("a study named '{name}' exists already")]
    StudyExists {
        /// The name.
        name: String,
    },
    /// Another coordinator is running this study.
    #[error(
        "study '{study}' already has a running coordinator ({holder}); one coordinator per study: stop it first"
    )]
    CoordinatorRunning {
        /// The study.
        study: String,
        /// Who holds it, as the server knows the connection (application name, address).
        holder: String,
    },
    /// After reconnecting, another coordinator had taken the study over.
    #[error("study '{study}' was taken over by another coordinator while the database was away")]
    LostStudy {
        /// The study.
        study: String,
    },
    /// Replaying a study's recorded asks did not give the recorded configurations.
    #[error(
        "cannot resume study '{study}': replaying its history, ask {event} gave [{got}] where [{expected}] was recorded (the strategy is not deterministic)"
    )]
    ReplayDiverged {
        /// The study.
        study: String,
        /// The event's sequence number.
        event: i32,
        /// The recorded configurations (Kernel Tuner keys, `;`-separated).
        expected: String,
        /// What the strategy asked now.
        got: String,
    },
    /// The study's history breaks an invariant (e.g. a told result of an unknown job).
    #[error("study '{study}' has an inconsistent history: {reason}")]
    BadHistory {
        /// The study.
        study: String,
        /// What is inconsistent.
        reason: String,
    },
    /// The space rebuilt from a study's stored definition has another fingerprint than recorded.
    #[error(
        "study '{study}': its stored space rebuilds with fingerprint {rebuilt:016x}, not the recorded {stored:016x}"
    )]
    SpaceMismatch {
        /// The study.
        study: String,
        /// The recorded fingerprint.
        stored: u64,
        /// The rebuilt one.
        rebuilt: u64,
    },
    /// A study's evaluation cannot be set up on this machine (e.g. its cache file is missing).
    #[error("study '{study}': cannot set up its evaluation here: {reason}")]
    Evaluator {
        /// The study.
        study: String,
        /// Why.
        reason: String,
    },
    /// The device binaries of a study's winner could not be produced for its export.
    #[error("study '{study}': cannot export the winner's device binaries: {reason}")]
    Binaries {
        /// The study.
        study: String,
        /// Why.
        reason: String,
    },
    /// A study's options are invalid.
    #[error("invalid study: {reason}")]
    BadStudy {
        /// What is wrong.
        reason: String,
    },
    /// A space could not be built or loaded.
    #[error(transparent)]
    Space(Box<tunable_search::SpaceError>),
    /// A cache could not be read or replayed.
    #[error(transparent)]
    Sim(#[from] tunable_search::sim::SimError),
    /// The strategy could not be built.
    #[error(transparent)]
    Strategy(#[from] tunable_search::strategy::StrategyError),
    /// Writing the tuned file or the Kernel Tuner cache failed.
    #[error(transparent)]
    Runtime(#[from] tunable_runtime::RuntimeError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Stored JSON does not decode.
    #[error("cannot decode the stored {what}: {source}")]
    Json {
        /// What was decoded.
        what: &'static str,
        /// The cause.
        source: serde_json::Error,
    },
}

impl From<tunable_search::SpaceError> for DistError {
    fn from(e: tunable_search::SpaceError) -> Self {
        DistError::Space(Box::new(e))
    }
}

/// A message made one line: line breaks become `; `.
pub(crate) fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
