//! # Clock parameters
//!
//! A GPU's clocks and power limit can be tuned like any parameter: a parameter named
//! `nvml_gr_clock`, `nvml_mem_clock` or `nvml_pwr_limit` is a device setting the tuner applies
//! before it measures a configuration, not a value of the kernel. The names and units are
//! Kernel Tuner's (its NVML observer's tunable parameters), so that caches written by either
//! tool read the same: clocks in MHz, the power limit in watts.
//!
//! This module says which names are settings, what values they take ([`Knob::check`], used by
//! `#[tunable]` at compile time), and what a configuration asks of the device ([`Setting`]),
//! which is also how an operator applies a tuned configuration by hand
//! ([`Setting::commands`]). Nothing here touches a device.
//!
//! ```
//! use tunable_search::Value;
//! use tunable_search::clock::{Knob, Setting};
//!
//! assert_eq!(Knob::of_name("nvml_gr_clock"), Some(Knob::Graphics));
//! let names = ["tile", "nvml_gr_clock", "nvml_pwr_limit"];
//! let values = [Value::Int(4), Value::Int(1410), Value::Int(300)];
//! let s = Setting::of(names.iter().copied().zip(&values));
//! assert_eq!((s.graphics_mhz, s.memory_mhz, s.power_limit_w), (Some(1410), None, Some(300)));
//! assert_eq!(s.to_string(), "nvml_gr_clock=1410 MHz, nvml_pwr_limit=300 W");
//! ```

use crate::Value;
use std::fmt;

/// A device setting that is tuned as a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Knob {
    /// `nvml_gr_clock`: the graphics (core) clock, in MHz.
    Graphics,
    /// `nvml_mem_clock`: the memory clock, in MHz.
    Memory,
    /// `nvml_pwr_limit`: the board's power limit, in watts.
    PowerLimit,
}

/// The largest clock a value may name, in MHz: above it a value is taken for a mistake in the
/// unit (a clock in kHz, say).
pub const MAX_MHZ: i64 = 100_000;

/// The largest power limit a value may name, in watts: above it a value is taken for a limit in
/// milliwatts (NVML's unit), which Kernel Tuner's parameter is not.
pub const MAX_WATTS: i64 = 5_000;

impl Knob {
    /// Every knob, in the order of [`NAMES`](Self::NAMES).
    pub const ALL: [Knob; 3] = [Knob::Graphics, Knob::Memory, Knob::PowerLimit];

    /// The parameter names, Kernel Tuner's.
    pub const NAMES: [&'static str; 3] = ["nvml_gr_clock", "nvml_mem_clock", "nvml_pwr_limit"];

    /// The prefix of the names: a parameter that starts with it and is no knob is a misspelled
    /// one (`#[tunable]` refuses it rather than tune a value nothing applies).
    pub const PREFIX: &'static str = "nvml_";

    /// Its parameter name.
    pub fn name(self) -> &'static str {
        match self {
            Knob::Graphics => Self::NAMES[0],
            Knob::Memory => Self::NAMES[1],
            Knob::PowerLimit => Self::NAMES[2],
        }
    }

    /// The knob a parameter name names, if any.
    pub fn of_name(name: &str) -> Option<Knob> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The unit of its values: `MHz` or `W`.
    pub fn unit(self) -> &'static str {
        match self {
            Knob::Graphics | Knob::Memory => "MHz",
            Knob::PowerLimit => "W",
        }
    }

    /// Whether `value` is one this knob takes: a whole number from 1 to [`MAX_MHZ`] for a clock,
    /// to [`MAX_WATTS`] for the power limit. The error says why not.
    ///
    /// ```
    /// use tunable_search::clock::Knob;
    ///
    /// assert_eq!(Knob::PowerLimit.check(250), Ok(250));
    /// let e = Knob::PowerLimit.check(250_000).unwrap_err();
    /// assert!(e.contains("watts"), "{e}");
    /// assert!(Knob::Graphics.check(0).is_err());
    /// ```
    pub fn check(self, value: i64) -> Result<u32, String> {
        let max = match self {
            Knob::Graphics | Knob::Memory => MAX_MHZ,
            Knob::PowerLimit => MAX_WATTS,
        };
        if (1..=max).contains(&value) {
            return Ok(value as u32);
        }
        Err(match self {
            Knob::PowerLimit if value > max => format!(
                "`{}` is in watts, as Kernel Tuner's: {value} W is more than {max} W (a limit in \
                 milliwatts?)",
                self.name()
            ),
            _ => format!(
                "`{}` takes a {} from 1 to {max} {}; {value} is not one",
                self.name(),
                if self == Knob::PowerLimit {
                    "power limit"
                } else {
                    "clock"
                },
                self.unit()
            ),
        })
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What one configuration asks of the device: the knobs it sets, each `None` where the space
/// has no such parameter (the device keeps what is in force).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Setting {
    /// The graphics clock, in MHz (`nvml_gr_clock`).
    pub graphics_mhz: Option<u32>,
    /// The memory clock, in MHz (`nvml_mem_clock`).
    pub memory_mhz: Option<u32>,
    /// The power limit, in watts (`nvml_pwr_limit`).
    pub power_limit_w: Option<u32>,
}

impl Setting {
    /// The setting of a configuration given as (parameter name, value) pairs: the knobs among
    /// them with a value a knob takes ([`Knob::check`]); other parameters are not settings.
    pub fn of<'a>(named: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Setting {
        let mut s = Setting::default();
        for (name, value) in named {
            let (Some(knob), Value::Int(v)) = (Knob::of_name(name), value) else {
                continue;
            };
            if let Ok(v) = knob.check(*v) {
                s.set(knob, v);
            }
        }
        s
    }

    /// The value of `knob`, if set.
    pub fn get(&self, knob: Knob) -> Option<u32> {
        match knob {
            Knob::Graphics => self.graphics_mhz,
            Knob::Memory => self.memory_mhz,
            Knob::PowerLimit => self.power_limit_w,
        }
    }

    /// Sets `knob` to `value`.
    pub fn set(&mut self, knob: Knob, value: u32) {
        match knob {
            Knob::Graphics => self.graphics_mhz = Some(value),
            Knob::Memory => self.memory_mhz = Some(value),
            Knob::PowerLimit => self.power_limit_w = Some(value),
        }
    }

    /// The knobs it sets.
    pub fn knobs(&self) -> Vec<Knob> {
        Knob::ALL
            .into_iter()
            .filter(|k| self.get(*k).is_some())
            .collect()
    }

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.knobs().is_empty()
    }

    /// The `nvidia-smi` commands with which an operator applies it to GPU `gpu` (an index or a
    /// PCI bus id, as `nvidia-smi -i` takes it): the graphics clock locked (`-lgc`, Volta and
    /// newer), the memory clock locked (`-lmc`, Ampere and newer), the power limit (`-pl`).
    /// Each needs root. Older GPUs take both clocks as application clocks instead
    /// (`-ac MEM,GR`), which the guide describes.
    ///
    /// ```
    /// use tunable_search::clock::Setting;
    ///
    /// let s = Setting { graphics_mhz: Some(1410), power_limit_w: Some(300), ..Setting::default() };
    /// assert_eq!(s.commands("0"), [
    ///     "sudo nvidia-smi -i 0 -lgc 1410,1410",
    ///     "sudo nvidia-smi -i 0 -pl 300",
    /// ]);
    /// ```
    pub fn commands(&self, gpu: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(mhz) = self.graphics_mhz {
            out.push(format!("sudo nvidia-smi -i {gpu} -lgc {mhz},{mhz}"));
        }
        if let Some(mhz) = self.memory_mhz {
            out.push(format!("sudo nvidia-smi -i {gpu} -lmc {mhz},{mhz}"));
        }
        if let Some(w) = self.power_limit_w {
            out.push(format!("sudo nvidia-smi -i {gpu} -pl {w}"));
        }
        out
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .knobs()
            .into_iter()
            .map(|k| format!("{k}={} {}", self.get(k).unwrap_or_default(), k.unit()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_values() {
        for (k, n) in Knob::ALL.into_iter().zip(Knob::NAMES) {
            assert_eq!(Knob::of_name(n), Some(k));
            assert!(n.starts_with(Knob::PREFIX));
        }
        assert_eq!(Knob::of_name("nvml_gr_clk"), None);
        assert_eq!(Knob::Memory.check(MAX_MHZ), Ok(MAX_MHZ as u32));
        assert!(Knob::Memory.check(MAX_MHZ + 1).is_err());
        assert!(Knob::Graphics.check(-5).unwrap_err().contains("from 1 to"));
    }

    #[test]
    fn a_setting_takes_the_knobs_of_a_configuration_and_nothing_else() {
        let values = [
            Value::Int(4),
            Value::Int(1215),
            Value::Int(9501),
            Value::Float(1.0),
        ];
        let names = ["nvml_mem_clock", "nvml_gr_clock", "block", "nvml_pwr_limit"];
        let s = Setting::of(names.into_iter().zip(&values));
        // `nvml_mem_clock=4` is a clock of 4 MHz, taken as written; a float is no value of a knob.
        assert_eq!(s.memory_mhz, Some(4));
        assert_eq!(s.graphics_mhz, Some(1215));
        assert_eq!(s.power_limit_w, None);
        assert_eq!(s.knobs(), [Knob::Graphics, Knob::Memory]);
        assert!(Setting::default().is_empty());
        assert_eq!(
            s.commands("00000000:3B:00.0")[1],
            "sudo nvidia-smi -i 00000000:3B:00.0 -lmc 4,4"
        );
    }
}
