//! # What every landscape kind is made of
//!
//! - [`Mix`]: a seeded stream of numbers (SplitMix64), the same on every platform, and [`hash`],
//!   the stateless version that gives a configuration its own number;
//! - [`Role`] and [`Plan`]: the kinds of parameters a kernel has (a thread-block size that steps
//!   by 16, a power-of-two tile, a small integer, a switch, a categorical choice) and how many
//!   values each gets so that the Cartesian product comes near the size asked for;
//! - [`Point`]: one configuration as the landscapes read it (value index scaled to `[0, 1]` and
//!   the value as a number);
//! - [`Profile`]: the distribution of times relative to the optimum, applied to a structure's
//!   ranking ([`apply_profile`]): the structure says which configurations are better, the profile
//!   how much.

use crate::Space;
use crate::mix::GOLDEN;
pub(crate) use crate::mix::{mix64, unit_of};
use crate::space::Value;

/// A number for `(seed, a, b)`: the same inputs give the same number.
pub(crate) fn hash(seed: u64, a: u64, b: u64) -> u64 {
    mix64(mix64(seed ^ GOLDEN).wrapping_add(a) ^ mix64(b.wrapping_add(0x632b_e59b_d9b4_e019)))
}

/// A standard normal number from two hashes (Box-Muller).
pub(crate) fn normal_of(h1: u64, h2: u64) -> f64 {
    let u1 = unit_of(h1).max(1e-300);
    let u2 = unit_of(h2);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A seeded stream of numbers (SplitMix64).
#[derive(Clone, Debug)]
pub(crate) struct Mix(u64);

impl Mix {
    /// The stream of `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Mix(mix64(seed ^ 0x5851_f42d_4c95_7f2d))
    }

    /// The next 64 bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        unit_of(self.next())
    }

    /// Uniform in `[lo, hi)`.
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (`n >= 1`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

/// What kind of parameter a kernel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A thread-block size: multiples of 16 (16, 32, 48, ...).
    Block,
    /// A power of two: 1, 2, 4, ... (at most 2^10).
    Pow2,
    /// A small integer: 1, 2, 3, ... (unroll factors, stages).
    Int,
    /// A switch: `false`, `true`.
    Switch,
    /// A categorical choice among this many strings.
    Choice(u16),
    /// An unroll factor whose lowest value is a different code path: 0 (no unrolling), then
    /// powers of two, 1, 2, 4, ... (at most 32).
    Unroll,
    /// A small integer with few values: 1 to 4 at most (items per thread, vector lanes).
    Few,
    /// Warps per thread block along one axis of a tile: 1, 2, 4, 8.
    Warps,
    /// The extent of a thread block's tile along one axis: 16, 32, 64, 128, 256.
    Tile,
    /// Shared-memory buffers of a pipelined loop: 1, 2, 3.
    Buffers,
    /// A graphics clock in MHz, always [`CLOCK_LEVELS`] levels: 1395, 1450, ..., 1890.
    Clock,
}

/// The levels of a [`Role::Clock`] parameter.
pub(crate) const CLOCK_LEVELS: usize = 10;

/// The lowest clock of a [`Role::Clock`] parameter, in MHz.
pub(crate) const CLOCK_LOW: f64 = 1395.0;

/// The step between two clock levels, in MHz.
pub(crate) const CLOCK_STEP: f64 = 55.0;

impl Role {
    /// The most values this kind of parameter takes.
    fn cap(self) -> usize {
        match self {
            Role::Block => 256,
            Role::Pow2 => 11,
            Role::Int => 4096,
            Role::Switch => 2,
            Role::Choice(k) => usize::from(k),
            Role::Unroll => 7,
            Role::Few => 4,
            Role::Warps => 4,
            Role::Tile => 5,
            Role::Buffers => 3,
            Role::Clock => CLOCK_LEVELS,
        }
    }

    /// The fewest values: a growing parameter starts at two.
    fn floor(self) -> usize {
        match self {
            Role::Switch | Role::Choice(_) | Role::Clock => self.cap(),
            _ => 2,
        }
    }

    /// Names given to parameters of this role, in order of appearance.
    fn names(self) -> &'static [&'static str] {
        match self {
            Role::Block => &["block_size_x", "block_size_y", "block_size_z"],
            Role::Pow2 => &[
                "tile_size_x",
                "tile_size_y",
                "work_per_thread",
                "vector_width",
                "tile_k",
                "split_k",
            ],
            Role::Int => &[
                "unroll",
                "stages",
                "loop_split",
                "reg_tile",
                "prefetch_distance",
            ],
            Role::Switch => &[
                "use_shared_mem",
                "use_padding",
                "use_ldg",
                "swizzle",
                "double_buffer",
                "use_texture",
            ],
            Role::Choice(_) => &["layout", "algorithm", "cache_mode", "schedule"],
            Role::Unroll => &["loop_unroll", "inner_unroll", "outer_unroll"],
            Role::Few => &[
                "items_per_thread",
                "vector_lanes",
                "ilp",
                "k_stages",
                "prefetch",
            ],
            Role::Warps => &["warps_m", "warps_n", "warps_k"],
            Role::Tile => &["block_m", "block_n", "block_k"],
            Role::Buffers => &["buffers", "stages"],
            Role::Clock => &["nvml_gr_clock", "nvml_mem_clock"],
        }
    }

    /// The `i`-th value of a parameter of this role.
    fn value(self, i: usize) -> Value {
        let i64_of = |x: usize| i64::try_from(x).expect("small");
        match self {
            Role::Block => Value::Int(16 * i64_of(i + 1)),
            Role::Pow2 => Value::Int(1 << i),
            Role::Int => Value::Int(i64_of(i + 1)),
            Role::Switch => Value::Bool(i == 1),
            Role::Choice(_) => Value::Str(
                [
                    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                ]
                .get(i)
                .map_or_else(|| format!("choice{i}"), |s| (*s).to_owned()),
            ),
            Role::Unroll => Value::Int(if i == 0 { 0 } else { 1 << (i - 1) }),
            Role::Few | Role::Buffers => Value::Int(i64_of(i + 1)),
            Role::Warps => Value::Int(1 << i),
            Role::Tile => Value::Int(16 << i),
            Role::Clock => Value::Int(CLOCK_LOW as i64 + CLOCK_STEP as i64 * i64_of(i)),
        }
    }
}

/// The `i`-th value `v` of a parameter as a number: a switch 0 or 1, a string its index `i`.
fn number(v: &Value, i: usize) -> f64 {
    match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        v => v.as_f64().unwrap_or(i as f64),
    }
}

impl Role {
    /// The role a parameter with these values plays: booleans or `0, 1` a switch, strings a
    /// choice, `0` then powers of two an unroll factor, powers of two [`Role::Pow2`], multiples
    /// of 16 a block size, at most four numbers [`Role::Few`], other numbers [`Role::Int`].
    pub(crate) fn of_values(values: &[Value]) -> Role {
        let numbers: Option<Vec<f64>> = values.iter().map(Value::as_f64).collect();
        let strings = values.iter().all(|v| matches!(v, Value::Str(_)));
        let bools = values.iter().all(|v| matches!(v, Value::Bool(_)));
        let Some(numbers) = numbers.filter(|_| !strings && !bools) else {
            return if bools {
                Role::Switch
            } else {
                Role::Choice(u16::try_from(values.len()).unwrap_or(u16::MAX))
            };
        };
        let whole = |x: f64| x.fract() == 0.0 && x >= 1.0;
        let pow2 = |x: f64| whole(x) && (x as u64).is_power_of_two();
        if numbers.len() == 2 && numbers.iter().all(|&x| x == 0.0 || x == 1.0) {
            Role::Switch
        } else if numbers.len() > 2 && numbers[0] == 0.0 && numbers[1..].iter().all(|&x| pow2(x)) {
            Role::Unroll
        } else if numbers.len() > 2 && numbers.iter().all(|&x| pow2(x)) {
            Role::Pow2
        } else if numbers
            .iter()
            .all(|&x| whole(x) && (x as u64).is_multiple_of(16))
        {
            Role::Block
        } else if numbers.len() <= 4 {
            Role::Few
        } else {
            Role::Int
        }
    }
}

/// The parameters of a landscape: their roles, names and value counts.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Per parameter: its role.
    pub roles: Vec<Role>,
    /// Per parameter: its name (unique).
    pub names: Vec<String>,
    /// Per parameter: how many values it takes.
    pub counts: Vec<usize>,
    /// Per parameter: each value as a number (a switch 0 or 1, a string its index).
    pub numbers: Vec<Vec<f64>>,
}

impl Plan {
    /// Counts for `roles` whose product comes as near `size` from below as growing one parameter
    /// at a time allows (the smallest growing parameter grows first); never below each role's
    /// fewest values.
    pub(crate) fn new(roles: &[Role], size: usize) -> Plan {
        let mut counts: Vec<usize> = roles.iter().map(|r| r.floor()).collect();
        let mut product: f64 = counts.iter().map(|&c| c as f64).product();
        loop {
            let grow = (0..roles.len())
                .filter(|&i| counts[i] < roles[i].cap())
                .filter(|&i| product * (counts[i] + 1) as f64 / counts[i] as f64 <= size as f64)
                .min_by_key(|&i| counts[i]);
            let Some(i) = grow else { break };
            product = product * (counts[i] + 1) as f64 / counts[i] as f64;
            counts[i] += 1;
        }
        let mut names = Vec::with_capacity(roles.len());
        let mut seen: Vec<(Role, usize)> = Vec::new();
        for &role in roles {
            let key = match role {
                Role::Choice(_) => Role::Choice(0),
                r => r,
            };
            let n = match seen.iter_mut().find(|s| s.0 == key) {
                Some(s) => {
                    s.1 += 1;
                    s.1 - 1
                }
                None => {
                    seen.push((key, 1));
                    0
                }
            };
            let pool = role.names();
            names.push(match pool.get(n) {
                Some(name) => (*name).to_owned(),
                None => format!("{}_{}", pool[pool.len() - 1], n + 1 - pool.len()),
            });
        }
        let numbers = roles
            .iter()
            .zip(&counts)
            .map(|(role, &n)| (0..n).map(|i| number(&role.value(i), i)).collect())
            .collect();
        Plan {
            roles: roles.to_vec(),
            names,
            counts,
            numbers,
        }
    }

    /// The plan of a given space: its parameters with the roles their values suggest
    /// ([`Role::of_values`]).
    pub(crate) fn of_space(space: &Space) -> Plan {
        let params = space.params();
        Plan {
            roles: params.iter().map(|p| Role::of_values(p.values())).collect(),
            names: params.iter().map(|p| p.name().to_owned()).collect(),
            counts: params.iter().map(|p| p.values().len()).collect(),
            numbers: params
                .iter()
                .map(|p| {
                    let values = p.values().iter().enumerate();
                    values.map(|(i, v)| number(v, i)).collect()
                })
                .collect(),
        }
    }

    /// The values of parameter `i`.
    pub(crate) fn values(&self, i: usize) -> Vec<Value> {
        (0..self.counts[i])
            .map(|k| self.roles[i].value(k))
            .collect()
    }
}

/// The roles `head` followed by `cycle` repeated, `dims` in all.
pub(crate) fn roles(head: &[Role], cycle: &[Role], dims: usize) -> Vec<Role> {
    head.iter()
        .chain(cycle.iter().cycle())
        .take(dims)
        .copied()
        .collect()
}

/// One configuration as a landscape reads it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Point {
    /// Per parameter: the value index scaled to `[0, 1]` (0 for a parameter with one value).
    pub x: Vec<f64>,
    /// Per parameter: the value as a number (a switch is 0 or 1, a choice its index).
    pub v: Vec<f64>,
    /// Per parameter: the value index.
    pub i: Vec<u16>,
    /// The configuration's position in the space.
    pub position: usize,
}

impl Point {
    /// Fills the point from value indices.
    pub(crate) fn set(&mut self, plan: &Plan, indices: &[u16], position: usize) {
        self.x.clear();
        self.v.clear();
        self.i.clear();
        for (k, &ix) in indices.iter().enumerate() {
            let n = plan.counts[k];
            self.x.push(if n > 1 {
                f64::from(ix) / (n - 1) as f64
            } else {
                0.0
            });
            self.v.push(plan.numbers[k][usize::from(ix)]);
            self.i.push(ix);
        }
        self.position = position;
    }

    /// A number for the configuration's value indices with parameter `skip` left out (so that
    /// it does not depend on that parameter); `usize::MAX` leaves none out.
    pub(crate) fn key_without(&self, seed: u64, skip: usize) -> u64 {
        self.i
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != skip)
            .fold(seed, |h, (k, &ix)| hash(h, k as u64, u64::from(ix)))
    }

    /// A uniform number in `[0, 1)` for the configuration's position: roughness on a structure.
    pub(crate) fn roughness(&self, seed: u64) -> f64 {
        unit_of(hash(seed, self.position as u64, 0))
    }

    /// Trailing zero bits of parameter `k`'s integer value (its power-of-two alignment).
    pub(crate) fn alignment(&self, k: usize) -> u32 {
        (self.v[k] as u64).trailing_zeros()
    }
}

/// The distribution of a landscape's valid times relative to its optimum: points
/// `(fraction of configurations strictly better, time / optimum)`, increasing, from `(0, 1)` to
/// `(1, worst)`; between points the logarithm of the ratio is linear in the fraction.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Profile(pub Vec<(f64, f64)>);

impl Profile {
    /// The ratio at fraction `f` in `[0, 1]`.
    pub(crate) fn ratio(&self, f: f64) -> f64 {
        let pts = &self.0;
        let k = pts.partition_point(|p| p.0 <= f).clamp(1, pts.len() - 1);
        let ((f0, r0), (f1, r1)) = (pts[k - 1], pts[k]);
        let w = ((f - f0) / (f1 - f0)).clamp(0.0, 1.0);
        (r0.ln() + w * (r1.ln() - r0.ln())).exp()
    }

    /// Every excess over the optimum scaled by `factor` (a seeded spread around the kind's
    /// shape: 0.85 to 1.15).
    pub(crate) fn scaled(&self, factor: f64) -> Profile {
        Profile(
            self.0
                .iter()
                .map(|&(f, r)| (f, 1.0 + (r - 1.0) * factor))
                .collect(),
        )
    }
}

/// Times for `raw` scores (lower is better, `None` = failed): a configuration `q` of the way
/// down the ranking of the valid ones (`q` = the fraction strictly better) takes
/// `optimum * profile.ratio(q)`. Equal scores get equal times (plateaus stay plateaus).
pub(crate) fn apply_profile(
    raw: &[Option<f64>],
    profile: &Profile,
    optimum: f64,
) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..raw.len()).filter(|&p| raw[p].is_some()).collect();
    order.sort_by(|&a, &b| raw[a].unwrap_or(0.0).total_cmp(&raw[b].unwrap_or(0.0)));
    let n = order.len().max(1) as f64;
    let mut out = vec![None; raw.len()];
    let mut k = 0;
    while k < order.len() {
        let level = raw[order[k]];
        let mut end = k;
        while end < order.len() && raw[order[end]] == level {
            end += 1;
        }
        let t = optimum * profile.ratio(k as f64 / n);
        for &p in &order[k..end] {
            out[p] = Some(t);
        }
        k = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_come_near_the_size_asked() {
        let roles = roles(&[Role::Block, Role::Switch], &[Role::Int, Role::Pow2], 6);
        assert_eq!(
            roles,
            [
                Role::Block,
                Role::Switch,
                Role::Int,
                Role::Pow2,
                Role::Int,
                Role::Pow2
            ]
        );
        let plan = Plan::new(&roles, 10_000);
        let product: usize = plan.counts.iter().product();
        assert!((8_000..=10_000).contains(&product), "{:?}", plan.counts);
        assert_eq!(plan.counts[1], 2);
        assert!(plan.counts[3] <= 11);
        assert_eq!(plan.names[2], "unroll");
        assert_eq!(plan.names[4], "stages");
        // Too many dimensions for the size: every parameter keeps its fewest values.
        let tiny = Plan::new(&[Role::Int; 8], 10);
        assert_eq!(tiny.counts, vec![2; 8]);
        // Names stay unique past a role's pool.
        let many = Plan::new(&[Role::Block; 5], 100);
        assert_eq!(many.names[3], "block_size_z_1");
    }

    #[test]
    fn roles_follow_the_values() {
        let ints = |v: &[i64]| v.iter().map(|&x| Value::Int(x)).collect::<Vec<_>>();
        assert_eq!(Role::of_values(&ints(&[0, 1])), Role::Switch);
        assert_eq!(
            Role::of_values(&[Value::Bool(false), Value::Bool(true)]),
            Role::Switch
        );
        assert_eq!(
            Role::of_values(&[Value::Str("a".into()), Value::Str("b".into())]),
            Role::Choice(2)
        );
        assert_eq!(Role::of_values(&ints(&[0, 1, 2, 4, 8])), Role::Unroll);
        assert_eq!(Role::of_values(&ints(&[1, 2, 4, 8, 16])), Role::Pow2);
        assert_eq!(Role::of_values(&ints(&[32, 48, 64, 96])), Role::Block);
        assert_eq!(Role::of_values(&ints(&[1, 2, 3])), Role::Few);
        assert_eq!(Role::of_values(&ints(&[1, 2, 3, 5, 7, 9])), Role::Int);
        assert_eq!(
            Role::of_values(&[Value::Float(0.5), Value::Float(1.5), Value::Float(2.5)]),
            Role::Few
        );
    }

    #[test]
    fn profiles_map_ranks_to_times() {
        let p = Profile(vec![(0.0, 1.0), (0.5, 4.0), (1.0, 16.0)]);
        assert_eq!(p.ratio(0.0), 1.0);
        assert!((p.ratio(0.25) - 2.0).abs() < 1e-12);
        assert!((p.ratio(0.75) - 8.0).abs() < 1e-12);
        assert_eq!(p.scaled(0.5).0[1], (0.5, 2.5));
        let raw = [Some(3.0), None, Some(1.0), Some(3.0), Some(2.0)];
        let t = apply_profile(&raw, &p, 2.0);
        assert_eq!(t[2], Some(2.0));
        assert_eq!(t[1], None);
        assert_eq!(t[0], t[3]);
        assert!(t[4].unwrap() < t[0].unwrap());
    }

    #[test]
    fn streams_are_fixed_by_the_seed() {
        let a: Vec<u64> = (0..4).map(|_| Mix::new(7).next()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut m = Mix::new(7);
        let b: Vec<f64> = (0..1000).map(|_| m.unit()).collect();
        assert!(b.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = b.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05);
        assert_ne!(hash(1, 2, 3), hash(1, 3, 2));
    }
}
