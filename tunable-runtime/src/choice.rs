//! # Which configuration a call runs
//!
//! `#[tunable]` generates `<kernel>_config(args...)` beside `<kernel>(args...)`: with the same
//! arguments, it answers the configuration the entry point would run for them and where that
//! comes from, as a [`Choice`], without running the kernel and without tuning. A shipped build
//! answers from the baked table (or the default); a build with the `autotune` feature also knows
//! what this process tuned and what the tuned file stores, and says when the call would tune.

pub use crate::tuner::lookup::Origin;

use crate::params::Params;
#[cfg(feature = "autotune")]
use crate::tuner::lookup::Baked;
use crate::tuner::lookup::fallback;
use crate::tuner::portable::Shipped;
use tunable_search::clock::Setting;
#[cfg(feature = "autotune")]
use {
    crate::settings, crate::tuner::lookup::peek, crate::tuner::spec::KernelSpec,
    tunable_search::Space,
};

/// The configuration a call of a `#[tunable]` kernel runs, and where it comes from; see the
/// [module docs](self).
///
/// ```
/// use tunable::{Origin, tunable};
///
/// #[tunable(chunk = [1, 2, 4], key = tunable::key::next_power_of_two(x.len() as u64))]
/// fn sum(x: &[f32]) -> f32 {
///     x.chunks(chunk).map(|c| c.iter().sum::<f32>()).sum()
/// }
///
/// let choice = sum_config(&[1.0; 100]);
/// // Nothing is tuned in this example: the default configuration runs.
/// assert_eq!(choice.params, SumParams::default());
/// assert_eq!(choice.origin, Origin::Default);
/// assert!(!choice.tunes);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice<P> {
    /// The configuration.
    pub params: P,
    /// Where it comes from: [`Origin::Baked`] (the binary's table), [`Origin::Portable`] (a
    /// shipped binary's portable set on a device with no entry), [`Origin::Stored`] (the tuned
    /// file, read by a build with the `autotune` feature), [`Origin::Tuned`] (tuned by this
    /// process) or [`Origin::Default`].
    pub origin: Origin,
    /// Whether the call would tune first (a build with the `autotune` feature and nothing known
    /// for this device and key, or `TUNABLE_MODE=retune` and nothing tuned by this process):
    /// then `params` and `origin` are the fallback, what runs if the tuning fails (or while
    /// another thread tunes), and the call itself runs the winner.
    pub tunes: bool,
}

impl<P: Params> Choice<P> {
    /// The clocks and power limit the configuration was tuned at, for the kernels whose space
    /// has clock parameters ([`tunable_search::clock`]); empty for the others. A call never
    /// applies them: an operator does (`nvidia-smi`, [`Setting::commands`]), or the program
    /// through its own means.
    ///
    /// ```
    /// use tunable::tunable;
    ///
    /// #[tunable(tile = [1, 2], nvml_gr_clock = [1410, 1980])]
    /// fn scale(x: &mut [f32]) {
    ///     x.chunks_mut(tile).for_each(|c| c.iter_mut().for_each(|v| *v *= 2.0));
    /// }
    ///
    /// let clocks = scale_config(&mut [1.0; 8]).clocks();
    /// // Nothing tuned here: the default configuration's clock.
    /// assert_eq!(clocks.graphics_mhz, Some(1410));
    /// assert_eq!(clocks.commands("0"), ["sudo nvidia-smi -i 0 -lgc 1410,1410"]);
    /// ```
    pub fn clocks(&self) -> Setting {
        let values = self.params.to_values();
        Setting::of(P::NAMES.iter().copied().zip(&values))
    }
}

/// The choice of a shipped build (no `autotune` feature), as the entry point makes it
/// ([`Shipped::run`]): on a device with no baked entry, the portable set's choice
/// ([`Origin::Portable`]); else the baked entry for `key`, else the default; the default once
/// the tuned configuration failed for `key` in this process ([`crate::tuner::fallback`]).
pub fn shipped<P: Params, D: AsRef<str>>(
    kernel: &Shipped<P>,
    key: u64,
    device: impl FnOnce() -> D,
) -> Choice<P> {
    let device = device();
    let device = device.as_ref();
    let (params, origin) = match kernel.peek(device, key) {
        _ if crate::tuner::fallback::failed(kernel.kernel, key) => {
            (kernel.default, Origin::Default)
        }
        Some((params, timed)) => (params, Origin::Portable { timed }),
        None => fallback(kernel.table, key, device, kernel.default),
    };
    Choice {
        params,
        origin,
        tunes: false,
    }
}

/// The choice of a build with the `autotune` feature under the current `TUNABLE_MODE`, as
/// [`autotune`](crate::tuner::hook::autotune) would make it, without tuning: what this process
/// tuned, the baked entry or the stored one, or the fallback of a call that would tune.
///
/// # Panics
/// If `TUNABLE_MODE` holds an unknown value, as the entry point does.
#[cfg(feature = "autotune")]
pub fn tuning<P: Params>(
    kernel: &KernelSpec,
    space: &Space,
    device: &str,
    key: u64,
    table: &'static [Baked<P>],
    default: P,
) -> Choice<P> {
    let mode = settings::mode().unwrap_or_else(|e| panic!("tunable: {e}"));
    match peek(kernel, space, device, key, table, default, mode) {
        Ok((params, origin)) => Choice {
            params,
            origin,
            tunes: false,
        },
        Err(params) => Choice {
            origin: fallback(table, key, device, default).1,
            params,
            tunes: true,
        },
    }
}
