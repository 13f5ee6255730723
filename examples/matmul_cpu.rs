//! A cache-blocked f32 matrix multiply whose block sizes and unroll factor are tuned.
//!
//! ```text
//! cargo run --release --example matmul_cpu --features autotune               # tune (first call), report
//! cargo run --release --example matmul_cpu                                   # shipped build: baked config
//! cargo run --release --example matmul_cpu --features autotune -- --exhaustive   # also time every config
//! cargo run --release --example matmul_cpu --features autotune -- --against 64,128,512,16  # compare with one
//! ```
//!
//! With `--features autotune` the first call of `matmul_cpu` for a problem-size bucket tunes it on
//! its own arguments and stores the winner in `tuned/matmul_cpu.bin`; a later plain build bakes it
//! in. The program prints the default configuration's time, the tuned one's and the speedup.

use std::hint::black_box;
use std::time::Instant;
use tunable::tunable;

/// The blocked kernel, shared by the kernels below; the block sizes and the unroll factor are
/// whatever `bm`, `bk`, `bn` and `unroll` name where it is expanded (locals or consts).
macro_rules! blocked_matmul {
    ($a:ident, $b:ident, $c:ident, $n:ident, $bm:ident, $bk:ident, $bn:ident, $unroll:ident) => {{
        $c.fill(0.0);
        for i0 in (0..$n).step_by($bm) {
            for k0 in (0..$n).step_by($bk) {
                for j0 in (0..$n).step_by($bn) {
                    let (i1, k1, j1) = ((i0 + $bm).min($n), (k0 + $bk).min($n), (j0 + $bn).min($n));
                    for i in i0..i1 {
                        for k in k0..k1 {
                            let aik = $a[i * $n + k];
                            let crow = &mut $c[i * $n + j0..i * $n + j1];
                            let brow = &$b[k * $n + j0..k * $n + j1];
                            let mut cc = crow.chunks_exact_mut($unroll);
                            let mut bb = brow.chunks_exact($unroll);
                            for (cu, bu) in (&mut cc).zip(&mut bb) {
                                for u in 0..$unroll {
                                    cu[u] += aik * bu[u];
                                }
                            }
                            for (x, y) in cc.into_remainder().iter_mut().zip(bb.remainder()) {
                                *x += aik * y;
                            }
                        }
                    }
                }
            }
        }
    }};
}

#[tunable(
    bm = [8, 16, 32, 64, 128],
    bk = [16, 32, 64, 128, 256],
    bn = [32, 64, 128, 256, 512],
    unroll = [1, 2, 4, 8, 16],
    constraint = "bm * bk <= 8192 and bk * bn <= 65536",
    constraint = "unroll <= bn",
    key = tunable::key::next_power_of_two(n as u64),
    budget = 60,
    repeats = 3,
    warmup = 1,
    default = (bm = 32, bk = 32, bn = 64, unroll = 1),
)]
/// `c = a * b` for row-major `n x n` matrices.
pub fn matmul_cpu(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    blocked_matmul!(a, b, c, n, bm, bk, bn, unroll)
}

/// The same kernel on a narrower space (32 configurations), parameters as runtime locals.
#[tunable(bm = [32, 64], bk = [64, 128], bn = [128, 256], unroll = [1, 4, 8, 16], budget = 32)]
pub fn matmul_small(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    blocked_matmul!(a, b, c, n, bm, bk, bn, unroll)
}

/// The same kernel and space with `consts`: the body is instantiated once per configuration and
/// sees `bm`, `bk`, `bn` and `unroll` as true constants.
#[tunable(bm = [32, 64], bk = [64, 128], bn = [128, 256], unroll = [1, 4, 8, 16], budget = 32, consts)]
pub fn matmul_small_consts(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    blocked_matmul!(a, b, c, n, bm, bk, bn, unroll)
}

fn time_ms(f: &mut dyn FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..5)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[2]
}

fn main() {
    let n = std::env::args()
        .skip_while(|a| a != "--n")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(384usize);
    let exhaustive = std::env::args().any(|a| a == "--exhaustive");
    let consts = std::env::args().any(|a| a == "--consts");
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let mut c = vec![0.0f32; n * n];

    let default = MatmulCpuParams {
        bm: 32,
        bk: 32,
        bn: 64,
        unroll: 1,
    };
    let t_default = time_ms(&mut || matmul_cpu_with(&default, &a, &b, black_box(&mut c), n));
    let reference = c.clone();

    // The tuned call: with `--features autotune` the first call tunes; otherwise it runs the
    // baked configuration (or the default if nothing was tuned yet).
    let start = Instant::now();
    matmul_cpu(&a, &b, &mut c, n);
    let first_call = start.elapsed().as_secs_f64();
    assert!(
        c.iter()
            .zip(&reference)
            .all(|(x, y)| (x - y).abs() <= 1e-3 * y.abs().max(1.0)),
        "wrong result"
    );
    let t_tuned = time_ms(&mut || matmul_cpu(&a, &b, black_box(&mut c), n));
    let space = matmul_cpu_space();
    println!(
        "matmul_cpu n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    println!("  first call (tunes with --features autotune): {first_call:.2} s");
    println!("  default {default:?}: {t_default:.3} ms");
    println!(
        "  tuned call: {t_tuned:.3} ms, speedup {:.2}x over the default",
        t_default / t_tuned
    );

    // The configuration to compare the tuned one with: the best of an exhaustive sweep, or one
    // named with `--against bm,bk,bn,unroll` (the choice of another tuning, say).
    let against = std::env::args()
        .skip_while(|a| a != "--against")
        .nth(1)
        .map(|v| {
            let values: Vec<tunable::Value> = v
                .split(',')
                .map(|x| tunable::Value::Int(x.trim().parse().expect("--against: integers")))
                .collect();
            <MatmulCpuParams as tunable::Params>::from_values(&values)
                .expect("--against: bm,bk,bn,unroll")
        });
    let reference = if exhaustive {
        let mut best = (f64::INFINITY, default);
        for pos in 0..space.len() {
            let v = space.values(pos);
            let p = <MatmulCpuParams as tunable::Params>::from_values(&v).expect("fits");
            let t = time_ms(&mut || matmul_cpu_with(&p, &a, &b, black_box(&mut c), n));
            if t < best.0 {
                best = (t, p);
            }
        }
        println!(
            "  exhaustive over {} configurations: best {:?} at {:.3} ms",
            space.len(),
            best.1,
            best.0
        );
        Some(best.1)
    } else {
        against
    };
    if let Some(best) = reference {
        // A sweep's minimum is biased low (the best of many noisy timings): time the reference
        // and the tuned configuration again, interleaved, and compare those.
        let (mut t_best, mut t_again) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            t_best.push(time_ms(&mut || {
                matmul_cpu_with(&best, &a, &b, black_box(&mut c), n)
            }));
            t_again.push(time_ms(&mut || matmul_cpu(&a, &b, black_box(&mut c), n)));
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (t_best, t_again) = (median(t_best), median(t_again));
        println!(
            "  re-timed, interleaved: reference {best:?} {t_best:.3} ms, tuned {t_again:.3} ms; tuned / reference = {:.3}",
            t_again / t_best
        );
    }

    if consts {
        // What true constants buy: every configuration of the small space, with the parameters
        // as runtime locals and as consts.
        let small = matmul_small_space();
        let (mut rt, mut ct) = (Vec::new(), Vec::new());
        for pos in 0..small.len() {
            let v = small.values(pos);
            let p = <MatmulSmallParams as tunable::Params>::from_values(&v).expect("fits");
            let q = <MatmulSmallConstsParams as tunable::Params>::from_values(&v).expect("fits");
            rt.push(time_ms(&mut || {
                matmul_small_with(&p, &a, &b, black_box(&mut c), n)
            }));
            ct.push(time_ms(&mut || {
                matmul_small_consts_with(&q, &a, &b, black_box(&mut c), n)
            }));
        }
        let best = |t: &[f64]| t.iter().copied().fold(f64::INFINITY, f64::min);
        let geo =
            (rt.iter().zip(&ct).map(|(r, c)| (r / c).ln()).sum::<f64>() / rt.len() as f64).exp();
        println!(
            "  consts on {} configurations: best {:.3} ms with runtime parameters, {:.3} ms with consts ({:.2}x); geometric-mean speedup per configuration {geo:.2}x",
            small.len(),
            best(&rt),
            best(&ct),
            best(&rt) / best(&ct)
        );
    }
}
