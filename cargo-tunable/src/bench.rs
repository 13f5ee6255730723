//! # `cargo tunable bench`
//!
//! Replays brute-forced Kernel Tuner caches (or the synthetic functions of Luo et al., "Non-smooth Bayesian optimization in tuning scientific applications", or generated
//! stress landscapes), runs strategies on them and scores the runs with the methodology score of
//! Willemsen et al., "Constraint-aware Optimization in Auto-Tuning" (0 = random search, 1 = the optimum at the first evaluation).
//!
//! ```text
//! cargo tunable bench --cache FILE [--cache FILE ...] [--space FILE | --t1 FILE | --spaces-dir DIR]
//!     [--synthetic f3|f4|bukin6 ... --grid 101] [--stress default|small|large|all|KIND|SPEC,...]
//!     --strategy NAME[,NAME...] --budget 220 --repeats 35 --seed 1 --out DIR [--peer DIR] [--batch N] [--jobs N]
//!     [--score kernel-tuner|window] [--anytime 25,50,100,220] [--pairs] [--loko]
//!     [--warm-start-from CACHE ... | --warm-start-family] [--cost-model h100|h200[:key=value...]]
//!     [--objective FIELD [--maximize] | --objectives time,FIELD [--maximize]]
//! ```
//!
//! `--objective FIELD` replays another field of the caches' records (`ps_energy`, `GFLOPS/W`
//! with `--maximize`, a product `nvml_power*time`) or a stress landscape's `energy`;
//! `--objectives time,FIELD` runs the multi-objective strategies (`auto`, `sweep`, `nsga`, `scalar`,
//! `ehvi`, `random`: [`tunable_search::strategy::multi`]) told both objectives, and the others on
//! the first, and scores each run by the hypervolume of its found front ([`crate::front`]).
//!
//! `--cost-model` adds a table of simulated wall times per objective and strategy under the
//! old batch policy and under speculative compilation ([`crate::cost`]), written to
//! `DIR/cost.md` and `DIR/cost.json` too.
//!
//! The score (`--score`) is by default the methodology's *cut-off* score, as Kernel Tuner's
//! tools compute it (`shared/tools/score.py --invalid all --max-fevals 220`): the scored window
//! ends where random search has come 95% of the way from the median to the optimum, capped at
//! `--budget`; a failed configuration counts as the worst valid value, the median is over the
//! valid ones. `--score window` scores the fixed window up to `--budget` instead. Beside it the
//! bench prints the *anytime* tables ([`crate::anytime`]): the score at 25, 50, 100 and 220
//! evaluations (fixed windows), per cache, per kernel family and the worst cache.
//!
//! `--stress` adds generated landscapes of the kinds a new user brings
//! ([`tunable_search::sim::stress`]: flat and periodic, heavy-tailed, plateaus, needles,
//! near-optimal, noisy, failing, the small spaces of a required level, cliffs, pinpoints and
//! many levels, and a tensor-core GEMM's tiles under a clock), each kind a family of its own (its stems are
//! `kind_N<size>_D<dims>`). On a noisy landscape the strategy is told noisy measurements
//! (repeat `i`'s noise fixed by its seed) while its run records, and the score uses, the true
//! times. The bench prints a summary per group (caches, stress landscapes): per strategy, the
//! main score's mean and worst case, the cases below random search, and the anytime score's
//! mean and worst case at each checkpoint ([`anytime::summary`]).
//!
//! For each cache and strategy it writes `DIR/<stem>/<strategy>.json`:
//! `{"strategy": ..., "cache": ..., "budget": ..., "seed": ..., "runs": [[v, v, ...], ...],
//! "strategy_seconds": [...]}`, where a run lists the objective of every unique evaluation in order
//! (`null` for a failed configuration) and `strategy_seconds` the time spent inside the strategy
//! per run. Repeat `i` (from 0) uses seed `seed + i`. It prints a table of scores per cache and
//! strategy with the mean over caches, writes it to `DIR/scores.md` and `DIR/scores.json`, and
//! draws `DIR/<stem>/convergence.svg` (best-so-far relative to the optimum; median and quartiles)
//! and `DIR/anytime.svg` (per strategy, the mean anytime score over the caches at each
//! checkpoint, random search at 0; `DIR/anytime-stress.svg` for the stress landscapes).
//! Below the scores come the share of evaluations spent on failing configurations, and how far
//! above the optimum each strategy's best lies beside each cache's timing noise, per cache and
//! per kernel family (see [`crate::gap`]).
//!
//! The space of a cache is its own keys, or `--space` / `--t1` for every cache, or with
//! `--spaces-dir` the Kernel Tuner T1 file `<kernel>.t1.json` whose kernel name followed by `_`
//! starts the cache's stem (`convolution_milo.t1.json` for `convolution_milo_A100.json.gz`, as
//! benchmark_hub names caches `<kernel>/<GPU>.json`); caches without one, and caches whose
//! parameters differ from the T1 file's (an older run of the kernel, as
//! `convolution_milo_MI50`), use their own keys.
//! `--peer DIR` also scores another tuner's runs stored in the same format under
//! `DIR/<stem>/*.json[.gz]` (as `shared/data/peer-results` holds Kernel Tuner's), with the same
//! scorer and space, as rows `kt:<name>`.
//!
//! `--pairs` also runs every pair of the given strategies as an ensemble
//! (`ensemble:members=[a+b]`, the exhaustive search over pairs of Liu et al., "GPU Accelerated Exhaustive Search for Optimal Ensemble of Black-Box Optimization Algorithms"). `--loko` adds
//! leave-one-family-out selection among the strategies run (see [`crate::loko`]) to the table.
//! The runs of one cache and strategy are spread over `--jobs` threads (default: every core).

use crate::{anytime, caches, family, front, gap, loko, plot};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use tunable_search::pareto::Sense;
use tunable_search::sim::stress::{self, Landscape, StressSpec};
use tunable_search::sim::{
    KernelTunerCache, Observation, Replay, ScoreContext, ScoreOptions, Synthetic,
};
use tunable_search::strategy::{self, Minimized, Outcome, StrategySpec, build_multi};

/// Arguments of `bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// A Kernel Tuner cache file (`.json` or `.json.gz`); repeat for several.
    #[arg(long = "cache", required_unless_present_any = ["synthetic", "stress"])]
    caches: Vec<PathBuf>,
    /// A synthetic function of Luo et al. on a grid instead of a cache: `f3`, `f4` or `bukin6`;
    /// repeat for several.
    #[arg(long, value_parser = parse_synthetic)]
    synthetic: Vec<Synthetic>,
    /// Generated stress landscapes (see `tunable_search::sim::stress`), comma-separated:
    /// `default` (every kind at three sizes, 36 landscapes), `small` (every kind at its smallest),
    /// `large` (seven kinds at about 10^6), `all` (`default` and `large`), `varied` (`required`,
    /// `cliffs` and `pinpoint` at eight seeded settings each, 210 to 980 configurations),
    /// `unseen` (every kind at two seeded settings no default was chosen on), a kind
    /// (`flat_periodic`, `heavy_tail`, `plateau`, `needle`, `near_optimal`, `noisy`, `failing`,
    /// `required`, `cliffs`, `pinpoint`, `tile_clock`, `levels`: its three default settings),
    /// `kind:n=SIZE:d=DIMS[:seed=S][:noise=E][:fail=F]`, `kind:space=FILE[:seed=S]...` (the kind
    /// over a real kernel's space, a spaces JSON or T1 file) or `*:space=FILE` (every kind but
    /// `tile_clock` over it).
    #[arg(long, value_parser = parse_stress)]
    stress: Vec<Vec<StressSpec>>,
    /// Grid points per axis of the synthetic functions.
    #[arg(long, default_value_t = 101)]
    grid: usize,
    /// Compare every strategy with this one run by run (same seeds): the share of runs whose best
    /// is at least as good, and strictly better (as Luo et al.'s percentage tables). It must be one
    /// of `--strategy`.
    #[arg(long)]
    versus: Option<String>,
    /// Where the space of each cache comes from.
    #[command(flatten)]
    spaces: caches::SpaceArgs,
    /// Strategies, comma-separated, each `name[:key=value]...`.
    #[arg(long, value_delimiter = ',', required = true)]
    strategy: Vec<String>,
    /// Unique evaluations per run.
    #[arg(long, default_value_t = 220)]
    budget: usize,
    /// Runs per cache and strategy.
    #[arg(long, default_value_t = 35)]
    repeats: usize,
    /// Seed of the first run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
    /// Configurations asked per batch.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Another tuner's runs to score alongside (e.g. shared/data/peer-results).
    #[arg(long)]
    peer: Option<PathBuf>,
    /// Worker threads (default: available cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Score definition: `kernel-tuner` (the default; score.py's cut-off score: the window ends
    /// where the baseline is 95% of the way from the median to the optimum, capped at
    /// `--budget`, median over valid values), which reproduces `peer-results/scores.json`; or
    /// `window` (alias `issue`: the fixed window up to `--budget`, median with failures as the
    /// worst value).
    #[arg(long, value_enum, default_value_t = ScoreKind::KernelTuner)]
    score: ScoreKind,
    /// Checkpoints of the anytime tables: the score with the window ending at each (no cut-off).
    #[arg(long, value_delimiter = ',', default_values_t = anytime::CHECKPOINTS)]
    anytime: Vec<usize>,
    /// Also run every pair of the given strategies as an ensemble.
    #[arg(long)]
    pairs: bool,
    /// Report leave-one-family-out selection among the strategies run.
    #[arg(long)]
    loko: bool,
    /// Warm start from other devices' caches (see [`crate::warm`]).
    #[command(flatten)]
    warm: crate::warm::WarmArgs,
    /// The objective to replay instead of the cache's own (time): any numeric field of a Kernel
    /// Tuner cache's records (`ps_energy`, `nvml_energy`, `GFLOPS/W` with `--maximize`), or the
    /// product of fields (`nvml_power*time`: energy in mJ where a cache records power); on a
    /// stress landscape `time` or `energy` (the kinds with a clock, `tile_clock`).
    #[arg(long, conflicts_with = "objectives")]
    objective: Option<String>,
    /// The objective (with `--objectives`, the second) is maximized: its values are negated,
    /// as `shared/tools/score.py --maximize` does.
    #[arg(long)]
    maximize: bool,
    /// Two objectives, `time,FIELD` (fields as for `--objective`): a strategy named in
    /// `MULTI_STRATEGY_NAMES` (`auto`, `random`, `sweep`, `nsga`, `scalar`, `ehvi`) searches for the
    /// front of both, any other minimizes the first, and every run is also scored by the
    /// hypervolume of the front of what it has evaluated so far, as a fraction of the true
    /// front's, at the `--anytime` checkpoints.
    #[arg(long, value_delimiter = ',', num_args = 1)]
    objectives: Vec<String>,
    /// Also simulate each run's wall time under a compile and launch cost model, with the old
    /// batch policy and with speculative compilation: `h100` or `h200`, optionally with
    /// `:compile=S:threads=N:cores=N:overhead=S:repeats=N:margin=F:gate=B:demand=B:stale=B:depth=N`
    /// (see [`crate::cost`]). Noisy stress landscapes are left out of it.
    #[arg(long)]
    cost_model: Option<crate::cost::CostModel>,
}

fn parse_stress(list: &str) -> Result<Vec<StressSpec>, String> {
    stress::suite(list).map_err(|e| e.to_string())
}

fn parse_synthetic(name: &str) -> Result<Synthetic, String> {
    Synthetic::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Synthetic::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown synthetic function '{name}' (known: {})",
            known.join(", ")
        )
    })
}

/// Where a replayed objective comes from.
enum Source<'a> {
    Cache(&'a Path),
    Synthetic(Synthetic),
    Stress(&'a StressSpec),
}

impl Source<'_> {
    fn stem(&self) -> String {
        match self {
            Source::Cache(p) => caches::stem_of(p),
            Source::Synthetic(f) => f.name().to_owned(),
            Source::Stress(s) => s.stem(),
        }
    }

    /// The `cache` field of the runs files.
    fn label(&self, grid: usize) -> String {
        match self {
            Source::Cache(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Source::Synthetic(f) => format!("synthetic:{}:{grid}x{grid}", f.name()),
            Source::Stress(s) => format!("stress:{s}"),
        }
    }
}

/// Which score definition to use.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScoreKind {
    /// score.py's cut-off score (the default).
    KernelTuner,
    /// The methodology score with a fixed window up to the budget.
    #[value(alias = "issue")]
    Window,
}

impl ScoreKind {
    /// The score options for a budget.
    fn options(self, budget: usize) -> ScoreOptions {
        match self {
            ScoreKind::Window => ScoreOptions::new(budget),
            ScoreKind::KernelTuner => ScoreOptions {
                budget,
                ..ScoreOptions::peer_results()
            },
        }
    }
}

/// One strategy's runs on one cache: the stable interchange format.
#[derive(Serialize, Deserialize)]
pub(crate) struct RunsFile {
    pub strategy: String,
    pub cache: String,
    pub budget: usize,
    pub seed: u64,
    pub runs: Vec<Vec<Option<f64>>>,
    #[serde(default)]
    pub strategy_seconds: Vec<f64>,
}

/// Scores of one row of the table.
#[derive(Serialize)]
struct Row {
    strategy: String,
    /// Per cache stem: (mean score, standard error), in cache order.
    per_cache: Vec<(String, f64, f64)>,
    /// Per cache stem, per anytime checkpoint: (mean score, standard error).
    anytime: Vec<(String, Vec<(f64, f64)>)>,
    mean: f64,
    stderr: f64,
    /// Mean strategy seconds per run over caches (None for peer rows without timing).
    seconds_per_run: Option<f64>,
    /// Per cache stem: the share of evaluations spent on failing configurations.
    failed: Vec<(String, f64)>,
}

pub(crate) fn run(args: BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    let started = std::time::Instant::now();
    let mut specs: Vec<StrategySpec> = args
        .strategy
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    if args.pairs {
        let singles = specs.clone();
        for (i, a) in singles.iter().enumerate() {
            for b in &singles[i + 1..] {
                specs.push(format!("ensemble:members=[{a}+{b}]").parse()?);
            }
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let sources: Vec<Source> = args
        .caches
        .iter()
        .map(|c| Source::Cache(c))
        .chain(args.synthetic.iter().map(|&f| Source::Synthetic(f)))
        .chain(args.stress.iter().flatten().map(Source::Stress))
        .collect();
    let stress_stems: Vec<String> = args.stress.iter().flatten().map(|s| s.stem()).collect();
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = sources
        .iter()
        .map(Source::stem)
        .find(|s| !seen.insert(s.clone()))
    {
        return Err(format!("'{dup}' is given twice").into());
    }
    let versus = match &args.versus {
        Some(v) => {
            let v: StrategySpec = v.parse()?;
            Some(
                specs
                    .iter()
                    .position(|s| *s == v)
                    .ok_or_else(|| format!("--versus {v} is not one of the strategies run"))?,
            )
        }
        None => None,
    };
    // Per source, per strategy: the best value of each run (failed runs: +inf).
    let mut bests: Vec<Vec<Vec<f64>>> = Vec::new();
    let total = (sources.len() * specs.len() * args.repeats) as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} runs {msg}")
            .expect("valid template"),
    );
    let mut rows: Vec<Row> = specs
        .iter()
        .map(|s| Row {
            strategy: s.to_string(),
            per_cache: vec![],
            anytime: vec![],
            mean: 0.0,
            stderr: 0.0,
            seconds_per_run: Some(0.0),
            failed: vec![],
        })
        .collect();
    let mut peer_rows: Vec<Row> = Vec::new();
    let mut stems = Vec::new();
    let mut anytime_checkpoints: Option<Vec<usize>> = None;
    // Per source: the optimum and the timing noise (for the distance-to-optimum tables).
    let mut optima: Vec<(f64, Option<f64>)> = Vec::new();
    let mut costs: Vec<crate::cost::CostRow> = Vec::new();
    if !args.objectives.is_empty() && args.objectives.len() != 2 {
        return Err("--objectives takes two objectives, e.g. time,energy".into());
    }
    if !args.synthetic.is_empty() && (args.objective.is_some() || !args.objectives.is_empty()) {
        return Err("--objective and --objectives apply to caches and stress landscapes".into());
    }
    let primary = args.objectives.first().or(args.objective.as_ref()).cloned();
    // What a single-objective strategy minimizes: time unless another field is replayed (or
    // time is maximized).
    let minimized = if primary.as_deref().is_none_or(|f| f == "time")
        && !(args.maximize && args.objectives.is_empty())
    {
        Minimized::Time
    } else {
        Minimized::Other
    };
    let mut front_rows: Vec<front::Row> = Vec::new();
    // The fronts are scored at the anytime checkpoints the budget reaches, as the scores are.
    let front_checkpoints: Vec<usize> = args
        .anytime
        .iter()
        .copied()
        .filter(|&k| k <= args.budget)
        .collect();
    for source in &sources {
        let stem = source.stem();
        bar.set_message(stem.clone());
        let owned: Replay;
        let generated: Landscape;
        let chosen: Replay;
        let (replay, noise, landscape) = match source {
            Source::Cache(path) => {
                let noise;
                (owned, noise) = replay_for(path, &stem, &args)?;
                (&owned, noise, None)
            }
            Source::Synthetic(f) => {
                owned = f.replay(args.grid)?;
                (&owned, None, None)
            }
            Source::Stress(spec) => {
                generated = Landscape::build(spec)?;
                let noise = (generated.noise() > 0.0).then(|| generated.noise());
                (generated.replay(), noise, Some(&generated))
            }
        };
        // Another objective than the source's own: the strategies are told its exact values.
        let (replay, noise, landscape) = match &primary {
            Some(field) if !(field == "time" && landscape.is_some()) => {
                let values = objective_values(source, landscape, replay, field, &args)?;
                let maximize = args.maximize && args.objectives.is_empty();
                chosen = replay.with_values(sense(values, maximize));
                (&chosen, noise.filter(|_| field == "time"), None)
            }
            _ => (replay, noise, landscape),
        };
        // The second objective's values (minimized) and the true front.
        let (second, fronts) = match args.objectives.get(1) {
            Some(field) => {
                let second = sense(
                    objective_values(source, landscape, replay, field, &args)?,
                    args.maximize,
                );
                let fronts = front::Fronts::new(replay.values(), &second).ok_or_else(|| {
                    format!("{stem}: no configuration is valid in both objectives")
                })?;
                (Some(second), Some(fronts))
            }
            None => (None, None),
        };
        let first = match source {
            Source::Cache(path) if args.warm.is_on() => {
                args.warm.first(path, &args.caches, replay, &args.spaces)?
            }
            _ => Vec::new(),
        };
        let mut source_bests = Vec::new();
        let options = args.score.options(args.budget);
        let ctx = ScoreContext::with_options(replay.values(), &options)?;
        let at = anytime::contexts(replay.values(), &options, &args.anytime);
        let checkpoints: Vec<usize> = at.iter().map(|c| c.0).collect();
        if anytime_checkpoints
            .as_ref()
            .is_some_and(|c| *c != checkpoints)
        {
            return Err("--anytime checkpoints must not exceed every objective's size".into());
        }
        anytime_checkpoints = Some(checkpoints);
        let dir = args.out.join(&stem);
        std::fs::create_dir_all(&dir)?;
        let mut curves = Vec::new();
        for (spec, row) in specs.iter().zip(rows.iter_mut()) {
            // A multi-objective strategy searches for the front of both objectives.
            let multi = second
                .as_deref()
                .filter(|_| front::is_multi(spec))
                .map(|second| (second, args.objectives.len()));
            // Validate the spec once, before spawning workers.
            match multi {
                Some((_, k)) => drop(build_multi(spec, replay.shared_space(), k, args.seed)?),
                None => drop(strategy::build_for(
                    spec,
                    replay.shared_space(),
                    args.seed,
                    minimized,
                )?),
            }
            let runs = run_repeats(
                replay, landscape, spec, &args, jobs, &bar, &first, multi, minimized,
            );
            let values: Vec<Vec<Option<f64>>> = runs.iter().map(|r| r.0.clone()).collect();
            let seconds: Vec<f64> = runs.iter().map(|r| r.1).collect();
            if let Some(fronts) = &fronts {
                let positions: Vec<Vec<usize>> = runs.iter().map(|r| r.2.clone()).collect();
                let at = fronts.at(&positions, &front_checkpoints);
                match front_rows
                    .iter_mut()
                    .find(|r| r.strategy == spec.to_string())
                {
                    Some(r) => r.per_source.push((stem.clone(), at)),
                    None => front_rows.push(front::Row {
                        strategy: spec.to_string(),
                        per_source: vec![(stem.clone(), at)],
                    }),
                }
            }
            if let Some(model) = args.cost_model
                && multi.is_none()
                && landscape.is_none_or(|l| l.noise() == 0.0)
            {
                costs.push(crate::cost::simulate_runs(
                    &stem,
                    &replay.shared_space(),
                    replay.values(),
                    &values,
                    spec,
                    (args.budget, args.seed, jobs),
                    &first,
                    model,
                ));
            }
            let (mean, se) = ctx.score_runs(&values);
            row.per_cache.push((stem.clone(), mean, se));
            row.anytime
                .push((stem.clone(), anytime_scores(&at, &values)));
            row.failed.push((stem.clone(), failed_share(&values)));
            source_bests.push(
                values
                    .iter()
                    .map(|r| r.iter().flatten().copied().fold(f64::INFINITY, f64::min))
                    .collect::<Vec<f64>>(),
            );
            if let Some(s) = row.seconds_per_run.as_mut() {
                *s += seconds.iter().sum::<f64>()
                    / seconds.len().max(1) as f64
                    / sources.len() as f64;
            }
            curves.push((
                spec.to_string(),
                values
                    .iter()
                    .map(|r| ctx.best_so_far(r))
                    .collect::<Vec<_>>(),
            ));
            let file = RunsFile {
                strategy: spec.to_string(),
                cache: source.label(args.grid),
                budget: args.budget,
                seed: args.seed,
                runs: values,
                strategy_seconds: seconds,
            };
            std::fs::write(
                dir.join(format!("{spec}.json")),
                serde_json::to_string(&file)?,
            )?;
        }
        if let Some(peer) = &args.peer {
            for (name, runs) in read_peer(&peer.join(&stem))? {
                let (mean, se) = ctx.score_runs(&runs);
                let label = format!("kt:{name}");
                let failed = (stem.clone(), failed_share(&runs));
                let curve = (stem.clone(), anytime_scores(&at, &runs));
                match peer_rows.iter_mut().find(|r| r.strategy == label) {
                    Some(r) => {
                        r.per_cache.push((stem.clone(), mean, se));
                        r.anytime.push(curve);
                        r.failed.push(failed);
                    }
                    None => peer_rows.push(Row {
                        strategy: label,
                        per_cache: vec![(stem.clone(), mean, se)],
                        anytime: vec![curve],
                        mean: 0.0,
                        stderr: 0.0,
                        seconds_per_run: None,
                        failed: vec![failed],
                    }),
                }
            }
        }
        let optimum = ctx.optimum();
        optima.push((optimum, noise));
        std::fs::write(
            dir.join("convergence.svg"),
            plot::convergence_svg(&stem, optimum, args.budget, ctx.baseline(), &curves),
        )?;
        stems.push(stem);
        bests.push(source_bests);
    }
    bar.finish_and_clear();
    rows.extend(
        peer_rows
            .into_iter()
            .filter(|r| r.per_cache.len() == stems.len()),
    );
    for r in &mut rows {
        let k = r.per_cache.len().max(1) as f64;
        r.mean = r.per_cache.iter().map(|c| c.1).sum::<f64>() / k;
        r.stderr = r.per_cache.iter().map(|c| c.2 * c.2).sum::<f64>().sqrt() / k;
    }
    rows.sort_by(|a, b| b.mean.total_cmp(&a.mean));
    let mut table = markdown_table(&stems, &rows, &args);
    let checkpoints = anytime_checkpoints.clone().unwrap_or_default();
    let mut plots = vec![format!(
        "{}/<objective>/convergence.svg",
        args.out.display()
    )];
    for (title, stress) in [("caches", false), ("stress landscapes", true)] {
        let group: Vec<(&str, Vec<anytime::Case>)> = rows
            .iter()
            .map(|r| {
                let cases = r
                    .per_cache
                    .iter()
                    .zip(&r.anytime)
                    .filter(|(c, _)| stress_stems.contains(&c.0) == stress)
                    .map(|(c, (_, at))| anytime::Case {
                        stem: &c.0,
                        score: c.1,
                        anytime: at.iter().map(|a| a.0).collect(),
                    })
                    .collect();
                (r.strategy.as_str(), cases)
            })
            .collect();
        let series: Vec<(String, Vec<f64>)> = group
            .iter()
            .filter(|(_, cases)| !cases.is_empty())
            .map(|(name, cases)| {
                let mean = (0..checkpoints.len())
                    .map(|j| {
                        let v: Vec<f64> = cases.iter().map(|c| c.anytime[j]).collect();
                        v.iter().sum::<f64>() / v.len() as f64
                    })
                    .collect();
                (name.to_string(), mean)
            })
            .collect();
        if !series.is_empty() {
            let file = if stress {
                "anytime-stress.svg"
            } else {
                "anytime.svg"
            };
            let path = args.out.join(file);
            std::fs::write(&path, plot::anytime_svg(title, &checkpoints, &series))?;
            plots.push(path.display().to_string());
        }
        let part = anytime::summary(title, &checkpoints, &group);
        if !part.is_empty() {
            table += "\n";
            table += &part;
        }
    }
    table += &front::markdown(&args.objectives, &front_checkpoints, &front_rows);
    table += &failed_table(&stems, &rows);
    let names: Vec<String> = specs.iter().map(ToString::to_string).collect();
    let order: Vec<&str> = rows.iter().map(|r| r.strategy.as_str()).collect();
    let gap_sources: Vec<gap::Source<'_>> = stems
        .iter()
        .zip(&optima)
        .zip(&bests)
        .map(|((stem, &(optimum, noise)), bests)| gap::Source {
            stem,
            optimum,
            noise,
            bests,
        })
        .collect();
    table += &gap::markdown(&names, &order, &gap_sources);
    let scored: Vec<family::Scored> = rows
        .iter()
        .map(|r| family::Scored {
            strategy: &r.strategy,
            per_cache: r
                .per_cache
                .iter()
                .map(|c| (c.0.as_str(), c.1, c.2))
                .collect(),
        })
        .collect();
    table += "\n";
    table += &family::markdown(&scored);
    let curves: Vec<anytime::Curve> = rows
        .iter()
        .map(|r| anytime::Curve {
            strategy: &r.strategy,
            per_cache: r
                .anytime
                .iter()
                .map(|(stem, s)| (stem.as_str(), s.clone()))
                .collect(),
        })
        .collect();
    table += "\n";
    table += &anytime::markdown(&anytime_checkpoints.unwrap_or_default(), &curves);
    if args.loko {
        let ours: Vec<loko::Scores> = rows
            .iter()
            .filter(|r| r.seconds_per_run.is_some())
            .map(|r| loko::Scores {
                strategy: &r.strategy,
                per_cache: r.per_cache.iter().map(|c| (c.0.as_str(), c.1)).collect(),
            })
            .collect();
        table += "\n";
        table += &loko::markdown(loko::select(&ours).as_ref());
    }
    if let Some(v) = versus {
        table += "\n";
        table += &versus_table(&stems, &specs, &bests, v);
    }
    table += &format!(
        "\n{} strategies on {} objectives, {} runs each, in {:.1} s on {jobs} threads.\n",
        specs.len(),
        stems.len(),
        args.repeats,
        started.elapsed().as_secs_f64()
    );
    table += &format!("Plots: {}.\n", plots.join(", "));
    if let Some(model) = args.cost_model {
        let cost = crate::cost::markdown(model, &costs);
        std::fs::write(args.out.join("cost.md"), &cost)?;
        std::fs::write(
            args.out.join("cost.json"),
            serde_json::to_string_pretty(&costs)?,
        )?;
        table += &cost;
    }
    println!("{table}");
    std::fs::write(args.out.join("scores.md"), &table)?;
    std::fs::write(
        args.out.join("scores.json"),
        serde_json::to_string_pretty(&rows)?,
    )?;
    Ok(())
}

/// The mean score and standard error of `runs` at each anytime checkpoint (`NaN` where the score
/// is undefined).
fn anytime_scores(
    at: &[(usize, Option<ScoreContext>)],
    runs: &[Vec<Option<f64>>],
) -> Vec<(f64, f64)> {
    at.iter()
        .map(|(_, c)| {
            c.as_ref()
                .map_or((f64::NAN, f64::NAN), |c| c.score_runs(runs))
        })
        .collect()
}

/// The share of a strategy's evaluations that hit failing configurations, over all runs.
fn failed_share(runs: &[Vec<Option<f64>>]) -> f64 {
    let total: usize = runs.iter().map(Vec::len).sum();
    let failed: usize = runs.iter().flatten().filter(|v| v.is_none()).count();
    failed as f64 / total.max(1) as f64
}

/// The percentage of evaluations spent on failing configurations, for the caches where some
/// strategy hit any (empty when none did).
fn failed_table(stems: &[String], rows: &[Row]) -> String {
    let share = |r: &Row, stem: &str| {
        r.failed
            .iter()
            .find(|f| f.0 == stem)
            .map(|f| f.1)
            .unwrap_or(0.0)
    };
    let cols: Vec<&String> = stems
        .iter()
        .filter(|s| rows.iter().any(|r| share(r, s) > 0.0))
        .collect();
    if cols.is_empty() {
        return String::new();
    }
    let mut t = String::from("\nEvaluations spent on failing configurations (%):\n\n| strategy |");
    cols.iter().for_each(|c| t += &format!(" {c} |"));
    t += "\n|---|";
    t += &"---|".repeat(cols.len());
    t += "\n";
    for r in rows {
        t += &format!("| {} |", r.strategy);
        cols.iter()
            .for_each(|c| t += &format!(" {:.1} |", 100.0 * share(r, c)));
        t += "\n";
    }
    t
}

/// The replay of one cache over the space the arguments select for it, and the cache's timing
/// noise.
fn replay_for(
    cache_path: &Path,
    stem: &str,
    args: &BenchArgs,
) -> Result<(Replay, Option<f64>), Box<dyn std::error::Error>> {
    let cache = KernelTunerCache::load(cache_path)?;
    let space = args.spaces.space_for(stem, &cache)?;
    Ok((Replay::new(&cache, space)?, gap::timing_noise(&cache)))
}

/// The values of objective `field` per position of `replay`'s space: for a cache, the field
/// of its records (the product of `A*B`'s fields); for a stress landscape, `time` or `energy`.
fn objective_values(
    source: &Source<'_>,
    landscape: Option<&Landscape>,
    replay: &Replay,
    field: &str,
    args: &BenchArgs,
) -> Result<Vec<Option<f64>>, Box<dyn std::error::Error>> {
    match source {
        Source::Cache(path) => {
            let stem = source.stem();
            let mut out: Option<Vec<Option<f64>>> = None;
            for factor in field.split('*').map(str::trim) {
                let cache = KernelTunerCache::load_field(path, factor)?;
                if cache.entries.iter().all(|e| e.observation.is_failed()) {
                    return Err(format!("{stem}: no record has a numeric '{factor}'").into());
                }
                let space = args.spaces.space_for(&stem, &cache)?;
                let values = Replay::new(&cache, space)?.values().to_vec();
                if values.len() != replay.values().len() {
                    return Err(format!("{stem}: '{factor}' is over another space").into());
                }
                out = Some(match out {
                    None => values,
                    Some(acc) => acc
                        .iter()
                        .zip(&values)
                        .map(|(a, b)| Some((*a)? * (*b)?))
                        .collect(),
                });
            }
            out.ok_or_else(|| format!("empty objective '{field}'").into())
        }
        Source::Stress(spec) => landscape
            .and_then(|l| l.objective(field))
            .map(<[Option<f64>]>::to_vec)
            .ok_or_else(|| {
                format!("{spec}: no objective '{field}' (time; energy on tile_clock)").into()
            }),
        Source::Synthetic(f) => Err(format!("{}: only its own objective", f.name()).into()),
    }
}

/// `values` as a minimized objective: negated if `maximize`.
fn sense(values: Vec<Option<f64>>, maximize: bool) -> Vec<Option<f64>> {
    let sense = if maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    values
        .into_iter()
        .map(|v| v.map(|v| sense.key(v)))
        .collect()
}

/// One run: the true value of each configuration evaluated, the seconds spent in the strategy,
/// and the positions evaluated.
type Run = (Vec<Option<f64>>, f64, Vec<usize>);

/// Runs `repeats` seeded runs of one strategy on `jobs` threads; results in repeat order. A run
/// records the true value of each configuration it evaluated; on a generated landscape with
/// noise the strategy is told the noisy measurement (repeat `i`'s noise is fixed by its seed).
/// With `multi` (the second objective's values per position, and the number of objectives) the
/// spec is a multi-objective strategy, told both objectives. `minimized` says whether the
/// single objective is time ([`strategy::build_for`]).
#[allow(clippy::too_many_arguments)]
fn run_repeats(
    replay: &Replay,
    landscape: Option<&Landscape>,
    spec: &StrategySpec,
    args: &BenchArgs,
    jobs: usize,
    bar: &ProgressBar,
    first: &[usize],
    multi: Option<(&[Option<f64>], usize)>,
    minimized: Minimized,
) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Run>> = vec![None; args.repeats];
    let objective = |p: usize, seed: u64| match landscape {
        Some(land) => land
            .measure(p, seed)
            .map_or(Outcome::Failed, Outcome::Value),
        None => match replay.evaluate(p) {
            Some(Observation::Value(v)) => Outcome::Value(*v),
            _ => Outcome::Failed,
        },
    };
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.min(args.repeats.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= args.repeats {
                            break;
                        }
                        let seed = args.seed.wrapping_add(i as u64);
                        let (positions, seconds): (Vec<usize>, f64) = match multi {
                            Some((second, k)) => {
                                let mut strat = build_multi(spec, replay.shared_space(), k, seed)
                                    .expect("validated spec");
                                front::drive(strat.as_mut(), args.budget, args.batch, first, |p| {
                                    let t = objective(p, seed).value()?;
                                    Some(vec![t, second[p]?])
                                })
                            }
                            None => {
                                let mut strat = strategy::build_for(
                                    spec,
                                    replay.shared_space(),
                                    seed,
                                    minimized,
                                )
                                .expect("validated spec");
                                let rec = crate::warm::drive_from(
                                    strat.as_mut(),
                                    args.budget,
                                    args.batch,
                                    first,
                                    |p| objective(p, seed),
                                );
                                let positions = rec.trials.iter().map(|t| t.position).collect();
                                (positions, rec.strategy_seconds)
                            }
                        };
                        let values = positions.iter().map(|&p| replay.values()[p]).collect();
                        mine.push((i, (values, seconds, positions)));
                        bar.inc(1);
                    }
                    mine
                })
            })
            .collect();
        for w in workers {
            for (i, r) in w.join().expect("bench worker panicked") {
                results[i] = Some(r);
            }
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every repeat ran"))
        .collect()
}

/// A peer's runs: its strategy label and, per run, the objective of each evaluation in order.
type PeerRuns = (String, Vec<Vec<Option<f64>>>);

/// Reads every runs file in `dir` (missing folder: none).
fn read_peer(dir: &Path) -> Result<Vec<PeerRuns>, Box<dyn std::error::Error>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(vec![]);
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(base) = name
            .strip_suffix(".json.gz")
            .or_else(|| name.strip_suffix(".json"))
        else {
            continue;
        };
        let mut text = String::new();
        let file = std::fs::File::open(&path)?;
        if name.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_string(&mut text)?;
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text)?;
        }
        let runs: RunsFile =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push((base.to_owned(), runs.runs));
    }
    Ok(out)
}

/// Run-by-run comparison with strategy `v`: per source and strategy, the share of runs (same
/// seed) whose best is at least as good as `v`'s, and strictly better.
fn versus_table(
    stems: &[String],
    specs: &[StrategySpec],
    bests: &[Vec<Vec<f64>>],
    v: usize,
) -> String {
    let mut t = format!(
        "Run by run against {} (same seeds): share of runs with a best at least as good (equal) and strictly better (strict):\n\n| strategy | {} |\n|---|{}\n",
        specs[v],
        stems
            .iter()
            .map(|s| format!("{s} (equal) | {s} (strict)"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|---|".repeat(stems.len())
    );
    for (i, spec) in specs.iter().enumerate().filter(|(i, _)| *i != v) {
        let cells: Vec<String> = bests
            .iter()
            .map(|per_spec| {
                let (mine, theirs) = (&per_spec[i], &per_spec[v]);
                let n = mine.len().max(1) as f64;
                let equal = mine.iter().zip(theirs).filter(|(a, b)| a <= b).count() as f64;
                let strict = mine.iter().zip(theirs).filter(|(a, b)| a < b).count() as f64;
                format!("{:.0}% | {:.0}%", 100.0 * equal / n, 100.0 * strict / n)
            })
            .collect();
        t += &format!("| {spec} | {} |\n", cells.join(" | "));
    }
    t
}

fn markdown_table(stems: &[String], rows: &[Row], args: &BenchArgs) -> String {
    let window = match args.score {
        ScoreKind::KernelTuner => {
            "cut-off score: window up to 95% of random search's way to the optimum"
        }
        ScoreKind::Window => "fixed window",
    };
    let mut t = format!(
        "Scores (methodology score, {window}, 0 = random search, 1 = optimum at once; mean over {} runs, budget {}, seed {}):\n\n",
        args.repeats, args.budget, args.seed
    );
    t += &format!(
        "| strategy | {} | mean ± se | worst cache | strategy s/run |\n",
        stems.join(" | ")
    );
    t += &format!("|---|{}---|---|---|\n", "---|".repeat(stems.len()));
    for r in rows {
        let cells: Vec<String> = r
            .per_cache
            .iter()
            .map(|c| format!("{:.3} ± {:.3}", c.1, c.2))
            .collect();
        let secs = r
            .seconds_per_run
            .map_or("-".to_owned(), |s| format!("{s:.4}"));
        let worst = r
            .per_cache
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("-".to_owned(), |c| format!("{:.3} ({})", c.1, c.0));
        t += &format!(
            "| {} | {} | **{:.3}** ± {:.3} | {worst} | {} |\n",
            r.strategy,
            cells.join(" | "),
            r.mean,
            r.stderr,
            secs
        );
    }
    t
}
