use tunable::tunable;

#[tunable(
    tile = [1, 2],
    metric = "gflops_per_watt = 2 * key**3 / enrgy / 1e9",
    objective = "max gflops_per_watt"
)]
fn kernel(n: usize) -> usize {
    n * tile
}

fn main() {}
