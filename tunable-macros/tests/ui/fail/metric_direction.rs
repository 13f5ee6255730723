use tunable::tunable;

#[tunable(tile = [1, 2], metric = "per_tile = time / tile", objective = "per_tile")]
fn missing(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], metric = "per_tile = time / tile", objective = "up per_tile")]
fn unknown(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], objective = "max energy")]
fn maximized_energy(n: usize) -> usize {
    n * tile
}

fn main() {}
