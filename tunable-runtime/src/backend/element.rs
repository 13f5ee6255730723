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
