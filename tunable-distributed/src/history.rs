//! # A study's history and resuming from it
//!
//! The coordinator is the only caller of its strategy's `ask` and `tell`, and records each call
//! as an [`Event`] in the database, in the same transaction as its effect: an ask with the jobs it
//! created, a tell with the results it consumed. The events of a study, in sequence order, are
//! therefore exactly the calls its strategy received, with their arguments and answers.
//!
//! Strategies are deterministic for a seed: the same calls with the same arguments give the same
//! answers. So a coordinator that starts on a study with a history (after a crash, a kill or a
//! lost database connection) builds the strategy from the study's spec and seed, and
//! [replays](StrategyState::replay) the events: it asks again with the recorded count, checks
//! that the strategy asks for exactly the recorded configurations (else the study cannot be
//! resumed soundly: [`DistError::ReplayDiverged`]), and tells the recorded results in the
//! recorded grouping and order. The strategy is then in the state it was when the last event was
//! committed, and nothing is measured again: the jobs still open keep running on the workers and
//! their results are told when they arrive.
//!
//! A call whose transaction did not commit (the coordinator died in between) is simply not in
//! the history: the replayed strategy never saw it, and the results it would have told are still
//! untold in the database, to be told by the resumed coordinator.
//!
//! Configurations are named by their Kernel Tuner key (values joined by `,`) in the history, never
//! by positions, which are internal to a space.

use crate::DistError;
use std::collections::HashMap;
use std::sync::Arc;
use tunable_search::Space;
use tunable_search::strategy::{Outcome, Strategy, Trial};

/// One recorded call into the strategy.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `ask(requested)` answered these configurations, in order.
    Ask {
        /// How many configurations were asked for.
        requested: usize,
        /// What the strategy answered (Kernel Tuner keys).
        keys: Vec<String>,
    },
    /// `tell` of these results, in order.
    Tell {
        /// Each configuration's key and outcome.
        results: Vec<(String, Outcome)>,
    },
}

/// A strategy with the bookkeeping of a study: which configurations it asked, which of them it
/// was told, how many calls it received.
pub struct StrategyState {
    strategy: Box<dyn Strategy>,
    space: Arc<Space>,
    asked: HashMap<String, usize>,
    told: usize,
    events: usize,
    exhausted: bool,
}

impl std::fmt::Debug for StrategyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrategyState")
            .field("asked", &self.asked.len())
            .field("told", &self.told)
            .field("events", &self.events)
            .field("exhausted", &self.exhausted)
            .finish_non_exhaustive()
    }
}

impl StrategyState {
    /// A fresh strategy over `space`.
    pub fn new(strategy: Box<dyn Strategy>, space: Arc<Space>) -> Self {
        StrategyState {
            strategy,
            space,
            asked: HashMap::new(),
            told: 0,
            events: 0,
            exhausted: false,
        }
    }

    /// Configurations asked so far.
    pub fn asked(&self) -> usize {
        self.asked.len()
    }

    /// Asked configurations not told yet.
    pub fn outstanding(&self) -> usize {
        self.asked.len() - self.told
    }

    /// Calls received so far (the sequence number of the next event is this plus one).
    pub fn events(&self) -> usize {
        self.events
    }

    /// Whether an ask came back empty: the space is used up.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// The space searched.
    pub fn space(&self) -> &Arc<Space> {
        &self.space
    }

    /// Asks the strategy for up to `n` configurations; answers their positions. Record the
    /// event (its keys: [`tunable_search::format::kernel_tuner::key`]) before acting on them. An empty answer
    /// while configurations are outstanding is the strategy waiting for their results: it is no
    /// event (nothing to record or replay); with none outstanding, the space is used up.
    pub fn ask(&mut self, n: usize) -> Vec<usize> {
        let positions = self.strategy.ask(n);
        if positions.is_empty() {
            if self.outstanding() > 0 {
                return positions;
            }
            self.exhausted = true;
        }
        self.events += 1;
        for &p in &positions {
            self.asked.insert(
                tunable_search::format::kernel_tuner::key(&self.space.values(p)),
                p,
            );
        }
        positions
    }

    /// Tells the strategy these results (configurations by key). `Err` names a configuration
    /// that was never asked.
    pub fn tell(&mut self, results: &[(String, Outcome)]) -> Result<(), String> {
        let trials = results
            .iter()
            .map(|(key, outcome)| {
                self.asked
                    .get(key)
                    .map(|&position| Trial {
                        position,
                        outcome: *outcome,
                    })
                    .ok_or_else(|| {
                        format!("a result for configuration {key}, which was never asked")
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.strategy.tell(&trials);
        self.told += trials.len();
        self.events += 1;
        Ok(())
    }

    /// Replays recorded events (see the module docs); `study` names the study in errors.
    pub fn replay(&mut self, study: &str, events: &[Event]) -> Result<(), DistError> {
        for event in events {
            match event {
                Event::Ask { requested, keys } => {
                    let seq = self.events as i32 + 1;
                    let got: Vec<String> = self
                        .ask(*requested)
                        .into_iter()
                        .map(|p| tunable_search::format::kernel_tuner::key(&self.space.values(p)))
                        .collect();
                    if &got != keys {
                        return Err(DistError::ReplayDiverged {
                            study: study.to_owned(),
                            event: seq,
                            expected: keys.join("; "),
                            got: got.join("; "),
                        });
                    }
                }
                Event::Tell { results } => {
                    self.tell(results).map_err(|reason| DistError::BadHistory {
                        study: study.to_owned(),
                        reason,
                    })?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::SpaceBuilder;
    use tunable_search::strategy::{STRATEGY_NAMES, StrategySpec, build};

    /// A small deterministic generator for the interleavings (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
        }
    }

    fn space() -> Arc<Space> {
        Arc::new(
            SpaceBuilder::new()
                .param("a", [1, 2, 4, 8, 16, 32])
                .param("b", [1, 2, 3, 4, 5])
                .param("c", ["x", "y"])
                .constraint("a * b <= 96")
                .build()
                .unwrap(),
        )
    }

    fn objective(space: &Space, p: usize) -> Outcome {
        let v = space.values(p);
        let (a, b) = (v[0].as_f64().unwrap(), v[1].as_f64().unwrap());
        if a == 32.0 && b == 3.0 {
            return Outcome::Failed;
        }
        Outcome::Value(
            (a.ln() - 2.0).powi(2) + (b - 3.5).abs() + if v[2] == "y".into() { 0.5 } else { 0.0 },
        )
    }

    /// Runs a strategy asynchronously (asks of random sizes, results told in random groups and
    /// orders, as workers finish), recording its events.
    fn record(name: &str, seed: u64, budget: usize, rng: &mut Rng) -> (StrategyState, Vec<Event>) {
        let space = space();
        let spec: StrategySpec = name.parse().unwrap();
        let mut state = StrategyState::new(
            build(&spec, Arc::clone(&space), seed).unwrap(),
            Arc::clone(&space),
        );
        let mut events = Vec::new();
        let mut running: Vec<usize> = Vec::new();
        while state.asked() < budget && !state.exhausted() || !running.is_empty() {
            let can_ask = state.asked() < budget && !state.exhausted();
            if can_ask && (running.is_empty() || rng.below(2) == 0) {
                let n = (1 + rng.below(4)).min(budget - state.asked());
                let got = state.ask(n);
                if got.is_empty() && !state.exhausted() {
                    // The strategy waits for results: no event.
                    continue;
                }
                events.push(Event::Ask {
                    requested: n,
                    keys: got
                        .iter()
                        .map(|&p| tunable_search::format::kernel_tuner::key(&space.values(p)))
                        .collect(),
                });
                running.extend(got);
            } else {
                let k = 1 + rng.below(running.len());
                let mut results = Vec::new();
                for _ in 0..k {
                    let p = running.swap_remove(rng.below(running.len()));
                    results.push((
                        tunable_search::format::kernel_tuner::key(&space.values(p)),
                        objective(&space, p),
                    ));
                }
                state.tell(&results).unwrap();
                events.push(Event::Tell { results });
            }
        }
        (state, events)
    }

    #[test]
    fn every_strategy_resumes_exactly_from_its_history() {
        for &name in &STRATEGY_NAMES {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let (mut original, events) = record(name, 7, 30, &mut rng);
            // Resume from every prefix of the history, as a coordinator killed there would.
            for cut in [events.len() / 3, events.len()] {
                let space = space();
                let spec: StrategySpec = name.parse().unwrap();
                let mut resumed =
                    StrategyState::new(build(&spec, Arc::clone(&space), 7).unwrap(), space);
                resumed
                    .replay("t", &events[..cut])
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(resumed.events(), cut);
                if cut == events.len() {
                    assert_eq!(resumed.asked(), original.asked(), "{name}");
                    // Both continue identically.
                    let a = original.ask(5);
                    let b = resumed.ask(5);
                    assert_eq!(a, b, "{name}: the resumed strategy asks differently");
                }
            }
        }
    }

    #[test]
    fn a_diverging_history_is_refused_with_the_configurations() {
        let mut rng = Rng(42);
        let (_, mut events) = record("random", 3, 10, &mut rng);
        if let Event::Ask { keys, .. } = &mut events[0] {
            keys[0] = "999,999,z".to_owned();
        }
        let space = space();
        let spec: StrategySpec = "random".parse().unwrap();
        let mut s = StrategyState::new(build(&spec, Arc::clone(&space), 3).unwrap(), space);
        let e = s.replay("gemm", &events).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot resume study 'gemm': replaying its history, ask 1 gave ["),
            "{e}"
        );
        assert!(e.contains("999,999,z"), "{e}");
        // A result for a configuration never asked.
        let mut s = StrategyState::new(
            build(&spec, Arc::clone(s.space()), 3).unwrap(),
            Arc::clone(s.space()),
        );
        let bad = [Event::Tell {
            results: vec![("1,1,x".to_owned(), Outcome::Value(1.0))],
        }];
        assert!(matches!(
            s.replay("gemm", &bad),
            Err(DistError::BadHistory { .. })
        ));
    }
}
