//! # tunable-macros
//!
//! The `#[tunable]` attribute. Use it through the `tunable` crate (`use tunable::tunable;`); the
//! generated code refers to `::tunable::__private`.
//!
//! Pipeline: [`attr`] parses what the user wrote, [`check`] builds the model and the search
//! space at compile time (collecting every mistake, each spanned), [`expand`] emits the code.

mod attr;
mod check;
mod expand;

use proc_macro::TokenStream;
use syn::punctuated::Punctuated;
use syn::{ItemFn, Token, parse_macro_input};

/// Makes a function tunable. See the `tunable` crate's documentation for every option.
#[proc_macro_attribute]
pub fn tunable(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.clone().into();
    let f = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        // Not a function: say so, and still emit the item so the user sees their own errors.
        Err(e) => {
            let err =
                syn::Error::new(e.span(), "#[tunable] applies to functions").into_compile_error();
            return quote::quote!(#err #item2).into();
        }
    };
    let args = parse_macro_input!(args with Punctuated::<attr::Arg, Token![,]>::parse_terminated);
    expand_all(args.into_iter().collect(), &f).unwrap_or_else(|e| {
        let err = e.into_compile_error();
        quote::quote!(#err #item2).into()
    })
}

fn expand_all(args: Vec<attr::Arg>, f: &ItemFn) -> syn::Result<TokenStream> {
    let names: Vec<syn::Ident> = expand::arg_names(f)?.into_iter().map(|(n, _)| n).collect();
    let model = check::model(args, &f.sig.ident, &names)?;
    Ok(expand::expand(&model, f)?.into())
}
