//! The OpenCL backend on a real device (PoCL in CI): compile per configuration, launch, event
//! timing, every failure as a typed error naming the configuration, and a tuning in batches
//! prebuilt on a pool. Skips, with a printed
//! reason, where no OpenCL device exists.
#![cfg(feature = "opencl")]
#![allow(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;
use tunable_runtime::backend::opencl::{Buffer, Local, OpenCl, OpenClError};
use tunable_runtime::backend::{Dims, Source};
use tunable_runtime::measure::{Repeats, time_once};
use tunable_runtime::params::Params;
use tunable_runtime::prebuild;
use tunable_runtime::tuner::{Call, Expected, TuneOptions, Variants, tune};
use tunable_runtime::verify::Output;
use tunable_search::{SpaceBuilder, Value};

mod common;
use common::opencl_device as device;

/// A configuration: the work-group size and how many elements each work-item handles.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    block: usize,
    per: usize,
}

impl Params for Cfg {
    const NAMES: &'static [&'static str] = &["BLOCK", "PER"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(b), Value::Int(p)] => Some(Cfg {
                block: *b as usize,
                per: *p as usize,
            }),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.block as i64), Value::Int(self.per as i64)]
    }
}

/// y = a * x, each work-item handling PER elements; PER == 3 does not compile, and the
/// `scratch` local buffer is sized by the host.
static SCALE: Source = Source::new(
    "scale",
    r#"
#if PER == 3
#error PER=3 is not supported
#endif
__kernel void scale(__global const float *x, __global float *y, float a, int n, __local float *scratch) {
    int base = get_global_id(0) * PER;
    for (int k = 0; k < PER; k++) {
        int i = base + k;
        if (i < n) y[i] = a * x[i];
    }
    scratch[get_local_id(0)] = 0.0f;
}
"#,
);

static SPIN: Source = Source::new(
    "spin",
    r#"
__kernel void spin(__global float *y, int iterations) {
    float v = y[get_global_id(0)];
    for (int i = 0; i < iterations; i++) v = v * 1.0000001f + 1e-7f;
    y[get_global_id(0)] = v;
}
"#,
);

#[test]
fn launches_verifies_and_reports_device_time() {
    let Some(cl) = device() else { return };
    println!("device: {} {:?}", cl.device_id(), cl.limits());
    assert!(cl.device_id().starts_with("opencl: "));
    let n = 10_000usize;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = cl.upload(&host).unwrap();
    let mut y = cl.alloc::<f32>(n).unwrap();
    for cfg in [Cfg { block: 64, per: 1 }, Cfg { block: 32, per: 4 }] {
        let dims = Dims::divide(n, cfg.block, cfg.block * cfg.per);
        let k = cl.kernel(&SCALE, &cfg).unwrap();
        let t = time_once(&mut || {
            // SAFETY: (const float*, float*, float, int, local float*), indices checked < n.
            unsafe {
                k.launch(dims)
                    .arg(&x)
                    .arg(&y)
                    .arg(&2.0f32)
                    .arg(&(n as i32))
                    .arg(&Local::new::<f32>(cfg.block))
                    .run()
            }
            .map_err(|e| e.to_string())
        })
        .unwrap();
        // The reported time is the kernel's profiling time: positive, and far below a second.
        assert!(t > 0.0 && t < 1000.0, "{t}");
        let out = y.read().unwrap();
        assert!(out.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
        y.write(&vec![0.0; n]).unwrap();
    }
}

#[test]
fn each_failure_is_a_typed_error_with_the_configuration() {
    let Some(cl) = device() else { return };
    let n = 256usize;
    let x = cl.upload(&vec![1.0f32; n]).unwrap();
    let y = cl.alloc::<f32>(n).unwrap();
    let launch = |cfg: Cfg, local: usize| -> Result<(), OpenClError> {
        let k = cl.kernel(&SCALE, &cfg)?;
        // SAFETY: as above.
        unsafe {
            k.launch(Dims::divide(n, cfg.block, cfg.block * cfg.per))
                .arg(&x)
                .arg(&y)
                .arg(&2.0f32)
                .arg(&(n as i32))
                .arg(&Local::new::<f32>(local))
                .run()
        }
    };
    // Compile error in some configurations, with the build log.
    let e = launch(Cfg { block: 32, per: 3 }, 32).unwrap_err();
    assert!(
        matches!(&e, OpenClError::Build { config, log } if config == "BLOCK=32, PER=3" && log.contains("PER=3 is not supported")),
        "{e}"
    );
    // The failure is cached: the same error again, without a rebuild.
    assert_eq!(launch(Cfg { block: 32, per: 3 }, 32).unwrap_err(), e);
    // A work-group beyond the device's limits.
    let too_big = cl.limits().max_work_group_size * 2;
    let e = launch(
        Cfg {
            block: too_big,
            per: 1,
        },
        1,
    )
    .unwrap_err();
    assert!(
        matches!(e, OpenClError::WorkGroupTooLarge { threads, .. } | OpenClError::WorkItemSize { size: threads, .. } if threads == too_big),
        "{e}"
    );
    // Local memory beyond the device's.
    let local = (cl.limits().local_mem_size as usize) / 4 + 1024;
    let e = launch(Cfg { block: 32, per: 1 }, local).unwrap_err();
    assert!(
        matches!(
            e,
            OpenClError::LocalMemory { .. } | OpenClError::Launch { .. }
        ),
        "{e}"
    );
    // Wrong number of arguments.
    let k = cl.kernel(&SCALE, &Cfg { block: 32, per: 1 }).unwrap();
    // SAFETY: rejected before anything is enqueued.
    let e = unsafe { k.launch(Dims::cover(n, 32usize)).arg(&x).run() }.unwrap_err();
    assert!(
        matches!(
            e,
            OpenClError::Arguments {
                expected: 5,
                given: 1,
                ..
            }
        ),
        "{e}"
    );
    // An empty grid.
    // SAFETY: rejected before anything is enqueued.
    let e = unsafe { k.launch(Dims::divide(n, 32usize, 0usize)).arg(&x).run() }.unwrap_err();
    assert!(matches!(e, OpenClError::EmptyLaunch { .. }), "{e}");
    // Every message names the configuration.
    assert!(e.to_string().starts_with("[BLOCK=32, PER=1]"), "{e}");
}

#[test]
fn a_launch_beyond_the_time_limit_times_out() {
    let Some(cl) = device() else { return };
    let y = cl.alloc::<f32>(64).unwrap();
    let cfg = Cfg { block: 64, per: 1 };
    // SAFETY: (float*, int); 64 work-items over 64 elements.
    let launch = |k: &tunable_runtime::backend::opencl::CompiledKernel, iterations: i32| unsafe {
        k.launch(Dims::cover(64usize, 64usize))
            .arg(&y)
            .arg(&iterations)
            .run()
    };
    // Without a limit first: PoCL finishes compiling a kernel for its work-group size on the
    // first launch, which is not the kernel's time.
    launch(&cl.kernel(&SPIN, &cfg).unwrap(), 10).unwrap();
    let limited = cl.with_timeout(Some(Duration::from_millis(30)));
    let k = limited.kernel(&SPIN, &cfg).unwrap();
    let run = |iterations| launch(&k, iterations);
    run(10).unwrap();
    let e = run(100_000_000).unwrap_err();
    assert!(matches!(e, OpenClError::Timeout { .. }), "{e}");
    // The queue was drained: the next launch runs normally.
    run(10).unwrap();
}

/// `y = 2 x` with SCALE in configuration `cfg`.
fn scale(
    cl: &OpenCl,
    cfg: &Cfg,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    n: usize,
) -> Result<(), OpenClError> {
    let k = cl.kernel(&SCALE, cfg)?;
    let dims = Dims::divide(n, cfg.block, cfg.block * cfg.per);
    // SAFETY: (const float*, float*, float, int, local float*), indices checked < n.
    unsafe {
        k.launch(dims)
            .arg(x)
            .arg(y)
            .arg(&2.0f32)
            .arg(&(n as i32))
            .arg(&Local::new::<f32>(cfg.block))
            .run()
    }
}

#[test]
fn a_batch_is_prebuilt_failures_are_data_and_the_tuning_goes_on() {
    let Some(cl) = device() else { return };
    let n = 4096usize;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = cl.upload(&host).unwrap();
    let y = cl.alloc::<f32>(n).unwrap();
    let space = Arc::new(
        SpaceBuilder::new()
            .param("BLOCK", [16, 32, 64])
            .param("PER", [1, 2, 3, 4])
            .build()
            .unwrap(),
    );
    // Collecting: the backend hands the build over and nothing runs.
    let (r, builds) = prebuild::collect(|| scale(&cl, &Cfg { block: 16, per: 2 }, &x, &y, n));
    assert!(matches!(r, Err(OpenClError::Deferred { .. })), "{r:?}");
    assert_eq!(builds.len(), 1);
    let mut runs = 0;
    let mut run = |call: Call<'_, Cfg>| match call {
        Call::Run(cfg) => {
            runs += 1;
            scale(&cl, cfg, &x, &y, n)
                .map(|()| None)
                .map_err(|e| e.to_string())
        }
        Call::Output => y.snapshot().map(Some),
        Call::Answer => Ok(None),
    };
    let expected = Expected {
        output: host.iter().map(|v| 2.0 * f64::from(*v)).collect(),
        tolerance: 1e-6,
    };
    let mut variants = Variants::new(&space, &mut run, Some(expected), Repeats::new(0, 3));
    let opts = TuneOptions {
        budget: space.len(),
        batch: 4,
        strategy: "exhaustive".into(),
        first: vec![0],
        ..TuneOptions::default()
    };
    let report = tune(&space, &opts, &mut variants, &mut []).unwrap();
    drop(variants);
    assert_eq!(report.evaluations, 12);
    let mut failed: Vec<usize> = report.failures.iter().map(|f| f.0).collect();
    failed.sort_unstable();
    // PER = 3 for each block size: positions 2, 6, 10.
    assert_eq!(failed, [2, 6, 10], "{:?}", report.failures);
    for (_, reason) in &report.failures {
        assert!(
            reason.contains("does not compile") && reason.contains("PER=3"),
            "{reason}"
        );
    }
    assert!(report.best.is_some_and(|(p, _)| !failed.contains(&p)));
    assert!(report.spent.compile > 0.0, "{:?}", report.spent);
    // Every configuration that compiles was checked once and timed at least once.
    assert!(runs >= 9 * 2, "{runs}");
}

#[test]
fn the_tuners_reads_reuse_their_memory_and_see_every_write() {
    let Some(cl) = device() else { return };
    common::reads_see_every_write(|d| cl.upload(d).unwrap(), |y, d| y.write(d).unwrap());
}
