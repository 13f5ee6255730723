//! The wgpu backend on a real device (lavapipe in CI): every variant of the examples' spaces
//! computes the right answer or fails with the device limit it breaks; every failure is a typed
//! error naming the configuration; launches report device time and time out; a tuning in
//! batches prebuilt records failures (a WGSL error, a workgroup beyond the limits, a wrong
//! answer) and completes. Skips, with a printed reason, where no wgpu adapter exists, unless
//! `TUNABLE_REQUIRE` names `vulkan`.
#![cfg(feature = "wgpu")]

use std::sync::Arc;
use std::time::Duration;
use tunable_runtime::backend::wgpu::{Buffer, Wgpu, WgpuError};
use tunable_runtime::backend::{Dims, Source};
use tunable_runtime::measure::time_once;
use tunable_runtime::params::Params;
use tunable_runtime::prebuild;
use tunable_runtime::tuner::Call;
use tunable_runtime::verify::Output;
use tunable_search::{SpaceBuilder, Value};

mod common;
use common::{add_one_data, failed, params, tune_every};

/// The device, or `None` after skipping. One per test binary: lavapipe is slow to open.
fn device() -> Option<Wgpu> {
    static GPU: std::sync::OnceLock<Result<Wgpu, String>> = std::sync::OnceLock::new();
    let open = || Wgpu::new().map_err(|e| e.to_string());
    common::device(&GPU, "vulkan", open, |gpu| {
        format!("{} {:?}", gpu.device_id(), gpu.limits())
    })
}

params!(Vadd: "block_size_x", "per_thread");
params!(Mm: "tile", "block_size_x", "block_size_y");
params!(Bad: "block_size_x", "missing");

#[derive(Clone, Copy, Debug)]
struct Fractional(f64);
impl Params for Fractional {
    const NAMES: &'static [&'static str] = &["block_size_x"];
    fn from_values(_: &[Value]) -> Option<Self> {
        None
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Float(self.0)]
    }
}

static VECTOR_ADD: Source = Source::new(
    "vector_add",
    include_str!("../../examples/vector_add_wgpu.wgsl"),
);

fn vector_add(
    gpu: &Wgpu,
    p: &Vadd,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &Buffer<f32>,
    n: usize,
) -> Result<(), WgpuError> {
    let [block, per] = p.0.map(|v| v as usize);
    gpu.kernel(&VECTOR_ADD, p)?
        .launch(Dims::divide(n, block, block * per))
        .arg(a)
        .arg(b)
        .arg(c)
        .run()
}

#[test]
fn every_vector_add_variant_is_correct_or_breaks_a_device_limit() {
    let Some(gpu) = device() else { return };
    let n = 100_003usize;
    let ha: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let hb: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(a, b)| a + b).collect();
    let (a, b) = (gpu.upload(&ha).unwrap(), gpu.upload(&hb).unwrap());
    let mut c = gpu.alloc::<f32>(n).unwrap();
    let limit = gpu.limits().max_invocations;
    let mut ran = 0;
    for block in [32, 64, 128, 256, 512, 1024] {
        for per in [1, 2, 4, 8] {
            c.write(&vec![-1.0; n]).unwrap();
            let p = Vadd([block, per]);
            match vector_add(&gpu, &p, &a, &b, &c, n) {
                Ok(()) => {
                    assert_eq!(c.read().unwrap(), want, "{p:?}");
                    ran += 1;
                }
                Err(WgpuError::Limit { what, .. }) if block as u32 > limit => {
                    assert_eq!(what, "invocations per workgroup");
                }
                Err(e) => panic!("{p:?}: {e}"),
            }
            let k = gpu.kernel(&VECTOR_ADD, &p);
            if let Ok(k) = k {
                assert_eq!(
                    k.workgroup_size(),
                    [block as u32, 1, 1],
                    "the override reached the pipeline"
                );
            }
        }
    }
    assert!(ran >= 16, "{ran}");
}

static MATMUL: Source = Source::new("matmul", include_str!("../../examples/matmul_wgpu.wgsl"));

#[test]
fn every_matmul_variant_is_correct_or_breaks_a_device_limit() {
    let Some(gpu) = device() else { return };
    let n = 128usize;
    let ha: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let hb: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let mut want = vec![0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            for j in 0..n {
                want[i * n + j] += ha[i * n + k] * hb[k * n + j];
            }
        }
    }
    let (a, b) = (gpu.upload(&ha).unwrap(), gpu.upload(&hb).unwrap());
    let c = gpu.alloc::<f32>(n * n).unwrap();
    let mut ran = 0;
    // The example's space: tiles and workgroup shapes with at most 64 outputs per invocation.
    for tile in [16, 32, 64] {
        for bx in [4, 8, 16] {
            for by in [4, 8, 16] {
                if tile % bx != 0 || tile % by != 0 || (tile / bx) * (tile / by) > 64 {
                    continue;
                }
                let p = Mm([tile, bx, by]);
                let [t, bx, by] = p.0.map(|v| v as usize);
                let r = gpu.kernel(&MATMUL, &p).and_then(|k| {
                    k.launch(Dims::divide([n, n], [bx, by], [t, t]))
                        .arg(&a)
                        .arg(&b)
                        .arg(&c)
                        .arg(&(n as u32))
                        .run()
                });
                match r {
                    Ok(()) => {
                        assert_eq!(c.read().unwrap(), want, "{p:?}");
                        ran += 1;
                    }
                    Err(WgpuError::Limit { .. }) => {}
                    Err(e) => panic!("{p:?}: {e}"),
                }
            }
        }
    }
    assert!(ran >= 16, "{ran}");
}

#[test]
fn each_failure_is_a_typed_error_with_the_configuration() {
    let Some(gpu) = device() else { return };
    let n = 1024usize;
    let (a, b) = (gpu.alloc::<f32>(n).unwrap(), gpu.alloc::<f32>(n).unwrap());
    let c = gpu.alloc::<f32>(n).unwrap();
    // A parameter the source does not declare as an override.
    let e = gpu.kernel(&VECTOR_ADD, &Bad([64, 1])).unwrap_err();
    assert!(
        matches!(&e, WgpuError::NoOverride { config, name, declared, .. }
            if config == "block_size_x=64, missing=1" && name == "missing"
                && declared == "block_size_x, per_thread"),
        "{e}"
    );
    // A fraction for a `u32` override, which wgpu would truncate silently.
    let e = gpu.kernel(&VECTOR_ADD, &Fractional(64.5)).unwrap_err();
    assert!(
        matches!(&e, WgpuError::OverrideValue { reason, .. } if reason.contains("does not fit `override block_size_x: u32`")),
        "{e}"
    );
    // A workgroup beyond the device's invocations, and one dimension beyond its maximum.
    let too_big = i64::from(gpu.limits().max_invocations) * 2;
    let e = vector_add(&gpu, &Vadd([too_big, 1]), &a, &b, &c, n).unwrap_err();
    assert!(
        matches!(&e, WgpuError::Limit { value, .. } if *value == too_big as u64),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("[block_size_x={too_big}, per_thread=1] ")),
        "{e}"
    );
    // A dispatch whose block is not the shader's workgroup size.
    let k = gpu.kernel(&VECTOR_ADD, &Vadd([64, 1])).unwrap();
    let e = k
        .launch(Dims::divide(n, 32, 32))
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .run()
        .unwrap_err();
    assert!(
        matches!(
            e,
            WgpuError::Workgroup {
                workgroup: [64, 1, 1],
                ..
            }
        ),
        "{e}"
    );
    // More workgroups than a dimension may have.
    let max = gpu.limits().max_workgroups_per_dimension as usize;
    let e = k
        .launch(Dims::new(max + 1, 64))
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .run()
        .unwrap_err();
    assert!(
        matches!(&e, WgpuError::Limit { what, .. } if what == "workgroups in dimension x"),
        "{e}"
    );
    // Bindings that do not match the shader's: wgpu's validation error, as a value.
    let e = k
        .launch(Dims::divide(n, 64, 64))
        .arg(&a)
        .arg(&b)
        .run()
        .unwrap_err();
    assert!(matches!(&e, WgpuError::Launch { .. }), "{e}");
    // The failed launches left the device usable.
    k.launch(Dims::divide(n, 64, 64))
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .run()
        .unwrap();
    // A WGSL error, with naga's diagnostics; cached: the same error again.
    static BROKEN: Source = Source::new(
        "main",
        "override block_size_x: u32 = 64;\n@compute @workgroup_size(block_size_x)\nfn main() { let x: u32 = 1.5 +; }",
    );
    let p = Fractional(64.0);
    let e = gpu.kernel(&BROKEN, &p).unwrap_err();
    assert!(
        matches!(&e, WgpuError::Build { config, log } if config == "block_size_x=64.0" && log.contains("expected expression")),
        "{e}"
    );
    assert_eq!(gpu.kernel(&BROKEN, &p).unwrap_err(), e);
    // No such entry point.
    static OTHER_ENTRY: Source = Source::new(
        "nope",
        "override block_size_x: u32 = 64;\n@compute @workgroup_size(block_size_x) fn main() {}",
    );
    let e = gpu.kernel(&OTHER_ENTRY, &p).unwrap_err();
    assert!(
        matches!(&e, WgpuError::NoEntryPoint { entry, .. } if entry == "nope"),
        "{e}"
    );
    // Workgroup memory beyond the device's.
    static SHARED: Source = Source::new(
        "main",
        "override block_size_x: u32 = 64;\nvar<workgroup> tile: array<f32, block_size_x>;\n\
         @group(0) @binding(0) var<storage, read_write> y: array<f32>;\n\
         @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n\
             tile[i] = f32(i); workgroupBarrier(); y[i] = tile[63u - i]; }",
    );
    let words = gpu.limits().max_workgroup_storage / 4;
    let e = gpu
        .kernel(&SHARED, &Fractional(f64::from(words) * 2.0))
        .unwrap_err();
    assert!(
        matches!(&e, WgpuError::Limit { what, value, .. }
            if what == "workgroup storage (bytes)" && *value == u64::from(words) * 8),
        "{e}"
    );
    let k = gpu.kernel(&SHARED, &Fractional(64.0)).unwrap();
    assert_eq!(k.workgroup_storage(), 256);
}

/// Spins for `iterations` per invocation. (llvmpipe stops an invocation's loops after 65,535
/// iterations in all: a long launch needs many invocations.)
static SPIN: Source = Source::new(
    "spin",
    "override block_size_x: u32 = 64;\n\
     @group(0) @binding(0) var<storage, read_write> y: array<f32>;\n\
     @group(0) @binding(1) var<uniform> iterations: u32;\n\
     @compute @workgroup_size(block_size_x)\n\
     fn spin(@builtin(global_invocation_id) id: vec3<u32>) {\n\
         var v = y[id.x];\n\
         for (var i = 0u; i < iterations; i++) { v = v * 1.0000001 + 1e-7; }\n\
         y[id.x] = v; }",
);

#[test]
fn launches_report_device_time_and_time_out() {
    let Some(gpu) = device() else { return };
    let groups = 128;
    let y = gpu.alloc::<f32>(groups * 64).unwrap();
    let p = Fractional(64.0);
    let k = gpu.kernel(&SPIN, &p).unwrap();
    let run = |gpu: &Wgpu, groups: usize, iterations: u32| {
        gpu.kernel(&SPIN, &p)?
            .launch(Dims::new(groups, 64))
            .arg(&y)
            .arg(&iterations)
            .run()
    };
    // The first launch (where the driver may compile) is not limited.
    run(&gpu, 1, 1).unwrap();
    let t = time_once(&mut || run(&gpu, 1, 1).map_err(|e| e.to_string())).unwrap();
    assert!(t > 0.0 && t < 1000.0, "{t}");
    // About 5e8 iterations: far beyond 1 ms on any device this test runs on.
    let limited = gpu.with_timeout(Some(Duration::from_millis(1)));
    let e = run(&limited, groups, 60_000).unwrap_err();
    assert!(matches!(e, WgpuError::Timeout { .. }), "{e}");
    // The device is idle and usable again.
    run(&gpu, 1, 1).unwrap();
    println!(
        "timestamps: {}, pipeline cache: {} ({} bytes)",
        gpu.timestamps(),
        gpu.pipeline_cache(),
        k.cache_data().map_or(0, |d| d.len())
    );
    if gpu.pipeline_cache() {
        assert!(k.cache_data().is_some_and(|d| !d.is_empty()));
    }
}

/// Adds one, with planted faults: `per_thread = 3` does not compile (its workgroup array's
/// size divides by zero), `wrong = 1` adds 0.5 more, a block beyond the device's invocations is
/// over the limit.
static FAULTY: Source = Source::new(
    "add_one",
    "override block_size_x: u32 = 64;\noverride per_thread: u32 = 1;\noverride wrong: u32 = 0;\n\
     @group(0) @binding(0) var<storage, read> x: array<f32>;\n\
     @group(0) @binding(1) var<storage, read_write> y: array<f32>;\n\
     var<workgroup> scratch: array<f32, 4u / (3u - per_thread)>;\n\
     @compute @workgroup_size(block_size_x)\n\
     fn add_one(@builtin(global_invocation_id) id: vec3<u32>) {\n\
         scratch[0] = 1.0;\n\
         for (var k = 0u; k < per_thread; k++) {\n\
             let i = id.x * per_thread + k;\n\
             if (i < arrayLength(&y)) { y[i] = x[i] + scratch[0] + f32(wrong) * 0.5; }\n\
         }\n\
     }",
);

params!(Faulty: "block_size_x", "per_thread", "wrong");

#[test]
fn a_tuning_records_wgsl_limit_and_wrong_answer_failures_and_completes() {
    let Some(gpu) = device() else { return };
    let n = 4096usize;
    let (host, expected) = add_one_data(n);
    let x = gpu.upload(&host).unwrap();
    let y = gpu.alloc::<f32>(n).unwrap();
    let too_big = i64::from(gpu.limits().max_invocations) * 2;
    let space = Arc::new(
        SpaceBuilder::new()
            .param("block_size_x", [32, 64, too_big])
            .param("per_thread", [1, 2, 3])
            .param("wrong", [0, 1])
            .build()
            .unwrap(),
    );
    let run_one = |p: &Faulty| -> Result<(), WgpuError> {
        let [block, per, _] = p.0.map(|v| v as usize);
        gpu.kernel(&FAULTY, p)?
            .launch(Dims::divide(n, block, block * per))
            .arg(&x)
            .arg(&y)
            .run()
    };
    // Collecting: the backend hands the pipeline over and nothing runs.
    let (r, builds) = prebuild::collect(|| run_one(&Faulty([32, 1, 0])));
    assert!(matches!(r, Err(WgpuError::Deferred { .. })), "{r:?}");
    assert_eq!(builds.len(), 1);
    let mut run = |call: Call<'_, Faulty>| match call {
        Call::Run(p) => run_one(p).map(|()| None).map_err(|e| e.to_string()),
        Call::Output => y.snapshot().map(Some),
        Call::Answer => Ok(None),
    };
    let report = tune_every(&space, &mut run, expected, 4);
    assert_eq!(report.evaluations, 18);
    let reasons = &report.failures;
    let count = |what: &str| failed(&report, what);
    // 6 do not compile (per_thread = 3), 4 more are over the limit (block_size_x beyond the
    // device's), 4 of the remaining 8 are wrong (wrong = 1).
    assert_eq!(
        count("does not compile: the overrides cannot be applied: Division by zero"),
        6,
        "{reasons:#?}"
    );
    assert_eq!(count("the device allows at most"), 4, "{reasons:#?}");
    assert_eq!(count("wrong output"), 4, "{reasons:#?}");
    assert_eq!(reasons.len(), 14, "{reasons:#?}");
    let best = report.best.expect("a valid variant won").0;
    let values = space.values(best);
    assert_eq!(values[2], Value::Int(0), "the winner is a correct variant");
}

#[test]
fn the_tuners_reads_reuse_one_read_back_buffer_and_see_every_write() {
    let Some(gpu) = device() else { return };
    common::reads_see_every_write(|d| gpu.upload(d).unwrap(), |y, d| y.write(d).unwrap());
    // A length that is not whole words, read twice through the same read-back buffer.
    let bytes = gpu.upload::<u8>(&[7, 8, 9]).unwrap();
    let read = || tunable_runtime::verify::read(&bytes).unwrap();
    assert_eq!(read(), [7.0, 8.0, 9.0]);
    assert_eq!(read(), [7.0, 8.0, 9.0]);
}
