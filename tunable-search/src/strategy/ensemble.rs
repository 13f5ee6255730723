//! # Ensembles of strategies
//!
//! Several strategies search one space together and share what they observe (Liu, Tunguz,
//! Titericz, "GPU Accelerated Exhaustive Search for Optimal Ensemble of Black-Box Optimization
//! Algorithms", Algorithm 1). Each member proposes its share of every batch, and every result is
//! told to every member. A member therefore learns from the other members' suggestions as if it
//! had made them: a genetic algorithm may breed from a configuration that simulated annealing
//! found, and a local search may climb from it.
//!
//! ## Shares
//! For `ask(n)` the `n` slots are dealt to the members in turn, one at a time. The turn carries
//! over from one ask to the next. With `n = 1` the members take turns, and with `n` equal to the
//! number of members each proposes one configuration. `weights` gives a member several slots per
//! round: with `weights=2+1` the first member proposes two configurations for every one of the
//! second.
//!
//! ## Shared observations
//! Members do not know what the others asked until the results come back. When a member proposes
//! a configuration that another member has already asked, the ensemble does not ask for it again.
//! The member still hears its result, because every result goes to every member, and the ensemble
//! asks that member for another proposal instead. If a member has nothing new to propose, its
//! slot goes to the next member, and as a last resort to a uniformly random unasked
//! configuration. So the ensemble keeps the [`Strategy`] contract whatever its members do: it
//! asks every configuration at most once and spends any budget.
//!
//! ## Options
//! The options, their keys and defaults are listed on [`EnsembleOptions`]. Each member is a full
//! spec, and a member with options goes in brackets, e.g.
//! `ensemble:members=[annealing+genetic:popsize=20]`. The default pair was chosen by
//! leave-one-kernel-out cross-validation over every pair of strategies on the shared caches; see
//! `docs/notes/ensembles-and-failures.md` in the repository.
//!
//! Member `i` of a run with seed `s` is seeded with a mix of `s` and `i`, so members that are the
//! same strategy still search differently.

use super::options::declare_options;
use super::spec::split_top_level;
use super::{Memo, Strategy, Trial, build};
use super::{StrategyError, StrategySpec};
use crate::Space;
use crate::mix::{GOLDEN, mix64};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

declare_options! {
    /// Options of [`Ensemble`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct EnsembleOptions {
        /// The members' specs, separated by `+`; a member with options goes in brackets.
        members: Vec<StrategySpec> = specs(&["annealing", "mls"]), "members" => member_specs;
        /// Slots per round for each member, separated by `+` (empty: one each).
        weights: Vec<usize> = Vec::new(), "weights" => weights;
    }
}

/// The specs of `names` (the default members).
pub(super) fn specs(names: &[&str]) -> Vec<StrategySpec> {
    names
        .iter()
        .map(|s| s.parse().expect("valid default member"))
        .collect()
}

/// The value inside brackets, if bracketed.
fn unbracket(value: &str) -> &str {
    value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value)
}

/// `members`: specs separated by `+` at the top level (a member with options in brackets).
pub(super) fn member_specs<O>(_: &O, value: &str) -> Result<Vec<StrategySpec>, String> {
    let members = split_top_level(unbracket(value), '+')
        .into_iter()
        .map(|m| m.parse::<StrategySpec>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if members.is_empty() {
        return Err("expected at least one member".into());
    }
    Ok(members)
}

/// `weights`: integers 1..=1000 separated by `+`.
fn weights(_: &EnsembleOptions, value: &str) -> Result<Vec<usize>, String> {
    unbracket(value)
        .split('+')
        .map(|w| match w.trim().parse::<usize>() {
            Ok(w) if (1..=1000).contains(&w) => Ok(w),
            _ => Err(format!(
                "expected weights 1..=1000 separated by '+', got '{w}'"
            )),
        })
        .collect()
}

/// Strategies that share one budget and every observation.
pub struct Ensemble {
    members: Vec<Box<dyn Strategy>>,
    /// The member of each slot of a round, e.g. `[0, 0, 1]` for weights 2 and 1.
    round: Vec<usize>,
    /// The next slot of `round`.
    turn: usize,
    memo: Memo,
    rng: ChaCha8Rng,
}

impl std::fmt::Debug for Ensemble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ensemble")
            .field("members", &self.members.len())
            .field("round", &self.round)
            .field("turn", &self.turn)
            .finish_non_exhaustive()
    }
}

/// The seed of member `i`: a SplitMix64 step over the run's seed and the member's index.
pub(super) fn member_seed(seed: u64, i: usize) -> u64 {
    mix64(seed ^ (i as u64 + 1).wrapping_mul(GOLDEN))
}

/// The strategies `specs` name over `space`, member `i` seeded with [`member_seed`]`(seed, i)`.
pub(super) fn build_members(
    specs: &[StrategySpec],
    space: &Arc<Space>,
    seed: u64,
) -> Result<Vec<Box<dyn Strategy>>, StrategyError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, m)| build(m, Arc::clone(space), member_seed(seed, i)))
        .collect()
}

/// Up to `n` uniformly random positions `memo` has not seen asked, marked asked there: the last
/// resort of strategies whose members have nothing new to propose.
pub(super) fn random_unasked(memo: &mut Memo, rng: &mut ChaCha8Rng, n: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let Some(p) = memo.random_unasked(rng) else {
            break;
        };
        memo.mark_asked(p);
        out.push(p);
    }
    out
}

impl Ensemble {
    /// An ensemble of `opts.members` over `space`, seeded. Fails if a member cannot be built or
    /// the weights do not match the members.
    pub fn new(space: Arc<Space>, opts: EnsembleOptions, seed: u64) -> Result<Self, StrategyError> {
        let weights = if opts.weights.is_empty() {
            vec![1; opts.members.len()]
        } else {
            opts.weights
        };
        if weights.len() != opts.members.len() {
            return Err(StrategyError::BadValue {
                strategy: "ensemble".into(),
                key: "weights".into(),
                value: weights
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("+"),
                reason: format!(
                    "{} members need {} weights",
                    opts.members.len(),
                    opts.members.len()
                ),
            });
        }
        let members = build_members(&opts.members, &space, seed)?;
        let round = weights
            .iter()
            .enumerate()
            .flat_map(|(i, &w)| std::iter::repeat_n(i, w))
            .collect();
        Ok(Ensemble {
            members,
            round,
            turn: 0,
            memo: Memo::new(space.len()),
            rng: ChaCha8Rng::seed_from_u64(member_seed(seed, usize::MAX)),
        })
    }

    /// Up to `want` positions proposed by member `m` that the ensemble has not asked yet.
    fn propose(&mut self, m: usize, want: usize) -> Vec<usize> {
        propose(self.members[m].as_mut(), &mut self.memo, want)
    }
}

/// Up to `want` positions proposed by `member` that `memo` has not seen asked, marked asked
/// there: what a strategy sharing its budget with others may ask for.
pub(super) fn propose(member: &mut dyn Strategy, memo: &mut Memo, want: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(want);
    // A member proposes each position at most once, so the loop ends: every round either yields
    // a new position or uses up some of the member's finitely many proposals.
    while out.len() < want {
        let asked = member.ask(want - out.len());
        if asked.is_empty() {
            break;
        }
        out.extend(asked.into_iter().filter(|&p| memo.mark_asked(p)));
    }
    out
}

impl Strategy for Ensemble {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        // Deal the slots of this batch to members, in turn.
        let mut slots = vec![0usize; self.members.len()];
        for _ in 0..n {
            slots[self.round[self.turn]] += 1;
            self.turn = (self.turn + 1) % self.round.len();
        }
        let mut out = Vec::with_capacity(n);
        let mut short = 0;
        for (m, &want) in slots.iter().enumerate() {
            let got = self.propose(m, want);
            short += want - got.len();
            out.extend(got);
        }
        // Slots a member could not fill go to the others, then to random search.
        for m in 0..self.members.len() {
            if short == 0 {
                break;
            }
            let got = self.propose(m, short);
            short -= got.len();
            out.extend(got);
        }
        out.extend(random_unasked(&mut self.memo, &mut self.rng, short));
        out
    }

    fn tell(&mut self, trials: &[Trial]) {
        trials.iter().for_each(|t| self.memo.record(t));
        for m in &mut self.members {
            m.tell(trials);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::drive;
    use crate::strategy::fixtures::{bowl, space};
    use std::sync::Mutex;

    /// A member that records every result it is told, asking like random search.
    struct Spy {
        inner: Box<dyn Strategy>,
        told: Arc<Mutex<Vec<usize>>>,
    }

    impl Strategy for Spy {
        fn ask(&mut self, n: usize) -> Vec<usize> {
            self.inner.ask(n)
        }
        fn tell(&mut self, trials: &[Trial]) {
            self.told
                .lock()
                .unwrap()
                .extend(trials.iter().map(|t| t.position));
            self.inner.tell(trials);
        }
    }

    #[test]
    fn every_member_hears_every_observation() {
        let s = space();
        let mut e = Ensemble::new(
            Arc::clone(&s),
            EnsembleOptions {
                members: vec!["genetic".parse().unwrap(), "mls".parse().unwrap()],
                weights: vec![],
            },
            7,
        )
        .unwrap();
        let logs: Vec<Arc<Mutex<Vec<usize>>>> = (0..3).map(|_| Arc::default()).collect();
        let mut members = std::mem::take(&mut e.members);
        members.push(build(&"random".parse().unwrap(), Arc::clone(&s), 3).unwrap());
        e.members = members
            .into_iter()
            .zip(&logs)
            .map(|(inner, told)| {
                Box::new(Spy {
                    inner,
                    told: Arc::clone(told),
                }) as Box<dyn Strategy>
            })
            .collect();
        e.round = vec![0, 1, 2];
        let run = drive(&mut e, 90, 4, |p| bowl(&s, p));
        let all: Vec<usize> = run.trials.iter().map(|t| t.position).collect();
        assert_eq!(all.len(), 90);
        for log in &logs {
            assert_eq!(*log.lock().unwrap(), all, "a member missed observations");
        }
    }

    #[test]
    fn shares_follow_the_weights() {
        let s = space();
        let spec: StrategySpec = "ensemble:members=[random+random]:weights=3+1"
            .parse()
            .unwrap();
        let mut e = Ensemble::new(
            Arc::clone(&s),
            spec.apply(EnsembleOptions::default()).unwrap(),
            1,
        )
        .unwrap();
        assert_eq!(e.round, vec![0, 0, 0, 1]);
        let first = e.ask(6);
        assert_eq!(first.len(), 6);
        assert_eq!(e.turn, 2, "the turn carries over between asks");
    }

    #[test]
    fn members_are_specs_and_errors_name_them() {
        let ok: StrategySpec =
            "ensemble:members=[annealing+genetic:popsize=8:constraint_aware=false]"
                .parse()
                .unwrap();
        let o = ok.apply(EnsembleOptions::default()).unwrap();
        assert_eq!(o.members.len(), 2);
        assert_eq!(o.members[1].options.len(), 2);
        let unknown: StrategySpec = "ensemble:members=annealing+nope".parse().unwrap();
        let opts = unknown.apply(EnsembleOptions::default()).unwrap();
        let err = Ensemble::new(space(), opts, 1).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
        let bad: StrategySpec = "ensemble:members=mls+ils:weights=1".parse().unwrap();
        let opts = bad.apply(EnsembleOptions::default()).unwrap();
        assert!(Ensemble::new(space(), opts, 1).is_err());
        let zero: StrategySpec = "ensemble:weights=0+1".parse().unwrap();
        assert!(zero.apply(EnsembleOptions::default()).is_err());
    }
}
