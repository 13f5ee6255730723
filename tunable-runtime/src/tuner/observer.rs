//! # Watching a tuning
//!
//! The observers the first-run hook attaches to every tuning:
//! - [`Bar`]: a progress bar with the best time so far and where the time goes (compilation,
//!   measurement, the rest; evaluations per minute), drawn only on a terminal and cleared at the
//!   end (the [`Summary`](super::Summary) line stays);
//! - [`Log`]: one line per evaluation with `TUNABLE_LOG=1`, and always one line per variant
//!   that panicked, in place of Rust's panic message.

use super::{Evaluation, Observer, Progress, Stopped, TimeSplit, describe};
use indicatif::{ProgressBar, ProgressStyle};
use tunable_search::Space;
use tunable_search::strategy::Trial;

/// The progress bar of a tuning, with the best time so far and where the time goes
/// ([`TimeSplit::live`]): drawn only on a terminal, and cleared when the tuning ends (the
/// [`Summary`](super::Summary) line stays). Clones draw the same bar.
///
/// ```text
/// tuning gemm (key 256) [=====>     ] 61/200 best 1.2907 ms | compile 40.1 s, measure 3.2 s, strategy 0.0 s, other 0.3 s | 84.0/min
/// ```
#[derive(Clone, Debug)]
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar for `budget` evaluations, labelled `label` (the kernel and key, say).
    pub fn new(label: &str, budget: usize) -> Self {
        let bar = ProgressBar::new(budget as u64).with_style(
            ProgressStyle::with_template("tuning {prefix} [{bar:30}] {pos}/{len} {msg}")
                .expect("valid template"),
        );
        bar.set_prefix(label.to_owned());
        Bar { bar }
    }

    /// Runs `f` (which prints) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// What the bar shows after its counts: the best time so far, where the time went, and
    /// evaluations per minute.
    fn line(progress: &Progress, spent: TimeSplit) -> String {
        let spent = spent.with_wall(progress.elapsed.as_secs_f64());
        let best = progress
            .best
            .map_or_else(|| "-".to_owned(), |(_, t)| format!("{t:.4} ms"));
        format!(
            "best {best} | {spent} | {:.1}/min",
            spent.per_minute(progress.evaluations)
        )
    }
}

impl<R> Observer<R> for Bar {
    fn observe(&mut self, progress: &Progress, _: &Trial, _: &R) {
        self.bar.set_position(progress.evaluations as u64);
        self.bar.set_message(Bar::line(progress, TimeSplit::live()));
    }

    fn finish(&mut self, _: &Progress, _: Stopped) {
        self.bar.finish_and_clear();
    }
}

/// Log lines of a tuning on stderr: one per evaluation with `TUNABLE_LOG=1`, and always one
/// per variant that panicked, in place of Rust's panic message:
/// `tunable: <kernel> (key <key>): variant <params> panicked: <message> (recorded as failed)`.
pub struct Log<'a> {
    space: &'a Space,
    label: String,
    every: bool,
    bar: Option<Bar>,
}

impl<'a> Log<'a> {
    /// Lines about `space`'s configurations, prefixed with `label`; every evaluation if
    /// `every`, else only panics; printed around `bar` (a clone of the tuning's) if given.
    pub fn new(space: &'a Space, label: &str, every: bool, bar: Option<Bar>) -> Self {
        Log {
            space,
            label: label.to_owned(),
            every,
            bar,
        }
    }

    /// Whether `TUNABLE_LOG` asks for every evaluation (set, and neither empty nor `0`).
    pub fn every_from_env() -> bool {
        std::env::var_os("TUNABLE_LOG").is_some_and(|v| v != "0" && !v.is_empty())
    }

    fn line(&self, position: usize, e: &Evaluation) -> Option<String> {
        let config = describe(self.space, position);
        match &e.result {
            Err(reason) if e.panicked => Some(format!(
                "tunable: {}: variant {config} {reason} (recorded as failed)",
                self.label
            )),
            _ if !self.every => None,
            Ok(t) if e.early => Some(format!(
                "tunable: {} [{config}] {t:.4} ms (stopped early after {} run{}){}",
                self.label,
                e.runs.len(),
                if e.runs.len() == 1 { "" } else { "s" },
                Self::cost(e)
            )),
            Ok(t) => Some(format!(
                "tunable: {} [{config}] {t:.4} ms{}",
                self.label,
                Self::cost(e)
            )),
            Err(reason) => Some(format!(
                "tunable: {} [{config}] failed: {reason}{}",
                self.label,
                Self::cost(e)
            )),
        }
    }

    /// `; measured in 36.2 ms, kernels 4.1 ms` when the evaluation knows its cost, and
    /// `, output checked in 2.3 ms` after it when the output was checked.
    fn cost(e: &Evaluation) -> String {
        e.cost.map_or_else(String::new, |c| {
            let checked = if c.check_ms > 0.0 {
                format!(", output checked in {:.1} ms", c.check_ms)
            } else {
                String::new()
            };
            format!(
                "; measured in {:.1} ms, kernels {:.1} ms{checked}",
                c.measure_ms, c.kernel_ms
            )
        })
    }
}

impl Observer<Evaluation> for Log<'_> {
    fn observe(&mut self, _: &Progress, trial: &Trial, e: &Evaluation) {
        if let Some(line) = self.line(trial.position, e) {
            match &self.bar {
                Some(bar) => bar.suspend(|| eprintln!("{line}")),
                None => eprintln!("{line}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;

    #[test]
    fn the_bar_line_shows_where_the_time_goes() {
        let progress = Progress {
            evaluations: 30,
            budget: 100,
            best: Some((3, 1.25)),
            elapsed: std::time::Duration::from_secs(60),
        };
        let spent = TimeSplit {
            compile: 40.0,
            measure: 15.0,
            strategy: 1.0,
            other: 0.0,
            kernels: 2.0,
        };
        assert_eq!(
            Bar::line(&progress, spent),
            "best 1.2500 ms | compile 40.0 s, measure 15.0 s, strategy 1.0 s, other 4.0 s | 30.0/min"
        );
    }

    #[test]
    fn panics_always_and_the_rest_on_request() {
        let space = SpaceBuilder::new()
            .param("block", [32, 64])
            .param("mode", ["a", "b"])
            .build()
            .unwrap();
        let quiet = Log::new(&space, "k (key 8)", false, None);
        let panic = Evaluation::panicked("boom");
        assert_eq!(
            quiet.line(3, &panic).unwrap(),
            "tunable: k (key 8): variant block=64, mode=b panicked: boom (recorded as failed)"
        );
        assert_eq!(quiet.line(0, &Evaluation::measured(Ok(1.0))), None);
        let every = Log::new(&space, "k", true, None);
        assert_eq!(
            every.line(1, &Evaluation::measured(Ok(1.5))).unwrap(),
            "tunable: k [block=32, mode=b] 1.5000 ms"
        );
        assert_eq!(
            every
                .line(2, &Evaluation::recorded(Err("wrong output".into())))
                .unwrap(),
            "tunable: k [block=64, mode=a] failed: wrong output"
        );
        // What measuring it cost, with the output's check when there was one.
        let costly = |check_ms| Evaluation {
            cost: Some(crate::tuner::Cost {
                measure_ms: 36.31,
                kernel_ms: 4.0,
                check_ms,
            }),
            ..Evaluation::measured(Ok(2.0))
        };
        let prefix = "tunable: k [block=32, mode=b] 2.0000 ms; measured in 36.3 ms, kernels 4.0 ms";
        assert_eq!(every.line(1, &costly(0.0)).unwrap(), prefix);
        assert_eq!(
            every.line(1, &costly(12.04)).unwrap(),
            format!("{prefix}, output checked in 12.0 ms")
        );
    }
}
