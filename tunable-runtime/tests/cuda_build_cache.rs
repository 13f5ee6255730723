//! NVRTC's builds kept on disk (`TUNABLE_BUILD_CACHE`): a configuration compiled once is loaded
//! by the next compilation, with the same PTX, CUBIN and log; a program NVRTC rejects is kept
//! with its log; a source that reads files NVRTC finds is never kept; an entry that is cut short
//! or overwritten is compiled again and replaced; configurations compiled in one program are
//! kept as the program once and an entry each, and load with their entry points. One test in a binary of its own, as the cache's
//! folder is read from the environment once per process. Skips, printing why, without NVRTC.
#![cfg(feature = "cuda")]
#![allow(unsafe_code)] // setting the environment

use std::path::Path;
use tunable_runtime::backend::Source;
use tunable_runtime::backend::cuda::{CudaError, build_cache, compile, compile_many};

mod common;
use common::{Tile, nvrtc_found};

/// TILE = 0 is rejected by the source itself.
static TIMES: Source = Source::new(
    "times",
    r#"
static_assert(TILE != 0, "TILE must not be 0");
extern "C" __global__ void times(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= TILE;
}
"#,
);

/// Builds loaded and stored by this process so far.
fn counts() -> (usize, usize) {
    let c = build_cache().expect("the cache is on");
    (c.loaded, c.stored)
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn builds_are_kept_across_compilations_and_damaged_entries_are_rebuilt() {
    let dir = std::env::temp_dir().join(format!("tunable-build-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: set before any other thread of this binary reads the environment (one test).
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", &dir) };
    if !nvrtc_found() {
        return;
    }
    assert_eq!(build_cache().unwrap().folder, dir.as_path());
    assert_eq!(counts(), (0, 0));

    // Compiled and kept, then loaded: the same outputs.
    let first = compile(&TIMES, &Tile(3), "sm_80").unwrap();
    assert_eq!(counts(), (0, 1));
    assert_eq!(entries(&dir).len(), 1);
    let again = compile(&TIMES, &Tile(3), "sm_80").unwrap();
    assert_eq!(counts(), (1, 1));
    assert_eq!(again, first);
    assert!(
        again
            .cubin
            .as_ref()
            .is_some_and(|c| c.starts_with(b"\x7fELF"))
    );

    // Another definition or architecture is another build.
    let other = compile(&TIMES, &Tile(5), "sm_80").unwrap();
    let ptx_only = compile(&TIMES, &Tile(3), "compute_80").unwrap();
    assert_eq!(counts(), (1, 3));
    assert_ne!(other.ptx, first.ptx);
    assert!(ptx_only.cubin.is_none());

    // A rejected program is kept with its log.
    let rejected = |e: CudaError| match e {
        CudaError::Compile { log, .. } => log,
        e => panic!("{e}"),
    };
    let log = rejected(compile(&TIMES, &Tile(0), "sm_80").unwrap_err());
    assert!(log.contains("TILE must not be 0"), "{log}");
    assert_eq!(counts(), (1, 4));
    let kept = rejected(compile(&TIMES, &Tile(0), "sm_80").unwrap_err());
    assert_eq!((kept, counts()), (log, (2, 4)));

    // A source NVRTC may complete from files is compiled every time, never kept.
    let header = dir.join("scale.h");
    std::fs::write(&header, "#define OFFSET 1\n").unwrap();
    let code: &'static str = Box::leak(
        format!(
            "#include \"{}\"\nextern \"C\" __global__ void times(float *x) {{ x[0] += OFFSET * TILE; }}\n",
            header.display()
        )
        .into_boxed_str(),
    );
    let reads_a_file = Source::new("times", code);
    compile(&reads_a_file, &Tile(3), "sm_80").unwrap();
    compile(&reads_a_file, &Tile(3), "sm_80").unwrap();
    assert_eq!(counts(), (2, 4));

    // Damaged entries (cut short, or garbage) are compiled again and replaced.
    let kept: Vec<_> = entries(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "nvrtc"))
        .collect();
    assert_eq!(kept.len(), 4);
    for (i, p) in kept.iter().enumerate() {
        let bytes = std::fs::read(p).unwrap();
        let damaged = if i % 2 == 0 {
            bytes[..bytes.len() / 2].to_vec()
        } else {
            b"not an entry".to_vec()
        };
        std::fs::write(p, damaged).unwrap();
    }
    assert_eq!(compile(&TIMES, &Tile(3), "sm_80").unwrap(), first);
    assert_eq!(compile(&TIMES, &Tile(5), "sm_80").unwrap(), other);
    assert_eq!(counts(), (2, 6));
    assert_eq!(compile(&TIMES, &Tile(3), "sm_80").unwrap(), first);
    assert_eq!(counts(), (3, 6));

    // Configurations compiled in one program: the program is kept once and each configuration
    // as an entry naming it; the next compilation loads them, entry points and all.
    let tiles: Vec<Tile> = [6, 7, 8, 9].map(Tile).to_vec();
    let together: Vec<_> = compile_many(&TIMES, &tiles, "sm_80")
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        together.iter().all(|c| c.entry != "times"),
        "in one program"
    );
    assert_eq!(counts(), (3, 11), "the program and four entries");
    let loaded: Vec<_> = compile_many(&TIMES, &tiles, "sm_80")
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(loaded, together);
    assert_eq!(counts(), (7, 11));
    // `compile` gives a build of its own (what a shipped binary embeds), kept in place of the
    // entry; the next program of them loads it as such.
    let own = compile(&TIMES, &Tile(7), "sm_80").unwrap();
    assert_eq!(own.entry, "times");
    assert_eq!(counts(), (7, 12));
    let again: Vec<_> = compile_many(&TIMES, &tiles, "sm_80")
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(again[1], own);
    assert_eq!(
        (&again[0], &again[2], &again[3]),
        (&together[0], &together[2], &together[3])
    );
    assert_eq!(counts(), (11, 12));
    std::fs::remove_dir_all(&dir).unwrap();
}
