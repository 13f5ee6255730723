//! Quality of Bayesian optimization (`bayes`) on real brute-forced GPU caches: with fixed seeds
//! the default BO's mean methodology score is above the exact random-search baseline (0) by
//! three standard errors on GEMM (17,956 configurations) and on pnpoly (where some
//! configurations fail), one configuration at a time and in batches of 4.
//!
//! Per-cache score tables over all the shared caches are a `cargo tunable bench` run, not a
//! test: see `docs/notes/quality-recipes.md`.

use tunable_search::sim::{Replay, ScoreContext};
use tunable_search::strategy::{self, Outcome, StrategySpec, drive};

mod common;
use common::replay;

const BUDGET: usize = 220;

/// One run: the objective values of the unique evaluations in order (`None` = failed).
fn run(spec: &StrategySpec, replay: &Replay, seed: u64, batch: usize) -> Vec<Option<f64>> {
    let mut s = strategy::build(spec, replay.shared_space(), seed).unwrap();
    let values = replay.values();
    let rec = drive(s.as_mut(), BUDGET, batch, |p| match values[p] {
        Some(v) => Outcome::Value(v),
        None => Outcome::Failed,
    });
    rec.trials.iter().map(|t| values[t.position]).collect()
}

#[test]
fn bayes_beats_random_search() {
    const RUNS: u64 = 8;
    for cache in ["gemm_clblast_RTX_3090", "pnpoly_RTX_3090"] {
        let replay = replay(cache);
        let ctx = ScoreContext::new(replay.values(), BUDGET).unwrap();
        for batch in [1, 4] {
            let spec: StrategySpec = "bayes".parse().unwrap();
            let runs: Vec<Vec<Option<f64>>> = (1..=RUNS)
                .map(|seed| run(&spec, &replay, seed, batch))
                .collect();
            assert!(runs.iter().all(|r| r.len() == BUDGET));
            let (mean, se) = ctx.score_runs(&runs);
            println!("bayes on {cache} (batch {batch}): score {mean:+.3} +- {se:.3}");
            // Random search's expected score is exactly 0: demand a clear margin above it.
            assert!(
                mean > 3.0 * se && se > 0.0,
                "bayes on {cache} (batch {batch}): {mean:.3} +- {se:.3}"
            );
        }
    }
}
