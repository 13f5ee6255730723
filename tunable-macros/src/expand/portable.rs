//! # The portable sets
//!
//! For devices nobody tuned on, the entry point carries per key a *portable set*: up to
//! [`SHIPPED`](tunable_search::portable::SHIPPED) configurations chosen at compile time from the
//! best configurations every tuned device kept for that key
//! ([`tunable_search::portable::shipped`]), as a `static` table of `Portable { key, candidates }`,
//! each candidate with its [instance](super::instances).
//! A shipped binary on an unknown device times them once and keeps the fastest
//! (`tunable_runtime::tuner::unseen`). The sets are chosen as the tuned file is read
//! ([`super::baked`]); this file writes their table.

use super::baked::Tuned;
use super::{Kernel, params};
use proc_macro2::TokenStream;
use quote::quote;

/// The table's elements: `Portable { key, candidates: &[Variant { params, instance }, ...] }`,
/// one per key, by key.
pub(super) fn table(tuned: &Tuned, k: &Kernel) -> TokenStream {
    let sets = tuned.portable.iter().map(|(key, set)| {
        let candidates = set.iter().map(|c| {
            let (p, instance) = (params::literal(k, c), tuned.instance(c));
            quote!(::tunable::__private::Variant { params: #p, instance: ::core::option::Option::Some(#instance) })
        });
        quote!(::tunable::__private::Portable { key: #key, candidates: &[#(#candidates),*] })
    });
    quote!(#(#sets),*)
}
