//! # Fakes planted by tests
//!
//! A test plants a fake (a meter, a clock control) for the tunings on its thread, in a
//! thread-local slot of its kind; the selection of a tuning takes a planted one before any real
//! one. A real run never plants anything.

use std::cell::RefCell;
use std::thread::LocalKey;

/// A thread's slot for a planted value of one kind.
pub type Slot<T> = RefCell<Option<T>>;

/// Lifts the planted value when dropped.
#[doc(hidden)]
#[derive(Debug)]
pub struct Planted<T: 'static>(&'static LocalKey<Slot<T>>);

/// Plants `value` in `slot` until the returned guard is dropped.
pub(crate) fn plant<T>(slot: &'static LocalKey<Slot<T>>, value: T) -> Planted<T> {
    slot.set(Some(value));
    Planted(slot)
}

impl<T> Drop for Planted<T> {
    fn drop(&mut self) {
        self.0.set(None);
    }
}
