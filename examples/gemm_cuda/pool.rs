//! `gemm_cuda --pool ARCH`: how long a tuning of this kernel waits for NVRTC on this machine,
//! with no GPU. `auto` (or `--strategy`) runs as the tuner runs it (one configuration at a
//! time, the default first) while NVRTC compiles every configuration for real; the GPU's
//! measurement is replaced by a fixed wait, and the kernel times the strategy is told are made
//! up (a smooth function of the tiles, the block size and the staging, nothing measured). Two
//! ways, each run in turn, `--rounds` times (each round starting with the next way):
//!
//! - **prebuild**: `TUNABLE_PREBUILD=on`: before each evaluation the runtime's prebuild
//!   [`Pool`] is handed the configurations the strategy expects next (as many as the threads),
//!   and the measuring thread builds the configuration about to be measured unless it is built
//!   or being built;
//! - **none**: the default, nothing prebuilt.
//!
//! Every run compiles from nothing (the build cache is turned off). `--evaluations N` (default
//! 100), `--measure-ms M` (default 8), `--rounds R` (default 2), `--strategy S` (default
//! `auto`), `--ways W,...` (default `prebuild,none`). One configuration is compiled before the
//! ways run, so that loading NVRTC is not charged to the way that runs first.

use super::support::Args;
use super::{GEMM, GemmCudaParams, gemm_cuda_space};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tunable::Params;
use tunable::backend::cuda::compile;
use tunable_runtime::prebuild::{Build, Pool};
use tunable_search::Space;
use tunable_search::strategy::{self, Driver, Evaluator, Outcome};

/// The ways compared, in the order each round runs them: whether a pool prebuilds.
const WAYS: [(&str, bool); 2] = [("prebuild", true), ("none", false)];

/// Whether each configuration compiled, built once by whichever thread gets there first.
#[derive(Default)]
struct Builds(Mutex<HashMap<usize, Arc<OnceLock<bool>>>>);

impl Builds {
    fn cell(&self, position: usize) -> Arc<OnceLock<bool>> {
        Arc::clone(self.0.lock().unwrap().entry(position).or_default())
    }
}

/// The evaluator: builds (or waits for the build of) each configuration, then "measures" it.
struct Fake {
    space: Arc<Space>,
    arch: String,
    pool: Option<Pool>,
    builds: Arc<Builds>,
    /// The configurations handed to the pool.
    handed: HashSet<usize>,
    /// Of those, the configurations measured.
    measured: usize,
    measure: Duration,
    /// Seconds the measuring thread spent building or waiting for builds.
    waited: f64,
    /// The pool's threads.
    threads: usize,
}

impl Fake {
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
            self.measured += usize::from(self.handed.contains(&position));
            let start = Instant::now();
            let ok = *self
                .builds
                .cell(position)
                .get_or_init(|| compile(&GEMM, &p, &self.arch).is_ok());
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
        let Some(pool) = &self.pool else {
            return;
        };
        // As the tuner: the configuration about to be measured is left to the measuring
        // thread; of the others, as many as the pool has threads.
        let likely = likely.get(1..).unwrap_or_default();
        let likely = &likely[..likely.len().min(self.threads)];
        let mut fresh = Vec::new();
        for &position in likely {
            let cell = self.builds.cell(position);
            if cell.get().is_none() && self.handed.insert(position) {
                let (p, arch) = (self.params(position), self.arch.clone());
                fresh.push((
                    position,
                    Build::new(false, move || {
                        cell.get_or_init(|| compile(&GEMM, &p, &arch).is_ok());
                    }),
                ));
            }
        }
        pool.submit(likely, fresh);
    }
}

/// Runs `--pool ARCH` (see the [module docs](self)).
pub fn report(arch: &str, args: &Args) {
    // SAFETY: set before any thread of this program starts.
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", "off") };
    let number = |flag: &str, default: f64| {
        args.optional(flag)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(default)
    };
    let evaluations = number("--evaluations", 100.0) as usize;
    let measure = Duration::from_secs_f64(number("--measure-ms", 8.0) / 1e3);
    let rounds = number("--rounds", 2.0) as usize;
    let name = args.optional("--strategy").unwrap_or("auto");
    let spec = name
        .parse()
        .unwrap_or_else(|e| panic!("--strategy {name}: {e}"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ways: Vec<(&str, bool)> = match args.optional("--ways") {
        None => WAYS.to_vec(),
        Some(list) => {
            list.split(',')
                .map(|w| {
                    *WAYS.iter().find(|(n, _)| *n == w).unwrap_or_else(|| {
                        panic!("--ways {list}: {w} is not one of prebuild, none")
                    })
                })
                .collect()
        }
    };
    let space = Arc::new(gemm_cuda_space());
    let default = space
        .position_of_values(&GemmCudaParams::default().to_values())
        .expect("the default is in the space");
    // The process's first NVRTC compilation loads the library and its builtins: done here, not
    // in whichever way runs first (a configuration outside the tunings' first evaluations).
    let warm = GemmCudaParams::from_values(&space.values(space.len() - 1)).expect("fits");
    let _ = compile(&GEMM, &warm, arch);
    println!(
        "gemm_cuda --pool {arch}: {name}, {evaluations} evaluations, NVRTC for real on {threads} threads, {:.1} ms of made-up measuring each",
        measure.as_secs_f64() * 1e3
    );
    let mut totals: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
    for round in 1..=rounds {
        // Each round starts with the next way, so that no way always runs first.
        for k in 0..ways.len() {
            let (name, prebuild) = ways[(k + round - 1) % ways.len()];
            let mut fake = Fake {
                space: Arc::clone(&space),
                arch: arch.to_owned(),
                pool: prebuild.then(|| Pool::new(threads)),
                builds: Arc::default(),
                handed: HashSet::new(),
                measured: 0,
                measure,
                waited: 0.0,
                threads,
            };
            let mut strategy = strategy::build(&spec, Arc::clone(&space), 1).expect("builds");
            let mut driver = Driver::new(strategy.as_mut(), evaluations).first(&[default]);
            if prebuild {
                driver = driver.ahead(threads);
            }
            let start = Instant::now();
            let Ok(rec) = driver.run(&mut fake);
            let wall = start.elapsed().as_secs_f64();
            println!(
                "  round {round}, {name:>7}: {wall:.2} s, {:.2} s of it waiting for NVRTC; {} evaluated, {} handed to the pool, {} of them measured",
                fake.waited,
                rec.trials.len(),
                fake.handed.len(),
                fake.measured
            );
            totals.entry(name).or_default().push((wall, fake.waited));
        }
    }
    for (name, _) in &ways {
        let runs = &totals[name];
        let n = runs.len() as f64;
        println!(
            "  mean {name:>7}: {:.2} s, {:.2} s waiting for NVRTC",
            runs.iter().map(|r| r.0).sum::<f64>() / n,
            runs.iter().map(|r| r.1).sum::<f64>() / n
        );
    }
}
