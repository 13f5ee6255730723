//! Counts the local optima of run time under one-parameter (adjacent) moves and under adjacent
//! plus diagonal moves (two parameters one value each, clocks excepted), as local search makes
//! them, and the share of valid configurations from which steepest descent ends at the optimum:
//! `cargo run --release --example local_optima -- CACHE.json.gz ... tile_clock`.
//! Each argument is a Kernel Tuner cache or a list of stress landscapes (`--stress`'s syntax).

use tunable_search::clock::Knob;
use tunable_search::sim::stress::{Landscape, suite};
use tunable_search::sim::{KernelTunerCache, Replay};

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
    let sizes: Vec<u16> = space
        .params()
        .iter()
        .map(|p| p.values().len() as u16)
        .collect();
    let paired: Vec<usize> = (0..sizes.len())
        .filter(|&p| Knob::of_name(space.params()[p].name()).is_none())
        .collect();
    let cost = |p: usize| values[p].unwrap_or(f64::INFINITY);
    let neighbours = |pos: usize, diagonal: bool| {
        let g = space.indices(pos);
        let mut out = Vec::new();
        for p in 0..sizes.len() {
            let mut c = g.clone();
            for down in [true, false] {
                let mut j = i32::from(g[p]);
                loop {
                    j += if down { -1 } else { 1 };
                    if j < 0 || j >= i32::from(sizes[p]) {
                        break;
                    }
                    c[p] = j as u16;
                    if let Some(q) = space.position(&c) {
                        out.push(q);
                        break;
                    }
                }
            }
        }
        if diagonal {
            for (i, &p) in paired.iter().enumerate() {
                for &q in &paired[i + 1..] {
                    for (a, b) in [(-1, -1), (-1, 1), (1, -1), (1, 1)] {
                        let (x, y) = (i32::from(g[p]) + a, i32::from(g[q]) + b);
                        if x < 0 || y < 0 || x >= i32::from(sizes[p]) || y >= i32::from(sizes[q]) {
                            continue;
                        }
                        let mut c = g.clone();
                        c[p] = x as u16;
                        c[q] = y as u16;
                        out.extend(space.position(&c));
                    }
                }
            }
        }
        out
    };
    let valid: Vec<usize> = (0..space.len()).filter(|&p| values[p].is_some()).collect();
    let Some(best) = valid
        .iter()
        .copied()
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
    else {
        return;
    };
    let mut row = format!("| {name} | {} |", valid.len());
    for diagonal in [false, true] {
        // Steepest descent from every valid configuration: where each one's next step leads.
        let next: Vec<usize> = (0..space.len())
            .map(|p| {
                neighbours(p, diagonal)
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
