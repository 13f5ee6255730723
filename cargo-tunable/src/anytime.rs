//! # The anytime view: scores at several budgets
//!
//! The bench's main score stops where random search has come 95% of the way from the median to
//! the optimum (capped at `--budget`); on a cache where a few configurations are far faster than
//! the median that is a few dozen evaluations, and what a strategy does afterwards does not
//! count. A user whose kernels take a second to compile and measure stops after a few dozen
//! evaluations too, and one with a night to spare runs hundreds. So beside the main score the
//! bench prints the score *at* `k` evaluations for a few checkpoints `k` (`--anytime`, default
//! 25, 50, 100 and 220): the same score with a fixed window `t_start..=k`, no cut-off (what the
//! strategy would score if the budget were `k`), per cache, per kernel family ([`family`]) and
//! as the mean over caches beside the worst cache.

use crate::family::{families, family};
use tunable_search::sim::{ScoreContext, ScoreOptions};

/// The default checkpoints.
pub(crate) const CHECKPOINTS: [usize; 4] = [25, 50, 100, 220];

/// The score contexts at each checkpoint no larger than `options.budget`: `options` without the
/// cut-off and with the budget set to the checkpoint. `None` where the score is undefined (a
/// baseline equal to the optimum over the whole window).
pub(crate) fn contexts(
    values: &[Option<f64>],
    options: &ScoreOptions,
    checkpoints: &[usize],
) -> Vec<(usize, Option<ScoreContext>)> {
    checkpoints
        .iter()
        .filter(|&&k| k <= options.budget)
        .map(|&k| {
            let at = ScoreOptions {
                budget: k,
                cutoff: None,
                ..*options
            };
            (k, ScoreContext::with_options(values, &at).ok())
        })
        .collect()
}

/// One strategy's anytime scores: per cache stem, `(mean, standard error)` per checkpoint
/// (`NaN` where undefined).
pub(crate) struct Curve<'a> {
    /// The strategy's spec.
    pub strategy: &'a str,
    /// `(stem, scores per checkpoint)`.
    pub per_cache: Vec<(&'a str, Vec<(f64, f64)>)>,
}

/// `(mean, standard error)` over the caches `keep` selects, at checkpoint `j`.
fn mean_over(c: &Curve<'_>, j: usize, keep: impl Fn(&str) -> bool) -> Option<(f64, f64)> {
    let cells: Vec<(f64, f64)> = c
        .per_cache
        .iter()
        .filter(|(stem, _)| keep(stem))
        .map(|(_, s)| s[j])
        .collect();
    let n = cells.len() as f64;
    (n > 0.0).then(|| {
        (
            cells.iter().map(|c| c.0).sum::<f64>() / n,
            cells.iter().map(|c| c.1 * c.1).sum::<f64>().sqrt() / n,
        )
    })
}

fn slash(cells: impl Iterator<Item = Option<f64>>) -> String {
    cells
        .map(|c| c.map_or("-".to_owned(), |v| format!("{v:.2}")))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The three anytime tables: the mean and worst cache per checkpoint, then per family and per
/// cache (cells list the checkpoints in order).
pub(crate) fn markdown(checkpoints: &[usize], rows: &[Curve<'_>]) -> String {
    if checkpoints.is_empty() || rows.is_empty() {
        return String::new();
    }
    let ks = checkpoints
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" / ");
    let mut t = String::from(
        "Anytime: the score at k evaluations (window t_start..=k, no cut-off), mean over the \
         caches ± se and the worst cache:\n\n| strategy |",
    );
    for k in checkpoints {
        t += &format!(" {k} | worst at {k} |");
    }
    t += &format!("\n|---|{}\n", "---|---|".repeat(checkpoints.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for j in 0..checkpoints.len() {
            let (m, se) = mean_over(r, j, |_| true).unwrap_or((f64::NAN, f64::NAN));
            let worst = r
                .per_cache
                .iter()
                .map(|(stem, s)| (s[j].0, *stem))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let worst = worst.map_or("-".to_owned(), |(v, stem)| format!("{v:.3} ({stem})"));
            t += &format!(" {m:.3} ± {se:.3} | {worst} |");
        }
        t += "\n";
    }
    let stems: Vec<&str> = rows[0].per_cache.iter().map(|c| c.0).collect();
    let fams = families(stems.iter().copied());
    t += &format!("\nAnytime per kernel family (score at {ks} evaluations):\n\n| strategy |");
    fams.iter().for_each(|f| t += &format!(" {f} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(fams.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for f in &fams {
            let cells =
                (0..checkpoints.len()).map(|j| mean_over(r, j, |s| family(s) == *f).map(|c| c.0));
            t += &format!(" {} |", slash(cells));
        }
        t += "\n";
    }
    t += &format!("\nAnytime per cache (score at {ks} evaluations):\n\n| strategy |");
    stems.iter().for_each(|s| t += &format!(" {s} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(stems.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for (_, s) in &r.per_cache {
            t += &format!(" {} |", slash(s.iter().map(|c| Some(c.0))));
        }
        t += "\n";
    }
    t
}

/// One strategy's scores on one case (a cache or a generated landscape).
pub(crate) struct Case<'a> {
    /// The case's stem.
    pub stem: &'a str,
    /// The main (cut-off or window) score.
    pub score: f64,
    /// The score at each checkpoint (`NaN` where undefined).
    pub anytime: Vec<f64>,
}

/// A group's summary: per strategy (`(spec, cases)`), the main score's mean and worst case, how
/// many cases score below random search (< 0), and the anytime score's mean and worst case at
/// each checkpoint. Empty for a group without cases.
pub(crate) fn summary(
    title: &str,
    checkpoints: &[usize],
    rows: &[(&str, Vec<Case<'_>>)],
) -> String {
    let Some(n) = rows.first().map(|r| r.1.len()).filter(|&n| n > 0) else {
        return String::new();
    };
    let mut t = format!(
        "Summary over the {title} ({n} cases): the main score's mean, worst case and the cases \
         below random search (score < 0); the score at k evaluations, mean (worst); the cases \
         below random search at some checkpoint:\n\n| strategy | mean | worst | below random |"
    );
    for k in checkpoints {
        t += &format!(" at {k} |");
    }
    t += &format!(
        " below random at some k |\n|---|---|---|---|{}---|\n",
        "---|".repeat(checkpoints.len())
    );
    let below = |count: usize| format!("{count}/{n} ({:.0}%)", 100.0 * count as f64 / n as f64);
    for (strategy, cases) in rows {
        let mean = cases.iter().map(|c| c.score).sum::<f64>() / n as f64;
        let worst = cases
            .iter()
            .min_by(|a, b| a.score.total_cmp(&b.score))
            .map_or("-".to_owned(), |c| format!("{:.3} ({})", c.score, c.stem));
        let under = cases.iter().filter(|c| c.score < 0.0).count();
        t += &format!(
            "| {strategy} | **{mean:.3}** | {worst} | {} |",
            below(under)
        );
        for j in 0..checkpoints.len() {
            let at: Vec<f64> = cases
                .iter()
                .map(|c| c.anytime[j])
                .filter(|v| !v.is_nan())
                .collect();
            let m = at.iter().sum::<f64>() / at.len().max(1) as f64;
            let w = at.iter().copied().fold(f64::INFINITY, f64::min);
            t += &format!(" {m:.3} ({w:.3}) |");
        }
        let anywhere = cases
            .iter()
            .filter(|c| c.anytime.iter().any(|&v| v < 0.0))
            .count();
        t += &format!(" {} |\n", below(anywhere));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_are_windows_without_cutoff() {
        let values: Vec<Option<f64>> = (1..=1000).map(|i| Some(f64::from(i))).collect();
        let options = ScoreOptions {
            budget: 100,
            ..ScoreOptions::peer_results()
        };
        let ctx = contexts(&values, &options, &CHECKPOINTS);
        // 220 is above the budget; the others are windows ending at k.
        assert_eq!(ctx.iter().map(|c| c.0).collect::<Vec<_>>(), [25, 50, 100]);
        for (k, c) in &ctx {
            assert_eq!(c.as_ref().unwrap().budget(), *k);
        }
        // The main score stops at the cut-off (about 38 here), the anytime score at 100 does not.
        let main = ScoreContext::with_options(&values, &options).unwrap();
        assert!(main.budget() < 100);
    }

    #[test]
    fn tables_show_means_worst_and_families() {
        let rows = [Curve {
            strategy: "a",
            per_cache: vec![
                ("k_A", vec![(0.2, 0.1), (0.6, 0.1)]),
                ("k_B", vec![(0.4, 0.1), (0.8, 0.1)]),
                ("m_A", vec![(-0.3, 0.0), (0.1, 0.0)]),
            ],
        }];
        let t = markdown(&[25, 50], &rows);
        assert!(
            t.contains("| a | 0.100 ± 0.047 | -0.300 (m_A) | 0.500 ± 0.047 | 0.100 (m_A) |"),
            "{t}"
        );
        assert!(t.contains("| a | 0.30 / 0.70 | -0.30 / 0.10 |"), "{t}");
        assert!(
            t.contains("| a | 0.20 / 0.60 | 0.40 / 0.80 | -0.30 / 0.10 |"),
            "{t}"
        );
    }

    #[test]
    fn summaries_count_cases_below_random() {
        let case = |stem, score, anytime: Vec<f64>| Case {
            stem,
            score,
            anytime,
        };
        let rows = [(
            "a",
            vec![
                case("x_N1", 0.5, vec![0.2, 0.6]),
                case("y_N1", -0.1, vec![-0.4, f64::NAN]),
                case("z_N1", 0.2, vec![0.1, -0.05]),
                case("w_N1", 0.6, vec![0.3, 0.5]),
            ],
        )];
        let t = summary("stress landscapes", &[25, 50], &rows);
        assert!(
            t.contains("Summary over the stress landscapes (4 cases)"),
            "{t}"
        );
        assert!(
            t.contains(
                "| a | **0.300** | -0.100 (y_N1) | 1/4 (25%) | 0.050 (-0.400) | 0.350 (-0.050) | 2/4 (50%) |"
            ),
            "{t}"
        );
        assert_eq!(summary("caches", &[25], &[("a", vec![])]), "");
    }
}
