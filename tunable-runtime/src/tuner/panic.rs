//! # Variants that panic
//!
//! A variant's panic is a failed configuration, not a crash, and not an alarm either: while a
//! variant runs under [`capture`], the panic hook keeps panics on this thread quiet (no message,
//! no backtrace; the tuner logs one line instead), and hands panics on any other thread to the
//! hook that was installed before. The hook is installed when the first capture starts and the
//! previous one restored when the last ends, so captures on several threads at once share one
//! scope.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Arc, Mutex};

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

thread_local! {
    /// Whether this thread is inside [`capture`].
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// The captures running, and the hook to restore when the last ends.
static SCOPE: Mutex<(usize, Option<Arc<Hook>>)> = Mutex::new((0, None));

/// Runs `f`; a panic inside it is caught and returned as its message, quietly (see the module
/// docs).
///
/// ```
/// use tunable_runtime::tuner::capture;
///
/// assert_eq!(capture(|| 2 + 2), Ok(4));
/// assert_eq!(capture(|| -> u32 { panic!("boom") }), Err("boom".to_owned()));
/// ```
pub fn capture<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    if QUIET.get() || std::thread::panicking() {
        // Nested in a capture (already quiet), or unwinding (hooks cannot change now).
        return panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p));
    }
    enter();
    QUIET.set(true);
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.set(false);
    leave();
    r.map_err(|p| panic_message(&*p))
}

fn enter() {
    let mut scope = SCOPE.lock().unwrap_or_else(|e| e.into_inner());
    if scope.0 == 0 {
        let previous = Arc::new(panic::take_hook());
        let others = Arc::clone(&previous);
        panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                others(info);
            }
        }));
        scope.1 = Some(previous);
    }
    scope.0 += 1;
}

fn leave() {
    let mut scope = SCOPE.lock().unwrap_or_else(|e| e.into_inner());
    scope.0 -= 1;
    if scope.0 == 0 {
        // Dropping the quiet hook drops its handle on the previous one, which is then unique.
        drop(panic::take_hook());
        if let Some(previous) = scope.1.take() {
            panic::set_hook(Arc::try_unwrap(previous).unwrap_or_else(|p| Box::new(move |i| p(i))));
        }
    }
}

/// Held by the tests that swap or rely on the process's panic hook, which is global.
#[cfg(test)]
pub(crate) static HOOK_TESTS: Mutex<()> = Mutex::new(());

/// The message of a panic payload.
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static OTHERS: AtomicUsize = AtomicUsize::new(0);

    /// Quiet on the capturing thread, the previous hook for other threads' panics, and that
    /// hook back in place afterwards.
    #[test]
    fn quiet_here_heard_elsewhere_and_restored() {
        let _serial = HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let default = panic::take_hook();
        let before: Hook = Box::new(|_| {
            OTHERS.fetch_add(1, Ordering::SeqCst);
        });
        panic::set_hook(before);
        let r = capture(|| {
            let other = std::thread::spawn(|| panic!("elsewhere")).join();
            assert!(other.is_err());
            let nested = capture(|| panic!("inner"));
            assert_eq!(nested, Err::<(), _>("inner".to_owned()));
            panic!("{}", String::from("here"))
        });
        assert_eq!(r, Err::<(), _>("here".to_owned()));
        assert_eq!(OTHERS.load(Ordering::SeqCst), 1);
        let _ = std::thread::spawn(|| panic!("after")).join();
        assert_eq!(OTHERS.load(Ordering::SeqCst), 2);
        panic::set_hook(default);
    }
}
