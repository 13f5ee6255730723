//! # The instances with constants
//!
//! A shipped build runs the configurations it carries with the parameters as constants, as if
//! written by hand: for each distinct configuration of the [baked](super::baked) table and the
//! [portable](super::portable) sets (a handful, whatever the size of the space) the macro emits a
//! copy of the body, an *instance*, in which each parameter is a `const` item
//! (`const bm: usize = 64;`) and `params` the constant configuration:
//!
//! ```text
//! fn __tunable_matmul_0(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
//!     const bm: usize = 64; const unroll: usize = 8;
//!     let params: &MatmulParams = &MatmulParams { bm: 64, unroll: 8 };
//!     /* the body */
//! }
//! ```
//!
//! Each table entry carries the index of its instance, so the entry point dispatches with a
//! `match` on the index the selection answers ([`dispatch`]), at no cost beyond the selection.
//! Everything else runs the one generic body of `<name>_with`, with the parameters as run-time
//! values: the default configuration, every call of a build with the `autotune` feature (which
//! compiles no instance), and `<name>_with` itself.
//!
//! A parameter the body rebinds (`let tile = tile.min(n);`, a closure argument or a pattern
//! named like it) cannot be a `const`, whose name in a pattern would be a constant pattern: in
//! the instances it is a local initialized with the literal instead, which the optimizer folds
//! just the same. The `consts` option's instances (every configuration, in `<name>_with`) use
//! the same [`bindings`].

use super::baked::Tuned;
use super::{Kernel, params, tokens};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit::Visit;
use syn::{FnArg, Ident};

/// The instances of the kernel's configurations in `tuned`, compiled only in shipped builds
/// (`__private::shipped_only!`); nothing without a tuned entry.
pub(super) fn items(k: &Kernel, tuned: &Tuned) -> TokenStream {
    if tuned.instances.is_empty() {
        return TokenStream::new();
    }
    let sig = &k.f.sig;
    let (impl_g, _, where_c) = sig.generics.split_for_impl();
    let output = &sig.output;
    let typed = sig.inputs.iter().filter(|a| matches!(a, FnArg::Typed(_)));
    let inputs = match k.receiver {
        Some(r) => quote!(#r, #(#typed),*),
        None => quote!(#(#typed),*),
    };
    let cfg =
        k.f.attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"));
    let (params_ty, body) = (&k.params_ty, &k.f.block);
    let rebound = rebound(k);
    let fns = tuned.instances.iter().enumerate().map(|(i, idx)| {
        let name = name(k, i);
        let consts = bindings(k, idx, &rebound);
        let literal = params::literal(k, idx);
        let cfg = cfg.clone();
        // The body's lints are reported once, on `<name>_with`; here constants can make rustc
        // see a panic or an overflow in code that never runs with these values. No `#[inline]`:
        // with it rustc's own (MIR) inliner may inline the instance into the entry point's
        // caller, losing that `&mut` arguments do not alias, and the kernel then runs runtime
        // alias checks a hand-written call does not (measured on `benches/dispatch.rs`: 32 ns
        // against 26 ns); LLVM still inlines it where that pays.
        quote! {
            #(#cfg)*
            #[doc(hidden)]
            #[allow(
                non_snake_case, warnings, arithmetic_overflow, unconditional_panic,
                clippy::all, clippy::pedantic, clippy::nursery
            )]
            fn #name #impl_g (#inputs) #output #where_c {
                #consts
                let params: &#params_ty = &#literal;
                #body
            }
        }
    });
    quote! {
        ::tunable::__private::shipped_only! { #(#fns)* }
    }
}

/// `match variant.instance { Some(i) => instance i (args), .., _ => <name>_with(&variant.params,
/// args) }`: runs the `Variant` `variant` (an expression of a place) on `args`.
pub(super) fn dispatch(
    k: &Kernel,
    tuned: &Tuned,
    variant: &TokenStream,
    args: &[TokenStream],
) -> TokenStream {
    let call_with = &k.call_with;
    let generic = quote!(#call_with(&#variant.params, #(#args),*));
    if tuned.instances.is_empty() {
        return generic;
    }
    let arms = (0..tuned.instances.len()).map(|i| {
        let (call, i16) = (k.call(&name(k, i)), i as u16);
        quote!(::core::option::Option::Some(#i16) => #call(#(#args),*),)
    });
    quote! {
        match #variant.instance {
            #(#arms)*
            _ => #generic,
        }
    }
}

/// The name of instance `i`: `__tunable_<name>_<i>`.
fn name(k: &Kernel, i: usize) -> Ident {
    format_ident!("__tunable_{}_{}", k.f.sig.ident, i)
}

/// The parameters of the configuration `idx` (value indices) as `const` items, or as locals
/// for those in `rebound` (see the [module docs](self)).
pub(super) fn bindings(k: &Kernel, idx: &[usize], rebound: &[Ident]) -> TokenStream {
    let items = k.model.params.iter().zip(idx).map(|(p, &i)| {
        let (f, ty, l) = (&p.name, tokens::ty(&p.ty), tokens::literal(&p.values[i]));
        if rebound.contains(f) {
            quote!(#[allow(unused_variables)] let #f: #ty = #l;)
        } else {
            quote!(#[allow(non_upper_case_globals)] const #f: #ty = #l;)
        }
    });
    quote!(#(#items)*)
}

/// The parameters the body binds a name of its own to, in a pattern (`let`, closure and
/// function arguments, `match` arms, `for` loops). Macro invocations are opaque here.
pub(super) fn rebound(k: &Kernel) -> Vec<Ident> {
    struct Patterns<'a> {
        params: Vec<&'a Ident>,
        found: Vec<Ident>,
    }
    impl<'ast> Visit<'ast> for Patterns<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            if self.params.contains(&&p.ident) && !self.found.contains(&p.ident) {
                self.found.push(p.ident.clone());
            }
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = Patterns {
        params: k.fields(),
        found: Vec::new(),
    };
    v.visit_block(&k.f.block);
    v.found
}
