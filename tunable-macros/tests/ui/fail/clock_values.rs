use tunable::tunable;

// Clock parameters take whole numbers in Kernel Tuner's units: MHz for the clocks, watts for the
// power limit; a misspelled one is refused.
#[tunable(
    tile = [1, 2],
    nvml_gr_clock = [1410.5, 1980],
    nvml_mem_clock = [0, 2619],
    nvml_pwr_limit = [300, 250000],
    nvml_gr_clk = [1200],
)]
fn kernel(n: usize) -> usize {
    n * tile
}

fn main() {}
