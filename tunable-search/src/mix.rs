//! # Seeded mixing
//!
//! SplitMix64's increment and output function: a fixed, platform-independent way to turn a seed
//! (and a row, an index, a counter) into well-spread bits. Space construction's sampling stream,
//! the ensembles' member seeds, `bayes`'s per-row trial scope and the stress landscapes all draw
//! from it, so their results are the same on every machine.

/// SplitMix64's increment (2^64 divided by the golden ratio), also used to spread small
/// integers before mixing.
pub(crate) const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijective mix of 64 bits.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 mixed bits as a uniform number in `[0, 1)` (their top 53). Only the search engine's
/// users draw numbers (BO's trial scope, the stress landscapes).
#[cfg(feature = "search")]
pub(crate) fn unit_of(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}
