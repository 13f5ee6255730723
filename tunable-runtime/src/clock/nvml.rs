//! # NVIDIA GPU clocks: NVML
//!
//! The setters are resolved from the library the meter loaded ([`crate::meter`]'s NVML), apart
//! from the meter's functions and only when a tuning has clock parameters. The device is the
//! one at the CUDA device's PCI bus id, as for the meter.
//!
//! - **Clocks:** locked clocks where the GPU has them for every clock tuned
//!   (`nvmlDeviceSetGpuLockedClocks`, Volta and newer; `nvmlDeviceSetMemoryLockedClocks`,
//!   Ampere and newer; the architecture from `nvmlDeviceGetArchitecture`), as `nvidia-smi -lgc`
//!   and `-lmc` apply them; else application clocks (`nvmlDeviceSetApplicationsClocks`, both
//!   clocks at once, a clock not tuned kept at the one in force), as `nvidia-smi -ac`.
//! - **Power limit:** `nvmlDeviceSetPowerManagementLimit`, in milliwatts (the parameter's watts
//!   times 1000), as `nvidia-smi -pl`.
//! - **Rights:** checked by setting again what is in force (application clocks, power limit),
//!   or by unlocking the clocks, which is also how they are restored.

#![allow(unsafe_code)]

use super::{ClockControl, ClockError, ClockMode, Knob, Previous, Rights, Setting};
use crate::meter::NotMeasurable;
use crate::meter::nvml::{Device, Status, api, cuda_bus_id, device_at};
use std::ffi::c_uint;
use std::sync::OnceLock;

type GetClock = unsafe extern "C" fn(*mut std::ffi::c_void, c_uint, *mut c_uint) -> Status;
type SetPair = unsafe extern "C" fn(*mut std::ffi::c_void, c_uint, c_uint) -> Status;
type Reset = unsafe extern "C" fn(*mut std::ffi::c_void) -> Status;
type GetUint = unsafe extern "C" fn(*mut std::ffi::c_void, *mut c_uint) -> Status;
type SetUint = unsafe extern "C" fn(*mut std::ffi::c_void, c_uint) -> Status;

/// `NVML_ERROR_NO_PERMISSION`.
const NO_PERMISSION: Status = 4;
/// `NVML_ERROR_NOT_SUPPORTED`.
const NOT_SUPPORTED: Status = 3;
/// `NVML_CLOCK_GRAPHICS`.
const CLOCK_GRAPHICS: c_uint = 0;
/// `NVML_CLOCK_MEM`.
const CLOCK_MEMORY: c_uint = 2;
/// `NVML_DEVICE_ARCH_VOLTA`.
const VOLTA: c_uint = 5;
/// `NVML_DEVICE_ARCH_AMPERE`.
const AMPERE: c_uint = 7;

/// The NVML functions that set clocks and the power limit, and their readers; each `None`
/// where the driver lacks it.
struct Setters {
    app_clock: Option<GetClock>,
    set_app_clocks: Option<SetPair>,
    lock_gpu: Option<SetPair>,
    unlock_gpu: Option<Reset>,
    lock_memory: Option<SetPair>,
    unlock_memory: Option<Reset>,
    power_limit: Option<GetUint>,
    set_power_limit: Option<SetUint>,
    architecture: Option<GetUint>,
}

fn setters() -> Result<&'static Setters, ClockError> {
    static SETTERS: OnceLock<Result<Setters, ClockError>> = OnceLock::new();
    SETTERS
        .get_or_init(|| {
            let library = api().map_err(unavailable)?.library();
            /// Resolves one symbol as a function pointer of type `T`, `None` if absent.
            ///
            /// # Safety
            /// `T` must be the symbol's C signature.
            unsafe fn get<T: Copy>(library: &libloading::Library, name: &str) -> Option<T> {
                // SAFETY: the caller names the signature; the library stays loaded for the
                // process (the meter's `Api` is never dropped).
                unsafe { library.get::<T>(name.as_bytes()) }
                    .ok()
                    .map(|s| *s)
            }
            // SAFETY: each type is the function's signature in `nvml.h`.
            Ok(unsafe {
                Setters {
                    app_clock: get(library, "nvmlDeviceGetApplicationsClock"),
                    set_app_clocks: get(library, "nvmlDeviceSetApplicationsClocks"),
                    lock_gpu: get(library, "nvmlDeviceSetGpuLockedClocks"),
                    unlock_gpu: get(library, "nvmlDeviceResetGpuLockedClocks"),
                    lock_memory: get(library, "nvmlDeviceSetMemoryLockedClocks"),
                    unlock_memory: get(library, "nvmlDeviceResetMemoryLockedClocks"),
                    power_limit: get(library, "nvmlDeviceGetPowerManagementLimit"),
                    set_power_limit: get(library, "nvmlDeviceSetPowerManagementLimit"),
                    architecture: get(library, "nvmlDeviceGetArchitecture"),
                }
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// NVML or the device cannot be reached: the meter's reason, without its "not measurable".
fn unavailable(e: NotMeasurable) -> ClockError {
    let text = e.to_string();
    ClockError::Unavailable {
        what: text
            .strip_prefix("not measurable here: ")
            .unwrap_or(&text)
            .to_owned(),
    }
}

/// An NVIDIA GPU's clocks and power limit, set through NVML.
#[derive(Debug)]
pub struct Nvml {
    device: Device,
    /// `NVIDIA H100 80GB HBM3 (00000000:3B:00.0)`.
    label: String,
}

impl Nvml {
    /// The control of CUDA device `ordinal`: the NVML device at its PCI bus id. Changes nothing.
    pub fn for_cuda_device(ordinal: usize) -> Result<Nvml, ClockError> {
        let bus_id = cuda_bus_id(ordinal).map_err(unavailable)?;
        let (device, label) = device_at(&bus_id).map_err(unavailable)?;
        Ok(Nvml { device, label })
    }

    /// The result of a call named `call` that answered `status`.
    fn status(&self, call: &str, status: Status, rights: Rights) -> Result<(), ClockError> {
        match status {
            0 => Ok(()),
            NO_PERMISSION => Err(ClockError::NoPermission {
                device: self.label.clone(),
                call: call.to_owned(),
                hint: rights,
            }),
            NOT_SUPPORTED => Err(ClockError::Unsupported {
                device: self.label.clone(),
                what: format!("does not support {call}"),
            }),
            s => Err(ClockError::Failed {
                device: self.label.clone(),
                call: call.to_owned(),
                reason: api().map_or_else(|e| e.to_string(), |a| a.error(s)),
            }),
        }
    }

    /// `f`, or that the driver lacks the function `call`.
    fn function<T: Copy>(&self, f: Option<T>, call: &str) -> Result<T, ClockError> {
        f.ok_or_else(|| ClockError::Unsupported {
            device: self.label.clone(),
            what: format!("has a driver without {call}"),
        })
    }

    /// The GPU's architecture (`NVML_DEVICE_ARCH_*`), if the driver says.
    fn architecture(&self) -> Option<c_uint> {
        let f = setters().ok()?.architecture?;
        let mut arch: c_uint = 0;
        // SAFETY: a device handle; the pointer is written by the call.
        let status = unsafe { f(self.device.0, &mut arch) };
        (status == 0).then_some(arch)
    }

    /// One application clock in force, in MHz.
    fn app_clock(&self, which: c_uint) -> Result<u32, ClockError> {
        let call = "nvmlDeviceGetApplicationsClock";
        let f = self.function(setters()?.app_clock, call)?;
        let mut mhz: c_uint = 0;
        // SAFETY: a device handle and a clock type NVML defines; the pointer is written.
        let status = unsafe { f(self.device.0, which, &mut mhz) };
        self.status(call, status, Rights::ApplicationClocks)?;
        Ok(mhz)
    }

    fn set_app_clocks(&self, memory_mhz: u32, graphics_mhz: u32) -> Result<(), ClockError> {
        let call = "nvmlDeviceSetApplicationsClocks";
        let f = self.function(setters()?.set_app_clocks, call)?;
        // SAFETY: a device handle and two clocks in MHz.
        let status = unsafe { f(self.device.0, memory_mhz, graphics_mhz) };
        self.status(call, status, Rights::ApplicationClocks)
    }

    fn lock(&self, f: Option<SetPair>, call: &str, mhz: u32) -> Result<(), ClockError> {
        let f = self.function(f, call)?;
        // SAFETY: a device handle and a range of clocks in MHz.
        let status = unsafe { f(self.device.0, mhz, mhz) };
        self.status(call, status, Rights::Root)
    }

    fn unlock(&self, f: Option<Reset>, call: &str) -> Result<(), ClockError> {
        let f = self.function(f, call)?;
        // SAFETY: a device handle.
        let status = unsafe { f(self.device.0) };
        self.status(call, status, Rights::Root)
    }

    fn set_power_limit(&self, milliwatts: u32) -> Result<(), ClockError> {
        let call = "nvmlDeviceSetPowerManagementLimit";
        let f = self.function(setters()?.set_power_limit, call)?;
        // SAFETY: a device handle and a limit in milliwatts.
        let status = unsafe { f(self.device.0, milliwatts) };
        self.status(call, status, Rights::Root)
    }
}

impl ClockControl for Nvml {
    fn name(&self) -> String {
        format!("NVML clocks of {}", self.label)
    }

    fn read(&self, knobs: &[Knob]) -> Result<Previous, ClockError> {
        let memory = knobs.contains(&Knob::Memory);
        let clocks = if knobs.iter().any(|k| *k != Knob::PowerLimit) {
            let arch = self.architecture().unwrap_or(0);
            let s = setters()?;
            let lockable = s.lock_gpu.is_some()
                && arch >= VOLTA
                && (!memory || (arch >= AMPERE && s.lock_memory.is_some()));
            Some(if lockable {
                ClockMode::Locked { memory }
            } else {
                ClockMode::Application {
                    graphics_mhz: self.app_clock(CLOCK_GRAPHICS)?,
                    memory_mhz: self.app_clock(CLOCK_MEMORY)?,
                }
            })
        } else {
            None
        };
        let power_limit_mw = if knobs.contains(&Knob::PowerLimit) {
            let call = "nvmlDeviceGetPowerManagementLimit";
            let f = self.function(setters()?.power_limit, call)?;
            let mut mw: c_uint = 0;
            // SAFETY: a device handle; the pointer is written by the call.
            let status = unsafe { f(self.device.0, &mut mw) };
            self.status(call, status, Rights::Root)?;
            Some(mw)
        } else {
            None
        };
        Ok(Previous {
            clocks,
            power_limit_mw,
        })
    }

    fn check(&self, previous: &Previous) -> Result<(), ClockError> {
        match previous.clocks {
            Some(ClockMode::Application {
                graphics_mhz,
                memory_mhz,
            }) => self.set_app_clocks(memory_mhz, graphics_mhz)?,
            Some(ClockMode::Locked { .. }) => self.restore_clocks(previous)?,
            None => {}
        }
        if let Some(mw) = previous.power_limit_mw {
            self.set_power_limit(mw)?;
        }
        Ok(())
    }

    fn apply(&self, setting: &Setting, previous: &Previous) -> Result<(), ClockError> {
        let s = setters()?;
        match previous.clocks {
            Some(ClockMode::Application {
                graphics_mhz,
                memory_mhz,
            }) if setting.graphics_mhz.is_some() || setting.memory_mhz.is_some() => self
                .set_app_clocks(
                    setting.memory_mhz.unwrap_or(memory_mhz),
                    setting.graphics_mhz.unwrap_or(graphics_mhz),
                )?,
            Some(ClockMode::Locked { .. }) => {
                if let Some(mhz) = setting.graphics_mhz {
                    self.lock(s.lock_gpu, "nvmlDeviceSetGpuLockedClocks", mhz)?;
                }
                if let Some(mhz) = setting.memory_mhz {
                    self.lock(s.lock_memory, "nvmlDeviceSetMemoryLockedClocks", mhz)?;
                }
            }
            _ => {}
        }
        if let Some(w) = setting.power_limit_w {
            self.set_power_limit(w.saturating_mul(1000))?;
        }
        Ok(())
    }

    fn restore(&self, previous: &Previous) -> Result<(), ClockError> {
        // Each setting is restored even when another fails; the first failure is the answer.
        let clocks = self.restore_clocks(previous);
        let power = previous
            .power_limit_mw
            .map_or(Ok(()), |mw| self.set_power_limit(mw));
        clocks.and(power)
    }
}

impl Nvml {
    /// Puts the clocks of `previous` back: the application clocks in force, or unlocked.
    fn restore_clocks(&self, previous: &Previous) -> Result<(), ClockError> {
        let s = setters()?;
        match previous.clocks {
            Some(ClockMode::Application {
                graphics_mhz,
                memory_mhz,
            }) => self.set_app_clocks(memory_mhz, graphics_mhz),
            Some(ClockMode::Locked { memory }) => {
                let gpu = self.unlock(s.unlock_gpu, "nvmlDeviceResetGpuLockedClocks");
                let mem = if memory {
                    self.unlock(s.unlock_memory, "nvmlDeviceResetMemoryLockedClocks")
                } else {
                    Ok(())
                };
                gpu.and(mem)
            }
            None => Ok(()),
        }
    }
}
