//! `auto`, the default strategy, against random search on a real brute-forced GPU cache.
//!
//! With fixed seeds, on `convolution_RTX_3090` (6,768 configurations, 23% of them failing), the
//! runs of `auto` must beat the exact expected best-so-far of random search, which our scorer
//! computes from every configuration's value: at 25 evaluations (the window `t_start..=25`),
//! and over the cut-off window the methodology scores (up to where random search has come 95%
//! of the way from the median to the optimum, capped at 220 evaluations). Both by three standard
//! errors of the score, and the mean best found after 25 evaluations and at the cut-off must
//! lie below random search's expected best there.

use tunable_search::sim::{ScoreContext, ScoreOptions};
use tunable_search::strategy::{self, Outcome, drive};

mod common;
use common::replay;

const CACHE: &str = "convolution_RTX_3090";
const RUNS: u64 = 10;

#[test]
fn auto_beats_random_search_early_and_at_the_cutoff() {
    let replay = replay(CACHE);
    let values = replay.values();
    let runs: Vec<Vec<Option<f64>>> = (1..=RUNS)
        .map(|seed| {
            let spec = "auto".parse().unwrap();
            let mut s = strategy::build(&spec, replay.shared_space(), seed).unwrap();
            let rec = drive(s.as_mut(), 220, 1, |p| match values[p] {
                Some(v) => Outcome::Value(v),
                None => Outcome::Failed,
            });
            rec.trials.iter().map(|t| values[t.position]).collect()
        })
        .collect();
    let cutoff = ScoreContext::with_options(values, &ScoreOptions::peer_results()).unwrap();
    let early = ScoreContext::with_options(
        values,
        &ScoreOptions {
            budget: 25,
            cutoff: None,
            ..ScoreOptions::peer_results()
        },
    )
    .unwrap();
    for (name, ctx) in [("25 evaluations", &early), ("the cut-off", &cutoff)] {
        let (mean, se) = ctx.score_runs(&runs);
        println!(
            "auto on {CACHE} at {name} (t = {}..={}): score {mean:+.3} +- {se:.3}",
            ctx.t_start(),
            ctx.budget()
        );
        assert!(mean > 3.0 * se && se > 0.0, "{name}: {mean:.3} +- {se:.3}");
        // The same in the objective's units: the mean best found at the end of the window
        // against random search's exact expected best there.
        let t = ctx.budget();
        let best: f64 = runs.iter().map(|r| ctx.best_so_far(r)[t - 1]).sum::<f64>() / RUNS as f64;
        let random = ctx.baseline()[t - 1];
        println!("  mean best after {t}: {best:.4} against random search's {random:.4}");
        assert!(best < random, "{name}: {best} is not below {random}");
    }
}
