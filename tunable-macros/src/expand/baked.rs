//! # The baked table
//!
//! At compile time the macro reads `tuned/<kernel>.bin` (the folder `TUNABLE_DIR` names, if set)
//! and keeps the entries whose space fingerprint and values still fit the annotation; the entry
//! point holds them as a `static` table of parameter structs. Entries that no longer fit are
//! reported on the next tuning run; an unreadable file is a build warning and the defaults run.

use super::{Kernel, params};
use crate::check::Model;
use proc_macro2::TokenStream;
use quote::quote;
use tunable_search::format::tuned::{TunedEntry, read, tuned_dir, tuned_file};

/// A baked entry: device, key and the value index of each parameter.
pub(super) struct BakedEntry {
    /// The device it was tuned on.
    pub(super) device: String,
    /// The problem-size key.
    pub(super) key: u64,
    indices: Vec<usize>,
    /// The best configurations kept for the slot (value indices) with their times, fastest
    /// first: those that still fit the annotation.
    pub(super) ranked: Vec<(Vec<usize>, f64)>,
}

/// What the tuned file gave for one kernel.
pub(super) struct Tuned {
    /// The usable entries.
    pub(super) entries: Vec<BakedEntry>,
    /// Why each dropped entry was dropped, printed on the next tuning run.
    pub(super) dropped: Vec<String>,
    /// The file, if it exists: included so that a change to it rebuilds the crate.
    tracked: Option<String>,
    /// A warning for an unreadable file.
    warning: Option<String>,
}

impl Tuned {
    /// Reads the kernel's tuned file (nothing outside a cargo build).
    pub(super) fn read(model: &Model) -> Tuned {
        let mut tuned = Tuned {
            entries: vec![],
            dropped: vec![],
            tracked: None,
            warning: None,
        };
        let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") else {
            return tuned;
        };
        let path = tuned_file(&tuned_dir(&manifest), &model.name);
        tuned.tracked = path.exists().then(|| path.to_string_lossy().into_owned());
        let entries = match read(&path) {
            Ok(e) => e,
            Err(e) => {
                tuned.warning = Some(format!("{e}; building with default configurations"));
                return tuned;
            }
        };
        for e in entries.into_iter().filter(|e| e.kernel == model.name) {
            match indices_of(model, &e) {
                Some(indices) => tuned.entries.push(BakedEntry {
                    ranked: e
                        .ranked()
                        .into_iter()
                        .filter_map(|(values, t)| Some((fits(model, &values)?, t)))
                        .collect(),
                    device: e.device,
                    key: e.key,
                    indices,
                }),
                None => tuned.dropped.push(format!(
                    "tunable: dropped the tuned configuration of {} for device {:?}, key {}: it no longer fits the annotation (parameters, values or constraints changed)",
                    e.kernel, e.device, e.key
                )),
            }
        }
        tuned
    }

    /// The table's elements: `Baked { device, key, params }`.
    pub(super) fn table(&self, k: &Kernel) -> TokenStream {
        let entries = self.entries.iter().map(|b| {
            let (d, key, s) = (&b.device, b.key, params::literal(k, &b.indices));
            quote!(::tunable::__private::Baked { device: #d, key: #key, params: #s })
        });
        quote!(#(#entries),*)
    }

    /// `include_bytes!` of the file, so that cargo rebuilds when it changes.
    pub(super) fn track(&self) -> Option<TokenStream> {
        self.tracked.as_ref().map(|p| {
            quote!(
                const _: &[u8] = include_bytes!(#p);
            )
        })
    }

    /// The warning for an unreadable file, as a use of a deprecated item.
    pub(super) fn warn(&self) -> Option<TokenStream> {
        self.warning.as_ref().map(|w| {
            quote! {
                #[deprecated(note = #w)]
                #[allow(non_camel_case_types)]
                struct __tunable_warning;
                #[allow(dead_code)]
                fn __tunable_warn() { let _ = __tunable_warning; }
            }
        })
    }
}

/// The value indices of a stored entry, if it was tuned in this space and is still valid.
fn indices_of(model: &Model, e: &TunedEntry) -> Option<Vec<usize>> {
    if e.space_hash != model.space.fingerprint() || e.params.len() != model.params.len() {
        return None;
    }
    fits(model, &e.values())
}

/// The value indices of a configuration, if it is valid in the annotation's space.
fn fits(model: &Model, values: &[tunable_search::Value]) -> Option<Vec<usize>> {
    let idx: Vec<u16> = model.space.indices_of(values)?;
    model
        .space
        .contains(&idx)
        .then(|| idx.into_iter().map(usize::from).collect())
}
