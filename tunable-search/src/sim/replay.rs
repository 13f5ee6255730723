//! # Replaying a cache
//!
//! [`Replay`] is an objective over a [`Space`] that answers every configuration from a
//! [`KernelTunerCache`]: what a strategy would have measured on the GPU the cache was recorded on.

use super::SimError;
use crate::format::kernel_tuner::{KernelTunerCache, Observation};
use crate::space::{Space, Value};
use std::sync::Arc;

/// An objective that looks configurations up in a Kernel Tuner cache. Lower is better.
///
/// ```
/// use std::path::Path;
/// use tunable_search::sim::{KernelTunerCache, Observation, Replay};
///
/// let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]}, "cache": {
///   "1": {"time": 3.0}, "2": {"time": 1.0}, "3": {"time": "CompilationFailedConfig"}}}"#;
/// let cache = KernelTunerCache::from_json_text(text, Path::new("x.json")).unwrap();
/// let replay = Replay::new(&cache, None).unwrap();
/// assert_eq!(replay.values(), &[Some(3.0), Some(1.0), None]);
/// assert_eq!(replay.optimum(), Some((1, 1.0)));
/// assert_eq!(replay.failed_count(), 1);
/// assert_eq!(replay.evaluate(0), Some(&Observation::Value(3.0)));
/// assert_eq!(replay.evaluate(7), None);
/// ```
#[derive(Debug)]
pub struct Replay {
    space: Arc<Space>,
    observations: Vec<Observation>,
    values: Vec<Option<f64>>,
}

impl Replay {
    /// Replays `cache` over `space`; with `None`, over the space of the cache's own
    /// configurations (its parameters in `tune_params_keys` order, no constraints).
    ///
    /// A given space (e.g. built from a T1 file's conditions) must have the cache's parameter
    /// names (in any order, values matched by value) and every one of its valid configurations
    /// must be in the cache, else [`SimError::MissingConfig`] names the first one missing. Cache
    /// records outside the space are ignored.
    pub fn new(cache: &KernelTunerCache, space: Option<Space>) -> Result<Self, SimError> {
        let space = match space {
            Some(space) => space,
            None => cache
                .builder()
                .build_from_indices(cache.entries.iter().map(|e| &e.indices))?,
        };
        let to_space = index_tables(cache, &space)?;
        let mut slots: Vec<Option<&Observation>> = vec![None; space.len()];
        let mut indices = vec![0u16; space.dims()];
        'entries: for entry in &cache.entries {
            for (slot, table) in indices.iter_mut().zip(&to_space) {
                let cache_index = entry.indices.get(table.cache_param).copied();
                let Some(i) = cache_index
                    .and_then(|c| table.cache_index.get(usize::from(c)).copied().flatten())
                else {
                    continue 'entries;
                };
                *slot = i;
            }
            if let Some(position) = space.position(&indices) {
                slots[position] = Some(&entry.observation);
            }
        }
        let missing = slots.iter().filter(|s| s.is_none()).count();
        if let Some(first) = slots.iter().position(Option::is_none) {
            return Err(SimError::MissingConfig {
                config: describe(&space, first),
                missing,
            });
        }
        let observations: Vec<Observation> = slots.into_iter().flatten().cloned().collect();
        let values = observations.iter().map(Observation::value).collect();
        Ok(Replay {
            space: Arc::new(space),
            observations,
            values,
        })
    }

    /// An objective given by its value per position of `space` (`None` = failed), e.g. a
    /// synthetic function evaluated on a grid.
    ///
    /// # Panics
    /// If `values` does not have one entry per configuration of `space`.
    pub fn from_values(space: Space, values: Vec<Option<f64>>) -> Self {
        Self::over(Arc::new(space), values)
    }

    /// Another objective over the same space: its value per position (`None` = failed), e.g.
    /// a second field of the same cache, or this one's values negated to maximize them.
    ///
    /// # Panics
    /// If `values` does not have one entry per configuration of the space.
    ///
    /// ```
    /// use tunable_search::SpaceBuilder;
    /// use tunable_search::sim::Replay;
    ///
    /// let space = SpaceBuilder::new().param("x", [1, 2]).build().unwrap();
    /// let time = Replay::from_values(space, vec![Some(2.0), Some(1.0)]);
    /// let energy = time.with_values(vec![Some(3.0), None]);
    /// assert_eq!(energy.optimum(), Some((0, 3.0)));
    /// assert_eq!(energy.space().len(), 2);
    /// ```
    pub fn with_values(&self, values: Vec<Option<f64>>) -> Replay {
        Self::over(Arc::clone(&self.space), values)
    }

    fn over(space: Arc<Space>, values: Vec<Option<f64>>) -> Replay {
        assert_eq!(values.len(), space.len(), "one value per configuration");
        let observations = values
            .iter()
            .map(|v| match v {
                Some(v) => Observation::Value(*v),
                None => Observation::Failed("failed".into()),
            })
            .collect();
        Replay {
            space,
            observations,
            values,
        }
    }

    /// The space replayed over.
    pub fn space(&self) -> &Space {
        &self.space
    }

    /// A shared handle to the space, as strategies take it.
    pub fn shared_space(&self) -> Arc<Space> {
        Arc::clone(&self.space)
    }

    /// What the cache recorded for the configuration at `position` (`None` if out of range).
    pub fn evaluate(&self, position: usize) -> Option<&Observation> {
        self.observations.get(position)
    }

    /// What the cache recorded for a configuration given by its values, in the space's parameter
    /// order (`None` if it is not a valid configuration of the space).
    pub fn evaluate_values(&self, values: &[Value]) -> Option<&Observation> {
        self.space
            .position_of_values(values)
            .and_then(|p| self.observations.get(p))
    }

    /// The objective value per space position (`None` = failed), as [`ScoreContext`] takes them.
    ///
    /// [`ScoreContext`]: super::ScoreContext
    pub fn values(&self) -> &[Option<f64>] {
        &self.values
    }

    /// The observation per space position.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// The best configuration: its position and value (the first of equal ones), or `None` if
    /// every configuration failed.
    pub fn optimum(&self) -> Option<(usize, f64)> {
        self.values
            .iter()
            .enumerate()
            .filter_map(|(p, v)| v.map(|v| (p, v)))
            .fold(None, |best, (p, v)| match best {
                Some((_, b)) if b <= v => best,
                _ => Some((p, v)),
            })
    }

    /// Number of configurations of the space that failed.
    pub fn failed_count(&self) -> usize {
        self.values.iter().filter(|v| v.is_none()).count()
    }
}

/// For one parameter of the space: which cache parameter it is, and each of that parameter's
/// cache value indices as a space value index (`None`: not a value of the space).
struct IndexTable {
    cache_param: usize,
    cache_index: Vec<Option<u16>>,
}

fn index_tables(cache: &KernelTunerCache, space: &Space) -> Result<Vec<IndexTable>, SimError> {
    let mismatch = || SimError::ParamMismatch {
        space: space.params().iter().map(|p| p.name().to_owned()).collect(),
        cache: cache.params.iter().map(|(n, _)| n.clone()).collect(),
    };
    if cache.params.len() != space.dims() {
        return Err(mismatch());
    }
    space
        .params()
        .iter()
        .map(|p| {
            let cache_param = cache
                .params
                .iter()
                .position(|(n, _)| n == p.name())
                .ok_or_else(mismatch)?;
            let cache_index = cache.params[cache_param]
                .1
                .iter()
                .map(|v| p.index_of(v))
                .collect();
            Ok(IndexTable {
                cache_param,
                cache_index,
            })
        })
        .collect()
}

/// `name=value, ...` of the configuration at `position`.
fn describe(space: &Space, position: usize) -> String {
    let values = space.values(position);
    let pairs: Vec<String> = space
        .params()
        .iter()
        .zip(&values)
        .map(|(p, v)| format!("{}={v}", p.name()))
        .collect();
    pairs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use std::path::Path;

    fn cache() -> KernelTunerCache {
        let text = r#"{"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [10, 20]}, "cache": {
          "1,10": {"time": 4.0}, "1,20": {"time": 2.0}, "2,10": {"time": "RuntimeFailedConfig"}}}"#;
        KernelTunerCache::from_json_text(text, Path::new("t.json")).unwrap()
    }

    #[test]
    fn own_space_holds_the_cached_configurations() {
        let r = Replay::new(&cache(), None).unwrap();
        assert_eq!(r.space().len(), 3);
        assert_eq!(r.values(), &[Some(4.0), Some(2.0), None]);
        assert_eq!(
            r.evaluate_values(&[Value::Int(2), Value::Int(10)]),
            Some(&Observation::Failed("RuntimeFailedConfig".into()))
        );
        assert_eq!(r.evaluate_values(&[Value::Int(2), Value::Int(20)]), None);
        assert_eq!(r.optimum(), Some((1, 2.0)));
    }

    #[test]
    fn a_given_space_may_reorder_parameters_and_values() {
        let space = SpaceBuilder::new()
            .param("b", [20, 10])
            .param("a", [2, 1])
            .constraint("a * b < 40")
            .build()
            .unwrap();
        let r = Replay::new(&cache(), Some(space)).unwrap();
        // positions: (b=20, a=1), (b=10, a=2), (b=10, a=1)
        assert_eq!(r.values(), &[Some(2.0), None, Some(4.0)]);
        assert_eq!(r.failed_count(), 1);
    }

    #[test]
    fn missing_configurations_and_other_parameters_are_errors() {
        let space = SpaceBuilder::new()
            .param("a", [1, 2])
            .param("b", [10, 20])
            .build()
            .unwrap();
        let e = Replay::new(&cache(), Some(space)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "configuration a=2, b=20 of the space is not in the cache (1 configurations missing)"
        );
        let space = SpaceBuilder::new()
            .param("a", [1, 2])
            .param("c", [10, 20])
            .build()
            .unwrap();
        assert!(matches!(
            Replay::new(&cache(), Some(space)),
            Err(SimError::ParamMismatch { .. })
        ));
    }
}
