//! What the examples share: their command line, their inputs and CPU references, what the tuned
//! file holds, and the comparisons they print after the tuned call. An example includes it with
//! `#[path = "support/mod.rs"] mod support;`; the kernel, its attribute and its launch stay in
//! the example's own file.

// Each example uses part of this module.
#![allow(dead_code)]

use std::fmt::Display;
use std::str::FromStr;
use std::time::Instant;
use tunable::compare::{ROUNDS, side_by_side};
use tunable::{Params, Space};

/// An example's command line: flags (`--exhaustive`) and flags with a value (`--n 512`).
pub struct Args(Vec<String>);

impl Args {
    /// The program's arguments.
    pub fn from_env() -> Args {
        Args(std::env::args().collect())
    }

    /// Whether `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.0.iter().any(|a| a == flag)
    }

    /// The word after `flag`, unless the flag is absent, last, or followed by another flag: for
    /// flags whose value is optional (`--ptx` or `--ptx sm_90`).
    pub fn optional(&self, flag: &str) -> Option<&str> {
        let at = self.0.iter().position(|a| a == flag)?;
        self.0
            .get(at + 1)
            .map(String::as_str)
            .filter(|v| !v.starts_with("--"))
    }

    /// The word after `flag`, if the flag was given; a flag without one ends the program.
    fn word(&self, flag: &str) -> Option<&str> {
        let at = self.0.iter().position(|a| a == flag)?;
        match self.0.get(at + 1) {
            Some(v) => Some(v),
            None => exit(&format!("{flag} needs a value")),
        }
    }

    /// The value after `flag`, or `default` when the flag is absent; a value that does not parse
    /// ends the program with a message.
    pub fn value<T: FromStr>(&self, flag: &str, default: T) -> T {
        match self.word(flag) {
            None => default,
            Some(v) => v
                .parse()
                .unwrap_or_else(|_| exit(&format!("{flag} {v}: not a valid value"))),
        }
    }

    /// The configuration after `flag`, written as its values in declaration order separated
    /// by commas (`--against 16,64,32,8`), e.g. another tuning's choice.
    pub fn config<P: Params>(&self, flag: &str) -> Option<P> {
        let v = self.word(flag)?;
        let values: Vec<tunable::Value> = v
            .split(',')
            .map(|x| match x.trim().parse() {
                Ok(i) => tunable::Value::Int(i),
                Err(_) => exit(&format!("{flag} {v}: integers separated by commas")),
            })
            .collect();
        Some(P::from_values(&values).unwrap_or_else(|| {
            exit(&format!(
                "{flag} {v}: one value per parameter, in the order {}",
                P::NAMES.join(",")
            ))
        }))
    }
}

/// Ends the program with `message` on standard error.
pub fn exit(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// The device `opened`, or the end of the program with the reason it could not be opened.
pub fn or_exit<T, E: Display>(example: &str, opened: Result<T, E>) -> T {
    opened.unwrap_or_else(|e| exit(&format!("{example}: {e}")))
}

/// Two `n` × `n` input matrices, row-major, with values in `[-1, 1]`.
pub fn matrices(n: usize) -> (Vec<f32>, Vec<f32>) {
    inputs(n * n, n * n)
}

/// Two inputs of `a` and `b` elements with values in `[-1, 1]`: the matrices of a product whose
/// shapes differ.
pub fn inputs(a: usize, b: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..a).map(|i| ((i * 7) % 13) as f32 / 6.0 - 1.0).collect();
    let b = (0..b).map(|i| ((i * 5) % 11) as f32 / 5.0 - 1.0).collect();
    (a, b)
}

/// `a` × `b` on the CPU, for `n` × `n` row-major matrices.
pub fn cpu_matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            for j in 0..n {
                c[i * n + j] += aik * b[k * n + j];
            }
        }
    }
    c
}

/// The largest error of `got` against `want`: relative where `want` exceeds 1 in magnitude,
/// absolute below.
pub fn max_error(got: &[f32], want: &[f32]) -> f32 {
    got.iter()
        .zip(want)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0f32, f32::max)
}

/// FNV-1a of a result's bits: equal checksums, identical results.
pub fn checksum(c: &[f32]) -> u64 {
    c.iter()
        .flat_map(|x| x.to_bits().to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// `s` as a JSON string literal, for the reports examples write for `scripts/gpu-check`.
pub fn json_string(s: &str) -> String {
    let body: String = s
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect();
    format!("\"{body}\"")
}

/// `v` as a JSON number, `null` where it is not finite.
pub fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// What the crate's tuned file holds for `kernel` on `device` at `key`, in words: the
/// evaluations and the strategy of its tuning, or that nothing is stored.
pub fn tuned_from(kernel: &str, device: &str, key: u64) -> String {
    let file = tunable::tuned::tuned_file(
        &tunable::tuned::tuned_dir(env!("CARGO_MANIFEST_DIR")),
        kernel,
    )
    .expect("a valid kernel name");
    tunable::tuned::read(&file)
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.device == device && e.key == key)
        .map_or_else(
            || "nothing stored for this device".to_owned(),
            |e| format!("{} evaluations, {}", e.evaluations, e.strategy),
        )
}

/// Times every configuration of `space` through `run` as [`side_by_side`] does, prints the
/// fastest and the first failures, and returns the fastest (none if every one failed).
pub fn sweep<P: Params, E: Display>(
    space: &Space,
    mut run: impl FnMut(&P) -> Result<(), E>,
) -> Option<P> {
    let start = Instant::now();
    let (mut best, mut failed) = (None::<(f64, P)>, Vec::new());
    for pos in 0..space.len() {
        let p = P::from_values(&space.values(pos)).expect("a configuration of its own space");
        match side_by_side(&[p], ROUNDS, &mut run).remove(0) {
            Ok(t) if best.is_none_or(|(ms, _)| t.ms < ms) => best = Some((t.ms, p)),
            Ok(_) => {}
            Err(e) => failed.push(e),
        }
    }
    match best {
        Some((ms, p)) => println!(
            "  exhaustive: best {p:?}: {ms:.3} ms over {} configurations ({} failed) in {:.0} s",
            space.len(),
            failed.len(),
            start.elapsed().as_secs_f64()
        ),
        None => println!("  exhaustive: every configuration failed"),
    }
    for e in failed.iter().take(5) {
        println!("    failed: {e}");
    }
    best.map(|(_, p)| p)
}

/// Compares the tuned configuration with a reference, if the command line names one: the best
/// of a sweep of `space` (`--exhaustive`) or a configuration named with `--against` (values in
/// declaration order), both re-timed alike and interleaved ([`retime`]).
pub fn compare<P: Params, E: Display>(
    args: &Args,
    space: &Space,
    tuned: P,
    mut run: impl FnMut(&P) -> Result<(), E>,
) {
    let reference = if args.has("--exhaustive") {
        sweep(space, &mut run)
    } else {
        args.config("--against")
    };
    if let Some(reference) = reference {
        retime(reference, tuned, run);
    }
}

/// Times `reference` (a sweep's winner or a configuration named on the command line) and the
/// tuned configuration again, alike and interleaved, and prints their ratio. A sweep's minimum
/// is biased low, the best of many noisy timings; this comparison is not.
pub fn retime<P: Params, E: Display>(reference: P, tuned: P, run: impl FnMut(&P) -> Result<(), E>) {
    let t = side_by_side(&[reference, tuned], ROUNDS, run);
    let [Ok(t_ref), Ok(t_tuned)] = [&t[0], &t[1]] else {
        panic!("the reference or the tuned configuration failed: {t:?}");
    };
    println!(
        "  re-timed, interleaved: reference {reference:?} {:.3} ms, tuned {:.3} ms; tuned / reference = {:.3}",
        t_ref.ms,
        t_tuned.ms,
        t_tuned.ms / t_ref.ms
    );
}
