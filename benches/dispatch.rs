//! What the tuned call costs over a hand-written call with constant parameters, for a kernel
//! small enough that any dispatch overhead would show.
//!
//! `cargo bench --bench dispatch`

use std::hint::black_box;
use tunable::tunable;

fn main() {
    divan::main();
}

#[tunable(width = [4, 8, 16], default = (width = 8))]
fn axpy(x: &mut [f32], y: &[f32], a: f32) {
    for (xc, yc) in x.chunks_mut(width).zip(y.chunks(width)) {
        for (p, q) in xc.iter_mut().zip(yc) {
            *p += a * q;
        }
    }
}

const N: usize = 64;

/// Through the generated, tuned entry point.
#[divan::bench]
fn tuned_call(b: divan::Bencher) {
    let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
    b.bench_local(|| axpy(black_box(&mut x), black_box(&y), black_box(0.5)));
}

/// The same variant called by hand with its parameters as constants.
#[divan::bench]
fn direct_call(b: divan::Bencher) {
    let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
    const P: AxpyParams = AxpyParams { width: 8 };
    b.bench_local(|| axpy_with(&P, black_box(&mut x), black_box(&y), black_box(0.5)));
}
