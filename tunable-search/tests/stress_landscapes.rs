//! The generated stress landscapes (`sim::stress`): deterministic for a seed, the optimum the
//! generator made is the brute-force optimum, and each kind has the statistics its docs claim.

use tunable_search::sim::stress::{Landscape, Stats, StressKind, StressSpec, suite};
use tunable_search::space::Value;

fn build(text: &str) -> Landscape {
    Landscape::build(&text.parse().unwrap()).unwrap()
}

/// The positions of the configurations that differ from `position` in one parameter's value.
fn neighbours(land: &Landscape, position: usize) -> Vec<usize> {
    let space = land.replay().space();
    let base = space.indices(position);
    let mut out = Vec::new();
    for (k, p) in space.params().iter().enumerate() {
        for v in 0..p.values().len() as u16 {
            if v != base[k] {
                let mut c = base.clone();
                c[k] = v;
                out.extend(space.position(&c));
            }
        }
    }
    out
}

fn param(land: &Landscape, name: &str) -> usize {
    let params = land.replay().space().params();
    params.iter().position(|p| p.name() == name).unwrap()
}

#[test]
fn the_same_spec_gives_the_same_landscape_and_another_seed_another() {
    for kind in StressKind::ALL {
        let spec = StressSpec::new(kind, 3_000, 5);
        let (a, b) = (
            Landscape::build(&spec).unwrap(),
            Landscape::build(&spec).unwrap(),
        );
        assert_eq!(a.replay().values(), b.replay().values(), "{kind}");
        assert_eq!(a.noise(), b.noise());
        let other = Landscape::build(&StressSpec {
            seed: Some(9),
            ..spec.clone()
        })
        .unwrap();
        assert_ne!(a.replay().values(), other.replay().values(), "{kind}");
        for p in (0..a.replay().space().len()).step_by(97) {
            assert_eq!(a.measure(p, 4), b.measure(p, 4));
        }
    }
}

/// The least time of any valid configuration.
fn brute_optimum(land: &Landscape) -> f64 {
    land.replay()
        .values()
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn the_generated_optimum_is_the_brute_force_optimum() {
    for spec in suite("small").unwrap().into_iter().chain([
        "needle:n=20000:d=7".parse().unwrap(),
        "heavy_tail:n=5000:d=5:fail=0.4".parse().unwrap(),
        "plateau:n=2000:d=6:seed=3".parse().unwrap(),
    ]) {
        let land = Landscape::build(&spec).unwrap();
        let brute = brute_optimum(&land);
        assert_eq!(land.optimum(), brute, "{spec}");
        assert!(land.optimum() > 0.0);
    }
}

#[test]
fn the_default_suite_spans_sizes_and_dimensions() {
    let specs = suite("default").unwrap();
    assert_eq!(specs.len(), 36);
    let mut sizes = Vec::new();
    for spec in &specs {
        let land = Landscape::build(spec).unwrap();
        let n = land.replay().space().len();
        // Constraints remove some of the Cartesian size aimed at, never most of it; the warp
        // tile's constraint of `tile_clock` removes up to 60%, as a GEMM's restrictions do.
        let kept = if spec.kind == StressKind::TileClock {
            3
        } else {
            2
        };
        assert!(
            n <= spec.size && n * kept >= spec.size,
            "{spec}: {n} configurations"
        );
        assert_eq!(land.replay().space().dims(), spec.dims);
        sizes.push(n);
    }
    assert!(sizes.iter().any(|&n| n <= 300) && sizes.iter().any(|&n| n >= 100_000));
    // The kinds of small spaces stay at 10^2 to 10^4 configurations.
    for (spec, &n) in specs.iter().zip(&sizes) {
        if matches!(
            spec.kind,
            StressKind::Required | StressKind::Cliffs | StressKind::Pinpoint | StressKind::Levels
        ) {
            assert!((100..=10_000).contains(&n), "{spec}: {n}");
        }
    }
    let dims: Vec<usize> = specs.iter().map(|s| s.dims).collect();
    assert!(dims.contains(&2) && dims.contains(&15));
    for spec in suite("large").unwrap() {
        let n = Landscape::build(&spec).unwrap().replay().space().len();
        assert!((500_000..=1_000_000).contains(&n), "{spec}: {n}");
    }
    // Every kind is a family of its own in the bench (the stem's kind, then a capital).
    for spec in &specs {
        assert!(spec.stem().starts_with(&format!("{}_N", spec.kind)));
    }
}

#[test]
fn flat_periodic_is_flat_and_decided_by_alignment() {
    for text in [
        "flat_periodic",
        "flat_periodic:n=5000:d=5",
        "flat_periodic:n=50000:d=8",
    ] {
        let land = build(text);
        let s = Stats::of(&land);
        assert!((1.25..=1.6).contains(&s.median_ratio), "{text}: {s:?}");
        assert!((0.01..=0.06).contains(&s.within_5pct), "{text}: {s:?}");
        let space = land.replay().space();
        let (best, _) = land.replay().optimum().unwrap();
        let values = space.values(best);
        assert!(
            matches!(values[0], Value::Int(b) if b % 64 == 0),
            "{text}: {values:?}"
        );
        if space.dims() >= 2 {
            assert_eq!(
                values[1],
                Value::Bool(true),
                "{text}: the switch must be on"
            );
        }
        if space.dims() >= 3 {
            // The idle switch: flipping it never changes the time.
            let idle = param(&land, "use_padding");
            for p in 0..space.len() {
                let mut c = space.indices(p);
                c[idle] = 1 - c[idle];
                let q = space.position(&c).unwrap();
                assert_eq!(land.replay().values()[p], land.replay().values()[q]);
            }
        }
        // Periodic, not smooth: among the block sizes, the multiples of 64 are better on
        // average than their neighbours 16 away.
        let mean_at = |good: bool| {
            let (mut sum, mut n) = (0.0, 0.0);
            for p in 0..space.len() {
                if let (Value::Int(b), Some(v)) = (&space.values(p)[0], land.replay().values()[p])
                    && (b % 64 == 0) == good
                {
                    sum += v;
                    n += 1.0;
                }
            }
            sum / n
        };
        assert!(mean_at(true) < mean_at(false), "{text}");
    }
}

#[test]
fn heavy_tail_has_a_tiny_good_region() {
    for text in [
        "heavy_tail",
        "heavy_tail:n=20000:d=7",
        "heavy_tail:n=3000:d=4:seed=5",
    ] {
        let s = Stats::of(&build(text));
        assert!((20.0..=40.0).contains(&s.median_ratio), "{text}: {s:?}");
        assert!((6.0..=12.0).contains(&s.p10_ratio), "{text}: {s:?}");
        assert!(s.within_5pct <= 0.01, "{text}: {s:?}");
        assert!(s.random_95 <= 60, "{text}: {s:?}");
    }
}

#[test]
fn plateaus_have_equal_times_and_irrelevant_switches() {
    for text in [
        "plateau",
        "plateau:n=10000:d=8",
        "plateau:n=5000:d=7:seed=2",
    ] {
        let land = build(text);
        let space = land.replay().space();
        let values = land.replay().values();
        let mut distinct: Vec<f64> = values.iter().flatten().copied().collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert!(
            distinct.len() * 4 <= space.len(),
            "{text}: {} levels",
            distinct.len()
        );
        // Some switch or choice parameter does nothing at all.
        let idle = (0..space.dims()).filter(|&k| {
            matches!(
                space.params()[k].values()[0],
                Value::Bool(_) | Value::Str(_)
            ) && (0..space.len()).all(|p| {
                neighbours(&land, p).into_iter().all(|q| {
                    let (a, b) = (space.indices(p), space.indices(q));
                    let only_k = (0..space.dims()).all(|j| j == k || a[j] == b[j]);
                    !only_k || values[p] == values[q]
                })
            })
        });
        if space.dims() >= 6 {
            assert!(idle.count() >= 1, "{text}");
        }
    }
}

#[test]
fn the_needle_hides_behind_a_smooth_decoy() {
    for text in ["needle", "needle:n=10000:d=6", "needle:n=3000:d=4:seed=7"] {
        let land = build(text);
        let values = land.replay().values();
        let opt = land.optimum();
        // Local minima (no better configuration one parameter away): the needle, and a decoy
        // 20% to 40% above it.
        let minima: Vec<f64> = (0..values.len())
            .filter(|&p| {
                let v = values[p].unwrap();
                neighbours(&land, p)
                    .into_iter()
                    .all(|q| values[q].unwrap() >= v)
            })
            .map(|p| values[p].unwrap() / opt)
            .collect();
        assert!(minima.contains(&1.0), "{text}: {minima:?}");
        assert!(
            minima.iter().any(|&m| (1.2..1.4).contains(&m)),
            "{text}: {minima:?}"
        );
    }
}

#[test]
fn near_optimal_spaces_are_won_in_about_ten_evaluations() {
    for text in [
        "near_optimal",
        "near_optimal:n=200:d=5",
        "near_optimal:n=2000:d=6",
    ] {
        let s = Stats::of(&build(text));
        assert!(s.size <= 2_000, "{text}: {s:?}");
        assert!((8..=20).contains(&s.random_95), "{text}: {s:?}");
        assert!(s.within_1pct >= 0.04, "{text}: {s:?}");
    }
}

#[test]
fn noisy_measurements_scatter_around_the_true_time() {
    for text in ["noisy", "noisy:n=10000:d=6", "near_optimal:noise=0.03"] {
        let land = build(text);
        let sigma = land.noise();
        assert!((0.01..=0.05).contains(&sigma), "{text}: {sigma}");
        let truth = land.replay().values();
        let rel: Vec<f64> = (0..truth.len())
            .flat_map(|p| (0..20).map(move |run| (p, run)))
            .map(|(p, run)| land.measure(p, run).unwrap() / truth[p].unwrap() - 1.0)
            .collect();
        let n = rel.len() as f64;
        let mean = rel.iter().sum::<f64>() / n;
        let sd = (rel.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!(mean.abs() < 0.1 * sigma, "{text}: mean {mean}");
        assert!(
            (sd / sigma - 1.0).abs() < 0.1,
            "{text}: sd {sd} for {sigma}"
        );
        assert_ne!(land.measure(3, 1), land.measure(3, 2));
    }
    assert_eq!(build("plateau").noise(), 0.0);
}

#[test]
fn failures_are_many_and_clustered() {
    for text in [
        "failing",
        "failing:n=20000:d=7",
        "plateau:n=3000:d=5:fail=0.35",
    ] {
        let land = build(text);
        let s = Stats::of(&land);
        assert!((0.28..=0.62).contains(&s.failed), "{text}: {s:?}");
        let values = land.replay().values();
        // A failing configuration's neighbours fail far more often than configurations at
        // large do: the failures are regions, not scattered.
        let (mut fail_next, mut total) = (0.0, 0.0);
        for p in (0..values.len())
            .filter(|&p| values[p].is_none())
            .step_by(7)
        {
            for q in neighbours(&land, p) {
                total += 1.0;
                fail_next += f64::from(u8::from(values[q].is_none()));
            }
        }
        assert!(
            fail_next / total > s.failed + 0.1,
            "{text}: {} vs {}",
            fail_next / total,
            s.failed
        );
        // Failures do not end at the measurement: they are failures in every run.
        let p = values.iter().position(Option::is_none).unwrap();
        assert_eq!(land.measure(p, 1), None);
    }
}

/// The positions within `ratio` of the optimum.
fn near(land: &Landscape, ratio: f64) -> Vec<usize> {
    let opt = land.optimum();
    let values = land.replay().values();
    (0..values.len())
        .filter(|&p| values[p].is_some_and(|v| v <= ratio * opt))
        .collect()
}

#[test]
fn a_required_level_holds_every_configuration_near_the_optimum() {
    let mut keys = Vec::new();
    let texts: Vec<String> = ["required", "required:n=2000:d=6", "required:n=10000:d=8"]
        .into_iter()
        .map(str::to_owned)
        .chain((1..=10).map(|s| format!("required:n=600:d=5:seed={s}")))
        .collect();
    for text in &texts {
        let land = build(text);
        let space = land.replay().space();
        let good = near(&land, 1.1);
        let share = good.len() as f64 / space.len() as f64;
        assert!((0.03..=0.25).contains(&share), "{text}: {share}");
        // One parameter's value is the same in every configuration within 10%, and that level
        // holds at most half of the space.
        let first = space.indices(good[0]);
        let key = (0..space.dims())
            .filter(|&k| good.iter().all(|&p| space.indices(p)[k] == first[k]))
            .find(|&k| {
                let at = (0..space.len())
                    .filter(|&p| space.indices(p)[k] == first[k])
                    .count();
                at * 2 <= space.len()
            });
        let Some(key) = key else {
            panic!("{text}: no level holds every near-optimal configuration");
        };
        keys.push((space.params()[key].name().to_owned(), first[key]));
    }
    // In variety: which parameter and which level change with the seed, and the lowest value
    // of an unroll factor (0: no unrolling) is among them.
    keys.sort();
    keys.dedup();
    assert!(keys.len() >= 4, "{keys:?}");
    assert!(
        keys.iter()
            .any(|(name, level)| name.ends_with("unroll") && *level == 0),
        "{keys:?}"
    );
    assert!(keys.iter().any(|(_, level)| *level > 0), "{keys:?}");
}

#[test]
fn cliffs_are_small_and_heavy_tailed() {
    for text in [
        "cliffs",
        "cliffs:n=900:d=5",
        "cliffs:n=6000:d=6",
        "cliffs:n=2000:d=4:seed=3",
    ] {
        let s = Stats::of(&build(text));
        assert!(s.size <= 10_000, "{text}: {s:?}");
        assert!((20.0..=40.0).contains(&s.median_ratio), "{text}: {s:?}");
        assert!((6.0..=12.0).contains(&s.p10_ratio), "{text}: {s:?}");
        assert!(s.random_95 <= 60, "{text}: {s:?}");
    }
    // Value by value, not a distance: some parameter's cost is not monotone on either side of
    // its best value (mean time per value, over the space).
    let land = build("cliffs:n=6000:d=6");
    let space = land.replay().space();
    let values = land.replay().values();
    let rough = (0..space.dims()).any(|k| {
        let n = space.params()[k].values().len();
        let mut mean = vec![(0.0, 0.0); n];
        for p in 0..space.len() {
            let m = &mut mean[usize::from(space.indices(p)[k])];
            m.0 += values[p].unwrap();
            m.1 += 1.0;
        }
        let mean: Vec<f64> = mean.iter().map(|(s, c)| s / c).collect();
        let best = (0..n).min_by(|&a, &b| mean[a].total_cmp(&mean[b])).unwrap();
        let up = |w: &[f64]| w[0] <= w[1];
        !(mean[best..].windows(2).all(up) && mean[..=best].windows(2).all(|w| w[0] >= w[1]))
    });
    assert!(
        rough,
        "every parameter's cost is monotone around its best value"
    );
}

#[test]
fn a_pinpoint_is_one_or_two_configurations_in_a_small_noisy_space() {
    for text in [
        "pinpoint",
        "pinpoint:n=1000:d=6",
        "pinpoint:n=4000:d=8",
        "pinpoint:n=500:d=4:seed=2",
    ] {
        let land = build(text);
        let space = land.replay().space();
        assert!(
            space.params().iter().all(|p| p.values().len() <= 4),
            "{text}"
        );
        let good = near(&land, 1.1).len();
        assert!((1..=3).contains(&good), "{text}: {good} within 10%");
        assert!((0.01..=0.03).contains(&land.noise()), "{text}");
        assert!(space.len() <= 4_000, "{text}");
    }
}

/// The Pearson correlation of log-time between neighbours (one parameter one level apart, both
/// valid), over every such pair.
fn neighbour_correlation(land: &Landscape) -> f64 {
    let space = land.replay().space();
    let values = land.replay().values();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for p in 0..space.len() {
        let Some(a) = values[p] else { continue };
        let base = space.indices(p);
        for k in 0..space.dims() {
            let mut c = base.clone();
            c[k] += 1;
            if let Some(b) = space.position(&c).and_then(|q| values[q]) {
                xs.push(a.ln());
                ys.push(b.ln());
            }
        }
    }
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let vy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// Per tile (every parameter but the clock), its times from the lowest clock to the highest.
fn clock_series(land: &Landscape) -> Vec<Vec<f64>> {
    let space = land.replay().space();
    let values = land.replay().values();
    let clock = param(land, "nvml_gr_clock");
    let levels = space.params()[clock].values().len();
    let mut out = Vec::new();
    for p in 0..space.len() {
        let idx = space.indices(p);
        if idx[clock] != 0 {
            continue;
        }
        let series: Option<Vec<f64>> = (0..levels as u16)
            .map(|l| {
                let mut c = idx.clone();
                c[clock] = l;
                space.position(&c).and_then(|q| values[q])
            })
            .collect();
        out.extend(series);
    }
    out
}

/// The tensor-core GEMM's structure: a clock that scales time by about 1.2, monotone in most
/// tiles; the optimum at the top clock; ~8% failures; a heavy tail; a tiny near-optimal set;
/// neighbour correlation near the shared caches'; an energy optimum at a lower clock.
#[test]
fn tile_clock_has_the_tensor_core_gemms_structure() {
    for text in [
        "tile_clock",
        "tile_clock:n=10240:d=6",
        "tile_clock:n=20480:d=7",
    ] {
        let land = build(text);
        let s = Stats::of(&land);
        assert!((0.05..=0.09).contains(&s.failed), "{text}: {s:?}");
        assert!((4.0..=8.0).contains(&s.median_ratio), "{text}: {s:?}");
        assert!(s.within_5pct <= 0.003, "{text}: {s:?}");
        let values = land.replay().values();
        let mut valid: Vec<f64> = values.iter().flatten().copied().collect();
        valid.sort_by(f64::total_cmp);
        let tail = valid[valid.len() - 1] / valid[valid.len() / 2];
        assert!((20.0..=50.0).contains(&tail), "{text}: {tail}");
        let corr = neighbour_correlation(&land);
        assert!((0.64..=0.9).contains(&corr), "{text}: {corr}");
        let series = clock_series(&land);
        let monotone = series
            .iter()
            .filter(|s| s.windows(2).all(|w| w[1] <= w[0]))
            .count() as f64
            / series.len() as f64;
        assert!((0.85..1.0).contains(&monotone), "{text}: {monotone}");
        let mut factors: Vec<f64> = series.iter().map(|s| s[0] / s[s.len() - 1]).collect();
        factors.sort_by(f64::total_cmp);
        let median = factors[factors.len() / 2];
        assert!((1.1..=1.3).contains(&median), "{text}: {median}");
        let space = land.replay().space();
        let clock = param(&land, "nvml_gr_clock");
        let (fastest, _) = land.replay().optimum().unwrap();
        assert_eq!(space.values(fastest)[clock], Value::Int(1890), "{text}");
        // The least energy runs slower, at a lower clock.
        let energy = land.energy().unwrap();
        let (frugal, _) = energy
            .iter()
            .enumerate()
            .filter_map(|(p, e)| e.map(|e| (p, e)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert!(values[frugal].unwrap() > values[fastest].unwrap(), "{text}");
        assert!(energy[frugal].unwrap() < energy[fastest].unwrap(), "{text}");
        assert_eq!(land.objective("energy"), Some(energy));
        assert_eq!(land.objective("power"), None);
    }
    assert!(build("heavy_tail").energy().is_none());
}

/// Small spaces of many-levelled parameters: a few hundred configurations, a parameter of six
/// or more values, and one level of a few-valued parameter holding every configuration within
/// 10% of the optimum.
#[test]
fn levels_are_small_with_many_levels_and_a_required_level() {
    for text in [
        "levels",
        "levels:n=600:d=4",
        "levels:n=900:d=5",
        "levels:n=210:d=3:seed=2",
    ] {
        let land = build(text);
        let space = land.replay().space();
        assert!((100..=1_000).contains(&space.len()), "{text}");
        assert!(
            space.params().iter().any(|p| p.values().len() >= 6),
            "{text}"
        );
        let good = near(&land, 1.1);
        let first = space.indices(good[0]);
        let required = (0..space.dims()).any(|k| {
            space.params()[k].values().len() <= 4
                && good.iter().all(|&p| space.indices(p)[k] == first[k])
        });
        assert!(required, "{text}: no required level");
    }
}

/// A small spaces JSON of the kinds of parameters real kernels have (a block size, an unroll
/// factor with 0, a tile of powers of two, a switch, a string choice) under a constraint,
/// written where integration tests may write.
fn space_file() -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("laid_over.json");
    let text = r#"{
        "tune_params": {
            "block_size_x": [32, 64, 96, 128, 160, 192, 224, 256],
            "loop_unroll": [0, 1, 2, 4, 8],
            "tile": [1, 2, 4, 8],
            "use_shared": [0, 1],
            "layout": ["row", "col", "tiled"]
        },
        "restrictions": ["block_size_x * tile <= 1024"]
    }"#;
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_kind_laid_over_a_given_space_keeps_that_space() {
    let path = space_file();
    let given = tunable_search::space::load::load(&path)
        .unwrap()
        .builder
        .build()
        .unwrap();
    for kind in StressKind::ALL {
        if kind == StressKind::TileClock {
            continue;
        }
        let text = format!("{kind}:space={}:seed=3", path.display());
        let spec: StressSpec = text.parse().unwrap();
        assert_eq!(spec.to_string(), text);
        assert_eq!(spec.stem(), format!("{kind}_On_laid_over_S3"));
        let land = Landscape::build(&spec).unwrap();
        let space = land.replay().space();
        // The given space's parameters, values and constraints, configuration for
        // configuration.
        assert_eq!(space.len(), given.len(), "{kind}");
        for (a, b) in space.params().iter().zip(given.params()) {
            assert_eq!((a.name(), a.values()), (b.name(), b.values()));
        }
        assert_eq!(space.constraints(), given.constraints());
        // The generator's optimum is the brute-force one, and the landscape is seeded.
        let brute = brute_optimum(&land);
        assert_eq!(land.optimum(), brute, "{kind}");
        let again = Landscape::build(&spec).unwrap();
        assert_eq!(land.replay().values(), again.replay().values(), "{kind}");
        let other = Landscape::build(&StressSpec {
            seed: Some(4),
            ..spec.clone()
        })
        .unwrap();
        assert_ne!(land.replay().values(), other.replay().values(), "{kind}");
    }
}

#[test]
fn a_given_space_is_refused_where_it_cannot_serve() {
    let err = |text: &str| text.parse::<StressSpec>().unwrap_err().to_string();
    let both = err("required:space=kernel.json:n=500");
    assert!(both.contains("n and d come from the space"), "{both}");
    let tiles = err("tile_clock:space=kernel.json");
    assert!(tiles.contains("parameters of its own"), "{tiles}");
    // A file that does not exist fails when the landscape is built, naming the file.
    let missing: StressSpec = "needle:space=/nonexistent/kernel.json".parse().unwrap();
    let message = Landscape::build(&missing).unwrap_err().to_string();
    assert!(message.contains("/nonexistent/kernel.json"), "{message}");
}
