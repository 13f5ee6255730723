//! # Objectives
//!
//! What a tuning pursues, as `#[tunable(objective = "...")]` (or `objectives = [...]`),
//! `TUNABLE_OBJECTIVE` and `cargo tunable tune --objective` name it. One list of names serves
//! the attribute's compile-time check and the run-time settings, so that both accept the same
//! words:
//!
//! - a measured objective ([`Objective`]): the time of one run, its energy, or their product,
//!   the energy-delay product; always minimized;
//! - a metric of the user's ([`Metric`]), `gflops_per_watt = 2 * key**3 / energy / 1e9`, named
//!   with its direction: `max gflops_per_watt` ([`Aim`]);
//! - several of them at once: the tuning keeps their Pareto front, and a rule ([`Prefer`])
//!   chooses the point that ships (`least_energy within 1.10 of fastest`).
//!
//! [`Goal`] holds the whole: its objectives, its metrics and its rule.

mod aim;
mod error;
mod goal;
mod metric;
mod prefer;

pub use aim::{Aim, Source};
pub use error::GoalError;
pub use goal::Goal;
pub use metric::{KEY, Measured, Metric, QUANTITIES};
pub use prefer::Prefer;

use std::fmt;
use std::str::FromStr;

/// A measured objective, what a tuning minimizes by default ([`Time`](Objective::Time)).
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

    fn goal(
        metrics: &[&str],
        objectives: &[&str],
        prefer: Option<&str>,
    ) -> Result<Goal, GoalError> {
        Goal::new(metrics, objectives, prefer, &["tile", "block"])
    }

    #[test]
    fn metrics_parse_and_their_errors_name_what_is_wrong() {
        let m = Metric::parse(" gflops = 2 * key**3 / time / 1e9").unwrap();
        assert_eq!(m.name(), "gflops");
        assert!(!m.needs_energy());
        let run = Measured {
            ms: 2.0,
            joules: None,
            watts: None,
        };
        assert_eq!(m.value(&run, &|_| None, 1000).unwrap(), 1000.0);
        let msg = |d: &str| match Metric::parse(d).and_then(|m| m.check(&["tile"])) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("{d} passed"),
        };
        assert!(msg("gflops 2 * key").contains("no `=`"));
        assert!(msg("2x = time").contains("`2x` is not a name"));
        assert!(
            msg("x = time +").contains("metric `x`: expected"),
            "{}",
            msg("x = time +")
        );
        assert!(msg("x = tile * enrgy").contains("unknown name `enrgy` (did you mean `energy`?)"));
        assert!(msg("tile = time").contains("taken by a parameter"));
        assert!(msg("power = time").contains("taken by a measured quantity"));
        // An error in the expression points into the whole definition.
        match Metric::parse("x = time + * 2") {
            Err(GoalError::Expr { error, .. }) => assert_eq!(error.span.start, 11),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_metric_reads_parameters_and_refuses_what_was_not_measured() {
        let m = Metric::parse("per_tile = energy / tile").unwrap();
        let tile = |n: &str| (n == "tile").then_some(crate::Value::Int(4));
        let run = Measured {
            ms: 1.0,
            joules: Some(2.0),
            watts: None,
        };
        assert_eq!(m.value(&run, &tile, 0).unwrap(), 0.5);
        let none = Measured {
            ms: 1.0,
            joules: None,
            watts: None,
        };
        let e = m.value(&none, &tile, 0).unwrap_err();
        assert!(e.contains("`energy` was not measured"), "{e}");
        let z = |_: &str| Some(crate::Value::Int(0));
        assert!(
            m.value(&run, &z, 0)
                .unwrap_err()
                .contains("metric `per_tile`")
        );
        // Power is the energy over the time where the meter gave no mean power.
        assert_eq!(run.quantity("power"), Some(2000.0));
    }

    #[test]
    fn objectives_need_a_known_name_and_a_metric_a_direction() {
        let m = ["gflops_per_watt = 2 * key**3 / energy / 1e9"];
        assert!(goal(&m, &["max gflops_per_watt"], None).is_ok());
        let msg = |o: &[&str], p: Option<&str>| goal(&m, o, p).unwrap_err().to_string();
        assert!(msg(&["gflops_per_watt"], None).contains("needs a direction"));
        assert!(msg(&["up gflops_per_watt"], None).contains("unknown direction `up`"));
        assert!(msg(&["max time"], None).contains("`time` is minimized"));
        let e = msg(&["enrgy"], None);
        assert!(
            e.contains("did you mean `energy`?")
                && e.contains("time, energy, edp, gflops_per_watt"),
            "{e}"
        );
        assert!(msg(&["time", "time"], None).contains("named twice"));
        assert!(msg(&[], None).contains("no objective"));
        assert!(msg(&["time"], Some("fastest")).contains("chooses among several"));
        assert!(Goal::new(&["time = 1"], &["time"], None, &[]).is_err());
        assert!(
            Goal::new(&["a = time", "a = energy"], &["time"], None, &[])
                .unwrap_err()
                .to_string()
                .contains("another metric")
        );
    }

    #[test]
    fn prefer_rules_parse_against_the_objectives() {
        let m = ["gflops_per_watt = 2 * key**3 / energy / 1e9"];
        let o = ["time", "energy", "max gflops_per_watt"];
        for ok in [
            "fastest",
            "least_energy",
            "most_gflops_per_watt",
            "least_energy within 1.10 of fastest",
            "fastest within 1 of most_gflops_per_watt",
        ] {
            assert_eq!(goal(&m, &o, Some(ok)).unwrap().prefer().to_string(), ok);
        }
        let msg = |p: &str| goal(&m, &o, Some(p)).unwrap_err().to_string();
        assert!(msg("slowest").contains("`slowest` is no rule"));
        assert!(
            msg("least_edp")
                .contains("`edp` is none of the objectives (time, energy, gflops_per_watt)")
        );
        assert!(msg("least_gflops_per_watt").contains("write `most_gflops_per_watt`"));
        assert!(msg("most_energy").contains("write `least_energy`"));
        assert!(msg("least_energy within 0.9 of fastest").contains("at least 1"));
        assert!(msg("least_energy within x of fastest").contains("`x`"));
        assert!(msg("least_energy near fastest").contains("does not parse"));
        // Without `time` among the objectives, `fastest` names none of them.
        assert!(goal(&m, &["energy", "max gflops_per_watt"], Some("fastest")).is_err());
        assert_eq!(
            goal(&m, &["max gflops_per_watt", "time"], None)
                .unwrap()
                .prefer()
                .to_string(),
            "most_gflops_per_watt"
        );
    }

    #[test]
    fn the_front_and_each_rule() {
        let g = |p: Option<&str>| goal(&[], &["time", "energy"], p).unwrap();
        // (ms, J): 0 fastest; 1 dominated by 2; 2 5% slower, less energy; 3 least energy;
        // 4 dominated; 5 equal to 2 (the first is kept); 6 not measured.
        let points = vec![
            vec![1.0, 10.0],
            vec![1.1, 9.5],
            vec![1.05, 8.0],
            vec![1.6, 5.0],
            vec![2.0, 6.0],
            vec![1.05, 8.0],
            vec![0.5, f64::NAN],
        ];
        assert_eq!(g(None).front(&points), [0, 2, 3]);
        assert_eq!(g(None).choose(&points), Some(0));
        assert_eq!(g(Some("fastest")).choose(&points), Some(0));
        assert_eq!(g(Some("least_energy")).choose(&points), Some(3));
        assert_eq!(
            g(Some("least_energy within 1.10 of fastest")).choose(&points),
            Some(2)
        );
        assert_eq!(
            g(Some("least_energy within 1.6 of fastest")).choose(&points),
            Some(3)
        );
        assert_eq!(
            g(Some("fastest within 1.7 of least_energy")).choose(&points),
            Some(2)
        );
        assert_eq!(
            g(Some("fastest within 1.2 of least_energy")).choose(&points),
            Some(3)
        );
        assert_eq!(g(None).choose(&points[6..]), None);
        // The strategy is told the rule's objective, minimized.
        assert_eq!(g(Some("least_energy")).told(&[1.0, 5.0]), 5.0);
    }

    #[test]
    fn a_maximized_metric_on_the_front_and_within_a_rule() {
        let m = ["gflops = 2 * key**3 / time / 1e9"];
        let g = goal(
            &m,
            &["energy", "max gflops"],
            Some("least_energy within 1.25 of most_gflops"),
        )
        .unwrap();
        // (J, GFLOPS): 100 is the most; within 1.25 of it means at least 80.
        let points = vec![
            vec![5.0, 100.0],
            vec![4.0, 85.0],
            vec![3.0, 70.0],
            vec![4.5, 80.0],
        ];
        assert_eq!(g.front(&points), [2, 1, 0]);
        assert_eq!(g.choose(&points), Some(1));
        assert_eq!(g.told(&[4.0, 85.0]), 4.0);
        let most = goal(&m, &["energy", "max gflops"], Some("most_gflops")).unwrap();
        assert_eq!(most.told(&[4.0, 85.0]), -85.0);
    }
}
