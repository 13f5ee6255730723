//! # The fake clock control, for tests only
//!
//! Settings held in memory, so that what is built on [`ClockControl`] can be tested without a
//! GPU and without changing one: what was applied and restored is recorded, permission can be
//! refused, and a clock can be planted as unsupported. Not public API: nothing selects it for a
//! real run, and its name says what it is.

use super::{ClockControl, ClockError, ClockMode, Knob, Previous, Rights, Setting};
use std::sync::Mutex;

/// A clock control of planted settings, for tests only.
#[derive(Debug)]
pub struct Fake {
    state: Mutex<State>,
    /// Whether changing settings is refused (`NVML_ERROR_NO_PERMISSION`).
    denied: bool,
    /// A graphics clock the device refuses.
    unsupported_mhz: Option<u32>,
}

#[derive(Debug)]
struct State {
    in_force: Setting,
    /// Every call that changed something: `Apply(setting)` or `Restore`.
    events: Vec<Event>,
}

/// What the fake was asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A configuration's setting was applied.
    Apply(Setting),
    /// The previous settings were put back.
    Restore,
}

impl Fake {
    /// The graphics clock in force at first, in MHz.
    pub const GRAPHICS_MHZ: u32 = 1980;
    /// The memory clock in force at first, in MHz.
    pub const MEMORY_MHZ: u32 = 2619;
    /// The power limit in force at first, in watts.
    pub const POWER_W: u32 = 700;

    /// A device at [`GRAPHICS_MHZ`](Self::GRAPHICS_MHZ), [`MEMORY_MHZ`](Self::MEMORY_MHZ) and
    /// [`POWER_W`](Self::POWER_W), whose settings this process may change.
    pub fn new() -> Fake {
        Fake {
            state: Mutex::new(State {
                in_force: Setting {
                    graphics_mhz: Some(Self::GRAPHICS_MHZ),
                    memory_mhz: Some(Self::MEMORY_MHZ),
                    power_limit_w: Some(Self::POWER_W),
                },
                events: Vec::new(),
            }),
            denied: false,
            unsupported_mhz: None,
        }
    }

    /// The same, refusing every change as NVML refuses a user without the rights.
    pub fn denied(self) -> Fake {
        Fake {
            denied: true,
            ..self
        }
    }

    /// The same, refusing the graphics clock `mhz` as one the device does not support.
    pub fn unsupported(self, mhz: u32) -> Fake {
        Fake {
            unsupported_mhz: Some(mhz),
            ..self
        }
    }

    /// The graphics clock in force, in MHz.
    pub fn graphics_mhz(&self) -> u32 {
        self.lock().in_force.graphics_mhz.unwrap_or_default()
    }

    /// The settings in force.
    pub fn in_force(&self) -> Setting {
        self.lock().in_force
    }

    /// What it was asked to change, in order.
    pub fn events(&self) -> Vec<Event> {
        self.lock().events.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn refuse(&self, call: &str) -> Result<(), ClockError> {
        if self.denied {
            return Err(ClockError::NoPermission {
                device: self.name(),
                call: call.to_owned(),
                hint: Rights::Root,
            });
        }
        Ok(())
    }
}

impl Default for Fake {
    fn default() -> Self {
        Fake::new()
    }
}

impl ClockControl for Fake {
    fn name(&self) -> String {
        "fake clocks (planted, for tests only)".to_owned()
    }

    fn read(&self, knobs: &[Knob]) -> Result<Previous, ClockError> {
        let s = self.lock().in_force;
        let clocked = knobs.iter().any(|k| *k != Knob::PowerLimit);
        Ok(Previous {
            clocks: clocked.then(|| ClockMode::Application {
                graphics_mhz: s.graphics_mhz.unwrap_or_default(),
                memory_mhz: s.memory_mhz.unwrap_or_default(),
            }),
            power_limit_mw: knobs
                .contains(&Knob::PowerLimit)
                .then(|| s.power_limit_w.unwrap_or_default() * 1000),
        })
    }

    fn check(&self, _: &Previous) -> Result<(), ClockError> {
        self.refuse("setting the clocks in force again")
    }

    fn apply(&self, setting: &Setting, _: &Previous) -> Result<(), ClockError> {
        self.refuse("setting clocks")?;
        if setting.graphics_mhz.is_some() && setting.graphics_mhz == self.unsupported_mhz {
            return Err(ClockError::Failed {
                device: self.name(),
                call: "setting clocks".into(),
                reason: "not a supported clock".into(),
            });
        }
        let mut state = self.lock();
        for k in setting.knobs() {
            state.in_force.set(k, setting.get(k).unwrap_or_default());
        }
        state.events.push(Event::Apply(*setting));
        Ok(())
    }

    fn restore(&self, previous: &Previous) -> Result<(), ClockError> {
        self.refuse("restoring clocks")?;
        let mut state = self.lock();
        if let Some(ClockMode::Application {
            graphics_mhz,
            memory_mhz,
        }) = previous.clocks
        {
            state.in_force.graphics_mhz = Some(graphics_mhz);
            state.in_force.memory_mhz = Some(memory_mhz);
        }
        if let Some(mw) = previous.power_limit_mw {
            state.in_force.power_limit_w = Some(mw / 1000);
        }
        state.events.push(Event::Restore);
        Ok(())
    }
}
