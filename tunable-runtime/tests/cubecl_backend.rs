//! The CubeCL backend on a real device (lavapipe in CI): every configuration of a small space
//! computes the right answer through its comptime arguments, `CubeDim` and `CubeCount`; a
//! `CubeDim` or `CubeCount` beyond the device's limits is a limit error of its configuration,
//! launched nothing; a kernel whose expansion fails is a launch error naming it; a tuning
//! records those and wrong answers as failed configurations and completes with a correct
//! winner. Skips, with a printed reason, where no wgpu adapter exists, unless `TUNABLE_REQUIRE`
//! names `vulkan`.
#![cfg(feature = "cubecl")]

use cubecl::prelude::*;
use std::sync::Arc;
use tunable_runtime::backend::cubecl::{Array as DeviceArray, CubeCl, CubeclError};
use tunable_runtime::evaluation::{self, EvalContext};
use tunable_runtime::measure::time_once;
use tunable_runtime::tuner::Call;
use tunable_runtime::verify::Output;
use tunable_search::{SpaceBuilder, Value};

mod common;
use common::{add_one_data, failed, params, tune_every};

/// The device, or `None` after skipping. One per test binary: lavapipe is slow to open.
fn device() -> Option<CubeCl> {
    static GPU: std::sync::OnceLock<Result<CubeCl, String>> = std::sync::OnceLock::new();
    let open = || CubeCl::new().map_err(|e| e.to_string());
    common::device(&GPU, "vulkan", open, |gpu| {
        format!("{} {:?}", gpu.device_id(), gpu.limits())
    })
}

params!(Config: "block", "per_thread", "refuse", "wrong");

/// `y = x + 1`, `per_thread` elements per unit; `refuse` fails the kernel's expansion (the
/// way a comptime check of a real kernel refuses a configuration), `wrong` adds 0.5.
#[cube(launch)]
fn add_one(
    x: &[f32],
    y: &mut [f32],
    #[comptime] per_thread: u32,
    #[comptime] refuse: bool,
    #[comptime] wrong: bool,
) {
    comptime!(assert!(!refuse, "this configuration refuses to expand"));
    for k in 0..per_thread {
        let i = ABSOLUTE_POS * per_thread as usize + k as usize;
        if i < y.len() {
            let mut v = x[i] + 1.0;
            if wrong {
                v += 0.5;
            }
            y[i] = v;
        }
    }
}

/// Launches `add_one` in configuration `p` over `n` elements.
fn run(
    gpu: &CubeCl,
    p: &Config,
    x: &DeviceArray<f32>,
    y: &DeviceArray<f32>,
    n: usize,
) -> Result<(), CubeclError> {
    let [block, per_thread, refuse, wrong] = p.0;
    let (block, per_thread) = (block as u32, per_thread as u32);
    let cubes = (n as u32).div_ceil(block * per_thread);
    gpu.launch(
        p,
        CubeCount::Static(cubes, 1, 1),
        CubeDim::new_1d(block),
        |client, count, dim| {
            add_one::launch(
                client,
                count,
                dim,
                x.arg(),
                y.arg(),
                per_thread,
                refuse != 0,
                wrong != 0,
            )
        },
    )
}

#[test]
fn every_configuration_of_a_small_space_computes_the_answer() {
    let Some(gpu) = device() else { return };
    let n = 5000usize;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let expected: Vec<f32> = host.iter().map(|v| v + 1.0).collect();
    let x = gpu.upload(&host);
    let mut y = gpu.zeros::<f32>(n);
    let mut configurations = 0;
    // Block sizes no other test of this binary launches: each configuration's first launch here
    // is its first in the process.
    for block in [1, 16, 48, 96, 192] {
        for per_thread in [1, 2, 3, 4] {
            let p = Config([block, per_thread, 0, 0]);
            y.write(&vec![0.0; n]);
            // The first launch compiles the kernel: its wall time beyond the kernel's is
            // reported as compile time; it is timed on the device like every launch.
            let (r, cx) = evaluation::scope(EvalContext::default(), || {
                time_once(&mut || run(&gpu, &p, &x, &y, n).map_err(|e| e.to_string()))
            });
            r.unwrap_or_else(|e| panic!("{p:?}: {e}"));
            assert!(cx.compile_s > 0.0, "{p:?}: no compile time reported");
            assert_eq!(y.read().unwrap(), expected, "{p:?}");
            // The second launch of the same configuration compiles nothing.
            y.write(&vec![0.0; n]);
            let (r, cx) = evaluation::scope(EvalContext::default(), || run(&gpu, &p, &x, &y, n));
            r.unwrap();
            assert_eq!(cx.compile_s, 0.0, "{p:?} compiled twice");
            assert_eq!(y.snapshot().unwrap().len(), n);
            configurations += 1;
        }
    }
    assert_eq!(configurations, 20);
}

#[test]
fn cube_dims_and_counts_over_the_limits_are_limit_errors_and_launch_nothing() {
    let Some(gpu) = device() else { return };
    let limits = gpu.limits().clone();
    let x = gpu.upload(&[1.0f32; 64]);
    let y = gpu.zeros::<f32>(64);
    let launch = |count: CubeCount, dim: CubeDim| {
        let mut launched = false;
        let r = gpu.launch(&Config([0, 0, 0, 0]), count, dim, |client, count, dim| {
            launched = true;
            add_one::launch(client, count, dim, x.arg(), y.arg(), 1, false, false)
        });
        (r, launched)
    };
    let over_x = limits.max_workgroup_size[0] + 1;
    let side = (f64::from(limits.max_invocations).sqrt() as u32 + 1)
        .min(limits.max_workgroup_size[0])
        .min(limits.max_workgroup_size[1]);
    let cases = [
        (
            CubeCount::Static(1, 1, 1),
            CubeDim::new_1d(over_x),
            format!("CubeDim x is {over_x}; the device allows 1 to"),
        ),
        (
            CubeCount::Static(1, 1, 1),
            CubeDim::new_2d(side, side),
            format!("CubeDim [{side}, {side}, 1] has {} units", side * side),
        ),
        (
            CubeCount::Static(1, limits.max_workgroups_per_dimension + 1, 1),
            CubeDim::new_1d(1),
            format!(
                "CubeCount y is {}; the device allows at most",
                limits.max_workgroups_per_dimension + 1
            ),
        ),
    ];
    for (count, dim, reason) in cases {
        let (r, launched) = launch(count, dim);
        match r {
            Err(CubeclError::Limit {
                config,
                reason: got,
            }) => {
                assert_eq!(config, "block=0, per_thread=0, refuse=0, wrong=0");
                assert!(got.contains(&reason), "{got} (expected {reason})");
            }
            other => panic!("{reason}: {other:?}"),
        }
        assert!(!launched, "{reason}: launched");
    }
    // The device is fine afterwards.
    let p = Config([64, 1, 0, 0]);
    run(&gpu, &p, &x, &y, 64).unwrap();
    assert_eq!(y.read().unwrap(), vec![2.0; 64]);
}

#[test]
fn a_kernel_that_fails_to_expand_is_a_launch_error_of_its_configuration() {
    let Some(gpu) = device() else { return };
    let x = gpu.upload(&[1.0f32; 64]);
    let y = gpu.zeros::<f32>(64);
    let p = Config([64, 1, 1, 0]);
    match run(&gpu, &p, &x, &y, 64) {
        Err(CubeclError::Launch { config, reason }) => {
            assert_eq!(config, "block=64, per_thread=1, refuse=1, wrong=0");
            assert!(reason.contains("refuses to expand"), "{reason}");
            assert!(!reason.contains('\n'), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // The next launch is unaffected.
    run(&gpu, &Config([64, 1, 0, 0]), &x, &y, 64).unwrap();
    assert_eq!(y.read().unwrap(), vec![2.0; 64]);
}

#[test]
fn a_tuning_records_limit_expansion_and_wrong_answer_failures_and_completes() {
    let Some(gpu) = device() else { return };
    let n = 4096usize;
    let (host, expected) = add_one_data(n);
    let x = gpu.upload(&host);
    let y = gpu.zeros::<f32>(n);
    let too_big = i64::from(gpu.limits().max_invocations) * 2;
    let space = Arc::new(
        SpaceBuilder::new()
            .param("block", [32, 64, too_big])
            .param("per_thread", [1, 2])
            .param("refuse", [0, 1])
            .param("wrong", [0, 1])
            .build()
            .unwrap(),
    );
    let mut call = |call: Call<'_, Config>| match call {
        Call::Run(p) => run(&gpu, p, &x, &y, n)
            .map(|()| None)
            .map_err(|e| e.to_string()),
        Call::Output => y.snapshot().map(Some),
        Call::Answer => Ok(None),
    };
    let report = tune_every(&space, &mut call, expected, 1);
    assert_eq!(report.evaluations, 24);
    let reasons = &report.failures;
    let count = |what: &str| failed(&report, what);
    // 8 are over the limit (block beyond the device's), 8 of the remaining 16 refuse to
    // expand, 4 of the remaining 8 are wrong.
    assert_eq!(count(&format!("block={too_big}")), 8, "{reasons:#?}");
    assert_eq!(count("the device allows"), 8, "{reasons:#?}");
    assert_eq!(count("refuses to expand"), 8, "{reasons:#?}");
    assert_eq!(count("wrong output"), 4, "{reasons:#?}");
    assert_eq!(reasons.len(), 20, "{reasons:#?}");
    let best = report.best.expect("a valid variant won").0;
    let values = space.values(best);
    assert_eq!(
        values[2..],
        [Value::Int(0), Value::Int(0)],
        "the winner is correct"
    );
}

#[test]
fn reads_see_every_write() {
    let Some(gpu) = device() else { return };
    let mut y = gpu.upload(&[1.0f32, 2.0, 3.0]);
    assert_eq!(tunable_runtime::verify::read(&y).unwrap(), [1.0, 2.0, 3.0]);
    y.write(&[4.0, 5.0]);
    assert_eq!(y.len(), 2);
    assert_eq!(tunable_runtime::verify::read(&y).unwrap(), [4.0, 5.0]);
    let ints = gpu.upload::<i32>(&[-7, 8]);
    assert_eq!(ints.snapshot().unwrap(), [-7.0, 8.0]);
}
