//! # A compilation ahead: waiting, being built, or built
//!
//! A configuration handed to the compile pool ([`crate::ahead`]) gets a [`Slot`]. The first
//! thread to claim it builds it: the pool's thread that runs its build, a pool thread that puts
//! it in a program with others ([`super::batch`]), or the tuner's thread when it needs the
//! configuration before anyone started. A thread that needs a configuration being built waits
//! for it instead of building it again. A claim dropped without a result (its builder panicked)
//! makes the slot wait again, so that the next thread to need it builds it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Where a slot's build stands.
enum State<T> {
    /// Nobody has started it.
    Waiting,
    /// A thread holds the claim.
    Building,
    /// The result.
    Built(T),
}

/// One configuration's build ahead (see the [module docs](self)).
pub(crate) struct Slot<T> {
    state: Mutex<State<T>>,
    built: Condvar,
    /// The order of the slots' creation: a program of several takes the newest waiting ones,
    /// as the pool builds the newest hints first.
    pub(crate) order: u64,
}

/// The right and duty to build a slot: [`Claim::finish`] gives its result; dropped unfinished,
/// the slot waits again.
pub(crate) struct Claim<T> {
    slot: Arc<Slot<T>>,
    finished: bool,
}

impl<T: Clone> Slot<T> {
    /// A slot nobody has started, created `order`-th.
    pub(crate) fn new(order: u64) -> Slot<T> {
        Slot {
            state: Mutex::new(State::Waiting),
            built: Condvar::new(),
            order,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether nobody has started the build.
    pub(crate) fn waiting(&self) -> bool {
        matches!(*self.lock(), State::Waiting)
    }

    /// The claim to build the slot, if nobody has started it.
    pub(crate) fn claim(self: &Arc<Self>) -> Option<Claim<T>> {
        let mut state = self.lock();
        if !matches!(*state, State::Waiting) {
            return None;
        }
        *state = State::Building;
        Some(Claim {
            slot: Arc::clone(self),
            finished: false,
        })
    }

    /// The result: built before, or by the thread building it now (waited for), or by `build`
    /// on this thread when nobody has started it.
    pub(crate) fn get_or_build(self: &Arc<Self>, build: impl FnOnce() -> T) -> T {
        loop {
            let mut state = self.lock();
            loop {
                match &*state {
                    State::Built(value) => return value.clone(),
                    State::Building => {
                        state = self.built.wait(state).unwrap_or_else(|e| e.into_inner());
                    }
                    State::Waiting => break,
                }
            }
            drop(state);
            if let Some(claim) = self.claim() {
                let value = build();
                claim.finish(value.clone());
                return value;
            }
        }
    }
}

impl<T> Claim<T> {
    /// Gives the slot its result and wakes the threads waiting for it.
    pub(crate) fn finish(mut self, value: T) {
        *self.slot.state.lock().unwrap_or_else(|e| e.into_inner()) = State::Built(value);
        self.finished = true;
        self.slot.built.notify_all();
    }
}

impl<T> Drop for Claim<T> {
    fn drop(&mut self) {
        if !self.finished {
            *self.slot.state.lock().unwrap_or_else(|e| e.into_inner()) = State::Waiting;
            self.slot.built.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn the_first_claim_builds_and_later_ones_find_the_result() {
        let slot = Arc::new(Slot::<u32>::new(0));
        assert!(slot.waiting());
        let claim = slot.claim().expect("waiting");
        assert!(!slot.waiting());
        assert!(slot.claim().is_none(), "claimed once");
        claim.finish(7);
        assert_eq!(slot.get_or_build(|| unreachable!("built")), 7);
        assert!(slot.claim().is_none());
    }

    #[test]
    fn a_thread_that_needs_a_slot_being_built_waits_for_it() {
        let slot = Arc::new(Slot::<u32>::new(0));
        let claim = slot.claim().unwrap();
        let builds = Arc::new(AtomicUsize::new(0));
        let waiter = {
            let (slot, builds) = (Arc::clone(&slot), Arc::clone(&builds));
            std::thread::spawn(move || {
                slot.get_or_build(|| {
                    builds.fetch_add(1, Ordering::SeqCst);
                    1
                })
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        claim.finish(2);
        assert_eq!(waiter.join().unwrap(), 2, "the builder's result");
        assert_eq!(builds.load(Ordering::SeqCst), 0, "built once");
    }

    #[test]
    fn an_abandoned_claim_lets_a_waiting_thread_build() {
        let slot = Arc::new(Slot::<u32>::new(0));
        let claim = slot.claim().unwrap();
        let waiter = {
            let slot = Arc::clone(&slot);
            std::thread::spawn(move || slot.get_or_build(|| 3))
        };
        std::thread::sleep(Duration::from_millis(50));
        drop(claim);
        assert_eq!(waiter.join().unwrap(), 3);
        assert_eq!(slot.get_or_build(|| 4), 3);
    }

    #[test]
    fn a_waiting_slot_is_built_by_the_thread_that_needs_it() {
        let slot = Arc::new(Slot::<u32>::new(5));
        assert_eq!(slot.order, 5);
        assert_eq!(slot.get_or_build(|| 9), 9);
        assert!(!slot.waiting());
    }
}
