//! # Kernel families, their scores, and which differences are more than noise
//!
//! A cache is named `<kernel>_<GPU>` (benchmark_hub's `<kernel>/<GPU>.json`, renamed): its
//! *family* is the kernel, [`family`]. Kernel names are lower-case snake case and GPU names start
//! with a capital letter or a digit (`A100`, `MI50`, `RTX_3090`, `RTX_3060_laptop`), so the
//! family is the stem up to the first `_`-separated part that starts with one:
//! `convolution_milo_A100` and `convolution_milo_MI50` are `convolution_milo`,
//! `convolution_RTX_3090` is `convolution` (another kernel, not the same family), and
//! `gemm_clblast_RTX_3090` is `gemm_clblast`. A stem with no such part is a family of its own.
//!
//! A strategy's score on a family is the mean of its scores on the family's caches, and its
//! standard error follows from theirs: `se = sqrt(sum se_i^2) / n` (the caches' runs are
//! independent). A strategy is flagged on a family when it trails the family's best strategy by
//! more than two standard errors of the difference, `sqrt(se^2 + se_best^2)`: a gap that 35 runs
//! per cache cannot put down to the seeds.

/// The kernel family of a cache stem: the stem up to its first `_`-separated part that starts
/// with an ASCII capital or digit (the GPU's name), or the whole stem.
pub(crate) fn family(stem: &str) -> &str {
    let mut end = 0;
    for part in stem.split('_') {
        if end > 0 && part.starts_with(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit()) {
            return &stem[..end - 1];
        }
        end += part.len() + 1;
    }
    stem
}

/// The families of `stems`, sorted, each once.
pub(crate) fn families<'a>(stems: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut f: Vec<&str> = stems.into_iter().map(family).collect();
    f.sort_unstable();
    f.dedup();
    f
}

/// Two standard errors: the gap beyond which a difference is not the runs' noise.
const Z: f64 = 2.0;

/// One strategy's scores: per cache stem, the mean score and its standard error.
pub(crate) struct Scored<'a> {
    /// The strategy's spec.
    pub strategy: &'a str,
    /// `(stem, mean, standard error)` per cache.
    pub per_cache: Vec<(&'a str, f64, f64)>,
}

/// A strategy's mean and standard error on one family, if it has a score on every cache of it.
fn on_family(s: &Scored<'_>, fam: &str, stems: &[&str]) -> Option<(f64, f64)> {
    let caches: Vec<&str> = stems.iter().copied().filter(|c| family(c) == fam).collect();
    let mut sum = 0.0;
    let mut var = 0.0;
    for c in &caches {
        let &(_, m, se) = s.per_cache.iter().find(|p| p.0 == *c)?;
        sum += m;
        var += se * se;
    }
    let n = caches.len() as f64;
    (n > 0.0).then(|| (sum / n, var.sqrt() / n))
}

/// The table of per-family scores, rows in the order given; `*` marks a score more than two
/// standard errors of the difference below the family's best.
pub(crate) fn markdown(rows: &[Scored<'_>]) -> String {
    let mut stems: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.per_cache.iter().map(|c| c.0))
        .collect();
    stems.sort_unstable();
    stems.dedup();
    let families = families(stems.iter().copied());
    let cells: Vec<Vec<Option<(f64, f64)>>> = rows
        .iter()
        .map(|r| families.iter().map(|f| on_family(r, f, &stems)).collect())
        .collect();
    let best: Vec<Option<(f64, f64)>> = (0..families.len())
        .map(|j| {
            cells
                .iter()
                .filter_map(|c| c[j])
                .max_by(|a, b| a.0.total_cmp(&b.0))
        })
        .collect();
    let mut t = String::from(
        "Per kernel family, mean score ± se (* : more than two standard errors of the difference \
         below the family's best):\n\n| strategy |",
    );
    families.iter().for_each(|f| t += &format!(" {f} |"));
    t += &format!("\n|---|{}\n", "---|".repeat(families.len()));
    for (r, row) in rows.iter().zip(&cells) {
        t += &format!("| {} |", r.strategy);
        for (cell, b) in row.iter().zip(&best) {
            t += &match (cell, b) {
                (Some((m, se)), Some((bm, bse))) => {
                    let flag = if bm - m > Z * (se * se + bse * bse).sqrt() {
                        " *"
                    } else {
                        ""
                    };
                    format!(" {m:.3} ± {se:.3}{flag} |")
                }
                _ => " - |".to_owned(),
            };
        }
        t += "\n";
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_the_kernel_names() {
        for (stem, fam) in [
            ("convolution_milo_A100", "convolution_milo"),
            ("convolution_milo_MI50", "convolution_milo"),
            ("convolution_RTX_3090", "convolution"),
            ("convolution_RTX_Titan", "convolution"),
            ("dedispersion_milo_A4000", "dedispersion_milo"),
            ("gemm_clblast_RTX_3060_laptop", "gemm_clblast"),
            ("gemm_clblast_RTX_2080_Ti", "gemm_clblast"),
            ("pnpoly_RTX_3090", "pnpoly"),
            ("f4", "f4"),
            ("k_1", "k"),
            ("A100", "A100"),
        ] {
            assert_eq!(family(stem), fam, "{stem}");
        }
        assert_eq!(
            families(["b_X", "a_b_Y", "a_X", "a_b_Z"]),
            vec!["a", "a_b", "b"]
        );
    }

    #[test]
    fn family_means_and_flags() {
        let rows = [
            Scored {
                strategy: "a",
                per_cache: vec![
                    ("conv_X", 0.8, 0.03),
                    ("conv_Y", 0.6, 0.04),
                    ("gemm_X", 0.5, 0.01),
                ],
            },
            Scored {
                strategy: "b",
                per_cache: vec![
                    ("conv_X", 0.7, 0.03),
                    ("conv_Y", 0.6, 0.04),
                    ("gemm_X", 0.9, 0.01),
                ],
            },
        ];
        let (m, se) = on_family(&rows[0], "conv", &["conv_X", "conv_Y", "gemm_X"]).unwrap();
        assert!((m - 0.7).abs() < 1e-12 && (se - 0.025).abs() < 1e-12);
        let t = markdown(&rows);
        // conv: a 0.700 ± 0.025, b 0.650 ± 0.025: a gap of 0.05 < 2 * 0.035, no flag. gemm: a
        // trails by 0.4 > 2 * 0.014.
        assert!(t.contains("| a | 0.700 ± 0.025 | 0.500 ± 0.010 * |"), "{t}");
        assert!(t.contains("| b | 0.650 ± 0.025 | 0.900 ± 0.010 |"), "{t}");
        // A strategy missing a cache of a family has no score there.
        let partial = [Scored {
            strategy: "c",
            per_cache: vec![("conv_X", 0.8, 0.03)],
        }];
        assert!(on_family(&partial[0], "conv", &["conv_X", "conv_Y"]).is_none());
    }
}
