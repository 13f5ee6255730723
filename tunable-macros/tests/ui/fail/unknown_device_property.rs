use tunable::tunable;

#[tunable(tile = [16, 32], constraint = "tile * 4 <= device.max_shared_mem")]
fn kernel(n: usize) -> usize {
    n * tile
}

fn main() {}
