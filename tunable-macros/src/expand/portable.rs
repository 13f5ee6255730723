//! # The portable sets
//!
//! For devices nobody tuned on, the entry point carries per key a *portable set*: up to
//! [`SHIPPED`](tunable_search::portable::SHIPPED) configurations chosen at compile time from the
//! best configurations every tuned device kept for that key
//! ([`tunable_search::portable::shipped`]), as a `static` table of `Portable { key, candidates }`.
//! A shipped binary on an unknown device times them once and keeps the fastest
//! (`tunable_runtime::tuner::unseen`).

use super::baked::Tuned;
use super::{Kernel, params};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::BTreeMap;

/// One device's best configurations (value indices) with their times, fastest first.
type Ranked = Vec<(Vec<usize>, f64)>;

/// The table's elements: `Portable { key, candidates: &[params...] }`, one per key, by key.
pub(super) fn table(tuned: &Tuned, k: &Kernel) -> TokenStream {
    let mut by_key: BTreeMap<u64, Vec<Ranked>> = BTreeMap::new();
    for e in &tuned.entries {
        by_key.entry(e.key).or_default().push(e.ranked.clone());
    }
    let sets = by_key.into_iter().filter_map(|(key, devices)| {
        let set = tunable_search::portable::shipped(&devices);
        if set.is_empty() {
            return None;
        }
        let candidates = set.iter().map(|c| params::literal(k, c));
        Some(quote!(::tunable::__private::Portable { key: #key, candidates: &[#(#candidates),*] }))
    });
    quote!(#(#sets),*)
}
