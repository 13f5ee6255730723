//! # `tile_clock`: a tensor-core GEMM's tiles under a graphics clock
//!
//! The structure of a brute-forced tensor-core GEMM with the graphics clock as a parameter:
//! - *tiles*: the M and N extents of a thread block's tile (`block_m`, `block_n`, 16 to 256) and
//!   the warps per block along each axis (`warps_m`, `warps_n`, 1 to 8) form a warp's tile
//!   (`block_m / warps_m` by `block_n / warps_n`, at least one 16-wide fragment by constraint).
//!   Its area sets the arithmetic intensity (too small: memory-bound and slow; too large:
//!   registers spill), the warps per block set the occupancy, the block tile the parallelism
//!   left for the problem, and the shared-memory `buffers` hide latency for large tiles but cost
//!   shared memory: the parameters act through their products and ratios, not one by one;
//! - a *clock* of ten levels (`nvml_gr_clock`): time falls with the clock, by up to the clock
//!   ratio (1.35) for a compute-bound tile and hardly at all for a memory-bound one, a nearly
//!   additive term in log-time, monotone for all but the most memory-bound tiles (a measurement
//!   jitter of 0.4% outweighs their slope). The optimum runs at the top clock;
//! - *failures* (8% by default): the configurations whose block tile times warps per block is
//!   largest exceed a resource;
//! - a *heavy tail*: the median tile is ~6x the best, the slowest ~30x the median;
//! - a *tiny near-optimal set*: the best tile or two, at the top clocks.
//!
//! The tiles are ranked by a seeded cost of those products and ratios (plus a seeded roughness
//! per tile) and the ranking becomes times through a profile, per tile; the clock multiplies
//! them. Every configuration also carries an energy, its time times the power of a
//! [`PowerModel`]: a compute-bound tile keeps the chip busier. Further parameters (`d` above 6)
//! are switches and small integers with mild seeded costs.

use super::power::PowerModel;
use super::shape::{
    CLOCK_LEVELS, Mix, Plan, Point, Profile, Role, hash, normal_of, roles as cycle, unit_of,
};
use super::{Model, Resource};
use std::collections::HashMap;
use std::rc::Rc;

/// Two block tiles, two warp counts, the clock and the buffers, then switches and small
/// integers.
pub(super) fn roles(dims: usize) -> Vec<Role> {
    cycle(
        &[
            Role::Tile,
            Role::Tile,
            Role::Warps,
            Role::Warps,
            Role::Clock,
            Role::Buffers,
        ],
        &[Role::Switch, Role::Few],
        dims,
    )
}

/// The rank profile of the tiles: the best tile is the optimum, ~1% of the tiles lie within
/// 15%, the median tile is 6x and the slowest 180x.
const TILES: [(f64, f64); 7] = [
    (0.0, 1.0),
    (0.004, 1.03),
    (0.02, 1.15),
    (0.1, 2.0),
    (0.5, 6.0),
    (0.9, 30.0),
    (1.0, 180.0),
];

/// The relative standard deviation of the jitter on every configuration's time.
const JITTER: f64 = 0.004;

/// Where each role-bearing parameter sits in a plan (`None`: the plan has none).
struct Slots {
    block: [Option<usize>; 2],
    warps: [Option<usize>; 2],
    clock: Option<usize>,
    buffers: Option<usize>,
}

impl Slots {
    fn of(plan: &Plan) -> Slots {
        let nth = |role: Role, n: usize| {
            (0..plan.roles.len())
                .filter(|&k| plan.roles[k] == role)
                .nth(n)
        };
        Slots {
            block: [nth(Role::Tile, 0), nth(Role::Tile, 1)],
            warps: [nth(Role::Warps, 0), nth(Role::Warps, 1)],
            clock: nth(Role::Clock, 0),
            buffers: nth(Role::Buffers, 0),
        }
    }

    /// log2 of a parameter's value, or `missing` if the plan does not have it.
    fn log2(p: &Point, slot: Option<usize>, missing: f64) -> f64 {
        slot.map_or(missing, |k| p.v[k].log2())
    }
}

/// The seeded cost of a tile configuration (lower is better) and how compute-bound it is.
struct TileCost {
    slots: Slots,
    /// log2 of the best warp-tile area.
    area: f64,
    /// log2 of the best warps per block.
    warps: f64,
    /// log2 of the block tile area beyond which parallelism suffers.
    parallel: f64,
    /// Weights: too small a warp tile, too large, aspect, warps, parallelism, buffers.
    weights: [f64; 6],
    /// Per further parameter (switches, small integers): a cost per value.
    others: Vec<(usize, Vec<f64>)>,
    roughness: f64,
    seed: u64,
}

impl TileCost {
    fn draw(plan: &Plan, mix: &mut Mix) -> TileCost {
        let slots = Slots::of(plan);
        let area = mix.range(10.0, 12.0);
        let warps = mix.range(1.5, 3.0);
        let parallel = mix.range(13.0, 14.5);
        let weights = [
            mix.range(0.5, 0.9),
            mix.range(0.8, 1.4),
            mix.range(0.05, 0.15),
            mix.range(0.3, 0.6),
            mix.range(0.4, 0.8),
            mix.range(0.3, 0.6),
        ];
        let others = (0..plan.roles.len())
            .filter(|&k| matches!(plan.roles[k], Role::Switch | Role::Few))
            .map(|k| {
                let free = mix.below(plan.counts[k]);
                let weight = mix.range(0.1, 0.4);
                let costs = (0..plan.counts[k])
                    .map(|v| if v == free { 0.0 } else { weight * mix.unit() })
                    .collect();
                (k, costs)
            })
            .collect();
        TileCost {
            slots,
            area,
            warps,
            parallel,
            weights,
            others,
            roughness: mix.range(0.3, 0.5),
            seed: mix.next(),
        }
    }

    /// log2 of the warp tile's extents.
    fn warp_tile(&self, p: &Point) -> (f64, f64) {
        let s = &self.slots;
        (
            Slots::log2(p, s.block[0], 6.0) - Slots::log2(p, s.warps[0], 1.0),
            Slots::log2(p, s.block[1], 6.0) - Slots::log2(p, s.warps[1], 1.0),
        )
    }

    /// How compute-bound the tile is, in `(0, 1)`: a logistic in the warp tile's area, half way
    /// one doubling below the best area.
    fn compute_bound(&self, p: &Point) -> f64 {
        let (m, n) = self.warp_tile(p);
        1.0 / (1.0 + (-(m + n - (self.area - 1.0)) * 1.2).exp())
    }

    /// The tile's cost: the products and ratios of its parameters, a seeded roughness per tile
    /// (`key`: the tile's value indices, the clock left out).
    fn cost(&self, p: &Point, key: u64) -> f64 {
        let s = &self.slots;
        let [low, high, aspect, warps, parallel, buffers] = self.weights;
        let (m, n) = self.warp_tile(p);
        let area = m + n;
        let w = Slots::log2(p, s.warps[0], 1.0) + Slots::log2(p, s.warps[1], 1.0);
        let block = Slots::log2(p, s.block[0], 6.0) + Slots::log2(p, s.block[1], 6.0);
        let mut r = low * (self.area - area).max(0.0).powf(1.5)
            + high * (area - self.area).max(0.0).powi(2)
            + aspect * (m - n).powi(2)
            + warps * (w - self.warps).powi(2)
            + parallel * (block - self.parallel).max(0.0).powi(2);
        if let Some(b) = s.buffers {
            // Large tiles need a second buffer to hide their loads; a third costs shared memory.
            let need = ((block - 10.0) / 6.0).clamp(0.0, 1.0);
            r += buffers
                * match p.i[b] {
                    0 => 1.5 * need,
                    1 => 0.0,
                    _ => 0.3 + 0.5 * (1.0 - need),
                };
        }
        for (k, costs) in &self.others {
            r += costs[usize::from(p.i[*k])];
        }
        r + self.roughness * unit_of(hash(self.seed, key, 0))
    }

    /// Whether the tile satisfies the constraints (a warp tile of at least one fragment).
    fn valid(&self, p: &Point) -> bool {
        let (m, n) = self.warp_tile(p);
        m >= 4.0 && n >= 4.0
    }
}

pub(super) fn model(plan: &Plan, mix: &mut Mix) -> Model {
    let tiles = Rc::new(TileCost::draw(plan, mix));
    let power = PowerModel::draw(mix);
    let jitter_seed = mix.next();
    let clock = tiles.slots.clock;
    let skip = clock.unwrap_or(usize::MAX);
    // Rank every valid tile (the Cartesian product of the other parameters) by its cost.
    let mut counts = plan.counts.clone();
    if let Some(c) = clock {
        counts[c] = 1;
    }
    let total: usize = counts.iter().product();
    let mut point = Point::default();
    let mut indices = vec![0u16; counts.len()];
    let mut ranked: Vec<(f64, u64)> = Vec::new();
    for t in 0..total {
        let mut rest = t;
        for (slot, &n) in indices.iter_mut().zip(&counts).rev() {
            *slot = (rest % n) as u16;
            rest /= n;
        }
        point.set(plan, &indices, 0);
        if tiles.valid(&point) {
            let key = point.key_without(0, skip);
            ranked.push((tiles.cost(&point, key), key));
        }
    }
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let profile = Profile(TILES.to_vec()).scaled(mix.range(0.85, 1.15));
    let n = ranked.len().max(1) as f64;
    let ratio: HashMap<u64, f64> = ranked
        .iter()
        .enumerate()
        .map(|(r, &(_, key))| (key, profile.ratio(r as f64 / n)))
        .collect();
    let top = PowerModel::top();
    let busy = Rc::clone(&tiles);
    let time = move |p: &Point| {
        let key = p.key_without(0, skip);
        let base = ratio.get(&key).copied().unwrap_or(f64::INFINITY);
        let Some(c) = clock else { return base };
        let beta = tiles.compute_bound(p);
        let slow = beta * top / p.v[c] + (1.0 - beta);
        let z = normal_of(hash(jitter_seed, key, u64::from(p.i[c])), hash(key, 7, 0));
        // The top clock of the best tile is exact: the optimum is 1.
        let noise = if usize::from(p.i[c]) + 1 == CLOCK_LEVELS && base == 1.0 {
            1.0
        } else {
            1.0 + JITTER * z.clamp(-3.0, 3.0)
        };
        base * slow * noise
    };
    let watts = move |p: &Point| {
        let f = clock.map_or(top, |c| p.v[c]);
        power.watts(f, 0.55 + 0.45 * busy.compute_bound(p))
    };
    let resource = tile_resource(plan);
    let constraints = warp_tile_constraints(plan);
    Model {
        constraints,
        raw: Box::new(time),
        profile: None,
        resource,
        fail: 0.08,
        noise: 0.0,
        power: Some(Box::new(watts)),
    }
}

/// The resource whose largest users fail: block tile times warps per block (log2), with a small
/// share of the buffers to break ties.
fn tile_resource(plan: &Plan) -> Resource {
    let span = |k: usize| (plan.counts[k].max(2) - 1) as f64;
    let weights = (0..plan.roles.len())
        .filter_map(|k| match plan.roles[k] {
            Role::Tile | Role::Warps => Some((k, span(k))),
            Role::Buffers => Some((k, 0.3)),
            _ => None,
        })
        .collect();
    Resource {
        weights,
        trigger: None,
    }
}

/// `block / warps >= 16` along each axis the plan has both of.
fn warp_tile_constraints(plan: &Plan) -> Vec<String> {
    let slots = Slots::of(plan);
    (0..2)
        .filter_map(|a| match (slots.block[a], slots.warps[a]) {
            (Some(b), Some(w)) => Some(format!("{} >= 16 * {}", plan.names[b], plan.names[w])),
            _ => None,
        })
        .collect()
}
