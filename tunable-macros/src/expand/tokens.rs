//! # Values and types as tokens
//!
//! How a parameter's values and its Rust type are written in generated code: as literals of the
//! field's type (struct literals, `consts`), as `Value`s (the space, `to_values`) and as types.

use crate::attr::ParamLit;
use crate::check::ParamTy;
use proc_macro2::{Literal, Span, TokenStream};
use quote::quote;
use syn::Ident;

/// A value as a literal of its parameter's type (`32`, `-1`, `0.5`, `true`, `"fast"`).
pub(super) fn literal(v: &ParamLit) -> TokenStream {
    match v {
        ParamLit::Int(i, _, _) => {
            let l = Literal::i64_unsuffixed(i.abs());
            if *i < 0 { quote!(-#l) } else { quote!(#l) }
        }
        ParamLit::Float(f, _) => {
            let l = Literal::f64_unsuffixed(f.abs());
            if *f < 0.0 { quote!(-#l) } else { quote!(#l) }
        }
        ParamLit::Bool(b, _) => quote!(#b),
        ParamLit::Str(s, _) => {
            let l = Literal::string(s);
            quote!(#l)
        }
    }
}

/// A value as a `tunable::Value` expression.
pub(super) fn value(v: &ParamLit) -> TokenStream {
    match v {
        ParamLit::Int(i, _, _) => quote!(::tunable::__private::Value::Int(#i)),
        ParamLit::Float(f, _) => quote!(::tunable::__private::Value::Float(#f)),
        ParamLit::Bool(b, _) => quote!(::tunable::__private::Value::Bool(#b)),
        ParamLit::Str(s, _) => {
            quote!(::tunable::__private::Value::Str(::std::string::String::from(#s)))
        }
    }
}

/// A parameter's Rust type.
pub(super) fn ty(t: &ParamTy) -> TokenStream {
    match t {
        ParamTy::Int(s) => {
            let i = Ident::new(s, Span::call_site());
            quote!(#i)
        }
        ParamTy::Float => quote!(f64),
        ParamTy::Bool => quote!(bool),
        ParamTy::Str => quote!(&'static str),
    }
}

/// `snake_case` to `PascalCase`, for the parameter struct's name.
pub(super) fn pascal(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| p[..1].to_uppercase() + &p[1..])
        .collect()
}

/// A build warning with `text`, as the use of a deprecated item in an anonymous constant (so
/// that several warnings of one kernel do not clash), spanned on the attribute.
pub(super) fn warning(text: &str) -> TokenStream {
    quote! {
        const _: () = {
            #[deprecated(note = #text)]
            #[allow(non_camel_case_types)]
            struct __tunable_warning;
            let _ = __tunable_warning;
        };
    }
}
