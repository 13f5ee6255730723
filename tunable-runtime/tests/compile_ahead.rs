//! Compiling a batch ahead on the OpenCL device (PoCL in CI): a tuning in batches compiles each
//! batch on the compile pool, records the configurations that do not compile with the compiler's
//! reason, and goes on to a winner. Skips, with a printed reason, where no OpenCL device exists.
#![cfg(feature = "opencl")]
#![allow(unsafe_code)]

use std::sync::Arc;
use tunable_runtime::ahead;
use tunable_runtime::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable_runtime::backend::{Dims, Source};
use tunable_runtime::measure::Repeats;
use tunable_runtime::params::Params;
use tunable_runtime::tuner::{Call, TuneOptions, Variants, tune};
use tunable_runtime::verify::Output;
use tunable_search::{SpaceBuilder, Value};

mod common;
use common::skip;

/// The work-group size and the elements per work-item; PER == 3 does not compile.
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

static SCALE: Source = Source::new(
    "scale",
    r#"
#if PER == 3
#error PER=3 is not supported
#endif
__kernel void scale(__global const float *x, __global float *y, int n) {
    int base = get_global_id(0) * PER;
    for (int k = 0; k < PER; k++) {
        int i = base + k;
        if (i < n) y[i] = 2.0f * x[i];
    }
}
"#,
);

fn scale(
    cl: &OpenCl,
    cfg: &Cfg,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    n: usize,
) -> Result<(), OpenClError> {
    let k = cl.kernel(&SCALE, cfg)?;
    let dims = Dims::divide(n, cfg.block, cfg.block * cfg.per);
    // SAFETY: (const float*, float*, int); every index is checked against n.
    unsafe { k.launch(dims).arg(x).arg(y).arg(&(n as i32)).run() }
}

#[test]
fn a_batch_compiles_ahead_failures_are_data_and_the_tuning_goes_on() {
    let cl = match OpenCl::new() {
        Ok(cl) => cl,
        Err(e) => return skip("opencl", e),
    };
    let n = 4096usize;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = cl.upload(&host).unwrap();
    let y = cl.alloc::<f32>(n).unwrap();
    let expected: Vec<f64> = host.iter().map(|v| 2.0 * f64::from(*v)).collect();
    let space = Arc::new(
        SpaceBuilder::new()
            .param("BLOCK", [16, 32, 64])
            .param("PER", [1, 2, 3, 4])
            .build()
            .unwrap(),
    );
    // Collecting: the backend hands the build over and nothing runs.
    let (r, builds) = ahead::collect(|| scale(&cl, &Cfg { block: 16, per: 2 }, &x, &y, n));
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
    let checked = tunable_runtime::tuner::Expected {
        output: expected,
        tolerance: 1e-6,
    };
    let mut variants = Variants::new(&space, &mut run, Some(checked), Repeats::new(0, 3));
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
    assert!(
        runs >= 9 * 4,
        "every configuration that compiles was checked and timed: {runs}"
    );
}
