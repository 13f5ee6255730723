//! # The summary of a tuning

use std::fmt;

/// The line every tuning of the first-run hook ends with, on stderr, whether stderr is a
/// terminal or a file: what was tuned, on which device, the default configuration's time
/// against the tuned one's, and what it cost.
///
/// ```text
/// tunable: tuned matmul (key 512) on cpu: AMD EPYC 7B13 x2: default 8.2140 ms -> tuned 2.8710 ms (2.86x) [bm=64, bk=128]; 61 evaluations (59 measured, 2 failed) in 4.2 s
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
    /// Wall time of the whole tuning, in seconds.
    pub seconds: f64,
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
            "; {} evaluations ({} measured, {} failed) in {:.1} s",
            self.evaluations, self.measured, self.failures, self.seconds
        )
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
            seconds: 4.25,
        };
        assert_eq!(
            s.to_string(),
            "tunable: tuned matmul (key 512) on cpu: test x2: default 8.0000 ms -> tuned 2.0000 ms (4.00x) [bm=64, unroll=4]; 60 evaluations (58 measured, 2 failed) in 4.2 s"
        );
        s.default = Err("failed (panicked: boom)".into());
        s.tuned = None;
        assert_eq!(
            s.to_string(),
            "tunable: tuned matmul (key 512) on cpu: test x2: default failed (panicked: boom) -> every configuration failed, keeping the default; 60 evaluations (58 measured, 2 failed) in 4.2 s"
        );
    }
}
