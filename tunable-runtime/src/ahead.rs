//! # Compiling ahead
//!
//! The tuner prepares a batch of configurations before it times them. It runs each variant of
//! the batch once in *collecting* mode ([`collect`]): a GPU backend asked there for a kernel
//! does not build or launch anything; it hands the build over as a [`Build`] (unless the kernel
//! is built or being built already) and fails the call with its "deferred" error, which ends the
//! variant's body there. The tuner then runs the builds on a pool of threads ([`run_pool`]), as
//! many as the machine has cores; each build lands in the backend's cache, so the timed runs that
//! follow find their kernel built, or wait for the build in flight.
//!
//! - **GPU device:** the pool builds while the caller's thread times the variants already built:
//!   compilation overlaps measurement.
//! - **CPU device** (PoCL, where the kernels run on the cores that compile): the whole batch is
//!   built first, then timed with the pool idle, so that no build disturbs a timing.
//!
//! Only the first kernel a variant asks for is compiled ahead (the body stops at the deferred
//! error); a body that launches several kernels builds the others when it first runs them. A
//! build that fails is cached with its reason like any build: the variant's timed run reports it
//! and the tuning goes on.
//!
//! Backends count the kernels they are asked for ([`requests`]), so the tuner compiles ahead only
//! for kernels that go through a backend: a CPU kernel's body has nothing to build, and running it
//! to collect would run it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

/// One build handed over by a backend in collecting mode.
pub struct Build {
    work: Box<dyn FnOnce() + Send>,
    host: bool,
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Build").field("host", &self.host).finish()
    }
}

impl Build {
    /// A build, for a device that runs on the host's cores (`host`: PoCL, say) or not.
    pub fn new(host: bool, work: impl FnOnce() + Send + 'static) -> Self {
        Build {
            work: Box::new(work),
            host,
        }
    }

    /// Whether the device runs on the host's cores: its batch is built before it is timed.
    pub fn host(&self) -> bool {
        self.host
    }
}

thread_local! {
    /// The builds handed over on this thread while collecting.
    static COLLECTING: RefCell<Option<Vec<Build>>> = const { RefCell::new(None) };
    /// Kernels asked of a backend on this thread.
    static REQUESTS: Cell<u64> = const { Cell::new(0) };
    /// Whether the last kernel asked of a backend on this thread runs on the host's cores.
    static HOST: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` in collecting mode: the builds the backends hand over meanwhile are returned
/// with `f`'s result instead of being run.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Vec<Build>) {
    let outer = COLLECTING.replace(Some(Vec::new()));
    let r = f();
    let builds = COLLECTING.replace(outer).unwrap_or_default();
    (r, builds)
}

/// Whether this thread is collecting: a backend asked for a kernel then defers its build
/// ([`defer`]) and fails the call with its "deferred" error.
pub fn collecting() -> bool {
    COLLECTING.with_borrow(Option::is_some)
}

/// Hands `build` over to the collection in progress on this thread (see [`collect`]).
pub fn defer(build: Build) {
    COLLECTING.with_borrow_mut(|c| {
        if let Some(c) = c {
            c.push(build);
        }
    });
}

/// Counts a kernel asked of a backend on this thread (backends call it on every request), for
/// a device that runs on the host's cores (`host`: PoCL) or not.
pub fn note_request(host: bool) {
    REQUESTS.set(REQUESTS.get() + 1);
    HOST.set(host);
}

/// Kernels asked of a backend on this thread so far: a run that asked for none has nothing to
/// compile ahead.
pub fn requests() -> u64 {
    REQUESTS.get()
}

/// Threads of the compile pool: the machine's cores.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The widest batch worth compiling ahead on this thread's device: [`threads`] for a GPU, 1
/// for a device on the host's cores. There the batch is built before it is timed, so only
/// builds running in parallel could gain, and PoCL runs them one at a time (its compiler lock
/// per OpenCL context): measured on PoCL 3.1, 16 evaluations of `gemm_opencl` took 88.5 s in
/// batches of 2 against 77.3 s one at a time. `TUNABLE_BATCH` still compiles a batch ahead.
pub fn widest_batch() -> usize {
    if HOST.get() { 1 } else { threads() }
}

/// Runs `builds` on a pool of `threads` threads (in their order) and `measure` on this thread:
/// after the last build when any build is for a host device, else meanwhile. Returns
/// `measure`'s result and the seconds this thread waited for builds before measuring.
pub fn run_pool<R>(builds: Vec<Build>, threads: usize, measure: impl FnOnce() -> R) -> (R, f64) {
    if builds.is_empty() {
        return (measure(), 0.0);
    }
    let host = builds.iter().any(Build::host);
    let workers = threads.clamp(1, builds.len());
    let queue = Mutex::new(builds.into_iter().collect::<VecDeque<_>>());
    let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
    std::thread::scope(|s| {
        let pool: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    while let Some(b) = next() {
                        // A panicking build is the backend's bug; it must not stop the others.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(b.work));
                    }
                })
            })
            .collect();
        let mut waited = 0.0;
        if host {
            let start = Instant::now();
            for w in pool {
                let _ = w.join();
            }
            waited = start.elapsed().as_secs_f64();
        }
        (measure(), waited)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn collects_builds_then_runs_them_on_the_pool() {
        let done = Arc::new(AtomicUsize::new(0));
        let (r, builds) = collect(|| {
            assert!(collecting());
            for _ in 0..5 {
                let done = Arc::clone(&done);
                defer(Build::new(true, move || {
                    done.fetch_add(1, Ordering::SeqCst);
                }));
            }
            7
        });
        assert!(!collecting());
        assert_eq!((r, builds.len()), (7, 5));
        // Outside a collection nothing is kept.
        defer(Build::new(true, || panic!("not run")));
        // A host device: every build is done before the measurement starts.
        let (seen, _) = run_pool(builds, 2, || done.load(Ordering::SeqCst));
        assert_eq!(seen, 5);
    }

    #[test]
    fn a_gpu_batch_is_measured_while_it_builds() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let built = Arc::new(AtomicUsize::new(0));
        let b = Arc::clone(&built);
        // The build finishes only once the measurement has started: it would time out if the
        // measurement waited for it.
        let build = Build::new(false, move || {
            if rx.recv_timeout(std::time::Duration::from_secs(20)).is_ok() {
                b.store(1, Ordering::SeqCst);
            }
        });
        let ((), waited) = run_pool(vec![build], 4, || tx.send(()).unwrap());
        assert_eq!((built.load(Ordering::SeqCst), waited), (1, 0.0));
    }
}
