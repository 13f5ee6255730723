//! A shipped build runs each baked configuration as its own instance of the body, with the
//! parameters as constants, and everything else through the generic body; with real cargo builds
//! of a temporary crate whose tuned files the test writes.
//!
//! Each kernel reports whether its parameter was a constant where it ran ([`IS_CONST`]: a name in
//! a pattern is a constant pattern if a constant of that name is in scope, else a new binding),
//! so running the generic body where an instance was due fails the test. Covered: a free
//! function, a generic method taking `&mut self` that returns `Result` and has `restore`, a
//! `consts` kernel using its parameter as an array length, a body that rebinds a parameter's
//! name, a function returning `impl Trait` (no instances), a space of 10,000 configurations, the portable set on a device nobody tuned on, a kernel
//! with nothing baked, and a build with the `autotune` feature (only the generic body).
//!
//! Shares the target folder of `end_to_end.rs` (`target/e2e`), so the dependencies are built once.

mod temp_crate;

use temp_crate::{TempCrate, line};
use tunable_search::format::tuned::{Ranked, StoredValue, TunedEntry, encode};

/// `is_const!(p)`, hidden in a macro so that `#[tunable]` does not see the pattern (a parameter
/// the body visibly rebinds stays a local in the instances).
const IS_CONST: &str = r#"
macro_rules! is_const {
    ($p:ident) => {{
        #[allow(unreachable_patterns, unused_variables, non_upper_case_globals)]
        let c = match usize::MAX {
            $p => false,
            _ => true,
        };
        c
    }};
}
"#;

const KERNELS: &str = r#"
use tunable::tunable;

#[tunable(tile = [1, 2, 4, 8], key = tunable::key::next_power_of_two(n as u64))]
fn probe(n: usize) -> (usize, bool) {
    (tile + n - n, is_const!(tile))
}

#[tunable(tile = [1, 2, 4, 8])]
fn unbaked() -> (usize, bool) {
    (tile, is_const!(tile))
}

#[tunable(a = 0..100, b = 0..100)]
fn big() -> (usize, usize, bool) {
    (a, b, is_const!(a) && is_const!(b))
}

#[tunable(width = [2, 4, 8], consts)]
fn lanes() -> (usize, bool) {
    let lanes = [0u8; width];
    (lanes.len(), is_const!(width))
}

/// Rebinds `tile`: a local with the baked value in the instance, the body unchanged.
#[tunable(tile = [1, 2, 4, 8])]
fn rebinds(n: usize) -> usize {
    let tile = tile.min(n);
    let f = |tile: usize| tile * 10;
    f(tile)
}

/// Returns `impl Trait` (capturing nothing, as the entry point's call of `steps_with(&params,
/// ..)` requires): no instances (each would return a type of its own), the generic body.
#[tunable(step = [1, 2, 3])]
fn steps(n: usize) -> impl Iterator<Item = usize> + use<> {
    (0..n).step_by(step)
}

struct Acc {
    total: usize,
}

#[tunable]
impl Acc {
    #[tunable(step = [1, 2, 3], restore = out.fill(0))]
    fn sums<T: Copy + Into<u64>>(&mut self, out: &mut [u64], x: &[T]) -> Result<bool, String> {
        if x.is_empty() {
            return Err("empty".into());
        }
        for (o, c) in out.iter_mut().zip(x.chunks(step)) {
            *o += c.iter().map(|&v| v.into()).sum::<u64>();
        }
        self.total += step;
        Ok(is_const!(step))
    }
}

fn main() {
    println!("probe {:?}", probe(1000));
    println!("probe_with {:?}", probe_with(&ProbeParams { tile: 4 }, 1000));
    println!("probe other key {:?}", probe(3));
    println!("unbaked {:?}", unbaked());
    println!("big {:?}", big());
    println!("lanes {:?}", lanes());
    println!("rebinds {}", rebinds(3));
    println!("steps {:?}", steps(7).collect::<Vec<_>>());
    let mut acc = Acc { total: 0 };
    let mut out = [9u64; 2];
    let r = acc.sums(&mut out, &[1u8, 2, 3, 4, 5, 6]);
    println!("sums {r:?} {out:?} total {}", acc.total);
    println!("sums empty {:?}", acc.sums(&mut out, &[] as &[u32]));
}
"#;

/// Writes `tuned/<kernel>.bin` in `c` with one entry per `(device, key, values)`, in the space
/// fingerprint the last build recorded in `tuned/<kernel>.space`.
fn tune(c: &TempCrate, kernel: &str, names: &[&str], entries: &[(&str, u64, &[i64])]) {
    let tuned = c.dir.join("tuned");
    let space = std::fs::read_to_string(tuned.join(format!("{kernel}.space"))).unwrap();
    let space_hash = u64::from_str_radix(space.trim(), 16).unwrap();
    let stored = |v: &[i64]| v.iter().map(|&x| StoredValue::Int(x)).collect::<Vec<_>>();
    let entries: Vec<TunedEntry> = entries
        .iter()
        .map(|&(device, key, values)| TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
            kernel: kernel.into(),
            device: device.into(),
            key,
            space_hash,
            params: names
                .iter()
                .map(|n| n.to_string())
                .zip(stored(values))
                .collect(),
            time_ms: 1.0,
            evaluations: 1,
            strategy: "fixture".into(),
            timestamp: 0,
            top: vec![Ranked {
                values: stored(values),
                time_ms: 1.0,
            }],
        })
        .collect();
    std::fs::write(tuned.join(format!("{kernel}.bin")), encode(&entries)).unwrap();
}

#[test]
fn shipped_builds_run_baked_configurations_as_constant_instances() {
    let c = TempCrate::new("instances", &format!("{IS_CONST}{KERNELS}"));
    // The device the fixtures are tuned on, unless a run names another.
    let run = |autotune, env: &[(&str, &str)]| {
        c.run(
            autotune,
            &[&[("TUNABLE_DEVICE", "cpu: fixture")], env].concat(),
        )
    };

    // 1. Nothing tuned: every kernel runs its default through the generic body.
    let (out, err) = run(false, &[]);
    assert_eq!(line(&out, "probe"), "(1, false)", "{out}{err}");
    assert_eq!(line(&out, "big"), "(0, 0, false)", "{out}{err}");
    // `consts` instantiates every configuration, baked or not.
    assert_eq!(line(&out, "lanes"), "(2, true)", "{out}{err}");
    assert_eq!(
        line(&out, "sums"),
        "Ok(false) [10, 11] total 1",
        "{out}{err}"
    );
    assert!(c.dir.join("tuned/probe.space").exists());

    // 2. Baked entries (the plain build is rebuilt because the tuned files changed).
    tune(&c, "probe", &["tile"], &[("cpu: fixture", 1024, &[4])]);
    tune(&c, "big", &["a", "b"], &[("cpu: fixture", 0, &[37, 61])]);
    tune(&c, "lanes", &["width"], &[("cpu: fixture", 0, &[8])]);
    tune(&c, "rebinds", &["tile"], &[("cpu: fixture", 0, &[8])]);
    tune(&c, "sums", &["step"], &[("cpu: fixture", 0, &[3])]);
    tune(&c, "steps", &["step"], &[("cpu: fixture", 0, &[3])]);
    let (out, err) = run(false, &[]);
    assert_eq!(line(&out, "probe"), "(4, true)", "{out}{err}");
    // `_with` is the generic body, whatever is baked.
    assert_eq!(line(&out, "probe_with"), "(4, false)", "{out}{err}");
    // A key never tuned runs the nearest key's entry: its instance too.
    assert_eq!(line(&out, "probe other key"), "(4, true)", "{out}{err}");
    // A kernel with nothing baked: the generic body.
    assert_eq!(line(&out, "unbaked"), "(1, false)", "{out}{err}");
    // 10,000 configurations, one baked: its instance alone.
    assert_eq!(line(&out, "big"), "(37, 61, true)", "{out}{err}");
    assert_eq!(line(&out, "lanes"), "(8, true)", "{out}{err}");
    assert_eq!(line(&out, "rebinds"), "30", "{out}{err}");
    assert_eq!(line(&out, "steps"), "[0, 3, 6]", "{out}{err}");
    // Summed in threes (nothing timed, so nothing restored); an `Err` is still returned.
    assert_eq!(
        line(&out, "sums"),
        "Ok(true) [15, 24] total 3",
        "{out}{err}"
    );
    assert_eq!(line(&out, "sums empty"), "Err(\"empty\")", "{out}{err}");

    // 3. A device nobody tuned on times the portable set, as instances.
    let (out, err) = run(false, &[("TUNABLE_DEVICE", "cpu: elsewhere")]);
    assert_eq!(line(&out, "probe"), "(4, true)", "{out}{err}");
    assert!(
        err.contains("probe has no tuned configuration for device"),
        "{err}"
    );
    // Each candidate ran after `restore`, and the caller's run too.
    assert_eq!(line(&out, "sums"), "Ok(true) [6, 15] total 6", "{out}{err}");

    // 4. A tuning build runs the generic body only, baked entries included.
    let (out, err) = run(true, &[("TUNABLE_MODE", "off")]);
    assert_eq!(line(&out, "probe"), "(4, false)", "{out}{err}");
    assert_eq!(line(&out, "big"), "(37, 61, false)", "{out}{err}");
    assert_eq!(
        line(&out, "sums"),
        "Ok(false) [15, 24] total 3",
        "{out}{err}"
    );
    std::fs::remove_dir_all(&c.dir).ok();
}
