//! # Which point of a front ships
//!
//! Several objectives have no single best configuration but a front of trade-offs
//! ([`crate::pareto`]); the `prefer` rule names the one that ships:
//!
//! | rule | the point of the front with |
//! |---|---|
//! | `fastest` | the least time (`least_time`) |
//! | `least_<objective>` | the least value of a minimized objective: `least_energy` |
//! | `most_<objective>` | the most of a maximized one: `most_gflops_per_watt` |
//! | `<rule> within <factor> of <rule>` | the first rule's best among the points whose value of the second rule's objective is within `factor` (at least 1) of the second rule's best: `least_energy within 1.10 of fastest` is the least energy among the points at most 10% slower than the fastest |
//!
//! Every objective a rule names must be one of the goal's, so that the point chosen is on the
//! front. Without a rule, the first objective's best ships. Ties go to the next objectives in
//! order, then to the point measured first.

use super::{Aim, GoalError};
use crate::pareto::Sense;
use std::cmp::Ordering;
use std::fmt;

/// A rule that chooses one point of a front.
///
/// ```
/// use tunable_search::objective::{Aim, Objective, Prefer};
///
/// let aims = [Aim::measured(Objective::Time), Aim::measured(Objective::Energy)];
/// // (ms, J): the fastest, a 5% slower one with less energy, the least energy.
/// let front = [vec![1.0, 9.0], vec![1.05, 7.0], vec![1.5, 5.0]];
/// let pick = |rule: &str| Prefer::parse(rule, &aims).unwrap().choose(&aims, &front);
/// assert_eq!(pick("fastest"), Some(0));
/// assert_eq!(pick("least_energy"), Some(2));
/// assert_eq!(pick("least_energy within 1.10 of fastest"), Some(1));
/// assert!(Prefer::parse("most_energy", &aims).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Prefer {
    text: String,
    /// The objective (its index among the aims) whose best is chosen.
    pick: usize,
    /// The factor and the objective the candidates are held within of its best.
    within: Option<(f64, usize)>,
}

impl Prefer {
    /// Parses a rule over `aims`, the goal's objectives.
    pub fn parse(text: &str, aims: &[Aim]) -> Result<Prefer, GoalError> {
        let fail = |why: String| GoalError::Prefer {
            rule: text.to_owned(),
            why,
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let pick = |word: &str| -> Result<usize, GoalError> {
            let (sense, name) = if word == "fastest" {
                (Sense::Minimize, "time")
            } else if let Some(n) = word.strip_prefix("least_") {
                (Sense::Minimize, n)
            } else if let Some(n) = word.strip_prefix("most_") {
                (Sense::Maximize, n)
            } else {
                return Err(fail(format!("`{word}` is no rule")));
            };
            let Some(i) = aims.iter().position(|a| a.name() == name) else {
                let names: Vec<&str> = aims.iter().map(Aim::name).collect();
                return Err(fail(format!(
                    "`{name}` is none of the objectives ({})",
                    names.join(", ")
                )));
            };
            if aims[i].sense() != sense {
                let right = match aims[i].sense() {
                    Sense::Minimize => "least",
                    Sense::Maximize => "most",
                };
                return Err(fail(format!(
                    "`{name}` is {}: write `{right}_{name}`",
                    match aims[i].sense() {
                        Sense::Minimize => "minimized",
                        Sense::Maximize => "maximized",
                    }
                )));
            }
            Ok(i)
        };
        let (first, within) = match words[..] {
            [one] => (pick(one)?, None),
            [one, "within", factor, "of", other] => {
                let f: f64 = factor
                    .parse()
                    .ok()
                    .filter(|f: &f64| f.is_finite() && *f >= 1.0)
                    .ok_or_else(|| {
                        fail(format!(
                            "the factor `{factor}` is not a number of at least 1"
                        ))
                    })?;
                (pick(one)?, Some((f, pick(other)?)))
            }
            _ => return Err(fail("it does not parse".to_owned())),
        };
        Ok(Prefer {
            text: words.join(" "),
            pick: first,
            within,
        })
    }

    /// The default rule: the best of the first objective.
    pub fn first(aims: &[Aim]) -> Prefer {
        let text = match aims.first() {
            None => String::new(),
            Some(a) if a.name() == "time" => "fastest".to_owned(),
            Some(a) => match a.sense() {
                Sense::Minimize => format!("least_{}", a.name()),
                Sense::Maximize => format!("most_{}", a.name()),
            },
        };
        Prefer {
            text,
            pick: 0,
            within: None,
        }
    }

    /// The index (among the aims) of the objective whose best it chooses.
    pub fn objective(&self) -> usize {
        self.pick
    }

    /// The point it chooses among `points`, each the values of `aims` in order (as stated, not
    /// negated); points with a value that is not finite are passed over. `None` if none is left.
    pub fn choose(&self, aims: &[Aim], points: &[Vec<f64>]) -> Option<usize> {
        let finite = |p: &Vec<f64>| p.len() == aims.len() && p.iter().all(|v| v.is_finite());
        let mut candidates: Vec<usize> =
            (0..points.len()).filter(|&i| finite(&points[i])).collect();
        let key = |i: usize, a: usize| aims[a].sense().key(points[i][a]);
        if let Some((factor, of)) = self.within {
            let best = candidates
                .iter()
                .map(|&i| key(i, of))
                .min_by(f64::total_cmp)?;
            // Held within `factor` of the best in the objective's own direction and units.
            let stated = aims[of].sense().key(best);
            let bound = match aims[of].sense() {
                Sense::Minimize if stated >= 0.0 => stated * factor,
                Sense::Minimize => stated / factor,
                Sense::Maximize if stated >= 0.0 => stated / factor,
                Sense::Maximize => stated * factor,
            };
            candidates.retain(|&i| match aims[of].sense() {
                Sense::Minimize => points[i][of] <= bound,
                Sense::Maximize => points[i][of] >= bound,
            });
        }
        let order = |&a: &usize, &b: &usize| -> Ordering {
            std::iter::once(self.pick)
                .chain((0..aims.len()).filter(|&k| k != self.pick))
                .map(|k| key(a, k).total_cmp(&key(b, k)))
                .find(|o| o.is_ne())
                .unwrap_or(a.cmp(&b))
        };
        candidates.into_iter().min_by(order)
    }
}

impl fmt::Display for Prefer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
