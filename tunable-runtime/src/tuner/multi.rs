//! # Several objectives through the driver
//!
//! A tuning for several objectives searches with a multi-objective strategy
//! ([`build_multi`]), which is told a vector of values per configuration. The driver tells its
//! strategy one value per trial, so [`Multi`] stands between them: the scoring layer
//! ([`super::scoring`]) keeps each configuration's objectives, minimized, in a table both
//! share, and [`Multi`] hands them to the multi-objective strategy with each trial the driver
//! tells it. The driver, its batches, its budget and its observers stay those of every tuning.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tunable_search::Space;
use tunable_search::strategy::{
    MULTI_STRATEGY_NAMES, MultiStrategy, MultiTrial, Outcome, Strategy, StrategyError,
    StrategySpec, Trial, build_multi,
};

/// Each scored configuration's objectives, minimized (a maximized one negated), by position.
pub(super) type Values = Arc<Mutex<HashMap<usize, Vec<f64>>>>;

/// A multi-objective strategy behind the driver's single-valued ask/tell.
pub(super) struct Multi {
    inner: Box<dyn MultiStrategy>,
    values: Values,
}

impl Multi {
    /// The multi-objective strategy `spec` names (one of [`MULTI_STRATEGY_NAMES`]; `auto` is
    /// the default) for `objectives` objectives, reading their values from `values`.
    pub(super) fn build(
        spec: &StrategySpec,
        space: Arc<Space>,
        objectives: usize,
        seed: u64,
        values: Values,
    ) -> Result<Multi, StrategyError> {
        if !MULTI_STRATEGY_NAMES.contains(&spec.name.as_str()) {
            return Err(StrategyError::UnknownStrategy {
                name: format!("{} (for several objectives)", spec.name),
                known: MULTI_STRATEGY_NAMES.join(", "),
            });
        }
        Ok(Multi {
            inner: build_multi(spec, space, objectives, seed)?,
            values,
        })
    }
}

impl Strategy for Multi {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        self.inner.ask(n)
    }

    fn tell(&mut self, trials: &[Trial]) {
        let values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        let trials: Vec<MultiTrial> = trials
            .iter()
            .map(|t| MultiTrial {
                position: t.position,
                values: match t.outcome {
                    Outcome::Value(_) => values.get(&t.position).cloned(),
                    Outcome::Failed => None,
                },
            })
            .collect();
        drop(values);
        self.inner.tell(&trials);
    }
}
