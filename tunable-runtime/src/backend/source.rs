//! # Kernel sources and definitions
//!
//! A [`Source`] is the text of a kernel in CUDA C or OpenCL C, the name of its entry point and
//! its own compiler options; [`definitions`] renders a configuration as `-DNAME=value` options
//! (see [the backend docs](super) for how each type is written).

use crate::params::Params;
use tunable_search::Value;

/// A kernel's source code, its entry point and extra compiler options.
///
/// ```
/// use tunable_runtime::backend::Source;
///
/// static SAXPY: Source = Source::new("saxpy", "__kernel void saxpy(float a) {}")
///     .with_options(&["-cl-fast-relaxed-math"]);
/// assert_eq!(SAXPY.kernel, "saxpy");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// The entry point (`extern "C" __global__` function or `__kernel` function).
    pub kernel: &'static str,
    /// The source text, typically `include_str!("kernel.cl")`.
    pub code: &'static str,
    /// Options passed to the compiler before the definitions (default none).
    pub options: &'static [&'static str],
}

impl Source {
    /// The kernel `kernel` in `code`, without extra options.
    pub const fn new(kernel: &'static str, code: &'static str) -> Source {
        Source {
            kernel,
            code,
            options: &[],
        }
    }

    /// The same source compiled with `options` too.
    pub const fn with_options(self, options: &'static [&'static str]) -> Source {
        Source { options, ..self }
    }

    /// A key identifying the source (its text by address, the entry point and options), for
    /// compile caches.
    #[cfg_attr(
        not(any(feature = "cuda", feature = "opencl", feature = "wgpu")),
        allow(dead_code)
    )]
    pub(crate) fn cache_key(&self, definitions: &[String]) -> (usize, usize, String) {
        let mut opts = format!("{}\n", self.kernel);
        for o in self
            .options
            .iter()
            .copied()
            .chain(definitions.iter().map(String::as_str))
        {
            opts.push_str(o);
            opts.push('\n');
        }
        (self.code.as_ptr() as usize, self.code.len(), opts)
    }
}

/// The configuration as compiler definitions, one `-DNAME=value` per parameter in declared
/// order, or the reason one cannot be written (a float that is not finite, a string that is empty
/// or contains whitespace). Clock parameters ([`tunable_search::clock`]) are settings of the
/// device, not of the program, and are left out.
///
/// ```
/// use tunable_runtime::backend::definitions;
/// use tunable_runtime::params::Params;
/// use tunable_search::Value;
///
/// #[derive(Clone, Copy, Debug)]
/// struct K { tile: usize, alpha: f64, local: bool, real: &'static str }
/// impl Params for K {
///     const NAMES: &'static [&'static str] = &["TILE", "ALPHA", "USE_LOCAL", "REAL"];
///     fn from_values(_: &[Value]) -> Option<Self> { None }
///     fn to_values(&self) -> Vec<Value> {
///         vec![Value::Int(self.tile as i64), Value::Float(self.alpha),
///              Value::Bool(self.local), Value::Str(self.real.into())]
///     }
/// }
/// let k = K { tile: 16, alpha: 1.0, local: true, real: "float" };
/// assert_eq!(definitions(&k).unwrap(), ["-DTILE=16", "-DALPHA=1.0", "-DUSE_LOCAL=1", "-DREAL=float"]);
/// ```
pub fn definitions<P: Params>(params: &P) -> Result<Vec<String>, String> {
    P::NAMES
        .iter()
        .zip(params.to_values())
        // Clock parameters are the device's settings, not the program's: a program does not
        // change, nor get built again, when only the clocks do.
        .filter(|(name, _)| tunable_search::clock::Knob::of_name(name).is_none())
        .map(|(name, v)| {
            let text = match v {
                Value::Int(i) => i.to_string(),
                Value::Float(f) if f.is_finite() => format!("{f:?}"),
                Value::Float(f) => return Err(format!("{name}={f} cannot be a definition")),
                Value::Bool(b) => u8::from(b).to_string(),
                Value::Str(s) if !s.is_empty() && !s.contains(char::is_whitespace) => s,
                Value::Str(s) => {
                    return Err(format!(
                        "{name}={s:?} cannot be a definition (empty or contains whitespace)"
                    ));
                }
            };
            Ok(format!("-D{name}={text}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug)]
    struct S(&'static str, f64);

    impl Params for S {
        const NAMES: &'static [&'static str] = &["MODE", "X"];
        fn from_values(_: &[Value]) -> Option<Self> {
            None
        }
        fn to_values(&self) -> Vec<Value> {
            vec![Value::Str(self.0.into()), Value::Float(self.1)]
        }
    }

    #[test]
    fn unwritable_values_are_reasons_not_panics() {
        assert_eq!(
            definitions(&S("fast", 1e-5)).unwrap(),
            ["-DMODE=fast", "-DX=1e-5"]
        );
        assert!(definitions(&S("a b", 1.0)).unwrap_err().contains("MODE"));
        assert!(definitions(&S("", 1.0)).is_err());
        assert!(
            definitions(&S("x", f64::INFINITY))
                .unwrap_err()
                .contains("X=inf")
        );
    }

    #[test]
    fn cache_keys_differ_by_definitions_and_options() {
        static A: Source = Source::new("k", "code");
        let b = A.with_options(&["-O3"]);
        let d1 = vec!["-DT=1".to_owned()];
        let d2 = vec!["-DT=2".to_owned()];
        assert_ne!(A.cache_key(&d1), A.cache_key(&d2));
        assert_ne!(A.cache_key(&d1), b.cache_key(&d1));
        assert_eq!(A.cache_key(&d1), A.cache_key(&d1.clone()));
    }
}
