//! # Metrics
//!
//! A metric is a quantity of the user's, defined from what was measured, as Kernel Tuner's
//! `metrics` are: `gflops_per_watt = 2 * n**3 / energy / 1e9`. Its expression is written in the
//! constraint language ([`crate::expr`]) over
//!
//! - the measured quantities of one run, in SI units: [`QUANTITIES`] (`time` in seconds,
//!   `energy` in joules, `power` in watts, `edp` in joule-seconds);
//! - the kernel's parameters, by name;
//! - `key`, the problem-size key of the tuning.
//!
//! A metric has no direction of its own: the objective that names it says whether it is
//! maximized or minimized (`max gflops_per_watt`, see [`super::Aim`]).

use super::GoalError;
use crate::expr::num::Num;
use crate::expr::{self, ExprError, ast::Expr, interp};
use crate::space::Value;
use std::fmt;

/// The measured quantities a metric may name, with their units.
pub const QUANTITIES: [(&str, &str); 4] = [
    ("time", "s"),
    ("energy", "J"),
    ("power", "W"),
    ("edp", "J·s"),
];

/// The name of the problem-size key in a metric.
pub const KEY: &str = "key";

/// What one configuration's measurement gives a metric: its time and, where a meter read, its
/// energy and mean power.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    /// The time of one run, in milliseconds.
    pub ms: f64,
    /// The energy of one run, in joules (`None`: not measured).
    pub joules: Option<f64>,
    /// The mean power of the runs, in watts (`None`: not measured).
    pub watts: Option<f64>,
}

impl Measured {
    /// A quantity of [`QUANTITIES`] in SI units: `None` for one that was not measured (or a
    /// name that is none).
    pub fn quantity(&self, name: &str) -> Option<f64> {
        match name {
            "time" => Some(self.ms / 1e3),
            "energy" => self.joules,
            "power" => self.watts.or_else(|| Some(self.joules? / (self.ms / 1e3))),
            "edp" => Some(self.joules? * self.ms / 1e3),
            _ => None,
        }
    }
}

/// A metric of the user's: its name and its expression.
///
/// ```
/// use tunable_search::objective::{Measured, Metric};
/// use tunable_search::Value;
///
/// let m = Metric::parse("gflops_per_watt = 2 * key**3 / energy / 1e9").unwrap();
/// m.check(&["tile"]).unwrap();
/// assert!(m.needs_energy());
/// // n = 1000: 2e9 flop for 0.5 J is 4 GFLOPS/W.
/// let run = Measured { ms: 10.0, joules: Some(0.5), watts: Some(50.0) };
/// assert_eq!(m.value(&run, &|_| None::<Value>, 1000).unwrap(), 4.0);
/// let e = Metric::parse("gflops = 2 * key**3 / tme").unwrap().check(&[]).unwrap_err();
/// assert!(e.to_string().contains("did you mean `time`?"), "{e}");
/// ```
#[derive(Clone, Debug)]
pub struct Metric {
    name: String,
    definition: String,
    body: Expr,
    /// Where the expression starts in the definition (byte offset), for its errors.
    offset: usize,
}

impl PartialEq for Metric {
    fn eq(&self, other: &Self) -> bool {
        self.definition == other.definition
    }
}

impl Metric {
    /// Parses `name = expression`; the names the expression uses are checked by
    /// [`check`](Self::check), which knows the parameters.
    pub fn parse(definition: &str) -> Result<Metric, GoalError> {
        let Some((name, _)) = definition.split_once('=') else {
            return Err(GoalError::MetricForm(format!("no `=` in `{definition}`")));
        };
        let offset = name.len() + 1;
        let name = name.trim();
        if !crate::space::is_identifier(name) {
            return Err(GoalError::MetricForm(format!(
                "`{name}` is not a name (a letter or `_`, then letters, digits or `_`)"
            )));
        }
        let owned = |e: ExprError| GoalError::Expr {
            metric: name.to_owned(),
            error: Box::new(e.relocate(offset, definition)),
        };
        let body = expr::parse(&definition[offset..]).map_err(owned)?;
        Ok(Metric {
            name: name.to_owned(),
            definition: definition.to_owned(),
            body,
            offset,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its definition as written: `name = expression`.
    pub fn definition(&self) -> &str {
        &self.definition
    }

    /// Checks the names the expression uses: each a measured quantity ([`QUANTITIES`]), one of
    /// `params`, or `key`; and the metric's own name, which none of those may be.
    pub fn check(&self, params: &[&str]) -> Result<(), GoalError> {
        let known: Vec<&str> = QUANTITIES
            .iter()
            .map(|q| q.0)
            .chain(params.iter().copied())
            .chain([KEY])
            .collect();
        if known.contains(&self.name.as_str()) {
            let what = if params.contains(&self.name.as_str()) {
                "a parameter"
            } else if self.name == KEY {
                "the problem-size key"
            } else {
                "a measured quantity"
            };
            return Err(GoalError::Taken(self.name.clone(), what.to_owned()));
        }
        let mut unknown = None;
        self.body.visit_names(&mut |n, _| {
            if unknown.is_none() && !known.contains(&n) {
                unknown = Some(n.to_owned());
            }
        });
        match unknown {
            None => Ok(()),
            Some(name) => Err(GoalError::UnknownName {
                metric: self.name.clone(),
                suggestion: crate::suggest::closest(&name, known.iter().copied())
                    .map(str::to_owned),
                name,
                known: known.join(", "),
            }),
        }
    }

    /// Whether it reads a quantity only an energy meter gives (`energy`, `power`, `edp`).
    pub fn needs_energy(&self) -> bool {
        let mut needs = false;
        self.body.visit_names(&mut |n, _| {
            needs |= matches!(n, "energy" | "power" | "edp");
        });
        needs
    }

    /// Its value for one configuration: `run`'s quantities, the parameters' values by name
    /// (`param`) and the key. An error (a quantity not measured, a division by zero, a value
    /// that is not a finite number) says why.
    pub fn value(
        &self,
        run: &Measured,
        param: &dyn Fn(&str) -> Option<Value>,
        key: u64,
    ) -> Result<f64, String> {
        let mut missing = None;
        self.body.visit_names(&mut |n, _| {
            if missing.is_none() && QUANTITIES.iter().any(|q| q.0 == n) && run.quantity(n).is_none()
            {
                missing = Some(n.to_owned());
            }
        });
        if let Some(q) = missing {
            return Err(format!("metric `{}`: `{q}` was not measured", self.name));
        }
        let env = |n: &str| -> Option<interp::PyVal> {
            if let Some(v) = run.quantity(n) {
                return Some(interp::PyVal::Num(Num::Float(v)));
            }
            if n == KEY {
                return Some(interp::PyVal::Num(Num::Int(key as i64)));
            }
            param(n).map(|v| interp::PyVal::from(&v))
        };
        let source = &self.definition[self.offset..];
        let v = interp::eval(&self.body, source, &env)
            .map_err(|e| format!("metric `{}`: {}", self.name, e.message()))?;
        match v.to_value() {
            Some(Value::Int(i)) => Ok(i as f64),
            Some(Value::Float(f)) if f.is_finite() => Ok(f),
            Some(Value::Float(f)) => Err(format!("metric `{}` is {f}", self.name)),
            _ => Err(format!("metric `{}` is not a number", self.name)),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.definition)
    }
}
