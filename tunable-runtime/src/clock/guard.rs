//! # A tuning's changes to the clocks, undone when it ends

use super::{ClockControl, ClockError, Knob, Previous, Setting};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The clock settings a tuning changes, put back when it is dropped (see the
/// [module docs](super)).
///
/// ```
/// use std::sync::Arc;
/// use tunable_runtime::clock::{ClockControl, Fake, Guard, Knob, Setting};
///
/// let fake = Arc::new(Fake::new());
/// let control: Arc<dyn ClockControl> = fake.clone();
/// {
///     let guard = Guard::open(control, &[Knob::Graphics]).unwrap();
///     guard.apply(&Setting { graphics_mhz: Some(1200), ..Setting::default() }).unwrap();
///     assert_eq!(fake.graphics_mhz(), 1200);
/// }
/// // Dropped: the clock in force before is back.
/// assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
/// ```
#[derive(Debug)]
pub struct Guard {
    control: Arc<dyn ClockControl>,
    previous: Previous,
    /// The setting applied last (`None`: the previous ones are in force).
    applied: Mutex<Option<Setting>>,
    /// Its number among the open guards, for the Ctrl-C handler.
    id: u64,
}

impl Guard {
    /// Reads the settings of `knobs` in force through `control` and checks that this process
    /// may change them; then, until the guard is dropped, Ctrl-C restores them before the
    /// process ends. Changes nothing that restoring would not undo.
    pub fn open(control: Arc<dyn ClockControl>, knobs: &[Knob]) -> Result<Guard, ClockError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let previous = control.read(knobs)?;
        control.check(&previous)?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        #[cfg(unix)]
        super::interrupt::register(id, Arc::clone(&control), previous);
        Ok(Guard {
            control,
            previous,
            applied: Mutex::new(None),
            id,
        })
    }

    /// Applies `setting` (nothing when it is the one applied last). An error is the
    /// configuration's, except [`ClockError::NoPermission`].
    pub fn apply(&self, setting: &Setting) -> Result<(), ClockError> {
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        if *applied == Some(*setting) {
            return Ok(());
        }
        // Until it succeeds, what is in force is unknown: the next setting is applied afresh.
        *applied = None;
        self.control.apply(setting, &self.previous)?;
        *applied = Some(*setting);
        Ok(())
    }

    /// The settings in force when it was opened.
    pub fn previous(&self) -> &Previous {
        &self.previous
    }

    /// What it controls.
    pub fn name(&self) -> String {
        self.control.name()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(unix)]
        super::interrupt::deregister(self.id);
        #[cfg(not(unix))]
        let _ = self.id;
        if let Err(e) = self.control.restore(&self.previous) {
            eprintln!(
                "tunable: the clock settings of {} could not be restored: {e}",
                self.control.name()
            );
        }
    }
}
