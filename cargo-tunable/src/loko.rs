//! # Leave-one-kernel-out selection
//!
//! Which strategy would we choose as a default if we had not seen a kernel? For every kernel
//! family in turn, set its caches aside, choose the strategy with the best mean score over the
//! caches of the other families, and score that choice on the held-out family. The mean of the
//! held-out scores estimates how well the selection procedure generalizes to kernels we do not
//! have. The in-sample best only says which strategy did best on these caches.
//!
//! A cache's family is its stem up to the first `_`, so `convolution_milo_A100` and
//! `convolution_RTX_3090` are both `convolution`, and `gemm_clblast_RTX_3090` is `gemm`.

/// Scores of one strategy: per cache stem, the mean score.
pub(crate) struct Scores<'a> {
    /// The strategy's spec.
    pub strategy: &'a str,
    /// `(stem, mean score)` per cache.
    pub per_cache: Vec<(&'a str, f64)>,
}

/// The family of a cache stem.
pub(crate) fn family(stem: &str) -> &str {
    stem.split('_').next().unwrap_or(stem)
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

fn mean_where<'a>(s: &Scores<'a>, keep: impl Fn(&str) -> bool) -> Option<f64> {
    let v: Vec<f64> = s
        .per_cache
        .iter()
        .filter(|(stem, _)| keep(family(stem)))
        .map(|c| c.1)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The folds of leave-one-family-out selection among `rows` (ties go to the earlier row).
pub(crate) fn folds(rows: &[Scores<'_>]) -> Vec<Fold> {
    let mut families: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.per_cache.iter().map(|c| family(c.0)))
        .collect();
    families.sort_unstable();
    families.dedup();
    if families.len() < 2 {
        return Vec::new();
    }
    let argmax = |keep: &dyn Fn(&str) -> bool| {
        rows.iter()
            .filter_map(|r| mean_where(r, keep).map(|m| (r.strategy, m)))
            .fold(None::<(&str, f64)>, |acc, (s, m)| match acc {
                Some((_, best)) if best >= m => acc,
                _ => Some((s, m)),
            })
    };
    families
        .iter()
        .filter_map(|&f| {
            let (chosen, _) = argmax(&|g| g != f)?;
            let row = rows.iter().find(|r| r.strategy == chosen)?;
            let held_out = mean_where(row, |g| g == f)?;
            let (best, best_score) = argmax(&|g| g == f)?;
            Some(Fold {
                family: f.to_owned(),
                chosen: chosen.to_owned(),
                held_out,
                best: (best.to_owned(), best_score),
            })
        })
        .collect()
}

/// The folds as a markdown table, with the mean held-out score.
pub(crate) fn markdown(folds: &[Fold]) -> String {
    let mut t = String::from(
        "Leave-one-kernel-out selection (chosen on the other families, scored on the held-out one):\n\n| held-out family | chosen | held-out score | best on the family in hindsight |\n|---|---|---|---|\n",
    );
    for f in folds {
        t += &format!(
            "| {} | {} | {:.3} | {} ({:.3}) |\n",
            f.family, f.chosen, f.held_out, f.best.0, f.best.1
        );
    }
    if !folds.is_empty() {
        let m = folds.iter().map(|f| f.held_out).sum::<f64>() / folds.len() as f64;
        t += &format!("\nMean held-out score: **{m:.3}**\n");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_folds() {
        assert_eq!(family("convolution_milo_A100"), "convolution");
        assert_eq!(family("gemm_clblast_RTX_3090"), "gemm");
        // `a` is best on gemm only, `b` everywhere else: holding out gemm chooses b, holding out
        // anything else chooses b too, but gemm's best in hindsight is a.
        let rows = [
            Scores {
                strategy: "a",
                per_cache: vec![("gemm_x", 0.9), ("conv_x", 0.1), ("pnpoly_x", 0.2)],
            },
            Scores {
                strategy: "b",
                per_cache: vec![("gemm_x", 0.5), ("conv_x", 0.6), ("pnpoly_x", 0.7)],
            },
        ];
        let f = folds(&rows);
        assert_eq!(f.len(), 3);
        let gemm = f.iter().find(|f| f.family == "gemm").unwrap();
        assert_eq!(gemm.chosen, "b");
        assert_eq!(gemm.held_out, 0.5);
        assert_eq!(gemm.best, ("a".into(), 0.9));
        // Holding out pnpoly: a has (0.9 + 0.1) / 2 = 0.5 on the rest, b (0.5 + 0.6) / 2 = 0.55.
        let p = f.iter().find(|f| f.family == "pnpoly").unwrap();
        assert_eq!(p.chosen, "b");
        assert!(markdown(&f).contains("Mean held-out score: **0.600**"));
    }
}
