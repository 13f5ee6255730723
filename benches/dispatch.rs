//! What the tuned call costs over a hand-written call with constant parameters, for a kernel
//! small enough that any dispatch overhead would show.
//!
//! ```text
//! cargo bench --bench dispatch --features autotune   # once: the first call tunes `axpy`
//! cargo bench --bench dispatch                       # a shipped build, the winner baked in
//! ```
//!
//! Rows: `shipped_call` is the generated entry point (in a shipped build: the baked entry's
//! instance, compiled with its parameters as constants); `const_call` the same configuration
//! written by hand with the width a const generic; `generic_call` the generic body, the
//! parameters as run-time values (`axpy_with` on an opaque configuration).

use std::hint::black_box;
use tunable::tunable;

fn main() {
    // With `--features autotune` this first call tunes `axpy` and stores the winner in
    // `tuned/axpy.bin`; a later plain build bakes it.
    let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
    axpy(&mut x, &y, 0.5);
    let choice = axpy_config(&mut x, &y, 0.5);
    println!(
        "axpy runs width = {} ({:?}{})",
        choice.params.width,
        choice.origin,
        if cfg!(feature = "autotune") {
            ", through the generic body: a tuning build"
        } else {
            ""
        }
    );
    divan::main();
}

#[tunable(width = [4, 8, 16], default = (width = 8), repeats = 15)]
fn axpy(x: &mut [f32], y: &[f32], a: f32) {
    for (xc, yc) in x.chunks_mut(width).zip(y.chunks(width)) {
        for (p, q) in xc.iter_mut().zip(yc) {
            *p += a * q;
        }
    }
}

/// `axpy` written by hand, with the width a constant.
fn axpy_hand<const WIDTH: usize>(x: &mut [f32], y: &[f32], a: f32) {
    for (xc, yc) in x.chunks_mut(WIDTH).zip(y.chunks(WIDTH)) {
        for (p, q) in xc.iter_mut().zip(yc) {
            *p += a * q;
        }
    }
}

const N: usize = 64;

/// Through the generated, tuned entry point.
#[divan::bench]
fn shipped_call(b: divan::Bencher) {
    let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
    b.bench_local(|| axpy(black_box(&mut x), black_box(&y), black_box(0.5)));
}

/// The configuration the entry point runs, written by hand with constant parameters.
#[divan::bench]
fn const_call(b: divan::Bencher) {
    fn bench<const WIDTH: usize>(b: divan::Bencher) {
        let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
        b.bench_local(|| axpy_hand::<WIDTH>(black_box(&mut x), black_box(&y), black_box(0.5)));
    }
    match axpy_config(&mut [], &[], 0.0).params.width {
        4 => bench::<4>(b),
        8 => bench::<8>(b),
        16 => bench::<16>(b),
        w => unreachable!("width {w} is not in the space"),
    }
}

/// The same configuration through the generic body, the width a run-time value.
#[divan::bench]
fn generic_call(b: divan::Bencher) {
    let (mut x, y) = (vec![1.0f32; N], vec![2.0f32; N]);
    let p = axpy_config(&mut x, &y, 0.0).params;
    b.bench_local(|| {
        axpy_with(
            black_box(&p),
            black_box(&mut x),
            black_box(&y),
            black_box(0.5),
        )
    });
}
