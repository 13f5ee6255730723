//! # `cargo tunable transfer`
//!
//! How well do configurations tuned on some devices serve a device nobody tuned on? Given the
//! brute-forced caches of one kernel on several devices, `transfer` holds out each device in turn
//! (the *target*), and measures, as a fraction of the target's optimum:
//! - **single**: each other device's winner run as is on the target (what a binary that ships
//!   one device's tuned entry runs elsewhere);
//! - **portable**: the one configuration with the best geometric mean of the fraction of each
//!   other device's optimum (`portable_set` with k = 1);
//! - **set**: the fastest on the target of the `k` configurations [`portable_set`] picks from the
//!   other devices, i.e. what a shipped binary gets by timing that set once on first use;
//! - **ceiling**: the best on the target of all the other devices' stored configurations, the
//!   most any set chosen from the tuned file could reach, however large.
//!
//! ```text
//! cargo tunable transfer --cache FILE --cache FILE ... [--space F | --t1 F | --spaces-dir DIR] [--k 4] [--json]
//! ```
//!
//! The portable configurations are chosen exactly as a build chooses them from a tuned file
//! ([`Candidates::from_device_bests`], [`portable_set`]): from each other device's `--stored`
//! best configurations (what the tuned file keeps, 16), not from its whole cache.
//!
//! Configurations are matched across caches by parameter name and value. A cache whose kernel
//! had fewer parameters (an older version without a switch) is matched on the parameters it has.
//! Configurations (and each device's winner) are taken among those measured on every given
//! cache, so every fraction is known; a partial cache (an interrupted run) therefore narrows
//! them, and the output says how many there are. Each device's optimum is over its whole space.
//! With
//! `--json`, one line per target and a final line
//! `{"summary": true, "single_mean": f, "single_min": f, "portable_mean": f, "portable_min": f,
//! "set_mean": f, "set_min": f, "ceiling_mean": f, "ceiling_min": f}`; the single figures are over every (target, other device) pair.

use crate::caches::{SpaceArgs, stem_of};
use clap::Args;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tunable_search::portable::{Candidates, HEDGE, KEPT, portable_set};
use tunable_search::sim::{KernelTunerCache, Replay};

/// Arguments of `transfer`.
#[derive(Args)]
pub(crate) struct TransferArgs {
    /// A Kernel Tuner cache of the kernel on one device (`.json` or `.json.gz`); two or more.
    #[arg(long = "cache", required = true, num_args = 1)]
    caches: Vec<PathBuf>,
    /// Where the space of each cache comes from.
    #[command(flatten)]
    spaces: SpaceArgs,
    /// Configurations in the re-timed portable set.
    #[arg(long, default_value_t = 4)]
    k: usize,
    /// Best configurations known of each device (what the tuned file keeps).
    #[arg(long, default_value_t = KEPT)]
    stored: usize,
    /// Hedging factor of the portable set (1 = cover only).
    #[arg(long, default_value_t = HEDGE)]
    hedge: f64,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    json: bool,
}

/// A configuration: its values in the order of the sorted parameter names.
type Config = Vec<String>;

/// One device's measurements.
struct Device {
    name: String,
    /// Its parameter names, sorted.
    params: Vec<String>,
    /// Time of each configuration of its space, `None` where it failed.
    times: HashMap<Config, Option<f64>>,
    /// Its best time over the whole space.
    optimum: f64,
}

impl Device {
    /// Its time for `config` (given over `names`): matched on its own parameters.
    fn time(&self, names: &[String], config: &[String]) -> Option<Option<f64>> {
        let own: Config = names
            .iter()
            .zip(config)
            .filter(|(n, _)| self.params.contains(n))
            .map(|(_, v)| v.clone())
            .collect();
        self.times.get(&own).copied()
    }

    /// The fraction of its optimum `config` reaches (0 where it failed).
    fn fraction(&self, names: &[String], config: &[String]) -> f64 {
        match self.time(names, config) {
            Some(Some(t)) if t > 0.0 => (self.optimum / t).min(1.0),
            _ => 0.0,
        }
    }
}

/// What one held-out target gets.
struct Outcome {
    target: String,
    singles: Vec<(String, f64)>,
    portable: f64,
    set: f64,
    set_configs: Vec<String>,
    ceiling: f64,
}

pub(crate) fn run(args: TransferArgs) -> Result<(), Box<dyn std::error::Error>> {
    if args.caches.len() < 2 {
        return Err("transfer needs the caches of at least two devices".into());
    }
    if args.k == 0 || args.stored == 0 {
        return Err("--k and --stored must be at least 1".into());
    }
    if !(args.hedge > 0.0 && args.hedge <= 1.0) {
        return Err(format!("--hedge {} is not in (0, 1]", args.hedge).into());
    }
    let devices = args
        .caches
        .iter()
        .map(|path| load_device(path, &args.spaces))
        .collect::<Result<Vec<_>, _>>()?;
    let (names, configs) = common_configs(&devices)?;
    let outcomes: Vec<Outcome> = (0..devices.len())
        .map(|t| hold_out(&devices, &names, &configs, t, &args))
        .collect();
    if args.json {
        print_json(&outcomes);
    } else {
        print_table(&outcomes, configs.len(), &args);
    }
    Ok(())
}

/// Reads one cache into its device's measurements.
fn load_device(path: &Path, spaces: &SpaceArgs) -> Result<Device, Box<dyn std::error::Error>> {
    let name = stem_of(path);
    let cache = KernelTunerCache::load(path)?;
    let replay = Replay::new(&cache, spaces.space_for(&name, &cache)?)?;
    let space = replay.space();
    let mut order: Vec<(usize, String)> = space
        .params()
        .iter()
        .enumerate()
        .map(|(i, p)| (i, p.name().to_owned()))
        .collect();
    order.sort_by(|a, b| a.1.cmp(&b.1));
    let times = (0..space.len())
        .map(|pos| {
            let values = space.values(pos);
            let config = order.iter().map(|(i, _)| values[*i].to_string()).collect();
            (config, replay.values()[pos])
        })
        .collect();
    let optimum = replay
        .optimum()
        .map(|(_, t)| t)
        .ok_or_else(|| format!("{}: every configuration failed", path.display()))?;
    Ok(Device {
        name,
        params: order.into_iter().map(|(_, n)| n).collect(),
        times,
        optimum,
    })
}

/// The parameter names of the richest cache and the configurations (over those names, sorted)
/// measured on every device; an error if a cache has a parameter the richest lacks or the caches
/// share no configuration.
fn common_configs(
    devices: &[Device],
) -> Result<(Vec<String>, Vec<Config>), Box<dyn std::error::Error>> {
    let richest = devices
        .iter()
        .max_by_key(|d| d.params.len())
        .expect("at least two devices");
    for d in devices {
        if let Some(p) = d.params.iter().find(|p| !richest.params.contains(p)) {
            return Err(format!(
                "{} has parameter {p}, which {} lacks: give the caches of one kernel",
                d.name, richest.name
            )
            .into());
        }
    }
    let names = richest.params.clone();
    let mut common: Vec<Config> = richest
        .times
        .keys()
        .filter(|c| devices.iter().all(|d| d.time(&names, c).is_some()))
        .cloned()
        .collect();
    common.sort();
    if common.is_empty() {
        return Err("the caches share no configuration".into());
    }
    Ok((names, common))
}

/// Holds out device `t`: chooses from the others' best configurations, scores on `t`.
fn hold_out(
    devices: &[Device],
    names: &[String],
    configs: &[Config],
    t: usize,
    args: &TransferArgs,
) -> Outcome {
    let target = &devices[t];
    let sources = devices.iter().enumerate().filter(|&(i, _)| i != t);
    let mut singles = Vec::new();
    let mut bests: Vec<Vec<(Config, f64)>> = Vec::new();
    for (_, s) in sources {
        // What a tuned file keeps of this device: its fastest configurations.
        let mut timed: Vec<(&Config, f64)> = configs
            .iter()
            .filter_map(|c| s.time(names, c).flatten().map(|t| (c, t)))
            .collect();
        timed.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        timed.truncate(args.stored);
        if let Some((winner, _)) = timed.first() {
            singles.push((s.name.clone(), target.fraction(names, winner)));
        }
        bests.push(timed.into_iter().map(|(c, t)| (c.clone(), t)).collect());
    }
    let candidates = Candidates::from_device_bests(&bests);
    let on_target = |set: &[usize]| {
        set.iter()
            .map(|&i| target.fraction(names, candidates.config(i)))
            .fold(0.0, f64::max)
    };
    let portable = portable_set(&candidates, 1, 1.0);
    let set = portable_set(&candidates, args.k, args.hedge);
    let describe = |c: &[String]| {
        names
            .iter()
            .zip(c)
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Outcome {
        target: target.name.clone(),
        singles,
        portable: on_target(&portable),
        set: on_target(&set),
        ceiling: on_target(&(0..candidates.len()).collect::<Vec<_>>()),
        set_configs: set
            .iter()
            .map(|&i| describe(candidates.config(i)))
            .collect(),
    }
}
/// Mean and minimum.
fn mean_min(xs: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let xs: Vec<f64> = xs.into_iter().collect();
    let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    (mean, xs.iter().copied().fold(f64::INFINITY, f64::min))
}

fn summary(outcomes: &[Outcome]) -> [(f64, f64); 4] {
    [
        mean_min(
            outcomes
                .iter()
                .flat_map(|o| o.singles.iter().map(|(_, f)| *f)),
        ),
        mean_min(outcomes.iter().map(|o| o.portable)),
        mean_min(outcomes.iter().map(|o| o.set)),
        mean_min(outcomes.iter().map(|o| o.ceiling)),
    ]
}

fn print_json(outcomes: &[Outcome]) {
    for o in outcomes {
        let singles: BTreeMap<&str, f64> =
            o.singles.iter().map(|(n, f)| (n.as_str(), *f)).collect();
        println!(
            "{}",
            json!({"target": o.target, "singles": singles, "portable": o.portable,
                   "set": o.set, "set_configs": o.set_configs, "ceiling": o.ceiling})
        );
    }
    let [(sm, sn), (pm, pn), (tm, tn), (cm, cn)] = summary(outcomes);
    println!(
        "{}",
        json!({"summary": true, "single_mean": sm, "single_min": sn, "portable_mean": pm,
               "portable_min": pn, "set_mean": tm, "set_min": tn, "ceiling_mean": cm,
               "ceiling_min": cn})
    );
}

fn print_table(outcomes: &[Outcome], candidates: usize, args: &TransferArgs) {
    let k = args.k;
    println!(
        "Leave one device out: fraction of the target's optimum ({candidates} configurations measured on every device; {} kept per device, hedge {})\n",
        args.stored, args.hedge
    );
    println!(
        "| target | other devices' winners (min / mean) | portable (1) | set of {k}, re-timed | ceiling (all stored) |"
    );
    println!("|---|---|---|---|---|");
    for o in outcomes {
        let (m, n) = mean_min(o.singles.iter().map(|(_, f)| *f));
        println!(
            "| {} | {:.1}% / {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
            o.target,
            100.0 * n,
            100.0 * m,
            100.0 * o.portable,
            100.0 * o.set,
            100.0 * o.ceiling
        );
    }
    let [(sm, sn), (pm, pn), (tm, tn), (cm, cn)] = summary(outcomes);
    println!(
        "| **all** (min / mean) | {:.1}% / {:.1}% | {:.1}% / {:.1}% | {:.1}% / {:.1}% | {:.1}% / {:.1}% |",
        100.0 * sn,
        100.0 * sm,
        100.0 * pn,
        100.0 * pm,
        100.0 * tn,
        100.0 * tm,
        100.0 * cn,
        100.0 * cm
    );
}
