use tunable::tunable;

#[tunable(block = [16, 32], name = "../../escape")]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
