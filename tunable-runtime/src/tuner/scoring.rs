//! # The objectives' values of each evaluation
//!
//! The tuner scores every evaluation by its goal ([`Goal`]) before the strategy and the
//! observers see it: the values of its objectives from its time, its energy and mean power
//! where a meter read them, the configuration's parameters and the tuning's key
//! ([`Goal::values`]), and the one value a single-objective strategy is told
//! ([`Goal::told`]). A configuration whose values cannot be computed (a metric that divides by
//! zero, say) is a failed configuration with the reason.

use super::Evaluation;
use std::sync::Arc;
use tunable_search::Space;
use tunable_search::objective::{Goal, Measured};
use tunable_search::strategy::Evaluator;

/// An evaluator whose evaluations are scored by `goal`.
pub(super) struct Scoring<'a, E: ?Sized> {
    pub inner: &'a mut E,
    pub goal: &'a Goal,
    pub space: &'a Arc<Space>,
    pub key: u64,
    /// Where a multi-objective strategy reads each configuration's minimized objectives
    /// ([`super::multi`]); none for a single objective.
    pub table: Option<super::multi::Values>,
}

impl<E: Evaluator<Report = Evaluation> + ?Sized> Scoring<'_, E> {
    /// `e`, the evaluation of `position`, with its objectives' values.
    fn score(&self, position: usize, mut e: Evaluation) -> Evaluation {
        let Ok(ms) = e.result else {
            return e;
        };
        let run = Measured {
            ms,
            joules: e.energy.map(|u| u.joules),
            watts: e.energy.map(|u| u.watts),
        };
        let values = self.space.values(position);
        let param = |name: &str| {
            let i = self.space.params().iter().position(|p| p.name() == name)?;
            values.get(i).cloned()
        };
        match self.goal.values(&run, &param, self.key) {
            Ok(v) => {
                if let Some(t) = &self.table {
                    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
                    t.insert(position, self.goal.keys(&v));
                }
                e.told = Some(self.goal.told(&v));
                e.values = v;
            }
            Err(why) => e.result = Err(why),
        }
        e
    }
}

impl<E: Evaluator<Report = Evaluation> + ?Sized> Evaluator for Scoring<'_, E> {
    type Report = Evaluation;
    type Error = E::Error;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Evaluation>, E::Error> {
        let out = self.inner.evaluate(positions)?;
        Ok(positions
            .iter()
            .zip(out)
            .map(|(&p, e)| self.score(p, e))
            .collect())
    }

    fn prepare(&mut self, likely: &[usize]) {
        self.inner.prepare(likely);
    }
}
