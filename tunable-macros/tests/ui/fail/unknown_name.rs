use tunable::tunable;

#[tunable(block = [16, 32], tile = [1, 2], constraint = "block * tyle <= 32")]
fn kernel(n: usize) -> usize {
    n * block * tile
}

fn main() {}
