//! The ask/tell contract of every multi-objective strategy: every asked position is valid (in
//! the space, so it satisfies the constraints), none is asked twice, a small space is exhausted,
//! results told but never asked are never asked, and a seed fixes the run.

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

/// Two conflicting objectives with hidden failures: the first falls with `block_size_x`, the
/// second rises with it.
fn values(space: &Space, pos: usize) -> Option<Vec<f64>> {
    let i = space.indices(pos);
    if (i[0] + i[1]) % 5 == 4 {
        return None;
    }
    let x = f64::from(i[0]);
    let bump = f64::from(i[2] ^ i[1]) * 0.3 + f64::from(i[3]) * 0.2;
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

#[test]
fn every_multi_strategy_keeps_the_contract() {
    let space = space();
    for name in MULTI_STRATEGY_NAMES {
        for (seed, budget, batch) in [(1, 30, 1), (2, 70, 3), (3, 5, 4), (4, 200, 2)] {
            let spec = name.parse().unwrap();
            let mut s = build_multi(&spec, Arc::clone(&space), 2, seed).unwrap();
            let asked = run(s.as_mut(), &space, budget, batch);
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
            let mut again = build_multi(&spec, Arc::clone(&space), 2, seed).unwrap();
            assert_eq!(run(again.as_mut(), &space, budget, batch), asked, "{name}");
        }
    }
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
