use tunable::tunable;

#[tunable(block = [16, 32])]
fn größe(n: usize) -> usize {
    n * block
}

fn main() {}
