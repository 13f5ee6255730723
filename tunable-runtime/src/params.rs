//! # Parameter structs
//!
//! `#[tunable]` generates one struct per kernel (`MatmulParams` for `matmul`) with a field per
//! tunable parameter, and implements [`Params`] for it. The trait is how code outside the kernel
//! sees a configuration by its parameter names: GPU backends turn it into `-D NAME=value`
//! compiler definitions ([`crate::backend::definitions`]), errors name the configuration at
//! fault with [`Params::describe`], and launch conventions read block sizes by name with
//! [`Params::get`].
//!
//! ```
//! use tunable_runtime::params::Params;
//! use tunable_search::Value;
//!
//! #[derive(Clone, Copy, Debug)]
//! struct Tile { block: usize, unroll: usize }
//!
//! impl Params for Tile {
//!     const NAMES: &'static [&'static str] = &["block", "unroll"];
//!     fn from_values(v: &[Value]) -> Option<Self> {
//!         match v {
//!             [Value::Int(b), Value::Int(u)] => Some(Tile { block: *b as usize, unroll: *u as usize }),
//!             _ => None,
//!         }
//!     }
//!     fn to_values(&self) -> Vec<Value> {
//!         vec![Value::Int(self.block as i64), Value::Int(self.unroll as i64)]
//!     }
//! }
//!
//! let t = Tile { block: 64, unroll: 4 };
//! assert_eq!(t.describe(), "block=64, unroll=4");
//! assert_eq!(t.get("unroll"), Some(Value::Int(4)));
//! ```

use std::fmt::Debug;
use tunable_search::Value;

/// A configuration of a tunable kernel: the struct `#[tunable]` generates.
pub trait Params: Copy + Debug + Send + 'static {
    /// The parameter names, in declared order.
    const NAMES: &'static [&'static str];

    /// Builds the struct from values in declared order (`None` if one does not fit).
    fn from_values(values: &[Value]) -> Option<Self>;

    /// The values in declared order.
    fn to_values(&self) -> Vec<Value>;

    /// The compiled device binaries `#[tunable]` embedded for the kernel's baked configurations:
    /// each a whole artifact file ([`tunable_search::format::artifact`]) stored beside the tuned
    /// file when the configuration was tuned. A GPU backend asked for a configuration loads the
    /// one built from the same source, options and definitions for its device instead of
    /// compiling ([`crate::backend::embedded`]). Empty unless generated; a struct written by
    /// hand may return artifacts too.
    fn artifacts() -> &'static [&'static [u8]] {
        &[]
    }

    /// The value of the parameter called `name`, if there is one.
    fn get(&self, name: &str) -> Option<Value> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        self.to_values().into_iter().nth(i)
    }

    /// The configuration by name, as errors and logs show it: `block=64, unroll=4`.
    fn describe(&self) -> String {
        Self::NAMES
            .iter()
            .zip(self.to_values())
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
