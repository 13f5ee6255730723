//! # Problem-size keys
//!
//! A tuned configuration is stored per device and per *key*, a `u64` computed from the kernel's
//! arguments by the `key = ...` option of `#[tunable]`. Keys should be coarse: every distinct key
//! is tuned separately and ships as one entry of the baked table, and a size that was never tuned
//! falls back to the nearest tuned key. Bucketing sizes (rounding up to a power of two, or to a
//! multiple) keeps the table small and covers unseen sizes with a configuration tuned for a
//! similar one.

/// `n` rounded up to a power of two (1 for 0).
pub fn next_power_of_two(n: u64) -> u64 {
    n.max(1).checked_next_power_of_two().unwrap_or(1 << 63)
}

/// `n` rounded up to a power of `base` (>= 2), CubeCL's "anchor".
pub fn anchor(n: u64, base: u64) -> u64 {
    let base = base.max(2);
    let mut k = 1u64;
    while k < n {
        match k.checked_mul(base) {
            Some(x) => k = x,
            None => return u64::MAX,
        }
    }
    k
}

/// `n` rounded up to a multiple of `m` (>= 1).
pub fn round_up(n: u64, m: u64) -> u64 {
    let m = m.max(1);
    n.div_ceil(m).saturating_mul(m)
}

/// The bit length of `n` (0 for 0): sizes within a factor of two share a bucket.
pub fn log2_bucket(n: u64) -> u64 {
    u64::from(u64::BITS - n.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(next_power_of_two(0), 1);
        assert_eq!(next_power_of_two(1000), 1024);
        assert_eq!(anchor(1000, 4), 1024);
        assert_eq!(anchor(17, 4), 64);
        assert_eq!(round_up(1000, 256), 1024);
        assert_eq!(log2_bucket(1000), 10);
        assert_eq!(log2_bucket(1024), 11);
    }
}
