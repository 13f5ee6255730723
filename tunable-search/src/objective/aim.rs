//! # One objective of a goal
//!
//! An [`Aim`] is one objective as the attribute, `TUNABLE_OBJECTIVE` and `cargo tunable tune
//! --objective` write it: a measured objective ([`Objective`]: `time`, `energy`, `edp`), always
//! minimized, or a metric of the user's ([`Metric`]) with its direction, `max` or `min`:
//! `max gflops_per_watt`. A metric has no default direction: minimizing GFLOPS/W by omission
//! would tune for the worst kernel.

use super::{GoalError, Metric, Objective};
use crate::pareto::Sense;
use std::fmt;

/// What an objective ranks by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A measured objective.
    Measured(Objective),
    /// The metric at this index of the goal's metrics.
    Metric(usize),
}

/// One objective: what it ranks by and in which direction.
///
/// ```
/// use tunable_search::objective::{Aim, Metric};
/// use tunable_search::pareto::Sense;
///
/// let metrics = [Metric::parse("gflops_per_watt = 2 * key**3 / energy / 1e9").unwrap()];
/// let aim = Aim::parse("max gflops_per_watt", &metrics).unwrap();
/// assert_eq!((aim.name(), aim.sense()), ("gflops_per_watt", Sense::Maximize));
/// assert_eq!(Aim::parse("energy", &metrics).unwrap().sense(), Sense::Minimize);
/// assert!(Aim::parse("gflops_per_watt", &metrics).is_err()); // no direction
/// assert!(Aim::parse("max time", &metrics).is_err()); // time is minimized
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Aim {
    name: String,
    sense: Sense,
    source: Source,
}

impl Aim {
    /// The objective `text` names among the measured objectives and `metrics`: `[min|max] name`.
    pub fn parse(text: &str, metrics: &[Metric]) -> Result<Aim, GoalError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let (direction, name) = match words[..] {
            [name] => (None, name),
            [d, name] => (Some(d), name),
            _ => {
                return Err(GoalError::Direction {
                    objective: text.to_owned(),
                    why: "write a name, with `max` or `min` before a metric's".to_owned(),
                });
            }
        };
        let sense = match direction {
            None => None,
            Some("min") => Some(Sense::Minimize),
            Some("max") => Some(Sense::Maximize),
            Some(d) => {
                return Err(GoalError::Direction {
                    objective: text.to_owned(),
                    why: format!("unknown direction `{d}`: expected `min` or `max`"),
                });
            }
        };
        if let Ok(o) = name.parse::<Objective>() {
            if sense == Some(Sense::Maximize) {
                return Err(GoalError::Direction {
                    objective: text.to_owned(),
                    why: format!("`{name}` is minimized: write `{name}`"),
                });
            }
            return Ok(Aim {
                name: name.to_owned(),
                sense: Sense::Minimize,
                source: Source::Measured(o),
            });
        }
        let Some(index) = metrics.iter().position(|m| m.name() == name) else {
            let known: Vec<&str> = Objective::NAMES
                .into_iter()
                .chain(metrics.iter().map(Metric::name))
                .collect();
            return Err(GoalError::UnknownObjective {
                name: name.to_owned(),
                suggestion: crate::suggest::closest(name, known.iter().copied()).map(str::to_owned),
                known: known.join(", "),
            });
        };
        let Some(sense) = sense else {
            return Err(GoalError::Direction {
                objective: text.to_owned(),
                why: format!("a metric needs a direction: `max {name}` or `min {name}`"),
            });
        };
        Ok(Aim {
            name: name.to_owned(),
            sense,
            source: Source::Metric(index),
        })
    }

    /// The objective of a measured quantity.
    pub fn measured(o: Objective) -> Aim {
        Aim {
            name: o.name().to_owned(),
            sense: Sense::Minimize,
            source: Source::Measured(o),
        }
    }

    /// Its name: the measured objective's or the metric's.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it is minimized or maximized.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// What it ranks by.
    pub fn source(&self) -> Source {
        self.source
    }
}

impl fmt::Display for Aim {
    /// As written: `time`, `max gflops_per_watt`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Source::Measured(_) => f.write_str(&self.name),
            Source::Metric(_) => {
                let d = match self.sense {
                    Sense::Minimize => "min",
                    Sense::Maximize => "max",
                };
                write!(f, "{d} {}", self.name)
            }
        }
    }
}
