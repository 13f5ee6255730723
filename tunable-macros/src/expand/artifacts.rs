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
//! lock, artifacts first), which the build tracks already.
//!
//! What is not embedded, each with a build warning that names the file:
//! - a file whose identity (SHA-256, `tunable_search::format::artifact::identity`) is not one
//!   its baked entry recorded (`TunedEntry::binaries`): a binary replaced without the tuned
//!   file is refused (entries written before the identities embed their files as before);
//! - a file larger than the embedding limit, 64 MiB unless `TUNABLE_EMBED_LIMIT` says otherwise
//!   (bytes, or with a `K`, `M` or `G` suffix: `256M`), read when the crate is built: a pipeline
//!   cache or a device binary is far smaller, and a file beyond it would bloat the binary.
//!
//! A damaged artifact file cannot say whose it is: it warns, and is embedded (under the limit),
//! so that the backend, which decodes and checks whatever it would load, says at run time why
//! it compiles instead (`cargo tunable show` names it too).

use super::baked::Tuned;
use crate::check::Model;
use proc_macro2::TokenStream;
use quote::quote;
use tunable_search::Value;
use tunable_search::format::artifact::{MAX_SIZE, artifact_dir, identity, read_dir};
use tunable_search::format::tuned::tuned_dir;

/// The embedding limit without `TUNABLE_EMBED_LIMIT`: 64 MiB.
pub(super) const DEFAULT_LIMIT: u64 = 64 << 20;

/// The files to embed, and the warnings for those refused.
#[derive(Default)]
pub(super) struct Embedded {
    /// The absolute paths of the files to embed, in file-name order.
    pub(super) files: Vec<String>,
    /// A build warning per file refused or damaged.
    pub(super) warnings: Vec<String>,
}

/// The embedding limit: `TUNABLE_EMBED_LIMIT` (bytes, or `K`, `M`, `G` binary multiples; at
/// most the format's 512 MiB), else [`DEFAULT_LIMIT`]; a value that is no size warns and the
/// default applies.
pub(super) fn limit(warnings: &mut Vec<String>) -> u64 {
    let Ok(text) = std::env::var("TUNABLE_EMBED_LIMIT") else {
        return DEFAULT_LIMIT;
    };
    parse_size(&text).map(|l| l.min(MAX_SIZE)).unwrap_or_else(|| {
        warnings.push(format!(
            "tunable: TUNABLE_EMBED_LIMIT={text:?} is not a size (bytes, or with K, M or G: `256M`); embedding up to 64 MiB"
        ));
        DEFAULT_LIMIT
    })
}

/// `123`, `64K`, `64M`, `1G` (binary multiples) as bytes.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'K' | 'k') => (&t[..i], 10),
        (i, 'M' | 'm') => (&t[..i], 20),
        (i, 'G' | 'g') => (&t[..i], 30),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The artifact files of `tuned`'s baked entries and the damaged ones to embed (none outside a
/// cargo build), with the warnings for those refused; see the [module docs](self).
pub(super) fn embedded(model: &Model, tuned: &Tuned) -> Embedded {
    let mut out = Embedded::default();
    let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") else {
        return out;
    };
    if tuned.entries.is_empty() {
        return out;
    }
    let Ok(dir) = artifact_dir(&tuned_dir(&manifest), &model.name) else {
        return out; // the name was checked with the attribute
    };
    let Ok(listed) = read_dir(&dir) else {
        return out;
    };
    let limit = limit(&mut out.warnings);
    let name = &model.name;
    for (path, artifact) in listed {
        let shown = path.display().to_string();
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        let artifact = match artifact {
            Ok(a) => a,
            Err(why) => {
                out.warnings.push(format!(
                    "tunable: the device binary {shown} of kernel `{name}` is damaged ({why}): the backend compiles from source; restore it from version control or tune again"
                ));
                if size <= limit {
                    out.files.push(path.to_string_lossy().into_owned());
                }
                continue;
            }
        };
        let owner = &artifact.owner;
        let values: Vec<Value> = owner.params.iter().map(|(_, v)| Value::from(v)).collect();
        let Some(indices) = model.space.indices_of(&values) else {
            continue;
        };
        let indices: Vec<usize> = indices.into_iter().map(usize::from).collect();
        let names_fit = owner.params.len() == model.params.len()
            && owner
                .params
                .iter()
                .zip(&model.params)
                .all(|((n, _), p)| p.name == n);
        let owners: Vec<_> = tuned
            .entries
            .iter()
            .filter(|e| e.device == owner.device && e.indices == indices)
            .collect();
        if owner.kernel != model.name || !names_fit || owners.is_empty() {
            continue;
        }
        if size > limit {
            out.warnings.push(format!(
                "tunable: the device binary {shown} of kernel `{name}` is {:.1} MiB, over the embedding limit of {:.1} MiB (TUNABLE_EMBED_LIMIT): not embedded; the backend compiles from source",
                size as f64 / f64::from(1 << 20),
                limit as f64 / f64::from(1 << 20),
            ));
            continue;
        }
        let recorded = owners.iter().any(|e| !e.binaries.is_empty());
        if recorded {
            let id = std::fs::read(&path).map(|bytes| identity(&bytes));
            if !id.is_ok_and(|id| owners.iter().any(|e| e.binaries.contains(&id))) {
                out.warnings.push(format!(
                    "tunable: the device binary {shown} of kernel `{name}` is not the one its tuned entry recorded (replaced without the tuned file?): not embedded; the backend compiles from source"
                ));
                continue;
            }
        }
        out.files.push(path.to_string_lossy().into_owned());
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size(" 256M "), Some(256 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        for bad in ["", "M", "-1", "1.5M", "64 MiB", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
