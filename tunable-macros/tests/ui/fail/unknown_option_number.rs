use tunable::tunable;

// A misspelled option with a number value is an unknown option, not a parameter.
#[tunable(block = [16, 32], budjet = 10)]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
