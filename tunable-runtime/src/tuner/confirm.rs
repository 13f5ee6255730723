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
