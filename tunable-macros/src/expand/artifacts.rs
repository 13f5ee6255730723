//! # Embedded device binaries
//!
//! Beside the tuned file, `tuned/<kernel>.artifacts/` holds the device binaries built for the
//! winners of a GPU kernel (an OpenCL program binary, CUDA PTX and CUBIN; format and layout in
//! `tunable_search::format::artifact`). The macro embeds those of its [baked](super::baked)
//! entries: each artifact whose owner (device and configuration) is a baked entry's is included
//! with `include_bytes!` of its absolute path in the `Params::artifacts()` it generates for the
//! parameter struct, which the GPU backends search when they would compile
//! (`tunable_runtime::backend::embedded`). The other artifacts stay out of the binary.
//!
//! `include_bytes!` puts each embedded file into rustc's dep-info, so cargo rebuilds when one
//! changes; the set of files changes only with the tuned file (the store writes both under one
//! lock, artifacts first), which the build tracks already. A damaged artifact file cannot say
//! whose it is: it is embedded too, so that the backend, which decodes and checks whatever it
//! would load, says at run time why it compiles instead (`cargo tunable show` names it too).

use super::baked::Tuned;
use crate::check::Model;
use proc_macro2::TokenStream;
use quote::quote;
use tunable_search::Value;
use tunable_search::format::artifact::{MAX_SIZE, artifact_dir, read_dir};
use tunable_search::format::tuned::tuned_dir;

/// The absolute paths of the artifact files of `tuned`'s baked entries and of the damaged ones
/// (none outside a cargo build), in file-name order.
pub(super) fn embedded(model: &Model, tuned: &Tuned) -> Vec<String> {
    let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") else {
        return Vec::new();
    };
    if tuned.entries.is_empty() {
        return Vec::new();
    }
    let Ok(dir) = artifact_dir(&tuned_dir(&manifest), &model.name) else {
        return Vec::new(); // the name was checked with the attribute
    };
    let Ok(listed) = read_dir(&dir) else {
        return Vec::new();
    };
    listed
        .into_iter()
        .filter_map(|(path, artifact)| {
            let path = path.to_string_lossy().into_owned();
            let Ok(artifact) = artifact else {
                // Damaged: embedded so the backend says why it compiles, unless it is larger
                // than an artifact may be (it would be read into the binary).
                let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_SIZE + 64);
                return small.then_some(path);
            };
            let owner = artifact.owner;
            let values: Vec<Value> = owner.params.iter().map(|(_, v)| Value::from(v)).collect();
            let indices: Vec<usize> = model
                .space
                .indices_of(&values)?
                .into_iter()
                .map(usize::from)
                .collect();
            let names_fit = owner.params.len() == model.params.len()
                && owner
                    .params
                    .iter()
                    .zip(&model.params)
                    .all(|((n, _), p)| p.name == n);
            let baked = tuned
                .entries
                .iter()
                .any(|e| e.device == owner.device && e.indices == indices);
            (owner.kernel == model.name && names_fit && baked).then_some(path)
        })
        .collect()
}

/// `fn artifacts()` of the `Params` impl, returning the `embedded` files; nothing (the trait's
/// empty default) without any.
pub(super) fn method(embedded: &[String]) -> TokenStream {
    if embedded.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn artifacts() -> &'static [&'static [u8]] {
            static ARTIFACTS: &[&[u8]] = &[#(include_bytes!(#embedded)),*];
            ARTIFACTS
        }
    }
}
