//! # File formats
//!
//! Every file format of the tuner has one home here, used by whoever reads or writes it.
//!
//! - [`kernel_tuner`]: Kernel Tuner cache files, the interchange format of measurements: read
//!   by the replays of [`crate::sim`], written (and read back) by the runtime's journal.
//! - [`tuned`]: the tuned-configuration file `tuned/<kernel>.bin`: written by the runtime's store,
//!   read by the runtime and, at compile time, by `#[tunable]` to bake its entries in. It
//!   depends on serde, bincode and std only, so that it stays cheap to build.
//! - [`artifact`]: the compiled device binaries of GPU kernels' winners, beside the tuned file in
//!   `tuned/<kernel>.artifacts/`: written by the runtime's store, embedded by `#[tunable]`,
//!   loaded by the GPU backends, listed by `cargo tunable show`.
//!
//! The tuned file and the artifacts share one frame (`frame.rs`: magic, version, length, checksum).

pub mod artifact;
mod frame;
#[cfg(feature = "search")]
pub mod kernel_tuner;
pub mod tuned;
