//! Prints the statistics of stress landscapes: `cargo run --release --example stress_stats -- default`.

use tunable_search::sim::stress::{Landscape, Stats, suite};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let list = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "default".to_owned());
    println!(
        "| landscape | size | dims | failed | median/opt | p10/opt | within 5% | within 1% | random to 95% | noise | build s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in suite(&list)? {
        let t = std::time::Instant::now();
        let land = Landscape::build(&spec)?;
        let secs = t.elapsed().as_secs_f64();
        let s = Stats::of(&land);
        println!(
            "| {} | {} | {} | {:.0}% | {:.2} | {:.2} | {:.1}% | {:.1}% | {} | {:.1}% | {secs:.2} |",
            land.name(),
            s.size,
            s.dims,
            100.0 * s.failed,
            s.median_ratio,
            s.p10_ratio,
            100.0 * s.within_5pct,
            100.0 * s.within_1pct,
            s.random_95,
            100.0 * land.noise(),
        );
    }
    Ok(())
}
