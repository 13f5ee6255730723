//! OpenCL kernels tuned end to end through `#[tunable]` with the `autotune` feature, on the
//! machine's OpenCL device (PoCL in CI): the `gemm_opencl` example tunes with verified output and
//! stores the winner's program binary, which a plain build of it embeds and loads, computing what
//! compiling computes; and a kernel with planted faults (configurations that do not compile, a
//! work-group beyond the device's limit, a wrong answer, a launch beyond the time limit) records
//! each as a failed configuration with its reason while the tuning completes and picks a correct
//! variant.
//!
//! Both tune with `--features opencl,autotune` in `target/e2e` (shared with `end_to_end.rs`), so
//! the tuning runs exactly as a user's program would. Skips, printing why, without an OpenCL
//! device.

use std::process::Command;

mod common;
mod temp_crate;
use temp_crate::{TempCrate, first_call, journals, ok, root, scratch};

fn opencl_device() -> bool {
    let cl = tunable::backend::opencl::OpenCl::new();
    common::found(
        "opencl",
        cl.map(|cl| format!("OpenCL device: {}", cl.device_id())),
    )
}

#[test]
fn gemm_opencl_tunes_with_verified_output() {
    if !opencl_device() {
        return;
    }
    let target = root().join("target/e2e");
    ok(Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", "gemm_opencl"])
        .args(["--features", "opencl,autotune"])
        .current_dir(root())
        .env("CARGO_TARGET_DIR", &target));
    let tuned = scratch("gemm-opencl");
    let out = ok(Command::new(target.join("debug/examples/gemm_opencl"))
        .args(["--n", "128"])
        .env("TUNABLE_DIR", &tuned)
        .env("TUNABLE_BUDGET", "12"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    println!("{stdout}");
    // The tuned call's output equals the CPU reference (the example asserts it and says so).
    assert!(
        stdout.contains("result matches the CPU reference"),
        "{stdout}{stderr}"
    );
    // The tuning used its budget, stored a winner for this device, and journaled every run.
    assert!(
        stdout.contains("(12 evaluations, auto)"),
        "{stdout}{stderr}"
    );
    assert!(tuned.join("gemm_opencl.bin").exists());
    let journal = journals(&tuned);
    assert_eq!(journal.matches("\"time\":").count(), 12, "{journal}");
    // Every variant computes the product: none failed verification.
    assert!(!journal.contains("wrong output"), "{journal}");

    // The winner's program binary for this device was stored beside the tuned file; a plain
    // build embeds it and its first call loads it, computing what compiling computes.
    let artifacts = std::fs::read_dir(tuned.join("gemm_opencl.artifacts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(
        artifacts.len() == 1 && artifacts[0].ends_with(".clbin"),
        "{artifacts:?}"
    );
    ok(Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", "gemm_opencl"])
        .args(["--features", "opencl"])
        .current_dir(root())
        .env("CARGO_TARGET_DIR", &target)
        .env("TUNABLE_DIR", &tuned));
    let run = |embedded: &str| {
        let out = ok(Command::new(target.join("debug/examples/gemm_opencl"))
            .args(["--n", "128", "--first-call"])
            .env("TUNABLE_EMBEDDED", embedded));
        let line = first_call(&String::from_utf8_lossy(&out.stdout)).to_owned();
        let checksum = line.rsplit_once("checksum ").unwrap().1.to_owned();
        (
            line,
            checksum,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (loaded, sum_loaded, err) = run("on");
    assert!(loaded.contains("ms (embedded binary)"), "{loaded}\n{err}");
    assert!(!err.contains("compiling from source"), "{err}");
    let (compiled, sum_compiled, _) = run("off");
    assert!(compiled.contains("ms (compiled)"), "{compiled}");
    assert_eq!(sum_loaded, sum_compiled, "{loaded}\n{compiled}");
    // The tuning run's own first call computed the same.
    assert!(
        stdout.contains(&format!("checksum {sum_loaded}")),
        "{stdout}"
    );
    std::fs::remove_dir_all(&tuned).ok();
}

/// A kernel whose space holds every kind of failure. `block = 8192` exceeds PoCL's maximum
/// work-group size (4096); `PER = 3` does not compile; `WRONG = 1` adds 0.5 to the answer;
/// `SLOW = 1` makes one work-item spin for about a second, beyond `TUNABLE_TIMEOUT`.
const FAULTS: &str = r##"
#![allow(unsafe_code)]
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::tunable;

static ADD_ONE: Source = Source::new("add_one", r#"
#if PER == 3
#error PER = 3 is not supported
#endif
__kernel void add_one(__global const float *x, __global float *y, const int n) {
    const int first = get_global_id(0) * PER;
    for (int k = 0; k < PER; k++) {
        const int i = first + k;
        if (i < n) {
            float v = x[i] + 1.0f;
#if WRONG
            v += 0.5f;
#endif
            y[i] = v;
        }
    }
#if SLOW
    if (get_global_id(0) == 0) {
        float s = y[0];
        for (int j = 0; j < 400000000; j++) s = s * 1.0000001f + 1e-9f;
        if (s == 1234.5f) y[1] = s;
    }
#endif
}
"#);

#[tunable(block = [16, 64, 8192], PER = [1, 2, 3], WRONG = [0, 1], SLOW = [0, 1],
          constraint = "WRONG + SLOW <= 1",
          device = cl.device_id(), verify = y, answer = expected, tolerance = 1e-6,
          strategy = "exhaustive", budget = 100, repeats = 2, warmup = 1,
          key = tunable::key::next_power_of_two(n as u64))]
fn add_one(cl: &OpenCl, x: &Buffer<f32>, y: &mut Buffer<f32>, expected: &[f32], n: usize)
    -> Result<(), OpenClError> {
    let dims = Dims::divide(n, block, block * PER);
    // SAFETY: add_one(const float*, float*, int); every index is checked against n.
    unsafe { cl.kernel(&ADD_ONE, params)?.launch(dims).arg(x).arg(y).arg(&(n as i32)).run() }
}

fn main() {
    let cl = OpenCl::new().expect("an OpenCL device");
    let n = 4096;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let expected: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    let x = cl.upload(&host).unwrap();
    let mut y = cl.alloc::<f32>(n).unwrap();
    add_one(&cl, &x, &mut y, &expected, n).unwrap();
    println!("correct {}", y.read().unwrap() == expected);
}
"##;

#[test]
fn planted_faults_are_failed_configurations_with_their_reasons() {
    if !opencl_device() {
        return;
    }
    let c = TempCrate::with_features("faults", FAULTS, &["opencl"]);
    let dir = &c.dir;
    let (stdout, stderr) = c.run(true, &[("TUNABLE_TIMEOUT", "0.25"), ("TUNABLE_LOG", "1")]);
    // The tuning completed and the caller got a correct result from a valid variant.
    assert!(stdout.contains("correct true"), "{stdout}{stderr}");
    let journal = journals(&dir.join("tuned"));
    // One record per line; the failed ones with their reason.
    let failed = |reason: &[&str]| {
        journal
            .lines()
            .filter(|l| l.contains("RuntimeFailedConfig") && reason.iter().all(|r| l.contains(r)))
            .count()
    };
    // 27 configurations, 4 of them valid: 9 do not compile (PER = 3, with the build log), 6 more
    // exceed the work-group limit (block = 8192), 4 compute a wrong answer, 4 time out.
    assert_eq!(journal.matches("\"time\":").count(), 27, "{journal}");
    assert_eq!(failed(&[]), 23, "{journal}");
    assert_eq!(
        failed(&["does not compile", "PER = 3 is not supported"]),
        9,
        "{journal}"
    );
    assert_eq!(
        failed(&["block=8192", "work-group", "exceeds"]),
        6,
        "{journal}"
    );
    assert_eq!(
        failed(&["wrong output: 4096 of 4096 elements differ"]),
        4,
        "{journal}"
    );
    assert_eq!(failed(&["SLOW=1", "timed out"]), 4, "{journal}");
    let stored = std::fs::read(dir.join("tuned/add_one.bin")).unwrap();
    assert!(!stored.is_empty());
    std::fs::remove_dir_all(dir).ok();
}

/// A kernel whose OpenCL source is a file of the crate (`include_str!`), tuned without `verify`:
/// the body only names the file, so the journal is kept per program source, which the tuning
/// learns by running the default configuration once.
const FROM_FILE: &str = r##"
#![allow(unsafe_code)]
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::tunable;

static FILL: Source = Source::new("fill", include_str!("fill.cl"));

#[tunable(block = [16, 32, 64], device = cl.device_id(), strategy = "exhaustive", budget = 3,
          repeats = 1, warmup = 0, key = tunable::key::next_power_of_two(n as u64))]
fn fill(cl: &OpenCl, y: &mut Buffer<f32>, n: usize) -> Result<(), OpenClError> {
    let dims = Dims::divide(n, block, block);
    // SAFETY: fill(float*, int); every index is checked against n.
    unsafe { cl.kernel(&FILL, params)?.launch(dims).arg(y).arg(&(n as i32)).run() }
}

fn main() {
    let cl = OpenCl::new().expect("an OpenCL device");
    let n = 1024;
    let mut y = cl.alloc::<f32>(n).unwrap();
    fill(&cl, &mut y, n).unwrap();
    println!("filled with {}", y.read().unwrap()[n - 1]);
}
"##;

/// The kernel's source file, filling with `VALUE`; with `default_fails`, the default
/// configuration (block 16) does not compile.
fn fill_cl(value: &str, default_fails: bool) -> String {
    let fails = if default_fails {
        "#if block == 16\n#error the default does not compile\n#endif\n"
    } else {
        ""
    };
    format!(
        "{fails}#define VALUE {value}\n__kernel void fill(__global float *y, const int n) {{\n    const int i = get_global_id(0);\n    if (i < n) y[i] = VALUE;\n}}\n"
    )
}

#[test]
fn an_edited_kernel_source_file_is_not_answered_from_the_old_journal() {
    if !opencl_device() {
        return;
    }
    let c = TempCrate::with_features("from_file", FROM_FILE, &["opencl"]);
    let dir = &c.dir;
    // Builds the crate with `fill.cl` filling with `value`, runs it, and answers what the call
    // computed, how many configurations the tuning measured, and the journals in `tuned/`.
    let tune = |value: &str, default_fails: bool| {
        std::fs::write(dir.join("src/fill.cl"), fill_cl(value, default_fails)).unwrap();
        let _ = std::fs::remove_file(dir.join("tuned/fill.bin"));
        let (stdout, stderr) = c.run(true, &[]);
        // The summary (a failed default's build log makes it several lines long).
        let summary = stderr
            .split_once("tunable: tuned fill (key 1024)")
            .map(|(_, summary)| summary)
            .unwrap_or_else(|| panic!("no summary:\n{stdout}{stderr}"));
        let measured: usize = summary
            .split_once(" evaluations (")
            .and_then(|(_, rest)| rest.split_once(" measured"))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("no measured count: {summary}"));
        let journals = std::fs::read_dir(dir.join("tuned"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".cache.json")
            })
            .count();
        (stdout, measured, journals)
    };
    // 1. The first tuning measures the whole space and journals it.
    let (out, measured, journals) = tune("1.0f", false);
    assert!(out.contains("filled with 1"), "{out}");
    assert_eq!((measured, journals), (3, 1), "{out}");
    // 2. Tuning the same source again (the tuned file deleted) is answered by the journal.
    let (out, measured, journals) = tune("1.0f", false);
    assert!(out.contains("filled with 1"), "{out}");
    assert_eq!(
        (measured, journals),
        (0, 1),
        "the journal should answer: {out}"
    );
    // 3. After an edit of the source file (the Rust body unchanged) nothing is answered from the
    // old journal: the new source is measured, in a journal of its own.
    let (out, measured, journals) = tune("2.0f", false);
    assert!(out.contains("filled with 2"), "{out}");
    assert_eq!(
        (measured, journals),
        (3, 2),
        "an edited source was answered from the journal: {out}"
    );
    // 4. The same when the default configuration does not compile, so that the only run that
    // shows the program fails: each edit still gets a journal of its own.
    for (value, filled, journals_then) in
        [("3.0f", "filled with 3", 3), ("4.0f", "filled with 4", 4)]
    {
        let (out, measured, journals) = tune(value, true);
        assert!(out.contains(filled), "{out}");
        assert_eq!(
            (measured, journals),
            (3, journals_then),
            "an edited source whose default fails was answered from the journal: {out}"
        );
    }
    std::fs::remove_dir_all(dir).ok();
}
