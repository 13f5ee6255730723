//! # Verification glue
//!
//! With `verify = <output>`, the tuning closure reads that output after a variant's first run,
//! and the `answer` expression if given; the kernel's `Verify` mode says what the runtime
//! compares it against, and with which tolerance. Without `verify` both reads answer `None`.

use crate::check::Model;
use proc_macro2::TokenStream;
use quote::quote;

/// The generated pieces for `verify`, `answer` and `tolerance`.
pub(super) struct Glue {
    /// Answers `Call::Output`: the output's snapshot.
    pub(super) read_output: TokenStream,
    /// Answers `Call::Answer`: the answer's snapshot.
    pub(super) read_answer: TokenStream,
    /// The `Verify` mode of the kernel's spec.
    pub(super) mode: TokenStream,
}

/// The glue of a kernel.
pub(super) fn glue(model: &Model) -> Glue {
    let none = quote!(::std::result::Result::Ok(::std::option::Option::None));
    let Some(v) = &model.verify else {
        return Glue {
            read_output: none.clone(),
            read_answer: none,
            mode: quote!(::tunable::__private::Verify::Off),
        };
    };
    let snapshot = |e: &syn::Expr| quote!(::tunable::__private::snapshot(&(#e)).map(::std::option::Option::Some));
    let t = v.tolerance;
    match &v.answer {
        Some(a) => Glue {
            read_output: snapshot(&v.output),
            read_answer: snapshot(a),
            mode: quote!(::tunable::__private::Verify::Answer { tolerance: #t }),
        },
        None => Glue {
            read_output: snapshot(&v.output),
            read_answer: none,
            mode: quote!(::tunable::__private::Verify::Reference { tolerance: #t }),
        },
    }
}
