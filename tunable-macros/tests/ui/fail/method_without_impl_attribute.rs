use tunable::tunable;

struct S;

impl S {
    #[tunable(tile = [1, 2])]
    fn run(&self) -> usize {
        tile
    }
}

fn main() {}
