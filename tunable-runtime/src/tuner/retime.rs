//! # Timing configurations again
//!
//! [`Retime`] is what [`confirm`](super::confirm()) asks of an evaluator: to time a few
//! configurations again, interleaved. [`Variants`](super::Variants) and
//! [`Journaled`](super::Journaled) implement it.

/// An evaluator that can time configurations again: `rounds` rounds over `positions`, one run
/// of each per round after one untimed run each, interleaved.
pub trait Retime {
    /// The robust median of each position's re-timed runs in milliseconds, or why it failed,
    /// in the order of `positions`.
    fn retime(&mut self, positions: &[usize], rounds: u32) -> Vec<Result<f64, String>>;
}
