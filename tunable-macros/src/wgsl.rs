//! # WGSL overrides checked when the attribute expands
//!
//! The wgpu backend gives each tunable parameter to the WGSL `override` of the same name; a
//! parameter the source does not declare fails every configuration at run time. Where the
//! attribute can read the source, it says so at compile time instead, on the parameter:
//!
//! - the kernel's body names a `static` or `const` of the same file (`&VECTOR_ADD`), or holds
//!   the source itself, whose initializer is `include_str!("<path>.wgsl")` with a literal path;
//! - the path is read relative to the file, as `include_str!` does.
//!
//! Any other source (built at run time, from another module's file, in a string literal) is
//! checked by the backend when the kernel first runs. The scan of the WGSL text is lexical
//! (comments skipped, `override` followed by a name), so that the attribute does not depend on a
//! WGSL compiler.

use crate::check::Param;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Checks the parameters against the WGSL sources the body uses, where they can be read.
pub(crate) fn check(f: &syn::ItemFn, params: &[Param]) -> syn::Result<()> {
    let Some(file) = proc_macro::Span::call_site().local_file() else {
        return Ok(());
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(());
    };
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    check_in(&text, &dir, f, params)
}

/// [`check`] for the file `text` in the folder `dir`.
pub(crate) fn check_in(
    text: &str,
    dir: &Path,
    f: &syn::ItemFn,
    params: &[Param],
) -> syn::Result<()> {
    let mut errors: Option<syn::Error> = None;
    for path in sources(text, f) {
        let Ok(wgsl) = std::fs::read_to_string(dir.join(&path)) else {
            continue; // `include_str!` itself reports a missing file.
        };
        let declared = overrides(&wgsl);
        for p in params {
            let name = p.name.to_string();
            if declared.contains(&name) {
                continue;
            }
            let e = syn::Error::new(
                p.name.span(),
                format!(
                    "`{name}` has no `override {name}` in {}{}: the wgpu backend gives each \
                     tunable parameter to the WGSL override of the same name",
                    path.display(),
                    if declared.is_empty() {
                        " (it declares none)".to_owned()
                    } else {
                        format!(" (it declares {})", declared.join(", "))
                    }
                ),
            );
            match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            }
        }
    }
    errors.map_or(Ok(()), Err)
}

/// The `.wgsl` files the body includes, itself or through a `static` or `const` of the file
/// that it names ([`crate::source::included`]).
fn sources(text: &str, f: &syn::ItemFn) -> BTreeSet<PathBuf> {
    crate::source::included(text, f)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect()
}

/// The names of the `override` declarations of a WGSL text, in order.
pub(crate) fn overrides(wgsl: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_override = false;
    for word in words(wgsl) {
        if after_override {
            out.push(word.to_owned());
        }
        after_override = word == "override";
    }
    out
}

/// The identifiers and keywords of a WGSL text, comments skipped; any other token separates
/// them (so `override` is followed by a name only in a declaration: `override x: u32`).
fn words(wgsl: &str) -> Vec<&str> {
    let bytes = wgsl.as_bytes();
    let (mut words, mut i) = (Vec::new(), 0);
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                // Block comments nest in WGSL.
                let mut depth = 0;
                while i < bytes.len() {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                words.push(&wgsl[start..i]);
            }
            c if c.is_ascii_digit() => {
                // A number (`16u`, `1e3f`): not a word.
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                    i += 1;
                }
                words.push("");
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                words.push("");
                i += 1;
            }
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_override_declarations_not_uses_or_comments() {
        let wgsl = "// override commented: u32\n/* override a /* nested */ override b */\n\
                    override block_size_x: u32 = 64;\n@id(2) override   per_thread : u32;\n\
                    override flag = true;\n\
                    @compute @workgroup_size(block_size_x) fn main() { let x = per_thread; }";
        assert_eq!(overrides(wgsl), ["block_size_x", "per_thread", "flag"]);
        assert!(overrides("fn main() { let overrides = 1; }").is_empty());
    }

    #[test]
    fn finds_the_wgsl_files_the_body_names() {
        let dir = std::env::temp_dir().join(format!("tunable-wgsl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("k.wgsl"),
            "override a: u32 = 1;\noverride b: u32 = 2;",
        )
        .unwrap();
        let file = r#"
            static K: Source = Source::new("k", include_str!("k.wgsl"));
            static OTHER: Source = Source::new("o", include_str!("other.wgsl"));
            fn f() { gpu.kernel(&K, params); }
        "#;
        let f: syn::ItemFn = syn::parse_str("fn f() { gpu.kernel(&K, params); }").unwrap();
        assert_eq!(
            sources(file, &f).into_iter().collect::<Vec<_>>(),
            [PathBuf::from("k.wgsl")]
        );
        let param = |name: &str| Param {
            name: syn::Ident::new(name, proc_macro2::Span::call_site()),
            values: vec![],
            ty: crate::check::ParamTy::Int(String::new()),
        };
        assert!(check_in(file, &dir, &f, &[param("a"), param("b")]).is_ok());
        let e = check_in(file, &dir, &f, &[param("a"), param("c")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("`c` has no `override c` in k.wgsl (it declares a, b)"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
