// A parameter of a kernel whose WGSL source (included from a file) declares no override of the
// same name: the attribute says so at compile time, on the parameter.
use tunable::backend::Source;
use tunable::tunable;

static SCALE: Source = Source::new("scale", include_str!("wgsl_missing_override.wgsl"));

#[tunable(block_size_x = [64, 128], unrolled = [1, 2])]
fn scale(n: usize) -> usize {
    let _ = &SCALE;
    n * block_size_x * unrolled
}

fn main() {
    let _ = scale(1);
}
