use tunable::tunable;

#[tunable(block = [16, 32], block = [64], budget = 10, budget = 20)]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
