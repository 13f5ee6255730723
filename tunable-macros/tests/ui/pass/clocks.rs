use tunable::tunable;

/// The clock parameters are parameters of the space and fields of the parameter struct; the
/// body may ignore them (the tuner applies them to the device, a shipped call never does).
#[tunable(
    tile = [1, 2],
    nvml_gr_clock = [1410, 1980],
    nvml_mem_clock = [2619],
    nvml_pwr_limit = 300..=700 step 100,
)]
fn kernel(n: usize) -> usize {
    n * tile
}

fn main() {
    let p = KernelParams::default();
    assert_eq!((p.nvml_gr_clock, p.nvml_mem_clock, p.nvml_pwr_limit), (1410, 2619, 300));
    assert_eq!(kernel_with(&p, 3), 3);
}
