//! # The `_with` function
//!
//! `<name>_with(&params, args...)`: the user's body run for one configuration, without tuning.
//! The parameters are locals destructured from `params` (the generic body), or, with `consts`,
//! the body is instantiated once per valid configuration with the parameters as true constants.
//! A shipped build also compiles the configurations it carries as constants, apart
//! ([`instances`]).

use super::{Kernel, instances, tokens};
use proc_macro2::TokenStream;
use quote::quote;
use syn::FnArg;

/// `<name>_with(&params, args...)`, a method with the same receiver for methods.
pub(super) fn item(k: &Kernel) -> TokenStream {
    let (vis, sig, with_fn, params_ty) = (&k.f.vis, &k.f.sig, &k.with_fn, &k.params_ty);
    let (impl_g, _, where_c) = sig.generics.split_for_impl();
    let output = &sig.output;
    let typed = sig.inputs.iter().filter(|a| matches!(a, FnArg::Typed(_)));
    let inputs = match k.receiver {
        Some(r) => quote!(#r, params: &#params_ty, #(#typed),*),
        None => quote!(params: &#params_ty, #(#typed),*),
    };
    let body = if k.model.consts {
        per_configuration(k)
    } else {
        with_locals(k)
    };
    let doc = format!(
        "Runs [`{}`] with the given parameters (one variant), without tuning.",
        sig.ident
    );
    quote! {
        #[doc = #doc]
        #[inline]
        #[allow(non_snake_case)]
        #vis fn #with_fn #impl_g (#inputs) #output #where_c {
            #body
        }
    }
}

/// The body with the parameters as locals.
fn with_locals(k: &Kernel) -> TokenStream {
    let (params_ty, body) = (&k.params_ty, &k.f.block);
    let fields = k.fields();
    // Parameters of GPU kernels often reach only the kernel source (as `-D` definitions,
    // through `params`), not the host code: unused ones are not warned about.
    quote! {
        #[allow(unused_variables)]
        let #params_ty { #(#fields),* } = *params;
        #body
    }
}

/// `consts`: a `match` on the value index of each parameter with one arm per valid
/// configuration, whose body sees the parameters as `const`s ([`instances::bindings`]).
fn per_configuration(k: &Kernel) -> TokenStream {
    let (model, body) = (k.model, &k.f.block);
    let rebound = instances::rebound(k);
    let kernel_name = &model.name;
    let index_exprs = model.params.iter().map(|p| {
        let f = &p.name;
        let arms = p.values.iter().enumerate().map(|(i, v)| {
            let l = tokens::literal(v);
            let i = i as u16;
            quote!(if params.#f == #l { #i } else)
        });
        quote!(#(#arms)* { u16::MAX })
    });
    let arms = (0..model.space.len()).map(|pos| {
        let idx = model.space.indices(pos);
        let values: Vec<usize> = idx.iter().map(|&i| usize::from(i)).collect();
        let consts = instances::bindings(k, &values, &rebound);
        quote!((#(#idx),*) => { #consts #body })
    });
    quote! {
        match (#(#index_exprs),*) {
            #(#arms)*
            _ => panic!("{:?} is not a valid configuration of {}", params, #kernel_name),
        }
    }
}
