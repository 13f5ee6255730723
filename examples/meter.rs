//! Which energy meters this machine has, and what a simple loop costs on each.
//!
//! ```text
//! cargo run --release --example meter                      # the CPU (RAPL)
//! cargo run --release --example meter --features cuda      # and CUDA device 0 (NVML)
//! cargo run --release --example meter --features cuda -- 1 # CUDA device 1
//! ```
//!
//! For each meter it prints what it reads and its resolution, or why nothing is measurable
//! there; where a meter reads, the energy per run, mean power and clocks of a loop repeated for
//! a second (`tunable::meter::measure`). Meters only read: nothing of the device is changed.

use std::hint::black_box;
use std::sync::Arc;
use tunable::meter::{self, Energy, Meter};

fn main() {
    match meter::for_cpu() {
        Ok(cpu) => {
            describe("CPU", &*cpu);
            report("CPU", "arithmetic loop", cpu_loop(&cpu));
        }
        Err(why) => println!("CPU: {why}"),
    }
    #[cfg(feature = "cuda")]
    gpu::run();
}

/// Prints what `meter` reads.
fn describe(what: &str, meter: &dyn Meter) {
    let r = meter.resolution();
    let accuracy = r
        .accuracy
        .map_or("none stated".to_owned(), |a| format!("±{:.0}%", a * 100.0));
    println!(
        "{what}: {}; quantum {} J, updates about every {:?}, accuracy {accuracy}",
        meter.name(),
        r.quantum,
        r.update
    );
}

/// Prints one measurement.
fn report(what: &str, work: &str, energy: Result<Energy, meter::Failure>) {
    match energy {
        Ok(e) => {
            let clocks = e.clocks.map_or(String::new(), |c| {
                format!(
                    ", clocks {} MHz graphics, {} MHz memory",
                    c.graphics_mhz, c.memory_mhz
                )
            });
            println!(
                "{what}: {work}: {:.6} J per run (± {:.6} J), {:.1} W, {:?} per run, {} runs{clocks}",
                e.per_run, e.uncertainty, e.power, e.time, e.runs
            );
        }
        Err(why) => println!("{what}: {work}: {why}"),
    }
}

/// About a millisecond of arithmetic on one core, repeated for a second.
fn cpu_loop(meter: &Arc<dyn Meter>) -> Result<Energy, meter::Failure> {
    meter::measure(meter, meter::MIN_DURATION, &mut || {
        let mut x = 1.0f64;
        for _ in 0..1_000_000 {
            x = black_box(x * 1.000_000_1 + 0.5);
        }
        black_box(x);
        Ok(())
    })
}

#[cfg(feature = "cuda")]
mod gpu {
    #![allow(unsafe_code)]

    use super::{describe, report};
    use tunable::backend::cuda::Cuda;
    use tunable::backend::{Dims, Source};
    use tunable::meter;
    use tunable::{Params, Value};

    /// A loop of multiply-adds per thread.
    static SPIN: Source = Source::new(
        "spin",
        r#"
        extern "C" __global__ void spin(float *x, int n, int steps) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            float a = x[i];
            for (int k = 0; k < steps; k++) a = a * 1.000001f + 0.5f;
            x[i] = a;
        }"#,
    );

    /// The kernel has no parameters to tune.
    #[derive(Clone, Copy, Debug)]
    struct Fixed;

    impl Params for Fixed {
        const NAMES: &'static [&'static str] = &[];
        fn from_values(_: &[Value]) -> Option<Self> {
            Some(Fixed)
        }
        fn to_values(&self) -> Vec<Value> {
            Vec::new()
        }
    }

    pub(super) fn run() {
        let ordinal: usize = std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(0);
        let what = format!("GPU {ordinal}");
        let nvml = match meter::for_cuda_device(ordinal) {
            Ok(nvml) => nvml,
            Err(why) => return println!("{what}: {why}"),
        };
        describe(&what, &*nvml);
        let gpu = match Cuda::new(ordinal) {
            Ok(gpu) => gpu,
            Err(e) => return println!("{what}: {e}"),
        };
        let n = 1usize << 22;
        let (steps, count) = (4096i32, n as i32);
        let energy = gpu
            .upload(&vec![1.0f32; n])
            .and_then(|x| Ok((gpu.kernel(&SPIN, &Fixed)?, x)))
            .map_err(|e| meter::Failure::Run(e.to_string()))
            .and_then(|(kernel, x)| {
                meter::measure(&nvml, meter::MIN_DURATION, &mut || {
                    // SAFETY: the kernel takes (float*, int, int) and touches x[0..n] only.
                    unsafe {
                        kernel
                            .launch(Dims::cover(n, 256))
                            .arg(&x)
                            .arg(&count)
                            .arg(&steps)
                            .run()
                    }
                    .map_err(|e| e.to_string())
                })
            });
        report(&what, "multiply-add loop", energy);
    }
}
