//! # Whether a strategy's guesses come true
//!
//! Before each evaluation the tuner hands the compile pool the configurations the strategy
//! expects to ask next. `exhaustive`'s and `random`'s guesses always come true; `auto`'s often
//! do not (79 of 218 in a `gemm_cuda --pool` run). [`Hits`] counts them, so that the tuner hands
//! more guesses than the pool has threads ([`hints`](super::hints)) only to a strategy whose
//! guesses have come true: at least [`PRECISE_AFTER`] asked that had been handed over, and
//! [`PRECISE_RATIO`] times as many as the guesses missed (handed over before the latest one
//! asked, and not asked since). A guess handed over after the latest one asked is not judged
//! yet. The rule is the one the CUDA backend applies before it compiles guesses together in one
//! NVRTC program, for the same reason: an extra guess that misses costs a build.

use std::collections::HashMap;

/// Guesses asked before any judgement.
pub const PRECISE_AFTER: usize = 8;

/// Guesses asked per guess missed that make the guesses precise.
pub const PRECISE_RATIO: usize = 3;

/// The guesses handed over and which of them the strategy went on to ask. They are
/// [`precise`](Hits::precise) once at least [`PRECISE_AFTER`] were asked after they were handed
/// over, [`PRECISE_RATIO`] times as many as those missed (handed over before the latest one
/// asked, and not asked); the tuner then hands the compile pool all the guesses it asks for
/// ([`hints`](super::hints)), as many as the pool has threads before. Device-free, so that
/// simulations of the pool use the tuner's own rule.
///
/// ```
/// use tunable_runtime::ahead::Hits;
///
/// let mut hits = Hits::default();
/// for p in 0..20 {
///     hits.handed(p);
/// }
/// for p in 0..7 {
///     hits.asked(p);
/// }
/// assert!(!hits.precise()); // seven asked: too few to judge
/// hits.asked(7);
/// assert!(hits.precise()); // eight asked in their order, none missed
/// ```
#[derive(Clone, Debug, Default)]
pub struct Hits {
    /// The next guess's number, in the order guesses were handed over.
    next: usize,
    /// Guesses handed over and not asked yet, with their numbers.
    waiting: HashMap<usize, usize>,
    /// Guesses asked after they were handed over.
    asked: usize,
    /// The number of the latest guess asked.
    latest: Option<usize>,
}

/// Whether guesses of which `asked` came true and `missed` missed are precise: at least
/// [`PRECISE_AFTER`] come true, [`PRECISE_RATIO`] times as many as missed. [`Hits::precise`]
/// and the CUDA backend's programs of several judge by it.
pub fn precise(asked: u64, missed: u64) -> bool {
    asked >= PRECISE_AFTER as u64 && asked >= PRECISE_RATIO as u64 * missed
}

impl Hits {
    /// The guesses to hand over now, of `likely` (the strategy's, most likely first): all of
    /// them once the guesses have come true, else the first `threads`. Notes them as handed.
    pub fn hand<'l>(&mut self, likely: &'l [usize], threads: usize) -> &'l [usize] {
        let likely = if self.precise() {
            likely
        } else {
            &likely[..likely.len().min(threads)]
        };
        for &p in likely {
            self.handed(p);
        }
        likely
    }

    /// Notes `position` as handed over (again: nothing).
    pub fn handed(&mut self, position: usize) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.waiting.entry(position) {
            e.insert(self.next);
            self.next += 1;
        }
    }

    /// Notes `position` as asked by the strategy: a guess come true if it was handed over.
    pub fn asked(&mut self, position: usize) {
        if let Some(n) = self.waiting.remove(&position) {
            self.asked += 1;
            self.latest = Some(self.latest.map_or(n, |l| l.max(n)));
        }
    }

    /// Guesses asked after they were handed over.
    pub fn come_true(&self) -> usize {
        self.asked
    }

    /// Guesses missed: handed over before the latest one asked, and not asked.
    pub fn missed(&self) -> usize {
        self.latest.map_or(0, |latest| {
            self.waiting.values().filter(|&&n| n < latest).count()
        })
    }

    /// Whether the guesses have come true often enough to hand over more of them.
    pub fn precise(&self) -> bool {
        precise(self.asked as u64, self.missed() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_in_order_are_precise_and_guesses_that_miss_are_not() {
        let mut exact = Hits::default();
        let mut loose = Hits::default();
        for step in 0..40 {
            // Each evaluation hands over the next four; `exact` asks the first of them, `loose`
            // asks a configuration it never handed over three times out of four.
            for p in step..step + 4 {
                exact.handed(p);
                loose.handed(p);
            }
            exact.asked(step);
            loose.asked(if step % 4 == 0 { step } else { 1000 + step });
        }
        assert!(exact.precise());
        assert_eq!((exact.come_true(), exact.missed()), (40, 0));
        assert_eq!(loose.come_true(), 10);
        assert!(loose.missed() > 10 && !loose.precise());
    }

    #[test]
    fn hand_gives_the_threads_first_guesses_until_they_come_true_then_all() {
        let mut hits = Hits::default();
        let likely: Vec<usize> = (0..16).collect();
        assert_eq!(hits.hand(&likely, 2), &[0, 1]);
        for step in 0..8 {
            hits.asked(step);
            let next: Vec<usize> = (step + 1..step + 17).collect();
            let handed = hits.hand(&next, 2).len();
            assert_eq!(handed, if step < 7 { 2 } else { 16 }, "after {step}");
        }
    }

    #[test]
    fn handing_over_again_keeps_the_first_number_and_asking_twice_counts_once() {
        let mut hits = Hits::default();
        for p in [5, 6, 5, 7] {
            hits.handed(p);
        }
        hits.asked(6);
        hits.asked(6);
        // 5 was handed before 6 and is not asked: missed; 7 was handed after: not judged.
        assert_eq!((hits.come_true(), hits.missed()), (1, 1));
        hits.asked(9); // never handed over
        assert_eq!((hits.come_true(), hits.missed()), (1, 1));
    }
}
