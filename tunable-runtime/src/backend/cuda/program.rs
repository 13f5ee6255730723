//! # Several configurations in one NVRTC program
//!
//! Each NVRTC program costs a fixed part besides its code: the front end's, the optimizer's and
//! `ptxas`'s start. [`compile_many`] puts up to [`PER_PROGRAM`] configurations of one source in
//! one program, so they share it: an offline sweep over many configurations (`gemm_cuda --ptx`)
//! compiles faster. The tuner does not use it: it compiles each configuration in a program of
//! its own. What it saves is measured in `docs/notes/compile-path.md`.
//!
//! **The program.** Each configuration is a chunk of its own:
//! ```text
//! namespace tunable_many_3 {
//! #define TILE 4                               <- the configuration's definitions
//! #define gemm tunable_many_3_gemm            <- the entry point, renamed
//! #line 1 "tunable-many-3"                    <- diagnostics name the chunk, lines the source's
//! ...the source...
//! #line 1 "tunable-many"
//! #undef gemm
//! #undef TILE                                  <- and every macro the source defines
//! }
//! ```
//! so each chunk's functions, types and variables live in a namespace of their own, its entry
//! point (C linkage ignores namespaces) has a name of its own, and no macro of one chunk is seen
//! by the next. An entry point's PTX is the same as the configuration's compiled alone, up to
//! its names and labels (checked by `tests/cuda_nvrtc_program.rs`), so `ptxas` makes the same
//! machine code of it.
//!
//! **Sources that are compiled one by one.** A source that includes headers (they would be
//! included inside a namespace), says `#pragma once` or `#line`, or `#undef`s a macro its options
//! define; and, for the rest of the process, a source whose program failed in a way no
//! configuration's own compilation explains.
//!
//! **The build cache** keeps a program of several once, under a key of its own, and each of its
//! configurations as a small entry naming the program, its entry point and its part of the
//! log; a configuration kept there is loaded, not put in a program.
//!
//! **Failures.** A program that does not compile is not any configuration's result. The chunks
//! its errors name (`tunable-many-3(12): error ...`, or `ptxas`'s `Entry function
//! 'tunable_many_3_gemm'`) are compiled alone, so that each failure has its own log with the
//! source's line numbers; the others are compiled again together once, then alone. An error that
//! names no chunk, or a blamed configuration that compiles alone, sends every configuration left
//! to a compilation of its own.

use super::compile::{self, Compiled};
use super::disk;
use super::error::CudaError;
use super::library;
use super::minimal;
use super::nvrtc::Output;
use crate::backend::Source;
use crate::params::Params;
use std::collections::HashSet;
use std::ffi::CString;
use std::sync::{LazyLock, Mutex};

/// The most configurations one program holds: the saving per configuration shrinks with each
/// one added, while a program's result waits for all of them.
pub const PER_PROGRAM: usize = 8;

/// The prefix of the chunks' namespaces and entry points.
const PREFIX: &str = "tunable_many";
/// The prefix of the chunks' file names in diagnostics.
const FILE: &str = "tunable-many";

/// Sources (by a hash of their code) whose programs failed in a way their configurations'
/// compilations did not explain: compiled one by one for the rest of the process.
static ALONE: LazyLock<Mutex<HashSet<u64>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// Compiles each of `configs` for `arch` (`sm_80`, `compute_90`, ...) like [`super::compile`],
/// with up to [`PER_PROGRAM`] configurations in one NVRTC program: the results in the order of
/// `configs`.
///
/// Each configuration is a namespace of its own in the program, with its definitions, its
/// entry point renamed and every macro the source defines undefined after it; its PTX is the
/// configuration's compiled alone, up to names and labels. A configuration that fails in a
/// program is compiled again alone (its error is its own, with the source's line numbers) and
/// the others together again. A source that includes headers, says `#pragma once` or `#line`,
/// or undefines a macro its options define is compiled one configuration at a time, and so is,
/// for the rest of the process, a source whose program failed in a way no configuration
/// explains. Globals of a configuration compiled with others are in its namespace (their PTX
/// names are mangled).
///
/// A configuration compiled with others has the program's
/// PTX and CUBIN, holding its entry point under a name of its own ([`Compiled::entry`]), and
/// the part of the program's log about it. A configuration kept in the build cache
/// ([`super::build_cache`]) is loaded from there; what is compiled is kept there (a program of
/// several once, each of its configurations as an entry naming it). Compiles on the calling thread; give threads disjoint parts
/// of a space to compile on several.
///
/// ```no_run
/// use tunable::backend::Source;
/// use tunable::backend::cuda::compile_many;
/// # #[derive(Clone, Copy, Debug)] struct P { tile: i64 }
/// # impl tunable::Params for P {
/// #     const NAMES: &'static [&'static str] = &["TILE"];
/// #     fn from_values(_: &[tunable::Value]) -> Option<Self> { None }
/// #     fn to_values(&self) -> Vec<tunable::Value> { vec![tunable::Value::Int(self.tile)] }
/// # }
/// static SCALE: Source = Source::new(
///     "scale",
///     r#"extern "C" __global__ void scale(float *x) { x[threadIdx.x] *= TILE; }"#,
/// );
/// let configs = [P { tile: 1 }, P { tile: 2 }, P { tile: 4 }];
/// for (p, result) in configs.iter().zip(compile_many(&SCALE, &configs, "sm_80")) {
///     match result {
///         Ok(c) => println!("{p:?}: entry point {} in {} bytes of PTX", c.entry, c.ptx.len()),
///         Err(e) => println!("{p:?}: {e}"),
///     }
/// }
/// ```
pub fn compile_many<P: Params>(
    source: &Source,
    configs: &[P],
    arch: &str,
) -> Vec<Result<Compiled, CudaError>> {
    let mut results: Vec<Option<Result<Compiled, CudaError>>> = Vec::new();
    let mut ready = Vec::new();
    for p in configs {
        match compile::rendered(p) {
            Ok((config, defs)) => {
                ready.push((results.len(), defs, config));
                results.push(None);
            }
            Err(e) => results.push(Some(Err(e))),
        }
    }
    if !ready.is_empty() {
        let items: Vec<Item<'_>> = ready
            .iter()
            .map(|(_, defs, config)| Item { defs, config })
            .collect();
        let done = match library::nvrtc() {
            Ok(_) => compile_items(source, &items, arch),
            Err(e) => items.iter().map(|_| Err(e.clone())).collect(),
        };
        for ((slot, _, _), result) in ready.iter().zip(done) {
            results[*slot] = Some(result);
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every configuration has a result"))
        .collect()
}

/// A configuration to compile: its definitions and its description.
#[derive(Clone, Copy)]
pub(crate) struct Item<'a> {
    pub(crate) defs: &'a [String],
    pub(crate) config: &'a str,
}

/// Compiles `items` (NVRTC found), in programs of up to [`PER_PROGRAM`] where the source allows.
pub(crate) fn compile_items(
    source: &Source,
    items: &[Item<'_>],
    arch: &str,
) -> Vec<Result<Compiled, CudaError>> {
    let alone = |item: &Item<'_>| compile::compile_with(source, item.defs, arch, item.config, true);
    let hash = compile::code_hash(source);
    if items.len() < 2 || refusal(source).is_some() || remembered(hash) {
        return items.iter().map(alone).collect();
    }
    // Builds kept on disk are loaded, not compiled again.
    let kept: Vec<bool> = items.iter().map(|i| is_kept(source, arch, i)).collect();
    let mut results: Vec<Option<Result<Compiled, CudaError>>> = items
        .iter()
        .zip(&kept)
        .map(|(item, &k)| k.then(|| alone(item)))
        .collect();
    let todo: Vec<usize> = (0..items.len()).filter(|&i| !kept[i]).collect();
    for group in todo.chunks(PER_PROGRAM) {
        let group_items: Vec<Item<'_>> = group.iter().map(|&i| items[i]).collect();
        let done = group_results(source, &group_items, arch, hash, &alone);
        for (&i, r) in group.iter().zip(done) {
            results[i] = Some(r);
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every item has a result"))
        .collect()
}

/// Refuses `TUNABLE_NVRTC_BATCH`, which is no longer read: the tuner compiles each
/// configuration in a program of its own, and [`compile_many`] puts up to [`PER_PROGRAM`] in
/// one. Set, it would look like a setting that works.
pub(crate) fn refuse_removed_setting() -> Result<(), CudaError> {
    match std::env::var_os("TUNABLE_NVRTC_BATCH") {
        None => Ok(()),
        Some(value) => Err(CudaError::BadSetting {
            name: "TUNABLE_NVRTC_BATCH",
            value: value.to_string_lossy().into_owned(),
            expected: "it unset: it is no longer read (compile_many groups configurations)",
        }),
    }
}

/// Whether `hash`'s source is compiled one by one for the rest of the process.
fn remembered(hash: u64) -> bool {
    ALONE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&hash)
}

/// Whether the build cache holds `item`'s build.
fn is_kept(source: &Source, arch: &str, item: &Item<'_>) -> bool {
    let (Ok(nvrtc), Ok(options)) = (library::nvrtc(), compile::options(source, arch, item.defs))
    else {
        return false;
    };
    compile::cache_key(nvrtc, source, &options).is_some_and(|(cache, key)| cache.contains(&key))
}

/// The most programs of several configurations compiled for one group: each one that fails
/// takes out the configurations it blames, which front-end errors and `ptxas`' name all at once.
const ATTEMPTS: usize = 3;

/// The results of one group of configurations: compiled together, then as the failure rules of
/// the module docs say.
fn group_results(
    source: &Source,
    items: &[Item<'_>],
    arch: &str,
    hash: u64,
    alone: &dyn Fn(&Item<'_>) -> Result<Compiled, CudaError>,
) -> Vec<Result<Compiled, CudaError>> {
    let mut results: Vec<Option<Result<Compiled, CudaError>>> = vec![None; items.len()];
    let mut left: Vec<usize> = (0..items.len()).collect();
    let mut attempts = 0;
    while left.len() >= 2 && attempts < ATTEMPTS && !remembered(hash) {
        attempts += 1;
        let chunk_items: Vec<Item<'_>> = left.iter().map(|&i| items[i]).collect();
        let program = Program::new(source, &chunk_items);
        // Whether the program was compiled knowing that the source needs the full language.
        let full_before = minimal::needs_full(hash);
        let log = match together(source, &program, arch) {
            Ok(out) => {
                keep(source, &program, &out, &chunk_items, arch);
                for (c, &i) in left.iter().enumerate() {
                    results[i] = Some(program.result(source, out.clone(), c, items[i].config));
                }
                left.clear();
                break;
            }
            Err(log) => log,
        };
        let Some(blamed) = program.blamed(&log).filter(|b| !b.is_empty()) else {
            remember(hash);
            break;
        };
        for &c in &blamed {
            let i = left[c];
            let own = alone(&items[i]);
            // A blamed configuration that compiles alone is explained only when the program was
            // compiled with `-minimal` and the source turned out to need the full language
            // (learnt by these compilations: the next program leaves the flag out).
            if own.is_ok() && (full_before || !minimal::needs_full(hash)) {
                remember(hash);
            }
            results[i] = Some(own);
        }
        left = (0..left.len())
            .filter(|c| !blamed.contains(c))
            .map(|c| left[c])
            .collect();
    }
    for i in left {
        results[i] = Some(alone(&items[i]));
    }
    results
        .into_iter()
        .map(|r| r.expect("every configuration of the group has a result"))
        .collect()
}

/// Keeps a program of several that compiled in the build cache: the program once, under a key
/// of its own, and each configuration as an entry naming it (see [`super::build_cache`]).
fn keep(source: &Source, program: &Program, out: &Output, items: &[Item<'_>], arch: &str) {
    let Ok(nvrtc) = library::nvrtc() else {
        return;
    };
    let key =
        |options: Result<Vec<String>, String>| compile::cache_key(nvrtc, source, &options.ok()?);
    // The program's text follows from the source and the chunks' definitions: the key holds
    // those (and the program's layout, by a version), not the text, eight times the source.
    let program_options = compile::options(source, arch, &[]).map(|mut options| {
        options.push(format!("{FILE} 1"));
        options.extend(items.iter().map(|item| item.defs.join(" ")));
        options
    });
    let Some((cache, program_key)) = key(program_options) else {
        return;
    };
    cache.store(&program_key, Ok(out));
    for (c, item) in items.iter().enumerate() {
        if let Some((_, key)) = key(compile::options(source, arch, item.defs)) {
            let in_program = disk::InProgram {
                program: program_key.clone(),
                entry: program.entries[c].clone(),
                log: program.chunk_log(source, &out.log, c),
            };
            cache.store_in_program(&key, &in_program);
        }
    }
}

/// Compiles the source one by one for the rest of the process.
fn remember(hash: u64) {
    ALONE.lock().unwrap_or_else(|e| e.into_inner()).insert(hash);
}

/// Compiles a program of several configurations once, with `-minimal` where it is wanted and
/// the source is not known to need the full language (a failure is then blamed on the
/// configurations, which are compiled alone with [`minimal`]'s rules): NVRTC's output, or its
/// log.
fn together(source: &Source, program: &Program, arch: &str) -> Result<Output, String> {
    let options = compile::options(source, arch, &[])?;
    let code = CString::new(program.code.as_str())
        .map_err(|_| "the source contains a NUL byte".to_owned())?;
    let name = CString::new(format!("{FILE}.cu")).expect("no NUL byte");
    let nvrtc = library::nvrtc().map_err(|e| e.to_string())?;
    let on = minimal::setting().map_err(|e| e.to_string())?;
    compile::build(nvrtc, source, &code, &name, options, arch, on, false).map_err(|f| f.message)
}

/// Why `source` is compiled one configuration at a time, if it is.
pub(crate) fn refusal(source: &Source) -> Option<&'static str> {
    let kernel = source.kernel;
    let identifier = kernel.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && kernel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Some("its entry point is not a C identifier");
    }
    let mut undefined = Vec::new();
    for (word, rest) in directives(source.code) {
        match word {
            "include" => return Some("it includes headers"),
            "line" => return Some("it sets line numbers"),
            "pragma" if rest.split_whitespace().next() == Some("once") => {
                return Some("it says #pragma once");
            }
            "undef" => undefined.extend(rest.split_whitespace().next()),
            _ => {}
        }
    }
    let from_options = source.options.iter().filter_map(|o| {
        let name = o
            .strip_prefix("-D")
            .or_else(|| o.strip_prefix("--define-macro="))?;
        Some(name.split('=').next().unwrap_or(name).trim())
    });
    for name in from_options {
        if undefined.contains(&name) {
            return Some("it undefines a macro its options define");
        }
    }
    None
}

/// The preprocessor directives of `code`: each one's word (`define`, `include`, ...) and the
/// rest of its line.
fn directives(code: &str) -> impl Iterator<Item = (&str, &str)> {
    code.lines().filter_map(|line| {
        let after = line.trim_start().strip_prefix('#')?.trim_start();
        let end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        Some((&after[..end], after[end..].trim_start()))
    })
}

/// The names of the macros `code` defines.
fn defined_macros(code: &str) -> Vec<&str> {
    let mut names: Vec<&str> = directives(code)
        .filter(|(word, _)| *word == "define")
        .filter_map(|(_, rest)| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `-DNAME=value` (or `-DNAME`) as `#define NAME value`.
fn directive(def: &str) -> Option<(&str, &str)> {
    let body = def.strip_prefix("-D")?;
    Some(match body.split_once('=') {
        Some((name, value)) => (name, value),
        None => (body, "1"),
    })
}

/// A program of several configurations (see the [module docs](self)).
pub(crate) struct Program {
    /// The program's text.
    pub(crate) code: String,
    /// Each chunk's entry point.
    pub(crate) entries: Vec<String>,
    /// Each chunk's file name in diagnostics.
    files: Vec<String>,
}

impl Program {
    /// The program of `items`' configurations of `source`.
    pub(crate) fn new(source: &Source, items: &[Item<'_>]) -> Program {
        let kernel = source.kernel;
        let own = defined_macros(source.code);
        let mut code = String::new();
        let (mut entries, mut files) = (Vec::new(), Vec::new());
        for (c, item) in items.iter().enumerate() {
            let entry = format!("{PREFIX}_{c}_{kernel}");
            let file = format!("{FILE}-{c}");
            code.push_str(&format!("namespace {PREFIX}_{c} {{\n"));
            let mut names = Vec::new();
            for (name, value) in item.defs.iter().filter_map(|d| directive(d)) {
                code.push_str(&format!("#define {name} {value}\n"));
                names.push(name);
            }
            code.push_str(&format!("#define {kernel} {entry}\n"));
            code.push_str(&format!("#line 1 \"{file}\"\n"));
            code.push_str(source.code);
            code.push_str(&format!("\n#line 1 \"{FILE}\"\n#undef {kernel}\n"));
            for name in names.iter().chain(&own) {
                code.push_str(&format!("#undef {name}\n"));
            }
            code.push_str("}\n");
            entries.push(entry);
            files.push(file);
        }
        Program {
            code,
            entries,
            files,
        }
    }

    /// The chunks a failed program's log blames (indices), or `None` when an error names none
    /// (the front end's count of errors aside).
    pub(crate) fn blamed(&self, log: &str) -> Option<Vec<usize>> {
        let mut blamed = Vec::new();
        let summary = |l: &str| l.contains(" detected in the compilation of ");
        for line in log.lines().filter(|l| l.contains("error") && !summary(l)) {
            let chunk = (0..self.files.len()).find(|&c| {
                line.contains(&format!("{}(", self.files[c]))
                    || line.contains(&format!("'{}'", self.entries[c]))
            })?;
            if !blamed.contains(&chunk) {
                blamed.push(chunk);
            }
        }
        blamed.sort_unstable();
        Some(blamed)
    }

    /// Chunk `c`'s result from the program's output: its entry point and its part of the log.
    fn result(
        &self,
        source: &Source,
        out: Output,
        c: usize,
        config: &str,
    ) -> Result<Compiled, CudaError> {
        let log = self.chunk_log(source, &out.log, c);
        let out = Output { log, ..out };
        compile::finish(out, source.kernel, &self.entries[c], config)
    }

    /// The messages of the program's `log` about chunk `c`, written with the source's file name.
    fn chunk_log(&self, source: &Source, log: &str, c: usize) -> String {
        let file = format!("{}(", self.files[c]);
        let named = format!("{}.cu(", source.kernel);
        log.split("\n\n")
            .filter(|message| message.trim_start().starts_with(&file))
            .map(|message| message.trim().replace(&file, &named))
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item<'a>(defs: &'a [String]) -> Item<'a> {
        Item { defs, config: "x" }
    }

    #[test]
    fn each_chunk_has_its_namespace_definitions_entry_point_and_file() {
        static SRC: Source = Source::new(
            "k",
            "#define TWICE (2 * T)\nextern \"C\" __global__ void k(int *x) { *x = TWICE; }",
        );
        let (a, b) = (vec!["-DT=1".to_owned()], vec!["-DT=2".to_owned()]);
        let p = Program::new(&SRC, &[item(&a), item(&b)]);
        assert_eq!(p.entries, ["tunable_many_0_k", "tunable_many_1_k"]);
        let second = &p.code[p.code.find("namespace tunable_many_1").unwrap()..];
        for line in [
            "#define T 2",
            "#define k tunable_many_1_k",
            "#line 1 \"tunable-many-1\"",
            "#undef T",
            "#undef TWICE",
            "#undef k",
        ] {
            assert!(second.lines().any(|l| l == line), "{line} in {second}");
        }
        // The first chunk's macros are all undefined before the second begins.
        let first = &p.code[..p.code.find("namespace tunable_many_1").unwrap()];
        assert!(first.contains("#undef TWICE\n") && first.contains("#undef T\n"));
    }

    #[test]
    fn the_log_blames_chunks_by_file_or_entry_point_or_nothing() {
        static SRC: Source = Source::new("k", "extern \"C\" __global__ void k() {}");
        let none: Vec<String> = Vec::new();
        let items: Vec<Item<'_>> = (0..11).map(|_| item(&none)).collect();
        let p = Program::new(&SRC, &items);
        let log = "tunable-many-10(3): error: static assertion failed\n\n\
                   tunable-many-1(3): warning #177-D: unused\n\
                   ptxas error   : Entry function 'tunable_many_2_k' uses too much shared data";
        assert_eq!(p.blamed(log), Some(vec![2, 10]));
        assert_eq!(p.blamed("tunable-many(4): error: expected a \"}\""), None);
        assert_eq!(p.blamed("tunable-many-1(3): warning"), Some(vec![]));
        let counted =
            "tunable-many-1(3): error: x\n\n1 error detected in the compilation of \"y\".";
        assert_eq!(p.blamed(counted), Some(vec![1]));
    }

    #[test]
    fn a_chunks_log_is_its_messages_under_the_sources_name() {
        static SRC: Source = Source::new("k", "extern \"C\" __global__ void k() {}");
        let none: Vec<String> = Vec::new();
        let p = Program::new(&SRC, &[item(&none), item(&none)]);
        let out = Output {
            ptx: b".entry tunable_many_1_k(\n".to_vec(),
            cubin: None,
            log: "tunable-many-0(1): warning: a\n  x\n\ntunable-many-1(2): warning: b\n  y\n\n\
                  Remark: the warnings can be suppressed"
                .into(),
        };
        let c = p.result(&SRC, out, 1, "x").unwrap();
        assert_eq!(c.log, "k.cu(2): warning: b\n  y");
        assert_eq!(c.entry, "tunable_many_1_k");
    }

    #[test]
    fn sources_that_would_not_survive_a_namespace_are_compiled_alone() {
        let refused = |code: &'static str, options: &'static [&'static str]| {
            refusal(&Source::new("k", code).with_options(options))
        };
        assert_eq!(refused("__global__ void k() {}", &[]), None);
        assert!(refused("  #  include <cuda_fp16.h>\n", &[]).is_some());
        assert!(refused("#pragma once\n", &[]).is_some());
        assert!(refused("#line 10\n", &[]).is_some());
        assert_eq!(refused("#pragma unroll\n", &[]), None);
        assert!(refused("#undef FAST\n", &["-DFAST=1"]).is_some());
        assert_eq!(refused("#undef FAST\n", &["-DSLOW"]), None);
        assert!(refusal(&Source::new("k<int>", "")).is_some());
    }

    #[test]
    fn definitions_become_directives() {
        assert_eq!(directive("-DTILE=4"), Some(("TILE", "4")));
        assert_eq!(directive("-DREAL=float"), Some(("REAL", "float")));
        assert_eq!(directive("-DFAST"), Some(("FAST", "1")));
        assert_eq!(directive("--use_fast_math"), None);
        assert_eq!(
            defined_macros("#define B(x) x\n # define A 1\n#ifndef A\n#define A 2\n#endif"),
            ["A", "B"]
        );
    }
}
