//! # Ctrl-C while clocks are changed
//!
//! While a [`Guard`](super::Guard) is open, SIGINT restores every open guard's settings, then
//! lets the signal do what it did before: the disposition in force before is put back and the
//! signal raised again (by default the process ends, as killed by SIGINT). A signal handler may
//! do almost nothing, so the handler only writes a byte to a pipe; a thread waiting on the pipe
//! restores (NVML may be called from any thread) and raises the signal again. A process that
//! ignored SIGINT is left alone.
//!
//! `libc` rather than the `ctrlc` crate: the handler must hand the signal back to the
//! disposition in force before (a program's own handler, or the default that ends the process
//! with the signal's status), which `ctrlc`, installing a handler for good, does not do.

#![allow(unsafe_code)]

use super::{ClockControl, Previous};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The open guards' controls and settings, by guard number.
type Open = Vec<(u64, Arc<dyn ClockControl>, Previous)>;

static OPEN: Mutex<Open> = Mutex::new(Vec::new());

/// The write end of the pipe the handler writes to (-1 before it exists).
static PIPE: AtomicI32 = AtomicI32::new(-1);

/// The disposition of SIGINT before ours, once ours is installed (`None`: SIGINT was ignored,
/// and ours is not installed).
static BEFORE: OnceLock<Option<Disposition>> = OnceLock::new();

/// A `sigaction` as saved.
struct Disposition(libc::sigaction);

// SAFETY: a plain C struct of a handler address, flags and a mask; it is only copied.
unsafe impl Send for Disposition {}
// SAFETY: as above.
unsafe impl Sync for Disposition {}

/// Adds an open guard's settings: Ctrl-C restores them from now on.
pub(super) fn register(id: u64, control: Arc<dyn ClockControl>, previous: Previous) {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.push((id, control, previous));
    drop(open);
    BEFORE.get_or_init(install);
}

/// Removes a guard's settings (it restores them itself).
pub(super) fn deregister(id: u64) {
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|(i, ..)| *i != id);
}

/// Restores every open guard's settings; the guards stay registered (restoring twice is
/// harmless, and a guard dropped later restores again).
pub(super) fn restore_all() {
    let open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    for (_, control, previous) in open.iter() {
        match control.restore(previous) {
            Ok(()) => eprintln!(
                "tunable: interrupted; restored the clock settings of {}",
                control.name()
            ),
            Err(e) => eprintln!(
                "tunable: interrupted; the clock settings of {} could not be restored: {e}",
                control.name()
            ),
        }
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    let fd = PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: write(2) is async-signal-safe; one byte from a local.
        unsafe {
            libc::write(fd, (&raw const byte).cast(), 1);
        }
    }
}

/// Installs the handler and its thread; the disposition before, or `None` (nothing installed)
/// where SIGINT was ignored or the pipe or thread cannot be made.
fn install() -> Option<Disposition> {
    // SAFETY: sigaction(2) with a null new action only reads the current one into `before`.
    let mut before: libc::sigaction = unsafe { std::mem::zeroed() };
    if unsafe { libc::sigaction(libc::SIGINT, std::ptr::null(), &mut before) } != 0
        || before.sa_sigaction == libc::SIG_IGN
    {
        return None;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) writes two descriptors into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return None;
    }
    for fd in fds {
        // SAFETY: fcntl(2) on descriptors this function owns.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    let [read, write] = fds;
    std::thread::Builder::new()
        .name("tunable-sigint".into())
        .spawn(move || watch(read))
        .ok()?;
    PIPE.store(write, Ordering::Relaxed);
    let before = Disposition(before);
    set_ours();
    Some(before)
}

/// Installs [`on_signal`] for SIGINT.
fn set_ours() {
    // SAFETY: a zeroed sigaction is valid; the handler only writes to a pipe.
    unsafe {
        let mut ours: libc::sigaction = std::mem::zeroed();
        ours.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        ours.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut ours.sa_mask);
        libc::sigaction(libc::SIGINT, &ours, std::ptr::null_mut());
    }
}

/// The handler's thread: on each byte, restores, then hands the signal to the disposition in
/// force before ours, and installs ours again if the process goes on.
fn watch(read: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: read(2) into a local byte.
        let n = unsafe { libc::read(read, (&raw mut byte).cast(), 1) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        restore_all();
        if let Some(Some(before)) = BEFORE.get() {
            // SAFETY: puts back the disposition sigaction(2) reported, then raises the signal
            // for it: the default ends the process, a program's handler runs.
            unsafe {
                libc::sigaction(libc::SIGINT, &before.0, std::ptr::null_mut());
                libc::raise(libc::SIGINT);
            }
            set_ours();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{ClockError, Guard, Knob, Setting};
    use std::path::PathBuf;

    /// A control that writes what it does to a file, so that another process can see it.
    #[derive(Debug)]
    struct Noted(PathBuf);

    impl Noted {
        fn note(&self, what: &str) {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.0)
                .expect("note file");
            writeln!(f, "{what}").expect("note");
        }
    }

    impl ClockControl for Noted {
        fn name(&self) -> String {
            "noted clocks".into()
        }
        fn read(&self, _: &[Knob]) -> Result<Previous, ClockError> {
            Ok(Previous::default())
        }
        fn check(&self, _: &Previous) -> Result<(), ClockError> {
            Ok(())
        }
        fn apply(&self, s: &Setting, _: &Previous) -> Result<(), ClockError> {
            self.note(&format!("applied {s}"));
            Ok(())
        }
        fn restore(&self, _: &Previous) -> Result<(), ClockError> {
            self.note("restored");
            Ok(())
        }
    }

    const NOTES: &str = "TUNABLE_TEST_SIGINT_NOTES";

    /// Run by [`ctrl_c_restores_the_clocks_then_ends_the_process`] in a child process: opens a
    /// guard, applies a clock, and interrupts itself.
    #[test]
    #[ignore = "run in a child process by ctrl_c_restores_the_clocks_then_ends_the_process"]
    fn interrupted_child() {
        let Some(notes) = std::env::var_os(NOTES) else {
            return;
        };
        // The default disposition, as in a program started from a terminal: a shell starts a
        // background job with SIGINT ignored, and the guard leaves an ignored SIGINT alone.
        // SAFETY: signal(2) with the default disposition, before any handler is installed.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
        let guard = Guard::open(Arc::new(Noted(notes.into())), &[Knob::Graphics]).unwrap();
        guard
            .apply(&Setting {
                graphics_mhz: Some(900),
                ..Setting::default()
            })
            .unwrap();
        // SAFETY: raise(3) with a signal number.
        unsafe {
            libc::raise(libc::SIGINT);
        }
        // The handler's thread ends the process; a guard dropped here would restore too, and
        // the parent would see no signal.
        std::thread::sleep(std::time::Duration::from_secs(30));
        std::mem::forget(guard);
        std::process::exit(0);
    }

    #[test]
    fn ctrl_c_restores_the_clocks_then_ends_the_process() {
        use std::os::unix::process::ExitStatusExt;
        let dir = std::env::temp_dir().join(format!("tunable-sigint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let notes = dir.join("notes");
        let _ = std::fs::remove_file(&notes);
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "clock::interrupt::tests::interrupted_child",
                "--ignored",
                "--nocapture",
            ])
            .env(NOTES, &notes)
            .status()
            .unwrap();
        let noted = std::fs::read_to_string(&notes).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(noted, "applied nvml_gr_clock=900 MHz\nrestored\n");
        // Ended by the signal, as without a handler.
        assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    }
}
