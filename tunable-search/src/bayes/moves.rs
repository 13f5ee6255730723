//! # Moves: the model's picks or local ones, by what each has earned
//!
//! Once the initial sample is told, two kinds of move pick configurations ([`Move`]): the
//! model's (an acquisition round over every candidate) and local ones (an unasked Hamming
//! neighbour, one parameter changed, of the best configuration found; of the next best once
//! those are all asked). Which kind takes the next pick is decided from the run's own data, by
//! two measurements:
//! - the model's *skill*, its predictive check ([`Guard`](super::Guard)): the concordance of its
//!   predictions with the results measured next, a rank correlation over the last results;
//! - each kind's *gain per evaluation*: the improvement of the best target (the logarithm of
//!   the run time by default) its picks brought, failures and non-improving picks counting 0,
//!   averaged over the kind's own last [`WINDOW`] picks.
//!
//! [`Moves::next`] applies the rule:
//! 1. until the check has judged the model, the model picks (a young model's picks are scoped,
//!    see `scope.rs`);
//! 2. while the model does not predict (skill below [`SKILL`]; a coin scores 0.5), local moves
//!    pick, among the neighbours at random: a model that does not predict neither picks nor
//!    ranks;
//! 3. otherwise a local move takes the pick, the model ranking the neighbours (a polishing
//!    round), every `polish`-th round and whenever local moves have gained more per evaluation
//!    than the model's; the model takes the rest.
//!
//! A model that predicts is not enough: on landscapes where a modest monotone effect (a clock
//! level, an unroll factor) sits under large ones, a model fitted to the log-times of very
//! different configurations does not resolve it, while one local step sees it at once; the
//! gains show which kind is improving the run. The polishing cadence is the local moves'
//! floor, so their gain is always measured.

use std::collections::VecDeque;

/// The skill below which the model neither picks nor ranks (a coin scores 0.5).
pub const SKILL: f64 = 0.55;
/// The picks of a kind its gain per evaluation is the mean over: its last few, so that a kind
/// leads only while it keeps improving.
pub const WINDOW: usize = 5;

/// A kind of move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// An acquisition round over every candidate.
    Model,
    /// A neighbour of the best found, ranked by the model.
    Ranked,
    /// A neighbour of the best found, at random.
    Local,
}

/// A kind's gain per evaluation over its last [`WINDOW`] picks.
#[derive(Clone, Debug, Default, PartialEq)]
struct Gain {
    recent: VecDeque<f64>,
}

impl Gain {
    fn record(&mut self, gain: f64) {
        if self.recent.len() == WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(gain);
    }

    fn rate(&self) -> Option<f64> {
        (!self.recent.is_empty())
            .then(|| self.recent.iter().sum::<f64>() / self.recent.len() as f64)
    }
}

/// The gains of the two kinds and the rule that chooses between them (see the
/// [module docs](self)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Moves {
    model: Gain,
    local: Gain,
    local_picks: usize,
}

impl Moves {
    /// Records a told result of a `kind` pick that improved the best target by `gain` (0 if it
    /// did not, or failed).
    pub fn record(&mut self, kind: Move, gain: f64) {
        match kind {
            Move::Model => self.model.record(gain),
            Move::Ranked | Move::Local => self.local.record(gain),
        }
    }

    /// The kind of the next pick: whether the check has `judged` the model, whether it
    /// `predicts` (skill at least [`SKILL`]), and whether the round is a polishing one
    /// (`polish_due`).
    pub fn next(&mut self, judged: bool, predicts: bool, polish_due: bool) -> Move {
        let kind = if !judged {
            Move::Model
        } else if !predicts {
            Move::Local
        } else if polish_due || self.local_leads() {
            Move::Ranked
        } else {
            Move::Model
        };
        if kind != Move::Model {
            self.local_picks += 1;
        }
        kind
    }

    /// Whether local moves have gained more per evaluation than the model's (false until both
    /// have a record).
    fn local_leads(&self) -> bool {
        match (self.local.rate(), self.model.rate()) {
            (Some(l), Some(m)) => l > m,
            _ => false,
        }
    }

    /// Picks given to local moves so far.
    pub fn local_picks(&self) -> usize {
        self.local_picks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_follows_skill_then_gains() {
        let mut m = Moves::default();
        assert_eq!(m.next(false, false, true), Move::Model, "not judged yet");
        assert_eq!(m.next(true, false, false), Move::Local, "no skill");
        assert_eq!(m.next(true, true, true), Move::Ranked, "polishing round");
        assert_eq!(m.next(true, true, false), Move::Model, "no record yet");
        m.record(Move::Model, 0.0);
        m.record(Move::Ranked, 0.1);
        assert_eq!(m.next(true, true, false), Move::Ranked, "local gains more");
        m.record(Move::Model, 1.0);
        assert_eq!(
            m.next(true, true, false),
            Move::Model,
            "the model gains more"
        );
        assert_eq!(m.local_picks(), 3);
    }

    #[test]
    fn gains_fade() {
        let mut g = Gain::default();
        assert_eq!(g.rate(), None);
        g.record(1.0);
        g.record(0.0);
        assert_eq!(g.rate(), Some(0.5));
        for _ in 0..WINDOW - 1 {
            g.record(0.0);
        }
        assert_eq!(g.rate(), Some(0.0), "the gain has left the window");
    }
}
