//! # The baked table
//!
//! At compile time the macro reads `tuned/<kernel>.bin` (the folder `TUNABLE_DIR` names, if set)
//! and keeps the entries whose space fingerprint and values still fit the annotation; the entry
//! point holds them as a `static` table of parameter structs, each with the index of its
//! [instance](super::instances), the copy of the body compiled with it as constants. Entries
//! that no longer fit are reported on the next tuning run; an unreadable file is a build warning
//! and the defaults run. A file whose checksum is valid but whose lengths claim more memory than
//! it holds (forged, or written by a bug), or one larger than the format allows, is a compile
//! error on the kernel's name: reading it is bounded (`tunable_search::format`), so rustc never
//! aborts on it.
//!
//! ## Rebuilding when the tuned file changes
//!
//! A proc macro cannot tell cargo which files it read (`proc_macro::tracked_path` is unstable),
//! but the code it generates can: `include_bytes!` of the tuned file's absolute path puts that
//! file into rustc's dep-info, and cargo rebuilds the crate when it is newer than the last build;
//! `option_env!("TUNABLE_DIR")` records an environment dependency that cargo rebuilds on when the
//! variable changes (set, unset or another value). Both work with stable cargo and rustc, with no
//! build script in the user's crate.
//!
//! `include_bytes!` needs an existing file, and a file that does not exist yet cannot be tracked
//! (a directory cannot be included, and a missing path in dep-info makes cargo rebuild on every
//! build). So when the kernel has no tuned file, the macro writes a **placeholder**: a valid
//! tuned file with no entries, which the first tuning replaces (and cargo then sees a newer
//! file). The placeholder is written only in a crate's own sources: a packaged crate (a registry
//! or vendored dependency, or `cargo publish`'s verification build, recognized by the
//! `Cargo.toml.orig` cargo puts in every package) never changes and is not written to; nor is a
//! folder that cannot be written (then the crate is rebuilt only when its sources change).
//!
//! ## Entries tuned with another kernel source
//!
//! A kernel that names its source files (`source = "kernel.wgsl"`, [`crate::source`]) has
//! their hashes recorded in every entry tuned since. An entry whose recorded hashes do not
//! include the files' as they are now was tuned on another text: its configuration may no
//! longer compile or fit the device's limits. It is not baked (nor its artifacts embedded, nor
//! its configurations put in a portable set), the build warns once, naming the kernel, the
//! entries and the command that tunes them again, and the calls run the default configuration
//! until then. The source files are included with `include_str!`, so an edit rebuilds the crate.
//! Entries written before the hashes (or of a kernel that names no files) cannot tell and are
//! baked as before.
//!
//! Beside it, the macro records the annotation's space fingerprint in `<kernel>.space` (only
//! when it changes), which `cargo tunable show` compares with each entry's to mark the entries
//! this annotation no longer bakes.

use super::{Kernel, params};
use crate::check::Model;
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::BTreeMap;
use std::path::Path;
use tunable_search::format::tuned::{
    DecodeError, ReadError, TunedEntry, encode, read, tuned_dir, tuned_file,
};

/// A baked entry: device, key and the value index of each parameter.
pub(super) struct BakedEntry {
    /// The device it was tuned on.
    pub(super) device: String,
    /// The problem-size key.
    pub(super) key: u64,
    /// The value index of each parameter of the baked configuration.
    pub(super) indices: Vec<usize>,
    /// The best configurations kept for the slot (value indices) with their times, fastest
    /// first: those that still fit the annotation.
    pub(super) ranked: Vec<(Vec<usize>, f64)>,
    /// The identities of the device binary files stored with it (empty: not recorded).
    pub(super) binaries: Vec<[u8; 32]>,
}

/// What the tuned file gave for one kernel.
pub(super) struct Tuned {
    /// The usable entries.
    pub(super) entries: Vec<BakedEntry>,
    /// The portable set of each key, by key ([`sets`]).
    pub(super) portable: Vec<(u64, Vec<Vec<usize>>)>,
    /// The distinct configurations of the entries and the portable sets (value indices), in that
    /// order: each is compiled into an [instance](super::instances) of the body.
    pub(super) instances: Vec<Vec<usize>>,
    /// Why each dropped entry was dropped, printed on the next tuning run.
    pub(super) dropped: Vec<String>,
    /// The file, if it exists (or a placeholder could be written): included so that a change to
    /// it rebuilds the crate.
    tracked: Option<String>,
    /// The kernel's source files (absolute paths), included so that an edit rebuilds the crate.
    sources: Vec<String>,
    /// A warning for an unreadable file, or for entries tuned with another kernel source.
    warning: Option<String>,
    /// The compile error for a file refused by the size limits.
    pub(super) error: Option<String>,
}

impl Tuned {
    /// Reads the kernel's tuned file (nothing outside a cargo build).
    pub(super) fn read(model: &Model) -> Tuned {
        let mut tuned = Tuned::of(vec![]);
        tuned.sources = model.sources.iter().map(|s| s.path.clone()).collect();
        let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") else {
            return tuned;
        };
        // The name was checked with the attribute.
        let Ok(path) = tuned_file(&tuned_dir(&manifest), &model.name) else {
            return tuned;
        };
        let own = !Path::new(&manifest).join("Cargo.toml.orig").exists();
        tuned.tracked = (path.exists() || own && placeholder(&path))
            .then(|| path.to_string_lossy().into_owned());
        if own {
            record_space(&path, model.space.fingerprint());
        }
        let entries = match read(&path) {
            Ok(e) => e,
            Err(
                e @ ReadError::Damaged {
                    error: DecodeError::LimitExceeded { .. } | DecodeError::TooLarge { .. },
                    ..
                },
            ) => {
                tuned.error = Some(format!(
                    "{e}; remove the file or restore it from version control"
                ));
                return tuned;
            }
            Err(e) => {
                tuned.warning = Some(format!("{e}; building with default configurations"));
                return tuned;
            }
        };
        let current: Vec<u64> = model.sources.iter().map(|s| s.hash).collect();
        let mut stale = Vec::new();
        for e in entries.into_iter().filter(|e| e.kernel == model.name) {
            match indices_of(model, &e) {
                Some(_) if !e.is_current(&current) => {
                    stale.push(format!("device {:?}, key {}", e.device, e.key));
                }
                Some(indices) => tuned.entries.push(BakedEntry {
                    ranked: e
                        .ranked()
                        .into_iter()
                        .filter_map(|(values, t)| Some((fits(model, &values)?, t)))
                        .collect(),
                    device: e.device,
                    key: e.key,
                    indices,
                    binaries: e.binaries,
                }),
                None => tuned.dropped.push(format!(
                    "tunable: dropped the tuned configuration of {} for device {:?}, key {}: it no longer fits the annotation (parameters, values or constraints changed)",
                    e.kernel, e.device, e.key
                )),
            }
        }
        if !stale.is_empty() {
            tuned.warning = Some(stale_warning(model, &stale));
        }
        tuned.add_instances();
        tuned
    }

    /// What the usable `entries` give, without a file.
    pub(super) fn of(entries: Vec<BakedEntry>) -> Tuned {
        let mut tuned = Tuned {
            entries,
            portable: vec![],
            instances: vec![],
            dropped: vec![],
            tracked: None,
            sources: vec![],
            warning: None,
            error: None,
        };
        tuned.add_instances();
        tuned
    }

    /// The portable sets of the entries, and the instances of the entries' and the sets'
    /// configurations.
    fn add_instances(&mut self) {
        self.portable = sets(&self.entries);
        let configurations = self.entries.iter().map(|e| &e.indices);
        for c in configurations.chain(self.portable.iter().flat_map(|(_, set)| set)) {
            if !self.instances.contains(c) {
                self.instances.push(c.clone());
            }
        }
    }

    /// The index of the instance compiled for a configuration of the table or a portable set.
    ///
    /// # Panics
    /// If it is neither (a bug: [`Tuned::read`] makes an instance of each).
    pub(super) fn instance(&self, indices: &[usize]) -> u16 {
        let i = self
            .instances
            .iter()
            .position(|c| c == indices)
            .expect("every baked or portable configuration has an instance");
        u16::try_from(i).expect("at most 65536 instances")
    }

    /// The table's elements: `Baked { device, key, params, instance }`.
    pub(super) fn table(&self, k: &Kernel) -> TokenStream {
        let entries = self.entries.iter().map(|b| {
            let (d, key, s) = (&b.device, b.key, params::literal(k, &b.indices));
            let instance = self.instance(&b.indices);
            quote!(::tunable::__private::Baked { device: #d, key: #key, params: #s, instance: #instance })
        });
        quote!(#(#entries),*)
    }

    /// `include_bytes!` of the file and `include_str!` of the kernel's source files, so that
    /// cargo rebuilds when one changes, and `option_env!` of `TUNABLE_DIR` and
    /// `TUNABLE_EMBED_LIMIT`, so that it rebuilds when the folder or the embedding limit changes
    /// (see the [module docs](self)).
    pub(super) fn track(&self) -> TokenStream {
        let file = self.tracked.as_ref().map(|p| {
            quote!(
                const _: &[u8] = include_bytes!(#p);
            )
        });
        let sources = &self.sources;
        quote! {
            #file
            #(const _: &str = include_str!(#sources);)*
            const _: ::core::option::Option<&str> = option_env!("TUNABLE_DIR");
            const _: ::core::option::Option<&str> = option_env!("TUNABLE_EMBED_LIMIT");
        }
    }

    /// The warning for an unreadable file or for entries of another kernel source, as a use of
    /// a deprecated item.
    pub(super) fn warn(&self) -> Option<TokenStream> {
        self.warning.as_deref().map(super::tokens::warning)
    }
}

/// One device's best configurations (value indices) with their times, fastest first.
type Ranked = Vec<(Vec<usize>, f64)>;

/// The portable set of each key (value indices, best compromise first), by key; keys whose set
/// is empty are left out.
pub(super) fn sets(entries: &[BakedEntry]) -> Vec<(u64, Vec<Vec<usize>>)> {
    let mut by_key: BTreeMap<u64, Vec<Ranked>> = BTreeMap::new();
    for e in entries {
        by_key.entry(e.key).or_default().push(e.ranked.clone());
    }
    by_key
        .into_iter()
        .map(|(key, devices)| (key, tunable_search::portable::shipped(&devices)))
        .filter(|(_, set)| !set.is_empty())
        .collect()
}

/// The build warning for the entries of `model` tuned with another text of its source files
/// (`stale` names them): what is not baked, and how to tune them again.
fn stale_warning(model: &Model, stale: &[String]) -> String {
    let files: Vec<&str> = model.sources.iter().map(|s| s.written.as_str()).collect();
    format!(
        "tunable: the source of kernel `{name}` ({files}) changed since it was tuned for {which}: \
         those configurations are not baked and the default configuration runs; tune them again \
         with `cargo tunable tune --kernel {name}` (or a build with `--features autotune`)",
        name = model.name,
        files = files.join(", "),
        which = stale.join("; "),
    )
}

/// Writes an empty tuned file at `path` for a kernel that has none, so that the build can track
/// it (see the [module docs](self)); whether `path` exists now. Never overwrites a file written
/// meanwhile (the placeholder is linked into place, which fails if the file exists).
fn placeholder(path: &Path) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    let tmp = dir.join(format!(".placeholder-{}.tmp", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, encode(&[])))
        .and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    written.is_ok() || path.exists()
}

/// Records the annotation's space fingerprint beside the tuned file (`<kernel>.space`, in hex),
/// for `cargo tunable show` to mark the entries that no longer fit; written only when it
/// changes, and never included in the build. Best effort: a folder that cannot be written only
/// leaves `show` without the mark.
fn record_space(tuned_file: &Path, fingerprint: u64) {
    let path = tuned_file.with_extension("space");
    let text = format!("{fingerprint:016x}\n");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        let _ = std::fs::write(path, text);
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
