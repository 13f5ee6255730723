//! # Fuzzing the readers of tunable's files
//!
//! The tuned file, the artifact file and the journal (a Kernel Tuner cache read line by line)
//! are read from disk, where anything can be: a damaged disk, a bad merge, a forged file. Each
//! property here feeds one reader generated inputs and checks that it returns (no panic, no
//! abort) and that the largest amount of memory live at once while it ran stays within a small
//! multiple of the input's size (measured by the counting allocator below); the journal's also
//! checks that a bad line loses that line only.
//!
//! Inputs are structure-aware, as an attacker's would be: for the binary files, a valid payload
//! (or arbitrary bytes) mutated (bytes flipped or set to bincode's varint markers, forged 64-bit
//! lengths inserted, cuts, copies) and then framed with a *valid* checksum, so that the decoder
//! itself is reached; sometimes the frame is damaged too. For the journal, a cache written by
//! [`CacheWriter`] with lines of garbage inserted, or mutated anywhere.
//!
//! Cases per property: `TUNABLE_FUZZ_CASES` (default 300). Long runs:
//!
//! ```sh
//! TUNABLE_FUZZ_CASES=2000000 cargo test --release -p tunable-search --test fuzz_formats tuned_reader
//! TUNABLE_FUZZ_CASES=2000000 cargo test --release -p tunable-search --test fuzz_formats artifact_reader
//! TUNABLE_FUZZ_CASES=2000000 cargo test --release -p tunable-search --test fuzz_formats journal_reader
//! ```

// The counting allocator implements `GlobalAlloc`, an unsafe trait; it only forwards to the
// system allocator.
#![allow(unsafe_code)]

use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use tunable_search::SpaceBuilder;
use tunable_search::format::artifact::{self, Artifact, Kind, Owner, Recipe};
use tunable_search::format::kernel_tuner::{CacheWriter, Header, KernelTunerCache};
use tunable_search::format::tuned::{self, Ranked, StoredValue, TunedEntry};

/// Forwards to the system allocator, counting the bytes live on each thread and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, returning its result and the most bytes it had live at once (on this thread).
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - start).max(0) as usize)
}

/// The memory a reader may use for an input of `len` bytes: 64 bytes per input byte (parsed
/// values are larger than their text) and 2 MiB (serde's pre-allocation cap, buffers).
fn memory_bound(len: usize) -> usize {
    64 * len + (2 << 20)
}

fn cases() -> u32 {
    std::env::var("TUNABLE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// The frame of tunable's files, as `frame.rs` documents it, with a valid checksum.
fn frame(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let fnv = payload.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut out = magic.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// One change to a byte string.
#[derive(Clone, Debug)]
enum Mutation {
    /// Flip the bits of `mask` at a position.
    Flip(usize, u8),
    /// Set a byte to a varint marker (0xfb..=0xff) or 0.
    Marker(usize, u8),
    /// Insert a forged length: bincode's 64-bit varint marker and a large value.
    Length(usize, u64),
    /// Cut the bytes after a position.
    Cut(usize),
    /// Copy a run of bytes to another place.
    Copy(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, m)| Mutation::Flip(at, m)),
        (
            any::<usize>(),
            prop::sample::select(vec![0u8, 0xfb, 0xfc, 0xfd, 0xfe, 0xff])
        )
            .prop_map(|(at, b)| Mutation::Marker(at, b)),
        (
            any::<usize>(),
            prop_oneof![Just(1u64 << 62), Just(u64::MAX), 1u64 << 20..1u64 << 40]
        )
            .prop_map(|(at, n)| Mutation::Length(at, n)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), any::<usize>(), 1..64usize).prop_map(|(a, b, n)| Mutation::Copy(a, b, n)),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Flip(at, mask) if !bytes.is_empty() => bytes[at % len] ^= mask,
            Mutation::Marker(at, b) if !bytes.is_empty() => bytes[at % len] = b,
            Mutation::Length(at, n) => {
                let at = at % (bytes.len() + 1);
                let mut forged = vec![0xfd];
                forged.extend_from_slice(&n.to_le_bytes());
                bytes.splice(at..at, forged);
            }
            Mutation::Cut(at) => bytes.truncate(at % (bytes.len() + 1)),
            Mutation::Copy(from, to, n) if !bytes.is_empty() => {
                let from = from % len;
                let run: Vec<u8> = bytes[from..(from + n).min(bytes.len())].to_vec();
                let to = to % (bytes.len() + 1);
                bytes.splice(to..to, run);
            }
            _ => {}
        }
    }
}

fn stored_value() -> impl Strategy<Value = StoredValue> {
    prop_oneof![
        any::<i64>().prop_map(StoredValue::Int),
        any::<f64>().prop_map(StoredValue::Float),
        any::<bool>().prop_map(StoredValue::Bool),
        "\\PC{0,12}".prop_map(StoredValue::Str),
    ]
}

fn entry() -> impl Strategy<Value = TunedEntry> {
    (
        "[a-z_]{1,10}",
        "\\PC{0,24}",
        any::<u64>(),
        prop::collection::vec(("[a-z]{1,6}", stored_value()), 0..5),
        prop::collection::vec(
            (prop::collection::vec(stored_value(), 0..5), any::<f64>()),
            0..4,
        ),
    )
        .prop_map(|(kernel, device, key, params, top)| TunedEntry {
            sources: Vec::new(),
            binaries: Vec::new(),
            front: None,
            kernel,
            device,
            key,
            space_hash: key.rotate_left(7),
            params,
            time_ms: 1.5,
            evaluations: 12,
            strategy: "auto".into(),
            timestamp: 1_700_000_000,
            top: top
                .into_iter()
                .map(|(values, time_ms)| Ranked { values, time_ms })
                .collect(),
        })
}

/// The payload of a tuned file (the file's bytes after its 28-byte header).
fn tuned_payload(entries: &[TunedEntry]) -> Vec<u8> {
    tuned::encode(entries)[28..].to_vec()
}

/// A tuned file: a valid or arbitrary payload, mutated, framed with a valid checksum (at
/// version 1 or 2); or a valid file with its frame damaged.
fn tuned_file() -> impl Strategy<Value = Vec<u8>> {
    let payload = prop_oneof![
        prop::collection::vec(entry(), 0..4).prop_map(|e| tuned_payload(&e)),
        prop::collection::vec(any::<u8>(), 0..512),
    ];
    (
        payload,
        prop::collection::vec(mutation(), 0..6),
        prop_oneof![Just(2u32), Just(1u32)],
        any::<bool>(),
    )
        .prop_map(|(mut payload, mutations, version, damage_frame)| {
            if damage_frame {
                let mut file = frame(b"TUNABLE\0", version, &payload);
                mutate(&mut file, &mutations);
                file
            } else {
                mutate(&mut payload, &mutations);
                frame(b"TUNABLE\0", version, &payload)
            }
        })
}

fn artifact_file() -> impl Strategy<Value = Vec<u8>> {
    let meta = (
        "[a-z_]{1,10}",
        "\\PC{0,24}",
        prop::collection::vec(("[A-Z]{1,6}", stored_value()), 0..4),
        prop::collection::vec("-D[A-Z]{1,4}=[0-9]{1,3}", 0..4),
    )
        .prop_map(|(kernel, device, params, definitions)| {
            let a = Artifact {
                owner: Owner {
                    kernel: kernel.clone(),
                    device,
                    params,
                },
                recipe: Recipe {
                    kind: Kind::Ptx,
                    entry: kernel,
                    target: "sm_80".into(),
                    source_hash: 7,
                    options: vec!["-O3".into()],
                    definitions,
                },
                bytes: std::borrow::Cow::Borrowed(b".version 8.0\n"),
            };
            artifact::encode(&a)[28..].to_vec()
        });
    let payload = prop_oneof![meta, prop::collection::vec(any::<u8>(), 0..512)];
    (
        payload,
        prop::collection::vec(mutation(), 0..6),
        any::<bool>(),
    )
        .prop_map(|(mut payload, mutations, damage_frame)| {
            if damage_frame {
                let mut file = frame(b"TUNABIN\0", 1, &payload);
                mutate(&mut file, &mutations);
                file
            } else {
                // Keep the metadata length honest half of the time, so the bincode decoder of
                // the metadata is reached.
                mutate(&mut payload, &mutations);
                frame(b"TUNABIN\0", 1, &payload)
            }
        })
}

/// A journal of `n` records of a space of one parameter `a` (values 0..64) and a mode, as the
/// runtime's journal writes it, unclosed; its lines.
fn journal_lines(n: usize, fail_every: usize) -> Vec<String> {
    let space = SpaceBuilder::new()
        .param("a", (0..64).collect::<Vec<i64>>())
        .param("m", ["x", "y,z"])
        .build()
        .unwrap();
    let header = Header {
        kernel_name: "k",
        device_name: "cpu: fuzz",
        params: space.params(),
    };
    let mut w = CacheWriter::new(Vec::new(), &header).unwrap();
    for p in 0..n.min(space.len()) {
        let result = match fail_every > 0 && p % fail_every == 0 {
            true => Err("panicked: boom"),
            false => Ok(p as f64 + 0.25),
        };
        w.append_times(&space.values(p), result, &[1.0, 1.5])
            .unwrap();
    }
    String::from_utf8(w.into_inner())
        .unwrap()
        .split('\n')
        .map(str::to_owned)
        .collect()
}

/// A garbage line: anything without a line break.
fn garbage() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^\n]{0,80}",
        "[{}\\[\\]\":,0-9a-z ]{0,40}",
        Just("}}".to_owned()),
        Just("\u{0}\u{0}\u{0}".to_owned()),
    ]
}

fn read_text(text: &str) {
    let origin = Path::new("fuzz.json");
    let _ = KernelTunerCache::from_json_text(text, origin);
    let _ = KernelTunerCache::from_json_text_salvaging(text, origin);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// The tuned-file reader returns on any file, within bounded memory; a file that decodes
    /// encodes back to a file that decodes to the same entries.
    #[test]
    fn tuned_reader(file in tuned_file()) {
        let (decoded, peak) = measured(|| tuned::decode(&file));
        prop_assert!(peak <= memory_bound(file.len()), "{peak} bytes for a {}-byte file", file.len());
        if let Ok(entries) = decoded {
            let again = tuned::encode(&entries);
            prop_assert_eq!(tuned::decode(&again).unwrap().len(), entries.len());
        }
    }

    /// The artifact reader returns on any file, within bounded memory.
    #[test]
    fn artifact_reader(file in artifact_file()) {
        let (decoded, peak) = measured(|| artifact::decode(&file).map(|a| a.owner.kernel.len()));
        prop_assert!(peak <= memory_bound(file.len()), "{peak} bytes for a {}-byte file", file.len());
        let _ = decoded;
    }

    /// The journal reader keeps every record a line of garbage did not touch, wherever the
    /// garbage is; and returns on any mutation of a journal, within bounded memory.
    #[test]
    fn journal_reader(
        n in 0..40usize,
        fail_every in 0..5usize,
        inserted in prop::collection::vec((any::<usize>(), garbage()), 0..4),
        mutations in prop::collection::vec(mutation(), 0..4),
        arbitrary in "\\PC{0,200}",
    ) {
        let mut lines = journal_lines(n, fail_every);
        let records = lines.len() - 2;
        for (at, g) in &inserted {
            // After the header's two lines.
            let at = 2 + at % (lines.len() - 1);
            lines.insert(at, g.clone());
        }
        let text = lines.join("\n");
        let (cache, peak) = measured(|| {
            KernelTunerCache::from_json_text_salvaging(&text, Path::new("j.json"))
        });
        prop_assert!(peak <= memory_bound(text.len()), "{peak} bytes for {} bytes", text.len());
        let cache = cache.map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // Garbage inserted last, without a line break after it, reads as a cut record; every
        // record line is intact.
        prop_assert_eq!(cache.len(), records, "{:?}\n{}", cache.skipped, text);
        // Arbitrary changes anywhere, and arbitrary text: no panic, bounded memory.
        let mut bytes = text.into_bytes();
        mutate(&mut bytes, &mutations);
        let mutated = String::from_utf8_lossy(&bytes).into_owned();
        let ((), peak) = measured(|| read_text(&mutated));
        prop_assert!(peak <= memory_bound(mutated.len()), "{peak} bytes for {} bytes", mutated.len());
        read_text(&arbitrary);
    }
}

/// A forged length through the public reader: a tuned file with a valid frame and
/// checksum around a string length of 2^62 is refused with a clear error, not an abort.
#[test]
fn forged_tuned_file_is_refused() {
    let mut payload = vec![1u8, 0xfd];
    payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
    payload.extend_from_slice(b"gemm");
    let file = frame(b"TUNABLE\0", 2, &payload);
    let (err, peak) = measured(|| tuned::decode(&file).unwrap_err().to_string());
    assert!(err.contains("claims more than the 4096 bytes"), "{err}");
    assert!(peak < 1 << 20, "{peak}");
}
