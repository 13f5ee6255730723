use tunable::tunable;

struct Conv {
    scale: f32,
}

#[tunable]
impl Conv {
    /// Not tunable: kept as it is.
    fn new(scale: f32) -> Self {
        Conv { scale }
    }

    #[tunable(tile = [1, 2, 4], block = [8, 16], constraint = "tile * block <= 32")]
    fn run(&self, x: &mut [f32]) -> f32 {
        for c in x.chunks_mut(tile * block) {
            for v in c {
                *v *= self.scale;
            }
        }
        (tile * block) as f32
    }

    #[tunable(width = [2, 4], consts)]
    fn width() -> usize {
        let lanes = [0u8; width];
        lanes.len()
    }
}

fn main() {
    let conv = Conv::new(2.0);
    let mut x = vec![1.0f32; 10];
    assert_eq!(conv.run(&mut x), 8.0); // default: the first valid configuration (tile 1, block 8)
    assert_eq!(x[9], 2.0);
    assert_eq!(conv.run_with(&ConvRunParams { tile: 2, block: 16 }, &mut x), 32.0);
    assert_eq!(Conv::run_space().len(), 5);
    assert_eq!(Conv::width(), 2);
    assert_eq!(Conv::width_with(&ConvWidthParams { width: 4 }), 4);
}
