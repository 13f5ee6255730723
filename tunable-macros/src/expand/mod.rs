//! # Code generation
//!
//! What `#[tunable]` emits for one kernel, one generator per item, in the order they appear:
//! - [`params`]: the parameter struct and its impls (`Default`, `values`, `Params`), with the
//!   [`artifacts`] embedded for the baked entries (GPU kernels' device binaries);
//! - [`space`]: `<name>_space()`, the search space;
//! - [`with`]: `<name>_with(&params, args...)`, one variant without tuning;
//! - [`instances`]: in a shipped build, one copy of the body per configuration of the [`baked`]
//!   table and the [`portable`] sets, with the parameters as constants;
//! - [`entry`]: `<name>(args...)`, the tuned entry point, which holds the [`baked`] table of
//!   tuned configurations read from `tuned/<kernel>.bin` at compile time, the [`portable`] sets
//!   for devices nobody tuned on, and the [`verify`] glue that reads the checked output while
//!   tuning;
//! - [`config`]: `<name>_config(args...)`, which configuration the entry point runs for these
//!   arguments and where it comes from.
//!
//! [`tokens`] writes values and types for all of them. Every generated path into the runtime goes
//! through `::tunable::__private`.

mod artifacts;
mod baked;
mod config;
mod entry;
mod instances;
mod params;
mod portable;
mod space;
mod tokens;
mod verify;
mod with;

use crate::check::Model;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{FnArg, Ident, ItemFn, Pat, Receiver, Type};

/// Where the function lives: free, or a method of `impl Self`.
pub(crate) struct Place {
    /// The `Self` type's name, for methods.
    pub self_ty: Option<Ident>,
}

/// The function's argument names (without the receiver), and whether each is a `&mut` that the
/// tuning closure must reborrow.
pub(crate) fn arg_names(f: &ItemFn) -> syn::Result<Vec<(Ident, bool)>> {
    let mut out = Vec::new();
    for a in &f.sig.inputs {
        if let FnArg::Typed(pt) = a {
            let Pat::Ident(pi) = &*pt.pat else {
                return Err(syn::Error::new_spanned(
                    &pt.pat,
                    "#[tunable] needs plain argument names (no patterns)",
                ));
            };
            let reborrow = matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_some());
            out.push((pi.ident.clone(), reborrow));
        }
    }
    Ok(out)
}

/// One kernel being expanded: the checked model, the function as written, and the names of the
/// generated items, shared by every generator.
struct Kernel<'a> {
    model: &'a Model,
    f: &'a ItemFn,
    /// `self`, `&self` or `&mut self` of a method.
    receiver: Option<&'a Receiver>,
    /// The argument names and whether each is reborrowed (see [`arg_names`]).
    args: Vec<(Ident, bool)>,
    /// `<Type><Name>Params` (`<Name>Params` for a free function).
    params_ty: Ident,
    /// `<name>_with`.
    with_fn: Ident,
    /// `<name>_space`.
    space_fn: Ident,
    /// How the entry point calls `<name>_with`: `with`, `Self::with` or `self.with`.
    call_with: TokenStream,
    /// How the entry point calls `<name>_space`.
    call_space: TokenStream,
    /// Whether the function is a method (in `impl Self`).
    method: bool,
}

impl<'a> Kernel<'a> {
    fn new(model: &'a Model, f: &'a ItemFn, place: &Place) -> syn::Result<Self> {
        let args = arg_names(f)?;
        let receiver = f.sig.inputs.iter().find_map(|a| {
            if let FnArg::Receiver(r) = a {
                Some(r)
            } else {
                None
            }
        });
        if receiver.is_some() && place.self_ty.is_none() {
            return Err(syn::Error::new_spanned(
                receiver,
                "for a method, put `#[tunable]` (without arguments) on the impl block too",
            ));
        }
        let name = &f.sig.ident;
        let prefix = place
            .self_ty
            .as_ref()
            .map_or_else(String::new, |t| tokens::pascal(&t.to_string()));
        let params_ty = format_ident!("{}{}Params", prefix, tokens::pascal(&name.to_string()));
        let with_fn = format_ident!("{}_with", name);
        let space_fn = format_ident!("{}_space", name);
        let method = place.self_ty.is_some();
        let call_space = if method {
            quote!(Self::#space_fn())
        } else {
            quote!(#space_fn())
        };
        let mut k = Kernel {
            model,
            f,
            receiver,
            args,
            params_ty,
            with_fn,
            space_fn,
            call_with: TokenStream::new(),
            call_space,
            method,
        };
        k.call_with = k.call(&k.with_fn);
        Ok(k)
    }

    /// How the entry point calls a generated sibling `f` taking the same receiver as the
    /// function: `f`, `Self::f` or `self.f`.
    fn call(&self, f: &Ident) -> TokenStream {
        match (self.receiver.is_some(), self.method) {
            (true, _) => quote!(self.#f),
            (false, true) => quote!(Self::#f),
            (false, false) => quote!(#f),
        }
    }

    /// The parameter names, which are also the struct's fields and the body's locals.
    fn fields(&self) -> Vec<&Ident> {
        self.model.params.iter().map(|p| &p.name).collect()
    }
}

/// The items for one kernel: `(outer, inner)`; for a free function both go to the module, for a
/// method `inner` goes into the impl block and `outer` (the parameter struct) beside it.
pub(crate) fn expand(
    model: &Model,
    f: &ItemFn,
    place: &Place,
) -> syn::Result<(TokenStream, TokenStream)> {
    let tuned = baked::Tuned::read(model);
    if let Some(error) = &tuned.error {
        return Err(syn::Error::new(f.sig.ident.span(), error));
    }
    with_tuned(model, f, place, &tuned)
}

/// [`expand`] with the tuned entries given.
fn with_tuned(
    model: &Model,
    f: &ItemFn,
    place: &Place,
    tuned: &baked::Tuned,
) -> syn::Result<(TokenStream, TokenStream)> {
    let k = Kernel::new(model, f, place)?;
    let embedded = artifacts::embedded(model, tuned);
    let warnings = embedded.warnings.iter().map(|w| tokens::warning(w));
    let outer = params::items(&k, artifacts::method(&embedded.files));
    let outer = quote!(#outer #(#warnings)*);
    let (space, with) = (space::item(&k), with::item(&k));
    let instances = instances::items(&k, tuned);
    let (entry, config) = (entry::item(&k, tuned), config::item(&k, tuned));
    Ok((outer, quote!(#space #with #instances #entry #config)))
}
