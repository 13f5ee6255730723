use tunable::tunable;

#[tunable(block = [16, 32], tile = [1, 2], constraint = "tile >= 1 and block > 64")]
fn kernel(n: usize) -> usize {
    n * block * tile
}

fn main() {}
