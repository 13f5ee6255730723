//! # Built-in child tasks
//!
//! What a built-in evaluator asks its child process to do, sent as JSON on the child's standard
//! input. [`serve`] is the whole body of the hidden command that runs them (`cargo tunable
//! __evaluate`): it reads one [`Task`], performs it and prints the [`Answer`].

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use tunable_runtime::tuner::evaluate::Answer;

/// A built-in task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Task {
    /// Sleep, then answer: a replayed measurement.
    Sleep {
        /// Seconds to sleep.
        seconds: f64,
        /// What to answer afterwards.
        answer: Answer,
    },
}

/// Reads a [`Task`] from `input`, performs it and writes its [`Answer`] as one JSON line to
/// `output`. Returns the process exit code: 0, or 2 for a task that does not decode.
///
/// A sleeping task stops early, answering nothing, if its parent process (the worker) dies: its
/// evaluation is lost anyway, and a real harness would free its device the same way.
pub fn serve(input: &mut dyn Read, output: &mut dyn Write) -> i32 {
    let mut text = String::new();
    let task: Task = match input
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tunable: cannot read the task: {e}");
            return 2;
        }
    };
    let answer = match task {
        Task::Sleep { seconds, answer } => {
            // (A sleep too long for a duration sleeps until the worker's time-out kills it.)
            let sleep = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX);
            if !sleep_while_parent_lives(sleep) {
                return 3;
            }
            answer
        }
    };
    let line = serde_json::to_string(&answer).expect("answers encode");
    match writeln!(output, "{line}").and_then(|()| output.flush()) {
        Ok(()) => 0,
        Err(_) => 4,
    }
}

/// Sleeps for `total`, in short steps; `false` if the parent process died meanwhile.
fn sleep_while_parent_lives(total: Duration) -> bool {
    let parent = std::os::unix::process::parent_id();
    let end = Instant::now() + total;
    loop {
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
        if std::os::unix::process::parent_id() != parent {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_a_sleep_and_refuses_garbage() {
        let task = Task::Sleep {
            seconds: 0.01,
            answer: Answer::Time { time_ms: 2.5 },
        };
        let input = serde_json::to_string(&task).unwrap();
        let mut out = Vec::new();
        let start = Instant::now();
        assert_eq!(serve(&mut input.as_bytes(), &mut out), 0);
        assert!(start.elapsed() >= Duration::from_millis(10));
        assert_eq!(String::from_utf8(out).unwrap(), "{\"time_ms\":2.5}\n");
        let mut out = Vec::new();
        assert_eq!(serve(&mut "nonsense".as_bytes(), &mut out), 2);
        assert!(out.is_empty());
    }
}
