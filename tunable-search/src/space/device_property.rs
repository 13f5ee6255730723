//! # The names of device properties
//!
//! The fixed list of properties a constraint may name as `device.<name>` (see
//! the `device` module for how they are bound). A leaf: the expression compiler,
//! its errors and the device table all read the list from here.

/// The properties a constraint may name as `device.<name>`, with what each means.
pub const DEVICE_PROPERTIES: [(&str, &str); 6] = [
    (
        "max_threads_per_block",
        "threads a block may have (CUDA: CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
    ),
    (
        "max_shared_memory_per_block",
        "bytes of shared memory a block may use, opted in beyond the static 48 KiB \
         (CUDA: CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
    ),
    (
        "compute_capability",
        "major * 10 + minor (CUDA: 80 for sm_80, 90 for sm_90)",
    ),
    ("multiprocessor_count", "streaming multiprocessors"),
    (
        "max_registers_per_block",
        "32-bit registers a block may use",
    ),
    ("warp_size", "threads of a warp"),
];

/// The prefix of a device property's name in a constraint.
pub(crate) const PREFIX: &str = "device.";

/// Whether `name` (without the prefix) is one of [`DEVICE_PROPERTIES`].
pub(crate) fn known(name: &str) -> bool {
    DEVICE_PROPERTIES.iter().any(|(n, _)| *n == name)
}
