//! `auto`, the default strategy, against random search on generated stress landscapes
//! (`sim::stress`) of the kinds that are hardest for a model-based search: flat with alignment
//! effects, heavy-tailed with a tiny good region, and a small space where one level of a
//! few-valued parameter is required.
//!
//! With fixed seeds, the runs of `auto` must beat the exact expected best-so-far of random
//! search, which the scorer computes from every configuration's true time: at 25 evaluations
//! (the window `t_start..=25`) and over the cut-off window (up to where random search has come
//! 95% of the way from the median to the optimum, capped at 220 evaluations), both by three
//! standard errors of the score; and the mean best found at the end of each window must lie
//! below random search's expected best there.

use tunable_search::sim::stress::{Landscape, StressSpec};
use tunable_search::sim::{ScoreContext, ScoreOptions};
use tunable_search::strategy::{self, Outcome, drive};

const RUNS: u64 = 20;

fn auto_beats_random_search(landscape: &str) {
    let spec: StressSpec = landscape.parse().unwrap();
    let land = Landscape::build(&spec).unwrap();
    let values = land.replay().values();
    let runs: Vec<Vec<Option<f64>>> = (1..=RUNS)
        .map(|seed| {
            let auto = "auto".parse().unwrap();
            let mut s = strategy::build(&auto, land.replay().shared_space(), seed).unwrap();
            let rec = drive(s.as_mut(), 220, 1, |p| {
                land.measure(p, seed)
                    .map_or(Outcome::Failed, Outcome::Value)
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
    let mut failures = Vec::new();
    for (name, ctx) in [("25 evaluations", &early), ("the cut-off", &cutoff)] {
        let (mean, se) = ctx.score_runs(&runs);
        let t = ctx.budget();
        let best: f64 = runs.iter().map(|r| ctx.best_so_far(r)[t - 1]).sum::<f64>() / RUNS as f64;
        let random = ctx.baseline()[t - 1];
        println!(
            "auto on {} at {name} (t = {}..={t}): score {mean:+.3} +- {se:.3}; mean best {best:.4} \
             against random search's {random:.4}",
            land.name(),
            ctx.t_start(),
        );
        if !(mean > 3.0 * se && se > 0.0 && best < random) {
            failures.push(format!(
                "{name}: score {mean:+.3} +- {se:.3}, best {best} vs {random}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}: {failures:?}", land.name());
}

/// Plain `bayes` does not beat random search here; `auto` does through its second model, the
/// one with alignment coordinates.
#[test]
fn auto_beats_random_search_on_a_flat_periodic_landscape() {
    auto_beats_random_search("flat_periodic:n=5000:d=5");
}

#[test]
fn auto_beats_random_search_on_a_heavy_tailed_landscape() {
    auto_beats_random_search("heavy_tail:n=20000:d=7");
}

/// Every configuration near the optimum has one level of a few-valued
/// parameter (which one, and which level, are seeded), and the trend at the other levels
/// points away from it.
#[test]
fn auto_beats_random_search_where_one_level_is_required() {
    auto_beats_random_search("required:n=210:d=5");
}
