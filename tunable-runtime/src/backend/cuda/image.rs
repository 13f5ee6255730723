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
use crate::backend::{Source, definitions, record};
use crate::params::Params;
use std::borrow::Cow;
use tunable_search::format::artifact::Kind;

/// The kinds a CUDA backend loads, in order of preference: a CUBIN needs no JIT compilation by
/// the driver.
const KINDS: [Kind; 2] = [Kind::Cubin, Kind::Ptx];

/// A module image for one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// PTX or CUBIN.
    pub kind: Kind,
    /// The image (PTX text without a trailing NUL).
    pub bytes: Cow<'static, [u8]>,
    /// Embedded in the build, or compiled with NVRTC now.
    pub provenance: Provenance,
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
            bytes: Cow::Borrowed(bytes),
            provenance: Provenance::Embedded,
        })
        .collect();
    (images, found.refused)
}

/// The images of an NVRTC compilation, the one to load first: the CUBIN (if compiled for an
/// `sm_` architecture), then the PTX.
pub(crate) fn compiled_images(compiled: Compiled) -> Vec<Image> {
    let cubin = compiled.cubin.map(|c| Image {
        kind: Kind::Cubin,
        bytes: Cow::Owned(c),
        provenance: Provenance::Compiled,
    });
    let ptx = Image {
        kind: Kind::Ptx,
        bytes: Cow::Owned(compiled.ptx.into_bytes()),
        provenance: Provenance::Compiled,
    };
    cubin.into_iter().chain([ptx]).collect()
}

/// Compiles with NVRTC, which is looked for now (the first compilation of the process).
pub(crate) fn compile_images(
    source: &Source,
    defs: &[String],
    arch: &str,
    config: &str,
) -> Result<Vec<Image>, CudaError> {
    super::library::nvrtc()?;
    compile_with(source, defs, arch, config).map(compiled_images)
}

/// Notes the images of a program for the tuner's recording, if one is in progress on this
/// thread.
pub(crate) fn note(source: &Source, defs: &[String], arch: &str, images: &[Image]) {
    let key = || record::key(source.code, source.kernel, source.options, defs, arch);
    record::note(key, defs, || {
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
    let config = params.describe();
    let defs = definitions(params).map_err(|reason| CudaError::Definition {
        config: config.clone(),
        reason,
    })?;
    let (mut images, refused) = embedded_images(source, &defs, arch, P::artifacts());
    if images.is_empty() {
        embedded::say_compiling(source.kernel, &config, &refused);
        images = compile_images(source, &defs, arch, &config)?;
    }
    note(source, &defs, arch, &images);
    Ok(images.swap_remove(0))
}
