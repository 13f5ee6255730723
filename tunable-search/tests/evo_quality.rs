//! Quality of the evolutionary strategies (differential evolution, PSO, firefly) on real
//! brute-forced GPU caches: with fixed seeds (20 runs each, budget 220), each must beat the exact
//! random-search baseline by a clear margin (mean methodology score above three standard errors)
//! on the GEMM space (the 17,956 configurations of the cache out of 82,944) and on the
//! dedispersion space built from its T1 constraints.
//!
//! Per-cache score tables over all the shared caches, and the strategies' cost over a whole
//! space, are `cargo tunable bench` runs, not tests: see `docs/notes/quality-recipes.md`.

use std::sync::Arc;
use tunable_search::Space;
use tunable_search::sim::{Replay, ScoreContext};
use tunable_search::strategy::{self, Outcome, StrategySpec, drive};

mod common;
use common::replay;

const BUDGET: usize = 220;

/// One run: the objective values of the unique evaluations in order.
fn run(spec: &StrategySpec, replay: &Replay, seed: u64) -> Vec<Option<f64>> {
    let space: Arc<Space> = replay.shared_space();
    let mut s = strategy::build(spec, space, seed).unwrap();
    let values = replay.values();
    let rec = drive(s.as_mut(), BUDGET, 1, |p| match values[p] {
        Some(v) => Outcome::Value(v),
        None => Outcome::Failed,
    });
    rec.trials.iter().map(|t| values[t.position]).collect()
}

/// Mean score and its standard error over `seeds`.
fn score(
    spec: &StrategySpec,
    replay: &Replay,
    ctx: &ScoreContext,
    seeds: impl Iterator<Item = u64>,
) -> (f64, f64) {
    let runs: Vec<Vec<Option<f64>>> = seeds.map(|seed| run(spec, replay, seed)).collect();
    ctx.score_runs(&runs)
}

#[test]
fn evolutionary_strategies_beat_random_search() {
    const RUNS: u64 = 20;
    let caches = ["gemm_clblast_RTX_3090", "dedispersion_milo_A100"];
    let replays: Vec<Replay> = caches.iter().map(|c| replay(c)).collect();
    let specs = ["diff_evo", "pso", "firefly"];
    let results: Vec<(String, f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = specs
            .iter()
            .flat_map(|spec| caches.iter().zip(&replays).map(move |(c, r)| (spec, c, r)))
            .map(|(spec, cache, replay)| {
                scope.spawn(move || {
                    let spec: StrategySpec = spec.parse().unwrap();
                    let ctx = ScoreContext::new(replay.values(), BUDGET).unwrap();
                    let (mean, se) = score(&spec, replay, &ctx, 1..=RUNS);
                    (format!("{spec} on {cache}"), mean, se)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (what, mean, se) in &results {
        println!("{what}: score {mean:+.3} +- {se:.3} ({RUNS} runs, budget {BUDGET})");
    }
    for (what, mean, se) in results {
        // Random search's expected score is exactly 0: demand a clear margin above it.
        assert!(
            mean > 3.0 * se,
            "{what}: mean score {mean:.3} is not clearly above random search (SE {se:.3})"
        );
    }
}
