use tunable::tunable;

// A misspelled option with an expression value is an unknown option, not a parameter.
#[tunable(block = [16, 32], verfy = dst)]
fn kernel(dst: &mut [f32]) {
    dst.fill(block as f32);
}

fn main() {}
