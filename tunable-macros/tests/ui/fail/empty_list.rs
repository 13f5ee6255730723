use tunable::tunable;

#[tunable(block = [], tile = [1, 2])]
fn kernel(n: usize) -> usize {
    n * tile
}

fn main() {}
