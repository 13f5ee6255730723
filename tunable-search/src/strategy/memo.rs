//! # Memo
//!
//! What a strategy knows about every position: never asked, asked and pending, or evaluated
//! with its outcome. Looking a known configuration up is free; only unasked positions may be
//! asked for. [`Memo::rank`] is the one place that turns what is known into the cost strategies
//! rank configurations by (see [`PENALTY`]).

use super::{Outcome, PENALTY, Trial};
use rand::{Rng, RngExt};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cell {
    Unasked,
    Pending,
    Done(Outcome),
}

/// Per-position bookkeeping for one strategy run.
#[derive(Clone, Debug)]
pub struct Memo {
    cells: Vec<Cell>,
    asked: usize,
    best: Option<(usize, f64)>,
}

impl Memo {
    /// A memo for a space of `len` positions, all unasked.
    pub fn new(len: usize) -> Self {
        Memo {
            cells: vec![Cell::Unasked; len],
            asked: 0,
            best: None,
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the space has no positions.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Whether `pos` was asked (pending or evaluated).
    pub fn is_asked(&self, pos: usize) -> bool {
        self.cells[pos] != Cell::Unasked
    }

    /// The outcome of `pos`, if it has been told.
    pub fn get(&self, pos: usize) -> Option<Outcome> {
        match self.cells[pos] {
            Cell::Done(o) => Some(o),
            _ => None,
        }
    }

    /// The cost of `pos` if known ([`Outcome::cost`]: a failure costs [`PENALTY`]).
    pub fn cost(&self, pos: usize) -> Option<f64> {
        self.get(pos).map(Outcome::cost)
    }

    /// The cost a strategy ranks a configuration by: its told cost for a position, [`PENALTY`]
    /// for a configuration outside the space (`None`: it violates the constraints and is never
    /// evaluated), `None` while its result is unknown. A failed and an invalid configuration
    /// therefore rank alike, below every valid result.
    pub fn rank(&self, position: Option<usize>) -> Option<f64> {
        match position {
            None => Some(PENALTY),
            Some(p) => self.cost(p),
        }
    }

    /// Marks `pos` as asked. Returns false (and changes nothing) if it already was.
    pub fn mark_asked(&mut self, pos: usize) -> bool {
        if self.cells[pos] != Cell::Unasked {
            return false;
        }
        self.cells[pos] = Cell::Pending;
        self.asked += 1;
        true
    }

    /// Records a told result.
    pub fn record(&mut self, t: &Trial) {
        if self.cells[t.position] == Cell::Unasked {
            self.asked += 1;
        }
        self.cells[t.position] = Cell::Done(t.outcome);
        if let Some(v) = t.outcome.value().filter(|v| v.is_finite())
            && self.best.is_none_or(|(_, b)| v < b)
        {
            self.best = Some((t.position, v));
        }
    }

    /// How many positions were asked.
    pub fn asked_count(&self) -> usize {
        self.asked
    }

    /// Whether every position was asked.
    pub fn exhausted(&self) -> bool {
        self.asked == self.cells.len()
    }

    /// The best valid result so far: `(position, cost)`.
    pub fn best(&self) -> Option<(usize, f64)> {
        self.best
    }

    /// A uniformly random unasked position (`None` when exhausted).
    pub fn random_unasked<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<usize> {
        self.random_unasked_beside(rng, &[])
    }

    /// [`random_unasked`](Self::random_unasked) as it would draw were the distinct unasked
    /// positions `also` asked too, from the same random numbers: what the next draws will be
    /// once those are asked.
    pub fn random_unasked_beside<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        also: &[usize],
    ) -> Option<usize> {
        let n = self.cells.len();
        let asked = self.asked + also.len();
        if asked >= n {
            return None;
        }
        let free = |p: usize| self.cells[p] == Cell::Unasked && !also.contains(&p);
        // Rejection sampling is uniform; fall back to counting when most positions are taken.
        for _ in 0..64 {
            let p = rng.random_range(0..n);
            if free(p) {
                return Some(p);
            }
        }
        let k = rng.random_range(0..n - asked);
        (0..n).filter(|&p| free(p)).nth(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn bookkeeping() {
        let mut m = Memo::new(5);
        assert!(m.mark_asked(3));
        assert!(!m.mark_asked(3));
        m.record(&Trial {
            position: 3,
            outcome: Outcome::Value(2.0),
        });
        m.record(&Trial {
            position: 1,
            outcome: Outcome::Failed,
        });
        assert_eq!(m.asked_count(), 2);
        assert_eq!(m.best(), Some((3, 2.0)));
        assert_eq!(m.cost(1), Some(PENALTY));
        assert_eq!(
            m.rank(None),
            m.rank(Some(1)),
            "failed and invalid rank alike"
        );
        assert!(m.mark_asked(0));
        assert_eq!(m.rank(Some(0)), None, "pending");
        m.record(&Trial {
            position: 0,
            outcome: Outcome::Value(3.0),
        });
        assert_eq!(m.rank(Some(0)), Some(3.0));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut seen = std::collections::BTreeSet::new();
        while let Some(p) = m.random_unasked(&mut rng) {
            assert!(m.mark_asked(p));
            seen.insert(p);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![2, 4]);
        assert!(m.exhausted());
    }
}
