//! # Leave-one-family-out selection
//!
//! Which strategy would we choose as a default if we had not seen a kernel? For every kernel
//! family ([`family`]: `convolution_milo`, `dedispersion_milo`, `gemm_clblast`, `pnpoly`,
//! `convolution` on the shared caches) in turn:
//! 1. set its caches aside;
//! 2. choose, among the strategies run, the one with the best mean score over the caches of the
//!    other families (ties go to the strategy listed first);
//! 3. score that choice on the held-out family (the mean over its caches).
//!
//! The mean of the held-out scores estimates how well the *selection procedure* does on a
//! kernel it has not seen. The default is the strategy chosen in the most folds (a tie goes to
//! the best mean over all caches). Its in-sample score, its mean over the families with every
//! family seen, is printed beside the held-out estimate: the gap between the two is what
//! choosing on the same caches one reports on would have flattered it by.

use crate::family::{families, family};

/// Scores of one strategy: per cache stem, the mean score.
pub(crate) struct Scores<'a> {
    /// The strategy's spec.
    pub strategy: &'a str,
    /// `(stem, mean score)` per cache.
    pub per_cache: Vec<(&'a str, f64)>,
}

/// One fold: the held-out family, the strategy chosen without it, and the chosen strategy's score
/// beside the best on the held-out family in hindsight.
#[derive(Debug, PartialEq)]
pub(crate) struct Fold {
    /// The held-out family.
    pub family: String,
    /// The strategy with the best mean on the other families.
    pub chosen: String,
    /// Its mean on the held-out family.
    pub held_out: f64,
    /// The best strategy on the held-out family, and its mean there.
    pub best: (String, f64),
}

/// The selection: its folds and the default they choose.
#[derive(Debug, PartialEq)]
pub(crate) struct Selection {
    /// One fold per family.
    pub folds: Vec<Fold>,
    /// The strategy chosen in the most folds (ties: the best mean over all caches).
    pub default: String,
    /// The mean over folds of the held-out score: the procedure's estimate.
    pub held_out: f64,
    /// The default's mean over the families (each family's mean over its caches), in sample.
    pub in_sample: f64,
    /// The default's mean over all caches, in sample.
    pub in_sample_caches: f64,
}

fn mean_where(s: &Scores<'_>, keep: impl Fn(&str) -> bool) -> Option<f64> {
    let v: Vec<f64> = s
        .per_cache
        .iter()
        .filter(|(stem, _)| keep(family(stem)))
        .map(|c| c.1)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The strategy with the best mean over the caches `keep` selects (ties: the earlier row).
fn argmax<'a>(rows: &[Scores<'a>], keep: &dyn Fn(&str) -> bool) -> Option<(&'a str, f64)> {
    rows.iter()
        .filter_map(|r| mean_where(r, keep).map(|m| (r.strategy, m)))
        .fold(None, |acc, (s, m)| match acc {
            Some((_, best)) if best >= m => acc,
            _ => Some((s, m)),
        })
}

/// Leave-one-family-out selection among `rows`; `None` with fewer than two families.
pub(crate) fn select(rows: &[Scores<'_>]) -> Option<Selection> {
    let fams = families(rows.iter().flat_map(|r| r.per_cache.iter().map(|c| c.0)));
    if fams.len() < 2 {
        return None;
    }
    let folds: Vec<Fold> = fams
        .iter()
        .filter_map(|&f| {
            let (chosen, _) = argmax(rows, &|g| g != f)?;
            let row = rows.iter().find(|r| r.strategy == chosen)?;
            let held_out = mean_where(row, |g| g == f)?;
            let (best, best_score) = argmax(rows, &|g| g == f)?;
            Some(Fold {
                family: f.to_owned(),
                chosen: chosen.to_owned(),
                held_out,
                best: (best.to_owned(), best_score),
            })
        })
        .collect();
    let votes = |s: &str| folds.iter().filter(|f| f.chosen == s).count();
    let overall = |s: &str| {
        rows.iter()
            .find(|r| r.strategy == s)
            .and_then(|r| mean_where(r, |_| true))
            .unwrap_or(f64::NEG_INFINITY)
    };
    let default = folds
        .iter()
        .map(|f| f.chosen.as_str())
        .fold(None::<&str>, |acc, s| match acc {
            Some(a) if (votes(a), overall(a)) >= (votes(s), overall(s)) => acc,
            _ => Some(s),
        })?
        .to_owned();
    let row = rows.iter().find(|r| r.strategy == default)?;
    let per_family: Vec<f64> = fams
        .iter()
        .filter_map(|&f| mean_where(row, |g| g == f))
        .collect();
    Some(Selection {
        held_out: folds.iter().map(|f| f.held_out).sum::<f64>() / folds.len() as f64,
        in_sample: per_family.iter().sum::<f64>() / per_family.len() as f64,
        in_sample_caches: overall(&default),
        default,
        folds,
    })
}

/// The selection as a markdown table with the held-out and in-sample summary.
pub(crate) fn markdown(selection: Option<&Selection>) -> String {
    let Some(s) = selection else {
        return "Leave-one-family-out selection needs caches of at least two kernel families.\n"
            .to_owned();
    };
    let mut t = String::from(
        "Leave-one-family-out selection (chosen on the other families, scored on the held-out \
         one):\n\n| held-out family | chosen | held-out score | best on the family in hindsight |\n\
         |---|---|---|---|\n",
    );
    for f in &s.folds {
        t += &format!(
            "| {} | {} | {:.3} | {} ({:.3}) |\n",
            f.family, f.chosen, f.held_out, f.best.0, f.best.1
        );
    }
    t += &format!(
        "\nMean held-out score: **{:.3}**. Default (chosen in {} of {} folds): **{}**, in-sample \
         mean over the families {:.3} (over the caches {:.3}).\n",
        s.held_out,
        s.folds.iter().filter(|f| f.chosen == s.default).count(),
        s.folds.len(),
        s.default,
        s.in_sample,
        s.in_sample_caches
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_default_and_summary() {
        // `a` is best on gemm only, `b` everywhere else: every fold chooses b, but gemm's best in
        // hindsight is a.
        let rows = [
            Scores {
                strategy: "a",
                per_cache: vec![("gemm_X", 0.9), ("conv_X", 0.1), ("pnpoly_X", 0.2)],
            },
            Scores {
                strategy: "b",
                per_cache: vec![
                    ("gemm_X", 0.5),
                    ("conv_X", 0.6),
                    ("conv_Y", 0.8),
                    ("pnpoly_X", 0.7),
                ],
            },
        ];
        let s = select(&rows).unwrap();
        assert_eq!(s.folds.len(), 3);
        let gemm = s.folds.iter().find(|f| f.family == "gemm").unwrap();
        assert_eq!(gemm.chosen, "b");
        assert_eq!(gemm.held_out, 0.5);
        assert_eq!(gemm.best, ("a".into(), 0.9));
        // Holding out pnpoly: a has (0.9 + 0.1) / 2 = 0.5 on the rest, b 1.9 / 3.
        let p = s.folds.iter().find(|f| f.family == "pnpoly").unwrap();
        assert_eq!(p.chosen, "b");
        assert_eq!(s.default, "b");
        // Held out: gemm 0.5, conv 0.7, pnpoly 0.7; in sample over families the same, over caches
        // 2.6 / 4.
        assert!((s.held_out - 1.9 / 3.0).abs() < 1e-12);
        assert!((s.in_sample - 1.9 / 3.0).abs() < 1e-12);
        assert!((s.in_sample_caches - 0.65).abs() < 1e-12);
        let t = markdown(Some(&s));
        assert!(t.contains("Mean held-out score: **0.633**"), "{t}");
        assert!(t.contains("chosen in 3 of 3 folds): **b**"), "{t}");
        assert!(select(&rows[..0]).is_none());
    }

    #[test]
    fn the_default_is_the_most_chosen() {
        // Holding out x chooses c (0.75 on y and z against d's 0.675), which is weak on x;
        // holding out y or z chooses d. d is chosen twice and becomes the default.
        let rows = [
            Scores {
                strategy: "c",
                per_cache: vec![("x_A", 0.2), ("y_A", 0.9), ("z_A", 0.6)],
            },
            Scores {
                strategy: "d",
                per_cache: vec![("x_A", 0.9), ("y_A", 0.8), ("z_A", 0.55)],
            },
        ];
        let s = select(&rows).unwrap();
        let chosen: Vec<&str> = s.folds.iter().map(|f| f.chosen.as_str()).collect();
        assert_eq!(chosen, ["c", "d", "d"]);
        assert_eq!(s.default, "d");
        assert!((s.held_out - (0.2 + 0.8 + 0.55) / 3.0).abs() < 1e-12);
    }
}
