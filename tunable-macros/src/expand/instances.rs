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
//! A function returning `impl Trait` has no instances: each copy would return a type of its
//! own, and the entry point can return only one.
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
    if count(k, tuned) == 0 {
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
        // an instance inlined into its caller's loop may be compiled with run-time alias checks
        // between its slices that a hand-written call with constants has not, which makes the
        // shipped call slower than the hand-written one (`benches/dispatch.rs` measures both;
        // the figures are in `docs/notes/evidence.md`).
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
    let n = count(k, tuned);
    if n == 0 {
        return generic;
    }
    let arms = (0..n).map(|i| {
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

/// How many instances the kernel has: one per configuration in `tuned`, none for a function
/// returning `impl Trait` (see the [module docs](self)).
fn count(k: &Kernel, tuned: &Tuned) -> usize {
    struct Opaque(bool);
    impl<'ast> Visit<'ast> for Opaque {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut opaque = Opaque(false);
    opaque.visit_return_type(&k.f.sig.output);
    if opaque.0 { 0 } else { tuned.instances.len() }
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

#[cfg(test)]
mod tests {
    use super::super::baked::BakedEntry;
    use super::super::{Place, arg_names, with_tuned};
    use super::*;
    use crate::{attr, check};
    use syn::parse::Parser;
    use syn::punctuated::Punctuated;

    /// The kernel `f` with the attribute arguments `args`, expanded with `entries` baked
    /// (`(key, value indices)`, one device): the instances' and the whole expansion's code.
    fn expanded(
        args: TokenStream,
        f: syn::ItemFn,
        entries: &[(u64, &[usize])],
    ) -> (String, String) {
        let args = Punctuated::<attr::Arg, syn::Token![,]>::parse_terminated
            .parse2(args)
            .unwrap();
        let names: Vec<Ident> = arg_names(&f).unwrap().into_iter().map(|(n, _)| n).collect();
        let model = check::model(args.into_iter().collect(), &f.sig.ident, &names).unwrap();
        let k = Kernel::new(&model, &f, &Place { self_ty: None }).unwrap();
        let tuned = Tuned::of(
            entries
                .iter()
                .map(|&(key, idx)| BakedEntry {
                    device: "cpu".into(),
                    key,
                    indices: idx.to_vec(),
                    ranked: vec![(idx.to_vec(), 1.0)],
                    binaries: vec![],
                })
                .collect(),
        );
        let (outer, inner) = with_tuned(&model, &f, &Place { self_ty: None }, &tuned).unwrap();
        (
            items(&k, &tuned).to_string(),
            quote!(#outer #inner).to_string(),
        )
    }

    fn kernel() -> syn::ItemFn {
        syn::parse_quote! {
            fn k(x: &mut [f32]) -> usize {
                let mut lanes = [0.0f32; 4];
                for c in x.chunks(a + 1) { lanes[0] += c[0] * b as f32; }
                a + b
            }
        }
    }

    #[test]
    fn the_code_grows_with_the_baked_configurations_not_with_the_space() {
        let big = quote!(a = 0..100, b = 0..100);
        // The same values, 100 valid configurations instead of 10,000.
        let small = quote!(a = 0..100, b = 0..100, constraint = "a == b");
        let count = |code: &str| code.matches("fn __tunable_k_").count();
        // Nothing baked: no instance, nothing changes.
        let (none, none_all) = expanded(big.clone(), kernel(), &[]);
        assert!(none.is_empty(), "{none}");
        // One instance per distinct configuration, whatever the space.
        let (one, one_all) = expanded(big.clone(), kernel(), &[(64, &[37, 61])]);
        assert_eq!(count(&one), 1, "{one}");
        assert!(one.contains("const a : usize = 37 ;") && one.contains("const b : usize = 61 ;"));
        let (two, _) = expanded(
            big.clone(),
            kernel(),
            &[(64, &[37, 61]), (128, &[37, 61]), (256, &[1, 2])],
        );
        assert_eq!(count(&two), 2, "{two}");
        // An entry in a space of 100 configurations costs as much code as in one of 10,000.
        let (_, small_all) = expanded(small, kernel(), &[(64, &[37, 37])]);
        let body = one.len() / count(&one);
        assert!(
            one_all.len().abs_diff(small_all.len()) < body,
            "10,000 configurations: {} bytes of code, 100: {}",
            one_all.len(),
            small_all.len()
        );
        // The table, the portable set and the dispatch add a few lines per entry beside its body.
        assert!(one_all.len() - none_all.len() < 3 * body);
    }

    #[test]
    fn a_parameter_the_body_rebinds_is_a_local_in_the_instances() {
        let f: syn::ItemFn = syn::parse_quote! {
            fn k(n: usize) -> usize {
                let a = a.min(n);
                let g = |b: usize| b + 1;
                match n { c => g(a) + c }
            }
        };
        let (code, _) = expanded(
            quote!(a = [1, 2], b = [3, 4], c = [5, 6]),
            f,
            &[(0, &[1, 0, 1])],
        );
        assert!(code.contains("let a : usize = 2 ;"), "{code}");
        assert!(code.contains("let b : usize = 3 ;"), "{code}");
        assert!(code.contains("let c : usize = 6 ;"), "{code}");
        let (code, _) = expanded(quote!(a = [1, 2]), kernel_with_a(), &[(0, &[1])]);
        assert!(code.contains("const a : usize = 2 ;"), "{code}");
    }

    #[test]
    fn a_function_returning_impl_trait_has_no_instances() {
        let f: syn::ItemFn = syn::parse_quote! {
            fn k(n: usize) -> impl Iterator<Item = usize> { (0..n).step_by(a) }
        };
        let (code, all) = expanded(quote!(a = [1, 2]), f, &[(0, &[1])]);
        assert!(code.is_empty(), "{code}");
        assert!(!all.contains("__tunable_k_"), "{all}");
    }

    fn kernel_with_a() -> syn::ItemFn {
        syn::parse_quote! {
            fn k(n: usize) -> usize { let m = a.min(n); m }
        }
    }
}
