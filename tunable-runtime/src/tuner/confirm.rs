//! # Confirming the winner
//!
//! Timing noise picks winners: a configuration whose runs happened to land in a quiet moment
//! can beat one that is faster on average (Kernel Tuner users see the best configuration change
//! by 1–2% between runs). Before the tuner stores a winner, [`confirm`] re-times the best few
//! configurations *interleaved*, round after round (`a b c a b c ...`), so that whatever
//! disturbs the machine disturbs all of them alike, and the fastest by the robust median of the
//! re-timing wins. The confirmation can change the winner.
//!
//! Only configurations timed in full are candidates: one whose timing stopped early (see
//! [`Repeats`](crate::measure::Repeats)) was behind in every run it got.

use super::Journaled;

/// An evaluator that can time configurations again: `rounds` rounds over `positions`, one run
/// of each per round after one untimed run each, interleaved.
pub trait Retime {
    /// The robust median of each position's re-timed runs in milliseconds, or why it failed,
    /// in the order of `positions`.
    fn retime(&mut self, positions: &[usize], rounds: u32) -> Vec<Result<f64, String>>;
}

impl<E: Retime> Retime for Journaled<E> {
    fn retime(&mut self, positions: &[usize], rounds: u32) -> Vec<Result<f64, String>> {
        self.inner_mut().retime(positions, rounds)
    }
}

/// The winner among `contenders` (positions with their time from the tuning, fastest first)
/// re-timed interleaved for `rounds` rounds: the position and its re-timed median. With one
/// contender it is the winner as it is; if every re-timing fails, the tuning's fastest stays.
/// `None` without contenders.
///
/// ```
/// use tunable_runtime::tuner::{Retime, confirm};
///
/// /// Position 7 was lucky once (1 ms in the tuning); it takes 3 ms, position 2 takes 2 ms.
/// struct Steady;
/// impl Retime for Steady {
///     fn retime(&mut self, positions: &[usize], _rounds: u32) -> Vec<Result<f64, String>> {
///         positions.iter().map(|&p| Ok(if p == 7 { 3.0 } else { 2.0 })).collect()
///     }
/// }
/// assert_eq!(confirm(&mut Steady, &[(7, 1.0), (2, 2.1)], 5), Some((2, 2.0)));
/// ```
pub fn confirm<R: Retime + ?Sized>(
    evaluator: &mut R,
    contenders: &[(usize, f64)],
    rounds: u32,
) -> Option<(usize, f64)> {
    let &first = contenders.first()?;
    if contenders.len() == 1 {
        return Some(first);
    }
    let positions: Vec<usize> = contenders.iter().map(|&(p, _)| p).collect();
    let times = evaluator.retime(&positions, rounds.max(1));
    positions
        .into_iter()
        .zip(times)
        .filter_map(|(p, t)| Some((p, t.ok().filter(|t| t.is_finite())?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .or(Some(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Repeats, report_device_time};
    use crate::tuner::testing::Tile;
    use crate::tuner::{Call, Evaluation, Observer, Progress, TuneOptions, Variants, panic, tune};
    use std::cell::Cell;
    use std::sync::Arc;
    use tunable_search::SpaceBuilder;
    use tunable_search::strategy::Trial;

    /// A run that takes `ms` milliseconds of device time: the clock the tests inject.
    fn takes_ms(ms: u64) {
        report_device_time(ms as f64);
    }

    /// Tile 2 takes 8 ms, tile 1 takes 16 ms but its first runs were lucky (2 ms): the tuning
    /// ranks tile 1 first, the confirmation picks tile 2. Tile 3 (60 ms) stops early.
    #[test]
    fn the_confirmation_changes_a_lucky_winner() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = Arc::new(
            SpaceBuilder::new()
                .param("tile", [1, 2, 3])
                .build()
                .unwrap(),
        );
        let lucky = Cell::new(0);
        let mut run = |call: Call<'_, Tile>| {
            match call {
                Call::Run(&Tile(1)) => {
                    lucky.set(lucky.get() + 1);
                    takes_ms(if lucky.get() <= 3 { 2 } else { 16 });
                }
                Call::Run(&Tile(2)) => takes_ms(8),
                Call::Run(_) => takes_ms(60),
                _ => {}
            }
            Ok(None)
        };
        let mut variants = Variants::new(&space, &mut run, None, Repeats::new(1, 2));
        // The default (tile 2) first, then the others in order.
        let opts = TuneOptions {
            budget: 3,
            strategy: "exhaustive".into(),
            first: vec![1],
            ..TuneOptions::default()
        };
        let mut early = Vec::new();
        let mut seen = |_: &Progress, t: &Trial, e: &Evaluation| {
            if e.early {
                early.push(t.position);
            }
        };
        let observers: &mut [&mut dyn Observer<Evaluation>] = &mut [&mut seen];
        let report = tune(&space, &opts, &mut variants, observers).unwrap();
        assert_eq!(report.best.map(|b| b.0), Some(0), "{report:?}");
        assert_eq!(early, [2]);
        assert_eq!(
            report.contenders.iter().map(|c| c.0).collect::<Vec<_>>(),
            [0, 1]
        );
        let (winner, ms) = confirm(&mut variants, &report.contenders, 3).unwrap();
        assert_eq!(winner, 1, "{ms}");
        assert_eq!(ms, 8.0);
    }

    /// Tile 3 would be the fastest by its median (one slow run, then 1 ms), but its first timed
    /// run is far behind the incumbent: it stops there, with that run, and cannot win.
    #[test]
    fn a_configuration_stopped_early_never_wins() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = Arc::new(
            SpaceBuilder::new()
                .param("tile", [1, 2, 3])
                .build()
                .unwrap(),
        );
        let runs3 = Cell::new(0);
        let mut run = |call: Call<'_, Tile>| {
            match call {
                Call::Run(&Tile(3)) => {
                    runs3.set(runs3.get() + 1);
                    // Warm-up 1 ms, first timed run 150 ms, then 1 ms.
                    takes_ms(if runs3.get() == 2 { 150 } else { 1 });
                }
                Call::Run(&Tile(t)) => takes_ms(4 * t as u64),
                _ => {}
            }
            Ok(None)
        };
        let mut variants = Variants::new(&space, &mut run, None, Repeats::new(1, 5));
        let opts = TuneOptions {
            budget: 3,
            batch: 3,
            strategy: "exhaustive".into(),
            ..TuneOptions::default()
        };
        let report = tune(&space, &opts, &mut variants, &mut []).unwrap();
        drop(variants);
        assert_eq!(runs3.get(), 2, "one warm-up and one timed run");
        assert!(report.early >= 1, "{report:?}");
        assert!(matches!(report.best, Some((0 | 1, _))), "{report:?}");
        assert!(report.contenders.iter().all(|c| c.0 != 2));
    }
}
