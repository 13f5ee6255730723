//! # NVIDIA GPU energy: NVML
//!
//! NVML (the NVIDIA Management Library, `libnvidia-ml.so.1`) comes with the driver. Like the
//! rest of the CUDA stack it is loaded at run time, through `libloading`: a build needs no
//! driver, and a machine without one gets [`NotMeasurable::MissingLibrary`]. The meter
//! resolves the few functions it calls itself; the reasons (rather than the `nvml-wrapper`
//! crate, or cudarc, whose 0.19 has no NVML module) are in `docs/notes/energy-meters.md`.
//!
//! - **Which GPU:** the one at the CUDA device's PCI bus id (`cuDeviceGetPCIBusId`, then
//!   `nvmlDeviceGetHandleByPciBusId_v2`), whatever `CUDA_VISIBLE_DEVICES` and NVML's own order.
//!   A GPU in MIG mode is not measurable: its counters are the whole GPU's, shared by every
//!   instance.
//! - **Energy:** `nvmlDeviceGetTotalEnergyConsumption`, the board's energy in millijoules since
//!   the driver loaded (Volta and newer). It updates every 20 to 100 ms depending on the GPU,
//!   the slower taken as its update period; NVIDIA states no accuracy for it.
//! - **Older GPUs:** `nvmlDeviceGetPowerUsage`, the board's power in milliwatts, sampled and
//!   integrated over the window. On these GPUs it is an instantaneous reading (Ampere GPUs
//!   other than the A100 average it over a second, but they all have the energy counter);
//!   NVIDIA states ±5% for it (for Fermi and Kepler).
//! - **Clocks:** `nvmlDeviceGetClockInfo` of the graphics and memory clocks.
//! - **Read only:** the meter resolves no function that sets anything. The clock control
//!   ([`crate::clock`]) resolves its setters from the same loaded library, apart, and only for a
//!   tuning with clock parameters.

#![allow(unsafe_code)]

use super::{Clocks, Meter, NotMeasurable, Resolution, Sample};
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::OnceLock;
use std::time::Duration;

/// `nvmlDevice_t`: an opaque handle.
pub(crate) type Handle = *mut c_void;
/// `nvmlReturn_t`: 0 is `NVML_SUCCESS`.
pub(crate) type Status = c_int;

type Init = unsafe extern "C" fn() -> Status;
type ErrorString = unsafe extern "C" fn(Status) -> *const c_char;
type ByBusId = unsafe extern "C" fn(*const c_char, *mut Handle) -> Status;
type Name = unsafe extern "C" fn(Handle, *mut c_char, c_uint) -> Status;
type TotalEnergy = unsafe extern "C" fn(Handle, *mut c_ulonglong) -> Status;
type PowerUsage = unsafe extern "C" fn(Handle, *mut c_uint) -> Status;
type ClockInfo = unsafe extern "C" fn(Handle, c_uint, *mut c_uint) -> Status;
type MigMode = unsafe extern "C" fn(Handle, *mut c_uint, *mut c_uint) -> Status;

/// `NVML_CLOCK_GRAPHICS`.
const CLOCK_GRAPHICS: c_uint = 0;
/// `NVML_CLOCK_MEM`.
const CLOCK_MEMORY: c_uint = 2;
/// `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLED: c_uint = 1;

/// The library's names, most specific first.
#[cfg(not(windows))]
const LIBRARIES: [&str; 2] = ["libnvidia-ml.so.1", "libnvidia-ml.so"];
#[cfg(windows)]
const LIBRARIES: [&str; 1] = ["nvml.dll"];
/// What a missing NVML is called in [`NotMeasurable::MissingLibrary`].
#[cfg(not(windows))]
const LIBRARY: &str = "libnvidia-ml.so.1 (NVML)";
#[cfg(windows)]
const LIBRARY: &str = "nvml.dll (NVML)";

/// The NVML functions the meter calls, from the library loaded and initialized once per process
/// and kept loaded.
pub(crate) struct Api {
    error_string: ErrorString,
    by_bus_id: ByBusId,
    name: Name,
    energy: TotalEnergy,
    power: PowerUsage,
    clock: ClockInfo,
    /// Absent from drivers older than MIG.
    mig: Option<MigMode>,
    library: libloading::Library,
}

/// NVML, loaded and initialized at the first call, or why it cannot be.
pub(crate) fn api() -> Result<&'static Api, NotMeasurable> {
    static API: OnceLock<Result<Api, NotMeasurable>> = OnceLock::new();
    API.get_or_init(Api::load).as_ref().map_err(Clone::clone)
}

impl Api {
    fn load() -> Result<Api, NotMeasurable> {
        let mut tried = Vec::new();
        let library = LIBRARIES
            .iter()
            // SAFETY: loading NVML runs its initializers, which have no preconditions.
            .find_map(|name| match unsafe { libloading::Library::new(*name) } {
                Ok(library) => Some(library),
                Err(e) => {
                    tried.push(format!("{name}: {e}"));
                    None
                }
            })
            .ok_or_else(|| NotMeasurable::MissingLibrary {
                library: LIBRARY,
                hint: format!(
                    "it comes with the NVIDIA driver, which is not installed or has no GPU here; \
                     {}",
                    tried.join("; ")
                ),
            })?;
        let missing = |name: &str, e: libloading::Error| NotMeasurable::Failed {
            meter: "NVML".into(),
            call: name.to_owned(),
            reason: format!("not in the library: {e}"),
        };
        /// Resolves one symbol as a function pointer of type `T`.
        ///
        /// # Safety
        /// `T` must be the symbol's C signature.
        unsafe fn get<T: Copy>(
            library: &libloading::Library,
            name: &str,
        ) -> Result<T, libloading::Error> {
            // SAFETY: the caller names the signature; the pointer is used while `library`
            // lives (it is moved into the same `Api`, which is never dropped).
            unsafe { library.get::<T>(name.as_bytes()) }.map(|s| *s)
        }
        let resolve = |name: &'static str| move |e| missing(name, e);
        // SAFETY: each type is the function's signature in `nvml.h` (unchanged since the
        // driver versions that introduced them).
        let (init, api) = unsafe {
            let init: Init = get(&library, "nvmlInit_v2").map_err(resolve("nvmlInit_v2"))?;
            let api = Api {
                error_string: get(&library, "nvmlErrorString")
                    .map_err(resolve("nvmlErrorString"))?,
                by_bus_id: get(&library, "nvmlDeviceGetHandleByPciBusId_v2")
                    .map_err(resolve("nvmlDeviceGetHandleByPciBusId_v2"))?,
                name: get(&library, "nvmlDeviceGetName").map_err(resolve("nvmlDeviceGetName"))?,
                energy: get(&library, "nvmlDeviceGetTotalEnergyConsumption")
                    .map_err(resolve("nvmlDeviceGetTotalEnergyConsumption"))?,
                power: get(&library, "nvmlDeviceGetPowerUsage")
                    .map_err(resolve("nvmlDeviceGetPowerUsage"))?,
                clock: get(&library, "nvmlDeviceGetClockInfo")
                    .map_err(resolve("nvmlDeviceGetClockInfo"))?,
                mig: get(&library, "nvmlDeviceGetMigMode").ok(),
                library,
            };
            (init, api)
        };
        // SAFETY: nvmlInit_v2 takes no arguments; NVML counts its initializations, and this one
        // is never undone (the library stays loaded for the process).
        let status = unsafe { init() };
        if status != 0 {
            return Err(NotMeasurable::Failed {
                meter: "NVML".into(),
                call: "nvmlInit_v2".into(),
                reason: api.error(status),
            });
        }
        Ok(api)
    }

    /// The loaded library, for the clock control's own symbols.
    pub(crate) fn library(&self) -> &libloading::Library {
        &self.library
    }

    /// The text of a status code.
    pub(crate) fn error(&self, status: Status) -> String {
        // SAFETY: nvmlErrorString returns a static string for any code (or null).
        let text = unsafe { (self.error_string)(status) };
        if text.is_null() {
            format!("NVML error {status}")
        } else {
            // SAFETY: a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        }
    }
}

/// An NVIDIA GPU's energy, read through NVML: its total-energy counter where it has one, else
/// its power reading, integrated.
#[derive(Debug)]
pub struct Nvml {
    device: Device,
    /// `NVIDIA H100 80GB HBM3 (00000000:3B:00.0)`.
    label: String,
    /// Whether it reads the energy counter (else the power).
    counter: bool,
}

/// An NVML device handle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Device(pub(crate) Handle);

// SAFETY: an NVML device handle is an opaque token valid for the process's NVML session, and
// NVML is thread-safe ("it is safe to make simultaneous NVML calls from multiple threads").
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Nvml {
    /// The meter of CUDA device `ordinal`: the NVML device at its PCI bus id.
    pub fn for_cuda_device(ordinal: usize) -> Result<Nvml, NotMeasurable> {
        Nvml::for_pci_bus_id(&cuda_bus_id(ordinal)?)
    }

    /// The meter of the GPU at PCI bus id `bus_id` (`0000:3b:00.0`, as CUDA and `nvidia-smi`
    /// write it).
    pub fn for_pci_bus_id(bus_id: &str) -> Result<Nvml, NotMeasurable> {
        let api = api()?;
        let (device, label) = device_at(bus_id)?;
        if let Some(mig) = api.mig {
            let (mut current, mut pending) = (0, 0);
            // SAFETY: a device handle; both pointers are written by the call.
            let status = unsafe { mig(device.0, &mut current, &mut pending) };
            if status == 0 && current == MIG_ENABLED {
                return Err(NotMeasurable::Unsupported {
                    meter: format!("NVML of {label}"),
                    what: "is in MIG mode: its counters are the whole GPU's, shared by every \
                           MIG instance"
                        .into(),
                });
            }
        }
        let mut nvml = Nvml {
            device,
            label,
            counter: true,
        };
        let Err(energy) = nvml.read_energy() else {
            return Ok(nvml);
        };
        nvml.counter = false;
        match nvml.read_power() {
            Ok(_) => Ok(nvml),
            Err(power) => Err(NotMeasurable::Unsupported {
                meter: format!("NVML of {}", nvml.label),
                what: format!("reads neither energy ({energy}) nor power ({power})"),
            }),
        }
    }

    /// The energy counter, in joules, or the failed call's message.
    fn read_energy(&self) -> Result<f64, String> {
        let api = api().map_err(|e| e.to_string())?;
        let mut millijoules: c_ulonglong = 0;
        // SAFETY: a device handle; the pointer is written by the call.
        let status = unsafe { (api.energy)(self.device.0, &mut millijoules) };
        if status == 0 {
            Ok(millijoules as f64 / 1e3)
        } else {
            Err(format!(
                "nvmlDeviceGetTotalEnergyConsumption: {}",
                api.error(status)
            ))
        }
    }

    /// The power, in watts, or the failed call's message.
    fn read_power(&self) -> Result<f64, String> {
        let api = api().map_err(|e| e.to_string())?;
        let mut milliwatts: c_uint = 0;
        // SAFETY: a device handle; the pointer is written by the call.
        let status = unsafe { (api.power)(self.device.0, &mut milliwatts) };
        if status == 0 {
            Ok(f64::from(milliwatts) / 1e3)
        } else {
            Err(format!("nvmlDeviceGetPowerUsage: {}", api.error(status)))
        }
    }

    /// One clock, in MHz.
    fn clock(&self, which: c_uint) -> Option<u32> {
        let api = api().ok()?;
        let mut mhz: c_uint = 0;
        // SAFETY: a device handle and a clock type NVML defines; the pointer is written.
        let status = unsafe { (api.clock)(self.device.0, which, &mut mhz) };
        (status == 0).then_some(mhz)
    }
}

impl Meter for Nvml {
    fn name(&self) -> String {
        let what = if self.counter {
            "energy counter"
        } else {
            "power readings"
        };
        format!("NVML {what} of {}", self.label)
    }

    fn resolution(&self) -> Resolution {
        if self.counter {
            Resolution {
                quantum: 1e-3,
                update: Duration::from_millis(100),
                accuracy: None,
            }
        } else {
            Resolution {
                quantum: 0.0,
                update: Duration::from_millis(100),
                accuracy: Some(0.05),
            }
        }
    }

    fn sample(&self) -> Result<Sample, NotMeasurable> {
        let read = if self.counter {
            self.read_energy().map(Sample::Energy)
        } else {
            self.read_power().map(Sample::Power)
        };
        read.map_err(|reason| NotMeasurable::Failed {
            meter: self.name(),
            call: "sampling".into(),
            reason,
        })
    }

    fn clocks(&self) -> Option<Clocks> {
        Some(Clocks {
            graphics_mhz: self.clock(CLOCK_GRAPHICS)?,
            memory_mhz: self.clock(CLOCK_MEMORY)?,
        })
    }
}

/// The NVML device at PCI bus id `bus_id`, and its label: `NVIDIA H100 80GB HBM3
/// (0000:3b:00.0)`.
pub(crate) fn device_at(bus_id: &str) -> Result<(Device, String), NotMeasurable> {
    let api = api()?;
    let id = CString::new(bus_id).map_err(|_| NotMeasurable::NoDevice {
        what: format!("{bus_id:?} is not a PCI bus id"),
    })?;
    let mut handle: Handle = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string; `handle` is written by the call.
    let status = unsafe { (api.by_bus_id)(id.as_ptr(), &mut handle) };
    if status != 0 {
        return Err(NotMeasurable::NoDevice {
            what: format!(
                "NVML has no GPU at PCI bus id {bus_id}: {}",
                api.error(status)
            ),
        });
    }
    let device = Device(handle);
    let mut name = [0 as c_char; 96];
    // SAFETY: a device handle from NVML; the buffer holds `name.len()` bytes.
    let status = unsafe { (api.name)(device.0, name.as_mut_ptr(), name.len() as c_uint) };
    let name = if status == 0 {
        // SAFETY: NVML wrote a NUL-terminated string into the buffer.
        unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    } else {
        "NVIDIA GPU".to_owned()
    };
    let label = format!("{name} ({bus_id})");
    Ok((device, label))
}

/// The PCI bus id of CUDA device `ordinal`, as the driver writes it (`0000:3B:00.0`).
pub(crate) fn cuda_bus_id(ordinal: usize) -> Result<String, NotMeasurable> {
    use cudarc::driver::{result, sys};
    // SAFETY: tries `dlopen` on the driver's names; loading the driver runs no code with
    // preconditions.
    if !unsafe { sys::is_culib_present() } {
        return Err(NotMeasurable::MissingLibrary {
            library: "libcuda.so.1",
            hint: "the NVIDIA driver is not installed, or this machine has no NVIDIA GPU".into(),
        });
    }
    let no_device = |e: cudarc::driver::DriverError| NotMeasurable::NoDevice {
        what: format!("CUDA device {ordinal}: {e}"),
    };
    result::init().map_err(no_device)?;
    let ordinal_c = c_int::try_from(ordinal).map_err(|_| NotMeasurable::NoDevice {
        what: format!("CUDA device {ordinal}: no such ordinal"),
    })?;
    let device = result::device::get(ordinal_c).map_err(no_device)?;
    let mut bus_id = [0 as c_char; 32];
    // SAFETY: the driver is loaded and initialized; the buffer holds `bus_id.len()` bytes.
    unsafe { sys::cuDeviceGetPCIBusId(bus_id.as_mut_ptr(), bus_id.len() as c_int, device) }
        .result()
        .map_err(no_device)?;
    // SAFETY: the driver wrote a NUL-terminated string into the buffer.
    Ok(unsafe { CStr::from_ptr(bus_id.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}
