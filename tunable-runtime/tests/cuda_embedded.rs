//! Embedded CUDA images without a GPU: NVRTC's PTX and CUBIN are recorded with recipes that
//! fingerprint the source, options, definitions and architecture; an embedded image that fits
//! is chosen (the CUBIN before the PTX) without compiling, one that does not is never chosen; and
//! choosing an embedded image does not load NVRTC at all (checked in a child process with NVRTC
//! hidden). Loading a module needs a GPU: that part skips, printing why, without one. The rest
//! skips where NVRTC is missing (CI installs it and requires it).
#![cfg(feature = "cuda")]
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use tunable_runtime::backend::cuda::{Cuda, CudaError, image};
use tunable_runtime::backend::record::record;
use tunable_runtime::backend::{Dims, Provenance, Source, definitions};
use tunable_runtime::params::Params;
use tunable_search::Value;
use tunable_search::format::artifact::{
    Artifact, Kind, Owner, Recipe, artifact_dir, decode, encode, read_dir,
};

mod common;
use common::{nvrtc_found, skip};

/// The kernel's text, as a literal for `concat!`.
macro_rules! scale_code {
    () => {
        r#"
extern "C" __global__ void scale(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE * x[i];
}
"#
    };
}

static SCALE: Source = Source::new("scale", scale_code!());

/// The same kernel, edited (a comment): another source text.
static EDITED: Source = Source::new("scale", concat!("// edited", scale_code!()));

static SLOTS: [OnceLock<&'static [&'static [u8]]>; 4] = [const { OnceLock::new() }; 4];

/// A configuration whose embedded artifacts are those of slot `S`.
#[derive(Clone, Copy, Debug)]
struct Cfg<const S: usize>(i64);

impl<const S: usize> Params for Cfg<S> {
    const NAMES: &'static [&'static str] = &["SCALE"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(s)] => Some(Cfg(*s)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.0)]
    }
    fn artifacts() -> &'static [&'static [u8]] {
        SLOTS[S].get().copied().unwrap_or(&[])
    }
}

/// The images NVRTC compiles for `params` on `arch`, as a tuning records them, each as an
/// artifact file.
fn recorded<P: Params>(params: &P, arch: &str) -> Vec<(Recipe, Vec<u8>)> {
    let (img, rec) = record(|| image(&SCALE, params, arch));
    assert_eq!(img.unwrap().provenance, Provenance::Compiled);
    rec.binaries(&definitions(params).unwrap()).unwrap()
}

fn file(recipe: Recipe, bytes: Vec<u8>) -> Vec<u8> {
    encode(&Artifact {
        owner: Owner {
            kernel: "scale".into(),
            device: "cuda: test".into(),
            params: vec![],
        },
        recipe,
        bytes: Cow::Owned(bytes),
    })
}

fn embed<const S: usize>(files: Vec<Vec<u8>>) {
    let files: Vec<&'static [u8]> = files
        .into_iter()
        .map(|f| &*Box::leak(f.into_boxed_slice()))
        .collect();
    SLOTS[S].set(Box::leak(files.into_boxed_slice())).unwrap();
}

#[test]
fn nvrtc_output_is_recorded_with_its_fingerprint() {
    if !nvrtc_found() {
        return;
    }
    let binaries = recorded(&Cfg::<0>(3), "sm_80");
    let kinds: Vec<Kind> = binaries.iter().map(|(r, _)| r.kind).collect();
    assert_eq!(kinds, [Kind::Cubin, Kind::Ptx]);
    let (cubin, ptx) = (&binaries[0], &binaries[1]);
    assert!(cubin.1.starts_with(b"\x7fELF"));
    let text = String::from_utf8(ptx.1.clone()).unwrap();
    assert!(text.contains(".entry scale(") && text.contains(".target sm_80"));
    assert!(!text.ends_with('\0'));
    let want = Recipe {
        kind: Kind::Ptx,
        entry: "scale".into(),
        target: "sm_80".into(),
        source_hash: Recipe::source_hash(SCALE.code),
        options: vec![],
        definitions: vec!["-DSCALE=3".into()],
    };
    assert_eq!(ptx.0, want);
    // One compilation: the PTX and the CUBIN share the fingerprint, not the file.
    assert_eq!(cubin.0.fingerprint(), ptx.0.fingerprint());
    assert_ne!(cubin.0.file_name(), ptx.0.file_name());
    // Another architecture, source or configuration is another fingerprint.
    let other_arch = recorded(&Cfg::<0>(3), "sm_90");
    assert_ne!(other_arch[1].0.fingerprint(), ptx.0.fingerprint());
    let edited = Recipe {
        source_hash: Recipe::source_hash(EDITED.code),
        ..want.clone()
    };
    assert_ne!(edited.fingerprint(), want.fingerprint());
    let other_cfg = recorded(&Cfg::<0>(4), "sm_80");
    assert_ne!(other_cfg[1].0.fingerprint(), ptx.0.fingerprint());
    // A file round-trips.
    let f = file(ptx.0.clone(), ptx.1.clone());
    assert_eq!(decode(&f).unwrap().bytes, Cow::Borrowed(&ptx.1[..]));
}

#[test]
fn an_embedded_image_that_fits_is_chosen_and_a_stale_one_never() {
    if !nvrtc_found() {
        return;
    }
    // Slot 1: the PTX alone; slot 2: the CUBIN and the PTX.
    let binaries = recorded(&Cfg::<1>(2), "sm_80");
    let ptx = binaries.iter().find(|(r, _)| r.kind == Kind::Ptx).unwrap();
    embed::<1>(vec![file(ptx.0.clone(), ptx.1.clone())]);
    let img = image(&SCALE, &Cfg::<1>(2), "sm_80").unwrap();
    assert_eq!(
        (img.kind, img.provenance, &*img.bytes),
        (Kind::Ptx, Provenance::Embedded, &ptx.1[..])
    );
    embed::<2>(
        binaries
            .iter()
            .rev()
            .map(|(r, b)| file(r.clone(), b.clone()))
            .collect(),
    );
    let img = image(&SCALE, &Cfg::<2>(2), "sm_80").unwrap();
    assert_eq!(
        (img.kind, img.provenance),
        (Kind::Cubin, Provenance::Embedded)
    );
    // Edited source, other options, another configuration or architecture: compiled.
    for img in [
        image(&EDITED, &Cfg::<2>(2), "sm_80"),
        image(
            &SCALE.with_options(&["-use_fast_math"]),
            &Cfg::<2>(2),
            "sm_80",
        ),
        image(&SCALE, &Cfg::<2>(5), "sm_80"),
        image(&SCALE, &Cfg::<2>(2), "sm_86"),
    ] {
        assert_eq!(img.unwrap().provenance, Provenance::Compiled);
    }
}

/// Where the parent leaves the artifact for the child.
fn handoff() -> PathBuf {
    std::env::temp_dir().join(format!("tunable-cuda-embedded-{}", std::process::id()))
}

/// Run by `choosing_an_embedded_image_does_not_load_nvrtc` in a child process with NVRTC
/// hidden; does nothing when run on its own.
#[test]
#[ignore = "run by choosing_an_embedded_image_does_not_load_nvrtc in a child process"]
fn child_without_nvrtc() {
    let Some(dir) = std::env::var_os("TUNABLE_TEST_ARTIFACTS") else {
        return;
    };
    let files: Vec<Vec<u8>> = read_dir(Path::new(&dir))
        .unwrap()
        .into_iter()
        .map(|(p, _)| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(files.len(), 1);
    embed::<3>(files);
    let img = image(&SCALE, &Cfg::<3>(7), "sm_80").unwrap();
    assert_eq!(
        (img.kind, img.provenance),
        (Kind::Ptx, Provenance::Embedded)
    );
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(!maps.contains("libnvrtc"), "NVRTC was loaded");
    // NVRTC really is out of reach here: what is not embedded cannot compile.
    let e = image(&SCALE, &Cfg::<3>(8), "sm_80").unwrap_err();
    assert!(
        matches!(e, CudaError::MissingLibrary { library, .. } if library.contains("nvrtc")),
        "{e}"
    );
    println!("embedded PTX chosen without NVRTC");
}

#[test]
fn choosing_an_embedded_image_does_not_load_nvrtc() {
    if !nvrtc_found() {
        return;
    }
    let binaries = recorded(&Cfg::<0>(7), "sm_80");
    let (recipe, ptx) = binaries
        .into_iter()
        .find(|(r, _)| r.kind == Kind::Ptx)
        .unwrap();
    let dir = artifact_dir(&handoff(), "scale").unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(recipe.file_name()), file(recipe, ptx)).unwrap();
    // Hidden: no python3 to ask for site-packages, no library folders, and TUNABLE_NVRTC=off
    // for a machine whose loader would find a system NVRTC (a CUDA toolkit in ldconfig's cache).
    let empty = handoff().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_without_nvrtc", "--ignored", "--nocapture"])
        .env("TUNABLE_TEST_ARTIFACTS", &dir)
        .env("PATH", &empty)
        .env_remove("LD_LIBRARY_PATH")
        .env("TUNABLE_NVRTC", "off")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .output()
        .unwrap();
    std::fs::remove_dir_all(handoff()).ok();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("embedded PTX chosen without NVRTC"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn on_a_gpu_the_embedded_image_is_the_module() {
    let gpu = match Cuda::new(0) {
        Ok(g) => g,
        Err(e) => {
            skip("cuda", format!("loading a module needs a GPU: {e}"));
            return;
        }
    };
    if !nvrtc_found() {
        return;
    }
    let binaries = recorded(&Cfg::<0>(2), gpu.arch());
    let files = binaries
        .into_iter()
        .map(|(r, b)| file(r, b))
        .collect::<Vec<_>>();
    embed::<0>(files);
    let n = 1024;
    let x = gpu
        .upload(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
        .unwrap();
    let y = gpu.alloc::<f32>(n).unwrap();
    let k = gpu.kernel(&SCALE, &Cfg::<0>(2)).unwrap();
    assert_eq!(k.provenance(), Provenance::Embedded);
    // SAFETY: (const float*, float*, int); indices checked against n.
    unsafe {
        k.launch(Dims::cover(n, 128usize))
            .arg(&x)
            .arg(&y)
            .arg(&(n as i32))
            .run()
    }
    .unwrap();
    assert_eq!(y.read().unwrap()[10], 20.0);
}
