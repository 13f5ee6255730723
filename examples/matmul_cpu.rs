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
//! its own arguments and stores the winner in `tuned/matmul_cpu.bin` (and the first call of
//! `matmul_small` tunes that one); a later plain build bakes them in. The program prints the
//! default configuration's time, the tuned one's and the speedup, both timed alike and
//! interleaved through `matmul_cpu_with` (`tunable::compare`), and the tuned call's own time; a
//! plain build also prints `specialized: shipped X ms, hand-specialized Y ms, ratio R`: the
//! shipped call of `matmul_small`, which runs the baked configuration's instance with constants,
//! against the same configuration written by hand with const generics ([`matmul_hand`]), timed
//! interleaved.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Instant;
use support::{Args, retime};
use tunable::compare::{METHOD, ROUNDS, side_by_side};
use tunable::{Params, tunable};

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

/// The same kernel on a narrower space (32 configurations), small enough that each configuration
/// also has a hand-written instance ([`matmul_hand`]) to compare the shipped call with. Tuned by
/// its first call, as `matmul_cpu`.
#[tunable(
    bm = [32, 64],
    bk = [64, 128],
    bn = [128, 256],
    unroll = [1, 4, 8, 16],
    budget = 32,
    repeats = 3,
    warmup = 1
)]
pub fn matmul_small(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    blocked_matmul!(a, b, c, n, bm, bk, bn, unroll)
}

/// The same kernel and space with `consts`: the body is instantiated once per configuration and
/// sees `bm`, `bk`, `bn` and `unroll` as true constants.
#[tunable(bm = [32, 64], bk = [64, 128], bn = [128, 256], unroll = [1, 4, 8, 16], budget = 32, consts)]
pub fn matmul_small_consts(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    blocked_matmul!(a, b, c, n, bm, bk, bn, unroll)
}

/// The blocked kernel written out by hand, without the macro, with the block sizes and the
/// unroll factor as const generics: what a user who knew the tuned values would write.
fn matmul_hand<const BM: usize, const BK: usize, const BN: usize, const UNROLL: usize>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    n: usize,
) {
    blocked_matmul!(a, b, c, n, BM, BK, BN, UNROLL)
}

/// A matmul variant.
type Matmul = fn(&[f32], &[f32], &mut [f32], usize);

/// A timed run on the output `c`.
type Run<'a> = dyn Fn(&mut [f32]) + 'a;

/// The hand-written instance of a configuration of `matmul_small`'s space (small enough that
/// every configuration has one).
fn matmul_hand_instance(p: &MatmulSmallParams) -> Option<Matmul> {
    macro_rules! unroll {
        ($bm:literal, $bk:literal, $bn:literal) => {
            match p.unroll {
                1 => Some(matmul_hand::<$bm, $bk, $bn, 1> as Matmul),
                4 => Some(matmul_hand::<$bm, $bk, $bn, 4> as Matmul),
                8 => Some(matmul_hand::<$bm, $bk, $bn, 8> as Matmul),
                16 => Some(matmul_hand::<$bm, $bk, $bn, 16> as Matmul),
                _ => None,
            }
        };
    }
    match (p.bm, p.bk, p.bn) {
        (32, 64, 128) => unroll!(32, 64, 128),
        (32, 64, 256) => unroll!(32, 64, 256),
        (32, 128, 128) => unroll!(32, 128, 128),
        (32, 128, 256) => unroll!(32, 128, 256),
        (64, 64, 128) => unroll!(64, 64, 128),
        (64, 64, 256) => unroll!(64, 64, 256),
        (64, 128, 128) => unroll!(64, 128, 128),
        (64, 128, 256) => unroll!(64, 128, 256),
        _ => None,
    }
}

/// The shipped call of `matmul_small` against the same configuration instantiated by hand
/// ([`matmul_hand`]), timed interleaved: what running the baked configuration's instance costs
/// over hand-written constants. The generic body (`matmul_small_with`, parameters as run-time
/// values) is timed beside them, for scale.
fn specialized(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    // With `--features autotune` this first call tunes `matmul_small`, as the first call of
    // `matmul_cpu` tuned it; a later plain build bakes both.
    matmul_small(a, b, c, n);
    let choice = matmul_small_config(a, b, c, n);
    if cfg!(feature = "autotune") || choice.origin != tunable::Origin::Baked {
        println!(
            "  specialized: matmul_small runs {} ({:?}); a plain build with its tuned file compares the baked instance with a hand-specialized copy",
            choice.params.describe(),
            choice.origin
        );
        return;
    }
    let p = choice.params;
    let hand = matmul_hand_instance(&p).expect("every configuration has a hand instance");
    let once = |f: &mut dyn FnMut()| {
        let s = Instant::now();
        f();
        s.elapsed().as_secs_f64() * 1e3
    };
    let runs: [&Run; 3] = [
        &|c| matmul_small(a, b, black_box(c), n),
        &|c| hand(a, b, black_box(c), n),
        &|c| matmul_small_with(&p, a, b, black_box(c), n),
    ];
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for run in runs {
        once(&mut || run(c));
    }
    // Interleaved, each round in another order, so that none always runs on a warmer cache; the
    // ratio is taken per round (the two runs a few milliseconds apart see the same load from
    // other processes), then its median.
    const ROUNDS: usize = 60;
    for round in 0..ROUNDS {
        for i in 0..3 {
            let i = (i + round) % 3;
            times[i].push(once(&mut || runs[i](c)));
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    let ratios: Vec<f64> = times[0].iter().zip(&times[1]).map(|(x, y)| x / y).collect();
    let [x, y, z] = [0, 1, 2].map(|i| median(&times[i]));
    println!(
        "  specialized: shipped {x:.3} ms, hand-specialized {y:.3} ms, ratio {:.3} (matmul_small's baked {}; generic body {z:.3} ms; medians of {ROUNDS} interleaved rounds, the ratio's per round)",
        median(&ratios),
        p.describe()
    );
}

/// The time of `f` in milliseconds, as `tunable::compare::speedup` times each configuration
/// (`tunable::compare`: one untimed run, then [`ROUNDS`] timed runs, robust median).
fn time_ms(f: &mut dyn FnMut()) -> f64 {
    let t = side_by_side(&[()], ROUNDS, |()| {
        f();
        Ok::<(), String>(())
    })
    .remove(0);
    t.expect("a CPU kernel does not fail").ms
}

fn main() {
    let args = Args::from_env();
    let n: usize = args.value("--n", 384);
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let mut c = vec![0.0f32; n * n];

    let default = MatmulCpuParams::default();
    matmul_cpu_with(&default, &a, &b, &mut c, n);
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
    let choice = matmul_cpu_config(&a, &b, &mut c, n);
    let tuned = choice.params;
    // The default and the tuned configuration timed alike, interleaved, through the same
    // function and the same path (`matmul_cpu_with`: parameters as run-time values); the call
    // itself, which runs a baked configuration as its instance (its values as constants),
    // beside them.
    let t = side_by_side(&[Some(default), Some(tuned), None], ROUNDS, |p| {
        match p {
            Some(p) => matmul_cpu_with(p, &a, &b, black_box(&mut c), n),
            None => matmul_cpu(&a, &b, black_box(&mut c), n),
        }
        Ok::<(), String>(())
    });
    let [t_default, t_tuned, t_call] = [0, 1, 2].map(|i| t[i].as_ref().expect("runs").ms);
    let space = matmul_cpu_space();
    println!(
        "matmul_cpu n = {n}: {} valid configurations of {}",
        space.len(),
        space.cartesian_size()
    );
    println!("  first call (tunes with --features autotune): {first_call:.2} s");
    println!("  default {default:?}: {t_default:.3} ms");
    println!(
        "  tuned {tuned:?}: {t_tuned:.3} ms, speedup {:.2}x over the default",
        t_default / t_tuned
    );
    println!(
        "  tuned call (matmul_cpu itself, {:?}): {t_call:.3} ms",
        choice.origin
    );
    println!("  ({METHOD}; {ROUNDS} rounds, wall clock)");

    // The configuration to compare the tuned one with: the best of an exhaustive sweep, or one
    // named with `--against bm,bk,bn,unroll` (the choice of another tuning, say).
    let reference = if args.has("--exhaustive") {
        let mut best = (f64::INFINITY, default);
        for pos in 0..space.len() {
            let v = space.values(pos);
            let p = <MatmulCpuParams as Params>::from_values(&v).expect("fits");
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
        args.config("--against")
    };
    if let Some(reference) = reference {
        retime(reference, tuned, |p| {
            matmul_cpu_with(p, &a, &b, black_box(&mut c), n);
            Ok::<(), String>(())
        });
    }

    specialized(&a, &b, &mut c, n);

    if args.has("--consts") {
        // What true constants buy: every configuration of the small space, with the parameters
        // as runtime locals and as consts.
        let small = matmul_small_space();
        let (mut rt, mut ct) = (Vec::new(), Vec::new());
        for pos in 0..small.len() {
            let v = small.values(pos);
            let p = <MatmulSmallParams as Params>::from_values(&v).expect("fits");
            let q = <MatmulSmallConstsParams as Params>::from_values(&v).expect("fits");
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
