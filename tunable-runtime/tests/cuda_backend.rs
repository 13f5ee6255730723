//! The CUDA backend: NVRTC compiles per configuration without a GPU (CI installs NVRTC from
//! PyPI), failures carry NVRTC's log; with a GPU, launches are event-timed and limits are typed
//! failures. Each part skips, with a printed reason, where its library or device is missing.
#![cfg(feature = "cuda")]
#![allow(unsafe_code)]

use tunable_runtime::backend::cuda::{Cuda, CudaError, compile};
use tunable_runtime::backend::{Dims, Source};
use tunable_runtime::measure::time_once;

mod common;
use common::{Tile, nvrtc_found, skip};

/// Static shared memory of TILE * TILE floats: TILE = 128 needs 64 KiB, beyond the 48 KiB a
/// block may declare statically; TILE = 7 is rejected by the source itself.
static COPY: Source = Source::new(
    "copy",
    r#"
static_assert(TILE != 7, "TILE must not be 7");
extern "C" __global__ void copy(const float *x, float *y, int n) {
    __shared__ float s[TILE * TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x % (TILE * TILE)] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[threadIdx.x % (TILE * TILE)];
}
"#,
);

#[test]
fn nvrtc_compiles_per_configuration_and_failures_carry_the_log() {
    if !nvrtc_found() {
        return;
    }
    let ok = compile(&COPY, &Tile(16), "sm_80").unwrap();
    assert!(ok.ptx.contains(".entry copy("), "{}", ok.ptx);
    assert!(ok.cubin.as_ref().is_some_and(|c| c.starts_with(b"\x7fELF")));
    let ptx_only = compile(&COPY, &Tile(16), "compute_80").unwrap();
    assert!(ptx_only.cubin.is_none() && ptx_only.ptx.contains(".target sm_80"));
    // The definition reaches the source: a different tile is a different shared array (bytes).
    let other = compile(&COPY, &Tile(8), "compute_80").unwrap();
    assert!(
        ptx_only.ptx.contains("s[1024]") && other.ptx.contains("s[256]"),
        "{}",
        other.ptx
    );
    // Rejected by the front end, with the message in the log.
    let e = compile(&COPY, &Tile(7), "sm_80").unwrap_err();
    assert!(
        matches!(&e, CudaError::Compile { config, log } if config == "TILE=7" && log.contains("TILE must not be 7")),
        "{e}"
    );
    // Rejected by ptxas for the real architecture: 64 KiB of static shared memory.
    let e = compile(&COPY, &Tile(128), "sm_80").unwrap_err();
    assert!(
        matches!(&e, CudaError::Compile { log, .. } if log.contains("too much shared data")),
        "{e}"
    );
    // A wrong entry point name.
    let wrong = Source::new("kopy", COPY.code);
    let e = compile(&wrong, &Tile(16), "sm_80").unwrap_err();
    assert!(matches!(e, CudaError::NoKernel { .. }), "{e}");
}

#[test]
fn without_a_driver_the_error_names_the_library() {
    match Cuda::new(0) {
        Ok(gpu) => println!("GPU present: {}", gpu.device_id()),
        Err(e @ CudaError::MissingLibrary { library, .. }) => {
            assert!(
                library == "libcuda.so.1" || library.contains("libnvrtc.so.13"),
                "{e}"
            );
            assert!(e.to_string().contains(library));
            println!("no GPU here: {e}");
        }
        Err(e @ CudaError::NoDevice { .. }) => println!("no GPU here: {e}"),
        Err(e) => panic!("unexpected error without a GPU: {e}"),
    }
}

#[test]
fn on_a_gpu_launches_are_event_timed_and_limits_are_failures() {
    let gpu = match Cuda::new(0) {
        Ok(g) => g,
        Err(e) => {
            skip("cuda", e);
            return;
        }
    };
    let n = 1 << 16;
    let x = gpu
        .upload(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
        .unwrap();
    let y = gpu.alloc::<f32>(n).unwrap();
    let k = gpu.kernel(&COPY, &Tile(16)).unwrap();
    let t = time_once(&mut || {
        // SAFETY: (const float*, float*, int); indices checked against n.
        unsafe {
            k.launch(Dims::cover(n, 256usize))
                .arg(&x)
                .arg(&y)
                .arg(&(n as i32))
                .run()
        }
        .map_err(|e| e.to_string())
    })
    .unwrap();
    assert!(t > 0.0 && t < 1000.0, "{t}");
    assert_eq!(y.read().unwrap(), x.read().unwrap());
    // More threads per block than the device allows.
    let big = gpu.limits().max_threads_per_block * 2;
    // SAFETY: rejected before the launch.
    let e = unsafe {
        k.launch(Dims::cover(n, big))
            .arg(&x)
            .arg(&y)
            .arg(&(n as i32))
            .run()
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            CudaError::TooManyThreads { .. } | CudaError::Dimension { .. }
        ),
        "{e}"
    );
    // A configuration ptxas rejects is a compile failure here too.
    let e = gpu.kernel(&COPY, &Tile(128)).unwrap_err();
    assert!(matches!(e, CudaError::Compile { .. }), "{e}");
}
