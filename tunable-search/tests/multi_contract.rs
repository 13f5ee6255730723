//! The ask/tell contract of every multi-objective strategy: every asked position is valid (in
//! the space, so it satisfies the constraints), none is asked twice, a small space is exhausted,
//! results told but never asked are never asked, and a seed fixes the run; also on a space with
//! a clock parameter valid only at some levels for some configurations, where `sweep` sweeps
//! the clock of the best configuration.

use std::collections::HashSet;
use std::sync::Arc;
use tunable_search::strategy::{MULTI_STRATEGY_NAMES, MultiStrategy, MultiTrial, build_multi};
use tunable_search::{Space, SpaceBuilder};

fn space() -> Arc<Space> {
    Arc::new(
        SpaceBuilder::new()
            .param("block_size_x", [16, 32, 64, 128, 256])
            .param("tile", [1, 2, 3, 4])
            .param("warps", [1, 2, 4, 8])
            .param("unroll", [0, 1])
            .constraint("block_size_x * warps <= 1024")
            .constraint("unroll == 0 or tile > 1")
            .build()
            .unwrap(),
    )
}

/// Two conflicting objectives with hidden failures (three or four parameters): the first falls
/// with the first parameter, the second rises with it.
fn values(space: &Space, pos: usize) -> Option<Vec<f64>> {
    let i = space.indices(pos);
    if (i[0] + i[1]) % 5 == 4 {
        return None;
    }
    let x = f64::from(i[0]);
    let bump = f64::from(i[2] ^ i[1]) * 0.3 + f64::from(i.get(3).copied().unwrap_or(0)) * 0.2;
    Some(vec![5.0 - x + bump, x * x - 3.0 + bump])
}

/// Runs `s` for `budget` positions in batches of `batch`, telling each batch's results in
/// reverse order; the positions in the order asked.
fn run(s: &mut dyn MultiStrategy, space: &Space, budget: usize, batch: usize) -> Vec<usize> {
    let mut asked = Vec::new();
    while asked.len() < budget {
        let got = s.ask(batch.min(budget - asked.len()));
        if got.is_empty() {
            break;
        }
        assert!(got.len() <= batch);
        let trials: Vec<MultiTrial> = got
            .iter()
            .rev()
            .map(|&p| MultiTrial {
                position: p,
                values: values(space, p),
            })
            .collect();
        s.tell(&trials);
        asked.extend(got);
    }
    asked
}

/// Runs every multi-objective strategy on `space` at each (seed, budget, batch) and checks the
/// contract: the budget spent, valid positions asked once, exhaustion, and a seed fixing the run.
fn keeps_the_contract(space: &Arc<Space>, runs: &[(u64, usize, usize)]) {
    for name in MULTI_STRATEGY_NAMES {
        for &(seed, budget, batch) in runs {
            let spec = name.parse().unwrap();
            let mut s = build_multi(&spec, Arc::clone(space), 2, seed).unwrap();
            let asked = run(s.as_mut(), space, budget, batch);
            assert_eq!(asked.len(), budget.min(space.len()), "{name}");
            let mut seen = HashSet::new();
            for &p in &asked {
                assert!(p < space.len(), "{name}");
                assert!(space.contains(&space.indices(p)), "{name}");
                assert!(seen.insert(p), "{name} asked {p} twice");
            }
            if budget >= space.len() {
                assert!(s.ask(3).is_empty(), "{name}: exhausted");
            }
            let mut again = build_multi(&spec, Arc::clone(space), 2, seed).unwrap();
            assert_eq!(run(again.as_mut(), space, budget, batch), asked, "{name}");
        }
    }
}

#[test]
fn every_multi_strategy_keeps_the_contract() {
    keeps_the_contract(&space(), &[(1, 30, 1), (2, 70, 3), (3, 5, 4), (4, 200, 2)]);
}

#[test]
fn a_strategy_learns_from_results_it_did_not_ask_and_never_asks_them() {
    let space = space();
    let told: Vec<usize> = (0..space.len()).step_by(3).collect();
    for name in MULTI_STRATEGY_NAMES {
        let mut s = build_multi(&name.parse().unwrap(), Arc::clone(&space), 2, 7).unwrap();
        let trials: Vec<MultiTrial> = told
            .iter()
            .map(|&p| MultiTrial {
                position: p,
                values: values(&space, p),
            })
            .collect();
        s.tell(&trials);
        let asked = run(s.as_mut(), &space, space.len(), 2);
        assert_eq!(asked.len(), space.len() - told.len(), "{name}");
        assert!(asked.iter().all(|p| !told.contains(p)), "{name}");
    }
}

/// A space with a graphics clock, some configurations valid only at some levels.
fn clock_space() -> Arc<Space> {
    Arc::new(
        SpaceBuilder::new()
            .param("tile", [1, 2, 4, 8])
            .param("nvml_gr_clock", [1400, 1500, 1600, 1700, 1800])
            .param("warps", [1, 2, 4])
            .constraint("tile * warps <= 16 or nvml_gr_clock < 1700")
            .constraint("tile > 1 or nvml_gr_clock > 1400")
            .build()
            .unwrap(),
    )
}

#[test]
fn every_multi_strategy_keeps_the_contract_on_a_space_with_a_clock() {
    keeps_the_contract(&clock_space(), &[(1, 20, 1), (2, 45, 4), (3, 200, 3)]);
}

#[test]
fn sweep_sweeps_the_clock_of_the_best_configuration_it_found() {
    // Time falls with the clock and with the tile; so the best configuration at the top clock is
    // (tile 8, warps 2), and a run long enough asks it at every level where it is valid.
    let space = clock_space();
    let mut s = build_multi(&"sweep".parse().unwrap(), Arc::clone(&space), 2, 5).unwrap();
    let mut asked = Vec::new();
    while asked.len() < 40 {
        let got = s.ask(1);
        let Some(&p) = got.first() else { break };
        let v = space.values(p);
        let num = |i: usize| v[i].as_f64().unwrap();
        let (tile, clock, warps) = (num(0), num(1), num(2));
        let time = (10.0 - tile) * (1.0 + (warps - 2.0).abs()) * 2000.0 / clock;
        s.tell(&[MultiTrial {
            position: p,
            values: Some(vec![time, time * clock * clock / 1e6]),
        }]);
        asked.push(p);
    }
    let best: Vec<usize> = (0..space.len())
        .filter(|&p| {
            let i = space.indices(p);
            i[0] == 3 && i[2] == 1
        })
        .collect();
    assert!(best.len() >= 4);
    assert!(
        best.iter().all(|p| asked.contains(p)),
        "{best:?} in {asked:?}"
    );
}
