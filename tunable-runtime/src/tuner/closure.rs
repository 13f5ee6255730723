//! # A closure as an evaluator
//!
//! [`Closure`] turns a closure that measures one configuration (by its position in the space)
//! into an [`Evaluator`]: the simplest way to tune something that is not a `#[tunable]` kernel.

use super::{Evaluation, capture};
use std::convert::Infallible;
use tunable_search::strategy::Evaluator;

/// Evaluates each position of a batch with the closure, one after the other: milliseconds, or
/// the reason the configuration failed; a panic inside the closure is a failure with the panic's
/// message (see [`capture`]).
#[derive(Clone, Copy, Debug)]
pub struct Closure<F>(pub F);

impl<F: FnMut(usize) -> Result<f64, String>> Evaluator for Closure<F> {
    type Report = Evaluation;
    type Error = Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Evaluation>, Infallible> {
        Ok(positions
            .iter()
            .map(|&p| match capture(|| (self.0)(p)) {
                Ok(result) => Evaluation::measured(result),
                Err(message) => Evaluation::panicked(&message),
            })
            .collect())
    }
}
