//! # tunable-search
//!
//! The search side of the tunable auto-tuner: search spaces of tunable parameters under
//! constraints ([`space`]), and the expression language the constraints are written in
//! ([`expr`]). Nothing here touches a device; everything is deterministic for a seed.
//!
//! ```
//! use tunable_search::space::SpaceBuilder;
//!
//! let space = SpaceBuilder::new()
//!     .param("block_size_x", [32, 64, 128, 256])
//!     .param("tile", [1, 2, 4])
//!     .constraint("block_size_x * tile <= 512")
//!     .build()
//!     .unwrap();
//! assert_eq!(space.len(), 11);
//! ```

pub mod bayes;
pub mod defaults;
pub mod error;
pub mod expr;
pub mod format;
pub mod portable;
pub mod sim;
pub mod space;
pub mod strategy;
pub mod suggest;

pub use error::SpaceError;
pub use space::{Space, SpaceBuilder, Value};
