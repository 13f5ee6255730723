//! # Timing configurations side by side
//!
//! A speedup compares two configurations timed the same way. [`side_by_side`] times a few
//! configurations of a kernel alike, the way the tuner re-times its best few before it stores
//! the winner (`tuner::confirm`):
//!
//! 1. one untimed run of each, in turn: it builds the program or loads the module into the
//!    backend's cache and warms the data, so that no timed run pays for it;
//! 2. `rounds` rounds, each running every configuration once, in the order given
//!    (`a b a b ...`), each run timed by [`time_once`]: the device time the GPU backends report
//!    for their launches (CUDA and OpenCL events, wgpu timestamp queries), else the wall clock;
//! 3. the robust median of each configuration's runs ([`robust_median`]).
//!
//! Interleaving puts whatever disturbs the machine (a clock that changes, another process) on
//! every configuration alike. The examples print their default-against-tuned figures with
//! [`speedup`], and say how with [`METHOD`].
//!
//! ```
//! use tunable_runtime::compare::{ROUNDS, speedup};
//!
//! // Two "configurations" of a kernel: how much work one run does.
//! let work = |n: &u64| -> Result<(), String> {
//!     std::hint::black_box((0..*n).sum::<u64>());
//!     Ok(())
//! };
//! let s = speedup(&2_000_000, &1_000, ROUNDS, work).unwrap();
//! assert_eq!((s.default.runs.len(), s.tuned.runs.len()), (7, 7));
//! assert!(s.ratio() > 0.0);
//! ```

use crate::measure::{robust_median, time_once};

/// Rounds [`side_by_side`] is usually given: the `repeats` of `#[tunable]`'s default
/// ([`tunable_search::defaults::REPEATS`]).
pub const ROUNDS: u32 = tunable_search::defaults::REPEATS;

/// How [`side_by_side`] times, in words, for a program's output.
pub const METHOD: &str = "both timed alike, interleaved: one untimed run each, then the same \
    rounds of one timed run each (device time where the backend reports it, else wall clock), \
    the robust median of each";

/// How one configuration was timed by [`side_by_side`].
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// The robust median of `runs`, in milliseconds.
    pub ms: f64,
    /// Every timed run, in milliseconds, in the order they ran.
    pub runs: Vec<f64>,
}

/// Times each of `configs` through `run`, alike (the [module docs](self) say how): one untimed
/// run of each, then `rounds` rounds (at least one) of one timed run of each, in the order
/// given. Per configuration, in the order given: how it was timed, or the first error of its
/// runs (its later rounds are then skipped; the others go on).
///
/// ```
/// use tunable_runtime::compare::side_by_side;
///
/// let mut order = Vec::new();
/// let timed = side_by_side(&['a', 'b', 'c'], 2, |p: &char| {
///     order.push(*p);
///     if *p == 'b' { Err("launch failed") } else { Ok(()) }
/// });
/// // Untimed a b c, then two rounds; b failed in its first run and runs no more.
/// assert_eq!(order, ['a', 'b', 'c', 'a', 'c', 'a', 'c']);
/// assert_eq!(timed[1], Err("launch failed".to_owned()));
/// assert_eq!(timed[2].as_ref().unwrap().runs.len(), 2);
/// ```
pub fn side_by_side<P, E: std::fmt::Display>(
    configs: &[P],
    rounds: u32,
    mut run: impl FnMut(&P) -> Result<(), E>,
) -> Vec<Result<Timed, String>> {
    let mut once = |p: &P| run(p).map_err(|e| e.to_string());
    let rounds = rounds.max(1) as usize;
    let mut state: Vec<Result<Vec<f64>, String>> = configs
        .iter()
        .map(|p| once(p).map(|()| Vec::with_capacity(rounds)))
        .collect();
    for _ in 0..rounds {
        for (p, s) in configs.iter().zip(&mut state) {
            if let Ok(runs) = s {
                match time_once(&mut || once(p)) {
                    Ok(t) => runs.push(t),
                    Err(e) => *s = Err(e),
                }
            }
        }
    }
    state
        .into_iter()
        .map(|s| {
            s.map(|runs| Timed {
                ms: robust_median(&mut runs.clone()),
                runs,
            })
        })
        .collect()
}

/// The default configuration against the tuned one, timed alike by [`side_by_side`].
#[derive(Clone, Debug, PartialEq)]
pub struct Speedup {
    /// The default configuration.
    pub default: Timed,
    /// The tuned configuration.
    pub tuned: Timed,
}

impl Speedup {
    /// How many times faster the tuned configuration is: the default's time over the tuned one's.
    pub fn ratio(&self) -> f64 {
        self.default.ms / self.tuned.ms
    }
}

/// Times the `default` configuration and the `tuned` one through `run`, alike and interleaved
/// ([`side_by_side`], default first); the first error names which one failed. Where the tuned
/// configuration is the default, both are still timed, and the ratio shows the noise.
pub fn speedup<P, E: std::fmt::Display>(
    default: &P,
    tuned: &P,
    rounds: u32,
    mut run: impl FnMut(&P) -> Result<(), E>,
) -> Result<Speedup, String> {
    let mut timed = side_by_side(&[0, 1], rounds, |&i| {
        run(if i == 0 { default } else { tuned })
    })
    .into_iter();
    let mut next = |which: &str| -> Result<Timed, String> {
        timed
            .next()
            .expect("two timed")
            .map_err(|e| format!("the {which} configuration failed: {e}"))
    };
    let default = next("default")?;
    let tuned = next("tuned")?;
    Ok(Speedup { default, tuned })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::report_device_time;

    #[test]
    fn device_time_is_what_is_compared_where_it_is_reported() {
        // A backend reports its launches' device time: that, not the wall clock, is timed.
        let mut runs = 0;
        let s = speedup(&4.0, &1.0, 3, |ms: &f64| -> Result<(), String> {
            runs += 1;
            report_device_time(*ms);
            Ok(())
        })
        .unwrap();
        assert_eq!(runs, 2 + 2 * 3);
        assert_eq!(s.default.runs, [4.0; 3]);
        assert_eq!(
            s.tuned,
            Timed {
                ms: 1.0,
                runs: vec![1.0; 3]
            }
        );
        assert_eq!(s.ratio(), 4.0);
    }

    #[test]
    fn a_failure_names_the_configuration() {
        let e = speedup(&1, &2, 3, |p: &i32| {
            if *p == 2 { Err("wrong output") } else { Ok(()) }
        })
        .unwrap_err();
        assert_eq!(e, "the tuned configuration failed: wrong output");
        // Zero rounds still time one.
        let t = side_by_side(&[()], 0, |_| Ok::<(), String>(()));
        assert_eq!(t[0].as_ref().unwrap().runs.len(), 1);
    }
}
