//! # Replay evaluator
//!
//! Evaluates a configuration by looking it up in a Kernel Tuner cache and running a child that
//! sleeps the recorded time (milliseconds, multiplied by the study's scale) and answers the
//! recorded outcome. A configuration the cache records as failed answers failed at once (the
//! cache has no time for it). This makes distributed tuning measurable without a GPU: the
//! sleeps, not the machine's cores, bound the throughput.
//!
//! The cache is loaded once per worker and study; configurations are matched by parameter name
//! and value, so a study's space may order parameters differently from the cache.

use crate::Answer;
use crate::process::{ChildSpec, Evaluator, Launcher};
use crate::task::Task;
use std::path::Path;
use tunable_search::Value;
use tunable_search::sim::{KernelTunerCache, Observation, Replay};

/// A cache replayed with sleeps.
#[derive(Debug)]
pub struct ReplayEvaluator {
    replay: Replay,
    scale: f64,
    launcher: Launcher,
}

impl ReplayEvaluator {
    /// Loads `cache`; each evaluation will sleep `scale` times the recorded time.
    pub fn open(cache: &Path, scale: f64, launcher: Launcher) -> Result<Self, String> {
        if !(scale.is_finite() && scale >= 0.0) {
            return Err(format!(
                "the sleep scale must be a number >= 0, not {scale}"
            ));
        }
        let loaded = KernelTunerCache::load(cache).map_err(|e| e.to_string())?;
        let replay = Replay::new(&loaded, None).map_err(|e| e.to_string())?;
        Ok(ReplayEvaluator {
            replay,
            scale,
            launcher,
        })
    }

    /// The task a configuration's child performs.
    pub fn task(&self, config: &[(String, Value)]) -> Result<Task, String> {
        let values = crate::queue::ordered_values(self.replay.space(), config)?;
        match self.replay.evaluate_values(&values) {
            Some(Observation::Value(ms)) => Ok(Task::Sleep {
                seconds: ms * self.scale / 1000.0,
                answer: Answer::Time { time_ms: *ms },
            }),
            Some(Observation::Failed(reason)) => Ok(Task::Sleep {
                seconds: 0.0,
                answer: Answer::Failed {
                    failed: reason.clone(),
                },
            }),
            None => Err("the configuration is not in the replayed cache".to_owned()),
        }
    }
}

impl Evaluator for ReplayEvaluator {
    fn child(&self, config: &[(String, Value)]) -> Result<ChildSpec, String> {
        let task = self.task(config)?;
        Ok(ChildSpec {
            program: self.launcher.program.clone(),
            args: self.launcher.args.clone(),
            stdin: serde_json::to_vec(&task).expect("tasks encode"),
            env: Vec::new(),
            dir: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_the_scaled_recorded_time_and_answers_failures() {
        let dir = std::env::temp_dir().join(format!("tunable-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.json");
        std::fs::write(
            &path,
            r#"{"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [10, 20]}, "cache": {
              "1,10": {"time": 4.0}, "2,10": {"time": "RuntimeFailedConfig"}}}"#,
        )
        .unwrap();
        let launcher = Launcher {
            program: "self".into(),
            args: vec![],
        };
        let ev = ReplayEvaluator::open(&path, 0.5, launcher).unwrap();
        // Parameters by name, in another order than the cache's.
        let cfg = |a: i64, b: i64| {
            vec![
                ("b".to_owned(), Value::Int(b)),
                ("a".to_owned(), Value::Int(a)),
            ]
        };
        assert_eq!(
            ev.task(&cfg(1, 10)).unwrap(),
            Task::Sleep {
                seconds: 0.002,
                answer: Answer::Time { time_ms: 4.0 }
            }
        );
        assert!(matches!(
            ev.task(&cfg(2, 10)).unwrap(),
            Task::Sleep {
                answer: Answer::Failed { .. },
                ..
            }
        ));
        assert!(ev.task(&cfg(2, 20)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
