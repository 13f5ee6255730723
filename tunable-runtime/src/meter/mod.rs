//! # Energy meters
//!
//! What a kernel's runs cost in energy, beside their time: the energy in joules and the mean
//! power in watts of a set of repeated runs, the clocks in force during them where the device
//! reports them, and how far the figure can be trusted. Meters only read: none changes a clock,
//! a power limit or any other setting of the device.
//!
//! | meter | where | what it reads |
//! | --- | --- | --- |
//! | `Nvml` (feature `cuda`) | an NVIDIA GPU, `for_cuda_device` (feature `cuda`) | NVML's total-energy counter (Volta and newer), else its power reading, integrated |
//! | [`Rapl`] | the CPU packages on Linux, [`for_cpu`] | the powercap energy counters of RAPL (Intel, and AMD on recent kernels) |
//!
//! Where a meter cannot read, the answer is [`NotMeasurable`] with the reason (no driver, no
//! counter on this GPU, a counter only root may read, a counter that did not move): never an
//! energy of zero.
//!
//! ## How a measurement is taken
//!
//! A [`Meter`] only samples a counter; what is made of the samples is said once, in
//! [`Window`] and the [`Reading`] it returns. While a window is open a thread polls the meter and notes every *tick*: each
//! moment the cumulative counter changed (a power reading is integrated into such a counter).
//! Counters update at their own pace, coarse on GPUs (see [`Resolution::update`]), so the energy
//! between the first and the last read of a window would be off by up to one update period of
//! power at each end. Instead the window's mean power is the energy between its first and last
//! ticks, both inside the runs, divided by the time between them; the window's energy is that
//! power times its duration. The first update period of a window is left out, as a counter may
//! lag the power it reports. [`measure`] repeats a closure until a minimum duration has passed
//! and the window holds two ticks, and divides by the number of runs.
//!
//! The uncertainty a [`Reading`] carries adds the counter's quantum at both ends, how late each
//! tick may have been seen, and the sensor's accuracy where its vendor states one
//! ([`Resolution::accuracy`]). It assumes the power is steady over the repeated runs, which is
//! what repeating them is for. Resolutions and sources: `docs/notes/energy-meters.md`.
//!
//! ## Selection
//!
//! `for_cuda_device` (feature `cuda`) and [`for_cpu`] return the meter a real run uses, or why
//! there is none. They never return `Fake`, the meter of tests, whose values are planted.

mod energy;
mod error;
mod fake;
#[cfg(feature = "cuda")]
pub(crate) mod nvml;
mod rapl;
mod runs;
mod window;

pub use energy::{Energy, Reading};
pub use error::{Failure, NotMeasurable};
#[doc(hidden)]
pub use fake::Fake;
#[cfg(feature = "cuda")]
pub use nvml::Nvml;
pub use rapl::{POWERCAP, Rapl};
pub use runs::{MIN_DURATION, measure};
pub use window::Window;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A source of energy samples for one device: a cumulative energy counter or a power reading.
///
/// Implementations only sample; [`Window`] turns samples into a [`Reading`]. A meter is shared
/// with the window's sampling thread, hence `Send + Sync` and `&self` methods.
pub trait Meter: Send + Sync + fmt::Debug {
    /// What it reads, for messages: `NVML energy counter of NVIDIA H100 (00000000:3B:00.0)`.
    fn name(&self) -> String;

    /// The counter's resolution: its quantum, update period and stated accuracy.
    fn resolution(&self) -> Resolution;

    /// One sample now, or why none can be taken.
    fn sample(&self) -> Result<Sample, NotMeasurable>;

    /// The clocks in force now, where the device reports them (default: `None`).
    fn clocks(&self) -> Option<Clocks> {
        None
    }
}

/// One sample of a [`Meter`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sample {
    /// The cumulative energy counter, in joules from an origin of the meter's choosing. It never
    /// decreases: a meter whose hardware counter wraps around adds the wrap itself.
    Energy(f64),
    /// The power drawn now, in watts.
    Power(f64),
}

/// How finely a [`Meter`] counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution {
    /// The counter's smallest step, in joules (NVML's energy counter: 1 mJ; 0 for a power
    /// reading, integrated without steps).
    pub quantum: f64,
    /// How often the device updates the counter (at most; 0 for a counter that changes at
    /// every read). A window leaves its first update period out, and needs two updates inside.
    pub update: Duration,
    /// The sensor's relative accuracy where its vendor states one (`Some(0.05)`: ±5%), `None`
    /// where none is stated; then a reading's uncertainty is that of counting alone.
    pub accuracy: Option<f64>,
}

/// The clocks in force, in MHz.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    /// The graphics (core) clock.
    pub graphics_mhz: u32,
    /// The memory clock.
    pub memory_mhz: u32,
}

/// The meter of CUDA device `ordinal` (the ordinal `Cuda::new` takes): NVML's total-energy
/// counter where the GPU has one (Volta and newer), else its power reading, integrated. The
/// NVML device is the one at the CUDA device's PCI bus id, so `CUDA_VISIBLE_DEVICES` and
/// NVML's own order do not matter.
///
/// Not measurable where the driver or NVML does not load, the ordinal names no device, the GPU
/// is split into MIG instances (its counter covers all of them), or it reads neither energy
/// nor power.
///
/// ```no_run
/// match tunable_runtime::meter::for_cuda_device(0) {
///     Ok(meter) => println!("GPU 0: {}", meter.name()),
///     Err(why) => println!("GPU 0: {why}"),
/// }
/// ```
#[cfg(feature = "cuda")]
pub fn for_cuda_device(ordinal: usize) -> Result<Arc<dyn Meter>, NotMeasurable> {
    Ok(Arc::new(Nvml::for_cuda_device(ordinal)?))
}

/// The meter of this machine's CPU packages: RAPL through Linux powercap
/// (`/sys/class/powercap`), every package zone and its DRAM zone where there is one.
///
/// Not measurable where the kernel exposes no powercap RAPL zones (another OS, a VM or
/// container that hides them, a CPU without RAPL) or where the counters are readable by root
/// only, as on Linux 5.10 and later by default.
///
/// ```no_run
/// match tunable_runtime::meter::for_cpu() {
///     Ok(meter) => println!("CPU: {}", meter.name()),
///     Err(why) => println!("CPU: {why}"),
/// }
/// ```
pub fn for_cpu() -> Result<Arc<dyn Meter>, NotMeasurable> {
    Ok(Arc::new(Rapl::new()?))
}
