use tunable::tunable;

#[tunable(block = [16, 32], stratgy = "genetic")]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
