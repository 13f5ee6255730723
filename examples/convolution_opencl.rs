//! A 2D convolution in OpenCL (`convolution_opencl.cl`, after Kernel Tuner's convolution
//! example) with tunable block and tile sizes and local-memory and padding switches.
//!
//! ```text
//! cargo run --release --example convolution_opencl --features opencl,autotune                  # tune, report
//! cargo run --release --example convolution_opencl --features opencl,autotune -- --exhaustive  # and time every configuration
//! cargo run --release --example convolution_opencl --features opencl,autotune -- --against 8,1,4,4,1,1  # compare with one
//! ```
//!
//! The launch follows Kernel Tuner's convention: the work-group is
//! (`block_size_x`, `block_size_y`) and the grid divides the image by the output tile of a
//! work-group, (`block_size_x * tile_size_x`, `block_size_y * tile_size_y`). Every variant's
//! output is checked against the default configuration's while tuning, and the tuned result
//! against a CPU reference. `--n N` sets the image size (default 1024). Every time it prints
//! (default, tuned, the sweep's, `--against`'s) is timed alike, interleaved where two are
//! compared (`tunable::compare`).

#![allow(unsafe_code)]

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;
use support::{Args, compare, or_exit, tuned_from};
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::compare::{METHOD, ROUNDS, speedup};
use tunable::{Params, tunable};

/// The filter is 7 x 7.
const F: usize = 7;

static CONVOLUTION: Source = Source::new("convolution", include_str!("convolution_opencl.cl"))
    .with_options(&["-DFW=7", "-DFH=7"]);

#[tunable(
    block_size_x = [8, 16, 32, 64],
    block_size_y = [1, 2, 4, 8, 16],
    tile_size_x = [1, 2, 4],
    tile_size_y = [1, 2, 4],
    use_local = [0, 1],
    use_padding = [0, 1],
    constraint = "block_size_x * block_size_y <= 256",
    // Padding only changes the local-memory layout.
    constraint = "use_local == 1 or use_padding == 0",
    // The staged tile with its 6-pixel halo fits in 32 KiB of local memory.
    constraint = "use_local == 0 or (block_size_y * tile_size_y + 6) * (block_size_x * tile_size_x + 6 + use_padding) * 4 <= 32768",
    device = cl.device_id(),
    key = tunable::key::next_power_of_two((w * h) as u64),
    verify = output,
    tolerance = 1e-4,
    budget = 60,
    repeats = 5,
    default = (block_size_x = 16, block_size_y = 16, tile_size_x = 1, tile_size_y = 1, use_local = 0, use_padding = 0),
)]
/// Correlates the `(w + 6) x (h + 6)` `input` with the 7 x 7 `filter` into the `w x h` `output`.
pub fn convolution_opencl(
    cl: &OpenCl,
    output: &mut Buffer<f32>,
    input: &Buffer<f32>,
    filter: &Buffer<f32>,
    w: usize,
    h: usize,
) -> Result<(), OpenClError> {
    let dims = Dims::divide(
        [w, h],
        [block_size_x, block_size_y],
        [block_size_x * tile_size_x, block_size_y * tile_size_y],
    );
    let (w, h) = (w as i32, h as i32);
    // SAFETY: convolution(float*, const float*, constant float*, int W, int H); the kernel checks
    // every index against W and H and the input's (W + 6) x (H + 6).
    unsafe {
        cl.kernel(&CONVOLUTION, params)?
            .launch(dims)
            .arg(output)
            .arg(input)
            .arg(filter)
            .arg(&w)
            .arg(&h)
            .run()
    }
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 1024);
    let cl = or_exit("convolution_opencl", OpenCl::new());
    println!("device: {}", cl.device_id());
    let (w, h) = (n, n);
    let (iw, ih) = (w + F - 1, h + F - 1);
    let hin: Vec<f32> = (0..iw * ih)
        .map(|i| ((i * 7919) % 251) as f32 / 125.0 - 1.0)
        .collect();
    let hfilter: Vec<f32> = (0..F * F).map(|i| ((i * 13) % 7) as f32 / 49.0).collect();
    let input = cl.upload(&hin).expect("upload");
    let filter = cl.upload(&hfilter).expect("upload");
    let mut output = cl.alloc::<f32>(w * h).expect("alloc");

    let space = convolution_opencl_space();
    println!(
        "convolution_opencl {w} x {h}, 7 x 7 filter: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    let default = ConvolutionOpenclParams::default();

    let start = Instant::now();
    convolution_opencl(&cl, &mut output, &input, &filter, w, h).expect("the tuned call runs");
    let first_call = start.elapsed().as_secs_f64();
    let got = output.read().expect("read back");
    let mut worst = 0.0f32;
    for y in 0..h {
        for x in 0..w {
            let mut s = 0.0f32;
            for fy in 0..F {
                for fx in 0..F {
                    s += hin[(y + fy) * iw + x + fx] * hfilter[fy * F + fx];
                }
            }
            worst = worst.max((got[y * w + x] - s).abs() / s.abs().max(1.0));
        }
    }
    assert!(worst <= 1e-4, "wrong result: relative error {worst}");
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function (`compare::speedup`): same warm-up, same program cache, same rounds, same
    // statistic.
    let ran = convolution_opencl_config(&cl, &mut output, &input, &filter, w, h).params;
    let mut run = |p: &ConvolutionOpenclParams| {
        convolution_opencl_with(p, &cl, &mut output, &input, &filter, w, h)
    };
    let s = speedup(&default, &ran, ROUNDS, &mut run).expect("both configurations run");
    let t_tuned = s.tuned.ms;
    let key = tunable::key::next_power_of_two((w * h) as u64);
    println!("  first call (tunes with --features autotune): {first_call:.1} s");
    println!("  default {default:?}: {:.3} ms", s.default.ms);
    println!(
        "  tuned {}: {t_tuned:.3} ms, speedup {:.2}x over the default ({})",
        ran.describe(),
        s.ratio(),
        tuned_from("convolution_opencl", cl.device_id(), key)
    );
    println!("  ({METHOD}; {ROUNDS} rounds, OpenCL events)");
    println!("  result matches the CPU reference (max relative error {worst:.1e})");

    // `--exhaustive` or `--against`: the tuned configuration beside the best of a sweep or a
    // named one.
    compare(&args, space, ran, &mut run);
}
