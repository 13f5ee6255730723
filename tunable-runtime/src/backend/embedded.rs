//! # Embedded device binaries
//!
//! A GPU kernel's winner is stored with what the backend compiled for it (the OpenCL program
//! binary for the device, the CUDA PTX and CUBIN for its architecture; the format and layout are
//! [`tunable_search::format::artifact`]'s), and a plain build embeds the artifacts of its baked
//! entries: `#[tunable]` generates [`Params::artifacts`](crate::params::Params::artifacts) for
//! the kernel's parameter struct, returning the files included with `include_bytes!` (so cargo
//! rebuilds when they change).
//!
//! ## How a backend finds the artifact of a build
//!
//! Asked for `source` compiled with a configuration's definitions (`cl.kernel(&SOURCE, params)`),
//! a backend that has not built that program yet (the first call per configuration and handle;
//! later calls hit its compile cache, so this costs nothing after the first call) describes the
//! build it wants as a [`Recipe`]: kind, entry point, target (the OpenCL device's identity, or
//! the CUDA architecture), a hash of the source text, the source's options and the definitions.
//! It then looks through `P::artifacts()` for one built from the same recipe ([`Recipe::fit`]):
//!
//! - **the same recipe:** it loads the binary (`clCreateProgramWithBinary` then
//!   `clBuildProgram`; `cuModuleLoadData`, a CUBIN before the PTX) and does not compile;
//! - **the same configuration and target but another source or other options:** the artifact is
//!   stale and is never run;
//! - **anything else** (another configuration, device or architecture): nothing to do with this
//!   build.
//!
//! When no artifact fits, or the driver rejects the one that does, the backend compiles the
//! source as it would without artifacts. If an artifact was there for this configuration (stale,
//! rejected or damaged) it says once on stderr why it compiles:
//!
//! ```text
//! tunable: gemm (MWG=64, NWG=64, ...): the embedded OpenCL binary is stale: the kernel source changed since it was built; compiling from source
//! ```
//!
//! A kernel with no artifact for a configuration (a kernel never tuned with this feature, or a
//! configuration that is not baked) compiles silently, as before. [`Provenance`] tells which
//! way a compiled kernel came (`CompiledKernel::provenance` of either backend).
//! `TUNABLE_EMBEDDED=off` ignores the artifacts ([`crate::settings::embedded_binaries`]).

// The lookup serves the GPU backends; without one only `Provenance` is used.
#![cfg_attr(
    not(any(feature = "cuda", feature = "opencl", feature = "wgpu")),
    allow(dead_code)
)]

use super::Source;
use crate::settings::embedded_binaries;
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Mutex;
use tunable_search::format::artifact::{Fit, Kind, Recipe, decode};

/// How a compiled kernel was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// Loaded from a device binary embedded in the build: nothing was compiled.
    Embedded,
    /// Compiled from its source (OpenCL compiler, NVRTC).
    Compiled,
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Provenance::Embedded => "embedded binary",
            Provenance::Compiled => "compiled",
        })
    }
}

/// The recipes of the builds a backend wants for one configuration, in order of preference
/// (CUDA: the CUBIN, then the PTX).
pub(crate) fn wanted(
    source: &Source,
    definitions: &[String],
    target: &str,
    kinds: &[Kind],
) -> Vec<Recipe> {
    let source_hash = Recipe::source_hash(source.code);
    kinds
        .iter()
        .map(|&kind| Recipe {
            kind,
            entry: source.kernel.to_owned(),
            target: target.to_owned(),
            source_hash,
            options: source.options.iter().map(|o| (*o).to_owned()).collect(),
            definitions: definitions.to_vec(),
        })
        .collect()
}

/// What the embedded artifacts hold for one build.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Binaries that may stand in for compiling, in the order of the wanted recipes.
    pub(crate) usable: Vec<(Kind, &'static [u8])>,
    /// Why the artifacts of this configuration that may not were refused.
    pub(crate) refused: Vec<String>,
}

/// The embedded binaries (`P::artifacts()`) that fit the wanted recipes, and why the ones built
/// for this configuration that do not fit were refused (a damaged artifact is refused for every
/// build: it cannot say what it was for). Nothing with `TUNABLE_EMBEDDED=off`.
pub(crate) fn find(embedded: &'static [&'static [u8]], wanted: &[Recipe]) -> Found {
    let mut found = Found::default();
    if embedded.is_empty() || !embedded_binaries() {
        return found;
    }
    let mut usable: Vec<(usize, Kind, &'static [u8])> = Vec::new();
    for &file in embedded {
        let artifact = match decode(file) {
            Ok(a) => a,
            Err(e) => {
                found
                    .refused
                    .push(format!("an embedded binary is damaged ({e})"));
                continue;
            }
        };
        for (rank, w) in wanted.iter().enumerate() {
            match artifact.recipe.fit(w) {
                Fit::Same => {
                    // Decoding borrows the binary from the `'static` file.
                    if let Cow::Borrowed(bytes) = &artifact.bytes {
                        usable.push((rank, w.kind, *bytes));
                    }
                }
                Fit::Stale(why) => found
                    .refused
                    .push(format!("the embedded {} is stale: {why}", w.kind)),
                Fit::Other => {}
            }
        }
    }
    usable.sort_by_key(|&(rank, ..)| rank);
    found.usable = usable.into_iter().map(|(_, k, b)| (k, b)).collect();
    found
}

/// Says on stderr, once per process for each distinct message, why `entry` is compiled for
/// `config` although artifacts were embedded for it (nothing when `reasons` is empty).
pub(crate) fn say_compiling(entry: &str, config: &str, reasons: &[String]) {
    static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    if reasons.is_empty() {
        return;
    }
    let line = format!(
        "tunable: {entry} ({config}): {}; compiling from source",
        reasons.join("; ")
    );
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.get_or_insert_with(HashSet::new).insert(line.clone()) {
        eprintln!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::format::artifact::{Artifact, Owner, encode};

    static SOURCE: Source = Source::new("k", "__kernel void k() {}");

    fn file(source: &Source, defs: &[&str], kind: Kind, bytes: &[u8]) -> &'static [u8] {
        let defs: Vec<String> = defs.iter().map(|d| (*d).to_owned()).collect();
        let recipe = wanted(source, &defs, "dev", &[kind]).remove(0);
        let a = Artifact {
            owner: Owner {
                kernel: "k".into(),
                device: "dev".into(),
                params: vec![],
            },
            recipe,
            bytes: Cow::Borrowed(bytes),
        };
        Box::leak(encode(&a).into_boxed_slice())
    }

    #[test]
    fn finds_the_same_build_in_preference_order_and_names_stale_ones() {
        let edited = Source::new("k", "__kernel void k() { }");
        let defs = ["-DT=1".to_owned()];
        let embedded: &'static [&'static [u8]] = Box::leak(Box::new([
            file(&SOURCE, &["-DT=1"], Kind::Ptx, b"ptx"),
            file(&SOURCE, &["-DT=2"], Kind::Cubin, b"other config"),
            file(&SOURCE, &["-DT=1"], Kind::Cubin, b"cubin"),
            file(&edited, &["-DT=1"], Kind::Cubin, b"old"),
            &b"TUNABIN\0 damaged"[..],
        ]));
        let found = find(
            embedded,
            &wanted(&SOURCE, &defs, "dev", &[Kind::Cubin, Kind::Ptx]),
        );
        assert_eq!(
            found.usable,
            [(Kind::Cubin, &b"cubin"[..]), (Kind::Ptx, &b"ptx"[..])]
        );
        assert_eq!(found.refused.len(), 2);
        assert!(found.refused[0].contains("CUBIN is stale: the kernel source changed"));
        assert!(found.refused[1].contains("damaged (not a tunable file"));
        // Another device: nothing usable, nothing stale.
        let elsewhere = find(
            embedded,
            &wanted(&SOURCE, &defs, "other", &[Kind::Cubin, Kind::Ptx]),
        );
        assert!(elsewhere.usable.is_empty());
        assert_eq!(elsewhere.refused.len(), 1);
        assert!(
            find(&[], &wanted(&SOURCE, &defs, "dev", &[Kind::Ptx]))
                .usable
                .is_empty()
        );
    }
}
