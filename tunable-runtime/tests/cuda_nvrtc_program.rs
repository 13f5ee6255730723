//! Several configurations in one NVRTC program (`backend::cuda::compile_many`), with real NVRTC:
//! each entry point's PTX is the configuration's compiled alone (up to names and labels), with
//! macros the source defines or defaults per configuration; a configuration that fails in a
//! program of several gets its own compilation's error and the others are still compiled
//! together; a source that cannot be put in a namespace is compiled one by one; the results keep
//! the configurations' order. Skips, printing why, without NVRTC.
//! One test in a binary of its own, as it turns the build cache off in the environment.
#![cfg(feature = "cuda")]
#![allow(unsafe_code)] // setting the environment

use tunable_runtime::backend::Source;
use tunable_runtime::backend::cuda::{Compiled, CudaError, PER_PROGRAM, compile, compile_many};

mod common;
use common::{TEXTURED, Tile, nvrtc_found};

/// Macros of its own (one a default the configuration may override, one defined for some
/// configurations only: seen by the next chunk, it would change that one), a `static_assert` that
/// rejects TILE = 0, shared memory that `ptxas` rejects for a large TILE, and a device function
/// and a global of the same names in every configuration.
static TILED: Source = Source::new(
    "tiled",
    r#"
#ifndef UNROLL
#define UNROLL (TILE > 4 ? 4 : TILE)
#endif
#define HALF(x) ((x) / 2)
#if TILE > 2
#define WIDE
#endif
static_assert(TILE != 0, "TILE must not be 0");
__constant__ float weight[TILE];
__device__ float twice(float v) { return v * 2.0f + HALF(TILE); }
extern "C" __global__ void tiled(const float *x, float *y, int n) {
    __shared__ float stage[TILE * 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x % (TILE * 32)] = i < n ? x[i] : 0.0f;
    __syncthreads();
    float acc = 0.0f;
#pragma unroll UNROLL
    for (int k = 0; k < TILE; k++) acc += weight[k] * stage[(threadIdx.x + k) % (TILE * 32)];
#ifdef WIDE
    acc *= 3.0f;
#endif
    if (i < n) y[i] = twice(acc);
}
"#,
);

/// The names of `TILED`'s globals at the top level.
const GLOBALS: &[&str] = &["weight"];

/// Includes a header (which NVRTC does not find: the wheels hold none): compiled one
/// configuration at a time.
static INCLUDES: Source = Source::new(
    "scaled",
    r#"
#include "scale.h"
extern "C" __global__ void scaled(float *y) { y[threadIdx.x] *= TILE; }
"#,
);

/// The text of `entry`'s function in `ptx`, its name, the names of its globals (mangled in a
/// namespace, plain at the top level: [`GLOBALS`]) and its labels' function numbers made the
/// same for every program.
fn entry_text(ptx: &str, entry: &str) -> String {
    let start = ptx
        .find(&format!(".entry {entry}("))
        .unwrap_or_else(|| panic!("no entry {entry}"));
    let end = start + ptx[start..].find("\n}\n").expect("end of the entry");
    let body = ptx[start..end].replace(entry, "ENTRY");
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.starts_with("_Z") || GLOBALS.contains(&word.as_str()) {
            out.push_str("GLOBAL");
        } else if let Some(rest) = word.strip_prefix("$L__BB") {
            out.push_str("$L__BB_");
            out.push_str(rest.split_once('_').map_or("", |(_, r)| r));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in body.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn error_log(r: &Result<Compiled, CudaError>) -> String {
    match r {
        Err(CudaError::Compile { log, .. }) => log.clone(),
        other => panic!("expected a compile failure, got {other:?}"),
    }
}

#[test]
fn configurations_compiled_together_match_their_own_compilations() {
    // SAFETY: the only test of this binary; no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("TUNABLE_BUILD_CACHE", "off") };
    if !nvrtc_found() {
        return;
    }
    let arch = "sm_80";

    // Good configurations: each entry point is the configuration's own.
    let tiles: Vec<Tile> = [8, 1, 3, 2, 16, 4].map(Tile).to_vec();
    let together = compile_many(&TILED, &tiles, arch);
    assert_eq!(together.len(), tiles.len());
    for (tile, result) in tiles.iter().zip(&together) {
        let batched = result.as_ref().expect("compiles together");
        let alone = compile(&TILED, tile, arch).expect("compiles alone");
        assert_eq!(alone.entry, "tiled");
        assert_ne!(batched.entry, "tiled", "TILE={} was compiled alone", tile.0);
        assert!(batched.cubin.is_some());
        assert_eq!(
            entry_text(&batched.ptx, &batched.entry),
            entry_text(&alone.ptx, "tiled"),
            "TILE={}",
            tile.0
        );
        assert_eq!(batched.log, alone.log);
    }
    // All six in one program (at most PER_PROGRAM per program).
    assert!(tiles.len() <= PER_PROGRAM);
    assert!(
        together
            .iter()
            .all(|r| r.as_ref().unwrap().ptx == together[0].as_ref().unwrap().ptx)
    );

    // Failures among them: the source's own (TILE = 0) and `ptxas`' (TILE * 32 floats of shared
    // memory beyond 48 KiB) are each their own compilation's, in their places; the others are
    // compiled together still.
    let mixed: Vec<Tile> = [2, 0, 4, 1024, 8].map(Tile).to_vec();
    let results = compile_many(&TILED, &mixed, arch);
    for (tile, result) in mixed.iter().zip(&results) {
        let alone = compile(&TILED, tile, arch);
        match tile.0 {
            0 | 1024 => {
                assert_eq!(error_log(result), error_log(&alone), "TILE={}", tile.0);
                let log = error_log(result);
                assert!(
                    log.contains("TILE must not be 0") || log.contains("too much shared data"),
                    "{log}"
                );
                assert!(!log.contains("tunable"), "the program shows through: {log}");
            }
            _ => {
                let (batched, alone) = (result.as_ref().unwrap(), alone.unwrap());
                assert_ne!(batched.entry, "tiled", "TILE={} was compiled alone", tile.0);
                assert_eq!(
                    entry_text(&batched.ptx, &batched.entry),
                    entry_text(&alone.ptx, "tiled")
                );
            }
        }
    }

    // A source that includes a header is compiled one configuration at a time: each failure is
    // its own compilation's.
    let results = compile_many(&INCLUDES, &tiles[..3], arch);
    for (tile, result) in tiles.iter().zip(&results) {
        assert_eq!(result, &compile(&INCLUDES, tile, arch));
        assert!(error_log(result).contains("scaled.cu("), "{result:?}");
    }

    // A source that needs the full language: its first program fails under `-minimal` (with
    // NVRTC 12.4 or later), each configuration is compiled alone, and programs of it are
    // compiled without the flag from then on.
    let tiles: Vec<Tile> = [1, 2, 3].map(Tile).to_vec();
    for round in 0..2 {
        for (tile, result) in tiles.iter().zip(compile_many(&TEXTURED, &tiles, arch)) {
            let c = result.unwrap_or_else(|e| panic!("TILE={}: {e}", tile.0));
            if round == 1 {
                assert_ne!(c.entry, "textured", "TILE={} was compiled alone", tile.0);
            }
        }
    }
}
