//! What the wgpu backend reports of an embedded pipeline cache blob: a blob wgpu
//! accepts and the driver keeps is used; one wgpu refuses (random bytes, an empty blob) or the
//! driver keeps nothing of (changed data, or a driver whose caches hold no pipelines, as
//! lavapipe's) is reported as not used, with the reason (`cache_refused()`), and the pipeline is
//! still created and runs. Before, `cache_used()` said "used" for any blob handed over, whatever
//! wgpu and the driver then did with it. Runs on
//! lavapipe in CI; skips, printing why, without a wgpu adapter (unless `TUNABLE_REQUIRE` names
//! `vulkan`) or on an adapter without pipeline caches.
#![cfg(feature = "wgpu")]

use std::borrow::Cow;
use std::sync::OnceLock;
use tunable_runtime::backend::wgpu::{Wgpu, WgpuError};
use tunable_runtime::backend::{Dims, Source, definitions};
use tunable_runtime::params::Params;
use tunable_search::Value;
use tunable_search::format::artifact::{Artifact, Kind, Owner, Recipe, encode};

mod common;
use common::skip;

static VECTOR_ADD: Source = Source::new(
    "vector_add",
    include_str!("../../examples/vector_add_wgpu.wgsl"),
);

/// The embedded artifact files of each case, set before its kernel is built.
static EMBEDDED: [OnceLock<Vec<&'static [u8]>>; 4] = [
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
];

/// A configuration of the vector add whose `artifacts()` are case `N`'s (`EMBEDDED[N]`): one
/// type per case, as each kernel's parameter struct carries its own.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Case<const N: usize>(i64, i64);

impl<const N: usize> Params for Case<N> {
    const NAMES: &'static [&'static str] = &["block_size_x", "per_thread"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(b), Value::Int(p)] => Some(Case(*b, *p)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.0), Value::Int(self.1)]
    }
    fn artifacts() -> &'static [&'static [u8]] {
        EMBEDDED[N].get().map_or(&[], Vec::as_slice)
    }
}

/// Runs `p` once on `gpu` (so that the driver has compiled it).
fn run<P: Params>(gpu: &Wgpu, p: &P, block: usize, per: usize) -> Result<(), WgpuError> {
    let n = 4096;
    let (a, b, c) = (
        gpu.alloc::<f32>(n)?,
        gpu.alloc::<f32>(n)?,
        gpu.alloc::<f32>(n)?,
    );
    gpu.kernel(&VECTOR_ADD, p)?
        .launch(Dims::divide(n, block, block * per))
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .run()
}

/// An artifact file holding `blob` as the pipeline cache of configuration `p` on `gpu`.
fn artifact<P: Params>(gpu: &Wgpu, p: &P, blob: &[u8]) -> &'static [u8] {
    let recipe = Recipe {
        kind: Kind::WgpuPipelineCache,
        entry: VECTOR_ADD.kernel.into(),
        target: gpu.device_id().into(),
        source_hash: Recipe::source_hash(VECTOR_ADD.code),
        options: vec![],
        definitions: definitions(p).unwrap(),
    };
    let file = encode(&Artifact {
        owner: Owner {
            kernel: "vector_add".into(),
            device: gpu.device_id().into(),
            params: vec![],
        },
        recipe,
        bytes: Cow::Borrowed(blob),
    });
    Box::leak(file.into_boxed_slice())
}

#[test]
fn a_blob_wgpu_refuses_is_reported_as_not_used_and_the_pipeline_still_runs() {
    let gpu = match Wgpu::new() {
        Ok(gpu) => gpu,
        Err(e) => return skip("vulkan", e),
    };
    if !gpu.pipeline_cache() {
        eprintln!("skipping: {} has no pipeline caches", gpu.device_id());
        return;
    }
    // The blobs, from another handle on the same adapter (so that `gpu` has built nothing).
    let maker = Wgpu::new().unwrap();
    let blob_of = |block: i64| {
        let p = Case::<0>(block, 1);
        run(&maker, &p, block as usize, 1).unwrap();
        maker.kernel(&VECTOR_ADD, &p).unwrap().cache_data().unwrap()
    };
    let (good, broken, random) = (blob_of(64), blob_of(128), blob_of(256));
    println!("pipeline cache blob: {} bytes", good.len());

    // Each case a configuration of its own, so that no pipeline is taken from the handle's
    // compile cache.
    EMBEDDED[0]
        .set(vec![artifact(&gpu, &Case::<0>(64, 1), &good)])
        .unwrap();
    let mut flipped = broken.clone();
    *flipped.last_mut().unwrap() ^= 0xff;
    EMBEDDED[1]
        .set(vec![artifact(&gpu, &Case::<1>(128, 1), &flipped)])
        .unwrap();
    let noise: Vec<u8> = (0..random.len() as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    EMBEDDED[2]
        .set(vec![artifact(&gpu, &Case::<2>(256, 1), &noise)])
        .unwrap();
    EMBEDDED[3]
        .set(vec![artifact(&gpu, &Case::<3>(64, 2), &[])])
        .unwrap();

    let report = |k: &tunable_runtime::backend::wgpu::CompiledKernel, what: &str| {
        println!(
            "{what}: embedded pipeline cache {}",
            k.cache_refused().unwrap_or("used")
        );
        (k.cache_used(), k.cache_refused().map(str::to_owned))
    };
    // wgpu checks its header (length, checksum, adapter): random bytes and an empty blob are
    // refused with its reason.
    let k = gpu.kernel(&VECTOR_ADD, &Case::<2>(256, 1)).unwrap();
    let (used, why) = report(&k, "random bytes");
    assert!(
        !used && why.is_some_and(|w| w.starts_with("wgpu refused the embedded pipeline cache"))
    );
    let k = gpu.kernel(&VECTOR_ADD, &Case::<3>(64, 2)).unwrap();
    let (used, why) = report(&k, "empty");
    assert!(
        !used && why.is_some_and(|w| w.starts_with("wgpu refused the embedded pipeline cache"))
    );
    // A byte of the driver's data changed: refused by wgpu, or kept nothing of by the driver
    // (which checks its own header), never reported as used.
    let k = gpu.kernel(&VECTOR_ADD, &Case::<1>(128, 1)).unwrap();
    let (used, why) = report(&k, "driver data changed");
    let refused =
        |w: &str| w.starts_with("wgpu refused") || w.starts_with("the driver kept nothing");
    assert!(!used && why.is_some_and(|w| refused(&w)));
    // The refused ones still run, from the source.
    run(&gpu, &Case::<1>(128, 1), 128, 1).unwrap();
    run(&gpu, &Case::<2>(256, 1), 256, 1).unwrap();
    run(&gpu, &Case::<3>(64, 2), 64, 2).unwrap();
    // The blob the driver wrote for this very configuration passes wgpu's checks: used where the
    // driver keeps pipelines in its caches, and said to hold nothing where it keeps none
    // (lavapipe writes caches of 96 bytes, a header and no pipeline).
    let k = gpu.kernel(&VECTOR_ADD, &Case::<0>(64, 1)).unwrap();
    let (used, why) = report(&k, "as the driver wrote it");
    assert!(
        used && why.is_none()
            || !used && why.is_some_and(|w| w.starts_with("the driver kept nothing"))
    );
    run(&gpu, &Case::<0>(64, 1), 64, 1).unwrap();
}
