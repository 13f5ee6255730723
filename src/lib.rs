//! # tunable
//!
//! Build-time auto-tuning of GPU and CPU kernels. This facade re-exports the parts users touch;
//! today that is the search-space engine of [`tunable_search`].

pub use tunable_search::{Space, SpaceBuilder, SpaceError, Value, expr, space};
