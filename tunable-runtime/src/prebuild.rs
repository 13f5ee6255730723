//! # Prebuilding: compiling configurations before they are measured
//!
//! To *prebuild* is to compile a configuration's kernel on a pool of threads before the tuner
//! measures it, so that compilation overlaps measurement. Two ways use it, neither by default
//! (the default tuning asks for one configuration at a time and builds it when it runs it):
//!
//! - **a batch** (`TUNABLE_BATCH=N`, [`TuneOptions::batch`](crate::tuner::TuneOptions::batch)
//!   of 2 or more): the tuner runs each variant of the batch once while [`collect`]ing, then
//!   runs the builds on [`run_pool`] while it times the variants in order;
//! - **speculation** (`TUNABLE_PREBUILD=on`,
//!   [`TuneOptions::prebuild`](crate::tuner::TuneOptions::prebuild)): one configuration at a
//!   time, and before each evaluation a [`Pool`] is handed the builds of the configurations the
//!   strategy expects to ask next ([`Strategy::upcoming`]), as many as the machine has cores.
//!   The configuration about to be measured is not handed over: the caller's thread builds it
//!   when it runs it, so it never waits for a free lane. A build nobody ends up asking for
//!   costs a core for a while. The pool runs as many builds at once as its [`Gate`] finds worth
//!   it. Which configurations are evaluated, and in which order, never depends on the pool.
//!
//! While [`collect`]ing, a GPU backend asked for a kernel does not build or launch anything: it
//! hands the build over as a [`Build`] (unless the kernel is built or being built already) and
//! fails the call with its "deferred" error, which ends the variant's body there. Each build
//! lands in the backend's cache, so the timed runs that follow find their kernel built, or wait
//! for the build in flight: the backends build each kernel once, whoever gets there first. Only
//! the first kernel a variant asks for is prebuilt (the body stops at the deferred error); a
//! build that fails is cached with its reason like any build.
//!
//! Backends count the kernels they are asked for ([`note_request`]), so the tuner prebuilds only
//! for kernels that go through a backend: a CPU kernel's body has nothing to build, and running
//! it to collect would run it. A device that runs on the host's cores (PoCL) has its batch built
//! before it is timed, with the pool idle meanwhile, and is never speculated for: a build would
//! disturb the timing on the same cores. The measurements behind these rules are in
//! `docs/notes/compile-path.md`.
//!
//! [`Strategy::upcoming`]: tunable_search::strategy::Strategy::upcoming

pub(crate) mod build;
mod gate;

use crate::evaluation::{self, EvalContext};
pub use build::Build;
pub use gate::Gate;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Runs `f` collecting: the builds the backends hand over meanwhile are returned with `f`'s
/// result instead of being run. `f` runs in an evaluation context of its own
/// ([`EvalContext::collecting`]).
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Vec<Build>) {
    let (r, context) = evaluation::scope(EvalContext::collecting(), f);
    (r, context.collecting.unwrap_or_default())
}

/// Whether this thread is collecting: a backend asked for a kernel then hands its build over
/// ([`defer`]) and fails the call with its "deferred" error.
pub fn collecting() -> bool {
    evaluation::with(|c| c.collecting.is_some()).unwrap_or(false)
}

/// Hands `build` over to the collection in progress on this thread (see [`collect`]); nothing
/// outside one.
pub fn defer(build: Build) {
    evaluation::with(|c| {
        if let Some(builds) = &mut c.collecting {
            builds.push(build);
        }
    });
}

/// Counts a kernel asked of a backend in the evaluation running on this thread (backends call
/// it on every request), for a device that runs on the host's cores (`host`: PoCL) or not.
pub fn note_request(host: bool) {
    evaluation::with(|c| {
        c.requests += 1;
        c.host = host;
    });
}

/// Threads of a prebuild pool: the machine's cores.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
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
                        b.run();
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

/// A pool of threads that builds what it is handed, most recently handed first, for as long as
/// it lives: the compile pool of a tuning that compiles speculatively (see [the module
/// docs](self)). Dropping it discards the builds not started and waits for those
/// running.
pub struct Pool {
    shared: Arc<Queue>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

struct Queue {
    /// When the pool was made: the gate's clock starts there.
    born: Instant,
    state: Mutex<State>,
    ready: Condvar,
}

struct State {
    /// Builds waiting with their tags, the next first; `None` once the pool is closing.
    builds: Option<VecDeque<(usize, Build)>>,
    /// How many builds may run at once.
    gate: Gate,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.workers.len())
            .field("width", &self.width())
            .field("waiting", &self.waiting())
            .finish()
    }
}

impl Pool {
    /// A pool of `threads` threads (at least 1), idle until handed builds. It runs one build
    /// at a time at first and widens while wider builds faster (see [the module
    /// docs](self)).
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        let shared = Arc::new(Queue {
            born: Instant::now(),
            state: Mutex::new(State {
                builds: Some(VecDeque::new()),
                gate: Gate::new(threads),
            }),
            ready: Condvar::new(),
        });
        let workers = (0..threads)
            .map(|_| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    while let Some(b) = shared.next() {
                        b.run();
                        shared.done();
                    }
                })
            })
            .collect();
        Pool { shared, workers }
    }

    /// Hands `builds` over, to be started before every build handed over earlier and not
    /// started yet, in their order.
    pub fn push_front(&self, builds: Vec<Build>) {
        self.submit(&[], builds.into_iter().map(|b| (usize::MAX, b)).collect());
    }

    /// Hands `fresh` builds over, each tagged (with a configuration's position, say), and
    /// reorders the queue: first, in the order of `order`, the waiting builds and the fresh
    /// ones of each tag it names; then the fresh ones of other tags; then every build handed
    /// over earlier and not started yet, in their order.
    pub fn submit(&self, order: &[usize], fresh: Vec<(usize, Build)>) {
        let mut state = self.shared.lock();
        let Some(q) = state.builds.as_mut() else {
            return;
        };
        let mut front = Vec::with_capacity(fresh.len());
        let mut fresh: Vec<Option<(usize, Build)>> = fresh.into_iter().map(Some).collect();
        for &tag in order {
            let mut i = 0;
            while i < q.len() {
                if q[i].0 == tag {
                    front.extend(q.remove(i));
                } else {
                    i += 1;
                }
            }
            for f in fresh.iter_mut() {
                if f.as_ref().is_some_and(|(t, _)| *t == tag) {
                    front.extend(f.take());
                }
            }
        }
        front.extend(fresh.into_iter().flatten());
        if front.is_empty() {
            return;
        }
        for b in front.into_iter().rev() {
            q.push_front(b);
        }
        drop(state);
        self.shared.ready.notify_all();
    }

    /// Builds handed over and not started yet.
    pub fn waiting(&self) -> usize {
        self.shared.lock().builds.as_ref().map_or(0, VecDeque::len)
    }

    /// Builds the pool lets run at once now: one at first, wider while wider builds faster.
    pub fn width(&self) -> usize {
        self.shared.lock().gate.width()
    }

    /// Threads of the pool.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next build, waiting for one and for the gate to let it start; `None` once the pool
    /// is closing.
    fn next(&self) -> Option<Build> {
        let mut state = self.lock();
        loop {
            let State { builds, gate } = &mut *state;
            match builds.as_mut() {
                None => return None,
                Some(q) if gate.open() => {
                    if let Some((_, b)) = q.pop_front() {
                        gate.enter();
                        return Some(b);
                    }
                }
                Some(_) => {}
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A build is done: the gate counts it.
    fn done(&self) {
        let now = self.born.elapsed().as_secs_f64();
        let mut state = self.lock();
        let waiting = state.builds.as_ref().is_some_and(|q| !q.is_empty());
        state.gate.leave(now, waiting);
        drop(state);
        self.ready.notify_all();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The builds not started are dropped: nobody will ask for them any more.
        self.shared.lock().builds = None;
        self.shared.ready.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
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
    fn the_pool_builds_the_newest_first_and_drops_what_it_never_started() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let (gate_tx, gate_rx) = std::sync::mpsc::channel::<()>();
        let gate = Mutex::new(gate_rx);
        let pool = Pool::new(1);
        // The one thread is held by the first build until the others are queued.
        let started = Arc::new(AtomicUsize::new(0));
        let (s, o) = (Arc::clone(&started), Arc::clone(&order));
        let gate = Arc::new(gate);
        let g = Arc::clone(&gate);
        pool.push_front(vec![Build::new(false, move || {
            s.store(1, Ordering::SeqCst);
            let _ = g
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_secs(20));
            o.lock().unwrap().push(0);
        })]);
        while started.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        let build = |i| {
            let o = Arc::clone(&order);
            Build::new(false, move || o.lock().unwrap().push(i))
        };
        pool.push_front(vec![build(3), build(4)]);
        pool.push_front(vec![build(1), build(2)]);
        assert_eq!((pool.waiting(), pool.threads()), (4, 1));
        gate_tx.send(()).unwrap();
        while pool.waiting() > 0 || order.lock().unwrap().len() < 5 {
            std::thread::yield_now();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
        // A submission moves the waiting builds it names to the front, in its order.
        order.lock().unwrap().clear();
        let (gate2_tx, gate2_rx) = std::sync::mpsc::channel::<()>();
        let (s, o) = (Arc::new(AtomicUsize::new(0)), Arc::clone(&order));
        let s2 = Arc::clone(&s);
        pool.submit(
            &[],
            vec![(
                9,
                Build::new(false, move || {
                    s2.store(1, Ordering::SeqCst);
                    let _ = gate2_rx.recv_timeout(std::time::Duration::from_secs(20));
                    o.lock().unwrap().push(9);
                }),
            )],
        );
        while s.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        pool.submit(&[], vec![(5, build(5)), (6, build(6)), (7, build(7))]);
        pool.submit(&[7, 8, 5], vec![(8, build(8))]);
        gate2_tx.send(()).unwrap();
        while pool.waiting() > 0 || order.lock().unwrap().len() < 5 {
            std::thread::yield_now();
        }
        assert_eq!(*order.lock().unwrap(), [9, 7, 8, 5, 6]);
        // Closing drops what was never started.
        let pool = Pool::new(1);
        let (s, g) = (Arc::new(AtomicUsize::new(0)), Arc::clone(&gate));
        let s2 = Arc::clone(&s);
        pool.push_front(vec![Build::new(false, move || {
            s2.store(1, Ordering::SeqCst);
            let _ = g
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_millis(500));
        })]);
        while s.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        pool.push_front(vec![Build::new(false, move || {
            r.fetch_add(1, Ordering::SeqCst);
        })]);
        drop(pool);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
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
