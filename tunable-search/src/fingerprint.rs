//! # Fingerprints
//!
//! A stable 64-bit hash for what decides whether earlier results still apply: the kernel's body
//! (hashed by `#[tunable]` at compile time), and the journal's name (space, body and device).
//! FNV-1a, because it must give the same value in the proc macro, in the binary and in
//! `cargo tunable`, on every platform and Rust version (`std`'s hasher promises none of that).

/// FNV-1a over `parts`, each followed by a separator byte, so that `["ab", "c"]` and
/// `["a", "bc"]` differ.
///
/// ```
/// use tunable_search::fingerprint::fnv1a;
///
/// assert_eq!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"ab", b"c"]));
/// assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
/// ```
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for part in parts {
        for &b in part.iter().chain(&[0x1e]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}
