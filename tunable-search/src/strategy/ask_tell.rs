//! # The ask/tell interface
//!
//! What every strategy and everything that drives one shares: a [`Strategy`] asks for positions
//! and is told [`Trial`]s, each an [`Outcome`]; a failure costs [`PENALTY`]. The contract a
//! strategy keeps is in the [module docs](super).

/// What a strategy ranks a configuration by when it has no measured value: a failed
/// configuration ([`Outcome::cost`]) and one that violates the constraints ([`Memo::rank`](super::Memo::rank)) both
/// cost this, so they rank alike, below every valid result (as in Kernel Tuner, whose cost
/// function returns the largest float for both).
pub const PENALTY: f64 = f64::MAX;

/// The result of evaluating one configuration; lower values are better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// The measured objective (e.g. time in milliseconds).
    Value(f64),
    /// The configuration failed: compile error, runtime error, wrong output, timeout.
    Failed,
}

impl Outcome {
    /// The value to minimize: a failure (or a value that is not finite) costs [`PENALTY`].
    pub fn cost(self) -> f64 {
        match self {
            Outcome::Value(v) if v.is_finite() => v,
            _ => PENALTY,
        }
    }

    /// The value, if the configuration did not fail.
    pub fn value(self) -> Option<f64> {
        match self {
            Outcome::Value(v) => Some(v),
            Outcome::Failed => None,
        }
    }
}

/// One evaluated configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trial {
    /// Its position in the space.
    pub position: usize,
    /// What the evaluation gave.
    pub outcome: Outcome,
}

/// An ask/tell search strategy.
pub trait Strategy: Send {
    /// Up to `n` distinct positions never asked before. Fewer (even none) while positions asked
    /// earlier are untold means the strategy waits for their results (Bayesian optimization's
    /// `ramp`); an empty answer with nothing untold means all have been asked.
    fn ask(&mut self, n: usize) -> Vec<usize>;
    /// Results of evaluated positions: those it asked for, and others it did not ask (evaluated
    /// before its first ask by a warm start or a baseline, or asked by another member of an
    /// ensemble), which it may learn from and should not ask for afterwards.
    fn tell(&mut self, trials: &[Trial]);
    /// Up to `n` positions this strategy expects to ask next, most likely first, without
    /// asking them (its state is unchanged): a hint for a tuner that compiles ahead
    /// ([`Driver::ahead`](super::Driver::ahead)); a wrong guess costs a compilation, never a
    /// different search. Default: none.
    fn upcoming(&self, n: usize) -> Vec<usize> {
        let _ = n;
        Vec::new()
    }
}
