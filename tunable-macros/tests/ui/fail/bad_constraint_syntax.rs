use tunable::tunable;

#[tunable(block = [16, 32], constraint = "block * <= 32", strategy = "genetc")]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
