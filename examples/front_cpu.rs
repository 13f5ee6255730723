//! A kernel tuned for two objectives at once: its time, and the cores it occupies.
//!
//! ```text
//! cargo run --release --example front_cpu --features autotune   # tune (first call), report
//! cargo tunable show                                            # the front, the shipped point marked
//! cargo run --release --example front_cpu                       # shipped build: the chosen point
//! ```
//!
//! More threads finish sooner until the cores run out, and occupy more of a machine that has
//! other work to do. `cores = threads` is a metric of the kernel's own (it needs no energy
//! meter, so the example tunes anywhere); the tuning keeps the Pareto front of time and cores,
//! and `prefer` ships the configuration with the fewest threads among those at most 10% slower
//! than the fastest. With `energy` among the objectives instead, the same tuning reads RAPL where
//! it is readable (see the guide's chapter "Energy and several objectives").

use std::hint::black_box;
use std::time::Instant;
use tunable::tunable;

/// The sum of squares of `x`, over `threads` threads, `chunk` elements at a time.
#[tunable(
    threads = [1, 2, 4, 8],
    chunk = [256, 4096],
    key = tunable::key::next_power_of_two(x.len() as u64),
    metric = "cores = threads",
    objectives = ["time", "min cores"],
    prefer = "least_cores within 1.10 of fastest",
    budget = 8,
)]
fn sum_squares(x: &[f64]) -> f64 {
    let part = x.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = x
            .chunks(part)
            .map(|p| {
                s.spawn(move || {
                    p.chunks(chunk)
                        .map(|c| c.iter().map(|v| v * v).sum::<f64>())
                        .sum::<f64>()
                })
            })
            .collect();
        parts
            .into_iter()
            .map(|h| h.join().expect("a part panicked"))
            .sum()
    })
}

fn main() {
    let x: Vec<f64> = (0..1 << 21).map(|i| (i % 7) as f64).collect();
    let start = Instant::now();
    let total = sum_squares(black_box(&x));
    println!(
        "sum of squares {total} in {:.1} ms (the first call tunes with --features autotune)",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    black_box(sum_squares(black_box(&x)));
    println!("next call {:.2} ms", start.elapsed().as_secs_f64() * 1e3);
}
