use tunable::tunable;

#[tunable(block = [16, 32], objective = "watts")]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
