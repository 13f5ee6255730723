use tunable::tunable;

#[tunable(tile = [1, 2], metric = "tile = time * 2", objective = "time")]
fn taken(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], metric = "fast time * 2", objective = "time")]
fn no_equals(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], metric = "x = time * * 2", objective = "time")]
fn syntax(n: usize) -> usize {
    n * tile
}

fn main() {}
