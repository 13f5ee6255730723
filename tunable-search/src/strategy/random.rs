//! # Random search
//!
//! Uniform sampling of valid configurations without replacement: the baseline every other
//! strategy is scored against. Its algorithm only ever waits, so the
//! [driver](super::Iterative) fills every batch with random unasked configurations.

use super::{Algorithm, Iterative, Search, Step};

/// Uniform random sampling without replacement.
pub type RandomSearch = Iterative<RandomAlgorithm>;

/// Random search's algorithm: nothing to do but let the driver sample.
#[derive(Debug)]
pub struct RandomAlgorithm;

impl Algorithm for RandomAlgorithm {
    type Options = ();

    fn new((): (), _search: &mut Search) -> Self {
        RandomAlgorithm
    }

    fn step(&mut self, _search: &mut Search) -> Step {
        Step::Wait
    }

    fn samples_only(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{Outcome, Strategy, Trial};
    use crate::{Space, SpaceBuilder};
    use std::sync::Arc;

    #[test]
    fn upcoming_names_the_next_draws_in_order() {
        let space: Arc<Space> = Arc::new(
            SpaceBuilder::new()
                .param("a", 0..6)
                .param("b", 0..6)
                .constraint("a + b <= 8")
                .build()
                .unwrap(),
        );
        let n = space.len();
        let mut s = RandomSearch::new(Arc::clone(&space), (), 11);
        let mut asked = Vec::new();
        // Peek at every stage down to the last configurations, where the draws fall back from
        // rejection sampling to counting.
        while asked.len() < n {
            let k = 4.min(n - asked.len());
            let hints = s.upcoming(k);
            assert_eq!(hints.len(), k);
            for hint in hints {
                let p = s.ask(1);
                assert_eq!(p, [hint], "after {} asks", asked.len());
                s.tell(&[Trial {
                    position: hint,
                    outcome: Outcome::Value(1.0 + hint as f64),
                }]);
                asked.push(hint);
            }
        }
        assert!(s.upcoming(3).is_empty());
        asked.sort_unstable();
        asked.dedup();
        assert_eq!(asked.len(), n);
    }
}
