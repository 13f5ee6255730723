//! # Builds ahead: configurations handed to the compile pool
//!
//! While the tuner collects ([`crate::ahead`]), [`super::Cuda::kernel`] hands each configuration
//! to be compiled to [`BuildsAhead`], which gives the tuner's pool a [`Build`] for it. Each
//! configuration has a [`Slot`]: the first thread to claim it compiles it, the others wait for
//! its result. A pool thread that claims one also claims up to `limit - 1` other configurations
//! of the same source waiting in the pool, the newest first, and compiles them all in one NVRTC
//! program ([`super::batch`]): each costs 46 / 41 / 38 ms in programs of 2 / 4 / 8 against 57 ms
//! alone (`gemm_cuda`, NVRTC 12.9, development machine). The configuration the tuner is about
//! to measure is compiled alone by the tuner's thread if nobody has started it.
//!
//! A program's configurations are done only when all are: the tuner waits for a whole program
//! when the configuration it measures next is in one, and a guess it never measures costs its
//! share. So programs of several are built only
//! - once the guesses have proved right ([`ahead::precise`], the tuner's rule for handing more
//!   guesses over): at least [`ahead::PRECISE_AFTER`] configurations taken had been handed
//!   over, [`ahead::PRECISE_RATIO`] times as many as the guesses missed (handed over before
//!   the latest one taken, and not taken). `exhaustive`'s and `random`'s guesses are taken in
//!   their order and never miss; `auto`'s often do;
//! - of at least [`MIN_GROUP`] configurations (fewer waiting: the one started is built alone);
//! - with the newest of those waiting: the pool starts the guesses the strategy expects first,
//!   so the others of its program are those expected last, which the tuner needs last.
//!
//! In `gemm_cuda --pool` (2 cores, 16 guesses per evaluation) this took `exhaustive` from 3.84
//! to 3.09 s and `random` from 4.05 to 3.63 s, and formed no program of several for `auto`; see
//! `docs/results.md`.
//!
//! Needs no device: `gemm_cuda --pool` drives it with NVRTC for real and the GPU's measurement
//! replaced by a wait.

use super::batch;
use super::compile;
use super::error::CudaError;
use super::image::{self, Image};
use super::library;
use super::slot::Slot;
use crate::ahead::{self, Build};
use crate::backend::Source;
use crate::params::Params;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The fewest configurations of a program of several (fewer waiting: the one started is built
/// alone). A program of two saves a fifth of each one's compilation (46 against 57 ms) and
/// doubles the wait for the first; from four, it saves over a quarter.
const MIN_GROUP: usize = 4;

/// What compiling a configuration gives: its images, CUBIN first.
pub(crate) type Built = Result<Vec<Image>, CudaError>;

/// A compile cache key ([`Source::cache_key`]).
pub(crate) type Key = (usize, usize, String);

/// A configuration handed over: its slot and what compiling it takes.
#[derive(Clone)]
pub(crate) struct Handed {
    slot: Arc<Slot<Built>>,
    source: Source,
    defs: Vec<String>,
    config: String,
}

/// The configurations of one architecture handed to a compile pool, until they are taken.
///
/// Each is built once, by the first thread to start it; a thread that takes one being built
/// waits for it. A pool thread compiles the configuration it starts with up to `limit - 1`
/// others of the same source that wait, the newest, in one NVRTC program
/// ([`compile_many`](super::compile_many)), while the guesses hit: after at least 8 taken that
/// had been handed over, 3 times as many as those missed (handed over before the latest one
/// taken, and not taken), and with at least 4 waiting; else alone. [`BuildsAhead::take`]
/// compiles alone what nobody has started.
///
/// ```no_run
/// use tunable::backend::Source;
/// use tunable::backend::cuda::BuildsAhead;
/// use tunable_runtime::ahead::Pool;
/// # #[derive(Clone, Copy, Debug)] struct P(i64);
/// # impl tunable::Params for P {
/// #     const NAMES: &'static [&'static str] = &["TILE"];
/// #     fn from_values(_: &[tunable::Value]) -> Option<Self> { None }
/// #     fn to_values(&self) -> Vec<tunable::Value> { vec![tunable::Value::Int(self.0)] }
/// # }
/// static SCALE: Source = Source::new(
///     "scale",
///     r#"extern "C" __global__ void scale(float *x) { x[threadIdx.x] *= TILE; }"#,
/// );
/// let builds = BuildsAhead::new("sm_90", 8);
/// let pool = Pool::new(2);
/// let guesses = [P(2), P(4), P(8)];
/// let handed: Vec<_> = guesses
///     .iter()
///     .enumerate()
///     .filter_map(|(i, p)| Some((i, builds.hand(&SCALE, p).ok()??)))
///     .collect();
/// pool.hint(&[0, 1, 2], handed);
/// // Built by the pool (in one program), or waited for, or compiled here if nobody started it.
/// let images = builds.take(&SCALE, &P(4))?;
/// println!("{} bytes, entry point {}", images[0].bytes.len(), images[0].entry);
/// # Ok::<(), tunable::backend::cuda::CudaError>(())
/// ```
pub struct BuildsAhead {
    arch: String,
    limit: usize,
    handed: Mutex<HashMap<Key, Handed>>,
    /// Configurations handed over.
    count: AtomicU64,
    /// Configurations taken that had been handed over.
    hits: AtomicU64,
    /// The latest order of a configuration taken that had been handed over (plus one; 0: none).
    last_hit: AtomicU64,
}

impl std::fmt::Debug for BuildsAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildsAhead")
            .field("arch", &self.arch)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl BuildsAhead {
    /// Builds for `arch` (`sm_90`), with at most `limit` configurations in one NVRTC program
    /// (1: each alone; the CUDA backend takes `TUNABLE_NVRTC_BATCH`, default
    /// [`super::BATCH`]).
    pub fn new(arch: &str, limit: usize) -> Arc<BuildsAhead> {
        Arc::new(BuildsAhead {
            arch: arch.to_owned(),
            limit: limit.max(1),
            handed: Mutex::new(HashMap::new()),
            count: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            last_hit: AtomicU64::new(0),
        })
    }

    /// Hands `params`' compilation of `source` over: the pool's build for it, or `None` when a
    /// thread has started or finished it. A configuration handed before whose build the pool
    /// dropped unstarted (a stale guess) is handed again.
    pub fn hand<P: Params>(
        self: &Arc<Self>,
        source: &Source,
        params: &P,
    ) -> Result<Option<Build>, CudaError> {
        let (config, defs) = compile::rendered(params)?;
        Ok(self.hand_defs(source.cache_key(&defs), source, defs, config))
    }

    /// [`BuildsAhead::hand`] with the definitions rendered and the key made.
    pub(crate) fn hand_defs(
        self: &Arc<Self>,
        key: Key,
        source: &Source,
        defs: Vec<String>,
        config: String,
    ) -> Option<Build> {
        let mut handed = self.handed.lock().unwrap_or_else(|e| e.into_inner());
        let entry = handed.entry(key.clone()).or_insert_with(|| Handed {
            slot: Arc::new(Slot::new(self.count.fetch_add(1, Ordering::Relaxed))),
            source: *source,
            defs,
            config,
        });
        if !entry.slot.waiting() {
            return None;
        }
        let (builds, entry) = (Arc::clone(self), entry.clone());
        Some(Build::new(false, move || builds.build(&key, &entry)))
    }

    /// `params`' images of `source`, no longer handed over: built by the pool, or waited for
    /// while a thread builds them, or compiled now, alone, when nobody has started them.
    pub fn take<P: Params>(&self, source: &Source, params: &P) -> Built {
        let (config, defs) = compile::rendered(params)?;
        self.take_defs(&source.cache_key(&defs), source, &defs, &config)
    }

    /// [`BuildsAhead::take`] with the definitions rendered and the key made.
    pub(crate) fn take_defs(
        &self,
        key: &Key,
        source: &Source,
        defs: &[String],
        config: &str,
    ) -> Built {
        let handed = self
            .handed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
        let alone = || image::compile_images(source, defs, &self.arch, config, true);
        match handed {
            Some(h) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.last_hit.fetch_max(h.slot.order + 1, Ordering::Relaxed);
                h.slot.get_or_build(alone)
            }
            None => alone(),
        }
    }

    /// Whether the guesses have been right often enough for programs of several (see the
    /// [module docs](self)), given those `handed` over and not taken.
    fn precise(&self, handed: &HashMap<Key, Handed>) -> bool {
        let hits = self.hits.load(Ordering::Relaxed);
        let last = self.last_hit.load(Ordering::Relaxed);
        // Handed before the latest one taken, and not taken: guesses that missed.
        let missed = handed.values().filter(|h| h.slot.order < last).count() as u64;
        ahead::precise(hits, missed)
    }

    /// Builds a handed configuration unless a thread has started it, with up to `limit - 1`
    /// others of its source that wait (the newest) in one program when the source allows it.
    fn build(&self, key: &Key, own: &Handed) {
        let group = {
            let handed = self.handed.lock().unwrap_or_else(|e| e.into_inner());
            let Some(claim) = own.slot.claim() else {
                return;
            };
            let mut group = vec![(claim, own)];
            if self.limit > 1 && self.precise(&handed) && batch::batchable(&own.source) {
                let mut others: Vec<&Handed> = handed
                    .iter()
                    .filter(|(k, h)| *k != key && h.source == own.source && h.slot.waiting())
                    .map(|(_, h)| h)
                    .collect();
                others.sort_by_key(|h| std::cmp::Reverse(h.slot.order));
                if others.len() + 1 < MIN_GROUP.min(self.limit) {
                    others.clear();
                }
                for h in others.into_iter().take(self.limit - 1) {
                    if let Some(claim) = h.slot.claim() {
                        group.push((claim, h));
                    }
                }
            }
            group
                .into_iter()
                .map(|(claim, h)| (claim, h.clone()))
                .collect::<Vec<_>>()
        };
        if let [(_, one)] = &group[..] {
            let built =
                image::compile_images(&one.source, &one.defs, &self.arch, &one.config, true);
            let (claim, _) = group.into_iter().next().expect("one");
            claim.finish(built);
            return;
        }
        let items: Vec<batch::Item<'_>> = group
            .iter()
            .map(|(_, h)| batch::Item {
                defs: &h.defs,
                config: &h.config,
            })
            .collect();
        let results = match library::nvrtc() {
            Ok(_) => batch::compile_items(&own.source, &items, &self.arch),
            Err(e) => items.iter().map(|_| Err(e.clone())).collect(),
        };
        for ((claim, _), result) in group.into_iter().zip(results) {
            claim.finish(result.map(|c| image::compiled_images(c, own.source.kernel)));
        }
    }
}
