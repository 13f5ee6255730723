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
//!
//! ## What a reader guarantees on bad bytes
//!
//! Files come from disk, version control and other machines: any of them may be damaged or
//! forged. Every reader here returns an error naming the file and what is wrong, never panics
//! or aborts, and uses memory bounded by a small multiple of the file's size:
//! - the tuned file and artifacts refuse files over their maximum ([`tuned::MAX_SIZE`], 64 MiB;
//!   [`artifact::MAX_SIZE`], 512 MiB) unread, and decode bincode with a limit (eight times the
//!   payload) that refuses a forged length before allocating; inside `#[tunable]` such a file
//!   is a compile error on the kernel's name;
//! - Kernel Tuner caches refuse more than `kernel_tuner::MAX_TEXT` (512 MiB, also after gzip
//!   decompression), and a cache written one record per line loses only the lines that do not
//!   parse, each listed with its line number (`KernelTunerCache::skipped`); the runtime's journal
//!   also keeps a copy of the original before rewriting it and locks out concurrent writers
//!   (`tunable_runtime::journal`);
//! - file names are built from kernel names checked by [`crate::name`].
//!
//! `tests/fuzz_formats.rs` fuzzes the three readers with structure-aware inputs (valid
//! checksums around mutated payloads, journals with garbage lines) under a counting allocator.

pub mod artifact;
mod frame;
#[cfg(feature = "search")]
pub mod kernel_tuner;
pub mod tuned;
