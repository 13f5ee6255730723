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

/// An objective over a space's positions.
type Objective = Box<dyn Fn(&Space, usize) -> Outcome>;

/// A smooth bowl on a constrained space, `(space, objective)`, by name: `climb` (local search's,
/// optimum at x = 5, y = 8, z = 0), `chain` (annealing's, optimum at x = 11, y = 4), `abc` (the
/// population strategies', optimum at a = 5, b = 8, c = 0) and `abc_failing` (the same space,
/// another bowl, with hidden failures).
fn bowl(name: &str) -> (Arc<Space>, Objective) {
    let d = |a: u16, b: i32| f64::from((i32::from(a) - b).pow(2));
    let abc = || {
        SpaceBuilder::new()
            .param("a", 0..12)
            .param("b", 0..12)
            .param("c", 0..4)
            .constraint("a + b <= 14 and (a + c) % 3 != 1")
    };
    let (builder, f): (SpaceBuilder, Objective) = match name {
        "climb" => (
            SpaceBuilder::new()
                .param("x", 0..12)
                .param("y", [1, 2, 4, 8, 16])
                .param("z", [0, 1, 2])
                .constraint("x * y <= 64 and (z == 0 or x % 2 == 0)"),
            Box::new(move |s: &Space, p| {
                let i = s.indices(p);
                Outcome::Value(1.0 + d(i[0], 5) + d(i[1], 3) + d(i[2], 0))
            }),
        ),
        "chain" => (
            SpaceBuilder::new()
                .param("x", 0..16)
                .param("y", 0..16)
                .constraint("x + y <= 24"),
            Box::new(move |s: &Space, p| {
                let i = s.indices(p);
                Outcome::Value(1.0 + d(i[0], 11) + d(i[1], 4))
            }),
        ),
        "abc" => (
            abc(),
            Box::new(move |s: &Space, p| {
                let i = s.indices(p);
                Outcome::Value(d(i[0], 5) + d(i[1], 8) + f64::from(i[2]))
            }),
        ),
        _ => (
            abc(),
            Box::new(move |s: &Space, p| {
                let i = s.indices(p);
                if (i[0] * 7 + i[1]) % 11 == 3 {
                    return Outcome::Failed;
                }
                Outcome::Value(1.0 + d(i[0], 4) + d(i[1], 7) + d(i[2], 2))
            }),
        ),
    };
    (Arc::new(builder.build().unwrap()), f)
}

/// Random search finds the optimum of the `abc` bowl (288 configurations) within 100 evaluations
/// in about 35% of the runs; the population strategies must in at least 8 of 10.
#[test]
fn every_strategy_finds_the_optimum_of_a_bowl() {
    // (spec, bowl, budget, batch, seeds, runs that must find the optimum)
    type Case = (
        String,
        &'static str,
        usize,
        usize,
        std::ops::Range<u64>,
        usize,
    );
    let mut cases: Vec<Case> = Vec::new();
    for spec in [
        "mls",
        "ils",
        "mls:improvement=best",
        "ils:neighbour=hamming:sample=1",
        "mls:neighbour=adjacent",
        "mls:constraint_aware=false",
        "ils:constraint_aware=false",
    ] {
        cases.push((spec.into(), "climb", 40, 1, 0..5, 5));
    }
    for spec in [
        "annealing",
        "annealing:restart=random:hamming=1",
        "annealing:hamming=0:sample=1",
        "annealing:constraint_aware=false",
    ] {
        cases.push((spec.into(), "chain", 80, 1, 0..5, 5));
    }
    for method in [
        "best1bin",
        "rand1exp",
        "currenttobest1bin",
        "randtobest1bin",
        "best2bin",
        "rand2bin",
    ] {
        cases.push((format!("diff_evo:method={method}"), "abc", 100, 2, 0..10, 8));
    }
    for spec in [
        "pso",
        "pso:constraint_aware=false",
        "firefly",
        "firefly:constraint_aware=false",
    ] {
        cases.push((spec.into(), "abc", 100, 3, 0..10, 8));
    }
    for spec in ["genetic", "genetic:constraint_aware=false"] {
        cases.push((spec.into(), "abc", 100, 1, 0..10, 8));
    }
    cases.push(("ensemble".into(), "abc_failing", 60, 1, 0..10, 8));
    for (spec, name, budget, batch, seeds, need) in cases {
        let (space, f) = bowl(name);
        let opt = (0..space.len())
            .min_by(|&a, &b| f(&space, a).cost().total_cmp(&f(&space, b).cost()))
            .unwrap();
        let runs = seeds.end - seeds.start;
        let hits = seeds
            .filter(|&seed| {
                let mut s =
                    strategy::build(&spec.parse().unwrap(), Arc::clone(&space), seed).unwrap();
                let run = drive(s.as_mut(), budget, batch, |p| f(&space, p));
                run.trials.iter().any(|t| t.position == opt)
            })
            .count();
        assert!(
            hits >= need,
            "{spec} found the optimum in {hits} of {runs} runs of {budget} evaluations \
             ({} configurations)",
            space.len()
        );
    }
}
