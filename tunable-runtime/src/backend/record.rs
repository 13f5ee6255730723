//! # Recording the binaries a tuning builds
//!
//! The tuner tunes a kernel inside [`record`]: every program a GPU backend hands out on the
//! tuning's thread meanwhile (`cl.kernel(..)`, `gpu.kernel(..)`, `cuda::image`) is
//! noted with the definitions it was built with, as a way to produce its binaries later
//! (nothing is copied while tuning). When the winner is stored, the tuner asks the
//! [`Recorded`] programs for the binaries built with the winner's definitions
//! ([`Recorded::binaries`]) and stores them beside the tuned file; the other configurations'
//! binaries are never produced.
//!
//! A recording also tells which programs were asked for, by content (source text, entry point,
//! options and target, not the definitions), whether or not they built:
//! [`Recorded::programs`]. The first-run hook keys its journal with it, so that a tuning of an
//! edited kernel source is not answered with measurements of the old one, even when the
//! configuration that showed the programs fails to compile.
//!
//! Recordings are per thread and nest (an inner recording does not see into the outer one):
//! the variants of a tuning run on its thread, and builds prebuilt on a pool are
//! noted when the variant that asked for them runs.

// Backends note programs; without one, recordings stay empty.
#![cfg_attr(
    not(any(feature = "cuda", feature = "opencl", feature = "wgpu")),
    allow(dead_code)
)]

use super::Source;
use std::cell::RefCell;
use std::collections::HashSet;
use tunable_search::format::artifact::Recipe;

/// Produces the binaries of one noted program, each with its recipe, or why it cannot.
pub(crate) type Produce = Box<dyn Fn() -> Result<Vec<(Recipe, Vec<u8>)>, String>>;

struct Noted {
    definitions: Vec<String>,
    produce: Produce,
}

#[derive(Default)]
struct Recording {
    seen: HashSet<u64>,
    noted: Vec<Noted>,
    /// The keys of the programs asked for (without definitions), each noted once.
    asked: HashSet<u64>,
    /// Their [`program`] hashes.
    programs: Vec<u64>,
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

/// Runs `f`, recording the programs the GPU backends hand out on this thread meanwhile.
pub fn record<R>(f: impl FnOnce() -> R) -> (R, Recorded) {
    let outer = RECORDING.replace(Some(Recording::default()));
    let r = f();
    let rec = RECORDING.replace(outer).unwrap_or_default();
    (
        r,
        Recorded {
            noted: rec.noted,
            programs: rec.programs,
        },
    )
}

/// Notes that a program was asked for, before it is built (so a build that fails is noted too),
/// if this thread records: `key` tells one program from another without reading its text (a
/// [`key`] without definitions), and `program` (its [`program`] hash) is asked for only the
/// first time.
pub(crate) fn note_asked(key: impl FnOnce() -> u64, program: impl FnOnce() -> u64) {
    RECORDING.with_borrow_mut(|rec| {
        if let Some(rec) = rec
            && rec.asked.insert(key())
        {
            rec.programs.push(program());
        }
    });
}

/// Notes that `source` was asked for on `target` ([`note_asked`]): what a backend calls first on
/// every request, before defining or building anything.
pub(crate) fn note_source(source: &Source, target: &str) {
    note_asked(
        || key(source.code, source.kernel, source.options, &[], target),
        || program(source.code, source.kernel, source.options, target),
    );
}

/// Notes a program built with `definitions` if this thread records (nothing else happens
/// otherwise: backends call it on every request); its `key` tells one program from another
/// (equal keys are noted once), and `produce` is asked for the way to produce its binaries only
/// the first time.
pub(crate) fn note(
    key: impl FnOnce() -> u64,
    definitions: &[String],
    produce: impl FnOnce() -> Produce,
) {
    RECORDING.with_borrow_mut(|rec| {
        if let Some(rec) = rec
            && rec.seen.insert(key())
        {
            rec.noted.push(Noted {
                definitions: definitions.to_vec(),
                produce: produce(),
            });
        }
    });
}

/// A program by content, whatever its definitions: the hash of its source text, entry point,
/// options and target. Unlike [`key`] it reads the whole text, so it is computed once per
/// program asked for ([`note_asked`]).
pub(crate) fn program(code: &str, entry: &str, options: &[&str], target: &str) -> u64 {
    let text = Recipe::source_hash(code).to_le_bytes();
    let mut parts: Vec<&[u8]> = vec![&text, entry.as_bytes(), b"\x1d", target.as_bytes()];
    for o in options {
        parts.extend([b"\x1d".as_slice(), o.as_bytes()]);
    }
    tunable_search::fingerprint::fnv1a(&parts)
}

/// The programs a [`record`]ing saw.
pub struct Recorded {
    noted: Vec<Noted>,
    programs: Vec<u64>,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorded")
            .field("programs", &self.noted.len())
            .finish()
    }
}

impl Recorded {
    /// Whether no GPU backend handed out a program meanwhile (a CPU kernel, say).
    pub fn is_empty(&self) -> bool {
        self.noted.is_empty()
    }

    /// The programs asked for, built or not, by content (source text, entry point, options, target), as one hash that does
    /// not depend on their order or definitions; `None` if there were none (a CPU kernel).
    pub fn programs(&self) -> Option<u64> {
        let mut all = self.programs.clone();
        all.sort_unstable();
        all.dedup();
        let bytes: Vec<[u8; 8]> = all.iter().map(|p| p.to_le_bytes()).collect();
        let parts: Vec<&[u8]> = bytes.iter().map(|b| b.as_slice()).collect();
        (!all.is_empty()).then(|| tunable_search::fingerprint::fnv1a(&parts))
    }

    /// The binaries of every program built with exactly `definitions` (a configuration's, from
    /// [`crate::backend::definitions`]), with their recipes, in the order they were first
    /// handed out; or why one could not be produced.
    pub fn binaries(&self, definitions: &[String]) -> Result<Vec<(Recipe, Vec<u8>)>, String> {
        let mut out = Vec::new();
        for n in self.noted.iter().filter(|n| n.definitions == definitions) {
            out.extend((n.produce)()?);
        }
        Ok(out)
    }
}

/// The key of a program for [`note`]: its source text (by address), entry point, options,
/// definitions and target.
pub(crate) fn key(
    code: &str,
    entry: &str,
    options: &[&str],
    definitions: &[String],
    target: &str,
) -> u64 {
    let (at, len) = (
        (code.as_ptr() as usize).to_le_bytes(),
        code.len().to_le_bytes(),
    );
    let mut parts: Vec<&[u8]> = vec![&at, &len, entry.as_bytes(), target.as_bytes()];
    parts.extend(options.iter().map(|o| o.as_bytes()));
    parts.push(b"\x1d");
    parts.extend(definitions.iter().map(String::as_bytes));
    tunable_search::fingerprint::fnv1a(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunable_search::format::artifact::Kind;

    fn recipe(def: &str) -> Recipe {
        Recipe {
            kind: Kind::Ptx,
            entry: "k".into(),
            target: "sm_80".into(),
            source_hash: 1,
            options: vec![],
            definitions: vec![def.into()],
        }
    }

    fn produce(def: &'static str) -> impl FnOnce() -> Produce {
        move || Box::new(move || Ok(vec![(recipe(def), def.as_bytes().to_vec())]))
    }

    #[test]
    fn records_per_thread_once_per_program_and_nests() {
        let d1 = vec!["-DT=1".to_owned()];
        let d2 = vec!["-DT=2".to_owned()];
        // Not recording: nothing is kept.
        note(|| 1, &d1, produce("-DT=1"));
        let ((), rec) = record(|| {
            note(|| 1, &d1, produce("-DT=1"));
            note(
                || 1,
                &d1,
                || panic!("a program noted twice is not produced again"),
            );
            note(|| 2, &d2, produce("-DT=2"));
            let ((), inner) = record(|| note(|| 3, &d1, produce("-DT=1")));
            assert_eq!(inner.binaries(&d1).unwrap().len(), 1);
            std::thread::spawn(|| note(|| 4, &["-DT=1".to_owned()], produce("-DT=1")))
                .join()
                .unwrap();
        });
        assert!(!rec.is_empty());
        let b = rec.binaries(&d1).unwrap();
        assert_eq!(b, [(recipe("-DT=1"), b"-DT=1".to_vec())]);
        assert_eq!(rec.binaries(&d2).unwrap().len(), 1);
        assert!(rec.binaries(&[]).unwrap().is_empty());
    }

    #[test]
    fn programs_asked_for_are_told_apart_by_content_not_order_or_address() {
        let programs = |hashes: &[u64]| {
            record(|| {
                for (i, &h) in hashes.iter().enumerate() {
                    note_asked(|| i as u64, || h);
                }
            })
            .1
            .programs()
        };
        assert_eq!(programs(&[]), None);
        // Noted once per key, even if asked again (a second configuration of one program), and
        // not outside a recording or in another thread's; a nested recording keeps its own.
        note_asked(|| 1, || panic!("not recording: nothing is hashed"));
        let ((), rec) = record(|| {
            note_asked(|| 1, || 7);
            note_asked(|| 1, || panic!("a program asked twice is not hashed again"));
            let inner = record(|| note_asked(|| 2, || 8)).1;
            assert_eq!(inner.programs(), programs(&[8]));
            std::thread::spawn(|| note_asked(|| 3, || 9))
                .join()
                .unwrap();
        });
        assert_eq!(rec.programs(), programs(&[7]));
        assert_eq!(programs(&[7, 8]), programs(&[8, 7]));
        assert_eq!(programs(&[7, 7]), programs(&[7]));
        assert_ne!(programs(&[7]), programs(&[8]));
        assert_ne!(programs(&[7, 8]), programs(&[7]));
        // The same text at two addresses is one program; an edit, another option, entry point or
        // target is another.
        let (a, b) = (
            "__kernel void k() {}".to_owned(),
            "__kernel void k() {}".to_owned(),
        );
        assert_eq!(program(&a, "k", &[], "dev"), program(&b, "k", &[], "dev"));
        let base = program(&a, "k", &["-O2"], "dev");
        for other in [
            program("__kernel void k() { }", "k", &["-O2"], "dev"),
            program(&a, "k", &["-O3"], "dev"),
            program(&a, "k", &["-O2", "-w"], "dev"),
            program(&a, "k", &[], "dev"),
            program(&a, "j", &["-O2"], "dev"),
            program(&a, "k", &["-O2"], "sm_80"),
        ] {
            assert_ne!(base, other);
        }
    }
}
