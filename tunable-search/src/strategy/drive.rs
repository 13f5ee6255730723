//! # Driving a strategy
//!
//! [`drive`] runs a [`Strategy`] against an objective under a budget of unique evaluations.

use super::{Outcome, Strategy, Trial};
use std::time::Instant;

/// What [`drive`] returns: every unique evaluation in order, and the time spent in the strategy.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    /// Evaluations in the order they were made.
    pub trials: Vec<Trial>,
    /// Seconds spent inside `ask` and `tell`.
    pub strategy_seconds: f64,
}

/// Runs `strategy` until `budget` unique evaluations are spent (or the space is exhausted),
/// asking for `batch` configurations at a time and evaluating them with `objective`.
pub fn drive(
    strategy: &mut dyn Strategy,
    budget: usize,
    batch: usize,
    mut objective: impl FnMut(usize) -> Outcome,
) -> RunRecord {
    let mut rec = RunRecord::default();
    let mut seen = std::collections::HashSet::new();
    while rec.trials.len() < budget {
        let t = Instant::now();
        let asked = strategy.ask(batch.max(1).min(budget - rec.trials.len()));
        rec.strategy_seconds += t.elapsed().as_secs_f64();
        if asked.is_empty() {
            break;
        }
        let trials: Vec<Trial> = asked
            .into_iter()
            .inspect(|&p| assert!(seen.insert(p), "strategy asked for position {p} twice"))
            .map(|position| Trial {
                position,
                outcome: objective(position),
            })
            .collect();
        let t = Instant::now();
        strategy.tell(&trials);
        rec.strategy_seconds += t.elapsed().as_secs_f64();
        rec.trials.extend(trials);
    }
    rec
}
