//! # Falling back to the default configuration
//!
//! A shipped build runs the configuration its baked table or portable set names for a call. If
//! that configuration fails (a kernel that returns `Result` returns `Err`: its program no longer
//! compiles, it exceeds a limit of this device, its binary is refused), the call does not fail:
//! the entry point runs the kernel's default configuration instead, once the arguments are
//! restored (`restore`), and says so on stderr, once per kernel and key:
//!
//! ```text
//! tunable: vector_add_wgpu (key 4194304): the tuned configuration (block_size_x=256, per_thread=8) failed (…); running the default configuration from now on; tune it again with `cargo tunable tune --kernel vector_add_wgpu`
//! ```
//!
//! From then on, calls of that kernel with that key run the default directly ([`unless_failed`]):
//! the failing configuration is not tried on every call. The default's own failure is the
//! call's, as without tuning. A kernel that does not return `Result` has no way to say it failed
//! and runs its configuration as before.

use super::lookup::Variant;
use super::portable::Shipped;
use crate::params::Params;
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether any configuration failed in this process: the calls of a process where none did
/// read this flag only.
static ANY: AtomicBool = AtomicBool::new(false);
/// The (kernel, key) slots whose tuned configuration failed.
static FAILED: Mutex<Option<HashSet<(&'static str, u64)>>> = Mutex::new(None);

/// `variant`, unless the tuned configuration of `kernel` for `key` failed earlier in this
/// process: then the default, run by the generic body.
#[inline]
pub fn unless_failed<P: Params>(kernel: &Shipped<P>, key: u64, variant: Variant<P>) -> Variant<P> {
    if !ANY.load(Ordering::Relaxed) || !failed(kernel.kernel, key) {
        return variant;
    }
    Variant::generic(kernel.default)
}

/// Whether a failure of `variant` falls back: whether it is another configuration than the
/// kernel's default.
pub fn falls_back<P: Params>(kernel: &Shipped<P>, variant: &Variant<P>) -> bool {
    variant.params.to_values() != kernel.default.to_values()
}

/// Records that `variant`, run for `key`, failed for `reason`, and says so on stderr (once per
/// kernel and key); the caller then runs the default.
pub fn fall_back<P: Params>(kernel: &Shipped<P>, key: u64, variant: &Variant<P>, reason: &str) {
    let mut slots = FAILED.lock().unwrap_or_else(|e| e.into_inner());
    let first = slots
        .get_or_insert_with(HashSet::new)
        .insert((kernel.kernel, key));
    ANY.store(true, Ordering::Relaxed);
    if first {
        eprintln!(
            "tunable: {name} (key {key}): the tuned configuration ({config}) failed ({reason}); \
             running the default configuration from now on; tune it again with \
             `cargo tunable tune --kernel {name}`",
            name = kernel.kernel,
            config = variant.params.describe(),
        );
    }
}

/// Whether the tuned configuration of `kernel` for `key` failed in this process.
pub(crate) fn failed(kernel: &str, key: u64) -> bool {
    let slots = FAILED.lock().unwrap_or_else(|e| e.into_inner());
    slots
        .as_ref()
        .is_some_and(|s| s.iter().any(|&(k, n)| k == kernel && n == key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuner::testing::Tile;

    #[test]
    fn a_failed_configuration_falls_back_for_its_kernel_and_key_only() {
        static K: Shipped<Tile> = Shipped {
            kernel: "fallback_test",
            table: &[],
            portable: &[],
            default: Tile(1),
        };
        let tuned = Variant {
            params: Tile(4),
            instance: Some(0),
        };
        assert!(falls_back(&K, &tuned));
        assert!(!falls_back(&K, &Variant::generic(Tile(1))));
        assert_eq!(unless_failed(&K, 7, tuned), tuned);
        fall_back(&K, 7, &tuned, "too large");
        assert_eq!(unless_failed(&K, 7, tuned), Variant::generic(Tile(1)));
        assert_eq!(unless_failed(&K, 8, tuned), tuned);
        assert!(failed("fallback_test", 7) && !failed("other", 7));
    }
}
