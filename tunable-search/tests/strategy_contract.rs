//! The ask/tell contract, for every strategy and both forms: every asked position is valid, none
//! is asked twice, the whole budget is spent, and a seed fixes the run.

use proptest::prelude::*;
use std::sync::Arc;
use tunable_search::strategy::{self, Outcome, STRATEGY_NAMES, StrategySpec, drive};
use tunable_search::{Space, SpaceBuilder};

fn space() -> Arc<Space> {
    Arc::new(
        SpaceBuilder::new()
            .param("block_size_x", [16, 32, 64, 128, 256])
            .param("block_size_y", [1, 2, 4, 8])
            .param("tile", [1, 2, 3, 4])
            .param("unroll", [0, 1])
            .constraint("32 <= block_size_x * block_size_y <= 512")
            .constraint("unroll == 0 or tile > 1")
            .build()
            .unwrap(),
    )
}

/// A bumpy synthetic objective with hidden failures.
fn objective(space: &Space, pos: usize) -> Outcome {
    let i = space.indices(pos);
    if (i[0] + i[2]) % 5 == 4 {
        return Outcome::Failed;
    }
    Outcome::Value(
        1.0 + f64::from((i[0] as i32 - 3).pow(2) + (i[1] as i32 - 1).pow(2))
            + f64::from(i[2] ^ i[3]) * 0.7,
    )
}

fn specs() -> Vec<String> {
    let mut v: Vec<String> = STRATEGY_NAMES.iter().map(|s| s.to_string()).collect();
    for s in [
        "genetic",
        "diff_evo",
        "pso",
        "firefly",
        "annealing",
        "mls",
        "ils",
    ] {
        v.push(format!("{s}:constraint_aware=false"));
    }
    // Ensembles whose members overlap (the same strategy twice), with weights, and nested.
    v.push("ensemble:members=mls+mls".into());
    v.push("ensemble:members=[genetic+annealing:constraint_aware=false]:weights=1+3".into());
    v.push("ensemble:members=[random+ensemble:members=[pso+exhaustive]]".into());
    // Online portfolios: a member that runs dry (exhaustive) and overlapping members.
    v.push("portfolio:members=[exhaustive+mls+mls]:floor=0.2:decay=0.5".into());
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_strategy_keeps_the_contract(seed in any::<u64>(), budget in 1usize..140, batch in 1usize..6) {
        let space = space();
        for spec in specs() {
            let spec: StrategySpec = spec.parse().unwrap();
            let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
            let run = drive(s.as_mut(), budget, batch, |p| objective(&space, p));
            prop_assert_eq!(run.trials.len(), budget.min(space.len()), "{}", spec);
            let mut seen = std::collections::HashSet::new();
            for t in &run.trials {
                prop_assert!(t.position < space.len());
                prop_assert!(seen.insert(t.position), "{} asked {} twice", spec, t.position);
            }
        }
    }
}

#[test]
fn runs_are_deterministic_for_a_seed_and_exhaust_the_space() {
    let space = space();
    for spec in specs() {
        let spec: StrategySpec = spec.parse().unwrap();
        let run = |seed| {
            let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
            drive(s.as_mut(), space.len() + 5, 3, |p| objective(&space, p)).trials
        };
        let a = run(7);
        assert_eq!(a, run(7), "{spec}");
        assert_eq!(
            a.len(),
            space.len(),
            "{spec} must be able to spend any budget"
        );
    }
}

#[test]
fn bad_specs_are_clear_errors() {
    let space = space();
    let err = |s: &str| {
        strategy::build(&s.parse().unwrap(), Arc::clone(&space), 1)
            .err()
            .unwrap()
            .to_string()
    };
    assert!(err("genetc").contains("unknown strategy 'genetc'"));
    assert!(err("genetic:popsiz=3").contains("has no option 'popsiz'"));
    assert!(err("genetic:popsize=1").contains("popsize=1"));
    assert!(err("random:x=1").contains("has no option 'x'"));
}
