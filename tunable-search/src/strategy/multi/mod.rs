//! # Several objectives at once
//!
//! A multi-objective strategy searches for the *front* of a space (see [`crate::pareto`]): the
//! configurations no other one beats in every objective. It keeps the ask/tell contract of
//! [`Strategy`](super::Strategy) with vectors of values instead of one: [`MultiStrategy::ask`]
//! proposes distinct positions never asked before and returns none only when every
//! configuration has been asked or while it waits for results it asked for;
//! [`MultiStrategy::tell`] takes [`MultiTrial`]s in any grouping and order. Every value is
//! minimized (a maximized objective arrives negated, so a value may have any sign), and a
//! failed configuration (`values: None`) is data: it ranks below every configuration that has
//! values, as in the single-objective strategies.
//!
//! The strategies, named as the single-objective ones (`name[:key=value]...`, a
//! [`StrategySpec`]) and built by [`build_multi`]:
//! - `random`: uniform sampling without replacement, the baseline;
//! - `nsga`: a steady-state constraint-aware genetic algorithm ranked by non-dominated sorting
//!   and crowding ([`Nsga`]);
//! - `scalar`: single-objective strategies on fixed weightings of the objectives, and a walk
//!   along the front ([`Scalar`]);
//! - `ehvi`: expected hypervolume improvement over a Gaussian process per objective, two
//!   objectives ([`Ehvi`]);
//! - `sweep`: a single-objective strategy over the parameters other than the clocks, with the
//!   clocks held, and sweeps of the best configuration's clock levels ([`Sweep`]);
//! - `auto`: the default, the strategy [`AUTO_MULTI`] names.

mod archive;
pub mod ehvi;
mod frontier;
pub mod nsga;
pub mod random;
mod ratio;
pub mod scalar;
pub mod sweep;

pub use ehvi::{Ehvi, EhviOptions};
pub use nsga::{Nsga, NsgaOptions};
pub use random::MultiRandom;
pub use scalar::{Scalar, ScalarOptions};
pub use sweep::{Sweep, SweepOptions};

use super::{StrategyError, StrategySpec};
use crate::Space;
use std::sync::Arc;

/// One evaluated configuration of a multi-objective search; every value is minimized (a
/// maximized objective arrives negated, so values may have any sign).
#[derive(Clone, Debug, PartialEq)]
pub struct MultiTrial {
    /// Its position in the space.
    pub position: usize,
    /// One value per objective, in the order the strategy was built for; `None`: the
    /// configuration failed. Values of the wrong count or not finite count as a failure.
    pub values: Option<Vec<f64>>,
}

/// An ask/tell strategy over several objectives; the contract is in the
/// [module docs](self).
pub trait MultiStrategy: Send {
    /// Up to `n` distinct positions never asked before. Fewer (even none) while positions asked
    /// earlier are untold means the strategy waits for their results; an empty answer with
    /// nothing untold means all have been asked.
    fn ask(&mut self, n: usize) -> Vec<usize>;
    /// Results of evaluated positions: those it asked for, and others it did not ask (a warm
    /// start, a baseline), which it learns from and does not ask for afterwards.
    fn tell(&mut self, trials: &[MultiTrial]);
}

/// The names [`build_multi`] accepts.
pub const MULTI_STRATEGY_NAMES: [&str; 6] = ["auto", "random", "nsga", "scalar", "ehvi", "sweep"];

/// The strategy `auto` stands for, as a spec of [`build_multi`]: [`Sweep`] with its defaults,
/// iterated local search by adjacent moves ([`ADJACENT_ILS`](super::ADJACENT_ILS)) over the
/// parameters other than the clocks with the clocks held, and sweeps of the best configuration's
/// clock levels; without clock parameters, that search on the first objective. On the clock
/// landscapes the front is one configuration across the clocks, and what decides how much of it a
/// run finds is finding that configuration and then its other clock levels. It was chosen among the
/// strategies of [`MULTI_STRATEGY_NAMES`] and their options by the hypervolume fraction at 25, 50,
/// 100 and 220 evaluations, mean and worst landscape, on the `tile_clock` landscapes and the public
/// energy caches; the commands and figures are in `docs/notes/energy-and-landscapes.md`.
pub const AUTO_MULTI: &str = "sweep";

/// Builds the multi-objective strategy a spec names, for a space, a number of objectives (at
/// least one) and a seed.
///
/// ```
/// use std::sync::Arc;
/// use tunable_search::SpaceBuilder;
/// use tunable_search::strategy::{MultiTrial, build_multi};
/// let space = Arc::new(SpaceBuilder::new().param("a", 0..10).param("b", 0..10).build().unwrap());
/// let mut s = build_multi(&"auto".parse().unwrap(), Arc::clone(&space), 2, 1).unwrap();
/// let asked = s.ask(3);
/// assert_eq!(asked.len(), 3);
/// let trials: Vec<MultiTrial> = asked
///     .iter()
///     .map(|&p| MultiTrial { position: p, values: Some(vec![p as f64, -(p as f64)]) })
///     .collect();
/// s.tell(&trials);
/// assert!(s.ask(2).iter().all(|p| !asked.contains(p)));
/// ```
pub fn build_multi(
    spec: &StrategySpec,
    space: Arc<Space>,
    objectives: usize,
    seed: u64,
) -> Result<Box<dyn MultiStrategy>, StrategyError> {
    let objectives = objectives.max(1);
    Ok(match spec.name.as_str() {
        "auto" => {
            spec.expect_no_options()?;
            let auto: StrategySpec = AUTO_MULTI.parse()?;
            return build_multi(&auto, space, objectives, seed);
        }
        "random" => {
            spec.expect_no_options()?;
            Box::new(MultiRandom::new(space, objectives, seed))
        }
        "nsga" => Box::new(Nsga::new(
            space,
            objectives,
            spec.apply(NsgaOptions::default())?,
            seed,
        )),
        "scalar" => Box::new(Scalar::new(
            space,
            objectives,
            spec.apply(ScalarOptions::default())?,
            seed,
        )?),
        "sweep" => Box::new(Sweep::new(
            space,
            objectives,
            spec.apply(SweepOptions::default())?,
            seed,
        )?),
        "ehvi" => {
            let opts = spec.apply(EhviOptions::default())?;
            if objectives != 2 {
                return Err(StrategyError::BadSpec {
                    spec: spec.to_string(),
                    reason: format!("ehvi searches two objectives, not {objectives}"),
                });
            }
            Box::new(Ehvi::new(space, opts, seed))
        }
        other => {
            return Err(StrategyError::UnknownStrategy {
                name: other.to_owned(),
                known: MULTI_STRATEGY_NAMES.join(", "),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;

    #[test]
    fn every_name_builds_and_unknown_ones_do_not() {
        let space = Arc::new(
            SpaceBuilder::new()
                .param("a", 0..4)
                .param("b", 0..4)
                .build()
                .unwrap(),
        );
        for name in MULTI_STRATEGY_NAMES {
            let spec: StrategySpec = name.parse().unwrap();
            assert!(
                build_multi(&spec, Arc::clone(&space), 2, 1).is_ok(),
                "{name}"
            );
            // Every strategy but `ehvi` searches any number of objectives.
            let three = build_multi(&spec, Arc::clone(&space), 3, 1);
            assert_eq!(three.is_ok(), name != "ehvi", "{name}");
        }
        let bad: StrategySpec = "genetic".parse().unwrap();
        assert!(matches!(
            build_multi(&bad, Arc::clone(&space), 2, 1),
            Err(StrategyError::UnknownStrategy { .. })
        ));
        let bad: StrategySpec = "random:x=1".parse().unwrap();
        assert!(build_multi(&bad, space, 2, 1).is_err());
    }
}
