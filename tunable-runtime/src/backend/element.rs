//! # Buffer elements
//!
//! The element types device buffers hold: plain numbers, which every backend can copy byte for
//! byte and verification can read as `f64`.

mod sealed {
    pub trait Sealed {}
}

/// A number a device buffer can hold: `f32`, `f64`, and 8- to 64-bit integers.
pub trait Element: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// The value as `f64`, for output verification.
    fn to_f64(self) -> f64;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

element!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

/// `src`'s elements as `f64` into `out` (replacing what it held, reusing its memory), on
/// several threads for large outputs: how the device buffers' reads widen their elements.
#[cfg(any(feature = "cuda", feature = "opencl", feature = "wgpu"))]
pub(crate) fn widen_into<T: Element>(src: &[T], out: &mut Vec<f64>) {
    if out.len() != src.len() {
        out.clear();
        out.resize(src.len(), 0.0);
    }
    let widen = |(o, s): (&mut [f64], &[T])| {
        for (o, &s) in o.iter_mut().zip(s) {
            *o = s.to_f64();
        }
    };
    let threads = crate::verify::threads_for(src.len());
    if threads == 1 {
        widen((out, src));
        return;
    }
    let chunk = src.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for pair in out.chunks_mut(chunk).zip(src.chunks(chunk)) {
            scope.spawn(move || widen(pair));
        }
    });
}

#[cfg(all(test, any(feature = "cuda", feature = "opencl", feature = "wgpu")))]
mod tests {
    use super::*;

    #[test]
    fn widening_on_several_threads_keeps_every_element_in_place() {
        let n = (1 << 20) + 7;
        let src: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919) - 3).collect();
        // A reused vector of another length, then of the same length.
        let mut out = vec![9.0; 5];
        for _ in 0..2 {
            widen_into(&src, &mut out);
            assert_eq!(out.len(), n);
            assert!(out.iter().zip(&src).all(|(&o, &s)| o == f64::from(s)));
        }
        widen_into(&src[..3], &mut out);
        assert_eq!(out, [-3.0, 7916.0, 15835.0]);
    }
}
