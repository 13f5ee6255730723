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
use syn::{ImplItem, ItemFn, ItemImpl, Token, parse_macro_input};

/// Makes a function tunable. See the `tunable` crate's documentation for every option.
///
/// On methods, put `#[tunable(...)]` on each tunable method and a bare `#[tunable]` on the impl
/// block, which emits the parameter structs beside it.
#[proc_macro_attribute]
pub fn tunable(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.clone().into();
    if let Ok(imp) = syn::parse::<ItemImpl>(item.clone()) {
        if !args.is_empty() {
            let err = syn::Error::new(
                proc_macro2::TokenStream::from(args)
                    .into_iter()
                    .next()
                    .map_or_else(proc_macro2::Span::call_site, |t| t.span()),
                "on an impl block, #[tunable] takes no arguments: put them on the tunable methods",
            );
            let err = err.into_compile_error();
            return quote::quote!(#err #item2).into();
        }
        return expand_impl(imp).unwrap_or_else(|e| {
            let err = e.into_compile_error();
            quote::quote!(#err #item2).into()
        });
    }
    let f = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        // Not a function: say so, and still emit the item so the user sees their own errors.
        Err(e) => {
            let err = syn::Error::new(e.span(), "#[tunable] applies to functions and impl blocks")
                .into_compile_error();
            return quote::quote!(#err #item2).into();
        }
    };
    let args = parse_macro_input!(args with Punctuated::<attr::Arg, Token![,]>::parse_terminated);
    let place = expand::Place { self_ty: None };
    match expand_fn(args.into_iter().collect(), &f, &place) {
        Ok((outer, inner)) => quote::quote!(#outer #inner).into(),
        Err(e) => {
            let err = e.into_compile_error();
            quote::quote!(#err #item2).into()
        }
    }
}

fn expand_fn(
    args: Vec<attr::Arg>,
    f: &ItemFn,
    place: &expand::Place,
) -> syn::Result<(proc_macro2::TokenStream, proc_macro2::TokenStream)> {
    let names: Vec<syn::Ident> = expand::arg_names(f)?.into_iter().map(|(n, _)| n).collect();
    let model = check::model(args, &f.sig.ident, &names)?;
    expand::expand(&model, f, place)
}

/// `#[tunable]` on an impl block: expands each method marked `#[tunable(...)]`.
fn expand_impl(mut imp: ItemImpl) -> syn::Result<TokenStream> {
    let self_ty = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(self_ty) = self_ty else {
        return Err(syn::Error::new_spanned(
            &imp.self_ty,
            "#[tunable] needs an impl block of a named type",
        ));
    };
    let place = expand::Place {
        self_ty: Some(self_ty),
    };
    let mut outer = proc_macro2::TokenStream::new();
    let mut items = Vec::new();
    for item in std::mem::take(&mut imp.items) {
        let ImplItem::Fn(m) = item else {
            items.push(item);
            continue;
        };
        let Some(at) = m.attrs.iter().position(|a| a.path().is_ident("tunable")) else {
            items.push(ImplItem::Fn(m));
            continue;
        };
        let mut m = m;
        let attr = m.attrs.remove(at);
        let args: Vec<attr::Arg> = match &attr.meta {
            syn::Meta::List(l) => l
                .parse_args_with(Punctuated::<attr::Arg, Token![,]>::parse_terminated)?
                .into_iter()
                .collect(),
            _ => vec![],
        };
        let f = ItemFn {
            attrs: m.attrs,
            vis: m.vis,
            modifiers: m.modifiers,
            sig: m.sig,
            block: Box::new(m.block),
        };
        let (o, inner) = expand_fn(args, &f, &place)?;
        outer.extend(o);
        let file: syn::File = syn::parse2(quote::quote!(impl X { #inner }))?;
        if let Some(syn::Item::Impl(generated)) = file.items.into_iter().next() {
            items.extend(generated.items);
        }
    }
    imp.items = items;
    Ok(quote::quote!(#imp #outer).into())
}
