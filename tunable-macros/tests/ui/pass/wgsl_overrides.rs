// Every parameter of the kernel is an override of its WGSL source (included from a file), in
// a static the body names: the attribute's check passes.
use tunable::backend::Source;
use tunable::tunable;

static SCALE: Source = Source::new("scale", include_str!("wgsl_overrides.wgsl"));

#[tunable(block_size_x = [64, 128], unrolled = [1, 2])]
fn scale(n: usize) -> usize {
    let _ = &SCALE;
    n * block_size_x * unrolled
}

fn main() {
    assert_eq!(scale(1), 64);
}
