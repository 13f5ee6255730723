//! # What is wrong with a goal
//!
//! One error type for the parts of a tuning's goal: a metric's definition, an objective's name
//! or direction, a `prefer` rule. The attribute reports each on the string it comes from; the
//! settings and the command line report it with the variable or flag.

use crate::expr::ExprError;

/// Why a metric, an objective or a `prefer` rule is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GoalError {
    /// A metric that is not `name = expression`, or whose name is not an identifier.
    #[error(
        "a metric is written `name = expression`, e.g. `gflops_per_watt = 2 * key**3 / energy / 1e9`; {0}"
    )]
    MetricForm(String),
    /// A metric whose name is taken (by a measured quantity, a parameter, `key` or another
    /// metric).
    #[error("metric `{0}`: the name is taken by {1}")]
    Taken(String, String),
    /// A metric's expression does not parse.
    #[error("metric `{metric}`: {error}")]
    Expr {
        /// The metric.
        metric: String,
        /// What is wrong with its expression.
        error: Box<ExprError>,
    },
    /// A metric's expression names what is neither a measured quantity, a parameter nor `key`.
    #[error("metric `{metric}`: unknown name `{name}`{}; known: {known}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownName {
        /// The metric.
        metric: String,
        /// The name as written.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
        /// The names a metric may use.
        known: String,
    },
    /// An objective that names neither a measured objective nor a metric.
    #[error("unknown objective `{name}`{}; expected one of: {known}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownObjective {
        /// The name as written.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
        /// The accepted names.
        known: String,
    },
    /// An objective whose direction is missing, unknown or wrong for it.
    #[error("objective `{objective}`: {why}")]
    Direction {
        /// The objective as written.
        objective: String,
        /// What is wrong, and what to write.
        why: String,
    },
    /// The same objective twice, or none.
    #[error("{0}")]
    Objectives(String),
    /// A `prefer` rule that does not parse or names no objective of the goal.
    #[error(
        "prefer `{rule}`: {why}; a rule is `fastest`, `least_<objective>` or `most_<objective>`, optionally followed by `within <factor> of <rule>`, e.g. `least_energy within 1.10 of fastest`"
    )]
    Prefer {
        /// The rule as written.
        rule: String,
        /// What is wrong.
        why: String,
    },
}
