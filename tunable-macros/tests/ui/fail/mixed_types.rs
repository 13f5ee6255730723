use tunable::tunable;

#[tunable(block = [16, "wide"])]
fn kernel(n: usize) -> usize {
    n
}

fn main() {}
