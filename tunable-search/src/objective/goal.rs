//! # A tuning's goal
//!
//! What one tuning pursues: one objective or several ([`Aim`]), the metrics they may name
//! ([`Metric`]) and, with several, the rule that chooses the shipped point of their front
//! ([`Prefer`]). The attribute (`objective`, `objectives`, `metric`, `prefer`), the settings
//! (`TUNABLE_OBJECTIVE`, `TUNABLE_PREFER`) and the command line (`cargo tunable tune
//! --objective`, `--prefer`) all build it here, so that they accept the same words.

use super::{Aim, GoalError, Measured, Metric, Objective, Prefer, Source};
use crate::pareto::dominates;
use crate::space::Value;
use std::fmt;
use std::sync::Arc;

/// What a tuning pursues (default: time alone). Cheap to clone.
///
/// ```
/// use tunable_search::objective::{Goal, Measured};
/// use tunable_search::Value;
///
/// let goal = Goal::new(
///     &["gflops_per_watt = 2 * key**3 / energy / 1e9"],
///     &["time", "max gflops_per_watt"],
///     Some("most_gflops_per_watt within 1.2 of fastest"),
///     &["tile"],
/// )
/// .unwrap();
/// assert!(goal.several() && goal.needs_energy());
/// assert_eq!(goal.to_string(), "time, max gflops_per_watt");
/// let run = Measured { ms: 10.0, joules: Some(0.5), watts: None };
/// let no_param = |_: &str| None::<Value>;
/// assert_eq!(goal.values(&run, &no_param, 1000).unwrap(), [10.0, 4.0]);
/// // (ms, GFLOPS/W): the fastest, one 10% slower and more efficient, the most efficient.
/// let points = [vec![10.0, 4.0], vec![11.0, 5.0], vec![20.0, 9.0], vec![12.0, 3.0]];
/// assert_eq!(goal.front(&points), [0, 1, 2]);
/// assert_eq!(goal.choose(&points), Some(1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Goal(Arc<Parts>);

#[derive(Debug, PartialEq)]
struct Parts {
    metrics: Vec<Metric>,
    aims: Vec<Aim>,
    prefer: Prefer,
}

impl Default for Goal {
    fn default() -> Self {
        Goal::measured(Objective::Time)
    }
}

impl From<Objective> for Goal {
    fn from(o: Objective) -> Self {
        Goal::measured(o)
    }
}

impl Goal {
    /// One measured objective.
    pub fn measured(o: Objective) -> Goal {
        let aims = vec![Aim::measured(o)];
        Goal(Arc::new(Parts {
            prefer: Prefer::first(&aims),
            metrics: Vec::new(),
            aims,
        }))
    }

    /// The goal of `metrics` (definitions, `name = expression`), `objectives` (as
    /// [`Aim::parse`] reads them) and `prefer` (a rule, [`Prefer::parse`]; none: the first
    /// objective's best) for a kernel whose parameters are `params`.
    pub fn new(
        metrics: &[&str],
        objectives: &[&str],
        prefer: Option<&str>,
        params: &[&str],
    ) -> Result<Goal, GoalError> {
        let metrics = metrics
            .iter()
            .map(|d| {
                let m = Metric::parse(d)?;
                m.check(params)?;
                Ok(m)
            })
            .collect::<Result<Vec<_>, GoalError>>()?;
        let aims = objectives
            .iter()
            .map(|o| Aim::parse(o, &metrics))
            .collect::<Result<Vec<_>, _>>()?;
        let prefer = prefer.map(|p| Prefer::parse(p, &aims)).transpose()?;
        Goal::from_parts(metrics, aims, prefer)
    }

    /// The goal of parts parsed one by one (so that each error can point at its own text):
    /// checks what only the whole can, at least one objective, none twice, no metric named
    /// twice, and a `prefer` rule only with several objectives.
    pub fn from_parts(
        metrics: Vec<Metric>,
        aims: Vec<Aim>,
        prefer: Option<Prefer>,
    ) -> Result<Goal, GoalError> {
        if aims.is_empty() {
            return Err(GoalError::Objectives(
                "no objective: name one, e.g. `time`".into(),
            ));
        }
        for (i, a) in aims.iter().enumerate() {
            if aims[..i].iter().any(|b| b.name() == a.name()) {
                return Err(GoalError::Objectives(format!(
                    "objective `{}` is named twice",
                    a.name()
                )));
            }
        }
        for (i, m) in metrics.iter().enumerate() {
            if metrics[..i].iter().any(|n| n.name() == m.name()) {
                return Err(GoalError::Taken(m.name().into(), "another metric".into()));
            }
            if m.name().parse::<Objective>().is_ok() {
                return Err(GoalError::Taken(
                    m.name().into(),
                    "a measured objective".into(),
                ));
            }
        }
        if prefer.is_some() && aims.len() < 2 {
            return Err(GoalError::Prefer {
                rule: prefer.map(|p| p.to_string()).unwrap_or_default(),
                why: "a rule chooses among several objectives: name them in `objectives`".into(),
            });
        }
        let prefer = prefer.unwrap_or_else(|| Prefer::first(&aims));
        Ok(Goal(Arc::new(Parts {
            metrics,
            aims,
            prefer,
        })))
    }

    /// The objectives of a setting or a flag: names separated by commas, `time,energy`.
    pub fn split(list: &str) -> Vec<&str> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// The same metrics with other objectives and rule (a setting that overrides the
    /// attribute's), checked the same way.
    pub fn with_objectives(
        &self,
        objectives: &[&str],
        prefer: Option<&str>,
    ) -> Result<Goal, GoalError> {
        let aims = objectives
            .iter()
            .map(|o| Aim::parse(o, &self.0.metrics))
            .collect::<Result<Vec<_>, _>>()?;
        let prefer = prefer.map(|p| Prefer::parse(p, &aims)).transpose()?;
        Goal::from_parts(self.0.metrics.clone(), aims, prefer)
    }

    /// Its objectives, in order.
    pub fn aims(&self) -> &[Aim] {
        &self.0.aims
    }

    /// The metrics its objectives may name.
    pub fn metrics(&self) -> &[Metric] {
        &self.0.metrics
    }

    /// The rule that chooses the shipped point.
    pub fn prefer(&self) -> &Prefer {
        &self.0.prefer
    }

    /// Whether it has several objectives (a front).
    pub fn several(&self) -> bool {
        self.0.aims.len() > 1
    }

    /// Its objective when it is one measured objective alone.
    pub fn single(&self) -> Option<Objective> {
        match self.0.aims[..] {
            [ref a] => match a.source() {
                Source::Measured(o) => Some(o),
                Source::Metric(_) => None,
            },
            _ => None,
        }
    }

    /// Whether an objective needs an energy meter (a measured one, or a metric that reads
    /// `energy`, `power` or `edp`).
    pub fn needs_energy(&self) -> bool {
        self.0.aims.iter().any(|a| match a.source() {
            Source::Measured(o) => o.needs_energy(),
            Source::Metric(i) => self.0.metrics[i].needs_energy(),
        })
    }

    /// The unit of an objective's values, for messages (empty for a metric).
    pub fn unit(&self, aim: usize) -> &'static str {
        match self.0.aims[aim].source() {
            Source::Measured(o) => o.unit(),
            Source::Metric(_) => "",
        }
    }

    /// The values of its objectives for one configuration, as stated (a maximized one not
    /// negated): measured objectives in their units ([`Objective::value`]), metrics from
    /// `run`, the parameters' values by name and the key ([`Metric::value`]). An error says
    /// why one cannot be computed.
    pub fn values(
        &self,
        run: &Measured,
        param: &dyn Fn(&str) -> Option<Value>,
        key: u64,
    ) -> Result<Vec<f64>, String> {
        self.0
            .aims
            .iter()
            .map(|a| match a.source() {
                Source::Measured(o) => o
                    .value(run.ms, run.joules)
                    .ok_or_else(|| format!("{o}: not measured")),
                Source::Metric(i) => self.0.metrics[i].value(run, param, key),
            })
            .collect()
    }

    /// The values as minimized (a maximized objective negated, [`Sense::key`](crate::pareto::Sense::key)).
    pub fn keys(&self, values: &[f64]) -> Vec<f64> {
        self.0
            .aims
            .iter()
            .zip(values)
            .map(|(a, &v)| a.sense().key(v))
            .collect()
    }

    /// The one value a single-objective strategy is told (minimized): the objective whose best
    /// the rule chooses.
    pub fn told(&self, values: &[f64]) -> f64 {
        let i = self.0.prefer.objective();
        self.0.aims[i].sense().key(values[i])
    }

    /// The front of `points` (each the values of the objectives, as stated): the positions of
    /// the points no other dominates, in order of the first objective (best first), then the
    /// next; of equal points, the first. Points with a value that is not finite are left out.
    pub fn front(&self, points: &[Vec<f64>]) -> Vec<usize> {
        let n = self.0.aims.len();
        let keys: Vec<Option<Vec<f64>>> = points
            .iter()
            .map(|p| (p.len() == n && p.iter().all(|v| v.is_finite())).then(|| self.keys(p)))
            .collect();
        let mut out: Vec<usize> = (0..points.len())
            .filter(|&i| {
                let Some(k) = &keys[i] else { return false };
                keys.iter().enumerate().all(|(j, other)| match other {
                    // Dominated, or equal to an earlier point: not on the front.
                    Some(o) if j != i => !(dominates(o, k) || (j < i && o == k)),
                    _ => true,
                })
            })
            .collect();
        out.sort_by(|&a, &b| {
            let (ka, kb) = (keys[a].as_ref(), keys[b].as_ref());
            ka.zip(kb)
                .and_then(|(x, y)| x.partial_cmp(y))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        });
        out
    }

    /// The point the rule ships among `points` (as for [`front`](Self::front)): on the front,
    /// by the [`Prefer`] rule. `None` if no point has finite values.
    pub fn choose(&self, points: &[Vec<f64>]) -> Option<usize> {
        let front = self.front(points);
        let on: Vec<Vec<f64>> = front.iter().map(|&i| points[i].clone()).collect();
        self.0.prefer.choose(&self.0.aims, &on).map(|i| front[i])
    }
}

impl fmt::Display for Goal {
    /// Its objectives as written, separated by commas: `time, max gflops_per_watt`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let aims: Vec<String> = self.0.aims.iter().map(Aim::to_string).collect();
        f.write_str(&aims.join(", "))
    }
}
