//! # The tuner
//!
//! Drives a strategy over a space under a budget of evaluations (and optionally of wall time):
//! asks it for configurations, answers from the journal what was already measured, measures the
//! rest, and tells it every outcome. A variant that panics or returns an error is a failed
//! configuration with its reason, told to the strategy like any result: tuning never aborts
//! because one variant failed. A progress bar shows on a terminal; `TUNABLE_LOG=1` prints every
//! evaluation.

use crate::RuntimeError;
use crate::journal::Journal;
use indicatif::{ProgressBar, ProgressStyle};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;
use tunable_search::Space;
use tunable_search::strategy::{self, Outcome, StrategySpec, Trial};

/// What to spend and how to search.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneOptions {
    /// Unique evaluations at most (default 100).
    pub budget: usize,
    /// Wall-time limit in seconds, checked between evaluations (default none).
    pub max_seconds: Option<f64>,
    /// The strategy spec, e.g. `genetic` or `random` (default `auto`, the strategy
    /// `tunable_search::strategy::AUTO` names).
    pub strategy: String,
    /// Seed of the strategy (default 1).
    pub seed: u64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            budget: 100,
            max_seconds: None,
            strategy: "auto".to_owned(),
            seed: 1,
        }
    }
}

/// What a tuning run found.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The best configuration's position and time in milliseconds (`None` if all failed).
    pub best: Option<(usize, f64)>,
    /// Unique evaluations spent, including those answered by the journal.
    pub evaluations: usize,
    /// Of those, how many were measured in this run.
    pub measured: usize,
    /// Failed configurations with their reasons.
    pub failures: Vec<(usize, String)>,
    /// Wall time of the run.
    pub seconds: f64,
}

/// Tunes: `evaluate(position)` measures one configuration, returning milliseconds or the reason
/// it failed; a panic inside it counts as a failure with the panic's message.
pub fn tune(
    space: Arc<Space>,
    opts: &TuneOptions,
    mut journal: Option<&mut Journal>,
    label: &str,
    evaluate: &mut dyn FnMut(usize) -> Result<f64, String>,
) -> Result<TuneReport, RuntimeError> {
    let spec: StrategySpec = opts.strategy.parse()?;
    let mut strat = strategy::build(&spec, Arc::clone(&space), opts.seed)?;
    let start = Instant::now();
    let log = std::env::var_os("TUNABLE_LOG").is_some_and(|v| v != "0" && !v.is_empty());
    let budget = opts.budget.min(space.len());
    let bar = ProgressBar::new(budget as u64).with_style(
        ProgressStyle::with_template("tuning {msg} [{bar:30}] {pos}/{len} best {prefix}")
            .expect("valid template"),
    );
    bar.set_message(label.to_owned());
    let mut report = TuneReport {
        best: None,
        evaluations: 0,
        measured: 0,
        failures: vec![],
        seconds: 0.0,
    };
    while report.evaluations < budget {
        if opts
            .max_seconds
            .is_some_and(|m| start.elapsed().as_secs_f64() >= m)
        {
            break;
        }
        let asked = strat.ask(1);
        if asked.is_empty() {
            break;
        }
        let mut trials = Vec::with_capacity(asked.len());
        for position in asked {
            let (outcome, reason) = match journal.as_ref().and_then(|j| j.lookup(&space, position))
            {
                Some(o) => (o, None),
                None => {
                    report.measured += 1;
                    let r = match catch_unwind(AssertUnwindSafe(|| evaluate(position))) {
                        Ok(r) => r,
                        Err(panic) => Err(format!("panicked: {}", panic_message(&*panic))),
                    };
                    let (o, reason) = match r {
                        Ok(t) if t.is_finite() => (Outcome::Value(t), None),
                        Ok(t) => (Outcome::Failed, Some(format!("non-finite time {t}"))),
                        Err(e) => (Outcome::Failed, Some(e)),
                    };
                    if let Some(j) = journal.as_mut() {
                        j.record(&space, position, o, reason.as_deref())?;
                    }
                    (o, reason)
                }
            };
            if let Some(r) = &reason {
                report.failures.push((position, r.clone()));
            }
            if let Outcome::Value(t) = outcome
                && report.best.is_none_or(|(_, b)| t < b)
            {
                report.best = Some((position, t));
                bar.set_prefix(format!("{t:.4} ms"));
            }
            if log {
                let vals: Vec<String> = space
                    .values(position)
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                match (outcome, &reason) {
                    (Outcome::Value(t), _) => {
                        eprintln!("tunable: {label} [{}] {t:.4} ms", vals.join(", "))
                    }
                    (_, r) => eprintln!(
                        "tunable: {label} [{}] failed: {}",
                        vals.join(", "),
                        r.as_deref().unwrap_or("?")
                    ),
                }
            }
            report.evaluations += 1;
            bar.inc(1);
            trials.push(Trial { position, outcome });
        }
        strat.tell(&trials);
    }
    bar.finish_and_clear();
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// The message of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;

    #[test]
    fn failures_are_data_and_the_best_wins() {
        let space = Arc::new(SpaceBuilder::new().param("a", 0..20).build().unwrap());
        let opts = TuneOptions {
            budget: 20,
            strategy: "random".into(),
            ..TuneOptions::default()
        };
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = tune(Arc::clone(&space), &opts, None, "t", &mut |p| match p {
            3 => panic!("boom"),
            4 => Err("wrong output".into()),
            p => Ok(100.0 - p as f64),
        })
        .unwrap();
        std::panic::set_hook(prev);
        assert_eq!(r.evaluations, 20);
        assert_eq!(r.best, Some((19, 81.0)));
        assert!(
            r.failures.contains(&(3, "panicked: boom".to_owned())),
            "{:?}",
            r.failures
        );
        assert!(r.failures.contains(&(4, "wrong output".to_owned())));
    }
}
