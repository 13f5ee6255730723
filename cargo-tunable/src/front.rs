//! # Two objectives: searching for the front, and the found front's hypervolume
//!
//! With `--objectives A,B` the bench scores every run by the front of what it has evaluated so
//! far: at each anytime checkpoint `k`, the hypervolume of the front of its first `k`
//! evaluations as a fraction of the true front's (every configuration's), both against the
//! reference point of [`tunable_search::pareto::reference`] (the worst value of each objective
//! on the true front plus a tenth of the front's range). 1 means the whole true front was found;
//! a run that found nothing near the front scores 0.
//!
//! A strategy named in [`MULTI_STRATEGY_NAMES`] is then the multi-objective one of that name
//! ([`build_multi`](tunable_search::strategy::build_multi)), told both objectives ([`drive`]);
//! any other strategy minimizes the first objective only, which measures how much of the
//! trade-off a single-objective search finds on its way.

use crate::family::{families, family};
use std::time::Instant;
use tunable_search::pareto;
use tunable_search::strategy::{MULTI_STRATEGY_NAMES, MultiStrategy, MultiTrial, StrategySpec};

/// Whether `spec` names a multi-objective strategy (with `--objectives`).
pub(crate) fn is_multi(spec: &StrategySpec) -> bool {
    MULTI_STRATEGY_NAMES.contains(&spec.name.as_str())
}

/// One run of a multi-objective strategy: `first` told before it asks anything (within
/// `budget`), then batches of `batch` asked and told until `budget` positions are evaluated or
/// the space is exhausted. `values` evaluates a position (`None`: failed). Returns the
/// positions in the order evaluated and the seconds spent inside the strategy.
pub(crate) fn drive(
    strategy: &mut dyn MultiStrategy,
    budget: usize,
    batch: usize,
    first: &[usize],
    mut values: impl FnMut(usize) -> Option<Vec<f64>>,
) -> (Vec<usize>, f64) {
    let mut evaluated: Vec<usize> = first.iter().copied().take(budget).collect();
    let mut seconds = 0.0;
    let mut tell = |strategy: &mut dyn MultiStrategy, positions: &[usize], seconds: &mut f64| {
        let trials: Vec<MultiTrial> = positions
            .iter()
            .map(|&p| MultiTrial {
                position: p,
                values: values(p),
            })
            .collect();
        let t = Instant::now();
        strategy.tell(&trials);
        *seconds += t.elapsed().as_secs_f64();
    };
    tell(strategy, &evaluated.clone(), &mut seconds);
    while evaluated.len() < budget {
        let t = Instant::now();
        let asked = strategy.ask(batch.max(1).min(budget - evaluated.len()));
        seconds += t.elapsed().as_secs_f64();
        if asked.is_empty() {
            break;
        }
        tell(strategy, &asked, &mut seconds);
        evaluated.extend(asked);
    }
    (evaluated, seconds)
}

/// Two minimized objectives over one space and the true front's hypervolume.
pub(crate) struct Fronts {
    points: Vec<Option<[f64; 2]>>,
    reference: [f64; 2],
    whole: f64,
}

impl Fronts {
    /// The fronts of `first` and `second` (one value per position, `None` = failed, both
    /// minimized); `None` if no configuration is valid in both or the true front has no area.
    pub(crate) fn new(first: &[Option<f64>], second: &[Option<f64>]) -> Option<Fronts> {
        let points: Vec<Option<[f64; 2]>> = first
            .iter()
            .zip(second)
            .map(|(a, b)| Some([(*a)?, (*b)?]))
            .collect();
        let valid: Vec<[f64; 2]> = points.iter().flatten().copied().collect();
        let reference = pareto::reference(&valid)?;
        let whole = pareto::hypervolume(&valid, reference);
        (whole > 0.0).then_some(Fronts {
            points,
            reference,
            whole,
        })
    }

    /// The hypervolume of the front of the first `k` positions of `run` as a fraction of the
    /// true front's.
    pub(crate) fn fraction(&self, run: &[usize], k: usize) -> f64 {
        let found: Vec<[f64; 2]> = run
            .iter()
            .take(k)
            .filter_map(|&p| self.points.get(p).copied().flatten())
            .collect();
        pareto::hypervolume(&found, self.reference) / self.whole
    }

    /// Per checkpoint: the mean fraction over `runs` and the worst run's.
    pub(crate) fn at(&self, runs: &[Vec<usize>], checkpoints: &[usize]) -> Vec<(f64, f64)> {
        checkpoints
            .iter()
            .map(|&k| {
                let f: Vec<f64> = runs.iter().map(|r| self.fraction(r, k)).collect();
                let mean = f.iter().sum::<f64>() / f.len().max(1) as f64;
                (mean, f.iter().copied().fold(f64::INFINITY, f64::min))
            })
            .collect()
    }
}

/// One strategy's fractions: per source stem, `(mean, worst run)` per checkpoint.
pub(crate) struct Row {
    /// The strategy's spec.
    pub strategy: String,
    /// `(stem, fractions per checkpoint)`.
    pub per_source: Vec<(String, Vec<(f64, f64)>)>,
}

/// The hypervolume tables: per strategy the mean over the sources, the worst source and the
/// worst run at each checkpoint; then per family and per source.
pub(crate) fn markdown(objectives: &[String], checkpoints: &[usize], rows: &[Row]) -> String {
    if rows.is_empty() || checkpoints.is_empty() {
        return String::new();
    }
    let names = objectives.join(", ");
    let ks = checkpoints
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" / ");
    let mut t = format!(
        "\nHypervolume of the found front ({names}) as a fraction of the true front's, at k \
         evaluations (the multi-objective strategies, {}, search for the front; the others \
         minimize {} only): mean over the caches and landscapes, the worst one's mean and the \
         worst run:\n\n| strategy |",
        MULTI_STRATEGY_NAMES.join(", "),
        objectives.first().map_or("", String::as_str)
    );
    for k in checkpoints {
        t += &format!(" {k} | worst at {k} | worst run at {k} |");
    }
    t += &format!("\n|---|{}\n", "---|---|---|".repeat(checkpoints.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for j in 0..checkpoints.len() {
            let n = r.per_source.len().max(1) as f64;
            let mean = r.per_source.iter().map(|s| s.1[j].0).sum::<f64>() / n;
            let worst = r
                .per_source
                .iter()
                .min_by(|a, b| a.1[j].0.total_cmp(&b.1[j].0))
                .map_or("-".to_owned(), |s| format!("{:.3} ({})", s.1[j].0, s.0));
            let run = r
                .per_source
                .iter()
                .map(|s| s.1[j].1)
                .fold(f64::INFINITY, f64::min);
            t += &format!(" {mean:.3} | {worst} | {run:.3} |");
        }
        t += "\n";
    }
    let stems: Vec<&str> = rows[0].per_source.iter().map(|s| s.0.as_str()).collect();
    let fams = families(stems.iter().copied());
    let cells = |r: &Row, keep: &dyn Fn(&str) -> bool| {
        (0..checkpoints.len())
            .map(|j| {
                let v: Vec<f64> = r
                    .per_source
                    .iter()
                    .filter(|s| keep(&s.0))
                    .map(|s| s.1[j].0)
                    .collect();
                format!("{:.2}", v.iter().sum::<f64>() / v.len().max(1) as f64)
            })
            .collect::<Vec<_>>()
            .join(" / ")
    };
    t += &format!("\nHypervolume fraction per family (at {ks} evaluations):\n\n| strategy |");
    fams.iter().for_each(|f| t += &format!(" {f} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(fams.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for f in &fams {
            t += &format!(" {} |", cells(r, &|s| family(s) == *f));
        }
        t += "\n";
    }
    t += &format!("\nHypervolume fraction per objective (at {ks} evaluations):\n\n| strategy |");
    stems.iter().for_each(|s| t += &format!(" {s} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(stems.len()));
    for r in rows {
        t += &format!("| {} |", r.strategy);
        for s in &stems {
            t += &format!(" {} |", cells(r, &|x| x == *s));
        }
        t += "\n";
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_scores_the_share_of_the_true_front_it_found() {
        // Positions 0..4: (1, 4), (2, 2), (4, 1), (3, 3), failed.
        let first = [Some(1.0), Some(2.0), Some(4.0), Some(3.0), None];
        let second = [Some(4.0), Some(2.0), Some(1.0), Some(3.0), Some(0.5)];
        let f = Fronts::new(&first, &second).unwrap();
        // Reference: (4 + 0.3, 4 + 0.3); true front area: 3.3 * 0.3 + 2.3 * 2 + 0.3 * 1.
        let whole = 3.3 * 0.3 + 2.3 * 2.0 + 0.3 * 1.0;
        assert!((f.whole - whole).abs() < 1e-9);
        assert_eq!(f.fraction(&[0, 1, 2], 3), 1.0);
        assert_eq!(f.fraction(&[4], 1), 0.0);
        let one = f.fraction(&[3, 1, 0], 1);
        assert!((one - 1.3 * 1.3 / whole).abs() < 1e-9, "{one}");
        assert!(f.fraction(&[3, 1, 0], 2) < f.fraction(&[3, 1, 0], 3));
        let at = f.at(&[vec![0, 1, 2], vec![4, 3, 1]], &[1, 3]);
        assert_eq!(at[0].1, 0.0);
        assert_eq!(at[1].0, (1.0 + f.fraction(&[4, 3, 1], 3)) / 2.0);
        assert!(Fronts::new(&[None], &[Some(1.0)]).is_none());
    }
}
