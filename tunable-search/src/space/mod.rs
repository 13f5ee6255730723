//! # Search spaces
//!
//! A [`Space`] is a list of typed parameters and the constraints between them, built once into
//! the set of valid configurations. Configurations are identified by their values; internally by
//! one value index per parameter (`&[u16]`), and by their *position* in the space, `0..len()`,
//! in lexicographic order of the declared parameters (Kernel Tuner's order).
//!
//! Construction solves the constraints rather than filtering the Cartesian product (module
//! `solve`); the valid set is stored as one packed `u64` key per configuration
//! with an O(1) hash index for membership. The queries strategies need live beside it:
//! membership, uniform and Latin-hypercube / maximin samples ([`sample`]), neighbours under
//! Kernel Tuner's four rules ([`neighbours`]), true parameter bounds and normalized coordinates.

mod def;
pub mod device;
pub mod device_property;
mod layout;
pub mod load;
pub mod neighbours;
mod param;
pub(crate) use param::is_identifier;
#[cfg(test)]
mod proptests;
#[cfg(feature = "search")]
pub mod sample;
mod solve;
mod value;

pub use def::SpaceDef;
pub use device::{DEVICE_PROPERTIES, DeviceProperties};
pub use neighbours::Neighbourhood;
pub use param::Param;
pub use value::{Value, ValueKind};

use crate::SpaceError;
use crate::expr::compile::Compiler;
use crate::expr::parse;
use crate::expr::program::{Program, V};
use layout::Layout;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;
use std::time::Instant;

/// Names Kernel Tuner multiplies for its implicit thread-count restriction.
const BLOCK_SIZE_NAMES: [&str; 3] = ["block_size_x", "block_size_y", "block_size_z"];

/// Describes a space to build: parameters, constraints and options.
///
/// ```
/// use tunable_search::SpaceBuilder;
/// let space = SpaceBuilder::new()
///     .param("block_size_x", [16, 32, 64])
///     .param("block_size_y", [1, 2, 4, 8])
///     .max_threads(128)
///     .build()
///     .unwrap();
/// assert_eq!(space.len(), 4 + 3 + 2); // pairs with x * y <= 128
/// ```
#[derive(Clone, Debug, Default)]
pub struct SpaceBuilder {
    name: Option<String>,
    params: Vec<(String, Vec<Value>)>,
    constraints: Vec<String>,
    max_threads: Option<i64>,
    threads: Option<usize>,
    device: DeviceProperties,
}

impl SpaceBuilder {
    /// An empty description.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the space (shown by tools; not part of its identity).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds a parameter with its values, in declared order.
    pub fn param<V: Into<Value>>(
        mut self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.params
            .push((name.into(), values.into_iter().map(Into::into).collect()));
        self
    }

    /// Adds a constraint in the expression language of [`crate::expr`].
    pub fn constraint(mut self, text: impl Into<String>) -> Self {
        self.constraints.push(text.into());
        self
    }

    /// Adds several constraints.
    pub fn constraints<S: Into<String>>(mut self, texts: impl IntoIterator<Item = S>) -> Self {
        self.constraints.extend(texts.into_iter().map(Into::into));
        self
    }

    /// Adds Kernel Tuner's implicit `block_size_x * block_size_y * block_size_z <= max_threads`,
    /// over those of the three names that are parameters (nothing if none is).
    pub fn max_threads(mut self, max_threads: i64) -> Self {
        self.max_threads = Some(max_threads);
        self
    }

    /// Binds the device properties that constraints name as `device.<property>` to `device`'s
    /// values ([`device`]: without a table, or for a property it lacks,
    /// the conjuncts that read a property hold).
    pub fn device(mut self, device: DeviceProperties) -> Self {
        self.device = device;
        self
    }

    /// Threads used for construction (default: the machine's available parallelism, at most 8).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Checks the description and builds the space.
    pub fn build(self) -> Result<Space, SpaceError> {
        self.build_inner(None)
    }

    /// Builds a space whose configurations are exactly those listed (as value indices, one per
    /// parameter) that also satisfy the constraints; duplicates are dropped. This is how a space
    /// is rebuilt from the keys of a Kernel Tuner cache.
    ///
    /// ```
    /// use tunable_search::SpaceBuilder;
    /// let s = SpaceBuilder::new().param("a", [1, 2, 3]).param("b", [1, 2])
    ///     .build_from_indices([vec![0, 1], vec![2, 0], vec![0, 1]]).unwrap();
    /// assert_eq!(s.len(), 2);
    /// ```
    pub fn build_from_indices<I: AsRef<[u16]>>(
        self,
        configs: impl IntoIterator<Item = I>,
    ) -> Result<Space, SpaceError> {
        let configs: Vec<Vec<u16>> = configs.into_iter().map(|c| c.as_ref().to_vec()).collect();
        self.build_inner(Some(configs))
    }

    fn build_inner(self, listed: Option<Vec<Vec<u16>>>) -> Result<Space, SpaceError> {
        let start = Instant::now();
        let mut params = Vec::with_capacity(self.params.len());
        for (name, values) in self.params {
            if params.iter().any(|p: &Param| p.name() == name) {
                return Err(SpaceError::DuplicateParam { name });
            }
            params.push(Param::new(name, values)?);
        }
        let mut constraints = self.constraints;
        if let Some(max) = self.max_threads {
            let present: Vec<&str> = BLOCK_SIZE_NAMES
                .into_iter()
                .filter(|n| params.iter().any(|p| p.name() == *n))
                .collect();
            if !present.is_empty() {
                constraints.push(format!("{} <= {max}", present.join(" * ")));
            }
        }
        let mut compiler =
            Compiler::new(params.iter().map(|p| (p.name(), p.values()))).device(self.device);
        for (index, text) in constraints.iter().enumerate() {
            let add = parse(text).and_then(|e| compiler.add_constraint(index, text, &e));
            add.map_err(|error| SpaceError::Constraint {
                index,
                text: text.clone(),
                error: Box::new(error),
            })?;
        }
        let program = compiler.finish();
        let counts: Vec<usize> = params.iter().map(|p| p.values().len()).collect();
        let layout = Layout::new(&counts).map_err(|bits| SpaceError::TooLarge { bits })?;
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(8)
        });
        let keys = match listed {
            None => solve::solve(&program, &layout, threads),
            Some(list) => {
                let mut scratch = Vec::new();
                let mut keys = Vec::with_capacity(list.len());
                for (i, c) in list.iter().enumerate() {
                    let fits = c.len() == counts.len()
                        && c.iter().zip(&counts).all(|(&v, &n)| (v as usize) < n);
                    if !fits {
                        return Err(SpaceError::BadConfig {
                            index: i,
                            indices: c.clone(),
                        });
                    }
                    if program.check(c, &mut scratch) {
                        keys.push(layout.encode(c));
                    }
                }
                keys.sort_unstable();
                keys.dedup();
                keys
            }
        };
        let cartesian = counts.iter().map(|&c| c as u128).product();
        Ok(Space {
            name: self.name,
            params,
            constraints,
            program,
            layout,
            keys,
            index: OnceLock::new(),
            marginals: OnceLock::new(),
            cartesian,
            build_seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// FNV-1a, 64 bits: a stable hash for fingerprints.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A multiplicative hasher for configuration keys (they are already well-spread integers).
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, k: u64) {
        let x = (self.0 ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

type KeyIndex = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// A built search space: parameters, constraints and every valid configuration.
#[derive(Debug)]
pub struct Space {
    name: Option<String>,
    params: Vec<Param>,
    constraints: Vec<String>,
    program: Program,
    layout: Layout,
    keys: Vec<u64>,
    index: OnceLock<KeyIndex>,
    marginals: OnceLock<Vec<Vec<bool>>>,
    cartesian: u128,
    build_seconds: f64,
}

impl Space {
    /// The name given when building, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The parameters in declared order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The constraints, as given, plus the implicit `max_threads` one if it applied.
    pub fn constraints(&self) -> &[String] {
        &self.constraints
    }

    /// The same parameters and constraints, built again with `device`'s properties bound
    /// ([`SpaceBuilder::device`]): the configurations of this space that `device` can run.
    /// The fingerprint is the same.
    pub fn on_device(&self, device: &DeviceProperties) -> Result<Space, SpaceError> {
        let mut b = SpaceBuilder::new().device(device.clone());
        b.name = self.name.clone();
        for p in &self.params {
            b = b.param(p.name(), p.values().to_vec());
        }
        b.constraints(self.constraints.iter().cloned()).build()
    }

    /// Number of valid configurations.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no configuration satisfies the constraints.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Size of the Cartesian product of all parameters' values.
    pub fn cartesian_size(&self) -> u128 {
        self.cartesian
    }

    /// Wall time the construction took, in seconds.
    pub fn build_seconds(&self) -> f64 {
        self.build_seconds
    }

    /// Number of parameters.
    pub fn dims(&self) -> usize {
        self.params.len()
    }

    /// Writes the value indices of the configuration at `position` into `out` (one per
    /// parameter). Panics if `position >= len()`.
    pub fn write_indices(&self, position: usize, out: &mut [u16]) {
        self.layout.decode(self.keys[position], out);
    }

    /// The value indices of the configuration at `position`.
    pub fn indices(&self, position: usize) -> Vec<u16> {
        let mut v = vec![0; self.dims()];
        self.write_indices(position, &mut v);
        v
    }

    /// The value index of parameter `param` in the configuration at `position`.
    pub fn index_at(&self, position: usize, param: usize) -> u16 {
        self.layout.get(self.keys[position], param)
    }

    /// The values of the configuration at `position`.
    pub fn values(&self, position: usize) -> Vec<Value> {
        self.values_of(&self.indices(position))
    }

    /// The values named by value indices.
    pub fn values_of(&self, indices: &[u16]) -> Vec<Value> {
        self.params
            .iter()
            .zip(indices)
            .map(|(p, &i)| p.values()[i as usize].clone())
            .collect()
    }

    /// The value indices of a configuration given by its values (any valid or not), or `None` if
    /// a value is not among its parameter's values.
    pub fn indices_of(&self, values: &[Value]) -> Option<Vec<u16>> {
        if values.len() != self.dims() {
            return None;
        }
        self.params
            .iter()
            .zip(values)
            .map(|(p, v)| p.index_of(v))
            .collect()
    }

    fn index(&self) -> &KeyIndex {
        self.index.get_or_init(|| {
            let mut m = KeyIndex::with_capacity_and_hasher(self.keys.len(), Default::default());
            m.extend(self.keys.iter().enumerate().map(|(i, &k)| (k, i as u32)));
            m
        })
    }

    fn key_of(&self, indices: &[u16]) -> Option<u64> {
        let in_range = indices.len() == self.dims()
            && indices
                .iter()
                .zip(&self.params)
                .all(|(&i, p)| (i as usize) < p.values().len());
        in_range.then(|| self.layout.encode(indices))
    }

    /// The position of a configuration in the space, or `None` if it is invalid. O(1): the hash
    /// index is built on the first call.
    pub fn position(&self, indices: &[u16]) -> Option<usize> {
        self.key_of(indices)
            .and_then(|k| self.index().get(&k))
            .map(|&i| i as usize)
    }

    /// Whether a configuration (by value indices) is valid.
    pub fn contains(&self, indices: &[u16]) -> bool {
        self.position(indices).is_some()
    }

    /// Whether a configuration satisfies the constraints, by evaluating them (no index needed;
    /// agrees with [`contains`](Self::contains)).
    pub fn satisfies(&self, indices: &[u16]) -> bool {
        self.key_of(indices).is_some() && self.program.check(indices, &mut Vec::<V>::new())
    }

    /// The position of a configuration given by values, or `None` if it is not valid.
    pub fn position_of_values(&self, values: &[Value]) -> Option<usize> {
        self.indices_of(values).and_then(|i| self.position(&i))
    }

    /// The true bounds of the valid space: for each parameter the smallest and largest value
    /// index that occurs in some valid configuration (`None` for an empty space).
    pub fn bounds(&self) -> Option<Vec<(u16, u16)>> {
        let first = self.keys.first()?;
        let mut b: Vec<(u16, u16)> = (0..self.dims())
            .map(|p| {
                let i = self.layout.get(*first, p);
                (i, i)
            })
            .collect();
        for &k in &self.keys {
            for (p, (lo, hi)) in b.iter_mut().enumerate() {
                let i = self.layout.get(k, p);
                *lo = (*lo).min(i);
                *hi = (*hi).max(i);
            }
        }
        Some(b)
    }

    /// For each parameter, which of its values occur in some valid configuration (computed on
    /// the first call).
    pub fn marginals(&self) -> &[Vec<bool>] {
        self.marginals.get_or_init(|| {
            let mut m: Vec<Vec<bool>> = self
                .params
                .iter()
                .map(|p| vec![false; p.values().len()])
                .collect();
            for &k in &self.keys {
                for (p, seen) in m.iter_mut().enumerate() {
                    seen[self.layout.get(k, p) as usize] = true;
                }
            }
            m
        })
    }

    /// The parameters that take more than one value (the dimensions a model should see).
    pub fn varying_params(&self) -> Vec<usize> {
        (0..self.dims())
            .filter(|&p| self.params[p].values().len() > 1)
            .collect()
    }

    /// Normalized coordinates of the configuration at `position` in `[0, 1]^k`, one per varying
    /// parameter (see [`varying_params`](Self::varying_params)): value index `i` of `n` values
    /// maps to `i / (n - 1)`, so powers of two and other non-linear value lists are spaced evenly,
    /// as Willemsen et al. recommend ("Bayesian Optimization for auto-tuning GPU kernels").
    pub fn normalized(&self, position: usize) -> Vec<f64> {
        let k = self.keys[position];
        self.varying_params()
            .into_iter()
            .map(|p| f64::from(self.layout.get(k, p)) / (self.params[p].values().len() - 1) as f64)
            .collect()
    }

    /// [`normalized`](Self::normalized) for every configuration, row-major (`len() x k`).
    pub fn normalized_matrix(&self) -> Vec<f64> {
        let vary = self.varying_params();
        let scale: Vec<f64> = vary
            .iter()
            .map(|&p| 1.0 / (self.params[p].values().len() - 1) as f64)
            .collect();
        let mut out = Vec::with_capacity(self.len() * vary.len());
        for &k in &self.keys {
            out.extend(
                vary.iter()
                    .zip(&scale)
                    .map(|(&p, s)| f64::from(self.layout.get(k, p)) * s),
            );
        }
        out
    }

    /// A fingerprint of the definition: parameter names, value kinds and values in order, and the
    /// constraint texts (FNV-1a, 64 bits, with separators, versioned). Stored configurations are
    /// only reused for a space with the same fingerprint.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::new();
        h.write(b"tunable-space-v1");
        for p in &self.params {
            h.write(&[0x1e]);
            h.write(p.name().as_bytes());
            for v in p.values() {
                h.write(&[0x1f, v.kind() as u8]);
                h.write(v.to_string().as_bytes());
            }
        }
        for c in &self.constraints {
            h.write(&[0x1d]);
            h.write(c.as_bytes());
        }
        h.0
    }

    /// For an empty space, a constraint part that no assignment of its own parameters satisfies:
    /// `(constraint index, span of the part in that constraint)`. `None` if the space is not
    /// empty, or if it is empty only through several constraints together.
    pub fn unsatisfiable_part(&self) -> Option<(usize, crate::expr::Span)> {
        const LIMIT: usize = 1 << 20;
        if !self.is_empty() {
            return None;
        }
        let prog = &self.program;
        let mut scratch = Vec::new();
        'conj: for c in &prog.conjuncts {
            let total = prog.assignments(c);
            if total > LIMIT {
                continue;
            }
            let mut assign = vec![(0u16, 0u16); c.params.len()];
            for t in 0..total {
                prog.assignment(c, t, &mut assign);
                if prog.eval_root(c.root, &assign, &mut scratch).truthy() {
                    continue 'conj;
                }
            }
            return Some((c.constraint, c.span));
        }
        None
    }

    /// The packed keys, sorted (crate-internal fast paths).
    pub(crate) fn keys(&self) -> &[u64] {
        &self.keys
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Space {
        SpaceBuilder::new()
            .param("a", [1, 2, 4, 8])
            .param("b", [1, 2, 3])
            .param("c", ["x", "y"])
            .constraint("a * b <= 8")
            .constraint("c == 'x' or a > 1")
            .build()
            .unwrap()
    }

    #[test]
    fn brute_force_agrees() {
        let s = small();
        let mut n = 0;
        for a in [1, 2, 4, 8] {
            for b in [1, 2, 3] {
                for c in ["x", "y"] {
                    let ok = a * b <= 8 && (c == "x" || a > 1);
                    let vals = vec![Value::Int(a), Value::Int(b), Value::from(c)];
                    assert_eq!(s.position_of_values(&vals).is_some(), ok, "{vals:?}");
                    assert_eq!(s.satisfies(&s.indices_of(&vals).unwrap()), ok);
                    n += usize::from(ok);
                }
            }
        }
        assert_eq!(s.len(), n);
        assert_eq!(s.cartesian_size(), 24);
    }

    #[test]
    fn positions_are_lexicographic() {
        let s = small();
        for i in 1..s.len() {
            assert!(s.indices(i - 1) < s.indices(i));
            assert_eq!(s.position(&s.indices(i)), Some(i));
        }
    }

    #[test]
    fn bounds_normalization_and_implicit_limit() {
        let s = SpaceBuilder::new()
            .param("block_size_x", [32, 64, 128, 256])
            .param("block_size_y", [1, 2, 4])
            .param("k", [7])
            .max_threads(128)
            .build()
            .unwrap();
        assert_eq!(s.constraints(), ["block_size_x * block_size_y <= 128"]);
        assert_eq!(s.len(), 3 + 2 + 1);
        assert_eq!(s.bounds().unwrap(), vec![(0, 2), (0, 2), (0, 0)]);
        assert_eq!(s.varying_params(), vec![0, 1]);
        assert_eq!(s.normalized(s.len() - 1), vec![2.0 / 3.0, 0.0]);
        assert_eq!(s.normalized_matrix().len(), 2 * s.len());
    }

    #[test]
    fn bad_descriptions_are_errors() {
        let e = SpaceBuilder::new()
            .param("a", [1])
            .param("a", [2])
            .build()
            .unwrap_err();
        assert!(matches!(e, SpaceError::DuplicateParam { .. }));
        let e = SpaceBuilder::new().param("a", [1, 1]).build().unwrap_err();
        assert!(matches!(e, SpaceError::DuplicateValue { .. }));
        let e = SpaceBuilder::new()
            .param("a", [Value::Int(1), Value::from("x")])
            .build()
            .unwrap_err();
        assert!(matches!(e, SpaceError::MixedKinds { .. }));
        let e = SpaceBuilder::new()
            .param("a", [1, 2])
            .constraint("b > 1")
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("unknown parameter 'b'"), "{e}");
        let e = SpaceBuilder::new()
            .param("a", Vec::<i64>::new())
            .build()
            .unwrap_err();
        assert!(matches!(e, SpaceError::EmptyParam { .. }));
        let e = SpaceBuilder::new().param("a b", [1]).build().unwrap_err();
        assert!(matches!(e, SpaceError::BadParamName { .. }));
    }

    #[test]
    fn unsatisfiable_part_is_located() {
        let s = SpaceBuilder::new()
            .param("a", [1, 2])
            .constraint("a > 0")
            .constraint("a > 0 and a > 5")
            .build()
            .unwrap();
        assert!(s.is_empty());
        let (i, span) = s.unsatisfiable_part().unwrap();
        assert_eq!((i, &s.constraints()[i][span.start..span.end]), (1, "a > 5"));
    }

    #[test]
    fn fingerprint_tracks_the_definition() {
        let a = small().fingerprint();
        assert_eq!(a, small().fingerprint());
        let b = SpaceBuilder::new()
            .param("a", [1, 2, 4, 8])
            .param("b", [1, 2, 3])
            .param("c", ["x", "y"])
            .build()
            .unwrap();
        assert_ne!(a, b.fingerprint());
        let c = SpaceBuilder::new().param("a", [1.0, 2.0]).build().unwrap();
        let d = SpaceBuilder::new().param("a", [1, 2]).build().unwrap();
        assert_ne!(c.fingerprint(), d.fingerprint());
    }

    #[test]
    fn division_by_zero_invalidates_only_that_config() {
        let s = SpaceBuilder::new()
            .param("a", [0, 1, 2])
            .constraint("4 % a == 0")
            .build()
            .unwrap();
        assert_eq!(s.len(), 2);
        let s = SpaceBuilder::new()
            .param("a", [0, 1, 2])
            .constraint("a == 0 or 4 / a >= 2")
            .build()
            .unwrap();
        assert_eq!(s.len(), 3);
    }
}
