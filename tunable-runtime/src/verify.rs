//! # Output verification
//!
//! A variant that is fast because it computes the wrong thing must not win. With the `verify`
//! option of `#[tunable]` (opt-in per kernel), the tuner checks the output of every variant once,
//! after its first run and before it is timed, against an expected output:
//!
//! - the `answer = <expr>` option: a user-supplied answer (e.g. a CPU reference result), or
//! - by default the *reference variant*: the kernel's default configuration, run once before the
//!   tuning starts.
//!
//! A variant whose output differs is a failed configuration with the reason
//! `wrong output: ...` (how many elements differ and the first of them); it is recorded in the
//! journal and told to the strategy like any failure, and tuning goes on.
//!
//! Outputs are read through [`Output`], implemented for host slices and vectors of numbers and,
//! with the `opencl` / `cuda` features, for device buffers (read back from the device).
//! Elements are compared by [`compare`]: `|actual - expected| <= tolerance * max(1, |expected|)`,
//! a relative tolerance for values above 1 and an absolute one below (default `1e-4`, the
//! `tolerance = ...` option).
//!
//! ```
//! use tunable_runtime::verify::compare;
//!
//! assert!(compare(&[1.0, 2.0005], &[1.0, 2.0], 1e-3).is_ok());
//! let e = compare(&[1.0, 2.5], &[1.0, 2.0], 1e-3).unwrap_err();
//! assert_eq!(e, "wrong output: 1 of 2 elements differ; first at index 1: 2.5, expected 2 (tolerance 0.001)");
//! ```

/// The default tolerance of `verify` when `tolerance` is not given.
pub const DEFAULT_TOLERANCE: f64 = tunable_search::defaults::TOLERANCE;

/// Something whose contents can be compared: a kernel's output.
pub trait Output {
    /// The elements as `f64`, read back from the device if the data lives there.
    fn snapshot(&self) -> Result<Vec<f64>, String>;

    /// The elements as `f64` into `out` (replacing what it held), reusing its memory where
    /// the implementation can: the tuner reads every variant's output this way, and a fresh
    /// vector of a large output costs a page fault per page each time. Default: `snapshot`.
    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        *out = self.snapshot()?;
        Ok(())
    }
}

thread_local! {
    /// A vector of a read output given back after its comparison, for the next read.
    static SPARE: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `o`'s elements as `f64` ([`Output::snapshot_into`]), in the vector last given back on this
/// thread with [`give_back`], if any: what the tuner reads each variant's output with.
pub fn read(o: &(impl Output + ?Sized)) -> Result<Vec<f64>, String> {
    let mut out = SPARE.take();
    o.snapshot_into(&mut out)?;
    Ok(out)
}

/// Keeps `v`'s memory for the next [`read`] on this thread.
pub fn give_back(v: Vec<f64>) {
    SPARE.set(v);
}

macro_rules! host_output {
    ($($t:ty),*) => {$(
        impl Output for [$t] {
            fn snapshot(&self) -> Result<Vec<f64>, String> {
                Ok(self.iter().map(|&x| x as f64).collect())
            }
            fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
                out.clear();
                out.extend(self.iter().map(|&x| x as f64));
                Ok(())
            }
        }
        impl Output for Vec<$t> {
            fn snapshot(&self) -> Result<Vec<f64>, String> {
                self.as_slice().snapshot()
            }
            fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
                self.as_slice().snapshot_into(out)
            }
        }
        impl<const N: usize> Output for [$t; N] {
            fn snapshot(&self) -> Result<Vec<f64>, String> {
                self.as_slice().snapshot()
            }
            fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
                self.as_slice().snapshot_into(out)
            }
        }
    )*};
}

host_output!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl<T: Output + ?Sized> Output for &T {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        (**self).snapshot()
    }
    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        (**self).snapshot_into(out)
    }
}

impl<T: Output + ?Sized> Output for &mut T {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        (**self).snapshot()
    }
    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        (**self).snapshot_into(out)
    }
}

/// Outputs of at least this many elements are widened (the device buffers' reads) and compared
/// ([`compare`]) on several threads: a 2048 x 2048 output read after every variant's first run
/// cost more than the kernel's own runs on one thread.
const PARALLEL_FROM: usize = 1 << 18;

/// The threads that share work over `len` elements: one below [`PARALLEL_FROM`], else up to
/// eight of the machine's cores, each with at least a quarter of that many elements.
pub(crate) fn threads_for(len: usize) -> usize {
    if len < PARALLEL_FROM {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.min(8).min(len / (PARALLEL_FROM / 4)).max(1)
}

/// Whether `a` is within `tolerance * max(1, |e|)` of `e` (never for a NaN).
fn within(a: f64, e: f64, tolerance: f64) -> bool {
    (a - e).abs() <= tolerance * e.abs().max(1.0)
}

/// Whether every element of `actual` is within the tolerance of `expected`'s, in a loop without
/// early exits that the compiler vectorizes (a NaN anywhere fails it), on several threads for
/// large outputs.
fn all_within(actual: &[f64], expected: &[f64], tolerance: f64) -> bool {
    let check = |a: &[f64], e: &[f64]| {
        a.chunks(512).zip(e.chunks(512)).all(|(a, e)| {
            a.iter()
                .zip(e)
                .fold(true, |ok, (&a, &e)| ok & within(a, e, tolerance))
        })
    };
    let threads = threads_for(actual.len());
    if threads == 1 {
        return check(actual, expected);
    }
    let chunk = actual.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = actual
            .chunks(chunk)
            .zip(expected.chunks(chunk))
            .map(|(a, e)| scope.spawn(move || check(a, e)))
            .collect();
        parts.into_iter().all(|p| p.join().unwrap_or(false))
    })
}

/// Checks `actual` against `expected`: same length, and every element within
/// `tolerance * max(1, |expected|)` (NaN matches only NaN). The error is the reason recorded for
/// the failed configuration.
pub fn compare(actual: &[f64], expected: &[f64], tolerance: f64) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!(
            "wrong output: {} elements, expected {}",
            actual.len(),
            expected.len()
        ));
    }
    // The common case first: every element within the tolerance (a NaN fails it, and is judged
    // below).
    if all_within(actual, expected, tolerance) {
        return Ok(());
    }
    let close = |a: f64, e: f64| (a.is_nan() && e.is_nan()) || within(a, e, tolerance);
    let mut bad = actual
        .iter()
        .zip(expected)
        .enumerate()
        .filter(|(_, (a, e))| !close(**a, **e));
    let Some((first, (a, e))) = bad.next() else {
        return Ok(());
    };
    Err(format!(
        "wrong output: {} of {} elements differ; first at index {first}: {a}, expected {e} (tolerance {tolerance})",
        bad.count() + 1,
        expected.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_is_relative_above_one_and_absolute_below() {
        assert!(compare(&[1000.5], &[1000.0], 1e-3).is_ok());
        assert!(compare(&[1002.0], &[1000.0], 1e-3).is_err());
        assert!(compare(&[0.0009], &[0.0], 1e-3).is_ok());
        assert!(compare(&[0.002], &[0.0], 1e-3).is_err());
        assert!(compare(&[f64::NAN], &[f64::NAN], 0.0).is_ok());
        assert!(compare(&[f64::NAN], &[1.0], 1.0).is_err());
        assert!(compare(&[1.0], &[f64::NAN], 1.0).is_err());
    }

    #[test]
    fn large_outputs_are_judged_alike_on_several_threads() {
        // Above the threshold every thread's share is checked: a bad element in the first, a
        // middle or the last share is found and named.
        let n = 3 * PARALLEL_FROM + 5;
        let expected: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        assert!(compare(&expected, &expected, 0.0).is_ok());
        for bad in [0, n / 2, n - 1] {
            let mut actual = expected.clone();
            actual[bad] = actual[bad] * 2.0 + 1.0;
            let e = compare(&actual, &expected, 1e-3).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "wrong output: 1 of {n} elements differ; first at index {bad}:"
                )),
                "{e}"
            );
        }
        let mut nan = expected.clone();
        nan[n - 1] = f64::NAN;
        assert!(compare(&nan, &expected, 1e-3).is_err());
        assert!(compare(&nan, &nan, 1e-3).is_ok());
    }

    #[test]
    fn mismatches_are_counted_and_the_first_is_named() {
        let e = compare(&[0.0, 9.0, 2.0, 9.0], &[0.0, 1.0, 2.0, 3.0], 1e-6).unwrap_err();
        assert!(e.contains("2 of 4 elements differ"), "{e}");
        assert!(e.contains("index 1: 9, expected 1"), "{e}");
        let e = compare(&[1.0], &[1.0, 2.0], 1e-6).unwrap_err();
        assert_eq!(e, "wrong output: 1 elements, expected 2");
    }

    #[test]
    fn reads_reuse_the_vector_given_back() {
        let v = vec![1.5f32, -2.0, 3.0];
        let out = read(&v).unwrap();
        assert_eq!(out, [1.5, -2.0, 3.0]);
        let mut big = Vec::with_capacity(1000);
        big.push(9.0);
        let at = big.as_ptr();
        give_back(big);
        let again = read(&&v[..2]).unwrap();
        assert_eq!(again, [1.5, -2.0]);
        assert_eq!((again.as_ptr(), again.capacity()), (at, 1000));
        // An output without `snapshot_into` of its own still reads.
        struct Plain;
        impl Output for Plain {
            fn snapshot(&self) -> Result<Vec<f64>, String> {
                Ok(vec![7.0])
            }
        }
        assert_eq!(read(&Plain).unwrap(), [7.0]);
    }

    #[test]
    fn host_outputs_snapshot_as_f64() {
        let v = vec![1.5f32, -2.0];
        assert_eq!(v.snapshot(), Ok(vec![1.5, -2.0]));
        assert_eq!((&&v[..1]).snapshot(), Ok(vec![1.5]));
        fn through_mut<O: Output + ?Sized>(o: &mut O) -> Result<Vec<f64>, String> {
            Output::snapshot(&o)
        }
        let mut w = [3u8, 4];
        assert_eq!(through_mut(&mut w), Ok(vec![3.0, 4.0]));
    }
}
