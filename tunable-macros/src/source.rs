//! # Kernel source files
//!
//! `source = "kernel.cl"` (or `source = ("a.cu", "b.cuh")`) names the files a GPU kernel's
//! source text comes from, each relative to the file that holds the attribute, as
//! `include_str!` takes them. The macro hashes each file's text
//! (`tunable_search::format::tuned::source_hash`): a tuning build records the hashes in every
//! entry it stores, and a later build compares them with the files as they are now: an entry
//! tuned with another text is not baked, with a build warning ([`super::expand`]'s baked table).
//! The generated code includes each file with `include_str!`, so that cargo rebuilds the crate
//! when one changes.

use std::path::{Path, PathBuf};
use syn::LitStr;
use tunable_search::format::tuned::source_hash;

/// One file of the `source` option.
pub(crate) struct SourceFile {
    /// The path as written.
    pub written: String,
    /// Its absolute path, for `include_str!`.
    pub path: String,
    /// The hash of its text.
    pub hash: u64,
}

/// Reads the file `lit` names, relative to the file the attribute is in (the crate's folder
/// when rustc does not say which file that is); an error on `lit` if it cannot be read.
pub(crate) fn read(lit: &LitStr) -> syn::Result<SourceFile> {
    let written = lit.value();
    // `proc_macro`'s spans exist only inside a macro's expansion (not in unit tests).
    let file = proc_macro::is_available()
        .then(|| lit.span().unwrap().local_file())
        .flatten();
    let base = file
        .and_then(|f| f.parent().map(Path::to_path_buf))
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
        .unwrap_or_default();
    let joined = base.join(&written);
    let path = std::path::absolute(&joined).unwrap_or(joined);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        syn::Error::new(
            lit.span(),
            format!("cannot read the kernel source {}: {e}", path.display()),
        )
    })?;
    Ok(SourceFile {
        written,
        path: path.to_string_lossy().into_owned(),
        hash: source_hash(&text),
    })
}
