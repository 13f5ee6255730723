use tunable::tunable;

// A name close to no option, with a single value: the options, and what a parameter looks like.
// Every unknown option is reported, and `cosnts` without a value too.
#[tunable(block = [16, 32], tile = 4, cosnts)]
fn kernel(n: usize) -> usize {
    n * block
}

fn main() {}
