//! # Objectives
//!
//! What a tuning minimizes, named as `#[tunable(objective = "...")]`, `TUNABLE_OBJECTIVE` and
//! `cargo tunable tune --objective` name it: the time of one run, its energy, or their product,
//! the energy-delay product. One list of names serves the attribute's compile-time check and
//! the run-time settings, so that both accept the same words.

use std::fmt;
use std::str::FromStr;

/// What a tuning minimizes (default [`Time`](Objective::Time)).
///
/// ```
/// use tunable_search::objective::Objective;
///
/// let o: Objective = "edp".parse().unwrap();
/// assert!(o.needs_energy());
/// // 2 ms at 0.5 J per run: 0.5 J x 0.002 s.
/// assert_eq!(o.value(2.0, Some(0.5)), Some(0.001));
/// assert_eq!(Objective::Time.value(2.0, None), Some(2.0));
/// assert!("watts".parse::<Objective>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Objective {
    /// The time of one run, in milliseconds.
    #[default]
    Time,
    /// The energy of one run, in joules.
    Energy,
    /// The energy-delay product of one run, in joule-seconds: its energy times its time.
    Edp,
}

impl Objective {
    /// Every objective, in the order of [`NAMES`](Self::NAMES).
    pub const ALL: [Objective; 3] = [Objective::Time, Objective::Energy, Objective::Edp];

    /// The names the attribute, the setting and the command line accept.
    pub const NAMES: [&'static str; 3] = ["time", "energy", "edp"];

    /// Its name, as written in the attribute.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Time => "time",
            Objective::Energy => "energy",
            Objective::Edp => "edp",
        }
    }

    /// The unit of its [`value`](Self::value), for messages.
    pub fn unit(self) -> &'static str {
        match self {
            Objective::Time => "ms",
            Objective::Energy => "J",
            Objective::Edp => "J·s",
        }
    }

    /// Whether it needs an energy meter.
    pub fn needs_energy(self) -> bool {
        self != Objective::Time
    }

    /// The value minimized for a run of `ms` milliseconds that used `joules` (none: not
    /// measured): `None` when the objective needs the energy and there is none.
    pub fn value(self, ms: f64, joules: Option<f64>) -> Option<f64> {
        match self {
            Objective::Time => Some(ms),
            Objective::Energy => joules,
            Objective::Edp => joules.map(|j| j * ms / 1e3),
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an objective's; its message lists the accepted names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown objective {0:?}; expected one of: time, energy, edp")]
pub struct UnknownObjective(pub String);

impl FromStr for Objective {
    type Err = UnknownObjective;

    fn from_str(s: &str) -> Result<Self, UnknownObjective> {
        Objective::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| UnknownObjective(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_message_lists_them_all() {
        for (o, name) in Objective::ALL.into_iter().zip(Objective::NAMES) {
            assert_eq!(name.parse::<Objective>(), Ok(o));
            assert_eq!(o.to_string(), name);
        }
        let e = "Energy".parse::<Objective>().unwrap_err().to_string();
        assert!(e.contains(&Objective::NAMES.join(", ")), "{e}");
    }

    #[test]
    fn an_energy_objective_without_energy_has_no_value() {
        assert_eq!(Objective::Energy.value(1.0, None), None);
        assert_eq!(Objective::Edp.value(1.0, None), None);
        assert_eq!(Objective::Energy.value(3.0, Some(2.0)), Some(2.0));
    }
}
