//! `gemm_cuda --pool ARCH`: how long a tuning of this kernel waits for NVRTC on this machine,
//! with no GPU. `auto` runs as the tuner runs it (one configuration at a time, the default
//! first, its expected next configurations handed to the compile pool) while NVRTC compiles
//! every configuration for real on the runtime's pool ([`Pool`]); the GPU's measurement is
//! replaced by a fixed wait, and the kernel times the strategy is told are made up (a smooth
//! function of the tiles, the block size and the staging, nothing measured). Three ways of
//! compiling, each run in turn, `--rounds` times:
//!
//! - **now**: the tuner's way: the pool builds the guesses, and the measuring thread builds the
//!   configuration about to be measured;
//! - **before**: the way before 2026-11-28: the pool is handed that configuration too, first;
//! - **none**: nothing compiled ahead (`TUNABLE_BATCH=1`).
//!
//! Every run compiles from nothing (the build cache is turned off). `--evaluations N` (default
//! 100), `--measure-ms M` (default 8: what a `gemm_cuda` configuration's measuring took on an
//! H200 at n = 2048), `--rounds R` (default 2).

use super::{GEMM, GemmCudaParams, flag_value, gemm_cuda_space};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tunable::Params;
use tunable::backend::cuda::compile;
use tunable_runtime::ahead::{Build, Pool};
use tunable_search::Space;
use tunable_search::strategy::{self, Driver, Evaluator, Outcome};

/// How the configurations are compiled.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Way {
    /// Whether a pool compiles ahead.
    ahead: bool,
    /// Whether the pool is handed the configuration about to be measured.
    asked: bool,
}

/// The ways compared, in the order each round runs them.
const WAYS: [(&str, Way); 3] = [
    (
        "now",
        Way {
            ahead: true,
            asked: false,
        },
    ),
    (
        "before",
        Way {
            ahead: true,
            asked: true,
        },
    ),
    (
        "none",
        Way {
            ahead: false,
            asked: false,
        },
    ),
];

/// A configuration's build, whoever runs it first (as the CUDA backend's cells).
type Cell = Arc<OnceLock<bool>>;

/// The evaluator: builds (or waits for the build of) each configuration, then "measures" it.
struct Fake {
    space: Arc<Space>,
    arch: String,
    way: Way,
    pool: Option<Pool>,
    cells: HashMap<usize, Cell>,
    measure: Duration,
    /// Seconds the measuring thread spent building or waiting for builds.
    waited: f64,
}

impl Fake {
    fn cell(&mut self, position: usize) -> (Cell, bool) {
        let fresh = !self.cells.contains_key(&position);
        (Arc::clone(self.cells.entry(position).or_default()), fresh)
    }

    fn params(&self, position: usize) -> GemmCudaParams {
        GemmCudaParams::from_values(&self.space.values(position)).expect("fits")
    }
}

/// A made-up kernel time in milliseconds: more work per thread, a block of about 256 threads,
/// staging, wide vectors and the shorter K step are faster.
fn made_up_ms(p: &GemmCudaParams) -> f64 {
    let work = (p.tile_size_x * p.tile_size_y) as f64;
    let threads = (p.block_size_x * p.block_size_y) as f64;
    let block = 1.0 + 0.15 * (threads / 256.0).log2().abs();
    let staged = if p.use_shared == 1 { 0.85 } else { 1.0 };
    let vector = 1.0 - 0.05 * (p.VW as f64).log2();
    let step = if p.KB == 32 { 1.03 } else { 1.0 };
    0.5 + 3.0 / work.powf(0.6) * block * staged * vector * step
}

impl Evaluator for Fake {
    type Report = Outcome;
    type Error = std::convert::Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Outcome>, Self::Error> {
        let mut out = Vec::with_capacity(positions.len());
        for &position in positions {
            let p = self.params(position);
            let (cell, _) = self.cell(position);
            let start = Instant::now();
            let ok = *cell.get_or_init(|| compile(&GEMM, &p, &self.arch).is_ok());
            self.waited += start.elapsed().as_secs_f64();
            std::thread::sleep(self.measure);
            out.push(if ok {
                Outcome::Value(made_up_ms(&p))
            } else {
                Outcome::Failed
            });
        }
        Ok(out)
    }

    fn prepare(&mut self, likely: &[usize]) {
        if !self.way.ahead {
            return;
        }
        let likely = if self.way.asked {
            likely
        } else {
            // The configuration about to be measured is left to the measuring thread.
            likely.get(1..).unwrap_or_default()
        };
        let mut fresh = Vec::new();
        for &position in likely {
            let (cell, new) = self.cell(position);
            if new {
                let (p, arch) = (self.params(position), self.arch.clone());
                let build = Build::new(false, move || {
                    cell.get_or_init(|| compile(&GEMM, &p, &arch).is_ok());
                });
                fresh.push((position, build));
            }
        }
        if let Some(pool) = &self.pool {
            pool.hint(likely, fresh);
        }
    }
}

/// Runs `--pool ARCH` (see the [module docs](self)).
pub fn report(arch: &str, args: &[String]) {
    // SAFETY: set before any thread of this program starts.
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", "off") };
    let number = |flag: &str, default: f64| {
        flag_value(args, flag)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(default)
    };
    let evaluations = number("--evaluations", 100.0) as usize;
    let measure = Duration::from_secs_f64(number("--measure-ms", 8.0) / 1e3);
    let rounds = number("--rounds", 2.0) as usize;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let space = Arc::new(gemm_cuda_space());
    let default = space
        .position_of_values(&GemmCudaParams::default().to_values())
        .expect("the default is in the space");
    println!(
        "gemm_cuda --pool {arch}: auto, {evaluations} evaluations, NVRTC for real on {threads} threads, {:.1} ms of made-up measuring each",
        measure.as_secs_f64() * 1e3
    );
    let mut totals: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
    for round in 1..=rounds {
        for (name, way) in WAYS {
            let pool = way.ahead.then(|| Pool::new(threads));
            let mut fake = Fake {
                space: Arc::clone(&space),
                arch: arch.to_owned(),
                way,
                pool,
                cells: HashMap::new(),
                measure,
                waited: 0.0,
            };
            let mut auto = strategy::build(&"auto".parse().expect("auto"), Arc::clone(&space), 1)
                .expect("auto builds");
            let mut driver = Driver::new(auto.as_mut(), evaluations).first(&[default]);
            if way.ahead {
                driver = driver.ahead(threads);
            }
            let start = Instant::now();
            let Ok(rec) = driver.run(&mut fake);
            let wall = start.elapsed().as_secs_f64();
            let built = fake.cells.values().filter(|c| c.get().is_some()).count();
            println!(
                "  round {round}, {name:>6}: {wall:.2} s, {:.2} s of it waiting for NVRTC; {} evaluated, {built} compiled",
                fake.waited,
                rec.trials.len()
            );
            totals.entry(name).or_default().push((wall, fake.waited));
        }
    }
    for (name, _) in WAYS {
        let runs = &totals[name];
        let n = runs.len() as f64;
        println!(
            "  mean {name:>6}: {:.2} s, {:.2} s waiting for NVRTC",
            runs.iter().map(|r| r.0).sum::<f64>() / n,
            runs.iter().map(|r| r.1).sum::<f64>() / n
        );
    }
}
