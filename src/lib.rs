//! # tunable
//!
//! Build-time auto-tuning of GPU and CPU kernels. Annotate a kernel with `#[tunable]`, run once
//! with your crate's `autotune` feature to tune it on the real device, and every later build bakes
//! the winner in as constants.
//!
//! ```ignore
//! use tunable::tunable;
//!
//! #[tunable(block = [16, 32, 64, 128], unroll = [1, 2, 4], constraint = "block * unroll <= 256",
//!           key = tunable::key::next_power_of_two(n as u64))]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32], n: usize) {
//!     // `block` and `unroll` are locals of type usize here.
//! }
//! ```
//!
//! The README documents every option. The search engine is [`tunable_search`]; the runtime
//! (measurement, store, tuner) is [`tunable_runtime`].

pub use tunable_macros::tunable;
pub use tunable_runtime::params::Params;
pub use tunable_runtime::{backend, key, measure, store, tuner, verify};
pub use tunable_search::{Space, SpaceBuilder, SpaceError, Value, expr, space, strategy};

/// Not public API: what `#[tunable]` generates code against.
#[doc(hidden)]
pub mod __private {
    pub use tunable_runtime::__private::*;

    /// Whether this build tunes: the `autotune` feature of this crate, which users turn on
    /// through their own crate's feature (`autotune = ["tunable/autotune"]`).
    pub const AUTOTUNE: bool = cfg!(feature = "autotune");
}
