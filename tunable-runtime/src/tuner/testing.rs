//! # Test support
//!
//! A one-parameter configuration struct, as `#[tunable]` would generate it, for the tuner's
//! unit tests.

use crate::params::Params;
use tunable_search::Value;

/// A configuration of one integer parameter, `tile`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tile(pub(crate) i64);

impl Params for Tile {
    const NAMES: &'static [&'static str] = &["tile"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(t)] => Some(Tile(*t)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.0)]
    }
}
