//! # Distance to the optimum, against the measurements' own noise
//!
//! The methodology score ranks strategies, but it does not say whether a difference matters on
//! the device: on some kernels every strategy, random search included, ends within a fraction of
//! a percent of the optimum, far less than the run time varies from one measurement to the next.
//! These tables put the two side by side. For every cache and strategy: how far above the optimum
//! the best configuration a run found lies, in percent, averaged over the runs. For every cache:
//! its *timing noise*, the median relative standard deviation of the repeated measurements
//! (Kernel Tuner's `times`) of its fastest 1% of valid configurations. Per kernel family (as in
//! [`family`]), a strategy is flagged when its mean distance exceeds the
//! family's best strategy's by more than the family's mean timing noise.

use crate::family::family;
use tunable_search::sim::KernelTunerCache;

/// The fraction of the fastest valid configurations whose measurement spread is the noise.
const FASTEST: f64 = 0.01;

/// The median relative standard deviation of the repeated measurements of the fastest 1% (at
/// least one) of the cache's valid configurations that record repeats; `None` if none does.
pub(crate) fn timing_noise(cache: &KernelTunerCache) -> Option<f64> {
    let mut valid: Vec<(f64, Option<f64>)> = cache
        .entries
        .iter()
        .filter_map(|e| e.observation.value().map(|v| (v, e.spread())))
        .collect();
    valid.sort_by(|a, b| a.0.total_cmp(&b.0));
    let take = ((valid.len() as f64 * FASTEST).ceil() as usize).max(1);
    let mut spreads: Vec<f64> = valid.iter().take(take).filter_map(|v| v.1).collect();
    if spreads.is_empty() {
        return None;
    }
    spreads.sort_by(f64::total_cmp);
    let n = spreads.len();
    Some(if n % 2 == 1 {
        spreads[n / 2]
    } else {
        (spreads[n / 2 - 1] + spreads[n / 2]) / 2.0
    })
}

/// One objective's inputs: its stem, optimum, timing noise, and per strategy (in the order of
/// `strategies`) the best value of each run (`+inf` for a run that found nothing valid).
pub(crate) struct Source<'a> {
    /// The cache's stem.
    pub stem: &'a str,
    /// The best valid value.
    pub optimum: f64,
    /// See [`timing_noise`].
    pub noise: Option<f64>,
    /// Per strategy, per run: the best value found.
    pub bests: &'a [Vec<f64>],
}

/// The mean over runs of how far above `optimum` each run's best lies, in percent; `None` when
/// the percentage means nothing (an optimum that is not positive, or a run without a valid
/// result).
fn mean_gap(optimum: f64, bests: &[f64]) -> Option<f64> {
    if optimum.is_nan()
        || optimum <= 0.0
        || bests.is_empty()
        || bests.iter().any(|b| !b.is_finite())
    {
        return None;
    }
    Some(100.0 * bests.iter().map(|b| b / optimum - 1.0).sum::<f64>() / bests.len() as f64)
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
}

/// The per-cache and per-family tables, rows in the order of `order` (names from `strategies`).
pub(crate) fn markdown(strategies: &[String], order: &[&str], sources: &[Source<'_>]) -> String {
    let row_of = |name: &str| strategies.iter().position(|s| s == name);
    let gaps: Vec<Vec<Option<f64>>> = (0..strategies.len())
        .map(|k| {
            sources
                .iter()
                .map(|s| mean_gap(s.optimum, &s.bests[k]))
                .collect()
        })
        .collect();
    let mut t = String::from(
        "\nBest configuration found, mean % above the optimum (last row: the timing noise, the \
         median relative standard deviation in % of the repeated measurements of the fastest 1% \
         of configurations):\n\n| strategy |",
    );
    sources.iter().for_each(|s| t += &format!(" {} |", s.stem));
    t += &format!("\n|---|{}\n", "---|".repeat(sources.len()));
    for name in order {
        let Some(k) = row_of(name) else { continue };
        t += &format!("| {name} |");
        gaps[k]
            .iter()
            .for_each(|g| t += &format!(" {} |", cell(*g, 2)));
        t += "\n";
    }
    t += "| *timing noise* |";
    sources
        .iter()
        .for_each(|s| t += &format!(" {} |", cell(s.noise.map(|n| 100.0 * n), 2)));
    t += "\n";

    // Per family: the mean over its caches (only when every cache has a figure).
    let mut families: Vec<&str> = Vec::new();
    for s in sources {
        if !families.contains(&family(s.stem)) {
            families.push(family(s.stem));
        }
    }
    let in_family = |f: &str| -> Vec<usize> {
        (0..sources.len())
            .filter(|&i| family(sources[i].stem) == f)
            .collect()
    };
    let mean_of = |xs: Vec<Option<f64>>| -> Option<f64> {
        let n = xs.len() as f64;
        xs.into_iter()
            .sum::<Option<f64>>()
            .filter(|_| n > 0.0)
            .map(|s| s / n)
    };
    let fam_gap: Vec<Vec<Option<f64>>> = gaps
        .iter()
        .map(|g| {
            families
                .iter()
                .map(|f| mean_of(in_family(f).into_iter().map(|i| g[i]).collect()))
                .collect()
        })
        .collect();
    let fam_noise: Vec<Option<f64>> = families
        .iter()
        .map(|f| mean_of(in_family(f).into_iter().map(|i| sources[i].noise).collect()))
        .collect();
    let fam_best: Vec<Option<f64>> = (0..families.len())
        .map(|j| fam_gap.iter().filter_map(|g| g[j]).min_by(f64::total_cmp))
        .collect();
    t += "\nPer kernel family, mean % above the optimum (* : more than the family's timing noise \
          above its best strategy):\n\n| strategy |";
    families.iter().for_each(|f| t += &format!(" {f} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(families.len()));
    for name in order {
        let Some(k) = row_of(name) else { continue };
        t += &format!("| {name} |");
        for j in 0..families.len() {
            let flag = match (fam_gap[k][j], fam_best[j], fam_noise[j]) {
                (Some(g), Some(b), Some(n)) if g - b > 100.0 * n => " *",
                _ => "",
            };
            t += &format!(" {}{flag} |", cell(fam_gap[k][j], 2));
        }
        t += "\n";
    }
    t += "| *timing noise* |";
    fam_noise
        .iter()
        .for_each(|n| t += &format!(" {} |", cell(n.map(|n| 100.0 * n), 2)));
    t + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn noise_is_the_median_spread_of_the_fastest() {
        // 200 valid configurations: the fastest 1% are the two fastest (spreads 0.01 and 0.03).
        let mut records: Vec<String> = (0..200)
            .map(|i| {
                let t = 10.0 + f64::from(i);
                let d = if i == 0 {
                    0.1
                } else if i == 1 {
                    0.3
                } else {
                    5.0
                };
                format!(
                    "\"{i}\": {{\"time\": {t}, \"times\": [{}, {}]}}",
                    t - d,
                    t + d
                )
            })
            .collect();
        records.push("\"200\": {\"time\": \"RuntimeFailedConfig\"}".to_owned());
        let values: Vec<String> = (0..=200).map(|i| i.to_string()).collect();
        let text = format!(
            "{{\"tune_params_keys\": [\"x\"], \"tune_params\": {{\"x\": [{}]}}, \"cache\": {{{}}}}}",
            values.join(", "),
            records.join(", ")
        );
        let cache = KernelTunerCache::from_json_text(&text, Path::new("t.json")).unwrap();
        let noise = timing_noise(&cache).unwrap();
        let expect = (0.1 * 2f64.sqrt() / 10.0 + 0.3 * 2f64.sqrt() / 11.0) / 2.0;
        assert!((noise - expect).abs() < 1e-12, "{noise} vs {expect}");
    }

    #[test]
    fn tables_flag_gaps_beyond_the_noise() {
        let strategies = vec!["a".to_owned(), "b".to_owned()];
        // Family k: noise 1%; a is 0.5% and 1% above, b 3% and 3%: b is flagged, a is not.
        let b1 = [vec![100.5, 100.5], vec![103.0, 103.0]];
        let b2 = [vec![101.0], vec![103.0]];
        // Family m: no noise known, nothing flagged; a run without a valid result gives "-".
        let b3 = [vec![f64::INFINITY], vec![110.0]];
        let sources = [
            Source {
                stem: "k_1",
                optimum: 100.0,
                noise: Some(0.01),
                bests: &b1,
            },
            Source {
                stem: "k_2",
                optimum: 100.0,
                noise: Some(0.01),
                bests: &b2,
            },
            Source {
                stem: "m_1",
                optimum: 100.0,
                noise: None,
                bests: &b3,
            },
        ];
        let t = markdown(&strategies, &["b", "a"], &sources);
        assert!(t.contains("| b | 3.00 | 3.00 | 10.00 |"), "{t}");
        assert!(t.contains("| a | 0.50 | 1.00 | - |"), "{t}");
        assert!(t.contains("| *timing noise* | 1.00 | 1.00 | - |"), "{t}");
        assert!(t.contains("| b | 3.00 * | 10.00 |"), "{t}");
        assert!(t.contains("| a | 0.75 | - |"), "{t}");
        let b_row = t.find("| b |").unwrap();
        assert!(
            b_row < t.find("| a |").unwrap(),
            "rows follow the given order"
        );
    }
}
