use tunable::tunable;

// `answer` and `tolerance` only make sense with the output `verify` checks.
#[tunable(block = [16, 32], answer = expected, tolerance = 1e-3)]
fn without_verify(out: &mut Vec<f32>, expected: &[f32]) {
    out.push(block as f32 + expected[0]);
}

// A tolerance is a non-negative number.
#[tunable(block = [16, 32], verify = out, tolerance = "tight")]
fn text_tolerance(out: &mut Vec<f32>) {
    out.push(block as f32);
}

#[tunable(block = [16, 32], verify = out, tolerance = -1.0)]
fn negative_tolerance(out: &mut Vec<f32>) {
    out.push(block as f32);
}

fn main() {}
