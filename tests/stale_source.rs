//! Nothing stale ships broken, in real cargo builds of a user's crate:
//!
//! - a kernel records the hash of its source file in its tuned entries (the file its body
//!   includes through a static, found by the attribute, or the one `source = "..."` names); after an edit, the build warns (naming the kernel and the retune command) and does
//!   not bake the entry: the call runs the default and works;
//! - a baked configuration that fails at run time (an entry from before the hashes, which the
//!   build cannot judge) falls back to the default, with one line on stderr, once;
//! - the device binaries embedded for a baked entry are the ones it recorded: a file replaced
//!   without the tuned file is refused, a damaged one warns, and one over the embedding limit
//!   (`TUNABLE_EMBED_LIMIT`) is not embedded, each with a build warning.
//!
//! The kernel is a CPU function whose "source" is a text file giving the largest tile it
//! accepts, as a GPU source's limits would: the backends are not needed to see the build's and
//! the entry point's behavior. Shares the target folder of `end_to_end.rs` (`target/e2e`).

mod temp_crate;

use std::borrow::Cow;
use temp_crate::{TempCrate, line};
use tunable_runtime::store::{StoredValue, TunedEntry};
use tunable_search::format::artifact::{self, Artifact, Kind, Owner, Recipe};
use tunable_search::format::tuned::{Ranked, encode, source_hash};

const MAIN: &str = r#"
use tunable::{Params, tunable};

static SOURCE: &str = include_str!("kernel.txt");

/// The largest tile the "source" accepts.
fn max_tile() -> usize {
    SOURCE.trim().strip_prefix("max_tile=").unwrap().parse().unwrap()
}

// The attribute finds the source: the body names `SOURCE`, a static of this file whose
// initializer includes `kernel.txt`.
#[tunable(tile = [1, 2, 4, 8])]
fn kern(n: usize) -> Result<usize, String> {
    let max: usize = SOURCE.trim().strip_prefix("max_tile=").unwrap().parse().unwrap();
    if tile > max {
        return Err(format!("tile {tile} is over the limit {max}"));
    }
    Ok(n * tile)
}

// The source named by the option (the body reads it through a function).
#[tunable(tile = [1, 2, 4, 8], source = "kernel.txt")]
fn named(n: usize) -> Result<usize, String> {
    if tile > max_tile() {
        return Err(format!("tile {tile} is over the limit {}", max_tile()));
    }
    Ok(n * tile)
}

fn main() {
    let first = kern(3);
    let second = kern(3);
    let choice = kern_config(3);
    println!("calls {first:?} {second:?}");
    println!("config {:?} {:?}", choice.params, choice.origin);
    println!("embedded {}", <KernParams as Params>::artifacts().len());
    println!("named {:?} {:?}", named(3), named_config(3).origin);
}
"#;

const DEVICE: &str = "test-cpu";

/// The crate, built once so that the macro records the space's fingerprint.
fn crate_with_source(name: &str, source: &str) -> TempCrate {
    let c = TempCrate::new(name, MAIN);
    std::fs::write(c.dir.join("src/kernel.txt"), source).unwrap();
    c.build(false, &[]);
    c
}

/// Writes the tuned file of `kernel` with one entry for `DEVICE`, key 0: `tile`, tuned with the
/// source hashes `sources` and the device binary files `binaries` (their identities).
fn store_for(c: &TempCrate, kernel: &str, tile: i64, sources: Vec<u64>, binaries: &[&[u8]]) {
    let tuned = c.dir.join("tuned");
    let space = std::fs::read_to_string(tuned.join(format!("{kernel}.space"))).unwrap();
    let entry = TunedEntry {
        kernel: kernel.into(),
        device: DEVICE.into(),
        key: 0,
        space_hash: u64::from_str_radix(space.trim(), 16).unwrap(),
        params: vec![("tile".into(), StoredValue::Int(tile))],
        time_ms: 1.0,
        evaluations: 4,
        strategy: "fixture".into(),
        timestamp: 0,
        top: vec![Ranked {
            values: vec![StoredValue::Int(tile)],
            time_ms: 1.0,
        }],
        sources,
        binaries: binaries.iter().map(|b| artifact::identity(b)).collect(),
        front: None,
    };
    std::fs::write(tuned.join(format!("{kernel}.bin")), encode(&[entry])).unwrap();
}

/// [`store_for`] `kern`.
fn store(c: &TempCrate, tile: i64, sources: Vec<u64>, binaries: &[&[u8]]) {
    store_for(c, "kern", tile, sources, binaries);
}

/// An artifact file of `kern`'s configuration `tile` on `DEVICE`, holding `bytes`.
fn artifact_file(tile: i64, bytes: &[u8]) -> Vec<u8> {
    artifact::encode(&Artifact {
        owner: Owner {
            kernel: "kern".into(),
            device: DEVICE.into(),
            params: vec![("tile".into(), StoredValue::Int(tile))],
        },
        recipe: Recipe {
            kind: Kind::OpenClBinary,
            entry: "kern".into(),
            target: DEVICE.into(),
            source_hash: 1,
            options: vec![],
            definitions: vec![format!("-Dtile={tile}")],
        },
        bytes: Cow::Borrowed(bytes),
    })
}

#[test]
fn an_edited_source_warns_at_build_time_and_runs_the_default() {
    let env = [("TUNABLE_DEVICE", DEVICE)];
    let c = crate_with_source("stale_source", "max_tile=8\n");
    store(&c, 8, vec![source_hash("max_tile=8\n")], &[]);
    store_for(&c, "named", 4, vec![source_hash("max_tile=8\n")], &[]);
    // Tuned with this very source: baked, no warning.
    let (out, err) = c.run(false, &env);
    assert_eq!(line(&out, "calls"), "Ok(24) Ok(24)", "{err}");
    assert_eq!(line(&out, "config"), "KernParams { tile: 8 } Baked");
    assert_eq!(line(&out, "named"), "Ok(12) Baked");
    assert!(!err.contains("tunable:"), "{err}");

    // The source now accepts tiles up to 2 only: the entry is not baked, the build says why and
    // how to tune again, and the call runs the default configuration.
    std::fs::write(c.dir.join("src/kernel.txt"), "max_tile=2\n").unwrap();
    let (out, err) = c.run(false, &env);
    assert!(
        err.contains(
            "tunable: the source of kernel `kern` (kernel.txt) changed since it was tuned for device \"test-cpu\", key 0"
        ) && err.contains("cargo tunable tune --kernel kern"),
        "{err}"
    );
    assert_eq!(line(&out, "calls"), "Ok(3) Ok(3)", "{err}");
    assert_eq!(line(&out, "config"), "KernParams { tile: 1 } Default");
    assert!(
        err.contains("tunable: the source of kernel `named` (kernel.txt) changed"),
        "{err}"
    );
    assert_eq!(line(&out, "named"), "Ok(3) Default");
    assert!(
        !err.contains("failed"),
        "nothing ran the stale configuration: {err}"
    );

    // Tuned again with the new source: baked again, silently.
    store(&c, 2, vec![source_hash("max_tile=2\n")], &[]);
    store_for(&c, "named", 2, vec![source_hash("max_tile=2\n")], &[]);
    let (out, err) = c.run(false, &env);
    assert_eq!(line(&out, "calls"), "Ok(6) Ok(6)", "{err}");
    assert!(!err.contains("tunable:"), "{err}");
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[test]
fn a_baked_configuration_that_fails_falls_back_to_the_default_once() {
    let env = [("TUNABLE_DEVICE", DEVICE)];
    // An entry that recorded no source (written before the hashes): the build cannot tell it is
    // stale, and its configuration fails at run time.
    let c = crate_with_source("failing_baked", "max_tile=2\n");
    store(&c, 8, vec![], &[]);
    let (out, err) = c.run(false, &env);
    assert_eq!(line(&out, "calls"), "Ok(3) Ok(3)", "{err}");
    assert_eq!(line(&out, "config"), "KernParams { tile: 1 } Default");
    let said = "tunable: kern (key 0): the tuned configuration (tile=8) failed (tile 8 is over the limit 2); running the default configuration from now on";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[test]
fn only_the_recorded_small_intact_binaries_are_embedded() {
    let env = [("TUNABLE_DEVICE", DEVICE)];
    let c = crate_with_source("embedded_identity", "max_tile=8\n");
    let folder = c.dir.join("tuned/kern.artifacts");
    std::fs::create_dir_all(&folder).unwrap();
    let good = artifact_file(8, b"the binary tuning built");
    let path = folder.join("00000000000000a1.clbin");
    std::fs::write(&path, &good).unwrap();
    store(&c, 8, vec![source_hash("max_tile=8\n")], &[&good]);
    let (out, err) = c.run(false, &env);
    assert_eq!(line(&out, "embedded"), "1", "{err}");
    assert!(!err.contains("tunable:"), "{err}");

    // Replaced without the tuned file: refused, with a warning naming the file.
    std::fs::write(&path, artifact_file(8, b"another binary")).unwrap();
    let (out, err) = c.run(false, &env);
    assert_eq!(line(&out, "embedded"), "0", "{err}");
    assert!(
        err.contains(
            "00000000000000a1.clbin of kernel `kern` is not the one its tuned entry recorded"
        ),
        "{err}"
    );

    // Restored, but over the embedding limit: not embedded, with a warning.
    std::fs::write(&path, &good).unwrap();
    let (out, err) = c.run(
        false,
        &[("TUNABLE_DEVICE", DEVICE), ("TUNABLE_EMBED_LIMIT", "64")],
    );
    assert_eq!(line(&out, "embedded"), "0", "{err}");
    assert!(err.contains("over the embedding limit"), "{err}");
    let (out, _) = c.run(false, &env);
    assert_eq!(line(&out, "embedded"), "1");

    // Damaged (cut short): a build warning, and still embedded (cargo sees the change, as the
    // file was embedded), for the backend to say at run time why it compiles.
    std::fs::write(&path, &good[..good.len() - 5]).unwrap();
    let (out, err) = c.run(false, &env);
    assert!(
        err.contains("00000000000000a1.clbin of kernel `kern` is damaged (truncated"),
        "{err}"
    );
    assert_eq!(line(&out, "embedded"), "1", "{err}");
    std::fs::remove_dir_all(&c.dir).unwrap();
}
