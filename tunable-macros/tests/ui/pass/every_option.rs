use tunable::tunable;

#[tunable(
    block = [16, 32, 64],
    tile = 1..=4,
    scale = [0.5, 1.0],
    mode = ["fast", "safe"],
    fused = [true, false],
    constraint = "block * tile <= 128",
    constraint = "mode == 'fast' or not fused",
    key = tunable::key::next_power_of_two(n as u64),
    budget = 10,
    strategy = "random",
    seed = 7,
    objective = "edp",
    repeats = 2,
    warmup = 0,
    default = (block = 32, tile = 2, scale = 1.0, mode = "safe", fused = false),
    name = "every_option_kernel",
)]
fn kernel(n: usize, out: &mut Vec<f64>) -> Result<usize, String> {
    out.push(scale * (block * tile) as f64);
    if mode == "fast" && fused { Ok(n) } else { Ok(n + 1) }
}

/// Two objectives and a metric of the user's, the front's point chosen by a rule.
#[tunable(
    tile = [1, 2, 4],
    key = n as u64,
    metric = "gflops_per_watt = 2 * key**3 / energy / 1e9",
    metric = "per_tile = time / tile",
    objectives = ["time", "max gflops_per_watt"],
    prefer = "most_gflops_per_watt within 1.10 of fastest",
)]
fn several(n: usize) -> usize {
    n * tile
}

/// One metric, minimized.
#[tunable(tile = [1, 2], metric = "per_tile = time / tile", objective = "min per_tile")]
fn metric_alone(n: usize) -> usize {
    n + tile
}

/// Checked while tuning against an answer, on a named device.
#[tunable(block = [1, 2, 4], device = device_name, verify = out, answer = expected, tolerance = 1e-6)]
fn checked(device_name: &str, out: &mut Vec<f32>, expected: &[f32]) {
    assert!(!device_name.is_empty());
    out.clear();
    out.extend(expected.iter().map(|x| x * block as f32 / block as f32));
}

/// Checked against the default configuration's output (the reference variant), on a device whose
/// identity is computed.
#[tunable(block = [1, 2], device = format!("cpu-{}", 1 + 1), verify = out)]
fn against_reference(out: &mut [f64]) {
    out.fill(block as f64 - block as f64);
}

#[tunable(unroll = [1, 2, 4], width = [8, 16], consts)]
fn sum(x: &[f32]) -> f32 {
    let lanes: [f32; width] = [0.0; width];
    let _ = lanes;
    x.chunks(unroll).map(|c| c.iter().sum::<f32>()).sum()
}

fn main() {
    let mut out = Vec::new();
    let p = KernelParams { block: 16, tile: 2, scale: 0.5, mode: "fast", fused: true };
    assert_eq!(kernel_with(&p, 5, &mut out), Ok(5));
    assert_eq!(out, vec![16.0]);
    // Without the autotune feature the default runs.
    assert_eq!(kernel(5, &mut out), Ok(6));
    assert_eq!(out[1], 64.0);
    assert!(kernel_space().len() > 0);
    assert_eq!(sum_with(&SumParams { unroll: 2, width: 8 }, &[1.0, 2.0, 3.0]), 6.0);
    assert_eq!(sum(&[1.0, 2.0]), 3.0);
    // The default configuration as `Default`, and the configuration by name.
    assert_eq!(KernelParams::default(), KernelParams { block: 32, tile: 2, scale: 1.0, mode: "safe", fused: false });
    assert_eq!(<KernelParams as tunable::Params>::NAMES, ["block", "tile", "scale", "mode", "fused"]);
    assert_eq!(tunable::Params::describe(&p), "block=16, tile=2, scale=0.5, mode=fast, fused=True");
    let mut v = Vec::new();
    checked("gpu 0", &mut v, &[1.0, 2.0]);
    assert_eq!(v, [1.0, 2.0]);
    let mut w = [1.0; 3];
    against_reference(&mut w);
    assert_eq!(w, [0.0; 3]);
}
