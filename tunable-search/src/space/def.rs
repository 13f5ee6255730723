//! # Space definitions
//!
//! What is needed to rebuild a [`Space`] elsewhere: its parameters with their values, its
//! constraints, and for a listed space its configurations. Serialized as JSON, number kinds
//! survive exactly, so the rebuilt space has the same fingerprint. A distributed study keeps its
//! space this way in the database, and a tuning harness describes a kernel's space this way to
//! the command that creates a study over it.

use crate::{Space, SpaceBuilder, SpaceError, Value};
use serde::{Deserialize, Serialize};

/// What is needed to rebuild a space.
///
/// ```
/// use tunable_search::SpaceBuilder;
/// use tunable_search::space::SpaceDef;
/// let space = SpaceBuilder::new().param("x", [1, 2, 4]).param("y", [1.5, 2.0])
///     .constraint("x * y < 6").build().unwrap();
/// let def = SpaceDef::of(&space, false);
/// let text = serde_json::to_string(&def).unwrap();
/// let again: SpaceDef = serde_json::from_str(&text).unwrap();
/// assert_eq!(again.build().unwrap().fingerprint(), space.fingerprint());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpaceDef {
    /// The space's name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Parameters and their values, in declared order.
    pub params: Vec<(String, Vec<Value>)>,
    /// Constraints (Kernel Tuner's `max_threads` restriction included, as the space holds it).
    #[serde(default)]
    pub constraints: Vec<String>,
    /// For a space that is a listed set of configurations (a cache's own keys) rather than every
    /// assignment satisfying the constraints: each configuration as value indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<Vec<Vec<u16>>>,
}

impl SpaceDef {
    /// The definition of a built space; `listed` keeps its configurations explicitly (for a
    /// space built with [`SpaceBuilder::build_from_indices`]).
    pub fn of(space: &Space, listed: bool) -> Self {
        SpaceDef {
            name: space.name().map(str::to_owned),
            params: space
                .params()
                .iter()
                .map(|p| (p.name().to_owned(), p.values().to_vec()))
                .collect(),
            constraints: space.constraints().to_vec(),
            listed: listed.then(|| (0..space.len()).map(|p| space.indices(p)).collect()),
        }
    }

    /// Builds the space.
    pub fn build(&self) -> Result<Space, SpaceError> {
        let mut b = SpaceBuilder::new();
        if let Some(name) = &self.name {
            b = b.name(name);
        }
        for (name, values) in &self.params {
            b = b.param(name.clone(), values.clone());
        }
        b = b.constraints(self.constraints.iter().cloned());
        match &self.listed {
            Some(configs) => b.build_from_indices(configs),
            None => b.build(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_spaces_keep_exactly_their_configurations() {
        let space = SpaceBuilder::new()
            .param("a", [1, 2, 3])
            .param("m", ["x", "y"])
            .build_from_indices([vec![0, 1], vec![2, 0]])
            .unwrap();
        let def = SpaceDef::of(&space, true);
        let text = serde_json::to_string(&def).unwrap();
        let back: SpaceDef = serde_json::from_str(&text).unwrap();
        let rebuilt = back.build().unwrap();
        assert_eq!(rebuilt.len(), 2);
        assert_eq!(rebuilt.fingerprint(), space.fingerprint());
        assert_eq!(rebuilt.values(1), space.values(1));
    }

    #[test]
    fn max_threads_survives_as_a_constraint() {
        let space = SpaceBuilder::new()
            .param("block_size_x", [32, 64, 128])
            .param("block_size_y", [1, 2, 4])
            .max_threads(128)
            .build()
            .unwrap();
        let rebuilt = SpaceDef::of(&space, false).build().unwrap();
        assert_eq!(rebuilt.len(), space.len());
        assert_eq!(rebuilt.fingerprint(), space.fingerprint());
    }
}
