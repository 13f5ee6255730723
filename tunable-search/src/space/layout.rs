//! # Configuration keys
//!
//! A configuration is a tuple of value indices, one per parameter. Internally it is packed into a
//! `u64` key: each parameter gets `ceil(log2(values))` bits, the first declared parameter in the
//! most significant bits. Sorting keys therefore sorts configurations lexicographically in declared
//! order (the order of `itertools.product`, as Kernel Tuner lists them), and decoding is a shift
//! and a mask per parameter.

/// Bit positions of every parameter in a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub shifts: Vec<u32>,
    pub masks: Vec<u64>,
    pub bits: u32,
}

impl Layout {
    /// The layout for parameters with `counts[i]` values each; `Err(bits)` beyond 64 bits.
    pub(crate) fn new(counts: &[usize]) -> Result<Self, u32> {
        let widths: Vec<u32> = counts
            .iter()
            .map(|&n| usize::BITS - (n.max(1) - 1).leading_zeros())
            .collect();
        let bits: u32 = widths.iter().sum();
        if bits > 64 {
            return Err(bits);
        }
        let mut shifts = vec![0; counts.len()];
        let mut acc = 0;
        for i in (0..counts.len()).rev() {
            shifts[i] = acc;
            acc += widths[i];
        }
        let masks = widths
            .iter()
            .map(|&w| if w == 0 { 0 } else { (1u64 << w) - 1 })
            .collect();
        Ok(Layout {
            shifts,
            masks,
            bits,
        })
    }

    #[inline]
    pub(crate) fn encode(&self, indices: &[u16]) -> u64 {
        indices
            .iter()
            .zip(&self.shifts)
            .fold(0, |k, (&i, &s)| k | (u64::from(i) << s))
    }

    #[inline]
    pub(crate) fn get(&self, key: u64, param: usize) -> u16 {
        ((key >> self.shifts[param]) & self.masks[param]) as u16
    }

    #[inline]
    pub(crate) fn decode(&self, key: u64, out: &mut [u16]) {
        for (p, o) in out.iter_mut().enumerate() {
            *o = self.get(key, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_order() {
        let l = Layout::new(&[37, 1, 6, 2]).unwrap();
        // 37 values: 6 bits, 1 value: none, 6 values: 3 bits, 2 values: 1 bit.
        assert_eq!(l.bits, 10);
        let a = [3u16, 0, 5, 1];
        let mut out = [0u16; 4];
        l.decode(l.encode(&a), &mut out);
        assert_eq!(out, a);
        assert!(l.encode(&[1, 0, 5, 1]) < l.encode(&[2, 0, 0, 0]));
        assert_eq!(Layout::new(&[1 << 16; 5]), Err(80));
    }
}
