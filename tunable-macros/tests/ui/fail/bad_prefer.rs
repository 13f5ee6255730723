use tunable::tunable;

#[tunable(tile = [1, 2], objectives = ["time", "energy"], prefer = "least_power")]
fn not_an_objective(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], objectives = ["time", "energy"], prefer = "least_energy within 0.9 of fastest")]
fn factor_below_one(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], objective = "energy", prefer = "fastest")]
fn one_objective(n: usize) -> usize {
    n * tile
}

#[tunable(tile = [1, 2], objective = "time", objectives = ["energy"])]
fn both(n: usize) -> usize {
    n * tile
}

fn main() {}
