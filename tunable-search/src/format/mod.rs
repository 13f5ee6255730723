//! # File formats
//!
//! Every file format of the tuner has one home here, used by whoever reads or writes it.
//!
//! - [`kernel_tuner`]: Kernel Tuner cache files, the interchange format of measurements: read
//!   by the replays of [`crate::sim`], written (and read back) by the runtime's journal.

pub mod kernel_tuner;
