//! Counts the local optima of run time under adjacent moves and under diagonal ones (the moves of
//! `ils:neighbour=adjacent` and `ils:neighbour=diagonal`), and the share of valid configurations
//! from which steepest descent ends at the optimum:
//! `cargo run --release --example local_optima -- CACHE.json.gz ... tile_clock`.
//! Each argument is a Kernel Tuner cache or a list of stress landscapes (`--stress`'s syntax).

use tunable_search::sim::stress::{Landscape, suite};
use tunable_search::sim::{KernelTunerCache, Replay};
use tunable_search::strategy::{Neighbour, neighbours};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "| landscape | valid | adjacent: optima | best's basin | diagonal: optima | best's basin |"
    );
    println!("|---|---|---|---|---|---|");
    for arg in std::env::args().skip(1) {
        if arg.ends_with(".json") || arg.ends_with(".json.gz") {
            let replay = Replay::new(&KernelTunerCache::load(&arg)?, None)?;
            let name = arg.rsplit('/').next().unwrap_or(&arg);
            report(name.split('.').next().unwrap_or(name), &replay);
        } else {
            for spec in suite(&arg)? {
                let land = Landscape::build(&spec)?;
                report(&land.name(), land.replay());
            }
        }
    }
    Ok(())
}

/// One row of the table for `replay`'s run times.
fn report(name: &str, replay: &Replay) {
    let space = replay.space();
    let values = replay.values();
    let cost = |p: usize| values[p].unwrap_or(f64::INFINITY);
    let valid: Vec<usize> = (0..space.len()).filter(|&p| values[p].is_some()).collect();
    let Some(best) = valid
        .iter()
        .copied()
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
    else {
        return;
    };
    let mut row = format!("| {name} | {} |", valid.len());
    for rule in [Neighbour::Adjacent, Neighbour::Diagonal] {
        // Steepest descent from every configuration: where each one's next step leads.
        let next: Vec<usize> = (0..space.len())
            .map(|p| {
                neighbours(space, &space.indices(p), rule)
                    .into_iter()
                    .filter(|&q| cost(q) < cost(p))
                    .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
                    .unwrap_or(p)
            })
            .collect();
        let optima = valid.iter().filter(|&&p| next[p] == p).count();
        let basin = valid
            .iter()
            .filter(|&&p| {
                let mut p = p;
                while next[p] != p {
                    p = next[p];
                }
                p == best
            })
            .count();
        row += &format!(
            " {optima} | {:.0}% |",
            100.0 * basin as f64 / valid.len() as f64
        );
    }
    println!("{row}");
}
