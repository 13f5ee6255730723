//! # Errors
//!
//! One error type for building and loading search spaces. Each variant names the parameter,
//! constraint or file at fault.

use crate::expr::ExprError;
use std::path::PathBuf;

/// Why a search space could not be built or loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpaceError {
    /// A constraint does not parse or does not type-check.
    #[error("constraint {index} ({text:?}): {error}")]
    Constraint {
        /// Position of the constraint in the list given.
        index: usize,
        /// The constraint as written.
        text: String,
        /// What is wrong, with its position in `text`.
        error: Box<ExprError>,
    },
    /// A device property that is none of
    /// [`DEVICE_PROPERTIES`](crate::space::device_property::DEVICE_PROPERTIES).
    #[error("unknown device property '{name}'")]
    UnknownDeviceProperty {
        /// The name, without `device.`.
        name: String,
    },
    /// A parameter has no values.
    #[error("parameter '{name}' has no values")]
    EmptyParam {
        /// The parameter.
        name: String,
    },
    /// Two parameters share a name.
    #[error("parameter '{name}' is declared twice")]
    DuplicateParam {
        /// The parameter.
        name: String,
    },
    /// A parameter name that is no identifier (constraints could not name it).
    #[error(
        "parameter name {name:?} is not an identifier (letters, digits and '_', not starting with a digit)"
    )]
    BadParamName {
        /// The name.
        name: String,
    },
    /// A parameter lists the same value twice.
    #[error("parameter '{name}' lists the value {value} twice")]
    DuplicateValue {
        /// The parameter.
        name: String,
        /// The repeated value.
        value: String,
    },
    /// A parameter mixes strings, booleans and numbers.
    #[error("parameter '{name}' mixes values of different kinds ({first} and {other})")]
    MixedKinds {
        /// The parameter.
        name: String,
        /// Kind of its first value.
        first: String,
        /// The first value of another kind.
        other: String,
    },
    /// A parameter with more values than a configuration index can hold.
    #[error("parameter '{name}' has {count} values; at most 65535 are supported")]
    TooManyValues {
        /// The parameter.
        name: String,
        /// How many values it has.
        count: usize,
    },
    /// The Cartesian product needs more than 64 bits to index.
    #[error("the space needs {bits} bits to index a configuration; at most 64 are supported")]
    TooLarge {
        /// Bits needed.
        bits: u32,
    },
    /// A listed configuration has the wrong length or a value index out of range.
    #[error("configuration {index} ({indices:?}) does not fit the parameters")]
    BadConfig {
        /// Its position in the list given.
        index: usize,
        /// Its value indices.
        indices: Vec<u16>,
    },
    /// Reading a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not valid JSON.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// A file is JSON but not of the expected shape.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        message: String,
    },
    /// A T1 parameter's `Values` expression could not be evaluated.
    #[error("{path}: values of parameter '{param}': {error}")]
    ParamValues {
        /// The file.
        path: PathBuf,
        /// The parameter.
        param: String,
        /// What is wrong, with its position in the expression.
        error: Box<ExprError>,
    },
}
