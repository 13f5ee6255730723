//! # The summary of a tuning

use super::TimeSplit;
use std::fmt;

/// The line every tuning of the first-run hook ends with, on stderr, whether stderr is a
/// terminal or a file: what was tuned, on which device, the default configuration's time
/// against the tuned one's (as the confirmation re-timed it), and what it cost: evaluations,
/// wall time and where it went, evaluations per minute, then the kernels' own run time inside
/// the measurement ([`TimeSplit::kernels`]) and the measurement's overhead beyond it (in total and
/// per configuration measured).
///
/// ```text
/// tunable: tuned matmul (key 512) on cpu: AMD EPYC 7B13 x2: default 8.2140 ms -> tuned 2.8710 ms (2.86x) [bm=64, bk=128]; 61 evaluations (59 measured, 2 failed, 30 stopped early) in 4.2 s: compile 0.0 s, measure 4.1 s, strategy 0.0 s, other 0.1 s; 871.4/min; kernels 3.905 s, overhead 0.195 s (3.3 ms per configuration); warm start: 3 from this device's key 256; best 3 re-timed
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Summary<'a> {
    /// The kernel's name.
    pub kernel: &'a str,
    /// The problem-size key.
    pub key: u64,
    /// The device.
    pub device: &'a str,
    /// The default configuration's time in milliseconds, or why it has none (it failed, or it
    /// is not in the space).
    pub default: Result<f64, String>,
    /// The configuration chosen (`name=value, ...`) and its time in milliseconds; `None` when
    /// every configuration failed.
    pub tuned: Option<(String, f64)>,
    /// Unique evaluations, the default's included (measured now or answered by the journal).
    pub evaluations: usize,
    /// Configurations measured in this run.
    pub measured: usize,
    /// Configurations that failed.
    pub failures: usize,
    /// Configurations whose timing stopped early, behind the incumbent.
    pub early: usize,
    /// Wall time of the whole tuning, in seconds.
    pub seconds: f64,
    /// Where the wall time went.
    pub spent: TimeSplit,
    /// How many of the best configurations were re-timed to confirm the winner (0: none).
    pub confirmed: usize,
    /// Whether the confirmation changed the winner.
    pub changed: bool,
    /// The [warm start](super::warm): how many configurations the tuned file's other entries
    /// gave to evaluate first, and where they came from ([`WarmStart::describe`](super::warm::WarmStart::describe));
    /// `None` for a cold start.
    pub warm: Option<(usize, String)>,
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tunable: tuned {} (key {}) on {}: default ",
            self.kernel, self.key, self.device
        )?;
        match &self.default {
            Ok(t) => write!(f, "{t:.4} ms")?,
            Err(why) => write!(f, "{why}")?,
        }
        match &self.tuned {
            Some((config, t)) => {
                write!(f, " -> tuned {t:.4} ms")?;
                if let Ok(d) = self.default
                    && *t > 0.0
                {
                    write!(f, " ({:.2}x)", d / t)?;
                }
                write!(f, " [{config}]")?;
            }
            None => write!(f, " -> every configuration failed, keeping the default")?,
        }
        write!(
            f,
            "; {} evaluations ({} measured, {} failed, {} stopped early) in {:.1} s: {}; {:.1}/min",
            self.evaluations,
            self.measured,
            self.failures,
            self.early,
            self.seconds,
            self.spent,
            self.spent.per_minute(self.evaluations)
        )?;
        if self.measured > 0 {
            write!(
                f,
                "; kernels {:.3} s, overhead {:.3} s ({:.1} ms per configuration)",
                self.spent.kernels,
                self.spent.overhead(),
                self.spent.overhead() * 1e3 / self.measured as f64
            )?;
        }
        if let Some((n, from)) = &self.warm {
            write!(f, "; warm start: {n} from {from}")?;
        }
        if self.confirmed > 1 {
            write!(f, "; best {} re-timed", self.confirmed)?;
            if self.changed {
                write!(f, ", winner changed")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_was_tuned_where_and_at_what_cost() {
        let mut s = Summary {
            kernel: "matmul",
            key: 512,
            device: "cpu: test x2",
            default: Ok(8.0),
            tuned: Some(("bm=64, unroll=4".into(), 2.0)),
            evaluations: 60,
            measured: 58,
            failures: 2,
            early: 20,
            seconds: 4.25,
            spent: TimeSplit {
                compile: 1.0,
                measure: 3.0,
                strategy: 0.05,
                other: 0.2,
                kernels: 0.6,
            },
            confirmed: 3,
            changed: true,
            warm: Some((4, "2 other devices (key 512)".into())),
        };
        assert_eq!(
            s.to_string(),
            "tunable: tuned matmul (key 512) on cpu: test x2: default 8.0000 ms -> tuned 2.0000 ms (4.00x) [bm=64, unroll=4]; 60 evaluations (58 measured, 2 failed, 20 stopped early) in 4.2 s: compile 1.0 s, measure 3.0 s, strategy 0.1 s, other 0.2 s; 847.1/min; kernels 0.600 s, overhead 2.400 s (41.4 ms per configuration); warm start: 4 from 2 other devices (key 512); best 3 re-timed, winner changed"
        );
        s.default = Err("failed (panicked: boom)".into());
        s.tuned = None;
        s.confirmed = 0;
        s.warm = None;
        assert_eq!(
            s.to_string(),
            "tunable: tuned matmul (key 512) on cpu: test x2: default failed (panicked: boom) -> every configuration failed, keeping the default; 60 evaluations (58 measured, 2 failed, 20 stopped early) in 4.2 s: compile 1.0 s, measure 3.0 s, strategy 0.1 s, other 0.2 s; 847.1/min; kernels 0.600 s, overhead 2.400 s (41.4 ms per configuration)"
        );
    }
}
