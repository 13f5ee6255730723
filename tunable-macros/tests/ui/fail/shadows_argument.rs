use tunable::tunable;

#[tunable(n = [16, 32])]
fn kernel(n: usize) -> usize {
    n
}

fn main() {}
