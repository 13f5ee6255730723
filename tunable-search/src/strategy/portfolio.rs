//! # Online portfolio
//!
//! Several strategies search one space and share every observation, as in an
//! [ensemble](super::Ensemble), but the evaluations are not dealt out in fixed shares: each one
//! goes to the member whose own proposals have lately been paying off. A member's proposal
//! *pays off* when its result improves the best configuration found by anyone so far (the
//! methodology score only counts the best-so-far). Each member keeps a discounted count of its
//! proposals and of those that paid off; every told result multiplies every member's counts by
//! `decay`, so old evidence fades within a few dozen evaluations. Its *payoff rate* is
//! `(paid + 1/2) / (proposed + 1)`.
//!
//! Every slot of an `ask` goes to:
//! 1. a member whose share of the evaluations so far is below `floor`, if any (the most starved
//!    first): no member is ever starved of the evidence its rate needs;
//! 2. otherwise the member with the highest payoff rate, ties to the member listed first.
//!
//! So the first member leads until another pays off more often, and a member that stops paying
//! off loses its slots to the others after a few misses. Like the ensemble, the portfolio asks
//! each configuration at most once and spends any budget (a member with nothing new to propose
//! gives its slot to the next, and as a last resort to random search).
//!
//! ## Options
//! The options, their keys and defaults are listed on [`OnlinePortfolioOptions`]; members are
//! specs as for the ensemble (`portfolio:members=[bayes:init=3+annealing]`).
//!
//! ## References
//! - P. Auer, N. Cesa-Bianchi, Y. Freund, R. E. Schapire, "The Nonstochastic Multiarmed Bandit
//!   Problem", SIAM J. Comput. 2002; A. Garivier, E. Moulines, "On Upper-Confidence Bound
//!   Policies for Switching Bandit Problems", ALT 2011 (discounted counts).
//! - J. Liu, B. Tunguz, G. Titericz, "GPU Accelerated Exhaustive Search for Optimal Ensemble of
//!   Black-Box Optimization Algorithms": members sharing observations.

use super::ensemble::{build_members, member_seed, member_specs, propose, random_unasked, specs};
use super::options::{checked, declare_options};
use super::{Memo, Strategy, StrategyError, StrategySpec, Trial};
use crate::Space;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::Arc;

declare_options! {
    /// Options of [`OnlinePortfolio`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct OnlinePortfolioOptions {
        /// The members' specs, separated by `+`; a member with options goes in brackets.
        members: Vec<StrategySpec> = specs(&["bayes", "annealing"]), "members" => member_specs;
        /// The smallest share of the evaluations any member gets, in `[0, 1/members]`.
        floor: f64 = 0.1,
            "floor" => checked("a number in [0, 0.5]", |x: &f64| (0.0..=0.5).contains(x));
        /// The factor every told result applies to every member's counts, in `(0, 1]`.
        decay: f64 = 0.9,
            "decay" => checked("a number in (0, 1]", |x: &f64| *x > 0.0 && *x <= 1.0);
    }
}

/// One member's record.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    /// Discounted proposals told and those that improved the best.
    proposed: f64,
    paid: f64,
    /// Evaluations given, undiscounted.
    given: usize,
}

impl Record {
    fn rate(&self) -> f64 {
        (self.paid + 0.5) / (self.proposed + 1.0)
    }
}

/// Strategies sharing one budget and every observation, the evaluations going to whichever
/// pays off (see the [module docs](self)).
pub struct OnlinePortfolio {
    members: Vec<Box<dyn Strategy>>,
    records: Vec<Record>,
    floor: f64,
    decay: f64,
    /// The member that proposed each asked, untold position.
    owner: HashMap<usize, usize>,
    memo: Memo,
    rng: ChaCha8Rng,
}

impl std::fmt::Debug for OnlinePortfolio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnlinePortfolio")
            .field("members", &self.members.len())
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

impl OnlinePortfolio {
    /// A portfolio of `opts.members` over `space`, seeded. Fails if a member cannot be built or
    /// the floor leaves no room (`floor * members > 1`).
    pub fn new(
        space: Arc<Space>,
        opts: OnlinePortfolioOptions,
        seed: u64,
    ) -> Result<Self, StrategyError> {
        if opts.floor * opts.members.len() as f64 > 1.0 {
            return Err(StrategyError::BadValue {
                strategy: "portfolio".into(),
                key: "floor".into(),
                value: opts.floor.to_string(),
                reason: format!("{} members cannot each get that share", opts.members.len()),
            });
        }
        let members = build_members(&opts.members, &space, seed)?;
        Ok(OnlinePortfolio {
            records: vec![Record::default(); members.len()],
            members,
            floor: opts.floor,
            decay: opts.decay,
            owner: HashMap::new(),
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(member_seed(seed, usize::MAX)),
        })
    }

    /// The member the next slot goes to.
    fn choose(&self) -> usize {
        let total: usize = self.records.iter().map(|r| r.given).sum::<usize>() + 1;
        let starved = (0..self.records.len())
            .filter(|&i| (self.records[i].given as f64) < self.floor * total as f64)
            .min_by(|&a, &b| {
                let share = |i: usize| self.records[i].given as f64;
                share(a).total_cmp(&share(b)).then(a.cmp(&b))
            });
        starved.unwrap_or_else(|| {
            (0..self.records.len())
                .fold(None::<usize>, |best, i| match best {
                    Some(b) if self.records[b].rate() >= self.records[i].rate() => Some(b),
                    _ => Some(i),
                })
                .unwrap_or(0)
        })
    }

    /// The evaluations each member was given so far, in member order.
    pub fn shares(&self) -> Vec<usize> {
        self.records.iter().map(|r| r.given).collect()
    }
}

impl Strategy for OnlinePortfolio {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let first = self.choose();
            // The chosen member, else the others in turn, else random search.
            let k = self.members.len();
            let got = (0..k).map(|j| (first + j) % k).find_map(|m| {
                let p = propose(self.members[m].as_mut(), &mut self.memo, 1);
                p.first().map(|&p| (m, p))
            });
            let Some((m, p)) = got.or_else(|| {
                let p = random_unasked(&mut self.memo, &mut self.rng, 1);
                p.first().map(|&p| (first, p))
            }) else {
                break;
            };
            self.records[m].given += 1;
            self.owner.insert(p, m);
            out.push(p);
        }
        out
    }

    fn tell(&mut self, trials: &[Trial]) {
        for t in trials {
            let best = self.memo.best().map(|(_, b)| b);
            self.memo.record(t);
            for r in &mut self.records {
                r.proposed *= self.decay;
                r.paid *= self.decay;
            }
            if let Some(m) = self.owner.remove(&t.position) {
                let c = t.outcome.cost();
                let r = &mut self.records[m];
                r.proposed += 1.0;
                if c.is_finite() && best.is_none_or(|b| c < b) {
                    r.paid += 1.0;
                }
            }
        }
        for m in &mut self.members {
            m.tell(trials);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::strategy::fixtures::{bowl, space};
    use crate::strategy::{Outcome, build, drive};
    use std::collections::HashSet;

    #[test]
    fn keeps_the_contract_and_is_deterministic() {
        let s = space();
        for spec in [
            "portfolio",
            "portfolio:members=[random+annealing]:floor=0.3:decay=0.5",
            "portfolio:members=[mls+genetic:popsize=8+random]:floor=0",
        ] {
            let spec: StrategySpec = spec.parse().unwrap();
            for batch in [1, 4] {
                let run = |seed| {
                    let mut p = build(&spec, Arc::clone(&s), seed).unwrap();
                    drive(p.as_mut(), 120, batch, |q| bowl(&s, q)).trials
                };
                let a = run(3);
                assert_eq!(a.len(), 120, "{spec}");
                let distinct: HashSet<usize> = a.iter().map(|t| t.position).collect();
                assert_eq!(distinct.len(), 120, "{spec}");
                assert_eq!(a, run(3), "{spec} is not deterministic");
            }
        }
        // Exhausting a small space.
        let small = Arc::new(SpaceBuilder::new().param("a", 0..30).build().unwrap());
        let mut p = build(&"portfolio".parse().unwrap(), Arc::clone(&small), 1).unwrap();
        let run = drive(p.as_mut(), 100, 3, |q| Outcome::Value(q as f64 + 1.0));
        assert_eq!(run.trials.len(), 30);
        assert!(p.ask(1).is_empty());
    }

    #[test]
    fn evaluations_follow_the_payoff() {
        // A member that pays off (mls on a bowl) against one that does not (random search): the
        // paying member gets most evaluations, the other at least the floor. The space is larger
        // than the fixture's (where random picks keep improving for a third of it).
        let s = Arc::new(
            SpaceBuilder::new()
                .param("a", 0..16)
                .param("b", 0..16)
                .param("c", 0..4)
                .constraint("a + b <= 24")
                .build()
                .unwrap(),
        );
        let opts = OnlinePortfolioOptions {
            members: vec!["random".parse().unwrap(), "mls".parse().unwrap()],
            floor: 0.1,
            decay: 0.9,
        };
        let mut p = OnlinePortfolio::new(Arc::clone(&s), opts, 5).unwrap();
        drive(&mut p, 150, 1, |q| {
            let i = s.indices(q);
            if (i[0] * 5 + i[1]) % 13 == 4 {
                return Outcome::Failed;
            }
            let d = |a: u16, b: i32| f64::from((i32::from(a) - b).pow(2));
            Outcome::Value(1.0 + d(i[0], 11) + d(i[1], 3) + 2.0 * d(i[2], 1))
        });
        let shares = p.shares();
        assert_eq!(shares.iter().sum::<usize>(), 150);
        assert!(shares[0] >= 15, "{shares:?}");
        assert!(shares[1] > shares[0], "{shares:?}");
        let bad = OnlinePortfolioOptions {
            members: vec!["random".parse().unwrap(); 3],
            floor: 0.4,
            decay: 0.9,
        };
        assert!(OnlinePortfolio::new(s, bad, 1).is_err());
    }
}
