//! # Stress landscapes: generated search spaces of the kinds a new user brings
//!
//! The shared caches hold a handful of kernels; a default chosen on them can fail on a landscape
//! of a kind they do not contain. This module generates such landscapes: seeded,
//! deterministic, on real [`Space`](crate::Space)s with typed parameters (and constraints), every
//! configuration's time known, so the score against the exact random-search baseline is as
//! exact as on a brute-forced cache. Each [`StressKind`] is one shape of landscape:
//!
//! | kind | what it models |
//! | --- | --- |
//! | `flat_periodic` | flat times (median ~1.4x the optimum, ~3% within 5%) decided by alignment: a block size good at multiples of 64, integers good at powers of two, one switch that must be on, one that does nothing |
//! | `heavy_tail` | a tiny good region: median ~30x the optimum, 10th percentile ~9x; random search is 95% of the way in about a dozen evaluations |
//! | `plateau` | categorical and boolean switches, some irrelevant, and integer parameters whose effect comes in steps: equal times over wide regions |
//! | `needle` | a wide smooth basin (a decoy 25% above the optimum) and the optimum in a narrow basin elsewhere |
//! | `near_optimal` | many near-optimal configurations: the top 8% within ~1% of the optimum; random search needs about ten evaluations |
//! | `noisy` | a typical kernel landscape measured with 1-5% noise: each evaluation returns the true time times `1 + sigma z` |
//! | `failing` | 30-60% of configurations fail at run time (a hidden resource limit, clustered, not uniform); the fastest lie near the limit |
//! | `required` | one level of a few-valued parameter (an unroll factor's 0, a switch, a choice; seeded) holds every configuration near the optimum but a minority of the space, and the trend at the other levels points away from it |
//! | `cliffs` | small and heavy-tailed (median ~30x the optimum), each parameter's values costed by an unordered table, plus an occupancy cliff between two parameters |
//! | `pinpoint` | few-valued parameters (2-4 values), 1-3% noise, one or two configurations within 10% of the optimum, away from the weak trend the rest follows |
//! | `tile_clock` | a tensor-core GEMM: block tiles and warps per block whose products and ratios decide, a graphics clock of ten levels that scales time by ~1.2 (monotone in most tiles), 8% failures where block tile times warps is largest, median ~6x and slowest ~30x the median, ~0.15% within 5%; carries energy from a power-frequency model |
//! | `levels` | small spaces (190 to 630 configurations in the default suite) of a few many-levelled parameters whose product is bounded, slow at their rare large values, and a required level of a switch or choice |
//!
//! How a landscape is made (the same for every kind, see `shape`): the kind gives its parameters
//! roles (block sizes, power-of-two tiles, small integers, switches, choices),
//! the sizes are grown until the Cartesian product comes near the size asked, a seeded
//! *structure* (alignment penalties, wells, level tables, steps) ranks the configurations, and a
//! *profile* turns the ranking into times (`flat_periodic`'s says the median is 1.4x the
//! optimum); the profile's excess over the optimum is scaled by a seeded factor in 0.85..1.15.
//! Failing configurations (the `fail` option, 30-60% by default for `failing`) are those above
//! a seeded resource threshold. The structures are generic shapes, fitted to no strategy.
//!
//! A [`StressSpec`] names one landscape: `kind[:n=SIZE][:d=DIMS][:seed=S][:noise=SIGMA][:fail=F]`
//! (`n` is the Cartesian size aimed at; constraints remove some), or
//! `kind:space=FILE[:seed=S]...` to lay the kind's structure over a real kernel's parameters and
//! constraints (a spaces JSON or Kernel Tuner T1 file): each parameter takes the role its values
//! suggest (a block size, a power-of-two tile, an unroll factor with 0, a switch, a choice), and
//! the space's own constraints replace the kind's (`tile_clock`, whose parameters are its own,
//! cannot be laid over another space). [`suite`] names sets:
//! `default` (every kind at three sizes and dimensions, 36 landscapes, 100 to 200,000
//! configurations, 2 to 15 parameters), `small` (every kind at its smallest setting), `large`
//! (the first seven kinds at about 10^6 configurations; the kinds of small spaces and
//! `tile_clock` have no large setting) and `all` (`default` and `large`, 43 landscapes). A kind's name alone is its three default settings.
//!
//! ```
//! use tunable_search::sim::stress::{Landscape, StressSpec};
//! use tunable_search::sim::ScoreContext;
//!
//! let spec: StressSpec = "heavy_tail:n=2000:d=4".parse()?;
//! let land = Landscape::build(&spec)?;
//! assert_eq!(land.name(), "heavy_tail_N2000_D4");
//! let (_, optimum) = land.replay().optimum().unwrap();
//! let ctx = ScoreContext::new(land.replay().values(), 220)?;
//! assert_eq!(ctx.optimum(), optimum);
//! # Ok::<(), tunable_search::sim::SimError>(())
//! ```

mod cliffs;
mod failing;
mod flat_periodic;
mod heavy_tail;
mod levels;
mod near_optimal;
mod needle;
mod noisy;
mod pinpoint;
mod plateau;
mod power;
mod required;
pub(crate) mod shape;
mod stats;
mod tile_clock;
mod wells;

use super::{Replay, SimError};
use crate::SpaceBuilder;
use crate::space::load::load;
use shape::{Mix, Plan, Point, Profile, Role};
pub use stats::Stats;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A kind of generated landscape (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StressKind {
    /// Flat, decided by alignment (multiples of 64, powers of two) and one must-be-on switch.
    FlatPeriodic,
    /// Heavy-tailed: median ~30x the optimum, a tiny good region.
    HeavyTail,
    /// Plateaus of categorical/boolean switches (some irrelevant) and stepped integers.
    Plateau,
    /// A smooth decoy basin and a narrow basin holding the optimum.
    Needle,
    /// Many near-optimal configurations: random search needs about ten evaluations.
    NearOptimal,
    /// A typical landscape measured with 1-5% noise per evaluation.
    Noisy,
    /// 30-60% of configurations fail at run time, clustered by a hidden resource limit.
    Failing,
    /// One level of a few-valued parameter is required near the optimum.
    Required,
    /// Small and heavy-tailed, decided value by value, with an occupancy cliff.
    Cliffs,
    /// A needle in a small noisy space of few-valued parameters.
    Pinpoint,
    /// A tensor-core GEMM's tiles (products of interacting parameters) under a graphics clock of
    /// ten levels, with failures, a heavy tail and energy from a power-frequency model.
    TileClock,
    /// A small space of a few many-levelled parameters with steep walls and a required level.
    Levels,
}

impl StressKind {
    /// Every kind, in the order of the module docs.
    pub const ALL: [StressKind; 12] = [
        StressKind::FlatPeriodic,
        StressKind::HeavyTail,
        StressKind::Plateau,
        StressKind::Needle,
        StressKind::NearOptimal,
        StressKind::Noisy,
        StressKind::Failing,
        StressKind::Required,
        StressKind::Cliffs,
        StressKind::Pinpoint,
        StressKind::TileClock,
        StressKind::Levels,
    ];

    /// The kind's name (also its family in the bench's leave-one-family-out).
    pub fn name(self) -> &'static str {
        match self {
            StressKind::FlatPeriodic => "flat_periodic",
            StressKind::HeavyTail => "heavy_tail",
            StressKind::Plateau => "plateau",
            StressKind::Needle => "needle",
            StressKind::NearOptimal => "near_optimal",
            StressKind::Noisy => "noisy",
            StressKind::Failing => "failing",
            StressKind::Required => "required",
            StressKind::Cliffs => "cliffs",
            StressKind::Pinpoint => "pinpoint",
            StressKind::TileClock => "tile_clock",
            StressKind::Levels => "levels",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<StressKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind's three settings in the `default` suite: `(size, dims)`.
    pub fn default_settings(self) -> [(usize, usize); 3] {
        match self {
            StressKind::FlatPeriodic => [(200, 2), (5_000, 5), (100_000, 12)],
            StressKind::HeavyTail => [(500, 3), (20_000, 7), (200_000, 15)],
            StressKind::Plateau => [(300, 4), (10_000, 8), (100_000, 12)],
            StressKind::Needle => [(400, 2), (10_000, 6), (100_000, 10)],
            StressKind::NearOptimal => [(200, 3), (200, 5), (2_000, 6)],
            StressKind::Noisy => [(300, 3), (10_000, 6), (100_000, 12)],
            StressKind::Failing => [(500, 4), (20_000, 7), (200_000, 13)],
            StressKind::Required => [(210, 5), (2_000, 6), (10_000, 8)],
            StressKind::Cliffs => [(100, 3), (900, 5), (6_000, 6)],
            StressKind::Pinpoint => [(243, 5), (1_000, 6), (4_000, 8)],
            StressKind::TileClock => [(5_000, 6), (10_240, 6), (20_480, 7)],
            StressKind::Levels => [(300, 3), (600, 4), (900, 5)],
        }
    }

    /// The kind's setting in the `large` suite: about a million configurations; `None` for the
    /// kinds of small spaces (`required`, `cliffs`, `pinpoint`: 10^2 to 10^4 configurations).
    pub fn large_setting(self) -> Option<(usize, usize)> {
        match self {
            StressKind::FlatPeriodic => Some((1_000_000, 12)),
            StressKind::HeavyTail => Some((1_000_000, 15)),
            StressKind::Plateau => Some((1_000_000, 14)),
            StressKind::Needle => Some((1_000_000, 10)),
            StressKind::NearOptimal => Some((1_000_000, 9)),
            StressKind::Noisy => Some((1_000_000, 12)),
            StressKind::Failing => Some((1_000_000, 13)),
            StressKind::Required
            | StressKind::TileClock
            | StressKind::Cliffs
            | StressKind::Pinpoint
            | StressKind::Levels => None,
        }
    }

    fn roles(self, dims: usize) -> Vec<Role> {
        match self {
            StressKind::FlatPeriodic => flat_periodic::roles(dims),
            StressKind::HeavyTail => heavy_tail::roles(dims),
            StressKind::Plateau => plateau::roles(dims),
            StressKind::Needle => needle::roles(dims),
            StressKind::NearOptimal => near_optimal::roles(dims),
            StressKind::Noisy => noisy::roles(dims),
            StressKind::Failing => failing::roles(dims),
            StressKind::Required => required::roles(dims),
            StressKind::Cliffs => cliffs::roles(dims),
            StressKind::Pinpoint => pinpoint::roles(dims),
            StressKind::TileClock => tile_clock::roles(dims),
            StressKind::Levels => levels::roles(dims),
        }
    }

    fn model(self, plan: &Plan, mix: &mut Mix) -> Model {
        match self {
            StressKind::FlatPeriodic => flat_periodic::model(plan, mix),
            StressKind::HeavyTail => heavy_tail::model(plan, mix),
            StressKind::Plateau => plateau::model(plan, mix),
            StressKind::Needle => needle::model(plan, mix),
            StressKind::NearOptimal => near_optimal::model(plan, mix),
            StressKind::Noisy => noisy::model(plan, mix),
            StressKind::Failing => failing::model(plan, mix),
            StressKind::Required => required::model(plan, mix),
            StressKind::Cliffs => cliffs::model(plan, mix),
            StressKind::Pinpoint => pinpoint::model(plan, mix),
            StressKind::TileClock => tile_clock::model(plan, mix),
            StressKind::Levels => levels::model(plan, mix),
        }
    }
}

impl fmt::Display for StressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A number per configuration: a structure's rank score, a time or a power.
pub(crate) type PerPoint = Box<dyn Fn(&Point) -> f64>;

/// What a kind's generator gives for a plan: the structure that ranks configurations and how
/// rankings become times.
pub(crate) struct Model {
    /// Constraints of the space, in the expression language.
    pub constraints: Vec<String>,
    /// The structure: lower is better.
    pub raw: PerPoint,
    /// How ranks become times; `None`: `raw` is already the time relative to the optimum.
    pub profile: Option<Profile>,
    /// The hidden resource whose top configurations fail (the `fail` option picks how many).
    pub resource: Resource,
    /// The default share of configurations that fail.
    pub fail: f64,
    /// The default measurement noise (relative standard deviation).
    pub noise: f64,
    /// The power in W a configuration draws (`None`: the kind carries no energy); a
    /// configuration's energy is its time times its power.
    pub power: Option<PerPoint>,
}

/// A hidden resource use (registers, shared memory): configurations above a threshold fail at
/// run time. Weighted scaled indices of some numeric parameters, plus a switch or choice value
/// that adds to it (so failures cluster in regions, not uniformly).
#[derive(Clone)]
pub(crate) struct Resource {
    weights: Vec<(usize, f64)>,
    trigger: Option<(usize, u16, f64)>,
}

impl Resource {
    /// A seeded resource over `plan`'s numeric parameters (at least one if there is any).
    pub(crate) fn seeded(plan: &Plan, mix: &mut Mix) -> Resource {
        let numeric: Vec<usize> = (0..plan.roles.len())
            .filter(|&i| {
                matches!(
                    plan.roles[i],
                    Role::Block | Role::Pow2 | Role::Int | Role::Few | Role::Unroll
                )
            })
            .collect();
        let mut weights: Vec<(usize, f64)> = Vec::new();
        for &i in &numeric {
            if mix.unit() < 0.7 {
                weights.push((i, mix.range(0.5, 1.5)));
            }
        }
        if weights.is_empty() && !numeric.is_empty() {
            weights.push((numeric[mix.below(numeric.len())], 1.0));
        }
        let switches: Vec<usize> = (0..plan.roles.len())
            .filter(|&i| matches!(plan.roles[i], Role::Switch | Role::Choice(_)))
            .collect();
        let trigger = (!switches.is_empty()).then(|| {
            let k = switches[mix.below(switches.len())];
            let value = mix.below(plan.counts[k]) as u16;
            (k, value, mix.range(0.3, 0.8))
        });
        Resource { weights, trigger }
    }

    /// The resource a configuration uses.
    pub(crate) fn eval(&self, p: &Point) -> f64 {
        let mut r: f64 = self.weights.iter().map(|&(k, w)| w * p.x[k]).sum();
        if let Some((k, value, w)) = self.trigger
            && p.i[k] == value
        {
            r += w;
        }
        r
    }
}

/// One generated landscape: `kind[:n=SIZE][:d=DIMS][:seed=S][:noise=SIGMA][:fail=F]`, or over
/// a given space `kind:space=FILE[:seed=S][:noise=SIGMA][:fail=F]`.
///
/// ```
/// use tunable_search::sim::stress::{StressKind, StressSpec};
/// let s: StressSpec = "failing:n=1000:d=4:fail=0.5".parse().unwrap();
/// assert_eq!((s.kind, s.size, s.dims, s.fail), (StressKind::Failing, 1000, 4, Some(0.5)));
/// assert_eq!(s.to_string(), "failing:n=1000:d=4:fail=0.5");
/// assert_eq!(s.stem(), "failing_N1000_D4_F0.5");
/// let over: StressSpec = "needle:space=spaces/hotspot.json:seed=2".parse().unwrap();
/// assert_eq!(over.stem(), "needle_On_hotspot_S2");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StressSpec {
    /// The kind.
    pub kind: StressKind,
    /// The Cartesian size aimed at (constraints remove some). Default: the kind's first setting.
    pub size: usize,
    /// Number of parameters. Default: the kind's first setting.
    pub dims: usize,
    /// The seed; `None`: one derived from kind, size and dimensions (the suite's landscapes).
    pub seed: Option<u64>,
    /// The measurement noise, a relative standard deviation (default: 1-5% for `noisy`, else 0).
    pub noise: Option<f64>,
    /// The share of configurations that fail (default: 30-60% for `failing`, else 0).
    pub fail: Option<f64>,
    /// A space definition (a spaces JSON or Kernel Tuner T1 file, [`crate::space::load`]) to
    /// lay the kind over instead of its own parameters: the kind's cost on a real kernel's
    /// parameters and constraints. `size` and `dims` are not used then: the space has its own.
    pub space: Option<PathBuf>,
}

impl StressSpec {
    /// The kind at a size and dimension, with its defaults otherwise.
    pub fn new(kind: StressKind, size: usize, dims: usize) -> StressSpec {
        StressSpec {
            kind,
            size,
            dims,
            seed: None,
            noise: None,
            fail: None,
            space: None,
        }
    }

    /// The name of the space the kind is laid over (its file's name up to the first `.`), if
    /// any.
    pub fn space_name(&self) -> Option<String> {
        let path = self.space.as_ref()?;
        let file = path.file_name()?.to_string_lossy();
        Some(file.split('.').next().unwrap_or_default().to_owned())
    }

    /// The name the bench files it under: `kind_N<size>_D<dims>` (over a given space
    /// `kind_On_<space>`) and `_S<seed>`, `_E<noise>`, `_F<fail>` for options given. The kind's
    /// name is its family (the part after it starts with a capital letter).
    pub fn stem(&self) -> String {
        let mut s = match self.space_name() {
            Some(name) => format!("{}_On_{name}", self.kind),
            None => format!("{}_N{}_D{}", self.kind, self.size, self.dims),
        };
        if let Some(seed) = self.seed {
            s += &format!("_S{seed}");
        }
        if let Some(noise) = self.noise {
            s += &format!("_E{noise}");
        }
        if let Some(fail) = self.fail {
            s += &format!("_F{fail}");
        }
        s
    }

    /// The seed the landscape is generated from.
    pub fn effective_seed(&self) -> u64 {
        let shape = match self.space_name() {
            Some(name) => name
                .bytes()
                .fold(0x0073_7061_6365, |h, b| shape::hash(h, u64::from(b), 2)),
            None => (self.size as u64) << 8 | self.dims as u64,
        };
        let base = shape::hash(0x7374_7265_7373, self.kind as u64, shape);
        match self.seed {
            Some(s) => shape::hash(base, s, 1),
            None => base,
        }
    }
}

impl fmt::Display for StressSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.space {
            Some(path) => write!(f, "{}:space={}", self.kind, path.display())?,
            None => write!(f, "{}:n={}:d={}", self.kind, self.size, self.dims)?,
        }
        if let Some(s) = self.seed {
            write!(f, ":seed={s}")?;
        }
        if let Some(e) = self.noise {
            write!(f, ":noise={e}")?;
        }
        if let Some(x) = self.fail {
            write!(f, ":fail={x}")?;
        }
        Ok(())
    }
}

fn bad(spec: &str, message: impl Into<String>) -> SimError {
    SimError::BadLandscape {
        spec: spec.to_owned(),
        message: message.into(),
    }
}

impl FromStr for StressSpec {
    type Err = SimError;

    fn from_str(text: &str) -> Result<Self, SimError> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default().trim();
        let kind = StressKind::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = StressKind::ALL.iter().map(|k| k.name()).collect();
            bad(
                text,
                format!(
                    "unknown landscape kind '{name}' (known: {})",
                    known.join(", ")
                ),
            )
        })?;
        let (size, dims) = kind.default_settings()[0];
        let mut spec = StressSpec::new(kind, size, dims);
        let mut sized = false;
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(text, format!("'{part}' is not key=value")))?;
            let number = || {
                value
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad(text, format!("{key}: '{value}' is not a number")))
            };
            match key.trim() {
                "n" | "size" => {
                    spec.size = number()? as usize;
                    sized = true;
                }
                "d" | "dims" => {
                    spec.dims = number()? as usize;
                    sized = true;
                }
                "space" => spec.space = Some(PathBuf::from(value.trim())),
                "seed" => {
                    spec.seed =
                        Some(value.trim().parse().map_err(|_| {
                            bad(text, format!("seed: '{value}' is not an integer"))
                        })?);
                }
                "noise" => spec.noise = Some(number()?),
                "fail" => spec.fail = Some(number()?),
                other => {
                    return Err(bad(
                        text,
                        format!("unknown option '{other}' (known: n, d, seed, noise, fail, space)"),
                    ));
                }
            }
        }
        if spec.space.is_some() && sized {
            return Err(bad(text, "n and d come from the space: give either"));
        }
        if spec.space.is_some() && kind == StressKind::TileClock {
            return Err(bad(
                text,
                "tile_clock has parameters of its own (tiles, warps, a clock): it cannot be laid \
                 over another space",
            ));
        }
        if !(2..=4_000_000).contains(&spec.size) {
            return Err(bad(text, "n must be in 2..=4000000"));
        }
        if !(1..=20).contains(&spec.dims) {
            return Err(bad(text, "d must be in 1..=20"));
        }
        if spec.noise.is_some_and(|e| !(0.0..=0.5).contains(&e)) {
            return Err(bad(text, "noise must be in [0, 0.5]"));
        }
        if spec.fail.is_some_and(|f| !(0.0..0.95).contains(&f)) {
            return Err(bad(text, "fail must be in [0, 0.95)"));
        }
        Ok(spec)
    }
}

/// The kinds `varied` draws in variety: those of the small spaces where the first evaluations
/// decide.
pub const VARIED: [StressKind; 3] = [
    StressKind::Required,
    StressKind::Cliffs,
    StressKind::Pinpoint,
];

/// The landscapes a comma-separated list names: `default` (every kind at its three settings,
/// 100 to 200,000 configurations), `small` (every kind at its smallest), `large` (every kind
/// that has a large setting at about 10^6 configurations), `all` (`default` and `large`),
/// `varied` (each of the [`VARIED`] kinds at eight seeded settings of 210 to 980
/// configurations and 3 to 7 parameters, 24 landscapes), `unseen` (every kind at its two
/// smaller default settings with half as many configurations again and seeds 101 and 102, 24
/// landscapes that no default was chosen on), a kind's name (its three default settings), a
/// full [`StressSpec`], or `*:OPTIONS` for every kind but `tile_clock` with those options
/// (`*:space=FILE`: every kind laid over one kernel's space).
///
/// ```
/// use tunable_search::sim::stress::suite;
/// assert_eq!(suite("default").unwrap().len(), 36);
/// assert_eq!(suite("small,needle:n=50:d=2").unwrap().len(), 13);
/// assert_eq!(suite("heavy_tail").unwrap().len(), 3);
/// assert_eq!(suite("all").unwrap().len(), 43);
/// assert_eq!(suite("varied").unwrap().len(), 24);
/// assert_eq!(suite("unseen").unwrap().len(), 24);
/// assert!(suite("heavy").is_err());
/// let over = suite("*:space=hotspot.json:seed=2").unwrap();
/// assert_eq!(over.len(), 11);
/// assert_eq!(over[0].to_string(), "flat_periodic:space=hotspot.json:seed=2");
/// ```
pub fn suite(list: &str) -> Result<Vec<StressSpec>, SimError> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "default" => {
                for kind in StressKind::ALL {
                    for (n, d) in kind.default_settings() {
                        out.push(StressSpec::new(kind, n, d));
                    }
                }
            }
            "large" => {
                for kind in StressKind::ALL {
                    if let Some((n, d)) = kind.large_setting() {
                        out.push(StressSpec::new(kind, n, d));
                    }
                }
            }
            "all" => out.extend(suite("default,large")?),
            "varied" => {
                for kind in VARIED {
                    for seed in 1..=8usize {
                        let (n, d) = (100 + 110 * seed, 3 + seed % 5);
                        out.push(format!("{}:n={n}:d={d}:seed={seed}", kind.name()).parse()?);
                    }
                }
            }
            "unseen" => {
                for kind in StressKind::ALL {
                    for (seed, (n, d)) in (101usize..).zip(&kind.default_settings()[..2]) {
                        let n = n + n / 2;
                        out.push(format!("{}:n={n}:d={d}:seed={seed}", kind.name()).parse()?);
                    }
                }
            }
            "small" => {
                for kind in StressKind::ALL {
                    let (n, d) = kind.default_settings()[0];
                    out.push(StressSpec::new(kind, n, d));
                }
            }
            _ if item.starts_with("*:") => {
                for kind in StressKind::ALL {
                    if kind != StressKind::TileClock {
                        out.push(format!("{}{}", kind.name(), &item[1..]).parse()?);
                    }
                }
            }
            _ => match StressKind::from_name(item) {
                Some(kind) => {
                    for (n, d) in kind.default_settings() {
                        out.push(StressSpec::new(kind, n, d));
                    }
                }
                None => out.push(item.parse()?),
            },
        }
    }
    Ok(out)
}

/// A generated landscape: its replay (every configuration's true time, `None` = fails at run
/// time) and its measurement noise.
#[derive(Debug)]
pub struct Landscape {
    spec: StressSpec,
    replay: Replay,
    energy: Option<Vec<Option<f64>>>,
    noise: f64,
    seed: u64,
    optimum: f64,
}

impl Landscape {
    /// Generates the landscape `spec` names. The same spec gives the same landscape.
    pub fn build(spec: &StressSpec) -> Result<Landscape, SimError> {
        let seed = spec.effective_seed();
        let mut mix = Mix::new(seed);
        // A given space keeps its own constraints; the kind's (a product bound) are left out.
        let given = match &spec.space {
            Some(path) => Some(load(path)?.builder.name(spec.stem()).build()?),
            None => None,
        };
        let plan = match &given {
            Some(space) => Plan::of_space(space),
            None => Plan::new(&spec.kind.roles(spec.dims), spec.size),
        };
        let model = spec.kind.model(&plan, &mut mix);
        let space = match given {
            Some(space) => space,
            None => {
                let mut builder = SpaceBuilder::new().name(spec.stem());
                for (i, name) in plan.names.iter().enumerate() {
                    builder = builder.param(name.clone(), plan.values(i));
                }
                builder
                    .constraints(model.constraints.iter().cloned())
                    .build()?
            }
        };
        if space.is_empty() {
            return Err(bad(
                &spec.to_string(),
                "the constraints leave no configuration",
            ));
        }
        let mut point = Point::default();
        let mut indices = vec![0u16; space.dims()];
        let mut raw = Vec::with_capacity(space.len());
        let mut resource = Vec::with_capacity(space.len());
        let mut watts = Vec::new();
        for p in 0..space.len() {
            space.write_indices(p, &mut indices);
            point.set(&plan, &indices, p);
            raw.push(Some((model.raw)(&point)));
            resource.push(model.resource.eval(&point));
            if let Some(power) = &model.power {
                watts.push(power(&point));
            }
        }
        let fail = spec.fail.unwrap_or(model.fail);
        if fail > 0.0 {
            let mut sorted = resource.clone();
            sorted.sort_by(f64::total_cmp);
            let keep = ((1.0 - fail) * sorted.len() as f64).round() as usize;
            // Never every configuration: the best one by resource stays valid.
            let threshold = sorted[keep.clamp(1, sorted.len()) - 1];
            for (r, use_) in raw.iter_mut().zip(&resource) {
                if *use_ > threshold {
                    *r = None;
                }
            }
        }
        let optimum = mix.range(0.2, 5.0);
        let values = match &model.profile {
            Some(profile) => {
                shape::apply_profile(&raw, &profile.scaled(mix.range(0.85, 1.15)), optimum)
            }
            None => {
                // `raw` is the time relative to the optimum; if failures took the best
                // configuration away, the best one left is the optimum.
                let floor = raw.iter().flatten().copied().fold(f64::INFINITY, f64::min);
                let floor = if floor.is_finite() && floor > 1.0 {
                    floor
                } else {
                    1.0
                };
                raw.iter().map(|r| r.map(|r| r / floor * optimum)).collect()
            }
        };
        // Time in ms times power in W: energy in mJ, given in J.
        let energy = (!watts.is_empty()).then(|| {
            values
                .iter()
                .zip(&watts)
                .map(|(t, w)| t.map(|t| t * w / 1000.0))
                .collect()
        });
        Ok(Landscape {
            spec: spec.clone(),
            replay: Replay::from_values(space, values),
            energy,
            noise: spec.noise.unwrap_or(model.noise),
            seed,
            optimum,
        })
    }

    /// The spec it was built from.
    pub fn spec(&self) -> &StressSpec {
        &self.spec
    }

    /// Its name, [`StressSpec::stem`].
    pub fn name(&self) -> String {
        self.spec.stem()
    }

    /// The true times: what the score is computed on.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }

    /// The optimum as the generator made it, before any configuration was evaluated: the base
    /// time, which the best configuration of every kind takes (the top of a profile is 1x the
    /// base time; a needle's floor is its centre, 1x). The replay's brute-force optimum equals it.
    pub fn optimum(&self) -> f64 {
        self.optimum
    }

    /// The energy of each configuration in J (`None` = fails at run time), for the kinds with a
    /// clock and a power model (`tile_clock`); `None` for the others.
    pub fn energy(&self) -> Option<&[Option<f64>]> {
        self.energy.as_deref()
    }

    /// The values of the objective `name` per configuration: `time` (the true times) or, where
    /// the kind carries it, `energy`; `None` for an objective the landscape does not have.
    pub fn objective(&self, name: &str) -> Option<&[Option<f64>]> {
        match name {
            "time" => Some(self.replay.values()),
            "energy" => self.energy(),
            _ => None,
        }
    }

    /// The measurement noise: a relative standard deviation (0 for none).
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// What one measurement of the configuration at `position` returns in run `run`: its true
    /// time times `1 + noise z`, `z` a standard normal number (clamped to +-3) fixed by the
    /// landscape, the run and the position; `None` if it fails (or `position` is out of range).
    /// Without noise, the true time.
    pub fn measure(&self, position: usize, run: u64) -> Option<f64> {
        let t = (*self.replay.values().get(position)?)?;
        if self.noise == 0.0 {
            return Some(t);
        }
        let h = shape::hash(self.seed, run, position as u64);
        let z = shape::normal_of(h, shape::mix64(h)).clamp(-3.0, 3.0);
        Some(t * (1.0 + self.noise * z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print() {
        let s: StressSpec = "noisy:d=3:n=300:seed=4:noise=0.02".parse().unwrap();
        assert_eq!(s.to_string(), "noisy:n=300:d=3:seed=4:noise=0.02");
        assert_eq!(s.stem(), "noisy_N300_D3_S4_E0.02");
        let d: StressSpec = "plateau".parse().unwrap();
        assert_eq!((d.size, d.dims), (300, 4));
        for (text, message) in [
            ("plateu", "unknown landscape kind 'plateu'"),
            ("plateau:n", "'n' is not key=value"),
            ("plateau:x=1", "unknown option 'x'"),
            ("plateau:n=1", "n must be"),
            ("plateau:fail=0.99", "fail must be"),
        ] {
            let e = text.parse::<StressSpec>().unwrap_err().to_string();
            assert!(e.contains(message), "{text}: {e}");
        }
    }

    /// A fingerprint of everything the generator makes for `spec`: every configuration's raw
    /// score, resource and time, the constraints, the noise, the optimum and some measurements.
    fn fingerprint(spec: &StressSpec) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |x: u64| h = shape::hash(h, x, 0x5bd1_e995);
        let land = Landscape::build(spec).unwrap();
        let mut mix = Mix::new(spec.effective_seed());
        let plan = Plan::new(&spec.kind.roles(spec.dims), spec.size);
        let model = spec.kind.model(&plan, &mut mix);
        for c in &model.constraints {
            c.bytes().for_each(|b| eat(u64::from(b)));
        }
        let space = land.replay().space();
        eat(space.len() as u64);
        let mut point = Point::default();
        let mut indices = vec![0u16; space.dims()];
        for (p, v) in land.replay().values().iter().enumerate() {
            space.write_indices(p, &mut indices);
            point.set(&plan, &indices, p);
            eat((model.raw)(&point).to_bits());
            eat(model.resource.eval(&point).to_bits());
            eat(v.map_or(u64::MAX, f64::to_bits));
        }
        for p in (0..space.len()).step_by(13) {
            eat(land.measure(p, 3).map_or(u64::MAX, f64::to_bits));
        }
        for e in land.energy().unwrap_or_default() {
            eat(e.map_or(u64::MAX, f64::to_bits));
        }
        eat(model.fail.to_bits());
        eat(land.noise().to_bits());
        eat(land.optimum().to_bits());
        h
    }

    /// Pins the generators' output: every landscape up to 20,000 configurations of the `default`
    /// suite, plus small and edge-case settings (one or two parameters, options), must hash to
    /// what it did. Published figures are computed on these landscapes: update a hash only when
    /// deliberately changing a generator, and then re-run the published stress bench.
    #[test]
    fn generators_are_unchanged() {
        let expected: [(&str, u64); 35] = [
            ("flat_periodic:n=200:d=2", 0x29c4_2b7c_e10c_9289),
            ("flat_periodic:n=5000:d=5", 0x7341_cca5_d989_bba1),
            ("heavy_tail:n=500:d=3", 0x8b99_5842_b3d8_0fa0),
            ("heavy_tail:n=20000:d=7", 0xfba1_e3e3_40c9_88b0),
            ("plateau:n=300:d=4", 0x5263_74d3_b9d7_d50c),
            ("plateau:n=10000:d=8", 0xe912_f6b1_b285_458d),
            ("needle:n=400:d=2", 0xe4ef_a34f_1e54_3efb),
            ("needle:n=10000:d=6", 0xd465_a1c6_8590_9685),
            ("near_optimal:n=200:d=3", 0xd595_db48_a568_66fe),
            ("near_optimal:n=200:d=5", 0xf08b_7bac_0fbf_1c1a),
            ("near_optimal:n=2000:d=6", 0x5ac9_2ab2_d15f_c426),
            ("noisy:n=300:d=3", 0xa957_685a_8070_82fb),
            ("noisy:n=10000:d=6", 0xf87c_d1a7_a8d5_2551),
            ("failing:n=500:d=4", 0xa47b_8318_027c_ffa6),
            ("failing:n=20000:d=7", 0x2973_4e63_2313_9e33),
            ("heavy_tail:n=50:d=1", 0x853a_bd53_f4ac_5b7e),
            ("heavy_tail:n=64:d=2", 0xc3d4_81b0_ab0a_3b15),
            ("noisy:n=100:d=2", 0x3566_4fc8_8238_e339),
            ("noisy:n=100:d=1", 0x9222_bbe4_2ed0_aa53),
            ("failing:n=100:d=1", 0xd45c_6a52_c4c1_e630),
            ("failing:n=60:d=2", 0x9be6_5ee4_fde7_f388),
            ("near_optimal:n=50:d=1", 0xef06_e2f3_bf0b_babf),
            ("near_optimal:n=90:d=2", 0xf093_702d_f7e5_82b5),
            ("failing:n=5000:d=3:seed=5:fail=0.2", 0xc734_ca0e_b0d0_0b47),
            ("noisy:n=3000:d=4:seed=2:noise=0.03", 0x3f02_aa4d_9310_5e73),
            ("required:n=210:d=5", 0x12ed_b39a_71a2_a3a3),
            ("required:n=2000:d=6", 0xc987_1b9c_7067_2521),
            ("cliffs:n=100:d=3", 0xd19e_2837_10e0_cc23),
            ("cliffs:n=900:d=5", 0xd3ff_261a_af69_50cd),
            ("pinpoint:n=243:d=5", 0xd59a_3fcd_c6e1_8d99),
            ("pinpoint:n=1000:d=6", 0x61b9_9fa6_81ab_fd88),
            ("tile_clock:n=5000:d=6", 0x3c0d_6540_bcbf_8a96),
            ("tile_clock:n=3000:d=5:fail=0.2", 0xaf66_f91d_605f_d5b9),
            ("levels:n=300:d=3", 0xa0c8_3058_e286_ff6f),
            ("levels:n=600:d=4", 0x9432_ad65_669a_fb16),
        ];
        let mut changed = vec![];
        for (text, hash) in expected {
            let got = fingerprint(&text.parse().unwrap());
            if got != hash {
                changed.push(format!("{text}: {got:#018x}, was {hash:#018x}"));
            }
        }
        assert!(
            changed.is_empty(),
            "generated landscapes changed:\n{}",
            changed.join("\n")
        );
    }

    #[test]
    fn seeds_differ_by_setting_and_option() {
        let a = StressSpec::new(StressKind::Needle, 400, 2);
        let mut b = a.clone();
        b.seed = Some(1);
        assert_ne!(a.effective_seed(), b.effective_seed());
        assert_ne!(
            a.effective_seed(),
            StressSpec::new(StressKind::Needle, 400, 3).effective_seed()
        );
    }
}
