//! # Kernel source files
//!
//! The files a kernel's source text comes from, each relative to the file that holds the
//! attribute, as `include_str!` takes them: those `source = "kernel.cl"` (or `source = ("a.cu",
//! "b.cuh")`) names, else those the attribute finds ([`detected`]): the body's own
//! `include_str!("...")` of a literal path, and those of the `static`s and `const`s of the same
//! file that the body names (`static GEMM: Source = Source::new("gemm", include_str!("gemm.cl"))`
//! used as `&GEMM`). The macro hashes each file's text
//! (`tunable_search::format::tuned::source_hash`): a tuning build records the hashes in every
//! entry it stores, and a later build compares them with the files as they are now: an entry
//! tuned with another text is not baked, with a build warning ([`super::expand`]'s baked table).
//! The generated code includes each file with `include_str!`, so that cargo rebuilds the crate
//! when one changes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use syn::LitStr;
use syn::visit::Visit;
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

/// The source files of a kernel that names none with `source`: the files its body includes (see
/// the [module docs](self)) that can be read, relative to the attribute's file. None where rustc
/// does not say which file that is.
pub(crate) fn detected(f: &syn::ItemFn) -> Vec<SourceFile> {
    if !proc_macro::is_available() {
        return Vec::new();
    }
    let Some(file) = proc_macro::Span::call_site().local_file() else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Vec::new();
    };
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    included(&text, f)
        .into_iter()
        .filter_map(|written| {
            let joined = dir.join(&written);
            let path = std::path::absolute(&joined).unwrap_or(joined);
            let text = std::fs::read_to_string(&path).ok()?;
            Some(SourceFile {
                written: written.to_string_lossy().into_owned(),
                path: path.to_string_lossy().into_owned(),
                hash: source_hash(&text),
            })
        })
        .collect()
}

/// The files the body includes with `include_str!` (a literal path), itself or through a
/// `static` or `const` of the file `text` that it names (`&VECTOR_ADD`, `Source::new(..,
/// include_str!("k.cl"))`), as written.
pub(crate) fn included(text: &str, f: &syn::ItemFn) -> BTreeSet<PathBuf> {
    let mut names = Names::default();
    names.visit_block(&f.block);
    let mut found = Includes::default();
    found.visit_block(&f.block);
    if let Ok(file) = syn::parse_file(text) {
        let mut items = Items {
            names: &names.0,
            found: &mut found,
        };
        items.visit_file(&file);
    }
    found.0
}

/// Single-identifier paths the body uses.
#[derive(Default)]
struct Names(BTreeSet<String>);

impl<'ast> Visit<'ast> for Names {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            self.0.insert(id.to_string());
        }
        syn::visit::visit_expr_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Arguments of macros (`format!`, ...) are tokens: look for names there too.
        for t in m.tokens.clone() {
            if let proc_macro2::TokenTree::Ident(id) = t {
                self.0.insert(id.to_string());
            }
        }
    }
}

/// `include_str!("...")` paths.
#[derive(Default)]
struct Includes(BTreeSet<PathBuf>);

impl<'ast> Visit<'ast> for Includes {
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.is_ident("include_str")
            && let Ok(lit) = m.parse_body::<syn::LitStr>()
        {
            self.0.insert(PathBuf::from(lit.value()));
        }
    }
}

/// The statics and consts of the file named in `names`, whose initializers are searched for
/// includes.
struct Items<'a> {
    names: &'a BTreeSet<String>,
    found: &'a mut Includes,
}

impl<'ast> Visit<'ast> for Items<'_> {
    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        if self.names.contains(&s.ident.to_string()) {
            self.found.visit_expr(&s.expr);
        }
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        if self.names.contains(&c.ident.to_string()) {
            self.found.visit_expr(&c.expr);
        }
    }
}
