//! Tests of the `bayes` strategy: every option keeps the strategy contract, and each round
//! modifier does what its module says.

use super::Space;
use crate::SpaceBuilder;
use crate::bayes::fallback::{self, Known};
use crate::strategy::{self, Outcome, StrategySpec, drive};
use std::collections::HashSet;
use std::sync::Arc;

fn space() -> Arc<Space> {
    Arc::new(
        SpaceBuilder::new()
            .param("a", 0..24)
            .param("b", 0..24)
            .param("c", [1, 2, 4, 8])
            .constraint("a + b <= 40")
            .build()
            .unwrap(),
    )
}

/// A bowl with a hidden constraint: `a * c > 60` fails.
fn objective(space: &Space, p: usize) -> Outcome {
    let i = space.indices(p);
    let (a, b, c) = (f64::from(i[0]), f64::from(i[1]), f64::from(i[2]));
    if a * (c + 1.0) > 60.0 {
        return Outcome::Failed;
    }
    Outcome::Value(1.0 + (a - 9.0).powi(2) + (b - 15.0).powi(2) + 3.0 * c)
}

#[test]
fn every_option_keeps_the_contract_and_is_deterministic() {
    let space = space();
    for spec in [
        "bayes",
        "bayes:acq=multi",
        "bayes:acq=ei:batch=cl",
        "bayes:acq=pi:pool=100:local=2:feas_min=0.9",
        "bayes:polish=2:pool=100",
        "bayes:acq=lcb:feasibility=false:transform=log",
        "bayes:fit=true:kernel=rbf:explore=0.1",
        "bayes:kernel=matern52:lengthscale=0.5:explore=cv*0.5:init=5",
        "bayes:acq=advanced_multi:pool=200:skip=2:discount=0.9:improvement=0.05",
        "bayes:surrogate=cgp",
        "bayes:surrogate=cgp:acq=ei:clusters=auto:pool=150:boundary=1",
        "bayes:clusters=2:xi=2:min_cluster=5:knn=5:tau=0.5:batch=cl",
        "bayes:design=stratified:trust=0.3",
        "bayes:design=random:trust=0.1:pool=100:polish=0",
        "bayes:design=maximin:trust=1",
        "bayes:design=proportional:pool=100",
        "bayes:additive=0.5:fit=true:design=stratified",
        "bayes:init=2:early_lengthscale=3:early=20",
        "bayes:surrogate=cgp:early_lengthscale=2:early=30:pool=150",
        "bayes:init=2:cv_ref=5:batch=cl",
        "bayes:guard=0.7:fallback=mixed:guard_window=4",
        "bayes:guard=0.9:fallback=local:pool=100",
        "bayes:align=0.5:batch=cl",
        "bayes:dual=1:guard=0.6",
        "bayes:dual=0.5:pool=100:fit=true",
        "bayes:stall=5:guard=0.55:dual=1",
        "bayes:stall=3:fallback=mixed:batch=cl",
        "bayes:stall=2:fallback=far:guard=0.8",
        "bayes:dual=1:guard=0.55:trial_scope=16",
        "bayes:cover=2:levels=0.5:guard=0.99:fallback=elite:pool=100",
        "bayes:trial_scope=4:batch=cl:pool=100",
        "bayes:clip=0.5:dual=1:guard=0.55",
        "bayes:clip=0.3:surrogate=cgp:pool=100",
        "bayes:clip_ratio=2:clip=0.5",
        "bayes:clip_ratio=1.5:clip=0.5:clip_until=30:dual=1",
    ] {
        let spec: StrategySpec = spec.parse().unwrap();
        for batch in [1, 3] {
            let run = |seed| {
                let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                drive(s.as_mut(), 90, batch, |p| objective(&space, p)).trials
            };
            let a = run(5);
            assert_eq!(a.len(), 90, "{spec}");
            let distinct: HashSet<usize> = a.iter().map(|t| t.position).collect();
            assert_eq!(distinct.len(), 90, "{spec}");
            assert_eq!(a, run(5), "{spec} is not deterministic");
        }
    }
}

#[test]
fn results_told_before_the_first_ask_count_toward_the_initial_sample() {
    use super::{Bayes, BayesOptions};
    use crate::strategy::{Strategy, Trial};
    let space = space();
    // Valid results of positions spread over the space, none of them asked.
    let valid: Vec<Trial> = (0..space.len())
        .step_by(37)
        .map(|position| Trial {
            position,
            outcome: objective(&space, position),
        })
        .filter(|t| t.outcome.value().is_some())
        .take(5)
        .collect();
    let bayes = || {
        let options = "bayes:init=5"
            .parse::<StrategySpec>()
            .unwrap()
            .apply(BayesOptions::default())
            .unwrap();
        Bayes::new(Arc::clone(&space), options, 7)
    };
    // Two told first: the design of five asks three.
    let mut two = bayes();
    two.tell(&valid[..2]);
    assert_eq!(two.init_queue.len(), 3);
    // Five: one design point, then the model, never one of the told positions.
    let mut five = bayes();
    five.tell(&valid);
    assert_eq!(five.init_queue.len(), 1);
    let asked = five.ask(2);
    assert!(five.bo_started);
    assert!(asked.len() == 2 && valid.iter().all(|t| !asked.contains(&t.position)));
    // Told after the first ask (an ensemble's shared results): the design stays whole.
    let mut late = bayes();
    assert_eq!(late.ask(1).len(), 1);
    late.tell(&valid);
    assert_eq!(late.init_queue.len(), 4);
}

#[test]
fn clipping_caps_the_targets_the_models_see() {
    use super::{Bayes, BayesOptions};
    use crate::strategy::{Strategy, Trial};
    let ln = |v: f64| v.ln();
    // In the strategy, both models are conditioned on the capped targets: run times
    // 1, 2, ..., 9 told at once, a cap of 1.5 times the best; with the default nugget the
    // models interpolate what they were told.
    let space = space();
    let trials: Vec<Trial> = (0..9)
        .map(|i| Trial {
            position: i * 41,
            outcome: Outcome::Value(f64::from(i as u8 + 1)),
        })
        .collect();
    let bayes = |spec: &str| {
        let options = spec.parse::<StrategySpec>().unwrap();
        Bayes::new(
            Arc::clone(&space),
            options.apply(BayesOptions::default()).unwrap(),
            1,
        )
    };
    // Both models predict `expected(i)` at the `i`-th result's position.
    let both_predict = |b: &Bayes, expected: &dyn Fn(f64) -> f64| {
        let challenger = b
            .models
            .challenger
            .as_ref()
            .expect("dual=1 keeps a second model");
        for (i, t) in trials.iter().enumerate() {
            let expected = expected(i as f64 + 1.0);
            for model in [&b.models.surrogate, &challenger.surrogate] {
                let mean = model.predict(t.position).mean;
                assert!((mean - expected).abs() < 1e-3, "{i}: {mean} vs {expected}");
            }
        }
    };
    let mut b = bayes("bayes:clip_ratio=1.5:dual=1");
    b.tell(&trials);
    both_predict(&b, &|v| ln(v.min(1.5)));
    // What the strategy reports is unchanged: the best is the fastest result.
    assert_eq!(b.results.best.map(|(_, v)| v), Some(1.0));
    // With `clip_until=9`, the ninth result ends the caps: the models see the run times' logs.
    let mut b = bayes("bayes:clip_ratio=1.5:dual=1:clip_until=9");
    b.tell(&trials[..8]);
    let capped_mean = b.models.surrogate.predict(trials[7].position).mean;
    assert!((capped_mean - ln(1.5)).abs() < 1e-3, "{capped_mean}");
    b.ask(1);
    b.tell(&trials[8..]);
    both_predict(&b, &ln);
}

#[test]
fn the_predictive_check_hands_picks_to_the_fallback() {
    let space = space();
    let run = |spec: &str| {
        let options = spec.parse::<StrategySpec>().unwrap();
        let options = options.apply(super::BayesOptions::default()).unwrap();
        let mut s = super::Bayes::new(Arc::clone(&space), options, 3);
        drive(&mut s, 60, 1, |p| objective(&space, p));
        s.fallback_picks()
    };
    assert_eq!(run("bayes"), 0);
    // No model ranks 99% of pairs right: once judged (5 results), every pick falls back.
    let distrusted = run("bayes:guard=0.99:guard_window=10");
    assert!(distrusted >= 40, "{distrusted} fallback picks");
    // The bowl is easy to predict: a modest threshold rarely distrusts the model.
    let trusted = run("bayes:guard=0.5");
    assert!(trusted < distrusted / 4, "{trusted} fallback picks");
}

#[test]
fn far_fallback_picks_keep_off_the_asked_neighbourhoods() {
    // Four parameters of four values; every configuration of values 0 and 1 only is asked,
    // so an unasked configuration's nearest asked one differs in its count of values 2 and 3.
    let space = Arc::new(
        (0..4)
            .fold(SpaceBuilder::new(), |b, k| b.param(format!("p{k}"), 0..4))
            .build()
            .unwrap(),
    );
    let options = "bayes:fallback=far".parse::<StrategySpec>().unwrap();
    let options = options.apply(super::BayesOptions::default()).unwrap();
    let mut s = super::Bayes::new(Arc::clone(&space), options, 5);
    for p in 0..space.len() {
        if space.indices(p).iter().all(|&i| i < 2) {
            s.memo.mark_asked(p);
            s.asked_rows.push(p);
        }
    }
    let distance = |p: usize| space.indices(p).iter().filter(|&&i| i >= 2).count();
    let picks = 200;
    let mean = |total: usize| total as f64 / f64::from(picks);
    let far: usize = (0..picks)
        .map(|_| {
            let known = Known {
                space: &s.space,
                memo: &s.memo,
                asked_rows: &s.asked_rows,
                results: &s.results,
            };
            distance(fallback::far(&known, &mut s.rng).unwrap())
        })
        .sum();
    let random: usize = (0..picks)
        .map(|_| distance(s.memo.random_unasked(&mut s.rng).unwrap()))
        .sum();
    // Random unasked picks average 32/15 (about 2.1); the best of 16 draws nearly always 3 or 4.
    assert!(mean(far) > 3.0, "far picks: mean distance {}", mean(far));
    assert!(
        mean(random) < 2.5,
        "random picks: mean distance {}",
        mean(random)
    );
}

#[test]
fn coverage_rounds_try_every_level_a_trend_points_away_from() {
    // An unroll factor whose 0 is a code path of its own and the fastest; among the other
    // values more unrolling is faster, so a smooth model fitted to them points away from 0.
    let space = Arc::new(
        SpaceBuilder::new()
            .param("unroll", [0i64, 1, 2, 4, 8, 16])
            .param("x", 0..12)
            .param("y", 0..12)
            .build()
            .unwrap(),
    );
    let f = |p: usize| {
        let i = space.indices(p);
        let x = (f64::from(i[1]) - 6.0).powi(2) + (f64::from(i[2]) - 6.0).powi(2);
        let u = if i[0] == 0 {
            0.0
        } else {
            40.0 - 5.0 * f64::from(i[0])
        };
        Outcome::Value(1.0 + u + x)
    };
    let first_zero = |spec: &str, seed: u64| -> Option<usize> {
        let options: StrategySpec = spec.parse().unwrap();
        let options = options.apply(super::BayesOptions::default()).unwrap();
        let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
        let rec = drive(&mut s, 20, 1, f);
        rec.trials
            .iter()
            .position(|t| space.indices(t.position)[0] == 0)
    };
    // Each unroll value is 1/6 of the space: random picks miss 0 in 3 draws about 58% of
    // the time. With `cover=1` every round after the initial sample tries an untried value
    // until all six are tried: 0 by the 3 + 5 = 8th evaluation, in every run.
    for seed in 1..=10 {
        let covered = first_zero("bayes:init=3:design=random:cover=1:polish=0", seed);
        assert!(covered.is_some_and(|k| k < 8), "seed {seed}: {covered:?}");
    }
    let plain: Vec<Option<usize>> = (1..=10)
        .map(|seed| first_zero("bayes:init=3:design=random:polish=0", seed))
        .collect();
    assert!(
        plain.iter().any(|k| k.is_none_or(|k| k >= 8)),
        "without coverage some run tries 0 late or never: {plain:?}"
    );
}

#[test]
fn a_model_on_trial_picks_among_a_random_few_not_where_its_variance_points() {
    let space = space();
    let valid: Vec<f64> = (0..space.len())
        .filter_map(|p| objective(&space, p).value())
        .collect();
    let typical = valid.iter().sum::<f64>() / valid.len() as f64;
    // A model that only explores (a huge exploration factor) sends its first picks to
    // where it knows least: the corners of the space, far slower than typical here. While
    // it is on trial (its first 5 checked results) `trial_scope` makes each pick its best
    // of a few random configurations instead.
    let trial_picks = |spec: &str| -> f64 {
        let mut sum = 0.0;
        let mut n = 0;
        for seed in 1..=8 {
            let options: StrategySpec = spec.parse().unwrap();
            let options = options.apply(super::BayesOptions::default()).unwrap();
            let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
            let rec = drive(&mut s, 10, 1, |p| objective(&space, p));
            for t in &rec.trials[5..] {
                if let Some(v) = objective(&space, t.position).value() {
                    sum += v;
                    n += 1;
                }
            }
        }
        sum / n as f64
    };
    let free = trial_picks("bayes:explore=1000:guard=0.55:polish=0");
    let scoped = trial_picks("bayes:explore=1000:guard=0.55:polish=0:trial_scope=4");
    println!("free {free}, scoped {scoped}, typical {typical}");
    assert!(free > 1.5 * typical, "free {free} vs typical {typical}");
    assert!(
        scoped < 1.25 * typical,
        "scoped {scoped} vs typical {typical}"
    );
}

#[test]
fn the_second_model_takes_over_where_alignment_decides() {
    let space = space();
    // Fast only where a is a multiple of 4: periodic in a's value, noise to a smooth model.
    let periodic = |p: usize| {
        let i = space.indices(p);
        let aligned = i[0].is_multiple_of(4);
        Outcome::Value(1.0 + if aligned { 0.0 } else { 1.0 } + 0.01 * f64::from(i[1]))
    };
    let bowl = |p: usize| objective(&space, p);
    let takes_over = |f: &dyn Fn(usize) -> Outcome| {
        (1..=5)
            .filter(|&seed| {
                let options: StrategySpec = "bayes:dual=1".parse().unwrap();
                let options = options.apply(super::BayesOptions::default()).unwrap();
                let mut s = super::Bayes::new(Arc::clone(&space), options, seed);
                drive(&mut s, 60, 1, f);
                s.picks_with_alignment()
            })
            .count()
    };
    assert!(takes_over(&periodic) >= 4, "aligned model kept out");
    assert!(
        takes_over(&bowl) <= 3,
        "aligned model took over a smooth bowl"
    );
}

#[test]
fn clustered_gp_with_one_cluster_is_plain_bo() {
    let space = space();
    for (gp, cgp) in [
        ("bayes", "bayes:surrogate=cgp:clusters=1:tau=1"),
        (
            "bayes:acq=ei:batch=cl",
            "bayes:acq=ei:batch=cl:clusters=1:tau=1",
        ),
    ] {
        for batch in [1, 4] {
            let run = |spec: &str| {
                let spec: StrategySpec = spec.parse().unwrap();
                let mut s = strategy::build(&spec, Arc::clone(&space), 11).unwrap();
                drive(s.as_mut(), 80, batch, |p| objective(&space, p)).trials
            };
            assert_eq!(run(gp), run(cgp), "{cgp}, batch {batch}");
        }
    }
}

#[test]
fn polishing_rounds_ask_neighbours_of_the_best() {
    use crate::space::Neighbourhood;
    let space = space();
    // With `polish=1` every round after the initial sample (at most 2 * init asks) polishes:
    // it asks a Hamming neighbour of the best result that still has unasked neighbours.
    for spec in ["bayes:polish=1:init=10", "bayes:polish=1:init=10:pool=100"] {
        let mut s = strategy::build(&spec.parse().unwrap(), Arc::clone(&space), 7).unwrap();
        let mut found: Vec<(f64, usize)> = Vec::new();
        let mut asked = HashSet::new();
        for i in 0..80 {
            let p = s.ask(1)[0];
            if i >= 20 {
                found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let expected = found
                    .iter()
                    .map(|&(_, r)| {
                        let mut n = space.neighbours(&space.indices(r), Neighbourhood::Hamming);
                        n.retain(|q| !asked.contains(q));
                        n
                    })
                    .find(|n| !n.is_empty())
                    .unwrap();
                assert!(
                    expected.contains(&p),
                    "{spec}: ask {i} ({p}) is not polishing"
                );
            }
            asked.insert(p);
            let outcome = objective(&space, p);
            if let Some(v) = outcome.value() {
                found.push((v, p));
            }
            s.tell(&[crate::strategy::Trial {
                position: p,
                outcome,
            }]);
        }
    }
}

#[test]
fn asks_before_tells_and_exhaustion() {
    // Asking again before telling (an asynchronous tuner) conditions on fantasies; a run can
    // spend the whole space.
    let space = space();
    let mut s = strategy::build(
        &"bayes:init=4:ramp=0".parse().unwrap(),
        Arc::clone(&space),
        3,
    )
    .unwrap();
    let mut seen = HashSet::new();
    let mut pending = Vec::new();
    while seen.len() < space.len() {
        let asked = s.ask(7);
        assert!(!asked.is_empty());
        for p in asked {
            assert!(seen.insert(p));
            pending.push(p);
        }
        // Tell all but the two most recent.
        let keep = pending.split_off(pending.len().saturating_sub(2));
        let trials: Vec<_> = pending
            .drain(..)
            .map(|p| crate::strategy::Trial {
                position: p,
                outcome: objective(&space, p),
            })
            .collect();
        s.tell(&trials);
        pending = keep;
    }
    assert!(s.ask(1).is_empty());
}

#[test]
fn ramp_keeps_as_many_outstanding_as_the_results_support() {
    // `ramp=2`: after the initial sample of 4, at most max(1, valid / 2) outstanding; never
    // an empty answer when nothing is outstanding; asking one at a time is unchanged.
    let space = space();
    let spec = |s: &str| s.parse::<StrategySpec>().unwrap();
    let mut s = strategy::build(&spec("bayes:init=4:ramp=2"), Arc::clone(&space), 5).unwrap();
    let tell = |s: &mut Box<dyn crate::strategy::Strategy>, asked: &[usize]| {
        let trials: Vec<_> = asked
            .iter()
            .map(|&p| crate::strategy::Trial {
                position: p,
                outcome: objective(&space, p),
            })
            .collect();
        s.tell(&trials);
    };
    let first = s.ask(8);
    assert_eq!(first.len(), 4, "the initial sample, then a wait");
    assert!(s.ask(8).is_empty(), "waits while the initial sample is out");
    tell(&mut s, &first);
    let valid = first
        .iter()
        .filter(|&&p| objective(&space, p) != Outcome::Failed)
        .count();
    let second = s.ask(8);
    assert_eq!(second.len(), (valid / 2).max(1));
    tell(&mut s, &second);
    let mut sizes = Vec::new();
    for _ in 0..12 {
        let asked = s.ask(8);
        assert!(!asked.is_empty());
        sizes.push(asked.len());
        tell(&mut s, &asked);
    }
    assert_eq!(
        sizes.last(),
        Some(&8),
        "the batch grows to the full ask: {sizes:?}"
    );
    assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");
    let run = |spec_text: &str| {
        let mut s = strategy::build(&spec(spec_text), Arc::clone(&space), 9).unwrap();
        drive(s.as_mut(), 60, 1, |p| objective(&space, p)).trials
    };
    assert_eq!(run("bayes:init=4"), run("bayes:init=4:ramp=0"));
}

#[test]
fn feasibility_model_avoids_failures() {
    let space = space();
    let failed = |spec: &str| {
        let spec: StrategySpec = spec.parse().unwrap();
        (1..=4)
            .map(|seed| {
                let mut s = strategy::build(&spec, Arc::clone(&space), seed).unwrap();
                let run = drive(s.as_mut(), 120, 1, |p| objective(&space, p));
                run.trials
                    .iter()
                    .filter(|t| t.outcome == Outcome::Failed)
                    .count()
            })
            .sum::<usize>()
    };
    let (threshold, weighed, without) = (
        failed("bayes:feas_min=0.5"),
        failed("bayes:feas_min=0"),
        failed("bayes:feasibility=false"),
    );
    assert!(
        threshold < weighed && weighed < without,
        "{threshold} failures with the model and feas_min=0.5, {weighed} with the model only, \
         {without} without"
    );
}

#[test]
fn a_negated_maximized_metric_is_searched_as_its_reciprocal() {
    // A maximized metric reaches the strategies negated: `-1 / t` for a run time `t` orders the
    // configurations as `t` does, and the strategy, which minimizes `1 / (1 / t)` then, asks
    // what it asks when told `t` itself.
    let space = space();
    let run = |negate: bool| {
        let mut s = strategy::build(&"auto".parse().unwrap(), Arc::clone(&space), 4).unwrap();
        drive(s.as_mut(), 60, 1, |p| match objective(&space, p) {
            Outcome::Value(t) if negate => Outcome::Value(-1.0 / t),
            o => o,
        })
        .trials
        .iter()
        .map(|t| t.position)
        .collect::<Vec<_>>()
    };
    assert_eq!(run(true), run(false));
}
