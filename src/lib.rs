//! # tunable
//!
//! Build-time auto-tuning of GPU and CPU kernels. Annotate a kernel with `#[tunable]`, run once
//! with your crate's `autotune` feature to tune it on the real device, and every later build bakes
//! the winner in as constants.
//!
//! ```
//! use tunable::tunable;
//!
//! #[tunable(block = [16, 32, 64, 128], unroll = [1, 2, 4], constraint = "block * unroll <= 256",
//!           key = tunable::key::next_power_of_two(x.len() as u64))]
//! fn scale(a: f32, x: &[f32], out: &mut [f32]) {
//!     // `block` and `unroll` are locals of type usize here.
//!     for (xb, ob) in x.chunks(block).zip(out.chunks_mut(block)) {
//!         for (xu, ou) in xb.chunks(unroll).zip(ob.chunks_mut(unroll)) {
//!             ou.iter_mut().zip(xu).for_each(|(o, x)| *o = a * x);
//!         }
//!     }
//! }
//!
//! let (x, mut out) = (vec![1.0; 1000], vec![0.0; 1000]);
//! scale(2.0, &x, &mut out); // a build with the `autotune` feature tunes on this first call
//! assert_eq!(out[999], 2.0);
//! ```
//!
//! The user guide is the book under `docs/` in the repository (getting started, how tuning
//! works, GPU kernels, distributed tuning, troubleshooting; `mdbook serve docs` renders it);
//! this documentation is the reference.
//!
//! **Features and this documentation.** Some modules exist only with a feature, and
//! documentation built without it does not show them: `backend::cuda` (feature `cuda`),
//! `backend::opencl` (`opencl`), `backend::wgpu` (`wgpu`), `backend::cubecl` (`cubecl`), and `journal` with the tuner's
//! internals (`autotune`). The documentation on docs.rs is built with all four; locally,
//! `cargo doc -p tunable-kernels --features autotune,cuda,opencl,wgpu`.
//!
//! ## What is here
//!
//! | item | for |
//! | --- | --- |
//! | [`tunable`](macro@tunable) | the attribute: parameters, constraints, key, budget, strategy, verification |
//! | [`key`] | bucketing problem sizes into keys (`key = ...`) |
//! | [`verify`] | outputs checked while tuning (`verify = ...`): the [`Output`](verify::Output) trait |
//! | [`backend`] | GPU kernels: OpenCL (feature `opencl`), CUDA (feature `cuda`), WGSL through wgpu (feature `wgpu`) and CubeCL's `#[cube]` kernels (feature `cubecl`), launch and timing |
//! | [`Params`], [`Space`], [`SpaceBuilder`], [`Value`] | a kernel's configurations and its search space |
//! | [`expr`] | the constraint language of `constraint = "..."` |
//! | [`Choice`], [`Origin`] | which configuration a call runs and why (`<kernel>_config(..)`) |
//! | [`settings`] | the `TUNABLE_*` environment variables |
//! | [`measure`] | timing work as the tuner does (device time when a backend reports it) |
//! | [`meter`] | energy and power of repeated runs (NVML on NVIDIA GPUs, RAPL on the CPU), or why not measurable here |
//! | [`clock`] | clock parameters (`nvml_gr_clock`, `nvml_mem_clock`, `nvml_pwr_limit`): the setting a configuration asks of the GPU, and (with `autotune`) the control that applies it while tuning |
//! | [`tuned`] | reading what tuning stored (`tuned/<kernel>.bin`, GPU binaries in `tuned/<kernel>.artifacts/`) |
//! | [`tuner`], `journal` (with `autotune`) | tuning a space directly, with your own evaluator and observers |
//! | [`RuntimeError`], [`SpaceError`] | the tuner's and the space's errors |
//!
//! The search engine is the `tunable-search` crate; the runtime (measurement, tuner, store,
//! backends) is `tunable-runtime`. This facade exports what a user of the attribute needs.

pub use tunable_macros::tunable;
pub use tunable_runtime::RuntimeError;
pub use tunable_runtime::choice::{Choice, Origin};
/// The journal of measurements (with the `autotune` feature).
#[cfg(feature = "autotune")]
pub use tunable_runtime::journal;
pub use tunable_runtime::meter;
pub use tunable_runtime::params::Params;
pub use tunable_runtime::{backend, compare, key, measure, settings, tuner, verify};
pub use tunable_search::{Space, SpaceBuilder, SpaceError, Value, expr};

/// Clock parameters (`nvml_gr_clock`, `nvml_mem_clock`, `nvml_pwr_limit`; the guide's chapter
/// "Tuning clocks"): the [`Setting`](clock::Setting) a configuration asks of the GPU, as
/// [`Choice::clocks`] gives it, and with the `autotune` feature the control that applies it
/// while tuning ([`ClockControl`](tunable_runtime::clock::ClockControl)).
pub mod clock {
    #[cfg(feature = "autotune")]
    pub use tunable_runtime::clock::{
        ClockControl, ClockError, ClockMode, Guard, Previous, Rights,
    };
    pub use tunable_search::clock::{Knob, MAX_MHZ, MAX_WATTS, Setting};
}

/// The tuned files: what tuning stored, one entry per (kernel, device, key), in
/// `tuned/<kernel>.bin` under the crate (`TUNABLE_DIR` overrides the folder).
///
/// ```no_run
/// let dir = tunable::tuned::tuned_dir(env!("CARGO_MANIFEST_DIR"));
/// for e in tunable::tuned::read(&tunable::tuned::tuned_file(&dir, "matmul")?)? {
///     println!("{} key {}: {:?} in {:.3} ms", e.device, e.key, e.params, e.time_ms);
/// }
/// # Ok::<(), tunable::RuntimeError>(())
/// ```
///
/// The file's format (frame, versions, codec) is [`format`](tuned::format). A GPU kernel's
/// winners come with their device binaries in `tuned/<kernel>.artifacts/`
/// ([`artifact`](tuned::artifact): layout and format), which plain builds embed.
pub mod tuned {
    pub use tunable_runtime::store::{StoredValue, TunedEntry, read, tuned_dir, tuned_file};
    pub use tunable_search::format::artifact;
    pub use tunable_search::format::tuned as format;
}

/// Not public API: what `#[tunable]` generates code against.
#[doc(hidden)]
pub mod __private {
    pub use tunable_runtime::__private::*;

    /// `select!({ tuning } else { shipped })`: the tuning code in a build with the `autotune`
    /// feature of this crate (which users turn on through their own crate's feature,
    /// `autotune = ["tunable/autotune"]`), else the shipped code. Unlike `if AUTOTUNE`, the branch not taken is not even
    /// compiled, so a shipped build needs neither the tuner nor the search engine.
    #[cfg(feature = "autotune")]
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __tunable_select {
        ({ $($tune:tt)* } else { $($ship:tt)* }) => {{ $($tune)* }};
    }

    /// See the other `__tunable_select`.
    #[cfg(not(feature = "autotune"))]
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __tunable_select {
        ({ $($tune:tt)* } else { $($ship:tt)* }) => {{ $($ship)* }};
    }

    /// `shipped_only! { items }`: the items in a build without the `autotune` feature (the
    /// instances of the baked configurations, which only shipped builds run), nothing with it.
    #[cfg(not(feature = "autotune"))]
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __tunable_shipped_only {
        ($($item:tt)*) => { $($item)* };
    }

    /// See the other `__tunable_shipped_only`.
    #[cfg(feature = "autotune")]
    #[doc(hidden)]
    #[macro_export]
    macro_rules! __tunable_shipped_only {
        ($($item:tt)*) => {};
    }

    pub use crate::__tunable_select as select;
    pub use crate::__tunable_shipped_only as shipped_only;
}

/// The README's and the user guide's code: every ```rust block of these files is a doctest, so
/// `cargo test` compiles it (and runs it unless it says `no_run`). Blocks that are not Rust say
/// so (```text, ```sh, ```toml). `tests/docs.rs` checks that every guide chapter of
/// `docs/SUMMARY.md` is listed here (the results and the lab notes, also in the book, hold no
/// Rust).
#[cfg(doctest)]
mod guide {
    macro_rules! doctests {
        ($($name:ident = $path:literal,)*) => {
            $(
                #[doc = include_str!($path)]
                struct $name;
            )*
        };
    }

    doctests! {
        Readme = "../README.md",
        Introduction = "../docs/introduction.md",
        GettingStarted = "../docs/src/getting-started.md",
        HowItWorks = "../docs/src/how-it-works.md",
        AheadOfTime = "../docs/src/ahead-of-time.md",
        GpuKernels = "../docs/src/gpu-kernels.md",
        Wgpu = "../docs/src/wgpu.md",
        Cubecl = "../docs/src/cubecl.md",
        GpuCheck = "../docs/src/gpu-check.md",
        SearchSpaces = "../docs/src/search-spaces.md",
        Energy = "../docs/src/energy.md",
        Clocks = "../docs/src/clocks.md",
        Strategies = "../docs/src/strategies.md",
        StressSuite = "../docs/src/stress-suite.md",
        Distributed = "../docs/src/distributed.md",
        Recipes = "../docs/src/recipes.md",
        Security = "../docs/src/security.md",
        Troubleshooting = "../docs/src/troubleshooting.md",
        Cli = "../docs/src/reference/cli.md",
        Environment = "../docs/src/reference/environment.md",
        Files = "../docs/src/reference/files.md",
    }
}
