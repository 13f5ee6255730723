//! # Module images: embedded or compiled
//!
//! What `cuModuleLoadData` loads for one configuration: a binary embedded for it
//! ([`crate::backend::embedded`]; for the device's architecture, a CUBIN before the PTX), else
//! NVRTC's output for the architecture (the CUBIN it produces for an `sm_` architecture, else
//! the PTX). NVRTC is looked for only when something must be compiled: a shipped binary whose
//! baked configurations all have an embedded image runs without it.
//!
//! [`image`] makes the same choice as [`Cuda::kernel`](super::Cuda::kernel) without a device or
//! driver, which is how a machine without a GPU checks which way a configuration would load.
//! While the tuner records ([`crate::backend::record`]), the images of every program handed out
//! are noted: the PTX and CUBIN of the winner are stored beside the tuned file.

use super::compile::{Compiled, compile_with};
use super::error::CudaError;
use crate::backend::embedded::{self, Provenance};
use crate::backend::{Source, record};
use crate::params::Params;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, Weak};
use tunable_search::format::artifact::Kind;

/// The kinds a CUDA backend loads, in order of preference: a CUBIN needs no JIT compilation by
/// the driver.
const KINDS: [Kind; 2] = [Kind::Cubin, Kind::Ptx];

/// A module image for one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// PTX or CUBIN.
    pub kind: Kind,
    /// The image (PTX text without a trailing NUL), shared by the configurations compiled in one
    /// NVRTC program.
    pub bytes: Arc<[u8]>,
    /// Embedded in the build, or compiled with NVRTC now.
    pub provenance: Provenance,
    /// The configuration's entry point in the image: the source's kernel, or a name of its own
    /// when several configurations were compiled in one program ([`super::compile_many`]).
    pub entry: String,
}

impl Image {
    /// What `cuModuleLoadData` takes: the CUBIN, or the PTX text ending with a NUL byte.
    pub(crate) fn module_data(&self) -> Vec<u8> {
        let mut data = self.bytes.to_vec();
        if self.kind == Kind::Ptx {
            data.push(0);
        }
        data
    }
}

/// The embedded images that fit `source` with `defs` for `arch`, best first, and why those of
/// this configuration that do not were refused.
pub(crate) fn embedded_images(
    source: &Source,
    defs: &[String],
    arch: &str,
    files: &'static [&'static [u8]],
) -> (Vec<Image>, Vec<String>) {
    let found = embedded::find(files, &embedded::wanted(source, defs, arch, &KINDS));
    let images = found
        .usable
        .into_iter()
        .map(|(kind, bytes)| Image {
            kind,
            bytes: Arc::from(bytes),
            provenance: Provenance::Embedded,
            entry: source.kernel.to_owned(),
        })
        .collect();
    (images, found.refused)
}

/// Whether an image was embedded that fits `source` with `defs` for `arch` (what
/// [`embedded_images`] would return, without copying it).
pub(crate) fn has_embedded(
    source: &Source,
    defs: &[String],
    arch: &str,
    files: &'static [&'static [u8]],
) -> bool {
    !embedded::find(files, &embedded::wanted(source, defs, arch, &KINDS))
        .usable
        .is_empty()
}

/// The images of an NVRTC compilation of `kernel`, the one to load first: the CUBIN (if
/// compiled for an `sm_` architecture), then the PTX. A configuration compiled in a program of
/// several (its entry point renamed) has the program's CUBIN only, one copy per process
/// ([`program_bytes`]); its PTX, eight configurations long, would only serve a driver that
/// refused the CUBIN, and the shipped binary's images are compiled alone.
pub(crate) fn compiled_images(compiled: Compiled, kernel: &str) -> Vec<Image> {
    let entry = compiled.entry;
    if entry != kernel
        && let Some(cubin) = compiled.cubin
    {
        return vec![Image {
            kind: Kind::Cubin,
            bytes: program_bytes(cubin),
            provenance: Provenance::Compiled,
            entry,
        }];
    }
    let cubin = compiled.cubin.map(|c| Image {
        kind: Kind::Cubin,
        bytes: Arc::from(c),
        provenance: Provenance::Compiled,
        entry: entry.clone(),
    });
    let ptx = Image {
        kind: Kind::Ptx,
        bytes: Arc::from(compiled.ptx.into_bytes()),
        provenance: Provenance::Compiled,
        entry,
    };
    cubin.into_iter().chain([ptx]).collect()
}

/// One copy per process of the image of a program of several configurations, however its
/// configurations were compiled or loaded (together, alone from the build cache): the same bytes
/// share an `Arc`, and so one module ([`super::Cuda`] loads one per image). Looked up by a hash
/// of the bytes, then compared.
fn program_bytes(bytes: Vec<u8>) -> Arc<[u8]> {
    static PROGRAMS: LazyLock<Mutex<HashMap<u64, Weak<[u8]>>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let hash = tunable_search::fingerprint::fnv1a(&[&bytes]);
    let mut programs = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(same) = programs.get(&hash).and_then(Weak::upgrade)
        && *same == *bytes
    {
        return same;
    }
    programs.retain(|_, w| w.strong_count() > 0);
    let bytes: Arc<[u8]> = Arc::from(bytes);
    programs.insert(hash, Arc::downgrade(&bytes));
    bytes
}

/// Compiles with NVRTC, which is looked for now (the first compilation of the process); with
/// `shared`, a configuration kept in the build cache as one of a program of several loads as
/// that ([`compile_with`]).
pub(crate) fn compile_images(
    source: &Source,
    defs: &[String],
    arch: &str,
    config: &str,
    shared: bool,
) -> Result<Vec<Image>, CudaError> {
    super::library::nvrtc()?;
    compile_with(source, defs, arch, config, shared).map(|c| compiled_images(c, source.kernel))
}

/// Notes the images of a program for the tuner's recording, if one is in progress on this
/// thread. Images compiled with other configurations are not what a shipped binary embeds:
/// the configuration is compiled alone if its images are written ([`record`]).
pub(crate) fn note(source: &Source, defs: &[String], arch: &str, images: &[Image]) {
    let key = || record::key(source.code, source.kernel, source.options, defs, arch);
    record::note(key, defs, || {
        if images.iter().any(|i| i.entry != source.kernel) {
            let (source, defs, arch) = (*source, defs.to_vec(), arch.to_owned());
            return Box::new(move || {
                let config: Vec<&str> = defs.iter().map(|d| d.trim_start_matches("-D")).collect();
                let images = compile_images(&source, &defs, &arch, &config.join(", "), false)
                    .map_err(|e| e.to_string())?;
                Ok(images
                    .iter()
                    .map(|i| {
                        let recipe = embedded::wanted(&source, &defs, &arch, &[i.kind]).remove(0);
                        (recipe, i.bytes.to_vec())
                    })
                    .collect())
            });
        }
        let binaries: Vec<_> = images
            .iter()
            .map(|i| {
                let recipe = embedded::wanted(source, defs, arch, &[i.kind]).remove(0);
                (recipe, i.bytes.to_vec())
            })
            .collect();
        Box::new(move || Ok(binaries.clone()))
    });
}

/// The image [`Cuda::kernel`](super::Cuda::kernel) loads first for `params` on a device of
/// architecture `arch` (`sm_80`), without a device: the embedded binary that fits (a CUBIN
/// before the PTX), else NVRTC's compilation. Says once on stderr why it compiles when a binary
/// embedded for this configuration does not fit (see [`crate::backend::embedded`]). Fails with
/// [`CudaError::MissingLibrary`] only when it must compile and NVRTC cannot be found.
///
/// ```no_run
/// use tunable::backend::Provenance;
/// use tunable::backend::cuda::image;
/// # use tunable::backend::Source;
/// # #[derive(Clone, Copy, Debug)] struct P;
/// # impl tunable::Params for P {
/// #     const NAMES: &'static [&'static str] = &[];
/// #     fn from_values(_: &[tunable::Value]) -> Option<Self> { Some(P) }
/// #     fn to_values(&self) -> Vec<tunable::Value> { vec![] }
/// # }
/// # static SOURCE: Source = Source::new("k", "extern \"C\" __global__ void k() {}");
/// let img = image(&SOURCE, &P, "sm_80")?;
/// println!("{} {} bytes ({})", img.kind, img.bytes.len(), img.provenance);
/// # Ok::<(), tunable::backend::cuda::CudaError>(())
/// ```
pub fn image<P: Params>(source: &Source, params: &P, arch: &str) -> Result<Image, CudaError> {
    record::note_source(source, arch);
    let (config, defs) = super::compile::rendered(params)?;
    let (mut images, refused) = embedded_images(source, &defs, arch, P::artifacts());
    if images.is_empty() {
        embedded::say_compiling(source.kernel, &config, &refused);
        images = compile_images(source, &defs, arch, &config, true)?;
    }
    note(source, &defs, arch, &images);
    Ok(images.swap_remove(0))
}
