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
//!
//! ## Speculation
//!
//! A tuning that asks the strategy for one configuration at a time keeps a [`Pool`] fed: before
//! each evaluation it hands over the builds of the configurations the strategy expects to ask
//! next ([`Strategy::upcoming`]), newest hints first: as many as the pool has threads, and up
//! to [`hints`] (at least 16) once the strategy's guesses have come true ([`Hits`]). The pool's
//! threads build them while the caller's thread builds and measures the configuration asked; a
//! build nobody ends up asking for costs a core for a while, and a configuration asked before
//! its build started is built by the thread that needs it (the backends build each kernel once,
//! whoever gets there first).
//! Which configurations are evaluated, and in which order, never depends on the pool.
//!
//! The pool runs one build at a time at first and doubles its width while the builds'
//! throughput at the new width is at least 1.25 times that at the last, since a compiler need
//! not build faster on more threads: NVRTC on an H200 machine of 16 cores compiled no faster on
//! 4 threads than on 2, and slower on 16, and there a pool as wide as the machine only queued
//! the build the tuner waited for behind speculative ones.
//!
//! The configuration about to be measured is not handed to the pool: the caller's thread builds
//! it when it runs it, so that it never waits for a free lane, and the pool's lanes go to the
//! guesses. Measured with NVRTC on the 2-core development machine (`gemm_cuda --pool`, 60
//! evaluations of `auto`, 28 rounds): 0.61 +- 0.46 s less than handing it over, on 12.7 s, a
//! gain within the noise; with the cores busy elsewhere, 14.4 against 15.3 s. Tried and dropped:
//! the pool's threads at the lowest priority (with the cores busy elsewhere, a guessed build the
//! tuner then needed starved: 50.3 s against 14.9 s), and counting the tuner's own build
//! against the pool's width (fewer guesses built: 2.8 +- 0.9 s more, 8 rounds).
//!
//! [`Strategy::upcoming`]: tunable_search::strategy::Strategy::upcoming

mod gate;
mod hits;

pub use gate::Gate;
pub use hits::{Hits, PRECISE_AFTER, PRECISE_RATIO, precise};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
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

/// The guesses a tuning asks the strategy for before each evaluation (the configurations it
/// expects to ask next): the machine's cores, and at least [`MIN_HINTS`]. All of them go to the
/// [`Pool`] once the strategy's guesses have come true ([`Hits::precise`]), as many as the
/// pool has threads before.
pub fn hints() -> usize {
    threads().max(MIN_HINTS)
}

/// The fewest guesses [`hints`] asks for. A backend that compiles several configurations in one
/// program (the CUDA backend's NVRTC programs of up to eight) needs several guesses waiting to
/// form one, and as many guesses as cores left none waiting on a machine of few cores. The
/// extra guesses go to the pool only once guesses have come true: a guess that misses costs a
/// build, and on few cores it slows the build the tuner waits for. Measured on 2 cores with
/// `gemm_cuda --pool` (see `docs/results.md`).
pub const MIN_HINTS: usize = 16;

/// The widest batch worth compiling ahead on this thread's device: [`threads`] for a GPU, 1
/// for a device on the host's cores. There the batch is built before it is timed, so only
/// builds running in parallel could gain, and PoCL runs them one at a time (its compiler lock
/// per OpenCL context): measured on PoCL 3.1, 16 evaluations of `gemm_opencl` took 88.5 s in
/// batches of 2 against 77.3 s one at a time. `TUNABLE_BATCH` still compiles a batch ahead.
/// A tuner's [`Pool`] compiles speculatively only where this is 2 or more.
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

/// A pool of threads that builds what it is handed, most recently handed first, for as long as
/// it lives: the compile pool of a tuning that compiles speculatively (see [the module
/// docs](self#speculation)). Dropping it discards the builds not started and waits for those
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
    /// docs](self#speculation)).
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
                        // A panicking build is the backend's bug; it must not stop the others.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(b.work));
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
        self.hint(&[], builds.into_iter().map(|b| (usize::MAX, b)).collect());
    }

    /// Hands `fresh` builds over, each tagged (with a configuration's position, say), and
    /// reorders the queue: first, in the order of `order`, the waiting builds and the fresh
    /// ones of each tag it names; then the fresh ones of other tags; then every build handed
    /// over earlier and not started yet, in their order.
    pub fn hint(&self, order: &[usize], fresh: Vec<(usize, Build)>) {
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

    /// Hands `n` builds to a pool of 4 threads, each sleeping 10 ms, holding `lock` meanwhile
    /// when given one (a compiler that builds one thing at a time); returns the pool's width
    /// once all are done.
    fn width_after(n: usize, lock: Option<Arc<Mutex<()>>>) -> usize {
        let pool = Pool::new(4);
        let done = Arc::new(AtomicUsize::new(0));
        let builds = (0..n)
            .map(|_| {
                let (done, lock) = (Arc::clone(&done), lock.clone());
                Build::new(false, move || {
                    let _held = lock
                        .as_ref()
                        .map(|l| l.lock().unwrap_or_else(|e| e.into_inner()));
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        pool.push_front(builds);
        while done.load(Ordering::SeqCst) < n {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        pool.width()
    }

    #[test]
    fn the_pool_widens_only_while_wider_builds_faster() {
        assert_eq!(width_after(30, None), 4, "builds that run side by side");
        assert_eq!(
            width_after(30, Some(Arc::default())),
            1,
            "builds that wait for each other"
        );
    }

    #[test]
    fn the_pool_builds_the_newest_hints_first_and_drops_what_it_never_started() {
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
        // A hint moves the waiting builds it names to the front, in its order.
        order.lock().unwrap().clear();
        let (gate2_tx, gate2_rx) = std::sync::mpsc::channel::<()>();
        let (s, o) = (Arc::new(AtomicUsize::new(0)), Arc::clone(&order));
        let s2 = Arc::clone(&s);
        pool.hint(
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
        pool.hint(&[], vec![(5, build(5)), (6, build(6)), (7, build(7))]);
        pool.hint(&[7, 8, 5], vec![(8, build(8))]);
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
